"""``kmeta repair`` output: lines for people, one JSON object for scripts.

Both take a :class:`~kmeta.ops.repair.RepairResult` (a repair that was written) or a bare
:class:`~kmeta.ops.repair.RepairPlan` (what a repair or a truncation would do).
"""

from __future__ import annotations

from typing import Any

from kmeta.findings import Severity
from kmeta.ops.repair import Action, FileChange, RepairPlan, RepairResult
from kmeta.render.jsonl import dumps
from kmeta.render.text import FINDINGS_SHOWN, Paths, finding_line, summarise

__all__ = ["repair_json", "repair_lines", "repair_object"]


def _split(item: RepairResult | RepairPlan) -> tuple[RepairPlan, RepairResult | None]:
    if isinstance(item, RepairResult):
        return item.plan, item
    return item, None


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items(), key=lambda i: (-i[1], i[0])))


def _bytes(c: FileChange) -> str:
    if c.action is Action.REBUILT:
        return f"{c.bytes_out:,} bytes" if c.bytes_in is None else \
            f"{c.bytes_in:,} -> {c.bytes_out:,} bytes"
    if c.bytes_in is None:
        return "-"
    if c.action is Action.CUT:
        return f"{c.bytes_in:,} -> {c.bytes_out:,} bytes"
    return f"{c.bytes_in:,} bytes"


def _offsets(c: FileChange) -> str:
    if c.kind == "segment" and c.action in (Action.COPIED, Action.CUT):
        if c.first_offset is None:
            return ", empty"
        return f", offsets {c.first_offset}..{c.last_offset}"
    return ""


def repair_lines(item: RepairResult | RepairPlan) -> list[str]:
    """A summary, one line per file that is not simply copied (all of them with a cut or
    a drop), the notes, and the check of the output."""
    plan, result = _split(item)
    lines = []
    if result is None:
        lines.append(f"repair plan for {plan.part_dir} (nothing written)")
    elif result.in_place:
        lines.append(f"repaired {plan.part_dir} in place; the original is in {result.backup}")
    else:
        lines.append(f"repaired copy of {plan.part_dir} written to {result.out}")
    before = "?" if plan.input_log_end_offset is None else plan.input_log_end_offset
    lines.append(f"log: start offset {plan.log_start_offset}, end offset {before} -> "
                 f"{plan.new_log_end_offset}")
    cut = plan.cut
    if cut is None:
        lines.append("cut: none, every batch is kept")
    else:
        at = "" if cut.offset is None else f" (offset {cut.offset})"
        what = cut.message if cut.code is None else f"{cut.code} {cut.message}"
        lines.append(f"cut: {cut.file} at byte {cut.position}{at}: {what} [{cut.reason}]")
    r = plan.removed
    if r.batches or r.bytes:
        span = "" if r.first_offset is None else f", from offset {r.first_offset}" \
            if r.last_offset is None else f", offsets {r.first_offset}..{r.last_offset}"
        types = f" ({_counts(r.batches_by_type)})" if r.batches_by_type else ""
        lines.append(f"removed: {r.batches:,} batch(es){types}, {r.records:,} record(s), "
                     f"{r.bytes:,} bytes{span}")
        if r.records_by_type:
            lines.append(f"removed records: {_counts(r.records_by_type)}")
        if r.damage:
            lines.append(f"removed damage: {len(r.damage)} more problem(s) in what was "
                         f"removed, first {r.damage[0].code} in {r.damage[0].where()}")
    else:
        lines.append("removed: nothing")
    lines.append("leader-epoch-checkpoint: " + (summarise(
        [str(e) for e in plan.epoch_cache.entries], "epochs") if plan.epoch_cache.entries
        else "(empty)"))
    shown = [c for c in plan.changes if c.action is not Action.COPIED]
    width = max((len(c.name) for c in shown), default=0)
    for c in shown:
        lines.append(f"  {c.action.value:<11} {c.name:<{width}}  {_bytes(c)}{_offsets(c)}: "
                     f"{c.reason}")
    copied = plan.by_action(Action.COPIED)
    if copied:
        lines.append(f"  {'copied':<11} {len(copied):,} file(s) unchanged")
    lines += [f"note: {n}" for n in plan.notes]
    if result is not None:
        lines += [f"note: {n}" for n in result.notes]
    if result is not None and result.findings is not None:
        lines += _check_lines(result)
    if plan.committed_lost is not None:
        # last, where the eye lands: a clean check does not mean nothing was lost
        lost = plan.committed_lost
        lines.append(f"cost: {lost.records:,} committed record(s) lost (offsets "
                     f"{lost.first_offset}..{lost.last_offset}); the replica must fetch "
                     "them again from the leader" + (
                         f", or repair with --follow-snapshot to keep the state up to "
                         f"{lost.last_offset + 1}" if lost.can_follow else ""))
    return lines


