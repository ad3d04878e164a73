"""``kmeta consumers``: groups' committed offsets replayed from ``__consumer_offsets``, and
KIP-320's validation of each against a replica (``core/consumer_position``), on Kafka's own
``LeaderEpochFileCacheTest`` caches, on the unclean-election fixture, and on real data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import run

from kmeta.core.consumer_position import (
    FINE,
    NO_EPOCH,
    OUT_OF_RANGE,
    TRUNCATED,
    UNDEFINED,
    check_position,
)
from kmeta.core.epochs import EpochCache

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "consumers"


# ------------------------------------------- Kafka's LeaderEpochFileCacheTest, as a consumer


@pytest.mark.parametrize(("entries", "log_end", "position", "expected"), [
    # cache {0@10, 2@13, 4@17}: endOffsetFor(1) = (0, 13), (2) = (2, 17), (3) = (2, 17)
    ([(0, 10), (2, 13), (4, 17)], 20, (15, 1), (TRUNCATED, 0, 13)),
    ([(0, 10), (2, 13), (4, 17)], 20, (13, 1), (FINE, 0, 13)),
    ([(0, 10), (2, 13), (4, 17)], 20, (16, 2), (FINE, 2, 17)),
    ([(0, 10), (2, 13), (4, 17)], 20, (18, 3), (TRUNCATED, 2, 17)),
    # cache {5@11, 6@12, 7@13}: endOffsetFor(4) = (4, 11), below every epoch
    ([(5, 11), (6, 12), (7, 13)], 14, (12, 4), (TRUNCATED, 4, 11)),
    # assign(2, 11), assign(2, 12) keeps 2@11: endOffsetFor(2, LEO 14) = (2, 14)
    ([(2, 11), (2, 12)], 14, (14, 2), (FINE, 2, 14)),
    # cache 0@20, 1@85, 3@90, 4@98: endOffsetFor(2) = (1, 90)
    ([(0, 20), (1, 85), (3, 90), (4, 98)], 120, (95, 2), (TRUNCATED, 1, 90)),
    # an epoch newer than all: (-1, -1), the consumer resets by its policy
    ([(0, 20), (1, 85)], 120, (95, 7), (UNDEFINED, -1, -1)),
])
def test_kafkas_epoch_cache_cases(entries, log_end, position, expected) -> None:
    cache = EpochCache.from_entries(entries)
    check = check_position(*position, cache, 0, log_end)
    assert (check.verdict, check.end_epoch, check.end_offset) == expected
    if check.verdict == TRUNCATED:
        assert (check.reset_to, check.reset_epoch) == (expected[2], expected[1])
    assert check.consumer_moves == (expected[0] != FINE)


def test_without_an_epoch_only_the_range_can_be_judged() -> None:
    cache = EpochCache.from_entries([(0, 0), (1, 40)])
    assert check_position(50, -1, cache, 0, 100).verdict == NO_EPOCH
    assert check_position(5, -1, cache, 20, 100).verdict == OUT_OF_RANGE
    assert check_position(101, -1, cache, 0, 100).verdict == OUT_OF_RANGE
    # validated first: a fine epoch, then an offset below the log start
    assert check_position(5, 0, cache, 20, 100).verdict == OUT_OF_RANGE


# ------------------------------------------------------ the unclean-election fixture


def _objects(*args) -> tuple[list[dict], object]:
    out = run("consumers", "--json", *args, env={})
    return [json.loads(line) for line in out.stdout.splitlines()], out


def test_groups_and_offsets_replayed_as_the_coordinator_loads_them() -> None:
    objects, out = _objects(FIXTURE / "node1")
    assert out.returncode == 0
    groups = {o["group"]: o for o in objects if o["kind"] == "consumer_group"}
    assert {g: (o["protocol"], o["deleted"]) for g, o in groups.items()} == {
        "billing": ("classic", False), "lagging": ("classic", False),
        "retired": ("classic", True), "payments-app": ("consumer", False),
        "audit-share": ("share", False)}
    offsets = {(o["group"], o["partition"]): o for o in objects
               if o["kind"] == "consumer_offset"}
    # the last commit wins; the tombstone deletes; a v1 commit has no epoch
    assert offsets["billing", 0]["offset"] == 90 and offsets["billing", 0]["leader_epoch"] == 1
    assert offsets["retired", 0]["deleted"] and offsets["retired", 0]["offset"] is None
    assert offsets["legacy", 0]["leader_epoch"] is None  # unknown: null, not -1
    assert offsets["legacy", 0]["value_version"] == 1
    # the committed transaction applies, the aborted one does not, the open one waits
    assert offsets["txn-app", 1]["offset"] == 42 and offsets["txn-app", 1]["transactional"]
    assert ("open-txn", 0) not in offsets
    summary = objects[-1]
    assert summary["kind"] == "consumers_summary"
    assert (summary["aborted"], summary["pending"]) == (1, 1)
    assert summary["offsets_without_epoch"] == 1


def test_against_the_unclean_leader_every_verdict() -> None:
    objects, out = _objects(FIXTURE / "node1", "--against", FIXTURE / "node2")
    verdicts = {(o["group"], o["partition"]): (o.get("verdict"), o.get("reset_to"))
                for o in objects if o["kind"] == "consumer_offset"}
    assert verdicts == {
        ("billing", 0): (TRUNCATED, 60), ("billing", 1): (FINE, None),
        ("lagging", 0): (OUT_OF_RANGE, None), ("legacy", 0): (NO_EPOCH, None),
        ("payments-app", 0): (FINE, None), ("txn-app", 1): (FINE, None),
        ("retired", 0): (None, None)}
    assert out.returncode == 1  # consumers would move
    for code in ("V140", "V142", "V143"):  # findings close the report on stdout
        assert code in out.stdout
    # against the old leader instead: epoch 2 is unknown there
    objects, old = _objects(FIXTURE / "node1", "--against", FIXTURE / "node1", "--group",
                          "payments-app")
    (row,) = [o for o in objects if o["kind"] == "consumer_offset"]
    assert row["verdict"] == UNDEFINED and "V141" in old.stdout


def test_text_names_the_reset_offset() -> None:
    out = run("consumers", FIXTURE / "node1", "--against", FIXTURE / "node2", env={})
    assert "orders-0: offset 90, epoch 1" in out.stdout
    assert "truncated: reset to 60 (epoch 0)" in out.stdout
    assert "deleted groups (tombstones)" not in out.stdout  # retired still has a row
    assert "groups with no committed offset: audit-share" in out.stdout


def test_a_position_given_by_hand() -> None:
    part = FIXTURE / "node2" / "orders-0"
    objects, out = _objects("--against", part, "--position", "90:1")
    assert objects[0]["verdict"] == TRUNCATED and objects[0]["reset_to"] == 60
    assert out.returncode == 1
    objects, out = _objects("--against", part, "--position", "70:2")
    assert objects[0]["verdict"] == FINE and out.returncode == 0


@pytest.mark.parametrize(("args", "says"), [
    (["--position", "5:0"], "--position needs --against"),
    ([], "give PATH"),
    (["--against", str(FIXTURE / "node2"), "--position", "5:0"], "one partition dir"),
    (["--against", str(FIXTURE / "node2" / "orders-0"), "--position", "5:x"], "OFFSET:EPOCH"),
])
def test_wrong_input_is_one_line_and_exit_2(args, says) -> None:
    out = run("consumers", *args, env={})
    assert out.returncode == 2, out.stderr
    assert says in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize(("args", "says"), [
    ([str(FIXTURE / "node2")], "no __consumer_offsets partition"),
    ([str(FIXTURE / "node1"), "--against", str(FIXTURE / "node1" / "__consumer_offsets-0")],
     "no topic partition"),
])
def test_input_without_what_it_reads_is_one_line_and_exit_3(args, says) -> None:
    out = run("consumers", *args, env={})
    assert out.returncode == 3, out.stderr
    assert says in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_verify_keeps_two_replicas_of_one_partition_apart() -> None:
    # both data dirs hold orders-0 (log ends 100 and 80): each checkpoint is judged
    # against its own dir's partition
    out = run("verify", FIXTURE / "node1", FIXTURE / "node2", env={})
    assert out.returncode == 0 and "V035" not in out.stderr


# ------------------------------------------------------------------------- real data

REAL = {  # dir: (groups, deleted groups, live offsets, offsets without an epoch)
    "kafka25-zk-offsets": (11, 8, 10, 0),
    "kraft41-offsets": (6, 0, 6, 6),
    "cp51-connect-cleaned": (19, 16, 2, 2),
    "kraft-ksql-txn": (2, 0, 0, 0),
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_consumer_groups(name: str, real_data: Path) -> None:
    objects, out = _objects(real_data / name)
    assert out.returncode == 0 and "F01" not in out.stdout
    s = objects[-1]
    assert (s["groups"], s["groups_deleted"], s["offsets"], s["offsets_without_epoch"]) == \
        REAL[name]


def test_real_offsets_against_their_own_partitions(real_data: Path) -> None:
    # kafka25's groups read first-0..2 and first_topic-0 on this very broker: all fine
    objects, out = _objects(real_data / "kafka25-zk-offsets", "--against",
                            real_data / "kafka25-zk-offsets")
    assert out.returncode == 0
    assert objects[-1]["verdicts"] == {"fine": 10}


def test_a_copy_without_log_files_says_so(real_data: Path) -> None:
    # kraft412-scram-snapshots kept every partition dir but no .log file
    out = run("consumers", real_data / "kraft412-scram-snapshots", env={})
    assert out.returncode == 0
    assert "50 of the partitions hold no log segment" in out.stdout


def test_a_replica_of_another_cluster_is_refused(tmp_path: Path) -> None:
    import shutil

    from kmeta.formats.textfiles import MetaProperties
    from kmeta.storage.writer import write_meta_properties

    for node, cluster in (("node1", "ClusterOfTheOffsetsXXXX"), ("node2", "AnotherClusterXXXXXXXXX")):
        shutil.copytree(FIXTURE / node, tmp_path / node)
        write_meta_properties(tmp_path / node, MetaProperties(cluster_id=cluster, node_id=1))
    for against in (tmp_path / "node2", tmp_path / "node2" / "orders-0"):
        out = run("consumers", tmp_path / "node1", "--against", against, env={})
        lines = out.stderr.strip().splitlines()
        assert out.returncode == 2 and len(lines) == 1, out.stderr
        assert "not replicas of one cluster" in lines[0] and "AnotherCluster" in lines[0]
    # the broker itself, or a replica of its cluster, is checked (exit 1: a group moves)
    itself = run("consumers", tmp_path / "node1", "--against", tmp_path / "node1", env={})
    assert itself.returncode == 1 and "cluster" not in itself.stderr
    write_meta_properties(tmp_path / "node2", MetaProperties(cluster_id="ClusterOfTheOffsetsXXXX",
                                                             node_id=2), overwrite=True)
    assert run("consumers", tmp_path / "node1", "--against", tmp_path / "node2",
               env={}).returncode == 1  # the unclean leader moves consumers


def test_an_epoch_the_client_did_not_send_is_not_called_pre_kip_320(tmp_path: Path) -> None:
    """OffsetCommitValue has leaderEpoch from v3 on, default -1 (OffsetCommitValue.json);
    the coordinator stores the request's committedLeaderEpoch, -1 when the client sent
    none (kraft41-offsets: 6 such v4 values from a 4.1 broker).  Only v0-2 lack the field."""
    from kmeta.formats.batch import build_batch
    from kmeta.formats.coordinator import encode_coordinator
    from kmeta.formats.group_schemas import OFFSETS_KEYS
    from kmeta.storage.writer import write_segments

    def commit(group: str, version: int, epoch: int | None) -> tuple[bytes, bytes | None]:
        value: dict = {"offset": 7, "metadata": "", "commitTimestamp": 1_700_000_000_000}
        if epoch is not None:
            value["leaderEpoch"] = epoch
        if version == 1:
            value["expireTimestamp"] = 1_700_086_400_000
        return encode_coordinator(OFFSETS_KEYS, 1, {"group": group, "topic": "orders",
                                                    "partition": 0}, version, value)

    records = [commit("unsent-v3", 3, -1), commit("unsent-v4", 4, -1),
               commit("old-v1", 1, None), commit("tracked", 3, 5)]
    write_segments(tmp_path / "__consumer_offsets-0",
                   [build_batch(0, records, base_timestamp=1_700_000_000_000)])
    out = run("consumers", tmp_path, env={"COLUMNS": "300"})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "2 of the committed offsets carry no leader epoch: the client sent none " \
        "(-1 in an OffsetCommitValue v3 or later, which has the field): a truncation " \
        "under them cannot be detected" in lines
    assert "1 of the committed offsets carry no leader epoch: written as OffsetCommitValue " \
        "v0-2, which has no such field (a broker before Kafka 2.1 and KIP-320, or v1 for a " \
        "commit with an expire time): a truncation under them cannot be detected" in lines
    assert "no epoch (the client sent none)" in out.stdout
    assert "no epoch (value v1)" in out.stdout
    assert "offset 7, epoch 5," in out.stdout
