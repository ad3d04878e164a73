"""``kmeta consumers``: every group's committed offsets from ``__consumer_offsets``, and,
against a replica's partitions, what each consumer would meet on its next fetch if that
replica led (KIP-320, :mod:`kmeta.core.consumer_position`)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kmeta.core.consumer_offsets import Commit, Group, OffsetsLog, replay_offsets
from kmeta.core.consumer_position import (
    NO_EPOCH,
    OUT_OF_RANGE,
    TRUNCATED,
    UNDEFINED,
    PositionCheck,
    check_position,
)
from kmeta.errors import UnreadableInput, UsageError
from kmeta.findings import Finding
from kmeta.formats.batch import Record
from kmeta.ops.replica import (
    PartitionView,
    ReplicaDir,
    node_and_cluster,
    read_partition,
    refuse_two_clusters,
)
from kmeta.storage.discover import PartitionDir, discover
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.segments import batch_records, read_batches

__all__ = ["ConsumerRow", "ConsumersResult", "consumers", "parse_position"]

OFFSETS_TOPIC = "__consumer_offsets"

#: verdict -> the finding that reports it
VERDICT_CODES = {TRUNCATED: "V140", UNDEFINED: "V141", OUT_OF_RANGE: "V142", NO_EPOCH: "V143"}


@dataclass
class ConsumerRow:
    """One group's position in one partition, and with a replica, what it meets there."""

    commit: Commit
    group: Group | None
    check: PositionCheck | None = None
    against: str | None = None  # the replica's partition dir


@dataclass
class ConsumersResult:
    rows: list[ConsumerRow] = field(default_factory=list)
    log: OffsetsLog | None = None
    replicas: dict[tuple[str, int], PartitionView] = field(default_factory=dict)
    against: str | None = None
    group: str | None = None  # --group
    unmatched: int = 0  # commits whose partition the replica does not hold
    bare: int = 0  # __consumer_offsets partitions without a segment (a copy without logs)
    findings: list[Finding] = field(default_factory=list)

    @property
    def verdicts(self) -> Counter:
        return Counter(r.check.verdict for r in self.rows if r.check is not None)

    @property
    def failed(self) -> bool:
        """Some consumer would be moved (truncated, reset or out of range)."""
        return any(r.check is not None and r.check.consumer_moves for r in self.rows)


def parse_position(text: str) -> tuple[int, int]:
    """``OFFSET:EPOCH`` (``OFFSET`` alone: no epoch, -1)."""
    offset, _, epoch = text.partition(":")
    try:
        value = int(offset), int(epoch) if epoch else -1
    except ValueError:
        raise UsageError(f"--position {text}: give OFFSET:EPOCH, e.g. 1500:7") from None
    if value[0] < 0 or value[1] < -1:
        raise UsageError(f"--position {text}: the offset must be 0 or more and the epoch "
                         "-1 or more")
    return value


def consumers(path: str | os.PathLike[str] | None, *, group: str | None = None,
              against: str | os.PathLike[str] | None = None,
              position: tuple[int, int] | None = None,
              progress: Progress = QUIET) -> ConsumersResult:
    result = ConsumersResult(against=None if against is None else str(against), group=group)
    replica_cluster = None
    if against is not None:
        result.replicas, replica_cluster = _replica_partitions(against, result.findings,
                                                               progress)
    if position is not None:
        return _by_hand(result, position)
    assert path is not None
    found = discover([path], progress=progress)
    result.findings.extend(found.findings)
    parts = sorted((p for p in found.all_partitions() if p.topic == OFFSETS_TOPIC),
                   key=lambda p: (str(p.path.parent), p.partition))
    if not parts:
        raise UnreadableInput(f"{path}: no {OFFSETS_TOPIC} partition here",
                         hint="give a broker's data dir, or its __consumer_offsets-N dirs")
    if against is not None:
        # Offsets of one cluster checked against a replica of another say nothing (the
        # replica may be this broker itself, though: its offsets against its own log).
        refuse_two_clusters(
            [ReplicaDir(str(path), path, node_and_cluster(found, parts[0].path)[1]),
             ReplicaDir(f"--against {against}", against, replica_cluster)],
            hint="--against names a replica of the partitions these offsets were "
                 "committed for")
    result.bare = sum(1 for p in parts if not p.segments)
    log = replay_offsets(((str(p.path), _batches(p, result.findings, progress))
                          for p in parts),
                         result.findings)
    result.log = log
    for key in sorted(log.commits):
        c = log.commits[key]
        if group is not None and c.group != group:
            continue
        row = ConsumerRow(c, log.groups.get(c.group))
        if against is not None and not c.deleted:
            replica = result.replicas.get((c.topic, c.partition))
            if replica is None:
                result.unmatched += 1
            else:
                row.check = check_position(c.offset or 0, c.leader_epoch, replica.cache,
                                           replica.log_start, replica.log_end)
                row.against = replica.path
                _report(result, row)
        result.rows.append(row)
    return result


def _by_hand(result: ConsumersResult, position: tuple[int, int]) -> ConsumersResult:
    if len(result.replicas) != 1:
        held = ", ".join(f"{t}-{p}" for t, p in sorted(result.replicas)) or "none"
        raise UsageError(f"--position needs --against to name one partition dir (it holds "
                         f"{held})")
    (replica,) = result.replicas.values()
    offset, epoch = position
    commit = Commit("(--position)", replica.topic, replica.partition, offset, epoch, None,
                    None, None, "--position", -1)
    row = ConsumerRow(commit, None, check_position(offset, epoch, replica.cache,
                                                   replica.log_start, replica.log_end),
                      replica.path)
    _report(result, row)
    result.rows.append(row)
    return result


def _report(result: ConsumersResult, row: ConsumerRow) -> None:
    check = row.check
    if check is None or check.verdict not in VERDICT_CODES:
        return
    c = row.commit
    who = "the position" if c.source == "--position" else f"group {c.group}"
    result.findings.append(Finding(
        VERDICT_CODES[check.verdict],
        f"{who} at {c.topic}-{c.partition} offset {c.offset} epoch {c.leader_epoch}: "
        f"{check.why}", row.against))


def _replica_partitions(against: str | os.PathLike[str], findings: list[Finding],
                        progress: Progress
                        ) -> tuple[dict[tuple[str, int], PartitionView], str | None]:
    """The replica's topic partitions, and its cluster id where its meta.properties says."""
    found = discover([against], progress=progress)
    findings.extend(found.findings)
    views = {}
    for p in found.all_partitions():
        if p.is_metadata or p.topic.startswith("__"):
            continue
        view = read_partition(p, progress)
        findings.extend(view.findings)
        views[p.topic, p.partition] = view
    if not views:
        raise UnreadableInput(f"--against {against}: no topic partition here",
                         hint="give a replica's data dir or one of its partition dirs "
                              "(orders-0)")
    held = next(iter(views.values())).path
    return views, node_and_cluster(found, Path(held))[1]


def _batches(p: PartitionDir, findings: list[Finding], progress: Progress
             ) -> Iterator[tuple[Any, list[Record], str]]:
    for seg in p.segments:
        file = str(seg.path)
        for b in read_batches(seg.path, findings, progress=progress):
            records, problems = batch_records(b)
            findings.extend(problems)
            yield b, list(records), file
