"""One partition dir as Kafka's ``LogLoader`` opens it (``LogLoader.load``, Scala in 3.5
to 3.9, Java in trunk 2024-10; the same steps in every version kmeta knows):

1. ``removeTempFilesAndCollectSwapFiles``: ``.deleted`` files are deleted, ``.cleaned``
   files too, and so is every ``.swap`` at or above the least ``.cleaned`` offset (a split
   cut short, KAFKA-6264); the other ``.swap`` segments replace the files whose offsets
   they cover (``[swap base, swap next offset)``), then lose their suffix.
2. ``loadSegmentFiles``: an index file without its ``.log`` is deleted; a segment whose
   ``.index`` is missing, or whose ``.txnindex`` holds an entry ending below the segment
   (``TransactionIndex.sanityCheck``), is recovered, on a clean start too.  The contents
   of offset and time indexes are not checked here (they are rebuilt only for segments
   recovered); a missing ``.timeindex`` is created empty.
3. ``recoverLog`` (not for ``-delete`` dirs, whose log end and recovery point are 0):
   after an unclean shutdown, the segment holding the recovery point and every later one
   are recovered (``LogSegment.recover``: batch by batch, CRC checked, indexes rebuilt);
   at the first batch it rejects the segment is truncated and every later unflushed
   segment deleted.  Then, clean or not, the last segment's next offset is read
   (``readNextOffset``) and a log end below the log start checkpoint deletes every
   segment.
4. The log start is ``max(checkpoint, first segment base)``, or the checkpoint's for a
   topic with remote storage (3.6+, :mod:`.configs`); the producer state is rebuilt to
   the log end, as before each segment recovered (:mod:`.producers`); then
   ``UnifiedLog.initializeTopicId`` reads ``partition.metadata``.

An exception that is not an IOException escapes the load, and the broker does not start
(``PartitionStartup.load_failure``); an IOException takes the log dir offline
(``PartitionStartup.offline``, or OSError/KmetaError raised to the caller).  Besides the
ones recovery throws (below): a batch header whose size field is below 14 where Kafka
walks batches without recovering them (``FileLogInputStream``: the producer-state
rebuilds, ``readNextOffset`` of an unrecovered last segment or of a ``.swap``), a
``.txnindex`` entry above version 0, and the files :mod:`.kafka_files` judges (names,
``leader-epoch-checkpoint``, ``partition.metadata``).

Inside ``LogSegment.recover`` (the same in 3.5 to 3.9, Scala, and trunk 2024-10, Java):

* a batch whose last offset is not within ``[base, base + Int.MaxValue]`` throws
  ``LogSegmentOffsetOverflowException`` (``ensureOffsetInRange``): the legacy overflow of
  KAFKA-6264.  ``retryOnOffsetOverflow`` splits the segment
  (``LocalLog.splitOverflowedSegment``: a new segment at each batch that leaves the reach
  of the one before, named after its first batch) and runs the whole step again.  The
  split refuses a segment whose last batch is in reach (``hasOverflow``) and fails on a
  batch wider than Int.MaxValue or a torn tail: the exception escapes and the broker
  does not start.  Only recovered segments are checked: after a clean shutdown an
  overflowed segment with its indexes loads as it is.
* there is no per-batch order check: offsets going backwards are caught only where an
  index entry is rebuilt (every ``index.interval.bytes``): ``OffsetIndex.append`` refuses
  an offset not above the last, ``TimeIndex.maybeAppend`` one below the last.  In
  ``recoverLog`` that ``InvalidOffsetException`` empties the segment (``truncateTo``
  its base) and the later segments are deleted (3.5 to 3.9 catch only it; trunk catches
  IOException too); in ``loadSegmentFiles`` (a missing index rebuilt) it escapes and the
  broker does not start.
* every v2 batch whose leader epoch is above the cache's latest is assigned to the
  leader-epoch cache, which was read from ``leader-epoch-checkpoint`` through the same
  ``assign``; after recovery ``truncateFromEnd(log end)`` drops entries at or past the
  log end and ``truncateFromStart(log start checkpoint)`` those at or below it, the last
  of them moved up to it (3.8+ flush the file asynchronously: the same entries).  A
  message format before v2 deletes the file (:mod:`.configs`, 3.5 to 3.9 only).

Where recovery cuts is the one table of the cut (:data:`kmeta.storage.segments.
RECOVERY_CUTS`, which ``repair`` uses too), found by the same scan.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kmeta.errors import FormatError, KmetaError
from kmeta.findings import Finding
from kmeta.formats import batch as _B
from kmeta.formats.filenames import (
    OFFSET_FILE_EXTENSIONS,
    FileKind,
    PartitionDirName,
    classify,
    segment_file_name,
)
from kmeta.formats.indexes import OFFSET_INDEX_STRUCT, parse_txn_index
from kmeta.formats.primitives import derive_struct
from kmeta.formats.runs import Walked, walk
from kmeta.formats.textfiles import parse_partition_metadata
from kmeta.ops.startup.configs import DEFAULT_INDEX_INTERVAL, TopicLoadConfig
from kmeta.ops.startup.epoch_cache import EpochCache as _EpochCache
from kmeta.ops.startup.kafka_files import file_name_verdict, partition_metadata_verdict
from kmeta.ops.startup.model import (
    EpochCachePlan,
    FileFate,
    PartitionStartup,
    Recovery,
    SegmentSplit,
    SegmentWork,
)
from kmeta.ops.startup.producers import ProducerRebuild, RebuildRead
from kmeta.storage.headers import first_base_offset, next_offset_from, read_at, stream_fault
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.regular import read_regular
from kmeta.storage.segments import RECOVERY_CUTS, read_batches

_INDEX_KINDS = ("offset-index", "time-index", "txn-index")
_SMALL = 1 << 20  # partition.metadata, a .txnindex read whole: far below this
#: Int.MaxValue: the most an offset may lie above its segment's base (4-byte relative
#: offsets of the indexes, LogSegment.ensureOffsetInRange)
INT_MAX = (1 << 31) - 1


@dataclass
class _Segment:
    base: int
    #: the .log file's name and path
    name: str
    log: str
    size: int
    #: index kind -> its file's path
    indexes: dict[str, str] = field(default_factory=dict)
    #: where its bytes start in ``log`` (a piece of a split segment starts inside it)
    start: int = 0


_PLAIN = {ext: FileKind(kind) for ext, kind in OFFSET_FILE_EXTENSIONS.items()}
_STAT_KINDS = frozenset({"segment"})


def _kind(name: str) -> FileKind:
    """classify(name), with the names a broker holds by the thousand (a 20-digit offset
    and a plain extension) taken apart without the regular expressions, and each name's
    kind kept (most partitions of a broker hold segments of the same few names)."""
    kind = _KINDS.get(name)
    if kind is not None:
        return kind
    if len(name) > 21 and name[20] == "." and name[:20].isdigit():
        plain = _PLAIN.get(name[21:])
        kind = FileKind(plain.kind, int(name[:20])) if plain is not None else classify(name)
    else:
        kind = classify(name)
    if len(_KINDS) >= 1 << 16:
        _KINDS.clear()
    _KINDS[name] = kind
    return kind


_KINDS: dict[str, FileKind] = {}


def _listing(path: Path) -> list[tuple[str, FileKind, int]]:
    """The files of a partition dir: name, kind, and size (segments only: the others'
    sizes are not needed, and a stat per file is most of the cost of a large broker)."""
    out = []
    with os.scandir(path) as it:
        for e in it:
            if e.is_file():
                k = _kind(e.name)
                out.append((e.name, k, e.stat().st_size if k.kind in _STAT_KINDS else 0))
    out.sort()
    return out


def _sized(path: Path, files: list[tuple[str, FileKind, int | None]]
           ) -> list[tuple[str, FileKind, int]]:
    """:func:`_listing` from a listing made elsewhere: the sizes it lacks stat'ed here."""
    root = os.path.join(str(path), "")
    out = [(name, k, (size if size is not None else os.stat(root + name).st_size)
            if k.kind in _STAT_KINDS else 0) for name, k, size in files]
    out.sort()
    return out


