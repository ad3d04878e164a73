"""Snapshot retention of the KRaft metadata log (KIP-630 as Kafka implements it), replayed
offline: which snapshots Kafka deletes, where the log start offset moves, which segments go.

Facts (``KafkaMetadataLog.maybeClean`` and what it calls, read for behaviour only):

* every cleaning runs the size rule, then the time rule; each walks the snapshots oldest
  first (ids ordered as Raft's OffsetAndEpoch: epoch, then offset) in pairs ``(s, next)``
  and stops at the first ``s`` its rule keeps or the first step that cannot be taken;
* size: ``s`` goes while the log's bytes plus the bytes of the snapshots not yet counted
  out exceed ``metadata.max.retention.bytes`` (a snapshot's bytes are counted out as its
  turn comes, whether or not the step is taken);
* time: ``s`` goes when its header's last-contained timestamp is older than ``now`` minus
  ``metadata.max.retention.ms``;
* a step (``deleteBeforeSnapshot(next)``) needs the log start below ``next`` and ``next``
  at or below the latest snapshot; it raises the log start to ``next``'s end offset,
  deletes every segment whose successor starts at or below it (never the last one), and
  forgets (renames ``.deleted``) every snapshot ordered before ``next``;
* so the latest snapshot is never deleted and the limit is soft: a log may stay over it.

A negative limit turns its rule off, as in Kafka.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kmeta.core.replica_log import SnapshotId

__all__ = ["DEFAULT_RETENTION_BYTES", "DEFAULT_RETENTION_MS", "RetentionConfig",
           "RetentionPlan", "RetentionStep", "SegmentSize", "SnapshotSize", "plan_retention"]

#: metadata.max.retention.bytes and metadata.max.retention.ms by default (Kafka's
#: KRaftConfigs / MetadataLogConfig): 100 MiB and 7 days.
DEFAULT_RETENTION_BYTES = 100 * 1024 * 1024
DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000


@dataclass(frozen=True)
class SnapshotSize:
    """A live snapshot: its id, its bytes, its header's last-contained log timestamp."""

    id: SnapshotId
    size: int
    timestamp: int | None = None


@dataclass(frozen=True)
class SegmentSize:
    base_offset: int
    size: int


@dataclass(frozen=True)
class RetentionConfig:
    retention_bytes: int = DEFAULT_RETENTION_BYTES
    retention_ms: int = DEFAULT_RETENTION_MS


@dataclass(frozen=True)
class RetentionStep:
    """One ``deleteBeforeSnapshot``: why, which snapshots and segments went, and the new
    log start offset."""

    rule: str  # size or time
    #: the snapshot whose breach started the step, and the one the log now starts at
    breached: SnapshotId
    kept: SnapshotId
    deleted_snapshots: tuple[SnapshotId, ...]
    deleted_segments: tuple[int, ...]
    log_start_before: int
    log_start: int
    #: size: log bytes and snapshot bytes counted against the limit; time: the age (ms)
    #: of the breached snapshot's last-contained timestamp
    log_bytes: int | None = None
    snapshot_bytes: int | None = None
    age_ms: int | None = None


@dataclass
class RetentionPlan:
    """What one cleaning does, and what is left."""

    steps: list[RetentionStep] = field(default_factory=list)
    snapshots: list[SnapshotSize] = field(default_factory=list)
    segments: list[SegmentSize] = field(default_factory=list)
    log_start: int = 0
    #: why each rule stopped where it did, in words
    stopped: dict[str, str] = field(default_factory=dict)

    @property
    def log_bytes(self) -> int:
        return sum(s.size for s in self.segments)

    @property
    def total_bytes(self) -> int:
        return self.log_bytes + sum(s.size for s in self.snapshots)

    @property
    def deleted_snapshots(self) -> list[SnapshotId]:
        return [s for step in self.steps for s in step.deleted_snapshots]

    @property
    def deleted_segments(self) -> list[int]:
        return [b for step in self.steps for b in step.deleted_segments]


def plan_retention(snapshots: list[SnapshotSize], segments: list[SegmentSize],
                   log_start: int, config: RetentionConfig, now: int | None) -> RetentionPlan:
    """The cleaning Kafka would do now (``now``: ms since the epoch; None turns the time
    rule off, as there is no clock to judge ages by) to a metadata log whose segments,
    live snapshots and log start offset these are."""
    plan = RetentionPlan(snapshots=sorted(snapshots, key=lambda s: s.id),
                         segments=sorted(segments, key=lambda s: s.base_offset),
                         log_start=log_start)
    if config.retention_bytes < 0:
        plan.stopped["size"] = "off (metadata.max.retention.bytes is negative)"
    else:
        _clean(plan, "size", config, now)
    if config.retention_ms < 0:
        plan.stopped["time"] = "off (metadata.max.retention.ms is negative)"
    elif now is None:
        plan.stopped["time"] = "no clock to judge snapshot ages by"
    else:
        _clean(plan, "time", config, now)
    return plan


def _clean(plan: RetentionPlan, rule: str, config: RetentionConfig, now: int | None) -> None:
    pairs = list(zip(plan.snapshots, plan.snapshots[1:], strict=False))
    if not pairs:
        plan.stopped[rule] = "fewer than two snapshots: the latest is never deleted"
        return
    counted = sum(s.size for s in plan.snapshots)
    for snap, nxt in pairs:
        log_bytes = plan.log_bytes
        if rule == "size":
            if log_bytes + counted <= config.retention_bytes:
                plan.stopped[rule] = (f"{log_bytes + counted:,} bytes of log and snapshots are "
                                      f"within {config.retention_bytes:,}")
                return
            facts = {"log_bytes": log_bytes, "snapshot_bytes": counted}
            counted -= snap.size
        else:
            assert now is not None
            if snap.timestamp is None or now - snap.timestamp <= config.retention_ms:
                plan.stopped[rule] = (f"snapshot {snap.id} is not older than "
                                      f"{config.retention_ms:,} ms" if snap.timestamp is not None
                                      else f"snapshot {snap.id} has no timestamp")
                return
            facts = {"age_ms": now - snap.timestamp}
        step = _delete_before(plan, rule, snap.id, nxt.id, **facts)
        if step is None:
            plan.stopped[rule] = (f"the log start {plan.log_start} is not below snapshot "
                                  f"{nxt.id}")
            return
        plan.steps.append(step)
    plan.stopped[rule] = "only the latest snapshot is left, and it is never deleted"


def _delete_before(plan: RetentionPlan, rule: str, breached: SnapshotId, nxt: SnapshotId,
                   **facts: int) -> RetentionStep | None:
    latest = plan.snapshots[-1].id
    if not (plan.log_start < nxt.offset <= latest.offset):
        return None
    before = plan.log_start
    plan.log_start = nxt.offset
    segs = plan.segments
    gone = tuple(s.base_offset for i, s in enumerate(segs[:-1])
                 if segs[i + 1].base_offset <= plan.log_start)
    plan.segments = [s for s in segs if s.base_offset not in gone]
    forgotten = tuple(s.id for s in plan.snapshots if s.id < nxt)
    plan.snapshots = [s for s in plan.snapshots if not s.id < nxt]
    return RetentionStep(rule, breached, nxt, forgotten, gone, before, plan.log_start, **facts)
