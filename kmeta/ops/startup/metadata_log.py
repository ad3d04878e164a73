"""``__cluster_metadata-0`` as a KRaft node opens it on every start, broker, controller
or combined alike (``KafkaRaftManager``, built by ``SharedServer.start`` 3.4+ for both
roles; ``KafkaRaftServer`` in 3.3):

* ``KafkaMetadataLog.apply`` (3.3 to 4.1) opens the log with ``UnifiedLog`` given a
  recovery point of 0, a log start of 0 and ``lastShutdownClean = false``, whatever
  ``.kafka_cleanshutdown`` says (``LogManager.loadLogs`` leaves the dir out, so neither
  its checkpoints nor the marker reach it): ``LogLoader`` recovers every segment from
  byte 0, cuts at the first batch recovery rejects and deletes every later segment (the
  same rules as a data log's, :func:`kmeta.ops.startup.loader.load_partition`, the same
  cut as ``kmeta repair``); the log start is the first segment's base.
* ``UnifiedLog.initializeTopicId``: a ``partition.metadata`` naming another topic id than
  the metadata topic's throws ``InconsistentTopicIdException``; one Kafka cannot parse
  throws ``KafkaStorageException`` (the log's failure channel is its own: nothing takes
  the dir offline, the node stops).
* ``KafkaMetadataLog.recoverSnapshots``: every ``.checkpoint.part`` and
  ``.checkpoint.deleted`` file and every snapshot ending below the log start is deleted;
  but first, with a log start above 0 and no snapshot at or past it, ``IllegalStateException
  "Inconsistent snapshot state"`` (nothing deleted).  ``Snapshots.parse`` reads the first
  20 characters of any name ending in one of those suffixes as a long and characters 21
  to 30 as an int: a name that does not hold them throws.
* ``KafkaMetadataLog.truncateToLatestSnapshot``: with L the epoch cache's latest epoch (0
  when empty) and S the latest snapshot, S.epoch > L, or S.epoch == L with S past the log
  end, drops every segment and starts the log empty at S's end (the epoch cache cleared,
  older snapshots renamed ``.deleted``).  Records of the log at or past S's end go.
* 3.8+: ``KafkaRaftClient.initialize`` reads the latest snapshot whole
  (``KRaftControlRecordStateMachine``): a batch that fails its CRC, or a first batch that
  is not the SnapshotHeader control batch, stops the node; and ``quorum-state`` must parse
  (``FileQuorumStateStore``; 3.3 to 3.7 clear a file they cannot read and start at epoch 0).

The node opens its metadata log before its data logs: a broker's ``LogManager`` loads
them once the first image is published (``BrokerServer.startup`` calls
``sharedServer.startForBroker`` first; ``BrokerMetadataPublisher.initializeManagers``
starts the LogManager), so the metadata log's recovery comes first, one thread.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from kmeta.errors import FormatError, KmetaError
from kmeta.findings import Finding
from kmeta.formats.filenames import PartitionDirName
from kmeta.formats.runs import Run
from kmeta.formats.textfiles import (
    METADATA_TOPIC_ID,
    parse_quorum_state,
)
from kmeta.ops.replica import EpochsPastEnd, epochs_past_end
from kmeta.ops.startup.kafka_files import INT32, INT64, java_number
from kmeta.ops.startup.loader import load_partition
from kmeta.ops.startup.model import PartitionStartup, version_key
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.regular import read_regular
from kmeta.storage.segments import RECOVERY_CUTS, read_batches

METADATA_DIR = "__cluster_metadata-0"
_NAME = PartitionDirName("__cluster_metadata", 0)
_SUFFIXES = (".checkpoint.part", ".checkpoint.deleted", ".checkpoint")
_SMALL = 1 << 20
@dataclass
class SnapshotFate:
    """One snapshot file at start: its id, and what Kafka does with it."""

    file: str
    end_offset: int
    epoch: int
    #: "kept", "deleted" (recoverSnapshots) or "marked for deletion" (the truncation)
    fate: str
    why: str


@dataclass
class MetadataLogStartup:
    """``__cluster_metadata-0`` through a node's start (see the module docstring)."""

    log_dir: Path
    path: Path
    #: the LogLoader's pass over it: every segment recovered from offset 0
    load: PartitionStartup
    snapshots: list[SnapshotFate] = field(default_factory=list)
    #: where truncateToLatestSnapshot starts the log again (every segment dropped)
    truncated_to: int | None = None
    #: the snapshot it follows, as "<end offset>-<epoch>"
    truncated_to_snapshot: str | None = None
    #: records and batches the node's state lacks once it opened the log: those after
    #: recovery's cut and in the segments deleted after it, and the log's records when a
    #: full truncation drops them, but for those the snapshot it restarts at holds
    records_lost: int = 0
    batches_lost: int = 0
    #: first..last offset of those records (None when none)
    lost_offsets: tuple[int, int] | None = None
    #: records the log no longer holds, those a snapshot the log restarts at covers too
    records_dropped: int = 0
    log_start_offset: int = 0
    log_end_offset: int = 0
    #: the log's latest leader epoch once opened (0 when the cache is empty)
    latest_epoch: int = 0
    #: why the node does not start, in words (the exception Kafka throws), else None
    refusal: str | None = None
    #: offsets the log's own leader-epoch-checkpoint names past everything on disk (a
    #: stale copy or a cut tail: kmeta.ops.replica.epochs_past_end), else None; recovery
    #: drops those entries (truncateFromEnd) and the node comes back without the offsets
    missing: EpochsPastEnd | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def bytes_to_read(self) -> int:
        return self.load.cost_bytes

    @property
    def lost_bytes(self) -> int:
        return self.load.lost_bytes

    @property
    def loses_records(self) -> bool:
        return self.records_lost > 0 or self.missing is not None