def _next_offset(path: Path, start: int = 0) -> int | None:
    following, _ = next_offset_from(path, start)
    if following is None:  # legacy messages: the full scan knows them
        for item in read_batches(path):
            if type(item) is not Finding:
                following = item.last_offset + 1
    return following


def _temp_files(path: Path, files: list[tuple[str, FileKind, int]], part: PartitionStartup
                ) -> list[tuple[str, FileKind, int]]:
    """Step 1: the files left once temp files are gone and swaps are in (``files`` in
    name order, as listed)."""
    if not any(k.suffix for _, k, _ in files):
        return files  # nothing deleted, cleaned or swapped: nearly every partition dir
    cleaned = [k.base_offset for _, k, _ in files if k.suffix == "cleaned"]
    least = min(cleaned) if cleaned else None
    keep, swaps = [], []
    for name, k, size in files:
        if k.suffix == "deleted" and k.kind != "kraft-snapshot":
            part.leftovers.append(FileFate(name, "deleted", "a file Kafka had scheduled "
                                           "for deletion"))
        elif k.suffix == "cleaned":
            part.leftovers.append(FileFate(name, "deleted", "the log cleaner's output, "
                                           "never swapped in"))
        elif k.suffix == "swap" and least is not None and k.base_offset >= least:
            part.leftovers.append(FileFate(name, "deleted", f"at or above the .cleaned "
                                           f"offset {least}: a split cut short"))
        elif k.suffix == "swap":
            swaps.append((name, k, size))
        else:
            keep.append((name, k, size))
    logs = [(name, k) for name, k, _ in swaps if k.kind == "segment"]
    for name, _ in logs:  # LogLoader.load opens each .swap segment for readNextOffset
        fault = stream_fault(path / name, 0, 1 << 62)
        if fault is not None and part.load_failure is None:
            part.load_failure = (f"reading the next offset of {name} meets a batch size "
                                 f"field of {fault[1]} at byte {fault[0]} "
                                 "(CorruptRecordException from LogSegment.readNextOffset)")
    if logs:
        low = min(k.base_offset for _, k in logs)
        high = max((_next_offset(path / name) or k.base_offset) for name, k in logs)
        kept = []
        for name, k, size in keep:
            if k.base_offset is not None and low <= k.base_offset < high:
                part.leftovers.append(FileFate(name, "deleted", f"replaced by the .swap "
                                               f"files of offsets {low}..{high - 1}"))
            else:
                kept.append((name, k, size))
        keep = kept
    for name, k, size in swaps:
        live = name[:-len(".swap")]
        part.leftovers.append(FileFate(name, f"renamed to {live}", "a compaction or split "
                                       "that finished writing: it is swapped in"))
        keep.append((live, FileKind(k.kind, k.base_offset, k.epoch, None), size))
    keep.sort()
    return keep


def _segments(path: Path, files: list[tuple[str, FileKind, int]], part: PartitionStartup
              ) -> list[_Segment]:
    """Step 2's files: the segments, and the orphaned indexes deleted."""
    root = os.path.join(str(path), "")  # the names are plain: joined by concatenation
    segs = {k.base_offset: _Segment(k.base_offset, name, root + name, size)
            for name, k, size in files if k.kind == "segment"}
    for name, k, _ in files:
        if k.kind in _INDEX_KINDS:
            seg = segs.get(k.base_offset)
            if seg is None:
                part.leftovers.append(FileFate(name, "deleted", "an index without its "
                                               "segment (orphaned)"))
            else:
                seg.indexes[k.kind] = root + name
    return [segs[b] for b in sorted(segs)]


