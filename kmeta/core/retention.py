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
* a step is ``deleteBeforeSnapshot(next)``, which the replica model owns
  (:meth:`~kmeta.core.replica_log.ReplicaLog.delete_before_snapshot`): it raises the log
  start to ``next``'s end offset, deletes every segment wholly below it and forgets
  (renames ``.deleted``) every snapshot ordered before ``next``, or refuses;
* so the latest snapshot is never deleted and the limit is soft: a log may stay over it.

A negative limit turns its rule off, as in Kafka.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field

from kmeta.core.lifecycle import duration
from kmeta.core.replica_log import ReplicaLog, SnapshotId, SnapshotState

__all__ = ["DEFAULT_RETENTION_BYTES", "DEFAULT_RETENTION_MS", "RetentionConfig",
           "RetentionPlan", "RetentionStep", "SnapshotFacts", "plan_retention"]

#: metadata.max.retention.bytes and metadata.max.retention.ms by default (Kafka's
#: KRaftConfigs / MetadataLogConfig): 100 MiB and 7 days.
DEFAULT_RETENTION_BYTES = 100 * 1024 * 1024
DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000


@dataclass(frozen=True)
class SnapshotFacts:
    """What the size and time rules read of a live snapshot: its bytes, and its header's
    last-contained log timestamp (None when it cannot be read)."""

    size: int
    timestamp: int | None = None


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
    """What one cleaning does to a replica, and the replica it leaves."""

    after: ReplicaLog
    segment_bytes: Mapping[int, int]
    snapshot_facts: Mapping[SnapshotId, SnapshotFacts]
    steps: list[RetentionStep] = field(default_factory=list)
    #: why each rule stopped where it did, in words
    stopped: dict[str, str] = field(default_factory=dict)

    @property
    def log_bytes(self) -> int:
        return _log_bytes(self.after, self.segment_bytes)

    @property
    def total_bytes(self) -> int:
        return self.log_bytes + sum(self.snapshot_facts[s].size for s in _live(self.after)
                                    if s in self.snapshot_facts)

    @property
    def deleted_snapshots(self) -> list[SnapshotId]:
        return [s for step in self.steps for s in step.deleted_snapshots]

    @property
    def deleted_segments(self) -> list[int]:
        return [b for step in self.steps for b in step.deleted_segments]


def plan_retention(model: ReplicaLog, segment_bytes: Mapping[int, int],
                   snapshot_facts: Mapping[SnapshotId, SnapshotFacts], config: RetentionConfig,
                   now: int | None) -> RetentionPlan:
    """The cleaning Kafka would do now (``now``: ms since the epoch; None turns the time
    rule off, as there is no clock to judge ages by) to the replica ``model``, whose
    segment files hold ``segment_bytes`` (by base offset) and whose live snapshots are
    ``snapshot_facts``.  ``model`` is left as it is; the plan holds the replica after."""
    plan = RetentionPlan(copy.copy(model), segment_bytes, snapshot_facts)
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


def _name(sid: SnapshotId) -> str:
    """A snapshot as its file name says it: end offset-epoch."""
    return f"{sid.offset}-{sid.epoch}"


def _live(model: ReplicaLog) -> list[SnapshotId]:
    return [s for s, state in model.snapshots.items() if state is SnapshotState.LIVE]


def _log_bytes(model: ReplicaLog, segment_bytes: Mapping[int, int]) -> int:
    return sum(segment_bytes.get(s.base_offset, 0) for s in model.segments)


def _clean(plan: RetentionPlan, rule: str, config: RetentionConfig, now: int | None) -> None:
    live = _live(plan.after)
    pairs = list(zip(live, live[1:], strict=False))
    if not pairs:
        plan.stopped[rule] = "fewer than two snapshots: the latest is never deleted"
        return
    facts = plan.snapshot_facts
    counted = sum(facts[s].size for s in live if s in facts)
    for snap, nxt in pairs:
        known = facts.get(snap)
        if known is None:
            plan.stopped[rule] = f"snapshot {_name(snap)} cannot be read"
            return
        log_bytes = _log_bytes(plan.after, plan.segment_bytes)
        if rule == "size":
            if log_bytes + counted <= config.retention_bytes:
                plan.stopped[rule] = (f"{log_bytes + counted:,} bytes of log and snapshots are "
                                      f"within {config.retention_bytes:,}")
                return
            measured = {"log_bytes": log_bytes, "snapshot_bytes": counted}
            counted -= known.size
        else:
            assert now is not None
            if known.timestamp is None or now - known.timestamp <= config.retention_ms:
                plan.stopped[rule] = (
                    f"snapshot {_name(snap)} has no timestamp" if known.timestamp is None
                    else f"snapshot {_name(snap)} is {duration(max(0, now - known.timestamp))} "
                    f"old, not older than {duration(config.retention_ms)}")
                return
            measured = {"age_ms": now - known.timestamp}
        step = _delete_before(plan.after, rule, snap, nxt, measured)
        if step is None:
            plan.stopped[rule] = (f"Kafka cannot move the log start offset "
                                  f"{plan.after.log_start_offset} to snapshot {_name(nxt)}")
            return
        plan.steps.append(step)
    plan.stopped[rule] = "only the latest snapshot is left, and it is never deleted"


def _delete_before(model: ReplicaLog, rule: str, breached: SnapshotId, nxt: SnapshotId,
                   measured: dict[str, int]) -> RetentionStep | None:
    before = model.log_start_offset
    segments = [s.base_offset for s in model.segments]
    live = _live(model)
    if not model.delete_before_snapshot(nxt):
        return None
    kept_segments = {s.base_offset for s in model.segments}
    kept_snapshots = set(_live(model))
    return RetentionStep(rule, breached, nxt, tuple(s for s in live if s not in kept_snapshots),
                         tuple(b for b in segments if b not in kept_segments), before,
                         model.log_start_offset, **measured)
