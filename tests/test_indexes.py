"""Offset, time and transaction index files."""

from __future__ import annotations

import json
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kmeta.errors import FormatError
from kmeta.formats import indexes as ix

INT32_MAX = 2**31 - 1
INT64 = st.integers(-(2**63), 2**63 - 1)
BASES = st.integers(0, 2**62)


@st.composite
def offset_index(draw):
    """Entries as Kafka writes them: offsets strictly increasing above the base offset,
    positions strictly increasing and > 0."""
    base = draw(BASES)
    rels = sorted(draw(st.sets(st.integers(1, INT32_MAX), max_size=40)))
    positions = sorted(draw(st.sets(st.integers(1, INT32_MAX), min_size=len(rels),
                                    max_size=len(rels))))
    entries = tuple(ix.OffsetPosition(base + r, p) for r, p in zip(rels, positions, strict=True))
    return base, entries, draw(st.integers(0, 30))


@st.composite
def time_index(draw):
    base = draw(BASES)
    rels = sorted(draw(st.sets(st.integers(0, INT32_MAX), max_size=40)))
    stamps = sorted(draw(st.sets(st.integers(1, 2**63 - 1), min_size=len(rels),
                                 max_size=len(rels))))
    entries = tuple(ix.TimestampOffset(t, base + r) for t, r in zip(stamps, rels, strict=True))
    return base, entries, draw(st.integers(0, 30))


aborted_txns = st.builds(ix.AbortedTxn, INT64, INT64, INT64, INT64, st.just(0))


@given(offset_index())
def test_offset_index_round_trip(case):
    base, entries, prealloc = case
    data = ix.build_offset_index(entries, base, prealloc)
    assert len(data) == 8 * (len(entries) + prealloc)
    parsed = ix.parse_offset_index(data, base)
    assert parsed.entries == entries
    assert parsed.slots == len(entries) + prealloc
    assert parsed.preallocated == prealloc
    assert parsed.tail_zero and parsed.trailing_bytes == 0
    assert parsed.valid_bytes == 8 * len(entries)
    assert ix.build_index(parsed) == data
    json.dumps(parsed.to_json())


@given(time_index())
def test_time_index_round_trip(case):
    base, entries, prealloc = case
    data = ix.build_time_index(entries, base, prealloc)
    parsed = ix.parse_time_index(data, base)
    assert parsed.entries == entries
    assert parsed.preallocated == prealloc
    assert ix.build_index(parsed) == data


@given(st.lists(aborted_txns, max_size=20), BASES)
def test_txn_index_round_trip(entries, base):
    data = ix.build_txn_index(entries)
    parsed = ix.parse_txn_index(data, base)
    assert parsed.entries == tuple(entries)
    assert parsed.slots == len(entries) and parsed.preallocated == 0
    assert ix.build_index(parsed) == data


@given(st.binary(max_size=400), BASES)
def test_any_bytes_parse(data, base):
    # Index parsers are total: every byte string gives a value.
    for parse, size in ((ix.parse_offset_index, 8), (ix.parse_time_index, 12),
                        (ix.parse_txn_index, 34)):
        parsed = parse(data, base)
        assert parsed.slots == len(data) // size
        assert parsed.trailing_bytes == len(data) % size
        assert len(parsed.entries) + parsed.preallocated == parsed.slots
        json.dumps(parsed.to_json())


@given(st.binary(min_size=0, max_size=40), BASES)
def test_construct_definition_agrees_with_fast_path(data, base):
    for parse_one, parse_all, size in (
            (ix.parse_offset_index_entry, ix.parse_offset_index, 8),
            (ix.parse_time_index_entry, ix.parse_time_index, 12)):
        if len(data) < size:
            with pytest.raises(FormatError):
                parse_one(data[:size], base)
            continue
        whole = parse_all(data[:size], base)
        if whole.entries:
            assert whole.entries[0] == parse_one(data[:size], base)
    if len(data) >= 34:
        assert ix.parse_txn_index(data[:34], base).entries[0] == ix.parse_aborted_txn(data[:34])


def test_layouts():
    assert (ix.OFFSET_INDEX_ENTRY_SIZE, ix.TIME_INDEX_ENTRY_SIZE,
            ix.ABORTED_TXN_ENTRY_SIZE) == (8, 12, 34)
    data = ix.build_txn_index([ix.AbortedTxn(7, 100, 120, 90)])
    assert data == struct.pack(">hqqqq", 0, 7, 100, 120, 90)
    assert ix.build_offset_index([ix.OffsetPosition(105, 4096)], 100) == \
        struct.pack(">ii", 5, 4096)
    assert ix.build_time_index([ix.TimestampOffset(1700000000000, 105)], 100) == \
        struct.pack(">qi", 1700000000000, 5)


