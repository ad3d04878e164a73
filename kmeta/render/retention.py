"""``kmeta retention`` for people (snapshots, segments, startup, retention, followers) and
for scripts (JSON Lines: an object per snapshot, per segment and per follower, then a
summary)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kmeta.core.lifecycle import duration
from kmeta.core.replica_log import ValidKind
from kmeta.ops.retention import FollowerAnswer, RetentionResult, SegmentRow, SnapshotRow
from kmeta.render.brokers import utc
from kmeta.render.jsonl import dumps


def size(n: int | None) -> str:
    """Bytes as people read them: 812 B, 25.1 KiB, 20.0 MiB, 1.2 GiB."""
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def _limit_ms(ms: int) -> str:
    return "off" if ms < 0 else duration(ms)


def _limit_bytes(n: int) -> str:
    return "off" if n < 0 else size(n)


def retention_lines(result: RetentionResult) -> Iterator[str]:
    live = [s for s in result.snapshots if s.state == "live"]
    log = "no log" if result.log_start is None else (
        f"log {result.log_start}..{(result.log_end or 1) - 1} in {len(result.segments)} "
        f"segment(s), {size(sum(s.size for s in result.segments))}")
    yield (f"{log}; {len(live)} snapshot(s), {size(sum(s.size or 0 for s in live))}; "
           f"judged at {utc(result.now)} UTC ({result.now_from})")
    c, k = result.config, result.cadence
    yield (f"limits: metadata.max.retention.bytes {_limit_bytes(c.retention_bytes)}, "
           f"metadata.max.retention.ms {_limit_ms(c.retention_ms)}; a snapshot every "
           f"{size(k.bytes_between)} of log or {_limit_ms(k.interval_ms or -1)}")
    yield ""
    yield "snapshots (end offset-epoch):" if result.snapshots else "no snapshot"
    for s in result.snapshots:
        yield "  " + snapshot_text(s, result.now)
    yield ""
    yield "segments:" if result.segments else "no segment"
    for seg in result.segments:
        yield "  " + segment_text(seg)
    yield ""
    yield "at startup, Kafka:"
    for line in result.startup:
        yield f"  {line}"
    if result.refusal:
        yield f"  refuses to start: {result.refusal}"
    plan = result.plan
    if plan is not None:
        yield ""
        yield f"retention at {utc(result.now)} UTC:"
        for step in plan.steps:
            why = (f"{size(step.log_bytes)} of log + {size(step.snapshot_bytes)} of snapshots "
                   f"> {size(c.retention_bytes)}" if step.rule == "size" else
                   f"snapshot {step.breached.offset}-{step.breached.epoch} is "
                   f"{duration(step.age_ms or 0)} old > "
                   f"{duration(c.retention_ms)}")
            gone = ", ".join(f"{s.offset}-{s.epoch}" for s in step.deleted_snapshots)
            segs = f", {len(step.deleted_segments)} segment(s) deleted" \
                if step.deleted_segments else ""
            yield (f"  {why}: deletes {gone}; the log start moves {step.log_start_before} -> "
                   f"{step.log_start}{segs}")
        for rule, why in plan.stopped.items():
            yield f"  {rule} rule stops: {why}"
        over = plan.total_bytes > c.retention_bytes >= 0
        yield (f"  after: log start {plan.after.log_start_offset}, "
               f"{size(plan.total_bytes)} of log and snapshots"
               + (f", still over {size(c.retention_bytes)}: the latest snapshot is never "
                  "deleted (the limit is soft)" if over else ""))
    if result.followers:
        yield ""
        yield "followers (what the leader answers their fetch):"
        for f in result.followers:
            yield "  " + follower_text(f)


def snapshot_text(s: SnapshotRow, now: int | None) -> str:
    name = f"{s.id.offset}-{s.id.epoch}"
    if s.state != "live":
        return f"{name}: .checkpoint.{s.state}, {size(s.size)}; {s.fate}"
    age = f" ({duration(now - s.timestamp)} old)" if now is not None and \
        s.timestamp is not None and now >= s.timestamp else ""
    records = "?" if s.records is None else f"{s.records:,}"
    text = (f"{name}: {size(s.size)}, {records} records, "
            f"the log up to {utc(s.timestamp)}{age}")
    if s.log_bytes is not None:
        since = f", {duration(s.since_previous_ms)}" if s.since_previous_ms is not None else ""
        text += (f"; after {size(s.log_bytes)} / {s.log_records:,} records of log{since}: "
                 f"trigger {s.trigger}")
    return f"{text}; {s.fate}"


def segment_text(seg: SegmentRow) -> str:
    span = "empty" if seg.last_offset is None else f"offsets {seg.base_offset}..{seg.last_offset}"
    return (f"{seg.path.name}: {span}, {size(seg.size)}, newest batch "
            f"{utc(seg.max_timestamp)}; {seg.fate}")


def follower_text(f: FollowerAnswer) -> str:
    epoch = f"epoch {f.epoch}" + ("" if f.epoch_given else " (this log's)")
    oe = f.answer.offset_and_epoch
    what = {ValidKind.VALID: "valid: it fetches on from there",
            ValidKind.DIVERGING: f"diverging (this log's epoch {oe.epoch} ends at "
                                 f"{oe.offset}): " + (
                                     f"it would have to truncate to {f.truncate_to}, below "
                                     f"its own snapshot at {f.refused_below}: Kafka refuses "
                                     "(committed data differs)"
                                     if f.refused_below is not None else
                                     f"it truncates to "
                                     f"{'' if f.truncate_exact else 'at most '}"
                                     f"{f.truncate_to} and fetches on"),
            ValidKind.SNAPSHOT: f"snapshot: it fetches snapshot {oe.offset}-{oe.epoch} "
                                "(FetchSnapshot), then the log after it"}[f.answer.kind]
    return f"node {f.node} at offset {f.offset}, {epoch}: {what}"


# ---------------------------------------------------------------------- JSON

def snapshot_json(s: SnapshotRow) -> dict[str, Any]:
    return {"kind": "retention_snapshot", "end_offset": s.id.offset, "epoch": s.id.epoch,
            "file": str(s.path), "state": s.state, "size": s.size, "records": s.records,
            "last_contained_log_timestamp": s.timestamp, "log_bytes": s.log_bytes,
            "log_records": s.log_records, "since_previous_ms": s.since_previous_ms,
            "trigger": s.trigger, "fate": s.fate}


def segment_json(seg: SegmentRow) -> dict[str, Any]:
    return {"kind": "retention_segment", "base_offset": seg.base_offset, "file": str(seg.path),
            "size": seg.size, "last_offset": seg.last_offset,
            "max_timestamp": seg.max_timestamp, "fate": seg.fate}


def follower_json(f: FollowerAnswer) -> dict[str, Any]:
    oe = f.answer.offset_and_epoch
    return {"kind": "follower", "replica": f.node, "offset": f.offset, "epoch": f.epoch,
            "epoch_given": f.epoch_given, "answer": f.answer.kind.value,
            "answer_offset": oe.offset, "answer_epoch": oe.epoch,
            "truncate_to": f.truncate_to, "truncate_exact": f.truncate_exact,
            "refused_below_offset": f.refused_below}


def retention_json(result: RetentionResult) -> Iterator[str]:
    for s in result.snapshots:
        yield dumps(snapshot_json(s))
    for seg in result.segments:
        yield dumps(segment_json(seg))
    for f in result.followers:
        yield dumps(follower_json(f))
    for finding in result.findings:  # before the summary, which is the last line
        yield dumps(finding.to_json())
    plan = result.plan
    yield dumps({
        "kind": "retention_summary", "path": str(result.partition),
        "log_start_offset": result.log_start, "log_end_offset": result.log_end,
        "now_timestamp": result.now,
        "now_from": result.now_from, "retention_bytes": result.config.retention_bytes,
        "retention_ms": result.config.retention_ms,
        "bytes_between_snapshots": result.cadence.bytes_between,
        "snapshot_interval_ms": result.cadence.interval_ms, "bytes": result.bytes,
        "startup": result.startup, "refusal": result.refusal,
        "log_start_offset_after": None if plan is None else plan.after.log_start_offset,
        "bytes_after": None if plan is None else plan.total_bytes,
        "stopped": {} if plan is None else plan.stopped,
    })
