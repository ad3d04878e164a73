"""Segment index files: ``.index`` (offset), ``.timeindex`` (time) and ``.txnindex``.

Spec (in ``apache/kafka``, ``storage/.../internals/log/``):

* ``OffsetIndex``: 8-byte entries, ``relativeOffset`` int32 then ``position`` int32 (byte
  position of the batch in the ``.log``), big-endian; offset = segment base offset +
  relative offset.
* ``TimeIndex``: 12-byte entries, ``timestamp`` int64 then ``relativeOffset`` int32.
* ``AbortedTxn`` / ``TransactionIndex``: 34-byte entries, ``version`` int16 (0),
  ``producerId``, ``firstOffset``, ``lastOffset``, ``lastStableOffset`` (int64 each),
  appended as transactions abort; never preallocated.  (Kafka writes ``version`` as a
  short but its ``AbortedTxn.version()`` reads only the first byte; kmeta reports the
  whole int16.)
* ``AbstractIndex``: offset and time index files are created preallocated
  (``segment.index.bytes``, 10 MiB by default, rounded down to whole entries) and trimmed
  to their used size when the segment is rolled or closed.  A broker that stops uncleanly
  leaves the zero-filled preallocated tail behind.  Kafka itself has no rule to tell
  written entries from that tail: its loader takes ``length / entrySize`` entries and
  relies on rebuilding the indexes of the segments above the recovery point.  The rule
  kmeta uses is the one in Kafka's ``DumpLogSegments`` (``kafka-dump-log.sh``): the
  entries end at the first slot after slot 0 whose relative offset is 0 (offsets in an
  index strictly increase from the base offset, so only slot 0 can hold relative 0).
  kmeta adds one refinement: an all-zero slot 0 is unwritten too (``DumpLogSegments``
  would print it as an entry).  Kafka only indexes a batch once ``index.interval.bytes``
  of data precede it, so a real offset index entry never has position 0; a real time
  index entry at slot 0 would need timestamp 0 at the base offset.

The construct ``Struct`` of each entry is the definition; the ``struct.Struct`` used to
read whole files is derived from it.  Parsers take ``(data, base_offset)``, never raise on
any bytes, and report how many slots were real entries, how many were the unwritten tail,
and any bytes left over after the last whole slot (which Kafka's sanity check calls
corrupt).
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import repeat
from operator import add, itemgetter
from typing import Any, Generic, NamedTuple, TypeVar

import construct as cs

from kmeta.errors import FormatError
from kmeta.formats.primitives import INT32_MAX, derive_struct

OFFSET_INDEX_ENTRY = cs.Struct(
    "relativeOffset" / cs.Int32sb,
    "position" / cs.Int32sb,
)

TIME_INDEX_ENTRY = cs.Struct(
    "timestamp" / cs.Int64sb,
    "relativeOffset" / cs.Int32sb,
)

ABORTED_TXN_ENTRY = cs.Struct(
    "version" / cs.Int16sb,
    "producerId" / cs.Int64sb,
    "firstOffset" / cs.Int64sb,
    "lastOffset" / cs.Int64sb,
    "lastStableOffset" / cs.Int64sb,
)

#: The only AbortedTxn version Kafka writes; it refuses to read entries above it.
ABORTED_TXN_VERSION = 0


OFFSET_INDEX_STRUCT = derive_struct(OFFSET_INDEX_ENTRY)
TIME_INDEX_STRUCT = derive_struct(TIME_INDEX_ENTRY)
ABORTED_TXN_STRUCT = derive_struct(ABORTED_TXN_ENTRY)
OFFSET_INDEX_ENTRY_SIZE = OFFSET_INDEX_STRUCT.size  # 8
TIME_INDEX_ENTRY_SIZE = TIME_INDEX_STRUCT.size  # 12
ABORTED_TXN_ENTRY_SIZE = ABORTED_TXN_STRUCT.size  # 34


class OffsetPosition(NamedTuple):
    """An offset index entry: the batch whose last offset is ``offset`` starts at byte
    ``position`` of the segment's ``.log``.  (Index entries are tuples: a 1 GiB log has
    a quarter of a million, each built when its file is read.)"""

    offset: int
    position: int

    def to_json(self) -> dict[str, Any]:
        return {"offset": self.offset, "position": self.position}


class TimestampOffset(NamedTuple):
    """A time index entry: the largest timestamp seen up to ``offset``."""

    timestamp: int
    offset: int

    def to_json(self) -> dict[str, Any]:
        return {"timestamp": self.timestamp, "offset": self.offset}


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """A transaction index entry: an aborted transaction of ``producer_id``."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    version: int = ABORTED_TXN_VERSION

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "producer_id": self.producer_id,
                "first_offset": self.first_offset, "last_offset": self.last_offset,
                "last_stable_offset": self.last_stable_offset}


