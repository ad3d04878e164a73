"""The follower's reconciliation with the leader (kmeta.core.divergence), on models."""

from __future__ import annotations

from kmeta.core.divergence import Outcome, reconcile, truncation_offset
from kmeta.core.replica_log import BatchMeta, OffsetAndEpoch, ReplicaLog, SnapshotId


def model(*runs: tuple[int, int, int], snapshots=(), lbo: int | None = None) -> ReplicaLog:
    log, _ = ReplicaLog.from_observed([(runs[0][0], [BatchMeta(*r) for r in runs])],
                                      snapshots=snapshots, log_start_offset=lbo)
    return log


LEADER = model((0, 99, 1), (100, 149, 2), (150, 199, 3))


def test_identical_and_prefix_logs_only_append():
    assert reconcile(LEADER, LEADER).outcome is Outcome.IN_SYNC
    lagging = model((0, 99, 1), (100, 120, 2))
    r = reconcile(lagging, LEADER)
    assert r.outcome is Outcome.IN_SYNC and r.truncate_to is None and len(r.steps) == 1


def test_unclean_election_truncates_to_the_epoch_boundary():
    """The follower wrote epoch 4 from 130 while the leader moved on in epoch 3 from 150:
    the leader's end of epoch 2 (150) and the follower's own (130) give 130."""
    follower = model((0, 99, 1), (100, 129, 2), (130, 180, 4))
    r = reconcile(follower, LEADER)
    assert r.outcome is Outcome.TRUNCATE and r.truncate_to == 130
    assert [s.truncated_to for s in r.steps] == [130, None]
    assert r.steps[0].answer_offset_and_epoch == OffsetAndEpoch(200, 3)


def test_uncommitted_tail_in_an_old_epoch_is_cut_where_the_leader_moved_on():
    follower = model((0, 99, 1), (100, 175, 2))
    r = reconcile(follower, LEADER)
    assert r.outcome is Outcome.TRUNCATE and r.truncate_to == 150


def test_far_behind_follower_is_sent_a_snapshot():
    leader = model((500, 600, 3), snapshots=[(500, 3)])
    r = reconcile(model((0, 99, 1)), leader)
    assert r.outcome is Outcome.SNAPSHOT and r.snapshot == SnapshotId(500, 3)


def test_truncation_below_the_followers_snapshot_is_refused():
    follower = model((0, 99, 1), (100, 129, 2), (130, 180, 4), snapshots=[(170, 4)])
    r = reconcile(follower, LEADER)
    assert r.outcome is Outcome.BELOW_HIGH_WATERMARK and r.truncate_to == 130
    assert r.high_watermark_floor == 170


def test_truncation_offset_rules():
    follower = model((0, 99, 1), (100, 129, 2), (130, 180, 4))
    assert truncation_offset(follower, OffsetAndEpoch(110, 2)) == 110
    assert truncation_offset(follower, OffsetAndEpoch(150, 3)) == 130
    assert truncation_offset(follower, OffsetAndEpoch(50, 0)) == 50


def test_reconcile_leaves_the_models_alone():
    follower = model((0, 99, 1), (100, 175, 2))
    before = follower.state_lines()
    reconcile(follower, LEADER)
    assert follower.state_lines() == before
