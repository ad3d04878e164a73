"""Runs of repeated batches: the per-batch work of a full scan, compiled when it can be.

Most of a KRaft metadata log is one batch over and over: a NoOp heartbeat every
500 ms from the active controller, each the batch before it with the next offset, a later
timestamp and so a new CRC.  A *run* is such a sequence after a reference batch: every
following batch, back to back, that has

* the reference's length, leader epoch, magic, attributes and lastOffsetDelta;
* the reference's producer id, producer epoch, base sequence and record count, and its
  records section byte for byte (so the same records, relative to the batch);
* the base offset right after the batch before it (``+ lastOffsetDelta + 1``);
* the reference's gap between maxTimestamp and baseTimestamp;
* a CRC-32C that matches.

Such batches differ from the reference only in base offset, timestamps and CRC, so a
reader that has judged the reference has judged them all: verify counts them, dump fills
one text template per batch.  :func:`run_length` finds how long a run is,
:func:`fill` fills a template over a run's bytes.

The functions here in Python (``run_length_py``, ``fill_py``) are the reference.
``kmeta/formats/_runs.c`` is their compiled twin (see ``formats.compiled``, whose
``IMPLEMENTATION`` ``kmeta --version`` prints): :data:`run_length` and :data:`fill` are
the twin's where it is built.  The tests and the fuzz campaign run both.
"""

from __future__ import annotations

import os
import re
import struct
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import repeat
from operator import add
from typing import Any, NamedTuple

from kmeta.formats.batch import (
    ATTRIBUTES,
    BASE_OFFSET,
    BASE_TIMESTAMP,
    BATCH_LENGTH,
    CRC,
    FIELD_BYTES,
    FILE,
    HEADER,
    HEADER_SIZE,
    LAST_OFFSET_DELTA,
    LOG_OVERHEAD,
    LONE,
    MAGIC,
    MAX_TIMESTAMP,
    POSITION,
    PRODUCER_ID,
    RAW,
    RECORDS_COUNT,
    Batch,
)
from kmeta.formats.checksum import crc32c as _crc32c
from kmeta.formats.compiled import CORE

#: A field of a template: (byte position in the batch, kind, a number to add).  Kinds:
#: AT_POSITION (the batch's position in its file; the byte position is ignored), INT32,
#: UINT32, INT64 (big-endian, as the header stores them).
Field = tuple[int, int, int]
AT_POSITION, INT32, UINT32, INT64 = 0, 4, 5, 8

_AT_LENGTH = FIELD_BYTES["batchLength"]
_AT_CRC = FIELD_BYTES["crc"]
_AT_ATTRS = FIELD_BYTES["attributes"]
_AT_BASE_TS = FIELD_BYTES["baseTimestamp"]
_AT_MAX_TS = FIELD_BYTES["maxTimestamp"]
_AT_PRODUCER = FIELD_BYTES["producerId"]
_AT_DELTA = FIELD_BYTES["lastOffsetDelta"]
_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")
_MASK64 = (1 << 64) - 1
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
# The compiled twin spells these positions out; they must be the declaration's.
assert (FIELD_BYTES["baseOffset"], _AT_LENGTH, FIELD_BYTES["partitionLeaderEpoch"],
        FIELD_BYTES["magic"], _AT_CRC, _AT_ATTRS, _AT_DELTA, _AT_BASE_TS, _AT_MAX_TS,
        _AT_PRODUCER, HEADER_SIZE, LOG_OVERHEAD) == (0, 8, 12, 16, 17, 21, 23, 27, 35, 43,
                                                     61, 12)


def wrap64(v: int) -> int:
    """``v`` as a signed 64-bit integer (Java's long arithmetic, which C's wraps like)."""
    v &= _MASK64
    return v - (1 << 64) if v >> 63 else v


