"""The ```python blocks of README.md's "Fleet analysis on Spark" section, run as written on
a small fleet (the quorum3 divergent fixture's three replicas, the healthy fixture and the
real three-controller quorum), their answers checked against facts computed here with
kmeta's library and CLI, not with Spark.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import clirun
import pytest
from conftest import FIXTURES, REPO

from kmeta.findings import Finding
from kmeta.formats.payload import decode_control, decode_metadata
from kmeta.ops.replay import build_image
from kmeta.storage.discover import discover
from kmeta.storage.segments import mapped, scan_records

SECTION = "## Fleet analysis on Spark"
#: what each block binds, in README order
RESULTS = [{"records"}, {"dump_events", "verify_events", "leaders"}, {"histogram"},
           {"disagreements"}, {"leader_changes"}, {"config_changes"}]
RESOURCE_TYPES = {2: "topic", 4: "broker", 8: "broker_logger", 16: "client_metrics",
                  32: "group"}


def section_blocks() -> list[str]:
    text = (REPO / "README.md").read_text("utf-8")
    start = text.index(f"\n{SECTION}\n")
    end = text.index("\n## ", start + 1)
    return re.findall(r"^```python\n(.*?)^```", text[start:end], re.S | re.M)


def _cli_json(command: str, paths: list[str], out: Path | None = None) -> list[dict]:
    proc = clirun.run(command, "--json", *paths, cwd=REPO)
    assert proc.returncode in (0, 1), proc.stderr
    if out is not None:
        out.write_text(proc.stdout, "utf-8")
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _identity(path: Path) -> tuple[str, int]:
    props = dict(line.split("=", 1) for line in (path / "meta.properties").read_text()
                 .splitlines() if "=" in line and not line.startswith("#"))
    return props["cluster.id"], int(props["node.id"])


class Replica:
    """What one replica's metadata partition holds, read with kmeta.storage.scan."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self.cluster, self.node = _identity(path)
        part = next(p for p in discover([path]).all_partitions() if p.is_metadata)
        self.names: dict[str, str] = {}  # topic id -> name, from log and snapshots
        self.leader_changes: Counter[tuple[str, int]] = Counter()
        self.configs: set[tuple] = set()  # retention.ms ConfigRecords of the log
        last: Any = None  # the batch with the greatest last offset of the log
        segments = {str(f.path) for f in part.segments}
        for f in part.segments + part.snapshots:
            with mapped(f.path) as buf:
                for item in scan_records(buf, str(f.path), decode_metadata, decode_control):
                    if type(item) is Finding:
                        continue
                    batch, record, payload = item
                    data = payload.data
                    if payload.type == "TOPIC_RECORD":
                        self.names[data["topicId"]] = data["name"]
                    if str(f.path) not in segments:
                        continue
                    if last is None or batch.last_offset > last.last_offset:
                        last = batch
                    if payload.type == "PARTITION_CHANGE_RECORD" and "leader" in data:
                        self.leader_changes[(data["topicId"], data["partitionId"])] += 1
                    elif payload.type == "CONFIG_RECORD" and data["name"] == "retention.ms":
                        self.configs.add((record.offset, record.timestamp,
                                          RESOURCE_TYPES[data["resourceType"]],
                                          data["resourceName"], data.get("value")))
        self.end_offset = last.last_offset + 1
        self.latest_epoch = last.leader_epoch
        self.digest = build_image(path).image.digest()


@pytest.fixture(scope="module")
def fleet(real_data: Path) -> list[Path]:
    quorum = real_data / "quorum3-boaz" / "data"
    return [*sorted((FIXTURES / "divergent" / "quorum3").iterdir()), FIXTURES / "healthy",
            *(quorum / f"kafka-{n}" for n in (1, 2, 3))]


@pytest.fixture(scope="module")
def replicas(fleet: list[Path]) -> list[Replica]:
    return [Replica(p) for p in fleet]


@pytest.fixture(scope="module")
def pipe_input() -> Path:
    return FIXTURES / "divergent" / "quorum3" / "a"


