"""The image against the disk: what Kafka does with each partition dir of a broker when it
starts, given the cluster image its own metadata log holds.  Pure rules, no I/O.

Read from apache/kafka (``core/src/main/scala/kafka/log/LogManager.scala`` and
``BrokerMetadataPublisher.scala`` at tags 3.5.0 … 3.9.0-rc3 and trunk of 2024-10):

* ``LogManager.isStrayKraftReplica`` (3.7.1+, 3.8, 3.9, 4.x): a log is stray when it has
  no topic id, when the image has no partition under its topic id and number, or when
  the partition's replicas leave this node out.  Directory assignment and ISR play no
  part.  Its tests in ``LogManagerTest`` (``testIsStrayKraftReplica*``) are
  tests/test_placement.py's.
* What happens to a stray differs by version: 3.5/3.6 find strays after ReplicaManager
  started and delete them (renamed ``-delete``); 3.7.0 renames them ``-stray`` right after
  loading and keeps them, but refuses to start on a log without a topic id; 3.7.1 on
  renames them ``-stray`` while loading and keeps them.
* ``LogManager.recoverAbandonedFutureLogs`` (3.7.1+, KAFKA-16082): a ``-future`` log whose
  parent dir is the one the image assigns the replica to replaces the current log (which
  is deleted when it has the same topic id).
* KIP-858 (JBOD in KRaft, 3.7+): the image assigns each replica a directory id; a log
  found elsewhere is used where it is and the broker reports its real directory.

Inputs are the image's ``topics`` map (:class:`kmeta.core.image.MetadataImage`) and
:class:`LocalLog` rows the ops layer read from the disk.
"""

from __future__ import annotations

import base64
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kmeta.core.image import MIGRATING_DIR
from kmeta.core.versions import LEVEL_NAMES, MINIMUM_KRAFT_LEVEL

#: Kafka's ``DirectoryId`` reserved ids (``server-common/.../DirectoryId.java``, 3.7+).
UNASSIGNED_DIR = "AAAAAAAAAAAAAAAAAAAAAQ"
LOST_DIR = "AAAAAAAAAAAAAAAAAAAAAg"
RESERVED_DIR_NAMES = {MIGRATING_DIR: "MIGRATING", UNASSIGNED_DIR: "UNASSIGNED",
                      LOST_DIR: "LOST"}

# Why a log is stray, in the order isStrayKraftReplica asks.  Kafka asks only whether
# the image has a partition under the log's topic id and number; kmeta tells apart why it
# has none, from what the replay kept: a topic the history removed (a RemoveTopicRecord),
# a partition number the live topic does not have, a name re-created under another id, or
# an id the history never held (another cluster's, or removed before the oldest snapshot).
NO_TOPIC_ID = "no_topic_id"
NOT_IN_IMAGE = "topic_id_not_in_image"
TOPIC_DELETED = "topic_deleted"        # case NOT_IN_IMAGE: a RemoveTopicRecord removed it
NO_SUCH_PARTITION = "partition_not_in_topic"  # the id is live, the number is not
TOPIC_ID_DIFFERS = "topic_id_differs"  # case NOT_IN_IMAGE, where the name lives on
NOT_A_REPLICA = "not_a_replica"

# Verdicts of a partition dir.
FINE = "fine"
STRAY = "stray"
STRAY_DIR = "stray_dir"          # already renamed -stray by an earlier start
DELETE_DIR = "delete_dir"        # already renamed -delete
FUTURE_PROMOTED = "future_promoted"
FUTURE_KEPT = "future_kept"
FUTURE_NO_TOPIC_ID = "future_no_topic_id"
DUPLICATE = "duplicate"          # the same partition's current log in two log dirs
REPLACED = "replaced"            # the current log a promoted -future log deletes

# A replica's directory assignment against the log dir that holds it (KIP-858).
DIR_MATCHES = "matches"
DIR_OTHER = "other_dir"          # another log dir of this broker
DIR_UNKNOWN = "unknown_dir"      # no log dir of this broker has that id
DIR_RESERVED = "reserved"        # UNASSIGNED or LOST

