"""``kmeta startup`` at the broker level: the ``meta.properties`` of a node's log dirs as
Kafka checks them before it loads a log (``MetaPropertiesEnsembleTest``,
``KafkaRaftServerTest``, 3.6's ``BrokerMetadataCheckpointTest`` and
``ServerGenerateBrokerIdTest``, apache/kafka, ported as kmeta.core.meta_ensemble cases),
a refusal before loading, log dirs of several brokers given at once, and which Kafka
release's rules apply by default."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from kmeta import output_schema as schema
from kmeta.core import meta_ensemble as E
from kmeta.core.kafka_releases import KAFKA_VERSIONS, release_of_level
from kmeta.formats.batch import build_batch
from kmeta.formats.textfiles import MetaProperties
from kmeta.ops.startup import group_brokers, plan_startup
from kmeta.storage import writer as W
from tests.clirun import run

CLUSTER, OTHER = "c3RhcnR1cC1jbHVzdGVyAA", "b3RoZXItY2x1c3Rlci1pZA"
DIR_A, DIR_B = "ZGlyLWEtZGlyZWN0b3J5LQ", "ZGlyLWItZGlyZWN0b3J5LQ"


def _meta(path: str, version: int = 1, cluster: str | None = CLUSTER, node: int | None = 1,
          directory: str | None = None, *, metadata_log: bool = False,
          raw: dict[str, str] | None = None) -> E.MetaDir:
    meta = SimpleNamespace(version=version, cluster_id=cluster, node_id=node,
                           directory_id=directory)
    if raw is None:
        raw = {k: str(v) for k, v in (("version", version), ("cluster.id", cluster),
                                      ("node.id" if version else "broker.id", node),
                                      ("directory.id", directory)) if v is not None}
    return E.MetaDir(path, E.READ, meta, raw, metadata_log=metadata_log)


def _faults(dirs: list[E.MetaDir], version: str = "4.1", **kw: int) -> list[tuple[str, str]]:
    return [(f.code, f.message) for f in E.verify(dirs, version, **kw)
            if f.effect == E.REFUSES]


# ------------------------------------------------------- MetaPropertiesEnsembleTest (3.7+)

def test_successful_verification() -> None:
    """testSuccessfulVerification*: one cluster, one node, distinct directory ids."""
    dirs = [_meta("/a", directory=DIR_A, metadata_log=True), _meta("/b", directory=DIR_B)]
    assert E.verify(dirs, "4.1") == []
    assert E.verify(dirs, "4.1", expected_node=1) == []


def test_verification_failure_on_require_v0() -> None:
    """testVerificationFailureOnRequireV0: a ZooKeeper broker (3.7-3.9) with a v1 file."""
    dirs = [_meta("/a", version=0), _meta("/b", version=1)]
    assert _faults(dirs, "3.9") == [("V232", "Found unexpected version in /b/meta.properties. "
                                     "ZK-based brokers that are not migrating only support "
                                     "version 0 ...")]


def test_verification_failure_on_require_at_least_one_valid() -> None:
    """testVerificationFailureOnRequireAtLeastOneValid: no readable file in a KRaft node."""
    dirs = [E.MetaDir("/a", E.ERROR, problem="unknown version 7", metadata_log=True)]
    assert ("V231", "No readable meta.properties files found.") in _faults(dirs)


def test_verification_failure_on_metadata_log_dir_with_error() -> None:
    """testVerificationFailureOnMetadataLogDirWithError; testStartupDoesNotFailIfDataDirIs-
    Offline: the same error in a data dir only takes it offline."""
    meta_dir = E.MetaDir("/m", E.ERROR, problem="I/O error", metadata_log=True)
    assert ("V231", "Encountered I/O error in metadata log directory /m. Cannot continue."
            ) in _faults([meta_dir, _meta("/a")])
    data_dir = E.MetaDir("/d", E.ERROR, problem="I/O error")
    faults = E.verify([_meta("/m", metadata_log=True), data_dir], "4.1")
    assert [(f.code, f.effect) for f in faults] == [("V231", E.OFFLINE)]


def test_cluster_and_node_ids_must_agree() -> None:
    """testLoadPropertiesWithInconsistentClusterIds, testLoadMetaPropertiesWith-
    InconsistentNodeId (KafkaRaftServerTest): the first dir, or the configured node id,
    is what the others must say."""
    dirs = [_meta("/a", metadata_log=True), _meta("/b", cluster=OTHER), _meta("/c", node=2)]
    assert _faults(dirs) == [
        ("V194", f"Invalid cluster.id in: /b/meta.properties. Expected {CLUSTER}, but read "
                 f"{OTHER}"),
        ("V195", "Stored node id 2 doesn't match previous node id 1 in /c/meta.properties.")]
    assert ("V195", "Stored node id 1 doesn't match previous node id 3 in /a/meta.properties."
            ) in _faults(dirs[:1], expected_node=3)


def test_directory_ids_are_distinct_and_not_reserved() -> None:
    """MetaPropertiesEnsemble.verify's directory.id checks (no Kafka test names them):
    a repeated id, and a reserved one (spelled "resrved" in 3.7)."""
    dirs = [_meta("/a", directory=DIR_A, metadata_log=True), _meta("/b", directory=DIR_A)]
    assert _faults(dirs) == [("V196", f"Duplicate directory ID Optional[{DIR_A}] found. It "
                                      "was the ID of /a, but also of /b")]
    reserved = [_meta("/a", directory="AAAAAAAAAAAAAAAAAAAAAQ", metadata_log=True)]
    assert _faults(reserved, "3.7") == [
        ("V196", "Invalid resrved directory ID AAAAAAAAAAAAAAAAAAAAAQ found in /a")]
    assert _faults(reserved, "4.1")[0][1].startswith("Invalid reserved directory ID")


def test_startup_fails_if_meta_properties_missing_in_some_log_dir() -> None:
    """testStartupFailsIfMetaPropertiesMissingInSomeLogDir (KafkaRaftServerTest); a dir
    without the file whose mode nothing tells is not refused (a ZooKeeper broker writes
    one)."""
    dirs = [_meta("/a", metadata_log=True), E.MetaDir("/b", E.MISSING)]
    assert _faults(dirs) == [("V230", "No `meta.properties` found in /b (have you run "
                                      "`kafka-storage.sh` to format the directory?)")]
    assert _faults([E.MetaDir("/a", E.MISSING), E.MetaDir("/b", E.MISSING)]) == []
    assert _faults([_meta("/a", version=0), E.MetaDir("/b", E.MISSING)], "3.9") == []


# ----------------------------------------------------------------- 3.5 and 3.6

def test_zookeeper_3_6_compares_the_files_whole() -> None:
    """3.6 BrokerMetadataCheckpoint.getBrokerMetadataAndOfflineDirs (ZooKeeper mode):
    testGetBrokerMetadataAndOfflineDirs*, ServerGenerateBrokerIdTest.testMultipleLogDirs-
    MetaProps: any difference in the raw properties refuses, a different broker.id too."""
    a = _meta("/a", version=0, cluster=None, node=0)
    extra = _meta("/b", version=0, cluster=None, node=0,
                  raw={"version": "0", "broker.id": "0", "extra": "x"})
    codes = [c for c, _ in _faults([a, extra], "3.6")]
    assert codes == ["V233"]
    assert _faults([a, extra], "3.9") == []  # 3.7+ compares the ids only
    other = _meta("/b", version=0, cluster=None, node=5)
    (code, message), = _faults([a, other], "3.6")
    assert code == "V195" and message.startswith("BrokerMetadata is not consistent across "
                                                 "log.dirs.")


def test_kraft_3_6_reconciles_versions_and_reads_no_directory_ids() -> None:
    """3.4-3.6 KRaft compares the parsed cluster.id and node.id (a v0 and a v1 file of the
    same ids agree, testInvalidMetaPropertiesWithMultipleVersionsInLogDirs' converse);
    directory ids came with 3.7."""
    dirs = [_meta("/a", version=1, metadata_log=True, directory=DIR_A),
            _meta("/b", version=0, directory=DIR_A)]
    assert _faults(dirs, "3.6") == []
    assert [c for c, _ in _faults(dirs, "3.7")] == ["V196"]


def test_a_zookeeper_broker_does_not_start_on_4x() -> None:
    """4.0 removed ZooKeeper mode (KIP-500)."""
    dirs = [_meta("/a", version=0, node=0)]
    assert [c for c, _ in _faults(dirs, "4.0")] == ["V232"]
    assert _faults(dirs, "3.9") == []
    # a broker migrated to KRaft keeps its v0 files beside its metadata log: it starts;
    # one migrating (3.7+) wrote directory ids into them
    assert _faults([_meta("/a", version=0, node=0, metadata_log=True)], "4.1") == []
    assert _faults([_meta("/a", version=0, node=0, directory=DIR_A)], "4.1") == []
    assert E.migrating([_meta("/a", version=0, node=0, directory=DIR_A)])


# --------------------------------------------------------------- on disk, through startup

def _log_dir(root: Path, meta: MetaProperties | None, *, batches: int = 3,
             topic: str = "orders") -> Path:
    root.mkdir(parents=True)
    if meta is not None:
        W.write_meta_properties(root, meta, durable=False)
    (root / ".kafka_cleanshutdown").write_text("")
    with W.SegmentWriter(root / f"{topic}-0", durable=False) as w:
        for i in range(batches):
            w.append(build_batch(i, [(b"k", b"v" * 40)], base_timestamp=1_000 + i))
    return root


def _kraft(node: int, cluster: str = CLUSTER, directory: str | None = None) -> MetaProperties:
    return MetaProperties(version=1, cluster_id=cluster, node_id=node, directory_id=directory)


def _zk(broker: int) -> MetaProperties:
    return MetaProperties(version=0, node_id=broker)


def test_a_disagreeing_log_dir_refuses_before_any_log_loads(tmp_path: Path) -> None:
    a = _log_dir(tmp_path / "a", _kraft(1, directory=DIR_A))
    b = _log_dir(tmp_path / "b", _kraft(1, OTHER, DIR_B), topic="payments")
    r = plan_startup([str(a), str(b)])
    assert r.refuses_before_loading and {f.code for f in r.findings} >= {"V194"}
    assert r.refusals == [f"{b}/meta.properties: RuntimeException \"Invalid cluster.id in: "
                          f"{b}/meta.properties. Expected {CLUSTER}, but read {OTHER}\""]
    proc = run("startup", "--json", a, b, env={})
    assert proc.returncode == 1
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert all(schema.check("startup", o) == [] for o in lines)
    summary = lines[-1]
    assert summary["refuses"] and summary["refuses_before_loading"]
    fates = [o["fate"] for o in lines if o["kind"] == "startup_partition"]
    assert fates and all(f.startswith("not loaded: Kafka refuses to start before") for f in fates)
    text = run("startup", a, b, env={}).stdout
    assert "before it loads any log" in text and "Nothing loads" in text
    assert "comes back with every record" not in text


def test_an_unparsable_dir_name_refuses_before_loading(tmp_path: Path) -> None:
    """LocalLog.parseTopicPartitionName in loadLogs' listing (2.8+): nothing loads, and the
    logs that would load are said as once the broker starts."""
    d = _log_dir(tmp_path / "d", _kraft(1))
    (d / "lost+found").mkdir()
    os.remove(d / ".kafka_cleanshutdown")
    r = plan_startup([str(d)])
    assert r.refuses_before_loading and "V174" in {f.code for f in r.findings}
    text = run("startup", d, env={}).stdout
    assert "Nothing loads" in text and "Re-read once it starts" in text
    assert "Largest costs and anomalies once the broker starts" in text


def test_an_unreadable_meta_properties_takes_its_dir_offline(tmp_path: Path) -> None:
    """testStartupDoesNotFailIfDataDirIsOffline / testStartupFailsIfMetaLogDirIsOffline
    (KafkaRaftServerTest), on disk: an unknown version in a data dir takes it offline; in
    the metadata log dir the node refuses."""
    a = _log_dir(tmp_path / "a", _kraft(1, directory=DIR_A))
    (a / "__cluster_metadata-0").mkdir()
    b = _log_dir(tmp_path / "b", None, topic="payments")
    (b / "meta.properties").write_text("version=7\nnode.id=1\ncluster.id=x\n")
    r = plan_startup([str(a), str(b)])
    assert not r.refusals and [d.offline for d in r.dirs] == [False, True]
    assert {f.code for f in r.findings} >= {"V231"}
    (a / "meta.properties").write_text("version=7\n")
    (b / "meta.properties").unlink()
    W.write_meta_properties(b, _kraft(1, directory=DIR_B), durable=False)
    r = plan_startup([str(a), str(b)])
    assert r.refuses_before_loading and "Encountered I/O error in metadata log directory" \
        in r.refusals[0]


def test_duplicate_logs_refuse_while_loading(tmp_path: Path) -> None:
    """LogManager.loadLog finds a duplicate after loading it: not before loading."""
    a = _log_dir(tmp_path / "a", _kraft(1, directory=DIR_A))
    b = _log_dir(tmp_path / "b", _kraft(1, directory=DIR_B))
    r = plan_startup([str(a), str(b)])
    assert r.refusals and not r.refuses_before_loading


def test_dirs_of_several_brokers_are_several_startups(tmp_path: Path) -> None:
    """Two ZooKeeper-mode brokers given together: each starts on its own (not one broker
    with every partition "duplicate"); JSON: each broker's objects, then startup_brokers."""
    one = _log_dir(tmp_path / "one", _zk(0))
    two = _log_dir(tmp_path / "two", _zk(1))
    loose = _log_dir(tmp_path / "loose", None, topic="loose")
    groups = group_brokers([str(one), str(two), str(loose)])
    assert [(g.node_id, [Path(p).name for p in g.paths]) for g in groups] == [
        (0, ["one"]), (1, ["two"]), (None, ["loose"])]
    # a dir that tells no node id joins the one broker there is
    assert len(group_brokers([str(one), str(loose)])) == 1
    # a ZooKeeper broker's file without cluster.id is not a KRaft node 0's
    kraft0 = _log_dir(tmp_path / "kraft0", _kraft(0))
    assert len(group_brokers([str(one), str(kraft0)])) == 2
    # one node id of two clusters: two brokers where each holds its own metadata log
    # (node 1 of two docker clusters), else one broker with a foreign dir
    x = _log_dir(tmp_path / "x", _kraft(1))
    y = _log_dir(tmp_path / "y", _kraft(1, OTHER))
    assert len(group_brokers([str(x), str(y)])) == 1
    (x / "__cluster_metadata-0").mkdir()
    assert len(group_brokers([str(x), str(y)])) == 1
    (y / "__cluster_metadata-0").mkdir()
    assert len(group_brokers([str(x), str(y)])) == 2
    # copies of one node in one cluster, each with its metadata log: a broker each, a
    # data dir with the copy nearest it
    (tmp_path / "copy").mkdir()
    z = _log_dir(tmp_path / "copy" / "z", _kraft(1))
    (z / "__cluster_metadata-0").mkdir()
    w = _log_dir(tmp_path / "copy" / "w", _kraft(1), topic="w")
    groups = group_brokers([str(x), str(z), str(w)])
    assert sorted(sorted(Path(p).name for p in g.paths) for g in groups) == [
        ["w", "z"], ["x"]]
    proc = run("startup", "--json", one, two, env={})
    assert proc.returncode == 0, proc.stdout
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert all(schema.check("startup", o) == [] for o in lines)
    assert [o["kind"] for o in lines if o["kind"].endswith(("summary", "brokers"))] == [
        "startup_summary", "startup_summary", "startup_brokers"]
    summaries = [o for o in lines if o["kind"] == "startup_summary"]
    assert [(s["node_id"], s["kafka_version"], s["refuses"]) for s in summaries] == [
        (0, "3.9", False), (1, "3.9", False)]
    assert lines[-1] == {"kind": "startup_brokers", "brokers": 2, "node_ids": [0, 1],
                         "refuses": False, "loses_data": False,
                         "finding_counts": lines[-1]["finding_counts"]}
    text = run("startup", one, two, env={"COLUMNS": "80"}).stdout
    assert text.startswith("2 brokers") and "== node 0 (one) ==" in text
    assert "== node 1 (two) ==" in text
    assert "Duplicate" not in text and "REFUSES" not in text
    # one broker's JSON keeps its shape: no startup_brokers line
    single = run("startup", "--json", one, env={}).stdout.splitlines()
    assert json.loads(single[-1])["kind"] == "startup_summary"


def test_config_makes_the_dirs_one_broker(tmp_path: Path) -> None:
    """ServerGenerateBrokerIdTest / KafkaRaftServerTest: dirs log.dirs names are one
    broker's; another id among them, or one other than the configured, refuses."""
    a = _log_dir(tmp_path / "a", _kraft(1, directory=DIR_A))
    b = _log_dir(tmp_path / "b", _kraft(2, directory=DIR_B), topic="payments")
    (a / "__cluster_metadata-0").mkdir()
    config = tmp_path / "server.properties"
    config.write_text(f"node.id=1\nlog.dirs={a},{b}\n")
    proc = run("startup", "--json", "--config", config, a, b, env={})
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 1 and lines[-1]["kind"] == "startup_summary"
    assert any("Stored node id 2 doesn't match previous node id 1" in r
               for r in lines[-1]["refusals"])
    assert run("startup", a, b, env={}).stdout.startswith("2 brokers")


# ------------------------------------------------------------------ the Kafka version

def test_the_release_of_a_metadata_version() -> None:
    """MetadataVersion (4.3 branch): 27 is 4.1-IV1, 29 4.2-IV1, 30 4.3-IV0."""
    assert [release_of_level(n)[0] for n in (27, 28, 29, 30)] == ["4.1", "4.2", "4.2", "4.3"]
    assert release_of_level(19)[0] == "3.7.1"  # the newest patch of the line
    assert release_of_level(None)[0] == KAFKA_VERSIONS[0]
    assert release_of_level(31)[0] == KAFKA_VERSIONS[-1] == "4.3"


def test_the_default_version_is_the_brokers_own(tmp_path: Path) -> None:
    zk = _log_dir(tmp_path / "zk", _zk(0))
    r = plan_startup([str(zk)])
    assert r.kafka_version == "3.9" and "ZooKeeper-mode" in r.kafka_version_from
    forced = plan_startup([str(zk)], kafka_version="4.1")
    assert forced.refusals and {f.code for f in forced.findings} >= {"V232"}
    kraft = _log_dir(tmp_path / "kraft", _kraft(1))
    r = plan_startup([str(kraft)], image=SimpleNamespace(metadata_version=29, topics={}))
    assert (r.kafka_version, r.kafka_version_from) == ("4.2", "the log's metadata.version "
                                                       "29, 4.2-IV1")
    head = run("startup", zk, env={}).stdout.splitlines()[0]
    assert head.startswith("Kafka 3.9 (a ZooKeeper-mode broker: 3.9 is the last release")


@pytest.mark.parametrize(("path", "version"), [("kraft41-offsets/kafka-data", "4.1"),
                                               ("ldi-poc", "3.7.1"),
                                               ("kafka25-zk-offsets/data/kafka", "3.9")])
def test_real_brokers_are_judged_by_their_own_release(real_data: Path, path: str,
                                                      version: str) -> None:
    proc = run("startup", "--json", real_data / path, env={})
    assert json.loads(proc.stdout.splitlines()[-1])["kafka_version"] == version


# ------------------------------------------------------------------------- the fixtures

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "data" / "startup"


def test_the_fixtures_verdicts() -> None:
    """fixtures/README.md, data/startup/: brokers, unformatted, badname."""
    zk = [FIXTURES / "brokers" / "zk-0", FIXTURES / "brokers" / "zk-1"]
    proc = run("startup", "--json", *zk, env={})
    last = json.loads(proc.stdout.splitlines()[-1])
    assert proc.returncode == 0 and (last["brokers"], last["refuses"]) == (2, False)
    proc = run("startup", "--json", "--kafka-version", "4.1", *zk, env={})
    codes = {json.loads(line).get("code") for line in proc.stdout.splitlines()}
    assert proc.returncode == 1 and "V232" in codes
    proc = run("startup", "--json", FIXTURES / "unformatted" / "a",
               FIXTURES / "unformatted" / "b", env={})
    last = json.loads(proc.stdout.splitlines()[-1])
    assert proc.returncode == 1 and last["refuses_before_loading"]
    assert "No `meta.properties` found in" in last["refusals"][0]
    last = json.loads(run("startup", "--json", FIXTURES / "badname", env={}
                          ).stdout.splitlines()[-1])
    assert last["refuses"] and last["refuses_before_loading"]
