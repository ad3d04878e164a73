"""The replica-set fixtures (fixtures/data/divergent/) and the repair inputs
(fixtures/data/repair/): each case has the property that defines it, read from the files
with kmeta's own readers, and its MANIFEST.json says what the files say.

The manifests are written by fixtures/generate.py from its own reading of the files and
its own model of Kafka's fetch protocol; kmeta's core (ReplicaLog) is checked against them
here, so the two must agree.
"""

from __future__ import annotations

import json
import shutil
from functools import cache
from pathlib import Path

import pytest
from conftest import DIVERGENT, REPAIR

from kmeta.core.replica_log import BatchMeta, ReplicaLog, Segment, ValidKind
from kmeta.findings import Finding
from kmeta.formats.filenames import classify, segment_file_name
from kmeta.formats.indexes import (
    OffsetPosition,
    TimestampOffset,
    build_offset_index,
    build_time_index,
    parse_offset_index,
    parse_time_index,
)
from kmeta.formats.payload import decode_control, decode_metadata
from kmeta.formats.textfiles import (
    EpochEntry,
    LeaderEpochCheckpoint,
    build_leader_epoch_checkpoint,
    parse_leader_epoch_checkpoint,
    parse_meta_properties,
    parse_quorum_state,
)
from kmeta.ops.verify import verify_metadata_partition
from kmeta.storage.discover import discover
from kmeta.storage.segments import mapped, scan_batches

PART = "__cluster_metadata-0"
D_MANIFEST = json.loads((DIVERGENT / "MANIFEST.json").read_text())
R_MANIFEST = json.loads((REPAIR / "MANIFEST.json").read_text())
D_CASES = {c["name"]: c for c in D_MANIFEST["cases"]}
R_CASES = {c["name"]: c for c in R_MANIFEST["cases"]}


# ----------------------------------------------------------------------- reading


def read_file(path: Path) -> list:
    """Batches and Findings of one segment or snapshot file, in file order."""
    with mapped(path) as buf:
        return list(scan_batches(buf, str(path)))


@cache
def batches(case: str, replica: str) -> tuple:
    """Every batch of a replica's segments (all intact: no findings), in offset order."""
    out = []
    for seg in sorted((DIVERGENT / case / replica / PART).glob("*.log")):
        items = read_file(seg)
        assert not [x for x in items if isinstance(x, Finding)], seg
        assert all(b.crc_valid for b in items)
        out.extend(items)
    return tuple(out)


def raws(case: str, replica: str) -> list[bytes]:
    return [bytes(b.raw) for b in batches(case, replica)]


def epochs_file(pdir: Path) -> list[list[int]]:
    checkpoint = parse_leader_epoch_checkpoint((pdir / "leader-epoch-checkpoint").read_bytes())
    return [[e.epoch, e.start_offset] for e in checkpoint.entries]


def snapshot_ids(pdir: Path) -> list[list[int]]:
    out = []
    for p in pdir.iterdir():
        kind = classify(p.name)
        if kind.kind == "kraft-snapshot" and kind.suffix is None:
            out.append([kind.base_offset, kind.epoch])
    return sorted(out)


def model(case: str, replica: str) -> ReplicaLog:
    """kmeta's core model of the replica, built from what its files hold."""
    pdir = DIVERGENT / case / replica / PART
    segs = []
    for seg in sorted(pdir.glob("*.log")):
        base = classify(seg.name).base_offset
        segs.append(Segment(base, tuple(BatchMeta(b.base_offset, b.last_offset, b.leader_epoch)
                                        for b in read_file(seg))))
    log, _ = ReplicaLog.from_observed(segs, epoch_entries=[tuple(e) for e in epochs_file(pdir)],
                                      snapshots=[tuple(s) for s in snapshot_ids(pdir)])
    return log


def findings_of(directory: Path) -> list[Finding]:
    (part,) = [p for p in discover([directory]).all_partitions() if p.name == PART]
    return verify_metadata_partition(part)[0]


