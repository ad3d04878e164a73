"""A segment's ends without decoding it: its first batch header, and its last batch found
from the offset index's last entry and a walk of the headers after it.

``kmeta info`` on a broker of thousands of partitions wants each segment's offsets, bytes
and times, not its records: decoding every batch of 40,000 segments took a minute and a
half.  What this reads is exactly what a full decode would say of those facts (the first
batch's base offset and newest time, the last batch's last offset and newest time), or
nothing: a header that is not a plausible v2 batch, a chain of headers that does not end
at the file's end (a torn tail, garbage, preallocated zeros), an index entry that does not
name a batch holding its offset — each makes ``segment_ends`` answer None, and the caller
decodes the segment, which reports what it meets.
"""

from __future__ import annotations

import os
from stat import S_ISREG
from typing import NamedTuple

from kmeta.errors import KmetaError
from kmeta.formats.batch import (
    BASE_OFFSET,
    BATCH_LENGTH,
    HEADER,
    HEADER_SIZE,
    LAST_OFFSET_DELTA,
    LOG_OVERHEAD,
    MAGIC,
    MAX_TIMESTAMP,
)
from kmeta.storage.segments import MAX_BATCH

#: Bytes read at a time while walking headers: Kafka writes an index entry every 4 KiB
#: (index.interval.bytes), so one read usually holds every header after the last entry;
#: a segment no larger is walked whole from one read.
_WINDOW = 32 << 10
#: The tail of the offset index read for its last entry (512 entries of 8 bytes).
_INDEX_TAIL = 4096
_ENTRY = 8
_SHORTEST = HEADER_SIZE - LOG_OVERHEAD
#: Never blocks on a FIFO named like a segment (which is then not read here).
_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class SegmentEnds(NamedTuple):
    """The facts of a segment a full decode gives from its first and last batch."""

    first_offset: int
    first_timestamp: int
    last_offset: int
    last_timestamp: int
    #: Where the walk to the last batch started: 0, or the last offset index entry's
    #: position when that entry named a batch holding its offset.
    walked_from: int


def _header(fd: int, position: int, size: int) -> tuple | None:
    if position > size - HEADER_SIZE:
        return None
    head = os.pread(fd, HEADER_SIZE, position)
    if len(head) < HEADER_SIZE:
        return None
    return _plausible(HEADER.unpack_from(head), position, size)


def _plausible(h: tuple, position: int, size: int) -> tuple | None:
    """The header when it is a v2 batch that ends within the file, else None."""
    length = h[BATCH_LENGTH]
    if (h[MAGIC] != 2 or length < _SHORTEST or length > MAX_BATCH
            or h[LAST_OFFSET_DELTA] < 0 or position + LOG_OVERHEAD + length > size):
        return None
    return h


def _last_index_entry(index: str, base_offset: int) -> tuple[int, int] | None:
    """(offset, position) of the offset index's last entry, or None when it has none or
    cannot be read.  A preallocated index (a broker that did not close it) ends in zeros:
    its last entry is the last slot that is not all zero."""
    try:
        fd = os.open(index, _FLAGS)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        size -= size % _ENTRY
        start = max(0, size - _INDEX_TAIL)
        tail = os.pread(fd, size - start, start)
    except OSError:
        return None
    finally:
        os.close(fd)
    for at in range(len(tail) - _ENTRY, -1, -_ENTRY):
        slot = tail[at:at + _ENTRY]
        if any(slot):
            relative = int.from_bytes(slot[:4], "big", signed=True)
            return base_offset + relative, int.from_bytes(slot[4:], "big", signed=True)
    return None


def segment_ends(path: str, named_base: int) -> tuple[int, SegmentEnds | None] | None:
    """The size of the segment at ``path`` and its first and last batch read from their
    headers; the ends None when the file does not read cleanly that way (the caller
    decodes it).  ``named_base``: the offset in its name, which the offset index's entries
    are relative to.  None when it cannot be opened or is not a regular file (the
    caller's reading says why)."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not S_ISREG(st.st_mode):
            return None
        size = st.st_size
        return size, _ends(fd, path, named_base, size) if size else None
    except OSError:
        return None
    finally:
        os.close(fd)


def next_offset_now(path: str, named_base: int) -> int | None:
    """The offset after the last whole batch of the segment at ``path`` as it is now,
    walked from its offset index's last entry (else from its start): a second look at a
    segment a live broker appends to, for what an index written after the first read
    names.  None when the walk finds no batch or the file cannot be read."""
    from kmeta.storage.headers import next_offset_from

    entry = _last_index_entry(path[:-4] + ".index", named_base) \
        if path.endswith(".log") else None
    try:
        if entry is not None and entry[1] > 0:
            following, _ = next_offset_from(path, entry[1])
            if following is not None and following > entry[0]:
                return following
        return next_offset_from(path, 0)[0]
    except KmetaError:
        return None


def newest_segment_now(directory: str | os.PathLike[str]) -> int | None:
    """The base offset of the partition dir's newest segment as it is listed now (a live
    broker may have rolled one since it was first listed); None when it holds none or
    cannot be listed."""
    from kmeta.formats.filenames import classify

    try:
        names = os.listdir(directory)
    except OSError:
        return None
    return max((k.base_offset for k in map(classify, names)
                if k.kind == "segment" and k.live and k.base_offset is not None),
               default=None)


def log_end_now(directory: str | os.PathLike[str]) -> int | None:
    """The log end offset of the partition dir as it is now: its newest segment
    (:func:`newest_segment_now`) walked (:func:`next_offset_now`; an empty one just
    rolled ends at its base).  None when it cannot be told."""
    base = newest_segment_now(directory)
    if base is None:
        return None
    following = next_offset_now(os.path.join(os.fspath(directory), f"{base:020d}.log"), base)
    return base if following is None else following


def _ends(fd: int, path: str, named_base: int, size: int) -> SegmentEnds | None:
    # a segment one read holds is walked whole: opening its index would cost more
    entry = _last_index_entry(path[:-4] + ".index", named_base) \
        if size > _WINDOW and path.endswith(".log") else None
    if entry is not None and entry[1] > 0:
        first = _header(fd, 0, size)
        if first is None:
            return None
        walked = _walk(fd, entry[1], size)
        # an entry is trusted only where it names a batch holding its offset
        if walked is not None and first[BASE_OFFSET] <= walked[0][BASE_OFFSET] \
                <= entry[0] <= walked[0][BASE_OFFSET] + walked[0][LAST_OFFSET_DELTA]:
            return _said(first, walked[1], entry[1])
    walked = _walk(fd, 0, size)
    return None if walked is None else _said(walked[0], walked[1], 0)


def _said(first: tuple, last: tuple, start: int) -> SegmentEnds:
    return SegmentEnds(first[BASE_OFFSET], first[MAX_TIMESTAMP],
                       last[BASE_OFFSET] + last[LAST_OFFSET_DELTA], last[MAX_TIMESTAMP],
                       start)


def _walk(fd: int, position: int, size: int) -> tuple[tuple, tuple] | None:
    """The first and last batch headers of the chain from ``position``, or None when the
    chain does not end exactly at the file's end."""
    window, at = b"", position
    first = last = None
    while position < size:
        if position + HEADER_SIZE > at + len(window):
            at = position
            window = os.pread(fd, _WINDOW, position)
            if len(window) < HEADER_SIZE:
                return None
        h = _plausible(HEADER.unpack_from(window, position - at), position, size)
        if h is None:
            return None
        first = first or h
        last = h
        position += LOG_OVERHEAD + h[BATCH_LENGTH]
    return None if first is None or last is None else (first, last)
