"""kmeta repair: damaged copies of the fixtures are repaired into directories that verify
clean, keep every batch before the cut byte for byte, and never touch the input."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import CORRUPT, HEALTHY, REPAIR

from kmeta.core.epochs import EpochCache
from kmeta.errors import UnreadableInput, UsageError
from kmeta.findings import Finding, Severity
from kmeta.formats.batch import Batch
from kmeta.formats.textfiles import parse_leader_epoch_checkpoint
from kmeta.ops.repair import (
    QUARANTINE,
    Action,
    RepairPlan,
    apply_repair,
    apply_repair_in_place,
    plan_repair,
)
from kmeta.ops.verify import verify
from kmeta.render.repair import repair_json, repair_lines, repair_object
from kmeta.storage import swap
from kmeta.storage.segments import mapped, scan_batches

META = "__cluster_metadata-0"


# ----------------------------------------------------------------------------- helpers


def hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` (and the names of its directories)."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        out[rel] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return out


def intact_batches(part: Path) -> list[tuple[str, int, bytes]]:
    """Every batch with a valid CRC of every segment, in offset order, with its bytes."""
    out = []
    for seg in sorted(part.glob("*.log")):
        with mapped(seg) as buf:
            for item in scan_batches(buf, str(seg)):
                if type(item) is Batch and item.crc_valid:
                    out.append((seg.name, item.position, bytes(item.raw)))
    return out


def kept_before_cut(plan: RepairPlan, batches: list[tuple[str, int, bytes]]) -> list:
    if plan.cut is None:
        return batches
    cut = plan.cut
    return [b for b in batches if b[0] < cut.file or (b[0] == cut.file and b[1] < cut.position)]


def findings(path: Path) -> list[Finding]:
    return verify([path]).findings


def errors(path: Path) -> list[Finding]:
    return [f for f in findings(path) if f.severity is Severity.ERROR]


def where(f: Finding) -> tuple:
    return f.code, Path(f.file).name if f.file else None, f.position, f.offset


def epochs_of_batches(part: Path, lbo: int) -> list[list[int]]:
    """The leader-epoch cache the batches imply, computed here from scratch."""
    cache = EpochCache()
    for seg in sorted(part.glob("*.log")):
        with mapped(seg) as buf:
            for b in scan_batches(buf, str(seg)):
                if type(b) is Batch and b.leader_epoch >= 0 and (
                        cache.latest_epoch is None or b.leader_epoch > cache.latest_epoch):
                    cache = cache.assign(b.leader_epoch, b.base_offset)
    return [[e.epoch, e.start_offset] for e in cache.truncate_from_start(lbo).entries]


def checkpoint_entries(part: Path) -> list[list[int]]:
    cp = parse_leader_epoch_checkpoint((part / "leader-epoch-checkpoint").read_bytes())
    return [[e.epoch, e.start_offset] for e in cp.entries]


def copy_data_dir(src: Path, tmp_path: Path) -> Path:
    """A copy of a data dir (or of the directory holding a partition dir); returns the
    metadata partition directory in it."""
    dst = tmp_path / "data"
    shutil.copytree(src, dst)
    return dst / META


def repaired(part: Path, tmp_path: Path, **kw) -> tuple[RepairPlan, Path]:
    """Plan and write a repair of ``part`` to a new directory, proving on the way that
    the input did not change and that the batches before the cut are the same bytes."""
    before = hashes(part)
    batches = intact_batches(part)
    plan = plan_repair(part, **kw)
    out = tmp_path / "out" / META
    result = apply_repair(plan, out)
    assert result.out == out.absolute()
    assert hashes(part) == before, "the input changed"
    assert intact_batches(out) == kept_before_cut(plan, batches)
    for c in plan.changes:  # the output holds exactly what the plan says
        target = c.target
        if target is None:
            assert not (out / c.name).exists() or c.action is Action.DROPPED and any(
                x.name == c.name and x.target for x in plan.changes if x is not c)
        else:
            assert (out / target).exists(), target
            if c.action in (Action.COPIED, Action.QUARANTINED) and c.kind != "directory":
                assert (out / target).read_bytes() == (part / c.name).read_bytes()
            if c.action is Action.CUT:
                assert (out / target).read_bytes() == (part / c.name).read_bytes()[:c.bytes_out]
    assert result.findings == [f for f in findings(out)
                               if not (f.code == "S007" and f.file == str(out / QUARANTINE))]
    # The rebuilt checkpoint is what the kept batches say, with Kafka's cut at the LBO.
    assert checkpoint_entries(out) == epochs_of_batches(out, plan.log_start_offset)
    return plan, out


def segment(part: Path, base: int) -> Path:
    return part / f"{base:020d}.log"


def batch_at(part: Path, base: int, offset: int) -> Batch:
    with mapped(segment(part, base)) as buf:
        for b in scan_batches(buf, "x"):
            if type(b) is Batch and b.base_offset <= offset <= b.last_offset:
                return Batch(tuple(b[:13]), bytes(b.raw), b.file, b.position, b.crc_valid)
    raise AssertionError(f"no batch holds {offset}")


# ----------------------------------------------------------------------------- corrupt/*


MANIFEST = json.loads((CORRUPT / "MANIFEST.json").read_text())
CASES = {c["name"]: c for c in MANIFEST["cases"]}
#: cases whose damage Kafka's recovery (or KRaft's contiguity) cuts at
CUT = {"bad-crc", "bad-length", "garbage-inserted", "offsets-backwards", "torn-tail",
       "zero-tail", "garbage-tail"}
#: cases whose damage is inside records of batches with intact CRCs: Kafka's recovery
#: keeps them, and so does repair (it never rewrites records); their problems remain
RECORD_DAMAGE = {"corrupt-gzip", "truncated-record-body", "unknown-api-key",
                 "unknown-version", "wrong-record-count"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_corrupt_fixture(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    part = copy_data_dir(CORRUPT / name, tmp_path)
    plan, out = repaired(part, tmp_path)
    if name in CUT:
        assert plan.cut is not None and plan.cut.cause == "damage"
        assert (plan.cut.file, plan.cut.position, plan.cut.code) == \
            (Path(case["file"]).name, case["position"], case["code"])
        cut = next(c for c in plan.changes if c.name == plan.cut.file)
        assert cut.action is Action.CUT and cut.bytes_out == case["position"]
        # the indexes of the cut segment are left for Kafka to rebuild
        stem = plan.cut.file[:-len(".log")]
        assert not (out / f"{stem}.index").exists()
        assert not (out / f"{stem}.timeindex").exists()
        # every segment after the cut is dropped, and so are its indexes
        later = [c for c in plan.changes if c.kind == "segment" and c.name > plan.cut.file]
        assert all(c.action is Action.DROPPED for c in later)
        assert not any((out / c.name).exists() for c in later)
        # snapshots past the new end are quarantined, byte for byte
        for snap in part.glob("*.checkpoint"):
            end = int(snap.name[:20])
            if end > plan.new_log_end_offset:
                assert (out / QUARANTINE / snap.name).read_bytes() == snap.read_bytes()
                assert not (out / snap.name).exists()
            else:
                assert (out / snap.name).read_bytes() == snap.read_bytes()
        assert errors(out) == []
    elif name in RECORD_DAMAGE:
        # Nothing to cut: every file is copied; the damage verify reports stays, the same
        # finding at the same place (repair never rewrites a batch whose CRC is intact).
        assert plan.cut is None and not plan.changed
        assert Counter(where(f) for f in errors(out)) == \
            Counter(where(f) for f in errors(part))
        assert case["code"] in {f.code for f in findings(out)}
    elif name == "quorum-state-bad-json":
        # copied unchanged (repair does not invent a quorum-state): its F010 stays
        assert [where(f) for f in errors(out)] == [("F010", "quorum-state", 26, None)]
        assert (out / "quorum-state").read_bytes() == (part / "quorum-state").read_bytes()
    elif name == "snapshot-torn-tail":
        snap = Path(case["file"]).name
        assert [c.name for c in plan.invalid_snapshots] == [snap]
        assert "damaged: S001" in plan.invalid_snapshots[0].reason
        assert (out / QUARANTINE / snap).exists() and not (out / snap).exists()
        assert errors(out) == []
    else:  # pristine, empty-segment, leader-epoch-bad-*
        assert plan.cut is None
        assert errors(out) == []
        if name.startswith("leader-epoch"):
            assert errors(part) and plan.changed
            assert checkpoint_entries(out) == checkpoint_entries(CORRUPT / "pristine" / META)
        else:
            assert not plan.changed
            assert hashes(out) == hashes(part)


# ----------------------------------------------------------------------------- healthy


def test_healthy_copy_is_the_same(tmp_path: Path) -> None:
    part = HEALTHY / META
    plan, out = repaired(part, tmp_path)
    assert plan.cut is None and not plan.changed
    assert plan.removed.batches == plan.removed.bytes == 0
    assert plan.new_log_end_offset == plan.input_log_end_offset == 12704
    assert hashes(out) == hashes(part)
    assert findings(out) == []


def test_bad_crc_in_a_middle_segment(tmp_path: Path) -> None:
    part = copy_data_dir(HEALTHY, tmp_path)
    victim = batch_at(part, 5468, 6424)
    seg = segment(part, 5468)
    data = bytearray(seg.read_bytes())
    data[victim.position + 40] ^= 0x10  # in maxTimestamp: only the CRC notices
    seg.write_bytes(bytes(data))
    assert "F001" in {f.code for f in errors(part)}
    input_batches = intact_batches(part)
    plan, out = repaired(part, tmp_path)

    assert plan.cut is not None
    assert (plan.cut.file, plan.cut.position, plan.cut.offset, plan.cut.code) == \
        (seg.name, victim.position, 6424, "F001")
    assert plan.new_log_end_offset == 6424 and plan.input_log_end_offset == 12704
    actions = {c.name: c.action for c in plan.changes}
    assert actions[seg.name] is Action.CUT
    for base in (7305, 9112, 10995):
        assert actions[f"{base:020d}.log"] is Action.DROPPED
        assert actions[f"{base:020d}.index"] is Action.OMITTED
        assert actions[f"{base:020d}.timeindex"] is Action.OMITTED
    assert actions["00000000000000005468.index"] is Action.OMITTED
    for base in (0, 1802, 3643):  # untouched segments keep their indexes
        assert actions[f"{base:020d}.index"] is Action.COPIED
        assert (out / f"{base:020d}.index").exists()
    assert [c.name for c in plan.invalid_snapshots] == [
        "00000000000000008157-0000000011.checkpoint",
        "00000000000000012294-0000000011.checkpoint"]
    assert actions["00000000000000004000-0000000006.checkpoint"] is Action.COPIED
    assert actions["00000000000000012704.snapshot"] is Action.QUARANTINED
    assert sorted(p.name for p in (out / QUARANTINE).iterdir()) == [
        "00000000000000008157-0000000011.checkpoint",
        "00000000000000012294-0000000011.checkpoint", "00000000000000012704.snapshot"]

    # what was removed: every batch from the damaged one on, counted by type
    output_batches = set(intact_batches(out))
    removed = [b for b in input_batches if b not in output_batches]
    assert plan.removed.batches == len(removed) + 1  # + the damaged one
    assert plan.removed.batches_by_type["damaged"] == 1
    assert sum(plan.removed.batches_by_type.values()) == plan.removed.batches
    assert sum(plan.removed.records_by_type.values()) == plan.removed.records
    assert plan.removed.first_offset == 6424 and plan.removed.last_offset == 12703
    assert plan.removed.bytes == sum(
        (part / c.name).stat().st_size - c.bytes_out for c in plan.changes
        if c.kind == "segment")
    assert plan.model.log_end_offset == 6424
    assert [[e.epoch, e.start_offset] for e in plan.epoch_cache.entries] == \
        checkpoint_entries(out)
    assert checkpoint_entries(out)[-1] == [10, 5595]
    assert errors(out) == []


def test_torn_and_zero_tails_of_the_active_segment(tmp_path: Path) -> None:
    part = copy_data_dir(HEALTHY, tmp_path)
    seg = segment(part, 10995)
    last = batch_at(part, 10995, 12703)
    size = seg.stat().st_size
    # the last batch torn after 20 bytes, then 4 KiB of preallocated zeros after that
    seg.write_bytes(seg.read_bytes()[:last.position + 20] + bytes(4096))
    plan, out = repaired(part, tmp_path)
    assert plan.cut is not None and plan.cut.position == last.position
    # (the torn batch's claimed length fits in the zeros after it: a bad CRC, then zeros)
    assert plan.cut.code in ("F001", "S001")
    assert plan.new_log_end_offset == 12703
    assert (out / seg.name).stat().st_size == size - last.size
    assert errors(out) == []


def test_a_missing_segment_ends_the_log_before_the_gap(tmp_path: Path) -> None:
    part = copy_data_dir(HEALTHY, tmp_path)
    for ext in ("log", "index", "timeindex"):
        (part / f"00000000000000005468.{ext}").unlink()
    assert "V009" in {f.code for f in errors(part)}
    plan, out = repaired(part, tmp_path)
    assert plan.cut is not None and plan.cut.code == "V009"
    assert (plan.cut.file, plan.cut.position) == ("00000000000000007305.log", 0)
    assert plan.new_log_end_offset == 5468
    # not even an empty segment after the gap: the log end would jump over it
    assert sorted(p.name for p in out.glob("*.log"))[-1] == "00000000000000003643.log"
    assert errors(out) == []


def test_an_overlap_between_segments_is_cut(tmp_path: Path) -> None:
    part = copy_data_dir(HEALTHY, tmp_path)
    seg = segment(part, 7305)
    first = batch_at(part, 7305, 7305)
    seg.write_bytes(seg.read_bytes()[first.size:])  # 7305.log now starts at 7306
    last = batch_at(part, 5468, 7304)
    older = segment(part, 5468)
    older.write_bytes(older.read_bytes() + bytes(first.raw) + bytes(batch_at(part, 7305, 7306).raw))
    plan, out = repaired(part, tmp_path)
    assert plan.cut is not None
    assert (plan.cut.file, plan.cut.code) == ("00000000000000007305.log", "V003")
    assert plan.new_log_end_offset == 7307 and last.last_offset == 7304
    assert errors(out) == []


def test_an_epoch_that_goes_back_is_cut(tmp_path: Path) -> None:
    part = copy_data_dir(HEALTHY, tmp_path)
    victim = batch_at(part, 5468, 6424)
    seg = segment(part, 5468)
    data = bytearray(seg.read_bytes())
    # partitionLeaderEpoch is outside the CRC: the batch stays intact for Kafka's recovery
    data[victim.position + 12:victim.position + 16] = (3).to_bytes(4, "big")
    seg.write_bytes(bytes(data))
    assert "V005" in {f.code for f in errors(part)}
    plan, out = repaired(part, tmp_path)
    assert plan.cut is not None
    assert (plan.cut.code, plan.cut.position, plan.cut.offset) == \
        ("V005", victim.position, 6424)
    assert errors(out) == []


def test_stale_and_inconsistent_files_are_quarantined(tmp_path: Path) -> None:
    part = copy_data_dir(HEALTHY, tmp_path)
    s4000 = part / "00000000000000004000-0000000006.checkpoint"
    s8157 = part / "00000000000000008157-0000000011.checkpoint"
    s12294 = part / "00000000000000012294-0000000011.checkpoint"
    extra = {
        "00000000000000012704-0000000011-123456789.checkpoint.part": s12294.read_bytes()[:500],
        "00000000000000004000-0000000006.checkpoint.deleted": s4000.read_bytes(),
        "00000000000000005000-0000000006.checkpoint": s4000.read_bytes(),  # wrong epoch
        "00000000000000013000-0000000011.checkpoint": s12294.read_bytes(),  # past the end
        "leader-epoch-checkpoint.tmp": b"0\n1\n1 0\n",  # Kafka's temp name: unknown
        "00000000000000099999.index": bytes(8),  # an index without its segment
        "00000000000000001802.log.deleted": b"",
    }
    for name, data in extra.items():
        (part / name).write_bytes(data)
    (part / "junk").mkdir()
    (part / "junk" / "notes.txt").write_text("left here")
    s8157.write_bytes(s8157.read_bytes()[:-30])  # torn: no SnapshotFooter any more
    plan, out = repaired(part, tmp_path)

    assert plan.cut is None
    reasons = {c.name: c.reason for c in plan.changes if c.action is Action.QUARANTINED}
    assert set(reasons) == {*extra} - {"00000000000000099999.index"} | {
        "junk", s8157.name}
    assert "past the new log end offset 12704" in \
        reasons["00000000000000013000-0000000011.checkpoint"]
    assert "epoch 6, but offset 4999 is in leader epoch 7" in \
        reasons["00000000000000005000-0000000006.checkpoint"]
    assert "damaged" in reasons[s8157.name]
    assert ".checkpoint.part" in reasons[
        "00000000000000012704-0000000011-123456789.checkpoint.part"]
    assert {c.name for c in plan.invalid_snapshots} == {
        s8157.name, "00000000000000005000-0000000006.checkpoint",
        "00000000000000013000-0000000011.checkpoint",
        "00000000000000004000-0000000006.checkpoint.deleted",
        "00000000000000012704-0000000011-123456789.checkpoint.part"}
    orphan = next(c for c in plan.changes if c.name == "00000000000000099999.index")
    assert orphan.action is Action.OMITTED and "without its segment" in orphan.reason
    assert not (out / orphan.name).exists()
    assert (out / QUARANTINE / "junk" / "notes.txt").read_text() == "left here"
    for name in reasons:
        if name != "junk":
            assert (out / QUARANTINE / name).read_bytes() == (part / name).read_bytes()
            assert not (out / name).exists()
    assert (out / s4000.name).exists() and (out / s12294.name).exists()
    assert errors(part) and errors(out) == []


def test_snapshot_below_the_log_start_and_epochs_cut_at_the_lbo(tmp_path: Path) -> None:
    part = copy_data_dir(HEALTHY, tmp_path)
    for base in (0, 1802):  # the log now starts at 3643 (snapshot 4000 covers it)
        for ext in ("log", "index", "timeindex"):
            (part / f"{base:020d}.{ext}").unlink()
    old = part / "00000000000000001000-0000000003.checkpoint"
    old.write_bytes((part / "00000000000000004000-0000000006.checkpoint").read_bytes())
    plan, out = repaired(part, tmp_path)
    assert plan.log_start_offset == 3643
    assert [c.name for c in plan.invalid_snapshots] == [old.name]
    assert "below the log start offset 3643" in plan.invalid_snapshots[0].reason
    # Kafka's cache truncated from the start at the LBO: epoch 5 (from 2778) now at 3643
    assert checkpoint_entries(out)[:2] == [[5, 3643], [6, 3805]]
    assert errors(out) == []


def test_index_that_disagrees_with_its_intact_segment_is_left_out(tmp_path: Path) -> None:
    part = copy_data_dir(HEALTHY, tmp_path)
    index = part / "00000000000000003643.index"
    data = bytearray(index.read_bytes())
    data[4:8] = (7).to_bytes(4, "big")  # the first entry's position: inside a batch
    index.write_bytes(bytes(data))
    assert "V032" in {f.code for f in errors(part)}
    plan, out = repaired(part, tmp_path)
    actions = {c.name: c for c in plan.changes}
    assert actions[index.name].action is Action.OMITTED
    assert "V032" in actions[index.name].reason
    # both go, so that Kafka rebuilds both (a missing time index alone stays empty)
    assert actions["00000000000000003643.timeindex"].action is Action.OMITTED
    assert actions["00000000000000003643.log"].action is Action.COPIED
    assert actions["00000000000000005468.index"].action is Action.COPIED
    assert errors(out) == []


# ----------------------------------------------------------------------------- truncate_to


@pytest.mark.parametrize("offset, quarantined", [
    (10146, ["00000000000000012294-0000000011.checkpoint"]),  # a multi-record batch
    (9112, ["00000000000000012294-0000000011.checkpoint"]),  # a segment's first batch
    (4000, ["00000000000000008157-0000000011.checkpoint",
            "00000000000000012294-0000000011.checkpoint"]),
    (12704, []),  # the log end: nothing to do
])
def test_truncate_to(offset: int, quarantined: list[str], tmp_path: Path) -> None:
    part = HEALTHY / META
    plan, out = repaired(part, tmp_path, truncate_to=offset)
    assert plan.new_log_end_offset == offset == plan.model.log_end_offset
    assert [c.name for c in plan.invalid_snapshots] == quarantined
    if quarantined:
        assert plan.cut is not None and plan.cut.cause == "truncate_to"
        assert any("quarantined" in n and quarantined[-1] in n for n in plan.notes)
        kept = [b for b in intact_batches(part)
                if int.from_bytes(b[2][:8], "big") < offset]
        assert plan.removed.batches == len(intact_batches(part)) - len(kept)
    else:
        assert plan.cut is None and not plan.changed
    if offset == 9112:  # as Kafka's truncateTo leaves it: the segment, empty
        assert (out / "00000000000000009112.log").stat().st_size == 0
    # the simulation a truncate command would show is this plan, without writing
    assert plan_repair(part, truncate_to=offset).changes == plan.changes
    assert errors(out) == []


@pytest.mark.parametrize("offset, message", [
    (10147, "cannot truncate to 10147: it is inside the batch of offsets 10146..10200"),
    (12705, "cannot truncate to 12705: beyond the log end offset 12704"),
    (-1, "cannot truncate to -1: below the log start offset 0"),
])
def test_truncate_to_refuses(offset: int, message: str) -> None:
    with pytest.raises(UsageError, match=message) as e:
        plan_repair(HEALTHY / META, truncate_to=offset)
    if offset == 10147:
        assert "use 10146 or 10201" in e.value.one_line()


# ----------------------------------------------------------------------------- out / in place


def test_out_must_be_new_or_empty_and_outside_the_input(tmp_path: Path) -> None:
    part = copy_data_dir(CORRUPT / "torn-tail", tmp_path)
    plan = plan_repair(part)
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x")
    for out, message in ((full, "not empty"), (part / "sub", "inside the input"),
                         (part, "over the input"), (full / "x", "not a directory")):
        with pytest.raises(UsageError, match=message):
            apply_repair(plan, out)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert apply_repair(plan, empty).findings == []
    assert intact_batches(empty) == intact_batches(part)[:len(intact_batches(empty))]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp left


def test_input_changed_after_planning_is_refused(tmp_path: Path) -> None:
    part = copy_data_dir(CORRUPT / "torn-tail", tmp_path)
    plan = plan_repair(part)
    with (part / "00000000000000000232.log").open("ab") as f:
        f.write(b"more")
    with pytest.raises(UsageError, match="changed since"):
        apply_repair(plan, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("exchange", [True, False], ids=["rename-exchange", "two-renames"])
def test_in_place_with_backup(exchange: bool, tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    if not exchange:  # where the system cannot swap two directories in one step
        monkeypatch.setattr(swap, "exchange", lambda a, b: False)
    part = copy_data_dir(CORRUPT / "zero-tail", tmp_path)
    data_dir = part.parent
    (data_dir / ".lock").write_bytes(b"")  # as a stopped broker leaves it
    original = hashes(part)
    around = {p.name: hashes(p) if p.is_dir() else p.read_bytes()
              for p in data_dir.iterdir() if p != part}
    plan = plan_repair(part)
    result = apply_repair_in_place(plan, tmp_path / "backup")
    assert result.in_place and result.backup == (tmp_path / "backup").absolute()
    assert hashes(tmp_path / "backup") == original
    assert result.findings == [] and errors(part) == []
    seg = part / "00000000000000000232.log"
    assert seg.stat().st_size == 16348
    assert hashes(part) != original
    # the data dir holds what it held, and no temporary directory of ours
    assert {p.name: hashes(p) if p.is_dir() else p.read_bytes()
            for p in data_dir.iterdir() if p != part} == around


def test_in_place_refuses_without_backup_or_with_one_in_the_data_dir(tmp_path: Path) -> None:
    part = copy_data_dir(CORRUPT / "zero-tail", tmp_path)
    before = hashes(part.parent)
    plan = plan_repair(part)
    with pytest.raises(UsageError, match="needs a backup"):
        apply_repair_in_place(plan, None)
    with pytest.raises(UsageError, match="inside the data directory"):
        apply_repair_in_place(plan, part.parent / "backup")
    with pytest.raises(UsageError, match="inside the input"):
        apply_repair_in_place(plan, part / "backup")
    assert hashes(part.parent) == before


_HOLD_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX)  # what Java's FileChannel.tryLock takes on Linux
print("locked", flush=True)
sys.stdin.read()
"""


