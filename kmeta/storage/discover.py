"""Finding and classifying the files under any path a user gives kmeta.

A path may be one file, one partition directory (``topic-N``), a broker data directory
(``log.dirs`` entry: ``meta.properties`` plus partition directories), or a folder above
several data directories.  :func:`discover` returns them all, sorted so that segments come
in offset order, and a Finding for every file it does not recognise.
"""

from __future__ import annotations

import errno
import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG
from typing import Any, NamedTuple

from kmeta.errors import KmetaError, UnreadableInput, VanishedInput
from kmeta.findings import Finding
from kmeta.formats.filenames import (
    FileKind,
    classify,
    file_name,
    parse_partition_dir,
    temporary_of,
)
from kmeta.storage.live import LiveDir, live_dirs
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.regular import (
    entry_problem,
    not_regular,
    open_regular,
    read_regular,
    vanished,
)

#: The kinds of partition file that have one fixed name, by kind.
_NAME_OF = {"partition-metadata": "partition.metadata",
            "leader-epoch-checkpoint": "leader-epoch-checkpoint"}

METADATA_TOPIC = "__cluster_metadata"
MAX_DEPTH = 4  # how far below the given path to look for data directories
#: where kmeta repair puts the files a repaired partition no longer uses
QUARANTINE = "quarantine"


@dataclass(frozen=True)
class LogFile:
    path: Path
    kind: FileKind
    topic: str | None = None

    @property
    def is_metadata(self) -> bool:
        """Holds KRaft metadata records: the metadata log or a snapshot/bootstrap file."""
        return self.topic == METADATA_TOPIC or self.kind.kind in ("kraft-snapshot",
                                                                    "bootstrap-checkpoint")

    @property
    def is_batches(self) -> bool:
        """Stored in record-batch format (segments and KRaft snapshots)."""
        return self.kind.kind in ("segment", "kraft-snapshot", "bootstrap-checkpoint")

    def sort_key(self) -> tuple:
        k = self.kind
        order = {"segment": 0, "kraft-snapshot": 1}.get(k.kind, 2)
        return (order, k.base_offset if k.base_offset is not None else -1,
                k.epoch if k.epoch is not None else -1, self.path.name)


@dataclass
class PartitionDir:
    path: Path
    topic: str
    partition: int
    files: list[LogFile] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def is_metadata(self) -> bool:
        return self.topic == METADATA_TOPIC

    def holds_segments(self) -> bool:
        """Whether it holds a live log segment."""
        return bool(self.segments)

    @property
    def is_listed(self) -> bool:
        """Whether its files have been listed (a deferred one's may not be yet)."""
        return True

    def of_kind(self, *kinds: str, live_only: bool = True) -> list[LogFile]:
        return [f for f in self.files if f.kind.kind in kinds
                and (not live_only or f.kind.live)]

    def live_file(self, kind: str) -> LogFile | None:
        """The partition's one file of ``kind`` (quorum-state, leader-epoch-checkpoint …),
        not a deleted or half-written one."""
        return next(iter(self.of_kind(kind)), None)

    @property
    def segments(self) -> list[LogFile]:
        return self.of_kind("segment")

    @property
    def snapshots(self) -> list[LogFile]:
        return self.of_kind("kraft-snapshot")


