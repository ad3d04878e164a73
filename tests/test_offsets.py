"""``__consumer_offsets`` and ``__transaction_state``: the coordinators' records, decoded
from the schema declarations of ``kmeta.formats.coordinator`` and checked on every real
internal-topic partition under ``KMETA_REAL_DATA``."""

from __future__ import annotations

import collections
import json
import struct
from pathlib import Path

import pytest
from clirun import run

from kmeta.formats.coordinator import OFFSETS_KEYS, decode_offsets
from kmeta.formats.schema import message_construct


def _framed(version: int, body: bytes) -> bytes:
    return struct.pack(">h", version) + body


def _key(version: int, **data) -> bytes:
    _, schema, _ = OFFSETS_KEYS[version]
    return _framed(version, message_construct(schema, version).build(data))


def _value(key_version: int, version: int, **data) -> bytes:
    _, _, schema = OFFSETS_KEYS[key_version]
    return _framed(version, message_construct(schema, version).build(data))


@pytest.mark.parametrize("version", range(5))
def test_offset_commit_round_trip(version: int) -> None:
    value = {"offset": 42, "metadata": "", "commitTimestamp": 1700000000000}
    if version >= 3:
        value["leaderEpoch"] = 7
    if version == 1:
        value["expireTimestamp"] = 1700086400000
    key = _key(1, group="g", topic="orders", partition=3)
    p = decode_offsets(key, _value(1, version, **value))
    assert p.finding is None and (p.type, p.version) == ("OFFSET_COMMIT", version)
    assert p.data["key"] == {"group": "g", "topic": "orders", "partition": 3}
    assert p.data["value"] == value


@pytest.mark.parametrize("version", range(5))
def test_group_metadata_round_trip(version: int) -> None:
    member = {"memberId": "m-1", "clientId": "c", "clientHost": "/10.0.0.1",
              "sessionTimeout": 45000, "subscription": b"\x00\x01", "assignment": b""}
    if version >= 1:
        member["rebalanceTimeout"] = 300000
    if version >= 3:
        member["groupInstanceId"] = None
    value = {"protocolType": "consumer", "generation": 5, "protocol": "range",
             "leader": "m-1", "members": [member]}
    if version >= 2:
        value["currentStateTimestamp"] = 1700000000000
    p = decode_offsets(_key(2, group="g"), _value(2, version, **value))
    assert p.finding is None and (p.type, p.version) == ("GROUP_METADATA", version)
    assert p.data == {"key": {"group": "g"}, "value": value}


def test_tombstones_and_what_does_not_decode() -> None:
    key = _key(2, group="gone")
    assert decode_offsets(key, None).data == {"key": {"group": "gone"}, "value": None}
    assert decode_offsets(b"\x00", None).finding[0] == "F012"
    newer = decode_offsets(_framed(99, b"\x00\x01g"), b"\x00\x00")
    assert newer.finding[0] == "F013" and newer.type == "UNKNOWN(99)"
    assert decode_offsets(key, _framed(9, b"")).finding[0] == "F013"
    short = decode_offsets(key, _framed(3, b"\x00\x08consumer"))
    assert short.finding[0] == "F012" and short.data["key"] == {"group": "gone"}
    assert decode_offsets(_framed(1, b"\x00\x01g"), None).finding[0] == "F012"


