"""One replica's KRaft metadata log as a pure model (no I/O).

Facts (read in apache/kafka, not copied):

* ``core/src/main/scala/kafka/raft/KafkaMetadataLog.scala``: ``endOffsetForEpoch``
  (overrides the answer with the earliest snapshot id when the epoch is older than the
  log), ``lastFetchedEpoch``, ``truncateToLatestSnapshot`` (full truncation when the
  latest snapshot is ahead of the log, then forget older snapshots),
  ``deleteBeforeSnapshot`` (snapshot known, ``LBO < id.offset <= latest.offset``, LBO
  advanced, segments whose successor starts at or before the LBO deleted, snapshots
  ordered before the id renamed ``.checkpoint.deleted``), ``createNewSnapshot``
  (id.offset >= LBO, id valid per ``validateOffsetAndEpoch``), ``recoverSnapshots``
  (partial/deleted/older-than-LBO snapshot files are deleted at start-up; LBO > 0 needs
  a snapshot at or after the LBO).
* ``raft/.../ReplicatedLog.java`` ``validateOffsetAndEpoch`` and
  ``raft/.../ValidOffsetAndEpoch.java`` (VALID / DIVERGING / SNAPSHOT).
* ``raft/.../OffsetAndEpoch.java``: snapshot ids order by epoch, then offset.
* ``core/src/main/scala/kafka/log/UnifiedLog.scala``: ``truncateTo`` (a target at or
  past the LEO only truncates the epoch cache at the LEO; otherwise segments, epoch
  cache from the end, ``LBO = min(target, LBO)``), ``maybeIncrementLogStartOffset``
  (epoch cache truncated from the start), ``deleteLogStartOffsetBreachedSegments``,
  ``truncateFullyAndStartAt`` (epoch cache cleared), ``endOffsetForEpoch`` (an
  undefined answer becomes "none").
* ``raft/src/main/java/org/apache/kafka/snapshot/Snapshots.java``: file names
  ``%020d-%010d.checkpoint`` (+ ``.part`` / ``.deleted``).

Semantics: :class:`ReplicaLog` is mutable. Every operation checks everything first and
only then commits, so an operation that raises :class:`ReplicaLogError` leaves the
state unchanged. Everything it holds is an immutable value.

Deliberate differences from Kafka, because the model has no high watermark:
``truncate_to`` below the latest live snapshot is refused (Kafka refuses truncation
below the high watermark, and snapshots never pass it), and so is a target inside a
batch (Kafka would drop the whole batch; KRaft truncates at batch boundaries).
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kmeta.core.epochs import EpochCache, EpochCacheError, EpochEntry
from kmeta.formats.filenames import SNAPSHOT_EXTENSION, segment_file_name, snapshot_stem

__all__ = [
    "BatchMeta",
    "Observation",
    "OffsetAndEpoch",
    "ReplicaLog",
    "ReplicaLogError",
    "Segment",
    "SnapshotId",
    "SnapshotState",
    "ValidKind",
    "ValidOffsetAndEpoch",
]


class ReplicaLogError(Exception):
    """An operation Kafka would not perform on this log; the state is unchanged."""


@dataclass(frozen=True)
class BatchMeta:
    """What the model needs to know of one record batch."""

    base_offset: int
    last_offset: int
    epoch: int
    size: int = 0
    control: bool = False
    position: int | None = None  # byte position in its segment, if known

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    def __str__(self) -> str:
        return f"{self.base_offset}..{self.last_offset}@{self.epoch}"


@dataclass(frozen=True)
class Segment:
    """A segment: its base offset (from its file name) and its batches."""

    base_offset: int
    batches: tuple[BatchMeta, ...] = ()

    @property
    def file_name(self) -> str:
        return segment_file_name(self.base_offset)

    @property
    def last_offset(self) -> int | None:
        return self.batches[-1].last_offset if self.batches else None

    @property
    def next_offset(self) -> int:
        return self.batches[-1].next_offset if self.batches else self.base_offset

    @property
    def size(self) -> int:
        return sum(b.size for b in self.batches)


@functools.total_ordering
@dataclass(frozen=True)
class OffsetAndEpoch:
    """Raft's OffsetAndEpoch; ordered like Kafka's: epoch first, then offset."""

    offset: int
    epoch: int

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, OffsetAndEpoch):
            return NotImplemented
        return (self.epoch, self.offset) < (other.epoch, other.offset)

    def __str__(self) -> str:
        return f"(offset={self.offset}, epoch={self.epoch})"


@dataclass(frozen=True)
class SnapshotId(OffsetAndEpoch):
    """A snapshot id: ``offset`` is the snapshot's end offset (exclusive)."""

    @property
    def file_stem(self) -> str:
        return snapshot_stem(self.offset, self.epoch)


