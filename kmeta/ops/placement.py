"""The image against the disk for whole brokers: which partition dirs Kafka treats as stray,
which ``-future`` logs it promotes, which replicas it must fetch, and whether each log
sits in the directory the image assigns it (KIP-858).  The rules are
:mod:`kmeta.core.placement`'s; this module reads the disk, groups log dirs into brokers,
and turns verdicts into findings.

* :func:`broker_placement` — every log dir of ONE broker (plus its metadata dir, or an
  image built elsewhere): what ``kmeta startup`` asks.
* :func:`discovery_placement` — what verify was given: data dirs grouped into brokers by
  the ``node.id`` of their meta.properties, each judged against the image of the
  metadata log among its own dirs (``kraft32-three/data`` holds three such brokers).

ZooKeeper-mode dirs (meta.properties version 0) have no image: nothing is said of them.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kmeta.core import placement as P
from kmeta.errors import KmetaError, UnreadableInput
from kmeta.findings import Finding
from kmeta.formats.filenames import parse_partition_dir_name
from kmeta.formats.textfiles.partition_metadata import topic_id_in
from kmeta.storage.discover import (
    DataDir,
    DeferredPartition,
    Discovery,
    PartitionDir,
    discover,
)
from kmeta.storage.files import load_checked, read_small
from kmeta.storage.live import live_dirs
from kmeta.storage.progress import QUIET, Progress

__all__ = ["BrokerPlacement", "broker_placement", "discovery_placement"]


@dataclass
class BrokerPlacement:
    """One broker's placement: its log dirs, the image it was judged against, each
    partition dir's verdict, the replicas missing on its disks, and the findings."""

    node_id: int | None
    log_dirs: list[str]
    #: the metadata partition (or snapshot) the image was read from
    metadata: str | None = None
    metadata_version: int | None = None
    placement: P.Placement | None = None
    findings: list[Finding] = field(default_factory=list)
    #: checks that could not run, one line each (no image, no node.id)
    not_run: list[str] = field(default_factory=list)
    #: the MetadataImage judged against (None without one): startup reads its configs
    image: Any = field(default=None, repr=False, compare=False)

    def json_objects(self) -> list[dict[str, Any]]:
        """A ``placement`` object per partition dir that is not plainly fine, then a
        ``missing_replica`` object per replica missing on disk."""
        if self.placement is None:
            return []
        out: list[dict[str, Any]] = []
        for v in self.placement.verdicts:
            if v.verdict == P.FINE and v.directory in (None, P.DIR_MATCHES):
                continue
            out.append({"kind": "placement", "node_id": self.node_id,
                        "partition_dir": v.log.path, "topic": v.log.topic,
                        "partition": v.log.partition, "topic_id": v.log.topic_id,
                        "verdict": v.verdict, "reason": v.reason,
                        "image_topic_id": v.image_topic_id,
                        "directory_id": v.log.directory_id,
                        "assigned_directory_id": v.assigned_directory,
                        "directory_verdict": v.directory, "other_partition_dir": v.other,
                        "kafka_by_version": dict(v.kafka)})
        for m in self.placement.missing:
            out.append({"kind": "missing_replica", "node_id": self.node_id,
                        "topic": m.topic, "topic_id": m.topic_id, "partition": m.partition,
                        "leader": m.leader, "replica_nodes": list(m.replicas),
                        "isr": list(m.isr), "assigned_directory_id": m.assigned_directory,
                        "directory_verdict": m.directory, "peer_partition_dir": m.peer_path,
                        "peer_bytes": m.peer_bytes,
                        "checkpoint_offset": m.checkpoint_offset,
                        "stray_partition_dir": m.stray_path})
        return out


# ---------------------------------------------------------------------- reading

def _meta(d: DataDir) -> Any:
    loaded, _ = load_checked(d.meta_properties)
    return loaded


def _topic_id(part: PartitionDir) -> str | None:
    if isinstance(part, DeferredPartition) and part.checked is not None:
        return part.checked.placement_id  # read where verify checked the partition
    return partition_topic_id(part)


def partition_topic_id(part: PartitionDir) -> str | None:
    """The topic id of a partition's partition.metadata, as placement reads it."""
    f = part.live_file("partition-metadata")
    if f is None:
        return None
    with contextlib.suppress(KmetaError):
        return topic_id_in(read_small(f), lambda: load_checked(f)[0])
    loaded, _ = load_checked(f)
    return None if loaded is None else loaded.topic_id



