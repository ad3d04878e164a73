"""The producer state through a partition's load, with the producer snapshots on disk as
the load changes them (apache/kafka trunk 2024-10, ``UnifiedLog.rebuildProducerState``
and ``ProducerStateManager``; the same steps in 3.5 to 3.9, Scala):

* ``LogLoader.recoverSegment`` builds a fresh ``ProducerStateManager`` (it lists the
  ``.snapshot`` files on disk now) and rebuilds the state up to the segment's base
  before it recovers the segment; then it writes a snapshot where the recovered batches
  end.  The load ends with one more rebuild, to the log end.
* a rebuild (``truncateAndReload``) deletes the snapshots past its end or at or below the
  log start, loads the newest one left (``loadFromSnapshot``: a snapshot
  ``readSnapshot`` rejects -- empty, truncated, an unknown version, a CRC that does not
  match -- is deleted and the next older tried; none left: the log start), then reads
  every segment from there up to its end (``segment.read``, then the batches one by one
  through ``FileLogInputStream``: headers only, no CRC) and writes a snapshot at its
  end.  A size field below 14 there throws ``CorruptRecordException``, which no caller
  catches (only ``LogSegment.recover`` catches it, for its own segment): the broker does
  not start.  An I/O error reading a snapshot is an IOException: the log dir goes offline.
* after a clean shutdown with no snapshot at all, or for a message format before v2
  (3.5 to 3.9), the rebuild reads nothing (empty snapshots are written).
* before the last rebuild, ``removeStraySnapshots`` deletes the snapshots not at a
  segment base, except the newest when it is past the last base.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kmeta.errors import FormatError, KmetaError
from kmeta.findings import Finding
from kmeta.formats.indexes import OFFSET_INDEX_STRUCT
from kmeta.formats.producer_state import parse_producer_snapshot
from kmeta.ops.startup.model import FileFate, PartitionStartup
from kmeta.storage.headers import stream_fault
from kmeta.storage.regular import read_regular

_SNAPSHOT_MOST = 1 << 31  # Files.readAllBytes: a Java array holds no more


def snapshot_rejected(data: bytes) -> str | None:
    """Why ProducerStateManager.readSnapshot throws CorruptSnapshotException on ``data``
    (the schema does not read, a version it does not know, a CRC that does not match),
    else None."""
    try:
        snap = parse_producer_snapshot(data)
    except FormatError as e:
        return e.message.removeprefix("producer snapshot: ")
    if not snap.crc_valid:
        return f"its CRC ({snap.stored_crc:#010x}) does not match ({snap.computed_crc:#010x})"
    return None


@dataclass
class RebuildRead:
    """One rebuild of the producer state: what it reads, before what."""

    #: "before recovering <segment>" or "to the log end"
    when: str
    upto: int
    #: the offset it reads from: a snapshot's, else the log start
    start: int
    from_snapshot: bool
    segments: int = 0
    bytes: int = 0


def _index_position(seg: Any, offset: int) -> int:
    """OffsetIndex.lookup(offset): the position of the last entry at or below ``offset``
    (0 without one); where ``segment.read`` starts to search for it."""
    p = seg.indexes.get("offset-index")
    if not p:
        return 0
    try:
        data = read_regular(p, 64 << 20, "offset index")
    except KmetaError:  # not the reader's concern: the walk starts at the segment's start
        return 0
    size = OFFSET_INDEX_STRUCT.size
    found = 0
    for i in range(0, len(data) - len(data) % size, size):
        rel, pos = OFFSET_INDEX_STRUCT.unpack_from(data, i)
        if (i and not rel and not pos) or seg.base + rel > offset:
            break
        if 0 <= pos < seg.size:
            found = pos
    return found


class ProducerRebuild:
    """The snapshots on disk through the load, and each rebuild's read."""

    def __init__(self, path: Path, snapshots: dict[int, str], part: PartitionStartup,
                 legacy_format: bool, read: Mapping[str, bytes] | None = None) -> None:
        self.path = path
        #: file name -> the bytes of a snapshot the caller read just now
        self.read = read or {}
        #: offset -> file name, the .snapshot files on disk now
        self.files = dict(snapshots)
        self.original = set(snapshots)
        self.part = part
        self.legacy = legacy_format
        self.reads: list[RebuildRead] = []
        #: file name -> (offset, why) of the snapshots on disk the load deletes
        self.gone: dict[str, tuple[int, str]] = {}
        #: the names of the snapshots readSnapshot rejects
        self.corrupt: set[str] = set()
        #: whether the last rebuild took the shortcut (nothing read)
        self.shortcut = False

    def _delete(self, offset: int, why: str) -> None:
        name = self.files.pop(offset)
        if offset in self.original:
            self.original.discard(offset)
            self.gone.setdefault(name, (offset, why))

    def finish(self) -> None:
        """The snapshot files the load deletes and does not write again (and every corrupt
        one), in leftovers."""
        for name, (offset, why) in sorted(self.gone.items()):
            if offset not in self.files or name in self.corrupt:
                self.part.leftovers.append(FileFate(name, "deleted", why))

    def _rejected(self, offset: int) -> str | None:
        name = self.files[offset]
        if offset not in self.original:
            return None  # written by this load
        # an I/O error here is an IOException: the caller takes the log dir offline
        data = self.read.get(name)
        if data is None:
            data = read_regular(self.path / name, _SNAPSHOT_MOST, name)
        return snapshot_rejected(data)

    def remove_strays(self, bases: list[int]) -> None:
        """ProducerStateManager.removeStraySnapshots(segment base offsets)."""
        known = set(bases)
        stray = [o for o in sorted(self.files) if o not in known]
        keep = stray[-1] if stray and bases and stray[-1] >= max(bases) else None
        if stray and not bases:
            keep = stray[-1]
        for o in stray:
            if o != keep:
                self._delete(o, "a producer snapshot not at a segment base (stray)")

    def clear(self) -> None:
        """truncateFullyAndStartAt: every segment deleted, every snapshot with them."""
        for o in sorted(self.files):
            self._delete(o, "every segment is deleted: the producer state starts empty")

    def drop_from(self, bases: list[int]) -> None:
        """Segments recovery deletes take their snapshots (deleteProducerSnapshotsAsync)."""
        for b in bases:
            if b in self.files:
                self._delete(b, "the snapshot of a segment recovery deletes")

    def rebuild(self, segs: Sequence[Any], log_start: int, upto: int, when: str, *,
                clean: bool = False, checked: frozenset[str] = frozenset()) -> str | None:
        """One rebuildProducerState to ``upto`` over ``segs`` (those with a base below it
        are read), from the log start ``log_start``; ``clean``: the last rebuild after a
        clean shutdown; ``checked``: segments recovery read already (their batches are
        whole).  Returns why it throws (the load fails), else None."""
        self.shortcut = self.legacy or (clean and not self.files)
        if self.shortcut:
            for o in {s.base for s in segs[-2:]} | {upto}:
                self.files.setdefault(o, f"{o:020d}.snapshot")
            return None
        for o in sorted(self.files):  # truncateAndReload
            if o > upto:
                self._delete(o, f"a producer snapshot past offset {upto}, where the "
                                f"producer state is rebuilt {when}")
            elif o <= log_start:
                self._delete(o, f"a producer snapshot at or below the log start {log_start}")
        start, from_snapshot = log_start, False
        if upto != 0:  # a new manager's map ends at 0: loadFromSnapshot runs unless upto is
            for o in sorted(self.files, reverse=True):
                why = self._rejected(o)
                if why is None:
                    start, from_snapshot = o, True
                    break
                self._corrupt(o, why)
        read = RebuildRead(when, upto, start, from_snapshot)
        self.reads.append(read)
        if upto > start:
            bases = [s.base for s in segs]
            first = max(0, bisect.bisect_right(bases, start) - 1)
            for s in segs[first:]:
                if s.base >= upto:
                    break
                at = max(s.base, start, log_start)
                pos = 0 if at == s.base or s.name in checked else _index_position(s, at)
                read.segments += 1
                read.bytes += max(0, s.size - pos)
                if s.name in checked:
                    continue
                fault = stream_fault(s.log, s.start + pos, s.start + s.size)
                if fault is not None:
                    where, size = fault
                    return (f"rebuilding the producer state {when} reads {s.name} from "
                            f"offset {at} and meets a batch size field of {size} at byte "
                            f"{where - s.start} (CorruptRecordException \"Found record "
                            "size smaller than minimum record overhead (14)\": only "
                            "LogSegment.recover catches it, for its own segment)")
        if upto > start:  # takeSnapshot writes only past the snapshot it loaded
            self.files.setdefault(upto, f"{upto:020d}.snapshot")
        return None

    def _corrupt(self, offset: int, why: str) -> None:
        name = self.files[offset]
        self.corrupt.add(name)
        self._delete(offset, f"corrupt: {why}; Kafka reads the log instead")
        self.part.findings.append(Finding(
            "V211", f"producer snapshot {name} is corrupt ({why}): Kafka deletes it and "
            "rebuilds the producer state from an older snapshot or the log start",
            os.path.join(self.path, name)))

    def recovered(self, end: int) -> None:
        """recoverSegment's snapshot once the segment is recovered, where it ends."""
        self.files.setdefault(end, f"{end:020d}.snapshot")