class _Reader:
    """``spark.read`` whose kmeta reads are made once per table and cached: the blocks read
    the same tables again and again, and each read parses every file of the fleet (a few
    seconds each on a small machine).  What a block gets is what the real read gives."""

    def __init__(self, spark: Any, memo: dict) -> None:
        self.spark, self.memo = spark, memo
        self.options: dict[str, str] = {}

    def format(self, name: str) -> Any:
        return self if name == "kmeta" else self.spark.read.format(name)

    def option(self, key: str, value: str) -> _Reader:
        self.options[key] = value
        return self

    def load(self, paths: list[str]) -> Any:
        key = (tuple(sorted(self.options.items())), tuple(paths))
        if key not in self.memo:
            read = self.spark.read.format("kmeta")
            for k, v in self.options.items():
                read = read.option(k, v)
            self.memo[key] = read.load(paths).cache()
        return self.memo[key]

    def __getattr__(self, name: str) -> Any:  # schema(), json() ...: the real reader's
        return getattr(self.spark.read, name)


class _Spark:
    """The session the blocks see: the real one, with kmeta reads memoised."""

    def __init__(self, spark: Any) -> None:
        self._spark, self._memo = spark, {}

    @property
    def read(self) -> _Reader:
        return _Reader(self._spark, self._memo)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._spark, name)


@pytest.fixture(scope="module")
def results(spark, fleet: list[Path], pipe_input: Path, tmp_path_factory):
    """Every block exec'd as written, on its own, given only ``spark`` and ``paths``."""
    blocks = section_blocks()
    assert len(blocks) == len(RESULTS), "README section blocks changed: update RESULTS"
    # The JSON pipe block reads the files its ```sh block writes; Spark resolves relative
    # paths against the JVM's working dir, so the test points it at absolute ones.
    where = tmp_path_factory.mktemp("pipe")
    files = {name: where / name for name in ("dump.jsonl", "verify.jsonl")}
    _cli_json("dump", [str(pipe_input)], files["dump.jsonl"])
    _cli_json("verify", [str(pipe_input)], files["verify.jsonl"])
    out: dict[str, Any] = {}
    session = _Spark(spark)
    for block, names in zip(blocks, RESULTS, strict=True):
        for name, path in files.items():
            block = block.replace(f'"{name}"', repr(str(path)))
        ns: dict[str, Any] = {"spark": session, "paths": [str(p) for p in fleet]}
        exec(compile(block, f"README.md: {SECTION}", "exec"), ns)
        first = block.splitlines()[0]
        if first.startswith("# "):  # a query block names its result in its first line
            assert {first[2:].strip()} == names
        for name in names:
            assert type(ns[name]).__name__ == "DataFrame", name
            out[name] = ns[name]
    yield out
    for df in session._memo.values():
        df.unpersist()


def test_records_table(results) -> None:
    from kmeta.ops.export import COMMON, TABLES

    assert results["records"].columns == [c.name for c in COMMON + TABLES["records"]]


def test_json_pipe(results, pipe_input: Path) -> None:
    dump = _cli_json("dump", [str(pipe_input)])
    assert results["dump_events"].count() == len(dump)
    leaders = Counter((o["file"], o["offset"], str(o["data"]["leader"])) for o in dump
                      if o["kind"] == "record" and o["type"] == "PARTITION_CHANGE_RECORD"
                      and "leader" in o["data"])
    assert leaders
    assert Counter(tuple(r) for r in results["leaders"].collect()) == leaders
    kinds = Counter(r.kind for r in results["verify_events"].select("kind").collect())
    assert kinds["summary"] == 1 and set(kinds) <= {"summary", "finding"}


def test_histogram(results, fleet: list[Path]) -> None:
    """Record types per node equal what ``kmeta dump --json`` prints for each data dir's
    metadata files (those it decodes as metadata: the data topics are not in the table)."""
    want: Counter[tuple] = Counter()
    roots = [(str(p) + "/", _identity(p)) for p in fleet]
    decoders: dict[str, str] = {}
    for o in _cli_json("dump", [str(p) for p in fleet]):
        if o["kind"] == "file":
            decoders[o["file"]] = o.get("decoder")
        if o["kind"] == "record" and decoders[o["file"]] == "metadata":
            cluster, node = next(ident for root, ident in roots if o["file"].startswith(root))
            want[(cluster, node, o["type"])] += 1
    rows = results["histogram"].collect()
    assert {(r.cluster_id, r.node_id, r.type): r.records for r in rows} == dict(want)
    assert len(rows) == len(want)
    assert rows[0].node_id is not None and rows[0].records >= rows[1].records


