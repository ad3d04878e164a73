"""The ordinary topics' partitions of a verify run, each checked whole where it is
claimed (:mod:`.jobs`): a partition dir of a data dir left unlisted by discovery
(``discover(defer=True)``) is listed, classified, scanned and its small files read there
(:func:`check_deferred`); one listed already has its segments scanned."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any, NamedTuple

from kmeta.errors import KmetaError
from kmeta.findings import Finding
from kmeta.formats.filenames import FileKind
from kmeta.formats.textfiles.partition_metadata import topic_id_in
from kmeta.ops.verify.dirs import small_files
from kmeta.ops.verify.jobs import PartitionScans, partitions_in, scan_partition
from kmeta.storage.discover import DeferredPartition, Discovery, LogFile, list_deferred
from kmeta.storage.files import load_checked, read_small


class Relist(Exception):
    """A deferred partition dir was no ordinary partition (or could not be listed): the
    input is discovered again, at once, as discover judges it."""


class Checked(NamedTuple):
    """What checking a deferred ordinary partition dir found, in the order verify reports
    it, and what the checks across partitions need of it (all of it small)."""

    #: the findings of its listing (S007, S008), as discovery reports them
    listed: list[Finding]
    #: its scan's findings, then its small files'
    found: list[Finding]
    #: its log end offset (None: unknown)
    end: int | None
    files: int
    segments: int
    #: the bytes of its segments
    bytes: int
    #: partition.metadata: (path, topic id), as :func:`partition_topic_id` reads it
    topic_id: tuple[str, str] | None
    #: the topic id placement gives it (kmeta.ops.placement)
    placement_id: str | None
    #: what the caller's listener made of the partition dir here (Listeners.partition:
    #: kmeta report's startup loads it), else None
    heard: Any = None


class Seen(NamedTuple):
    """What checking a partition dir read, for a listener to take instead of reading it
    again (kmeta report's startup: a broker's thousands of dirs)."""

    #: every regular file, by name: its kind and, for a segment verify measured, its
    #: size (else None); None where the dir held something else (the listener lists it)
    files: list[tuple[str, FileKind, int | None]] | None
    #: partition.metadata's bytes as verify read them, None where it did not
    partition_metadata: bytes | None
    #: the topic id verify parsed from them, None where it could not
    topic_id: str | None
    #: the producer snapshots (not deleted ones) verify read, by name: their bytes
    snapshots: dict[str, bytes]


def check_deferred(task: tuple[str, str, int],
                   hear: Callable[[str, Seen], Any] | None = None) -> Checked | None:
    """Everything verify checks of one ordinary partition dir of a data dir, from its
    listing on: its files classified, its segments scanned, its small files read; and
    what ``hear`` makes of the dir and what was read of it.  None when the dir is not the
    ordinary partition its name says (see :func:`kmeta.storage.discover.list_deferred`)."""
    listed = list_deferred(*task)
    if listed is None:
        return None
    part, findings, regular = listed
    metadata_bytes: bytes | None = None
    metadata_id: str | None = None
    snapshots: dict[str, bytes] = {}
    segments = part.segments
    found, end = scan_partition([(str(f.path), f.kind.base_offset) for f in segments])
    # partition.metadata read once for all three (small_files, topic_ids, placement)
    named: tuple[str, str] | None = None
    placed: str | None = None
    first = True
    for f in part.files:
        kind = f.kind.kind
        if kind not in ("partition-metadata", "txn-index", "producer-snapshot"):
            continue
        if kind == "producer-snapshot" and f.kind.live:
            read = _read_checked(f, found)  # its bytes kept for the listener
            if read is not None:
                snapshots[f.path.name] = read[0]
            continue
        if kind != "partition-metadata" or not first:
            found.extend(small_files([f]))
            continue
        first = False  # what topic_ids and placement read: the first one
        read = _read_checked(f, found)
        if read is None:
            continue
        data, loaded = read
        if loaded is not None:
            named = (str(f.path), loaded.topic_id)
        if f.kind.live:
            placed = topic_id_in(data, lambda loaded=loaded: loaded)
        if f.path.name == "partition.metadata":
            metadata_bytes = data
            metadata_id = None if loaded is None else loaded.topic_id
    if placed is None and not first:  # a partition.metadata that is not live came first
        from kmeta.ops.placement import partition_topic_id as placement_id

        placed = placement_id(part)
    size = 0
    sizes: dict[str, int] = {}
    for f in segments:
        with contextlib.suppress(OSError):
            size += (n := f.path.stat().st_size)
            sizes[f.path.name] = n
    heard = None
    if hear is not None:
        files = None if regular is None else \
            [(name, kind, sizes.get(name)) for name, kind in regular]
        heard = hear(task[0], Seen(files, metadata_bytes, metadata_id, snapshots))
    return Checked(findings, found, end, len(part.files), len(segments), size, named, placed,
                   heard)


def _read_checked(f: LogFile, found: list[Finding]) -> tuple[bytes, Any] | None:
    """A small file's bytes and content, read and checked as small_files does (its
    findings onto ``found``); None where it cannot be read."""
    try:
        data = read_small(f)
    except KmetaError as e:
        found.append(e.finding(str(f.path)))
        return None
    loaded, problem = load_checked(f, data)
    if problem:
        found.append(problem)
    return data, loaded


def check_task(task: Any, hear: Callable[[str, Seen], Any] | None = None) -> Any:
    """One task of verify's ordinary partitions: a deferred partition dir's
    (:func:`check_deferred`), or the segments of one listed already
    (:func:`.jobs.scan_partition`)."""
    return check_deferred(task, hear) if isinstance(task, tuple) else scan_partition(task)


def partition_scans(discovery: Discovery, jobs: int,
                    hear: Callable[[str, Seen], Any] | None = None) -> PartitionScans:
    """The checks of the ordinary partitions ``discovery`` found, in its order, with
    ``jobs`` processes: a deferred partition dir's whole check (and what ``hear``, a
    module-level function, makes of the dir there), a listed one's scan."""
    ordinary = [p for p in discovery.all_partitions() if not p.is_metadata]
    if not any(isinstance(p, DeferredPartition) for p in ordinary):
        return PartitionScans(partitions_in([p.segments for p in ordinary]), jobs)
    tasks: list[tuple[Any, int | None]] = [
        ((str(p.path), p.topic, p.partition), None) if isinstance(p, DeferredPartition)
        else partitions_in([p.segments])[0] for p in ordinary]
    return PartitionScans(tasks, jobs, check_task if hear is None
                          else functools.partial(check_task, hear=hear))