def _txn_index_rejected(seg: _Segment) -> tuple[str, str] | None:
    """What TransactionIndex.sanityCheck makes of the segment's .txnindex, entry by entry
    (its iterator first): ("stop", why) at an entry whose version is above 0 (a
    KafkaException: the broker does not start), ("rebuild", why) at one ending below the
    segment base (CorruptIndexException: loadSegmentFiles recovers the segment), else
    None."""
    p = seg.indexes.get("txn-index")
    if p is None:
        return None
    try:
        idx = parse_txn_index(read_regular(p, _SMALL * 64, "transaction index"), seg.base)
    except KmetaError:
        return None
    for i, e in enumerate(idx.entries):
        if e.version > 0:
            return ("stop", f"{seg.name}'s .txnindex entry {i} has version {e.version}: "
                    "TransactionIndex.sanityCheck throws KafkaException \"Unexpected aborted "
                    "transaction version\" (not a CorruptIndexException)")
        if e.last_offset < seg.base:
            return ("rebuild", f"its .txnindex has an aborted transaction ending at "
                    f"{e.last_offset}, below the segment base {seg.base}")
    return None


def _recover(seg: _Segment, interval: int, progress: Progress = QUIET) -> Recovery:
    """Kafka's recovery of ``seg``: by the compiled walk where its batches allow it
    (:func:`_recover_walked`), else batch by batch (:func:`_recover_batches`)."""
    if not seg.start:
        walked = _recover_walked(seg, progress)
        if walked is not None:
            return walked
    return _recover_batches(seg, interval, progress)


#: The header fields an epoch's start needs (the rest skipped).
_EPOCH_AT = derive_struct(_B.BATCH_HEADER, ("baseOffset", "batchLength",
                                            "partitionLeaderEpoch", "magic"))


def _recover_walked(seg: _Segment, progress: Progress) -> Recovery | None:
    """:func:`_recover_batches`' answer where the compiled walk takes every batch up to
    the first one recovery rejects (or the end): batches back to back, each intact, each
    base offset at or above the last batch's next offset, so no index entry recovery
    rebuilds can go backwards, and every offset within the segment's reach; None for a
    segment that needs the batch-by-batch reading (a batch the walk leaves to the scan,
    a finding that is not a cut)."""
    r = Recovery()
    kept = valid = 0
    after: int | None = None
    top = -1
    base = seg.base
    for item in read_batches(seg.log, walk=True, progress=progress):
        kind = type(item)
        if kind is Walked:
            if item.start != valid:
                return None
            if valid == 0 and (first_base_offset(seg.log) or 0) < base:
                return None  # below the segment's base: the offset range check's
            if not item.high - 1 - base <= INT_MAX:
                return None
            if item.epoch > top:
                top = _epochs_in(read_at(seg.log, item.start, item.end - item.start), top,
                                 r.assigns)
            kept, valid, after = kept + item.count, item.end, item.high
        elif kind is Finding:
            if item.code in RECOVERY_CUTS and item.position == valid:
                r.cut = (valid, item.code, item.message)
                break
            if item.code == "S008":
                raise OSError(item.message)
            return None
        else:
            return None
    r.batches, r.next_offset, r.valid_bytes, r.epochs_seen = kept, after, valid, top
    return r


#: The stretch of intact batches the compiled walk crosses at a time looking for a new
#: leader epoch: a generated metadata log changes epoch every megabyte or so (255 times in
#: the 268 MB log), a busy real one every few dozen kilobytes.  A stretch that holds a
#: change is walked again in eighths, down to a kilobyte, and only that is unpacked header
#: by header.
_EPOCH_STRETCH = 64 << 10
_EPOCH_SMALLEST = 1 << 10


def _epochs_in(data: bytes, top: int, assigns: list[tuple[int, int]]) -> int:
    """The (epoch, base offset) of each batch of ``data`` (whole intact batches, back to
    back, as a :class:`Walked` span holds) whose epoch is above ``top`` and every batch's
    before it (the entries LogSegment.recover assigns), read from the headers alone; the
    highest epoch.  The compiled walk says which stretches raise the epoch; only those
    are unpacked here (a header loop over the whole span was half of the metadata log's
    recovery)."""
    pos, n = 0, len(data)
    while pos < n:
        pos, top = _epochs_stretch(data, pos, n, _EPOCH_STRETCH, top, assigns)
    return top


def _epochs_stretch(data: bytes, pos: int, end: int, stretch: int, top: int,
                    assigns: list[tuple[int, int]]) -> tuple[int, int]:
    """:func:`_epochs_in` of the batches from ``pos`` the walk crosses in ``stretch``
    bytes: (where it reached, the highest epoch)."""
    reached, count, _, high_epoch, _ = walk(data, pos, end, pos + stretch, 0, top)
    if not count:  # not what a Walked span holds: every header, as before
        return end, _epochs_by_header(data, pos, end, top, assigns)
    if high_epoch > top:
        if stretch <= _EPOCH_SMALLEST:
            return reached, _epochs_by_header(data, pos, reached, top, assigns)
        at = pos
        while at < reached:
            at, top = _epochs_stretch(data, at, reached, stretch >> 3, top, assigns)
    return reached, top


def _epochs_by_header(data: bytes, pos: int, end: int, top: int,
                      assigns: list[tuple[int, int]]) -> int:
    unpack = _EPOCH_AT.unpack_from
    overhead = _B.LOG_OVERHEAD
    while pos + _EPOCH_AT.size <= end:
        first, length, epoch, _ = unpack(data, pos)
        if epoch > top:
            top = epoch
            assigns.append((epoch, first))
        pos += overhead + length
    return top


