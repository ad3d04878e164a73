"""Where a write command's output would land, and whether it may land there.

Every command that writes (snapshot, compact --write, export, repair, truncate) asks
:func:`check_target` before it reads or writes anything: the output must not be inside
what the command reads, nor among a broker's own files — in a Kafka data directory or a
partition directory, at any depth — unless the user gave the one flag that allows the
one case they can mean (:data:`INTO_PARTITION`, :data:`INTO_DATA_DIR`).  Paths are judged
resolved (symbolic links, ``..``), from the existing directory the output would be
created in up to the root.  A data directory is one that holds ``meta.properties`` (Kafka
writes it into every log dir it formats or starts on); a partition directory is what
discovery takes for one (:func:`kmeta.storage.discover.partition_of`).

Kafka facts behind the lines below (apache/kafka, read for behaviour only):

* ``LogManager.loadLogs``: at start, every directory of a data dir but the metadata
  partition (which the raft layer opens as the metadata log) is loaded as a partition
  replica named ``topic-N`` (``UnifiedLog.parseTopicPartitionName``: a name it cannot
  parse throws, and the broker does not start); one the metadata does not assign to the
  broker, or one without a topic id, is marked stray (``isStrayKraftReplica``) and
  renamed ``-stray``.
* ``KafkaMetadataLog.apply`` / ``recoverSnapshots``: at start, ``.checkpoint.part`` and
  ``.checkpoint.deleted`` files and snapshots that end below the log start offset are
  deleted; the newest snapshot (snapshot ids order by epoch, then end offset) is the one
  the image is loaded from (``KafkaRaftClient``), the log being replayed after it; and
  ``truncateToLatestSnapshot`` drops the whole log when that snapshot is ahead of it.
"""

from __future__ import annotations

import enum
import errno
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kmeta.errors import UsageError
from kmeta.formats.filenames import parse_partition_dir
from kmeta.storage.discover import METADATA_TOPIC, meta_properties_at, partition_of
from kmeta.storage.swap import data_dir_lock

__all__ = ["INTO_DATA_DIR", "INTO_PARTITION", "Landing", "Permit", "Role",
           "WriteTargetError", "check_target", "landing"]


class WriteTargetError(UsageError):
    """An output that would land inside an input, or in a Kafka data or partition
    directory (snapshot --into-partition and --into-data-dir allow the case one means)."""

    reference = "KM005"


class Role(enum.Enum):
    """What Kafka takes an existing directory for."""

    DATA_DIR = "data directory"
    PARTITION_DIR = "partition directory"
    METADATA_PARTITION = "metadata partition directory"


#: What Kafka does at its next start with what is put there, by the kind of directory.
_KAFKA_DOES = {
    Role.DATA_DIR: "at its next start Kafka loads every directory of a data directory: "
                   "__cluster_metadata-0 as its metadata log, any other as a partition replica "
                   "(stray when its broker does not host it); a name it cannot parse stops "
                   "the start",
    Role.PARTITION_DIR: "Kafka owns every file of a partition directory",
    Role.METADATA_PARTITION: "Kafka owns every file of a partition directory, and at its "
                             "next start loads the cluster image from the newest snapshot "
                             "of a metadata partition directory",
}


@dataclass(frozen=True)
class Permit:
    """The flag that lets an output land directly in one kind of directory."""

    flag: str
    role: Role


#: ``snapshot --into-partition``: the snapshot file goes into a metadata partition dir.
INTO_PARTITION = Permit("--into-partition", Role.METADATA_PARTITION)
#: ``--into-data-dir``: a partition dir is written into a broker's data dir.
INTO_DATA_DIR = Permit("--into-data-dir", Role.DATA_DIR)


@dataclass(frozen=True)
class Landing:
    """Where an output would be created, all paths resolved."""

    path: Path
    #: the existing directory the output (or the first directory made for it) goes into
    parent: Path
    #: the nearest data dir or partition dir at or above ``parent``, and what it is
    kafka_dir: Path | None = None
    role: Role | None = None
    #: the input the output would be inside, if any
    input: Path | None = None
    #: ``path`` is an existing directory the output is written into
    into: bool = False

    @property
    def replaces_input(self) -> bool:
        return not self.into and self.input == self.path


def _within(path: Path, other: Path) -> bool:
    return path == other or other in path.parents


def _role(directory: Path) -> Role | None:
    if meta_properties_at(directory) is not None:
        return Role.DATA_DIR
    parsed = partition_of(directory)
    if parsed is None:
        return None
    return Role.METADATA_PARTITION if parsed[0] == METADATA_TOPIC else Role.PARTITION_DIR


