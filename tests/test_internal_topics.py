"""The new group coordinator's records (KIP-848 consumer groups, share and streams groups),
``__share_group_state`` and ``__remote_log_metadata``: decoded from kmeta's declarations,
their framing, findings, and the partitioner that places a user partition's remote log
metadata (Kafka's own murmur2 test vectors)."""

from __future__ import annotations

import struct

import pytest

from kmeta.formats.coordinator import (
    OFFSETS_KEYS,
    SHARE_STATE_KEYS,
    decode_offsets,
    decode_share_group_state,
    encode_coordinator,
)
from kmeta.formats.decoders import DECODERS, TOPIC_DECODERS, default_decoder, record_decoder
from kmeta.formats.payload import encode_framed
from kmeta.formats.remote_log_metadata import (
    REMOTE_LOG_MESSAGES,
    _java_hash,
    _long_hash,
    _murmur2,
    decode_remote_log_metadata,
    metadata_partition,
    valid_segment_transition,
)

TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"  # Kafka's base64 form of 00000000-...-0001


def test_every_key_type_has_its_id() -> None:
    # The new coordinator's key schemas are declared at their record type id.
    assert sorted(OFFSETS_KEYS) == list(range(24))
    for type_id, (name, key, _) in OFFSETS_KEYS.items():
        if type_id >= 3:
            assert key.supports(type_id) and not key.supports(type_id - 1), name
            assert key.name.removesuffix("Key") and name == key.type_name.removesuffix("_KEY")


def test_consumer_group_member_with_classic_metadata() -> None:
    value = {"instanceId": None, "rackId": "r1", "clientId": "c", "clientHost": "/10.0.0.1",
             "subscribedTopicNames": ["orders"], "subscribedTopicRegex": None,
             "rebalanceTimeoutMs": 45000, "serverAssignor": "uniform",
             "classicMemberMetadata": {"sessionTimeoutMs": 10000, "supportedProtocols": [
                 {"name": "range", "metadata": b"\x00\x01"}]}}
    key, v = encode_coordinator(OFFSETS_KEYS, 5, {"groupId": "g", "memberId": "m-1"}, 0, value)
    p = decode_offsets(key, v)
    assert p.finding is None and (p.type, p.version) == ("CONSUMER_GROUP_MEMBER_METADATA", 0)
    assert p.data["key"] == {"groupId": "g", "memberId": "m-1"}
    assert p.data["value"]["classicMemberMetadata"]["sessionTimeoutMs"] == 10000
    # a member leaving: the tombstone of its key
    gone = decode_offsets(key, None)
    assert gone.finding is None and gone.data["value"] is None


def test_share_group_state_snapshot_and_update() -> None:
    batches = [{"firstOffset": 0, "lastOffset": 9, "deliveryState": 2, "deliveryCount": 1}]
    key, v = encode_coordinator(SHARE_STATE_KEYS, 0, {
        "groupId": "sg", "topicId": TOPIC_ID, "partition": 3}, 0, {
        "snapshotEpoch": 1, "stateEpoch": 0, "leaderEpoch": 5, "startOffset": 0,
        "createTimestamp": 1700000000000, "writeTimestamp": 1700000000500,
        "stateBatches": batches})
    p = decode_share_group_state(key, v)
    assert p.finding is None and p.type == "SHARE_SNAPSHOT"
    assert p.data["value"]["stateBatches"] == batches
    key, v = encode_coordinator(SHARE_STATE_KEYS, 1, {
        "groupId": "sg", "topicId": TOPIC_ID, "partition": 3}, 0, {
        "snapshotEpoch": 1, "leaderEpoch": 5, "startOffset": 10, "stateBatches": []})
    assert decode_share_group_state(key, v).type == "SHARE_UPDATE"
    assert decode_share_group_state(struct.pack(">h", 7), None).finding[0] == "F013"


def _segment(state: int) -> bytes:
    return encode_framed(REMOTE_LOG_MESSAGES[0], 0, {
        "remoteLogSegmentId": {"topicIdPartition": {"name": "orders", "id": TOPIC_ID,
                                                    "partition": 0},
                               "id": "AAAAAAAAAAAAAAAAAAAAAg"},
        "startOffset": 0, "endOffset": 2, "brokerId": 1, "maxTimestampMs": 1, "eventTimestampMs": 2,
        "segmentLeaderEpochs": [{"leaderEpoch": 0, "offset": 0}], "segmentSizeInBytes": 300,
        "customMetadata": None, "remoteLogSegmentState": state})


