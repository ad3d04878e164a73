"""``kmeta truncate`` simulations: what would go, what the epoch cache and snapshots
become, and the image difference."""

from __future__ import annotations

from pathlib import Path

import clirun
import pytest
from conftest import FIXTURES

from kmeta.errors import UsageError
from kmeta.ops.truncate import simulate_truncate


def test_to_divergence_with_a_peer_matches_kafkas_truncation() -> None:
    a, b = FIXTURES / "divergent" / "unclean" / "a", FIXTURES / "divergent" / "unclean" / "b"
    plan = simulate_truncate(str(a), peer=str(b))
    assert plan.cut == 334 and plan.old_end == 364 and plan.changes
    assert plan.removed.records == 30 and plan.removed.first == 334
    assert plan.new_epochs == [(1, 0), (2, 30)] and plan.old_epochs[-1] == (3, 334)
    assert plan.image_diff is not None and plan.image_diff  # broker 7 goes away


def test_lagging_replica_has_nothing_to_cut() -> None:
    a, b = FIXTURES / "divergent" / "lag" / "a", FIXTURES / "divergent" / "lag" / "b"
    plan = simulate_truncate(str(b), peer=str(a))
    assert not plan.changes and "has not diverged" in plan.reason


def test_cut_inside_a_batch_moves_to_its_base_and_snapshots_past_it_are_named() -> None:
    healthy = FIXTURES / "healthy"
    plan = simulate_truncate(str(healthy), 9000)
    assert plan.cut <= 9000 and plan.removed.first == plan.cut
    assert plan.invalid_snapshots == ["00000000000000012294-0000000011.checkpoint"]
    assert any("below the latest snapshot" in n for n in plan.notes)
    assert all(o < plan.cut for _, o in plan.new_epochs)
    # a multi-record batch: the first one whose base is not its own offset
    from kmeta.storage.discover import discover
    from kmeta.storage.segments import mapped, scan_batches

    (part,) = [p for p in discover([healthy]).all_partitions() if p.is_metadata]
    for seg in part.segments:
        with mapped(seg.path) as buf:
            multi = next((b for b in scan_batches(buf, "s") if hasattr(b, "last_offset")
                          and b.last_offset > b.base_offset), None)
        if multi is not None:
            break
    assert multi is not None
    inside = simulate_truncate(str(healthy), multi.base_offset + 1, images=False)
    assert inside.cut == multi.base_offset and "inside the batch" in inside.notes[0]


def test_refusals() -> None:
    with pytest.raises(UsageError):
        simulate_truncate(str(FIXTURES / "healthy"))
    with pytest.raises(UsageError):
        simulate_truncate(str(FIXTURES / "divergent" / "behind-snapshot" / "a"), 10)


def test_cli_simulates_then_applies(tmp_path: Path) -> None:
    import json
    import subprocess

    def run(*args: str) -> subprocess.CompletedProcess:
        return clirun.run(*args, timeout=120)

    a, b = FIXTURES / "divergent" / "unclean" / "a", FIXTURES / "divergent" / "unclean" / "b"
    sim = run("truncate", "--json", str(a), "--to-divergence-with", str(b))
    assert sim.returncode == 0, sim.stderr
    plan = json.loads(sim.stdout)
    assert plan["kind"] == "truncate" and plan["truncate_to"] == 334 and not plan["applied"]
    assert run("truncate", str(a), "--to", "5", "--apply").returncode == 2  # needs --out
    out = tmp_path / "__cluster_metadata-0"
    done = run("truncate", "--json", str(a), "--to-divergence-with", str(b), "--apply",
               "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["kind"] == "repair"
    again = run("diff", "--json", str(out), str(b))
    # the truncated copy is now a prefix of the leader's log: lag, not divergence
    assert again.returncode == 0
    assert json.loads(again.stdout.splitlines()[0])["lagging_replicas"] == [str(out)]


def test_repair_cli(tmp_path: Path) -> None:
    src = FIXTURES / "corrupt" / "torn-tail" / "__cluster_metadata-0"
    out = tmp_path / "__cluster_metadata-0"
    done = clirun.run("repair", str(src), "--out", str(out), timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "S001" in done.stdout and (out / "leader-epoch-checkpoint").is_file()
    refused = clirun.run("repair", str(src), "--in-place", timeout=120)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