#: What each Kafka version does, by verdict (and stray reason); keys are version ranges.
STRAY_DELETED = "renamed -delete and deleted after ReplicaManager starts"
STRAY_KEPT_AFTER_LOAD = "renamed -stray after loading, kept"
STRAY_KEPT_IN_LOAD = "renamed -stray while loading, kept (never deleted)"
KAFKA_STRAY: dict[str, str] = {"3.5-3.6": STRAY_DELETED, "3.7.0": STRAY_KEPT_AFTER_LOAD,
                               "3.7.1+": STRAY_KEPT_IN_LOAD}
KAFKA_NO_TOPIC_ID: dict[str, str] = {
    "3.5-3.6": "the stray search fails with an error and no stray is deleted",
    "3.7.0": "refuses to start (a log without a topic id is not allowed in KRaft mode)",
    "3.7.1+": STRAY_KEPT_IN_LOAD}
KAFKA_STRAY_DIR: dict[str, str] = {
    "3.5-3.6.0": "refuses to start: the -stray name is not a partition dir name",
    "3.6.1+": "loaded as a stray log and kept (never deleted)"}
KAFKA_DELETE_DIR: dict[str, str] = {"3.5+": "deleted file.delete.delay.ms after loading"}
KAFKA_FUTURE_PROMOTED: dict[str, str] = {
    "3.5-3.7.0": "kept as a future log",
    "3.7.1+": "promoted to the current log; a current log of the same topic id is deleted"}
KAFKA_FUTURE_KEPT: dict[str, str] = {"3.5+": "kept as a future log: the move resumes"}
KAFKA_FUTURE_NO_TOPIC_ID: dict[str, str] = {
    "3.5-3.7.0": "kept as a future log",
    "3.7.1+": "refuses to start (a future log without a topic id)"}
KAFKA_DUPLICATE: dict[str, str] = {"3.5+": "refuses to start (duplicate log directories)"}
KAFKA_REPLACED: dict[str, str] = {
    "3.5-3.7.0": "kept: the future log stays a future log",
    "3.7.1+": "renamed -delete and deleted: the abandoned future log replaces it"}

# Levels (kmeta.core.versions) from which a Kafka release cannot be older: a broker runs
# software at least as new as the cluster's metadata.version.
_LEVEL_3_7 = 15  # 3.7-IV0
_LEVEL_3_8 = 20  # 3.8-IV0


@dataclass(frozen=True)
class LocalLog:
    """One partition dir found in a log dir of the broker."""

    path: str
    log_dir: str
    #: the log dir's ``directory.id`` (meta.properties), None before Kafka 3.7
    directory_id: str | None
    topic: str
    partition: int
    #: None for a live log, else "delete", "future" or "stray" (from the dir's name)
    state: str | None
    #: the id in ``partition.metadata``, None without one
    topic_id: str | None


@dataclass
class Verdict:
    """What Kafka does with one partition dir."""

    log: LocalLog
    verdict: str
    #: for STRAY: one of NO_TOPIC_ID, NOT_IN_IMAGE, TOPIC_ID_DIFFERS, NOT_A_REPLICA
    reason: str | None = None
    #: the id the image has for the topic's name, when it differs from the log's
    image_topic_id: str | None = None
    #: the directory id the image assigns this node's replica to (None: not assigned)
    assigned_directory: str | None = None
    #: DIR_MATCHES, DIR_OTHER, DIR_UNKNOWN, DIR_RESERVED, or None when not judged
    directory: str | None = None
    #: version range -> what that Kafka does with the dir
    kafka: dict[str, str] = field(default_factory=dict)
    #: the other dir involved: the current log a promoted future replaces, the twin of a
    #: duplicate
    other: str | None = None


@dataclass(frozen=True)
class MissingReplica:
    """A replica the image assigns to this node with no log on its disks."""

    topic: str
    topic_id: str
    partition: int
    #: the partition's leader in the image (-1: none)
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    assigned_directory: str | None
    directory: str | None
    #: a peer's copy of the partition: its dir and the bytes of its segments
    peer_path: str | None = None
    peer_bytes: int | None = None
    #: the broker's dir of that name Kafka sets aside as a stray (an old topic id, or none)
    stray_path: str | None = None
    #: the highest offset the broker's own offset checkpoints (high watermark, recovery
    #: point, log start) name for it; 0 says it held no record, None that none names it
    checkpoint_offset: int | None = None


