"""A writer that does to a copy of a broker's data dir what Kafka's log layer does to it.

It plays a running single-node KRaft broker (controller and broker in one) on a copy of a
real data dir, starting from that data's own ends (offsets, leader epochs, index files), so
that kmeta can be run beside it: every state it leaves, at every instant, is one a healthy
Kafka broker leaves too (a crash aside).  Orderings follow Kafka (apache/kafka 3.9/4.x), each
named where it is done:

* ``utils/FileLock`` (``FileChannel.tryLock``, an ``fcntl`` record lock on Linux) holds
  ``<log dir>/.lock`` for the whole run; ``flock`` can be asked for instead.
* ``LogManager.loadLogs`` deletes ``.kafka_cleanshutdown`` once the logs are loaded, and
  ``LogLoader.load`` resizes the active segment's indexes back to ``segment.index.bytes``.
* ``LogSegment.append``: the batch goes to the ``.log`` first; then, once more than
  ``index.interval.bytes`` were appended since the last entry, the offset index entry
  (the batch's last offset, its position) and ``TimeIndex.maybeAppend`` (only a larger
  timestamp).
* ``UnifiedLog.roll`` -> ``LocalLog.roll``: the old segment's
  ``LogSegment.onBecomeInactiveSegment`` (final time index entry,
  ``AbstractIndex.trimToValidSize`` of both indexes), a new ``.log`` whose indexes are
  ``LazyIndex``es: made at their first use, the next append's ``LogSegment.shouldRoll``,
  preallocated (``AbstractIndex``: ``RandomAccessFile.setLength(maxIndexSize)``); then
  ``ProducerStateManager.takeSnapshot`` writes ``<new base>.snapshot`` in place
  (``FileChannel`` CREATE/WRITE, forced later by the ``flush-log`` task, which also moves the
  recovery point to the new base).
* ``UnifiedLog.deleteSegments``: the log start offset moves to the next segment first, then
  ``LocalLog.deleteSegmentFiles`` renames every file of the segment to ``*.deleted``
  (``LogSegment.changeFileSuffixes``) and unlinks them ``file.delete.delay.ms`` later;
  ``deleteProducerSnapshots`` does the same to the segment's producer snapshot.
* ``UnifiedLog.maybeIncrementLogStartOffset`` (DeleteRecords) and
  ``LeaderEpochFileCache.truncateFromStart`` rewrite ``leader-epoch-checkpoint``.
* ``CheckpointFile.write`` (behind ``CheckpointFileWithFailureHandler``): ``<name>.tmp``,
  written, ``FileDescriptor.sync``, ``Utils.atomicMoveWithFallback`` (rename, then fsync of
  the directory).  ``LogManager.checkpointLogStartOffsetsInDir`` lists only partitions whose
  log start offset is above their first segment's base offset.
* ``FileRawSnapshotWriter``: a KRaft snapshot is written as ``<id>-<n>.checkpoint.part``,
  forced and moved to ``<end offset>-<epoch>.checkpoint`` (kmeta's own
  :func:`kmeta.ops.snapshot.write_snapshot_at` does exactly that, with a correct image).
* ``KafkaMetadataLog.deleteBeforeSnapshot`` / ``removeSnapshots``: the metadata log start
  moves up to the oldest kept snapshot, segments wholly below it go as above, older
  snapshots are renamed ``.checkpoint.deleted`` (``Snapshots.markForDelete``) and deleted
  later (``Snapshots.deleteIfExists``).
* ``LogManager.asyncDelete``: a deleted topic's partition dir is renamed
  ``<topic>-<p>.<uuid>-delete`` (``UnifiedLog.logDeleteDirName``), the checkpoints are
  rewritten without it, and the dir is removed ``file.delete.delay.ms`` later.

Run it: ``python -m tests.live.kafka_like DIR --seconds N --lock posix`` (DIR is modified in
place: give it a copy).  From Python: :class:`LiveBroker` runs it in a subprocess (a POSIX
lock is per process: the lock must be another process's for kmeta to see it held).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import itertools
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from kmeta.formats.batch import HEADER, HEADER_SIZE, LOG_OVERHEAD, build_batch
from kmeta.formats.filenames import segment_file_name
from kmeta.formats.payload import encode_metadata
from kmeta.formats.producer_state import ProducerSnapshot, build_producer_snapshot
from kmeta.formats.textfiles import (
    EpochEntry,
    LeaderEpochCheckpoint,
    OffsetCheckpoint,
    TopicPartitionOffset,
    build_leader_epoch_checkpoint,
    build_offset_checkpoint,
    parse_leader_epoch_checkpoint,
    parse_offset_checkpoint,
)
from kmeta.storage.writer import fsync_directory, noop_batch

#: ``segment.index.bytes`` default: what ``AbstractIndex`` preallocates.
INDEX_BYTES = 10 * 1024 * 1024
#: ``index.interval.bytes`` default.
INDEX_INTERVAL = 4096
OFFSET_ENTRY = struct.Struct(">ii")  # relative offset, position
TIME_ENTRY = struct.Struct(">qi")  # timestamp, relative offset
METADATA = "__cluster_metadata-0"
#: partitions the writer appends to, besides the metadata log; retention spares the
#: second (plant_corruption's target)
DATA = ("stock-prices-0", "alerts-0")
SPARED = "alerts-0"
CHECKPOINTS = ("recovery-point-offset-checkpoint", "replication-offset-checkpoint",
               "log-start-offset-checkpoint")
READY = "kafka_like: ready"


def _split(name: str) -> tuple[str, int]:
    topic, _, part = name.rpartition("-")
    return topic, int(part)


@dataclass
class _Segment:
    base: int
    size: int = 0
    offset_entries: int = 0
    time_entries: int = 0
    last_time: int = -1  # timestamp of the last time index entry
    since_index: int = 0  # LogSegment.bytesSinceLastIndexEntry
    max_ts: int = -1  # LogSegment.maxTimestampAndOffsetSoFar
    max_ts_offset: int = -1


@dataclass
class _Log:
    """One partition directory, as ``UnifiedLog`` holds it open."""

    path: Path
    segment_bytes: int
    metadata: bool = False
    segments: list[int] = field(default_factory=list)  # closed segments' base offsets
    active: _Segment | None = None
    next_offset: int = 0
    epoch: int = 0
    log_start: int = 0
    recovery_point: int = 0
    epochs: list[EpochEntry] = field(default_factory=list)
    log_fd: int | None = None
    #: the active segment's .index and .timeindex, None until first touched (LazyIndex)
    index_fds: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        return self.path.name

    def file(self, base: int, ext: str, suffix: str | None = None) -> Path:
        return self.path / segment_file_name(base, ext, suffix)

    def bases(self) -> list[int]:
        assert self.active is not None
        return [*self.segments, self.active.base]

    # -- LogLoader.load
    def load(self, log_start: int | None) -> None:
        # LogLoader.removeTempFilesAndCollectSwapFiles deletes what a crash left marked for
        # deletion; KafkaMetadataLog's start deletes partial and deleted snapshots.
        for p in self.path.iterdir():
            if p.name.endswith((".deleted", ".cleaned", ".checkpoint.part")):
                p.unlink()
        bases = sorted(int(p.name[:20]) for p in self.path.glob("*.log"))
        if not bases:
            raise ValueError(f"{self.path}: no segment to continue")
        self.segments = bases[:-1]
        seg = _Segment(bases[-1])
        data = bytearray(self.file(seg.base, "log").read_bytes())
        pos = 0
        last_epoch = None
        while pos + HEADER_SIZE <= len(data):
            f = HEADER.unpack_from(data, pos)
            end = pos + LOG_OVERHEAD + f[1]
            if f[1] < HEADER_SIZE - LOG_OVERHEAD or end > len(data) or f[3] != 2:
                break
            last = f[0] + f[6]
            if f[8] > seg.max_ts:
                seg.max_ts, seg.max_ts_offset = f[8], last
            last_epoch, self.next_offset = f[2], last + 1
            pos = end
        if last_epoch is None:  # an empty active segment: the previous one has the end
            self.next_offset = seg.base
        if pos < len(data):  # LogSegment.recover truncates a torn tail
            os.truncate(self.file(seg.base, "log"), pos)
        seg.size = pos
        self.epochs = list(self._read_epochs())
        self.epoch = last_epoch if last_epoch is not None else \
            (self.epochs[-1].epoch if self.epochs else 0)
        seg.offset_entries = self._valid_entries(seg.base, "index", OFFSET_ENTRY, seg.size)
        seg.time_entries = self._valid_entries(seg.base, "timeindex", TIME_ENTRY, seg.size)
        if seg.time_entries:
            raw = self.file(seg.base, "timeindex").read_bytes()
            seg.last_time = TIME_ENTRY.unpack_from(raw, (seg.time_entries - 1) * 12)[0]
        self.active = seg
        self.log_start = max(bases[0], log_start or 0)
        self.recovery_point = seg.base
        self._open(seg, create=False)

    def _read_epochs(self) -> tuple[EpochEntry, ...]:
        path = self.path / "leader-epoch-checkpoint"
        if not path.exists():
            return ()
        return parse_leader_epoch_checkpoint(path.read_bytes()).entries

    def _valid_entries(self, base: int, ext: str, entry: struct.Struct, log_size: int) -> int:
        """Entries before the zero tail (an entry never names position 0 or time 0), and
        that point inside the log kept."""
        path = self.file(base, ext)
        raw = path.read_bytes() if path.exists() else b""
        n = 0
        for n in range(len(raw) // entry.size + 1):
            if n == len(raw) // entry.size:
                break
            a, b = entry.unpack_from(raw, n * entry.size)
            if (ext == "index" and (b == 0 or b >= log_size)) or (ext == "timeindex" and a == 0):
                break
        return n

    def _open(self, seg: _Segment, *, create: bool) -> None:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | (os.O_EXCL if create else 0)
        self.log_fd = os.open(self.file(seg.base, "log"), flags, 0o644)
        if not create:  # LogLoader.load resizes the reopened active segment's indexes
            self.indexes()

    def indexes(self) -> tuple[int, int]:
        """The active segment's index files.  LogSegment.open wraps them in LazyIndex: a new
        segment's .index and .timeindex come into being when first used (the next append's
        LogSegment.shouldRoll asks offsetIndex().isFull()), preallocated by AbstractIndex
        with RandomAccessFile.setLength(maxIndexSize)."""
        if self.index_fds is None:
            seg = self.active
            assert seg is not None
            idx = []
            for ext, entry, n in (("index", OFFSET_ENTRY, seg.offset_entries),
                                  ("timeindex", TIME_ENTRY, seg.time_entries)):
                fd = os.open(self.file(seg.base, ext), os.O_RDWR | os.O_CREAT, 0o644)
                os.ftruncate(fd, n * entry.size)  # no stale entry past the valid ones
                os.ftruncate(fd, INDEX_BYTES - INDEX_BYTES % entry.size)
                idx.append(fd)
            self.index_fds = (idx[0], idx[1])
        return self.index_fds

    def close_files(self) -> None:
        for fd in (self.log_fd, *(self.index_fds or ())):
            if fd is not None:
                os.close(fd)
        self.log_fd = None
        self.index_fds = None

    # -- LogSegment.append
    def append(self, batch: bytes) -> None:
        seg = self.active
        assert seg is not None and self.log_fd is not None
        f = HEADER.unpack_from(batch, 0)
        last, max_ts = f[0] + f[6], f[8]
        # UnifiedLog.maybeRoll -> LogSegment.shouldRoll: the size test first; when it does
        # not roll, the index's isFull() is asked (and a lazy index file made)
        if seg.size and seg.size + len(batch) > self.segment_bytes:
            self.roll()
            seg = self.active
            assert seg is not None and self.log_fd is not None
        else:
            self.indexes()
        position = seg.size
        os.write(self.log_fd, batch)  # the log first ...
        seg.size += len(batch)
        if max_ts > seg.max_ts:
            seg.max_ts, seg.max_ts_offset = max_ts, last
        if seg.since_index > INDEX_INTERVAL:  # ... then its index entries
            os.pwrite(self.indexes()[0], OFFSET_ENTRY.pack(last - seg.base, position),
                      seg.offset_entries * OFFSET_ENTRY.size)
            seg.offset_entries += 1
            self._time_maybe_append(seg)
            seg.since_index = 0
        seg.since_index += len(batch)
        self.next_offset = last + 1
        if f[2] > (self.epochs[-1].epoch if self.epochs else -1):
            # LeaderEpochFileCache.assign (the checkpoint is rewritten by the cache)
            self.epochs.append(EpochEntry(f[2], f[0]))
            self.write_epochs()

    def _time_maybe_append(self, seg: _Segment) -> None:
        """TimeIndex.maybeAppend: only a timestamp larger than the last entry's."""
        if seg.max_ts > seg.last_time:
            os.pwrite(self.indexes()[1], TIME_ENTRY.pack(seg.max_ts, seg.max_ts_offset - seg.base),
                      seg.time_entries * TIME_ENTRY.size)
            seg.time_entries += 1
            seg.last_time = seg.max_ts

    def deactivate(self) -> None:
        """LogSegment.onBecomeInactiveSegment (and LogSegment.close): the final time index
        entry, then both indexes trimmed to their entries (AbstractIndex.trimToValidSize)."""
        seg = self.active
        assert seg is not None
        self._time_maybe_append(seg)
        index, time_index = self.indexes()
        os.ftruncate(index, seg.offset_entries * OFFSET_ENTRY.size)
        os.ftruncate(time_index, seg.time_entries * TIME_ENTRY.size)

    # -- UnifiedLog.roll -> LocalLog.roll
    def roll(self) -> None:
        assert self.active is not None
        self.deactivate()
        self.close_files()
        self.segments.append(self.active.base)
        seg = _Segment(self.next_offset)
        self.active = seg
        self._open(seg, create=True)
        # ProducerStateManager.takeSnapshot at the new base: written in place, no rename.
        self.write_producer_snapshot(seg.base)
        # the flush-log task flushes up to the new segment: the recovery point follows
        self.recovery_point = seg.base

    def write_producer_snapshot(self, offset: int) -> None:
        path = self.file(offset, "snapshot")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            os.write(fd, build_producer_snapshot(ProducerSnapshot()))
        finally:
            os.close(fd)

    # -- UnifiedLog.maybeIncrementLogStartOffset
    def advance_start(self, offset: int) -> bool:
        if offset <= self.log_start:
            return False
        self.log_start = offset
        # LeaderEpochFileCache.truncateFromStart: entries below the new start go, the last
        # of them kept at the new start offset.
        kept = [e for e in self.epochs if e.start_offset >= offset]
        below = [e for e in self.epochs if e.start_offset < offset]
        if below and (not kept or kept[0].start_offset > offset):
            kept.insert(0, EpochEntry(below[-1].epoch, offset))
        self.epochs = kept
        self.write_epochs()
        return True

    def write_epochs(self) -> None:
        write_checkpoint(self.path / "leader-epoch-checkpoint",
                         build_leader_epoch_checkpoint(LeaderEpochCheckpoint(tuple(self.epochs))))

    def deletable(self) -> list[int]:
        """Closed segments wholly below the log start offset
        (UnifiedLog.deleteLogStartOffsetBreachedSegments)."""
        bases = self.bases()
        return [b for b, nxt in itertools.pairwise(bases) if nxt <= self.log_start
                and b in self.segments]


