"""``kmeta truncate`` for people and scripts."""

from __future__ import annotations

from collections.abc import Iterator

from kmeta.ops.truncate import TruncatePlan
from kmeta.render.jsonl import dumps
from kmeta.render.text import difference_lines, summarise


def truncate_json(plan: TruncatePlan) -> Iterator[str]:
    yield dumps(plan.to_json())


def _pairs(entries: list[tuple[int, int]]) -> str:
    if not entries:
        return "(empty)"
    # hundreds of epochs stay one readable line: the first, the last and how many
    return summarise([f"{e}@{o}" for e, o in entries], "epochs").replace(",", ", ")


def truncate_lines(plan: TruncatePlan, width: int | None = None) -> Iterator[str]:
    """The simulation for people; ``width``: what an image difference is cut to (None:
    kept whole)."""
    head = "simulation (nothing written)"
    if plan.reason:
        yield plan.reason
    if not plan.changes:
        yield f"{head}: the log ends at {plan.old_end}; truncating to {plan.requested} " \
            "removes nothing"
        return
    r = plan.removed
    yield f"{head}: {plan.replica.label} truncated to offset {plan.cut}"
    yield f"  log end offset: {plan.old_end} -> {plan.cut}"
    kinds = ", ".join(f"{t} x{n:,}" for t, n in r.by_type.most_common())
    yield f"  removed: {r.batches:,} batch(es), {r.records:,} record(s) at offsets " \
        f"{r.first}..{r.last}: {kinds}"
    yield f"  epoch cache: {_pairs(plan.old_epochs)} -> {_pairs(plan.new_epochs)}"
    if plan.invalid_snapshots:
        yield "  snapshots past the new end (invalid after it): " + \
            ", ".join(plan.invalid_snapshots)
    for note in plan.notes:
        yield f"  note: {note}"
    if plan.image_diff is not None:
        yield from difference_lines("image before -> after", plan.image_diff, width=width)