def _batches(path: str, start: int = 0, upto: int | None = None
             ) -> list[tuple[int, int, int]]:
    """(base offset, last offset, records) of the intact batches of ``path`` from byte
    ``start`` to byte ``upto`` (a run of repeated one-record batches as one entry): what a
    reader can still tell of them (a damaged batch's count is not trusted)."""
    out = []
    for item in read_batches(path, memo=True, runs=True):
        kind = type(item)
        if kind is Finding:
            continue
        if kind is Run:
            if item.first_position < start:
                continue
            if upto is not None and item.first_position >= upto:
                break
            out.append((item.first_base, item.last_offset, item[1]))
            continue
        if item.position < start:
            continue
        if upto is not None and item.position >= upto:
            break
        if getattr(item, "crc_valid", True) is False:
            continue
        out.append((item.base_offset, item.last_offset, getattr(item, "records_count", 1)))
    return out


def _lost(dropped: list[tuple[int, int, int]], end: int) -> tuple[int, int, tuple[int, int]
                                                                  | None]:
    """Batches and records of ``dropped`` at or past ``end``, the offset the node's state
    reaches once the log is open (the snapshot a truncation follows holds the rest: one
    record per offset, a metadata log is never compacted), and their offsets."""
    batches = records = 0
    first = last = None
    for base, high, n in dropped:
        if high < end:
            continue
        batches += 1
        records += n if base >= end else high - end + 1
        low = max(base, end)
        first = low if first is None else min(first, low)
        last = high if last is None else max(last, high)
    return batches, records, None if first is None or last is None else (first, last)


def _snapshot_files(path: Path) -> tuple[list[tuple[str, int, int, str | None]], str | None]:
    """The names Snapshots.parse takes ((name, end offset, epoch, "part"/"deleted"/None)),
    and why it throws on one, else None."""
    out = []
    for name in sorted(os.listdir(path)):
        suffix = next((s for s in _SUFFIXES if name.endswith(s)), None)
        if suffix is None:
            continue
        # substring(0, 20) then parseLong, then substring(21, 31) then parseInt: the
        # first of them to fail names the exception
        offset = java_number(name[:20], INT64) if len(name) >= 20 else None
        epoch = java_number(name[21:31], INT32) if len(name) >= 31 else None
        if offset is None or epoch is None:
            thrown = "NumberFormatException" if len(name) >= 20 and offset is None or \
                len(name) >= 31 else "StringIndexOutOfBoundsException"
            return out, (f"{name}: Snapshots.parse reads an end offset from its first 20 "
                         f"characters and an epoch from characters 21-30, and cannot "
                         f"({thrown})")
        state = "part" if suffix == ".checkpoint.part" else \
            "deleted" if suffix == ".checkpoint.deleted" else None
        out.append((name, offset, epoch, state))
    return out, None


def _snapshot_refusal(path: Path) -> str | None:
    """KRaftControlRecordStateMachine's read of the latest snapshot (3.8+)."""
    first = True
    for item in read_batches(path):
        if type(item) is Finding:
            if item.code in RECOVERY_CUTS:
                return (f"{path.name} is damaged ({item.message}): reading it at start "
                        "throws CorruptRecordException")
            continue
        if first and not (getattr(item, "magic", 0) == 2 and item.is_control):
            return (f"{path.name} does not open with a SnapshotHeader control batch: "
                    "IllegalStateException")
        first = False
    if first:
        return f"{path.name} holds no batch: IllegalStateException (no SnapshotHeader)"
    return None


