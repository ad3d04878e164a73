"""Writing the files of a Kafka log directory: safely, and in Kafka's own layout.

Everything kmeta writes goes through here: repaired copies, fixtures, benchmarks.

* :func:`atomic_write` / :func:`atomic_open` — a temporary file in the target's directory,
  written, fsynced, renamed over the target, then the directory fsynced.  An existing
  target is refused unless ``overwrite=True``.
* :class:`SegmentWriter` — appends record batches to ``<20-digit base offset>.log``
  segments, rolls to a new segment at a size limit, and writes each segment's sparse
  ``.index`` / ``.timeindex`` (and ``.txnindex`` when given aborted transactions).  It
  streams: a batch goes to disk when appended, and only the index entries (one per
  ``index_interval_bytes`` of log) and the leader-epoch entries stay in memory.
* :class:`SnapshotWriter` / :func:`write_snapshot` — KRaft snapshots
  ``<20-digit end offset>-<10-digit epoch>.checkpoint``, and
  :func:`write_bootstrap_checkpoint` — ``bootstrap.checkpoint``.
* ``write_*`` for the small files (leader-epoch-checkpoint, quorum-state,
  partition.metadata, meta.properties, offset checkpoints, producer snapshots), rendered by
  the builders of :mod:`kmeta.formats.textfiles` and :mod:`kmeta.formats.producer_state`.
* :func:`noop_batch` for the NoOp heartbeat batches that make up most of a KRaft log
  (other batches come from :func:`kmeta.formats.batch.build_batch`).

Facts from Kafka (``apache/kafka``), read for behaviour only:

* ``storage/.../log/LogSegment.append``: after ``index.interval.bytes`` (4096 by default)
  of log since the last entry, the next batch is indexed — offset index entry (its *last*
  offset, its byte position), time index entry (largest timestamp so far, the last
  offset of the batch that holds it).  ``TimeIndex.maybeAppend`` only appends a larger
  timestamp; a segment that is rolled or closed gets a final time index entry.
* ``UnifiedLog.maybeRoll``: a new segment starts, named for the offset of the batch that
  did not fit, when the active segment is not empty and the batch would take it past
  ``segment.bytes``.
* ``LeaderEpochFileCache.assign``: an epoch entry ``(partitionLeaderEpoch, baseOffset)`` for
  each batch whose epoch is higher than the last one.
* ``raft/.../snapshot/RecordsSnapshotWriter``, ``FileRawSnapshotWriter``: batch offsets
  in a snapshot count from 0 and carry the snapshot's epoch; the first batch is a control
  batch with the SnapshotHeader record (plus KRaftVersion and Voters records when
  kraft.version >= 1), the last a control batch with the SnapshotFooter; the file is
  written as ``<id>-<random>.checkpoint.part``, forced to disk and renamed.
* ``metadata/.../util/BatchFileWriter`` and ``bootstrap/BootstrapDirectory``:
  ``bootstrap.checkpoint`` is the same layout at offset 0, epoch 0, with
  ``lastContainedLogTimestamp`` 0, written to ``bootstrap.checkpoint.tmp`` and moved.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from kmeta.formats.batch import (
    CRC_POSITION,
    CRC_START,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    build_batch,
    encode_record,
)
from kmeta.formats.checksum import crc32c
from kmeta.formats.filenames import segment_file_name, snapshot_file_name, snapshot_part_name
from kmeta.formats.indexes import (
    AbortedTxn,
    OffsetPosition,
    TimestampOffset,
    build_offset_index,
    build_time_index,
    build_txn_index,
)
from kmeta.formats.payload import NOOP_VALUE, encode_control
from kmeta.formats.producer_state import ProducerSnapshot, build_producer_snapshot
from kmeta.formats.textfiles import (
    METADATA_TOPIC_ID,
    EpochEntry,
    LeaderEpochCheckpoint,
    MetaProperties,
    OffsetCheckpoint,
    PartitionMetadata,
    QuorumState,
    TopicPartitionOffset,
    build_leader_epoch_checkpoint,
    build_meta_properties,
    build_offset_checkpoint,
    build_partition_metadata,
    build_quorum_state,
)

#: Kafka's defaults: ``log.segment.bytes`` / ``metadata.log.segment.bytes`` (1 GiB) and
#: ``index.interval.bytes`` (4 KiB).
DEFAULT_SEGMENT_BYTES = 1 << 30
DEFAULT_INDEX_INTERVAL_BYTES = 4096
#: Largest records section :class:`SnapshotWriter` puts in one batch (Kafka's
#: ``RecordsSnapshotWriter`` default ``maxBatchSize`` is 1024 bytes; the controller passes
#: its own, larger, limit).
DEFAULT_SNAPSHOT_BATCH_BYTES = 8192

_CRC = struct.Struct(">I")
_NOOP_RECORD = encode_record(0, 0, None, NOOP_VALUE)
_NOOP_LENGTH = HEADER_SIZE - LOG_OVERHEAD + len(_NOOP_RECORD)


# ----------------------------------------------------------------------- atomic files


def fsync_directory(path: str | os.PathLike[str]) -> None:
    """Make a rename or a new file in ``path`` durable (a no-op where directories cannot be
    opened, as on Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a directory; the rename still happened
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], *, overwrite: bool = False,
                durable: bool = True, temp_name: str | None = None,
                buffering: int = -1) -> Iterator[BinaryIO]:
    """Open a temporary file beside ``path`` for writing; on a clean exit it is fsynced and
    renamed to ``path`` (and the directory fsynced); on an exception it is removed and
    ``path`` is left as it was.

    Refuses (``FileExistsError``) to replace an existing ``path`` unless ``overwrite``.
    ``temp_name`` names the temporary file (Kafka's own names, e.g.
    ``bootstrap.checkpoint.tmp``); by default it is a hidden random name.  ``durable=False``
    skips the fsyncs (for scratch output where speed matters more than crash safety);
    ``buffering`` is passed to ``open``.
    """
    target = Path(path)
    directory = target.parent
    if not overwrite and target.exists():
        raise FileExistsError(f"{target} exists; pass overwrite=True to replace it")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = directory / (temp_name or f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            # 0o666 less the umask, like any file Kafka creates (mkstemp would give 0o600).
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            if temp_name is not None:
                raise
    handle = os.fdopen(fd, "wb", buffering)
    try:
        with handle:
            yield handle
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        if overwrite:
            os.replace(tmp, target)
        else:
            _rename_no_replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    if durable:
        fsync_directory(directory)


def _rename_no_replace(tmp: Path, target: Path) -> None:
    """Move ``tmp`` to ``target`` unless ``target`` exists, atomically where the file
    system can hard-link (``link`` fails on an existing name; then the temp name goes)."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise FileExistsError(f"{target} appeared while it was being written") from None
    except OSError:  # no hard links here (some network and FUSE file systems)
        if target.exists():
            raise FileExistsError(f"{target} appeared while it was being written") from None
        os.replace(tmp, target)
        return
    tmp.unlink()


def atomic_write(path: str | os.PathLike[str], data: bytes | bytearray | memoryview, *,
                 overwrite: bool = False, durable: bool = True) -> Path:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_open`); returns the path."""
    with atomic_open(path, overwrite=overwrite, durable=durable) as f:
        f.write(data)
    return Path(path)


# ----------------------------------------------------------------------- batches


def noop_batch(offset: int, leader_epoch: int, timestamp: int) -> bytes:
    """The batch a KRaft controller appends every ``metadata.max.idle.interval.ms``: one
    NoOpRecord v0, alone (equal to ``build_batch(offset, [(None, noop value)], ...)``, with
    the record encoded once: a 1 GiB fixture is mostly these)."""
    head = bytearray(HEADER.pack(offset, _NOOP_LENGTH, leader_epoch, 2, 0, 0, 0, timestamp,
                                 timestamp, -1, -1, -1, 1))
    _CRC.pack_into(head, CRC_POSITION, crc32c(_NOOP_RECORD, crc32c(head[CRC_START:])))
    return bytes(head) + _NOOP_RECORD


@dataclass(frozen=True, slots=True)
class BatchInfo:
    """The header facts the writers need, read from a built batch."""

    base_offset: int
    last_offset: int
    leader_epoch: int
    max_timestamp: int
    size: int

    @classmethod
    def of(cls, batch: bytes | bytearray | memoryview) -> BatchInfo:
        if len(batch) < HEADER_SIZE:
            raise ValueError(f"{len(batch)} bytes cannot hold a batch header")
        f = HEADER.unpack_from(batch, 0)
        if f[3] != 2:
            raise ValueError(f"only v2 batches can be appended, not magic {f[3]}")
        if f[1] + LOG_OVERHEAD != len(batch):
            raise ValueError(f"batch length field {f[1]} does not match its "
                             f"{len(batch)} bytes")
        return cls(f[0], f[0] + f[6], f[2], f[8], len(batch))


# ----------------------------------------------------------------------- segments


@dataclass
class SegmentInfo:
    """One segment written by :class:`SegmentWriter`."""

    base_offset: int
    path: Path
    size: int = 0
    batches: int = 0
    last_offset: int = -1
    offset_index: list[OffsetPosition] = field(default_factory=list, repr=False)
    time_index: list[TimestampOffset] = field(default_factory=list, repr=False)
    aborted: list[AbortedTxn] = field(default_factory=list, repr=False)


class Placement(NamedTuple):
    """Where :meth:`SegmentWriter.append` put a batch."""

    segment: int  # base offset of the segment
    position: int  # byte position in that segment's .log
    base_offset: int
    last_offset: int


class SegmentWriter:
    """Append v2 batches to the segments of one partition directory.

    Batches must come in offset order with no overlap (a gap, as a compacted log has, is
    allowed).  Each segment is written to a temporary file and renamed into place when it
    is rolled or the writer closes, so a half-written segment never carries a real name;
    its ``.index`` and ``.timeindex`` are written then too.  Use as a context manager, or
    call :meth:`close`.  ``epochs`` holds the leader-epoch entries the batches imply
    (what Kafka's ``leader-epoch-checkpoint`` would hold); :meth:`write_leader_epoch_checkpoint`
    writes them.
    """

    def __init__(self, directory: str | os.PathLike[str], *, base_offset: int = 0,
                 segment_bytes: int = DEFAULT_SEGMENT_BYTES,
                 index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
                 overwrite: bool = False, durable: bool = True,
                 buffer_size: int = 1 << 20) -> None:
        if segment_bytes < HEADER_SIZE:
            raise ValueError(f"segment_bytes {segment_bytes} cannot hold a batch")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.segment_bytes = segment_bytes
        self.index_interval_bytes = index_interval_bytes
        self.overwrite = overwrite
        self.durable = durable
        self.buffer_size = buffer_size
        self.segments: list[SegmentInfo] = []
        self.epochs: list[EpochEntry] = []
        self.log_end_offset = base_offset
        self._file: contextlib.ExitStack | None = None
        self._out: BinaryIO | None = None
        self._since_index = 0
        self._max_ts = -1
        self._max_ts_offset = -1
        self._closed = False

    # -- context manager
    def __enter__(self) -> SegmentWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self._abort()

    @property
    def active(self) -> SegmentInfo | None:
        return self.segments[-1] if self._out is not None else None

    def _open(self, base_offset: int) -> None:
        info = SegmentInfo(base_offset, self.directory / segment_file_name(base_offset))
        stack = contextlib.ExitStack()
        self._out = stack.enter_context(atomic_open(info.path, overwrite=self.overwrite,
                                                    durable=self.durable,
                                                    buffering=self.buffer_size))
        self._file = stack
        self.segments.append(info)
        self._since_index = 0
        self._max_ts = -1
        self._max_ts_offset = -1

    def append(self, batch: bytes | bytearray | memoryview) -> Placement:
        """Append one complete v2 batch; rolls first if it would overflow the segment."""
        if self._closed:
            raise ValueError("the writer is closed")
        size = len(batch)
        if size < HEADER_SIZE:
            raise ValueError(f"{size} bytes cannot hold a batch header")
        f = HEADER.unpack_from(batch, 0)
        base, epoch, max_ts = f[0], f[2], f[8]
        last = base + f[6]
        if f[3] != 2 or f[1] + LOG_OVERHEAD != size:
            BatchInfo.of(batch)  # raises, saying what is wrong
        if base < self.log_end_offset:
            raise ValueError(f"batch at offset {base} is below the log end offset "
                             f"{self.log_end_offset}")
        seg = self.segments[-1] if self._out is not None else None
        if seg is not None and seg.size and seg.size + size > self.segment_bytes:
            self.roll()
            seg = None
        if seg is None:
            self._open(base)
            seg = self.segments[-1]
        position = seg.size
        self._out.write(batch)  # type: ignore[union-attr]
        # LogSegment.append: index the batch once enough bytes precede it.
        if max_ts > self._max_ts:
            self._max_ts = max_ts
            self._max_ts_offset = last
        if self._since_index > self.index_interval_bytes:
            seg.offset_index.append(OffsetPosition(last, position))
            self._time_entry(seg)
            self._since_index = 0
        self._since_index += size
        seg.size = position + size
        seg.batches += 1
        seg.last_offset = last
        self.log_end_offset = last + 1
        if epoch >= 0 and (not self.epochs or epoch > self.epochs[-1].epoch):
            self.epochs.append(EpochEntry(epoch, base))
        return Placement(seg.base_offset, position, base, last)

    def extend(self, batches: Iterable[bytes]) -> None:
        for b in batches:
            self.append(b)

    def add_aborted_txn(self, entry: AbortedTxn) -> None:
        """Record an aborted transaction in the active segment's ``.txnindex``."""
        seg = self.active
        if seg is None:
            raise ValueError("no active segment: append the abort marker first")
        seg.aborted.append(entry)

    def _time_entry(self, seg: SegmentInfo) -> None:
        last = seg.time_index[-1].timestamp if seg.time_index else -1
        if self._max_ts > last:
            seg.time_index.append(TimestampOffset(self._max_ts, self._max_ts_offset))

    def roll(self) -> None:
        """Close the active segment (writing its indexes); the next batch starts a new one."""
        seg = self.active
        if seg is None:
            return
        self._time_entry(seg)  # onBecomeInactiveSegment
        assert self._file is not None
        self._file.close()
        self._file = None
        self._out = None
        self._write_indexes(seg)

    def open_segment(self, base_offset: int) -> None:
        """Close the active segment and start one named ``base_offset`` (at or above the
        log end offset): Kafka's cleaner names a cleaned segment after its first source
        segment, whose first batches may be gone."""
        if base_offset < self.log_end_offset:
            raise ValueError(f"segment {base_offset} is below the log end offset "
                             f"{self.log_end_offset}")
        self.roll()
        self._open(base_offset)
        self.log_end_offset = base_offset

    def roll_empty(self) -> SegmentInfo:
        """Close the active segment and create an empty one at the log end offset, as
        Kafka leaves the directory right after a roll (empty ``.log`` and indexes)."""
        self.roll()
        self._open(self.log_end_offset)
        seg = self.segments[-1]
        self.roll()
        return seg

    def _write_indexes(self, seg: SegmentInfo) -> None:
        base = seg.base_offset
        opts = {"overwrite": self.overwrite, "durable": self.durable}
        atomic_write(self.directory / segment_file_name(base, "index"),
                     build_offset_index(seg.offset_index, base), **opts)
        atomic_write(self.directory / segment_file_name(base, "timeindex"),
                     build_time_index(seg.time_index, base), **opts)
        if seg.aborted:
            atomic_write(self.directory / segment_file_name(base, "txnindex"),
                         build_txn_index(seg.aborted), **opts)

    def close(self) -> None:
        if self._closed:
            return
        self.roll()
        self._closed = True

    def _abort(self) -> None:
        self._closed = True
        if self._file is not None:
            with contextlib.suppress(Exception):
                self._file.__exit__(RuntimeError, RuntimeError("aborted"), None)
            self._file = None
            self._out = None

    def write_leader_epoch_checkpoint(self) -> Path:
        return write_leader_epoch_checkpoint(self.directory, self.epochs,
                                             overwrite=self.overwrite, durable=self.durable)


def write_segments(directory: str | os.PathLike[str], batches: Iterable[bytes], *,
                   base_offset: int = 0, segment_bytes: int = DEFAULT_SEGMENT_BYTES,
                   index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
                   overwrite: bool = False, durable: bool = True) -> SegmentWriter:
    """Write ``batches`` as segments plus ``leader-epoch-checkpoint``; returns the (closed)
    writer, whose ``segments`` and ``epochs`` say what was written."""
    with SegmentWriter(directory, base_offset=base_offset, segment_bytes=segment_bytes,
                       index_interval_bytes=index_interval_bytes, overwrite=overwrite,
                       durable=durable) as w:
        w.extend(batches)
    w.write_leader_epoch_checkpoint()
    return w


# ----------------------------------------------------------------------- snapshots


def _control_batch(offset: int, epoch: int, timestamp: int,
                   records: Sequence[tuple[str, dict[str, Any]]]) -> bytes:
    return build_batch(offset, [encode_control(name, data) for name, data in records],
                       leader_epoch=epoch, base_timestamp=timestamp, control=True)


class SnapshotWriter:
    """Write one KRaft snapshot, streaming its records into batches.

    ``append`` takes metadata record values (as :func:`~kmeta.formats.payload.encode_metadata`
    makes them).  ``close`` appends the SnapshotFooter batch and renames the
    ``.checkpoint.part`` file to ``<end offset>-<epoch>.checkpoint`` (``name`` overrides the
    final file name, e.g. ``bootstrap.checkpoint``).  ``kraft_version`` (>= 1) and
    ``voters`` (a VotersRecord's fields) go into the header batch, as Kafka 3.9+ writes them.
    """

    def __init__(self, directory: str | os.PathLike[str], end_offset: int, epoch: int, *,
                 last_contained_log_timestamp: int, timestamp: int,
                 kraft_version: int | None = None, voters: dict[str, Any] | None = None,
                 compression: int = 0, max_batch_bytes: int = DEFAULT_SNAPSHOT_BATCH_BYTES,
                 max_batch_records: int | None = None, name: str | None = None,
                 overwrite: bool = False, durable: bool = True) -> None:
        self.directory = Path(directory)
        self.end_offset = end_offset
        self.epoch = epoch
        self.timestamp = timestamp
        self.compression = compression
        self.max_batch_bytes = max_batch_bytes
        self.max_batch_records = max_batch_records
        self.path = self.directory / (name or snapshot_file_name(end_offset, epoch))
        temp = None if name else \
            snapshot_part_name(end_offset, epoch, f"{os.getpid()}{id(self) % 10**9}")
        if name == "bootstrap.checkpoint":
            temp = "bootstrap.checkpoint.tmp"
        self._stack = contextlib.ExitStack()
        self._out = self._stack.enter_context(atomic_open(self.path, overwrite=overwrite,
                                                          durable=durable, temp_name=temp))
        self.offset = 0
        self.records = 0
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        header: list[tuple[str, dict[str, Any]]] = [
            ("SNAPSHOT_HEADER", {"version": 0,
                                 "lastContainedLogTimestamp": last_contained_log_timestamp})]
        if kraft_version:
            header.append(("KRAFT_VERSION", {"version": 0, "kRaftVersion": kraft_version}))
            if voters is not None:
                header.append(("KRAFT_VOTERS", {"version": 0, **voters}))
        self._write(_control_batch(0, epoch, timestamp, header), len(header))

    def _write(self, batch: bytes, count: int) -> None:
        self._out.write(batch)
        self.offset += count

    def append(self, value: bytes) -> None:
        size = len(value) + 8  # the record framing around a value is a few bytes
        if self._pending and (self._pending_bytes + size > self.max_batch_bytes or (
                self.max_batch_records and len(self._pending) >= self.max_batch_records)):
            self.flush()
        self._pending.append(value)
        self._pending_bytes += size
        self.records += 1

    def extend(self, values: Iterable[bytes]) -> None:
        for v in values:
            self.append(v)

    def flush(self) -> None:
        """End the current batch."""
        if not self._pending:
            return
        batch = build_batch(self.offset, [(None, v) for v in self._pending],
                            leader_epoch=self.epoch, base_timestamp=self.timestamp,
                            compression=self.compression)
        self._write(batch, len(self._pending))
        self._pending = []
        self._pending_bytes = 0

    def close(self) -> Path:
        self.flush()
        self._write(_control_batch(self.offset, self.epoch, self.timestamp,
                                   [("SNAPSHOT_FOOTER", {"version": 0})]), 1)
        self._stack.close()
        return self.path

    def abort(self) -> None:
        with contextlib.suppress(Exception):
            self._stack.__exit__(RuntimeError, RuntimeError("aborted"), None)

    def __enter__(self) -> SnapshotWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def write_snapshot(directory: str | os.PathLike[str], end_offset: int, epoch: int,
                   values: Iterable[bytes], *, last_contained_log_timestamp: int,
                   timestamp: int, **kw: Any) -> Path:
    """Write a KRaft snapshot of metadata record ``values``; returns its path."""
    with SnapshotWriter(directory, end_offset, epoch,
                        last_contained_log_timestamp=last_contained_log_timestamp,
                        timestamp=timestamp, **kw) as w:
        w.extend(values)
    return w.path


def write_bootstrap_checkpoint(directory: str | os.PathLike[str], values: Iterable[bytes], *,
                               timestamp: int, overwrite: bool = False,
                               durable: bool = True) -> Path:
    """``bootstrap.checkpoint``: SnapshotHeader (lastContainedLogTimestamp 0), the records
    (metadata.version first) in one batch, SnapshotFooter — all at epoch 0."""
    return write_snapshot(directory, 0, 0, values, last_contained_log_timestamp=0,
                          timestamp=timestamp, name="bootstrap.checkpoint",
                          max_batch_bytes=1 << 30, overwrite=overwrite, durable=durable)


# ----------------------------------------------------------------------- small files


def write_leader_epoch_checkpoint(directory: str | os.PathLike[str],
                                  entries: Iterable[EpochEntry] | LeaderEpochCheckpoint, *,
                                  overwrite: bool = False, durable: bool = True) -> Path:
    value = entries if isinstance(entries, LeaderEpochCheckpoint) else \
        LeaderEpochCheckpoint(tuple(entries))
    return atomic_write(Path(directory) / "leader-epoch-checkpoint",
                        build_leader_epoch_checkpoint(value), overwrite=overwrite,
                        durable=durable)


def write_quorum_state(directory: str | os.PathLike[str], value: QuorumState, *,
                       overwrite: bool = False, durable: bool = True) -> Path:
    return atomic_write(Path(directory) / "quorum-state", build_quorum_state(value),
                        overwrite=overwrite, durable=durable)


def write_partition_metadata(directory: str | os.PathLike[str], topic_id: str, *,
                             overwrite: bool = False, durable: bool = True) -> Path:
    return atomic_write(Path(directory) / "partition.metadata",
                        build_partition_metadata(PartitionMetadata(topic_id)),
                        overwrite=overwrite, durable=durable)


def write_meta_properties(directory: str | os.PathLike[str], value: MetaProperties, *,
                          overwrite: bool = False, durable: bool = True) -> Path:
    return atomic_write(Path(directory) / "meta.properties", build_meta_properties(value),
                        overwrite=overwrite, durable=durable)


def write_offset_checkpoint(path: str | os.PathLike[str],
                            entries: Iterable[TopicPartitionOffset] | OffsetCheckpoint, *,
                            overwrite: bool = False, durable: bool = True) -> Path:
    """One of the offset checkpoint files (``path`` names which); an
    :class:`OffsetCheckpoint` with ``header_lines=0`` writes the empty file Kafka creates."""
    value = entries if isinstance(entries, OffsetCheckpoint) else \
        OffsetCheckpoint(tuple(entries))
    return atomic_write(path, build_offset_checkpoint(value), overwrite=overwrite,
                        durable=durable)


def write_producer_snapshot(directory: str | os.PathLike[str], offset: int,
                            value: ProducerSnapshot | None = None, *,
                            overwrite: bool = False, durable: bool = True) -> Path:
    """``<offset>.snapshot`` (Kafka writes one at the log end offset on roll and shutdown);
    ``value`` None writes the empty one (no producers)."""
    return atomic_write(Path(directory) / segment_file_name(offset, "snapshot"),
                        build_producer_snapshot(value or ProducerSnapshot()),
                        overwrite=overwrite, durable=durable)


__all__ = [
    "DEFAULT_INDEX_INTERVAL_BYTES",
    "DEFAULT_SEGMENT_BYTES",
    "METADATA_TOPIC_ID",
    "BatchInfo",
    "Placement",
    "SegmentInfo",
    "SegmentWriter",
    "SnapshotWriter",
    "atomic_open",
    "atomic_write",
    "fsync_directory",
    "noop_batch",
    "write_bootstrap_checkpoint",
    "write_leader_epoch_checkpoint",
    "write_meta_properties",
    "write_offset_checkpoint",
    "write_partition_metadata",
    "write_producer_snapshot",
    "write_quorum_state",
    "write_segments",
    "write_snapshot",
]