def test_preallocated_tail_rule():
    # Kafka preallocates; after an unclean shutdown the zero tail stays.
    entries = [ix.OffsetPosition(1054, 4129), ix.OffsetPosition(1111, 8233)]
    data = ix.build_offset_index(entries, 1000, preallocated=1000)
    parsed = ix.parse_offset_index(data, 1000)
    assert list(parsed.entries) == entries
    assert (parsed.slots, parsed.preallocated, parsed.tail_zero) == (1002, 1000, True)
    # A never-written (all zero) index has no entries, slot 0 included.
    empty = ix.parse_offset_index(bytes(80), 0)
    assert (empty.entries, empty.preallocated) == ((), 10)
    # Relative offset 0 in slot 0 is an entry if the slot is not all zero.
    first = ix.parse_time_index(struct.pack(">qi", 5, 0) + bytes(24), 10)
    assert first.entries == (ix.TimestampOffset(5, 10),) and first.preallocated == 2
    # Garbage after the entries: the cut still happens at relative offset 0, but the tail
    # is reported as not zero.
    dirty = ix.build_offset_index(entries, 0) + struct.pack(">ii", 0, 77) + bytes(8)
    parsed = ix.parse_offset_index(dirty, 0)
    assert len(parsed.entries) == 2 and parsed.preallocated == 2 and not parsed.tail_zero
    # Bytes beyond the last whole slot.
    assert ix.parse_offset_index(ix.build_offset_index(entries, 0) + b"\0\0\0",
                                 0).trailing_bytes == 3


def test_build_refuses_offsets_outside_the_segment():
    with pytest.raises(ValueError):
        ix.build_offset_index([ix.OffsetPosition(5, 1)], 10)
    with pytest.raises(ValueError):
        ix.build_time_index([ix.TimestampOffset(1, 10 + 2**31)], 10)


def test_memoryview_input():
    data = ix.build_offset_index([ix.OffsetPosition(3, 10)], 0, 2)
    assert ix.parse_offset_index(memoryview(bytearray(data)), 0).entries == (
        ix.OffsetPosition(3, 10),)


# --------------------------------------------------------------------- real files

BOAZ = "quorum3-boaz/data/{}/__cluster_metadata-0/00000000000000000000.{}"


@pytest.mark.parametrize("node", ["kafka-1", "kafka-2"])
def test_real_offset_index(real_data, node):
    data = (real_data / BOAZ.format(node, "index")).read_bytes()
    parsed = ix.parse_offset_index(data, 0)
    assert parsed.slots == len(parsed.entries) == 35  # trimmed on close: no tail
    assert parsed.preallocated == 0 and parsed.trailing_bytes == 0
    assert parsed.entries[0] == ix.OffsetPosition(54, 4129)
    assert parsed.entries[1] == ix.OffsetPosition(111, 8233)
    assert parsed.entries[-1] == ix.OffsetPosition(2021, 145996)
    offsets = [e.offset for e in parsed.entries]
    assert offsets == sorted(set(offsets))
    assert ix.build_index(parsed) == data


@pytest.mark.parametrize("node", ["kafka-1", "kafka-2"])
def test_real_time_index(real_data, node):
    data = (real_data / BOAZ.format(node, "timeindex")).read_bytes()
    parsed = ix.parse_time_index(data, 0)
    assert parsed.slots == len(parsed.entries) == 37
    assert parsed.entries[0] == ix.TimestampOffset(1714533010035, 54)
    assert parsed.entries[-1] == ix.TimestampOffset(1714534019924, 2033)
    stamps = [e.timestamp for e in parsed.entries]
    assert stamps == sorted(set(stamps))
    assert ix.build_index(parsed) == data


def test_real_zero_length_indexes(real_data):
    part = real_data / "ldi-poc" / "Retry.TestTopicPatient-0"
    for name, parse in (("00000000000000000000.index", ix.parse_offset_index),
                        ("00000000000000000000.timeindex", ix.parse_time_index)):
        parsed = parse((part / name).read_bytes(), 0)
        assert (parsed.slots, parsed.entries, parsed.preallocated) == (0, (), 0)


def test_every_real_index_parses(real_data):
    seen = 0
    for path in sorted(real_data.rglob("*")):
        parse = {".index": ix.parse_offset_index, ".timeindex": ix.parse_time_index,
                 ".txnindex": ix.parse_txn_index}.get(path.suffix)
        if parse:
            data = path.read_bytes()
            parsed = parse(data, int(path.name.split(".")[0]))
            assert ix.build_index(parsed) == data, path
            seen += 1
    assert seen >= 6
