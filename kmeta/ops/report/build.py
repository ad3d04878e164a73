"""``kmeta report``: every analysis that applies to the paths, run once, in one report."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kmeta.ops.replica import LogStats, replica_labels
from kmeta.ops.report.areas import collect, judge
from kmeta.ops.report.lines import area_lines
from kmeta.ops.report.model import MetadataReplica, Report, Segment

if TYPE_CHECKING:
    from kmeta.ops.diff import DiffReport
    from kmeta.ops.retention import RetentionResult
    from kmeta.ops.verify import VerifyReport
from kmeta.storage.discover import DataDir, Discovery, PartitionDir, discover
from kmeta.storage.progress import QUIET, Progress

OFFSETS_TOPIC = "__consumer_offsets"
REMOTE_TOPIC = "__remote_log_metadata"


def _labels(metas: list[PartitionDir]) -> list[str]:
    """A short name for each metadata replica, by its data dir (see replica_labels)."""
    return replica_labels([p.path.parent for p in metas])


def build_report(paths: Sequence[str | os.PathLike[str]], *, pictures: bool = True,
                 progress: Progress = QUIET) -> Report:
    """Find everything under ``paths`` and run each analysis that applies to it;
    ``pictures``: also gather what only the HTML page's pictures draw (a second, light
    read of the metadata logs' batch headers); ``progress`` hears of the reading (verify's
    pass over everything: the other analyses listen to it or read headers again)."""
    from kmeta.ops.verify import Relist

    try:
        # a data dir's partition dirs listed once, by verify's workers as they check them
        return _build(paths, discover(paths, defer=True, progress=progress), pictures,
                      progress)
    except Relist:  # a partition dir was not what its name said: as discover judges it
        return _build(paths, discover(paths, progress=progress), pictures, progress)


def _build(paths: Sequence[str | os.PathLike[str]], found: Discovery, pictures: bool,
           progress: Progress) -> Report:
    report = Report([str(p) for p in paths])
    report.data_dirs = [d.path for d in found.data_dirs]
    metadata_bytes = 0  # of the metadata logs' segments: what replaying them costs
    for p in found.all_partitions():
        if p.is_metadata:
            metadata_bytes += _segment_bytes(p)
        else:
            report.partitions.setdefault((p.topic, p.partition), []).append(p.path)
    metas = [p for p in found.all_partitions() if p.is_metadata]
    _analyses(report, found, metas, metadata_bytes, progress)
    report.segment_bytes = sum(_segment_bytes(p) for p in found.all_partitions())
    report.findings = collect(report)
    report.areas = judge(report, area_lines(report))
    if pictures:
        from kmeta.ops.report.pictures import add_picture_data

        add_picture_data(report)
    return report


def _segment_bytes(part: PartitionDir) -> int:
    """The bytes of a partition's segments: as verify's worker counted them where it
    listed the dir (a deferred one), else stat'ed here."""
    checked = getattr(part, "checked", None)
    if checked is not None:
        return checked.bytes
    size = 0
    for f in part.segments:
        with contextlib.suppress(OSError):  # verify says so
            size += f.path.stat().st_size
    return size