def _recover_batches(seg: _Segment, interval: int, progress: Progress = QUIET
                     ) -> Recovery:
    """Kafka's recovery of ``seg`` (its bytes from ``seg.start``, ``seg.size`` of them,
    indexed from ``seg.base``): CRC and length checks (the table of the cut), the offset
    range check (``ensureOffsetInRange``), and the offset and time index entries it
    rebuilds every ``interval`` bytes (``OffsetIndex.append`` refuses an offset not above
    the last, ``TimeIndex.maybeAppend`` one below the last)."""
    r = Recovery()
    start, end, base = seg.start, seg.start + seg.size, seg.base
    last_index_pos = 0
    index_entries, index_last = 0, -1
    time_entries, time_ts, time_off = 0, -1, base
    max_ts, max_off = -1, base
    prev_next: int | None = None
    assigns = r.assigns
    top_epoch = -1
    kept = valid = 0
    # a v2 batch's fields by index (this loop runs per batch; the properties cost more)
    v2, i_pos, i_base, i_delta = _B.Batch, _B.POSITION, _B.BASE_OFFSET, _B.LAST_OFFSET_DELTA
    i_ts, i_epoch, i_length = _B.MAX_TIMESTAMP, _B.LEADER_EPOCH, _B.BATCH_LENGTH
    overhead = _B.LOG_OVERHEAD
    for item in read_batches(seg.log, progress=progress):
        if type(item) is v2:
            p = item[i_pos]
            first = item[i_base]
            last = first + item[i_delta]
            ts, epoch, magic = item[i_ts], item[i_epoch], 2
            size = item[i_length] + overhead
        elif type(item) is Finding:
            p = item.position or 0
            if item.code in RECOVERY_CUTS and start <= p < end:
                r.cut = (p - start, item.code, item.message)
                break
            if item.code == "S008":
                raise OSError(item.message)
            continue
        else:  # a legacy message set entry
            p, first, last = item.position, item.base_offset, item.last_offset
            ts, epoch, magic = item.max_timestamp, -1, item.magic
            size = item.size
        if p < start:
            continue
        if p >= end:
            break
        rel_pos = p - start
        if not 0 <= last - base <= INT_MAX:
            return r.stop("overflow", rel_pos, last,
                          f"batch at byte {rel_pos} ends at offset {last}, beyond the reach "
                          f"of the segment's index ({base} to {base + INT_MAX})",
                          kept, prev_next, valid)
        if ts > max_ts:
            max_ts, max_off = ts, last
        if rel_pos - last_index_pos > interval:
            if index_entries and last <= index_last:
                return r.stop("invalid_offset", rel_pos, last,
                              f"the offset index entry for the batch at byte {rel_pos} "
                              f"(offset {last}) is not above the last one ({index_last})",
                              kept, prev_next, valid)
            index_entries, index_last = index_entries + 1, last
            if time_entries and max_off < time_off:
                return r.stop("invalid_offset", rel_pos, last,
                              f"the time index entry at byte {rel_pos} (offset {max_off}) "
                              f"is below the last one ({time_off})", kept, prev_next, valid)
            if max_ts > time_ts:
                time_entries, time_ts, time_off = time_entries + 1, max_ts, max_off
            last_index_pos = rel_pos
        if prev_next is not None and first < prev_next and r.backwards is None:
            r.backwards = (rel_pos, first, prev_next)
        prev_next = last + 1
        kept += 1
        valid = rel_pos + size
        if magic >= 2 and epoch > top_epoch:
            top_epoch = epoch
            assigns.append((epoch, first))
    r.epochs_seen = top_epoch
    # the closing time index entry (LogSegment.recover, after the truncation)
    if time_entries and max_off < time_off:
        return r.stop("invalid_offset", valid, max_off,
                      f"the closing time index entry (offset {max_off}) is below the last "
                      f"one ({time_off})", kept, prev_next, valid)
    r.batches, r.next_offset, r.valid_bytes = kept, prev_next, valid
    return r


def _split(seg: _Segment) -> SegmentSplit | tuple[SegmentSplit, list[_Segment]]:
    """LocalLog.splitOverflowedSegment: the segment cut where a batch's last offset
    leaves the reach of the piece it would join, each piece named after its first batch;
    it refuses (``require``) unless the segment's last batch overflows, and fails when a
    batch fits no piece or the pieces do not add up to the file (a torn tail)."""
    batches = []
    for item in read_batches(seg.log):
        if type(item) is Finding:
            if item.code in ("S001", "S002", "S003", "S004", "S010"):
                break  # FileLogInputStream stops at what is not a whole batch
            continue
        if seg.start <= item.position < seg.start + seg.size:
            batches.append((item.position - seg.start, item.size, item.base_offset,
                            item.last_offset))
    out = SegmentSplit(seg.name, seg.base, seg.size, 0)
    if not batches:
        out.failure = "no batch to split"
        return out
    last = batches[-1][3]
    if not (last + 1 > seg.base and not 0 <= last - seg.base <= INT_MAX):
        over = next((b[3] for b in batches if not 0 <= b[3] - seg.base <= INT_MAX), last)
        out.overflow_offset = over
        out.failure = (f"its last batch (offset {last}) is within the segment's reach, so "
                       "Kafka refuses to split it (\"Split operation is only permitted for "
                       "segments with overflow\")")
        return out
    out.overflow_offset = next(b[3] for b in batches if not 0 <= b[3] - seg.base <= INT_MAX)
    groups: list[list] = []
    for b in batches:
        if groups and 0 <= b[3] - groups[-1][0][2] <= INT_MAX:
            groups[-1].append(b)
            continue
        if not 0 <= b[3] - b[2] <= INT_MAX:
            out.failure = (f"the batch at byte {b[0]} spans offsets {b[2]} to {b[3]}, more "
                           "than one segment can index (IllegalStateException)")
            return out
        groups.append([b])
    pieces = [_piece(seg, g) for g in groups]
    total = sum(p.size for p in pieces)
    if total != seg.size:
        out.failure = (f"the pieces hold {total:,} of its {seg.size:,} bytes (a torn tail): "
                       "IllegalStateException \"Inconsistent segment sizes after split\"")
        return out
    out.pieces = [(p.name, p.base, p.size, len(g)) for p, g in zip(pieces, groups, strict=True)]
    return out, pieces


