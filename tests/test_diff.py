"""``kmeta diff`` on the generated replica sets (ground truth in their MANIFEST.json) and
on the real quorum."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import clirun
import pytest
from conftest import DIVERGENT

from kmeta.core.divergence import Outcome
from kmeta.ops.diff import diff_replicas

CASES = json.loads((DIVERGENT / "MANIFEST.json").read_text())["cases"]


def _paths(case: dict) -> list[str]:
    # the leader first (LOCAL), so every other replica is compared with it
    names = [case["leader"]] + sorted(n for n in case["replicas"] if n != case["leader"])
    return [str(DIVERGENT / case["name"] / n) for n in names]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case_matches_its_ground_truth(case: dict) -> None:
    paths = _paths(case)
    report = diff_replicas(paths)
    out = report.to_json()
    content = case["content_first_differs_at"]
    by_epoch = case["divergence"]["offset"] if case["divergence"] else None
    assert out["diverged"] == (case["diverged"] or content is not None)
    expected_offsets = [x for x in (content, by_epoch) if x is not None]
    assert out["divergence_offset"] == (min(expected_offsets) if expected_offsets else None)
    lagging = sorted(str(DIVERGENT / case["name"] / n) for n in case["lagging"])
    assert (out["lagging_replicas"] or []) == lagging
    for pair in report.pairs:
        name = Path(pair.peer.label).name
        truth = case["kafka"][name]
        rec = pair.peer_follows  # the peer follows the leader (LOCAL)
        if truth["must_truncate"]:
            assert rec.outcome is Outcome.TRUNCATE and rec.truncate_to == truth["truncate_to"]
        elif truth["fetch_snapshot"]:
            snap = truth["fetch_snapshot"]
            assert rec.outcome is Outcome.SNAPSHOT
            assert (rec.snapshot.offset, rec.snapshot.epoch) == (snap["end_offset"],
                                                                 snap["epoch"])
        else:
            assert rec.outcome is Outcome.IN_SYNC
    if case["divergence"]:
        follower = case["divergence"]["replica"]
        pair = next(p for p in report.pairs if Path(p.peer.label).name == follower)
        assert pair.divergence_epoch == case["divergence"]["epoch"]
    for name, r in case["replicas"].items():
        rep = next(x for x in report.replicas if Path(x.label).name == name)
        assert (rep.log_start, rep.log_end, rep.latest_epoch) == (
            r["log_start_offset"], r["log_end_offset"], r["latest_epoch"])


def test_flipped_byte_is_found_where_kafka_sees_nothing() -> None:
    case = next(c for c in CASES if c["name"] == "flipped-byte")
    report = diff_replicas(_paths(case))
    (pair,) = report.pairs
    assert pair.content_split is not None and pair.content_split.offset == 300
    assert pair.peer_follows.outcome is Outcome.IN_SYNC
    assert any("Kafka will not notice" in line for line in pair.kafka)
    # one batch differs; the rest after it is the same on both sides
    assert pair.content_split.batches == 1
    assert pair.only_local.records == pair.only_peer.records == 1


def test_different_log_starts_compare_by_image() -> None:
    report = diff_replicas([str(DIVERGENT / "truncated-prefix" / "a"),
                            str(DIVERGENT / "truncated-prefix" / "b")])
    (pair,) = report.pairs
    assert pair.status == "equivalent" and pair.image_diff["at_log_start"] == []
    behind = diff_replicas([str(DIVERGENT / "behind-snapshot" / "a"),
                            str(DIVERGENT / "behind-snapshot" / "b")], images=False)
    (pair,) = behind.pairs
    assert pair.status == "lagging" and pair.peer_follows.outcome is Outcome.SNAPSHOT
    assert any("fetches snapshot 00000000000000000571" in k for k in pair.kafka)


def test_quorum_majority() -> None:
    case = next(c for c in CASES if c["name"] == "quorum3")
    report = diff_replicas(_paths(case))
    m = report.majority
    assert m is not None and m["majority_of"] == 2
    # a and b agree on everything b holds; c split from a at 311
    b_end = case["replicas"]["b"]["log_end_offset"]
    assert m["prefix_end"] == b_end
    assert sorted(Path(p).name for p in m["held_by"]) == ["a", "b"]
    assert set(Path(p).name for p in m["beyond"]) <= {"a", "c"}


def test_real_quorum_shows_lag_not_divergence(real_data: Path) -> None:
    base = real_data / "quorum3-boaz" / "data"
    report = diff_replicas([str(base / f"kafka-{n}") for n in (1, 2, 3)])
    out = report.to_json()
    assert out["diverged"] is False and out["divergence_offset"] is None
    assert out["lagging_replicas"] == [str(base / "kafka-1")]
    assert [p.status for p in report.pairs] == ["identical", "lagging"]
    only = report.pairs[1].only_peer
    assert only is not None and dict(only.by_type) == {"LEADER_CHANGE": 1}


def test_real_dir_against_its_own_truncated_copy(real_data: Path, tmp_path: Path) -> None:
    """A copy cut at a batch boundary is a lagging prefix; a copy with a changed byte
    (CRC fixed) diverges by content at that batch."""
    from kmeta.storage.segments import scan_batches

    src = real_data / "ldi-poc" / "__cluster_metadata-0"
    seg = src / f"{0:020d}.log"
    data = seg.read_bytes()
    batches = [b for b in scan_batches(data, "x") if hasattr(b, "position")]
    cut = batches[3000]
    short = tmp_path / "short" / "__cluster_metadata-0"
    shutil.copytree(src, short)
    (short / seg.name).write_bytes(data[:cut.position])
    report = diff_replicas([str(src), str(short)])
    (pair,) = report.pairs
    assert pair.status == "lagging" and pair.lag_offsets == 4929 - cut.base_offset
    assert report.diverged is False
    # a changed byte inside batch 2000, with its CRC recomputed
    import crc32c

    b = batches[2000]
    raw = bytearray(data[b.position:b.position + 12 + b.length])
    raw[-1] ^= 0x01
    raw[17:21] = crc32c.crc32c(bytes(raw[21:])).to_bytes(4, "big")
    changed = tmp_path / "changed" / "__cluster_metadata-0"
    shutil.copytree(src, changed)
    (changed / seg.name).write_bytes(data[:b.position] + bytes(raw)
                                     + data[b.position + len(raw):])
    report = diff_replicas([str(src), str(changed)], images=False)
    assert report.diverged and report.pairs[0].divergence_offset == b.base_offset


def test_cli_exit_codes_and_json(real_data: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess:
        return clirun.run("diff", *args, timeout=120)

    lag = run("--json", str(DIVERGENT / "lag" / "a"), str(DIVERGENT / "lag" / "b"))
    assert lag.returncode == 0, lag.stderr
    out = json.loads(lag.stdout)
    assert out["kind"] == "diff" and out["diverged"] is False and out["lagging_replicas"]
    div = run(str(DIVERGENT / "unclean" / "a"), str(DIVERGENT / "unclean" / "b"))
    assert div.returncode == 1 and "DIVERGED at offset 334" in div.stdout
    usage = run(str(DIVERGENT / "lag" / "a"))
    assert usage.returncode == 2 and "Traceback" not in usage.stderr


def test_real_dirs_against_byte_copies(real_data: Path, tmp_path: Path) -> None:
    for name in ("ldi-poc", "data-store"):
        copy = tmp_path / name
        shutil.copytree(real_data / name, copy)
        report = diff_replicas([str(real_data / name), str(copy)])
        assert [p.status for p in report.pairs] == ["identical"], name
        assert report.to_json()["diverged"] is False


def test_data_store_loads_as_kafka_would_and_compares_snapshot_images(
        real_data: Path, tmp_path: Path) -> None:
    """No segment, snapshots up to 63224: Kafka drops the (missing) log for the latest
    snapshot. A replica whose latest snapshot holds another image has diverged."""
    src = real_data / "data-store"
    report = diff_replicas([str(src), str(shutil.copytree(src, tmp_path / "c"))])
    rep = report.replicas[0]
    assert (rep.log_start, rep.log_end) == (63224, 63224)
    assert any("latest snapshot 00000000000000063224-0000000009" in n for n in rep.notes)
    assert report.pairs[0].image_diff["at_log_start"] == []
    # swap in the content of an epoch-8 snapshot (another image: broker epochs differ)
    # under the latest snapshot's name
    part = tmp_path / "c" / "kafka-data" / "__cluster_metadata-0"
    latest = part / "00000000000000063224-0000000009.checkpoint"
    older = part / "00000000000000038023-0000000008.checkpoint"
    latest.write_bytes(older.read_bytes())
    changed = diff_replicas([str(src), str(tmp_path / "c")])
    (pair,) = changed.pairs
    assert pair.status == "diverged" and pair.image_diff["at_log_start"]


def test_majority_names_the_last_offset_it_holds_as_the_ranges_do(real_data: Path) -> None:
    # three byte-identical logs of 188 records, offsets 0..187: one way of saying where
    # the common prefix ends, not "0..187" beside "up to offset 188"
    base = real_data / "kraft32-three" / "data"
    proc = clirun.run("diff", *(str(base / f"kafka{n}") for n in (1, 2, 3)))
    assert proc.returncode == 0, proc.stderr
    assert "offsets 0..187" in proc.stdout
    (line,) = [x for x in proc.stdout.splitlines() if x.startswith("majority")]
    assert "the same bytes up to and including offset 187 on " in line, line
    assert "188" not in line
