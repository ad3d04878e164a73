"""The rows of kmeta's tables as columnar chunks (:mod:`kmeta.ops.export.rows` declares the
tables and gives their rows one by one, the reference these chunks equal).

The batches and records tables of a big log are millions of rows; building a tuple per
row and letting a consumer convert it cell by cell is most of the cost.  The chunks
hand the same rows over as columns: the unit's context as constants, the values that
change per row as lists, and, for records, the columns that repeat (a NoOp's type,
version, keys and payload) as an index into the distinct tuples of a chunk.
"""

from __future__ import annotations

import heapq
import itertools
import os
import struct
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from kmeta.formats.batch import (
    ATTRIBUTES,
    BASE_OFFSET,
    BASE_TIMESTAMP,
    BATCH_LENGTH,
    COMPRESSION_MASK,
    CONTROL_FLAG,
    CRC_VALID,
    LAST_OFFSET_DELTA,
    LEADER_EPOCH,
    LOG_OVERHEAD,
    LONE,
    MAX_TIMESTAMP,
    POSITION,
    PRODUCER_ID,
    RECORDS_COUNT,
    TRANSACTIONAL_FLAG,
    Batch,
)
from kmeta.formats.compression import CODEC_NAMES
from kmeta.formats.payload import decode_control, decode_metadata
from kmeta.formats.runs import Expandable, Run, run_stamps, wrap64
from kmeta.ops.export.rows import Unit, _payload_columns, unit_rows
from kmeta.storage.segments import batch_records, read_batches


class Spans(NamedTuple):
    """A column given span by span: span i holds the rows from ``ends[i - 1]`` (0 for the
    first) up to ``ends[i]``; its first row holds ``first[i]`` and each row after it
    ``step[i]`` more (without steps, every row of a span holds ``first[i]``).  A run of
    alike batches is one span: a big log's batches cost an entry per run, not per batch,
    and their Arrow columns are made at once (``to_arrow``)."""

    ends: list[int]
    first: list[Any]
    step: list[int] | None = None

    def values(self) -> list[Any]:
        """The column row by row: the reference ``to_arrow``'s columns are tested against."""
        out: list[Any] = []
        start = 0
        steps = self.step if self.step is not None else [0] * len(self.ends)
        for end, first, step in zip(self.ends, self.first, steps, strict=True):
            out.extend([first + i * step for i in range(end - start)] if step
                       else [first] * (end - start))
            start = end
        return out


class Stamps(NamedTuple):
    """A column of timestamps: row i holds the int64 at ``base[8 * i:]`` (this machine's
    byte order) plus its span's ``plus`` (none: 0), in Kafka's int64 arithmetic, which
    wraps; or null, for the rows listed in ``nulls``.  The batches of a run keep the gap
    between their two timestamps, and their records the same delta: the base timestamps
    of a run are read once (``run_stamps``), for all three columns."""

    base: bytearray
    plus: Spans | None
    nulls: list[int]

    def values(self) -> list[int | None]:
        base = array("q")
        base.frombytes(self.base)
        out: list[int | None] = list(base) if self.plus is None else \
            [wrap64(b + p) for b, p in zip(base, self.plus.values(), strict=True)]
        for i in self.nulls:
            out[i] = None
        return out


def column_values(column: list[Any] | Spans | Stamps) -> list[Any]:
    """A chunk's column row by row, whichever way the chunk holds it."""
    return column if type(column) is list else column.values()


@dataclass
class Chunk:
    """``n`` rows of a table as columns (indexes into COMMON + TABLES[table]): constants,
    columns (a list of the rows' values, :class:`Spans` or :class:`Stamps`) and, for
    records, the columns that repeat with the payload (their keys, each row's index into
    the distinct tails, and the tails)."""

    n: int
    constants: dict[int, Any]
    columns: dict[int, list | Spans | Stamps]
    shared: tuple[tuple[int, ...], list[int] | Spans, list[tuple]] | None = None

    def rows(self) -> Iterator[tuple]:
        """The same rows as tuples (what ``unit_rows`` yields)."""
        width = len(self.constants) + len(self.columns) + \
            (len(self.shared[0]) if self.shared else 0)
        columns = {k: column_values(c) for k, c in self.columns.items()}
        if self.shared:
            keys, idx, tails = self.shared
            idx = column_values(idx)
        for i in range(self.n):
            row: list[Any] = [None] * width
            for k, v in self.constants.items():
                row[k] = v
            for k, col in columns.items():
                row[k] = col[i]
            if self.shared:
                for k, v in zip(keys, tails[idx[i]], strict=True):
                    row[k] = v
            yield tuple(row)


