"""Which broker each log dir given to ``kmeta startup`` belongs to, and which Kafka
release's rules judge it by default.

Log dirs of different ``node.id`` (KRaft) or ``broker.id`` (ZooKeeper mode) are
different brokers, each started on its own, and so are the dirs of one id in different
clusters (``cluster.id``; node 1 is every docker image's) when each cluster's dirs hold
their own metadata log: whole KRaft nodes (a dir of another cluster without one is a
foreign dir in this broker's log.dirs, which Kafka refuses).  ``--config`` says the dirs
are one broker's (Kafka takes its dirs from ``log.dirs``), and then a dir of another id
or cluster is a refusal.  A dir without a readable ``meta.properties`` tells no node id: it joins the
broker when the others are one broker, else it is a broker of its own ("node unknown");
likewise a file without ``cluster.id`` (a ZooKeeper broker before 2.4) joins the one
ZooKeeper-mode cluster of its node.  Dirs of one node and cluster holding two metadata logs are copies of
the node (a node has one metadata log; docker images share node 1 and a default cluster
id): each metadata log's dir is a broker, with the other dirs nearest to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kmeta.core import meta_ensemble as E
from kmeta.core.kafka_releases import LAST_ZOOKEEPER, NEWEST, release_of_level
from kmeta.errors import KmetaError
from kmeta.formats.textfiles import parse_meta_properties, parse_properties
from kmeta.storage.regular import read_regular

__all__ = ["BrokerDirs", "default_version", "group_brokers", "read_meta"]

METADATA_DIR = "__cluster_metadata-0"


def read_meta(log_dir: str | Path) -> E.MetaDir:
    """A log dir's ``meta.properties`` as Kafka's loader sorts it: read, missing or error
    (an I/O error leaves ``raw`` None, a content Kafka refuses keeps it)."""
    d = Path(log_dir)
    path = d / "meta.properties"
    metadata = (d / METADATA_DIR).is_dir()
    if not path.exists():
        return E.MetaDir(str(d), E.MISSING, metadata_log=metadata)
    try:
        data = read_regular(path, 1 << 20, path.name)
    except (OSError, KmetaError) as e:
        problem = e.strerror if isinstance(e, OSError) else e.message
        return E.MetaDir(str(d), E.ERROR, problem=problem, metadata_log=metadata)
    try:
        raw = parse_properties(data, "meta.properties")
    except KmetaError as e:
        return E.MetaDir(str(d), E.ERROR, problem=e.message, metadata_log=metadata)
    try:
        meta = parse_meta_properties(data)
    except KmetaError as e:
        return E.MetaDir(str(d), E.ERROR, raw=raw, problem=e.message, metadata_log=metadata)
    return E.MetaDir(str(d), E.READ, meta, raw, metadata_log=metadata)


@dataclass
class BrokerDirs:
    """The log dirs of one broker, as given, with their ``meta.properties``."""

    paths: list[str]
    metas: list[E.MetaDir] = field(default_factory=list)

    @property
    def node_id(self) -> int | None:
        return next((m.meta.node_id for m in self.metas
                     if m.state == E.READ and m.meta.node_id is not None), None)

    @property
    def zookeeper(self) -> bool:
        return E.zookeeper_mode(self.metas)


def _shared(a: str, b: str) -> int:
    """How many leading path components two paths share."""
    n = 0
    for x, y in zip(Path(a).resolve().parts, Path(b).resolve().parts, strict=False):
        if x != y:
            break
        n += 1
    return n


def _join(groups: dict[object, BrokerDirs], loose: list[tuple[str, E.MetaDir]],
          own: object, *, kraft: bool = True) -> None:
    """Dirs that tell too little: into the one group there is (``kraft``: be it a KRaft
    node's), else a group ``own``."""
    if not loose:
        return
    sole = next(iter(groups.values())) if len(groups) == 1 else None
    g = sole if sole is not None and (kraft or not E.kraft_mode(sole.metas)) else \
        groups.setdefault(own, BrokerDirs([]))
    for p, m in loose:
        g.paths.append(p)
        g.metas.append(m)


def group_brokers(paths: list[str], *, one_broker: bool = False) -> list[BrokerDirs]:
    """The brokers ``paths`` are, in the order first given: grouped by the node id, then
    the cluster id, of their ``meta.properties`` (``one_broker``: all one broker's)."""
    metas = [read_meta(p) for p in paths]
    if one_broker:
        return [BrokerDirs(list(paths), metas)]
    nodes: dict[int, list[tuple[str, E.MetaDir]]] = {}
    unknown: list[tuple[str, E.MetaDir]] = []
    for p, m in zip(paths, metas, strict=True):
        node = m.meta.node_id if m.state == E.READ else None
        (unknown if node is None else nodes.setdefault(node, [])).append((p, m))
    groups: dict[object, BrokerDirs] = {}
    for node, members in nodes.items():
        clusters: dict[object, BrokerDirs] = {}
        loose = []
        for p, m in members:
            if m.meta.cluster_id is None:
                loose.append((p, m))
                continue
            g = clusters.setdefault((node, m.meta.cluster_id), BrokerDirs([]))
            g.paths.append(p)
            g.metas.append(m)
        if len(clusters) > 1 and not all(any(m.metadata_log for m in g.metas)
                                         for g in clusters.values()):
            # a dir of another cluster among one node's: one broker, which Kafka refuses
            clusters = {node: BrokerDirs([p for p, _ in members], [m for _, m in members])}
        else:
            # a file without cluster.id is a ZooKeeper broker's (before 2.4): a KRaft
            # node's always has one (KafkaRaftServer: "cluster ID not found")
            _join(clusters, loose, (node, None), kraft=False)
        groups.update(clusters)
    _join(groups, unknown, None)
    for key, g in list(groups.items()):
        homes = [p for p, m in zip(g.paths, g.metas, strict=True) if m.metadata_log]
        if len(homes) > 1:
            # copies of one node (node 1 of docker clusters sharing its default cluster
            # id): a node has one metadata log, so each is a broker, with the dirs nearest
            del groups[key]
            for p, m in zip(g.paths, g.metas, strict=True):
                home = p if m.metadata_log else max(homes, key=lambda h: _shared(h, p))
                h = groups.setdefault((key, home), BrokerDirs([]))
                h.paths.append(p)
                h.metas.append(m)
    order = {p: i for i, p in enumerate(paths)}
    for g in groups.values():  # each broker's dirs in the order given
        pairs = sorted(zip(g.paths, g.metas, strict=True), key=lambda pm: order[pm[0]])
        g.paths, g.metas = [p for p, _ in pairs], [m for _, m in pairs]
    return sorted(groups.values(), key=lambda g: order[g.paths[0]])


def default_version(broker: BrokerDirs, level: int | None, has_image: bool
                    ) -> tuple[str, str]:
    """The release whose rules judge ``broker`` when ``--kafka-version`` is not given, and
    why: a ZooKeeper-mode broker's, the last that runs one; a KRaft node's, the release
    of the metadata.version its own metadata log finalized (``level``; ``has_image``: the
    log was read); else the newest kmeta knows."""
    if broker.zookeeper:
        return LAST_ZOOKEEPER, (f"a ZooKeeper-mode broker: {LAST_ZOOKEEPER} is the last "
                                "release that runs one")
    if E.migrating(broker.metas):
        return LAST_ZOOKEEPER, ("version 0 meta.properties with directory ids: a broker "
                                f"migrating from ZooKeeper, which {LAST_ZOOKEEPER} runs last "
                                "(migrated: give its metadata.log.dir or --kafka-version)")
    if has_image:
        return release_of_level(level)
    return NEWEST, "no metadata log here tells the release: the newest kmeta knows"