@dataclass
class Placement:
    """Every partition dir's verdict and the replicas missing on disk, for one broker."""

    node_id: int
    verdicts: list[Verdict] = field(default_factory=list)
    missing: list[MissingReplica] = field(default_factory=list)


def release_of(level: int | None) -> str:
    """The Kafka release a metadata.version level belongs to ("3.7"), oldest KRaft's for
    an image without one."""
    name = LEVEL_NAMES.get(level if level is not None else MINIMUM_KRAFT_LEVEL, "")
    return name.split("-", 1)[0] or "?"


def may_run_before_3_7(level: int | None) -> bool:
    """Whether a broker of this metadata.version may run Kafka 3.6 or older."""
    return level is None or level < _LEVEL_3_7


def may_run_3_7_0(level: int | None) -> bool:
    """Whether a broker of this metadata.version may run Kafka 3.7.0."""
    return level is None or level < _LEVEL_3_8


def replica_directory(partition: Mapping[str, Any], node_id: int) -> str | None:
    """The directory id the image assigns ``node_id``'s replica to, None when the node is
    not a replica or the image holds no directories for the partition."""
    replicas = partition.get("replicas") or []
    dirs = partition.get("directories") or []
    if node_id not in replicas or len(dirs) != len(replicas):
        return None
    return dirs[replicas.index(node_id)]


def is_reserved_directory_id(directory_id: str) -> bool:
    """Kafka reserves the first 100 ids whose most significant half is 0 (``DirectoryId``:
    MIGRATING, UNASSIGNED, LOST and room for more); a log dir may not carry one."""
    try:
        raw = base64.urlsafe_b64decode(directory_id + "==")
    except ValueError:
        return False
    return len(raw) == 16 and raw[:8] == bytes(8) and int.from_bytes(raw[8:], "big") < 100


def stray_reason(node_id: int, topics: Mapping[str, Mapping[str, Any]], log: LocalLog,
                 names: Mapping[str, str] | None = None,
                 removed: Container[str] = ()) -> str | None:
    """Why ``LogManager.isStrayKraftReplica`` (3.7.1+) calls ``log`` stray, or None when
    it does not.  ``names`` maps topic name -> id in the image (built from ``topics`` when
    not given) and ``removed`` holds the topic ids the replayed history removed: they only
    refine why the image has no such partition (NO_SUCH_PARTITION, TOPIC_ID_DIFFERS,
    TOPIC_DELETED, else NOT_IN_IMAGE)."""
    if log.topic_id is None:
        return NO_TOPIC_ID
    topic = topics.get(log.topic_id)
    partition = None if topic is None else topic["partitions"].get(log.partition)
    if partition is None:
        if topic is not None:
            return NO_SUCH_PARTITION
        if names is None:
            names = {t["name"]: tid for tid, t in topics.items()}
        other = names.get(log.topic)
        if other is not None and other != log.topic_id:
            return TOPIC_ID_DIFFERS
        return TOPIC_DELETED if log.topic_id in removed else NOT_IN_IMAGE
    if node_id not in partition["replicas"]:
        return NOT_A_REPLICA
    return None


def _directory_verdict(assigned: str | None, log_dir_id: str | None,
                       broker_dir_ids: set[str]) -> str | None:
    if assigned is None or assigned == MIGRATING_DIR:
        return None  # placed before the broker had directory ids: nothing to compare
    if assigned in (UNASSIGNED_DIR, LOST_DIR):
        return DIR_RESERVED
    if log_dir_id is not None and assigned == log_dir_id:
        return DIR_MATCHES
    if assigned in broker_dir_ids:
        return DIR_OTHER
    return DIR_UNKNOWN


