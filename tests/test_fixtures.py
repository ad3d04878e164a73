"""The committed fixtures: current, healthy where they say so, damaged exactly where their
MANIFEST says, and divergent the way their README says — as kmeta reads them."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest
from conftest import CORRUPT, DIVERGENT, FIXTURES, HEALTHY, HEALTHY_META, REPO

from kmeta.findings import Finding
from kmeta.formats.control_schemas import CONTROL_MESSAGES, CONTROL_TYPE_NAMES
from kmeta.formats.filenames import classify
from kmeta.formats.indexes import parse_offset_index, parse_time_index
from kmeta.formats.metadata_schemas import METADATA_MESSAGES
from kmeta.formats.payload import decode_control, decode_metadata, encode_metadata
from kmeta.formats.schema import versions
from kmeta.formats.textfiles import (
    parse_leader_epoch_checkpoint,
    parse_partition_metadata,
    parse_quorum_state,
)
from kmeta.ops.dump import DumpOptions, dump, dump_file
from kmeta.render.jsonl import render
from kmeta.storage.discover import discover
from kmeta.storage.segments import scan_batches


# Known bugs in code this test does not own; strict, so the marker must go once fixed.
@cache
def generator() -> ModuleType:
    """fixtures/generate.py, imported from its path (fixtures/ is not a package)."""
    spec = importlib.util.spec_from_file_location("kmeta_fixtures_generate",
                                                  REPO / "fixtures" / "generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def json_events(events) -> list[dict]:
    """Events as ``kmeta dump --json`` prints them (one object per line)."""
    out = []
    for chunk in render(events):
        out.extend(json.loads(line) for line in chunk.splitlines() if line.strip())
    return out


def dump_json(path: Path) -> list[dict]:
    return json_events(dump(discover([path]), DumpOptions()))


def findings_of(events: list[dict]) -> list[dict]:
    return [e for e in events if e["kind"] == "finding"]


def batch_files(root: Path):
    return [f for f in discover([root]).all_files() if f.is_batches]


def log_batches(partition: Path) -> list:
    """Every batch of a partition's segments, in offset order."""
    out = []
    for seg in sorted(partition.glob("*.log")):
        items = list(scan_batches(seg.read_bytes(), str(seg)))
        assert not [x for x in items if isinstance(x, Finding)]
        out.extend(items)
    return out


# ----------------------------------------------------------------------- (a) up to date


def test_committed_fixtures_are_byte_identical_to_a_fresh_generation(tmp_path):
    gen = generator()
    gen.generate(tmp_path, seed=gen.DEFAULT_SEED)
    assert gen.compare_trees(FIXTURES, tmp_path) == [], \
        "fixtures/data is stale: run python fixtures/generate.py --force"


# ----------------------------------------------------------------------- (b) healthy


def test_healthy_is_a_broker_data_dir():
    names = {p.name for p in HEALTHY.iterdir()}
    assert {"meta.properties", "bootstrap.checkpoint", "recovery-point-offset-checkpoint",
            "replication-offset-checkpoint", "log-start-offset-checkpoint",
            "cleaner-offset-checkpoint", "__cluster_metadata-0", "orders-0"} <= names
    kinds = Counter(classify(p.name).kind for p in HEALTHY_META.iterdir())
    assert kinds["segment"] >= 3
    assert kinds["offset-index"] == kinds["time-index"] == kinds["segment"]
    assert 2 <= kinds["kraft-snapshot"] <= 3
    assert kinds["leader-epoch-checkpoint"] == kinds["quorum-state"] == 1
    assert kinds["partition-metadata"] == 1


@pytest.mark.parametrize("file", batch_files(HEALTHY), ids=lambda f: f.path.name)
def test_healthy_batch_files_decode_without_findings(file):
    events = json_events(dump_file(file, DumpOptions()))
    assert findings_of(events) == []
    assert any(e["kind"] == "record" for e in events)


def _small_files():
    for f in discover([HEALTHY]).all_files():
        if f.is_batches:
            continue
        yield pytest.param(f, id=f"{f.path.parent.name}/{f.path.name}")


@pytest.mark.parametrize("file", list(_small_files()))
def test_healthy_small_files_parse(file):
    events = json_events(dump_file(file, DumpOptions()))
    assert findings_of(events) == []
    assert events[0]["kind"] == "file" and "content" in events[0]


def test_healthy_dump_has_no_findings():
    events = dump_json(HEALTHY)
    assert findings_of(events) == []


@cache
def healthy_records() -> list[dict]:
    events = []
    for f in batch_files(HEALTHY):
        events += json_events(dump_file(f, DumpOptions()))
    return [e for e in events if e["kind"] == "record"]