def _local_logs(dirs: Sequence[DataDir], metas: Mapping[str, Any]) -> list[P.LocalLog]:
    out = []
    for d in dirs:
        meta = metas.get(str(d.path))
        dir_id = None if meta is None else meta.directory_id
        for part in d.partitions:
            if part.is_metadata:
                continue
            name = parse_partition_dir_name(part.path.name)
            state = None if name is None else name.state
            out.append(P.LocalLog(str(part.path), str(d.path), dir_id, part.topic,
                                  part.partition, state, _topic_id(part)))
    return out


def _bytes(part: PartitionDir) -> int:
    size = 0
    for f in part.segments:
        with contextlib.suppress(OSError):
            size += f.path.stat().st_size
    return size


#: The checkpoints that say how far a partition's log reached (replication-offset-
#: checkpoint holds the high watermark); cleaner-offset-checkpoint does not.
_END_CHECKPOINTS = ("replication-offset-checkpoint", "recovery-point-offset-checkpoint",
                    "log-start-offset-checkpoint")


def _with_checkpoints(placement: P.Placement, dirs: Sequence[DataDir]) -> None:
    """What the broker's own checkpoints remember of each missing replica: a partition
    they name at offset 0 held no record, so Kafka re-creating it empty loses nothing."""
    if not placement.missing:
        return
    reached: dict[tuple[str, int], int] = {}
    for d in dirs:
        for f in d.files:
            if f.kind.kind == "offset-checkpoint" and f.kind.live \
                    and f.path.name in _END_CHECKPOINTS:
                loaded, _ = load_checked(f)
                for e in () if loaded is None else loaded.entries:
                    key = (e.topic, e.partition)
                    reached[key] = max(reached.get(key, 0), e.offset)
    for i, m in enumerate(placement.missing):
        # a stray of that name is what the checkpoints remember, not this replica
        if m.stray_path is None and (m.topic, m.partition) in reached:
            placement.missing[i] = replace(m, checkpoint_offset=reached[(m.topic,
                                                                          m.partition)])


def _with_peers(placement: P.Placement, peers: Iterable[DataDir]) -> None:
    """Say where a missing replica's data is: a peer's live dir of that partition whose
    partition.metadata names the same topic id (or has none)."""
    if not placement.missing:
        return
    wanted = {(m.topic, m.partition) for m in placement.missing}
    found: dict[tuple[str, int], list[PartitionDir]] = {}
    for d in peers:
        for part in d.partitions:
            key = (part.topic, part.partition)
            if key in wanted and part.path.name == f"{part.topic}-{part.partition}":
                found.setdefault(key, []).append(part)
    for i, m in enumerate(placement.missing):
        for part in found.get((m.topic, m.partition), []):
            tid = _topic_id(part)
            if tid in (None, m.topic_id):
                placement.missing[i] = replace(m, peer_path=str(part.path),
                                               peer_bytes=_bytes(part))
                break


# ---------------------------------------------------------------------- judging

def _meta_findings(dirs: Sequence[DataDir], metas: Mapping[str, Any], one_broker: bool
                   ) -> Iterable[Finding]:
    """MetaPropertiesEnsemble.verify (3.7+) as kmeta.core.meta_ensemble decides it (startup
    makes its refusals of the same): the log dirs of one broker agree on cluster.id and
    node.id and carry distinct, unreserved directory ids."""
    from kmeta.core import meta_ensemble as E
    from kmeta.core.kafka_releases import NEWEST

    view = [E.MetaDir(str(d.path), E.READ, metas[str(d.path)], metadata_log=any(
        p.is_metadata for p in d.partitions)) for d in dirs if metas.get(str(d.path))]
    codes = {"V194", "V196"} | ({"V195"} if one_broker else set())
    for f in E.verify(view, NEWEST):
        if f.code in codes:
            # the file's path, as verify's other findings name it
            where = f.path if f.path.endswith("meta.properties") else \
                os.path.join(f.path, "meta.properties")
            yield Finding(f.code, f.text.replace(f"Kafka {NEWEST} refuses", "Kafka refuses"),
                          where, details=f.details)


def _versions(kafka: Mapping[str, str]) -> str:
    return "; ".join(f"{k}: {v}" for k, v in kafka.items())


