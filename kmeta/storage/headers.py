"""Batch headers read by position, without mapping the file; whole batches read by
position; and a sample of a segment's headers.

For checks that ask only where batches start and which offsets they hold (an index
entry's target, the log's first offset): mapping a segment again for them would leave
every page they touch resident, and reading whole batches again doubled their cost.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kmeta.errors import KmetaError
from kmeta.formats.batch import (
    BASE_OFFSET,
    BASE_TIMESTAMP,
    BATCH_HEADER,
    BATCH_LENGTH,
    HEADER,
    HEADER_SIZE,
    LEADER_EPOCH,
    LOG_OVERHEAD,
    MAX_TIMESTAMP,
)
from kmeta.formats.primitives import derive_struct
from kmeta.formats.runs import walk
from kmeta.storage.regular import open_regular
from kmeta.storage.segments import MAX_BATCH, RELEASE_EVERY, mapped, read_batches

#: Bytes read at a time around the positions asked for: an offset index names a batch
#: every 4 KiB (index.interval.bytes), so one read serves about 64 of them.
_WINDOW = 256 << 10


#: The four header fields a span needs, unpacked at once (the others skipped).
_SPAN = derive_struct(BATCH_HEADER, ("baseOffset", "batchLength", "magic", "lastOffsetDelta"))
_SHORTEST = HEADER_SIZE - LOG_OVERHEAD


def batch_spans(path: str | Path, positions: Iterable[int]
                ) -> Iterator[tuple[int, int] | None]:
    """For each of ``positions``, (base offset, last offset) of the v2 batch whose header
    starts there, or None when no plausible batch header is there.  The header only: its
    CRC is not checked.  Raises UnreadableInput when the file cannot be opened."""
    fd = open_regular(path)
    unpack = _SPAN.unpack_from
    try:
        size = os.fstat(fd).st_size
        window, start, end = b"", 0, -1
        for position in positions:
            # A position is any int32 an index holds: pread refuses a negative one.
            if not 0 <= position <= size - HEADER_SIZE:
                yield None
                continue
            if not start <= position <= end:
                start = position
                window = os.pread(fd, _WINDOW, position)
                end = start + len(window) - HEADER_SIZE  # the last header start it holds
                if end < start:
                    yield None
                    continue
            base, length, magic, delta = unpack(window, position - start)
            if magic != 2 or length < _SHORTEST or length > MAX_BATCH or delta < 0:
                yield None
            else:
                yield base, base + delta
    finally:
        os.close(fd)


def first_base_offset(path: str | Path) -> int | None:
    """The base offset in the first batch header of a file, or None when the file is
    shorter than a header.  Raises UnreadableInput when the file cannot be opened."""
    fd = open_regular(path)
    try:
        head = os.pread(fd, HEADER_SIZE, 0)
    finally:
        os.close(fd)
    return HEADER.unpack_from(head)[BASE_OFFSET] if len(head) == HEADER_SIZE else None


def next_offset_from(path: str | Path, position: int = 0) -> tuple[int | None, int]:
    """Walk the batch headers of a segment from ``position`` (a batch start, such as an
    offset index entry names) to the end of the file: the offset after the last whole
    batch (None when none starts there) and the byte where the walk stopped.  Headers
    only, no CRC: this is how Kafka finds an unrecovered segment's next offset on load
    (``LogSegment.readNextOffset``: the last index entry, then the batches after it).
    Raises UnreadableInput when the file cannot be opened."""
    fd = open_regular(path)
    unpack = _SPAN.unpack_from
    following: int | None = None
    try:
        size = os.fstat(fd).st_size
        while position <= size - HEADER_SIZE:
            head = os.pread(fd, HEADER_SIZE, position)
            if len(head) < HEADER_SIZE:
                break
            base, length, magic, delta = unpack(head, 0)
            end = position + LOG_OVERHEAD + length
            if magic != 2 or length < _SHORTEST or delta < 0 or end > size:
                break
            following = base + delta + 1
            position = end
    finally:
        os.close(fd)
    return following, position


#: FileLogInputStream's numbers (apache/kafka clients/.../record/FileLogInputStream.java,
#: the same since 0.11): the bytes it reads before the magic byte, and the least size
#: field it takes (LegacyRecord.RECORD_OVERHEAD_V0).
HEADER_UP_TO_MAGIC = 17
LEAST_SIZE_FIELD = 14
_STREAM_WINDOW = 64 << 10


def stream_fault(path: str | Path, start: int, end: int) -> tuple[int, int] | None:
    """Walk a segment's batches from byte ``start`` as Kafka's ``FileLogInputStream``
    walks a ``FileRecords`` ending at ``end`` (no CRC, no other check): it ends quietly
    where fewer than 18 bytes are left or a batch runs past ``end``, and throws
    ``CorruptRecordException`` at a size field below 14 (a zero-filled region of 18 bytes
    or more, a garbage header).  Returns (position, size field) of that header, else
    None.  Raises UnreadableInput when the file cannot be opened."""
    fd = open_regular(path)
    try:
        end = min(end, os.fstat(fd).st_size)
        pos = start
        window, at = b"", 0  # bytes read around the cursor: one read serves many headers
        while pos < end - HEADER_UP_TO_MAGIC:
            if not at <= pos <= at + len(window) - LOG_OVERHEAD:
                window, at = os.pread(fd, min(_STREAM_WINDOW, end - pos), pos), pos
                if len(window) < LOG_OVERHEAD:
                    break  # the file shrank under the walk
            size = int.from_bytes(window[pos - at + 8:pos - at + 12], "big", signed=True)
            if size < LEAST_SIZE_FIELD:
                return pos, size
            if pos > end - LOG_OVERHEAD - size:
                break
            pos += LOG_OVERHEAD + size
    finally:
        os.close(fd)
    return None


def read_at(path: str | Path, position: int, size: int) -> bytes:
    """``size`` bytes of the file at ``path`` from byte ``position`` (fewer where it ends
    sooner: it shrank since it was read).  Raises UnreadableInput when it cannot be
    opened."""
    fd = open_regular(path)
    try:
        return os.pread(fd, size, position)
    finally:
        os.close(fd)


class BatchesByPosition:
    """Whole batches read by where they start, in files held open until the block ends:
    for a reader that knows its batches' positions from an index of its own (the shell's
    records of a range) and would otherwise map whole segments for a few of them."""

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}

    def batch(self, path: str, position: int) -> bytes:
        """The bytes of the batch whose header starts at ``position`` of ``path``, as long
        as its length field says (fewer where the file ends sooner); b"" when no header
        is there.  Raises UnreadableInput when the file cannot be opened."""
        fd = self._fds.get(path)
        if fd is None:
            fd = self._fds[path] = open_regular(path)
        head = os.pread(fd, LOG_OVERHEAD, position)
        if len(head) < LOG_OVERHEAD:
            return b""
        length = int.from_bytes(head[8:12], "big", signed=True)
        if not 0 <= length <= MAX_BATCH:
            return b""
        return os.pread(fd, LOG_OVERHEAD + length, position)

    def __enter__(self) -> BatchesByPosition:
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds = {}


def sampled_headers(path: str | Path, samples: int, least_step: int
                    ) -> Iterator[tuple[int, int, int, int]]:
    """(base offset, leader epoch, base timestamp, max timestamp) of some batches of a
    segment, in file order: one every 1/``samples`` of the file (``least_step`` bytes
    apart at least: below it, sampling costs more than reading), every
    batch of a stretch where the leader epoch changes (so each epoch's first batch is
    there) and every batch of the last stretch (so is the newest).

    For a reader that has read every batch already (``kmeta report``'s pictures, after
    verify's pass): this second look skips over intact
    batches with the scan's compiled walk (header and CRC, nothing built) and unpacks
    only the headers it keeps (``HEADER``, derived from the batch declaration).  From the
    first batch the walk will not take (damage, a legacy message set, a zero-filled
    tail) on, :func:`read_batches` reads every batch, as a scan does."""
    stop = 0
    try:
        with mapped(path) as buf:
            window = _Window(buf)
            n, pos, next_offset, unpack = len(buf), 0, 0, HEADER.unpack_from
            step = max(n // samples, least_step)
            while n - pos >= HEADER_SIZE:
                window.need(pos, pos + HEADER_SIZE)
                f = unpack(buf, pos)
                window.need(pos, min(n, pos + LOG_OVERHEAD + max(f[BATCH_LENGTH], 0)))
                window.need(pos, min(n, pos + step + HEADER_SIZE))
                reached, walked, next_offset, top, _ = walk(
                    buf, pos, window.loaded, pos + step, next_offset, f[LEADER_EPOCH])
                if not walked:
                    break
                yield f[BASE_OFFSET], f[LEADER_EPOCH], f[BASE_TIMESTAMP], f[MAX_TIMESTAMP]
                if n - reached >= HEADER_SIZE:
                    window.need(pos, reached + HEADER_SIZE)
                # the walk stopped short: the end, or what it will not take, follows
                last = reached < pos + step or n - reached < HEADER_SIZE
                if last or top != f[LEADER_EPOCH] \
                        or unpack(buf, reached)[LEADER_EPOCH] != f[LEADER_EPOCH]:
                    # an epoch begins in this stretch, or it is the last intact one
                    at = pos + LOG_OVERHEAD + f[BATCH_LENGTH]
                    while at < reached:
                        g = unpack(buf, at)
                        yield (g[BASE_OFFSET], g[LEADER_EPOCH], g[BASE_TIMESTAMP],
                               g[MAX_TIMESTAMP])
                        at += LOG_OVERHEAD + g[BATCH_LENGTH]
                pos = reached
            if pos >= n:
                return
            stop = pos
    except (KmetaError, OSError):
        pass  # read_batches says what is wrong with the file (or skips it)
    for b in read_batches(path, []):
        if getattr(b, "position", 0) < stop:
            continue
        ts = getattr(b, "base_timestamp", None)  # legacy messages have none
        yield (b.base_offset, getattr(b, "leader_epoch", -1), -1 if ts is None else ts,
               getattr(b, "max_timestamp", -1))


class _Window:
    """The bytes of a mapped segment that are there to read: a :class:`SegmentMap` holds
    only what was loaded into it (zeros elsewhere), so bytes are loaded ahead of the
    reader, and given back behind it every ``RELEASE_EVERY`` bytes (a long segment does
    not stay resident); a plain file map holds them all."""

    def __init__(self, buf: Any) -> None:
        self.buf = buf
        self._load = getattr(buf, "load", None)
        self.loaded = 0 if self._load is not None else len(buf)
        self._released = 0

    def need(self, cursor: int, stop: int) -> None:
        """Bytes up to ``stop`` loaded; those before ``cursor`` may go."""
        if self._load is None or stop <= self.loaded:
            return
        self.loaded = self._load(self.loaded, min(len(self.buf), max(stop, self.loaded
                                                                      + (4 << 20))))
        behind = (cursor - self._released) // mmap.PAGESIZE * mmap.PAGESIZE
        if behind >= RELEASE_EVERY:
            self.buf.madvise(mmap.MADV_DONTNEED, self._released, behind)
            self._released += behind
