"""What a repaired copy of a KRaft metadata partition directory holds, decided without
writing anything (:func:`plan_repair`; ``apply.py`` writes it).

Kafka facts behind the rules (``apache/kafka``, read for behaviour only):

* ``LogSegment.recover`` reads a segment's batches in order and checks each on its own
  (``ensureValid``: size at least the batch overhead, CRC; the offset fits the index).
  At the first batch that fails, the segment is truncated at the end of the last good
  one; ``FileLogInputStream`` ends the read at a batch whose length runs past the end of
  the file (a torn write) and rejects a length below the least message size (a zero or
  garbage tail).  Records are never decoded.
* ``LogLoader.recoverLog``: once a segment was truncated, every later segment is deleted.
  ``UnifiedLog.truncateTo``: segments whose base offset is above the target go, the one
  holding it is cut (and may become empty); KRaft only truncates at batch boundaries.
* ``LogLoader.loadSegmentFiles`` / ``LogSegment.sanityCheck``: a segment whose offset index
  is missing is recovered, which rebuilds its offset *and* time index; a missing time
  index alone is only recreated empty, so indexes are left out together.  Index files
  without their segment are deleted.
* ``LeaderEpochFileCache``: an entry for each batch whose epoch is higher than the latest
  one; truncated from the start at the log start offset (the base offset of the first
  segment, for the metadata log).
* ``KafkaMetadataLog.recoverSnapshots`` deletes ``.checkpoint.part``, ``.checkpoint.deleted``
  and snapshots that end below the log start offset on start; ``truncateToLatestSnapshot``
  throws the whole log away when the latest snapshot is ahead of it.

Where the repaired log ends.  Batches are read in offset order; the copy ends at the
last batch before the first of these (the table is :data:`CUT_CODES`):

* what Kafka's recovery rejects: a bad CRC (F001, F009 for a legacy message), a
  torn tail (S001), a zero-filled tail (S002), a damaged range (S003, which Kafka meets
  as a bad batch at its first byte and truncates there), garbage (S004);
* what Kafka's recovery would keep but a KRaft log cannot be, so that no replica replays
  it (a deliberate difference): offsets that go back or overlap (S005, V003), a gap in
  the offsets within or between segments (V003, V009: records are missing), a leader
  epoch that decreases (V005), a legacy (magic 0/1) message (V010).

Record *contents* are not judged (Kafka's recovery does not decode them either): a batch
with an intact CRC whose records cannot be decoded (F003, F005, F006, F011 …) is kept;
:func:`apply_repair` verifies its output and reports what is left, and ``truncate_to``
can cut there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from kmeta.core.epochs import EpochCache
from kmeta.core.image import PROBLEM_CODES
from kmeta.core.log_rules import Layout, LogState, judge
from kmeta.core.replica_log import ReplicaLog, Segment, SnapshotId, SnapshotState
from kmeta.errors import UnreadableInput, UsageError
from kmeta.findings import Finding, Severity
from kmeta.formats.filenames import segment_file_name
from kmeta.formats.payload import decode_control, decode_metadata
from kmeta.formats.runs import Expandable, Run
from kmeta.formats.textfiles import EpochEntry as CheckpointEntry
from kmeta.formats.textfiles import LeaderEpochCheckpoint, build_leader_epoch_checkpoint
from kmeta.ops.replay import no_metadata_log, snapshot_image
from kmeta.ops.verify import verify_indexes
from kmeta.storage import tree
from kmeta.storage.discover import QUARANTINE, LogFile, PartitionDir, discover
from kmeta.storage.files import load_checked
from kmeta.storage.live import again_while_live
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.regular import entry_problem
from kmeta.storage.segments import RECOVERY_CUTS, batch_records, mapped, scan_batches

#: Problems at which the repaired log ends, and why (see the module docstring).
CUT_CODES: dict[str, str] = {
    **RECOVERY_CUTS,
    "S005": "Kafka's recovery would keep it, but a KRaft log never repeats an offset",
    "V003": "Kafka's recovery would keep it, but the offsets of a KRaft log are "
            "contiguous: records are missing or repeated",
    "V005": "Kafka's recovery would keep it, but the leader epochs of a KRaft log never "
            "go back",
    "V009": "Kafka's recovery would keep it, but records between the segments are missing",
    "V010": "Kafka's recovery would keep it, but KRaft cannot read a legacy message",
    "S011": "Kafka's recovery would keep it, but its offsets past the largest Kafka has "
            "wrap to negative numbers there",
}

_INDEX_KINDS = ("offset-index", "time-index", "txn-index")


class Action(StrEnum):
    """What repair does with one file of the input."""

    COPIED = "copied"  # byte for byte
    CUT = "cut"  # a prefix of it, byte for byte
    DROPPED = "dropped"  # a segment after the cut: not in the output
    QUARANTINED = "quarantined"  # copied under quarantine/
    REBUILT = "rebuilt"  # written anew from the kept batches
    OMITTED = "omitted"  # not in the output: Kafka rebuilds or deletes it


@dataclass(frozen=True)
class FileChange:
    """What happens to one file (or directory) of the input, and why."""

    name: str
    kind: str
    action: Action
    reason: str
    bytes_in: int | None = None
    bytes_out: int = 0
    #: segments: the first and last offsets kept; snapshots: the end offset (both)
    first_offset: int | None = None
    last_offset: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def target(self) -> str | None:
        """Where it goes, relative to the output directory (None: nowhere)."""
        if self.action is Action.QUARANTINED:
            return f"{QUARANTINE}/{self.name}"
        if self.action in (Action.COPIED, Action.CUT, Action.REBUILT):
            return self.name
        return None


@dataclass(frozen=True)
class Cut:
    """Where the repaired log ends: bytes of ``file`` before ``position`` are kept."""

    file: str
    position: int
    #: the first offset removed, when the bytes there name one
    offset: int | None
    #: "damage", "truncate_to" or "snapshot" (follow_snapshot)
    cause: str
    #: the finding code of the damage (:data:`CUT_CODES`); None for truncate_to
    code: str | None
    #: what is there
    message: str
    #: why the log ends there
    reason: str


@dataclass
class Removed:
    """What the repaired log no longer holds."""

    batches: int = 0
    records: int = 0
    #: bytes of segments left out (cut tails and dropped segments)
    bytes: int = 0
    #: the offsets removed: from the first one (the new log end offset, or the old log
    #: start when a snapshot is followed) to the last offset of the last intact batch
    #: removed (None when unknown)
    first_offset: int | None = None
    last_offset: int | None = None
    #: "data", "control", "legacy", "damaged" (bad CRC: records not trusted) and "torn"
    batches_by_type: dict[str, int] = field(default_factory=dict)
    #: record type (Kafka's name, e.g. PARTITION_CHANGE_RECORD, LEADER_CHANGE) -> count
    records_by_type: dict[str, int] = field(default_factory=dict)
    #: every damage met in what was removed (what made the log end is ``plan.cut``)
    damage: list[Finding] = field(default_factory=list)

    def add_torn(self) -> None:
        """A batch cut short by a torn write (S001): its header names it, its records are
        lost."""
        self.batches += 1
        self.batches_by_type["torn"] = self.batches_by_type.get("torn", 0) + 1

    def add_batch(self, batch: Any) -> None:
        self.batches += 1
        if batch.crc_valid:
            kind = "legacy" if batch.magic != 2 else "control" if batch.is_control \
                else "data"
            self.first_offset = batch.base_offset if self.first_offset is None \
                else min(self.first_offset, batch.base_offset)
            self.last_offset = batch.last_offset if self.last_offset is None \
                else max(self.last_offset, batch.last_offset)
            records, _ = batch_records(batch)
            self.records += len(records)
            for r in records:
                p = decode_control(r[2], r[3]) if batch.is_control else decode_metadata(r[3])
                self.records_by_type[p.type] = self.records_by_type.get(p.type, 0) + 1
            if not records and batch.records_count:
                self.records += batch.records_count
                self.records_by_type["(undecodable)"] = \
                    self.records_by_type.get("(undecodable)", 0) + batch.records_count
        else:
            kind = "damaged"
        self.batches_by_type[kind] = self.batches_by_type.get(kind, 0) + 1

    def add_run(self, run: Run) -> None:
        """:meth:`add_batch` for each batch of a run of data batches (each holds the
        one record of the run's ref, and a valid CRC)."""
        n = run[1]
        self.batches += n
        self.batches_by_type["data"] = self.batches_by_type.get("data", 0) + n
        first = run.first_base
        self.first_offset = first if self.first_offset is None else min(self.first_offset,
                                                                         first)
        self.last_offset = run.last_offset if self.last_offset is None \
            else max(self.last_offset, run.last_offset)
        kind = decode_metadata(run[0].lone[3]).type
        self.records += n
        self.records_by_type[kind] = self.records_by_type.get(kind, 0) + n


@dataclass(frozen=True)
class CommittedLoss:
    """Records below an intact snapshot that the repaired log no longer holds.

    Kafka writes a snapshot only at or below the high watermark, so every offset below
    an intact snapshot was committed: a replica that loses them must fetch them again
    from the leader (or, with --follow-snapshot, start at the snapshot and keep the
    state it holds)."""

    records: int
    first_offset: int
    last_offset: int
    snapshot: str
    #: whether --follow-snapshot is a way out (not with a requested truncation)
    can_follow: bool = True

    def sentence(self) -> str:
        end = self.last_offset + 1
        way_out = f"; --follow-snapshot keeps the state up to {end} instead (the log " \
            "restarts at the snapshot)" if self.can_follow else ""
        return (f"the repaired log lost {self.records:,} committed record(s) (offsets "
                f"{self.first_offset}..{self.last_offset}: the intact snapshot "
                f"{self.snapshot} shows they were committed). A broker started on it must "
                f"fetch them again from the leader{way_out}")


def committed_loss(snap_changes: list[FileChange], new_log_end: int,
                   can_follow: bool = True) -> CommittedLoss | None:
    """What the cut costs in committed records: the offsets from the new log end up to
    the latest intact snapshot past it (the metadata log is never compacted, so there
    is one record per offset)."""
    past = [c for c in snap_changes if c.details.get("live") and not c.details.get("findings")
            and c.first_offset is not None and c.first_offset > new_log_end]
    if not past:
        return None
    latest = max(past, key=lambda c: c.first_offset)
    return CommittedLoss(latest.first_offset - new_log_end, new_log_end,
                         latest.first_offset - 1, Path(latest.name).stem, can_follow)


@dataclass
class RepairPlan:
    """Everything a repair would do, computed without writing (see :func:`plan_repair`)."""

    part_dir: Path
    truncate_to: int | None
    log_start_offset: int
    #: one past the last offset of the last intact batch anywhere in the input
    input_log_end_offset: int | None
    new_log_end_offset: int
    #: where the log ends and why; None when every batch is kept
    cut: Cut | None
    changes: list[FileChange]
    removed: Removed
    #: the leader-epoch cache rebuilt from the kept batches (what leader-epoch-checkpoint
    #: will hold)
    epoch_cache: EpochCache
    #: the replica as repaired: kept segments, rebuilt epoch cache, kept snapshots
    model: ReplicaLog
    #: what people should know: problems repair leaves, choices it made
    notes: list[str] = field(default_factory=list)
    #: committed records the repaired log no longer holds (see :func:`committed_loss`)
    committed_lost: CommittedLoss | None = None
    #: (size, mtime) of every entry of the input, to refuse writing if it changed since
    fingerprint: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False)

    @property
    def invalid_snapshots(self) -> list[FileChange]:
        """The KRaft snapshot files moved to quarantine (any state), with the reason."""
        return [c for c in self.changes if c.kind == "kraft-snapshot"
                and c.action is Action.QUARANTINED]

    @property
    def changed(self) -> bool:
        """Whether the copy differs from the input in anything but byte copies."""
        return any(c.action is not Action.COPIED and not
                   (c.action is Action.REBUILT and c.details.get("unchanged"))
                   for c in self.changes)

    def by_action(self, action: Action) -> list[FileChange]:
        return [c for c in self.changes if c.action is action]