def first_record_type(batch) -> str:
    r = batch.records()[0]
    return decode_control(r.key, r.value).type if batch.is_control else \
        decode_metadata(r.value).type


def replica_params():
    for case in D_MANIFEST["cases"]:
        for name in case["replicas"]:
            yield pytest.param(case["name"], name, id=f"{case['name']}/{name}")


# ----------------------------------------------------------------------- divergent: manifest


def test_manifest_names_every_case_and_replica():
    on_disk = {p.name: sorted(r.name for r in p.iterdir() if r.is_dir())
               for p in DIVERGENT.iterdir() if p.is_dir()}
    assert {c["name"]: sorted(c["replicas"]) for c in D_MANIFEST["cases"]} == on_disk
    assert set(on_disk) == {"lag", "diverged", "truncated-prefix", "identical", "unclean",
                            "flipped-byte", "behind-snapshot", "quorum3", "later-copy"}
    assert on_disk["quorum3"] == ["a", "b", "c"]


@pytest.mark.parametrize(("case", "replica"), list(replica_params()))
def test_manifest_replica_facts_are_what_the_files_hold(case, replica):
    facts = D_CASES[case]["replicas"][replica]
    data_dir = DIVERGENT / case / replica
    pdir = data_dir / PART
    bs = batches(case, replica)
    segments = sorted(classify(p.name).base_offset for p in pdir.glob("*.log"))
    assert facts["segments"] == segments
    assert facts["log_start_offset"] == segments[0] == bs[0].base_offset
    assert facts["log_end_offset"] == bs[-1].last_offset + 1
    assert facts["batches"] == len(bs)
    assert facts["epochs"] == epochs_file(pdir)
    assert facts["latest_epoch"] == bs[-1].leader_epoch == facts["epochs"][-1][0]
    assert facts["snapshots"] == snapshot_ids(pdir)
    assert facts["node_id"] == parse_meta_properties(
        (data_dir / "meta.properties").read_bytes()).node_id
    qs = parse_quorum_state((pdir / "quorum-state").read_bytes())
    assert facts["quorum_state"] == {"leader_id": qs.leader_id, "leader_epoch": qs.leader_epoch}
    m = model(case, replica)
    assert (m.log_start_offset, m.log_end_offset, m.last_fetched_epoch()) == \
        (facts["log_start_offset"], facts["log_end_offset"], facts["latest_epoch"])


@pytest.mark.parametrize(("case", "replica"), list(replica_params()))
def test_each_replica_verifies_clean(case, replica):
    found = findings_of(DIVERGENT / case / replica)
    assert [(f.code, f.file, f.offset) for f in found] == []


def test_replicas_whose_log_starts_late_still_need_a_leader_change_per_later_epoch():
    """The epoch a log starts in is excused from V008: its LeaderChange may lie below
    the log start (tests/test_verify.py checks that later epochs are not)."""
    for case, name in (("truncated-prefix", "b"), ("behind-snapshot", "a")):
        facts = D_CASES[case]["replicas"][name]
        assert facts["log_start_offset"] > 0
        assert findings_of(DIVERGENT / case / name) == []


def _first_difference(case: str, x: str, y: str) -> dict | None:
    fx, fy = D_CASES[case]["replicas"][x], D_CASES[case]["replicas"][y]
    lo = max(fx["log_start_offset"], fy["log_start_offset"])
    hi = min(fx["log_end_offset"], fy["log_end_offset"])
    xs = [b for b in batches(case, x) if lo <= b.base_offset < hi]
    ys = [b for b in batches(case, y) if lo <= b.base_offset < hi]
    for bx, by in zip(xs, ys, strict=False):
        if bx.base_offset != by.base_offset or bytes(bx.raw) != bytes(by.raw):
            return {"offset": min(bx.base_offset, by.base_offset),
                    x: (Path(bx.file).relative_to(DIVERGENT / case).as_posix(), bx.position,
                        bx.leader_epoch),
                    y: (Path(by.file).relative_to(DIVERGENT / case).as_posix(), by.position,
                        by.leader_epoch)}
    return None