class DeferredPartition(PartitionDir):
    """A partition dir of a data dir, known by its name, whose files are listed where it
    is checked (``kmeta verify``'s workers, :mod:`kmeta.ops.verify.jobs`): listing and
    classifying a broker's 136,000 files was most of what one process did alone.  What
    the check found is set in :attr:`checked`; :attr:`listed` gets the findings of its
    listing, in their place in :meth:`Discovery.settled_findings`.  Its files are listed
    here only if something asks for them."""

    def __init__(self, path: Path, topic: str, partition: int) -> None:
        self.path, self.topic, self.partition = path, topic, partition
        self._files: list[LogFile] | None = None
        self.listed: list[Finding] = []
        #: what the check of the partition reported (kmeta.ops.verify.partitions.Checked)
        self.checked: Any = None

    @property
    def is_listed(self) -> bool:
        return self._files is not None

    @property  # type: ignore[override]
    def files(self) -> list[LogFile]:
        if self._files is None:
            self._files = _scan_partition(self.path, (self.topic, self.partition), []).files
        return self._files

    @files.setter
    def files(self, value: list[LogFile]) -> None:
        self._files = value

    def live_file(self, kind: str) -> LogFile | None:
        """As a listed partition dir's, but a file of a fixed name (partition.metadata,
        leader-epoch-checkpoint) is looked up by its name while the dir is not listed:
        placement reads a broker's topic ids without listing its 136,000 files."""
        name = _NAME_OF.get(kind)
        if self._files is not None or name is None:
            return super().live_file(kind)
        path = self.path / name
        try:
            st = os.lstat(path)
        except OSError:
            return None
        return LogFile(path, FileKind(kind), self.topic) if S_ISREG(st.st_mode) else None

    def holds_segments(self) -> bool:
        if self.checked is not None:
            return self.checked.segments > 0
        return bool(self.segments)


@dataclass
class DataDir:
    path: Path
    files: list[LogFile] = field(default_factory=list)
    partitions: list[PartitionDir] = field(default_factory=list)

    @property
    def meta_properties(self) -> LogFile | None:
        return next((f for f in self.files if f.kind.kind == "meta-properties"), None)


_META_PROPERTIES = FileKind("meta-properties")


def meta_properties_at(directory: Path) -> LogFile | None:
    """The meta.properties of ``directory`` when a partition or file was given without its
    data dir (a discovered data dir has :attr:`DataDir.meta_properties`); None if there is
    none."""
    path = directory / file_name(_META_PROPERTIES)
    return LogFile(path, _META_PROPERTIES) if path.is_file() else None


@dataclass
class Discovery:
    data_dirs: list[DataDir] = field(default_factory=list)
    partitions: list[PartitionDir] = field(default_factory=list)  # given directly
    files: list[LogFile] = field(default_factory=list)  # given directly
    findings: list[Finding] = field(default_factory=list)
    #: where the listings of deferred partition dirs go among :attr:`findings`: (index,
    #: each partition dir's listing findings in order, filled in as they are listed)
    pending: list[tuple[int, list[list[Finding]]]] = field(default_factory=list)
    #: the log dirs a running broker holds (S012 leads :attr:`findings` for each)
    live: list[LiveDir] = field(default_factory=list)

    def settled_findings(self) -> list[Finding]:
        """:attr:`findings` with those of the deferred partition dirs' listings where a
        discovery that listed them at once has them."""
        out = list(self.findings)
        for at, lists in reversed(self.pending):
            out[at:at] = [f for found in lists for f in found]
        return out

    def listed_files(self) -> Iterable[LogFile]:
        """:meth:`all_files` but those of the partition dirs left unlisted (deferred)."""
        return self.all_files(listed_only=True)

    def unlisted(self) -> int:
        """How many partition dirs were left unlisted (deferred) and are still so."""
        return sum(not p.is_listed for d in self.data_dirs for p in d.partitions)

    def all_files(self, *, listed_only: bool = False) -> Iterable[LogFile]:
        """Every file found; a deferred partition dir's are listed now, unless
        ``listed_only``, which passes over those not listed yet."""
        yield from self.files
        for p in self.partitions:
            yield from p.files
        for d in self.data_dirs:
            yield from d.files
            for p in d.partitions:
                if not listed_only or p.is_listed:
                    yield from p.files

    def all_partitions(self) -> Iterable[PartitionDir]:
        yield from self.partitions
        for d in self.data_dirs:
            yield from d.partitions


def _topic_of(directory: Path) -> str | None:
    parsed = parse_partition_dir(directory.name)
    return parsed[0] if parsed else None


class _Entry(NamedTuple):
    """One directory entry, looked at once: its path, name, what ``not_regular`` says of
    it (None for a regular file) and the kind its name gives."""

    path: str
    name: str
    problem: str | None
    kind: FileKind