def _check_lines(result: RepairResult) -> list[str]:
    found = [f for f in result.findings or () if f.severity is not Severity.INFO]
    errors = sum(1 for f in found if f.severity is Severity.ERROR)
    if not found:
        return ["check: the output verifies clean"]
    if errors:
        lines = [f"check: the output still has {errors} error(s) and {len(found) - errors} "
                 "warning(s): repair keeps every batch Kafka's recovery keeps and never "
                 "rewrites records or the small files; --truncate-to can cut before a "
                 "damaged batch"]
    else:
        lines = [f"check: no errors in the output, {len(found)} warning(s):"]
    # the first few (the JSON has them all), named under the output dir
    lines += [f"  {finding_line(f, paths=Paths([str(result.out)]))}"
              for f in found[:FINDINGS_SHOWN]]
    if len(found) > FINDINGS_SHOWN:
        lines.append(f"  … {len(found) - FINDINGS_SHOWN} more")
    return lines


def _change(c: FileChange) -> dict[str, Any]:
    out: dict[str, Any] = {"file": c.name, "file_kind": c.kind, "action": c.action.value,
                           "reason": c.reason, "target": c.target, "bytes_in": c.bytes_in,
                           "bytes_out": c.bytes_out}
    if c.first_offset is not None:
        out["first_offset"] = c.first_offset
        out["last_offset"] = c.last_offset
    if c.details:
        out["details"] = c.details
    return out


def repair_object(item: RepairResult | RepairPlan) -> dict[str, Any]:
    """The whole repair as one JSON-ready object, ``kind`` "repair" (written) or
    "repair-plan" (nothing written)."""
    plan, result = _split(item)
    cut = plan.cut
    r = plan.removed
    return {
        "kind": "repair" if result is not None else "repair-plan",
        "file": str(plan.part_dir),
        "output": None if result is None else str(result.out),
        "in_place": bool(result and result.in_place),
        "backup": None if result is None or result.backup is None else str(result.backup),
        "truncate_to": plan.truncate_to,
        "log_start_offset": plan.log_start_offset,
        "input_log_end_offset": plan.input_log_end_offset,
        "log_end_offset": plan.new_log_end_offset,
        "cut": None if cut is None else {
            "file": cut.file, "position": cut.position, "offset": cut.offset,
            "cause": cut.cause, "code": cut.code, "message": cut.message,
            "reason": cut.reason},
        "removed": {"batches": r.batches, "records": r.records, "bytes": r.bytes,
                    "first_offset": r.first_offset, "last_offset": r.last_offset,
                    "batches_by_type": dict(r.batches_by_type),
                    "records_by_type": dict(r.records_by_type),
                    "damage": [f.to_json() for f in r.damage]},
        "committed_lost": None if plan.committed_lost is None else {
            "records": plan.committed_lost.records,
            "first_offset": plan.committed_lost.first_offset,
            "last_offset": plan.committed_lost.last_offset,
            "snapshot": plan.committed_lost.snapshot},
        "epoch_cache": [{"epoch": e.epoch, "start_offset": e.start_offset}
                        for e in plan.epoch_cache.entries],
        "changed": plan.changed,
        "changes": [_change(c) for c in plan.changes],
        "notes": list(plan.notes) + (list(result.notes) if result is not None else []),
    }


def repair_json(item: RepairResult | RepairPlan) -> str:
    return dumps(repair_object(item))
