"""The image against the disk (kmeta.core.placement, kmeta.ops.placement, verify).

The first tests are Kafka's own ``LogManagerTest.testIsStrayKraftReplica*`` cases
(core/src/test/scala/unit/kafka/log/LogManagerTest.scala, 3.7.1+): the same images and
logs, the same strays.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from kmeta.core import placement as P
from kmeta.core.image import MIGRATING_DIR
from kmeta.ops.placement import _verdict_finding, broker_placement, discovery_placement
from kmeta.storage.discover import discover
from tests.clirun import run
from tests.conftest import FIXTURES

PLACEMENT = FIXTURES / "placement"
JBOD = PLACEMENT / "jbod"
FOO, BAR, QUUX = "Zm9vLWlkLWZvby1pZC0wMA", "YmFyLWlkLWJhci1pZC0wMA", "cXV1eC1pZC1xdXV4LWlkMA"


def image(*partitions: tuple[str, str, int, list[int]], dirs: dict | None = None
          ) -> dict[str, dict[str, Any]]:
    """An image's topics map from (topic id, name, partition, replicas) rows."""
    topics: dict[str, dict[str, Any]] = {}
    for tid, name, pid, replicas in partitions:
        t = topics.setdefault(tid, {"name": name, "topicId": tid, "partitions": {}})
        directories = (dirs or {}).get((name, pid), [MIGRATING_DIR] * len(replicas))
        t["partitions"][pid] = {"replicas": replicas, "isr": list(replicas),
                                "leader": replicas[0], "directories": directories}
    return topics


def log(topic: str, partition: int, topic_id: str | None, *, state: str | None = None,
        log_dir: str = "/d0", directory_id: str | None = None) -> P.LocalLog:
    name = f"{topic}-{partition}" + ("" if state is None else f".{'0' * 32}-{state}")
    return P.LocalLog(f"{log_dir}/{name}", log_dir, directory_id, topic, partition, state,
                      topic_id)


ON_DISK = [log("foo", 0, FOO), log("foo", 1, FOO), log("bar", 0, BAR), log("bar", 1, BAR),
           log("quux", 0, QUUX)]


def strays(node: int, topics: dict, logs: list[P.LocalLog]) -> set[str]:
    return {f"{g.topic}-{g.partition}" for g in logs
            if P.stray_reason(node, topics, g) is not None}


# ---------------------------------------------------------------- LogManagerTest


def test_is_stray_kraft_replica_with_empty_image() -> None:
    assert strays(0, {}, ON_DISK) == {"foo-0", "foo-1", "bar-0", "bar-1", "quux-0"}


def test_is_stray_kraft_replica_in_image() -> None:
    topics = image((FOO, "foo", 0, [0, 1, 2]), (BAR, "bar", 0, [0, 1, 2]),
                   (BAR, "bar", 1, [0, 1, 2]))
    assert strays(0, topics, ON_DISK) == {"foo-1", "quux-0"}


def test_is_stray_kraft_replica_in_image_with_remote_replicas() -> None:
    topics = image((BAR, "bar", 0, [1, 2, 3]), (BAR, "bar", 1, [2, 3, 0]),
                   (FOO, "foo", 0, [0, 1, 2]))
    disk = [log("bar", 0, BAR), log("bar", 1, BAR), log("foo", 0, FOO)]
    assert strays(0, topics, disk) == {"bar-0"}
    assert P.stray_reason(0, topics, disk[0]) == P.NOT_A_REPLICA


def test_is_stray_kraft_missing_topic_id() -> None:
    topics = image((FOO, "foo", 0, [0, 1, 2]))
    assert P.stray_reason(0, topics, log("foo", 0, None)) == P.NO_TOPIC_ID


# ---------------------------------------------------------------- kmeta's rules


def test_a_recreated_topic_is_told_apart_from_a_deleted_one() -> None:
    topics = image((FOO, "foo", 0, [0]))
    assert P.stray_reason(0, topics, log("foo", 0, BAR)) == P.TOPIC_ID_DIFFERS
    assert P.stray_reason(0, topics, log("gone", 0, BAR)) == P.NOT_IN_IMAGE
    placed = P.place(0, topics, [log("foo", 0, BAR)])
    assert placed.verdicts[0].image_topic_id == FOO
    # the new topic's replica is then missing: Kafka creates it and fetches it
    assert [(m.topic, m.topic_id) for m in placed.missing] == [("foo", FOO)]


