"""Tiered storage from the disk: one user partition's remote segments replayed from
``__remote_log_metadata`` as the topic-based RLMM's cache holds them, the last tiered
offset, and where an empty follower starts (KIP-405, KIP-1023).

Kafka's rules, in the classes that apply them:
* ``RemoteLogMetadataCache``: a segment enters with COPY_SEGMENT_STARTED; an update moves it
  on only along ``RemoteLogSegmentState.isValidTransition`` (an invalid one is logged and
  dropped); DELETE_SEGMENT_FINISHED forgets it.  Per leader epoch of a segment whose copy
  finished, the highest offset of that epoch in it (the next epoch's start - 1, or the
  segment's end) raises the epoch's highest remote offset, which deletions never lower.
* ``RemoteLogManager.findHighestRemoteOffset``: from the partition's latest epoch down,
  the first epoch with a highest remote offset gives it, capped at the epoch's end
  offset - 1 (``endOffsetFor``); none: -1.
* ``LocalLeaderEndPoint.fetchEarliestPendingUploadOffset`` (KIP-1023, Kafka 4.3): with
  nothing uploaded, the log start when the local log starts there too, else unknown;
  otherwise max(highest remote offset + 1, log start, local log start).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kmeta.core.epochs import EpochCache
from kmeta.formats.remote_log_metadata import SEGMENT_STATES, valid_segment_transition

__all__ = ["COPY_FINISHED", "Bootstrap", "RemoteLog", "RemoteSegment", "bootstrap",
           "earliest_pending_upload", "highest_remote_offset"]

COPY_STARTED, COPY_FINISHED, DELETE_STARTED, DELETE_FINISHED = 0, 1, 2, 3


@dataclass
class RemoteSegment:
    segment_id: str
    start: int
    end: int
    epochs: dict[int, int]  # leader epoch -> its first offset in the segment
    size: int
    state: int
    broker: int
    event_ms: int
    max_timestamp_ms: int
    since: int  # the metadata record's offset that added it

    @property
    def state_name(self) -> str:
        return SEGMENT_STATES.get(self.state, str(self.state))

    def epoch_end(self, epoch: int) -> int:
        """The highest offset of ``epoch`` in this segment."""
        later = [start for e, start in self.epochs.items() if e > epoch]
        return min(later) - 1 if later else self.end


@dataclass
class RemoteLog:
    """One partition's remote log as the cache holds it after the records replayed."""

    segments: dict[str, RemoteSegment] = field(default_factory=dict)
    forgotten: list[RemoteSegment] = field(default_factory=list)  # DELETE_SEGMENT_FINISHED
    highest_by_epoch: dict[int, int] = field(default_factory=dict)
    delete_state: int | None = None  # RemotePartitionDeleteState, if the partition was deleted
    dropped: list[str] = field(default_factory=list)  # events Kafka drops, in words

    def add(self, s: RemoteSegment) -> None:
        """A RemoteLogSegmentMetadataRecord (a copy starting)."""
        known = self.segments.get(s.segment_id)
        if s.state != COPY_STARTED or not valid_segment_transition(
                None if known is None else known.state, s.state):
            self.dropped.append(f"segment {s.segment_id} added in state {s.state_name} at "
                                f"offset {s.since}: Kafka adds a segment only in "
                                "COPY_SEGMENT_STARTED and drops the event")
            return
        self.segments[s.segment_id] = s

    def update(self, segment_id: str, state: int, broker: int, event_ms: int, at: int) -> None:
        """A RemoteLogSegmentMetadataUpdateRecord."""
        s = self.segments.get(segment_id)
        target = SEGMENT_STATES.get(state, str(state))
        if s is None:
            self.dropped.append(f"update of unknown segment {segment_id} to {target} at "
                                f"offset {at}")
            return
        if state == COPY_STARTED or not valid_segment_transition(s.state, state):
            self.dropped.append(f"segment {segment_id} cannot go from {s.state_name} to "
                                f"{target} (offset {at}): Kafka drops the event")
            return
        s.state, s.broker, s.event_ms = state, broker, event_ms
        if state == COPY_FINISHED:
            for epoch in s.epochs:
                end = s.epoch_end(epoch)
                if end > self.highest_by_epoch.get(epoch, -1):
                    self.highest_by_epoch[epoch] = end
        elif state == DELETE_FINISHED:
            self.forgotten.append(self.segments.pop(segment_id))

    @property
    def finished(self) -> list[RemoteSegment]:
        """The segments whose copy finished and that are not being deleted, by offset."""
        return sorted((s for s in self.segments.values() if s.state == COPY_FINISHED),
                      key=lambda s: (s.start, s.end))


def highest_remote_offset(remote: RemoteLog, cache: EpochCache, log_end: int) -> int:
    """``RemoteLogManager.findHighestRemoteOffset``; -1 when nothing is tiered."""
    for entry in reversed(cache.entries):
        highest = remote.highest_by_epoch.get(entry.epoch)
        if highest is None:
            continue
        end = cache.end_offset_for(entry.epoch, log_end).end_offset
        return end - 1 if end <= highest else highest
    return -1


def earliest_pending_upload(highest: int, log_start: int, local_log_start: int) -> int | None:
    """The leader's answer to ListOffsets EARLIEST_PENDING_UPLOAD (-6); None: unknown."""
    if highest < 0:
        return log_start if local_log_start == log_start else None
    return max(highest + 1, log_start, local_log_start)


@dataclass(frozen=True)
class Bootstrap:
    """Where an empty follower starts fetching, the epoch cache it rebuilds from remote
    storage first, and what it then replicates from the leader's local log."""

    path: str  # "classic" or "kip-1023"
    fetch_from: int | None  # None: unknown (the follower waits and retries)
    epochs: tuple[tuple[int, int], ...] = ()
    records: int | None = None
    bytes: int | None = None
    why: str = ""


def bootstrap(cache: EpochCache, log_start: int, local_log_start: int, log_end: int,
              pending: int | None, replicated: dict[int, tuple[int, int]]
              ) -> tuple[Bootstrap, Bootstrap]:
    """Both ways to bootstrap an empty follower.  ``replicated[offset]`` is (records,
    bytes) of the leader's local log from ``offset`` to its end (batches whole)."""
    def rebuilt(upto: int) -> tuple[tuple[int, int], ...]:
        return tuple((e.epoch, e.start_offset) for e in cache.entries if e.start_offset < upto)

    classic_why = (f"fetches from the log start {log_start}, is told it is out of range "
                   f"below the local log start {local_log_start}, rebuilds its epoch cache "
                   "and producer state from remote storage up to there, then fetches"
                   if local_log_start > log_start else
                   f"fetches the whole local log from {local_log_start}")
    records, size = replicated.get(local_log_start, (0, 0))
    classic = Bootstrap("classic", local_log_start, rebuilt(local_log_start), records, size,
                        classic_why)
    if pending is None:
        return classic, Bootstrap("kip-1023", None, why=(
            "the earliest-pending-upload offset is unknown (nothing is tiered and the local "
            "log does not start at the log start): the follower waits and retries"))
    records, size = replicated.get(pending, (0, 0))
    why = (f"fetches from the earliest-pending-upload offset {pending} = max(last tiered "
           f"offset + 1, log start {log_start}, local log start {local_log_start}) after "
           "rebuilding its epoch cache and producer state from remote storage")
    return classic, Bootstrap("kip-1023", pending, rebuilt(pending), records, size, why)
