"""Writing KRaft snapshots from the image: image_records (core) and write_snapshot_at (ops).

The promise tested here: a snapshot kmeta writes loads back as the very image it was
written from (equal digest), its batches pass an independent reader's CRC check
(kafka-python), and its records are those Kafka's own controller writes (the real
data-store snapshots are rebuilt record for record).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from conftest import HEALTHY, HEALTHY_META
from kafka.record.memory_records import MemoryRecords

from kmeta.core.image import MIGRATING_DIR, MetadataImage
from kmeta.core.image_records import (
    ImageNotWritable,
    ImageRecord,
    image_records,
)
from kmeta.errors import UnreadableInput, UsageError
from kmeta.formats.payload import decode_control, decode_metadata, encode_metadata
from kmeta.ops.replay import build_image, snapshot_image
from kmeta.ops.snapshot import SnapshotWritten, write_snapshot_at
from kmeta.render.snapshot import snapshot_json, snapshot_lines
from kmeta.storage.discover import LogFile, discover
from kmeta.storage.segments import batch_records, mapped, scan_batches, scan_records
from kmeta.storage.writer import write_snapshot

LDI_POC_DIGEST = "93850e83002a9707c87f2d0557a2c017"  # as tests/test_image.py records it

ALL_IMAGE_TYPES = {
    "FEATURE_LEVEL_RECORD", "ZK_MIGRATION_STATE_RECORD", "REGISTER_BROKER_RECORD",
    "REGISTER_CONTROLLER_RECORD", "TOPIC_RECORD", "PARTITION_RECORD", "CONFIG_RECORD",
    "CLIENT_QUOTA_RECORD", "PRODUCER_IDS_RECORD", "ACCESS_CONTROL_ENTRY_RECORD",
    "USER_SCRAM_CREDENTIAL_RECORD", "DELEGATION_TOKEN_RECORD",
}
SECTION_ORDER = [
    "FEATURE_LEVEL_RECORD", "ZK_MIGRATION_STATE_RECORD", "REGISTER_BROKER_RECORD",
    "REGISTER_CONTROLLER_RECORD", "TOPIC_RECORD", "CONFIG_RECORD", "CLIENT_QUOTA_RECORD",
    "PRODUCER_IDS_RECORD", "ACCESS_CONTROL_ENTRY_RECORD", "USER_SCRAM_CREDENTIAL_RECORD",
    "DELEGATION_TOKEN_RECORD",
]


# ------------------------------------------------------------------------- helpers


def replay_records(records: list[ImageRecord]) -> MetadataImage:
    """Replay through the wire format: encode, decode, apply; no problem allowed."""
    image = MetadataImage.empty()
    for t, v, d in records:
        payload = decode_metadata(encode_metadata(t, v, d))
        assert payload.finding is None, (t, v, payload.finding)
        assert (payload.type, payload.version) == (t, v)
        assert image.apply(payload.type, payload.version, payload.data) == [], (t, d)
    return image


def assert_round_trip(image: MetadataImage) -> list[ImageRecord]:
    records = image_records(image)
    assert replay_records(records).digest() == image.digest()
    return records


def file_records(path: Path) -> tuple[list, list[bytes]]:
    """(control batches as [(type, data)], metadata record values) of a snapshot file."""
    controls, values = [], []
    with mapped(path) as buf:
        for b in scan_batches(buf, str(path)):
            assert not hasattr(b, "code"), f"finding in {path}: {b}"
            recs, problems = batch_records(b)
            assert problems == []
            if b.is_control:
                controls.append([(p.type, p.data) for p in
                                 (decode_control(r.key, r.value) for r in recs)])
            else:
                values += [bytes(r.value) for r in recs]
    return controls, values


def peer_check(path: Path, end_offset: int, epoch: int) -> int:
    """kafka-python reads every batch: CRCs valid, offsets from 0 without a gap, every
    batch at the snapshot's epoch, control batches first and last.  Returns the records."""
    records = MemoryRecords(path.read_bytes())
    batches, n = [], 0
    while (batch := records.next_batch()) is not None:
        assert batch.validate_crc(), f"bad CRC at offset {batch.base_offset}"
        assert batch.base_offset == n
        assert batch.leader_epoch == epoch
        count = sum(1 for _ in batch)
        assert count == batch.last_offset_delta + 1
        n += count
        batches.append(batch.is_control_batch)
    assert batches[0] and batches[-1] and not any(batches[1:-1])
    assert len(batches) >= 2
    return n


