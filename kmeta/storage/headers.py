"""Batch headers read by position, without mapping the file.

For checks that ask only where batches start and which offsets they hold (an index
entry's target, the log's first offset): mapping a segment again for them would leave
every page they touch resident, and reading whole batches again doubled their cost.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from kmeta.formats.batch import BASE_OFFSET, BATCH_HEADER, HEADER, HEADER_SIZE, LOG_OVERHEAD
from kmeta.formats.primitives import derive_struct
from kmeta.storage.regular import open_regular
from kmeta.storage.segments import MAX_BATCH

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
