"""Any bytes into each parser entry point give a value or findings/FormatError, never
another exception.

Beside the ones in the format tests (text files, indexes, producer snapshots, a raw
segment scan, a records section): every small-file parser through the registry of
``kmeta.storage.files``, legacy message sets with intact CRCs, v2 batches with intact CRCs
and arbitrary records sections read with the metadata decoders, KRaft snapshot files,
metadata and control record values, and the decompressors.
"""

from __future__ import annotations

import contextlib
import struct
import zlib
from pathlib import Path

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from kmeta.errors import FormatError
from kmeta.findings import Finding
from kmeta.formats.batch import Record
from kmeta.formats.compression import decompress
from kmeta.formats.filenames import classify
from kmeta.formats.legacy import LegacyBatch
from kmeta.formats.metadata_schemas import METADATA_MESSAGES
from kmeta.formats.payload import Payload, decode_control, decode_metadata
from kmeta.formats.primitives import encode_uvarint
from kmeta.storage.discover import LogFile
from kmeta.storage.files import _parsers, load_checked
from kmeta.storage.segments import scan_records

from .mutators import with_crc

SMALL_FILE_NAMES = {
    "leader-epoch-checkpoint": "leader-epoch-checkpoint",
    "offset-checkpoint": "recovery-point-offset-checkpoint",
    "quorum-state": "quorum-state",
    "partition-metadata": "partition.metadata",
    "meta-properties": "meta.properties",
    "offset-index": "00000000000000000100.index",
    "time-index": "00000000000000000100.timeindex",
    "txn-index": "00000000000000000100.txnindex",
    "producer-snapshot": "00000000000000000100.snapshot",
    "clean-shutdown": ".kafka_cleanshutdown",
    "lock": ".lock",
    "remote-log-snapshot": "remote_log_snapshot",
}
TMP_OK = settings(suppress_health_check=[HealthCheck.function_scoped_fixture],
                  max_examples=150, deadline=None)


def test_every_registered_small_file_kind_is_covered():
    # a new parser in kmeta.storage.files must be added here to be fuzzed
    assert set(_parsers()) == set(SMALL_FILE_NAMES)


@TMP_OK
@given(kind=st.sampled_from(sorted(SMALL_FILE_NAMES)), data=st.binary(max_size=600))
def test_any_small_file_gives_a_value_or_a_finding(tmp_path: Path, kind: str, data: bytes):
    path = tmp_path / SMALL_FILE_NAMES[kind]
    path.write_bytes(data)
    f = LogFile(path, classify(path.name), "__cluster_metadata")
    assert f.kind.kind == kind
    value, finding = load_checked(f)
    assert (value is None) != (finding is None)
    if finding is not None:
        assert isinstance(finding, Finding) and finding.code in ("F010", "S008")


def _legacy_message(offset: int, body: bytes) -> bytes:
    """A legacy entry with a correct CRC-32 over ``body`` (magic, attributes, ...)."""
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


legacy_bodies = st.tuples(st.sampled_from([0, 1]), st.integers(0, 255),
                          st.binary(max_size=200)).map(
    lambda t: bytes([t[0], t[1]]) + t[2])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(-2, 2**40), legacy_bodies), min_size=1, max_size=4))
def test_legacy_messages_with_intact_crcs_give_records_or_findings(entries):
    data = b"".join(_legacy_message(o, b) for o, b in entries)
    for item in scan_records(data, "f", decode_metadata, decode_control):
        assert isinstance(item, (Finding, tuple))
    try:
        batch = LegacyBatch(data, 0, "f")
    except FormatError:
        return
    with contextlib.suppress(FormatError):
        assert all(isinstance(r, Record) for r in batch.records())


def _v2_batch(count: int, attributes: int, section: bytes, control: bool) -> bytes:
    """A v2 batch around an arbitrary records section, CRC made right."""
    from kmeta.formats.batch import HEADER, HEADER_SIZE, LOG_OVERHEAD

    attrs = attributes | (0x20 if control else 0)
    head = HEADER.pack(0, HEADER_SIZE - LOG_OVERHEAD + len(section), 1, 2, 0, attrs,
                       max(count - 1, 0), 0, 0, -1, -1, -1, count)
    return with_crc(bytearray(head + section))


