"""What retention reads of a metadata log's batch headers: each segment's extent and the
log between consecutive live snapshots.

One home for that reading, driven batch by batch by whichever pass reads the log:
``kmeta retention``'s own (:func:`kmeta.ops.retention._read_log`) or verify's, when
``kmeta report`` asks verify's pass to tally for retention instead of reading the log
again.  Pure: numbers in, numbers out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class SegmentExtent:
    """A segment as the tally saw it: its last offset and newest batch timestamp (None
    where it held no batch)."""

    base_offset: int
    path: Path
    size: int
    last_offset: int | None
    max_timestamp: int | None


@dataclass
class LogTally:
    """Batches in offset order, segment by segment: :meth:`segment`, then :meth:`batch`
    (or :meth:`run` for batches that repeat one another), then :meth:`finish`.

    ``ends``: the end offsets of the live snapshots.  For each, the bytes and records of
    the batches from the previous end (or the first batch read) up to it
    (``between``), and the first base offset read of that stretch (``covered``)."""

    ends: list[int]
    segments: list[SegmentExtent] = field(default_factory=list)
    between: dict[int, list[int]] = field(default_factory=dict)
    covered: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.ends = sorted(set(self.ends))
        self._k = 0
        self.end: int | None = self.ends[0] if self.ends else None
        self._bytes = self._records = 0
        self._open: tuple[int, Path, int] | None = None
        self._last: int | None = None
        self._newest: int | None = None

    def segment(self, base: int, path: Path, size: int) -> None:
        self._close()
        self._open = (base, path, size)

    def batch(self, base: int, last: int, timestamp: int, length: int, count: int) -> None:
        self._last = last
        if self._newest is None or timestamp > self._newest:
            self._newest = timestamp
        end = self.end
        if end is None:
            return
        if base >= end:
            self.between[end] = [self._bytes, self._records]
            self._bytes = self._records = 0
            ends, k = self.ends, self._k
            while k < len(ends) and base >= ends[k]:
                k += 1
            self._k = k
            end = self.end = ends[k] if k < len(ends) else None
            if end is None:
                return
        if end not in self.covered:
            self.covered[end] = base
        self._bytes += length
        self._records += count

    def run(self, first_base: int, count: int, delta: int, length: int, records: int,
            newest: Callable[[], int], timestamps: Callable[[], Sequence[int]]) -> None:
        """``count`` batches back to back from ``first_base``, each of ``delta`` + 1
        offsets, ``length`` bytes and ``records`` records; ``newest``: gives the largest
        of their maxTimestamps, ``timestamps``: each one's (asked for only when the run
        crosses a snapshot end)."""
        last_base = first_base + (count - 1) * (delta + 1)
        end = self.end
        if end is None or last_base < end:
            self._last = last_base + delta
            top = newest()
            if self._newest is None or top > self._newest:
                self._newest = top
            if end is not None:  # a run follows the batch it repeats: covered already
                self._bytes += count * length
                self._records += count * records
            return
        stamps = timestamps()
        for i in range(count):
            base = first_base + i * (delta + 1)
            self.batch(base, base + delta, stamps[i], length, records)

    def finish(self) -> LogTally:
        self._close()
        if self.end is not None:
            self.between[self.end] = [self._bytes, self._records]
            self.end = None
        return self

    def _close(self) -> None:
        if self._open is not None:
            base, path, size = self._open
            self.segments.append(SegmentExtent(base, path, size, self._last, self._newest))
        self._open = None
        self._last = self._newest = None
