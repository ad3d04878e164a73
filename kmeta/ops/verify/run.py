"""A ``kmeta verify`` run over what discovery found: the metadata log's pass
(:mod:`.metadata_log`), the ordinary partitions' checks (:mod:`.partitions`), the data
dirs' small files and checkpoints (:mod:`.dirs`), ids across the dirs given, and each
broker's partition dirs against its own image (:mod:`kmeta.ops.placement`), gathered in a
:class:`VerifyReport`."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Any

from kmeta.errors import UnreadableInput
from kmeta.findings import Finding, finding_counts
from kmeta.ops.placement import discovery_placement
from kmeta.ops.replay import snapshot_image
from kmeta.ops.replica import LogStats
from kmeta.ops.verify.dirs import (
    check_partition_metadata,
    checkpoints_agree,
    cluster_ids,
    directory_ids,
    offset_checkpoints,
    partitions_without_segments,
    scan_only,
    small_files,
    topic_ids,
)
from kmeta.ops.verify.jobs import PartitionScans
from kmeta.ops.verify.metadata_log import NOBODY, Listeners, verify_metadata_partition
from kmeta.ops.verify.partitions import Relist, partition_scans
from kmeta.storage.discover import DeferredPartition, Discovery, LogFile, relisted
from kmeta.storage.files import load_checked
from kmeta.storage.live import TRIES, live_dirs
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.segments import unreadable


@dataclass
class VerifyReport:
    """Everything a verify run found, with what it read."""

    findings: list[Finding] = field(default_factory=list)
    logs: dict[str, LogStats] = field(default_factory=dict)  # partition dir -> stats
    files: int = 0
    #: record-batch files actually read: log segments and snapshots (bootstrap included)
    segments: int = 0
    snapshots: int = 0
    #: of the snapshots, the bootstrap.checkpoint files (a new cluster's first metadata,
    #: not a snapshot of the log: the text says them apart, as report does)
    bootstraps: int = 0
    #: checks that could not run, one line each, so that silence never means "checked"
    not_run: list[str] = field(default_factory=list)

    @property
    def checked_logs(self) -> bool:
        """Whether any segment or snapshot was read: without one, nothing says "clean"."""
        return bool(self.segments or self.snapshots)

    def counts(self) -> dict[str, int]:
        return finding_counts(self.findings)

    def summary_json(self) -> dict[str, Any]:
        return {
            "kind": "summary",
            "files": self.files,
            "segments": self.segments,
            "snapshots": self.snapshots,
            "not_run": self.not_run,
            "finding_counts": self.counts(),
            "logs": {path: {"segments": s.segments, "batches": s.batches,
                            "records": s.records, "bytes": s.bytes,
                            "first_offset": s.first_offset, "last_offset": s.last_offset,
                            "epochs": sorted(s.epochs)}
                     for path, s in self.logs.items()},
        }


def verify_discovery(discovery: Discovery, progress: Progress = QUIET,
                     jobs: int = 1, *,
                     metadata: str | os.PathLike[str] | None = None,
                     listeners: Listeners = NOBODY) -> VerifyReport:
    """Run every check on what discovery found (also one made by hand: a repaired copy
    under a name of the user's); ``progress`` hears of each segment read, ``listeners``
    of each metadata log's pass."""
    with partition_scans(discovery, jobs, listeners.partition) as scans:
        return verify_with(discovery, scans, progress, metadata, listeners)


def verify_with(discovery: Discovery, scans: PartitionScans, progress: Progress,
                metadata: str | os.PathLike[str] | None,
                listeners: Listeners = NOBODY) -> VerifyReport:
    """:func:`verify_discovery`, its ordinary partitions checked by ``scans``
    (:func:`.partitions.partition_scans`); raises
    :class:`~.partitions.Relist` when a deferred partition dir is none."""
    if scans.processes:
        # parsed while the workers check partitions, not after: the offset
        # checkpoints of 4,000 partitions take a few hundredths of a second
        for d in discovery.data_dirs:
            for f in d.files:
                if not f.is_batches:
                    load_checked(f)
    return _verify_discovery(discovery, progress, scans, metadata, listeners)


def _verify_discovery(discovery: Discovery, progress: Progress,
                      scans: PartitionScans,
                      metadata: str | os.PathLike[str] | None,
                      listeners: Listeners) -> VerifyReport:
    report = VerifyReport()
    add = report.findings.extend
    # partition dir -> its log end offset (two data dirs given together may each hold a
    # replica of one partition: each checkpoint is judged against its own dir's)
    log_ends: dict[str, int] = {}
    for part in discovery.all_partitions():
        if isinstance(part, DeferredPartition):
            checked = scans.take()
            if checked is None:
                raise Relist
            part.checked = checked
            part.listed.extend(checked.listed)
            report.files += checked.files
            add(checked.found)
            if checked.end is not None:
                log_ends[str(part.path)] = checked.end
            report.segments += checked.segments
            progress.read_elsewhere(checked.bytes)  # listed and read where it was claimed
            continue
        report.files += len(part.files)
        blocked = unreadable(part.segments) if part.is_metadata else []
        if blocked and all(f.code == "S013" for f in blocked) and live_dirs([part.path]):
            # a running broker deleted a segment since the listing (the log start moved
            # past it): the partition as it is now
            part.files = relisted(part)
            blocked = unreadable(part.segments)
        if blocked:
            add(blocked)
            report.not_run.append(f"{part.path}: log, epoch, snapshot, index and replay "
                                  "checks not run: a segment cannot be read")
        elif part.is_metadata:
            findings, stats = verify_metadata_partition(part, progress, scans.jobs,
                                                        listeners)
            for _ in range(TRIES - 1):
                # a segment or snapshot a running broker deleted while it was read leaves
                # a hole no check can see past: the partition as it is now, once more
                if not any(f.code == "S013" for f in findings) \
                        or not live_dirs([part.path]):
                    break
                part.files = relisted(part)
                findings, stats = verify_metadata_partition(part, progress, scans.jobs,
                                                            listeners)
            add(findings)
            report.segments += stats.segments
            report.snapshots += len(stats.snapshot_findings)
            if stats.segments and stats.image is None:
                report.not_run.append(f"{part.path}: image not replayed (no usable snapshot "
                                      "where the log starts), so the snapshots were not "
                                      "compared with the log")
            log_ends[str(part.path)] = (stats.last_offset or -1) + 1
            report.logs[str(part.path)] = stats
            if scans.processes:  # the text report's, while the workers check partitions
                stats.image_digest()
            add(check_partition_metadata(part))
        else:
            found, end = scans.take()
            add(found)
            if end is not None:
                log_ends[str(part.path)] = end
            report.segments += len(part.segments)
            _told(progress, part.segments)
        add(small_files(f for f in part.files if f.kind.kind in
                         ("partition-metadata", "txn-index", "producer-snapshot")))
    for d in discovery.data_dirs:
        report.files += len(d.files)
        add(small_files(f for f in d.files if not f.is_batches))
        own = {(p.topic, p.partition): log_ends[str(p.path)] for p in d.partitions
               if str(p.path) in log_ends}
        add(partitions_without_segments(d))
        add(offset_checkpoints(d.files, own, d.path))
        add(checkpoints_agree(d))
        for f in d.files:
            if f.kind.kind == "bootstrap-checkpoint":
                add(snapshot_image(f)[1])
                report.snapshots += 1
                report.bootstraps += 1
    add(cluster_ids(discovery))
    add(directory_ids(discovery))
    add(topic_ids(discovery))
    loose = 0
    for f in discovery.files:
        report.files += 1
        if f.kind.kind in ("kraft-snapshot", "bootstrap-checkpoint"):
            add(snapshot_image(f)[1])
            report.snapshots += 1
            report.bootstraps += f.kind.kind == "bootstrap-checkpoint"
        elif f.is_batches:
            add(scan_only([f]))
            report.segments += 1
            loose += 1
        else:
            add(small_files([f]))
    if loose:
        report.not_run.append(f"{loose:,} segment(s) outside a __cluster_metadata-N partition "
                              "directory: checked as batches only (framing, CRC); KRaft "
                              "record rules, leader epochs, snapshots and the replay need "
                              "the partition directory")
    if metadata is None:
        report.not_run += _no_metadata_log(discovery)
    if not report.files:
        raise UnreadableInput("no Kafka file to check", hint="point kmeta at a data dir, a "
                              "partition dir or a file")
    # the image against the disk: each broker's partition dirs against its own image
    for placed in discovery_placement(discovery, {path: s.image for path, s in
                                                  report.logs.items()}, metadata=metadata):
        add(placed.findings)
        report.not_run += placed.not_run
    # discovery's findings first, those of the partition dirs the checks listed included
    report.findings[:0] = discovery.settled_findings()
    return report


def _told(progress: Progress, segments: list[LogFile]) -> None:
    """``progress`` hears of segments scanned beside the pass (by a worker, or by this
    process for a worker) as read whole."""
    for f in segments:
        with contextlib.suppress(OSError):
            progress.read(str(f.path), f.path.stat().st_size)


#: What verify checks only where a metadata log is (the rest: every segment's framing and
#: CRCs, the checkpoints and small files, are checked in any data dir).
METADATA_RULES = ("KRaft records, leader epochs, snapshots, the image replay and placement")


def _no_metadata_log(discovery: Discovery) -> list[str]:
    """One line per data dir when none of them holds a metadata log nor a snapshot: the
    metadata rules did not run, which a clean summary alone would hide (a ZooKeeper-mode
    broker keeps its metadata in ZooKeeper, not on disk)."""
    if any(p.is_metadata for p in discovery.all_partitions()) or any(
            f.kind.kind in ("kraft-snapshot", "bootstrap-checkpoint")
            for d in discovery.data_dirs for f in d.files) or any(
            f.kind.kind in ("kraft-snapshot", "bootstrap-checkpoint") or f.is_metadata
            for f in discovery.files):
        return []
    out = []
    for d in discovery.data_dirs:
        loaded = load_checked(d.meta_properties)[0] if d.meta_properties else None
        mode = ""
        if loaded is not None and loaded.version == 0:
            mode = " (a ZooKeeper-mode data dir: meta.properties version 0)"
        out.append(f"{d.path}: no metadata log{mode}: the metadata rules ({METADATA_RULES}) "
                   "did not run")
    return out