def run_length_py(buf: Any, pos: int, limit: int, max_count: int) -> int:
    """How many batches after the v2 batch at ``pos`` form a run with it (see the module
    docstring), counting only batches that end by ``limit`` and at most ``max_count``."""
    limit = min(limit, len(buf))
    if pos < 0 or pos + HEADER_SIZE > limit:
        return 0
    (length,) = _INT32.unpack_from(buf, pos + _AT_LENGTH)
    if length < HEADER_SIZE - LOG_OVERHEAD or buf[pos + FIELD_BYTES["magic"]] != 2:
        return 0
    size = length + LOG_OVERHEAD
    ref = bytes(buf[pos:pos + size])
    same_head, same_flags, same_tail = ref[_AT_LENGTH:_AT_CRC], ref[_AT_ATTRS:_AT_BASE_TS], \
        ref[_AT_PRODUCER:]
    step = _INT32.unpack_from(ref, _AT_DELTA)[0] + 1
    ts_gap = (_INT64.unpack_from(ref, _AT_MAX_TS)[0] - _INT64.unpack_from(ref, _AT_BASE_TS)[0]) \
        & _MASK64
    base = _INT64.unpack_from(ref, 0)[0]
    count, q = 0, pos + size
    while count < max_count and q + size <= limit:
        b = bytes(buf[q:q + size])
        if b[_AT_LENGTH:_AT_CRC] != same_head or b[_AT_ATTRS:_AT_BASE_TS] != same_flags or \
                b[_AT_PRODUCER:] != same_tail:
            break
        b_base = _INT64.unpack_from(b, 0)[0]
        if b_base != wrap64(base + step):
            break
        if (_INT64.unpack_from(b, _AT_MAX_TS)[0] - _INT64.unpack_from(b, _AT_BASE_TS)[0]) \
                & _MASK64 != ts_gap:
            break
        if _crc32c(b[_AT_ATTRS:]) != _UINT32.unpack_from(b, _AT_CRC)[0]:
            break
        base = b_base
        count += 1
        q += size
    return count


def fill_py(raw: Any, count: int, size: int, first_position: int,
            parts: Sequence[str | bytes | Field], sep: str | bytes) -> str | bytes:
    """``parts`` filled for each of ``count`` batches of ``size`` bytes laid end to end
    in ``raw`` (the first at ``first_position`` in its file), joined by ``sep``.  A str
    part is copied; a :data:`Field` is written as a decimal integer.

    With a bytes ``sep`` the literal parts are bytes and so is the text: for a writer
    that takes it as it is (``Environment.write_lines``), which a str would cost a
    join and an encoding more."""
    as_bytes = type(sep) is bytes
    if not as_bytes and type(sep) is not str:
        raise TypeError("sep must be str or bytes")
    if count < 0 or size <= 0 or count * size > len(raw):
        raise ValueError("count and size reach past the bytes given")
    for part in parts:
        if type(part) is str or type(part) is bytes:
            if (type(part) is bytes) != as_bytes:
                raise TypeError("a literal part of another type than sep")
            continue
        if type(part) is not tuple:
            raise TypeError("a part must be a literal or a field tuple")
        at, kind, _ = part
        width = {AT_POSITION: 0, INT32: 4, UINT32: 4, INT64: 8}.get(kind)
        if width is None or at < 0 or at + width > size:
            raise ValueError("a field outside the batch")
    readers = {INT32: _INT32.unpack_from, UINT32: _UINT32.unpack_from,
               INT64: _INT64.unpack_from}
    out = []
    for k in range(count):
        start = k * size
        text = []
        for part in parts:
            if type(part) is not tuple:
                text.append(part)
                continue
            at, kind, add = part
            v = first_position + start if kind == AT_POSITION else \
                readers[kind](raw, start + at)[0]
            number = str(wrap64(v + add))
            text.append(number.encode("ascii") if as_bytes else number)
        out.append((b"" if as_bytes else "").join(text))
    return sep.join(out)


