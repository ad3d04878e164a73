"""One metadata replica as the core model sees it (:class:`kmeta.core.replica_log.ReplicaLog`):
built from what a pass over its log read (:class:`.stats.LogStats`) and its small files,
and V020, a metadata partition whose log is gone, the one rule of that shared by verify,
info, image, diff and retention."""

from __future__ import annotations

from typing import Any

from kmeta.core.log_rules import Layout
from kmeta.core.replica_log import Observation, ReplicaLog, SnapshotState
from kmeta.findings import Finding
from kmeta.ops.replica.stats import LogStats
from kmeta.storage.discover import LogFile, PartitionDir
from kmeta.storage.files import load_checked


def small_file(part: PartitionDir, kind: str) -> tuple[LogFile | None, Any, list[Finding]]:
    """A partition's small file of ``kind``: the file, its content (None if absent or
    unreadable) and the Finding that says why it could not be read."""
    f = part.live_file(kind)
    loaded, problem = load_checked(f)
    return f, loaded, [problem] if problem else []


#: A snapshot file's state in the model, by its name's suffix.
SNAPSHOT_STATES = {None: SnapshotState.LIVE, "part": SnapshotState.PART,
                   "deleted": SnapshotState.DELETED}


def build_model(part: PartitionDir, stats: LogStats) -> tuple[ReplicaLog, list[Observation],
                                                              list[Finding]]:
    """The core model of this replica from what the verify pass read: the segments'
    batches (as runs of one epoch), the snapshot files, the leader-epoch checkpoint and
    quorum-state.  Kafka's LogLoader puts the log start offset of the metadata log at
    its first segment's base offset, which is ``from_observed``'s default."""
    findings: list[Finding] = []
    _, checkpoint, problems = small_file(part, "leader-epoch-checkpoint")
    findings += problems
    _, quorum, problems = small_file(part, "quorum-state")
    findings += problems
    snapshots = [((f.kind.base_offset, f.kind.epoch), SNAPSHOT_STATES[f.kind.suffix])
                 for f in part.files if f.kind.kind == "kraft-snapshot"]
    model, notes = ReplicaLog.from_observed(
        Layout(stats.layout).model_segments(),
        epoch_entries=None if checkpoint is None else
        [(e.epoch, e.start_offset) for e in checkpoint.entries],
        snapshots=snapshots,
        quorum_leader_epoch=None if quorum is None else quorum.leader_epoch)
    return model, notes, findings


def missing_log_finding(part: PartitionDir) -> Finding | None:
    """V020 when a metadata partition holds no live log segment (Kafka always keeps its
    active segment, so the log itself is missing); what is left says how far it went.
    The one home of this rule: verify, info, image and retention report it from here."""
    if not part.is_metadata or part.segments:
        return None
    _, checkpoint, _ = small_file(part, "leader-epoch-checkpoint")
    last = checkpoint.entries[-1] if checkpoint is not None and checkpoint.entries else None
    live = [f.kind.base_offset for f in part.snapshots]
    known = [f"epoch cache up to {last.start_offset}" if last else None,
             f"snapshots up to {max(live)}" if live else None]
    return Finding("V020", "no log segment in this metadata partition directory (Kafka "
                   "always keeps its active segment): the log itself is missing"
                   + (f"; {', '.join(x for x in known if x)}" if any(known) else ""),
                   str(part.path))
