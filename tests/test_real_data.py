"""Every file in the real broker directories decodes exactly: counts, CRCs, types, versions."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from kmeta.findings import Finding
from kmeta.ops.dump import BatchDump, DumpOptions, FileEvent, OneRecord, dump
from kmeta.storage.discover import discover


def tally(path: Path) -> dict[str, Counter]:
    """Per file (relative to ``path``): batches, records, types@version, bad CRCs, findings."""
    out: dict[str, Counter] = {}
    cur = None
    for ev in dump(discover([path]), DumpOptions(show_secrets=True)):
        if isinstance(ev, FileEvent):
            cur = out.setdefault(str(Path(ev.file).relative_to(path)), Counter())
        elif isinstance(ev, Finding):
            key = str(Path(ev.file).relative_to(path)) if ev.file else "-"
            out.setdefault(key, Counter())["finding:" + ev.code] += 1
        else:
            assert isinstance(ev, (BatchDump, OneRecord))
            b = ev.batch
            cur["batches"] += 1
            cur["bad_crc"] += not b.crc_valid
            cur[f"epoch:{b.leader_epoch}"] += 1
            for f in ev.findings:
                cur["finding:" + f.code] += 1
            for _record, payload in ev.records():
                cur["records"] += 1
                cur[f"{payload.type}@{payload.version}"] += 1
    return out


@pytest.fixture(scope="module")
def real(real_data: Path) -> dict[str, Counter]:
    return tally(real_data)


META = "ldi-poc/__cluster_metadata-0/00000000000000000000.log"


def test_ldi_poc_metadata_segment_exact(real):
    c = real[META]
    assert c["batches"] == 4814
    assert c["records"] == 4929
    assert c["epoch:1"] == 4814
    assert c["NO_OP_RECORD@0"] == 4801
    assert c["LEADER_CHANGE@0"] == 1
    assert c["PARTITION_RECORD@1"] == 54 and c["PARTITION_CHANGE_RECORD@1"] == 54
    assert c["TOPIC_RECORD@0"] == 5 and c["CONFIG_RECORD@0"] == 3
    assert c["REGISTER_BROKER_RECORD@3"] == 2 and c["REGISTER_CONTROLLER_RECORD@0"] == 1
    assert c["BROKER_REGISTRATION_CHANGE_RECORD@0"] == 2
    assert c["BROKER_REGISTRATION_CHANGE_RECORD@1"] == 1
    for t in ("BEGIN_TRANSACTION_RECORD@0", "END_TRANSACTION_RECORD@0", "FEATURE_LEVEL_RECORD@0",
              "ZK_MIGRATION_STATE_RECORD@0", "PRODUCER_IDS_RECORD@0"):
        assert c[t] == 1, t


def test_every_real_batch_is_intact_and_every_record_known(real):
    batch_files = [f for f, c in real.items() if c["batches"]]
    assert len(batch_files) == 115
    assert sum(f.endswith(".log") for f in batch_files) == 84
    assert sum(f.endswith(".checkpoint") and "bootstrap" not in f for f in batch_files) == 23
    for name, c in real.items():
        assert c["bad_crc"] == 0, name
        assert not any(k.startswith("UNKNOWN") for k in c), name
        findings = {k: v for k, v in c.items() if k.startswith("finding:")}
        if name.endswith(".log") and c["batches"] == 0:
            assert findings == {"finding:S006": 1}, name  # Kafka's empty active segment
        else:
            assert findings == {}, (name, findings)


def _by_topic(real) -> dict[tuple[str, str], Counter]:
    """Batches, records and types@version per (folder, topic); snapshots as ``snapshots``."""
    out: dict[tuple[str, str], Counter] = {}
    for name, c in real.items():
        if not c["batches"]:
            continue
        parts = name.split("/")
        dirs = [p for p in parts[:-1] if p.rsplit("-", 1)[-1].isdigit() and "-" in p]
        topic = dirs[-1].rsplit("-", 1)[0] if dirs else "-"
        if name.endswith(".checkpoint"):
            topic = "snapshots" if topic == "__cluster_metadata" else "bootstrap"
        acc = out.setdefault((parts[0], topic), Counter())
        acc.update({k: v for k, v in c.items() if k in ("batches", "records") or "@" in k})
    return out


def test_every_folder_matches_its_readme(real):
    """The figures ../shared/real/README.md gives for each folder, decoded by kmeta."""
    t = _by_topic(real)
    got = {key: (c["batches"], c["records"]) for key, c in t.items()}
    assert got[("kraft32-three", "__cluster_metadata")] == (3 * 13, 3 * 188)
    k32 = t[("kraft32-three", "__cluster_metadata")]
    for kind, per_node in (("REGISTER_BROKER_RECORD@0", 3), ("FENCE_BROKER_RECORD@0", 3),
                           ("UNFENCE_BROKER_RECORD@0", 3), ("TOPIC_RECORD@0", 3),
                           ("PARTITION_RECORD@0", 54), ("PARTITION_CHANGE_RECORD@0", 115),
                           ("CONFIG_RECORD@0", 4), ("LEADER_CHANGE@0", 3)):
        assert k32[kind] == 3 * per_node, kind
    assert "FEATURE_LEVEL_RECORD@0" not in k32  # before metadata.version existed
    assert got[("kraft41-offsets", "__cluster_metadata")] == (1078, 1192)
    k41 = t[("kraft41-offsets", "__cluster_metadata")]
    assert k41["PARTITION_RECORD@2"] == 52 and k41["PARTITION_CHANGE_RECORD@2"] == 52
    assert got[("kraft41-offsets", "__consumer_offsets")][1] == 426
    assert got[("kraft41-offsets", "stock-prices")][1] == 1052
    assert got[("kraft41-offsets", "alerts")][1] == 6
    assert got[("kafka25-zk-offsets", "__consumer_offsets")] == (846, 1565)
    assert got[("cp51-connect-cleaned", "docker-connect-configs")][1] == 56
    assert got[("cp51-connect-cleaned", "docker-connect-status")][1] == 252
    assert got[("cp51-connect-cleaned", "docker-connect-offsets")][1] == 20
    assert got[("cp51-connect-cleaned", "__consumer_offsets")][1] == 172
    assert got[("cp51-connect-cleaned", "temperature")][1] == 412
    assert got[("kraft-ksql-txn", "__consumer_offsets")][1] == 89
    assert got[("kraft-ksql-txn", "__transaction_state")][1] == 4
    assert got[("kraft-ksql-txn", "_schemas")][1] == 42
    assert got[("kraft-ksql-txn", "docker-connect-configs")][1] == 10
    ksql = t[("kraft-ksql-txn", "_confluent-ksql-default__command_topic")]
    assert (ksql["RAW@None"], ksql["COMMIT@0"]) == (1, 1)  # one transaction, committed
    scram = t[("kraft412-scram-snapshots", "snapshots")]
    assert scram["SNAPSHOT_HEADER@0"] == 13 and scram["USER_SCRAM_CREDENTIAL_RECORD@0"] > 0
    assert t[("kraft-ksql-txn", "snapshots")]["SNAPSHOT_HEADER@0"] == 3


def test_kafka_python_reads_the_same_batches(real_data: Path):
    """An independent decoder (kafka-python's record reader) over every real file in
    record-batch format finds the same batches, offsets and CRC verdicts as kmeta."""
    from kafka.record.memory_records import MemoryRecords

    from kmeta.storage.segments import mapped, scan_batches

    files = [f for d in discover([real_data]).all_files() if d.is_batches
             for f in [d.path] if f.stat().st_size]
    assert len(files) == 115
    for path in files:
        theirs = []
        records = MemoryRecords(path.read_bytes())
        while (batch := records.next_batch()) is not None:
            crc_valid = batch.validate_crc()
            count = sum(1 for _ in batch)
            theirs.append((batch.base_offset, count, crc_valid))
        with mapped(path) as buf:
            ours = [(b.base_offset, b.records_count, b.crc_valid)
                    for b in scan_batches(buf, str(path)) if not isinstance(b, Finding)]
        assert ours == theirs, path


def test_quorum3_boaz_lag_not_divergence(real):
    base = "quorum3-boaz/data/kafka-{}/__cluster_metadata-0/00000000000000000000.log"
    k1, k2, k3 = (real[base.format(i)] for i in (1, 2, 3))
    assert k1 == k2
    assert (k1["batches"], k1["records"]) == (2026, 2034)
    assert (k3["batches"], k3["records"]) == (2027, 2035)
    assert k3["LEADER_CHANGE@0"] == k1["LEADER_CHANGE@0"] + 1 == 4
    assert {k: v for k, v in k3.items() if k.startswith("epoch:")} == \
        {"epoch:2": 308, "epoch:29": 1085, "epoch:31": 633, "epoch:32": 1}
    assert k1["REGISTER_BROKER_RECORD@2"] == 6 and k1["NO_OP_RECORD@0"] == 2012


def test_data_store_snapshots(real):
    snaps = {f: c for f, c in real.items() if f.endswith(".checkpoint")
             and "data-store/kafka-data/__cluster_metadata-0" in f}
    assert len(snaps) == 7
    for name, c in snaps.items():
        assert (c["batches"], c["records"]) == (3, 63), name
        assert c["SNAPSHOT_HEADER@0"] == c["SNAPSHOT_FOOTER@0"] == 1
        assert c["PARTITION_RECORD@1"] == 51 and c["TOPIC_RECORD@0"] == 2
        epoch = 8 if int(name.rsplit("-", 1)[-1].split(".")[0]) == 8 else 9
        assert c[f"epoch:{epoch}"] == 3


def test_bootstrap_checkpoints(real):
    boots = {f: c for f, c in real.items() if f.endswith("bootstrap.checkpoint")}
    assert len(boots) == 8
    for name, c in boots.items():
        assert c["SNAPSHOT_HEADER@0"] == c["SNAPSHOT_FOOTER@0"] == 1, name
        if name.startswith(("kraft41-offsets", "kraft412-scram-snapshots")):
            # Kafka 4.1 bootstraps every finalized feature, not only metadata.version.
            assert c["FEATURE_LEVEL_RECORD@0"] == 4, name
        else:
            assert c["records"] == 3 and c["FEATURE_LEVEL_RECORD@0"] == 1, name
    assert boots["kraft412-scram-snapshots/data/kafka/bootstrap.checkpoint"][
        "USER_SCRAM_CREDENTIAL_RECORD@0"] == 2


def test_plain_topic_decoded_as_raw(real):
    c = real["ldi-poc/TestTopicPatient-0/00000000000000000000.log"]
    assert (c["batches"], c["records"], c["RAW@None"]) == (3, 3, 3)


def test_small_files_all_parse(real):
    small = [f for f, c in real.items() if not c["batches"] and not f.endswith(".log")]
    assert len(small) > 30
    for name in small:
        assert not any(k.startswith("finding:") for k in real[name]), name
