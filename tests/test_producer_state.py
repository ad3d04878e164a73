"""Producer-state snapshot files."""

from __future__ import annotations

import contextlib
import json
import struct

import crc32c
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kmeta.errors import FormatError
from kmeta.formats import producer_state as ps

INT16 = st.integers(-(2**15), 2**15 - 1)
INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)

entries = st.builds(ps.ProducerEntry, INT64, INT16, INT32, INT64, INT32, INT64, INT32, INT64)


@st.composite
def snapshots(draw):
    value = ps.ProducerSnapshot(tuple(draw(st.lists(entries, max_size=8))),
                                trailing=draw(st.binary(max_size=5) | st.just(b"")))
    if draw(st.booleans()):
        crc = draw(st.integers(0, 2**32 - 1).filter(lambda c: c != value.computed_crc))
        value = ps.ProducerSnapshot(value.entries, value.version, crc, value.trailing)
    return value


EMPTY = bytes.fromhex("000148674bc700000000")


@given(snapshots())
def test_round_trip(value):
    data = ps.build_producer_snapshot(value)
    assert ps.parse_producer_snapshot(data) == value
    assert ps.parse_producer_snapshot_construct(data) == value
    assert len(data) == 10 + 46 * len(value.entries) + len(value.trailing)
    json.dumps(value.to_json())


@given(st.binary(max_size=300) | st.lists(entries, max_size=4).map(
    lambda es: ps.build_producer_snapshot(ps.ProducerSnapshot(tuple(es)))))
def test_any_bytes_give_a_value_or_format_error(data):
    fast = construct = None
    try:
        fast = ps.parse_producer_snapshot(data)
    except FormatError as e:
        assert e.position is not None
    with contextlib.suppress(FormatError):
        construct = ps.parse_producer_snapshot_construct(data)
    # the fast path and the construct definition agree on every input
    assert fast == construct
    if fast is not None:
        json.dumps(fast.to_json())
        assert ps.build_producer_snapshot(fast) == data


@given(st.binary(min_size=10, max_size=200), st.integers(0, 199), st.integers(1, 255))
def test_a_flipped_byte_is_caught_by_the_crc(seed, where, flip):
    value = ps.ProducerSnapshot((ps.ProducerEntry(1, 0, 5, 100, 0, 17, -1, -1),),
                                trailing=seed)
    data = bytearray(ps.build_producer_snapshot(value))
    where = ps.ENTRIES_OFFSET + where % (len(data) - ps.ENTRIES_OFFSET)
    data[where] ^= flip
    try:
        parsed = ps.parse_producer_snapshot(bytes(data))
    except FormatError:
        return  # the entry count was hit and no longer fits the file
    assert not parsed.crc_valid


def test_empty_snapshot_bytes():
    assert ps.build_producer_snapshot(ps.ProducerSnapshot()) == EMPTY
    assert crc32c.crc32c(b"\0\0\0\0") == 0x48674BC7
    value = ps.parse_producer_snapshot(EMPTY)
    assert value == ps.ProducerSnapshot() and value.crc_valid
    assert value.to_json() == {"version": 1, "crc": 0x48674BC7, "computed_crc": 0x48674BC7,
                               "crc_valid": True, "trailing_bytes": 0, "producer_entries": []}


def test_entry_layout():
    e = ps.ProducerEntry(1000, 2, 41, 5000, 4, 1700000000000, 7, -1)
    data = ps.build_producer_snapshot(ps.ProducerSnapshot((e,)))
    assert ps.ENTRY_SIZE == 46
    assert data[6:10] == b"\0\0\0\1"
    assert data[10:] == struct.pack(">qhiqiqiq", 1000, 2, 41, 5000, 4, 1700000000000, 7, -1)
    assert struct.unpack(">I", data[2:6])[0] == crc32c.crc32c(data[6:])


def test_crc_mismatch_is_a_flag():
    data = bytearray(EMPTY)
    data[5] ^= 1
    value = ps.parse_producer_snapshot(bytes(data))
    assert not value.crc_valid
    assert value.bad_crc == 0x48674BC6
    assert value.to_json()["crc_valid"] is False
    assert ps.build_producer_snapshot(value) == bytes(data)
    with pytest.raises(ValueError):
        ps.build_producer_snapshot(ps.ProducerSnapshot(bad_crc=0x48674BC7))


@pytest.mark.parametrize(("data", "position", "words"), [
    (b"", 0, "shorter"),
    (EMPTY[:9], 0, "shorter"),
    (b"\x00\x02" + EMPTY[2:], 0, "unknown version 2"),
    (b"\x00\x00" + EMPTY[2:], 0, "unknown version 0"),
    (EMPTY[:6] + b"\xff\xff\xff\xff", 6, "negative"),
    (EMPTY[:6] + b"\x00\x00\x00\x01" + bytes(45), 6, "need 56 bytes"),
])
def test_errors(data, position, words):
    with pytest.raises(FormatError) as e:
        ps.parse_producer_snapshot(data)
    assert e.value.position == position
    assert words in e.value.message
    with pytest.raises(FormatError):
        ps.parse_producer_snapshot_construct(data)


def test_real_producer_snapshots(real_data):
    paths = sorted(real_data.rglob("*.snapshot"))
    names = {p.name for p in paths}
    assert "00000000000000077314.snapshot" in names
    assert {"00000000000000001396.snapshot", "00000000000000002034.snapshot"} <= names
    with_producers = {}
    for path in paths:
        data = path.read_bytes()
        value = ps.parse_producer_snapshot(data)
        assert value.version == 1 and value.crc_valid, path
        assert ps.build_producer_snapshot(value) == data, path
        if "__cluster_metadata" in path.parent.name:
            assert data == EMPTY, path  # the metadata partition never has producers
        if value.entries:
            with_producers[str(path.relative_to(real_data))] = value.entries
    # ksqlDB's command topic: one transactional producer, decoded by hand from its 56 bytes.
    ksql = ("kraft-ksql-txn/kafka-data/_confluent-ksql-default__command_topic-0/"
            "00000000000000000002.snapshot")
    (entry,) = with_producers.pop(ksql)
    assert (entry.producer_id, entry.epoch, entry.last_sequence, entry.last_offset,
            entry.offset_delta, entry.timestamp, entry.coordinator_epoch,
            entry.current_txn_first_offset) == (0, 0, 0, 0, 0, 1728561475581, 0, -1)
    assert not with_producers  # every other one, data topics included, is empty
    assert len(paths) == 118