def place(node_id: int, topics: Mapping[str, Mapping[str, Any]], logs: Iterable[LocalLog],
          broker_dir_ids: Iterable[str] = (),
          peer_copies: Mapping[tuple[str, int], tuple[str, int]] | None = None,
          removed_topic_ids: Container[str] = ()) -> Placement:
    """Judge every partition dir of one broker against the image, and list the replicas
    the image gives the broker that no dir holds.

    ``broker_dir_ids`` are the directory ids of all the broker's log dirs;
    ``peer_copies`` maps (topic id, partition) -> (a peer's partition dir, its bytes);
    ``removed_topic_ids`` the ids the replayed history removed (why a log is stray)."""
    out = Placement(node_id)
    dir_ids = set(broker_dir_ids)
    names = {t["name"]: tid for tid, t in topics.items()}
    logs = sorted(logs, key=lambda g: (g.topic, g.partition, g.state or "", g.path))
    current: dict[tuple[str, int], Verdict] = {}
    futures: list[Verdict] = []
    for log in logs:
        v = Verdict(log, FINE)
        out.verdicts.append(v)
        if log.state == "delete":
            v.verdict, v.kafka = DELETE_DIR, KAFKA_DELETE_DIR
            continue
        if log.state == "stray":
            v.verdict, v.kafka = STRAY_DIR, KAFKA_STRAY_DIR
            continue
        partition = None
        if log.topic_id is not None and log.topic_id in topics:
            partition = topics[log.topic_id]["partitions"].get(log.partition)
        if partition is not None:
            v.assigned_directory = replica_directory(partition, node_id)
        if log.state == "future":
            futures.append(v)
            continue
        reason = stray_reason(node_id, topics, log, names, removed_topic_ids)
        if reason is not None:
            v.verdict, v.reason = STRAY, reason
            v.kafka = KAFKA_NO_TOPIC_ID if reason == NO_TOPIC_ID else KAFKA_STRAY
            if reason == TOPIC_ID_DIFFERS:
                v.image_topic_id = names[log.topic]
            continue
        v.directory = _directory_verdict(v.assigned_directory, log.directory_id, dir_ids)
        key = (log.topic, log.partition)
        twin = current.get(key)
        if twin is not None:  # LogManager.loadLog: IllegalStateException, startup fails
            v.verdict, v.kafka, v.other = DUPLICATE, KAFKA_DUPLICATE, twin.log.path
            continue
        current[key] = v
    for v in futures:
        log = v.log
        if log.topic_id is None:
            v.verdict, v.kafka = FUTURE_NO_TOPIC_ID, KAFKA_FUTURE_NO_TOPIC_ID
            continue
        twin = current.get((log.topic, log.partition))
        # recoverAbandonedFutureLogs: the controller already points at the future's dir
        if v.assigned_directory is not None and log.directory_id is not None \
                and v.assigned_directory == log.directory_id:
            v.verdict, v.kafka = FUTURE_PROMOTED, KAFKA_FUTURE_PROMOTED
            if twin is not None and twin.log.topic_id == log.topic_id:
                v.other = twin.log.path
                twin.verdict, twin.kafka, twin.other = REPLACED, KAFKA_REPLACED, log.path
                twin.directory = None
                del current[(log.topic, log.partition)]
            current.setdefault((log.topic, log.partition), v)
        else:
            v.verdict, v.kafka = FUTURE_KEPT, KAFKA_FUTURE_KEPT
            if twin is not None:
                v.other = twin.log.path
    present = {(v.log.topic_id, v.log.partition) for v in current.values()}
    set_aside = {(v.log.topic, v.log.partition): v.log.path for v in out.verdicts
                 if v.verdict == STRAY}
    peers = peer_copies or {}
    for tid, topic in sorted(topics.items(), key=lambda kv: kv[1]["name"]):
        for pid, p in sorted(topic["partitions"].items()):
            if node_id not in p["replicas"] or (tid, pid) in present:
                continue
            assigned = replica_directory(p, node_id)
            peer = peers.get((tid, pid))
            # a dir of this broker is where Kafka creates it: the assignment matches
            own = assigned if assigned in dir_ids else None
            out.missing.append(MissingReplica(
                topic["name"], tid, pid, p.get("leader", -1), tuple(p["replicas"]),
                tuple(p.get("isr") or ()), assigned,
                _directory_verdict(assigned, own, dir_ids),
                None if peer is None else peer[0], None if peer is None else peer[1],
                set_aside.get((topic["name"], pid))))
    return out