def _piece(seg: _Segment, batches: list) -> _Segment:
    base = batches[0][2]
    first, last = batches[0], batches[-1]
    name = segment_file_name(base)
    p = _Segment(base, name, seg.log, last[0] + last[1] - first[0])
    p.start = seg.start + first[0]
    p.indexes = {"offset-index": "", "time-index": ""}  # the split writes both
    return p


def _last_index_position(seg: _Segment) -> int:
    """Where the last offset index entry points (0 without one): Kafka's start for the
    next offset of a segment it does not recover."""
    p = seg.indexes.get("offset-index")
    if p is None:
        return 0
    try:
        data = read_regular(p, 64 << 20, "offset index")
    except KmetaError:
        return 0
    size = OFFSET_INDEX_STRUCT.size
    for end in range(len(data) - len(data) % size, 0, -size):
        rel, pos = OFFSET_INDEX_STRUCT.unpack_from(data, end - size)
        if rel or pos:
            return pos if 0 <= pos < seg.size else 0
    return 0


class _MetadataFile:
    """A partition dir's partition.metadata, read once for the placement judge's topic id
    and for UnifiedLog.initializeTopicId (None where the listing has none)."""

    def __init__(self, path: Path, listing: list[tuple[str, FileKind, int]],
                 data: bytes | None = None, topic_id: str | None = None) -> None:
        self.path = path / "partition.metadata"
        self.present = any(name == "partition.metadata" for name, _, _ in listing)
        # (bytes read elsewhere stand for a read here only where this one takes them,
        # and the topic id parsed from them for the parse here)
        taken = data is not None and len(data) <= _SMALL and self.present
        self._read: bytes | KmetaError | OSError | None = data if taken else None
        self._topic_id = topic_id if taken else None

    def data(self) -> bytes:
        """Its bytes; raises what reading it raised."""
        if self._read is None:
            try:
                self._read = read_regular(self.path, _SMALL, "partition.metadata")
            except (KmetaError, OSError) as e:
                self._read = e
        if isinstance(self._read, bytes):
            return self._read
        raise self._read

    def topic_id(self) -> str | None:
        if not self.present:
            return None
        if self._topic_id is not None:
            return self._topic_id
        try:
            return parse_partition_metadata(self.data()).topic_id
        except (KmetaError, FormatError, OSError):
            return None


def load_partition(log_dir: Path, path: Path, parsed: PartitionDirName, clean: bool,
                   recovery_point: int, log_start: int, *, topic_id: bool = False,
                   config: TopicLoadConfig | None = None,
                   seen: Any = None,
                   progress: Progress = QUIET) -> PartitionStartup:
    """What LogLoader does to the partition dir ``path`` (see the module docstring);
    ``topic_id``: read partition.metadata too (what the placement judge needs);
    ``config``: the topic's log config (remote storage, index interval, record format);
    ``seen``: what the caller read of the dir just now (kmeta report: verify's check of
    it), or None: its regular ``files`` (name, kind, a segment's size where known),
    ``partition_metadata``'s bytes and the ``topic_id`` parsed from them, and the bytes
    of the producer ``snapshots`` by name (each None or missing where it did not);
    ``progress``: hears of the segments recovered.  An I/O error reading the dir raises
    OSError or KmetaError: Kafka's IOException (the caller takes the log dir offline)."""
    config = config or TopicLoadConfig(False, "", DEFAULT_INDEX_INTERVAL)
    listing = _listing(path) if seen is None or seen.files is None else \
        _sized(path, seen.files)
    metadata_file = _MetadataFile(path, listing, *(
        (None, None) if seen is None else (seen.partition_metadata, seen.topic_id)))
    part = PartitionStartup(log_dir, path, parsed.topic, parsed.partition, parsed.state,
                            metadata_file.topic_id() if topic_id else None, 0, 0,
                            recovery_point, log_start)
    part.remote_storage = config.remote_storage
    # what is on disk (said even when the load stops before the segments are opened)
    on_disk = [n for _, k, n in listing if k.kind == "segment" and not k.suffix]
    part.segments, part.bytes = len(on_disk), sum(on_disk)
    # UnifiedLog.apply reads leader-epoch-checkpoint, then builds the
    # ProducerStateManager (it parses the .snapshot names), then runs LogLoader.load
    cache = _EpochCache(path, config.epochs_cleared, part)
    if part.load_failure is None and part.offline is None:
        # (a name classify takes apart begins with an offset already)
        bad = file_name_verdict([name for name, k, _ in listing if k.kind == "unknown"])
        if bad is not None:
            part.load_failure = bad[1]
    if part.load_failure is not None or part.offline is not None:
        return _stopped(part)
    files = _temp_files(path, listing, part)
    if part.load_failure is not None:
        return _stopped(part)
    segs: list[_Segment] | None = _segments(path, files, part)
    assert segs is not None
    # what is on disk once the leftovers are dealt with (recovery changes it afterwards)
    part.segments = len(segs)
    part.bytes = sum(s.size for s in segs)
    snapshots = {k.base_offset: name for name, k, _ in files
                 if k.kind == "producer-snapshot" and k.suffix is None}
    producer = ProducerRebuild(path, snapshots, part, config.epochs_cleared is not None,
                               None if seen is None else seen.snapshots)
    sim = _Simulation(part, config.index_interval, cache, producer, progress)
    for seg in segs:  # loadSegmentFiles, clean or not
        txn = None if "offset-index" not in seg.indexes else _txn_index_rejected(seg)
        if txn is not None and txn[0] == "stop":
            part.load_failure = txn[1]
            break
        why = "its offset index is missing" if "offset-index" not in seg.indexes else \
            txn[1] if txn is not None else None
        if why is not None:
            part.index_rebuilds.append(FileFate(seg.name, "indexes rebuilt", why))
            sim.rebuild[seg.base] = why
        elif "time-index" not in seg.indexes:
            part.index_rebuilds.append(FileFate(
                seg.name, "time index created empty",
                "its .timeindex is missing (Kafka rebuilds it only with a recovery)"))
    if part.load_failure is None:
        segs = sim.load_segment_files(segs)
    if segs is not None and part.load_failure is None and not clean and \
            parsed.state != "delete" and segs:
        segs = sim.recover_log(segs, recovery_point)
    part.recover = sim.works()
    if segs is None or part.load_failure is not None:
        return _stopped(part)  # the log does not load: what follows never happens
    _ends(part, segs, sim, config)
    if part.load_failure is not None:
        return _stopped(part)
    cache.finish(part)
    _producer_state(part, producer, segs, clean, frozenset(sim.results))
    if part.load_failure is None:
        _partition_metadata(part, metadata_file)
    _findings(part)
    return part


