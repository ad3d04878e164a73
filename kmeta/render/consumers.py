"""``kmeta consumers`` for people (per group, its committed offsets and what each meets on
the replica) and for scripts (JSON Lines: an object per group and partition, then a
summary)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby
from typing import Any

from kmeta.core.consumer_offsets import Commit, Group
from kmeta.core.consumer_position import FINE, NO_EPOCH, OUT_OF_RANGE, TRUNCATED, UNDEFINED
from kmeta.ops.consumers import ConsumerRow, ConsumersResult
from kmeta.render.brokers import utc
from kmeta.render.jsonl import dumps

_VERDICT_WORDS = {FINE: "fine", TRUNCATED: "truncated", UNDEFINED: "epoch unknown",
                  OUT_OF_RANGE: "out of range", NO_EPOCH: "no epoch: cannot tell"}


def consumers_lines(result: ConsumersResult) -> Iterator[str]:
    log = result.log
    if log is not None:
        groups = log.groups
        dead = sum(1 for g in groups.values() if g.deleted)
        live = [r for r in result.rows if not r.commit.deleted]
        yield (f"__consumer_offsets: {len(log.partitions):,} partition(s), {log.records:,} "
               f"records; {len(groups):,} group(s) with metadata ({dead:,} deleted); "
               f"{len(live)} committed offset(s), {len(result.rows) - len(live)} deleted")
        if result.bare:
            yield (f"{result.bare} of the partitions hold no log segment (a copy without its "
                   ".log files?): their commits are not here")
        without = [r.commit for r in live if not r.commit.has_epoch]
        unsent = sum(1 for c in without if c.epoch_field)
        if unsent:
            yield (f"{unsent} of the committed offsets carry no leader epoch: the client sent "
                   "none (-1 in an OffsetCommitValue v3 or later, which has the field): a "
                   "truncation under them cannot be detected")
        if len(without) > unsent:
            yield (f"{len(without) - unsent} of the committed offsets carry no leader epoch: "
                   "written as OffsetCommitValue v0-2, which has no such field (a broker "
                   "before Kafka 2.1 and KIP-320, or v1 for a commit with an expire time): a "
                   "truncation under them cannot be detected")
        if log.aborted or log.pending:
            yield (f"transactional commits: {log.aborted} dropped by an ABORT, {log.pending} "
                   "in a transaction with no marker yet (not applied)")
    if result.against is not None:
        yield f"against {result.against}: " + _verdict_counts(result)
    for name, rows in groupby(result.rows, key=lambda r: r.commit.group):
        rows = list(rows)
        yield ""
        yield _group_head(name, rows[0])
        for r in rows:
            yield "  " + row_text(r)
    idle = _groups_without_offsets(result)
    if idle:
        yield ""
        gone = [g.group for g in idle if g.deleted]
        kept = [g.group for g in idle if not g.deleted]
        if gone:
            yield f"deleted groups (tombstones), no offsets left: {', '.join(gone)}"
        if kept:
            yield f"groups with no committed offset: {', '.join(kept)}"


def _groups_without_offsets(result: ConsumersResult) -> list[Group]:
    if result.log is None:
        return []
    with_rows = {r.commit.group for r in result.rows}
    return [g for name, g in sorted(result.log.groups.items()) if name not in with_rows
            and (result.group is None or name == result.group)]


def _verdict_counts(result: ConsumersResult) -> str:
    counts = result.verdicts
    parts = [f"{n:,} {_VERDICT_WORDS[v]}" for v, n in sorted(counts.items())]
    if result.unmatched:
        parts.append(f"{result.unmatched} in partitions the replica does not hold")
    return ", ".join(parts) or "nothing to check"


def _group_head(name: str, row: ConsumerRow) -> str:
    g = row.group
    if row.commit.source == "--position":
        return "the position given (--position):"
    if g is None:
        return f"group {name} (no group metadata record: a standalone consumer or expired)"
    if g.deleted:
        return f"group {name} ({g.protocol}): deleted"
    kind = g.protocol if g.protocol != "classic" else f"classic, {g.protocol_type or '-'}"
    gen = f"generation {g.generation}" if g.protocol == "classic" else f"epoch {g.generation}"
    members = f", {g.members} member(s)" if g.members is not None else ""
    return f"group {name} ({kind}, {gen}{members})"


def row_text(r: ConsumerRow) -> str:
    c = r.commit
    where = f"{c.topic}-{c.partition}"
    if c.deleted:
        return f"{where}: deleted (offset {c.source_offset} of {_short(c.source)})"
    epoch = _epoch(c)
    when = f", committed {utc(c.commit_timestamp)}" if c.commit_timestamp is not None else ""
    text = f"{where}: offset {c.offset}, {epoch}{when}"
    if r.check is not None:
        text += f"; {_VERDICT_WORDS[r.check.verdict]}"
        if r.check.verdict == TRUNCATED:
            text += f": reset to {r.check.reset_to} (epoch {r.check.reset_epoch})"
        elif r.check.verdict in (UNDEFINED, OUT_OF_RANGE):
            text += f": {r.check.why}"
    return text


def _epoch(c: Commit) -> str:
    if c.has_epoch:
        return f"epoch {c.leader_epoch}"
    if c.epoch_field:
        return "no epoch (the client sent none)"
    return "no epoch" if c.value_version is None else f"no epoch (value v{c.value_version})"


def _short(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def consumers_json(result: ConsumersResult) -> Iterator[str]:
    if result.log is not None:
        for name, g in sorted(result.log.groups.items()):
            if result.group is None or name == result.group:
                yield dumps(group_object(g))
    for r in result.rows:
        yield dumps(row_object(r))
    for f in result.findings:  # before the summary, which is the last line
        yield dumps(f.to_json())
    yield dumps(summary_object(result))


def group_object(g: Group) -> dict[str, Any]:
    return {"kind": "consumer_group", "group": g.group, "protocol": g.protocol,
            "protocol_type": g.protocol_type, "generation": g.generation,
            "members": g.members, "deleted": g.deleted,
            "source_offset": g.source_offset if g.source_offset >= 0 else None}


def row_object(r: ConsumerRow) -> dict[str, Any]:
    c, g = r.commit, r.group
    out: dict[str, Any] = {
        "kind": "consumer_offset", "group": c.group, "topic": c.topic,
        "partition": c.partition, "offset": c.offset,
        # -1 on disk: no epoch was committed (unknown, as everywhere kmeta says it: null)
        "leader_epoch": c.leader_epoch if c.leader_epoch >= 0 else None,
        "commit_timestamp": c.commit_timestamp, "metadata": c.metadata, "deleted": c.deleted,
        "group_protocol": None if g is None else g.protocol,
        "group_deleted": None if g is None else g.deleted,
        "transactional": c.transactional, "value_version": c.value_version,
        "source": c.source,
        "source_offset": c.source_offset if c.source_offset >= 0 else None,
    }
    if r.check is not None:
        k = r.check
        out.update(verdict=k.verdict, end_epoch=k.end_epoch, end_offset=k.end_offset,
                   reset_to=k.reset_to, reset_epoch=k.reset_epoch, why=k.why,
                   against=r.against)
    return out


def summary_object(result: ConsumersResult) -> dict[str, Any]:
    log = result.log
    rows = result.rows
    live = [r for r in rows if not r.commit.deleted]
    return {
        "kind": "consumers_summary",
        "partitions": None if log is None else len(log.partitions),
        "records": None if log is None else log.records,
        "groups": None if log is None else len(log.groups),
        "groups_deleted": None if log is None else sum(g.deleted for g in log.groups.values()),
        "offsets": len(live), "offsets_deleted": len(rows) - len(live),
        "offsets_without_epoch": sum(1 for r in live if not r.commit.has_epoch),
        "aborted": None if log is None else log.aborted,
        "pending": None if log is None else log.pending,
        "against": result.against,
        "verdicts": dict(sorted(result.verdicts.items())),
        "unmatched": result.unmatched,
        "consumers_moved": sum(1 for r in rows if r.check is not None and r.check.consumer_moves),
    }
