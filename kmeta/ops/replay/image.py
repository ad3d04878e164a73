"""``kmeta image`` and ``kmeta history``: the cluster image at an offset, and the records
that touched one topic or broker.

* :func:`build_image` replays a metadata partition: it starts from the latest live
  snapshot that ends at or below the target offset (``--at``, else the log end), or from
  the snapshot the user names, else from an empty image at offset 0, and applies the log
  records from there up to, not including, the target.  The result stands at the target:
  "the state after every record below OFFSET".
* :func:`browse` walks the image's canonical JSON by a path (``/topics/NAME/0``).
* :func:`history` lists every metadata record that named a topic or a broker.

Nothing here prints or exits: bad data becomes Findings, bad options a UsageError.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kmeta.core.image import MetadataImage
from kmeta.core.image_nodes import (
    EMPTY_PROVENANCE,
    Node,
    Provenance,
    image_tree,
    is_legacy,
    resolve,
    split_path,
)
from kmeta.errors import UnreadableInput, UsageError, VanishedInput
from kmeta.findings import Finding, Severity
from kmeta.formats.batch import LONE
from kmeta.formats.filenames import classify
from kmeta.formats.payload import decode_control, decode_metadata
from kmeta.formats.runs import Expandable, Run
from kmeta.ops.redact import REDACTED, SECRET_TYPES, SENSITIVE_CONFIG, redact
from kmeta.ops.replay.engine import Replay, replay_log, snapshot_image
from kmeta.ops.replica import missing_log_finding
from kmeta.storage.discover import DataDir, Discovery, LogFile, PartitionDir, discover
from kmeta.storage.files import load_checked
from kmeta.storage.live import again_while_live
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.segments import (
    decoded_records,
    mapped,
    read_batches,
    scan_batches,
    unreadable,
)

SNAPSHOT_KINDS = ("kraft-snapshot", "bootstrap-checkpoint")
TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC


@dataclass
class ImageResult:
    """The image replayed up to ``offset`` (the next offset that would be applied)."""

    image: MetadataImage
    offset: int
    #: the snapshot the replay started from, or None when it started empty at offset 0
    snapshot: Path | None
    start_offset: int
    #: metadata records applied from the log (NoOps included, control records not)
    records: int = 0
    #: the offset after the last batch of the log, or None when there is no log
    log_end: int | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def started_from(self) -> str:
        return str(self.snapshot) if self.snapshot is not None else "offset 0"

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.ERROR)


@dataclass(frozen=True)
class HistoryRow:
    """One metadata record that touched the entity asked about."""

    offset: int
    leader_epoch: int
    timestamp: int
    type: str
    version: int | None
    data: Any
    file: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": "history", "offset": self.offset, "leader_epoch": self.leader_epoch,
                "timestamp": self.timestamp, "type": self.type, "version": self.version,
                "data": self.data, "file": self.file}


@dataclass
class HistoryResult:
    """The records that touched the entity, and what could not be read on the way
    (damaged batches, records that do not decode): where the history may have holes."""

    rows: list[HistoryRow]
    findings: list[Finding]


# ---------------------------------------------------------------------- what to read

def find_metadata(path: str | os.PathLike[str], progress: Progress = QUIET
                  ) -> PartitionDir | LogFile:
    """The one metadata partition (or the one snapshot file) under ``path``."""
    return metadata_source(discover([path], progress=progress))


def metadata_source(discovery: Discovery) -> PartitionDir | LogFile:
    """The one metadata partition (or the one snapshot file) the user pointed at."""
    parts = [p for p in discovery.all_partitions() if p.is_metadata]
    if len(parts) == 1:
        return parts[0]
    if len(parts) > 1:
        raise UsageError(f"{len(parts)} metadata partitions found: "
                         + ", ".join(str(p.path) for p in parts),
                         hint="give one __cluster_metadata-0 directory")
    snaps = [f for f in discovery.files if f.kind.kind in SNAPSHOT_KINDS]
    if len(snaps) == 1 and len(discovery.files) == 1:
        snap = snaps[0]
        if snap.kind.kind == "kraft-snapshot" and snap.kind.base_offset is None:
            # Read as a snapshot by its first record (discover): the offset it stands at is
            # in a snapshot's name only, and an image must say where it stands.
            raise UsageError("a KRaft snapshot under another name: its end offset and epoch "
                             "are in a snapshot's name only", context=str(snap.path),
                             hint="give it its name, <20-digit end offset>-<10-digit "
                             "epoch>.checkpoint (kmeta snapshot printed its id)")
        return snap
    raise no_metadata_log(discovery)


def no_metadata_log(discovery: Discovery) -> UnreadableInput:
    """The refusal of a command that reads the metadata log, given a path that holds
    none: it holds no Kafka file this command reads, so exit 3 as for a folder of text
    files, with what the path holds instead and where the log may be."""
    if discovery.files:
        if all(f.kind.base_offset is None for f in discovery.files):
            return UnreadableInput("no metadata log or snapshot here: give a data dir, a "
                                   "__cluster_metadata-0 directory or one .checkpoint file",
                                   context=str(discovery.files[0].path))
        return UnreadableInput("loose segment files are no metadata log: give a data dir, "
                               "a __cluster_metadata-0 directory or one .checkpoint file",
                               context=str(discovery.files[0].path),
                               hint="a copy of the partition (kmeta repair --out) must "
                               "keep that name, __cluster_metadata-0")
    if any(_zookeeper_mode(d) for d in discovery.data_dirs):
        return UnreadableInput("no metadata log here: this is a ZooKeeper-mode data dir "
                               "(meta.properties version 0), whose metadata lives in "
                               "ZooKeeper", context=str(discovery.data_dirs[0].path),
                               hint="kmeta dump and verify read its logs")
    hint = ("point kmeta at a KRaft data dir or its __cluster_metadata-0; a broker's "
            "metadata.log.dir may be another directory")
    if discovery.data_dirs:
        return UnreadableInput("no metadata log here: no __cluster_metadata-0 directory",
                               context=str(discovery.data_dirs[0].path), hint=hint)
    part = next(iter(discovery.all_partitions()), None)
    return UnreadableInput(f"no metadata log here: a partition of topic {part.topic}, not "
                           f"of __cluster_metadata" if part else "no metadata log here",
                           context=str(part.path) if part else None, hint=hint)


def check_offset(offset: int | None, option: str) -> None:
    """A UsageError for an offset ``option`` below 0 (None: not given)."""
    if offset is not None and offset < 0:
        raise UsageError(f"{option} {offset}: an offset is 0 or more")


def needs_the_log(option: str) -> UsageError:
    """The refusal of an ``option`` that reads the log, given a lone snapshot file."""
    return UsageError(f"{option} needs a data dir or a __cluster_metadata-0 directory, not "
                      "a snapshot file")


def _zookeeper_mode(data_dir: DataDir) -> bool:
    meta = data_dir.meta_properties
    if meta is None:
        return False
    loaded, _ = load_checked(meta)
    return loaded is not None and loaded.version == 0


def _snapshot_file(path: Path) -> LogFile:
    if not path.is_file():  # an input that cannot be read: exit 3, as a PATH's
        raise UnreadableInput("--from-snapshot: no such file", context=str(path))
    kind = classify(path.name)
    if kind.kind not in SNAPSHOT_KINDS:
        raise UsageError("--from-snapshot needs a KRaft snapshot "
                         "(<offset>-<epoch>.checkpoint) or bootstrap.checkpoint",
                         context=str(path))
    return LogFile(path, kind)


def _end_offset(snap: LogFile) -> int:
    """The offset a snapshot stands at (bootstrap.checkpoint: before the log, 0)."""
    return snap.kind.base_offset or 0


def _log_end(part: PartitionDir, progress: Progress = QUIET) -> int | None:
    """The offset after the last batch of the last non-empty segment, or None."""
    for seg in reversed(part.segments):
        last = None
        # Every segment opened before (``unreadable``): an error now is a file changed
        # under the reader, and an earlier segment's end would be a wrong log end.
        with mapped(seg.path, progress) as buf:
            for item in scan_batches(buf, str(seg.path), memo=True, runs=True,
                                     progress=progress):
                if type(item) is not Finding:
                    last = item.last_offset
        if last is not None:
            return last + 1
    return None



# ---------------------------------------------------------------------- build_image

def build_image(path: str | os.PathLike[str], *, at: int | None = None,
                from_snapshot: Path | None = None, use_snapshots: bool = True,
                progress: Progress = QUIET) -> ImageResult:
    """Replay the metadata log under ``path`` up to (not including) offset ``at``.

    ``use_snapshots=False`` replays from an empty image at offset 0 even when snapshots
    exist (the log must then start at 0).  ``progress`` hears of the reading.  On a
    running broker's dir, a segment or snapshot Kafka deleted during the replay makes it
    start again from a fresh listing (:func:`kmeta.storage.live.again_while_live`).
    """
    return again_while_live(lambda: _build_image(path, at, from_snapshot, use_snapshots,
                                                 progress), path)


def _build_image(path: str | os.PathLike[str], at: int | None, from_snapshot: Path | None,
                 use_snapshots: bool, progress: Progress) -> ImageResult:
    check_offset(at, "--at")
    source = find_metadata(path, progress)
    if isinstance(source, LogFile):
        if from_snapshot is not None:
            raise needs_the_log("--from-snapshot")
        end = _end_offset(source)
        if at is not None and at != end:
            raise UsageError(f"--at {at}: a lone snapshot file holds only the state at "
                             f"offset {end}", context=str(source.path),
                             hint="give the data dir to replay the log")
        image, findings = snapshot_image(source, progress)
        return ImageResult(image, end, source.path, end, findings=findings)

    part = source
    segments = part.segments
    blocked = unreadable(segments)
    if blocked:  # a hole in the log: any image built around it would be wrong
        raise (VanishedInput if blocked[0].code == "S013" else UnreadableInput)(blocked[0].message, context=blocked[0].file,
                              hint="the image needs every segment of the log")
    missing = missing_log_finding(part)  # an image from snapshots alone: say the log is gone
    log_start = segments[0].kind.base_offset if segments else None
    log_end = _log_end(part, progress) if segments else None
    if log_end is None:
        log_start = None
    target = at if at is not None else log_end
    findings: list[Finding] = [] if missing is None else [missing]

    if from_snapshot is not None:
        snap = _snapshot_file(Path(from_snapshot))
        start = _end_offset(snap)
        if at is not None and start > at:
            raise UsageError(f"--from-snapshot ends at offset {start}, after --at {at}",
                             context=str(snap.path))
        image, found = snapshot_image(snap, progress)
        findings += found
        snapshot: Path | None = snap.path
    else:
        image, start, snapshot = MetadataImage.empty(), 0, None
        candidates = sorted(((_end_offset(s), s) for s in part.snapshots),
                            key=lambda c: c[0], reverse=True) if use_snapshots else []
        for end, snap in candidates:
            if target is not None and end > target:
                continue
            loaded, found = snapshot_image(snap, progress)
            if any(f.severity is Severity.ERROR for f in found):
                findings += found  # damaged: say so and fall back to an older one
                continue
            findings += found
            image, start, snapshot = loaded, end, snap.path
            break

    if log_start is None:
        later = [end for end, _ in candidates] if from_snapshot is None else []
        if snapshot is None and at is not None and later and min(later) > at:
            # the snapshots are there, after the offset asked for: the option's value,
            # not the input, is what cannot be answered (the shell's "at" says the same)
            raise UsageError(f"--at {at} is before {min(later)}, the first offset with an "
                             f"image: there is no log, only snapshots", context=str(part.path))
        if snapshot is None:
            raise UnreadableInput("no log segment and no usable snapshot to build the image "
                                  "from", context=str(part.path))
        if at is not None and at != start:
            raise UsageError(f"--at {at}: there is no log, only the snapshot at offset "
                             f"{start}", context=str(part.path))
        return ImageResult(image, start, snapshot, start, findings=findings)

    if log_start > start:
        raise UsageError(f"the log starts at offset {log_start} and no snapshot covers the "
                         f"offsets below it" + ("" if snapshot is None else
                                                f" (the snapshot ends at {start})"),
                         context=str(part.path),
                         hint="give --from-snapshot a snapshot that ends inside the log")
    assert log_end is not None
    if at is not None and at > log_end:
        raise UsageError(f"--at {at} is past the log end offset {log_end}",
                         context=str(part.path))
    stop = at if at is not None else log_end
    result = ImageResult(image, max(start, min(stop, log_end)), snapshot, start,
                         log_end=log_end, findings=findings)
    if stop > start:
        result.records = replay_log(part, Replay(image, start), stop, result.findings,
                                    progress=progress)
    return result


# ---------------------------------------------------------------------- provenance

def image_provenance(path: str | os.PathLike[str], result: ImageResult) -> Provenance:
    """Where the image of ``result`` stands, as Kafka's shell shows it at
    ``/image/provenance``: the last data batch applied (its last offset, leader epoch and
    max timestamp).  An image that stands at a snapshot's end takes the snapshot's last
    offset and epoch and the newest time of its batches (Kafka's shell shows the position
    inside the file instead).  Reads the log again: ask only when it is shown."""
    last: tuple[int, int, int] | None = None
    if result.records:
        source = find_metadata(path)
        files = source.segments if isinstance(source, PartitionDir) else []
        for f in files:
            if (f.kind.base_offset or 0) >= result.offset:
                break
            for b in read_batches(f.path, []):
                if b.base_offset >= result.offset:
                    break
                if not b.is_control:  # a batch cut by --at: its last record applied
                    last = (min(b.last_offset, result.offset - 1), b.leader_epoch,
                            b.max_timestamp)
    if last is None and result.snapshot is not None:
        kind = classify(result.snapshot.name)
        newest = -1
        for b in read_batches(result.snapshot, []):
            if not b.is_control:
                newest = max(newest, b.max_timestamp)
        last = (result.start_offset - 1, kind.epoch if kind.epoch is not None else -1,
                newest)
    return Provenance(*last) if last is not None else EMPTY_PROVENANCE


# ---------------------------------------------------------------------- browse

def public_json(image: MetadataImage, show_secrets: bool = False) -> dict[str, Any]:
    """The image's canonical JSON with sensitive config values (``*.password``,
    ``sasl.jaas.config`` …) replaced by ``[redacted]``, as ``kmeta dump`` does.  SCRAM
    credentials and token ids are fingerprints in the canonical form already.  The
    digest stays that of the full image."""
    j = image.to_json()
    if not show_secrets:
        for resources in j["configs"].values():
            for entries in resources.values():
                for k in entries:
                    if SENSITIVE_CONFIG.search(k):
                        entries[k] = REDACTED
    return j


@dataclass
class NodeLookup:
    """What ``kmeta image ls|cat NODE`` found: an old path's part of the image JSON
    (``legacy``), or the nodes of Kafka's tree a new path names (globs expanded)."""

    legacy: bool
    value: Any = None
    found: list[tuple[str, Node]] = field(default_factory=list)