def _analyses(report: Report, found: Discovery, metas: list[PartitionDir],
              metadata_bytes: int, progress: Progress) -> None:
    """Each analysis that applies, as its command runs it."""
    from kmeta.core.log_tally import LogTally
    from kmeta.ops.brokers import brokers, brokers_heard, lifecycle_watch
    from kmeta.ops.processes import default_jobs
    from kmeta.ops.startup import ahead_afresh
    from kmeta.ops.verify import Beside, Listeners, verify_discovery

    groups = [[str(p.path) for p in g] for g in _replica_groups(found, metas) if len(g) > 1]
    # diff's read of the replicas' batch headers, in a process beside verify's pass and
    # replay (with one job: here, after it)
    side = Beside(diff_groups, (groups,), default_jobs() if groups else 1)
    brokers_dirs = _brokers_dirs(found)
    # startup's recovery of each long metadata log (the byte walk, the same under every
    # Kafka version's rules) beside verify's pass, and its load of each other log where
    # verify's workers check it; the rest of startup, which judges by the image, waits
    # for verify's replay of it
    recover = [d.path for d in found.data_dirs] if metadata_bytes > _RECOVER_BESIDE else []
    starting = Beside(metadata_loads, (recover,), default_jobs()) if recover else None
    ahead_afresh()
    lead_dir = _longest(metas)
    listeners = Listeners(
        # the brokers' lifecycles heard in verify's replay of the longest log: one replay
        watch=lambda part, replay: lifecycle_watch(replay, part) if part is lead_dir else None,
        # and retention's reading of each log's headers, tallied by verify's pass
        tally=lambda part: LogTally(_live_snapshot_ends(part)),
        partition=functools.partial(_ahead_loader(), imaged=frozenset(
            str(d) for dirs in brokers_dirs if _holds_metadata(dirs, found) for d in dirs)))
    try:
        checked = verify_discovery(found, progress, default_jobs(), listeners=listeners)
    except BaseException:  # Relist (the report starts again) or an interrupt
        for beside in (side, starting):
            if beside is not None:
                beside.close()
        raise
    report.verify = checked
    for part, label in zip(metas, _labels(metas), strict=True):
        stats = checked.logs.get(str(part.path))
        report.metadata.append(_replica_view(found, part, stats, label))
    if lead_dir is not None:
        stats = checked.logs.get(str(lead_dir.path))
        heard = None
        if stats is not None and stats.watch is not None:
            heard = brokers_heard(lead_dir, stats.watch, stats.records - stats.watch.controls)
        report.brokers = heard if heard is not None else brokers(str(lead_dir.path))
    report.retention = _retentions(metas, checked)
    diffs = side.result()
    report.diff = max(diffs, key=lambda d: len(d.replicas), default=None)
    holders = _holders(report, OFFSETS_TOPIC)
    if holders:
        from kmeta.ops.consumers import consumers

        # the data dir holding most of the commits (a broker's own replicas are the ones
        # its coordinator wrote to while it led them)
        holders.sort(key=lambda h: -_offsets_bytes(found, h))
        report.consumers_dir = holders[0]
        report.consumers = consumers(str(holders[0]),
                                     against=_replica_dir(report, holders[0]))
    holders = _holders(report, REMOTE_TOPIC)
    if holders:
        from kmeta.ops.tiering import tiering

        report.tiering = tiering(str(holders[0]))
    loaded = {} if starting is None else starting.result()
    ahead = {str(p.path): p.checked.heard for p in found.all_partitions()
             if getattr(p, "checked", None) is not None and p.checked.heard is not None}
    images = {path: stats.image for path, stats in checked.logs.items()}
    for dirs in brokers_dirs:
        report.startup.append(_startup(dirs, found, _image_among(dirs, found, images),
                                       loaded, ahead))


#: The metadata log bytes above which startup's recovery of it runs beside verify's pass
#: (below, the walk costs less than a process's start).
_RECOVER_BESIDE = 64 << 20


def _ahead_loader() -> Any:
    """startup's load of a log, made where verify's worker checks it (see
    :func:`kmeta.ops.startup.manager.load_one_ahead`): a module-level function, which a
    worker started afresh imports."""
    from kmeta.ops.startup import load_one_ahead

    return load_one_ahead


def _holds_metadata(dirs: list[Path], found: Discovery) -> bool:
    """Whether a broker's log dirs hold its metadata log (startup then has an image)."""
    return any(p.is_metadata for d in found.data_dirs if d.path in dirs for p in d.partitions)


