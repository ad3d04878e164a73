"""The ``meta.properties`` of one node's log dirs as Kafka checks them before it loads a
log: what makes it refuse to start, and what only takes a dir offline.  Pure rules, no
I/O: the one place that decides (``kmeta startup`` makes the refusals of them, the
placement of ``verify`` its findings V194-V196).

Read from apache/kafka (tags 3.5.0-3.9.0-rc3, trunk 2024-10) and the ``4.1`` branch of
confluentinc/kafka, for behaviour only:

* 3.7+ ``MetaPropertiesEnsemble`` (``metadata/.../properties/``): ``Loader.load`` sorts
  each dir into missing (no file), error (unreadable, or a ``MetaProperties.Builder``
  failure: unknown version, bad id, a v1 file without cluster.id/node.id) and read;
  ``verify`` throws ``RuntimeException`` on a ZooKeeper broker's v1 file (REQUIRE_V0), a
  cluster.id or node.id other than the first seen (or the configured node id), a reserved
  or repeated directory.id, no readable file at all (KRaft), or an error in the metadata
  log dir.  Error dirs are only offline (``initialOfflineDirs``).  Then KRaft's
  ``KafkaRaftServer.initializeLogDirs`` refuses a dir without the file ("have you run
  kafka-storage.sh") or a file without node/cluster id.
* 3.5-3.6 ``BrokerMetadataCheckpoint.getBrokerMetadataAndOfflineDirs``: an I/O error
  takes the dir offline (KRaft: refuses if it is the metadata log dir); ZooKeeper mode
  compares the raw properties of every dir, KRaft the parsed cluster.id and node.id,
  and any difference throws ``InconsistentBrokerMetadataException``; KRaft refuses a dir
  without the file, ZooKeeper mode writes one; ``KafkaServer.startup`` refuses a v1 file
  ("Zk-based brokers only support version 0"), ``MetaProperties.parse`` an unknown
  version or a v1 file without its ids.
* 4.0 removed ZooKeeper mode (KIP-500): a ZooKeeper broker's dirs do not start.

Kafka keeps the dirs in a HashMap, so which disagreeing dir it names first is not
defined; kmeta compares in the order given and reports every dir that disagrees.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kmeta.core.kafka_releases import LAST_ZOOKEEPER, version_key

# A dir's meta.properties as read.
READ = "read"
MISSING = "missing"
ERROR = "error"

REFUSES = "refuses"
OFFLINE = "offline"


@dataclass(frozen=True)
class MetaDir:
    """One log dir's ``meta.properties``: ``state`` READ (``meta`` the parsed file, with
    ``version``, ``cluster_id``, ``node_id``, ``directory_id``; ``raw`` its properties),
    MISSING, or ERROR (``problem`` says why); ``metadata_log``: the dir holds the
    metadata log (``__cluster_metadata-0``)."""

    path: str
    state: str
    meta: Any = None
    raw: Mapping[str, str] | None = None
    problem: str | None = None
    metadata_log: bool = False


@dataclass(frozen=True)
class Fault:
    """What Kafka does about one dir's ``meta.properties``: ``effect`` REFUSES (the node
    does not start: ``exception`` and ``message`` are Kafka's) or OFFLINE (the dir is
    left out); ``text`` says it for people."""

    code: str
    path: str
    effect: str
    exception: str
    message: str
    text: str
    details: dict[str, Any] = field(default_factory=dict)


_FORMAT_HINT = ("(have you run `kafka-storage.sh` to format the directory?)")


def zookeeper_mode(dirs: Sequence[MetaDir]) -> bool:
    """A ZooKeeper-mode broker's dirs: version 0 files, no metadata log (a broker migrated
    to KRaft keeps its version 0 files beside its metadata log) and no directory.id (a
    ZooKeeper broker writes one only while it migrates, 3.7+: KafkaServer.startup)."""
    v0 = [d for d in dirs if d.state == READ and d.meta.version == 0]
    return bool(v0) and not any(d.metadata_log for d in dirs) and \
        not any(d.meta.directory_id for d in v0)


def migrating(dirs: Sequence[MetaDir]) -> bool:
    """Version 0 files with directory ids and no metadata log among the dirs: a broker
    migrating from ZooKeeper (3.7-3.9), or migrated to KRaft whose metadata log dir was
    not given."""
    return not zookeeper_mode(dirs) and not any(d.metadata_log for d in dirs) and \
        any(d.state == READ and d.meta.version == 0 for d in dirs)


def kraft_mode(dirs: Sequence[MetaDir]) -> bool:
    """A KRaft node's dirs: a metadata log, or a version 1 file (what kafka-storage.sh
    formats).  Dirs that are neither, without a readable file, do not say their mode."""
    return any(d.metadata_log for d in dirs) or \
        any(d.state == READ and d.meta.version == 1 for d in dirs)


def verify(dirs: Sequence[MetaDir], version: str, *, expected_node: int | None = None
           ) -> list[Fault]:
    """Every fault Kafka ``version`` finds in the ``meta.properties`` of one node's log
    ``dirs`` (in the order given), ``expected_node`` the configured node.id/broker.id
    (None: the first dir's is expected)."""
    zk = zookeeper_mode(dirs)
    if zk and version_key(version) >= (4, 0):
        return [_no_zookeeper(dirs, version)]
    if version_key(version) < (3, 7):
        return _before_3_7(dirs, version, zk, expected_node)
    return _ensemble(dirs, version, zk, expected_node)


def _no_zookeeper(dirs: Sequence[MetaDir], version: str) -> Fault:
    path = next(d.path for d in dirs if d.state == READ and d.meta.version == 0)
    return Fault(
        "V232", path, REFUSES, "", "",
        f"a ZooKeeper-mode broker (meta.properties version 0, no metadata log): Kafka "
        f"{version} runs only in KRaft mode (ZooKeeper mode was removed in 4.0, KIP-500) and "
        f"does not start it; {LAST_ZOOKEEPER} is the last release that does (migrate the "
        "cluster to KRaft there first, KIP-866)")


def _offline(d: MetaDir, version: str, zk: bool) -> Fault:
    """Loader.load's error dirs (3.7+) and an IOException (3.5-3.6): the dir goes offline,
    a KRaft node refuses if it is its metadata log dir."""
    if not zk and d.metadata_log:
        if version_key(version) >= (3, 7):
            message = (f"Encountered I/O error in metadata log directory {d.path}. Cannot "
                       "continue.")
        else:
            message = (f"Cannot start server since `meta.properties` could not be loaded "
                       f"from {d.path}")
        return Fault("V231", d.path, REFUSES, "RuntimeException" if version_key(version)
                     >= (3, 7) else "KafkaException", message,
                     f"meta.properties cannot be read ({d.problem}) in the metadata log "
                     f"dir: Kafka {version} refuses to start")
    return Fault("V231", d.path, OFFLINE, "", "",
                 f"meta.properties cannot be read ({d.problem}): Kafka {version} starts "
                 "with this log dir offline, its logs not served")


def _ensemble(dirs: Sequence[MetaDir], version: str, zk: bool, expected_node: int | None
              ) -> list[Fault]:
    """MetaPropertiesEnsemble.verify (3.7+), then KafkaRaftServer.initializeLogDirs."""
    out: list[Fault] = [_offline(d, version, zk) for d in dirs if d.state == ERROR]
    read = [d for d in dirs if d.state == READ]
    kraft = kraft_mode(dirs)
    if kraft and not read:
        # the first exception Kafka throws: the per-dir "No meta.properties found" of
        # initializeLogDirs comes after verify, so it is said in words only
        unformatted = sum(1 for d in dirs if d.state == MISSING)
        said = f" ({unformatted} without one: never formatted with kafka-storage.sh?)" \
            if unformatted else ""
        return out + [Fault("V231" if not unformatted else "V230", dirs[0].path, REFUSES,
                            "RuntimeException", "No readable meta.properties files found.",
                            f"no log dir holds a meta.properties Kafka {version} can "
                            f"read{said}: it refuses to start")]
    cluster: tuple[str, str] | None = None
    node: tuple[int, str] | None = None if expected_node is None else (expected_node,
                                                                         "the configuration")
    ids: dict[str, str] = {}
    for d in read:
        meta, path = d.meta, f"{d.path}/meta.properties"
        if zk and meta.version != 0:
            out.append(Fault(
                "V232", path, REFUSES, "RuntimeException",
                f"Found unexpected version in {path}. ZK-based brokers that are not "
                "migrating only support version 0 ...",
                f"a version {meta.version} meta.properties in a ZooKeeper-mode broker: Kafka "
                f"{version} refuses to start"))
        if meta.cluster_id is not None:
            if cluster is None:
                cluster = (meta.cluster_id, path)
            elif meta.cluster_id != cluster[0]:
                out.append(Fault(
                    "V194", path, REFUSES, "RuntimeException",
                    f"Invalid cluster.id in: {path}. Expected {cluster[0]}, but read "
                    f"{meta.cluster_id}",
                    f"cluster.id {meta.cluster_id}, but {cluster[1]} of the same broker says "
                    f"{cluster[0]}: Kafka {version} refuses to start",
                    {"cluster_id": meta.cluster_id, "expected_cluster_id": cluster[0]}))
        if meta.node_id is not None:
            if node is None:
                node = (meta.node_id, path)
            elif meta.node_id != node[0]:
                out.append(Fault(
                    "V195", path, REFUSES, "RuntimeException",
                    f"Stored node id {meta.node_id} doesn't match previous node id {node[0]} "
                    f"in {path}.",
                    f"node.id {meta.node_id}, but {node[1]} of the same broker says "
                    f"{node[0]}: Kafka {version} refuses to start",
                    {"node_id": meta.node_id, "expected_node_id": node[0]}))
        did = meta.directory_id
        if did is None:
            continue
        if _reserved(did):
            # 3.7's message spells it "resrved"; the 4.1 branch "reserved"
            word = "resrved" if version_key(version) < (3, 8) else "reserved"
            out.append(Fault(
                "V196", path, REFUSES, "RuntimeException",
                f"Invalid {word} directory ID {did} found in {d.path}",
                f"directory.id {did} is one Kafka reserves: Kafka {version} refuses to start",
                {"directory_id": did}))
        elif did in ids:
            out.append(Fault(
                "V196", path, REFUSES, "RuntimeException",
                f"Duplicate directory ID Optional[{did}] found. It was the ID of {ids[did]}, "
                f"but also of {d.path}",
                f"directory.id {did} is also the id of {ids[did]}: Kafka {version} refuses "
                "to start", {"directory_id": did}))
        else:
            ids[did] = d.path
    if kraft:
        out += _unformatted(dirs, version, "RuntimeException")
        for d in read:
            for key, what in (("node_id", "node ID"), ("cluster_id", "cluster ID")):
                if getattr(d.meta, key) is None:
                    out.append(Fault("V230", f"{d.path}/meta.properties", REFUSES,
                                     "RuntimeException", f"Error: {what} not found in {d.path}",
                                     f"meta.properties has no {what}: Kafka {version} "
                                     "refuses to start"))
    return out


def _unformatted(dirs: Sequence[MetaDir], version: str, exception: str) -> list[Fault]:
    """A KRaft log dir without meta.properties: never formatted (or emptied)."""
    return [Fault("V230", d.path, REFUSES, exception,
                  f"No `meta.properties` found in {d.path} {_FORMAT_HINT}",
                  f"no meta.properties: Kafka {version} refuses to start a KRaft node on a "
                  "log dir kafka-storage.sh has not formatted")
            for d in dirs if d.state == MISSING]


def _before_3_7(dirs: Sequence[MetaDir], version: str, zk: bool, expected_node: int | None
                ) -> list[Fault]:
    """BrokerMetadataCheckpoint.getBrokerMetadataAndOfflineDirs, KafkaServer.startup and
    MetaProperties.parse (3.5, 3.6)."""
    out = [_offline(d, version, zk) for d in dirs if d.state == ERROR and d.raw is None]
    # a file read whose content MetaProperties.parse (KRaft) or KafkaServer (ZooKeeper)
    # refuses stops the node
    for d in dirs:
        if d.state == ERROR and d.raw is not None:
            out.append(Fault("V231", f"{d.path}/meta.properties", REFUSES, "RuntimeException",
                             f"{d.problem}", f"meta.properties Kafka {version} cannot use "
                             f"({d.problem}): it refuses to start"))
    read = [d for d in dirs if d.state == READ]
    if zk:
        for d in read:
            if d.meta.version != 0:
                path = f"{d.path}/meta.properties"
                out.append(Fault(
                    "V232", path, REFUSES, "RuntimeException",
                    f"Found unexpected version in loaded `meta.properties`: {d.raw}. "
                    "Zk-based brokers only support version 0 ...",
                    f"a version {d.meta.version} meta.properties in a ZooKeeper-mode broker: "
                    f"Kafka {version} refuses to start"))
        distinct = {tuple(sorted((d.raw or {}).items())) for d in read}
    else:
        if kraft_mode(dirs):
            out += _unformatted(dirs, version, "KafkaException")
        distinct = {(d.meta.cluster_id, d.meta.node_id) for d in read}
    if len(distinct) > 1:
        first = read[0]
        found = "".join(f"- {d.path} -> {dict(d.raw or {})}\n" for d in read)
        for d in read[1:]:
            code, what = _differs(first, d, zk)
            if code is None:
                continue
            out.append(Fault(
                code, f"{d.path}/meta.properties", REFUSES,
                "InconsistentBrokerMetadataException",
                f"BrokerMetadata is not consistent across log.dirs. ... Found:\n{found}",
                f"{what}, unlike {first.path}/meta.properties of the same broker: Kafka "
                f"{version} refuses to start",
                {"node_id": d.meta.node_id, "expected_node_id": first.meta.node_id,
                 "cluster_id": d.meta.cluster_id, "expected_cluster_id": first.meta.cluster_id}))
    if expected_node is not None:
        for d in read:
            if d.meta.node_id is not None and d.meta.node_id != expected_node:
                exc = "InconsistentBrokerIdException" if zk else "InconsistentNodeIdException"
                key = "broker.id" if zk else "node.id"
                out.append(Fault(
                    "V195", f"{d.path}/meta.properties", REFUSES, exc,
                    f"Configured {key} {_q(expected_node, zk)} doesn't match stored {key} "
                    f"{_q(d.meta.node_id, zk)} in meta.properties. ...",
                    f"{key} {d.meta.node_id}, but the configuration says {expected_node}: "
                    f"Kafka {version} refuses to start",
                    {"node_id": d.meta.node_id, "expected_node_id": expected_node}))
    return out


def _q(n: int, zk: bool) -> str:
    """A node id as KafkaServer (bare) or KafkaRaftServer (quoted) prints it (3.6)."""
    return str(n) if zk else f"`{n}'"


def _differs(first: MetaDir, d: MetaDir, zk: bool) -> tuple[str | None, str]:
    a, b = first.meta, d.meta
    if a.cluster_id != b.cluster_id:
        return "V194", f"cluster.id {b.cluster_id}"
    if a.node_id != b.node_id:
        return "V195", f"{'broker.id' if zk else 'node.id'} {b.node_id}"
    if zk and dict(first.raw or {}) != dict(d.raw or {}):
        keys = sorted(k for k in {*(first.raw or {}), *(d.raw or {})}
                      if (first.raw or {}).get(k) != (d.raw or {}).get(k))
        return "V233", f"other properties ({', '.join(keys)})"
    return None, ""


def _reserved(directory_id: str) -> bool:
    from kmeta.core.placement import is_reserved_directory_id

    return is_reserved_directory_id(directory_id)