def _quorum_state(path: Path, version: str, findings: list[Finding]) -> str | None:
    """FileQuorumStateStore's read at start: a refusal (3.8+) or a warning (3.3-3.7,
    which clear the file and start at epoch 0)."""
    f = path / "quorum-state"
    if not f.exists():
        return None
    try:
        parse_quorum_state(read_regular(f, _SMALL, f.name))
        return None
    except (KmetaError, FormatError) as e:
        problem = e.message if isinstance(e, KmetaError) else str(e)
    if "spans several lines" in problem:
        return None  # Kafka reads the first line only
    if version_key(version) >= (3, 8):
        return (f"quorum-state cannot be read ({problem}): FileQuorumStateStore throws and "
                "the node stops (3.8+)")
    findings.append(Finding(
        "V239", f"quorum-state cannot be read ({problem}): Kafka {version} clears it and "
        "starts at epoch 0, no leader and no vote (3.3 to 3.7 do)", str(f)))
    return None


def load_metadata_log(log_dir: Path, progress: Progress = QUIET) -> PartitionStartup:
    """LogLoader's part of opening ``log_dir``'s ``__cluster_metadata-0``: recovered whole,
    whatever the Kafka version (the byte walk, most of the cost of a long log's start)."""
    return load_partition(log_dir, log_dir / METADATA_DIR, _NAME, False, 0, 0, topic_id=True,
                          progress=progress)


def open_metadata_log(log_dir: Path, version: str, *, progress: Progress = QUIET,
                      loaded: PartitionStartup | None = None) -> MetadataLogStartup:
    """What a KRaft node does to ``log_dir``'s ``__cluster_metadata-0`` when it starts
    under Kafka ``version``'s rules (the module docstring); ``loaded``: what
    :func:`load_metadata_log` made of it already (kmeta report: beside verify's pass)."""
    path = log_dir / METADATA_DIR
    part = loaded if loaded is not None else load_metadata_log(log_dir, progress)
    m = MetadataLogStartup(log_dir, path, part)
    for w in part.recover:
        w.why = "the metadata log is recovered whole on every start"
    # a missing index changes nothing here (every segment is recovered), and a load
    # failure is the node's, not LogManager's: said below (V236)
    m.findings.extend(f for f in part.findings if f.code not in ("V178", "V200", "V210"))
    where = str(path)
    if part.load_failure is not None:
        m.refusal = part.load_failure
        return _refused(m)
    if part.offline is not None:
        # KafkaMetadataLog.apply gives the log a LogDirFailureChannel of its own, which no
        # one reads: the KafkaStorageException escapes and the node stops
        m.refusal = (f"{part.offline} (KafkaStorageException: the metadata log's failure "
                     "channel is its own, nothing takes a dir offline)")
        return _refused(m)
    # (a partition.metadata or leader-epoch-checkpoint Kafka cannot read is the loader's
    # verdict, above; UnifiedLog.initializeTopicId then checks the id it read)
    if part.topic_id is not None and part.topic_id != METADATA_TOPIC_ID:
        m.refusal = (f"partition.metadata names topic id {part.topic_id}, not the metadata "
                     f"topic's {METADATA_TOPIC_ID}: InconsistentTopicIdException")
        return _refused(m)
    ec = part.epoch_cache
    start = part.log_start_offset
    end = part.log_end_offset if part.log_end_offset is not None else start
    dropped: list[tuple[int, int, int]] = []
    for w in part.recover:
        if w.truncated_at is not None:
            dropped += _batches(str(path / w.file), w.truncated_at)
    for name in part.deleted_segments:
        dropped += _batches(str(path / name))
    names, bad = _snapshot_files(path)
    if bad is not None:
        m.refusal = bad
        return _refused(m)
    kept: list[tuple[str, int, int]] = []
    for name, offset, epoch, state in names:
        if state is not None:
            m.snapshots.append(SnapshotFate(name, offset, epoch, "deleted",
                                            f"a {state} snapshot file"))
        elif offset < start:
            m.snapshots.append(SnapshotFate(name, offset, epoch, "deleted",
                                            f"it ends at {offset}, below the log start "
                                            f"{start}"))
        else:
            kept.append((name, offset, epoch))
    if start > 0 and not kept:
        m.refusal = (f"Inconsistent snapshot state: the log starts at {start} and no "
                     "snapshot ends at or after it (IllegalStateException in "
                     "KafkaMetadataLog.recoverSnapshots)")
        m.snapshots = []  # the check comes before any deletion
        return _refused(m)
    latest_epoch = ec.after[-1][0] if ec is not None and ec.after else 0
    kept.sort(key=lambda k: (k[1], k[2]))
    latest = kept[-1] if kept else None
    if latest is not None and (latest[2] > latest_epoch or
                               (latest[2] == latest_epoch and latest[1] > end)):
        s_name, s_end, s_epoch = latest
        m.truncated_to, m.truncated_to_snapshot = s_end, f"{s_end}-{s_epoch}"
        for name, offset, epoch in kept[:-1]:
            m.snapshots.append(SnapshotFate(name, offset, epoch, "marked for deletion",
                                            f"older than {s_name}, which the log now "
                                            "starts at"))
        m.snapshots.append(SnapshotFate(s_name, s_end, s_epoch, "kept", "the latest"))
        for w in part.recover:  # every segment goes: the snapshot holds what is below it
            dropped += _batches(str(path / w.file), 0, w.truncated_at)
        start = end = s_end
        latest_epoch = s_epoch
    else:
        for name, offset, epoch in kept:
            m.snapshots.append(SnapshotFate(name, offset, epoch, "kept", "at or past the "
                                            "log start"))
    m.log_start_offset, m.log_end_offset, m.latest_epoch = start, end, latest_epoch
    m.records_dropped = sum(n for _, _, n in dropped)
    m.batches_lost, m.records_lost, m.lost_offsets = _lost(dropped, end)
    if m.lost_offsets is not None:  # every offset from where the state ends is gone
        m.lost_offsets = (end, m.lost_offsets[1])
    if version_key(version) >= (3, 8) and latest is not None:
        m.refusal = _snapshot_refusal(path / latest[0])
        if m.refusal is not None:
            return _refused(m)
    m.refusal = _quorum_state(path, version, m.findings)
    if m.refusal is not None:
        return _refused(m)
    gap = epochs_past_end(path)  # verify's V012: epochs its own checkpoint began past its end
    if gap is not None and gap.lost:
        m.missing = gap
    _findings(m, where)
    return m