def healthy_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "healthy"
    shutil.copytree(HEALTHY, dst)
    return dst


def full_replay_digest(path: Path, at: int) -> str:
    """The image at ``at`` replayed from offset 0, ignoring every snapshot."""
    return build_image(path, at=at, use_snapshots=False).image.digest()


def metadata_offsets(path: Path, type_name: str) -> list[int]:
    out = []
    for seg in sorted(path.glob("*.log")):
        with mapped(seg) as buf:
            for item in scan_records(buf, str(seg), decode_metadata, decode_control):
                if isinstance(item, tuple) and item[2].type == type_name:
                    out.append(item[1].offset)
    return out


def healthy_batches() -> list[tuple[int, int, int, bool]]:
    """(base offset, last offset, epoch, is control) of every batch of the healthy log."""
    out = []
    for seg in sorted(HEALTHY_META.glob("*.log")):
        with mapped(seg) as buf:
            for b in scan_batches(buf, str(seg)):
                out.append((b.base_offset, b.last_offset, b.leader_epoch, b.is_control))
    return out


# ------------------------------------------------------------------ image_records (core)


def test_fixture_image_has_every_section() -> None:
    image = build_image(HEALTHY).image
    assert image.brokers and image.controllers and image.topics and image.configs
    assert image.acls and image.scram and image.delegation_tokens and image.client_quotas
    assert image.next_producer_id is not None and image.zk_migration_state is not None
    assert len(image.features) > 1
    records = assert_round_trip(image)
    assert {r.type for r in records} == ALL_IMAGE_TYPES


def test_records_come_in_kafka_snapshot_order() -> None:
    image = build_image(HEALTHY).image
    records = image_records(image)
    assert records[0] == ("FEATURE_LEVEL_RECORD", 0,
                          {"name": "metadata.version", "featureLevel": 33})
    # Sections in MetadataImage.write order; partitions right after their topic.
    sections = [r.type for r in records if r.type != "PARTITION_RECORD"]
    firsts = list(dict.fromkeys(sections))
    assert firsts == SECTION_ORDER
    assert sections == sorted(sections, key=SECTION_ORDER.index)
    current = None
    for r in records:
        if r.type == "TOPIC_RECORD":
            current = r.data["topicId"]
        elif r.type == "PARTITION_RECORD":
            assert r.data["topicId"] == current


def test_round_trip_all_along_the_healthy_log() -> None:
    """Pure: replay the whole log from 0 and round-trip the image every 20 records."""
    image = MetadataImage.empty()
    checked = applied = 0
    for seg in sorted(HEALTHY_META.glob("*.log")):
        with mapped(seg) as buf:
            for item in scan_records(buf, str(seg), decode_metadata, decode_control):
                batch, r, p = item
                if batch.is_control or p.type == "NO_OP_RECORD":
                    continue
                assert image.apply(p.type, p.version, p.data, r.offset) == []
                applied += 1
                if applied % 20 == 0 and not image.in_transaction:
                    assert_round_trip(image)
                    checked += 1
    assert checked > 20


def test_record_versions_follow_metadata_version() -> None:
    from kmeta.core.versions import written_version

    assert [written_version("REGISTER_BROKER_RECORD", mv) for mv in (4, 7, 8, 17, 21, 30)] \
        == [0, 1, 2, 3, 3, 4]
    assert [written_version("PARTITION_RECORD", mv) for mv in (4, 16, 17, 22, 23)] == \
        [0, 0, 1, 1, 2]


