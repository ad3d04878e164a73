"""What ``kmeta verify`` checks of data dirs as a whole and of their small files: the
offset checkpoints against the partitions, cluster ids, directory ids and topic ids
across the dirs given, partition.metadata, segments given alone."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kmeta.findings import Finding
from kmeta.formats.textfiles import METADATA_TOPIC_ID
from kmeta.ops.verify.jobs import scan_partition
from kmeta.storage.discover import (
    METADATA_TOPIC,
    DeferredPartition,
    LogFile,
    PartitionDir,
)
from kmeta.storage.ends import log_end_now
from kmeta.storage.files import load_checked


def scan_only(files: Iterable[LogFile]) -> list[Finding]:
    """Batch-level checks for segments kmeta does not interpret (loose files)."""
    return scan_partition([(str(f.path), f.kind.base_offset) for f in files])[0]


def partitions_without_segments(data_dir: Any) -> Iterator[Finding]:
    """One finding per data dir for its ordinary partitions that hold no segment at all:
    a copy that left the ``.log`` files out.  Their log end is unknown, so no offset
    checkpoint is judged against them (V035 stays silent); Kafka would open each with an
    empty segment, its data gone from this broker."""
    bare = sorted((p.topic, p.partition) for p in data_dir.partitions
                  if not p.is_metadata and not p.holds_segments())
    if bare:
        yield Finding("V028", f"{len(bare):,} partition directory(ies) hold no log segment "
                      f"(an incomplete copy?): {_tps(bare)}; their log end offsets are "
                      "unknown, so the offset checkpoints are not checked against them",
                      str(data_dir.path))


def offset_checkpoints(files: Iterable[LogFile], log_ends: dict[tuple[str, int], int],
                       data_dir: Path | None = None) -> Iterator[Finding]:
    """A data dir's offset checkpoints against the partitions it holds: a recovery point,
    high watermark, log start or cleaner offset never lies beyond the log end.  An offset
    past the log end as read, which the log holds when looked at again (``data_dir``: its
    partition dirs), was appended since: a live broker checkpoints as it writes."""
    for f in files:
        if f.kind.kind != "offset-checkpoint" or not f.kind.live:
            continue
        loaded, _ = load_checked(f)
        if loaded is None:
            continue
        for e in loaded.entries:
            end = log_ends.get((e.topic, e.partition))
            if end is None or e.offset <= end:
                continue
            now = log_end_now(data_dir / f"{e.topic}-{e.partition}") \
                if data_dir is not None else None
            if now is not None and e.offset <= now:
                yield Finding("S015", f"{e.topic}-{e.partition} at offset {e.offset}, past "
                              f"its log end {end} as read: the log holds it now (appended "
                              "since)", str(f.path), offset=e.offset,
                              details={"read_log_end": end, "log_end_now": now})
            else:
                yield Finding("V035", f"{e.topic}-{e.partition} at offset {e.offset}, "
                              f"beyond its log end offset {end}", str(f.path),
                              offset=e.offset)


def small_files(files: Iterable[LogFile]) -> Iterator[Finding]:
    for f in files:
        _, problem = load_checked(f)
        if problem:
            yield problem


def check_partition_metadata(part: PartitionDir) -> Iterator[Finding]:
    f = next((f for f in part.files if f.kind.kind == "partition-metadata"), None)
    loaded, _ = load_checked(f)
    if loaded is None:
        return
    if loaded.topic_id != METADATA_TOPIC_ID:
        yield Finding("V033", f"partition.metadata says topic id {loaded.topic_id}; the "
                      f"metadata topic's is always {METADATA_TOPIC_ID}", str(f.path))


def _meta_properties(discovery: Any) -> Iterator[tuple[str, Any]]:
    """(path, content) of every data dir's readable meta.properties."""
    for d in discovery.data_dirs:
        f = d.meta_properties
        loaded, _ = load_checked(f)
        if loaded is not None:
            yield str(f.path), loaded


def cluster_ids(discovery: Any) -> Iterator[Finding]:
    """meta.properties of the data dirs given together must name one cluster."""
    seen: dict[str, str] = {}
    for path, loaded in _meta_properties(discovery):
        if loaded.cluster_id:
            seen.setdefault(loaded.cluster_id, path)
    if len(seen) > 1:
        yield Finding("V034", "the data dirs belong to different clusters: " +
                      ", ".join(f"{cid} ({path})" for cid, path in seen.items()))