def test_remote_log_metadata_framing_and_findings() -> None:
    p = decode_remote_log_metadata(None, _segment(0))
    assert p.finding is None and p.type == "REMOTE_LOG_SEGMENT_METADATA_RECORD"
    assert p.data["remoteLogSegmentId"]["topicIdPartition"]["name"] == "orders"
    assert decode_remote_log_metadata(None, b"\x01\x09\x00").finding[0] == "F013"
    assert decode_remote_log_metadata(None, _segment(1)[:-3]).finding[0] == "F012"
    assert decode_remote_log_metadata(None, b"\x00\x00\x00").finding[0] == "F012"
    assert decode_remote_log_metadata(None, None).finding[0] == "F012"


def test_segment_state_transitions_are_kafkas() -> None:
    # RemoteLogSegmentState.isValidTransition
    assert valid_segment_transition(None, 0) and not valid_segment_transition(None, 1)
    assert valid_segment_transition(0, 1) and valid_segment_transition(0, 2)
    assert valid_segment_transition(1, 2) and not valid_segment_transition(1, 0)
    assert valid_segment_transition(2, 3) and not valid_segment_transition(3, 2)
    assert all(valid_segment_transition(s, s) for s in range(4))


@pytest.mark.parametrize(("data", "expected"), [
    # UtilsTest.testMurmur2 in apache/kafka
    (b"21", -973932308), (b"foobar", -790332482), (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971), (b"abc", 479470107),
])
def test_murmur2_is_kafkas(data: bytes, expected: int) -> None:
    assert _murmur2(data) == expected


def test_partitioner_hash_is_javas_objects_hash() -> None:
    # Objects.hash(uuid.getLeastSignificantBits(), uuid.getMostSignificantBits(), partition)
    # as Java 17's jshell prints it for these two.
    import uuid

    def objects_hash(text: str, partition: int) -> int:
        u = uuid.UUID(text).int
        h = _java_hash((_long_hash(u & (2**64 - 1)), _long_hash(u >> 64), partition))
        return h - (1 << 32) if h >= 1 << 31 else h

    assert objects_hash("5c0e1a2b-3d4f-4a6b-8c9d-0e1f2a3b4c5d", 7) == 1560798696
    assert objects_hash("ffffffff-ffff-ffff-8000-000000000001", 0) == -2147452896
    parts = {metadata_partition(TOPIC_ID, p, 50) for p in range(200)}
    assert parts <= set(range(50)) and len(parts) > 40


def test_every_topic_decoder_is_a_decoder() -> None:
    assert set(TOPIC_DECODERS.values()) <= set(DECODERS)
    assert default_decoder("__remote_log_metadata", False) == "remote-log-metadata"
    assert default_decoder("orders", False) == "raw" and default_decoder(None, True) == "metadata"
    for name in DECODERS:
        assert callable(record_decoder(name))
    with pytest.raises(KeyError):
        record_decoder("nope")


def _snapshot_entry(start: int, end: int) -> bytes:
    body = encode_framed(REMOTE_LOG_MESSAGES[3], 0, {
        "segmentId": "AAAAAAAAAAAAAAAAAAAAAw", "startOffset": start, "endOffset": end,
        "brokerId": 1, "maxTimestampMs": 5, "eventTimestampMs": 6,
        "segmentLeaderEpochs": [{"leaderEpoch": 0, "offset": start}],
        "segmentSizeInBytes": 100, "customMetadata": None, "remoteLogSegmentState": 1})
    return struct.pack(">i", len(body)) + body


def test_remote_log_snapshot_file(tmp_path) -> None:
    from kmeta.errors import FormatError
    from kmeta.formats.filenames import classify
    from kmeta.formats.remote_log_metadata import parse_remote_log_snapshot

    assert classify("remote_log_snapshot").kind == "remote-log-snapshot"
    data = struct.pack(">hiqi", 0, 12, 345, 2) + _snapshot_entry(0, 9) + _snapshot_entry(10, 19)
    snap = parse_remote_log_snapshot(data)
    assert (snap.metadata_partition, snap.metadata_partition_offset) == (12, 345)
    assert [e["endOffset"] for e in snap.entries] == [9, 19]
    assert parse_remote_log_snapshot(b"").entries == ()  # Kafka's empty placeholder
    for bad in (data[:10], struct.pack(">hiqi", 1, 0, 0, 0), data[:-1]):
        with pytest.raises(FormatError):
            parse_remote_log_snapshot(bad)
    # dump reads it in a partition dir, and says what is wrong with a broken one
    from clirun import run
    part = tmp_path / "orders-0"
    part.mkdir()
    (part / "remote_log_snapshot").write_bytes(data)
    out = run("dump", "--json", part, env={})
    obj = [__import__("json").loads(line) for line in out.stdout.splitlines()][0]
    assert obj["file_kind"] == "remote-log-snapshot"
    assert obj["content"]["metadata_partition_offset"] == 345
    (part / "remote_log_snapshot").write_bytes(data[:-1])
    out = run("dump", part, env={})
    assert "F010" in out.stdout + out.stderr