_REASONS = {
    P.NO_TOPIC_ID: "no topic id (partition.metadata missing or unreadable)",
    P.TOPIC_DELETED: "its topic id is not in the image: the metadata log removed the topic "
                     "(RemoveTopicRecord)",
    P.NO_SUCH_PARTITION: "the image's topic of this id has no partition {partition}",
    P.NOT_IN_IMAGE: "its topic id is in neither the image nor the history its metadata log "
                    "holds (another cluster's topic, or one removed before its oldest "
                    "snapshot)",
    P.NOT_A_REPLICA: "the image's replicas of the partition leave node {node} out",
}


def _verdict_finding(v: P.Verdict, node: int, level: int | None) -> Finding | None:
    log = v.log
    details: dict[str, Any] = {"verdict": v.verdict, "kafka": dict(v.kafka)}
    if v.verdict == P.STRAY:
        details["reason"] = v.reason
        if v.reason == P.TOPIC_ID_DIFFERS:
            why = (f"topic id {log.topic_id} differs from the image's {v.image_topic_id} for "
                   f"{log.topic} (the topic was re-created): it holds the old topic's data")
            details["image_topic_id"] = v.image_topic_id
        else:
            why = _REASONS[v.reason or ""].format(node=node, partition=log.partition)
        if v.reason == P.NO_TOPIC_ID:
            code = "V182" if P.may_run_3_7_0(level) else "V181"
        else:
            code = "V180" if P.may_run_before_3_7(level) else "V181"
        return Finding(code, f"stray log: {why}; Kafka {_versions(v.kafka)} (metadata.version "
                       f"{P.release_of(level)})", log.path, details=details)
    if v.verdict == P.STRAY_DIR:
        return Finding("V184", f"stray log kept by an earlier start; Kafka "
                       f"{_versions(v.kafka)}", log.path, details=details)
    if v.verdict == P.DELETE_DIR:
        return Finding("V185", f"marked for deletion; Kafka {_versions(v.kafka)}", log.path,
                       details=details)
    if v.verdict == P.FUTURE_PROMOTED:
        gone = f"; the current log {v.other} is deleted" if v.other else ""
        return Finding("V186", f"abandoned -future log: the image assigns the replica to "
                       f"this log dir ({log.directory_id}), so Kafka 3.7.1+ makes it the "
                       f"current log{gone}", log.path,
                       details={**details, "other_partition_dir": v.other})
    if v.verdict == P.FUTURE_KEPT:
        return Finding("V187", f"replica move in progress: Kafka {_versions(v.kafka)}",
                       log.path, details=details)
    if v.verdict == P.FUTURE_NO_TOPIC_ID:
        return Finding("V188", f"-future log without a topic id; Kafka "
                       f"{_versions(v.kafka)}", log.path, details=details)
    if v.verdict == P.DUPLICATE:
        return Finding("V197", f"{log.topic}-{log.partition} is also in {v.other}: Kafka "
                       "refuses to start (duplicate log directories; delete one of them)",
                       log.path, details={**details, "other_partition_dir": v.other})
    return _directory_finding(v)


def _directory_finding(v: P.Verdict) -> Finding | None:
    log, assigned = v.log, v.assigned_directory
    details = {"directory_id": log.directory_id, "assigned_directory_id": assigned}
    if v.directory == P.DIR_OTHER:
        return Finding("V191", f"the image assigns this replica to directory {assigned}, "
                       f"another log dir of this broker, but it is in {log.directory_id}: "
                       "Kafka (3.7+) uses it where it is and reports its real directory "
                       "to the controller", log.path, details=details)
    if v.directory == P.DIR_UNKNOWN:
        return Finding("V192", f"the image assigns this replica to directory {assigned}, "
                       "which no log dir of this broker has (a missing disk?); Kafka (3.7+) "
                       "uses the log where it is and reports its real directory",
                       log.path, details=details)
    if v.directory == P.DIR_RESERVED:
        name = P.RESERVED_DIR_NAMES.get(assigned or "", assigned)
        return Finding("V193", f"the image assigns this replica to {name}: Kafka (3.7+) "
                       "reports the log dir that holds it to the controller", log.path,
                       details=details)
    return None


