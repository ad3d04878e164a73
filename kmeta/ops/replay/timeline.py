"""A metadata log as a place in time: the image at any offset, fast, and the ways to move.

:meth:`Timeline.open` reads one replica's metadata log once (a data dir, a
``__cluster_metadata-0`` dir or a lone snapshot file): an index of every record batch
(:mod:`kmeta.ops.replay.timeline_index`), then the replay ``kmeta image`` does, keeping a copy
of the image every few thousand records (a *checkpoint*).  :meth:`Timeline.image_at`
then copies the nearest checkpoint at or below the target and replays forward from it
the data batches the index found, each read by its position, so any point costs a copy
and at most a few thousand records, wherever it is in however long a log.

A checkpoint is kept pickled: the bytes are a tenth of the objects' memory, and making
and loading them is several times faster than ``MetadataImage.copy`` (a deepcopy: 1.2 s
for an image of 50,000 partitions, against 0.2 s to pickle and 0.45 s to load it).  The
checkpoints of a replica take at most :data:`CHECKPOINT_BYTES`: past that, every other
one is dropped and they are kept twice as far apart, so a huge cluster gets fewer
checkpoints, never more memory.

The image at ``offset`` is "the state after every record below OFFSET", as
``kmeta image --at`` has it, and it is the same image: the replay starts where
``build_image`` starts for that offset (the latest usable snapshot that ends at or below
it, else an empty image at offset 0), so the two agree digest for digest even where a
snapshot disagrees with the log it was taken from.

Moving in time:

* a *step* (:meth:`Timeline.next_batch`, :meth:`Timeline.prev_batch`) is one record batch
  that holds a metadata record other than a NoOp.  Control batches (LeaderChange,
  KRaftVersion, Voters) and NoOp-only batches (the active controller's heartbeat, two a
  second) change no node of the image: a step through them would print nothing, and a
  log is mostly heartbeats.  Stepping lands on batch ends: ``next`` from ``X`` goes to
  the offset after the first data batch not wholly below ``X``; ``prev`` goes back so
  that the data batch applied last (in part, if ``X`` is inside it) is undone.
* :meth:`Timeline.offset_at` turns a time into an offset: the base offset of the first
  batch whose maxTimestamp is at or after the time.  Every batch before it has every
  record stamped before the time (a record's timestamp is at most its batch's
  maxTimestamp), so ``image_at(offset_at(T))`` is the image after every record stamped
  before T — "at 03:12" is the image just before the first batch written at 03:12:00.000
  or later.  Where timestamps go back (a new leader with a slow clock), it is still the
  first such batch in offset order.

Nothing here prints or exits: bad input is a UsageError or UnreadableInput with one line.
"""

from __future__ import annotations

import os
import pickle
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from kmeta.core.image import MetadataImage
from kmeta.errors import UnreadableInput, UsageError, VanishedInput
from kmeta.findings import Finding, Severity, each_once
from kmeta.formats.batch import Batch
from kmeta.formats.payload import decode_control, decode_metadata
from kmeta.formats.runs import Expandable, Run
from kmeta.ops.dump import DumpOptions, Event, dump_batches
from kmeta.ops.redact import SECRET_TYPES, redact
from kmeta.ops.replay.engine import Replay, replay_log, snapshot_image
from kmeta.ops.replay.image import _log_end, find_metadata
from kmeta.ops.replay.timeline_index import NOOP_TYPE, BatchIndex, BatchInfo
from kmeta.ops.replica import missing_log_finding, replica_labels
from kmeta.storage.discover import LogFile, PartitionDir
from kmeta.storage.headers import BatchesByPosition
from kmeta.storage.live import again_while_live
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.segments import (
    decoded_records,
    read_batches,
    read_records,
    scan_batches,
    unreadable,
)

__all__ = ["EMPTY_PROVENANCE", "Checkpoint", "HistoryRecord", "Provenance", "Replicas",
           "SnapshotPoint", "Timeline"]

