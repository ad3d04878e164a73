"""``kmeta image`` and ``kmeta history``: the replayed cluster image and per-entity history.

Runs of the command line (in-process through ``tests/clirun.py``; a real subprocess for
``| head``) check exit codes and output; calls of :mod:`kmeta.ops.replay.image` check the replay
rules against an independent replay here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import clirun
import pytest
from conftest import HEALTHY, HEALTHY_META

from kmeta.core.image import MetadataImage
from kmeta.errors import UsageError
from kmeta.findings import Finding
from kmeta.formats.batch import build_batch
from kmeta.formats.payload import decode_control, decode_metadata, encode_metadata
from kmeta.ops.replay import browse, build_image, history
from kmeta.storage.segments import mapped, scan_records

KMETA = [sys.executable, "-m", "kmeta"]
TIMEOUT = 60

LDI_DIGEST = "93850e83002a9707c87f2d0557a2c017"
LDI_TOPICS = ["Retry.TestTopicPatient", "TestTopicPatient", "__consumer_offsets",
              "batch2.work.notification.SHR_PROD.persistence",
              "subscription.matching.SHR_PROD.persistence"]
DATA_STORE_16435 = "dee06b809506a68413d24ef638d7cd92"
DATA_STORE_LATEST = "bb446179a29bb725abcbab4cd7b18cba"


def run(*args: object) -> subprocess.CompletedProcess[str]:
    return clirun.run(*args, timeout=TIMEOUT, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})


def ok(*args: object) -> str:
    proc = run(*args)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


def usage_error(*args: object) -> str:
    proc = run(*args)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert proc.stderr.strip()
    return proc.stderr


@pytest.fixture(scope="module")
def ldi(real_data: Path) -> Path:
    return real_data / "ldi-poc"


@pytest.fixture(scope="module")
def data_store(real_data: Path) -> Path:
    return real_data / "data-store" / "kafka-data"


def _snapshots() -> list[Path]:
    return sorted(HEALTHY_META.glob("*.checkpoint"))


def _replay_below(partition: Path, stop: int) -> MetadataImage:
    """An independent replay: every data record with offset < stop, from offset 0."""
    image = MetadataImage.empty()
    for seg in sorted(partition.glob("*.log")):
        with mapped(seg) as buf:
            for item in scan_records(buf, str(seg), decode_metadata, decode_control):
                assert type(item) is not Finding, item
                batch, r, p = item
                if r.offset >= stop:
                    return image
                if not batch.is_control:
                    image.apply(p.type, p.version, p.data, r.offset)
    return image


# ------------------------------------------------------------------------- real data

def test_digest_of_ldi_poc(ldi: Path) -> None:
    assert ok("image", ldi, "--digest").strip() == LDI_DIGEST
    # The partition dir gives the same image as the data dir.
    assert ok("image", ldi / "__cluster_metadata-0", "--digest").strip() == LDI_DIGEST


def test_ls_topics(ldi: Path) -> None:
    assert ok("image", ldi, "ls", "/topics").splitlines() == LDI_TOPICS
    assert json.loads(ok("image", ldi, "ls", "/topics", "--json")) == LDI_TOPICS
    # / is the root of Kafka's node tree now (the old sections are still read, not listed)
    assert ok("image", ldi, "ls").splitlines() == ["image", "local"]
    assert json.loads(ok("image", ldi, "cat", "/"))["topics"]["TestTopicPatient"]


def test_cat_partition_both_spellings(ldi: Path) -> None:
    short = json.loads(ok("image", ldi, "cat", "/topics/TestTopicPatient/0"))
    long = json.loads(ok("image", ldi, "cat", "/topics/TestTopicPatient/partitions/0"))
    assert short == long
    assert {"leader", "leaderEpoch", "partitionEpoch", "replicas", "isr"} <= set(short)
    assert short["replicas"] == [1]
    broker = json.loads(ok("image", ldi, "cat", "/brokers/1"))
    assert broker["id"] == 1
    assert json.loads(ok("image", ldi, "cat", "/features")) == {"metadata.version": 19}


def test_at_offset_matches_in_process_replay(ldi: Path) -> None:
    at5 = ok("image", ldi, "--at", "5", "--digest").strip()
    assert at5 != LDI_DIGEST
    assert at5 == _replay_below(ldi / "__cluster_metadata-0", 5).digest()
    result = build_image(ldi, at=5)
    assert result.offset == 5 and result.snapshot is None and result.records == 4
    assert result.image.digest() == at5
    # --at the log end is the whole log.
    assert build_image(ldi, at=4929).image.digest() == LDI_DIGEST
    assert build_image(ldi, at=0).image == MetadataImage.empty()


def test_json_object(ldi: Path) -> None:
    lines = ok("image", ldi, "--json").splitlines()
    assert len(lines) == 1
    obj = json.loads(lines[0])
    assert obj["kind"] == "image" and obj["offset"] == 4929 and obj["digest"] == LDI_DIGEST
    assert sorted(obj["image"]["topics"]) == sorted(LDI_TOPICS)


def test_text_tables(ldi: Path) -> None:
    out = ok("image", ldi)
    assert out.startswith("image at offset 4929 (from offset 0")
    assert LDI_DIGEST in out.splitlines()[0]
    for word in ("brokers", "controllers", "topics", "partitions", "TestTopicPatient",
                 "PLAINTEXT://kafka:9092"):
        assert word in out
    assert "\x1b[" not in out


def test_checkpoint_file_alone(data_store: Path) -> None:
    snap = data_store / "__cluster_metadata-0" / "00000000000000016435-0000000008.checkpoint"
    assert ok("image", snap, "--digest").strip() == DATA_STORE_16435
    usage_error("image", snap, "--at", "3")


def test_data_store_uses_latest_snapshot(data_store: Path) -> None:
    # The image is the latest snapshot's; the missing log is verify's V020 and exit 1.
    proc = run("image", data_store, "--digest")
    assert proc.returncode == 1 and "V020" in proc.stderr
    assert proc.stdout.strip() == DATA_STORE_LATEST
    result = build_image(data_store)
    assert result.snapshot is not None and result.snapshot.name.startswith(
        "00000000000000063224-")
    assert result.offset == 63224 and result.log_end is None
    # history reads the log itself: none there is an input without what it reads
    proc = run("history", data_store, "--topic", "x")
    assert proc.returncode == 3 and "no log segment" in proc.stderr, proc.stderr


def test_several_metadata_partitions(real_data: Path) -> None:
    err = usage_error("image", real_data / "quorum3-boaz", "--digest")
    assert "3 metadata partitions" in err
    ok("image", real_data / "quorum3-boaz" / "data" / "kafka-1", "--digest")


def test_history_broker_on_real_data(ldi: Path) -> None:
    lines = ok("history", ldi, "--broker", "1").splitlines()
    assert lines
    assert any(" REGISTER_BROKER_RECORD v" in line for line in lines)


# ------------------------------------------------------------------------- fixtures

def test_from_snapshot_equals_replay_from_zero() -> None:
    full = build_image(HEALTHY, use_snapshots=False)
    assert full.snapshot is None and full.findings == []
    first = _snapshots()[0]
    out = ok("image", HEALTHY, "--from-snapshot", first, "--digest").strip()
    assert out == full.image.digest()
    # The default (latest snapshot, then the log) agrees too.
    assert ok("image", HEALTHY, "--digest").strip() == full.image.digest()
    result = build_image(HEALTHY, from_snapshot=first)
    assert result.snapshot == first and result.start_offset == 4000
    assert result.offset == full.offset == full.log_end


def test_at_picks_the_snapshot_below_it() -> None:
    for at in (3999, 4000, 8157, 9000):
        result = build_image(HEALTHY, at=at)
        expected = [s for s in _snapshots() if int(s.name.split("-")[0]) <= at]
        assert result.snapshot == (expected[-1] if expected else None)
        assert result.image.digest() == _replay_below(HEALTHY_META, at).digest()


def test_log_without_start_and_snapshot(tmp_path: Path) -> None:
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    for seg in sorted(HEALTHY_META.glob("*.log"))[1:]:
        shutil.copy(seg, part)
    err = usage_error("image", part, "--digest")
    assert "starts at offset 1802" in err
    with pytest.raises(UsageError):
        build_image(part)
    # With a snapshot inside the log it works, and agrees with the full replay.
    shutil.copy(_snapshots()[0], part)
    assert ok("image", part, "--digest").strip() == \
        build_image(HEALTHY, use_snapshots=False).image.digest()


def test_history_topic_lists_topic_record_first() -> None:
    lines = ok("history", HEALTHY, "--topic", "orders").splitlines()
    assert lines[0].split()[3] == "TOPIC_RECORD"
    rows = history(HEALTHY, topic="orders").rows
    assert rows[0].type == "TOPIC_RECORD" and rows[0].data["name"] == "orders"
    tid = rows[0].data["topicId"]
    assert {r.type for r in rows} >= {"PARTITION_RECORD", "CONFIG_RECORD"}
    for r in rows:
        if r.type in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD"):
            assert r.data["topicId"] == tid
    assert [r.offset for r in rows] == sorted(r.offset for r in rows)
    one = history(HEALTHY, topic="events", partition=1).rows
    assert all(r.data["partitionId"] == 1 for r in one
               if r.type in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD"))
    objs = [json.loads(line) for line in
            ok("history", HEALTHY, "--topic", "orders", "--json").splitlines()]
    assert objs[0]["kind"] == "history" and objs[0]["type"] == "TOPIC_RECORD"
    assert {"offset", "leader_epoch", "timestamp", "version", "data"} <= set(objs[0])


def test_history_broker() -> None:
    rows = history(HEALTHY, broker=4).rows
    types = {r.type for r in rows}
    assert "REGISTER_BROKER_RECORD" in types and "PARTITION_RECORD" in types
    assert ok("history", HEALTHY, "--broker", "1").strip()  # controller 1's registration
    assert history(HEALTHY, broker=999).rows == []


def test_browse() -> None:
    j = build_image(HEALTHY).image.to_json()
    assert browse(j, "/") is j
    assert browse(j, "/topics/orders/0") == browse(j, "/topics/orders/partitions/0")
    assert browse(j, "configs/TOPIC/orders")["min.insync.replicas"] == "2"
    with pytest.raises(UsageError, match="it has: .*orders"):
        browse(j, "/topics/nope")
    with pytest.raises(UsageError, match="is a value"):
        browse(j, "/producerIds/nextProducerId/x")


# ------------------------------------------------------------------------- errors

def test_usage_errors(ldi: Path, tmp_path: Path) -> None:
    usage_error("image", ldi, "ls", "/nope")
    usage_error("image", ldi, "frob")
    usage_error("image", ldi, "ls", "--digest")
    usage_error("image", ldi, "--at", "999999")
    usage_error("image", ldi, "--at", "-1")
    assert run("image", ldi, "--from-snapshot", tmp_path / "missing.checkpoint"
               ).returncode == 3  # an input named by an option: as a PATH
    usage_error("image", HEALTHY, "--at", "100", "--from-snapshot", _snapshots()[0])
    usage_error("history", ldi)
    usage_error("history", ldi, "--topic", "x", "--broker", "1")
    usage_error("history", ldi, "--broker", "1", "--partition", "0")
    proc = run("image", tmp_path / "missing")
    assert proc.returncode == 3 and "Traceback" not in proc.stderr


def test_problems_give_exit_1(tmp_path: Path) -> None:
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    value = encode_metadata("PARTITION_RECORD", 0, {
        "partitionId": 0, "topicId": "AAAAAAAAAAAAAAAAAAAAAA", "replicas": [1], "isr": [1],
        "removingReplicas": [], "addingReplicas": [], "leader": 1, "leaderEpoch": 0,
        "partitionEpoch": 0})
    (part / "00000000000000000000.log").write_bytes(build_batch(0, [(None, value)]))
    proc = run("image", part, "--digest")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.strip() == MetadataImage.empty().digest()
    assert "V101" in proc.stderr and "Traceback" not in proc.stderr


def test_survives_head() -> None:
    """The reader going away (``| head``) is a normal end: exit 0, nothing on stderr."""
    for args in (["image", HEALTHY], ["history", HEALTHY, "--broker", "4"]):
        proc = subprocess.Popen([*KMETA, *map(str, args)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.read(10)
        proc.stdout.close()
        err = proc.stderr.read()
        assert proc.wait(timeout=TIMEOUT) == 0, err
        assert not err


def test_history_of_a_damaged_log_says_where_it_has_holes(tmp_path: Path) -> None:
    """No silent skip: a bad CRC or an undecodable record is a finding, exit 1."""
    torn = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "verify" / \
        "f003-record-undecodable"
    found = history(torn, broker=1)
    rows, findings = found.rows, found.findings
    assert rows and [f.code for f in findings] == ["F003"]
    done = clirun.run("history", torn, "--broker", "1", timeout=60)
    assert done.returncode == 1 and "F003" in done.stdout  # closing the report


# ------------------------------------------------------------------------- node tree

def test_cluster_default_broker_config_reachable(real_data: Path) -> None:
    # The BROKER default resource is named "": the old path reaches it through its type,
    # Kafka's through /image/configs/BROKER.
    kraft41 = real_data / "kraft41-offsets"
    assert json.loads(ok("image", kraft41, "cat", "/configs/BROKER/min.insync.replicas")) \
        == "1"
    assert ok("image", kraft41, "cat", "/image/configs/BROKER/min.insync.replicas") == "1\n"


def test_kafka_paths(ldi: Path) -> None:
    assert ok("image", ldi, "ls", "/image/topics/byName").splitlines() == sorted(LDI_TOPICS)
    assert ok("image", ldi, "ls", "/image/topics/byName/TestTopicPatient").splitlines() == [
        "0", "id", "name"]
    part = ok("image", ldi, "cat", "/image/topics/byName/TestTopicPatient/0")
    assert part.startswith("PartitionRegistration(replicas=[1], directories=[")
    assert part.count("\n") == 1
    short = json.loads(ok("image", ldi, "cat", "/topics/TestTopicPatient/0"))
    assert json.loads(ok("image", ldi, "cat", "/image/topics/byName/TestTopicPatient/0",
                         "--json")) == short
    # a glob prints every leaf it matches; a directory cats as JSON
    brokers = ok("image", ldi, "cat", "/image/cluster/*/1").splitlines()
    assert [b.split("(")[0] for b in brokers] == ["BrokerRegistration", "ControllerRegistration"]
    assert json.loads(ok("image", ldi, "cat", "/image/cluster/brokers"))["1"]["id"] == 1
    assert ok("image", ldi, "cat", "/image/features/metadataVersion") == "Optional[3.7-IV4]\n"
    assert ok("image", ldi, "cat", "/image/provenance").startswith("offset 4928, epoch 1, ")
    assert ok("image", ldi, "--at", "5", "cat", "/image/provenance").startswith("offset 4, ")
    assert ok("image", ldi, "cat", "/local/version").strip()
    assert json.loads(ok("image", ldi, "ls", "/image/cluster/*", "--json")) == {
        "/image/cluster/brokers": ["1"], "/image/cluster/controllers": ["1"]}
    err = usage_error("image", ldi, "cat", "/image/nope")
    assert "cat: /image/nope: no such file or directory" in err


def test_at_before_the_snapshots_of_a_dir_without_log_is_the_option_s_fault() -> None:
    """A metadata partition with only a snapshot at 10, asked for the image at 0: the
    input holds an image (at 10), the offset asked for is the wrong one: 2, with where
    images start, as the shell's ``at 0`` says (not 3, "no usable snapshot")."""
    where = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "verify" / \
        "v020-no-segment"
    r = clirun.run("image", where, "--at", "0")
    assert r.returncode == 2, r.stderr
    assert "--at 0 is before 10, the first offset with an image" in r.stderr
    assert clirun.run("image", where, "--at", "10").returncode == 1  # V020: no log


def test_an_empty_table_says_none(real_data: Path) -> None:
    # ldi-poc's image holds no SCRAM user and no delegation token: a header over no row
    # reads as a table cut short
    lines = clirun.run("image", str(real_data / "ldi-poc")).stdout.splitlines()
    assert "SCRAM users: none" in lines and "delegation tokens: none" in lines
    assert not any(line.split() == ["owner", "┃", "requester", "┃", "renewers", "┃", "expires"]
                   for line in lines)
    assert "brokers" in lines  # a table with rows keeps its title and header