def metadata_loads(data_dirs: list[Path]) -> dict[Path, Any]:
    """The metadata log's load (startup's recovery of it) in each data dir holding one
    that no running broker holds (a process beside verify)."""
    from kmeta.errors import KmetaError
    from kmeta.ops.startup import load_metadata_log
    from kmeta.storage.live import live_dirs

    out: dict[Path, Any] = {}
    for d in data_dirs:
        if (d / "__cluster_metadata-0").is_dir() and not live_dirs([d]):
            with contextlib.suppress(OSError, KmetaError):  # startup says so, reading it
                out[d] = load_metadata_log(d)
    return out


def diff_groups(groups: list[list[str]]) -> list[DiffReport]:
    """diff of each cluster's metadata replicas."""
    from kmeta.errors import KmetaError
    from kmeta.ops.diff import diff_replicas

    diffs: list[DiffReport] = []
    for group in groups:
        with contextlib.suppress(KmetaError):  # the same replica given twice, say
            diffs.append(diff_replicas(group))
    return diffs


def _retentions(metas: list[PartitionDir], checked: VerifyReport) -> list[RetentionResult]:
    """Retention of each metadata replica, from what verify's pass tallied of it (read
    anew where verify did not read it)."""
    from kmeta.errors import KmetaError
    from kmeta.ops.retention import retention

    out: list[RetentionResult] = []
    for part in metas:
        stats = checked.logs.get(str(part.path))
        heard = None if stats is None or stats.tally is None else (stats.tally, stats)
        with contextlib.suppress(KmetaError):  # what it cannot judge, verify says
            out.append(retention(str(part.path), heard=heard))
    return out


def _live_snapshot_ends(part: PartitionDir) -> list[int]:
    """The end offsets of a metadata partition's live snapshots (retention's stretches)."""
    return [f.kind.base_offset or 0 for f in part.files
            if f.kind.kind == "kraft-snapshot" and f.kind.suffix is None]


def _replica_groups(found: Discovery, metas: list[PartitionDir]) -> list[list[PartitionDir]]:
    """The metadata replicas of each cluster (by the cluster.id of their data dirs)."""
    groups: dict[str | None, list[PartitionDir]] = {}
    for part in metas:
        cluster, _ = next((_identity(d) for d in found.data_dirs if part in d.partitions),
                          (None, None))
        groups.setdefault(cluster, []).append(part)
    return list(groups.values())


def _longest(metas: list[PartitionDir]) -> PartitionDir | None:
    """The metadata replica whose log reaches furthest, by its files' names and sizes
    (before reading it): the one the brokers' story is told from."""
    def reach(part: PartitionDir) -> tuple[int, int]:
        segs = part.segments
        if not segs:
            return (-1, 0)
        size = 0
        with contextlib.suppress(OSError):
            size = segs[-1].path.stat().st_size
        return (segs[-1].kind.base_offset or 0, size)

    return max(metas, key=reach, default=None)


def _holders(report: Report, topic: str) -> list[Path]:
    """The data dirs holding partitions of ``topic``, in name order."""
    return sorted({d.parent for (t, _), dirs in report.partitions.items() if t == topic
                   for d in dirs})


def _offsets_bytes(found: Discovery, data_dir: Path) -> int:
    """Bytes of __consumer_offsets segments in a data dir."""
    total = 0
    for d in found.data_dirs:
        if d.path == data_dir:
            for p in d.partitions:
                if p.topic == OFFSETS_TOPIC:
                    total += _segment_bytes(p)
    return total


def _replica_dir(report: Report, holder: Path) -> str | None:
    """Another data dir holding replicas of the topics' partitions: the replica the
    consumers' committed positions are checked against (KIP-320), or None."""
    others = sorted({d.parent for (t, _), ds in report.partitions.items()
                     if not t.startswith("__") for d in ds} - {holder})
    return str(others[0]) if others else None


def _identity(d: DataDir) -> tuple[str | None, int | None]:
    """The cluster id and node id a data dir's meta.properties name."""
    from kmeta.storage.files import load_checked

    meta = d.meta_properties
    loaded = None if meta is None else load_checked(meta)[0]
    if loaded is None:
        return None, None
    return loaded.cluster_id, loaded.node_id