#: Records applied between two checkpoints at least (doubled each time the checkpoints
#: outgrow CHECKPOINT_BYTES).
CHECKPOINT_RECORDS = 4000
#: Offsets between two checkpoints at most (a stretch of heartbeats is cheap to replay
#: but not free: the scan still walks its bytes).
CHECKPOINT_OFFSETS = 400_000
#: The most bytes the pickled checkpoints of one replica may take.
CHECKPOINT_BYTES = 96 << 20

class Provenance(NamedTuple):
    """Where an image comes from, as Kafka's ``MetadataProvenance``: the last offset it
    contains, that batch's leader epoch and maxTimestamp, and whether that offset ends
    its batch.  ``EMPTY`` for the empty image."""

    last_contained_offset: int
    last_contained_epoch: int
    last_contained_log_time_ms: int
    offset_batch_aligned: bool

    def to_json(self) -> dict[str, Any]:
        return self._asdict()


EMPTY_PROVENANCE = Provenance(-1, -1, -1, False)


@dataclass(frozen=True)
class SnapshotPoint:
    """A snapshot of the replica: where it ends, its name, its file, and whether it is
    usable (one with an error finding is passed over, as by ``kmeta image``)."""

    end_offset: int
    epoch: int
    name: str
    path: Path
    usable: bool


@dataclass
class Checkpoint:
    """The image at ``offset`` (before the record at that offset), pickled."""

    offset: int
    pickled: bytes
    #: the snapshot the replay that made it started from, or None (offset 0)
    snapshot: SnapshotPoint | None

    @property
    def starts_span(self) -> bool:
        """Whether a replay starts here (offset 0 or a snapshot's end): never dropped."""
        return self.offset == (0 if self.snapshot is None else self.snapshot.end_offset)

    def image(self) -> MetadataImage:
        """A new image, the caller's own."""
        image: MetadataImage = pickle.loads(self.pickled)
        return image


class HistoryRecord(NamedTuple):
    """A metadata record of the log (NoOps left out), for ``history``."""

    offset: int
    timestamp: int
    leader_epoch: int
    type_name: str
    version: int | None
    data: Any


class _Watch:
    """A replay watch (:class:`kmeta.ops.replay.ReplayWatch`) that hears nothing."""

    def batch(self, offset: int, epoch: int, timestamp: int) -> None:
        return None

    def after(self, type_name: str, data: Any, offset: int, timestamp: int) -> None:
        return None

    def before(self, type_name: str, data: Any) -> None:
        return None

    def control(self, epoch: int, payload: Any) -> None:
        return None

    def end(self, offset: int, timestamp: int) -> None:
        return None


class _Checkpointer(_Watch):
    """The replay watch of :meth:`Timeline.open`: copies the image at a batch start
    every so many records."""

    def __init__(self, timeline: Timeline, replay: Replay, snapshot: SnapshotPoint | None,
                 stop: int) -> None:
        self.timeline, self.replay, self.snapshot, self.stop = timeline, replay, snapshot, stop
        self.since = 0
        self.last = replay.start_offset

    def batch(self, offset: int, epoch: int, timestamp: int) -> None:
        if offset < self.replay.start_offset or offset >= self.stop:
            return
        # a long quiet stretch gets one too: its records change nothing, but a replay
        # from the checkpoint before it would still walk all its bytes
        if self.since >= self.timeline._every or offset - self.last >= CHECKPOINT_OFFSETS:
            self.timeline._keep(offset, self.replay.image, self.snapshot)
            self.since = 0
            self.last = offset

    def after(self, type_name: str, data: Any, offset: int, timestamp: int) -> None:
        self.since += 1