@pytest.mark.parametrize("case", sorted(D_CASES))
def test_manifest_pairs_say_where_content_first_differs(case):
    c = D_CASES[case]
    offsets = []
    for pair, truth in c["pairs"].items():
        x, y = pair.split("/")
        got = _first_difference(case, x, y)
        want = truth["first_difference"]
        assert truth["equal_in_shared_range"] == (got is None)
        if got is None:
            assert want is None
            continue
        offsets.append(got["offset"])
        assert want["offset"] == got["offset"]
        for side in (x, y):
            assert (want[side]["file"], want[side]["position"], want[side]["epoch"]) == got[side]
    assert c["content_differs"] == bool(offsets)
    assert c["content_first_differs_at"] == (min(offsets) if offsets else None)


@pytest.mark.parametrize("case", sorted(D_CASES))
def test_kafka_answers_agree_with_kmeta_core(case):
    """Each follower's first fetch, answered by kmeta's ReplicaLog of the leader, and the
    truncation the follower makes of it (ReplicatedLog.truncateToEndOffset)."""
    c = D_CASES[case]
    leader = model(case, c["leader"])
    facts = c["replicas"]
    top = max(facts, key=lambda n: (facts[n]["latest_epoch"], facts[n]["log_end_offset"],
                                    -sorted(facts).index(n)))
    assert c["leader"] == top
    for name, truth in c["kafka"].items():
        follower = model(case, name)
        first = truth["rounds"][0]
        assert (first["fetch_offset"], first["last_fetched_epoch"]) == \
            (follower.log_end_offset, follower.last_fetched_epoch())
        answer = leader.validate_offset_and_epoch(first["fetch_offset"],
                                                  first["last_fetched_epoch"])
        assert answer.kind.name == first["response"]
        if answer.kind is ValidKind.DIVERGING:
            end = answer.offset_and_epoch
            assert first["diverging_epoch"] == {"epoch": end.epoch, "end_offset": end.offset}
            local = follower.end_offset_for_epoch(end.epoch)
            target = min(local.offset, end.offset) if local.epoch == end.epoch else local.offset
            assert first["truncate_to"] == target == truth["truncate_to"]
            assert truth["rounds"][1]["response"] == "VALID"
        elif answer.kind is ValidKind.SNAPSHOT:
            sid = answer.offset_and_epoch
            assert first["snapshot_id"] == {"end_offset": sid.offset, "epoch": sid.epoch}
            assert [sid.offset, sid.epoch] == facts[c["leader"]]["snapshots"][-1]
        else:
            assert len(truth["rounds"]) == 1 and truth["fetch_from"] == follower.log_end_offset
    assert c["must_truncate"] == sorted(n for n, t in c["kafka"].items() if t["must_truncate"])
    assert c["diverged"] == bool(c["must_truncate"])


# ----------------------------------------------------------------------- divergent: cases


def test_identical_logs_are_byte_equal_on_two_nodes():
    a, b = DIVERGENT / "identical" / "a", DIVERGENT / "identical" / "b"
    files = sorted(p.name for p in (a / PART).iterdir())
    assert files == sorted(p.name for p in (b / PART).iterdir())
    assert any(n.endswith(".checkpoint") for n in files)
    for name in files:
        assert (a / PART / name).read_bytes() == (b / PART / name).read_bytes(), name
    ma, mb = (parse_meta_properties((d / "meta.properties").read_bytes()) for d in (a, b))
    assert ma.cluster_id == mb.cluster_id
    assert ma.node_id != mb.node_id and ma.directory_id != mb.directory_id
    c = D_CASES["identical"]
    assert not c["diverged"] and not c["content_differs"] and c["lagging"] == []
    assert c["kafka"]["b"]["action"].startswith("nothing")