def look_up(result: ImageResult, path: str | os.PathLike[str], node: str,
            action: str) -> NodeLookup:
    """NODE of ``kmeta image``: an old path (``/topics/NAME/0``, ``/brokers/1``: first
    component a section of the image JSON; and ``cat /``, the whole image) walks the
    image JSON as before; any other is a path of Kafka's node tree (``/image/...``,
    globs as in kafka-metadata-shell).  Nothing there is a UsageError."""
    if is_legacy(node) or (action == "cat" and not split_path("/", node)):
        return NodeLookup(True, browse(public_json(result.image), node))
    root = image_tree(result.image, provenance=lambda: image_provenance(path, result))
    found = resolve(root, "/", node)
    if not found:
        raise UsageError(f"{action}: {node}: no such file or directory",
                         hint="ls / lists Kafka's node tree (/image, /local); the old paths "
                         "(/topics, /brokers, /configs …) are read too")
    return NodeLookup(False, found=found)


def _unescape(seg: str) -> str:
    return seg.replace("~1", "/").replace("~0", "~")


def children(node: Any) -> list[str]:
    """The names under a node of the image JSON (none for a value)."""
    if isinstance(node, dict):
        return [str(k) for k in node]
    if isinstance(node, list):
        return [str(i) for i in range(len(node))]
    return []


