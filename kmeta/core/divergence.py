"""How a KRaft follower reconciles its log with the leader's (KIP-595, KIP-630), as a
pure simulation over two :class:`ReplicaLog` models.

Facts (read in apache/kafka, not copied):

* ``KafkaRaftClient.handleFetchResponse``: a fetch carries the follower's log end offset
  and last fetched epoch; the leader answers with records, a diverging epoch
  (``divergingEpoch``: epoch and end offset) or a snapshot id to fetch instead.  A
  diverging epoch whose end offset is below the follower's high watermark is an error:
  committed data would be lost.
* ``ReplicatedLog.validateOffsetAndEpoch`` is what the leader checks (modelled by
  :meth:`ReplicaLog.validate_offset_and_epoch`).
* ``ReplicatedLog.truncateToEndOffset``: epoch 0 truncates to ``min(end, LEO)``;
  otherwise the follower asks its own log for the end offset of that epoch and truncates
  to the smaller of the two when the epoch matches, else to its own answer.

The follower fetches again from its new end until the leader accepts the fetch (the
follower's log is then a prefix of the leader's, by epochs) or sends it a snapshot.
"""

from __future__ import annotations

import copy
import enum
from dataclasses import dataclass

from kmeta.core.replica_log import (
    OffsetAndEpoch,
    ReplicaLog,
    ReplicaLogError,
    SnapshotId,
    ValidKind,
)

__all__ = ["FetchStep", "Outcome", "Reconciliation", "reconcile", "truncation_offset"]


class Outcome(enum.Enum):
    IN_SYNC = "in-sync"  # the follower's log is a prefix of the leader's: it only appends
    TRUNCATE = "truncate"  # it truncates to ``truncate_to``, then appends
    SNAPSHOT = "snapshot"  # the leader sends it a snapshot (KIP-630 FETCH_SNAPSHOT)
    BELOW_HIGH_WATERMARK = "below-high-watermark"  # Kafka refuses: committed data differs
    # The fetch cannot be carried on: a model reached a state in which Kafka itself throws
    # (KafkaMetadataLog.lastFetchedEpoch with no epoch left and a snapshot that is not
    # the whole log).  ``Reconciliation.reason`` says which; the steps show how far it got.
    UNDETERMINED = "undetermined"


@dataclass(frozen=True)
class FetchStep:
    """One fetch of the simulation and the leader's answer."""

    fetch_offset: int
    last_fetched_epoch: int
    answer: ValidKind
    answer_offset_and_epoch: OffsetAndEpoch
    truncated_to: int | None = None

    def __str__(self) -> str:
        head = (f"fetch at {self.fetch_offset} (last epoch {self.last_fetched_epoch}): "
                f"{self.answer.value.lower()} {self.answer_offset_and_epoch}")
        return head if self.truncated_to is None else f"{head}, truncate to {self.truncated_to}"


@dataclass(frozen=True)
class Reconciliation:
    """What Kafka would do to the follower's log, and the fetches that tell it."""

    outcome: Outcome
    #: where the follower's log ends up before it appends the leader's records
    truncate_to: int | None
    #: the snapshot the leader would send (Outcome.SNAPSHOT)
    snapshot: SnapshotId | None
    steps: tuple[FetchStep, ...]
    #: the follower's high watermark as far as its files tell it (its latest snapshot)
    high_watermark_floor: int = 0
    #: why the simulation stopped (Outcome.UNDETERMINED)
    reason: str | None = None


def truncation_offset(follower: ReplicaLog, diverging: OffsetAndEpoch) -> int:
    """``ReplicatedLog.truncateToEndOffset``: where the follower truncates on a diverging
    epoch answer."""
    if diverging.epoch == 0:
        return min(diverging.offset, follower.log_end_offset)
    local = follower.end_offset_for_epoch(diverging.epoch)
    if local.epoch == diverging.epoch:
        return min(local.offset, diverging.offset)
    return local.offset


def reconcile(follower: ReplicaLog, leader: ReplicaLog, *, max_steps: int = 10_000
              ) -> Reconciliation:
    """Simulate the follower fetching from the leader until the leader accepts its
    position.  Neither model is changed.

    A follower only knows its high watermark at run time; on disk, its latest snapshot
    is a floor for it (a snapshot never passes the high watermark), so a truncation
    below that snapshot is reported as Kafka's refusal rather than carried out.
    """
    f = copy.copy(follower)
    latest = f.latest_snapshot
    floor = latest.offset if latest is not None else 0
    steps: list[FetchStep] = []
    try:
        return _fetch_until_agreed(f, leader, follower.log_end_offset, floor, steps,
                                   max_steps)
    except ReplicaLogError as e:
        return Reconciliation(Outcome.UNDETERMINED, None, None, tuple(steps), floor, str(e))


def _fetch_until_agreed(f: ReplicaLog, leader: ReplicaLog, start: int, floor: int,
                        steps: list[FetchStep], max_steps: int) -> Reconciliation:
    """The fetch loop of :func:`reconcile` over ``f``, the follower's copy."""
    for _ in range(max_steps):
        offset, epoch = f.log_end_offset, f.last_fetched_epoch()
        answer = leader.validate_offset_and_epoch(offset, epoch)
        if answer.kind is ValidKind.VALID:
            steps.append(FetchStep(offset, epoch, answer.kind, answer.offset_and_epoch))
            moved = offset != start
            return Reconciliation(Outcome.TRUNCATE if moved else Outcome.IN_SYNC,
                                  offset if moved else None, None, tuple(steps), floor)
        if answer.kind is ValidKind.SNAPSHOT:
            steps.append(FetchStep(offset, epoch, answer.kind, answer.offset_and_epoch))
            snap = answer.offset_and_epoch
            return Reconciliation(Outcome.SNAPSHOT, None,
                                  SnapshotId(snap.offset, snap.epoch), tuple(steps), floor)
        to = truncation_offset(f, answer.offset_and_epoch)
        steps.append(FetchStep(offset, epoch, answer.kind, answer.offset_and_epoch, to))
        if to < floor:
            return Reconciliation(Outcome.BELOW_HIGH_WATERMARK, to, None, tuple(steps), floor)
        if to >= offset:
            # No progress: Kafka would fetch the same position forever; the models
            # disagree in a way a real leader would not answer.  Say where it stuck.
            return Reconciliation(Outcome.TRUNCATE, to, None, tuple(steps), floor)
        # The follower model may hold runs of batches (from a verify pass): a real
        # truncation lands on a batch boundary inside such a run.
        f.truncate_to(to, split=True)
    raise RuntimeError(f"no agreement after {max_steps} fetches")  # pragma: no cover
