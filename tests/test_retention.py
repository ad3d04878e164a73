"""Snapshot retention (KIP-630) replayed offline: Kafka's own test cases
(``KafkaMetadataLogTest``) on replicas with the segments and snapshots their logs have."""

from __future__ import annotations

from kmeta.core.replica_log import BatchMeta, ReplicaLog, Segment, SnapshotId
from kmeta.core.retention import RetentionConfig, SnapshotFacts, plan_retention


def _replica(records: int, per_segment: int, batch_bytes: int,
             snapshots: dict[tuple[int, int], SnapshotFacts], log_start: int | None = None,
             epoch: int = 1) -> tuple[ReplicaLog, dict[int, int], dict]:
    """One-record batches of ``epoch``, a segment rolled every ``per_segment`` of them."""
    segments, sizes = [], {}
    for base in range(0, records, per_segment):
        last = min(base + per_segment, records) - 1
        segments.append(Segment(base, tuple(BatchMeta(o, o, epoch, batch_bytes)
                                            for o in range(base, last + 1))))
        sizes[base] = (last - base + 1) * batch_bytes
    model, _ = ReplicaLog.from_observed(segments, snapshots=list(snapshots),
                                        log_start_offset=log_start)
    return model, sizes, {SnapshotId(*k): v for k, v in snapshots.items()}


def test_delete_snapshots_leaves_only_the_latest() -> None:
    # testDeleteSnapshots: 1,001 one-record batches in 1,024-byte segments, snapshots at
    # 100 ... 600 (epoch 1, ten records each), retention 1,024 bytes: only 600 is left and
    # the log starts at 600
    snaps = {(o, 1): SnapshotFacts(600) for o in (100, 200, 300, 400, 500, 600)}
    model, sizes, facts = _replica(1001, 13, 75, snaps)
    plan = plan_retention(model, sizes, facts, RetentionConfig(1024, 60_000), now=None)
    assert [s.offset for s in plan.after.snapshots if s.offset == 600] == [600]
    assert plan.after.latest_snapshot == plan.after.earliest_snapshot == SnapshotId(600, 1)
    assert plan.after.log_start_offset == 600
    assert [s.offset for s in plan.deleted_snapshots] == [100, 200, 300, 400, 500]
    # segments wholly below 600 are gone; the one holding 600 stays
    assert plan.after.segments[0].base_offset == 598
    assert all(b + 13 <= 600 for b in plan.deleted_segments)
    assert [step.rule for step in plan.steps] == ["size"] * 5
    assert "never deleted" in plan.stopped["size"]
    assert model.log_start_offset == 0  # the replica given is left as it is


def test_soft_limit_keeps_the_latest_snapshot_over_the_limit() -> None:
    # testSoftRetentionLimit: 2,001 batches, snapshots (1000, 1) and (2000, 1) of 500
    # records, retention 10,240 bytes: 2000 is kept and the total stays over
    snaps = {(1000, 1): SnapshotFacts(30_000), (2000, 1): SnapshotFacts(30_000)}
    model, sizes, facts = _replica(2001, 136, 75, snaps)
    plan = plan_retention(model, sizes, facts, RetentionConfig(10_240, 60_000), now=None)
    assert plan.after.latest_snapshot == plan.after.earliest_snapshot == SnapshotId(2000, 1)
    assert plan.total_bytes > 10_240
    assert plan.after.log_start_offset == 2000


def test_log_start_advances_to_the_next_snapshot() -> None:
    # testAdvanceLogStartOffsetAfterCleaning: snapshots 1000 and 2000, retention 256 bytes
    snaps = {(1000, 1): SnapshotFacts(5000), (2000, 1): SnapshotFacts(5000)}
    model, sizes, facts = _replica(101 * 47, 100, 40, snaps)
    plan = plan_retention(model, sizes, facts, RetentionConfig(256, 60_000), now=None)
    assert plan.after.log_start_offset == 2000 and len(plan.steps) == 1


def test_within_the_limit_nothing_goes() -> None:
    snaps = {(50, 1): SnapshotFacts(100), (90, 1): SnapshotFacts(100)}
    model, sizes, facts = _replica(100, 50, 10, snaps)
    plan = plan_retention(model, sizes, facts, RetentionConfig(10_000, -1), now=None)
    assert plan.steps == [] and plan.after.log_start_offset == 0
    assert "within" in plan.stopped["size"] and plan.stopped["time"].startswith("off")


def test_time_rule_deletes_snapshots_older_than_retention() -> None:
    day = 24 * 3600 * 1000
    snaps = {(1000, 1): SnapshotFacts(10, 0), (2000, 1): SnapshotFacts(10, 6 * day),
             (2500, 1): SnapshotFacts(10, 8 * day)}
    model, sizes, facts = _replica(3000, 1000, 10, snaps)
    plan = plan_retention(model, sizes, facts, RetentionConfig(-1, 7 * day), now=8 * day)
    # 1000 is 8 days old: it goes and the log starts at 2000; 2000 is 2 days old: it stays
    assert [(s.rule, s.breached.offset, s.kept.offset) for s in plan.steps] == \
        [("time", 1000, 2000)]
    assert plan.after.log_start_offset == 2000 and plan.deleted_segments == [0, 1000]
    assert plan.steps[0].age_ms == 8 * day


def test_a_step_needs_the_log_start_below_the_next_snapshot() -> None:
    snaps = {(1000, 1): SnapshotFacts(10), (2000, 1): SnapshotFacts(10)}
    model, sizes, facts = _replica(3000, 1000, 100, snaps, log_start=2000)
    plan = plan_retention(model, sizes, facts, RetentionConfig(1, -1), now=None)
    assert plan.steps == [] and "cannot move the log start offset 2000" in plan.stopped["size"]


def test_snapshots_are_ordered_by_epoch_then_offset() -> None:
    # Raft orders (600, 1) before (500, 2): the walk deletes (600, 1) first
    snaps = {(500, 2): SnapshotFacts(10), (600, 1): SnapshotFacts(10)}
    model, sizes, facts = _replica(700, 100, 100, snaps, epoch=2)
    plan = plan_retention(model, sizes, facts, RetentionConfig(1, -1), now=None)
    assert [(s.offset, s.epoch) for s in plan.deleted_snapshots] == [(600, 1)]
    assert plan.after.log_start_offset == 500
