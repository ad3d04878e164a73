"""``kmeta tiering``: per user partition, its remote segments replayed from
``__remote_log_metadata``, its last tiered offset, and an empty follower's bootstrap the
classic way and the KIP-1023 way (:mod:`kmeta.core.tiering`)."""

from __future__ import annotations

import os
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path

from kmeta.core.tiering import (
    Bootstrap,
    RemoteLog,
    RemoteSegment,
    bootstrap,
    earliest_pending_upload,
    highest_remote_offset,
)
from kmeta.errors import UnreadableInput
from kmeta.findings import Finding
from kmeta.formats.remote_log_metadata import decode_remote_log_metadata, metadata_partition
from kmeta.ops.replica import PartitionView, read_partition
from kmeta.storage.discover import PartitionDir, discover
from kmeta.storage.files import load_checked
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.segments import batch_records, read_batches

__all__ = ["LocalSegment", "TieringResult", "TieredPartition", "tiering"]

METADATA_TOPIC = "__remote_log_metadata"
DEFAULT_METADATA_PARTITIONS = 50  # remote.log.metadata.topic.num.partitions
DAY_MS = 86_400_000


@dataclass
class LocalSegment:
    path: str
    base: int
    last: int | None
    size: int
    max_timestamp: int | None
    tiered: bool = False  # every offset of it is at or below the last tiered offset


@dataclass
class TieredPartition:
    view: PartitionView
    topic_id: str | None
    metadata_partition: int | None  # where Kafka's partitioner puts its remote metadata
    found_in: list[str] = field(default_factory=list)  # metadata partition dirs that hold it
    remote: RemoteLog = field(default_factory=RemoteLog)
    highest_remote: int = -1
    pending: int | None = None
    classic: Bootstrap | None = None
    kip1023: Bootstrap | None = None
    segments: list[LocalSegment] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # edge cases, in words
    #: that nothing of it is in remote storage, in words, when nothing is: then there is
    #: nothing about remote storage to explain for it
    nothing_tiered: str | None = None

    @property
    def ratio(self) -> float | None:
        a, b = self.classic, self.kip1023
        if a is None or b is None or b.bytes is None or not a.bytes:
            return None
        return b.bytes / a.bytes


@dataclass
class TieringResult:
    partitions: list[TieredPartition] = field(default_factory=list)
    metadata_dirs: list[str] = field(default_factory=list)
    metadata_partitions: int = DEFAULT_METADATA_PARTITIONS
    records: int = 0
    now: int | None = None
    local_retention_ms: int = 7 * DAY_MS
    findings: list[Finding] = field(default_factory=list)
    #: why nothing under the path given is tiered, when that is all there is to say (no
    #: user partition, or no remote log metadata on this disk): not an error
    nothing_tiered: str | None = None


def tiering(path: str | os.PathLike[str], *, metadata_dir: str | os.PathLike[str] | None = None,
            metadata_partitions: int = DEFAULT_METADATA_PARTITIONS,
            local_retention_ms: int = 7 * DAY_MS, now: int | None = None,
            progress: Progress = QUIET) -> TieringResult:
    result = TieringResult(metadata_partitions=metadata_partitions,
                           local_retention_ms=local_retention_ms, now=now)
    found = discover([path], progress=progress)
    result.findings.extend(found.findings)
    users = [p for p in found.all_partitions() if not p.topic.startswith("__")]
    if not users:
        if found.data_dirs and not found.partitions and not found.files:
            result.nothing_tiered = f"no user topic partition in {path}"
            return result
        raise UnreadableInput(f"{path}: no user topic partition here",
                         hint="give a partition dir of a tiered topic (orders-0) or its data dir")
    given = Path(path)
    if metadata_dir is not None:
        meta_root = Path(metadata_dir)
    elif any(p.path == given for p in users):  # a partition dir: look in its data dir
        meta_root = given.parent
    else:
        meta_root = given
    metas = [p for p in discover([meta_root], progress=progress).all_partitions()
             if p.topic == METADATA_TOPIC] \
        if meta_root.exists() else []
    if not metas:
        if metadata_dir is not None:  # an input without what is read from it: exit 3
            raise UnreadableInput(f"{meta_root}: no {METADATA_TOPIC} partition here"
                                  if meta_root.exists() else
                                  f"{meta_root}: --metadata-dir: no such file or directory",
                                  hint="name the data dir that holds them with "
                                  "--metadata-dir")
        # Without remote log metadata nothing can be said to be tiered; in a cluster that
        # tiers, another broker may hold those partitions.
        result.nothing_tiered = (
            f"no {METADATA_TOPIC} partition in {meta_root}, so none of its {len(users):,} "
            "user partition(s) is known to be tiered (if the cluster tiers, that topic may "
            "be on another broker: --metadata-dir)")
        return result
    result.metadata_dirs = [str(p.path) for p in sorted(metas, key=lambda p: p.partition)]
    parts = {}
    for p in sorted(users, key=lambda p: (p.topic, p.partition)):
        tp = _partition(p, metadata_partitions, result.findings, progress)
        parts[(tp.topic_id, p.partition)] = tp
        result.partitions.append(tp)
    for meta in sorted(metas, key=lambda p: p.partition):
        _replay(meta, parts, result, progress)
    newest = max((s.max_timestamp or -1 for tp in result.partitions for s in tp.segments),
                 default=-1)
    if result.now is None and newest >= 0:
        result.now = newest
    for tp in result.partitions:
        _judge(tp, result)
    return result