class Timeline:
    """One replica's metadata log, through time.  Make one with :meth:`open`."""

    def __init__(self, path: Path, source: PartitionDir | LogFile) -> None:
        self.path = path
        self.source = source
        #: every batch of the log (empty without a log)
        self.index: BatchIndex | None = None
        self.log_start: int | None = None
        self.log_end: int | None = None
        self._snapshots: list[SnapshotPoint] = []
        self._checkpoints: list[Checkpoint] = []
        self._offsets: list[int] = []
        self._every = CHECKPOINT_RECORDS  # records between two checkpoints
        self._kept = 0  # bytes the checkpoints take
        #: what the opening read found, each once: damaged batches, records that do not
        #: decode, image problems, a log that is gone (V020), as ``kmeta image`` reports
        self.findings: list[Finding] = []
        self._headers: dict[Path, int] = {}

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: str | os.PathLike[str], progress: Progress = QUIET) -> Timeline:
        """Read the metadata log (or the snapshot file) at ``path``: an index of its
        batches, then the replay (``progress`` hears of both).  A path that holds no
        metadata log is a UsageError; a segment that cannot be read, an UnreadableInput."""
        def opened() -> Timeline:
            source = find_metadata(path, progress)
            timeline = cls(Path(path), source)
            timeline._open(progress)
            timeline.findings = each_once(timeline.findings)
            return timeline

        return again_while_live(opened, path)

    def _open(self, progress: Progress) -> None:
        source = self.source
        if isinstance(source, LogFile):
            end = source.kind.base_offset or 0
            point = self._snapshot_point(source, True)
            image, found = snapshot_image(source, progress)
            self.findings += found
            self._snapshots = [point]
            self._keep(end, image, point)
            return
        segments = source.segments
        missing = missing_log_finding(source)  # snapshots alone: the log is gone, as image says
        if missing is not None:
            self.findings.append(missing)
        blocked = unreadable(segments)
        if blocked:
            raise (VanishedInput if blocked[0].code == "S013" else UnreadableInput)(blocked[0].message, context=blocked[0].file,
                                  hint="the timeline needs every segment of the log")
        if segments:
            progress.phase("index")
            self.index = BatchIndex.build(segments, self.findings, progress)
            self.log_end = _log_end(source, progress)
            progress.phase("replay")
            if self.log_end is not None:
                self.log_start = segments[0].kind.base_offset or 0
        starts = self._starts(source, progress)
        if not starts:
            why = "no log segment and no usable snapshot" if self.log_start is None else \
                f"the log starts at offset {self.log_start} and no usable snapshot ends " \
                "inside it"
            raise UsageError(f"{why} to build an image from", context=str(source.path))
        for k, (offset, image, snap) in enumerate(starts):
            stop = offset if self.log_end is None else \
                starts[k + 1][0] if k + 1 < len(starts) else self.log_end
            self._keep(offset, image, snap)
            if stop > offset:
                replay = Replay(image, offset)
                watch = _Checkpointer(self, replay, snap, stop)
                replay_log(source, replay, stop, self.findings, watch, progress)

    def _starts(self, part: PartitionDir, progress: Progress
                ) -> list[tuple[int, MetadataImage, SnapshotPoint | None]]:
        """Where the replays start, in order: offset 0 (when the log starts there) and
        each snapshot ``kmeta image`` would start from, as it picks them."""
        log_start, log_end = self.log_start, self.log_end
        chosen: dict[int, tuple[MetadataImage, SnapshotPoint]] = {}
        # the order build_image tries them in: latest end first, a damaged one passed over
        for snap in sorted(part.snapshots, key=lambda s: s.kind.base_offset or 0,
                           reverse=True):
            end = snap.kind.base_offset or 0
            image, found = snapshot_image(snap, progress)
            ok = not any(f.severity is Severity.ERROR for f in found)
            point = self._snapshot_point(snap, ok)
            self._snapshots.append(point)
            self.findings += found
            if ok and end not in chosen:  # of two at one offset, the one tried first
                chosen[end] = (image, point)
        self._snapshots.sort(key=lambda s: (s.end_offset, s.epoch))
        starts: list[tuple[int, MetadataImage, SnapshotPoint | None]] = []
        if log_start == 0:
            starts.append((0, MetadataImage.empty(), None))
        for end in sorted(chosen):
            # with a log, a snapshot outside it starts nothing build_image would use
            inside = log_start is not None and log_end is not None and \
                log_start <= end <= log_end and end > 0
            if log_end is None or inside:
                starts.append((end, *chosen[end]))
        return starts

    def _snapshot_point(self, f: LogFile, usable: bool) -> SnapshotPoint:
        return SnapshotPoint(f.kind.base_offset or 0, f.kind.epoch or 0, f.path.name,
                             f.path, usable)

    def _keep(self, offset: int, image: MetadataImage, snap: SnapshotPoint | None) -> None:
        """Keep the image as it is now as the checkpoint at ``offset``; past
        CHECKPOINT_BYTES, thin the checkpoints out."""
        cp = Checkpoint(offset, pickle.dumps(image, pickle.HIGHEST_PROTOCOL), snap)
        self._kept += len(cp.pickled)
        at = bisect_right(self._offsets, offset)
        if at and self._offsets[at - 1] == offset:
            # a snapshot's image where a replay reached it
            self._kept -= len(self._checkpoints[at - 1].pickled)
            self._checkpoints[at - 1] = cp
        else:
            self._offsets.insert(at, offset)
            self._checkpoints.insert(at, cp)
        while self._kept > CHECKPOINT_BYTES and self._thin():
            self._every *= 2

    def _thin(self) -> bool:
        """Drop every other checkpoint where a replay does not start; whether any went."""
        keep: list[Checkpoint] = []
        odd = False
        for cp in self._checkpoints:
            if not cp.starts_span:
                odd = not odd
                if odd:
                    self._kept -= len(cp.pickled)
                    continue
            keep.append(cp)
        dropped = len(keep) < len(self._checkpoints)
        self._checkpoints = keep
        self._offsets = [cp.offset for cp in keep]
        return dropped

    # ------------------------------------------------------------------ where

    @property
    def start(self) -> int:
        """The least offset there is an image at."""
        return self._offsets[0]

    @property
    def end(self) -> int:
        """The greatest offset there is an image at: the log end offset, or the last
        snapshot's end where there is no log."""
        return self.log_end if self.log_end is not None else self._offsets[-1]

    def snapshots(self) -> list[SnapshotPoint]:
        """The replica's snapshots, by end offset."""
        return list(self._snapshots)

    def snapshot(self, name: str) -> SnapshotPoint:
        """The snapshot named ``name``: its file name, the name without
        ``.checkpoint``, or its end offset.  A UsageError that lists them otherwise."""
        wanted = name.strip()
        for snap in self._snapshots:
            if wanted in (snap.name, snap.path.stem) or \
                    (wanted.isdigit() and int(wanted) == snap.end_offset):
                return snap
        names = ", ".join(s.name for s in self._snapshots) or "none"
        raise UsageError(f"no snapshot {name!r}; the snapshots are: {names}",
                         context=str(self.source.path))

    @property
    def checkpoints(self) -> int:
        """How many checkpoints are kept."""
        return len(self._checkpoints)

    @property
    def checkpoint_bytes(self) -> int:
        """The bytes the pickled checkpoints take."""
        return self._kept

    def _check(self, offset: int) -> Checkpoint:
        """The checkpoint to start from for ``offset``; a UsageError for an offset there is
        no image at."""
        if self.log_end is None:
            at = bisect_right(self._offsets, offset) - 1
            if at < 0 or self._offsets[at] != offset:
                ends = ", ".join(str(o) for o in self._offsets)
                raise UsageError(f"offset {offset}: there is no log, only the snapshot(s) "
                                 f"at {ends}", context=str(self.source.path))
            return self._checkpoints[at]
        if offset < self.start:
            why = "" if self.log_start == self.start else \
                f" (the log starts at {self.log_start}; the first snapshot inside it ends " \
                f"at {self.start})"
            raise UsageError(f"offset {offset} is before {self.start}, the first offset "
                             f"with an image{why}", context=str(self.source.path))
        if offset > self.log_end:
            raise UsageError(f"offset {offset} is past the log end offset {self.log_end}",
                             context=str(self.source.path))
        return self._checkpoints[bisect_right(self._offsets, offset) - 1]

    # ------------------------------------------------------------------ images

    def image_at(self, offset: int) -> tuple[MetadataImage, Provenance]:
        """The image after every record below ``offset``, and its provenance: the last
        batch of metadata records applied (NoOp heartbeats included, as Kafka counts
        them), or the snapshot the image was loaded from."""
        cp = self._check(offset)
        image = cp.image()
        if offset > cp.offset:
            for _ in self._replay(image, cp.offset, offset):
                pass
        return image, self.provenance(offset)

    def _replay(self, image: MetadataImage, from_offset: int, to_offset: int
                ) -> Iterator[int]:
        """Apply to ``image`` (the image at ``from_offset``) the records below
        ``to_offset``: the data batches the index found, each read by its position,
        yielding the offset after each (``to_offset`` where it cuts one).  What
        :func:`replay_log` applies, without its scan from the segment's start: a replay
        costs the batches it applies, wherever in the log they are (the NoOp heartbeats
        and control batches between change nothing in an image)."""
        assert isinstance(self.source, PartitionDir) and self.index is not None
        replay = Replay(image, from_offset)
        with BatchesByPosition() as files:
            for info in self.index.batches_between(from_offset, to_offset, data_only=True):
                raw = files.batch(info.file, info.position)
                for r, p in _data_records(raw, info.file, from_offset, to_offset):
                    replay.apply(p, r.offset, info.file, info.position)
                yield min(info.last_offset + 1, to_offset)

    def provenance(self, offset: int) -> Provenance:
        """The provenance of the image at ``offset`` (see :meth:`image_at`)."""
        cp = self._check(offset)
        span_start = cp.snapshot.end_offset if cp.snapshot is not None else 0
        batch = self.index.last_applied(offset) if self.index is not None else None
        if batch is not None and batch.last_offset >= span_start:
            last = min(batch.last_offset, offset - 1)
            return Provenance(last, batch.leader_epoch, batch.max_timestamp,
                              last == batch.last_offset)
        snap = cp.snapshot
        if snap is None:
            return EMPTY_PROVENANCE
        return Provenance(snap.end_offset - 1, snap.epoch, self._header_time(snap), True)

    def _header_time(self, snap: SnapshotPoint) -> int:
        """The snapshot header's lastContainedLogTimestamp (-1 when it has none)."""
        hit = self._headers.get(snap.path)
        if hit is None:
            hit = -1
            for item in read_records(snap.path, decode_metadata, decode_control):
                if type(item) is not Finding:
                    data = item[2].data
                    if isinstance(data, dict):
                        hit = int(data.get("lastContainedLogTimestamp", -1))
                break
            self._headers[snap.path] = hit
        return hit

    # ------------------------------------------------------------------ moving

    def offset_at(self, time_ms: int) -> int:
        """The base offset of the first batch whose maxTimestamp is at or after
        ``time_ms`` (the log end when none is): the image there is the state after
        every record stamped before ``time_ms``."""
        if self.index is None:
            raise UsageError("there is no log: times are looked up in the log's batches",
                             context=str(self.source.path), hint="move by snapshot instead")
        found = self.index.first_at_or_after(time_ms)
        return self.end if found is None else found

    def time_range(self) -> tuple[int, int] | None:
        """The maxTimestamp of the log's first batch and the highest of them all (the
        times ``offset_at`` can tell apart); None without a batch."""
        if self.index is None or not len(self.index):
            return None
        return self.index.first_ts[0], self.index.most_ts[-1]

    def next_batch(self, offset: int, n: int = 1) -> int:
        """The offset after the ``n``-th data batch from ``offset`` on (see the module
        docstring): the end of the log when there are fewer; ``offset`` itself where
        there is no log (a snapshot is not a step)."""
        if n < 1:
            raise UsageError(f"a step count is 1 or more, not {n}")
        if self.index is None:  # no log, no batch to step over: a step goes nowhere
            return offset
        found = self.index.next_step(offset, n)
        return self.end if found is None else min(found, self.end)

    def prev_batch(self, offset: int, n: int = 1) -> int:
        """The offset where the ``n`` data batches applied last before ``offset`` are
        undone: the start of the timeline when there are fewer; ``offset`` itself where
        there is no log."""
        if n < 1:
            raise UsageError(f"a step count is 1 or more, not {n}")
        if self.index is None:  # no log, no batch to step over: a step goes nowhere
            return offset
        found = self.index.prev_step(offset, n)
        return self.start if found is None else max(found, self.start)

    def walk(self, from_offset: int, to_offset: int
             ) -> Iterator[tuple[int, MetadataImage, Provenance]]:
        """The image at ``from_offset``, then the image after each data batch (each
        step) that ends by ``to_offset`` (one that ``to_offset`` cuts: up to it), with
        the offset and provenance of each: what ``next N`` and ``prev N`` show, from one
        replay instead of one per step, made as they are taken.  Each image is a copy,
        the caller's own; they are those of :meth:`image_at`, and a step costs the
        batch it applies and a copy of the image, however long the log."""
        image, prov = self.image_at(from_offset)
        if to_offset <= from_offset or self.index is None:
            yield from_offset, image, prov
            return
        self._check(to_offset)
        yield from_offset, pickle.loads(pickle.dumps(image, pickle.HIGHEST_PROTOCOL)), prov
        for offset in self._replay(image, from_offset, to_offset):
            if offset > from_offset:
                yield offset, pickle.loads(pickle.dumps(image, pickle.HIGHEST_PROTOCOL)), \
                    self.provenance(offset)

    def batch_at(self, offset: int) -> BatchInfo | None:
        """The batch that holds ``offset`` (None past the log or in a gap)."""
        return None if self.index is None else self.index.batch_at(offset)

    def batches(self, from_offset: int, to_offset: int) -> Iterator[BatchInfo]:
        """The batches holding an offset in ``[from_offset, to_offset)``."""
        if self.index is None:
            return iter(())
        return self.index.batches_between(from_offset, to_offset)

    # ------------------------------------------------------------------ records

    def _segments(self, lo: int, hi: int) -> list[LogFile]:
        """The segments that may hold an offset in ``[lo, hi]``."""
        if not isinstance(self.source, PartitionDir):
            return [self.source]
        segs = self.source.segments
        out = []
        for i, seg in enumerate(segs):
            base = seg.kind.base_offset or 0
            nxt = segs[i + 1].kind.base_offset if i + 1 < len(segs) else None
            if base <= hi and (nxt is None or nxt > lo):
                out.append(seg)
        return out

    def records(self, from_offset: int, to_offset: int, *, show_secrets: bool = False
                ) -> Iterator[Event]:
        """The batches and records with an offset from ``from_offset`` to ``to_offset``
        (both included), as ``kmeta dump --from-offset --to-offset`` yields them (secrets
        redacted unless ``show_secrets``): render them with ``kmeta.render.jsonl``."""
        edge = DumpOptions(from_offset=from_offset, to_offset=to_offset,
                           show_secrets=show_secrets)
        # the batches wholly inside the range are dump's plain case (a run of heartbeats
        # written as one): a range of the whole log is written as fast as dump -r writes it
        whole = DumpOptions(show_secrets=show_secrets)
        for seg in self._segments(from_offset, to_offset):
            inside = _Inside(seg, from_offset, to_offset)
            while True:
                yield from dump_batches(inside, seg, whole)
                if inside.edge is None:
                    break
                yield from dump_batches([inside.edge], seg, edge)
                inside.edge = None

    def history_records(self, from_offset: int | None = None, to_offset: int | None = None,
                        *, show_secrets: bool = False) -> Iterator[HistoryRecord]:
        """Every metadata record but NoOps with an offset in ``[from_offset, to_offset)``
        (the whole log by default), in order, secrets redacted as ``kmeta history`` does.
        Only the data batches the index found are read, by position: a call reads a few
        MB however long the log."""
        lo = self.start if from_offset is None else from_offset
        hi = self.end if to_offset is None else to_offset
        if isinstance(self.source, LogFile) or self.index is None:
            yield from self._snapshot_records(lo, hi, show_secrets)
            return
        with BatchesByPosition() as files:
            for info in self.index.batches_between(lo, hi, data_only=True):
                yield from _batch_history(files.batch(info.file, info.position), info, lo,
                                          hi, show_secrets)

    def _snapshot_records(self, lo: int, hi: int, show_secrets: bool
                          ) -> Iterator[HistoryRecord]:
        """The records of a lone snapshot file (all at the offsets the file gives)."""
        if not isinstance(self.source, LogFile):
            return
        for item in read_records(self.source.path, decode_metadata, decode_control):
            if type(item) is Finding:
                continue
            batch, r, p = item
            if batch.is_control or p.finding or p.type == NOOP_TYPE:
                continue
            yield _history(r.offset, r.timestamp, batch.leader_epoch, p, show_secrets)


