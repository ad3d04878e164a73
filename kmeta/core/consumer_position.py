"""KIP-320 from the consumer's side: what a consumer resuming at (offset, leader epoch)
meets on its next fetch from a replica that becomes the leader.

Kafka's rules (``SubscriptionState.maybeCompleteValidation`` and the fetcher):
* a position with an epoch is validated first with OffsetsForLeaderEpoch: the leader
  answers :meth:`EpochCache.end_offset_for` of that epoch;
  - an undefined answer (the epoch is newer than every epoch the leader knows): the
    consumer resets by its ``auto.offset.reset`` policy, or throws LogTruncationException
    (with no offset) when it has none;
  - an end offset below the position: the log was truncated under the consumer; it seeks
    to that end offset, "the first offset known to diverge" (or throws
    LogTruncationException with it, without a reset policy);
  - otherwise the position stands;
* a position without an epoch (-1: an OffsetCommitValue before v3, which has no such
  field, or a client that committed without one) skips validation: a truncation cannot
  be detected;
* then the fetch: a position below the log start or past the log end is out of range and
  resets by the policy.
"""

from __future__ import annotations

from dataclasses import dataclass

from kmeta.core.epochs import EpochCache

__all__ = ["FINE", "NO_EPOCH", "OUT_OF_RANGE", "TRUNCATED", "UNDEFINED", "PositionCheck",
           "check_position"]

FINE = "fine"
TRUNCATED = "truncated"
UNDEFINED = "epoch_unknown"
OUT_OF_RANGE = "out_of_range"
NO_EPOCH = "no_epoch"


@dataclass(frozen=True)
class PositionCheck:
    """The answer for one position: the verdict, what the leader answered, and where the
    consumer goes next (``reset_to``: the offset it seeks to when Kafka names one; None
    when it falls back to its reset policy or keeps its position)."""

    verdict: str
    end_epoch: int | None = None
    end_offset: int | None = None
    reset_to: int | None = None
    reset_epoch: int | None = None
    why: str = ""

    @property
    def consumer_moves(self) -> bool:
        return self.verdict in (TRUNCATED, UNDEFINED, OUT_OF_RANGE)


def check_position(offset: int, leader_epoch: int, cache: EpochCache, log_start: int,
                   log_end: int) -> PositionCheck:
    """Validate a consumer position against a leader with this epoch cache and log."""
    if leader_epoch < 0:
        where = _range(offset, log_start, log_end)
        if where:
            return PositionCheck(OUT_OF_RANGE, why=f"no epoch to validate; {where}")
        return PositionCheck(NO_EPOCH, why="committed without a leader epoch: a truncation "
                                           "of the log cannot be detected")
    answer = cache.end_offset_for(leader_epoch, log_end)
    if answer.undefined:
        return PositionCheck(UNDEFINED, answer.epoch, answer.end_offset,
                             why=f"the leader knows no epoch {leader_epoch} or later: the "
                                 "consumer resets by auto.offset.reset (LogTruncationException "
                                 "without a policy)")
    if answer.end_offset < offset:
        return PositionCheck(TRUNCATED, answer.epoch, answer.end_offset, answer.end_offset,
                             answer.epoch,
                             why=f"epoch {leader_epoch} ends at {answer.end_offset} on the "
                                 f"leader, below {offset}: the consumer seeks to "
                                 f"{answer.end_offset} (LogTruncationException without a "
                                 "reset policy)")
    where = _range(offset, log_start, log_end)
    if where:
        return PositionCheck(OUT_OF_RANGE, answer.epoch, answer.end_offset, why=where)
    return PositionCheck(FINE, answer.epoch, answer.end_offset,
                         why=f"epoch {leader_epoch} ends at {answer.end_offset} on the leader")


def _range(offset: int, log_start: int, log_end: int) -> str:
    if offset < log_start:
        return f"{offset} is below the log start {log_start}: the consumer resets by " \
               "auto.offset.reset"
    if offset > log_end:
        return f"{offset} is past the log end {log_end}: the consumer resets by " \
               "auto.offset.reset"
    return ""