def _small_image(level: int | None) -> MetadataImage:
    image = MetadataImage.empty()
    recs: list[tuple] = []
    if level is not None:
        recs.append(("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version",
                                                 "featureLevel": level}))
    recs += [
        ("REGISTER_BROKER_RECORD", 0, {
            "brokerId": 1, "incarnationId": "AAAAAAAAAAAAAAAAAAAAAQ", "brokerEpoch": 10,
            "endPoints": [{"name": "SSL", "host": "h", "port": 9093, "securityProtocol": 1},
                          {"name": "PLAINTEXT", "host": "h", "port": 9092,
                           "securityProtocol": 0}],
            "features": [{"name": "metadata.version", "minSupportedVersion": 1,
                          "maxSupportedVersion": 21}],
            "rack": None, "fenced": False}),
        ("TOPIC_RECORD", 0, {"name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAg"}),
        ("PARTITION_RECORD", 0, {"partitionId": 0, "topicId": "AAAAAAAAAAAAAAAAAAAAAg",
                                 "replicas": [1], "isr": [1], "removingReplicas": [],
                                 "addingReplicas": [], "leader": 1, "leaderEpoch": 3,
                                 "partitionEpoch": 4}),
        ("CONFIG_RECORD", 0, {"resourceType": 4, "resourceName": "",
                              "name": "listener.name.ssl.ssl.keystore.password",
                              "value": "hunter2"}),
        ("CONFIG_RECORD", 0, {"resourceType": 2, "resourceName": "t",
                              "name": "retention.ms", "value": "1000"}),
        ("CLIENT_QUOTA_RECORD", 0, {"entity": [{"entityType": "user", "entityName": None},
                                               {"entityType": "client-id",
                                                "entityName": "a"}],
                                    "key": "producer_byte_rate", "value": 1.5,
                                    "remove": False}),
        ("CLIENT_QUOTA_RECORD", 0, {"entity": [{"entityType": "user", "entityName": "u"}],
                                    "key": "request_percentage", "value": 0.1,
                                    "remove": False}),
        ("PRODUCER_IDS_RECORD", 0, {"brokerId": 1, "brokerEpoch": 10,
                                    "nextProducerId": 5000}),
        ("USER_SCRAM_CREDENTIAL_RECORD", 0, {"name": "u", "mechanism": 1, "salt": b"s" * 16,
                                             "storedKey": b"k" * 32, "serverKey": b"v" * 32,
                                             "iterations": 4096}),
        ("DELEGATION_TOKEN_RECORD", 0, {"owner": "User:u", "requester": "User:u",
                                        "renewers": [], "issueTimestamp": 1,
                                        "maxTimestamp": 3, "expirationTimestamp": 2,
                                        "tokenId": "tok"}),
    ]
    for rec in recs:
        assert image.apply(*rec) == []
    return image


@pytest.mark.parametrize("level", [None, 4, 7, 14, 21, 25])
def test_small_image_round_trips_at_any_metadata_version(level: int | None) -> None:
    image = _small_image(level)
    records = assert_round_trip(image)
    cfg = [r.data for r in records if r.type == "CONFIG_RECORD"]
    # The secret goes back in the clear (the image digest holds only its fingerprint).
    assert {"resourceType": 4, "resourceName": "",
            "name": "listener.name.ssl.ssl.keystore.password", "value": "hunter2"} in cfg
    pids = [r.data for r in records if r.type == "PRODUCER_IDS_RECORD"]
    assert pids == [{"brokerId": -1, "brokerEpoch": -1, "nextProducerId": 5000}]
    if level is None:
        assert records[0].type == "REGISTER_BROKER_RECORD"


