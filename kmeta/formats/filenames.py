"""What a file or directory in a Kafka log directory is, told from its name alone.

Spec (in ``apache/kafka``):

* ``storage/.../log/LogFileUtils.java``: segment files are ``<offset>.log`` with the
  offset zero-padded to 20 digits, next to ``.index``, ``.timeindex``, ``.txnindex`` and
  producer snapshots ``<offset>.snapshot``.  Any of them may carry a state suffix:
  ``.deleted`` (scheduled for deletion), ``.cleaned`` (being written by the log cleaner),
  ``.swap`` (about to replace live files).  Kafka reads the offset as everything before
  the first dot.
* ``raft/.../snapshot/Snapshots.java``: KRaft snapshots are
  ``<20-digit end offset>-<10-digit epoch>.checkpoint``; one being written is
  ``<offset>-<epoch>-<random digits>.checkpoint.part`` (``Files.createTempFile``), one
  scheduled for deletion ``<offset>-<epoch>.checkpoint.deleted``.  ``bootstrap.checkpoint``
  (``metadata/.../bootstrap/BootstrapDirectory``) sits at the top of the metadata log dir.
* ``storage/.../checkpoint/``: ``leader-epoch-checkpoint``, ``partition.metadata``, and at
  the top of a log dir ``recovery-point-offset-checkpoint``,
  ``replication-offset-checkpoint``, ``log-start-offset-checkpoint``,
  ``cleaner-offset-checkpoint`` and ``meta.properties``; ``raft/.../FileQuorumStateStore``:
  ``quorum-state``; ``storage/.../checkpoint/CleanShutdownFileHandler``:
  ``.kafka_cleanshutdown`` (written on a clean shutdown: empty before Kafka 3.7, then
  ``{"version":0,"brokerEpoch":N}``); ``LogManager``: ``.lock`` (empty, held while the broker
  runs).
* ``core/.../log/LocalLog.scala`` (``parseTopicPartitionName``): a partition directory is
  ``<topic>-<partition>``, split at the *last* dash; a directory being deleted, moved
  between log dirs or found stray is ``<topic>-<partition>.<32 hex uniqueId>-delete``,
  ``-future`` or ``-stray``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from kmeta.formats.primitives import INT32_MAX, INT64_MAX

OFFSET_WIDTH = 20
EPOCH_WIDTH = 10
SNAPSHOT_EXTENSION = ".checkpoint"

#: File kinds :func:`classify` can return.
KINDS = (
    "segment", "offset-index", "time-index", "txn-index", "producer-snapshot",
    "kraft-snapshot", "bootstrap-checkpoint", "leader-epoch-checkpoint", "offset-checkpoint",
    "quorum-state", "partition-metadata", "meta-properties", "clean-shutdown", "lock",
    "remote-log-snapshot", "unknown",
)
#: State suffixes a file name may carry.
SUFFIXES = (None, "deleted", "cleaned", "swap", "part")

#: extension (without dot) of offset-named files -> kind
OFFSET_FILE_EXTENSIONS = {
    "log": "segment",
    "index": "offset-index",
    "timeindex": "time-index",
    "txnindex": "txn-index",
    "snapshot": "producer-snapshot",
}
_EXTENSION_OF = {kind: ext for ext, kind in OFFSET_FILE_EXTENSIONS.items()}

#: file name -> which offset checkpoint it is
OFFSET_CHECKPOINTS = {
    "recovery-point-offset-checkpoint": "recovery-point",
    "replication-offset-checkpoint": "replication",
    "log-start-offset-checkpoint": "log-start",
    "cleaner-offset-checkpoint": "cleaner",
}

_FIXED_NAMES = {
    "bootstrap.checkpoint": "bootstrap-checkpoint",
    "leader-epoch-checkpoint": "leader-epoch-checkpoint",
    "quorum-state": "quorum-state",
    "partition.metadata": "partition-metadata",
    "meta.properties": "meta-properties",
    ".kafka_cleanshutdown": "clean-shutdown",
    ".lock": "lock",
    "remote_log_snapshot": "remote-log-snapshot",
}

_OFFSET_FILE = re.compile(r"([0-9]+)\.(log|index|timeindex|txnindex|snapshot)"
                          r"(?:\.(deleted|cleaned|swap))?\Z")
_KRAFT_SNAPSHOT = re.compile(r"([0-9]{20})-([0-9]{10})"
                             # Kafka's temp files add "-<random digits>"; a copy may not.
                             r"(?:\.checkpoint(\.deleted)?|(?:-[0-9]*)?\.checkpoint(\.part))\Z")
_NS = "[^ \t\n\x0b\f\r]"  # Java's \S
_DIR_STATE = re.compile(f"{_NS}+-{_NS}+\\.{_NS}+-(?:delete|future|stray)\\Z")
_PARTITION = re.compile(r"[0-9]+\Z")


@dataclass(frozen=True, slots=True)
class FileKind:
    """What a file is.  ``base_offset`` is the segment base offset for offset-named files
    and the snapshot end offset for KRaft snapshots; ``epoch`` is the KRaft snapshot epoch;
    ``suffix`` is the state suffix (None, "deleted", "cleaned", "swap", "part");
    ``checkpoint`` says which offset checkpoint ("recovery-point", "replication",
    "log-start", "cleaner") for kind "offset-checkpoint"."""

    kind: str
    base_offset: int | None = None
    epoch: int | None = None
    suffix: str | None = None
    checkpoint: str | None = None

    @property
    def live(self) -> bool:
        """True unless the name marks the file deleted, half-written or mid-swap."""
        return self.suffix is None

    def named(self) -> dict[str, int | str]:
        """What the name says besides the kind (those of base offset, epoch and suffix
        it holds), as a dump's file event shows it."""
        said = (("base_offset", self.base_offset), ("epoch", self.epoch),
                ("suffix", self.suffix or None))
        return {key: value for key, value in said if value is not None}