# ----------------------------------------------------------------------------- planning


def metadata_partition(part_dir: str | os.PathLike[str], progress: Progress = QUIET
                       ) -> PartitionDir:
    """The metadata partition directory ``part_dir``; UsageError or UnreadableInput when
    it is not one repair can read."""
    path = Path(part_dir)
    if not path.exists():  # a typo is input that cannot be read, as for every command
        raise UnreadableInput("no such file or directory", context=str(path))
    found = discover([path], progress=progress)  # no Kafka file there: exit 3, as for all
    if not path.is_dir():  # no partition dir to read here: exit 3
        raise UnreadableInput("not a directory: repair reads a metadata partition "
                              "directory", context=str(path),
                              hint="give the partition directory, e.g. __cluster_metadata-0")
    if found.data_dirs or found.files or len(found.partitions) != 1:
        metadata = [p for p in found.all_partitions() if p.is_metadata]
        if not metadata:  # what a metadata-only command meets: no metadata log at all
            raise no_metadata_log(found)
        raise UsageError("not a partition directory", context=str(path),
                         hint=f"give the partition directory ({metadata[0].path}), not "
                         "the data dir above it")
    part = found.partitions[0]
    if not part.is_metadata:
        raise no_metadata_log(found)
    if not part.segments:
        raise UnreadableInput("no log segment: there is no log to repair", context=str(path),
                              hint="copy the whole partition directory from the broker")
    return part


