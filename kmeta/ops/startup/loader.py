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
3. ``recoverLog`` (not for ``-delete`` dirs): after an unclean shutdown, the segment
   holding the recovery point and every later one are recovered (``LogSegment.recover``:
   batch by batch, CRC checked, indexes rebuilt); at the first batch it rejects the
   segment is truncated and every later unflushed segment deleted.  Then, clean or not,
   a log end below the log start checkpoint deletes every segment.
4. The log start is ``max(checkpoint, first segment base)``; the producer state is
   rebuilt (``UnifiedLog.rebuildProducerState``): with no snapshot after a clean
   shutdown, empty snapshots are written and nothing is read; otherwise from the newest
   usable snapshot (or the log start) to the log end.  Snapshots not at a segment base
   are deleted first, except the newest when it is past the last base
   (``ProducerStateManager.removeStraySnapshots``).

Where recovery cuts is the one table of the cut (:data:`kmeta.storage.segments.
RECOVERY_CUTS`, which ``repair`` uses too), found by the same scan.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field
from pathlib import Path

from kmeta.errors import FormatError, KmetaError
from kmeta.findings import Finding
from kmeta.formats.filenames import (
    OFFSET_FILE_EXTENSIONS,
    FileKind,
    PartitionDirName,
    classify,
)
from kmeta.formats.indexes import OFFSET_INDEX_STRUCT, parse_txn_index
from kmeta.formats.textfiles import parse_partition_metadata
from kmeta.ops.startup.model import FileFate, PartitionStartup, SegmentWork
from kmeta.storage.headers import next_offset_from
from kmeta.storage.regular import read_regular
from kmeta.storage.segments import RECOVERY_CUTS, read_batches

_INDEX_KINDS = ("offset-index", "time-index", "txn-index")
_SMALL = 1 << 20  # partition.metadata, a .txnindex read whole: far below this


@dataclass
class _Segment:
    base: int
    #: the .log file's name and path
    name: str
    log: str
    size: int
    #: index kind -> its file's path
    indexes: dict[str, str] = field(default_factory=dict)


_PLAIN = {ext: FileKind(kind) for ext, kind in OFFSET_FILE_EXTENSIONS.items()}
_STAT_KINDS = frozenset({"segment"})


def _kind(name: str) -> FileKind:
    """classify(name), with the names a broker holds by the thousand (a 20-digit offset
    and a plain extension) taken apart without the regular expressions."""
    if len(name) > 21 and name[20] == "." and name[:20].isdigit():
        plain = _PLAIN.get(name[21:])
        if plain is not None:
            return FileKind(plain.kind, int(name[:20]))
    return classify(name)


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


def _next_offset(path: Path, start: int = 0) -> int | None:
    following, _ = next_offset_from(path, start)
    if following is None:  # legacy messages: the full scan knows them
        for item in read_batches(path):
            if type(item) is not Finding:
                following = item.last_offset + 1
    return following


def _temp_files(path: Path, files: list[tuple[str, FileKind, int]], part: PartitionStartup
                ) -> list[tuple[str, FileKind, int]]:
    """Step 1: the files left once temp files are gone and swaps are in."""
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
    root = str(path)
    join = os.path.join
    segs = {k.base_offset: _Segment(k.base_offset, name, join(root, name), size)
            for name, k, size in files if k.kind == "segment"}
    for name, k, _ in files:
        if k.kind in _INDEX_KINDS:
            seg = segs.get(k.base_offset)
            if seg is None:
                part.leftovers.append(FileFate(name, "deleted", "an index without its "
                                               "segment (orphaned)"))
            else:
                seg.indexes[k.kind] = join(root, name)
    return [segs[b] for b in sorted(segs)]


def _txn_index_rejected(seg: _Segment) -> str | None:
    """Why TransactionIndex.sanityCheck rejects the segment's .txnindex, or None."""
    p = seg.indexes.get("txn-index")
    if p is None:
        return None
    try:
        idx = parse_txn_index(read_regular(p, _SMALL * 64, "transaction index"), seg.base)
    except KmetaError:
        return None
    for e in idx.entries:
        if e.last_offset < seg.base:
            return (f"its .txnindex has an aborted transaction ending at {e.last_offset}, "
                    f"below the segment base {seg.base}")
    return None


def _scan(seg: _Segment, work: SegmentWork) -> None:
    """LogSegment.recover's read: batches counted up to the first one it rejects."""
    for item in read_batches(seg.log):
        if type(item) is Finding:
            if item.code in RECOVERY_CUTS:
                work.truncated_at = item.position or 0
                work.cut_code = item.code
                work.cut_reason = item.message
                return
            continue
        work.batches += 1
        work.next_offset = item.last_offset + 1


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


def _topic_id(path: Path) -> str | None:
    p = path / "partition.metadata"
    try:
        return parse_partition_metadata(read_regular(p, _SMALL, "partition.metadata")).topic_id
    except (KmetaError, FormatError, OSError):
        return None