UNKNOWN = FileKind("unknown")

#: Kafka writes these files whole to ``<name>.tmp``, then renames that over the file:
#: CheckpointFile (offset and leader-epoch checkpoints), PartitionMetadataFile,
#: FileQuorumStateStore, PropertiesUtils.writePropertiesFile (meta.properties) and
#: BootstrapDirectory (bootstrap.checkpoint).  The producer state's ``.snapshot`` is
#: written in place (ProducerStateManager.writeSnapshot) and has no such name.
_WRITTEN_THROUGH_TMP = frozenset({
    *OFFSET_CHECKPOINTS, "leader-epoch-checkpoint", "partition.metadata", "quorum-state",
    "meta.properties", "bootstrap.checkpoint"})


def temporary_of(name: str | os.PathLike[str]) -> str | None:
    """The name of the file ``name`` is Kafka's temporary copy of while it rewrites it
    (``replication-offset-checkpoint.tmp`` -> ``replication-offset-checkpoint``), or None.
    Kafka never loads it: it renames it over the file, or a crash leaves it behind."""
    name = os.path.basename(os.fspath(name))
    base = name.removesuffix(".tmp")
    return base if base != name and base in _WRITTEN_THROUGH_TMP else None


def classify(name: str | os.PathLike[str]) -> FileKind:
    """Classify a file by its name (a path is reduced to its last component)."""
    name = os.path.basename(os.fspath(name))
    if name in _FIXED_NAMES:
        return FileKind(_FIXED_NAMES[name])
    if name in OFFSET_CHECKPOINTS:
        return FileKind("offset-checkpoint", checkpoint=OFFSET_CHECKPOINTS[name])
    m = _OFFSET_FILE.match(name)
    if m:
        offset = int(m.group(1))
        if offset > INT64_MAX:
            return UNKNOWN
        return FileKind(OFFSET_FILE_EXTENSIONS[m.group(2)], offset, None, m.group(3))
    m = _KRAFT_SNAPSHOT.match(name)
    if m:
        offset, epoch = int(m.group(1)), int(m.group(2))
        if offset > INT64_MAX or epoch > INT32_MAX:
            return UNKNOWN
        suffix = "deleted" if m.group(3) else "part" if m.group(4) else None
        return FileKind("kraft-snapshot", offset, epoch, suffix)
    return UNKNOWN


@dataclass(frozen=True, slots=True)
class PartitionDirName:
    """A partition directory name taken apart.  ``state`` is None for a live partition, or
    "delete", "future" or "stray"; ``unique_id`` is the id Kafka added when renaming."""

    topic: str
    partition: int
    state: str | None = None
    unique_id: str | None = None


def parse_partition_dir_name(name: str | os.PathLike[str]) -> PartitionDirName | None:
    """Kafka's ``LocalLog.parseTopicPartitionName``; None where Kafka would refuse the name."""
    name = os.path.basename(os.fspath(name))
    if not name or "-" not in name:
        return None
    state = unique_id = None
    if name.endswith(("-delete", "-future", "-stray")):
        m = _DIR_STATE.match(name)
        if not m:
            return None
        # Kafka cuts at the last dot; the uniqueId never holds a dot in names it made.
        base, rest = name.rsplit(".", 1)
        unique_id, state = rest.rsplit("-", 1)
    else:
        base = name
    topic, _, partition = base.rpartition("-")
    if not topic or not _PARTITION.match(partition):
        return None
    number = int(partition)
    if number > INT32_MAX:
        return None
    return PartitionDirName(topic, number, state, unique_id)