def test_healthy_holds_every_record_type_at_every_version():
    expected = set()
    for m in METADATA_MESSAGES.values():
        v = versions(m.valid_versions)
        expected |= {(m.type_name, i) for i in range(v.lo, v.hi + 1)}
    for ctype, m in CONTROL_MESSAGES.items():
        v = versions(m.valid_versions)
        expected |= {(CONTROL_TYPE_NAMES[ctype], i) for i in range(v.lo, v.hi + 1)}
    expected |= {("ABORT", 0), ("COMMIT", 0)}  # transaction markers, in orders-0
    seen = {(r["type"], r["version"]) for r in healthy_records()}
    assert expected - seen == set()


def test_healthy_has_every_codec():
    codecs = Counter()
    for f in batch_files(HEALTHY):
        codecs.update(e["compression"] for e in json_events(dump_file(f, DumpOptions()))
                      if e["kind"] == "batch")
    assert {"gzip", "snappy", "lz4", "zstd"} <= set(codecs)


def test_healthy_heartbeats_look_real():
    batches = log_batches(HEALTHY_META)
    records = sum(b.records_count for b in batches)
    noops = [b for b in batches if not b.is_control and b.records_count == 1
             and decode_metadata(b.records()[0].value).type == "NO_OP_RECORD"]
    assert len(noops) / records > 0.9
    for b in batches:  # a NoOp is always alone in its batch
        if not b.is_control:
            types = [decode_metadata(r.value).type for r in b.records()]
            assert b.records_count == 1 or "NO_OP_RECORD" not in types
    gaps = Counter((b.max_timestamp - a.max_timestamp) // 10 * 10
                   for a, b in zip(noops, noops[1:], strict=False))
    assert gaps.most_common(1)[0][0] == 500


def test_healthy_epochs_and_indexes_agree_with_the_batches():
    batches = log_batches(HEALTHY_META)
    epochs = []
    for b in batches:
        if not epochs or b.leader_epoch > epochs[-1][0]:
            epochs.append((b.leader_epoch, b.base_offset))
            first = decode_control(b.records()[0].key, b.records()[0].value)
            assert b.is_control and first.type == "LEADER_CHANGE"  # opens each epoch
    checkpoint = parse_leader_epoch_checkpoint((HEALTHY_META / "leader-epoch-checkpoint")
                                               .read_bytes())
    assert [(e.epoch, e.start_offset) for e in checkpoint.entries] == epochs
    assert len(epochs) >= 5
    qs = parse_quorum_state((HEALTHY_META / "quorum-state").read_bytes())
    assert qs.leader_epoch == epochs[-1][0]
    for seg in sorted(HEALTHY_META.glob("*.log")):
        base = classify(seg.name).base_offset
        by_pos = {b.position: b for b in scan_batches(seg.read_bytes(), str(seg))}
        idx = parse_offset_index(seg.with_suffix(".index").read_bytes(), base)
        assert idx.entries
        for e in idx.entries:
            assert by_pos[e.position].last_offset == e.offset
        tidx = parse_time_index(seg.with_suffix(".timeindex").read_bytes(), base)
        top = max(b.max_timestamp for b in by_pos.values())
        assert tidx.entries[-1].timestamp == top


def test_healthy_orders_partition_belongs_to_the_orders_topic():
    topic_id = parse_partition_metadata((HEALTHY / "orders-0" / "partition.metadata")
                                        .read_bytes()).topic_id
    topics = {r["data"]["name"]: r["data"]["topicId"] for r in healthy_records()
              if r["type"] == "TOPIC_RECORD"}
    assert topics["orders"] == topic_id


def _replay(until: int):
    """The image after replaying the log below offset ``until`` (kmeta decodes, the
    generator's model applies, metadata transactions honoured)."""
    state = generator().ClusterState()
    pending = None
    for b in log_batches(HEALTHY_META):
        if b.base_offset >= until:
            break
        if b.is_control:
            continue
        for r in b.records():
            p = decode_metadata(r.value)
            assert p.finding is None
            if p.type == "BEGIN_TRANSACTION_RECORD":
                pending = []
            elif p.type == "END_TRANSACTION_RECORD":
                for t, d in pending:
                    state.apply(t, d)
                pending = None
            elif p.type == "ABORT_TRANSACTION_RECORD":
                pending = None
            elif pending is not None:
                pending.append((p.type, p.data))
            else:
                state.apply(p.type, p.data)
    return state


@pytest.mark.parametrize("snapshot", sorted(HEALTHY_META.glob("*.checkpoint")),
                         ids=lambda p: p.name)
def test_healthy_snapshots_hold_the_image_of_the_log_at_their_offset(snapshot):
    kind = classify(snapshot.name)
    end = kind.base_offset
    batches = list(scan_batches(snapshot.read_bytes(), str(snapshot)))
    assert all(not isinstance(b, Finding) for b in batches)
    header = decode_control(batches[0].records()[0].key, batches[0].records()[0].value)
    last = next(b for b in reversed(log_batches(HEALTHY_META)) if b.base_offset < end)
    assert last.last_offset == end - 1  # a snapshot ends at a batch boundary
    assert kind.epoch == last.leader_epoch
    assert header.data["lastContainedLogTimestamp"] == last.max_timestamp
    values = [bytes(r.value) for b in batches[1:-1] for r in b.records()]
    expected = [encode_metadata(t, v, d) for t, v, d in _replay(end).snapshot_records()]
    assert values == expected