def _history(offset: int, timestamp: int, epoch: int, p: Any, show_secrets: bool
             ) -> HistoryRecord:
    data = redact(p.type, p.data) if p.type in SECRET_TYPES and not show_secrets else p.data
    return HistoryRecord(offset, timestamp, epoch, p.type, p.version, data)


def _data_records(raw: bytes, file: str, lo: int, hi: int) -> Iterator[tuple[Any, Any]]:
    """(record, payload) of each metadata record at an offset in ``[lo, hi)`` of one
    data batch's bytes, read at its position: what an image applies (no NoOp, no record
    that failed to decode, nothing of a batch whose CRC fails)."""
    for batch in scan_batches(raw, file):
        if type(batch) is not Batch or not batch.crc_valid:
            continue
        for item in decoded_records(batch, decode_metadata, decode_control):
            if type(item) is Finding:
                continue
            _, r, p = item
            if not p.finding and p.type != NOOP_TYPE and lo <= r.offset < hi:
                yield r, p


def _batch_history(raw: bytes, info: BatchInfo, lo: int, hi: int, show_secrets: bool
                   ) -> Iterator[HistoryRecord]:
    """The records of one data batch (its bytes, read at its position)."""
    for r, p in _data_records(raw, info.file, lo, hi):
        yield _history(r.offset, r.timestamp, info.leader_epoch, p, show_secrets)