class _LogReader:
    """Reads the segments in order and finds where the repaired log ends."""

    def __init__(self, truncate_to: int | None, progress: Progress = QUIET) -> None:
        self.truncate_to = truncate_to
        self.progress = progress
        #: the KRaft log rules' view of the batches kept
        self.state = LogState()
        self.cut: Cut | None = None
        self.removed = Removed()
        self.input_end: int | None = None
        #: the segments kept, with their runs
        self.layout = Layout()

    @property
    def expected(self) -> int | None:
        """The offset the next batch must start at."""
        return self.state.expected

    def _cut(self, seg: LogFile, position: int, offset: int | None, code: str | None,
             message: str) -> None:
        if code is None:
            self.cut = Cut(seg.path.name, position, offset, "truncate_to", None, message,
                           "requested: KRaft truncates at batch boundaries")
        else:
            self.cut = Cut(seg.path.name, position, offset, "damage", code, message,
                           CUT_CODES[code])

    def _judge(self, batch: Any, valid: int) -> tuple[LogState, tuple[str, str] | None]:
        """The rules' state after a batch Kafka's recovery accepts, and why the batch
        still ends the repaired log (the first KRaft log rule it breaks), or None."""
        if batch.position != valid:  # only after a finding, which cut already
            return self.state, ("S003", f"bytes {valid}..{batch.position - 1} hold no batch")
        epoch = batch.leader_epoch if batch.magic == 2 else -1
        state, broken = judge(self.state, batch.base_offset, batch.last_offset, epoch,
                              batch.magic, valid == 0)
        return state, (broken[0].code, broken[0].message) if broken else None

    def _take_run(self, run: Run, valid: int) -> int | None:
        """Take the batches of a run at once, as ``read`` would one by one; the bytes kept
        after them, or None when they must be read one by one.  Once the log is cut they
        are all removed (data batches only: a control record is tallied by type); before,
        each must be kept with no rule broken: the run right after the bytes kept, at the
        offset and in the epoch the rules expect, and below the offset to truncate to.
        (The run's first batch, its ref, was judged so: the batches after it differ only
        in offset, timestamps and CRC.)"""
        ref = run[0]
        epoch = ref.leader_epoch
        last = run.last_offset
        if self.cut is not None:
            if ref.is_control:
                return None
            self.removed.add_run(run)
        elif valid != run.first_position or self.state != LogState(run.first_base, epoch) \
                or (self.truncate_to is not None and last >= self.truncate_to):
            return None
        self.input_end = last + 1 if self.input_end is None else max(self.input_end, last + 1)
        if self.cut is not None:
            return valid
        self.layout.batch(run.first_base, last, epoch)
        self.state = LogState(last + 1, epoch)
        return run.first_position + run[1] * run[2]

    def read(self, seg: LogFile) -> tuple[int, int, list[list[int]], bool]:
        """Read one segment: its size, the bytes kept, the runs of batches kept, and
        whether the segment goes altogether."""
        path = str(seg.path)
        self.layout.segment(seg.kind.base_offset)
        runs = self.layout.segments[-1][1]
        valid = 0
        cut_before = self.cut is not None
        with mapped(seg.path, self.progress) as buf:
            size = len(buf)
            stream = Expandable(scan_batches(buf, path, memo=True, runs=True,
                                             progress=self.progress))
            for item in stream:
                if type(item) is Run:
                    kept = self._take_run(item, valid)
                    if kept is None:
                        stream.expand(item)
                    else:
                        valid = kept
                    continue
                if type(item) is Finding:
                    if item.code == "S001" and item.offset is not None:
                        self.removed.add_torn()
                    if item.code in CUT_CODES:
                        if self.cut is None:
                            self._cut(seg, valid, item.offset, item.code, item.message)
                        else:
                            self.removed.damage.append(item)
                    continue
                batch = item
                if batch.crc_valid:
                    end = batch.last_offset + 1
                    self.input_end = end if self.input_end is None else max(self.input_end,
                                                                            end)
                state = self.state
                if self.cut is None:
                    state, why = self._judge(batch, valid)
                    if why is not None:
                        self._cut(seg, valid, batch.base_offset, *why)
                t = self.truncate_to
                if self.cut is None and t is not None and batch.last_offset >= t:
                    if batch.base_offset < t:
                        raise UsageError(
                            f"cannot truncate to {t}: it is inside the batch of offsets "
                            f"{batch.base_offset}..{batch.last_offset} ({seg.path.name}, "
                            f"byte {batch.position})",
                            hint=f"KRaft truncates at batch boundaries: use {batch.base_offset}"
                                 f" or {batch.last_offset + 1}")
                    self._cut(seg, valid, t, None, f"truncated to {t}: the log ends before "
                              f"offset {t}")
                if self.cut is not None:
                    self.removed.add_batch(batch)
                    continue
                valid = batch.position + batch.size
                self.layout.batch(batch.base_offset, batch.last_offset, batch.leader_epoch)
                self.state = state
        kept = 0 if cut_before else size if self.cut is None else valid
        base = seg.kind.base_offset
        # A segment cut to nothing stays, empty, as Kafka leaves it (its name is then the
        # log end offset) -- unless its name is not where the log before it ends (a gap):
        # then it goes too, or the log end would jump over the gap.
        gap = not cut_before and self.cut is not None and kept == 0 \
            and len(self.layout.segments) > 1 and base != self.expected
        if cut_before or gap:
            self.layout.drop_segment()
        self.removed.bytes += size - kept
        return size, kept, runs, cut_before or gap