CHUNK_ROWS = 1 << 16


def unit_chunks(unit: Unit, size: int = CHUNK_ROWS) -> Iterator[Chunk]:
    """The rows of a unit as columnar chunks of about ``size`` rows (every table; the
    batches and records of a metadata log without a tuple per row, its records as
    export's single read gives them)."""
    if unit.metadata and unit.table in ("batches", "records"):
        # export's single read, without the records' work for the batches table nor
        # the batches' for the records table
        wanted = unit.table
        return (chunk for table, chunk in file_chunks(replace(
            unit, records=unit.records and wanted == "records"), size,
            batches=wanted == "batches") if table == wanted)
    if unit.table == "batches":
        return _batch_chunks(unit, size)
    return row_chunks(unit_rows(unit), size)


def row_chunks(rows: Iterator[tuple], size: int) -> Iterator[Chunk]:
    while True:
        chunk = list(itertools.islice(rows, size))
        if not chunk:
            return
        yield Chunk(len(chunk), {}, dict(enumerate(map(list, zip(*chunk, strict=True)))))


def _constants(unit: Unit) -> dict[int, Any]:
    return dict(enumerate((*unit.context, unit.file)))


def _batch_chunks(unit: Unit, size: int) -> Iterator[Chunk]:
    cols: list[list] = [[] for _ in range(14)]
    (pos, base, last, epoch, base_ts, max_ts, nbytes, count, magic, codec, crc, control,
     txn, pid) = cols
    for b in read_batches(unit.path, []):
        if type(b) is Batch:
            pos.append(b[POSITION])
            base.append(b[BASE_OFFSET])
            last.append(b[BASE_OFFSET] + b[LAST_OFFSET_DELTA])
            epoch.append(b[LEADER_EPOCH])
            base_ts.append(b[BASE_TIMESTAMP])
            max_ts.append(b[MAX_TIMESTAMP])
            nbytes.append(b[BATCH_LENGTH] + LOG_OVERHEAD)
            count.append(b[RECORDS_COUNT])
            magic.append(2)
            codec.append(b.compression)
            crc.append(b[CRC_VALID])
            control.append(b[ATTRIBUTES] & CONTROL_FLAG != 0)
            txn.append(b[ATTRIBUTES] & TRANSACTIONAL_FLAG != 0)
            pid.append(b[PRODUCER_ID])
        else:
            for col, v in zip(cols, (b.position, b.base_offset, b.last_offset, -1, None,
                                     b.max_timestamp, b.size, b.records_count, b.magic,
                                     b.compression, b.crc_valid, b.is_control, False, -1),
                              strict=True):
                col.append(v)
        if len(pos) >= size:
            yield Chunk(len(pos), _constants(unit), dict(enumerate(cols, start=5)))
            cols = [[] for _ in range(14)]
            (pos, base, last, epoch, base_ts, max_ts, nbytes, count, magic, codec, crc,
             control, txn, pid) = cols
    if pos:
        yield Chunk(len(pos), _constants(unit), dict(enumerate(cols, start=5)))


#: records columns that repeat with the payload: type .. payload
_TAIL = tuple(range(10, 20))