def browse(image_json: dict[str, Any], path: str) -> Any:
    """The node of the image JSON at ``path`` (``/``, ``/topics/NAME/partitions/0``…).

    ``/topics/NAME/N`` is short for ``/topics/NAME/partitions/N``, and
    ``/configs/TYPE/KEY`` for ``/configs/TYPE/""/KEY`` (the type's default resource) when
    no resource is named KEY.  Segments may use JSON
    Pointer escapes (``~1`` for ``/``).  A path that does not exist is a UsageError that
    lists what does.
    """
    node: Any = image_json
    walked = ""
    segs = [_unescape(s) for s in path.strip().split("/") if s]
    for i, seg in enumerate(segs):
        nxt: Any = _MISSING
        if isinstance(node, dict):
            if seg in node:
                nxt = node[seg]
            elif walked.count("/") == 2 and walked.startswith("/configs/") \
                    and isinstance(node.get(""), dict) and seg in node[""]:
                # the default resource of a type (BROKER's cluster-wide configs) is
                # named "", which a path cannot spell: its keys are read through the type
                nxt = node[""][seg]
            elif walked.count("/") == 2 and walked.startswith("/topics/") \
                    and isinstance(node.get("partitions"), dict) and seg in node["partitions"]:
                nxt = node["partitions"][seg]
        elif isinstance(node, list) and seg.isdigit() and int(seg) < len(node):
            nxt = node[int(seg)]
        if nxt is _MISSING:
            names = children(node)
            where = walked or "/"
            if not names:
                raise UsageError(f"{where} is a value, it has no {seg!r}",
                                 context="/" + "/".join(segs))
            shown = ", ".join(names[:40]) + (f" … ({len(names)})" if len(names) > 40 else "")
            raise UsageError(f"{where} has no {seg!r}; it has: {shown}",
                             context="/" + "/".join(segs[:i + 1]))
        node = nxt
        walked += "/" + seg
    return node