def _read_log(segments: list[LogFile], reader: _LogReader, dropped_why: str
              ) -> tuple[list[FileChange], set[int]]:
    """Read every segment with ``reader``: a change for each, and the base offsets of the
    segments cut or dropped."""
    changes: list[FileChange] = []
    touched: set[int] = set()
    for seg in segments:
        was_cut = reader.cut is not None
        size, kept, runs, dropped = reader.read(seg)
        base = seg.kind.base_offset
        name = seg.path.name
        first, last = (runs[0][0], runs[-1][1]) if runs else (None, None)
        if dropped:
            touched.add(base)
            why = dropped_why if was_cut else \
                f"its first batch is not where the log before it ends ({reader.expected})"
            changes.append(FileChange(name, "segment", Action.DROPPED, why, size, 0))
        elif kept < size:
            touched.add(base)
            cut = reader.cut
            assert cut is not None
            what = cut.message if cut.code is None else f"{cut.code} {cut.message}"
            changes.append(FileChange(
                name, "segment", Action.CUT, f"cut at byte {kept}: {what}", size, kept,
                first, last, details={"position": kept, "removed_bytes": size - kept,
                                      "code": cut.code, "cause": cut.cause}))
        else:
            changes.append(FileChange(name, "segment", Action.COPIED, "intact", size, size,
                                      first, last))
    return changes, touched