def test_versions_rise_for_state_the_metadata_version_cannot_hold() -> None:
    image = _small_image(7)  # 3.3-IV3: RegisterBroker v1, Partition v0
    p = image.topics["AAAAAAAAAAAAAAAAAAAAAg"]["partitions"][0]
    p["directories"] = ["AAAAAAAAAAAAAAAAAAAAAw"]
    p["eligibleLeaderReplicas"] = [1]
    b = image.brokers[1]
    b["isMigratingZkBroker"] = True
    b["logDirs"] = ["AAAAAAAAAAAAAAAAAAAAAw"]
    records = assert_round_trip(image)
    versions = {r.type: r.version for r in records}
    assert versions["PARTITION_RECORD"] == 2
    assert versions["REGISTER_BROKER_RECORD"] == 3
    p["directories"] = [MIGRATING_DIR]
    p["eligibleLeaderReplicas"] = []
    b["logDirs"] = []
    b["isMigratingZkBroker"] = False
    versions = {r.type: r.version for r in assert_round_trip(image)}
    assert versions["PARTITION_RECORD"] == 0 and versions["REGISTER_BROKER_RECORD"] == 1


def test_image_in_a_transaction_is_not_writable() -> None:
    image = _small_image(14)
    image.apply("BEGIN_TRANSACTION_RECORD", 0, {"name": "t"})
    with pytest.raises(ImageNotWritable, match="transaction"):
        image_records(image)


def test_secret_known_only_by_fingerprint_is_not_writable() -> None:
    image = _small_image(14)
    image.secrets.clear()
    with pytest.raises(ImageNotWritable, match="fingerprint"):
        image_records(image)


def test_data_store_snapshots_are_rebuilt_record_for_record(real_data: Path,
                                                            tmp_path: Path) -> None:
    """Kafka 3.9's own snapshots: kmeta writes the same record values (only the order of
    topics, a hash map's in Kafka, may differ), and its file loads as the same image."""
    snaps = sorted((real_data / "data-store" / "kafka-data" / "__cluster_metadata-0")
                   .glob("*.checkpoint"))
    assert len(snaps) == 7
    for i, snap in enumerate(snaps):
        kind = discover([snap]).files[0].kind
        image, findings = snapshot_image(LogFile(snap, kind))
        assert findings == []
        records = assert_round_trip(image)
        values = [encode_metadata(*r) for r in records]
        controls, theirs = file_records(snap)
        assert Counter(values) == Counter(theirs), snap.name
        header = dict(controls[0])["SNAPSHOT_HEADER"]
        out = tmp_path / str(i)
        out.mkdir()
        written = write_snapshot(out, kind.base_offset, kind.epoch, values,
                                 last_contained_log_timestamp=header[
                                     "lastContainedLogTimestamp"],
                                 timestamp=1, durable=False)
        assert written.name == snap.name
        again, findings = snapshot_image(LogFile(written, kind))
        assert findings == [] and again.digest() == image.digest()
        assert peer_check(written, kind.base_offset, kind.epoch) == len(values) + 2


# ------------------------------------------------------------- write_snapshot_at (ops)


def _check_written(result: SnapshotWritten, source: Path, at: int) -> None:
    assert result.end_offset == at
    kind = discover([result.path]).files[0].kind
    assert (kind.kind, kind.base_offset, kind.epoch) == ("kraft-snapshot", at, result.epoch)
    image, findings = snapshot_image(LogFile(result.path, kind))
    assert findings == []
    assert image.digest() == result.digest == build_image(source, at=at) \
        .image.digest()
    assert peer_check(result.path, at, result.epoch) == result.record_count + \
        (4 if result.kraft_version else 2)  # header, KRaftVersion, Voters; footer
    controls, values = file_records(result.path)
    assert len(values) == result.record_count
    assert sum(result.records.values()) == result.record_count
    header = dict(controls[0])
    assert header["SNAPSHOT_HEADER"]["lastContainedLogTimestamp"] == \
        result.last_contained_log_timestamp
    assert ("KRAFT_VERSION" in header) == bool(result.kraft_version)
    assert controls[-1] == [("SNAPSHOT_FOOTER", {"version": 0})]