def _scan_partition(path: Path, parsed: tuple[str, int], findings: list[Finding],
                    entries: list[_Entry] | None = None) -> PartitionDir:
    part = PartitionDir(path, parsed[0], parsed[1])
    # A broker's 136,000 files: a Path parsed whole for each was a third of discovery.
    # pathlib's own child of a listed dir (what iterdir uses) where this Python has it.
    child = getattr(path, "_make_child_relpath", path.joinpath)
    for entry in _listdir(path) if entries is None else entries:
        problem = entry.problem
        if problem == "a directory":
            if entry.name != QUARANTINE:  # kmeta repair's own: files it moved out, on purpose
                findings.append(Finding("S007", "unexpected directory inside a partition "
                                        "directory; skipped", entry.path))
            continue
        kind = entry.kind
        if kind.kind == "unknown":
            findings.append(_unknown_name(entry.path, entry.name))
            continue
        if problem is not None:
            findings.append(_special(entry.path, problem))
            continue
        part.files.append(LogFile(child(entry.name), kind, part.topic))
    part.files.sort(key=LogFile.sort_key)
    return part


def _unknown_name(path: str, name: str) -> Finding:
    """S007 for a name no Kafka file has; S014 for Kafka's own temporary copy of a file
    it rewrites (a live broker's, caught between its write and its rename)."""
    of = temporary_of(name)
    if of is not None:
        return Finding("S014", f"Kafka's temporary copy of {of} (written whole, then "
                       f"renamed over it; a crash leaves it): not read, as Kafka never "
                       f"loads it", path, details={"temporary_of": of})
    return Finding("S007", "not a Kafka file name; skipped", path)


def _special(path: str, what: str) -> Finding:
    return Finding("S008", f"named like a Kafka file but {what}: not read (Kafka loads "
                   "only regular files)", path, details={"file_type": what})


def _listdir(path: Path) -> list[_Entry]:
    try:
        # Sorted by name, not by Path: Path comparisons cost a minute in a directory of
        # 100,000 files.
        listing = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError as e:
        if e.errno == errno.ENOENT:
            raise vanished(path) from e
        raise UnreadableInput(f"cannot list directory: {e.strerror}", context=str(path),
                              hint="check its permissions") from e
    return [_Entry(e.path, e.name, entry_problem(e), _classify(e.name)) for e in listing]


#: A broker's partition dirs repeat the same names (00000000000000000000.log,
#: leader-epoch-checkpoint ...): a kind told once serves them all (FileKind is frozen).
_classify = functools.lru_cache(maxsize=1 << 16)(classify)


#: File kinds that live in a partition directory (and never at a data dir's top level).
PARTITION_KINDS = frozenset({
    "segment", "offset-index", "time-index", "txn-index", "producer-snapshot",
    "kraft-snapshot", "leader-epoch-checkpoint", "partition-metadata", "quorum-state",
})


def _split(entries: list[_Entry]) -> tuple[list[_Entry], list[_Entry]]:
    """Regular files and directories (after links); anything else is left out here and
    reported by ``_specials`` where it matters."""
    files = [e for e in entries if e.problem is None]
    dirs = [e for e in entries if e.problem == "a directory" and not e.name.startswith(".")]
    return files, dirs


def _specials(entries: list[_Entry], findings: list[Finding]) -> None:
    """S008 for each Kafka-named entry that is neither a regular file nor a directory."""
    for e in entries:
        if e.kind.kind != "unknown" and e.problem not in (None, "a directory"):
            findings.append(_special(e.path, e.problem))