def _snapshot_ahead(snap_changes: list[FileChange], log: ReplicaLog) -> SnapshotId | None:
    """The latest intact live snapshot, if it is ahead of ``log`` as
    ``KafkaMetadataLog.truncateToLatestSnapshot`` judges (a higher epoch than the log's
    latest, or the same epoch and an end past the log end offset)."""
    intact = [SnapshotId(c.first_offset, c.details["epoch"]) for c in snap_changes
              if c.details.get("live") and not c.details.get("findings")]
    if not intact:
        return None
    latest = max(intact)
    epoch = log.epoch_cache.latest_epoch if log.epoch_cache.latest_epoch is not None else 0
    if latest.epoch > epoch or (latest.epoch == epoch and latest.offset > log.log_end_offset):
        return latest
    return None


def plan_repair(part_dir: str | os.PathLike[str], truncate_to: int | None = None, *,
                follow_snapshot: bool = False, progress: Progress = QUIET) -> RepairPlan:
    """Decide what a repaired copy of the metadata partition ``part_dir`` holds.

    The log ends at the first damage (:data:`CUT_CODES`) or, with ``truncate_to``, before
    that offset (a batch boundary, not below the log start offset, not above the end of
    the intact log).  Snapshots that end past the new log end are quarantined; with
    ``follow_snapshot``, when the latest intact snapshot is ahead of the repaired log,
    the plan does what Kafka does on start instead (``truncateToLatestSnapshot``): every
    segment goes, the log starts empty at the snapshot's end offset and older snapshots
    are quarantined.  Raises UsageError for a bad ``truncate_to`` or a path that is not a
    metadata partition directory; never writes.  ``progress`` hears of the reading.  On a
    running broker's dir, a segment or snapshot Kafka deleted while it was read makes the
    plan start again from a fresh listing
    (:func:`kmeta.storage.live.again_while_live`).
    """
    return again_while_live(lambda: _plan(part_dir, truncate_to, follow_snapshot,
                                          progress), part_dir)


