"""``kmeta truncate`` simulations: what would go, what the epoch cache and snapshots
become, and the image difference."""

from __future__ import annotations

from pathlib import Path

import pytest

from kmeta.errors import UsageError
from kmeta.ops.truncate import simulate_truncate

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "data"


def test_to_divergence_with_a_peer_matches_kafkas_truncation() -> None:
    a, b = ROOT / "divergent" / "unclean" / "a", ROOT / "divergent" / "unclean" / "b"
    plan = simulate_truncate(str(a), peer=str(b))
    assert plan.cut == 334 and plan.old_end == 364 and plan.changes
    assert plan.removed.records == 30 and plan.removed.first == 334
    assert plan.new_epochs == [(1, 0), (2, 30)] and plan.old_epochs[-1] == (3, 334)
    assert plan.image_diff is not None and plan.image_diff  # broker 7 goes away


def test_lagging_replica_has_nothing_to_cut() -> None:
    a, b = ROOT / "divergent" / "lag" / "a", ROOT / "divergent" / "lag" / "b"
    plan = simulate_truncate(str(b), peer=str(a))
    assert not plan.changes and "has not diverged" in plan.reason


def test_cut_inside_a_batch_moves_to_its_base_and_snapshots_past_it_are_named() -> None:
    healthy = ROOT / "healthy"
    plan = simulate_truncate(str(healthy), 9000)
    assert plan.cut <= 9000 and plan.removed.first == plan.cut
    assert plan.invalid_snapshots == ["00000000000000012294-0000000011.checkpoint"]
    assert any("below the latest snapshot" in n for n in plan.notes)
    assert all(o < plan.cut for _, o in plan.new_epochs)
    # a multi-record batch: the first one whose base is not its own offset
    from kmeta.storage.discover import discover
    from kmeta.storage.segments import mapped, scan

    (part,) = [p for p in discover([healthy]).all_partitions() if p.is_metadata]
    for seg in part.segments:
        with mapped(seg.path) as buf:
            multi = next((b for b in scan(buf, "s") if hasattr(b, "last_offset")
                          and b.last_offset > b.base_offset), None)
        if multi is not None:
            break
    assert multi is not None
    inside = simulate_truncate(str(healthy), multi.base_offset + 1, images=False)
    assert inside.cut == multi.base_offset and "inside the batch" in inside.notes[0]


def test_refusals() -> None:
    with pytest.raises(UsageError):
        simulate_truncate(str(ROOT / "healthy"))
    with pytest.raises(UsageError):
        simulate_truncate(str(ROOT / "divergent" / "behind-snapshot" / "a"), 10)