def _missing_finding(m: P.MissingReplica, node: int, where: str) -> Finding:
    """What Kafka does with a replica the image gives the node and no dir holds; how bad
    it is depends on what the broker's own offset checkpoints remember of it (Kafka
    writes every log it holds into recovery-point-offset-checkpoint)."""
    others = [b for b in m.isr if b != node]
    peer = ("" if m.peer_path is None else
            f"; {m.peer_bytes:,} byte(s) to fetch, as in {m.peer_path}")
    dirs = ""
    if m.directory == P.DIR_UNKNOWN:
        dirs = (f"; assigned to directory {m.assigned_directory}, which no log dir of this "
                "broker has: Kafka 3.7+ creates it only if no log dir is offline")
    details = {"topic_id": m.topic_id, "partition": m.partition, "leader": m.leader,
               "replicas": list(m.replicas), "isr": list(m.isr),
               "assigned_directory_id": m.assigned_directory,
               "peer_partition_dir": m.peer_path, "peer_bytes": m.peer_bytes,
               "checkpoint_offset": m.checkpoint_offset,
               "stray_partition_dir": m.stray_path}
    head = f"{m.topic}-{m.partition} is assigned to node {node} and has no log here"
    if others:
        source = (f"leader {m.leader}" if m.leader >= 0 and m.leader != node
                  else f"the next leader among {others}")
        does = f"Kafka creates it empty and fetches it from {source}"
    else:
        does = (f"no other in-sync replica in the image (ISR {list(m.isr)}): Kafka creates "
                "it empty and leads it so")
    if m.stray_path is not None:
        return Finding("V189", f"{head}: Kafka sets {m.stray_path} aside as a stray (its "
                       f"records stay there); {does}{peer}{dirs}", where, details=details)
    if m.checkpoint_offset is None:
        return Finding("V199", f"{head}, nor do the offset checkpoints name it (the broker "
                       f"never held it, or a copy left it out): {does}{peer}{dirs}", where,
                       details=details)
    if others:
        return Finding("V189", f"{head}: {does}{peer}{dirs}", where, details=details)
    if m.checkpoint_offset == 0:
        return Finding("V198", f"{head}; {does}; this broker's offset checkpoints name it "
                       f"at offset 0: it held no record, nothing is lost{peer}{dirs}",
                       where, details=details)
    return Finding("V190", f"{head}; {does}; the offset checkpoints name it at offset "
                   f"{m.checkpoint_offset:,}: its records are lost unless a copy exists"
                   f"{peer}{dirs}", where, details=details)


def judge(dirs: Sequence[DataDir], image: Any, *, metadata: str | None = None,
          peers: Iterable[DataDir] = (), one_broker: bool = True,
          no_image: str | None = None) -> BrokerPlacement | None:
    """One broker's log dirs against ``image`` (a MetadataImage, or None when there is
    none, ``no_image`` saying why); None for ZooKeeper-mode dirs, which have no image to
    judge against."""
    metas = {str(d.path): _meta(d) for d in dirs}
    if any(m is not None and m.version == 0 for m in metas.values()):
        return None
    node_ids = [m.node_id for m in metas.values() if m is not None and m.node_id is not None]
    out = BrokerPlacement(node_ids[0] if node_ids else None, [str(d.path) for d in dirs],
                          metadata)
    out.image = image
    out.findings += _meta_findings(dirs, metas, one_broker)
    where = ", ".join(out.log_dirs)
    if out.node_id is None:
        # without a node id only a metadata log beside the partitions says they are a
        # broker's (else: partition dirs gathered by hand, no broker to judge)
        if image is not None:
            out.not_run.append(f"{where}: placement not checked: no meta.properties with "
                               "a node.id")
        return out
    if image is None:
        if no_image is not None:
            out.not_run.append(f"{metadata or where}: placement of node {out.node_id} not "
                               f"checked: the image could not be built ({no_image})")
        elif any(not p.is_metadata for d in dirs for p in d.partitions):
            out.not_run.append(f"{where}: placement of node {out.node_id} not checked: no "
                               "metadata log of its own to build the image from (give "
                               "--metadata DIR)")
        return out
    out.metadata_version = image.metadata_version
    placement = _place(out.node_id, dirs, metas, image)
    _with_peers(placement, peers)
    out.placement = placement
    found = len(out.findings)
    _placement_findings(out, placement)
    if len(out.findings) > found and metadata is not None \
            and live_dirs([d.path for d in dirs]):
        out.findings[found:] = _second_look(out, out.findings[found:], dirs, metadata)
    return out