def gather_int64_py(raw: Any, at: int, stride: int, count: int) -> bytes:
    """The big-endian int64 at byte ``at`` of each of ``count`` records of ``stride``
    bytes in ``raw``, as int64s in this machine's byte order: what ``array("q")`` and
    Arrow read, without an int object per record (in the compiled twin)."""
    if not (0 <= at <= stride - 8 and 0 <= count <= len(raw) // stride):
        raise ValueError("gather_int64: the records overrun the buffer")
    layout = _GATHER.get((at, stride, count))
    if layout is None:
        if len(_GATHER) >= 256:
            _GATHER.clear()
        layout = _GATHER[at, stride, count] = struct.Struct(
            ">" + f"{at}xq{stride - at - 8}x" * count)
    return array("q", layout.unpack_from(raw)).tobytes()


_GATHER: dict[tuple[int, int, int], struct.Struct] = {}


def walk_py(buf: Any, pos: int, limit: int, stop: int, next_offset: int, last_epoch: int
            ) -> tuple[int, int, int, int, int]:
    """The intact v2 batches from ``pos`` on, walked by their headers alone: each must
    end by ``limit``, be at least a header long, have magic 2, a base offset at or above
    ``next_offset`` and a matching CRC-32C (the batches a scan takes by its fast path and
    reports nothing of).  The walk stops before the first batch that is not such a batch,
    or once ``pos`` reaches ``stop``.

    Returns (position reached, batches walked, the next offset and the highest leader
    epoch as the scan tracks them, and the highest last offset + 1 of the walked batches,
    or ``next_offset`` when none was).  For readers that want only what a log's batches
    say of its extent and its damage: ``verify`` of an ordinary topic."""
    limit = min(limit, len(buf))
    count = 0
    high = next_offset
    least = HEADER_SIZE - LOG_OVERHEAD
    unpack = _WALK.unpack_from
    while pos < stop and pos + HEADER_SIZE <= limit:
        base, length, epoch, magic, crc, last_delta = unpack(buf, pos)
        end = pos + LOG_OVERHEAD + length
        if end > limit or length < least or magic != 2 or base < next_offset:
            break
        after = base + last_delta + 1
        if after > _LARGEST_OFFSET or _crc32c(buf[pos + _AT_ATTRS:end]) != crc:
            break  # past Kafka's largest offset (a Java long): the scan's own path says so
        next_offset = after
        if next_offset > high:
            high = next_offset
        if epoch > last_epoch:
            last_epoch = epoch
        count += 1
        pos = end
    return pos, count, next_offset, last_epoch, high


def walk_file_py(fd: int, scratch: Any, pos: int, n: int, stop: int, next_offset: int,
                 last_epoch: int) -> tuple[int, int, int, int, int]:
    """:func:`walk_py` over the file open as ``fd``, ``n`` bytes long, from byte ``pos``:
    read a chunk of at most ``len(scratch)`` bytes at a time, so the bytes cost one copy
    and no page of a mapping (the compiled twin reads into ``scratch``).  It also stops
    before a batch longer than ``scratch`` and where a read comes up short or fails: the
    caller's own path reads from there, and says why."""
    count, high = 0, next_offset
    while pos < stop:
        try:
            chunk = os.pread(fd, min(len(scratch), n - pos), pos)
        except OSError:
            break
        to, k, next_offset, last_epoch, top = walk_py(chunk, 0, len(chunk), stop - pos,
                                                      next_offset, last_epoch)
        if not k:
            break
        count += k
        high = max(high, top)
        pos += to
    return pos, count, next_offset, last_epoch, high


#: Kafka's offsets are Java longs: a walk takes no batch whose next offset would pass this
#: (the compiled walk's 64-bit sum overflows there).
_LARGEST_OFFSET = (1 << 63) - 1

#: baseOffset, batchLength, partitionLeaderEpoch, magic, crc, (attributes skipped),
#: lastOffsetDelta: the header fields a walk reads.
_WALK = struct.Struct(">qiibI2xi")
assert _WALK.size == _AT_BASE_TS and _WALK.unpack_from(bytes(range(27)))[5] == \
    _INT32.unpack_from(bytes(range(27)), _AT_DELTA)[0]

run_length: Callable[..., int] = CORE.run_length if CORE is not None else run_length_py
gather_int64: Callable[..., bytes] = CORE.gather_int64 if CORE is not None else \
    gather_int64_py
fill: Callable[..., str] = CORE.fill if CORE is not None else fill_py
walk: Callable[..., tuple[int, int, int, int, int]] = CORE.walk if CORE is not None else \
    walk_py
walk_file: Callable[..., tuple[int, int, int, int, int]] = CORE.walk_file \
    if CORE is not None else walk_file_py


#: The most batches one Run holds: a run is copied out of the file (``Run.raw``) and a
#: dump fills its template into one string, both bounded by this.
MAX_RUN = 4096


class Run(NamedTuple):
    """``count`` batches that repeat ``ref``, the batch just before them (see the module
    docstring), ``raw`` being their bytes (``count`` times ``size``), read at positions
    ``ref.position + size`` onwards of ``ref.file``.  Scans yield one only to readers
    that asked for runs (``runs=True``)."""

    ref: Batch
    count: int
    size: int
    raw: Any

    @property
    def step(self) -> int:
        """Offsets from one batch of the run to the next."""
        return self[0][LAST_OFFSET_DELTA] + 1

    @property
    def first_base(self) -> int:
        return self[0][BASE_OFFSET] + self.step

    @property
    def last_offset(self) -> int:
        """The last offset of the run's last batch."""
        return self[0][BASE_OFFSET] + self[0][LAST_OFFSET_DELTA] + self[1] * self.step

    @property
    def first_position(self) -> int:
        return self[0][POSITION] + self[2]

    def last_batch(self) -> Batch:
        """The run's last batch, as a scan without runs yields it."""
        ref, count, size, raw = self
        start = (count - 1) * size
        return tuple.__new__(Batch, HEADER.unpack_from(raw, start) + (
            True, ref[POSITION] + size + start, raw[start:start + size], ref[FILE], ref[LONE]))

    def batches(self) -> Iterator[Batch]:
        """The run's batches, as a scan without runs yields them (same memo entry)."""
        ref, count, size, raw = self
        file, lone, position = ref[FILE], ref[LONE], ref[POSITION] + size
        unpack, new = HEADER.unpack_from, tuple.__new__
        for k in range(count):
            start = k * size
            yield new(Batch, unpack(raw, start) + (True, position + start,
                                                   raw[start:start + size], file, lone))


class Walked(NamedTuple):
    """``count`` intact batches, back to back from byte ``start`` to ``end`` of a file,
    that a scan walked by their headers and CRCs alone (``scan_batches(walk=True)``):
    nothing in them is a finding, and the highest of their last offsets + 1 is
    ``high``; ``epoch`` is the highest leader epoch of the file's batches up to ``end``
    (the scan's own tally: -1 where none had one)."""

    count: int
    start: int
    end: int
    high: int
    epoch: int = -1


class Expandable:
    """Scan items, where a reader may take back what a Run stands for: ``expand(run)``
    puts the run's batches next in the stream, for a reader that cannot judge a run as a
    whole in the state it is in."""

    __slots__ = ("_source", "_pending")

    def __init__(self, source: Iterable[Any]) -> None:
        self._source = source
        self._pending: list[Iterator[Batch]] = []

    def __iter__(self) -> Iterator[Any]:
        pending = self._pending
        for item in self._source:
            yield item
            while pending:
                yield from pending.pop()

    def expand(self, run: Run) -> None:
        self._pending.append(run.batches())


# Stand-ins for the fields that differ along a run, far from any value a header holds:
# a batch rendered with them shows where each field (or a field plus a constant, such as
# lastOffset or a record's timestamp) goes in the text.
_STANDINS = {BASE_OFFSET: (6_100_000_000_000_000_000, 0, INT64),
             CRC: (6_300_000_000_000_000_000, FIELD_BYTES["crc"], UINT32),
             BASE_TIMESTAMP: (6_500_000_000_000_000_000, _AT_BASE_TS, INT64),
             MAX_TIMESTAMP: (6_700_000_000_000_000_000, _AT_MAX_TS, INT64),
             POSITION: (6_900_000_000_000_000_000, 0, AT_POSITION)}
_NEAR = 10 ** 15
_NUMBER = re.compile(r"-?\d+")


def template(render: Callable[[Batch], str], ref: Batch) -> list[str | Field] | None:
    """The parts :func:`fill` takes to write ``render(batch)`` for each batch of a run
    after ``ref``: ``render`` is called once, on ``ref`` with stand-ins for the fields
    that vary.  None when the text cannot be told apart from them, or when the template
    does not give back ``render(ref)`` exactly."""
    fields = list(ref)
    for slot, (standin, _, _) in _STANDINS.items():
        fields[slot] = standin
    text = render(tuple.__new__(Batch, fields))
    parts: list[str | Field] = []
    last = 0
    for m in _NUMBER.finditer(text):
        n = int(m.group())
        for standin, at, kind in _STANDINS.values():
            if abs(n - standin) < _NEAR:
                if kind == UINT32 and n != standin:
                    return None
                parts.append(text[last:m.start()])
                parts.append((at, kind, n - standin))
                last = m.end()
                break
    parts.append(text[last:])
    size = ref.size
    try:
        ok = fill(ref[RAW], 1, size, ref[POSITION], parts, "") == render(ref)
    except (ValueError, OverflowError):
        ok = False
    return parts if ok else None


class RunText:
    """The text of whole runs, each batch written as ``render(batch, payload)`` would
    write it, from a template made once per kind of run (see :func:`template`).

    A run's text comes as its UTF-8 bytes, which ``Environment.write_lines`` writes as
    they are: gigabytes of a dump, that a str would cost a join and an encoding more.
    Where no template fits, or one would hold what UTF-8 cannot encode (a name that is
    not UTF-8, as surrogates), each batch is rendered: text, which the writer encodes as
    it encodes any."""

    __slots__ = ("_render", "_cache")

    def __init__(self, render: Callable[[Batch, Any], str]) -> None:
        self._render = render
        self._cache: dict[tuple, tuple[Any, Any, list[bytes | Field] | None]] = {}

    def text(self, run: Run, payload: Any) -> str | bytes:
        """The run's batches, their texts joined by newlines.  ``payload`` is the ref's
        record's (the same object for every batch: templates are kept by identity)."""
        ref, count, size, raw = run
        # Everything a run keeps from its ref, but the record (the memo entry, by identity).
        key = (ref[FILE], *ref[BATCH_LENGTH:MAGIC + 1], *ref[ATTRIBUTES:LAST_OFFSET_DELTA + 1],
               *ref[PRODUCER_ID:RECORDS_COUNT + 1])
        hit = self._cache.get(key)
        if hit is None or hit[0] is not payload or hit[1] is not ref[LONE]:
            render = self._render
            hit = (payload, ref[LONE], _encoded(template(lambda b: render(b, payload), ref)))
            if len(self._cache) >= 1024:
                self._cache.clear()
            self._cache[key] = hit
        parts = hit[2]
        if parts is None:
            return "\n".join(self._render(b, payload) for b in run.batches())
        return fill(raw, count, size, ref[POSITION] + size, parts, b"\n")


def _encoded(parts: list[str | Field] | None) -> list[bytes | Field] | None:
    """A template's literals as UTF-8; None where one cannot be (it holds surrogates)."""
    if parts is None:
        return None
    try:
        return [p.encode("utf-8") if type(p) is str else p for p in parts]
    except UnicodeEncodeError:
        return None


def run_stamps(run: Run) -> bytes:
    """The baseTimestamp of each batch of a run as int64s in this machine's byte order
    (``gather_int64``): the maxTimestamps are these plus the reference batch's gap."""
    _, count, size, raw = run
    return gather_int64(raw, _AT_BASE_TS, size, count)


def run_newest(run: Run) -> int:
    """The largest maxTimestamp of a run's batches (what run_timestamps gives, read for
    its maximum alone)."""
    ref = run[0]
    gap = ref[MAX_TIMESTAMP] - ref[BASE_TIMESTAMP]
    base = array("q", run_stamps(run))
    if not gap:
        return max(base)
    if max(base) + gap <= _INT64_MAX and min(base) + gap >= _INT64_MIN:
        return max(base) + gap
    return max(run_timestamps(run)[1])  # a gap that wraps: as run_timestamps reads them


def run_timestamps(run: Run) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The baseTimestamp and the maxTimestamp of each batch of a run.  The batches of a
    run keep the gap between the two that the batch before them has (``run_length``), so
    only the base timestamps are read: at once (``run_stamps``)."""
    ref, count, size, raw = run
    base = tuple(array("q", run_stamps(run)))
    gap = ref[MAX_TIMESTAMP] - ref[BASE_TIMESTAMP]
    if not gap:
        return base, base
    newest = tuple(map(add, base, repeat(gap)))
    if min(newest) >= _INT64_MIN and max(newest) <= _INT64_MAX:
        return base, newest
    # the gap is equal modulo 2**64 (run_length's arithmetic): read both, as they wrap
    return base, tuple(array("q", gather_int64(raw, _AT_MAX_TS, size, count)))