class SnapshotState(enum.Enum):
    LIVE = "live"  # .checkpoint
    PART = "part"  # .checkpoint.part (being written)
    DELETED = "deleted"  # .checkpoint.deleted (forgotten, waiting for the file delete)

    @property
    def suffix(self) -> str:
        return SNAPSHOT_EXTENSION if self is SnapshotState.LIVE else \
            f"{SNAPSHOT_EXTENSION}.{self.value}"


class ValidKind(enum.Enum):
    VALID = "valid"
    DIVERGING = "diverging"
    SNAPSHOT = "snapshot"


@dataclass(frozen=True)
class ValidOffsetAndEpoch:
    """KIP-595 answer to a fetch at (offset, last fetched epoch)."""

    kind: ValidKind
    offset_and_epoch: OffsetAndEpoch

    def __str__(self) -> str:
        oe = self.offset_and_epoch
        return f"{self.kind.value} offset={oe.offset} epoch={oe.epoch}"


@dataclass(frozen=True)
class Observation:
    """A note from :meth:`ReplicaLog.from_observed` that a verifier can turn into a finding."""

    code: str
    message: str
    offset: int | None = None
    details: dict = field(default_factory=dict, compare=False, hash=False)

    def __str__(self) -> str:
        where = f" @{self.offset}" if self.offset is not None else ""
        return f"{self.code}{where}: {self.message}"


def _as_snapshot_id(s: SnapshotId | OffsetAndEpoch | tuple[int, int]) -> SnapshotId:
    if isinstance(s, SnapshotId):
        return s
    if isinstance(s, OffsetAndEpoch):
        return SnapshotId(s.offset, s.epoch)
    return SnapshotId(int(s[0]), int(s[1]))


def _starts_at_old_lbo(cache: EpochCache, derived: EpochCache, live: list[SnapshotId]) -> bool:
    """Whether ``cache`` is what the batches give once truncated from the start at a live
    snapshot's offset: the LBO moved there (delete-before-snapshot) and Kafka truncated
    the cache from the start, but the segment holding it was kept, so after a restart
    the LBO is back at that segment's base offset while the checkpoint still begins at
    the snapshot."""
    first = cache.earliest_entry
    if first is None or not any(s.offset == first.start_offset for s in live):
        return False
    return derived.truncate_from_start(first.start_offset) == cache


