"""Snapshot retention (KIP-630) replayed offline: Kafka's own test cases
(``KafkaMetadataLogTest``) with the segment and snapshot sizes their logs would have."""

from __future__ import annotations

from kmeta.core.replica_log import SnapshotId
from kmeta.core.retention import (
    RetentionConfig,
    SegmentSize,
    SnapshotSize,
    plan_retention,
)


def _segments(records: int, per_segment: int, batch_bytes: int) -> list[SegmentSize]:
    """One record per batch, segments rolled every ``per_segment`` batches."""
    return [SegmentSize(base, min(per_segment, records - base) * batch_bytes)
            for base in range(0, records, per_segment)]


def test_delete_snapshots_leaves_only_the_latest() -> None:
    # testDeleteSnapshots: 1,001 one-record batches in 1,024-byte segments, snapshots at
    # 100 ... 600 (epoch 1, ten records each), retention 1,024 bytes: only 600 is left and
    # the log starts at 600
    segments = _segments(1001, 13, 75)
    snaps = [SnapshotSize(SnapshotId(o, 1), 600) for o in (100, 200, 300, 400, 500, 600)]
    plan = plan_retention(snaps, segments, 0, RetentionConfig(1024, 60_000), now=None)
    assert [s.id.offset for s in plan.snapshots] == [600]
    assert plan.log_start == 600
    assert [s.offset for s in plan.deleted_snapshots] == [100, 200, 300, 400, 500]
    # segments wholly below 600 are gone; the one holding 600 stays
    assert plan.segments[0].base_offset == 598
    assert all(b + 13 <= 600 for b in plan.deleted_segments)
    assert [step.rule for step in plan.steps] == ["size"] * 5
    assert "never deleted" in plan.stopped["size"]


def test_soft_limit_keeps_the_latest_snapshot_over_the_limit() -> None:
    # testSoftRetentionLimit: 2,001 batches, snapshots (1000, 1) and (2000, 1) of 500
    # records, retention 10,240 bytes: 2000 is kept and the total stays over
    segments = _segments(2001, 136, 75)
    snaps = [SnapshotSize(SnapshotId(1000, 1), 30_000), SnapshotSize(SnapshotId(2000, 1), 30_000)]
    plan = plan_retention(snaps, segments, 0, RetentionConfig(10_240, 60_000), now=None)
    assert [s.id.offset for s in plan.snapshots] == [2000]
    assert plan.total_bytes > 10_240
    assert plan.log_start == 2000


def test_log_start_advances_to_the_next_snapshot() -> None:
    # testAdvanceLogStartOffsetAfterCleaning: snapshots 1000 and 2000, retention 256 bytes
    segments = _segments(101 * 47, 10, 40)
    snaps = [SnapshotSize(SnapshotId(1000, 1), 5000), SnapshotSize(SnapshotId(2000, 1), 5000)]
    plan = plan_retention(snaps, segments, 0, RetentionConfig(256, 60_000), now=None)
    assert plan.log_start == 2000 and len(plan.steps) == 1


def test_within_the_limit_nothing_goes() -> None:
    segments = _segments(100, 50, 10)
    snaps = [SnapshotSize(SnapshotId(50, 1), 100), SnapshotSize(SnapshotId(90, 1), 100)]
    plan = plan_retention(snaps, segments, 0, RetentionConfig(10_000, -1), now=None)
    assert plan.steps == [] and plan.log_start == 0
    assert "within" in plan.stopped["size"] and plan.stopped["time"].startswith("off")


def test_time_rule_deletes_snapshots_older_than_retention() -> None:
    day = 24 * 3600 * 1000
    segments = _segments(3000, 1000, 10)
    snaps = [SnapshotSize(SnapshotId(1000, 1), 10, timestamp=0),
             SnapshotSize(SnapshotId(2000, 1), 10, timestamp=6 * day),
             SnapshotSize(SnapshotId(2500, 1), 10, timestamp=8 * day)]
    plan = plan_retention(snaps, segments, 0, RetentionConfig(-1, 7 * day), now=8 * day)
    # 1000 is 8 days old: it goes and the log starts at 2000; 2000 is 2 days old: it stays
    assert [(s.rule, s.breached.offset, s.kept.offset) for s in plan.steps] == \
        [("time", 1000, 2000)]
    assert plan.log_start == 2000 and plan.deleted_segments == [0, 1000]
    assert plan.steps[0].age_ms == 8 * day


def test_a_step_needs_the_log_start_below_the_next_snapshot() -> None:
    segments = _segments(3000, 1000, 100)
    snaps = [SnapshotSize(SnapshotId(1000, 1), 10), SnapshotSize(SnapshotId(2000, 1), 10)]
    plan = plan_retention(snaps, segments, 2000, RetentionConfig(1, -1), now=None)
    assert plan.steps == [] and "not below" in plan.stopped["size"]


def test_snapshots_are_ordered_by_epoch_then_offset() -> None:
    # Raft orders (600, 1) before (500, 2): the walk deletes (600, 1) first
    segments = _segments(700, 100, 100)
    snaps = [SnapshotSize(SnapshotId(500, 2), 10), SnapshotSize(SnapshotId(600, 1), 10)]
    plan = plan_retention(snaps, segments, 0, RetentionConfig(1, -1), now=None)
    assert [(s.offset, s.epoch) for s in plan.deleted_snapshots] == [(600, 1)]
    assert plan.log_start == 500