def load_partition(log_dir: Path, path: Path, parsed: PartitionDirName, clean: bool,
                   recovery_point: int, log_start: int, *, topic_id: bool = False
                   ) -> PartitionStartup:
    """What LogLoader does to the partition dir ``path`` (see the module docstring);
    ``topic_id``: read partition.metadata too (what the placement judge needs)."""
    part = PartitionStartup(log_dir, path, parsed.topic, parsed.partition, parsed.state,
                            _topic_id(path) if topic_id else None, 0, 0, recovery_point,
                            log_start)
    files = _temp_files(path, _listing(path), part)
    segs = _segments(path, files, part)
    part.segments = len(segs)
    part.bytes = sum(s.size for s in segs)
    work: dict[int, SegmentWork] = {}
    for seg in segs:  # loadSegmentFiles, clean or not
        why = None
        if "offset-index" not in seg.indexes:
            why = "its offset index is missing"
        else:
            why = _txn_index_rejected(seg)
        if why is not None:
            part.index_rebuilds.append(FileFate(seg.name, "indexes rebuilt", why))
            work[seg.base] = SegmentWork(seg.name, seg.base, seg.size, why)
        if "time-index" not in seg.indexes and why is None:
            part.index_rebuilds.append(FileFate(
                seg.name, "time index created empty",
                "its .timeindex is missing (Kafka rebuilds it only with a recovery)"))
    unflushed: list[_Segment] = []
    if not clean and parsed.state != "delete" and segs:
        bases = [s.base for s in segs]
        first = max(0, bisect.bisect_right(bases, recovery_point) - 1)
        unflushed = segs[first:]
        for seg in unflushed:
            work.setdefault(seg.base, SegmentWork(
                seg.name, seg.base, seg.size,
                f"at or after the recovery point {recovery_point}"))
    cut_at: int | None = None
    unflushed_bases = {s.base for s in unflushed}
    for seg in segs:
        w = work.get(seg.base)
        if w is None:
            continue
        if cut_at is not None and seg.base in unflushed_bases:
            part.deleted_segments.append(seg.name)
            part.deleted_bytes += seg.size
            del work[seg.base]
            continue
        _scan(seg, w)
        if w.truncated_at is not None and seg.base in unflushed_bases and cut_at is None \
                and w.removed_bytes:
            cut_at = seg.base
    part.recover = [work[s.base] for s in segs if s.base in work]
    gone = set(part.deleted_segments)
    live = [s for s in segs if s.name not in gone]
    _ends(part, live, work)
    _producer_state(part, files, live, clean)
    _findings(part)
    return part


def _ends(part: PartitionStartup, live: list[_Segment], work: dict[int, SegmentWork]
          ) -> None:
    """The log end, the all-deleted rule and the log start the load ends with."""
    if not live:
        part.log_start_offset = part.log_end_offset = part.log_start_checkpoint
        return
    last = live[-1]
    w = work.get(last.base)
    if w is not None:  # recovered: its scan knows where its kept batches end
        end = w.next_offset
    else:
        end = _next_offset(last.log, _last_index_position(last))
        if end is None and _last_index_position(last):
            end = _next_offset(last.log, 0)
    part.log_end_offset = end if end is not None else last.base
    if part.state != "delete" and part.log_end_offset < part.log_start_checkpoint:
        part.all_deleted = True
        part.deleted_bytes += sum(s.size for s in live) - sum(
            w.removed_bytes for w in part.recover if w.truncated_at is not None)
        part.log_start_offset = part.log_end_offset = part.log_start_checkpoint
        return
    part.log_start_offset = max(part.log_start_checkpoint, live[0].base)


def _producer_state(part: PartitionStartup, files: list[tuple[str, FileKind, int]],
                    live: list[_Segment], clean: bool) -> None:
    """UnifiedLog.rebuildProducerState: what it reads, in bytes and words."""
    end = part.log_end_offset if part.log_end_offset is not None else 0
    bases = [s.base for s in live]
    snaps = sorted(k.base_offset for _, k, _ in files
                   if k.kind == "producer-snapshot" and k.suffix is None)
    largest_base = bases[-1] if bases else 0
    stray = [o for o in snaps if o not in set(bases)]
    keep_stray = max(stray) if stray and max(stray) >= largest_base else None
    for o in stray:
        if o != keep_stray:
            part.leftovers.append(FileFate(f"{o:020d}.snapshot", "deleted", "a producer "
                                           "snapshot not at a segment base (stray)"))
    snaps = [o for o in snaps if o not in stray or o == keep_stray]
    if part.all_deleted or not live:
        part.producer_state = "starts empty at the log start (no segment left)"
        return
    if clean and not snaps:
        part.producer_state = ("no snapshot after a clean shutdown: empty snapshots "
                               "written, nothing read")
        return
    if part.recover and not clean:
        upto = part.recover[0].base_offset
        how = "before recovering the first segment"
    else:
        upto = end
        how = "to the log end"
    usable = [o for o in snaps if part.log_start_offset < o <= upto]
    start = usable[-1] if usable else part.log_start_offset
    after = "; recovery then rebuilds it segment by segment" if how.startswith("before") \
        else ""
    if start >= upto:
        part.producer_state = (f"from the snapshot at {start}: nothing to read{after}"
                               if usable else f"nothing before offset {upto} to read{after}")
        return
    first = max(0, bisect.bisect_right(bases, start) - 1)
    read = [s for s in live[first:] if s.base < upto]
    part.producer_bytes = sum(s.size for s in read)
    source = f"the snapshot at {start}" if usable else "the log start (no usable snapshot)"
    part.producer_state = (f"read from {source} {how} ({upto}): "
                           f"{len(read)} segment(s){after}")


def _findings(part: PartitionStartup) -> None:
    where = str(part.path)
    for w in part.recover:
        if w.truncated_at is None:
            continue
        lost = w.removed_bytes
        code = "V171" if w.cut_code == "S002" else "V170"
        part.findings.append(Finding(
            code, f"recovery truncates {w.file} at byte {w.truncated_at} ({lost} bytes "
            f"removed): {w.cut_reason}", str(part.path / w.file), w.truncated_at,
            details={"removed_bytes": lost, "cause": w.cut_code}))
    if part.deleted_segments:
        n = len(part.deleted_segments)
        part.findings.append(Finding(
            "V172", f"recovery deletes {n} segment(s) after the truncated one "
            f"({part.deleted_segments[0]}…): their records are lost", where,
            details={"segments": n}))
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
