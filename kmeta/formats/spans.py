"""Plain spans: the stretches of a metadata log that verify has nothing to say of.

A busy KRaft log is mostly batches of plain records: NoOp heartbeats and partition
changes, each batch right after the one before, in the leader's epoch, uncompressed, every
record at the batch's base timestamp with a null key, a value and no header.  Verify
checks such a batch and finds nothing; all it needs of it is the records to replay.  A
*plain span* is a stretch of them after a batch the scan has read, walked in one call:
its batches and records counted, the values to replay kept (with their offsets and their
batch's position) and the NoOps left out.

:func:`plain_span_py` is the reference; ``kmeta/formats/_runs.c`` has the compiled twin
that :data:`plain_span` is where it is built (``KMETA_PURE_PYTHON`` chooses the
reference).  The tests run both and compare.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from kmeta.formats.batch import (
    CRC_START,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    Batch,
    memo_entry,
    plain_values_py,
)
from kmeta.formats.checksum import crc32c
from kmeta.formats.compiled import CORE

#: What one call keeps at most: the values of a span go to the replay as one piece, and
#: the replay should not wait long for its first.
MOST_VALUES = 2048
#: Batches with a longer records section are read record by record (formats.batch's
#: STREAM_ABOVE): a span never holds one.
MOST_SECTION = 1 << 20


def plain_span_py(buf: Any, pos: int, limit: int, stop: int, next_offset: int, epoch: int,
                  before: int, skip: bytes, most_section: int = MOST_SECTION,
                  most_values: int = MOST_VALUES, tell: bool = False) -> tuple:
    """The plain batches from ``pos`` on: each a v2 batch of leader epoch ``epoch`` at
    base offset ``next_offset`` (then the one after it), attributes 0, lastOffsetDelta
    its record count - 1, maxTimestamp equal to baseTimestamp, a matching CRC-32C and a
    records section of at most ``most_section`` bytes that is exactly its records, all
    plain (:func:`~kmeta.formats.batch.plain_values_py`).  The walk stops before any
    other batch, before one that ends past ``limit`` or whose base offset is ``before``
    or above, once ``pos`` reaches ``stop``, and after the batch that brings the values
    kept to ``most_values``.

    Returns (position reached, batches, records, the offset after them, the values other
    than ``skip`` with their offsets and their batch's position, the newest batch
    timestamp and the last batch's (0 without batches), and with ``tell`` (position, base
    offset, last offset, timestamp) of each batch that has values kept)."""
    limit = min(limit, len(buf))
    batches = records = 0
    values: list[bytes] = []
    offsets: list[int] = []
    positions: list[int] = []
    told: list[tuple[int, int, int, int]] = []
    newest = last_ts = 0
    while pos < stop and pos + HEADER_SIZE <= limit and next_offset < before \
            and len(values) < most_values:
        fields = HEADER.unpack_from(buf, pos)
        (base, length, batch_epoch, magic, crc, attributes, delta, base_ts, max_ts,
         _, _, _, count) = fields
        end = pos + LOG_OVERHEAD + length
        if length < HEADER_SIZE - LOG_OVERHEAD or end > limit or magic != 2 \
                or base != next_offset or batch_epoch != epoch or attributes \
                or max_ts != base_ts or end - pos - HEADER_SIZE > most_section \
                or count < 1 or delta != count - 1 or base + count > (1 << 63) - 1:
            break
        if crc32c(buf[pos + CRC_START:end]) != crc:
            break
        found = plain_values_py(buf[pos + HEADER_SIZE:end], 0, count, base)
        if found is None:
            break
        kept = len(values)
        for i, value in enumerate(found):
            if value != skip:
                values.append(value)
                offsets.append(base + i)
                positions.append(pos)
        if tell and len(values) > kept:
            told.append((pos, base, base + count - 1, base_ts))
        if not batches or base_ts > newest:
            newest = base_ts
        last_ts = base_ts
        next_offset = base + count
        batches += 1
        records += count
        pos = end
    return pos, batches, records, next_offset, values, offsets, positions, newest, last_ts, \
        told


#: ``before`` where nothing stops a span: the highest offset a batch can have.
NO_OFFSET = (1 << 63) - 1


class Spans(NamedTuple):
    """What a scan that gives plain spans needs of its reader: ``skip``, the value to
    leave out (the NoOp's), ``before(epoch)``, asked before each span of that leader
    epoch: the offset at or after which it must end (the reader has something to do
    there: verify compares a snapshot), or -1 for no span now; and ``tell``: whether the
    reader hears of each batch that has values kept (a replay with a watch)."""

    skip: bytes
    before: Callable[[int], int]
    tell: bool = False


#: :func:`plain_span_py`, compiled where it is built.
plain_span = CORE.plain_span if CORE is not None else plain_span_py


class PlainSpan(NamedTuple):
    """What a scan with ``plain`` gives for a span (see the module docstring): its
    ``count`` batches and ``records`` from byte ``start`` to ``end`` of ``file`` (read in
    ``buf``), base offsets ``first`` to ``next_offset`` - 1, all of leader epoch
    ``epoch``; the ``values`` to replay, with their ``offsets`` and ``positions``; the
    ``newest`` batch timestamp, the last batch's, and the batches ``told`` (see
    :func:`plain_span_py`).  A reader that cannot take the span whole in the state it is
    in reads its batches one by one (:meth:`batches`)."""

    start: int
    end: int
    count: int
    records: int
    first: int
    next_offset: int
    epoch: int
    values: list[bytes]
    offsets: list[int]
    positions: list[int]
    buf: Any
    file: str
    newest: int = 0
    last_timestamp: int = 0
    told: tuple | list = ()

    def batches(self) -> Iterator[Batch]:
        """The span's batches, as the scan would have given them one by one (read while
        the scan waits: its bytes are still at hand)."""
        buf, file, pos, end = self[10], self[11], self[0], self[1]
        unpack, new = HEADER.unpack_from, tuple.__new__
        while pos < end:
            fields = unpack(buf, pos)
            after = pos + LOG_OVERHEAD + fields[1]
            raw = buf[pos:after]
            yield new(Batch, fields + (True, pos, raw, file, memo_entry(raw, fields)))
            pos = after