_MISSING = object()


# ---------------------------------------------------------------------- history

def _records(files: list[LogFile], findings: list[Finding], progress: Progress
             ) -> Iterator[tuple[Any, Any, Any, str]]:
    """The metadata records worth a history row; what could not be read goes into
    ``findings`` (a history with a hole must say so)."""
    for f in files:
        path = str(f.path)
        stream = Expandable(read_batches(f.path, findings, memo=True, runs=True,
                                         progress=progress))
        for batch in stream:
            if type(batch) is Run:
                # NoOp heartbeats repeated: nothing a history shows
                ref = batch[0]
                if ref.is_control or decode_metadata(ref[LONE][3]).type != "NO_OP_RECORD":
                    stream.expand(batch)
                continue
            for item in decoded_records(batch, decode_metadata, decode_control):
                if type(item) is Finding:
                    findings.append(item)
                    continue
                _, r, payload = item
                if payload.finding:
                    findings.append(Finding(payload.finding[0], f"record at offset "
                                            f"{r.offset}: {payload.finding[1]}", path,
                                            batch.position, r.offset))
                    continue
                if batch.is_control or payload.type == "NO_OP_RECORD":
                    continue
                yield batch, r, payload, path


_BROKER_KEYS = {
    "REGISTER_BROKER_RECORD": "brokerId",
    "UNREGISTER_BROKER_RECORD": "brokerId",
    "BROKER_REGISTRATION_CHANGE_RECORD": "brokerId",
    "FENCE_BROKER_RECORD": "id",
    "UNFENCE_BROKER_RECORD": "id",
    # Node ids are unique across brokers and controllers: a controller's own records too.
    "REGISTER_CONTROLLER_RECORD": "controllerId",
    "UNREGISTER_CONTROLLER_RECORD": "controllerId",
}
_PARTITION_TYPES = ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD")
_REPLICA_KEYS = ("replicas", "isr", "addingReplicas", "removingReplicas",
                 "eligibleLeaderReplicas", "lastKnownElr")