def test_a_stray_is_deleted_only_where_the_history_removed_its_topic() -> None:
    """isStrayKraftReplica asks only whether the image has the partition; kmeta says why
    it has none as the replay knows it: a partition number the live topic lacks is not
    "topic deleted", and neither is an id the history never held."""
    topics = image((FOO, "foo", 0, [0]))
    assert P.stray_reason(0, topics, log("foo", 7, FOO)) == P.NO_SUCH_PARTITION
    assert P.stray_reason(0, topics, log("gone", 0, BAR)) == P.NOT_IN_IMAGE
    assert P.stray_reason(0, topics, log("gone", 0, BAR), removed={BAR}) == P.TOPIC_DELETED
    (v,) = P.place(0, topics, [log("gone", 0, BAR)], removed_topic_ids={BAR}).verdicts
    assert (v.verdict, v.reason) == (P.STRAY, P.TOPIC_DELETED)
    said = {r: _verdict_finding(P.Verdict(log("foo", 7, FOO), P.STRAY, r), 0, None).message
            for r in (P.NO_SUCH_PARTITION, P.NOT_IN_IMAGE, P.TOPIC_DELETED)}
    assert "has no partition 7" in said[P.NO_SUCH_PARTITION]
    assert "deleted" not in said[P.NO_SUCH_PARTITION] + said[P.NOT_IN_IMAGE]
    assert "removed the topic" in said[P.TOPIC_DELETED]


def test_stray_severity_follows_the_versions_the_metadata_version_allows() -> None:
    topics = image((FOO, "foo", 0, [1, 2]))
    moved = P.place(0, topics, [log("foo", 0, FOO)]).verdicts[0]
    nameless = P.place(0, topics, [log("foo", 0, None)]).verdicts[0]
    code = lambda v, level: _verdict_finding(v, 0, level).code  # noqa: E731
    # 3.5/3.6 delete strays: an image of 3.6-IV2 may be served by them
    assert code(moved, 14) == "V180" and code(moved, None) == "V180"
    assert code(moved, 15) == "V181"  # 3.7+: renamed -stray and kept
    # 3.7.0 refuses to start on a log without a topic id; 3.8+ keep it as a stray
    assert code(nameless, 19) == "V182" and code(nameless, 20) == "V181"


def test_abandoned_future_log_is_promoted_only_into_its_assigned_dir() -> None:
    dirs = {("foo", 0): ["DIRBBBBBBBBBBBBBBBBBBB"]}
    topics = image((FOO, "foo", 0, [0]), dirs=dirs)
    current = log("foo", 0, FOO, log_dir="/a", directory_id="DIRAAAAAAAAAAAAAAAAAAA")
    future = log("foo", 0, FOO, state="future", log_dir="/b",
                 directory_id="DIRBBBBBBBBBBBBBBBBBBB")
    placed = P.place(0, topics, [current, future], ["DIRAAAAAAAAAAAAAAAAAAA",
                                                    "DIRBBBBBBBBBBBBBBBBBBB"])
    by = {v.log.path: v for v in placed.verdicts}
    assert by[future.path].verdict == P.FUTURE_PROMOTED
    assert by[future.path].other == current.path
    assert by[current.path].verdict == P.REPLACED
    assert placed.missing == []
    # assigned to the current log's dir: the move is still going on
    topics = image((FOO, "foo", 0, [0]), dirs={("foo", 0): ["DIRAAAAAAAAAAAAAAAAAAA"]})
    placed = P.place(0, topics, [current, future])
    by = {v.log.path: v for v in placed.verdicts}
    assert by[future.path].verdict == P.FUTURE_KEPT
    assert by[current.path].verdict == P.FINE
    assert by[current.path].directory == P.DIR_MATCHES
    # a future log without a topic id: 3.7.1+ refuse to start
    nameless = log("foo", 0, None, state="future", log_dir="/b")
    assert P.place(0, topics, [current, nameless]).verdicts[1].verdict == \
        P.FUTURE_NO_TOPIC_ID


def test_directory_assignment_of_each_replica() -> None:
    a, b, unknown = "DIRAAAAAAAAAAAAAAAAAAA", "DIRBBBBBBBBBBBBBBBBBBB", "DIRCCCCCCCCCCCCCCCCCCC"
    topics = image((FOO, "foo", 0, [0]), (FOO, "foo", 1, [0]), (FOO, "foo", 2, [0]),
                   (FOO, "foo", 3, [0]), (FOO, "foo", 4, [0]),
                   dirs={("foo", 0): [a], ("foo", 1): [b], ("foo", 2): [unknown],
                         ("foo", 3): [P.LOST_DIR]})  # foo-4: MIGRATING, not judged
    disk = [log("foo", p, FOO, log_dir="/a", directory_id=a) for p in range(5)]
    got = {v.log.partition: v.directory for v in P.place(0, topics, disk, [a, b]).verdicts}
    assert got == {0: P.DIR_MATCHES, 1: P.DIR_OTHER, 2: P.DIR_UNKNOWN,
                   3: P.DIR_RESERVED, 4: None}