def file_chunks(unit: Unit, size: int = CHUNK_ROWS, *, batches: bool = True
                ) -> Iterator[tuple[str, Chunk]]:
    """The batches and the records of one segment or snapshot file from a single read:
    ``("batches", chunk)`` and ``("records", chunk)`` pairs (records only when the unit's
    scope puts them in the records table; batches only with ``batches``), the same rows
    as ``unit_chunks`` gives for each table.  What ``kmeta export`` writes.

    The loop is the hottest of an export (once per batch of every log of a fleet): it
    gives a run of alike batches as one span of rows (:class:`Spans`, :class:`Stamps`),
    appends through bound methods and takes a memoised lone record without building
    Record objects."""
    batch_unit = replace(unit, table="batches")
    record_unit = replace(unit, table="records")
    if not unit.metadata:
        if batches:
            yield from (("batches", c) for c in _batch_chunks(batch_unit, size))
        if unit.records:
            yield from (("records", c) for c in unit_chunks(record_unit, size))
        return
    with_records = unit.records
    with_batches = batches
    codecs = CODEC_NAMES
    # Each table's rows as spans (a run of batches is one) and its timestamps as int64s
    # (those of a run in one read): see Spans and Stamps.

    def fresh_batches() -> tuple:
        ends: list[int] = []
        stamps, bts_nulls, mts_nulls = bytearray(), [], []
        pos, pos_step, base, off_step, last, gap = [], [], [], [], [], []
        epoch, nbytes, count, magic, codec, crc, ctl, txn, pid = \
            [], [], [], [], [], [], [], [], []
        columns = {5: Spans(ends, pos, pos_step), 6: Spans(ends, base, off_step),
                   7: Spans(ends, last, off_step), 8: Spans(ends, epoch),
                   9: Stamps(stamps, None, bts_nulls),
                   10: Stamps(stamps, Spans(ends, gap), mts_nulls),
                   11: Spans(ends, nbytes), 12: Spans(ends, count), 13: Spans(ends, magic),
                   14: Spans(ends, codec), 15: Spans(ends, crc), 16: Spans(ends, ctl),
                   17: Spans(ends, txn), 18: Spans(ends, pid)}
        return (columns, [c.append for c in (
            ends, pos, pos_step, base, off_step, last, gap, epoch, nbytes, count, magic,
            codec, crc, ctl, txn, pid)], stamps, bts_nulls, mts_nulls)

    def fresh_records() -> tuple:
        ends: list[int] = []
        stamps, nulls = bytearray(), []
        pos, pos_step, off, off_step, shift, epoch, ctl = [], [], [], [], [], [], []
        columns = {5: Spans(ends, pos, pos_step), 6: Spans(ends, off, off_step),
                   7: Stamps(stamps, Spans(ends, shift), nulls), 8: Spans(ends, epoch),
                   9: Spans(ends, ctl)}
        # The payload columns' index has spans of its own: the records of a batch share
        # its span (offsets one apart) but not their payloads, and a run of NoOps and
        # the lone NoOps after it share one payload.
        tail_ends: list[int] = []
        idx: list[int] = []

        def tail_to(tail: int, end: int) -> None:
            """The rows up to ``end`` hold the payload columns ``tail``."""
            if idx and idx[-1] == tail:
                tail_ends[-1] = end
            else:
                tail_ends.append(end)
                idx.append(tail)

        return (columns, Spans(tail_ends, idx), [c.append for c in (
            ends, pos, pos_step, off, off_step, shift, epoch, ctl)] + [tail_to],
            stamps, nulls)

    b_cols, b_add, b_stamps, b_bts_nulls, b_mts_nulls = fresh_batches()
    (b_end, b_pos, b_pos_step, b_base, b_off_step, b_last, b_gap, b_epoch, b_size, b_count,
     b_magic, b_codec, b_crc, b_ctl, b_txn, b_pid) = b_add
    r_cols, r_idx, r_add, r_stamps, r_nulls = fresh_records()
    r_end, r_pos, r_pos_step, r_off, r_off_step, r_shift, r_epoch, r_ctl, r_tail = r_add
    b_n = r_n = 0  # rows so far in each chunk
    tails: list[tuple] = []  # this records chunk's distinct payload columns
    seen: dict[Any, int] = {}  # their places in tails, by record value
    last_value: Any = None
    last_tail = -1
    stamp = _STAMP.pack

    def tail_of(control: bool, key: Any, value: Any) -> int:
        k = (_hashable(key), _hashable(value)) if control else _hashable(value)
        tail_id = seen.get(k, -1)
        if tail_id < 0:
            tail_id = seen[k] = len(tails)
            tails.append(payload_columns(control, key, value))
        return tail_id

    def record(pos: int, offset: int, timestamp: int | None, epoch: int, control: bool,
               tail: int) -> None:
        nonlocal r_n
        if timestamp is None:
            r_nulls.append(r_n)
            timestamp = 0
        r_stamps.extend(stamp(wrap64(timestamp)))
        r_n += 1
        r_end(r_n), r_pos(pos), r_pos_step(0), r_off(offset), r_off_step(0), r_shift(0)
        r_epoch(epoch), r_ctl(control), r_tail(tail, r_n)

    # The batch slots and flags as locals: this loop runs once per batch.
    at_pos, at_base, at_attrs, at_epoch = POSITION, BASE_OFFSET, ATTRIBUTES, LEADER_EPOCH
    at_base_ts, at_max_ts, at_delta = BASE_TIMESTAMP, MAX_TIMESTAMP, LAST_OFFSET_DELTA
    at_length, at_count, at_crc_valid = BATCH_LENGTH, RECORDS_COUNT, CRC_VALID
    at_pid, at_lone, overhead = PRODUCER_ID, LONE, LOG_OVERHEAD
    codec_mask, control_flag, txn_flag = COMPRESSION_MASK, CONTROL_FLAG, TRANSACTIONAL_FLAG
    items = Expandable(read_batches(unit.path, [], memo=True, runs=True))
    for b in items:
        if type(b) is Run:
            ref, k, length, _ = b  # (not ``size``: that is the chunk's row count)
            lone = ref[at_lone]
            attrs = ref[at_attrs]
            if attrs & control_flag:
                items.expand(b)
                continue
            # Batches that repeat ``ref``: their rows differ only in offsets and
            # positions, a span each, and timestamps, read at once.
            step, epoch = ref[at_delta] + 1, ref[at_epoch]
            first, pos = ref[at_base] + step, ref[at_pos] + length
            stamps = run_stamps(b)
            if with_batches:
                b_stamps.extend(stamps)
                b_n += k
                b_end(b_n), b_pos(pos), b_pos_step(length), b_base(first), b_off_step(step)
                b_last(first + ref[at_delta])
                b_gap(wrap64(ref[at_max_ts] - ref[at_base_ts]))
                b_epoch(epoch), b_size(length), b_count(ref[at_count]), b_magic(2)
                b_codec(codecs.get(attrs & codec_mask, "unknown")), b_crc(True)
                b_ctl(False), b_txn(attrs & txn_flag != 0), b_pid(ref[at_pid])
            if with_records:
                value = lone[3]
                if value is not last_value:
                    last_value = value
                    last_tail = tail_of(False, None, value)
                r_stamps.extend(stamps)
                r_n += k
                r_end(r_n), r_pos(pos), r_pos_step(length), r_off(first + lone[0])
                r_off_step(step), r_shift(lone[1]), r_epoch(epoch), r_ctl(False)
                r_tail(last_tail, r_n)
        elif type(b) is not Batch:  # a legacy message, by attribute
            if with_batches:
                if b.max_timestamp is None:
                    b_mts_nulls.append(b_n)
                b_bts_nulls.append(b_n)  # no baseTimestamp: the maxTimestamp stands in
                b_stamps.extend(stamp(b.max_timestamp or 0))
                b_n += 1
                for add, v in zip(b_add, (b_n, b.position, 0, b.base_offset, 0,
                                          b.last_offset, 0, -1, b.size, b.records_count,
                                          b.magic, b.compression, b.crc_valid, b.is_control,
                                          False, -1), strict=True):
                    add(v)
            found, _ = batch_records(b) if with_records else ([], None)
            for r in found:
                record(b.position, r.offset, r.timestamp, -1, b.is_control,
                       tail_of(b.is_control, r.key, r.value))
        else:
            pos, base, attrs, epoch, base_ts = b[at_pos], b[at_base], b[at_attrs], \
                b[at_epoch], b[at_base_ts]
            control = attrs & control_flag != 0
            if with_batches:
                b_stamps.extend(stamp(base_ts))
                b_n += 1
                b_end(b_n), b_pos(pos), b_pos_step(0), b_base(base), b_off_step(0)
                b_last(base + b[at_delta]), b_gap(wrap64(b[at_max_ts] - base_ts))
                b_epoch(epoch), b_size(b[at_length] + overhead), b_count(b[at_count])
                b_magic(2), b_codec(codecs.get(attrs & codec_mask, "unknown"))
                b_crc(b[at_crc_valid]), b_ctl(control), b_txn(attrs & txn_flag != 0)
                b_pid(b[at_pid])
            lone = b[at_lone]
            if with_records and lone is not None and not control:
                value = lone[3]
                if value is not last_value:
                    last_value = value
                    last_tail = tail_of(False, None, value)
                r_stamps.extend(stamp(base_ts))
                r_n += 1
                r_end(r_n), r_pos(pos), r_pos_step(0), r_off(base + lone[0]), r_off_step(0)
                r_shift(lone[1]), r_epoch(epoch), r_ctl(False), r_tail(last_tail, r_n)
            elif with_records:
                found, _ = batch_records(b)
                found = found if type(found) is list else list(found)
                k = len(found)
                if k:
                    # The batch's records at once: their timestamps in one pack, one
                    # span when their offsets are one apart (as Kafka writes them).
                    stamps = [r[1] for r in found]
                    try:
                        r_stamps.extend(struct.pack(f"={k}q", *stamps))
                    except struct.error:  # none, or beyond a long (Kafka's add wraps)
                        for i, t in enumerate(stamps):
                            if t is None:
                                r_nulls.append(r_n + i)
                            stamps[i] = 0 if t is None else wrap64(t)
                        r_stamps.extend(struct.pack(f"={k}q", *stamps))
                    first = found[0][0]
                    if found[-1][0] - first == k - 1 and \
                            [r[0] for r in found] == list(range(first, first + k)):
                        r_end(r_n + k), r_pos(pos), r_pos_step(0), r_off(first)
                        r_off_step(1), r_shift(0), r_epoch(epoch), r_ctl(control)
                    else:
                        for i, r in enumerate(found, start=r_n + 1):
                            r_end(i), r_pos(pos), r_pos_step(0), r_off(r[0]), r_off_step(0)
                            r_shift(0), r_epoch(epoch), r_ctl(control)
                    for r in found:
                        r_n += 1
                        r_tail(tail_of(control, r[2], r[3]), r_n)
        if b_n >= size:
            yield "batches", Chunk(b_n, _constants(batch_unit), b_cols)
            b_cols, b_add, b_stamps, b_bts_nulls, b_mts_nulls = fresh_batches()
            (b_end, b_pos, b_pos_step, b_base, b_off_step, b_last, b_gap, b_epoch, b_size,
             b_count, b_magic, b_codec, b_crc, b_ctl, b_txn, b_pid) = b_add
            b_n = 0
        if r_n >= size:
            yield "records", Chunk(r_n, _constants(record_unit), r_cols,
                                   (_TAIL, r_idx, tails))
            r_cols, r_idx, r_add, r_stamps, r_nulls = fresh_records()
            (r_end, r_pos, r_pos_step, r_off, r_off_step, r_shift, r_epoch, r_ctl,
             r_tail) = r_add
            r_n = 0
            tails, seen = [], {}
            last_value, last_tail = None, -1
    if b_n:
        yield "batches", Chunk(b_n, _constants(batch_unit), b_cols)
    if r_n:
        yield "records", Chunk(r_n, _constants(record_unit), r_cols, (_TAIL, r_idx, tails))