def _place(node_id: int, dirs: Sequence[DataDir], metas: Mapping[str, Any], image: Any
           ) -> P.Placement:
    dir_ids = [m.directory_id for m in metas.values() if m is not None and m.directory_id]
    placement = P.place(node_id, image.topics, _local_logs(dirs, metas), dir_ids,
                        removed_topic_ids=getattr(image, "removed_topic_ids", ()))
    _with_checkpoints(placement, dirs)
    return placement


def _second_look(out: BrokerPlacement, said: list[Finding], dirs: Sequence[DataDir],
                 metadata: str) -> list[Finding]:
    """A running broker's placement findings, judged again: the dirs listed anew, then the
    image replayed anew.  Kafka commits a metadata record before the broker acts on it
    on disk (a RemoveTopicRecord, then the dir renamed ``-delete``), so a listing newer
    than the image makes a deleted topic's replica look missing, and an image newer than
    the listing a new one's; the first judgment may have been either, this one is the
    second kind.  What holds in both is said; what does not is one S015."""
    again = discover([d.path for d in dirs])
    image, _ = _image_of(metadata)
    if image is None or out.node_id is None:
        return said
    metas = {str(d.path): _meta(d) for d in again.data_dirs}
    second = BrokerPlacement(out.node_id, out.log_dirs, metadata)
    second.metadata_version = image.metadata_version
    _placement_findings(second, _place(out.node_id, again.data_dirs, metas, image))
    held = {(f.code, f.file) for f in second.findings}
    kept = [f for f in said if (f.code, f.file) in held]
    gone = [f for f in said if (f.code, f.file) not in held]
    if gone:
        codes = ", ".join(dict.fromkeys(f.code for f in gone))
        kept.append(Finding(
            "S015", f"{len(gone)} placement finding(s) ({codes}, first: {gone[0].message}) "
            "did not hold on a second look at the dirs and the metadata log: Kafka changed "
            "both while kmeta read them (a topic deleted or created, a replica moved)",
            out.log_dirs[0], details={"codes": [f.code for f in gone]}))
    return kept


def _placement_findings(out: BrokerPlacement, placement: P.Placement) -> None:
    """The findings of a placement's verdicts and missing replicas, onto ``out``."""
    assert out.node_id is not None
    for v in placement.verdicts:
        f = _verdict_finding(v, out.node_id, out.metadata_version)
        if f is not None:
            out.findings.append(f)
    first = out.log_dirs[0]
    unknown = []
    for m in placement.missing:
        f = _missing_finding(m, out.node_id, _missing_where(m, first))
        if f.code == "V199":
            unknown.append(m)
        else:
            out.findings.append(f)
    if len(unknown) > 1:  # nothing on the disk speaks of them: one line for them all
        names = [(m.topic, m.partition) for m in unknown]
        shown = ", ".join(f"{t}-{p}" for t, p in names[:5])
        more = f" and {len(names) - 5} more" if len(names) > 5 else ""
        out.findings.append(Finding(
            "V199", f"{len(unknown)} replicas the image assigns to node {out.node_id} are "
            f"neither on disk nor in its offset checkpoints (never held here, or a copy left "
            f"them out): {shown}{more}; Kafka creates each, and fetches it from its leader "
            "where another replica is in sync", first,
            details={"missing_replicas": [f"{t}-{p}" for t, p in names]}))
    elif unknown:
        out.findings.append(_missing_finding(unknown[0], out.node_id,
                                             _missing_where(unknown[0], first)))


def _missing_where(m: P.MissingReplica, log_dir: str) -> str:
    """Where a missing replica's finding is: the dir its partition would have, so a grouped
    line's examples name the partition, not only the log dir; the log dir where a stray
    of the same name is there (that dir is the stray's finding, V181)."""
    if m.stray_path is not None:
        return log_dir
    return os.path.join(log_dir, f"{m.topic}-{m.partition}")


def _shared(a: Any, b: Any) -> int:
    """How many leading path components two paths share."""
    n = 0
    for x, y in zip(a.parts, b.parts, strict=False):
        if x != y:
            break
        n += 1
    return n


def _image_of(part: PartitionDir | str, progress: Progress = QUIET) -> tuple[Any, str | None]:
    """The image at the log end of a metadata partition (or of ``--metadata DIR``), and
    why there is none."""
    from kmeta.ops.replay import build_image

    try:
        return build_image(part.path if isinstance(part, PartitionDir) else part,
                           progress=progress).image, None
    except KmetaError as e:
        return None, str(e)


