"""``kmeta report``: every analysis that applies to the paths, run once, in one report."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from kmeta.findings import Finding
from kmeta.ops.report.model import MetadataReplica, Report, Segment
from kmeta.storage.discover import Discovery, PartitionDir, discover

OFFSETS_TOPIC = "__consumer_offsets"
REMOTE_TOPIC = "__remote_log_metadata"


def _label(part: PartitionDir, taken: set[str]) -> str:
    """A short name for a metadata replica: its data dir's name, made unique."""
    base = part.path.parent.name or str(part.path.parent)
    label, k = base, 2
    while label in taken:
        label, k = f"{base}#{k}", k + 1
    taken.add(label)
    return label


def build_report(paths: Sequence[str | os.PathLike[str]]) -> Report:
    from kmeta.ops.diff import open_replica, read_replicas

    found: Discovery = discover(paths)
    report = Report([str(p) for p in paths])
    report.data_dirs = [d.path for d in found.data_dirs]
    for p in found.all_partitions():
        if not p.is_metadata:
            report.partitions.setdefault((p.topic, p.partition), []).append(p.path)
    taken: set[str] = set()
    metas = [p for p in found.all_partitions() if p.is_metadata]
    replicas = []
    for part in metas:
        rep = open_replica(str(part.path))
        replicas.append(rep)
    if replicas:
        read_replicas(replicas)
    for part, rep in zip(metas, replicas, strict=True):
        report.metadata.append(_replica_view(part, rep, _label(part, taken)))
    _analyses(report, found, metas)
    from kmeta.ops.report.pictures import add_picture_data

    add_picture_data(report)  # what only the HTML pictures need
    return report


def _analyses(report: Report, found: Discovery, metas: list[PartitionDir]) -> None:
    """Each analysis that applies, as its command runs it."""
    from kmeta.ops.verify import verify_discovery
    from kmeta.ops.verify_jobs import default_jobs

    checked = verify_discovery(found, jobs=default_jobs())
    report.verify = checked
    if metas:
        from kmeta.ops.brokers import brokers
        from kmeta.ops.retention import retention

        lead = max(report.metadata, key=lambda m: (m.log_end_offset or -1))
        report.brokers = brokers(str(lead.path))
        report.retention = [retention(str(m.path)) for m in report.metadata]
        clusters: dict[str | None, list[MetadataReplica]] = {}
        for m in report.metadata:
            clusters.setdefault(m.cluster_id, []).append(m)
        group = max(clusters.values(), key=len)
        if len(group) >= 2:
            from kmeta.ops.diff import diff_replicas

            report.diff = diff_replicas([str(m.path) for m in group])
    names = {topic for topic, _ in report.partitions}
    if OFFSETS_TOPIC in names:
        from kmeta.ops.consumers import consumers

        holders = sorted({d.parent for (t, _), ds in report.partitions.items()
                          if t == OFFSETS_TOPIC for d in ds})
        report.consumers = consumers(str(holders[0]))
    if REMOTE_TOPIC in names:
        from kmeta.ops.tiering import tiering

        holders = sorted({d.parent for (t, _), ds in report.partitions.items()
                          if t == REMOTE_TOPIC for d in ds})
        report.tiering = tiering(str(holders[0]))
    for dirs in _brokers_dirs(found):
        report.startup.append(_startup(dirs))


def _brokers_dirs(found: Discovery) -> list[list[Path]]:
    """The log dirs of each broker: data dirs grouped by the node.id they carry."""
    from kmeta.ops.replica_dirs import node_and_cluster

    groups: dict[object, list[Path]] = {}
    for d in found.data_dirs:
        node, cluster = node_and_cluster(found, d.path)
        key = (cluster, node) if node is not None else d.path
        groups.setdefault(key, []).append(d.path)
    return list(groups.values())


def _startup(dirs: list[Path]):  # noqa: ANN202
    from kmeta.ops.startup import plan_startup
    from kmeta.ops.startup.image import image_judge, with_broker_findings

    names = [str(d) for d in dirs]
    judge, placed = image_judge(names)
    plan = plan_startup(names, placement=judge,
                        image=None if placed is None else placed.image,
                        node_id=None if placed is None else placed.node_id)
    plan.placement_objects = with_broker_findings(plan, placed)
    return plan


def _replica_view(part: PartitionDir, rep, label: str) -> MetadataReplica:  # noqa: ANN001
    m = rep.model
    view = MetadataReplica(label, part.path, rep.node_id, rep.cluster_id,
                           m.log_start_offset if m else None, m.log_end_offset if m else None)
    if m is not None:
        view.epochs = [(e.epoch, e.start_offset, None) for e in m.epoch_cache.entries]
    segs = part.segments
    for i, f in enumerate(segs):
        base = f.kind.base_offset or 0
        end = segs[i + 1].kind.base_offset if i + 1 < len(segs) else view.log_end_offset
        try:
            size = f.path.stat().st_size
        except OSError:
            size = 0
        view.segments.append(Segment(f.path, base, end, size))
    for f in part.snapshots:
        try:
            size = f.path.stat().st_size
        except OSError:
            size = 0
        view.snapshots.append((f.kind.base_offset or 0, f.path, size, None))
    return view


def _unused(_: list[Finding], __: Path) -> None:  # pragma: no cover
    pass