def test_disagreements(results, replicas: list[Replica]) -> None:
    by_cluster: dict[str, list[Replica]] = defaultdict(list)
    for r in replicas:
        by_cluster[r.cluster].append(r)
    want = set()
    for group in by_cluster.values():
        flags = tuple(len({getattr(r, a) for r in group}) > 1
                      for a in ("end_offset", "latest_epoch", "digest"))
        if any(flags):
            want |= {(r.cluster, r.node, r.path, r.end_offset, r.latest_epoch, r.digest,
                      *flags) for r in group}
    rows = results["disagreements"].collect()
    assert {tuple(r) for r in rows} == want and len(rows) == len(want)

    # Facts from elsewhere: the fixture's MANIFEST, and the real quorum's README.
    manifest = json.loads((FIXTURES / "divergent" / "MANIFEST.json").read_text())
    case = next(c for c in manifest["cases"] if c["name"] == "quorum3")
    got = {Path(r.source).name: r for r in rows if "/divergent/quorum3/" in r.source}
    assert set(got) == set(case["replicas"])
    for name, facts in case["replicas"].items():
        assert got[name].node_id == facts["node_id"]
        assert got[name].end_offset == facts["log_end_offset"]
        assert got[name].latest_epoch == facts["latest_epoch"]
    real = {Path(r.source).name: r for r in rows if "quorum3-boaz" in r.source}
    k1, k2, k3 = real["kafka-1"], real["kafka-2"], real["kafka-3"]
    # kafka-1 and kafka-2 agree; kafka-3 holds one more batch, the LeaderChange of epoch 32
    assert (k1.end_offset, k1.latest_epoch, k1.digest) == \
        (k2.end_offset, k2.latest_epoch, k2.digest)
    assert (k3.end_offset, k3.latest_epoch) == (k1.end_offset + 1, 32)
    assert k3.end_offsets_differ and k3.epochs_differ and not k3.digests_differ
    # the healthy fixture is a cluster of one: nothing to disagree with
    assert all("healthy" not in r.source for r in rows)


def test_leader_changes(results, replicas: list[Replica]) -> None:
    per_partition: dict[tuple, list[int]] = defaultdict(list)
    names: dict[tuple, str] = {}
    for r in replicas:
        for (topic_id, partition), n in r.leader_changes.items():
            per_partition[(r.cluster, topic_id, partition)].append(n)
        names |= {(r.cluster, t): name for t, name in r.names.items()}
    want = {(c, names.get((c, t)), t, p, max(ns), len(ns))
            for (c, t, p), ns in per_partition.items()}
    rows = results["leader_changes"].collect()
    assert {tuple(r) for r in rows} == want and len(rows) == len(want)
    assert rows[0].leader_changes == max(w[4] for w in want)
    # the quorum3 fixture's partitions are counted once, over its three replicas
    assert any(r.replicas == 3 for r in rows)


def test_config_changes(results, replicas: list[Replica]) -> None:
    nodes: dict[tuple, set[int]] = defaultdict(set)
    for r in replicas:
        for change in r.configs:
            nodes[(r.cluster, *change)].add(r.node)
    rows = results["config_changes"].collect()
    got = {(r.cluster_id, r.offset, r.timestamp, r.resource_type, r.resource, r.value):
           r.nodes for r in rows}
    assert got == {k: sorted(v) for k, v in nodes.items()} and len(rows) == len(got)
    assert any(len(v) == 3 for v in nodes.values())  # one record, held by three replicas
    assert any(v[-1] is None for v in nodes)  # a deletion: the key removed
    assert all(r.time is not None for r in rows)