def test_healthy_at_several_offsets(tmp_path: Path) -> None:
    batches = healthy_batches()
    log_end = batches[-1][1] + 1
    epoch_of = {o: e for base, last, e, _ in batches for o in range(base, last + 1)}
    multi = next(b for b in batches if b[1] > b[0] and not b[3])
    mid = multi[0] + 1  # inside a batch: allowed, with a note
    snaps = sorted(int(p.name[:20]) for p in HEALTHY_META.glob("*.checkpoint"))
    offsets = [1, snaps[0], snaps[0] + 1, mid, 7000, snaps[-1] + 3, log_end]
    for at in offsets:
        out = tmp_path / f"at{at}"
        out.mkdir()
        result = write_snapshot_at(HEALTHY, out, at=at if at != log_end else None,
                                   timestamp_ms=1_700_000_000_000, durable=False)
        assert result.path.parent == out
        assert result.epoch == epoch_of[at - 1]
        _check_written(result, HEALTHY, at)
        assert result.digest == full_replay_digest(HEALTHY, at), at
        assert (at == mid) == any("inside the batch" in n for n in result.notes), at
        assert result.findings == []
    assert result.end_offset == log_end
    assert {t for t in result.records} == ALL_IMAGE_TYPES
    assert result.kraft_version == 1 and result.voters == [1, 2, 3]


def test_kraft_version_and_voters_follow_the_log(tmp_path: Path) -> None:
    """Before the kraft.version upgrade: no KRaftVersion or Voters records; after it, the
    voter set in force at the offset (controller 9 joined, later left)."""
    offsets = {}
    for seg in sorted(HEALTHY_META.glob("*.log")):
        with mapped(seg) as buf:
            for item in scan_records(buf, str(seg), decode_metadata, decode_control):
                batch, r, p = item
                if p.type in ("KRAFT_VERSION", "KRAFT_VOTERS"):
                    offsets.setdefault(p.type, []).append((r.offset, p.data))
    upgrade = offsets["KRAFT_VERSION"][0][0]
    voter_sets = offsets["KRAFT_VOTERS"]
    nine = next(o for o, d in voter_sets if 9 in [v["voterId"] for v in d["voters"]])
    for at, kraft, voters in ((upgrade, 0, None), (upgrade + 2, 1, [1, 2, 3]),
                              (nine + 1, 1, [1, 2, 3, 9])):
        out = tmp_path / f"k{at}"
        out.mkdir()
        result = write_snapshot_at(HEALTHY, out, at=at, timestamp_ms=1, durable=False)
        assert (result.kraft_version, result.voters) == (kraft, voters), at
        _check_written(result, HEALTHY, at)
    # Just after the last snapshot: the log from there holds no KRaft control record, so
    # kraft.version and voters come from that snapshot's header.
    last = max(HEALTHY_META.glob("*.checkpoint"))
    end = int(last.name[:20])
    assert all(o < end for o, _ in offsets["KRAFT_VOTERS"] + offsets["KRAFT_VERSION"])
    result = write_snapshot_at(HEALTHY, tmp_path, at=end + 1, timestamp_ms=1, durable=False)
    assert result.started_from == last
    assert (result.kraft_version, result.voters) == (1, [1, 2, 3])


@pytest.mark.parametrize("where", ["ldi-poc", "quorum3-boaz/data/kafka-1",
                                   "quorum3-boaz/data/kafka-3"])
def test_real_logs_at_the_log_end(real_data: Path, tmp_path: Path, where: str) -> None:
    source = real_data / where
    result = write_snapshot_at(source, tmp_path, timestamp_ms=1, durable=False)
    end = build_image(source).offset
    _check_written(result, source, end)
    if where == "ldi-poc":
        assert result.digest == LDI_POC_DIGEST
        assert result.path.name == "00000000000000004929-0000000001.checkpoint"
    assert result.notes == []