def test_in_place_refuses_while_a_broker_holds_the_lock(tmp_path: Path) -> None:
    part = copy_data_dir(CORRUPT / "zero-tail", tmp_path)
    lock = part.parent / ".lock"
    lock.write_bytes(b"")
    before = hashes(part.parent)
    plan = plan_repair(part)
    broker = subprocess.Popen([sys.executable, "-c", _HOLD_LOCK, str(lock)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert broker.stdout.readline().strip() == "locked"
        with pytest.raises(UsageError, match="holds the data directory's .lock"):
            apply_repair_in_place(plan, tmp_path / "backup")
    finally:
        broker.stdin.close()
        broker.wait(timeout=30)
    # flock, as another tool may hold it, in this process
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(UsageError, match="holds the data directory's .lock"):
            apply_repair_in_place(plan, tmp_path / "backup")
    finally:
        os.close(fd)
    assert hashes(part.parent) == before
    assert not (tmp_path / "backup").exists()
    # once the broker is gone, it goes ahead
    assert apply_repair_in_place(plan, tmp_path / "backup").findings == []


def test_not_a_metadata_partition(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a partition directory"):
        plan_repair(HEALTHY)
    with pytest.raises(UnreadableInput, match="no metadata log here: a partition of topic"):
        plan_repair(HEALTHY / "orders-0")


# ----------------------------------------------------------------------------- follow_snapshot


def test_follow_snapshot_does_what_kafka_does_on_start(tmp_path: Path) -> None:
    part = copy_data_dir(CORRUPT / "bad-crc", tmp_path)
    default = plan_repair(part)
    assert default.new_log_end_offset == 20
    assert [c.name for c in default.invalid_snapshots] == \
        ["00000000000000000458-0000000002.checkpoint"]
    plan, out = repaired(part, tmp_path, follow_snapshot=True)
    assert plan.log_start_offset == plan.new_log_end_offset == 458
    assert plan.invalid_snapshots == []
    assert sorted(p.name for p in out.glob("*.log")) == ["00000000000000000458.log"]
    assert (out / "00000000000000000458.log").stat().st_size == 0
    assert checkpoint_entries(out) == []
    assert plan.removed.batches == len(intact_batches(part)) + 1  # + the damaged one
    assert errors(out) == []
    with pytest.raises(UsageError, match="contradict"):
        plan_repair(part, truncate_to=10, follow_snapshot=True)


# ----------------------------------------------------------------------------- render


def test_render(tmp_path: Path) -> None:
    part = copy_data_dir(CORRUPT / "torn-tail", tmp_path)
    plan = plan_repair(part)
    lines = repair_lines(plan)
    assert lines[0].startswith("repair plan for") and "nothing written" in lines[0]
    assert any(line.startswith("cut: 00000000000000000232.log at byte 16276 (offset 458): "
                               "S001") for line in lines)
    assert "log: start offset 0, end offset 458 -> 458" in lines
    assert any(line.split()[:2] == ["quarantined", "00000000000000000459.snapshot"]
               for line in (x.strip() for x in lines))
    obj = repair_object(plan)
    assert obj["kind"] == "repair-plan" and obj["output"] is None
    result = apply_repair(plan, tmp_path / "out")
    lines = repair_lines(result)
    assert "written to" in lines[0] and lines[-1] == "check: the output verifies clean"
    obj = json.loads(repair_json(result))
    assert obj["kind"] == "repair" and obj["log_end_offset"] == 458
    assert obj["cut"]["code"] == "S001" and obj["cut"]["position"] == 16276
    assert obj["removed"]["batches_by_type"] == {"torn": 1}
    assert obj["epoch_cache"] == [{"epoch": 1, "start_offset": 0},
                                  {"epoch": 2, "start_offset": 32}]
    assert "findings" not in obj  # findings are lines of their own
    by_file = {c["file"]: c for c in obj["changes"]}
    assert by_file["00000000000000000232.log"]["action"] == "cut"
    assert by_file["00000000000000000232.log"]["bytes_out"] == 16276
    assert by_file["00000000000000000459.snapshot"]["target"] == "quarantine/" \
        "00000000000000000459.snapshot"
    # a repair that leaves damage says so
    gz = copy_data_dir(CORRUPT / "corrupt-gzip", tmp_path / "gz")
    lines = repair_lines(apply_repair(plan_repair(gz), tmp_path / "gz-out"))
    assert any(line.startswith("check: the output still has") for line in lines)
    assert any("F006" in line for line in lines)


# ----------------------------------------------------------------------------- repair/*


REPAIR_CASES = json.loads((REPAIR / "MANIFEST.json").read_text())["cases"] \
    if (REPAIR / "MANIFEST.json").exists() else []


@pytest.mark.parametrize("case", REPAIR_CASES, ids=[c["name"] for c in REPAIR_CASES])
def test_repair_fixture(case: dict, tmp_path: Path) -> None:
    """What each case's MANIFEST says a correct repair does.  Two deliberate differences:
    indexes of a cut or damaged segment are left out for Kafka to rebuild (the manifest
    lists the entries a rebuilt index holds), and a snapshot ahead of the log is
    quarantined by default; with ``follow_snapshot`` repair does what Kafka does."""
    name = case["name"]
    want = case["repair"]
    part = copy_data_dir(REPAIR / name, tmp_path)
    ahead = name == "snapshot-beyond-end"
    plan, out = repaired(part, tmp_path, follow_snapshot=ahead)
    assert plan.log_start_offset == want["log_start_offset"]
    assert plan.new_log_end_offset == want["log_end_offset"]
    if want["last_valid_offset"] is not None:
        assert plan.new_log_end_offset == want["last_valid_offset"] + 1
    if want["cut"] is None:
        assert plan.cut is None or plan.cut.cause == "snapshot"
    else:
        assert plan.cut is not None
        assert (plan.cut.file, plan.cut.position) == \
            (Path(want["cut"]["file"]).name, want["cut"]["at"])
        assert plan.cut.code == case["code"]
    assert checkpoint_entries(out) == want["epochs"]
    live = sorted([int(p.name[:20]), int(p.name[21:31])] for p in out.glob("*.checkpoint"))
    assert live == sorted(want["snapshots"])
    assert plan.removed.batches == want["batches_lost"]
    for rel in want["delete"]:
        assert not (out / Path(rel).name).exists(), rel
    for rel in want.get("create", []):
        assert (out / Path(rel).name).stat().st_size == 0
    for index, entries in {**want.get("offset_index", {}), **want.get("time_index", {})
                           }.items():
        # left out: Kafka rebuilds it from the segment (its entries would be these)
        assert not (out / Path(index).name).exists() or not entries, index
    assert errors(out) == []
    if ahead:  # and by default, the snapshot is set aside instead, keeping the log
        default, out2 = repaired(part, tmp_path / "default")
        assert [c.name for c in default.invalid_snapshots] == [Path(case["file"]).name]
        assert default.new_log_end_offset == 490
        assert errors(out2) == []