# The counts of shared/real/README.md, each partition's records by (type, value version).
REAL = {
    # 1,565 records = 1,521 OffsetCommit v3 + 44 GroupMetadata v3, 8 of them tombstones
    "kafka25-zk-offsets": {("OFFSET_COMMIT", 3): 1521, ("GROUP_METADATA", 3): 36,
                           ("GROUP_METADATA", None): 8},
    # 426 = 412 OffsetCommit v4 + 14 GroupMetadata v3
    "kraft41-offsets": {("OFFSET_COMMIT", 4): 412, ("GROUP_METADATA", 3): 14},
    # 172: GroupMetadata v2 and v3 side by side, 13 OffsetCommit v3, 18 tombstones
    "cp51-connect-cleaned": {("GROUP_METADATA", 2): 19, ("GROUP_METADATA", 3): 123,
                             ("GROUP_METADATA", None): 17, ("OFFSET_COMMIT", 3): 12,
                             ("OFFSET_COMMIT", None): 1},
    # three nodes; node 2 holds 954 of them, 942 OffsetCommit v3
    "kraft32-three": {("OFFSET_COMMIT", 3): 942, ("GROUP_METADATA", 3): 15},
    # 89 GroupMetadata v3, 1 tombstone
    "kraft-ksql-txn": {("GROUP_METADATA", 3): 88, ("GROUP_METADATA", None): 1},
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_consumer_offsets_decode_whole(name: str, real_data: Path) -> None:
    out = run("dump", "--json", real_data / name, env={})
    counts: collections.Counter = collections.Counter()
    problems = []
    for line in out.stdout.splitlines():
        o = json.loads(line)
        if "__consumer_offsets" not in (o.get("file") or ""):
            continue
        if o["kind"] == "record":
            counts[o["type"], o["version"]] += 1
        elif o["kind"] == "finding" and o["code"] != "S006":  # S006: empty segments
            problems.append(o)
    assert problems == []
    assert dict(counts) == REAL[name]


def test_raw_still_chosen_by_hand(real_data: Path) -> None:
    out = run("dump", "--json", "--decoder", "raw", real_data / "kraft41-offsets", env={})
    kinds = {json.loads(line).get("type") for line in out.stdout.splitlines()
             if "__consumer_offsets" in line and '"kind":"record"' in line}
    assert kinds == {"RAW"}


# ---------------------------------------------------------------- __transaction_state

@pytest.mark.parametrize("version", [0, 1])
def test_transaction_log_round_trip(version: int) -> None:
    from kmeta.formats.coordinator import TRANSACTION_KEYS, decode_transactions

    _, key_schema, value_schema = TRANSACTION_KEYS[0]
    value = {"producerId": 1001, "producerEpoch": 3, "transactionTimeoutMs": 60000,
             "transactionStatus": 1,
             "transactionPartitions": [{"topic": "orders", "partitionIds": [0, 2]}],
             "transactionLastUpdateTimestampMs": 1700000000500,
             "transactionStartTimestampMs": 1700000000000}
    if version == 1:  # tagged: left out when equal to their defaults
        value.update(previousProducerId=1000, clientTransactionVersion=2)
    key = _framed(0, message_construct(key_schema, 0).build({"transactionalId": "t-1"}))
    p = decode_transactions(key, _framed(version, message_construct(value_schema, version)
                                         .build(value)))
    assert p.finding is None and (p.type, p.version) == ("TRANSACTION_LOG", version)
    assert p.data == {"key": {"transactionalId": "t-1"}, "value": value}
    assert decode_transactions(key, None).data["value"] is None
    assert decode_transactions(_framed(1, b""), None).finding[0] == "F013"


def test_real_transaction_state(real_data: Path) -> None:
    # kraft-ksql-txn's __transaction_state-44: transactional id default_ going Empty (0),
    # Ongoing (1), PrepareCommit (2), CompleteCommit (4), TransactionLogValue v0
    part = next((real_data / "kraft-ksql-txn").glob("*/__transaction_state-44"))
    out = run("dump", "--json", part, env={})
    objects = [json.loads(line) for line in out.stdout.splitlines()]
    records = [o for o in objects if o["kind"] == "record"]
    assert [(o["type"], o["version"], o["data"]["value"]["transactionStatus"])
            for o in records] == [("TRANSACTION_LOG", 0, s) for s in (0, 1, 2, 4)]
    assert {o["data"]["key"]["transactionalId"] for o in records} == {"default_"}
    assert not [o for o in objects if o["kind"] == "finding"]


def test_every_real_transaction_state_partition(real_data: Path) -> None:
    # kraft-ksql-txn holds __transaction_state-0..49: 4 records in all (partition 44),
    # every one decoded, no finding but the empty segments' S006
    out = run("dump", "--json", real_data / "kraft-ksql-txn", env={})
    objects = [json.loads(line) for line in out.stdout.splitlines()]
    mine = [o for o in objects if "/__transaction_state-" in (o.get("file") or "")]
    segments = [o for o in mine if o["kind"] == "file" and o["file_kind"] == "segment"]
    assert len(segments) == 50 and {o["decoder"] for o in segments} == {"transactions"}
    assert [o["type"] for o in mine if o["kind"] == "record"] == ["TRANSACTION_LOG"] * 4
    assert {o["code"] for o in mine if o["kind"] == "finding"} <= {"S006"}