def _is_partition_dir(path: Path, entries: list[_Entry], in_data_dir: bool = False
                      ) -> tuple[str, int] | None:
    """A ``topic-N`` directory that holds a partition file.

    A name alone proves nothing (``dbus-1``, ``openjdk-17``): Kafka creates every partition
    dir with at least its leader-epoch-checkpoint, partition.metadata or a segment.  An
    empty ``topic-N`` directory counts only inside a data dir (next to meta.properties),
    where it can only be a partition whose files are gone.
    """
    files, _ = _split(entries)
    kinds = {f.kind.kind for f in files}
    if "meta-properties" in kinds:
        return None  # a data dir that happens to be named like ``kafka-1``
    parsed = parse_partition_dir(path.name)
    # A copy under another name (kmeta repair --out R, or R named like a data topic's
    # partition, x-0): the metadata partition is known by what only it holds:
    # quorum-state, or a log with KRaft snapshots; then, for a name that is no partition's
    # (reading files of every topic-N directory would cost a data dir of thousands), the
    # metadata topic's fixed id in partition.metadata (Kafka 3.3 and later) or a first
    # batch only a KRaft metadata log holds.
    if (not parsed or parsed[0] != METADATA_TOPIC) and (
            "quorum-state" in kinds or {"segment", "kraft-snapshot"} <= kinds):
        return METADATA_TOPIC, 0
    if not parsed:
        if _holds_metadata_topic_id(files) or _starts_like_metadata_log(files):
            return METADATA_TOPIC, 0
        return None
    if kinds & PARTITION_KINDS or (in_data_dir and not entries):
        return parsed
    return None


def partition_of(directory: Path) -> tuple[str, int] | None:
    """``(topic, partition)`` when discovery takes the existing ``directory`` for a
    partition directory (by its name and files, as :func:`discover` judges), else None;
    None too when it cannot be listed."""
    try:
        entries = _listdir(directory)
    except UnreadableInput:
        return None
    return _is_partition_dir(directory, entries,
                             meta_properties_at(directory.parent) is not None)


def _holds_metadata_topic_id(files: list[_Entry]) -> bool:
    entry = next((f for f in files if f.kind.kind == "partition-metadata"), None)
    if entry is None:
        return False
    from kmeta.formats.textfiles import METADATA_TOPIC_ID, parse_partition_metadata

    try:
        # A few dozen bytes; the cap keeps a file grown by damage from costing anything.
        loaded = parse_partition_metadata(read_regular(entry.path, 4096, "partition.metadata"))
    except KmetaError:
        return False  # verify reports the file once the partition is read as what it is
    return loaded.topic_id == METADATA_TOPIC_ID


#: How much of a segment is read to see whether its first batch is KRaft metadata (the
#: controller writes batches of at most a few KB; the raft layer's limit is 8 MiB).
_FIRST_BATCH_READ = 1 << 20
#: Control records only the KRaft layer writes (not a transaction's commit/abort markers).
_KRAFT_CONTROL_TYPES = frozenset({"LEADER_CHANGE", "SNAPSHOT_HEADER", "SNAPSHOT_FOOTER",
                                  "KRAFT_VERSION", "KRAFT_VOTERS"})


def _starts_like_metadata_log(files: list[_Entry]) -> bool:
    """Whether the first segment's first batch is one a KRaft metadata log holds: an intact
    non-transactional batch whose every record decodes as a metadata record, or KRaft
    control records.  A data topic's batch passes only by a far-fetched coincidence."""
    segments = sorted((f for f in files if f.kind.kind == "segment"),
                      key=lambda f: f.kind.base_offset or 0)
    if not segments:
        return False
    return first_batch_holds(segments[0].path) is not None


def first_batch_holds(path: str | Path) -> str | None:
    """What the first batch of a file says it belongs to: ``"snapshot"`` when its first
    record is a SnapshotHeader (Kafka's snapshot writer, and kmeta's, begin with one),
    ``"metadata"`` when it is KRaft metadata or KRaft control records (as
    :func:`_starts_like_metadata_log` judges), else None."""
    from kmeta.formats.batch import parse_batch
    from kmeta.formats.payload import decode_control, decode_metadata

    try:
        fd = open_regular(path)
        try:
            head = os.pread(fd, _FIRST_BATCH_READ, 0)
        finally:
            os.close(fd)
        batch = parse_batch(head, 0)
        if batch.magic != 2 or not batch.crc_valid or batch.is_transactional:
            return None
        records = batch.records()
    except (KmetaError, OSError):
        return None  # unreadable or damaged: not evidence either way
    if not records:
        return None
    if batch.is_control:
        types = [decode_control(r.key, r.value).type for r in records]
        if not all(t in _KRAFT_CONTROL_TYPES for t in types):
            return None
        return "snapshot" if types[0] == "SNAPSHOT_HEADER" else "metadata"
    if all(decode_metadata(r.value).finding is None for r in records):
        return "metadata"
    return None