def _stopped(part: PartitionStartup) -> PartitionStartup:
    """The load ends here (an exception escapes it, or the log dir goes offline)."""
    if part.offline is not None:
        part.fate = "not loaded: an IOException takes its log dir offline"
    _findings(part)
    return part


def _partition_metadata(part: PartitionStartup, metadata_file: _MetadataFile) -> None:
    """UnifiedLog.initializeTopicId, once the log has loaded (KRaft, and ZooKeeper mode
    from inter.broker.protocol.version 2.8, keep the file and read it)."""
    if not metadata_file.present:
        return
    verdict = partition_metadata_verdict(metadata_file.data())
    if verdict is None:
        return
    if verdict[0] == "stop":
        part.load_failure = verdict[1]
    else:
        part.offline = verdict[1]
        part.fate = "not loaded: an IOException takes its log dir offline"


class _Simulation:
    """The segments through loadSegmentFiles and recoverLog, each with its retry after a
    split (LogLoader.retryOnOffsetOverflow)."""

    def __init__(self, part: PartitionStartup, interval: int, cache: _EpochCache,
                 producer: ProducerRebuild, progress: Progress) -> None:
        self.part = part
        self.producer = producer
        self.interval = interval
        self.progress = progress
        self.cache = cache
        self.rebuild: dict[int, str] = {}
        self.work: dict[str, SegmentWork] = {}
        self.order: list[str] = []
        self.results: dict[str, Recovery] = {}
        self.segs: list[_Segment] = []

    def works(self) -> list[SegmentWork]:
        by_base = sorted(self.order, key=lambda n: self.work[n].base_offset)
        return [self.work[n] for n in by_base]

    def _recover(self, seg: _Segment, why: str) -> Recovery | None:
        """recoverSegment: the producer state rebuilt up to the segment (None: that
        throws, the load fails), then LogSegment.recover."""
        fault = self.producer.rebuild(self.segs, self.part.log_start_checkpoint, seg.base,
                                      f"before recovering {seg.name}",
                                      checked=frozenset(self.results))
        if fault is not None:
            self.part.load_failure = fault
            return None
        r = _recover(seg, self.interval, self.progress)
        w = self.work.get(seg.name)
        if w is None:
            w = self.work[seg.name] = SegmentWork(seg.name, seg.base, seg.size, why)
            self.order.append(seg.name)
        w.batches, w.next_offset = r.batches, r.next_offset
        if r.backwards is not None and r.fault is None and w.backwards is None:
            w.backwards = r.backwards
        self.results[seg.name] = r
        self.cache.recovered(r)
        if r.fault is None and r.next_offset is not None:
            self.producer.recovered(r.next_offset)
        return r

    def _split(self, segs: list[_Segment], seg: _Segment) -> list[_Segment] | None:
        done = _split(seg)
        if isinstance(done, SegmentSplit):
            self.part.splits.append(done)
            self.part.load_failure = f"{seg.name} cannot be split: {done.failure}"
            return None
        plan, pieces = done
        self.part.splits.append(plan)
        self.part.reread_bytes += seg.size
        self.work.pop(seg.name, None)
        self.results.pop(seg.name, None)
        self.order = [n for n in self.order if n != seg.name]
        i = segs.index(seg)
        return segs[:i] + pieces + segs[i + 1:]

    def load_segment_files(self, segs: list[_Segment]) -> list[_Segment] | None:
        """loadSegmentFiles: a segment without its .index (or with a .txnindex Kafka
        rejects) is recovered; an invalid offset there escapes (the log does not load)."""
        self.segs = segs
        while True:
            for seg in segs:
                why = self.rebuild.pop(seg.base, None) if seg.start == 0 else None
                if why is None:
                    continue
                r = self._recover(seg, why)
                if r is None:
                    return None
                if r.fault == "overflow":
                    out = self._split(segs, seg)
                    if out is None:
                        return None
                    segs = self.segs = out
                    break
                if r.fault == "invalid_offset":
                    self.part.load_failure = (
                        f"rebuilding the missing index of {seg.name}: {r.fault_text} "
                        "(InvalidOffsetException escapes loadSegmentFiles)")
                    return None
                if r.cut is not None:
                    self._cut(seg, r, r.valid_bytes)
            else:
                return segs

    def _cut(self, seg: _Segment, r: Recovery, keep: int) -> None:
        w = self.work[seg.name]
        if w.truncated_at is None:
            w.truncated_at = keep
            if r.fault == "invalid_offset":
                w.cut_code, w.cut_reason = "V175", r.fault_text
            elif r.cut is not None:
                w.cut_code, w.cut_reason = r.cut[1], r.cut[2]
        if keep == 0:  # emptied: nothing it read stays
            w.batches, w.next_offset = 0, None
        seg.size = keep

    def recover_log(self, segs: list[_Segment], recovery_point: int) -> list[_Segment] | None:
        """recoverLog after an unclean shutdown: the segment holding the recovery point
        and every later one; the first truncated (or emptied) one ends it, and the later
        ones are deleted."""
        self.segs = segs
        while True:
            bases = [s.base for s in segs]
            first = max(0, bisect.bisect_right(bases, recovery_point) - 1)
            unflushed = segs[first:]
            read = 0
            for i, seg in enumerate(unflushed):
                r = self._recover(seg, f"at or after the recovery point {recovery_point}")
                if r is None:
                    return None
                read += seg.size
                if r.fault == "overflow":
                    out = self._split(segs, seg)
                    if out is None:
                        return None
                    self.part.reread_bytes += read - seg.size
                    segs = self.segs = out
                    break
                if r.fault == "invalid_offset":
                    truncated = seg.size
                    self._cut(seg, r, 0)
                elif r.cut is not None and seg.size > r.valid_bytes:
                    truncated = seg.size - r.valid_bytes
                    self._cut(seg, r, r.valid_bytes)
                else:
                    truncated = 0
                if truncated > 0:
                    for later in unflushed[i + 1:]:
                        self.part.deleted_segments.append(later.name)
                        self.part.deleted_bytes += later.size
                    gone = {s.name for s in unflushed[i + 1:]}
                    self.producer.drop_from([s.base for s in unflushed[i + 1:]])
                    return [s for s in segs if s.name not in gone]
            else:
                return segs