varints = st.integers(-2**31, 2**31 - 1).map(lambda v: encode_uvarint((v << 1) ^ (v >> 63)))
sections = st.one_of(st.binary(max_size=300),
                     st.lists(st.one_of(varints, st.binary(max_size=8)), max_size=30).map(
                         b"".join))


@settings(max_examples=300, deadline=None)
@given(st.integers(-1, 5), st.integers(0, 7), sections, st.booleans())
def test_batches_with_intact_crcs_reach_the_decoders_without_exceptions(count, codec,
                                                                        section, control):
    data = _v2_batch(count, codec, section, control)
    for item in scan_records(data, "f", decode_metadata, decode_control):
        if isinstance(item, tuple):
            assert isinstance(item[2], Payload)
        else:
            assert isinstance(item, Finding)


@TMP_OK
@given(st.lists(st.tuples(st.integers(-1, 3), sections, st.booleans()), max_size=4),
       st.binary(max_size=40))
def test_any_snapshot_file_gives_an_image_and_findings(tmp_path: Path, batches, tail):
    from kmeta.ops.replay import snapshot_image

    path = tmp_path / "00000000000000000010-0000000001.checkpoint"
    path.write_bytes(b"".join(_v2_batch(c, 0, s, ctl) for c, s, ctl in batches) + tail)
    image, findings = snapshot_image(LogFile(path, classify(path.name), "__cluster_metadata"))
    assert image is not None
    assert all(isinstance(f, Finding) for f in findings)


api_keys = st.sampled_from(sorted(METADATA_MESSAGES))


@settings(max_examples=500, deadline=None)
@given(st.one_of(
    st.binary(max_size=200),
    st.tuples(api_keys, st.integers(0, 20), st.binary(max_size=200)).map(
        lambda t: b"\x01" + encode_uvarint(t[0]) + encode_uvarint(t[1]) + t[2])))
def test_any_metadata_value_decodes_to_a_payload(value):
    p = decode_metadata(value)
    assert isinstance(p, Payload)
    if p.finding is not None:
        assert p.finding[0] in ("F004", "F005")


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.none(), st.binary(max_size=8),
                 st.tuples(st.integers(-1, 2), st.integers(-1, 8)).map(
                     lambda t: struct.pack(">hh", *t))),
       st.one_of(st.none(), st.binary(max_size=120)))
def test_any_control_record_decodes_to_a_payload(key, value):
    assert isinstance(decode_control(key, value), Payload)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 7), st.binary(max_size=400))
def test_any_compressed_section_decompresses_or_raises_format_error(codec, data):
    try:
        out = decompress(codec, data)
    except FormatError:
        return
    assert isinstance(out, bytes)


@pytest.mark.parametrize("value", [b"\xff\xff\xff\xff", b"\x00\x00\x00\x00"],
                         ids=["null-value", "empty-value"])
def test_legacy_wrapper_without_messages_is_a_finding(value: bytes) -> None:
    # magic 0, gzip, empty key, then a null value or one that holds no messages
    data = _legacy_message(0, b"\x00\x01\x00\x00\x00\x00" + value)
    items = list(scan_records(data, "f", decode_metadata, decode_control))
    assert any(isinstance(i, Finding) and i.position == 0 for i in items)


def _tag(tag: int, body: bytes, size_skew: int) -> bytes:
    return encode_uvarint(tag) + encode_uvarint(max(0, len(body) + size_skew)) + body


_int32s = st.one_of(st.sampled_from([[1, 2], [1, 2, 3], [2, 3], [3], [2, 1], []]),
                    st.lists(st.integers(-3, 4), max_size=4))
#: The tagged fields of a PartitionChangeRecord: isr (0) as a compact array (or null),
#: leader (1), and others; sizes sometimes wrong.
_change_tags = st.lists(st.tuples(
    st.sampled_from([0, 0, 1, 1, 2, 5, 9]),
    st.one_of(_int32s.map(lambda xs: encode_uvarint(len(xs) + 1)
                          + b"".join(struct.pack(">i", x) for x in xs)),
              st.just(b"\x00"),
              st.sampled_from([1, 2, 3, -1, -2]).map(lambda x: struct.pack(">i", x)),
              st.integers(-3, 4).map(lambda x: struct.pack(">i", x)),
              st.binary(max_size=6)),
    st.sampled_from([0, 0, 0, -1, 1])), max_size=3)