def _scan_dir(path: Path, out: Discovery, depth: int, defer: bool = False) -> None:
    entries = _listdir(path)
    files, dirs = _split(entries)
    parsed = _is_partition_dir(path, entries)
    if parsed:
        out.partitions.append(_scan_partition(path, parsed, out.findings, entries))
        return
    _specials(entries, out.findings)
    known = [(Path(f.path), f.kind) for f in files]
    in_data_dir = any(k.kind == "meta-properties" for _, k in known)
    partitions: list[tuple[Path, tuple[str, int], list[_Entry] | None]] = []
    others = []
    child = getattr(path, "_make_child_relpath", path.joinpath)  # see _scan_partition
    for entry in dirs:
        named = parse_partition_dir(entry.name) if defer and in_data_dir else None
        if named is not None and named[0] != METADATA_TOPIC:
            partitions.append((child(entry.name), named, None))  # listed where checked
            continue
        d = Path(entry.path)
        try:
            listing = _listdir(d)  # listed once: a partition dir may hold 100,000 files
        except VanishedInput as e:  # renamed or removed since its parent was listed
            out.findings.append(e.finding(str(d)))
            continue
        p = _is_partition_dir(d, listing, in_data_dir)
        if p:
            partitions.append((d, p, listing))
        else:
            others.append((d, p))
    if partitions or in_data_dir:
        dd = DataDir(path)
        for f, k in known:
            if k.kind == "unknown":
                out.findings.append(_unknown_name(str(f), f.name))
            else:
                dd.files.append(LogFile(f, k))
        dd.files.sort(key=LogFile.sort_key)
        if any(listing is None for _, _, listing in partitions):
            lists: list[list[Finding]] = []
            for d, p, listing in partitions:
                if listing is None:
                    part: PartitionDir = DeferredPartition(d, p[0], p[1])
                    lists.append(part.listed)
                else:
                    lists.append([])
                    part = _scan_partition(d, p, lists[-1], listing)
                dd.partitions.append(part)
            out.pending.append((len(out.findings), lists))
        else:
            dd.partitions = [_scan_partition(d, p, out.findings, listing)
                             for d, p, listing in partitions]
        out.data_dirs.append(dd)
    else:
        # Loose Kafka files (a copied segment, a snapshot) outside any partition dir.
        topic = _topic_of(path)
        out.files.extend(sorted((LogFile(f, k, topic) for f, k in known
                                 if k.kind != "unknown"), key=LogFile.sort_key))
    if depth < MAX_DEPTH:
        for d, _ in others:
            _scan_dir(d, out, depth + 1, defer)


def discover(paths: Iterable[str | Path], *, defer: bool = False,
             progress: Progress = QUIET) -> Discovery:
    """Find every Kafka file under ``paths``; raises UnreadableInput if a path has none.
    ``defer``: a data dir's ``topic-N`` dirs (not the metadata partition's) are not listed
    but left to whoever checks them, as :class:`DeferredPartition`; they count as
    partition dirs, so the caller must list each (:func:`list_deferred`).  ``progress`` is
    told what was found."""
    out = Discovery()
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise UnreadableInput("no such file or directory", context=str(path))
        # files outside a partition or data dir: any other is in a new one of those
        before = len(out.files), len(out.data_dirs) + len(out.partitions)
        if path.is_dir():
            _scan_dir(path, out, 0, defer)
        else:
            problem = not_regular(path)
            if problem is not None:
                raise UnreadableInput(f"not a regular file but {problem}; Kafka reads only "
                                      "regular files, and so does kmeta", context=str(path))
            kind = classify(path.name)
            topic = _topic_of(path.parent)
            if kind.kind == "unknown":
                # Named oddly (a renamed copy, a snapshot written under another name): read
                # it as its first batch says, else as a segment, rather than refuse (a
                # file of text or of no batch at all is no Kafka file: refused).
                _refuse_alien(path)
                holds = first_batch_holds(path)
                if holds == "snapshot":
                    kind = FileKind("kraft-snapshot")
                    what = ("a KRaft snapshot (it begins with a SnapshotHeader; its end "
                            "offset and epoch are only in a snapshot's name)")
                else:
                    kind = FileKind("segment")
                    what = "a log segment" + (" of the metadata log (its first batch is "
                                              "KRaft metadata)" if holds else "")
                    if holds:
                        topic = METADATA_TOPIC
                out.findings.append(Finding("S007", f"file name not recognised; reading it "
                                            f"as {what}", str(path)))
            out.files.append(LogFile(path, kind, topic))
        after = len(out.files), len(out.data_dirs) + len(out.partitions)
        if after == before:
            raise UnreadableInput("no Kafka files found", context=str(path),
                                  hint="point kmeta at a data dir, a partition dir or a file")
    _tell_live(out, progress)
    progress.found(out)
    return out