def _ends(part: PartitionStartup, live: list[_Segment], sim: _Simulation,
          config: TopicLoadConfig) -> None:
    """The log end, the all-deleted rule and the log start the load ends with; a -delete
    dir skips recoverLog: its recovery point and log end are 0, with an empty segment at
    0 when it has none (LogLoader.load)."""
    if part.state == "delete":
        part.log_end_offset = 0
        part.log_start_offset = max(part.log_start_checkpoint, live[0].base if live else 0)
        part.first_local_offset = live[0].base if live else 0
        part.log_start_rule = "max(checkpoint, first segment base); a -delete dir's log " \
            "end and recovery point are 0 (recoverLog is skipped)"
        return
    if not live:
        part.log_start_offset = part.log_end_offset = part.log_start_checkpoint
        return
    last = live[-1]
    r = sim.results.get(last.name)
    end: int | None
    if r is not None:  # recovered: its scan knows where its kept batches end
        end = r.next_offset if last.size else None
    elif last.start:  # a piece of a split, not recovered since: its last batch
        end = _recover(last, INT_MAX).next_offset
    else:
        # LogSegment.readNextOffset (recoverLog, clean or not): the batches from the last
        # offset index entry on, through FileLogInputStream, which throws at a size
        # field below 14 (a zero-filled or garbage tail recovery did not cut)
        at = _last_index_position(last)
        fault = stream_fault(last.log, at, last.size)
        if fault is not None:
            part.load_failure = (
                f"reading the log end of {last.name} (not recovered after a clean "
                f"shutdown) meets a batch size field of {fault[1]} at byte {fault[0]} "
                "(CorruptRecordException from LogSegment.readNextOffset, which recoverLog "
                "does not catch)")
            return
        end = _next_offset(last.log, at)
        if end is None and at:
            end = _next_offset(last.log, 0)
    part.log_end_offset = end if end is not None else last.base
    if part.log_end_offset < part.log_start_checkpoint:
        part.all_deleted = True
        part.deleted_bytes += sum(s.size for s in live)
        part.log_start_offset = part.log_end_offset = part.log_start_checkpoint
        part.log_start_rule = "every segment deleted: the log starts empty at the checkpoint"
        return
    first = part.first_local_offset = live[0].base
    if config.remote_storage:
        part.log_start_offset = part.log_start_checkpoint
        part.log_start_rule = config.remote_why
    else:
        part.log_start_offset = max(part.log_start_checkpoint, first)
        part.log_start_rule = "max(checkpoint, first segment base)" + (
            f" ({config.remote_why})" if config.remote_why else "")


def _producer_state(part: PartitionStartup, producer: ProducerRebuild,
                    live: list[_Segment], clean: bool, checked: frozenset[str]) -> None:
    """The last rebuildProducerState of the load (to the log end: 0 for a -delete dir),
    after removeStraySnapshots; what every rebuild read, in bytes and words."""
    if part.all_deleted:  # truncateFullyAndStartAt: every snapshot goes, nothing to read
        producer.clear()
        producer.finish()
        part.producer_state = "starts empty at the log start (no segment left)"
        return
    producer.remove_strays([s.base for s in live])
    end = part.log_end_offset if part.log_end_offset is not None else 0
    fault = producer.rebuild(live, part.log_start_offset, end, "to the log end", clean=clean,
                             checked=checked)
    if fault is not None:
        part.load_failure = fault
    producer.finish()
    part.producer_bytes = sum(r.bytes for r in producer.reads)
    if producer.shortcut:
        part.producer_state = (
            "a message format before v2: empty snapshots written, nothing read"
            if producer.legacy else
            "no snapshot after a clean shutdown: empty snapshots written, nothing read")
    elif not live:
        part.producer_state = "starts empty at the log start (no segment left)"
    else:
        said = [f"read from {_source(r)} {r.when} ({r.upto}): {r.segments} segment(s)"
                for r in producer.reads if r.segments]
        last = producer.reads[-1]
        part.producer_state = "; ".join(said) if said else \
            f"from the snapshot at {last.start}: nothing to read" if last.from_snapshot \
            else f"nothing before offset {last.upto} to read"