def _plan(part_dir: str | os.PathLike[str], truncate_to: int | None,
          follow_snapshot: bool, progress: Progress) -> RepairPlan:
    if follow_snapshot and truncate_to is not None:
        raise UsageError("truncating and following a snapshot contradict each other",
                         hint="truncating keeps the log below the snapshots; following a "
                         "snapshot drops the whole log")
    part = metadata_partition(part_dir, progress)
    path = part.path
    fingerprint = tree.fingerprint(path)
    segments = sorted(part.segments, key=lambda f: f.kind.base_offset)
    lbo = segments[0].kind.base_offset
    if truncate_to is not None and truncate_to < lbo:
        raise UsageError(f"cannot truncate to {truncate_to}: below the log start offset {lbo}",
                         hint="Kafka cannot truncate below the log start offset")
    reader = _LogReader(truncate_to, progress)
    changes, touched = _read_log(segments, reader, "a segment after the cut (Kafka deletes "
                                 "the segments after a truncated one)")
    kept_segments = reader.layout.model_segments()
    bare, _ = ReplicaLog.from_observed(kept_segments, epoch_entries=None)
    leo = bare.log_end_offset
    notes: list[str] = []
    if truncate_to is not None and reader.cut is None and truncate_to > leo:
        raise UsageError(f"cannot truncate to {truncate_to}: beyond the log end offset {leo}",
                         hint="nothing to truncate there")
    if truncate_to is not None and reader.cut is not None and reader.cut.cause == "damage":
        notes.append(f"truncating to {truncate_to} was not needed: the log already ends "
                     f"at offset {leo}, at the damage")

    damage_seen: dict[str, list[str]] = {}
    snap_changes, kept_snaps = _snapshots(part, bare, reader.input_end, truncate_to,
                                          damage_seen)
    followed = _snapshot_ahead(snap_changes, bare) if follow_snapshot else None
    if followed is not None:
        # KafkaMetadataLog.truncateToLatestSnapshot: truncateFullyAndStartAt(snapshot end).
        why = f"the latest snapshot {followed.file_stem} is ahead of the repaired log " \
            f"(end {leo}): as Kafka does on start, the whole log goes and it starts at " \
            f"{followed.offset}"
        first = segments[0]
        reader = _LogReader(None)
        reader.cut = Cut(first.path.name, 0, first.kind.base_offset, "snapshot", None, why,
                         "follow_snapshot: KafkaMetadataLog.truncateToLatestSnapshot")
        changes, touched = _read_log(segments, reader, why)
        kept_segments = [Segment(followed.offset)]
        bare, _ = ReplicaLog.from_observed(kept_segments, epoch_entries=None)
        leo = bare.log_end_offset
        name = segment_file_name(followed.offset)
        changes = [c for c in changes if c.name != name]  # an old one of that name goes
        changes.append(FileChange(name, "segment", Action.REBUILT, f"empty: {why}", None, 0,
                                  details={"empty": True}))
        snap_changes, kept_snaps = _snapshots(part, bare, None, None, damage_seen)
        notes.append(why)
    removed = reader.removed
    if removed.batches:  # everything from the new log end (or the log start) went
        removed.first_offset = leo if removed.first_offset is None else \
            min(leo, removed.first_offset)
    changes += snap_changes
    quorum_epoch = _quorum_epoch(part)
    model, model_notes = ReplicaLog.from_observed(
        kept_segments, epoch_entries=None,
        snapshots=[(s, SnapshotState.LIVE) for s in kept_snaps],
        quorum_leader_epoch=quorum_epoch)
    # (After following a snapshot, the log is empty and Kafka's check would find the
    # snapshot ahead again: truncating an empty log to it changes nothing.)
    notes += [n.message for n in model_notes if n.code in (
        "NO_SNAPSHOT_FOR_LBO", "QUORUM_EPOCH_BEHIND_LOG")
        or (n.code == "SNAPSHOT_AHEAD_OF_LOG" and followed is None)]
    truncated = [c.name for c in snap_changes if c.details.get("truncated")]
    if truncated:
        notes.append(f"truncating to {truncate_to} goes below the end of "
                     f"{', '.join(truncated)}: quarantined, since a snapshot never ends past "
                     "the log end")

    lost = None if followed is not None else \
        committed_loss(snap_changes, leo, can_follow=truncate_to is None)
    if lost is not None:
        notes.insert(0, lost.sentence())
    changes += _small_files(part, model.epoch_cache)
    changes += _indexes(part, touched)
    changes += _others(part, model.log_start_offset, leo)
    changes.sort(key=lambda c: c.name)
    return RepairPlan(
        part_dir=path, truncate_to=truncate_to, log_start_offset=model.log_start_offset,
        input_log_end_offset=reader.input_end, new_log_end_offset=leo, cut=reader.cut,
        changes=changes, removed=reader.removed, epoch_cache=model.epoch_cache, model=model,
        notes=notes, committed_lost=lost, fingerprint=fingerprint)