def _partition(p: PartitionDir, count: int, findings: list[Finding], progress: Progress
               ) -> TieredPartition:
    view = read_partition(p, progress)
    findings.extend(view.findings)
    meta, problem = load_checked(p.live_file("partition-metadata"))
    if problem is not None:
        findings.append(problem)
    topic_id = None if meta is None else meta.topic_id
    tp = TieredPartition(view, topic_id, None if topic_id is None
                         else metadata_partition(topic_id, p.partition, count))
    tp.segments = [LocalSegment(s.path, s.base, s.last, s.size, s.max_timestamp)
                   for s in view.segments]
    return tp


def _replay(meta: PartitionDir, parts: dict, result: TieringResult, progress: Progress
            ) -> None:
    for seg in meta.segments:
        file = str(seg.path)
        for b in read_batches(seg.path, result.findings, progress=progress):
            records, problems = batch_records(b)
            result.findings.extend(problems)
            if b.is_control:
                continue
            for r in records:
                result.records += 1
                p = decode_remote_log_metadata(r.key, r.value)
                if p.finding is not None:
                    code, message = p.finding
                    result.findings.append(Finding(code, f"record at offset {r.offset}: "
                                                   f"{message}", file, b.position, r.offset))
                    continue
                _apply(p.type, p.data, r.offset, str(meta.path), parts)


def _apply(kind: str, data: dict, offset: int, meta: str, parts: dict) -> None:
    if kind == "REMOTE_PARTITION_DELETE_METADATA_RECORD":
        tip = data["topicIdPartition"]
        tp = parts.get((tip["id"], tip["partition"]))
        if tp is not None:
            tp.remote.delete_state = data["remotePartitionDeleteState"]
            _found(tp, meta)
        return
    if kind not in ("REMOTE_LOG_SEGMENT_METADATA_RECORD",
                    "REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD"):
        return  # snapshot records live in snapshot files, not in the topic
    seg_id = data["remoteLogSegmentId"]
    tip = seg_id["topicIdPartition"]
    tp = parts.get((tip["id"], tip["partition"]))
    if tp is None:
        return
    _found(tp, meta)
    if kind == "REMOTE_LOG_SEGMENT_METADATA_RECORD":
        tp.remote.add(RemoteSegment(
            seg_id["id"], data["startOffset"], data["endOffset"],
            {e["leaderEpoch"]: e["offset"] for e in data["segmentLeaderEpochs"]},
            data["segmentSizeInBytes"], data["remoteLogSegmentState"], data["brokerId"],
            data["eventTimestampMs"], data["maxTimestampMs"], offset))
    else:
        tp.remote.update(seg_id["id"], data["remoteLogSegmentState"], data["brokerId"],
                         data["eventTimestampMs"], offset)


def _found(tp: TieredPartition, meta: str) -> None:
    if meta not in tp.found_in:
        tp.found_in.append(meta)