def test_one_partition_in_two_log_dirs_is_a_duplicate() -> None:
    topics = image((FOO, "foo", 0, [0]))
    placed = P.place(0, topics, [log("foo", 0, FOO, log_dir="/a"),
                                 log("foo", 0, FOO, log_dir="/b")])
    assert [v.verdict for v in placed.verdicts] == [P.FINE, P.DUPLICATE]


def test_reserved_directory_ids() -> None:
    assert P.is_reserved_directory_id(MIGRATING_DIR)
    assert P.is_reserved_directory_id(P.UNASSIGNED_DIR)
    assert P.is_reserved_directory_id(P.LOST_DIR)
    assert P.is_reserved_directory_id("AAAAAAAAAAAAAAAAAAAAYw")  # 99: reserved
    assert not P.is_reserved_directory_id("AAAAAAAAAAAAAAAAAAAAZA")  # 100: not
    assert not P.is_reserved_directory_id("DIRAAAAAAAAAAAAAAAAAAA")


# ---------------------------------------------------------------- the fixture, in verify


def _findings(*args: str) -> list[dict]:
    out = run("verify", "--json", *args)
    assert out.returncode in (0, 1), out.stderr
    return [o for o in map(json.loads, out.stdout.splitlines()) if o["kind"] == "finding"]


def test_jbod_broker_verdicts_in_verify() -> None:
    findings = _findings(str(JBOD))
    codes: dict[str, set[str]] = {}
    for f in findings:
        if f["code"] >= "V180":
            codes.setdefault(Path(f["file"]).relative_to(JBOD).as_posix(), set()).add(f["code"])
    stray = {k for k, v in codes.items() if v == {"V181"}}
    assert stray == {"logs-b/gone-0", "logs-a/recreated-0", "logs-b/moved-0",
                     "logs-a/nameless-0"}
    assert codes["logs-a/orders-1"] == {"V191"}  # assigned to logs-b
    assert codes["logs-b/events-0"] == {"V192"}  # assigned to a disk node 4 lacks
    assert {k for k, v in codes.items() if v == {"V186"}} == \
        {k for k in codes if k.startswith("logs-b/moving-0.") and k.endswith("-future")}
    assert any(k.endswith("-stray") and v == {"V184"} for k, v in codes.items())
    assert any(k.endswith("-delete") and v == {"V185"} for k, v in codes.items())
    assert "logs-a/orders-0" not in codes and "logs-a/moving-0" not in codes
    missing = {f["details"]["topic_id"]: f for f in findings if f["code"] in ("V189", "V190")}
    lonely = next(f for f in missing.values() if "lonely-0" in f["message"])
    assert lonely["code"] == "V190" and lonely["details"]["checkpoint_offset"] == 7
    assert {f["message"].split(" is ")[0] for f in missing.values()} == \
        {"lonely-0", "recreated-0", "nameless-0"}
    recreated = next(f for f in missing.values() if f["message"].startswith("recreated-0"))
    assert recreated["details"]["leader"] == 5 and "from leader 5" in recreated["message"]


def test_a_peer_says_how_many_bytes_a_missing_replica_fetches() -> None:
    placed = broker_placement([JBOD / "logs-a", JBOD / "logs-b"],
                              peers=[PLACEMENT / "peer-5"])
    assert placed is not None and placed.node_id == 4
    (m,) = [m for m in placed.placement.missing if m.topic == "recreated"]
    size = sum(p.stat().st_size for p in (PLACEMENT / "peer-5" / "recreated-0").glob("*.log"))
    assert m.peer_path == str(PLACEMENT / "peer-5" / "recreated-0") and m.peer_bytes == size
    kinds = {o["kind"] for o in placed.json_objects()}
    assert kinds == {"placement", "missing_replica"}


def test_metadata_elsewhere_is_given_with_the_metadata_option(tmp_path: Path) -> None:
    codes = {f["code"] for f in _findings(str(JBOD / "logs-b"), "--metadata",
                                          str(JBOD / "logs-a" / "__cluster_metadata-0"))}
    assert {"V181", "V186", "V192"} <= codes
    # without it there is no image for logs-b: nothing is said, and the report says so
    out = run("verify", str(JBOD / "logs-b"))
    assert "placement of node 4 not checked" in out.stdout
    assert run("verify", str(JBOD / "logs-b"), "--metadata", str(tmp_path / "no")
               ).returncode == 3