def test_lagging_replica_is_a_prefix_and_only_fetches():
    a, b = raws("lag", "a"), raws("lag", "b")
    assert len(b) < len(a) and a[:len(b)] == b
    c = D_CASES["lag"]
    assert c["lagging"] == ["b"] and not c["diverged"] and not c["content_differs"]
    assert c["kafka"]["b"]["fetch_from"] == c["replicas"]["b"]["log_end_offset"]


def _split(case: str, x: str, y: str) -> int:
    """Index of the first batch where two replicas' logs differ."""
    xs, ys = raws(case, x), raws(case, y)
    return next(i for i, (p, q) in enumerate(zip(xs, ys, strict=False)) if p != q)


@pytest.mark.parametrize("case", ["diverged", "unclean"])
def test_unclean_election_tails(case):
    """A common prefix; then a's uncommitted tail in epoch E and b's tail in a higher epoch
    at the same offsets, opened by b's LeaderChange; b leads, a truncates to the split."""
    a, b = batches(case, "a"), batches(case, "b")
    n = _split(case, "a", "b")
    assert n > 100 and raws(case, "a")[:n] == raws(case, "b")[:n]
    assert len(a) == len(b)  # tails of the same number of batches...
    assert a[-1].last_offset == b[-1].last_offset  # ...ending at the same offset
    assert a[n].base_offset == b[n].base_offset
    assert b[n].is_control and first_record_type(b[n]) == "LEADER_CHANGE"
    assert all(x.leader_epoch == a[n].leader_epoch for x in a[n:])
    assert all(y.leader_epoch == b[n].leader_epoch > a[n].leader_epoch for y in b[n:])
    c = D_CASES[case]
    assert c["leader"] == "b" and c["must_truncate"] == ["a"] and c["diverged"]
    assert c["divergence"] == {"replica": "a", "offset": a[n].base_offset,
                               "epoch": a[n - 1].leader_epoch}
    assert c["content_first_differs_at"] == a[n].base_offset
    assert c["kafka"]["a"]["truncate_to"] == a[n].base_offset


def test_unclean_tails_differ_only_in_their_epochs():
    a, b = batches("unclean", "a"), batches("unclean", "b")
    n = _split("unclean", "a", "b")
    # Both tails open with a LeaderChange: a's for epoch E, b's for epoch E+1.
    assert a[n].is_control and first_record_type(a[n]) == "LEADER_CHANGE"
    assert b[n].leader_epoch == a[n].leader_epoch + 1
    # Epoch E is a's alone: b's epochs skip it.
    ea = [e[0] for e in D_CASES["unclean"]["replicas"]["a"]["epochs"]]
    eb = [e[0] for e in D_CASES["unclean"]["replicas"]["b"]["epochs"]]
    assert ea[:-1] == eb[:-1] and ea[-1] + 1 == eb[-1] and ea[-1] not in eb
    for x, y in zip(a[n + 1:], b[n + 1:], strict=True):
        rx, ry = bytes(x.raw), bytes(y.raw)
        assert (x.base_offset, x.last_offset, x.max_timestamp) == \
            (y.base_offset, y.last_offset, y.max_timestamp)
        assert rx[:12] == ry[:12] and rx[21:] == ry[21:]  # all but epoch and CRC
        assert [r.value for r in x.records()] == [r.value for r in y.records()]
    # Kafka: the leader b answers a's fetch with the last epoch they share (E-1), not E.
    assert D_CASES["unclean"]["kafka"]["a"]["diverging_epoch"]["epoch"] == a[n - 1].leader_epoch