#: The offset checkpoint files of a data dir, by what they hold.
_CHECKPOINTS = {"log-start-offset-checkpoint": "log start offset",
                "recovery-point-offset-checkpoint": "recovery point",
                "replication-offset-checkpoint": "high watermark"}


def checkpoints_agree(data_dir: Any) -> Iterator[Finding]:
    """A data dir's offset checkpoints against each other and its partition dirs.

    Kafka keeps the high watermark and the recovery point at or above the log start
    offset (``UnifiedLog.updateLogStartOffset``); the log-start file only lists partitions
    whose start is above their first segment.  The checkpoints cover the partitions
    LogManager holds, never ``__cluster_metadata``."""
    values: dict[str, dict[tuple[str, int], int]] = {}
    paths: dict[str, str] = {}
    for f in data_dir.files:
        if f.kind.kind == "offset-checkpoint" and f.kind.live \
                and f.path.name in _CHECKPOINTS:
            loaded, _ = load_checked(f)
            if loaded is not None:
                values[f.path.name] = {(e.topic, e.partition): e.offset for e in loaded.entries}
                paths[f.path.name] = str(f.path)
    starts = values.get("log-start-offset-checkpoint", {})
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
        for tp, start in sorted(starts.items()):
            other = values.get(name, {}).get(tp)
            if other is not None and other < start:
                yield Finding("V036", f"{tp[0]}-{tp[1]}: {_CHECKPOINTS[name]} {other} is below "
                              f"the log start offset {start}", paths[name], offset=other,
                              details={"log_start_offset": start})
    on_disk = {(p.topic, p.partition) for p in data_dir.partitions}
    named = set().union(*(v.keys() for k, v in values.items()
                          if k != "log-start-offset-checkpoint"), set())
    absent = sorted(named - on_disk)
    unnamed = sorted(tp for tp in on_disk - named if tp[0] != METADATA_TOPIC)
    if absent and values:
        yield Finding("V037", f"{len(absent):,} partition(s) named in the offset checkpoints "
                      f"have no directory here: {_tps(absent)}", str(data_dir.path))
    if unnamed and values:
        yield Finding("V037", f"{len(unnamed):,} partition directory(ies) are in no offset "
                      f"checkpoint (Kafka recovers them from their first segment): "
                      f"{_tps(unnamed)}", str(data_dir.path))


def _tps(tps: list[tuple[str, int]], most: int = 5) -> str:
    shown = ", ".join(f"{t}-{p}" for t, p in tps[:most])
    return shown + (f" and {len(tps) - most} more" if len(tps) > most else "")


def directory_ids(discovery: Any) -> Iterator[Finding]:
    """Every log dir gets its own random directory.id (KIP-858): two alike are a copy."""
    seen: dict[str, str] = {}
    for path, loaded in _meta_properties(discovery):
        if not loaded.directory_id:
            continue
        if loaded.directory_id in seen:
            yield Finding("V039", f"directory.id {loaded.directory_id} is also the id of "
                          f"{seen[loaded.directory_id]}", path)
        else:
            seen[loaded.directory_id] = path


def topic_ids(discovery: Any) -> Iterator[Finding]:
    """partition.metadata of one topic's partitions, across every dir given, names one id."""
    ids: dict[str, dict[str, str]] = {}  # topic -> topic id -> first file
    for part in discovery.all_partitions():
        if part.is_metadata:
            continue
        named = part.checked.topic_id if isinstance(part, DeferredPartition) \
            else partition_topic_id(part)
        if named is not None:
            ids.setdefault(part.topic, {}).setdefault(named[1], named[0])
    for topic, seen in sorted(ids.items()):
        if len(seen) > 1:
            yield Finding("V038", f"topic {topic} has topic ids " +
                          ", ".join(f"{tid} ({path})" for tid, path in seen.items()),
                          next(iter(seen.values())))


def partition_topic_id(part: PartitionDir) -> tuple[str, str] | None:
    """(path, topic id) of a partition's readable partition.metadata (its first one)."""
    f = next((f for f in part.files if f.kind.kind == "partition-metadata"), None)
    loaded, _ = load_checked(f)
    return None if loaded is None else (str(f.path), loaded.topic_id)
