"""The leader-epoch cache of one replica, as a pure value.

Facts from Kafka's ``storage/.../internals/epoch/LeaderEpochFileCache.java``:

* an entry is ``(epoch, start_offset)``: the first offset written in that epoch;
* ``assign`` refuses negative epochs or offsets (``IllegalArgumentException``), is a
  no-op when the latest entry already has that epoch and a start offset no larger
  than the new one, and otherwise first removes, from the end, every entry whose
  epoch is >= the new epoch or whose start offset is >= the new start offset;
* ``truncateFromStart(o)`` removes every entry with ``start_offset <= o`` and puts the
  last removed one back with its start offset moved to ``o``;
* ``truncateFromEnd(o)`` (only when ``o >= 0`` and the latest entry starts at or after
  ``o``) removes every entry with ``start_offset >= o``;
* ``endOffsetFor`` answers OffsetsForLeaderEpoch (see :meth:`EpochCache.end_offset_for`);
* ``epochForOffset`` returns the epoch of the entry starting at or before the offset.

:class:`EpochCache` is immutable: every operation returns a new cache.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "UNDEFINED_EPOCH",
    "UNDEFINED_EPOCH_OFFSET",
    "EpochCache",
    "EpochCacheError",
    "EpochEntry",
    "EpochEndOffset",
]

#: Kafka's ``RecordBatch.NO_PARTITION_LEADER_EPOCH`` / ``UNDEFINED_EPOCH``.
UNDEFINED_EPOCH = -1
#: Kafka's ``UNDEFINED_EPOCH_OFFSET``.
UNDEFINED_EPOCH_OFFSET = -1


class EpochCacheError(ValueError):
    """Illegal input to the epoch cache (Kafka throws IllegalArgumentException)."""


@dataclass(frozen=True, order=True)
class EpochEntry:
    epoch: int
    start_offset: int

    def __str__(self) -> str:
        return f"{self.epoch}@{self.start_offset}"


@dataclass(frozen=True)
class EpochEndOffset:
    """Answer of OffsetsForLeaderEpoch: ``(epoch, end_offset)``; both -1 when undefined."""

    epoch: int
    end_offset: int

    @property
    def undefined(self) -> bool:
        return self.end_offset == UNDEFINED_EPOCH_OFFSET


@dataclass(frozen=True)
class EpochCache:
    """Entries sorted by epoch (and, as Kafka keeps them, by start offset)."""

    entries: tuple[EpochEntry, ...] = ()

    @classmethod
    def from_entries(cls, entries: Iterable[tuple[int, int] | EpochEntry]) -> EpochCache:
        """Build a cache the way Kafka loads a checkpoint file: assign each entry in turn."""
        cache = cls()
        for e in entries:
            epoch, start = (e.epoch, e.start_offset) if isinstance(e, EpochEntry) else e
            cache = cache.assign(epoch, start)
        return cache

    # -- queries -------------------------------------------------------------
    @property
    def latest_entry(self) -> EpochEntry | None:
        return self.entries[-1] if self.entries else None

    @property
    def earliest_entry(self) -> EpochEntry | None:
        return self.entries[0] if self.entries else None

    @property
    def latest_epoch(self) -> int | None:
        return self.entries[-1].epoch if self.entries else None

    def entry(self, epoch: int) -> EpochEntry | None:
        for e in self.entries:
            if e.epoch == epoch:
                return e
        return None

    def __len__(self) -> int:
        return len(self.entries)

    def __str__(self) -> str:
        return " ".join(str(e) for e in self.entries) if self.entries else "(empty)"

    def _is_update_needed(self, entry: EpochEntry) -> bool:
        latest = self.latest_entry
        if latest is None:
            return True
        return entry.epoch != latest.epoch or entry.start_offset < latest.start_offset

    # -- operations ----------------------------------------------------------
    def assign(self, epoch: int, start_offset: int) -> EpochCache:
        """Record that ``epoch`` starts at ``start_offset`` (Kafka's ``assign``).

        Raises :class:`EpochCacheError` for a negative epoch or offset. Returns ``self``
        when Kafka would not update. Otherwise removes conflicting entries from the end
        (epoch >= new epoch or start offset >= new start offset) and appends.
        """
        if epoch < 0 or start_offset < 0:
            raise EpochCacheError(
                f"invalid leader epoch entry epoch={epoch} start_offset={start_offset}"
            )
        new = EpochEntry(epoch, start_offset)
        if not self._is_update_needed(new):
            return self
        kept = list(self.entries)
        while kept and (kept[-1].epoch >= epoch or kept[-1].start_offset >= start_offset):
            kept.pop()
        kept.append(new)
        return EpochCache(tuple(kept))

    def truncate_from_start(self, start_offset: int) -> EpochCache:
        """Drop entries with ``start_offset <= start_offset``; the last dropped one comes
        back starting at ``start_offset`` (Kafka's ``truncateFromStart``)."""
        removed = 0
        while removed < len(self.entries) and self.entries[removed].start_offset <= start_offset:
            removed += 1
        if removed == 0:
            return self
        moved = EpochEntry(self.entries[removed - 1].epoch, start_offset)
        return EpochCache((moved, *self.entries[removed:]))

    def truncate_from_end(self, end_offset: int) -> EpochCache:
        """Drop entries with ``start_offset >= end_offset`` (Kafka's ``truncateFromEnd``;
        a negative ``end_offset`` changes nothing)."""
        latest = self.latest_entry
        if end_offset < 0 or latest is None or latest.start_offset < end_offset:
            return self
        kept = [e for e in self.entries if e.start_offset < end_offset]
        return EpochCache(tuple(kept))

    def clear(self) -> EpochCache:
        return EpochCache()

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> EpochEndOffset:
        """Kafka's ``endOffsetFor`` (OffsetsForLeaderEpoch).

        * requested == UNDEFINED_EPOCH (-1): ``(-1, -1)``;
        * requested == latest epoch: ``(requested, log_end_offset)``;
        * requested higher than every epoch (or cache empty): ``(-1, -1)``;
        * requested lower than every epoch: ``(requested, start of the first entry)``;
        * otherwise: ``(largest epoch <= requested, start of the first larger epoch)``.
        """
        if requested_epoch == UNDEFINED_EPOCH:
            return EpochEndOffset(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
        latest = self.latest_epoch
        if latest is not None and latest == requested_epoch:
            return EpochEndOffset(requested_epoch, log_end_offset)
        higher = next((e for e in self.entries if e.epoch > requested_epoch), None)
        if higher is None:
            return EpochEndOffset(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
        floor = None
        for e in self.entries:
            if e.epoch <= requested_epoch:
                floor = e
        if floor is None:
            return EpochEndOffset(requested_epoch, higher.start_offset)
        return EpochEndOffset(floor.epoch, higher.start_offset)

    def epoch_for_offset(self, offset: int) -> int | None:
        """Kafka's ``epochForOffset``: epoch of the last entry starting at or before
        ``offset``; ``None`` when the offset precedes every entry."""
        previous = None
        for e in self.entries:
            if e.start_offset == offset:
                return e.epoch
            if e.start_offset > offset:
                return previous
            previous = e.epoch
        return previous