def broker_placement(log_dirs: Sequence[str | os.PathLike[str]], *,
                     metadata: str | os.PathLike[str] | None = None,
                     peers: Sequence[str | os.PathLike[str]] = (),
                     image: Any = None, data_dirs: Sequence[DataDir] | None = None,
                     progress: Progress = QUIET) -> BrokerPlacement | None:
    """Every log dir of ONE broker (and its metadata.log.dir) against the image at the end
    of its own ``__cluster_metadata-0`` — or of ``metadata`` (a data dir or metadata
    partition elsewhere), or ``image`` when the caller already replayed one.  ``peers``
    are other brokers' data dirs, read only to say how many bytes a missing replica
    fetches; ``data_dirs``: ``log_dirs`` as the caller's discovery found them (kmeta
    report: verify's, whose checks read each partition's topic id already).  None for a
    ZooKeeper-mode broker (no image).  ``progress`` hears of the reading."""
    if data_dirs is None:
        # the partition dirs known by name: a broker's topic ids are read file by file,
        # without listing the dirs (the judge needs no other file of them)
        data_dirs = discover(log_dirs, defer=True, progress=progress).data_dirs
    if metadata is not None and not os.path.exists(metadata):  # as verify --metadata
        raise UnreadableInput("--metadata: no such file or directory", context=str(metadata))
    dirs = list(data_dirs)
    source: str | None = None
    metadata_parts = [p for d in dirs for p in d.partitions if p.is_metadata]
    target: PartitionDir | str | None = (os.fspath(metadata) if metadata is not None
                                         else metadata_parts[0] if metadata_parts
                                         else None)
    if target is not None:
        # the image's source is named alike whether it is replayed here or was given
        source = str(target.path) if isinstance(target, PartitionDir) else target
    if image is None and target is not None:
        image, problem = _image_of(target, progress)
        if image is None:
            return judge(dirs, None, metadata=source, no_image=problem)
    peer_dirs = list(discover(peers).data_dirs) if peers else []
    return judge(dirs, image, metadata=source, peers=peer_dirs)


def discovery_placement(discovery: Discovery, images: Mapping[str, Any], *,
                        metadata: str | os.PathLike[str] | None = None
                        ) -> list[BrokerPlacement]:
    """The data dirs verify was given, grouped into brokers by ``node.id`` and each judged
    against the image of the metadata partition among its dirs (``images`` maps a
    metadata partition's path to the image verify replayed, None where it replayed none).
    With ``metadata``, every data dir is one broker's, judged against that image."""
    dirs = list(discovery.data_dirs)
    if not dirs:
        return []
    if metadata is not None:
        if not os.path.exists(metadata):
            raise UnreadableInput("--metadata: no such file or directory",
                                  context=os.fspath(metadata))
        image, problem = _image_of(os.fspath(metadata))
        out = judge(dirs, image, metadata=os.fspath(metadata), no_image=problem)
        return [] if out is None else [out]
    groups: dict[Any, list[DataDir]] = {}
    for d in dirs:
        meta = _meta(d)
        key = meta.node_id if meta is not None and meta.node_id is not None else str(d.path)
        groups.setdefault(key, []).append(d)
    for key, group in list(groups.items()):
        # Two copies of one node (two clusters' node 4 side by side): each metadata log's
        # broker is the dirs nearest to it.
        homes = [d for d in group if any(p.is_metadata for p in d.partitions)]
        if len(homes) > 1:
            del groups[key]
            for d in group:
                home = max(homes, key=lambda h: (_shared(h.path, d.path), h is d))
                groups.setdefault((key, str(home.path)), []).append(d)
    results = []
    for key, group in groups.items():
        parts = [p for d in group for p in d.partitions if p.is_metadata]
        image, source, problem = None, None, None
        if len(parts) == 1:
            source = str(parts[0].path)
            image = images.get(source)
            if image is None:  # a log of snapshots only: verify replayed nothing
                image, problem = _image_of(parts[0])
        peers = [d for k, g in groups.items() if k != key for d in g]
        out = judge(group, image, metadata=source, peers=peers, one_broker=False,
                    no_image=problem)
        if out is not None:
            results.append(out)
    return results