def test_output_to_a_file_path(tmp_path: Path) -> None:
    out = tmp_path / "mine.checkpoint"
    result = write_snapshot_at(HEALTHY, out, at=3000, timestamp_ms=1, durable=False)
    assert result.path == out and out.is_file()
    assert any("not named" in n for n in result.notes)
    _, values = file_records(out)
    assert len(values) == result.record_count


def test_output_into_the_partition_dir_when_asked(tmp_path: Path) -> None:
    data = healthy_copy(tmp_path)
    part = data / "__cluster_metadata-0"
    before = sorted(p.name for p in part.iterdir())
    result = write_snapshot_at(data, part, at=9000, timestamp_ms=1, durable=False,
                               into_partition=True)
    assert result.path.parent == part
    assert sorted(p.name for p in part.iterdir()) == sorted(before + [result.path.name])
    # kmeta now starts its replay from the new snapshot, and gets the same image.
    again = build_image(data, at=9000)
    assert again.snapshot == result.path and again.image.digest() == result.digest


def test_json_and_text_summary(tmp_path: Path) -> None:
    result = write_snapshot_at(HEALTHY, tmp_path, at=6000, timestamp_ms=1, durable=False)
    j = json.loads(snapshot_json(result))
    assert j["kind"] == "snapshot" and j["file"] == str(result.path)
    assert j["snapshot_id"] == {"end_offset": 6000, "epoch": result.epoch}
    assert j["digest"] == result.digest and j["records"] == result.record_count
    lines = snapshot_lines(result)
    assert lines[0] == f"wrote {result.path}"
    assert any(result.digest in line for line in lines)
    assert result.snapshot_id == result.path.name[:-len(".checkpoint")]


# ------------------------------------------------------------------------ errors


def _usage(match: str, *args, **kw) -> UsageError:
    with pytest.raises(UsageError, match=match) as e:
        write_snapshot_at(*args, timestamp_ms=1, durable=False, **kw)
    assert "\n" not in e.value.one_line()
    return e.value


def test_offset_past_the_log_end(tmp_path: Path) -> None:
    end = healthy_batches()[-1][1] + 1
    _usage("past the log end", HEALTHY, tmp_path, at=end + 1)
    assert list(tmp_path.iterdir()) == []


def test_offset_at_or_below_the_log_start(tmp_path: Path) -> None:
    _usage("after the log start offset 0", HEALTHY, tmp_path, at=0)


def test_offset_inside_a_metadata_transaction(tmp_path: Path) -> None:
    begins = metadata_offsets(HEALTHY_META, "BEGIN_TRANSACTION_RECORD")
    assert begins
    err = _usage("inside metadata transaction", HEALTHY, tmp_path, at=begins[0] + 1)
    assert err.hint and "BeginTransactionRecord" in err.hint
    assert list(tmp_path.iterdir()) == []
    # At the BeginTransactionRecord itself the transaction has not started yet.
    write_snapshot_at(HEALTHY, tmp_path, at=begins[0], timestamp_ms=1, durable=False)


def test_existing_output_is_never_overwritten(tmp_path: Path) -> None:
    first = write_snapshot_at(HEALTHY, tmp_path, at=2000, timestamp_ms=1, durable=False)
    data = first.path.read_bytes()
    _usage("never overwrites", HEALTHY, tmp_path, at=2000)
    _usage("never overwrites", HEALTHY, first.path, at=2000)
    other = tmp_path / "other.bin"
    other.write_bytes(b"keep")
    _usage("never overwrites", HEALTHY, other, at=2000)
    assert first.path.read_bytes() == data and other.read_bytes() == b"keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == [first.path.name, "other.bin"]


def test_misnamed_snapshot_output_is_refused(tmp_path: Path) -> None:
    _usage("named like another snapshot", HEALTHY, tmp_path /
           "00000000000000000001-0000000001.checkpoint", at=2000)