def _judge(tp: TieredPartition, result: TieringResult) -> None:
    v = tp.view
    tp.highest_remote = highest_remote_offset(tp.remote, v.cache, v.log_end)
    # with remote storage the log start is the checkpoint's alone (the oldest data is remote)
    log_start = v.checkpoint_log_start if v.checkpoint_log_start is not None \
        else v.local_log_start
    tp.pending = earliest_pending_upload(tp.highest_remote, log_start, v.local_log_start)
    tp.classic, tp.kip1023 = bootstrap(v.cache, log_start, v.local_log_start, v.log_end,
                                       tp.pending, _replication(tp))
    where = tp.view.path
    if v.compacted_hint:
        tp.notes.append("the topic looks compacted (it is in cleaner-offset-checkpoint): "
                        "KIP-1023 does not apply to compacted topics, the follower goes the "
                        "classic way")
    tp.nothing_tiered = _nothing_tiered(tp, result)
    if tp.nothing_tiered is not None:
        tp.notes.append(tp.nothing_tiered)
    if tp.metadata_partition is not None and tp.found_in and not any(
            Path(m).name == f"{METADATA_TOPIC}-{tp.metadata_partition}" for m in tp.found_in):
        result.findings.append(Finding(
            "V154", f"its remote metadata is in "
            f"{', '.join(Path(m).name for m in tp.found_in)}, not in partition "
            f"{tp.metadata_partition} where Kafka's partitioner puts it for "
            f"{result.metadata_partitions} partitions (--metadata-partitions?)", where))
    for why in tp.remote.dropped:
        result.findings.append(Finding("V153", why, where))
    finished = tp.remote.finished
    for a, b in zip(finished, finished[1:], strict=False):
        if b.start > a.end + 1:
            result.findings.append(Finding(
                "V151", f"offsets {a.end + 1}..{b.start - 1} are in no "
                f"remote segment (between {a.segment_id} and {b.segment_id})", where))
        elif b.start <= a.end:
            result.findings.append(Finding(
                "V151", f"remote segments {a.segment_id} ({a.start}.."
                f"{a.end}) and {b.segment_id} ({b.start}..{b.end}) overlap", where))
    if finished and finished[0].start > log_start:
        result.findings.append(Finding(
            "V151", f"offsets {log_start}..{finished[0].start - 1} are "
            "above the log start but in no remote segment", where))
    known = {e.epoch for e in v.cache.entries}
    for s in finished:
        unknown = sorted(set(s.epochs) - known)
        if unknown:
            result.findings.append(Finding(
                "V152", f"remote segment {s.segment_id} ({s.start}.."
                f"{s.end}) holds epoch(s) {', '.join(map(str, unknown))}, which the local "
                "leader-epoch-checkpoint does not have", where))
    for seg in tp.segments:
        seg.tiered = seg.last is not None and seg.last <= tp.highest_remote
        if seg.tiered and result.now is not None and seg.max_timestamp is not None and \
                result.local_retention_ms >= 0 and \
                result.now - seg.max_timestamp > result.local_retention_ms:
            result.findings.append(Finding(
                "V150", f"offsets {seg.base}.."
                f"{seg.last} are tiered and older than local.retention.ms: Kafka would have "
                "deleted them locally (is the remote log manager running?)", seg.path))


def _nothing_tiered(tp: TieredPartition, result: TieringResult) -> str | None:
    """That nothing of the partition is in remote storage (no segment copied, being copied
    or deleted, no partition deletion), and how far the metadata partitions read tell it."""
    if tp.remote.segments or tp.remote.forgotten or tp.remote.delete_state is not None:
        return None
    if tp.metadata_partition is None:
        return (f"nothing tiered: no record of the {METADATA_TOPIC} partitions read names it "
                "(without partition.metadata its own metadata partition is unknown)")
    home = f"{METADATA_TOPIC}-{tp.metadata_partition}"
    if any(Path(m).name == home for m in result.metadata_dirs):
        return (f"nothing tiered: no record of {home} (where Kafka's partitioner puts its "
                "metadata) names it")
    return (f"nothing tiered as far as this disk tells: {home}, where Kafka's partitioner "
            "puts its metadata, is not here (--metadata-dir)")


def _replication(tp: TieredPartition) -> dict[int, tuple[int, int]]:
    """(records, bytes) of the local log from each offset that matters to its end, from
    the batch spans the partition's one read kept."""
    v = tp.view
    log_start = v.checkpoint_log_start if v.checkpoint_log_start is not None \
        else v.local_log_start
    wanted = {v.local_log_start, log_start}
    if tp.highest_remote >= 0:
        wanted.add(max(tp.highest_remote + 1, log_start, v.local_log_start))
    bases, lasts, sizes = v.batch_bases, v.batch_lasts, v.batch_sizes
    out = {}
    for offset in wanted:
        i = bisect_right(lasts, offset - 1)  # the first batch holding offset or later
        out[offset] = (sum(lasts[j] - max(bases[j], offset) + 1 for j in range(i, len(lasts))),
                       sum(sizes[i:]))
    return out