def test_flipped_byte_replicas_silently_disagree_in_one_record_value():
    a, b = batches("flipped-byte", "a"), batches("flipped-byte", "b")
    assert [(x.base_offset, x.last_offset, x.leader_epoch) for x in a] == \
        [(y.base_offset, y.last_offset, y.leader_epoch) for y in b]
    differ = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if bytes(x.raw) != bytes(y.raw)]
    assert len(differ) == 1
    x, y = a[differ[0]], b[differ[0]]
    assert x.crc_valid and y.crc_valid and x.crc != y.crc and x.size == y.size
    rx, ry = bytes(x.raw), bytes(y.raw)
    changed = [i for i in range(len(rx)) if rx[i] != ry[i] and not 17 <= i < 21]
    assert len(changed) == 1 and changed[0] >= 61  # one byte, in the records section
    (vx,), (vy,) = [r.value for r in x.records()], [r.value for r in y.records()]
    assert len(vx) == len(vy) and sum(p != q for p, q in zip(vx, vy, strict=True)) == 1
    assert decode_metadata(vx).data != decode_metadata(vy).data
    c = D_CASES["flipped-byte"]
    assert not c["diverged"] and c["divergence"] is None and c["must_truncate"] == []
    assert c["content_differs"] and c["content_first_differs_at"] == x.base_offset
    assert c["kafka"]["b"]["action"].startswith("nothing")
    for side in "ab":
        assert findings_of(DIVERGENT / "flipped-byte" / side) == []


def test_behind_snapshot_follower_must_fetch_the_leaders_latest_snapshot():
    c = D_CASES["behind-snapshot"]
    fa, fb = c["replicas"]["a"], c["replicas"]["b"]
    pa = DIVERGENT / "behind-snapshot" / "a" / PART
    lbo = fa["log_start_offset"]
    assert lbo > 0 and not (pa / segment_file_name(0)).exists()
    assert fa["snapshots"][0][0] == lbo  # a snapshot at the log start offset...
    assert len(fa["snapshots"]) == 2 and fa["snapshots"][1][0] > lbo  # ...and a later one
    assert epochs_file(pa)[0][1] == lbo  # epoch cache truncated from the start at the LBO
    assert fb["log_start_offset"] == 0 and fb["log_end_offset"] < lbo // 2
    assert c["pairs"]["a/b"]["shared_offsets"] is None
    assert c["lagging"] == ["b"] and not c["diverged"]
    latest = fa["snapshots"][-1]
    assert c["kafka"]["b"]["fetch_snapshot"] == {"end_offset": latest[0], "epoch": latest[1]}
    assert c["kafka"]["b"]["fetch_from"] == latest[0]
    # b's log was the head of the log a had (same cluster, same history).
    b = batches("behind-snapshot", "b")
    assert b[0].base_offset == 0 and first_record_type(b[0]) == "LEADER_CHANGE"


def test_quorum3_b_lags_and_c_diverged():
    a, b, cc = raws("quorum3", "a"), raws("quorum3", "b"), raws("quorum3", "c")
    assert len(b) < len(a) and a[:len(b)] == b and len(a) - len(b) <= 10
    n = _split("quorum3", "a", "c")
    ba, bc = batches("quorum3", "a"), batches("quorum3", "c")
    assert ba[n].is_control and first_record_type(ba[n]) == "LEADER_CHANGE"
    assert n < len(b) and b[n] == a[n]  # b holds a's LeaderChange and more of epoch E+1
    assert all(x.leader_epoch == ba[n - 1].leader_epoch for x in bc[n:])  # the old epoch
    assert ba[n].leader_epoch > bc[-1].leader_epoch
    assert len(bc) > n and bc[-1].last_offset < ba[-1].last_offset
    c = D_CASES["quorum3"]
    assert c["leader"] == "a" and c["lagging"] == ["b"] and c["must_truncate"] == ["c"]
    assert c["divergence"] == {"replica": "c", "offset": ba[n].base_offset,
                               "epoch": ba[n - 1].leader_epoch}
    assert c["pairs"]["a/b"]["first_difference"] is None
    assert c["pairs"]["a/c"]["first_difference"]["offset"] == ba[n].base_offset
    assert c["pairs"]["b/c"]["first_difference"]["offset"] == ba[n].base_offset
    assert cc[:n] == a[:n]


