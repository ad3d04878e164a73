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
    assert len(batch_files) == 17  # 5 segments with data, 7 snapshots, 5 bootstrap files
    for name, c in real.items():
        assert c["bad_crc"] == 0, name
        assert not any(k.startswith("UNKNOWN") for k in c), name
        findings = {k: v for k, v in c.items() if k.startswith("finding:")}
        if name == "ldi-poc/Retry.TestTopicPatient-0/00000000000000000000.log":
            assert findings == {"finding:S006": 1}  # Kafka's empty active segment
        else:
            assert findings == {}, (name, findings)


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
    assert len(boots) == 5
    for c in boots.values():
        assert c["records"] == 3 and c["FEATURE_LEVEL_RECORD@0"] == 1


def test_plain_topic_decoded_as_raw(real):
    c = real["ldi-poc/TestTopicPatient-0/00000000000000000000.log"]
    assert (c["batches"], c["records"], c["RAW@None"]) == (3, 3, 3)


def test_small_files_all_parse(real):
    small = [f for f, c in real.items() if not c["batches"] and not f.endswith(".log")]
    assert len(small) > 30
    for name in small:
        assert not any(k.startswith("finding:") for k in real[name]), name
