"""Batch headers read by position, without mapping the file.

For checks that ask only where batches start and which offsets they hold (an index
entry's target, the log's first offset): mapping a segment again for them would leave
every page they touch resident, and reading whole batches again doubled their cost.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from kmeta.formats.batch import (
    BASE_OFFSET,
    BATCH_LENGTH,
    HEADER,
    HEADER_SIZE,
    LAST_OFFSET_DELTA,
    LOG_OVERHEAD,
    MAGIC,
)
from kmeta.storage.regular import open_regular
from kmeta.storage.segments import MAX_BATCH

#: Bytes read at a time around the positions asked for: an offset index names a batch
#: every 4 KiB (index.interval.bytes), so one read serves about 64 of them.
_WINDOW = 256 << 10


def batch_spans(path: str | Path, positions: Iterable[int]
                ) -> Iterator[tuple[int, int] | None]:
    """For each of ``positions``, (base offset, last offset) of the v2 batch whose header
    starts there, or None when no plausible batch header is there.  The header only: its
    CRC is not checked.  Raises UnreadableInput when the file cannot be opened."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        window, start = b"", 0
        for position in positions:
            # A position is any int32 an index holds: pread refuses a negative one.
            if not 0 <= position <= size - HEADER_SIZE:
                yield None
                continue
            if not start <= position <= start + len(window) - HEADER_SIZE:
                start = position
                window = os.pread(fd, _WINDOW, position)
            yield _span(window, position - start)
    finally:
        os.close(fd)


def _span(window: bytes, at: int) -> tuple[int, int] | None:
    if len(window) - at < HEADER_SIZE:
        return None
    fields = HEADER.unpack_from(window, at)
    length, delta = fields[BATCH_LENGTH], fields[LAST_OFFSET_DELTA]
    if fields[MAGIC] != 2 or length < HEADER_SIZE - LOG_OVERHEAD or length > MAX_BATCH \
            or delta < 0:
        return None
    return fields[BASE_OFFSET], fields[BASE_OFFSET] + delta


def first_base_offset(path: str | Path) -> int | None:
    """The base offset in the first batch header of a file, or None when the file is
    shorter than a header.  Raises UnreadableInput when the file cannot be opened."""
    fd = open_regular(path)
    try:
        head = os.pread(fd, HEADER_SIZE, 0)
    finally:
        os.close(fd)
    return HEADER.unpack_from(head)[BASE_OFFSET] if len(head) == HEADER_SIZE else None