def test_truncated_prefix_log_start_is_its_first_segment():
    c = D_CASES["truncated-prefix"]
    fb = c["replicas"]["b"]
    (snap,) = fb["snapshots"]
    assert fb["log_start_offset"] == fb["segments"][0] < snap[0]
    assert fb["epochs"][0][1] == snap[0]
    assert not c["diverged"] and not c["content_differs"] and c["lagging"] == []


# ----------------------------------------------------------------------- repair


def test_repair_manifest_names_every_case():
    assert set(R_CASES) == {p.name for p in REPAIR.iterdir() if p.is_dir()} == {
        "torn-tail", "zero-tail", "bad-crc-mid-log", "snapshot-beyond-end", "stale-part",
        "stale-index"}


@pytest.mark.parametrize("name", sorted(R_CASES))
def test_repair_case_is_reported_where_the_manifest_says(name):
    case = R_CASES[name]
    found = findings_of(REPAIR / name)
    assert sorted({f.code for f in found}) == sorted({case["code"], *case["also"]})
    target = (REPAIR / name / case["file"]).resolve()
    hit = [f for f in found if f.code == case["code"] and Path(f.file).resolve() == target]
    assert hit, [(f.code, f.file, f.position, f.offset) for f in found]
    f = hit[0]
    assert f.position == case["position"]
    if f.offset is not None:
        assert f.offset == case["offset"]


def _segment_batches(pdir: Path) -> list:
    out = []
    for seg in sorted(pdir.glob("*.log")):
        out.extend(x for x in read_file(seg) if not isinstance(x, Finding))
    return out


def test_torn_tail_is_the_new_epochs_leader_change_cut_short():
    case = R_CASES["torn-tail"]
    path = REPAIR / "torn-tail" / case["file"]
    items = read_file(path)
    (torn,) = [x for x in items if isinstance(x, Finding)]
    assert (torn.code, torn.position, torn.offset) == ("S001", case["position"], case["offset"])
    data = path.read_bytes()
    claimed = 12 + int.from_bytes(data[case["position"] + 8:case["position"] + 12], "big")
    assert 0 < len(data) - case["position"] < claimed
    entries = epochs_file(REPAIR / "torn-tail" / PART)
    assert entries[-1][1] == case["offset"]  # the epoch cache already has the new epoch
    assert case["repair"]["epochs"] == entries[:-1]


def test_zero_tail_is_zeros_after_the_last_batch():
    case = R_CASES["zero-tail"]
    data = (REPAIR / "zero-tail" / case["file"]).read_bytes()
    assert data[case["position"]:] == bytes(4096)
    last = _segment_batches(REPAIR / "zero-tail" / PART)[-1]
    assert last.last_offset == case["repair"]["last_valid_offset"]
    assert last.position + last.size == case["position"]


def test_bad_crc_mid_log_has_intact_batches_after_it():
    case = R_CASES["bad-crc-mid-log"]
    items = read_file(REPAIR / "bad-crc-mid-log" / case["file"])
    bad = [x for x in items if not isinstance(x, Finding) and not x.crc_valid]
    assert [(b.position, b.base_offset) for b in bad] == [(case["position"], case["offset"])]
    after = [x for x in items if not isinstance(x, Finding) and x.position > case["position"]]
    assert after and all(x.crc_valid for x in after)
    assert case["repair"]["delete"]  # later segments exist...
    for rel in case["repair"]["delete"]:
        assert (REPAIR / "bad-crc-mid-log" / rel).exists()
    pdir = REPAIR / "bad-crc-mid-log" / PART
    assert epochs_file(pdir)[-1][1] > case["offset"]  # ...and an epoch begins in them
    assert case["repair"]["batches_lost"] == sum(
        1 for b in _segment_batches(pdir) if b.base_offset >= case["offset"])