def _brokers_dirs(found: Discovery) -> list[list[Path]]:
    """The log dirs of each broker: data dirs grouped by the node.id they carry."""
    groups: dict[object, list[Path]] = {}
    for d in found.data_dirs:
        cluster, node = _identity(d)
        key = (cluster, node) if node is not None else d.path
        groups.setdefault(key, []).append(d.path)
    return list(groups.values())


def _image_among(dirs: list[Path], found: Discovery, images: dict[str, object]) -> object:
    """The image verify replayed from the metadata log among a broker's dirs (None: it
    has none there, or verify replayed none)."""
    for d in found.data_dirs:
        if d.path in dirs:
            for p in d.partitions:
                if p.is_metadata and images.get(str(p.path)) is not None:
                    return images[str(p.path)]
    return None


def _startup(dirs: list[Path], found: Discovery, image: object,  # noqa: ANN202
             metadata_loaded: dict[Path, Any], ahead: dict[str, Any]):
    """startup of one broker's log dirs, judged by verify's image of its metadata log
    (None: startup replays it) and its discovery of the dirs, with what startup did
    before that image was known: the logs loaded where verify's workers checked them
    (``ahead``) and the long metadata logs recovered beside verify's pass
    (``metadata_loaded``)."""
    from kmeta.ops.startup import image_judge, plan_startup, with_broker_findings

    names = [str(d) for d in dirs]
    judge, placed = image_judge(names, image=image,
                                data_dirs=[d for d in found.data_dirs if d.path in dirs])
    plan = plan_startup(names, placement=judge,
                        image=None if placed is None else placed.image,
                        node_id=None if placed is None else placed.node_id,
                        metadata_loaded=metadata_loaded, ahead=ahead)
    plan.placement_objects = with_broker_findings(plan, placed)
    return plan


def _replica_view(found: Discovery, part: PartitionDir, stats: LogStats | None,
                  label: str) -> MetadataReplica:
    """A metadata replica as verify read it: its model (log start and end, epoch cache)
    and the offsets each segment holds."""
    cluster, node = next((_identity(d) for d in found.data_dirs if part in d.partitions),
                         (None, None))
    model = None if stats is None or not part.segments else stats.model
    view = MetadataReplica(label, part.path, node, cluster,
                           None if model is None else model.log_start_offset,
                           None if model is None else model.log_end_offset)
    if not part.segments:
        # no segment left (V020): Kafka makes the log anew, empty, at the latest
        # snapshot's end (KafkaMetadataLog.truncateToLatestSnapshot), as info says
        ends = [f.kind.base_offset or 0 for f in part.snapshots if f.kind.suffix is None]
        if ends:
            view.log_start_offset = view.log_end_offset = max(ends)
    if model is not None:
        view.epochs = [(e.epoch, e.start_offset, None) for e in model.epoch_cache.entries]
    else:  # no log left (V020) to say its bounds: the epoch cache as its file holds it
        from kmeta.ops.replica import small_file

        _, checkpoint, _ = small_file(part, "leader-epoch-checkpoint")
        if checkpoint is not None:
            view.epochs = [(e.epoch, e.start_offset, None) for e in checkpoint.entries]
    ends = {} if stats is None else {base: max((r[1] for r in runs), default=None)
                                     for base, runs in stats.layout}
    for f in part.segments:
        base = f.kind.base_offset or 0
        last = ends.get(base)
        size = 0
        with contextlib.suppress(OSError):
            size = f.path.stat().st_size
        view.segments.append(Segment(f.path, base, None if last is None else last + 1, size))
    for f in part.snapshots:
        size = 0
        with contextlib.suppress(OSError):
            size = f.path.stat().st_size
        view.snapshots.append((f.kind.base_offset or 0, f.path, size, None))
    return view