def _resolved(path: str | os.PathLike[str]) -> Path:
    try:
        # links and ".." as the kernel follows them; strict first, as Python 3.13's
        # lenient resolve() gives a path through a link loop back as it is
        try:
            return Path(path).resolve(strict=True)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise
            return Path(path).resolve()  # a path still to be made
    except (OSError, RuntimeError) as e:  # a link that loops (RuntimeError before 3.13)
        raise WriteTargetError(f"cannot resolve the path: {e}", context=os.fspath(path),
                               hint="give a path without a symbolic link loop") from None


def landing(out: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]], *,
            into: bool = False, name: str | None = None) -> Landing:
    """Where ``out`` would land, judged against ``inputs`` (what the command reads).

    ``out`` is a file or directory to be created, or an existing empty directory to be
    replaced; with ``into``, an existing directory that a new file is written into; with
    ``name``, the directory a new entry of that name is created in."""
    path = _resolved(out)
    if name is not None:
        path = path / name
    parent = path if into else path.parent
    while not parent.is_dir() and parent != parent.parent:
        parent = parent.parent  # made by the command: it lands in the nearest that exists
    kafka_dir = role = None
    for d in (parent, *parent.parents):
        role = _role(d)
        if role is not None:
            kafka_dir = d
            break
    inside = next((p for p in map(_resolved, inputs) if _within(path, p)), None)
    return Landing(path, parent, kafka_dir, role, inside, into)


def check_target(out: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]], *,
                 what: str, permit: Permit | None = None, permitted: bool = False,
                 into: bool = False, name: str | None = None) -> Landing:
    """Raise :class:`WriteTargetError` unless ``out`` may be written: not inside an input
    and not in a Kafka data or partition dir, except directly in the kind of directory
    ``permit`` names when ``permitted`` (its flag was given).  ``what`` names the output in
    the message (``--out``, ``the backup directory``); ``into`` and ``name`` as for
    :func:`landing`."""
    where = landing(out, inputs, into=into, name=name)
    if where.replaces_input:
        raise WriteTargetError(f"{what} would write over the input {where.input}, which is "
                               "only read", context=os.fspath(out),
                               hint="choose a directory outside it")
    # Directly: the output itself is created there, not a directory made on the way.
    direct = permit is not None and where.role is permit.role and \
        where.kafka_dir == (where.path if into else where.path.parent)
    if direct and permitted:
        if permit is INTO_DATA_DIR and parse_partition_dir(where.path.name) is None:
            raise WriteTargetError(f"{permit.flag}: {where.path.name} is not a partition "
                                   "directory name (topic-N): Kafka does not start with it in "
                                   "a data directory", context=os.fspath(out),
                                   hint="name the output like the partition it holds")
        # A running broker would meet it only at its next start, by surprise: refused.
        assert where.kafka_dir is not None
        data_dir = where.kafka_dir if permit.role is Role.DATA_DIR else where.kafka_dir.parent
        try:
            with data_dir_lock(data_dir, hint=f"stop the broker before {permit.flag}"):
                pass
        except UsageError as e:
            raise WriteTargetError(e.message, context=e.context, hint=e.hint) from None
        return where
    if where.role is None and where.input is None:
        if permitted and permit is not None:  # the flag meant a place this is not
            raise WriteTargetError(f"{permit.flag} is given, but {what} is not directly in "
                                   f"a {permit.role.value}", context=os.fspath(out),
                                   hint=f"give a {permit.role.value}, or leave {permit.flag} "
                                   "out")
        return where
    raise WriteTargetError(f"{what} is inside {_place(where)}", context=os.fspath(out),
                           hint=_hint(where, permit if direct else None))


def _place(where: Landing) -> str:
    kind, k, i = where.role, where.kafka_dir, where.input
    if kind is None:
        return f"the input {i}"
    if i is None:
        return f"the {kind.value} {k}"
    if i == k:
        return f"the input {i} (a {kind.value})"
    assert k is not None
    if _within(k, i):
        return f"the {kind.value} {k} in the input {i}"
    return f"the input {i} in the {kind.value} {k}"


def _hint(where: Landing, permit: Permit | None) -> str:
    # outside both the input and the Kafka directory: the outer of the two
    found = [d for d in (where.kafka_dir, where.input) if d is not None]
    outside = min(found, key=lambda d: len(d.parts))
    if where.role is None:
        return f"choose a directory outside {outside}: kmeta never writes into what it reads"
    why = _KAFKA_DOES[where.role]
    if permit is not None:
        return f"{why}: add {permit.flag} if that is what you mean, else choose a directory " \
               f"outside {outside}"
    return f"{why}: choose a directory outside {outside}"