def _refused(m: MetadataLogStartup) -> MetadataLogStartup:
    m.findings.append(Finding(
        "V236", f"the node does not start: {m.refusal}; the metadata log opens before "
        "anything else, on every start", str(m.path)))
    return m


def _findings(m: MetadataLogStartup, where: str) -> None:
    part = m.load
    if m.records_lost:
        first, last = m.lost_offsets or (0, 0)
        cut = next((w for w in part.recover if w.truncated_at is not None), None)
        why = (f"recovery cuts {cut.file} at byte {cut.truncated_at} ({cut.cut_code}: "
               f"{cut.cut_reason})" if cut is not None else
               f"the log restarts at snapshot {m.truncated_to_snapshot}")
        if part.deleted_segments:
            why += f" and deletes the {len(part.deleted_segments)} segment(s) after it"
        covered = m.records_dropped - m.records_lost
        held = (f"; of the {m.records_dropped:,} record(s) it drops, the snapshot "
                f"{m.truncated_to_snapshot} it restarts at holds {covered:,}"
                if covered > 0 else "")
        m.findings[:] = [f for f in m.findings if f.code not in ("V170", "V172")]
        m.findings.append(Finding(
            "V237", f"Kafka recovers the whole metadata log on every start: {why}{held}; "
            f"the node comes back without {m.records_lost:,} record(s) (offsets "
            f"{first}..{last}), which it fetches again from the leader where another voter "
            "holds them: a sole controller loses them (kmeta repair --dry-run shows the "
            "same cut)", where, offset=first,
            details={"records_lost": m.records_lost, "batches_lost": m.batches_lost,
                     "records_dropped": m.records_dropped}))
    if m.missing is not None:
        gap = m.missing.missing
        m.findings.append(Finding(
            "V235", f"{m.missing.describe()}: LogLoader drops those entries on start "
            "(truncateFromEnd) and the node comes back without offsets "
            f"{gap.start}..{gap.stop - 1}, a stale copy or a cut tail; it fetches them "
            "again from the leader where another voter holds them", where,
            offset=gap.start, details={"missing_offsets": len(gap),
                                       "epochs": list(m.missing.epochs)}))
    if m.truncated_to is not None:
        what = "every segment is dropped and " if part.segments else \
            "there is no segment on disk, and "
        older = sum(1 for s in m.snapshots if s.fate == "marked for deletion")
        m.findings.append(Finding(
            "V238", f"the latest snapshot {m.truncated_to_snapshot} is ahead of the log "
            f"(KafkaMetadataLog.truncateToLatestSnapshot): {what}the log starts empty at "
            f"{m.truncated_to}" + (f"; the {older} older snapshot(s) are deleted" if older
                                   else ""), where, offset=m.truncated_to))