def _raw_change(version, pid, topic, tags, count_skew, tail) -> bytes:
    return b"\x01\x05" + bytes([version]) + struct.pack(">i", pid) + topic \
        + encode_uvarint(max(0, len(tags) + count_skew)) \
        + b"".join(_tag(t, body, skew) for t, body, skew in tags) + tail


def _edited_change(version, pid, isr, leader, extra, edits) -> bytes:
    from kmeta.formats.payload import encode_metadata

    data = {"partitionId": pid, "topicId": "dG9waWMtb25lLWlkLTAwMQ", "leader": leader}
    if isr is not None:
        data["isr"] = isr
    if extra:
        data[extra] = 1 if extra == "leaderRecoveryState" else [1, 2, 3]
    value = bytearray(encode_metadata("PARTITION_CHANGE_RECORD", version, data))
    for at, byte, how in edits:
        at = 3 + at % (len(value) - 3)
        if how == "s":
            value[at] = byte
        elif how == "i":
            value.insert(at, byte)
        else:
            del value[at]
    return bytes(value)


_change_values = st.one_of(
    st.builds(_raw_change, st.integers(0, 3), st.sampled_from([0, 1, 5, -1]),
              st.sampled_from([b"topic-one-id-001", bytes(16)]), _change_tags,
              st.sampled_from([0, 0, 0, 1, -1]), st.binary(max_size=2)),
    st.builds(_edited_change, st.integers(0, 2), st.sampled_from([0, 1, 5]),
              st.one_of(st.none(), _int32s), st.sampled_from([1, 2, 3, -1, -2, 7]),
              st.sampled_from([None, None, "replicas", "leaderRecoveryState"]),
              st.lists(st.tuples(st.integers(0, 60), st.integers(0, 255),
                                 st.sampled_from("sid")), max_size=2)))


class _Bulk:
    """A watch that takes the records applied in bulk (kmeta report's lifecycles)."""

    def __init__(self) -> None:
        self.told: list = []

    def applied(self, moves: list) -> None:
        self.told.append((moves[0], {n: list(c) for n, c in moves[1].items()}))


@settings(max_examples=800, deadline=None)
@given(value=_change_values)
def test_any_partition_change_value_is_applied_alike_compiled_and_pure(value):
    """The replay process's loop (kmeta.ops.replay.engine.apply_changes_py and the compiled
    apply_changes, which reads such values straight from their bytes): the same records
    taken, the same payload left, the same image, whatever the tagged section holds."""
    from kmeta.core.image import MetadataImage
    from kmeta.formats import payload as payload_module
    from kmeta.formats.compiled import CORE
    from kmeta.ops.replay import engine as replay_module

    if CORE is None:
        pytest.skip("the compiled core is not built")
    t1 = "dG9waWMtb25lLWlkLTAwMQ"
    records = [
        ("REGISTER_BROKER_RECORD", 1, {
            "brokerId": b, "isMigratingZkBroker": False, "incarnationId": t1,
            "brokerEpoch": 1, "endPoints": [], "features": [], "rack": None,
            "fenced": False, "inControlledShutdown": False}) for b in (1, 2, 3)]
    records += [("TOPIC_RECORD", 0, {"name": "orders", "topicId": t1})]
    records += [("PARTITION_RECORD", 0, {
        "partitionId": p, "topicId": t1, "replicas": [1, 2, 3], "isr": [1, 2],
        "removingReplicas": [], "addingReplicas": [], "leader": 1, "leaderEpoch": 0,
        "partitionEpoch": 0}) for p in (0, 1)]
    results = []
    for way in (CORE.apply_changes, None):
        saved = payload_module._DECODED, replay_module._compiled_changes
        payload_module._DECODED, replay_module._compiled_changes = {}, way
        try:
            image = MetadataImage.empty()
            image.apply_all(records)
            replay = replay_module.Replay(image)
            got = replay.apply_quiet([value, value], [7, 8])
            results.append((got, image.to_json(), image.changed_partition))
            # and with a watch that takes them in bulk: the same moves counted
            image = MetadataImage.empty()
            image.apply_all(records)
            replay = replay_module.Replay(image)
            replay.watch = _Bulk()
            got = replay.apply_quiet([value, value], [7, 8])
            results.append((got, image.to_json(), replay.watch.told))
        finally:
            payload_module._DECODED, replay_module._compiled_changes = saved
    assert results[:2] == results[2:]
    assert CORE.metadata_payload(value, {}, payload_module.DECODER) == decode_metadata(value)