class _Inside:
    """The scan of a segment (batches, runs and findings) for the records of ``[lo,
    hi]``: what lies wholly inside the range, up to a batch that holds offsets on both
    sides of one of its ends (kept as ``edge``, for a reader that filters its records),
    where the iteration stops; iterated again, it goes on after it.  A run that
    straddles an end is expanded; what lies wholly outside is passed over, a run of it
    unexpanded.  It expands a run for its reader too, as :class:`Expandable` does."""

    def __init__(self, seg: LogFile, lo: int, hi: int) -> None:
        self._stream = Expandable(read_batches(seg.path, memo=True, runs=True))
        self._items = iter(self._stream)
        self.lo, self.hi = lo, hi
        self.edge: Any = None
        self._done = False

    def __iter__(self) -> _Inside:
        return self

    def __next__(self) -> Any:
        lo, hi = self.lo, self.hi
        while not self._done:
            item = next(self._items, None)
            if item is None:
                self._done = True
                break
            if type(item) is Finding:
                return item
            if type(item) is Run:
                first, last = item.first_base, item.last_offset
            else:
                first, last = item.base_offset, item.last_offset
            if first > hi:
                self._done = True
                break
            if last < lo:
                continue
            if lo <= first and last <= hi:
                return item
            if type(item) is Run:
                self._stream.expand(item)
                continue
            self.edge = item
            break
        raise StopIteration

    def expand(self, run: Run) -> None:
        self._stream.expand(run)