def write_checkpoint(path: Path, data: bytes) -> None:
    """CheckpointFile.write: ``<name>.tmp``, fsync, atomic move, fsync of the directory."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:  # FileOutputStream truncates a .tmp left by a crash
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_directory(path.parent)


def _uuid_b64(raw: bytes) -> str:
    """A UUID as Kafka writes it in JSON: URL-safe base64 without padding."""
    import base64

    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


class Writer:
    """The broker: its logs, its checkpoint files, its scheduler of delayed deletions."""

    def __init__(self, data_dir: str | os.PathLike[str], *, lock: str = "posix", seed: int = 0,
                 rate: float = 600.0, segment_bytes: int = 48 * 1024,
                 metadata_segment_bytes: int = 32 * 1024, delete_delay: float = 0.3,
                 checkpoint_interval: float = 0.1, snapshot_interval: float = 1.5,
                 keep_segments: int = 3, keep_snapshots: int = 2,
                 delete_records_interval: float = 2.0,
                 delete_topic_after: float | None = None) -> None:
        self.dir = Path(data_dir)
        self.lock_kind = lock
        self.rng = random.Random(seed)
        self.rate = rate
        self.delete_delay = delete_delay
        self.checkpoint_interval = checkpoint_interval
        self.snapshot_interval = snapshot_interval
        self.keep_segments = keep_segments
        self.keep_snapshots = keep_snapshots
        self.delete_records_interval = delete_records_interval
        self.delete_topic_after = delete_topic_after
        self.pending: list[tuple[float, Path]] = []  # the scheduler's delete-file tasks
        self.stats = {"batches": 0, "rolls": 0, "deleted_segments": 0, "snapshots": 0,
                      "deleted_snapshots": 0, "checkpoints": 0, "topics_deleted": 0}
        self._lock_fd: int | None = None
        self._stop = False
        self.segment_bytes = segment_bytes
        self.metadata_segment_bytes = metadata_segment_bytes
        self.logs: dict[str, _Log] = {}
        self.deleted_topic: str | None = None

    # -- the lock and start-up
    def take_lock(self) -> None:
        """utils/FileLock.tryLock: FileChannel.tryLock is an fcntl record lock on Linux."""
        fd = os.open(self.dir / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        if self.lock_kind == "posix":
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        elif self.lock_kind == "flock":
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:
            raise ValueError(f"lock must be posix or flock, not {self.lock_kind!r}")
        self._lock_fd = fd

    def start(self) -> None:
        """LogManager: lockLogDirs, then loadLogs (LogLoader.load of each partition)."""
        self.take_lock()
        for stale in self.dir.glob("*-delete"):  # LogManager.loadLogs resumes deletions
            shutil.rmtree(stale)
        starts = self._read_checkpoint("log-start-offset-checkpoint")
        for name in (METADATA, *DATA):
            if name == DATA[0] and not (self.dir / name).is_dir():
                self.deleted_topic = name  # deleted by an earlier run
                continue
            log = _Log(self.dir / name, self.metadata_segment_bytes if name == METADATA
                       else self.segment_bytes, metadata=name == METADATA)
            log.load(starts.get(_split(name)))
            self.logs[name] = log
        # LogManager.loadLogs: the clean shutdown marker goes once the logs are loaded.
        with contextlib.suppress(FileNotFoundError):
            (self.dir / ".kafka_cleanshutdown").unlink()
        self.write_checkpoints()
        self.register_broker()

    def register_broker(self) -> None:
        """A broker that starts registers again (BrokerLifecycleManager ->
        QuorumController.registerBroker: a RegisterBrokerRecord, fenced, its broker epoch
        the record's offset) and is unfenced once caught up (UnfenceBrokerRecord): the
        state of a running broker, which the data's last records (a controlled shutdown)
        are not.  The registration is the newest one the log or a snapshot holds."""
        from kmeta.formats.payload import decode_control, decode_metadata
        from kmeta.storage.segments import read_records

        meta = self.logs[METADATA]
        files = sorted(meta.path.glob("*.checkpoint")) + sorted(meta.path.glob("*.log"))
        found = None
        for f in files:
            for item in read_records(f, decode_metadata, decode_control):
                if isinstance(item, tuple) and item[2].type == "REGISTER_BROKER_RECORD":
                    found = item[2]
        if found is None:
            return
        data = dict(found.data)
        epoch = meta.next_offset
        data.update(brokerEpoch=epoch, fenced=True,
                    incarnationId=_uuid_b64(uuid.uuid4().bytes))
        now = int(time.time() * 1000)
        meta.append(build_batch(meta.next_offset, [(None, encode_metadata(
            "REGISTER_BROKER_RECORD", found.version, data))], leader_epoch=meta.epoch,
            base_timestamp=now))
        meta.append(build_batch(meta.next_offset, [(None, encode_metadata(
            "UNFENCE_BROKER_RECORD", 0, {"id": data["brokerId"], "epoch": epoch}))],
            leader_epoch=meta.epoch, base_timestamp=now))

    # -- offsets checkpoints (LogManager / ReplicaManager checkpoint tasks)
    def _read_checkpoint(self, name: str) -> dict[tuple[str, int], int]:
        path = self.dir / name
        if not path.exists() or not path.stat().st_size:
            return {}
        return {(e.topic, e.partition): e.offset
                for e in parse_offset_checkpoint(path.read_bytes()).entries}

    def write_checkpoints(self) -> None:
        for name in CHECKPOINTS:
            entries = self._read_checkpoint(name)
            if self.deleted_topic:
                entries.pop(_split(self.deleted_topic), None)
            for log_name in DATA:
                if log_name == self.deleted_topic:
                    continue
                log = self.logs[log_name]
                key = _split(log_name)
                if name == "recovery-point-offset-checkpoint":
                    entries[key] = log.recovery_point
                elif name == "replication-offset-checkpoint":
                    entries[key] = log.next_offset  # a single replica: HW = LEO
                elif log.log_start > log.bases()[0]:  # checkpointLogStartOffsetsInDir
                    entries[key] = log.log_start
                else:
                    entries.pop(key, None)
            value = OffsetCheckpoint(tuple(TopicPartitionOffset(t, p, o)
                                           for (t, p), o in entries.items()))
            write_checkpoint(self.dir / name, build_offset_checkpoint(value))
        self.stats["checkpoints"] += 1

    # -- batches
    def _data_batch(self, log: _Log, now: int) -> bytes:
        n = self.rng.randint(1, 12)
        records = [(f"key-{self.rng.randint(0, 50)}".encode(),
                    json.dumps({"seq": log.next_offset + i, "price": self.rng.random(),
                                "pad": "x" * self.rng.randint(10, 200)}).encode())
                   for i in range(n)]
        return build_batch(log.next_offset, records, leader_epoch=log.epoch,
                           base_timestamp=now)

    def append_one(self) -> None:
        now = int(time.time() * 1000)
        pick = self.rng.random()
        # the spared partition gets few writes: it rolls every few seconds, not every few
        # hundred milliseconds, and keeps all its segments
        name = METADATA if pick < 0.35 else SPARED if pick < 0.42 else DATA[0]
        if name == self.deleted_topic:
            name = METADATA
        log = self.logs[name]
        if log.metadata:
            # the controller's heartbeat: a NoOpRecord batch (metadata.max.idle.interval.ms)
            batch = noop_batch(log.next_offset, log.epoch, now)
        else:
            batch = self._data_batch(log, now)
        rolls = len(log.segments)
        log.append(batch)
        self.stats["batches"] += 1
        if len(log.segments) != rolls:
            self.stats["rolls"] += 1
            if not log.metadata and name != SPARED:
                self.retention(log)

    # -- retention (UnifiedLog.deleteOldSegments)
    def retention(self, log: _Log) -> None:
        excess = len(log.bases()) - self.keep_segments
        if excess > 0:
            # UnifiedLog.deleteSegments: the log start moves to the next segment first
            log.advance_start(log.bases()[excess])
        self.delete_segments(log, log.deletable())

    def delete_segments(self, log: _Log, bases: list[int]) -> None:
        """LocalLog.deleteSegmentFiles + UnifiedLog.deleteProducerSnapshots: rename to
        ``.deleted`` now, unlink after file.delete.delay.ms."""
        due = time.monotonic() + self.delete_delay
        for base in bases:
            log.segments.remove(base)
            for ext in ("log", "index", "timeindex", "txnindex", "snapshot"):
                src = log.file(base, ext)
                if src.exists():
                    dst = log.file(base, ext, "deleted")
                    os.replace(src, dst)
                    self.pending.append((due, dst))
            self.stats["deleted_segments"] += 1

    def delete_records(self) -> None:
        """An AdminClient deleteRecords on the retained data partition: the log start moves
        inside the first segment, at most to the high watermark."""
        if self.deleted_topic == DATA[0] or len(self.logs[DATA[0]].bases()) < 2:
            return
        log = self.logs[DATA[0]]
        first, nxt = log.bases()[0], log.bases()[1]
        if log.log_start < nxt - 1:
            log.advance_start(self.rng.randint(max(first, log.log_start) + 1, nxt - 1))

    # -- KRaft snapshots (KafkaRaftClient -> KafkaMetadataLog)
    def snapshot(self) -> None:
        from kmeta.ops.snapshot import write_snapshot_at

        log = self.logs[METADATA]
        # kmeta writes the image (it refuses a dir whose .lock is held: ours) to scratch;
        # the bytes then land as FileRawSnapshotWriter lands them: .checkpoint.part,
        # forced, moved to the final name.
        with tempfile.TemporaryDirectory(prefix="kafka_like-") as scratch:
            made = write_snapshot_at(log.path, scratch, durable=False).path
            part = log.path / f"{made.name[:-len('.checkpoint')]}-{self.rng.randrange(10**9)}" \
                              ".checkpoint.part"
            with open(part, "wb") as f:
                f.write(made.read_bytes())
                f.flush()
                os.fsync(f.fileno())
            os.replace(part, log.path / made.name)
            fsync_directory(log.path)
        self.stats["snapshots"] += 1
        snaps = sorted(log.path.glob("*.checkpoint"),
                       key=lambda p: (int(p.name[21:31]), int(p.name[:20])))
        if len(snaps) <= self.keep_snapshots:
            return
        oldest_kept = snaps[-self.keep_snapshots]
        # KafkaMetadataLog.deleteBeforeSnapshot: the log start up to the snapshot, the
        # segments below it deleted (LocalLog.deleteSegmentFiles) ...
        log.advance_start(int(oldest_kept.name[:20]))
        self.delete_segments(log, log.deletable())
        # ... then removeSnapshots: Snapshots.markForDelete, deleteIfExists later.
        due = time.monotonic() + self.delete_delay
        for old in snaps[:-self.keep_snapshots]:
            dst = old.with_name(old.name + ".deleted")
            os.replace(old, dst)
            self.pending.append((due, dst))
            self.stats["deleted_snapshots"] += 1

    # -- topic deletion (LogManager.asyncDelete)
    def delete_topic(self, name: str) -> None:
        """The controller commits a RemoveTopicRecord; the broker, replaying it, deletes
        the partition's log (BrokerMetadataPublisher -> ReplicaManager.applyDelta ->
        LogManager.asyncDelete)."""
        meta = self.logs[METADATA]
        topic_id = (self.logs[name].path / "partition.metadata").read_text() \
            .split("topic_id:")[1].strip()
        meta.append(build_batch(meta.next_offset, [(None, encode_metadata(
            "REMOVE_TOPIC_RECORD", 0, {"topicId": topic_id}))], leader_epoch=meta.epoch,
            base_timestamp=int(time.time() * 1000)))
        log = self.logs[name]
        log.deactivate()
        log.close_files()
        self.deleted_topic = name
        target = self.dir / f"{name}.{uuid.uuid4().hex}-delete"
        os.replace(log.path, target)
        fsync_directory(self.dir)
        self.write_checkpoints()
        self.pending.append((time.monotonic() + self.delete_delay, target))
        self.stats["topics_deleted"] += 1

    def run_pending(self, everything: bool = False) -> None:
        now = time.monotonic()
        keep = []
        for due, path in self.pending:
            if everything or due <= now:
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
            else:
                keep.append((due, path))
        self.pending = keep

    # -- the loop
    def stop(self, *_: Any) -> None:
        self._stop = True

    def run(self, seconds: float | None) -> None:
        begin = time.monotonic()
        end = None if seconds is None else begin + seconds
        next_ckpt = next_snap = next_del = begin
        topic_at = None if self.delete_topic_after is None else begin + self.delete_topic_after
        interval = 1.0 / self.rate
        next_batch = begin
        while not self._stop and (end is None or time.monotonic() < end):
            now = time.monotonic()
            if now >= next_batch:
                self.append_one()
                next_batch += interval
                if next_batch < now - 1:  # behind by a second: do not try to catch up
                    next_batch = now
            if now >= next_ckpt:
                self.write_checkpoints()
                next_ckpt = now + self.checkpoint_interval
            if now >= next_snap:
                self.snapshot()
                next_snap = time.monotonic() + self.snapshot_interval
            if now >= next_del:
                self.delete_records()
                next_del = now + self.delete_records_interval
            if topic_at is not None and now >= topic_at and self.deleted_topic is None:
                self.delete_topic(DATA[0])
            self.run_pending()
            pause = next_batch - time.monotonic()
            if pause > 0:
                time.sleep(min(pause, 0.05))

    def shutdown(self) -> None:
        """A controlled shutdown: LogSegment.close trims the active indexes, the producer
        state is snapshotted at the log end, the checkpoints are written, and
        LogManager.shutdown leaves .kafka_cleanshutdown (CleanShutdownFileHandler.write)."""
        for name, log in self.logs.items():
            if name == self.deleted_topic:
                continue
            log.deactivate()
            log.close_files()
            if not log.file(log.next_offset, "snapshot").exists():
                log.write_producer_snapshot(log.next_offset)
            log.recovery_point = log.next_offset
        self.run_pending(everything=True)
        self.write_checkpoints()
        write_checkpoint(self.dir / ".kafka_cleanshutdown",
                         b'{"version":0,"brokerEpoch":9}')
        (self.dir / ".kafka_cleanshutdown.tmp").unlink(missing_ok=True)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


# ---------------------------------------------------------------------- the test face


def copy_real(real: str | os.PathLike[str], into: str | os.PathLike[str]) -> Path:
    """A writable copy of ``<real>/kraft41-offsets/kafka-data`` at ``into``."""
    src = Path(real) / "kraft41-offsets" / "kafka-data"
    dst = Path(into)
    shutil.copytree(src, dst)
    for p in [dst, *dst.rglob("*")]:
        p.chmod(p.stat().st_mode | 0o200)
    return dst


class LiveBroker:
    """Run the writer on ``data_dir`` in a subprocess for the span of a ``with`` block.

    ``stop()`` (or leaving the block) asks it to stop with SIGTERM and waits: it shuts down as
    Kafka does.  ``kill()`` sends SIGKILL instead, leaving whatever a crash leaves.
    """

    def __init__(self, data_dir: str | os.PathLike[str], *, lock: str = "posix",
                 seed: int = 0, rate: float = 600.0, delete_topic_after: float | None = None,
                 clean_shutdown: bool = True) -> None:
        self.dir = Path(data_dir)
        self.args = [sys.executable, "-m", "tests.live.kafka_like", str(self.dir),
                     "--lock", lock, "--seed", str(seed), "--rate", str(rate)]
        if delete_topic_after is not None:
            self.args += ["--delete-topic-after", str(delete_topic_after)]
        if not clean_shutdown:
            self.args.append("--no-clean-shutdown")
        self.proc: subprocess.Popen[str] | None = None
        self.stats: dict[str, Any] = {}

    def __enter__(self) -> LiveBroker:
        root = Path(__file__).resolve().parents[2]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(root), *filter(None, [env.get("PYTHONPATH")])])
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, text=True, env=env,
                                     cwd=root)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith(READY):
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError(f"the writer did not start (exit {self.proc.returncode}): "
                               f"{line!r}")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self) -> dict[str, Any]:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            out, _ = self.proc.communicate(timeout=30)
            if self.proc.returncode != 0:
                raise RuntimeError(f"the writer exited {self.proc.returncode}")
            self.stats = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
        return self.stats

    def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            self.proc.wait()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid


class Planted(NamedTuple):
    """Where :func:`plant_corruption` flipped a byte: what kmeta verify must name (F001)."""

    file: Path
    position: int  # the damaged batch's byte position in the file
    offset: int  # its base offset


def plant_corruption(data_dir: str | os.PathLike[str], *, timeout: float = 20.0) -> Planted:
    """Flip a byte in the records of the first batch of a closed segment of the partition
    retention spares; waits (up to ``timeout``) for the writer to roll it once."""
    part = Path(data_dir) / SPARED
    deadline = time.monotonic() + timeout
    while True:
        logs = sorted(part.glob("*.log"))
        if len(logs) >= 2:
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"{part} has not rolled a segment in {timeout}s")
        time.sleep(0.1)
    target = logs[0]
    with open(target, "r+b") as f:
        head = f.read(HEADER_SIZE)
        f.seek(HEADER_SIZE + 3)  # inside the first record, covered by the batch CRC
        byte = f.read(1)
        f.seek(HEADER_SIZE + 3)
        f.write(bytes([byte[0] ^ 0x5A]))
    return Planted(target, 0, HEADER.unpack_from(head, 0)[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.live.kafka_like",
                                 description="Write a copy of a Kafka data dir as a broker "
                                             "does (modifies DIR in place).")
    ap.add_argument("dir", help="a data dir copied from kraft41-offsets/kafka-data; with "
                                "--copy-from, created from it")
    ap.add_argument("--copy-from", help="KMETA_REAL_DATA root to copy the data dir from")
    ap.add_argument("--seconds", type=float, default=None, help="stop after N seconds "
                                                                "(default: at SIGTERM/SIGINT)")
    ap.add_argument("--lock", choices=("posix", "flock"), default="posix")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rate", type=float, default=600.0, help="batches a second")
    ap.add_argument("--delete-topic-after", type=float, default=None,
                    help=f"delete topic {DATA[0]} after N seconds")
    ap.add_argument("--no-clean-shutdown", action="store_true",
                    help="stop without trimming indexes or writing .kafka_cleanshutdown")
    args = ap.parse_args(argv)
    if args.copy_from:
        copy_real(args.copy_from, args.dir)
    w = Writer(args.dir, lock=args.lock, seed=args.seed, rate=args.rate,
               delete_topic_after=args.delete_topic_after)
    signal.signal(signal.SIGTERM, w.stop)
    signal.signal(signal.SIGINT, w.stop)
    w.start()
    print(f"{READY} pid {os.getpid()}", flush=True)
    w.run(args.seconds)
    if not args.no_clean_shutdown:
        w.shutdown()
    print(json.dumps(w.stats), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
