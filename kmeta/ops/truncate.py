"""``kmeta truncate``: what truncating a replica's metadata log to an offset would do.

A simulation over the core model (``ReplicaLog.truncate_to``) and the image replay; it
writes nothing.  Kafka's truncation works on whole batches (``LogSegment.truncateTo``
cuts at the first batch whose last offset reaches the target), so a target inside a
batch cuts at that batch's base offset, and says so.  :func:`write_truncated` writes the
truncated copy with repair's writer.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kmeta.core.image import diff_images
from kmeta.errors import KmetaError, UnreadableInput, UsageError
from kmeta.findings import NOT_READ, Finding
from kmeta.formats.filenames import snapshot_file_name
from kmeta.ops.diff import (
    Replica,
    SideOnly,
    diff_replicas,
    open_replica,
    read_replicas,
)
from kmeta.ops.repair import Removed, RepairResult, apply_repair, plan_repair
from kmeta.ops.replay import build_image
from kmeta.storage.discover import segments_from
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.segments import read_batches
from kmeta.storage.targets import INTO_DATA_DIR, check_target

__all__ = ["TruncatePlan", "simulate_truncate", "write_truncated"]


@dataclass
class TruncatePlan:
    replica: Replica
    requested: int
    cut: int  # where the log really ends after it (a batch boundary)
    old_end: int
    removed: SideOnly
    old_epochs: list[tuple[int, int]]
    new_epochs: list[tuple[int, int]]
    invalid_snapshots: list[str]
    image_diff: list[str] | None
    reason: str = ""  # why this offset (--to-divergence-with)
    notes: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def changes(self) -> bool:
        return self.cut < self.old_end

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "truncate", "path": self.replica.label, "requested": self.requested,
            "truncate_to": self.cut, "old_log_end_offset": self.old_end,
            "new_log_end_offset": min(self.cut, self.old_end),
            "removed_records": self.removed.to_json(),
            "epoch_cache_before": [{"epoch": e, "start_offset": o} for e, o in self.old_epochs],
            "epoch_cache_after": [{"epoch": e, "start_offset": o} for e, o in self.new_epochs],
            "invalid_snapshots": self.invalid_snapshots,
            "image_changes": self.image_diff, "reason": self.reason or None,
            "notes": self.notes, "applied": False,
        }


def _batch_base(rep: Replica, offset: int) -> int | None:
    """Base offset of the batch holding ``offset``, or None when no batch holds it."""
    for seg in segments_from(rep.part.segments, offset):
        for b in read_batches(seg.path):
            if type(b) is Finding:
                if b.code in NOT_READ:
                    return None
                continue
            if b.base_offset <= offset <= b.last_offset:
                return b.base_offset
            if b.base_offset > offset:
                return None
    return None


def _removed(tally: Removed, cut: int) -> SideOnly:
    return SideOnly(cut, tally.batches, tally.records, Counter(tally.records_by_type),
                    tally.first_offset, tally.last_offset)


def simulate_truncate(path: str, to: int | None = None, *, peer: str | None = None,
                      images: bool = True, progress: Progress = QUIET) -> TruncatePlan:
    """What truncating ``path``'s metadata log to ``to`` (or to where it diverges from
    ``peer``) would remove and change; ``progress`` hears of the reading."""
    if (to is None) == (peer is None):
        raise UsageError("give exactly one of --to and --to-divergence-with")
    reason = ""
    if peer is not None:
        report = diff_replicas([path, peer], images=False, progress=progress)
        pair = report.pairs[0]
        rep = report.replicas[0]
        if pair.divergence_offset is None:
            to = rep.log_end
            reason = f"{path} has not diverged from {peer} ({pair.status}): nothing to cut"
        else:
            to = pair.divergence_offset
            reason = f"{path} diverged from {peer} at offset {to}"
            if pair.local_follows.truncate_to is not None and pair.content_split is None:
                reason += " (where Kafka's fetch would truncate it)"
    else:
        rep = open_replica(path, progress)
        read_replicas([rep])
    assert to is not None and rep.model is not None
    if not rep.part.segments:  # as repair says: the model's start would be a snapshot's
        raise UnreadableInput("no log segment: there is no log to truncate",
                              context=str(rep.part.path),
                              hint="copy the whole partition directory from the broker")
    model = rep.model
    if to < model.log_start_offset:
        raise UsageError(f"--to {to} is below the log start offset {model.log_start_offset}",
                         context=rep.path, hint="the log holds nothing below it to keep")
    notes: list[str] = []
    cut = to
    if to < model.log_end_offset:
        base = _batch_base(rep, to)
        if base is not None and base != to:
            notes.append(f"offset {to} is inside the batch starting at {base}: Kafka cuts "
                         f"whole batches, so the log would end at {base}")
            cut = base
    latest = model.latest_snapshot
    if latest is not None and cut < latest.offset:
        notes.append(f"the cut is below the latest snapshot {latest.file_stem}: Kafka "
                     "never truncates below its high watermark; a follower would fetch "
                     "a snapshot instead")
    removed = SideOnly(cut)
    if cut < model.log_end_offset:
        # What --apply would write, counted by the one reader that writes it: the log
        # ends earlier where damage lies below the cut, and a batch whose CRC fails holds
        # no records anyone can trust.
        repair = plan_repair(rep.part.path, truncate_to=cut)
        if repair.new_log_end_offset < cut:
            notes += [n for n in repair.notes if n.startswith("truncating to")]
            cut = repair.new_log_end_offset
        removed = _removed(repair.removed, cut)
    # Kafka truncates the epoch cache from the end on truncation (UnifiedLog.truncateTo)
    new_epochs = model.epoch_cache.truncate_from_end(cut)
    invalid = [snapshot_file_name(s.offset, s.epoch) for s in model.snapshots if s.offset > cut]
    image_diff = None
    if images and cut < model.log_end_offset:
        try:
            before_img = build_image(rep.path).image
            after_img = build_image(rep.path, at=cut).image
            image_diff = diff_images(before_img, after_img)
        except KmetaError as e:
            notes.append(f"no image diff: {e.message}")
    return TruncatePlan(
        rep, to, cut, model.log_end_offset, removed,
        [(e.epoch, e.start_offset) for e in model.epoch_cache.entries],
        [(e.epoch, e.start_offset) for e in new_epochs.entries],
        invalid, image_diff, reason, notes, rep.findings)


def write_truncated(path: str, out: str | os.PathLike[str], to: int | None = None, *,
                    peer: str | None = None, into_data_dir: bool = False,
                    progress: Progress = QUIET) -> RepairResult:
    """Write ``path``'s metadata partition truncated as :func:`simulate_truncate` says to
    ``out``, with repair's writer (``into_data_dir`` as there).  What was written is
    counted once, by repair (the simulation would count a damaged batch differently); its
    reason and notes join repair's."""
    # Judged against what is read (a data dir, the peer too) before the simulation reads it.
    check_target(out, [p for p in (path, peer) if p is not None], what="the output directory",
                 permit=INTO_DATA_DIR, permitted=into_data_dir)
    plan = simulate_truncate(path, to, peer=peer, images=False, progress=progress)
    result = apply_repair(plan_repair(plan.replica.path, truncate_to=plan.cut), out,
                          into_data_dir=into_data_dir)
    result.notes += [n for n in (plan.reason, *plan.notes) if n]
    return result