# ----------------------------------------------------------------------- (c) corrupt

MANIFEST = json.loads((CORRUPT / "MANIFEST.json").read_text())


def _cases():
    for case in MANIFEST["cases"]:
        yield pytest.param(case, id=case["name"])


def test_manifest_covers_every_kind_of_damage():
    codes = {c["code"] for c in MANIFEST["cases"]}
    assert codes >= {"F001", "S001", "S002", "S003", "S004", "S005", "F004", "F005", "F006",
                     "F011", "F010", "S006"}
    assert {c["name"] for c in MANIFEST["cases"]} >= {
        "bad-crc", "bad-length", "garbage-inserted", "torn-tail", "zero-tail", "garbage-tail",
        "unknown-api-key", "unknown-version", "truncated-record-body", "corrupt-gzip",
        "wrong-record-count", "empty-segment", "leader-epoch-bad-count",
        "quorum-state-bad-json", "snapshot-torn-tail", "offsets-backwards"}


@pytest.mark.parametrize("case", list(_cases()))
def test_corrupt_case_is_reported_where_the_manifest_says(case):
    events = dump_json(CORRUPT / case["name"])
    findings = findings_of(events)
    batches = [e for e in events if e["kind"] == "batch"]
    assert len(batches) == case["batches_total"]
    if case["code"] is None:
        assert findings == []
        return
    target = (CORRUPT / case["file"]).resolve()
    here = [f for f in findings if Path(f["file"]).resolve() == target]
    assert here == findings, "findings outside the damaged file"
    wanted = {"code": case["code"], "position": case["position"]}
    if case["offset"] is not None:
        wanted["offset"] = case["offset"]
    assert any(all(f.get(k) == v for k, v in wanted.items()) for f in findings), \
        f"{wanted} not in {[(f['code'], f.get('position'), f.get('offset')) for f in findings]}"
    intact = [b["position"] for b in batches
              if Path(b["file"]).resolve() == target and b["crc_valid"]]
    assert sum(1 for p in intact if p < case["position"]) == case["batches_before"]
    assert sum(1 for p in intact if p > case["position"]) == case["batches_after"]
    if case["resume_position"] is not None:
        assert case["resume_position"] in intact


# ----------------------------------------------------------------------- divergent


def _replica_batches(pair: str, side: str) -> list:
    return log_batches(DIVERGENT / pair / side / "__cluster_metadata-0")


@pytest.mark.parametrize("replica", sorted(p.relative_to(DIVERGENT).as_posix()
                                           for p in DIVERGENT.glob("*/*")))
def test_divergent_replicas_are_each_healthy(replica):
    events = dump_json(DIVERGENT / replica)
    assert findings_of(events) == []
    assert sum(1 for e in events if e["kind"] == "batch") > 100


def test_lagging_replica_holds_a_prefix():
    a = [bytes(b.raw) for b in _replica_batches("lag", "a")]
    b = [bytes(b.raw) for b in _replica_batches("lag", "b")]
    assert len(b) < len(a) and a[:len(b)] == b


def test_diverged_replicas_share_a_prefix_then_differ_at_the_same_offsets():
    a, b = _replica_batches("diverged", "a"), _replica_batches("diverged", "b")
    n = next(i for i, (x, y) in enumerate(zip(a, b, strict=False))
             if bytes(x.raw) != bytes(y.raw))
    assert n > 100
    assert a[n].base_offset == b[n].base_offset
    assert b[n].leader_epoch > a[n].leader_epoch  # b won a later epoch...
    assert b[n].is_control  # ...and its LeaderChange sits where a kept appending
    assert a[-1].last_offset >= a[n].base_offset and b[-1].last_offset >= b[n].base_offset
    qa, qb = (parse_quorum_state((DIVERGENT / "diverged" / s / "__cluster_metadata-0" /
                                  "quorum-state").read_bytes()) for s in "ab")
    assert qb.leader_epoch > qa.leader_epoch


def test_truncated_replica_starts_at_its_snapshot():
    part_b = DIVERGENT / "truncated-prefix" / "b" / "__cluster_metadata-0"
    (snapshot,) = part_b.glob("*.checkpoint")
    lso = classify(snapshot.name).base_offset
    b = _replica_batches("truncated-prefix", "b")
    a = _replica_batches("truncated-prefix", "a")
    assert 0 < b[0].base_offset <= lso
    assert not (part_b / "00000000000000000000.log").exists()
    a_tail = [bytes(x.raw) for x in a if x.base_offset >= b[0].base_offset]
    assert [bytes(x.raw) for x in b] == a_tail
    epochs = parse_leader_epoch_checkpoint((part_b / "leader-epoch-checkpoint").read_bytes())
    assert epochs.entries[0].start_offset == lso
