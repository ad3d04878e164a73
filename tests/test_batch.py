"""Record batch v2: the construct definition, the fast path, the writer, and Kafka's readers."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kmeta.errors import FormatError
from kmeta.formats.batch import (
    BATCH_HEADER,
    HEADER,
    HEADER_SIZE,
    RECORD,
    Header,
    build_batch,
    decode_records,
    encode_record,
    parse_batch,
)
from kmeta.formats.primitives import VarInt, VarLong, encode_varint, read_uvarint, read_varint

blobs = st.one_of(st.none(), st.binary(max_size=300))
headers = st.lists(st.builds(Header, st.text(max_size=20), blobs), max_size=3)
records = st.lists(st.tuples(blobs, blobs, headers), min_size=1, max_size=20)


def test_header_struct_is_derived_from_the_definition():
    assert HEADER.size == BATCH_HEADER.sizeof() == HEADER_SIZE == 61


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_fast_path_matches_construct(v):
    data = VarLong.build(v)
    assert data == encode_varint(v)
    assert read_varint(data, 0, 10) == (v, len(data))
    assert VarLong.parse(data) == v


@given(st.integers(-(2**31), 2**31 - 1))
def test_varint_fast_path_matches_construct(v):
    data = VarInt.build(v)
    assert read_varint(data, 0) == (v, len(data))


def test_overlong_varint_is_a_format_error():
    with pytest.raises(FormatError):
        read_uvarint(b"\xff\xff\xff\xff\xff\xff", 0)


@given(st.integers(-(2**20), 2**20), st.integers(0, 2**20), blobs, blobs, headers)
def test_record_writer_matches_construct_definition(ts, off, key, value, hdrs):
    built = encode_record(off, ts, key, value, hdrs)
    parsed = RECORD.parse(built)
    assert parsed.offsetDelta == off and parsed.timestampDelta == ts
    assert parsed.key == key and parsed.value == value
    assert [(h.key, h.value) for h in parsed.headers] == [(h.key, h.value) for h in hdrs]
    rebuilt = RECORD.build(dict(attributes=0, timestampDelta=ts, offsetDelta=off, key=key,
                                value=value, headers=[dict(key=h.key, value=h.value)
                                                      for h in hdrs]))
    assert rebuilt == built


@settings(max_examples=60)
@given(records, st.integers(0, 2**40), st.integers(-1, 2**31 - 1), st.sampled_from([0, 1, 2, 3, 4]),
       st.booleans(), st.booleans(), st.one_of(st.none(), st.integers(0, 2**41)))
def test_batch_round_trip(recs, base, epoch, codec, control, txn, horizon):
    ts = [1_700_000_000_000 + i * 7 for i in range(len(recs))]
    data = build_batch(base, recs, leader_epoch=epoch, timestamps=ts, compression=codec,
                       control=control, transactional=txn, delete_horizon_ms=horizon,
                       producer_id=42 if txn else -1, producer_epoch=3 if txn else -1,
                       base_sequence=5 if txn else -1)
    b = parse_batch(data)
    assert b.crc_valid and b.size == len(data)
    assert (b.base_offset, b.leader_epoch, b.is_control, b.is_transactional) == \
        (base, epoch, control, txn)
    assert b.compression == ["none", "gzip", "snappy", "lz4", "zstd"][codec]
    assert b.delete_horizon_ms == horizon
    assert b.last_offset == base + len(recs) - 1
    got = b.records()
    assert [(r.key, r.value, list(r.headers)) for r in got] == \
        [(k, v, list(h)) for k, v, h in recs]
    assert [r.offset for r in got] == list(range(base, base + len(recs)))
    assert [r.timestamp for r in got] == ts


def test_crc_detects_any_flipped_byte_after_crc_field():
    data = bytearray(build_batch(0, [(None, b"hello")]))
    for i in range(21, len(data)):
        data[i] ^= 0x40
        assert not parse_batch(bytes(data)).crc_valid
        data[i] ^= 0x40


def test_records_that_overrun_their_section_are_format_errors():
    good = encode_record(0, 0, None, b"abc")
    with pytest.raises(FormatError):
        decode_records(good[:-1], 1, 0, 0)
    with pytest.raises(FormatError):
        decode_records(good + b"\x00", 1, 0, 0)
    with pytest.raises(FormatError):
        decode_records(good, 2, 0, 0)


@given(st.binary(max_size=200), st.integers(0, 5))
def test_random_records_section_gives_records_or_format_error(data, count):
    try:
        out = decode_records(data, count, 0, 0)
    except FormatError:
        return
    assert len(out) == count


@given(st.binary(max_size=200))
def test_random_batch_body_never_raises_anything_but_format_error(body):
    data = build_batch(0, [(None, b"x")])
    raw = data[:HEADER_SIZE] + body
    raw = raw[:8] + struct.pack(">i", len(raw) - 12) + raw[12:]
    b = parse_batch(raw)
    try:
        out = b.records()
    except FormatError as e:
        assert e.position is not None
        return
    assert len(out) == 1


def test_kafka_python_reads_kmeta_batches_with_matching_crcs():
    from kafka.record.memory_records import MemoryRecords

    payload = b"".join(
        build_batch(i * 3, [(None, b"v%d" % j) for j in range(3)], leader_epoch=i,
                    base_timestamp=1_700_000_000_000, compression=i % 5)
        for i in range(10))
    mr = MemoryRecords(payload)
    seen = []
    ours = []
    pos = 0
    while pos < len(payload):
        b = parse_batch(payload, pos)
        ours.append(b.crc)
        pos += b.size
    while True:
        batch = mr.next_batch()
        if batch is None:
            break
        assert batch.validate_crc()
        seen.append(batch.crc)
        assert [r.value for r in batch] == [b"v0", b"v1", b"v2"]
    assert seen == ours and len(seen) == 10