def test_log_dirs_of_one_broker_that_disagree() -> None:
    mixed = PLACEMENT / "mixed"
    codes = {(Path(f["file"]).parent.name, f["code"]) for f in _findings(str(mixed))
             if f["code"] in ("V194", "V195", "V196")}
    assert codes == {("logs-b", "V194"), ("logs-b", "V196")}  # logs-c: node 5, another broker
    placed = broker_placement([mixed / "logs-a", mixed / "logs-b", mixed / "logs-c"])
    assert placed is not None
    assert {f.code for f in placed.findings} >= {"V194", "V195", "V196"}


def test_a_broker_whose_every_partition_is_in_its_image_has_no_placement_finding(
        tmp_path: Path) -> None:
    broker = tmp_path / "b"
    shutil.copytree(JBOD / "logs-a", broker / "logs-a")
    for name in ("recreated-0", "nameless-0", "moving-0", "orders-1"):
        shutil.rmtree(broker / "logs-a" / name)
    (placed,) = discovery_placement(discover([broker]), {})
    assert [v.verdict for v in placed.placement.verdicts] == [P.FINE, P.DELETE_DIR]


# ---------------------------------------------------------------- real brokers


def _placements(path: Path) -> list:
    return discovery_placement(discover([path]), {})


def test_real_kraft_brokers_hold_what_their_images_give_them(real_data: Path) -> None:
    for name, nodes in (("kraft32-three", [1, 2, 3]), ("quorum3-boaz", [1, 2, 3]),
                        ("kraft41-offsets", [1]), ("kraft-ksql-txn", [1]),
                        ("kraft412-scram-snapshots", [1])):
        placed = _placements(real_data / name)
        assert sorted(b.node_id for b in placed) == nodes, name
        for b in placed:
            assert b.placement is not None and not b.not_run, name
            assert {v.verdict for v in b.placement.verdicts} <= {P.FINE}, name
            assert b.placement.missing == [] and b.findings == [], name
    three = {b.node_id: len(b.placement.verdicts) for b in _placements(real_data /
                                                                        "kraft32-three")}
    assert three == {1: 21, 2: 20, 3: 21}


def test_real_broker_copies_without_their_partitions(real_data: Path) -> None:
    # ldi-poc's copy left out __consumer_offsets and two topics: created empty on start;
    # only __consumer_offsets-6 held records (its high watermark is 13)
    (b,) = _placements(real_data / "ldi-poc")
    codes = [(f.code, f.message.split(" is ")[0]) for f in b.findings]
    assert [c for c in codes if c[0] == "V190"] == [("V190", "__consumer_offsets-6")]
    assert sum(1 for c in codes if c[0] == "V198") == 51


def test_zookeeper_brokers_have_no_image_and_nothing_is_said(real_data: Path) -> None:
    for name in ("kafka25-zk-offsets", "cp51-connect-cleaned"):
        assert _placements(real_data / name) == []
        out = run("verify", str(real_data / name))
        # no placement finding nor object; the line that says the metadata rules did not
        # run (no metadata log in a ZooKeeper-mode dir) names placement among them
        said = [line for line in out.stdout.splitlines() if "placement" in line]
        assert all(line.startswith("not checked") for line in said), said


def test_placement_objects_match_their_declaration() -> None:
    from kmeta.output_schema import MISSING_REPLICA
    from kmeta.output_schema import PLACEMENT as PLACEMENT_KIND

    placed = broker_placement([JBOD / "logs-a", JBOD / "logs-b"],
                              peers=[PLACEMENT / "peer-5"])
    assert placed is not None
    kinds = {"placement": PLACEMENT_KIND, "missing_replica": MISSING_REPLICA}
    objects = placed.json_objects()
    assert {o["kind"] for o in objects} == set(kinds)
    for o in objects:
        assert list(kinds[o["kind"]].problems(o, o["kind"])) == []


