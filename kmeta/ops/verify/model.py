"""What verify says of the replica model built from its pass over a metadata log
(:mod:`kmeta.ops.replica`): leader epochs against ``leader-epoch-checkpoint`` and
``quorum-state``, the snapshots' places in the log (KIP-595, KIP-630), a LeaderChange per
epoch; and a partition dir without any segment (V020)."""

from __future__ import annotations

from collections.abc import Iterator

from kmeta.core.epochs import EpochCache
from kmeta.core.replica_log import Observation, ReplicaLog, SnapshotState
from kmeta.findings import Finding
from kmeta.ops.replay import snapshot_findings
from kmeta.ops.replica import (
    SNAPSHOT_STATES,
    LogStats,
    SnapshotFindings,
    build_model,
    missing_log_finding,
    past_end,
    small_file,
)
from kmeta.storage.discover import PartitionDir
from kmeta.storage.progress import QUIET, Progress

# Notes of ``from_observed`` a verifier has nothing to say about: the log start offset
# is the first segment's base offset here, and a missing checkpoint or a snapshot that
# ends past the log start are normal.
_NOTHING_TO_SAY = {"LBO_BEFORE_FIRST_SEGMENT", "LBO_AFTER_LEO", "EPOCH_CHECKPOINT_MISSING",
                   "NO_SNAPSHOT_AT_LBO"}
# Notes about the log end offset mean nothing when there is no segment at all (V020).
_NEED_SEGMENTS = {"EPOCH_CHECKPOINT_BEYOND_LEO", "EPOCH_CHECKPOINT_DISAGREES",
                  "NO_SNAPSHOT_FOR_LBO", "SNAPSHOT_AHEAD_OF_LOG", "SNAPSHOT_BEFORE_LBO"}


def verify_model(part: PartitionDir, stats: LogStats, progress: Progress = QUIET
                 ) -> Iterator[Finding]:
    """Leader epochs and snapshots against the replica model: the epoch cache,
    quorum-state and the snapshots' places in the log (KIP-595, KIP-630), plus a
    LeaderChange per epoch."""
    model, notes, findings = build_model(part, stats)
    stats.model = model
    yield from findings
    no_segments = any(n.code == "NO_SEGMENTS" for n in notes)
    snap_files = {(f.kind.base_offset, f.kind.epoch, SNAPSHOT_STATES[f.kind.suffix]): f
                  for f in part.files if f.kind.kind == "kraft-snapshot"}

    def snap_path(note: Observation) -> str:
        sid = note.details["snapshot"]
        state = model.snapshots.get(sid, SnapshotState.LIVE)
        return str(snap_files[(sid.offset, sid.epoch, state)].path)

    def path_of(kind: str) -> str:
        return next((str(f.path) for f in part.files if f.kind.kind == kind), str(part.path))

    for note in notes:
        code = note.code
        if code in _NOTHING_TO_SAY or (no_segments and code in _NEED_SEGMENTS):
            continue
        if code == "NO_SEGMENTS":
            missing = missing_log_finding(part)
            if missing is not None:
                yield missing
        elif code == "EPOCH_CHECKPOINT_BEYOND_LEO":
            yield _beyond_end(part, model, note, path_of("leader-epoch-checkpoint"))
        elif code.startswith("EPOCH_CHECKPOINT_"):
            yield Finding("V006", f"leader-epoch-checkpoint: {note.message}",
                          path_of("leader-epoch-checkpoint"),
                          details={k: [[e.epoch, e.start_offset] for e in v]
                                   for k, v in note.details.items()})
        elif code == "QUORUM_EPOCH_BEHIND_LOG":
            yield Finding("V007", note.message, path_of("quorum-state"))
        elif code == "SNAPSHOT_PARTIAL":
            yield Finding("V024", "a snapshot that was never finished (.checkpoint.part): "
                          "Kafka deletes it on start", snap_path(note))
        elif code == "SNAPSHOT_MARKED_DELETED":
            yield Finding("V025", "a snapshot marked for deletion (.checkpoint.deleted)",
                          snap_path(note))
        elif code == "SNAPSHOT_BEFORE_LBO":
            yield Finding("V025", f"snapshot ends below the log start offset "
                          f"{model.log_start_offset}: Kafka deletes it on start",
                          snap_path(note))
        elif code == "NO_SNAPSHOT_FOR_LBO":
            lbo = model.log_start_offset
            yield Finding("V026", f"the log starts at offset {lbo} but no snapshot covers "
                          f"offsets below it: the state before {lbo} is lost",
                          str(part.path), offset=lbo)
        elif code != "SNAPSHOT_AHEAD_OF_LOG":  # V022 and V023 below say which and why
            raise AssertionError(f"unmapped replica-log note {code}")
    yield from _snapshots_against_model(part, model, no_segments, snap_files,
                                        stats.snapshot_findings, progress)
    for epoch, (start, _end) in sorted(stats.epochs.items()):
        # The epoch the log starts in may have begun below the log start offset, its
        # LeaderChange deleted with its segment once a snapshot covered it.
        opened_earlier = start == model.log_start_offset > 0
        if epoch not in stats.leader_changes and epoch >= 0 and not opened_earlier:
            yield Finding("V008", f"leader epoch {epoch} (from offset {start}) holds no "
                          "LeaderChange control record", str(part.path), offset=start)