def parse_partition_dir(name: str | os.PathLike[str]) -> tuple[str, int] | None:
    """``(topic, partition)`` of a partition directory name, or None if it is not one."""
    parsed = parse_partition_dir_name(name)
    return (parsed.topic, parsed.partition) if parsed else None


def partition_dir_name(topic: str, partition: int, state: str | None = None,
                       unique_id: str | None = None) -> str:
    """``topic-partition``, or ``topic-partition.uniqueId-<state>`` for a renamed directory."""
    if not topic or partition < 0:
        raise ValueError("need a topic name and a partition >= 0")
    base = f"{topic}-{partition}"
    if state is None:
        return base
    if state not in ("delete", "future", "stray") or not unique_id:
        raise ValueError("state must be delete, future or stray, with a unique_id")
    return f"{base}.{unique_id}-{state}"


def _offset_prefix(offset: int) -> str:
    if not 0 <= offset <= INT64_MAX:
        raise ValueError(f"offset must be in [0, 2**63-1], not {offset}")
    return f"{offset:0{OFFSET_WIDTH}d}"


def segment_file_name(base_offset: int, ext: str = ".log", suffix: str | None = None) -> str:
    """``00000000000000000042.log`` and friends: ``ext`` is one of log, index, timeindex,
    txnindex, snapshot (with or without the dot), ``suffix`` one of None, "deleted",
    "cleaned", "swap"."""
    ext = ext.lstrip(".")
    if ext not in OFFSET_FILE_EXTENSIONS:
        raise ValueError(f"unknown segment file extension {ext!r}")
    if suffix not in (None, "deleted", "cleaned", "swap"):
        raise ValueError(f"unknown suffix {suffix!r}")
    return f"{_offset_prefix(base_offset)}.{ext}" + (f".{suffix}" if suffix else "")


def snapshot_stem(end_offset: int, epoch: int) -> str:
    """``<20-digit end offset>-<10-digit epoch>``: a KRaft snapshot's id as its names
    spell it."""
    if not 0 <= epoch <= INT32_MAX:
        raise ValueError(f"epoch must be in [0, 2**31-1], not {epoch}")
    return f"{_offset_prefix(end_offset)}-{epoch:0{EPOCH_WIDTH}d}"


def snapshot_file_name(end_offset: int, epoch: int, suffix: str | None = None) -> str:
    """``<20-digit end offset>-<10-digit epoch>.checkpoint`` (``suffix`` "deleted" adds
    ``.deleted``)."""
    stem = snapshot_stem(end_offset, epoch)
    if suffix not in (None, "deleted"):
        raise ValueError(f"a snapshot name can only be built with suffix None or 'deleted', "
                         f"not {suffix!r}")
    name = stem + SNAPSHOT_EXTENSION
    return name + ".deleted" if suffix else name


def snapshot_part_name(end_offset: int, epoch: int, token: int | str) -> str:
    """``<id>-<token>.checkpoint.part``: the temporary name Kafka writes a snapshot under
    (``token`` stands for the random digits of ``Files.createTempFile``)."""
    return f"{snapshot_stem(end_offset, epoch)}-{token}{SNAPSHOT_EXTENSION}.part"


def file_name(kind: FileKind) -> str:
    """The name of a file of ``kind`` (the inverse of :func:`classify`, except for
    ``.checkpoint.part`` files, whose names hold a random number)."""
    if kind.kind in _EXTENSION_OF:
        if kind.base_offset is None:
            raise ValueError(f"{kind.kind} needs a base offset")
        return segment_file_name(kind.base_offset, _EXTENSION_OF[kind.kind], kind.suffix)
    if kind.kind == "kraft-snapshot":
        if kind.base_offset is None or kind.epoch is None:
            raise ValueError("kraft-snapshot needs an end offset and an epoch")
        return snapshot_file_name(kind.base_offset, kind.epoch, kind.suffix)
    if kind.kind == "offset-checkpoint":
        for name, which in OFFSET_CHECKPOINTS.items():
            if which == kind.checkpoint:
                return name
        raise ValueError(f"unknown offset checkpoint {kind.checkpoint!r}")
    for name, k in _FIXED_NAMES.items():
        if k == kind.kind:
            return name
    raise ValueError(f"no file name for kind {kind.kind!r}")


__all__ = [
    "KINDS",
    "OFFSET_CHECKPOINTS",
    "OFFSET_FILE_EXTENSIONS",
    "SUFFIXES",
    "FileKind",
    "PartitionDirName",
    "classify",
    "file_name",
    "parse_partition_dir",
    "parse_partition_dir_name",
    "partition_dir_name",
    "segment_file_name",
    "snapshot_file_name",
    "snapshot_part_name",
    "temporary_of",
    "snapshot_stem",
]