def _quorum_epoch(part: PartitionDir) -> int | None:
    f = next((f for f in part.files if f.kind.kind == "quorum-state"), None)
    if f is None:
        return None
    content, problem = load_checked(f)
    return None if problem is not None else content.leader_epoch


def _snapshots(part: PartitionDir, log: ReplicaLog, input_end: int | None,
               truncate_to: int | None, damage_seen: dict[str, list[str]]
               ) -> tuple[list[FileChange], list[SnapshotId]]:
    """Each KRaft snapshot file: kept, or quarantined with every reason that applies.
    ``damage_seen`` remembers what reading each file found (one read per file)."""
    changes = []
    kept = []
    lbo, leo = log.log_start_offset, log.log_end_offset
    for f in part.files:
        if f.kind.kind != "kraft-snapshot":
            continue
        name = f.path.name
        size = _size_now(f.path)
        if size is None:
            continue  # deleted by a running broker since it was listed
        end, epoch = f.kind.base_offset, f.kind.epoch
        if not f.kind.live:
            what = "unfinished (.checkpoint.part)" if f.kind.suffix == "part" else \
                "marked for deletion (.checkpoint.deleted)"
            changes.append(FileChange(name, "kraft-snapshot", Action.QUARANTINED,
                                      f"a snapshot {what}: Kafka deletes it on start", size,
                                      size, end, end))
            continue
        reasons = []
        details: dict[str, Any] = {"epoch": epoch, "live": True}
        if end > leo:
            reasons.append(f"ends at offset {end}, past the new log end offset {leo} "
                           "(Kafka would throw the whole log away for it)")
            if truncate_to is not None and input_end is not None and end <= input_end:
                details["truncated"] = True
        if end < lbo:
            reasons.append(f"ends at offset {end}, below the log start offset {lbo}: "
                           "Kafka deletes it on start")
        if lbo < end <= leo:
            known = log.epoch_at(end - 1)
            if known is not None and known != epoch:
                reasons.append(f"epoch {epoch}, but offset {end - 1} is in leader epoch "
                               f"{known} in the log")
        damage = damage_seen.get(name)
        if damage is None:
            found = [x for x in snapshot_image(f)[1]
                     if x.severity is Severity.ERROR and x.code not in PROBLEM_CODES]
            damage = damage_seen[name] = [f"{x.code} {x.message}" for x in found]
        if damage:
            reasons.append(f"damaged: {damage[0]}"
                           + (f" (and {len(damage) - 1} more)" if len(damage) > 1 else ""))
            details["findings"] = [x.split(" ", 1)[0] for x in damage]
        if reasons:
            changes.append(FileChange(name, "kraft-snapshot", Action.QUARANTINED,
                                      "; ".join(reasons), size, size, end, end, details))
        else:
            kept.append(SnapshotId(end, epoch))
            changes.append(FileChange(name, "kraft-snapshot", Action.COPIED,
                                      "consistent with the repaired log", size, size, end,
                                      end, details))
    return changes, kept


def _small_files(part: PartitionDir, cache: EpochCache) -> list[FileChange]:
    changes = []
    entries = [f"{e.epoch} {e.start_offset}" for e in cache.entries]
    old = part.live_file("leader-epoch-checkpoint")
    if old is None:
        reason, unchanged, size = "written from the kept batches (the input had none)", \
            False, None
    else:
        size = _size_now(old.path)
        content, problem = load_checked(old)
        was = None if problem is not None else \
            [f"{e.epoch} {e.start_offset}" for e in content.entries]
        unchanged = was == entries
        reason = "from the kept batches, truncated from the start at the log start offset; " \
            + ("same entries as before" if unchanged else
               f"was unreadable ({problem.code} {problem.message})" if problem is not None
               else f"was: {', '.join(was) or 'empty'}")
    written = len(build_leader_epoch_checkpoint(LeaderEpochCheckpoint(checkpoint_entries(cache))))
    changes.append(FileChange("leader-epoch-checkpoint", "leader-epoch-checkpoint",
                              Action.REBUILT, reason, size, written,
                              details={"entries": [[e.epoch, e.start_offset]
                                                   for e in cache.entries],
                                       "unchanged": unchanged}))
    for f in part.files:
        if f.kind.kind in ("quorum-state", "partition-metadata") and f.kind.live:
            size = _size_now(f.path)
            _, problem = load_checked(f)
            reason = "unchanged" if problem is None else \
                f"unchanged, though damaged ({problem.code} {problem.message}): repair " \
                "does not rewrite it"
            changes.append(FileChange(f.path.name, f.kind.kind, Action.COPIED, reason, size,
                                      size))
    return changes