def _beyond_end(part: PartitionDir, model: ReplicaLog, note: Observation, where: str
                ) -> Finding:
    """V011 when the checkpoint's entries past the log end begin exactly at it (a leader
    that has not written yet: LogLoader drops the entry on load, nothing is lost); V012
    when one begins past it: the node held offsets its log no longer has
    (:mod:`kmeta.ops.replica.epoch_tail` says why)."""
    _, checkpoint, _ = small_file(part, "leader-epoch-checkpoint")
    _, quorum, _ = small_file(part, "quorum-state")
    live = [s.offset for s, st in model.snapshots.items() if st is SnapshotState.LIVE]
    tail = past_end(((e.epoch, e.start_offset) for e in checkpoint.entries),
                    model.log_end_offset,
                    quorum_epoch=None if quorum is None else quorum.leader_epoch,
                    snapshot_end=max(live) if live else None)
    if not tail.lost:
        return Finding("V011", f"leader-epoch-checkpoint: {note.message}", where,
                       offset=note.offset)
    gap = tail.missing
    return Finding("V012", f"{tail.describe()} (a stale copy or a cut tail): Kafka drops "
                   "the entries on load and the node comes back without them", where,
                   offset=gap.start,
                   details={"missing_from": gap.start, "missing_to": gap.stop - 1,
                            "missing_offsets": len(gap), "epochs": list(tail.epochs),
                            "log_end_offset": tail.log_end_offset,
                            "quorum_epoch": tail.quorum_epoch})


def _snapshots_against_model(part: PartitionDir, model: ReplicaLog, no_segments: bool,
                             snap_files: dict, seen: SnapshotFindings,
                             progress: Progress) -> Iterator[Finding]:
    """Each live snapshot's own batches (V021), its end against the log end (V022) and
    its epoch against the epoch the log, or else the checkpoint, gives its last offset
    (V023)."""
    _, checkpoint, _ = small_file(part, "leader-epoch-checkpoint")
    raw_cache = EpochCache() if checkpoint is None else \
        EpochCache.from_entries((e.epoch, e.start_offset) for e in checkpoint.entries
                                if e.epoch >= 0 and e.start_offset >= 0)
    leo = model.log_end_offset
    for (end, epoch, state), f in sorted(snap_files.items(), key=lambda i: i[0][:2]):
        if state is not SnapshotState.LIVE:
            continue
        path = str(f.path)
        yield from snapshot_findings(f, seen, progress)
        if not no_segments and end > leo:
            yield Finding("V022", f"snapshot ends at offset {end}, past the log end offset "
                          f"{leo}", path, offset=end)
        if end > 0:
            known = model.epoch_at(end - 1)
            if known is None and not (model.log_start_offset <= end - 1 < leo):
                known = raw_cache.epoch_for_offset(end - 1)
            if known is not None and known != epoch:
                yield Finding("V023", f"snapshot epoch {epoch}, but offset {end - 1} is in "
                              f"leader epoch {known}", path, offset=end - 1,
                              details={"known_epoch": known})