class ReplicaLog:
    """One replica's metadata log. Create with ``ReplicaLog()`` (empty, starts at 0) or
    :meth:`from_observed`."""

    def __init__(self, start_offset: int = 0) -> None:
        if start_offset < 0:
            raise ReplicaLogError(f"negative start offset {start_offset}")
        self._segments: tuple[Segment, ...] = (Segment(start_offset),)
        self._lbo = start_offset
        self._epochs = EpochCache()
        self._snapshots: dict[SnapshotId, SnapshotState] = {}

    # -- state ---------------------------------------------------------------
    def _commit(
        self,
        *,
        segments: tuple[Segment, ...] | None = None,
        lbo: int | None = None,
        epochs: EpochCache | None = None,
        snapshots: dict[SnapshotId, SnapshotState] | None = None,
    ) -> None:
        if segments is not None:
            self._segments = segments
        if lbo is not None:
            self._lbo = lbo
        if epochs is not None:
            self._epochs = epochs
        if snapshots is not None:
            self._snapshots = snapshots

    @property
    def segments(self) -> tuple[Segment, ...]:
        return self._segments

    @property
    def batches(self) -> tuple[BatchMeta, ...]:
        return tuple(b for s in self._segments for b in s.batches)

    @property
    def log_start_offset(self) -> int:
        return self._lbo

    @property
    def log_end_offset(self) -> int:
        return self._segments[-1].next_offset

    @property
    def epoch_cache(self) -> EpochCache:
        return self._epochs

    @property
    def latest_epoch(self) -> int | None:
        return self._epochs.latest_epoch

    @property
    def snapshots(self) -> dict[SnapshotId, SnapshotState]:
        """All known snapshot ids (any state), in Kafka's order."""
        return dict(sorted(self._snapshots.items()))

    def _live(self) -> list[SnapshotId]:
        return sorted(s for s, st in self._snapshots.items() if st is SnapshotState.LIVE)

    @property
    def latest_snapshot(self) -> SnapshotId | None:
        live = self._live()
        return live[-1] if live else None

    @property
    def earliest_snapshot(self) -> SnapshotId | None:
        live = self._live()
        return live[0] if live else None

    def state_lines(self) -> list[str]:
        """A stable text rendering (used by the data-driven tests)."""
        lines = [f"lbo={self._lbo} leo={self.log_end_offset}"]
        for s in self._segments:
            last = "-" if s.last_offset is None else str(s.last_offset)
            batches = " ".join(str(b) for b in s.batches) or "(empty)"
            lines.append(f"segment {s.file_name} last={last} size={s.size}: {batches}")
        lines.append(f"epochs: {self._epochs}")
        snaps = " ".join(f"{s.file_stem}{st.suffix}" for s, st in self.snapshots.items())
        lines.append(f"snapshots: {snaps or '(none)'}")
        return lines

    # -- queries -------------------------------------------------------------
    def epoch_at(self, offset: int) -> int | None:
        """Epoch of the batch holding ``offset``; ``None`` if no batch holds it."""
        for b in self.batches:
            if b.base_offset <= offset <= b.last_offset:
                return b.epoch
        return None

    def last_fetched_epoch(self) -> int:
        """KafkaMetadataLog.lastFetchedEpoch."""
        if self._epochs.latest_epoch is not None:
            return self._epochs.latest_epoch
        snap = self.latest_snapshot
        if snap is None:
            return 0
        if snap.offset == self._lbo == self.log_end_offset:
            return snap.epoch
        raise ReplicaLogError(
            f"log has no epoch and snapshot {snap} does not match the log start offset "
            f"({self._lbo}) and end offset ({self.log_end_offset})"
        )

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        """KafkaMetadataLog.endOffsetForEpoch."""
        answer = self._epochs.end_offset_for(epoch, self.log_end_offset)
        earliest = self.earliest_snapshot
        if not answer.undefined:
            if (
                earliest is not None
                and answer.end_offset == earliest.offset
                and answer.epoch == epoch
            ):
                return OffsetAndEpoch(earliest.offset, earliest.epoch)
            return OffsetAndEpoch(answer.end_offset, answer.epoch)
        return OffsetAndEpoch(self.log_end_offset, self.last_fetched_epoch())

    def validate_offset_and_epoch(self, offset: int, epoch: int) -> ValidOffsetAndEpoch:
        """ReplicatedLog.validateOffsetAndEpoch: what a leader answers a fetch at
        ``offset`` whose last fetched epoch is ``epoch``."""
        if self._lbo == 0 and offset == 0:
            return ValidOffsetAndEpoch(ValidKind.VALID, OffsetAndEpoch(0, 0))
        earliest = self.earliest_snapshot
        if earliest is not None and (
            offset < self._lbo
            or (offset == self._lbo and epoch != earliest.epoch)
            or epoch < earliest.epoch
        ):
            latest = self.latest_snapshot
            assert latest is not None
            return ValidOffsetAndEpoch(
                ValidKind.SNAPSHOT, OffsetAndEpoch(latest.offset, latest.epoch)
            )
        end = self.end_offset_for_epoch(epoch)
        if end.epoch != epoch or end.offset < offset:
            return ValidOffsetAndEpoch(ValidKind.DIVERGING, end)
        return ValidOffsetAndEpoch(ValidKind.VALID, OffsetAndEpoch(offset, epoch))

    # -- operations ----------------------------------------------------------
    def append(self, batch: BatchMeta, *, roll: bool = False) -> None:
        """Append one batch at the log end offset. ``roll`` starts a new segment at the
        batch's base offset first (if the active segment has batches)."""
        leo = self.log_end_offset
        if batch.base_offset != leo:
            raise ReplicaLogError(f"batch {batch} does not start at the log end offset {leo}")
        if batch.last_offset < batch.base_offset:
            raise ReplicaLogError(f"batch {batch} ends before it starts")
        if batch.size < 0:
            raise ReplicaLogError(f"batch {batch} has a negative size")
        latest = self._epochs.latest_epoch
        if latest is not None and batch.epoch < latest:
            raise ReplicaLogError(
                f"batch {batch} has an epoch lower than the latest epoch {latest}"
            )
        try:
            epochs = self._epochs.assign(batch.epoch, batch.base_offset)
        except EpochCacheError as e:
            raise ReplicaLogError(str(e)) from None
        segments = list(self._segments)
        active = segments[-1]
        if roll and active.batches:
            segments.append(Segment(batch.base_offset, (batch,)))
        else:
            segments[-1] = Segment(active.base_offset, (*active.batches, batch))
        self._commit(segments=tuple(segments), epochs=epochs)

    def initialize_leader_epoch(self, epoch: int) -> None:
        """KafkaMetadataLog.initializeLeaderEpoch: assign ``epoch`` at the log end offset."""
        latest = self._epochs.latest_epoch
        if latest is not None and epoch < latest:
            raise ReplicaLogError(f"epoch {epoch} is lower than the latest epoch {latest}")
        try:
            epochs = self._epochs.assign(epoch, self.log_end_offset)
        except EpochCacheError as e:
            raise ReplicaLogError(str(e)) from None
        self._commit(epochs=epochs)

    def truncate_to(self, offset: int, *, split: bool = False) -> bool:
        """Remove every batch at or after ``offset``. Returns True iff ``offset < LEO``.

        ``split``: the model's batches stand for runs of real batches (as a verify pass
        records them), so the one holding ``offset`` is cut there instead of refused."""
        if offset < 0:
            raise ReplicaLogError(f"cannot truncate to a negative offset {offset}")
        leo = self.log_end_offset
        if offset >= leo:
            self._commit(epochs=self._epochs.truncate_from_end(leo))
            return False
        if offset < self._lbo:
            raise ReplicaLogError(
                f"cannot truncate to {offset}, below the log start offset {self._lbo}"
            )
        latest = self.latest_snapshot
        if latest is not None and offset < latest.offset:
            raise ReplicaLogError(
                f"cannot truncate to {offset}, below the latest snapshot {latest} "
                "(Kafka never truncates below the high watermark)"
            )
        segments: list[Segment] = []
        for s in self._segments:
            if s.base_offset > offset and segments:
                break
            kept = []
            for b in s.batches:
                if b.base_offset >= offset:
                    break
                if b.last_offset >= offset:
                    if not split:
                        raise ReplicaLogError(f"offset {offset} is inside batch {b}")
                    kept.append(BatchMeta(b.base_offset, offset - 1, b.epoch, 0, b.control))
                    break
                kept.append(b)
            segments.append(Segment(s.base_offset, tuple(kept)))
        self._commit(
            segments=tuple(segments),
            epochs=self._epochs.truncate_from_end(offset),
            lbo=min(offset, self._lbo),
        )
        return True

    def _forget_before(self, snapshot_id: SnapshotId) -> dict[SnapshotId, SnapshotState]:
        return {
            s: (SnapshotState.DELETED if st is SnapshotState.LIVE and s < snapshot_id else st)
            for s, st in self._snapshots.items()
        }

    def truncate_to_latest_snapshot(self) -> bool:
        """KafkaMetadataLog.truncateToLatestSnapshot: if the latest snapshot is ahead of
        the log (higher epoch, or same epoch and past the LEO) drop the whole log, start
        it at the snapshot's offset and forget older snapshots."""
        latest = self.latest_snapshot
        latest_epoch = self._epochs.latest_epoch if self._epochs.latest_epoch is not None else 0
        if latest is None or not (
            latest.epoch > latest_epoch
            or (latest.epoch == latest_epoch and latest.offset > self.log_end_offset)
        ):
            return False
        self._commit(
            segments=(Segment(latest.offset),),
            lbo=latest.offset,
            epochs=EpochCache(),
            snapshots=self._forget_before(latest),
        )
        return True

    def _delete_before_plan(self, snapshot_id: SnapshotId) -> str | None:
        latest = self.latest_snapshot
        if self._snapshots.get(snapshot_id) is not SnapshotState.LIVE:
            return f"snapshot {snapshot_id} is not a live snapshot"
        if latest is None or snapshot_id.offset > latest.offset:
            return f"snapshot {snapshot_id} is past the latest snapshot"
        if snapshot_id.offset <= self._lbo:
            return f"snapshot {snapshot_id} is not past the log start offset {self._lbo}"
        if snapshot_id.offset > self.log_end_offset:
            return f"snapshot {snapshot_id} is past the log end offset {self.log_end_offset}"
        return None

    def delete_before_snapshot(self, snapshot_id: SnapshotId | tuple[int, int]) -> bool:
        """KafkaMetadataLog.deleteBeforeSnapshot. Returns False (and changes nothing) when
        Kafka would refuse: unknown snapshot, offset not past the LBO, past the latest
        snapshot, or past the log end (a stand-in for Kafka's high-watermark check).
        Otherwise the LBO moves to the snapshot's offset, the epoch cache is truncated
        from the start, segments wholly before the LBO go, and snapshots ordered before
        it become ``DELETED``."""
        sid = _as_snapshot_id(snapshot_id)
        if self._delete_before_plan(sid) is not None:
            return False
        lbo = sid.offset
        segments = list(self._segments)
        while len(segments) > 1 and segments[1].base_offset <= lbo:
            segments.pop(0)
        self._commit(
            segments=tuple(segments),
            lbo=lbo,
            epochs=self._epochs.truncate_from_start(lbo),
            snapshots=self._forget_before(sid),
        )
        return True

    def advance_lbo(self, offset: int) -> None:
        """Move the log start offset to ``offset``; only to the end offset of a live
        snapshot, as :meth:`delete_before_snapshot` would. Raises otherwise."""
        candidates = [s for s in self._live() if s.offset == offset]
        if not candidates:
            raise ReplicaLogError(f"no live snapshot ends at {offset}; the LBO only moves to one")
        sid = candidates[-1]
        reason = self._delete_before_plan(sid)
        if reason is not None:
            raise ReplicaLogError(reason)
        self.delete_before_snapshot(sid)

    def add_snapshot(
        self,
        snapshot_id: SnapshotId | tuple[int, int],
        *,
        checked: bool = True,
        partial: bool = False,
    ) -> None:
        """Add a snapshot. ``checked`` applies createNewSnapshot's rules (offset >= LBO,
        offset <= LEO as the high-watermark stand-in, valid per
        :meth:`validate_offset_and_epoch`); unchecked is createNewSnapshotUnchecked (a
        snapshot fetched from the leader). ``partial`` adds it as ``.checkpoint.part``."""
        sid = _as_snapshot_id(snapshot_id)
        if sid.offset < 0 or sid.epoch < 0:
            raise ReplicaLogError(f"invalid snapshot id {sid}")
        state = self._snapshots.get(sid)
        if state in (SnapshotState.LIVE, SnapshotState.PART):
            raise ReplicaLogError(f"snapshot {sid} already exists ({state.value})")
        if checked:
            if sid.offset < self._lbo:
                raise ReplicaLogError(f"snapshot {sid} is before the log start offset {self._lbo}")
            if sid.offset > self.log_end_offset:
                raise ReplicaLogError(
                    f"snapshot {sid} is past the log end offset {self.log_end_offset}"
                )
            valid = self.validate_offset_and_epoch(sid.offset, sid.epoch)
            if valid.kind is not ValidKind.VALID:
                raise ReplicaLogError(f"snapshot {sid} is not valid according to the log: {valid}")
        snapshots = dict(self._snapshots)
        snapshots[sid] = SnapshotState.PART if partial else SnapshotState.LIVE
        self._commit(snapshots=snapshots)

    def freeze_snapshot(self, snapshot_id: SnapshotId | tuple[int, int]) -> None:
        """A ``.part`` snapshot is complete: it becomes live (onSnapshotFrozen)."""
        sid = _as_snapshot_id(snapshot_id)
        if self._snapshots.get(sid) is not SnapshotState.PART:
            raise ReplicaLogError(f"snapshot {sid} is not partial")
        snapshots = dict(self._snapshots)
        snapshots[sid] = SnapshotState.LIVE
        self._commit(snapshots=snapshots)

    def delete_snapshot(self, snapshot_id: SnapshotId | tuple[int, int]) -> None:
        """Drop a snapshot the way Kafka may: a ``.part`` one is removed outright, a
        live one only if its offset is below the LBO (recoverSnapshots deletes those),
        and a ``.deleted`` one is removed (the delayed file delete). A live snapshot at
        or after the LBO is needed (it covers the LBO or is newer) and is refused."""
        sid = _as_snapshot_id(snapshot_id)
        state = self._snapshots.get(sid)
        if state is None:
            raise ReplicaLogError(f"unknown snapshot {sid}")
        if state is SnapshotState.LIVE and sid.offset >= self._lbo:
            raise ReplicaLogError(
                f"snapshot {sid} is at or after the log start offset {self._lbo}; "
                "Kafka only forgets snapshots through delete-before-snapshot"
            )
        snapshots = dict(self._snapshots)
        del snapshots[sid]
        self._commit(snapshots=snapshots)

    # -- construction from what is on disk -------------------------------------
    @classmethod
    def from_observed(
        cls,
        segments: Sequence[Segment | tuple[int, Sequence[BatchMeta]]],
        *,
        log_start_offset: int | None = None,
        epoch_entries: Iterable[tuple[int, int] | EpochEntry] | None = None,
        snapshots: Iterable[
            SnapshotId | tuple[int, int] | tuple[SnapshotId | tuple[int, int], SnapshotState]
        ] = (),
        quorum_leader_epoch: int | None = None,
    ) -> tuple[ReplicaLog, list[Observation]]:
        """Build the model from what a log dir holds, never rejecting it.

        ``segments``: ``Segment`` or ``(base_offset, batches)`` per segment file in
        offset order. ``log_start_offset``: from the log-start-offset checkpoint (default:
        base offset of the first segment). ``epoch_entries``: the leader-epoch checkpoint
        (``None`` = absent: derived from the batches). ``snapshots``: ids, or
        ``(id, state)`` pairs. Returns the model and notes for a verifier.
        """
        notes: list[Observation] = []
        segs = tuple(s if isinstance(s, Segment) else Segment(s[0], tuple(s[1])) for s in segments)
        if not segs:
            base = log_start_offset or 0
            notes.append(Observation("NO_SEGMENTS", "the log has no segment", base))
            segs = (Segment(base),)

        # The epochs of the batches; the rules each batch keeps (offsets contiguous,
        # epochs never going back) are judged as the batches are read (core.log_rules).
        derived = EpochCache()
        prev: BatchMeta | None = None
        for s in segs:
            for b in s.batches:
                if (prev is None or b.epoch >= prev.epoch) and b.epoch >= 0 \
                        and b.base_offset >= 0:
                    derived = derived.assign(b.epoch, b.base_offset)
                prev = b

        log = cls.__new__(cls)
        first_base = segs[0].base_offset
        lbo = first_base if log_start_offset is None else log_start_offset
        leo = segs[-1].next_offset
        if lbo < first_base:
            notes.append(
                Observation(
                    "LBO_BEFORE_FIRST_SEGMENT",
                    f"log start offset {lbo} is before the first segment {segs[0].file_name}",
                    lbo,
                )
            )
        if lbo > leo:
            notes.append(
                Observation(
                    "LBO_AFTER_LEO",
                    f"log start offset {lbo} is after the log end offset {leo}",
                    lbo,
                )
            )
        derived = derived.truncate_from_start(lbo)

        # snapshots
        snaps: dict[SnapshotId, SnapshotState] = {}
        for item in snapshots:
            if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], SnapshotState):
                sid, state = _as_snapshot_id(item[0]), item[1]
            else:
                sid, state = _as_snapshot_id(item), SnapshotState.LIVE  # type: ignore[arg-type]
            if sid in snaps and snaps[sid] is SnapshotState.LIVE:
                state = SnapshotState.LIVE
            snaps[sid] = state
            if state is SnapshotState.PART:
                notes.append(
                    Observation(
                        "SNAPSHOT_PARTIAL",
                        f"partial snapshot {sid}; Kafka deletes it on start",
                        sid.offset,
                        details={"snapshot": sid},
                    )
                )
            elif state is SnapshotState.DELETED:
                notes.append(
                    Observation(
                        "SNAPSHOT_MARKED_DELETED",
                        f"snapshot {sid} is marked for deletion",
                        sid.offset,
                        details={"snapshot": sid},
                    )
                )
            elif sid.offset < lbo:
                notes.append(
                    Observation(
                        "SNAPSHOT_BEFORE_LBO",
                        f"snapshot {sid} ends before the log start offset {lbo}; Kafka deletes it on start",
                        sid.offset,
                        details={"snapshot": sid},
                    )
                )
        live = sorted(s for s, st in snaps.items() if st is SnapshotState.LIVE)

        # epoch cache: the checkpoint as Kafka loads it, then trimmed to [LBO, LEO)
        if epoch_entries is None:
            notes.append(
                Observation(
                    "EPOCH_CHECKPOINT_MISSING", "no leader-epoch checkpoint; derived from batches"
                )
            )
            epochs = derived
        else:
            raw = [
                e if isinstance(e, EpochEntry) else EpochEntry(int(e[0]), int(e[1]))
                for e in epoch_entries
            ]
            loaded = EpochCache()
            for e in raw:
                try:
                    loaded = loaded.assign(e.epoch, e.start_offset)
                except EpochCacheError as err:
                    notes.append(
                        Observation("EPOCH_CHECKPOINT_INVALID_ENTRY", str(err), e.start_offset)
                    )
            if list(loaded.entries) != raw:
                notes.append(
                    Observation(
                        "EPOCH_CHECKPOINT_NOT_MONOTONIC",
                        f"checkpoint entries {' '.join(map(str, raw))} load as {loaded}",
                    )
                )
            trimmed = loaded.truncate_from_end(leo).truncate_from_start(lbo)
            if loaded.truncate_from_end(leo) != loaded:
                notes.append(
                    Observation(
                        "EPOCH_CHECKPOINT_BEYOND_LEO",
                        f"checkpoint has entries at or after the log end offset {leo}; Kafka drops them on load",
                        leo,
                    )
                )
            if trimmed != derived and not _starts_at_old_lbo(trimmed, derived, live):
                notes.append(
                    Observation(
                        "EPOCH_CHECKPOINT_DISAGREES",
                        f"checkpoint gives {trimmed}, the batches give {derived}",
                        details={"checkpoint": trimmed.entries, "batches": derived.entries},
                    )
                )
            epochs = trimmed

        if lbo > 0 and not any(s.offset >= lbo for s in live):
            notes.append(
                Observation(
                    "NO_SNAPSHOT_FOR_LBO",
                    f"log start offset {lbo} > 0 but no snapshot ends at or after it; Kafka refuses to start",
                    lbo,
                )
            )
        if live and lbo > 0 and not any(s.offset == lbo for s in live):
            notes.append(
                Observation(
                    "NO_SNAPSHOT_AT_LBO",
                    f"no snapshot ends exactly at the log start offset {lbo}",
                    lbo,
                )
            )
        if live:
            latest = live[-1]
            latest_epoch = epochs.latest_epoch if epochs.latest_epoch is not None else 0
            if latest.epoch > latest_epoch or (
                latest.epoch == latest_epoch and latest.offset > leo
            ):
                notes.append(
                    Observation(
                        "SNAPSHOT_AHEAD_OF_LOG",
                        f"latest snapshot {latest} is ahead of the log (end {leo}); Kafka truncates the log fully on start",
                        latest.offset,
                        details={"snapshot": latest},
                    )
                )
        if (
            quorum_leader_epoch is not None
            and epochs.latest_epoch is not None
            and quorum_leader_epoch < epochs.latest_epoch
        ):
            notes.append(
                Observation(
                    "QUORUM_EPOCH_BEHIND_LOG",
                    f"quorum-state epoch {quorum_leader_epoch} is lower than the log's latest epoch {epochs.latest_epoch}",
                )
            )

        log._segments = segs
        log._lbo = lbo
        log._epochs = epochs
        log._snapshots = snaps
        return log, notes