def checkpoint_entries(cache: EpochCache) -> tuple[CheckpointEntry, ...]:
    return tuple(CheckpointEntry(e.epoch, e.start_offset) for e in cache.entries)


def _size_now(path: Path) -> int | None:
    """A listed file's size, None when it is gone (a running broker deleted it)."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return None


def _indexes(part: PartitionDir, touched: set[int]) -> list[FileChange]:
    """Index files: kept for intact segments whose indexes agree with them; left out
    (all of a segment's together) otherwise, so that Kafka rebuilds them."""
    segments = {f.kind.base_offset for f in part.segments}
    live = [f for f in part.files if f.kind.kind in _INDEX_KINDS and f.kind.live]
    bad: dict[int, Finding] = {}
    by_path = {str(x.path): x for x in live}
    for finding in verify_indexes(part):
        f = by_path.get(finding.file or "")
        if f is not None and finding.severity is not Severity.INFO:
            bad.setdefault(f.kind.base_offset, finding)
    changes = []
    for f in live:
        base = f.kind.base_offset
        size = _size_now(f.path)
        if size is None:
            continue  # deleted by a running broker since it was listed
        name = f.path.name
        if base not in segments:
            reason = "index without its segment: Kafka deletes it on load"
        elif base in touched:
            reason = "its segment was cut or dropped: Kafka rebuilds the indexes of a " \
                "segment whose offset index is missing"
        elif base in bad:
            b = bad[base]
            reason = f"the indexes of this segment disagree with it ({b.code} in " \
                f"{Path(b.file or '').name}: {b.message}); Kafka rebuilds them when the " \
                "offset index is missing"
        else:
            changes.append(FileChange(name, f.kind.kind, Action.COPIED,
                                      "its segment is intact", size, size))
            continue
        changes.append(FileChange(name, f.kind.kind, Action.OMITTED, reason, size, 0))
    return changes


def _others(part: PartitionDir, lbo: int, leo: int) -> list[FileChange]:
    """Producer snapshots, files with a state suffix, unknown files and directories."""
    handled = {"segment", "kraft-snapshot", "leader-epoch-checkpoint", "quorum-state",
               "partition-metadata", *_INDEX_KINDS}
    known = {f.path.name: f for f in part.files}
    changes = []
    for entry in sorted(os.scandir(part.path), key=lambda e: e.name):
        name = entry.name
        f = known.get(name)
        if entry.is_dir(follow_symlinks=False):
            changes.append(FileChange(name, "directory", Action.QUARANTINED,
                                      "a directory inside a partition directory", None, 0))
            continue
        problem = entry_problem(entry)
        if problem is not None:
            # Copying a FIFO blocks, a link to /dev/zero never ends, a link loop fails:
            # Kafka loads regular files only, so the copy leaves the name out.
            changes.append(FileChange(name, "special", Action.OMITTED,
                                      f"{problem}, not a regular file: Kafka ignores it",
                                      None, 0))
            continue
        size = _size_now(Path(entry.path))
        if size is None:
            continue  # deleted by a running broker since it was listed
        if f is None:
            changes.append(FileChange(name, "unknown", Action.QUARANTINED,
                                      "not a Kafka file name (a leftover temporary file?)",
                                      size, size))
            continue
        kind = f.kind
        if kind.kind in handled and (kind.live or kind.kind == "kraft-snapshot"):
            continue
        if not kind.live:
            changes.append(FileChange(name, kind.kind, Action.QUARANTINED,
                                      f"a .{kind.suffix} file: Kafka deletes or completes it "
                                      "on load; repair leaves it aside", size, size))
        elif kind.kind == "producer-snapshot" and not lbo <= kind.base_offset <= leo:
            changes.append(FileChange(name, kind.kind, Action.QUARANTINED,
                                      f"producer-state snapshot at offset {kind.base_offset}, "
                                      f"outside the repaired log ({lbo}..{leo}): Kafka "
                                      "deletes it", size, size))
        else:
            changes.append(FileChange(name, kind.kind, Action.COPIED, "unchanged", size,
                                      size))
    return changes
