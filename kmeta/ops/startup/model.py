"""What ``kmeta startup`` says Kafka will do when it opens a broker's log dirs: the
result objects, the Kafka versions whose rules differ, and the seam where the image's
judgement of each log (stray or not) comes in.

Kafka facts (``apache/kafka``, read for behaviour only; the version each is read from):

* ``num.recovery.threads.per.data.dir``: one pool of that many threads per log dir, the
  pools of all dirs at once (``LogManager.loadLogs``, 3.5 to 3.9 and trunk 2024-10); its
  default is 1 up to 3.9 (``ServerLogConfigs``) and 2 from 4.0 (KIP-1030, apache/kafka
  PR #18106).
* ``-stray`` partition dirs are known from 3.6.1 (KAFKA-15605); 3.5 and 3.6.0 cannot
  parse their names and fail to start (``LocalLog.parseTopicPartitionName``).
* Logs the image does not place on this broker are renamed ``-stray`` while they load
  from 3.7.1 (``LogManager.isStrayKraftReplica``); 3.7.0 renames them after the load,
  3.5 and 3.6 delete them once the ReplicaManager runs.  That judgement needs the
  metadata image: :data:`PlacementJudge` is where it comes in (kmeta.ops.placement).

Kafka documents no recovery rate (its ops guide says only that recovery takes time):
:data:`DEFAULT_RECOVERY_RATE` is an assumption, stated as one in kmeta(1).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from kmeta.core.kafka_releases import (
    DEFAULT_RECOVERY_RATE,
    KAFKA_VERSIONS,
    NEWEST,
    default_recovery_threads,
    knows_stray_dirs,
    version_key,
)
from kmeta.findings import Finding

__all__ = ["DEFAULT_RECOVERY_RATE", "KAFKA_VERSIONS", "NEWEST", "CheckpointUse",
           "EpochCachePlan", "FileFate", "LogDirStartup", "LogView", "PartitionStartup",
           "Placement", "PlacementJudge", "SegmentSplit", "SegmentWork", "StartupReport",
           "default_recovery_threads", "knows_stray_dirs", "version_key"]

# ----------------------------------------------------------------------------- the seam

@dataclass(frozen=True)
class LogView:
    """A loaded log as the placement judge sees it: where it is, what it is, and whose
    rules apply.  Current logs (``state`` None) and future ones (``"future"``:
    ``recoverAbandonedFutureLogs``, 3.7.1+) are judged; ``-delete`` and ``-stray`` dirs
    are not (their names decide)."""

    log_dir: Path
    path: Path
    topic: str
    partition: int
    #: from partition.metadata; None when the file is missing or unreadable
    topic_id: str | None
    #: None for a current log, "future" for a move in progress
    state: str | None
    kafka_version: str


class Placement(NamedTuple):
    """The image's verdict on one log: whether the Kafka version treats it as stray, why,
    and what that version does with it (each in words; it becomes the log's ``fate`` when
    ``stray``), with the findings it makes (they join the report's)."""

    stray: bool
    why: str
    kafka_does: str
    findings: tuple[Finding, ...] = ()


#: Judges a current log against the metadata image; None when it cannot (no image).
#: ``plan_startup(..., placement=...)`` takes one; without it, stray logs are not judged.
PlacementJudge = Callable[[LogView], Placement | None]


# ---------------------------------------------------------------------------- results

@dataclass
class SegmentWork:
    """A segment Kafka reads on load (``LogSegment.recover``)."""

    file: str
    base_offset: int
    bytes: int
    #: why Kafka recovers it
    why: str
    batches: int = 0
    #: the offset after the last batch recovery keeps (None: it keeps none)
    next_offset: int | None = None
    #: where recovery cuts it (a byte position), None when it keeps it whole
    truncated_at: int | None = None
    cut_code: str | None = None
    cut_reason: str | None = None
    #: where offsets go backwards (a batch not above the one before) and recovery does
    #: not notice (no index entry lands there): byte position, offset, and the least
    #: offset the batch should have had
    backwards: tuple[int, int, int] | None = None

    @property
    def removed_bytes(self) -> int:
        return 0 if self.truncated_at is None else self.bytes - self.truncated_at


@dataclass
class SegmentSplit:
    """A legacy segment whose offsets overrun ``base + Int.MaxValue`` (KAFKA-6264):
    ``LocalLog.splitOverflowedSegment`` replaces it with ``pieces`` (each a new segment:
    file, base offset, bytes, batches), or fails (``failure``) and the log does not load."""

    file: str
    base_offset: int
    bytes: int
    #: the first batch's last offset the segment cannot index
    overflow_offset: int
    pieces: list[tuple[str, int, int, int]] = field(default_factory=list)
    failure: str | None = None


class Recovery:
    """``LogSegment.recover`` over one segment's bytes: the batches it keeps, where it
    truncates, and the exception that stops it (``fault``: "overflow", a batch whose last
    offset the segment cannot index, or "invalid_offset", an index entry not above the
    one before)."""

    __slots__ = ("batches", "next_offset", "valid_bytes", "cut", "fault", "fault_position",
                 "fault_offset", "fault_text", "assigns", "backwards", "epochs_seen")

    def __init__(self) -> None:
        self.batches = 0
        self.next_offset: int | None = None
        self.valid_bytes = 0
        #: (position, finding code, reason) of the first batch it rejects
        self.cut: tuple[int, str, str] | None = None
        self.fault: str | None = None
        self.fault_position = 0
        self.fault_offset = 0
        self.fault_text = ""
        #: (epoch, base offset) of each batch whose epoch is above every earlier one's:
        #: those the epoch cache may assign (LogSegment.recover)
        self.assigns: list[tuple[int, int]] = []
        #: (position, offset, least expected offset) where offsets first go backwards
        self.backwards: tuple[int, int, int] | None = None
        self.epochs_seen = -1

    def stop(self, fault: str, position: int, offset: int, text: str, kept: int,
             next_offset: int | None, valid: int) -> Recovery:
        """Recovery stops at a batch it cannot index (``fault``), the ones before kept."""
        self.fault, self.fault_position, self.fault_offset, self.fault_text = \
            fault, position, offset, text
        self.batches, self.next_offset, self.valid_bytes = kept, next_offset, valid
        return self


@dataclass
class EpochCachePlan:
    """The leader-epoch cache as loading leaves it: read from leader-epoch-checkpoint,
    new epochs assigned from the batches recovery reads, entries at or past the log end
    removed (``truncateFromEnd``), those below the log start checkpoint removed and the
    last of them moved up to it (``truncateFromStart``); or deleted outright when the
    message format has no leader epochs (``maybeCreateLeaderEpochCache``)."""

    #: (epoch, start offset) pairs
    before: list[tuple[int, int]]
    after: list[tuple[int, int]]
    #: "read", "missing" (an empty cache) or "unreadable" (the log does not load, or
    #: takes its dir offline: ``PartitionStartup.load_failure``/``offline``)
    source: str = "read"
    #: why the cache is deleted, else None
    cleared: str | None = None

    @property
    def added(self) -> list[tuple[int, int]]:
        old = set(self.before)
        return [e for e in self.after if e not in old]

    @property
    def removed(self) -> list[tuple[int, int]]:
        new = set(self.after)
        return [e for e in self.before if e not in new]

    @property
    def changes(self) -> bool:
        return self.cleared is not None or self.before != self.after


@dataclass
class FileFate:
    """What Kafka does to one file on load, and why."""

    file: str
    fate: str
    why: str


@dataclass
class PartitionStartup:
    """One partition dir as Kafka's ``LogLoader`` and ``LogManager.loadLog`` open it."""

    log_dir: Path
    path: Path
    topic: str
    partition: int
    #: None for a current log, else "delete", "future" or "stray" (from its name)
    state: str | None
    topic_id: str | None
    segments: int
    bytes: int
    recovery_point: int
    log_start_checkpoint: int
    recover: list[SegmentWork] = field(default_factory=list)
    #: segments recovery deletes after a truncated one (file names)
    deleted_segments: list[str] = field(default_factory=list)
    index_rebuilds: list[FileFate] = field(default_factory=list)
    leftovers: list[FileFate] = field(default_factory=list)
    #: how the producer state is rebuilt, in words, and the bytes that reads
    producer_state: str = ""
    producer_bytes: int = 0
    #: the log end is below the log start checkpoint: every segment is deleted
    all_deleted: bool = False
    log_start_offset: int = 0
    log_end_offset: int | None = None
    #: what LogManager does with the loaded log, in words
    fate: str = "loaded"
    #: legacy segments split because their offsets overrun the index (KAFKA-6264)
    splits: list[SegmentSplit] = field(default_factory=list)
    #: why Kafka cannot load this log (the exception escapes loadLogs: the broker does
    #: not start), else None
    load_failure: str | None = None
    #: why loading it takes its log dir offline (an IOException LogManager.loadLogs
    #: catches), else None
    offline: str | None = None
    #: remote storage on for the topic (the log start is then the checkpoint's, 3.6+);
    #: None when it could not be told
    remote_storage: bool | None = False
    #: how the log start was chosen, in words
    log_start_rule: str = ""
    epoch_cache: EpochCachePlan | None = None
    #: the base offset of the first segment the load keeps, None when none is kept
    first_local_offset: int | None = None
    #: bytes read again because loading restarts after a split (and the split's read)
    reread_bytes: int = 0
    placement: Placement | None = None
    findings: list[Finding] = field(default_factory=list)
    #: replication-offset-checkpoint's entry, the high watermark the broker starts the
    #: log with once it runs (capped at the log end); None without one (:mod:`.offsets`)
    high_watermark: int | None = None
    #: offsets below the high watermark (committed) and below the recovery point
    #: (flushed once) that the loaded log lacks, each from its log end; and why
    committed_missing: range = range(0)
    flushed_missing: range = range(0)
    missing_cause: str = ""

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def recover_bytes(self) -> int:
        return sum(s.bytes for s in self.recover)

    @property
    def cost_bytes(self) -> int:
        """Bytes Kafka re-reads to open this log: the segments it recovers and what the
        producer state is rebuilt from."""
        return self.recover_bytes + self.producer_bytes + self.reread_bytes

    @property
    def lost_bytes(self) -> int:
        return sum(s.removed_bytes for s in self.recover if s.cut_code != "S002") + \
            self.deleted_bytes

    deleted_bytes: int = 0


class LoadedAhead(NamedTuple):
    """A partition's load made before the broker's image was known (kmeta report: where
    verify's worker checks it, :func:`~kmeta.ops.startup.manager.load_one_ahead`), with
    what it was made from: it stands for the load only where the image's configs and the
    log dir's files give the same."""

    clean: bool
    recovery_point: int
    log_start: int
    #: the topic's load config it was made with (the image's configs may differ)
    config: Any
    part: PartitionStartup


@dataclass
class CheckpointUse:
    """One of the two offset checkpoints ``loadLogs`` reads in a log dir."""

    name: str
    #: "read", "missing" (created empty: every offset 0) or "corrupt" (reset to 0)
    state: str
    entries: int = 0
    problem: str | None = None


@dataclass
class LogDirStartup:
    """One log dir as ``LogManager.loadLogs`` opens it."""

    path: Path
    clean_shutdown: bool
    #: the broker epoch in .kafka_cleanshutdown (3.7+), None when absent or empty
    broker_epoch: int | None
    recovery_checkpoint: CheckpointUse
    log_start_checkpoint: CheckpointUse
    threads: int
    partitions: list[PartitionStartup] = field(default_factory=list)
    #: directory names Kafka cannot parse: the broker refuses to start
    refused: list[str] = field(default_factory=list)
    #: holds __cluster_metadata-0, which LogManager leaves to the raft layer
    metadata_log: bool = False
    #: the dir goes offline once the broker runs (a checkpoint Kafka cannot read)
    offline: bool = False
    #: a running process holds its .lock (S012): a broker runs on it now
    live: bool = False

    @property
    def cost_bytes(self) -> int:
        return sum(p.cost_bytes for p in self.partitions)

    def seconds(self, rate: float) -> float:
        """How long the dir's pool of ``threads`` takes at ``rate`` bytes/s per thread:
        each log is one job, the largest first to the least busy thread (Kafka submits
        them in directory order; largest-first is the schedule's best case).  Only the
        threads that get a log are kept: Kafka accepts up to 2^31 - 1 of them."""
        costs = sorted((c for p in self.partitions if (c := p.cost_bytes)), reverse=True)
        busy = [0] * min(max(1, self.threads), max(1, len(costs)))  # a heap of loads
        for cost in costs:
            heapq.heapreplace(busy, busy[0] + cost)
        return max(busy) / rate


@dataclass
class StartupReport:
    """What Kafka will do when it opens the log dirs of one broker."""

    kafka_version: str
    threads: int
    #: where the thread count came from, in words
    threads_from: str
    recovery_rate: float
    recovery_rate_from: str
    dirs: list[LogDirStartup]
    findings: list[Finding] = field(default_factory=list)
    #: why the broker refuses to start, one line each
    refusals: list[str] = field(default_factory=list)
    #: the common broker epoch of the clean shutdown markers (KIP-966), else None
    broker_epoch: int | None = None
    #: whether stray logs were judged against a metadata image
    placement_judged: bool = False
    notes: list[str] = field(default_factory=list)
    #: the placement and missing_replica objects of the image against the disk
    placement_objects: list[dict[str, Any]] = field(default_factory=list)
    #: __cluster_metadata-0 as the node opens it (a MetadataLogStartup,
    #: :mod:`kmeta.ops.startup.metadata_log`), None for a dir set without one
    metadata_log: Any = None
    #: a refusal comes before Kafka loads any log (meta.properties, a dir name, a held
    #: lock): nothing loads, what each log costs is what it would once the broker starts
    refuses_before_loading: bool = False
    #: why ``kafka_version``'s rules apply, in words ("--kafka-version", the log's
    #: metadata.version, a ZooKeeper-mode broker)
    kafka_version_from: str = ""
    #: the node.id (broker.id) of the broker's meta.properties, None when none says it
    node_id: int | None = None

    @property
    def partitions(self) -> list[PartitionStartup]:
        return [p for d in self.dirs for p in d.partitions]

    @property
    def cost_bytes(self) -> int:
        """Bytes re-read on start: the metadata log's and the data logs'."""
        return self.metadata_bytes + sum(d.cost_bytes for d in self.dirs)

    @property
    def metadata_bytes(self) -> int:
        return 0 if self.metadata_log is None else self.metadata_log.bytes_to_read

    @property
    def metadata_seconds(self) -> float:
        """One thread recovers the metadata log, before LogManager loads the data logs."""
        return self.metadata_bytes / self.recovery_rate

    @property
    def seconds(self) -> float:
        """The metadata log first, then the pools of all dirs at once: the slowest dir
        sets their time."""
        return self.metadata_seconds + max(
            (d.seconds(self.recovery_rate) for d in self.dirs), default=0.0)

    @property
    def loses_data(self) -> bool:
        """Recovery removes records, committed records are not in the logs it loads, or
        the metadata log comes back without records."""
        return any(p.lost_bytes or p.all_deleted or p.committed_missing
                   for p in self.partitions) or (
            self.metadata_log is not None and self.metadata_log.loses_records)