#: int64 timestamps in this machine's byte order, as Stamps hold them
_STAMP = struct.Struct("=q")


def payload_columns(control: bool, key: bytes | None, value: bytes | None) -> tuple:
    """The payload columns of a metadata record (``control``: a control record) of
    ``key`` and ``value``, kept by those bytes for the process: the replicas of a
    cluster's metadata log in a fleet hold the same records, and one log repeats many
    (a broker's registrations, its fences and unfences)."""
    k = (_hashable(key), _hashable(value)) if control else _hashable(value)
    columns = _COLUMNS.get(k)
    if columns is None:
        columns = _payload_columns(control, decode_control(key, value) if control
                                   else decode_metadata(value))
        if len(_COLUMNS) >= _COLUMNS_KEPT:
            _COLUMNS.clear()
        _COLUMNS[k] = columns
    return columns


def _hashable(raw: Any) -> bytes | None:
    return raw if raw is None or type(raw) is bytes else bytes(raw)


#: payload columns by record key and value (a value alone for a metadata record)
_COLUMNS: dict[Any, tuple] = {}
_COLUMNS_KEPT = 1 << 15


#: bytes of segment and snapshot files one export task reads at most, when there are many
TASK_BYTES = 256 << 20


def _unit_bytes(u: Unit) -> int:
    """What a unit reads: its file, or the files of its partition directory."""
    try:
        if not os.path.isdir(u.path):
            return os.stat(u.path).st_size
        with os.scandir(u.path) as entries:
            return sum(e.stat().st_size for e in entries if e.is_file())
    except OSError:
        return 0


def task_groups(units: Sequence[Unit], parallelism: int) -> list[list[Unit]]:
    """The units cut into Spark tasks of similar size, as few as keep every core busy:
    each task costs a Python worker's turn (about 20 ms on a laptop, for parsing 4 MB),
    and a fleet holds thousands of files.  One task per core, or as many full waves of
    them as keep each task under TASK_BYTES; never more than one task per unit; each
    unit goes to the task with the fewest bytes so far, biggest first."""
    sized = sorted(((_unit_bytes(u), u) for u in units), key=lambda su: su[0], reverse=True)
    total = sum(s for s, _ in sized)
    cores = max(parallelism, 1)
    n = min(len(sized), cores * max(1, -(-total // (TASK_BYTES * cores))))
    groups: list[list[Unit]] = [[] for _ in range(n)]
    lightest = [(0, i) for i in range(n)]  # a heap of (bytes so far, group)
    for s, u in sized:
        load, i = heapq.heappop(lightest)
        groups[i].append(u)
        heapq.heappush(lightest, (load + s, i))
    return groups