def test_output_directory_must_exist(tmp_path: Path) -> None:
    _usage("no such directory", HEALTHY, tmp_path / "nope" / "x.checkpoint", at=2000)


def test_partition_without_a_log(real_data: Path, tmp_path: Path) -> None:
    with pytest.raises(UnreadableInput, match="no log segment"):
        write_snapshot_at(real_data / "data-store" / "kafka-data", tmp_path,
                          timestamp_ms=1, durable=False)


def test_lone_snapshot_file_is_refused(tmp_path: Path) -> None:
    snap = sorted(HEALTHY_META.glob("*.checkpoint"))[0]
    _usage("not a snapshot file", snap, tmp_path)


def test_replay_errors_refuse_unless_allowed(tmp_path: Path) -> None:
    data = healthy_copy(tmp_path)
    part = data / "__cluster_metadata-0"
    for snap in part.glob("*.checkpoint"):
        snap.unlink()  # replay from 0 through the damage
    seg = sorted(part.glob("*.log"))[0]
    raw = bytearray(seg.read_bytes())
    # Break the CRC of the first batch that holds a TopicRecord: its records are skipped.
    topic_at = metadata_offsets(part, "TOPIC_RECORD")[0]
    with mapped(seg) as buf:
        pos = next(b.position for b in scan_batches(buf, str(seg))
                   if b.base_offset <= topic_at <= b.last_offset)
    raw[pos + 70] ^= 0xFF
    seg.write_bytes(bytes(raw))
    out = tmp_path / "out"
    out.mkdir()
    _usage("error finding", data, out, at=3000)
    result = write_snapshot_at(data, out, at=3000, timestamp_ms=1, durable=False,
                               allow_errors=True)
    assert any(f.code == "F001" for f in result.findings)


def test_state_the_metadata_version_does_not_allow_is_kept_with_a_note(
        tmp_path: Path) -> None:
    """A hand-made log at 3.3-IV3 that holds a SCRAM credential (needs 3.5-IV2): the
    snapshot keeps it (the image must not change) and says so; the epoch is that of the
    batch holding the last offset, not of the first."""
    from kmeta.formats.batch import build_batch
    from kmeta.storage.writer import write_segments

    image = _small_image(7)
    records = image_records(image)
    part = tmp_path / "data" / "__cluster_metadata-0"
    batches = [build_batch(0, [(None, encode_metadata(*records[0]))], leader_epoch=3,
                           base_timestamp=1000),
               build_batch(1, [(None, encode_metadata(*r)) for r in records[1:]],
                           leader_epoch=5, base_timestamp=2000)]
    write_segments(part, batches, durable=False)
    out = tmp_path / "out"
    out.mkdir()
    result = write_snapshot_at(part, out, timestamp_ms=1, durable=False)
    assert (result.end_offset, result.epoch) == (len(records), 5)
    assert result.last_contained_log_timestamp == 2000
    assert result.digest == image.digest()
    assert [n for n in result.notes if "USER_SCRAM_CREDENTIAL_RECORD v0 needs" in n]
    assert not [n for n in result.notes if "REGISTER_BROKER" in n]
    _check_written(result, part, len(records))
    one = write_snapshot_at(part, out, at=1, timestamp_ms=1, durable=False)
    assert (one.epoch, one.last_contained_log_timestamp, one.record_count) == (3, 1000, 1)


def test_an_image_problem_the_replay_found_is_no_readback_failure(tmp_path: Path) -> None:
    # Found by the fuzz campaign: the snapshot of an image whose partition is led by an
    # unregistered broker (V114, a warning) read back with that same V114, which was taken
    # for a bug in the writer (exit 70) and the file removed.
    from kmeta.ops.snapshot import write_snapshot_at

    part = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "verify" / \
        "v114-leader-not-registered" / "__cluster_metadata-0"
    written = write_snapshot_at(part, tmp_path, timestamp_ms=0, durable=False)
    assert written.path.exists()
    assert [f.code for f in written.findings] == ["V114"]