E = TypeVar("E")


@dataclass(frozen=True, slots=True)
class IndexFile(Generic[E]):
    """What an index file holds.

    ``slots`` is the number of whole entries the file has room for (what Kafka's loader
    takes as its entry count); ``entries`` are the real ones; ``preallocated`` =
    ``slots - len(entries)`` is the unwritten tail and ``tail_zero`` says whether it is all
    zero bytes (it is after an unclean shutdown; anything else there is damage);
    ``trailing_bytes`` counts the bytes after the last whole slot.
    """

    kind: str  # "offset-index", "time-index" or "txn-index"
    base_offset: int
    entries: tuple[E, ...]
    slots: int
    preallocated: int = 0
    tail_zero: bool = True
    trailing_bytes: int = 0

    @property
    def entry_size(self) -> int:
        return _ENTRY_SIZE[self.kind]

    @property
    def valid_bytes(self) -> int:
        """Bytes used by real entries (the size Kafka trims the file to on close)."""
        return len(self.entries) * self.entry_size

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "base_offset": self.base_offset,
            "entry_size": self.entry_size,
            "slots": self.slots,
            "entry_count": len(self.entries),
            "preallocated": self.preallocated,
            "tail_zero": self.tail_zero,
            "trailing_bytes": self.trailing_bytes,
            "entries": [e.to_json() for e in self.entries],  # type: ignore[attr-defined]
        }


_ENTRY_SIZE = {"offset-index": OFFSET_INDEX_ENTRY_SIZE, "time-index": TIME_INDEX_ENTRY_SIZE,
               "txn-index": ABORTED_TXN_ENTRY_SIZE}


def _view(data: bytes | bytearray | memoryview) -> memoryview:
    view = memoryview(data)
    if view.ndim != 1 or view.itemsize != 1:
        view = view.cast("B")
    return view


def _all_zero(view: memoryview) -> bool:
    n = len(view)
    if n == 0:
        return True
    chunk = 1 << 20
    zeros = bytes(min(n, chunk))
    for start in range(0, n, chunk):
        part = view[start:start + chunk]
        if part != zeros[:len(part)]:
            return False
    return True


def _entries(kind: type[E], rows: list[tuple[int, int]], base_offset: int, rel_field: int
             ) -> list[E]:
    """``kind`` entries of two-field rows, ``base_offset`` added to the relative offset
    in ``rel_field``; built by ``map`` over columns, with no Python call per entry
    (tuple.__new__: a NamedTuple's own __new__ is a Python function)."""
    columns = [list(map(itemgetter(i), rows)) for i in (0, 1)]
    columns[rel_field] = list(map(add, columns[rel_field], repeat(base_offset)))
    return list(map(tuple.__new__, repeat(kind), zip(*columns, strict=True)))


def _parse_slots(kind: str, data: bytes | bytearray | memoryview, base_offset: int,
                 layout: struct.Struct, rel_field: int,
                 make: Callable[[list[tuple]], list[E]]) -> IndexFile[E]:
    if isinstance(base_offset, bool) or not isinstance(base_offset, int):
        raise TypeError("base_offset must be an int")
    view = _view(data)
    size = layout.size
    slots = len(view) // size
    body = view[:slots * size]
    entries: list[E] = []
    if slots and not _all_zero(body[:size]):
        rows = list(layout.iter_unpack(body))
        # the entries end at the first slot after the first whose relative offset is 0
        relative = list(map(itemgetter(rel_field), rows))
        with contextlib.suppress(ValueError):
            del rows[relative.index(0, 1):]
        entries = make(rows)
    used = len(entries) * size
    return IndexFile(kind, base_offset, tuple(entries), slots, slots - len(entries),
                     _all_zero(body[used:]), len(view) - slots * size)


def parse_offset_index(data: bytes | bytearray | memoryview,
                       base_offset: int) -> IndexFile[OffsetPosition]:
    """Entries of a ``.index`` file whose segment starts at ``base_offset``."""
    return _parse_slots("offset-index", data, base_offset, OFFSET_INDEX_STRUCT, 0,
                        lambda rows: _entries(OffsetPosition, rows, base_offset, 0))


def parse_time_index(data: bytes | bytearray | memoryview,
                     base_offset: int) -> IndexFile[TimestampOffset]:
    """Entries of a ``.timeindex`` file whose segment starts at ``base_offset``."""
    return _parse_slots("time-index", data, base_offset, TIME_INDEX_STRUCT, 1,
                        lambda rows: _entries(TimestampOffset, rows, base_offset, 1))


