"""One user partition of a replica as a leader would answer from it: its epoch cache, log
start, local log start and log end, read from the partition dir and its data dir.

Kafka's sources for each: the epoch cache is the partition's ``leader-epoch-checkpoint``
(rebuilt from the batches' partition leader epochs when the file is missing, as Kafka
does on load); the local log start is the base offset of the first segment; the log start is the larger
of that and the data dir's ``log-start-offset-checkpoint`` entry, as Kafka loads a log
without remote storage (with it, the checkpoint's entry alone: it may be below the local
log start, the older data being remote; ``checkpoint_log_start`` keeps it);
the log end is the offset after the last batch.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from pathlib import Path

from kmeta.core.epochs import EpochCache
from kmeta.core.log_rules import MAX_OFFSET, offsets_past_max
from kmeta.findings import Finding
from kmeta.formats.filenames import classify
from kmeta.storage.discover import LogFile, PartitionDir
from kmeta.storage.files import load_checked
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.segments import read_batches

__all__ = ["PartitionView", "SegmentSpan", "checkpoint_entry", "read_partition"]


@dataclass
class PartitionView:
    topic: str
    partition: int
    path: str
    cache: EpochCache
    cache_from: str  # "leader-epoch-checkpoint" or "batches"
    log_start: int
    local_log_start: int
    log_end: int
    checkpoint_log_start: int | None  # the data dir's log-start-offset-checkpoint entry
    local_bytes: int = 0
    batches: int = 0
    records: int = 0
    compacted_hint: bool = False  # a cleaner-offset-checkpoint entry: the topic is compacted
    findings: list[Finding] = field(default_factory=list)
    segments: list[SegmentSpan] = field(default_factory=list)
    # every batch's base offset, last offset and bytes, in log order (8 bytes each)
    batch_bases: array = field(default_factory=lambda: array("q"))
    batch_lasts: array = field(default_factory=lambda: array("q"))
    batch_sizes: array = field(default_factory=lambda: array("q"))


@dataclass
class SegmentSpan:
    """One local segment: its last offset (None when empty), bytes and newest time."""

    path: str
    base: int
    last: int | None
    size: int
    max_timestamp: int | None


def read_partition(p: PartitionDir, progress: Progress = QUIET) -> PartitionView:
    """Read one partition dir, once: every batch header (not the records' payloads)."""
    findings: list[Finding] = []
    entries: list[tuple[int, int]] = []
    first_base: int | None = None
    log_end: int | None = None
    size = batches = records = 0
    spans: list[SegmentSpan] = []
    bases, lasts, sizes = array("q"), array("q"), array("q")
    for seg in p.segments:
        if first_base is None:
            first_base = seg.kind.base_offset
        last = newest = None
        seg_size = 0
        for b in read_batches(seg.path, findings, progress=progress):
            if b.last_offset > MAX_OFFSET:
                # offsets no Kafka has (its longs wrap there): not part of the log
                findings.append(offsets_past_max(str(seg.path), b.position, b.base_offset,
                                                 b.last_offset))
                continue
            batches += 1
            records += b.last_offset - b.base_offset + 1
            size += b.size
            seg_size += b.size
            bases.append(b.base_offset)
            lasts.append(b.last_offset)
            sizes.append(b.size)
            epoch = b.leader_epoch if getattr(b, "magic", 2) == 2 else -1
            if epoch >= 0 and (not entries or epoch > entries[-1][0]):
                entries.append((epoch, b.base_offset))
            log_end = b.last_offset + 1
            last = b.last_offset
            newest = b.max_timestamp if newest is None else max(newest, b.max_timestamp)
        spans.append(SegmentSpan(str(seg.path), seg.kind.base_offset or 0, last, seg_size,
                                 newest))
    local_start = first_base if first_base is not None else 0
    end = log_end if log_end is not None else local_start
    checkpoint, problem = load_checked(p.live_file("leader-epoch-checkpoint"))
    if problem is not None:
        findings.append(problem)
    if checkpoint is not None and checkpoint.entries:
        cache = EpochCache.from_entries((e.epoch, e.start_offset) for e in checkpoint.entries)
        cache_from = "leader-epoch-checkpoint"
    else:
        cache, cache_from = EpochCache.from_entries(entries), "batches"
    saved_start = checkpoint_entry(p, "log-start-offset-checkpoint", findings)
    cleaned = checkpoint_entry(p, "cleaner-offset-checkpoint", findings)
    log_start = local_start if saved_start is None else max(saved_start, local_start)
    return PartitionView(p.topic, p.partition, str(p.path), cache, cache_from, log_start,
                         local_start, end, saved_start, size, batches, records,
                         cleaned is not None, findings, spans, bases, lasts, sizes)


def checkpoint_entry(p: PartitionDir, name: str, findings: list[Finding]) -> int | None:
    """This partition's offset in an offset checkpoint of its data dir (the dir above);
    None without the file or the entry, the file's problem in ``findings``."""
    path = Path(p.path).parent / name
    if not path.is_file():
        return None
    content, problem = load_checked(LogFile(path, classify(name)))
    if problem is not None:
        findings.append(problem)
        return None
    for e in content.entries:
        if e.topic == p.topic and e.partition == p.partition:
            return e.offset
    return None