def test_snapshot_beyond_end_is_past_the_log():
    case = R_CASES["snapshot-beyond-end"]
    pdir = REPAIR / "snapshot-beyond-end" / PART
    leo = _segment_batches(pdir)[-1].last_offset + 1
    kind = classify(Path(case["file"]).name)
    assert kind.base_offset == case["offset"] > leo
    assert kind.epoch == epochs_file(pdir)[-1][0]  # same epoch, further on
    items = read_file(REPAIR / "snapshot-beyond-end" / case["file"])
    assert all(not isinstance(x, Finding) and x.crc_valid for x in items)


def test_stale_part_is_an_unfinished_snapshot():
    case = R_CASES["stale-part"]
    path = REPAIR / "stale-part" / case["file"]
    kind = classify(path.name)
    assert (kind.kind, kind.suffix, kind.base_offset) == ("kraft-snapshot", "part",
                                                          case["offset"])
    items = read_file(path)
    header = items[0]
    assert first_record_type(header) == "SNAPSHOT_HEADER"
    last = [x for x in items if not isinstance(x, Finding)][-1]
    assert first_record_type(last) != "SNAPSHOT_FOOTER"


def test_stale_index_points_past_the_cut():
    case = R_CASES["stale-index"]
    ipath = REPAIR / "stale-index" / case["file"]
    base = classify(ipath.name).base_offset
    seg = ipath.with_suffix(".log")
    idx = parse_offset_index(ipath.read_bytes(), base)
    size = seg.stat().st_size
    stale = [e for e in idx.entries if e.position >= size]
    assert stale and stale[0].offset == case["offset"]
    assert [[e.offset, e.position] for e in idx.entries if e.position < size] == \
        case["repair"]["offset_index"][case["file"]]
    assert _segment_batches(REPAIR / "stale-index" / PART)[-1].last_offset == \
        case["repair"]["last_valid_offset"]


@pytest.mark.parametrize("name", sorted(R_CASES))
def test_the_manifests_repair_leaves_a_clean_log(name, tmp_path):
    """Do what the manifest says a correct repair does, on a copy: verify finds nothing,
    and the log ends (and its epochs are) where the manifest says."""
    repair = R_CASES[name]["repair"]
    work = tmp_path / name
    shutil.copytree(REPAIR / name, work)
    if repair["cut"]:
        path = work / repair["cut"]["file"]
        path.write_bytes(path.read_bytes()[:repair["cut"]["at"]])
    for rel in repair["delete"]:
        (work / rel).unlink()
    for rel in repair.get("create", []):
        (work / rel).write_bytes(b"")
    for rel, entries in repair.get("offset_index", {}).items():
        base = classify(Path(rel).name).base_offset
        (work / rel).write_bytes(build_offset_index([OffsetPosition(*e) for e in entries], base))
    for rel, entries in repair.get("time_index", {}).items():
        base = classify(Path(rel).name).base_offset
        (work / rel).write_bytes(build_time_index([TimestampOffset(*e) for e in entries], base))
    pdir = work / PART
    (pdir / "leader-epoch-checkpoint").write_bytes(build_leader_epoch_checkpoint(
        LeaderEpochCheckpoint(tuple(EpochEntry(*e) for e in repair["epochs"]))))
    assert snapshot_ids(pdir) == repair["snapshots"]
    found = findings_of(work)
    assert [(f.code, f.file, f.position) for f in found] == []
    bs = _segment_batches(pdir)
    segments = sorted(classify(p.name).base_offset for p in pdir.glob("*.log"))
    assert segments[0] == repair["log_start_offset"]
    assert (bs[-1].last_offset if bs else None) == repair["last_valid_offset"]
    assert (bs[-1].last_offset + 1 if bs else segments[-1]) == repair["log_end_offset"]
    for seg in pdir.glob("*.timeindex"):
        base = classify(seg.name).base_offset
        assert all(e.offset < repair["log_end_offset"]
                   for e in parse_time_index(seg.read_bytes(), base).entries)