def parse_txn_index(data: bytes | bytearray | memoryview,
                    base_offset: int) -> IndexFile[AbortedTxn]:
    """Entries of a ``.txnindex`` file.  Offsets in it are absolute already; ``base_offset``
    is kept for the report.  Nothing is preallocated: every whole slot is an entry (check
    ``version`` — Kafka refuses an entry above version 0)."""
    if isinstance(base_offset, bool) or not isinstance(base_offset, int):
        raise TypeError("base_offset must be an int")
    view = _view(data)
    size = ABORTED_TXN_ENTRY_SIZE
    slots = len(view) // size
    entries = tuple(AbortedTxn(f[1], f[2], f[3], f[4], f[0])
                    for f in ABORTED_TXN_STRUCT.iter_unpack(view[:slots * size]))
    return IndexFile("txn-index", base_offset, entries, slots, 0, True, len(view) - slots * size)


def parse_offset_index_entry(data: bytes, base_offset: int) -> OffsetPosition:
    """One ``.index`` entry through the construct definition (the reference parser)."""
    c = _construct_parse(OFFSET_INDEX_ENTRY, data)
    return OffsetPosition(base_offset + c.relativeOffset, c.position)


def parse_time_index_entry(data: bytes, base_offset: int) -> TimestampOffset:
    """One ``.timeindex`` entry through the construct definition."""
    c = _construct_parse(TIME_INDEX_ENTRY, data)
    return TimestampOffset(c.timestamp, base_offset + c.relativeOffset)


def parse_aborted_txn(data: bytes) -> AbortedTxn:
    """One ``.txnindex`` entry through the construct definition."""
    c = _construct_parse(ABORTED_TXN_ENTRY, data)
    return AbortedTxn(c.producerId, c.firstOffset, c.lastOffset, c.lastStableOffset, c.version)


def _construct_parse(definition: cs.Struct, data: bytes) -> Any:
    try:
        return definition.parse(bytes(data))
    except cs.ConstructError as e:
        raise FormatError(f"index entry: {e}", position=0) from None


def _relative(offset: int, base_offset: int) -> int:
    rel = offset - base_offset
    if not 0 <= rel <= INT32_MAX:
        raise ValueError(f"offset {offset} does not fit an index based at {base_offset}")
    return rel


def _build(definition: cs.Struct, items: list[dict], preallocated: int) -> bytes:
    if preallocated < 0:
        raise ValueError("preallocated must be >= 0")
    body = cs.Array(len(items), definition).build(items)
    return body + bytes(preallocated * definition.sizeof())


def build_offset_index(entries: Iterable[OffsetPosition], base_offset: int,
                       preallocated: int = 0) -> bytes:
    """A ``.index`` file, optionally followed by ``preallocated`` zero slots."""
    items = [{"relativeOffset": _relative(e.offset, base_offset), "position": e.position}
             for e in entries]
    return _build(OFFSET_INDEX_ENTRY, items, preallocated)


def build_time_index(entries: Iterable[TimestampOffset], base_offset: int,
                     preallocated: int = 0) -> bytes:
    """A ``.timeindex`` file, optionally followed by ``preallocated`` zero slots."""
    items = [{"timestamp": e.timestamp, "relativeOffset": _relative(e.offset, base_offset)}
             for e in entries]
    return _build(TIME_INDEX_ENTRY, items, preallocated)


def build_txn_index(entries: Iterable[AbortedTxn]) -> bytes:
    """A ``.txnindex`` file."""
    items = [{"version": e.version, "producerId": e.producer_id, "firstOffset": e.first_offset,
              "lastOffset": e.last_offset, "lastStableOffset": e.last_stable_offset}
             for e in entries]
    return _build(ABORTED_TXN_ENTRY, items, 0)


def build_index(value: IndexFile) -> bytes:
    """Render a parsed :class:`IndexFile` (its entries plus a zero tail of the same size)."""
    if value.kind == "offset-index":
        return build_offset_index(value.entries, value.base_offset, value.preallocated)
    if value.kind == "time-index":
        return build_time_index(value.entries, value.base_offset, value.preallocated)
    if value.kind == "txn-index":
        return build_txn_index(value.entries)
    raise ValueError(f"unknown index kind {value.kind!r}")


__all__ = [
    "ABORTED_TXN_ENTRY",
    "ABORTED_TXN_ENTRY_SIZE",
    "ABORTED_TXN_VERSION",
    "OFFSET_INDEX_ENTRY",
    "OFFSET_INDEX_ENTRY_SIZE",
    "TIME_INDEX_ENTRY",
    "TIME_INDEX_ENTRY_SIZE",
    "AbortedTxn",
    "IndexFile",
    "OffsetPosition",
    "TimestampOffset",
    "build_index",
    "build_offset_index",
    "build_time_index",
    "build_txn_index",
    "parse_aborted_txn",
    "parse_offset_index",
    "parse_offset_index_entry",
    "parse_time_index",
    "parse_time_index_entry",
    "parse_txn_index",
]