def _source(r: RebuildRead) -> str:
    return f"the snapshot at {r.start}" if r.from_snapshot else \
        "the log start (no usable snapshot)"


def _entries(entries: list[tuple[int, int]]) -> str:
    shown = ", ".join(f"epoch {e} at {o}" for e, o in entries[:4])
    return shown + (f" and {len(entries) - 4} more" if len(entries) > 4 else "")


def _epochs_notable(part: PartitionStartup, ec: EpochCachePlan) -> bool:
    """A change worth a finding: the file deleted, epochs recovery adds (the file lost
    them), or entries past the log end (records it named are gone).  An entry exactly at
    the log end (an epoch that wrote nothing yet, as a leader of an empty log leaves) and
    entries below the log start go on every load: the plan lists them, no finding."""
    if ec.cleared is not None:
        return bool(ec.before)
    end = part.log_end_offset if part.log_end_offset is not None else 0
    return bool(ec.added) or any(o > end for _, o in ec.removed)


def _findings(part: PartitionStartup) -> None:
    where = str(part.path)
    for w in part.recover:
        if w.truncated_at is None:
            continue
        lost = w.removed_bytes
        if w.cut_code == "V175":
            part.findings.append(Finding(
                "V175", f"recovery empties {w.file} ({lost:,} bytes removed): {w.cut_reason} "
                "(InvalidOffsetException: offsets go backwards); Kafka truncates the segment "
                "to its base offset", str(part.path / w.file), 0,
                details={"removed_bytes": lost}))
            continue
        code = "V171" if w.cut_code == "S002" else "V170"
        part.findings.append(Finding(
            code, f"recovery truncates {w.file} at byte {w.truncated_at} ({lost:,} bytes "
            f"removed): {w.cut_reason}", str(part.path / w.file), w.truncated_at,
            details={"removed_bytes": lost, "cause": w.cut_code}))
    if part.deleted_segments:
        n = len(part.deleted_segments)
        part.findings.append(Finding(
            "V172", f"recovery deletes {n} segment(s) after the truncated one "
            f"({part.deleted_segments[0]}…): their records are lost", where,
            details={"segments": n}))
    if part.load_failure is not None:
        part.findings.append(Finding(
            "V200", f"Kafka cannot load this log: {part.load_failure}; the exception "
            "escapes LogManager.loadLogs and the broker does not start", where))
    if part.offline is not None:
        part.findings.append(Finding(
            "V210", f"{part.offline}: LogManager.loadLogs catches it and takes the log dir "
            "offline (none of its logs is served)", where))
    for w in part.recover:
        if w.backwards is not None and w.truncated_at is None:
            pos, offset, expected = w.backwards
            part.findings.append(Finding(
                "V201", f"offsets go backwards in {w.file} (a batch at offset {offset} "
                f"where {expected} or above was due) and no index entry lands there: "
                "Kafka's recovery keeps the batches as they are", str(part.path / w.file),
                pos, offset, details={"expected_offset": expected}))
    for sp in part.splits:
        if sp.failure is not None:
            continue
        bases = ", ".join(str(b) for _, b, _, _ in sp.pieces)
        part.findings.append(Finding(
            "V202", f"{sp.file} holds offset {sp.overflow_offset}, beyond base + "
            f"Int.MaxValue (a legacy overflow, KAFKA-6264): Kafka splits it into "
            f"{len(sp.pieces)} segments at offsets {bases}", str(part.path / sp.file),
            offset=sp.overflow_offset, details={"pieces": [b for _, b, _, _ in sp.pieces]}))
    first = part.first_local_offset
    if part.remote_storage and not part.all_deleted and first is not None and \
            part.log_start_checkpoint < first:
        part.findings.append(Finding(
            "V205", f"remote storage is on: the log start stays at the checkpoint's "
            f"{part.log_start_checkpoint}, below the first local segment {first} "
            "(Kafka 3.6+; the offsets between are in remote storage)", where,
            offset=part.log_start_checkpoint, details={"first_local_offset": first}))
    ec = part.epoch_cache
    if ec is not None and part.state != "delete" and _epochs_notable(part, ec):
        if ec.cleared is not None:
            text = (f"Kafka deletes leader-epoch-checkpoint ({len(ec.before)} entries): "
                    f"{ec.cleared}")
        else:
            said = []
            if ec.removed:
                said.append("removes " + _entries(ec.removed))
            if ec.added:
                said.append("adds " + _entries(ec.added))
            text = f"the leader-epoch cache changes on load: {'; '.join(said)}"
            if ec.source == "missing":
                text = ("leader-epoch-checkpoint is missing: Kafka starts an empty cache "
                        "and " + text.split(": ", 1)[1].replace("adds", "adds the epochs "
                                                                "of recovered batches,", 1))
        part.findings.append(Finding(
            "V206", text, str(part.path / "leader-epoch-checkpoint"),
            details={"before": [list(e) for e in ec.before],
                     "after": [list(e) for e in ec.after]}))
    if part.all_deleted:
        part.findings.append(Finding(
            "V173", f"the log end is below the log start checkpoint "
            f"{part.log_start_checkpoint}: Kafka deletes every segment and starts the log "
            "empty there", where, offset=part.log_start_checkpoint))
    for r in part.index_rebuilds:
        if r.fate == "indexes rebuilt":
            part.findings.append(Finding("V178", f"{r.why}: Kafka recovers the segment "
                                         "and rebuilds its indexes",
                                         str(part.path / r.file)))
    for f in part.leftovers:
        if f.file.endswith(".snapshot"):
            continue  # stray producer snapshots: routine, told in the listing
        does = "deletes it" if f.fate == "deleted" else f"{f.fate.replace('renamed', 'renames it')}"
        part.findings.append(Finding("V179", f"{f.why}; Kafka {does} on load",
                                     str(part.path / f.file)))
