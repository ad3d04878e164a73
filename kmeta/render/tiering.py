"""``kmeta tiering`` for people (per partition: its remote segments, the last tiered offset
and an empty follower's two ways in) and for scripts (JSON Lines: an object per remote
segment and per partition, then a summary)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kmeta.core.tiering import Bootstrap, RemoteSegment
from kmeta.formats.remote_log_metadata import DELETE_STATES
from kmeta.ops.tiering import TieredPartition, TieringResult
from kmeta.render.jsonl import dumps
from kmeta.render.retention import size


def _epochs(pairs: Any) -> str:
    return " ".join(f"{e}@{o}" for e, o in pairs) or "-"


def tiering_lines(result: TieringResult) -> Iterator[str]:
    if result.nothing_tiered is not None:
        yield f"nothing tiered here: {result.nothing_tiered}"
        return
    names = ", ".join(Path(m).name for m in result.metadata_dirs)
    yield (f"remote log metadata: {names} ({result.records:,} records), for "
           f"{len(result.partitions):,} partition(s)")
    if any(tp.nothing_tiered is None for tp in result.partitions):
        yield ("an empty follower takes the classic way unless follower.fetch.last.tiered."
               "offset.enable is set (default false; Kafka 4.3+)")
    for tp in result.partitions:
        yield ""
        yield from partition_lines(tp, result.metadata_partitions)


def partition_lines(tp: TieredPartition, count: int) -> Iterator[str]:
    v = tp.view
    start = v.checkpoint_log_start if v.checkpoint_log_start is not None else v.local_log_start
    local = f"local log {v.local_log_start}..{v.log_end - 1}" if v.log_end > v.local_log_start \
        else f"no local record (local log start {v.local_log_start})"
    yield (f"{v.topic}-{v.partition}: log start {start}, {local}, log end {v.log_end}; "
           f"{len(tp.segments)} local segment(s), {size(sum(s.size for s in tp.segments))}")
    if tp.nothing_tiered is not None:  # no remote storage to explain
        yield f"  {tp.nothing_tiered}"
        return
    yield f"  epochs ({v.cache_from}): {_epochs((e.epoch, e.start_offset) for e in v.cache.entries)}"
    where = ", ".join(Path(m).name for m in tp.found_in) or "none of the partitions given"
    chosen = "unknown (no partition.metadata)" if tp.metadata_partition is None \
        else f"{tp.metadata_partition} of {count}"
    yield f"  remote metadata in: {where} (Kafka's partitioner: {chosen})"
    if tp.remote.delete_state is not None:
        yield (f"  the partition is being deleted from remote storage: "
               f"{DELETE_STATES.get(tp.remote.delete_state, tp.remote.delete_state)}")
    segs = sorted(tp.remote.segments.values(), key=lambda s: (s.start, s.end))
    if segs or tp.remote.forgotten:
        yield (f"  remote segments: {len(segs)} ({len(tp.remote.finished)} copied), "
               f"{len(tp.remote.forgotten)} deleted")
        for s in segs:
            yield "    " + segment_text(s)
    yield f"  last tiered offset: {tp.highest_remote}" + (
        "" if tp.highest_remote >= 0 else " (nothing tiered)")
    pending = "unknown" if tp.pending is None else str(tp.pending)
    yield f"  earliest pending upload offset: {pending}"
    yield "  an empty follower:"
    for b in (tp.classic, tp.kip1023):
        if b is not None:
            yield "    " + bootstrap_text(b, tp.classic)
    tiered = [s for s in tp.segments if s.tiered]
    if tiered:
        yield (f"  {len(tiered)} local segment(s) already tiered, still on disk "
               f"({size(sum(s.size for s in tiered))})")
    for note in tp.notes:
        yield f"  note: {note}"


def segment_text(s: RemoteSegment) -> str:
    return (f"{s.start}..{s.end}: epochs {_epochs(sorted(s.epochs.items()))}, "
            f"{s.state_name}, {size(s.size)}, broker {s.broker} ({s.segment_id})")


def bootstrap_text(b: Bootstrap, classic: Bootstrap | None) -> str:
    name = "classic " if b.path == "classic" else "KIP-1023"
    if b.fetch_from is None:
        return f"{name}: {b.why}"
    share = ""
    if b.path != "classic" and classic is not None and classic.bytes:
        share = f" ({100 * (b.bytes or 0) / classic.bytes:.0f}% of the classic bytes)"
    remote = f"; first rebuilds epochs {_epochs(b.epochs)} from remote storage" \
        if b.epochs else ""
    return (f"{name}: fetches from {b.fetch_from}: {b.records or 0:,} records, "
            f"{size(b.bytes)}{share}{remote}")


def tiering_json(result: TieringResult) -> Iterator[str]:
    for tp in result.partitions:
        for s in sorted(tp.remote.segments.values(), key=lambda s: (s.start, s.end)):
            yield dumps(segment_object(tp, s))
        yield dumps(partition_object(tp, result))
    for f in result.findings:  # before the summary, which is the last line
        yield dumps(f.to_json())
    yield dumps({"kind": "tiering_summary", "metadata_dirs": result.metadata_dirs,
                 "metadata_partitions": result.metadata_partitions,
                 "records": result.records, "partitions": len(result.partitions),
                 "now_timestamp": result.now, "local_retention_ms": result.local_retention_ms})


def segment_object(tp: TieredPartition, s: RemoteSegment) -> dict[str, Any]:
    return {"kind": "remote_segment", "topic": tp.view.topic, "partition": tp.view.partition,
            "segment_id": s.segment_id, "start_offset": s.start, "last_offset": s.end,
            "segment_epochs": [{"epoch": e, "start_offset": o} for e, o in sorted(s.epochs.items())],
            "size": s.size, "state": s.state_name, "broker": s.broker,
            "event_timestamp": s.event_ms, "max_timestamp": s.max_timestamp_ms,
            "source_offset": s.since}


def _bootstrap_object(b: Bootstrap | None) -> dict[str, Any] | None:
    if b is None:
        return None
    return {"fetch_from": b.fetch_from, "records": b.records, "bytes": b.bytes,
            "epoch_cache": [{"epoch": e, "start_offset": o} for e, o in b.epochs], "why": b.why}


def partition_object(tp: TieredPartition, result: TieringResult) -> dict[str, Any]:
    v = tp.view
    return {
        "kind": "tiered_partition", "topic": v.topic, "partition": v.partition,
        "path": v.path, "topic_id": tp.topic_id,
        "metadata_partition": tp.metadata_partition,
        "found_in": tp.found_in,
        "log_start_offset": v.checkpoint_log_start if v.checkpoint_log_start is not None
        else v.local_log_start,
        "local_log_start_offset": v.local_log_start, "log_end_offset": v.log_end,
        "epoch_cache": [{"epoch": e.epoch, "start_offset": e.start_offset} for e in v.cache.entries],
        "remote_segments": len(tp.remote.segments),
        "remote_segments_deleted": len(tp.remote.forgotten),
        # Kafka answers -1 when nothing is tiered; kmeta says unknown as null
        "last_tiered_offset": None if tp.highest_remote < 0 else tp.highest_remote,
        "earliest_pending_upload": tp.pending,
        "classic": _bootstrap_object(tp.classic),
        "kip1023": _bootstrap_object(tp.kip1023),
        "ratio": tp.ratio,
        "tiered_local_segments": sum(1 for s in tp.segments if s.tiered),
        "notes": tp.notes,
    }