def _touches_broker(type_name: str, d: dict, broker: int) -> bool:
    key = _BROKER_KEYS.get(type_name)
    if key is not None:
        return d.get(key) == broker
    if type_name in _PARTITION_TYPES:
        if d.get("leader") == broker:
            return True
        return any(broker in (d.get(k) or ()) for k in _REPLICA_KEYS)
    return False


def history(path: str | os.PathLike[str], *, topic: str | None = None,
            partition: int | None = None, broker: int | None = None,
            progress: Progress = QUIET) -> HistoryResult:
    """Every metadata record of the log (or of a lone snapshot file) that touched a topic
    (by name, then by its topic ids) or a broker (by node id, in broker and controller
    registration records, or as a partition's leader or replica), in offset order.

    With ``partition``, PartitionRecords and PartitionChangeRecords of other partitions
    of the topic are left out; the topic's own records (TopicRecord, ConfigRecord,
    RemoveTopicRecord, ClearElrRecord) stay.
    """
    if (topic is None) == (broker is None):
        raise UsageError("give exactly one of --topic and --broker")
    if partition is not None and topic is None:
        raise UsageError("--partition needs --topic")
    source = find_metadata(path, progress)
    topic_ids: set[str] = set()
    if isinstance(source, LogFile):
        files = [source]
    else:
        files = source.segments
        if not files:
            raise UnreadableInput("no log segment: there is no log to search",
                                  context=str(source.path),
                                  hint="give one of its .checkpoint files to search a "
                                  "snapshot")
        start = files[0].kind.base_offset or 0
        if topic is not None and start > 0:
            # The TopicRecord may be below the log start: learn the ids from the snapshot.
            snaps = [s for s in source.snapshots if _end_offset(s) <= start]
            if snaps:
                image, _ = snapshot_image(max(snaps, key=_end_offset), progress)
                tid = image.topic_id(topic)
                if tid is not None:
                    topic_ids.add(tid)
    result = HistoryResult([], [])
    for batch, r, p, file in _records(files, result.findings, progress):
        d = p.data if isinstance(p.data, dict) else {}
        t = p.type
        if topic is not None:
            if t == "TOPIC_RECORD":
                hit = d.get("name") == topic
                if hit:
                    topic_ids.add(d.get("topicId"))
            elif t in _PARTITION_TYPES:
                hit = d.get("topicId") in topic_ids and (
                    partition is None or d.get("partitionId") == partition)
            elif t == "REMOVE_TOPIC_RECORD":
                hit = d.get("topicId") in topic_ids
            elif t == "CONFIG_RECORD":
                hit = d.get("resourceType") == TOPIC_RESOURCE \
                    and d.get("resourceName") == topic
            elif t == "CLEAR_ELR_RECORD":
                hit = d.get("topicName") in (topic, "", None)
            else:
                hit = False
        else:
            assert broker is not None
            hit = _touches_broker(t, d, broker)
        if hit:
            data = redact(t, p.data) if t in SECRET_TYPES else p.data
            result.rows.append(HistoryRow(r.offset, batch.leader_epoch, r.timestamp, t,
                                          p.version, data, file))
    return result