@settings(max_examples=300, deadline=None)
@given(heard=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 4_000_000)), max_size=60),
       start=st.integers(-100_000, 4_100_000), length=st.integers(0, 4_000_000))
def test_the_silence_of_a_span_is_the_sum_of_its_overlaps(heard, start, length):
    """Lifecycles.silent_ms looks up only the silences that can overlap the span (by
    start, within the longest's length): the plain sum over every silence, whatever order
    the log's clock put them in (it may go back)."""
    from kmeta.core.image import MetadataImage
    from kmeta.core.lifecycle import Lifecycles

    lives = Lifecycles(MetadataImage.empty(), fenced_longer_than_ms=0)
    offset = 0
    for step, timestamp in heard:
        offset += step + 1
        lives._heard_at(offset, timestamp)
    end = start + length
    assert lives.silent_ms(start, end) == sum(
        max(0, min(end, s.end) - max(start, s.start)) for s in lives.silences)


_CHECKPOINT_LINE = st.tuples(
    st.sampled_from(["t", "orders.0", "__consumer_offsets", "a-b_c", "é", "t t", ""]),
    st.sampled_from(["0", "7", "+1", "-1", "2147483647", "2147483648", "0012", "x"]),
    st.sampled_from(["0", "5", "9223372036854775807", "9223372036854775808", "-3", "01"]),
    st.sampled_from([" ", "  ", "\t"]), st.sampled_from(["\n", "\r\n", ""]))


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["0", "00", "1", "+0"]), st.integers(-1, 5),
       st.lists(_CHECKPOINT_LINE, max_size=5), st.booleans())
def test_the_offset_checkpoint_fast_path_reads_as_the_line_reader(version, count, lines,
                                                                  cut):
    """parse_offset_checkpoint's one-expression reading of the form Kafka writes
    (_plain_offset_checkpoint) gives what the line-by-line reading gives, or steps aside."""
    from kmeta.formats.textfiles import checkpoints

    body = "".join(f"{t}{sep}{p}{sep}{o}{end or chr(10)}" for t, p, o, sep, end in lines)
    data = f"{version}\n{count if count >= 0 else len(lines)}\n{body}".encode()
    if cut and data:
        data = data[:-1]
    fast = checkpoints._plain_offset_checkpoint(data)
    try:
        want = _slow_offset_checkpoint(data)
    except FormatError:
        assert fast is None
        return
    if fast is not None:
        assert fast == want


def test_the_offset_checkpoint_fast_path_takes_what_kafka_writes():
    from kmeta.formats.textfiles import checkpoints

    data = b"0\n3\nt 0 5\n__consumer_offsets 49 9223372036854775807\na-b_c.d 2147483647 0\n"
    fast = checkpoints._plain_offset_checkpoint(data)
    assert fast is not None and fast == _slow_offset_checkpoint(data)
    assert [e.partition for e in fast.entries] == [0, 49, 2147483647]


def _slow_offset_checkpoint(data: bytes):  # noqa: ANN202
    """parse_offset_checkpoint with its fast path switched off."""
    from kmeta.formats.textfiles import checkpoints

    real = checkpoints._plain_offset_checkpoint
    checkpoints._plain_offset_checkpoint = lambda _data: None
    try:
        return checkpoints.parse_offset_checkpoint(data)
    finally:
        checkpoints._plain_offset_checkpoint = real