# ---------------------------------------------------------------------- several replicas

@dataclass
class Replicas:
    """Several replicas' timelines, each by a short name (see :func:`kmeta.ops.replica.dirs.replica_labels`)."""

    timelines: dict[str, Timeline] = field(default_factory=dict)

    @classmethod
    def open(cls, paths: list[str | os.PathLike[str]], progress: Progress = QUIET
             ) -> Replicas:
        opened = [Timeline.open(p, progress) for p in paths]
        homes = [_home(t) for t in opened]
        return cls(dict(zip(replica_labels(homes), opened, strict=True)))

    def __getitem__(self, name: str) -> Timeline:
        hit = self.timelines.get(name)
        if hit is None:
            raise UsageError(f"no replica {name!r}; there are: {', '.join(self.timelines)}")
        return hit

    def __iter__(self) -> Iterator[str]:
        return iter(self.timelines)

    def __len__(self) -> int:
        return len(self.timelines)

    def names(self) -> list[str]:
        return list(self.timelines)


def _home(t: Timeline) -> Path:
    """The dir a replica is named by: the data dir holding its metadata partition (the
    snapshot file's own dir's parent for a lone snapshot)."""
    src = t.source
    where = src.path if isinstance(src, PartitionDir) else src.path.parent
    return where.parent if where.name.startswith("__cluster_metadata") else where