def _tell_live(out: Discovery, progress: Progress) -> None:
    """S012 first among the findings for each log dir a running broker holds, and told
    to the observer at once: the answer that follows is of a moving dir."""
    places = [d.path for d in out.data_dirs] + [p.path for p in out.partitions] + \
        [f.path for f in out.files]
    out.live = live_dirs(places)
    if not out.live:
        return
    told = [d.finding() for d in out.live]
    for f in told:
        progress.notice(f)
    out.findings[:0] = told
    out.pending = [(at + len(told), lists) for at, lists in out.pending]


def _refuse_alien(path: Path) -> None:
    """UnreadableInput for a file given by name whose name is no Kafka file's and whose
    first bytes begin no batch (a text file, an empty one): it holds no Kafka file, as a
    folder of text files does not, and is refused as that folder is (exit 3)."""
    from kmeta.storage.segments import alien_head

    fd = open_regular(path)
    try:
        head = os.read(fd, 80)
    except OSError as e:
        raise UnreadableInput(f"cannot read: {e.strerror}", context=str(path)) from e
    finally:
        os.close(fd)
    what = alien_head(head)
    if what is not None:
        raise UnreadableInput(f"not a Kafka file: no Kafka file's name, and {what}",
                              context=str(path),
                              hint="point kmeta at a data dir, a partition dir or a file")


class Listed(NamedTuple):
    """A deferred partition dir as :func:`list_deferred` lists it."""

    part: PartitionDir
    #: the findings of its listing
    findings: list[Finding]
    #: every regular file in it by name and kind, in name order, however Kafka names it;
    #: None where an entry is neither a regular file nor a directory
    regular: list[tuple[str, FileKind]] | None


def list_deferred(path: str, topic: str, partition: int) -> Listed | None:
    """A deferred partition dir listed and classified, with the findings of its listing,
    as :func:`discover` would have found it; None when discover would not have taken it
    for that ordinary partition (not a partition dir, the metadata partition under another
    name) or could not list it: the caller then discovers the whole input again."""
    directory = Path(path)
    try:
        entries = _listdir(directory)
    except UnreadableInput:
        return None
    if _is_partition_dir(directory, entries, True) != (topic, partition):
        return None
    findings: list[Finding] = []
    regular: list[tuple[str, FileKind]] | None = []
    for e in entries:
        if e.problem is None:
            regular.append((e.name, e.kind))
        elif e.problem != "a directory":
            regular = None
            break
    return Listed(_scan_partition(directory, (topic, partition), findings, entries), findings,
                  regular)


def relisted(part: PartitionDir) -> list[LogFile]:
    """``part``'s files listed again (a running broker changed them since); its old
    listing where it cannot be listed now."""
    try:
        return _scan_partition(part.path, (part.topic, part.partition), []).files
    except UnreadableInput:
        return part.files


def segments_from(segments: list[LogFile], offset: int) -> list[LogFile]:
    """The segments that may hold ``offset`` or later offsets: those before the last one
    whose base offset is at or below it are skipped unread."""
    first = 0
    for i in range(1, len(segments)):
        if (segments[i].kind.base_offset or 0) <= offset:
            first = i
    return segments[first:]