def test_each_verdict_makes_its_finding() -> None:
    a, b = "DIRAAAAAAAAAAAAAAAAAAA", "DIRBBBBBBBBBBBBBBBBBBB"
    topics = image((FOO, "foo", 0, [0]), (BAR, "bar", 0, [0]),
                   dirs={("foo", 0): [a], ("bar", 0): [P.UNASSIGNED_DIR]})
    disk = [log("foo", 0, FOO, log_dir="/a", directory_id=a),
            log("foo", 0, FOO, state="future", log_dir="/b", directory_id=b),
            log("bar", 0, BAR, log_dir="/a", directory_id=a),
            log("bar", 0, BAR, log_dir="/b", directory_id=b),
            log("quux", 0, None, state="future", log_dir="/b", directory_id=b)]
    placed = P.place(0, topics, disk, [a, b])
    codes = {(v.log.path, v.verdict): getattr(_verdict_finding(v, 0, 27), "code", None)
             for v in placed.verdicts}
    assert codes == {("/a/foo-0", P.FINE): None,
                     (f"/b/foo-0.{'0' * 32}-future", P.FUTURE_KEPT): "V187",
                     ("/a/bar-0", P.FINE): "V193",
                     ("/b/bar-0", P.DUPLICATE): "V197",
                     (f"/b/quux-0.{'0' * 32}-future", P.FUTURE_NO_TOPIC_ID): "V188"}


def test_a_missing_replica_is_judged_by_what_the_checkpoints_remember() -> None:
    from kmeta.ops.placement import _missing_finding

    def missing(isr: tuple[int, ...], checkpoint: int | None) -> str:
        m = P.MissingReplica("foo", FOO, 0, isr[0], isr, isr, None, None,
                             checkpoint_offset=checkpoint)
        return _missing_finding(m, 0, "/a").code

    assert missing((0,), 13) == "V190"      # records only this node had: lost
    assert missing((0,), 0) == "V198"       # it held none: nothing lost
    assert missing((1, 0), 13) == "V189"    # fetched back from leader 1
    assert missing((0,), None) == "V199"    # never held here
    assert missing((1, 0), None) == "V199"


def test_replicas_never_held_here_are_one_finding() -> None:
    # fixtures/data/healthy is node 4's metadata log with orders-0 alone
    (b,) = discovery_placement(discover([FIXTURES / "healthy"]), {})
    (f,) = b.findings
    assert f.code == "V199" and len(f.details["missing_replicas"]) == len(b.placement.missing)
    assert len(b.placement.missing) == 55 and "orders-0" not in f.details["missing_replicas"]


@pytest.mark.parametrize("content", [
    b"version: 0\ntopic_id: dmFD58w7QUGmJhtU1L0vPA",       # as Kafka writes it
    b"version: 0\ntopic_id: dmFD58w7QUGmJhtU1L0vPA\n",
    b"version: 0\ntopic_id: dmFD58w7QUGmJhtU1L0vPB",       # not canonical: the parser's
    b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA",       # zero id: refused
    b"version: 1\ntopic_id: dmFD58w7QUGmJhtU1L0vPA",
    b"version:0\r\ntopic_id:dmFD58w7QUGmJhtU1L0vPA  \n",
    b"",
])
def test_the_fast_topic_id_reader_agrees_with_the_parser(tmp_path: Path,
                                                         content: bytes) -> None:
    from kmeta.ops.placement import _topic_id
    from kmeta.storage.files import load_checked

    part = tmp_path / "foo-0"
    part.mkdir()
    (part / "partition.metadata").write_bytes(content)
    (p,) = discover([part]).partitions
    loaded, _ = load_checked(p.live_file("partition-metadata"))
    assert _topic_id(p) == (None if loaded is None else loaded.topic_id)


def test_a_broker_s_placement_lists_no_partition_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    """Placement reads each log's partition.metadata by its name: on a broker of 4,000
    partitions, listing every dir's files again was a second of kmeta startup.  The
    judgement is the one a full listing gives."""
    import kmeta.ops.placement as placement
    import kmeta.storage.discover as D

    dirs = [str(FIXTURES / "placement" / "jbod" / "logs-a"),
            str(FIXTURES / "placement" / "jbod" / "logs-b")]
    with monkeypatch.context() as m:  # every dir listed up front
        m.setattr(placement, "discover",
                  lambda paths, defer=False, progress=None: D.discover(paths))
        listed = broker_placement(dirs)
    assert listed is not None and listed.findings

    def refuse(path: Path, *args: Any, **kwargs: Any) -> Any:
        if not path.name.startswith("__cluster_metadata"):
            raise AssertionError(f"{path} listed")
        return real(path, *args, **kwargs)

    real = D._scan_partition
    monkeypatch.setattr(D, "_scan_partition", refuse)
    unlisted = broker_placement(dirs)
    assert unlisted is not None
    assert unlisted.json_objects() == listed.json_objects()
    assert [f.to_json() for f in unlisted.findings] == [f.to_json() for f in listed.findings]
