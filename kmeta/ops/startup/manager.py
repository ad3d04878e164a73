"""The log dirs of one broker as Kafka's ``LogManager`` opens them (``LogManager``
constructor and ``loadLogs``/``loadLog``, 3.5 to 3.9 and trunk 2024-10):

* each log dir: ``.kafka_cleanshutdown`` present means a clean shutdown (its content, the
  broker epoch since 3.7, ``CleanShutdownFileHandler``, does not change that); the file
  is deleted before any log loads;
* ``recovery-point-offset-checkpoint`` and ``log-start-offset-checkpoint``: a missing one
  was created empty by the constructor (``CheckpointFile``), so every partition reads 0;
  one Kafka cannot parse is reset to 0 too, and its dir is queued offline
  (``CheckpointFileWithFailureHandler.read``);
* every directory in a log dir is a log, except ``remote-log-index-cache`` and
  ``__cluster_metadata-*`` (the raft layer's); a name ``parseTopicPartitionName``
  refuses escapes ``loadLogs`` and the broker does not start;
* ``loadLog``: a ``-delete`` log is queued for deletion (``file.delete.delay.ms``), a
  ``-stray`` one kept aside (3.6.1+), a ``-future`` one is a move between dirs; two
  current logs of one partition, or two future ones, stop the start
  (``IllegalStateException``, "Duplicate log directories ...").

The image's judgement of each current log (stray or not) is not made here: it comes in
through ``placement`` (:data:`kmeta.ops.startup.model.PlacementJudge`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from kmeta.core import meta_ensemble as E
from kmeta.core.kafka_releases import LAST_ZOOKEEPER, NEWEST
from kmeta.errors import KmetaError, UnreadableInput, UsageError
from kmeta.findings import Finding
from kmeta.formats.filenames import PartitionDirName, classify, parse_partition_dir_name
from kmeta.formats.primitives import INT32_MAX
from kmeta.formats.textfiles import (
    parse_clean_shutdown,
    parse_offset_checkpoint,
    parse_properties,
)
from kmeta.ops.startup.brokers import BrokerDirs, default_version, read_meta
from kmeta.ops.startup.configs import LogConfigs, TopicLoadConfig, log_configs
from kmeta.ops.startup.loader import load_partition
from kmeta.ops.startup.metadata_log import METADATA_DIR, open_metadata_log
from kmeta.ops.startup.model import (
    DEFAULT_RECOVERY_RATE,
    CheckpointUse,
    LoadedAhead,
    LogDirStartup,
    LogView,
    PartitionStartup,
    PlacementJudge,
    StartupReport,
    default_recovery_threads,
    knows_stray_dirs,
    version_key,
)
from kmeta.ops.startup.offsets import judge_offsets
from kmeta.storage.ends import newest_segment_now
from kmeta.storage.live import again_while_live, gone, live_dirs
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.regular import read_regular

_CHECKPOINT_CAP = 256 << 20
_SKIPPED = "remote-log-index-cache"
METADATA_TOPIC = "__cluster_metadata"
THREADS_KEY = "num.recovery.threads.per.data.dir"
#: Files only a log dir holds at its top.
_LOG_DIR_FILES = frozenset({"meta.properties", ".kafka_cleanshutdown", ".lock",
                            "recovery-point-offset-checkpoint", "log-start-offset-checkpoint",
                            "replication-offset-checkpoint", "cleaner-offset-checkpoint"})


def _checkpoint(log_dir: Path, name: str) -> tuple[CheckpointUse, dict[tuple[str, int], int]]:
    path = log_dir / name
    if not path.exists():
        return CheckpointUse(name, "missing"), {}
    try:
        value = parse_offset_checkpoint(read_regular(path, _CHECKPOINT_CAP, name))
    except KmetaError as e:
        return CheckpointUse(name, "corrupt", problem=e.message), {}
    entries = {(e.topic, e.partition): e.offset for e in value.entries}
    return CheckpointUse(name, "read", len(entries)), entries


def _marker(log_dir: Path) -> tuple[bool, int | None]:
    path = log_dir / ".kafka_cleanshutdown"
    if not path.exists():
        return False, None
    try:
        return True, parse_clean_shutdown(read_regular(path, 1 << 16, path.name)).broker_epoch
    except KmetaError:
        return True, None  # the file's presence is the verdict; its epoch unread


def _server_properties(config: str) -> dict[str, str]:
    path = Path(config)
    if not path.is_file():
        raise UnreadableInput("no such file", context=config)
    return parse_properties(read_regular(path, 16 << 20, "server.properties"),
                            "server.properties")


def server_threads(config: str | None, version: str) -> tuple[int, str]:
    """``num.recovery.threads.per.data.dir`` from ``config`` (a server.properties), else
    the version's default, and where it came from."""
    raw = None if config is None else _server_properties(config).get(THREADS_KEY)
    if raw is not None:
        # Kafka's definition (LogConfig's SERVER_CONFIG_DEF): an INT, atLeast(1); ConfigDef
        # parses an INT with Integer.parseInt, so a value past 2^31 - 1 is refused too.
        text = raw.strip()
        if not re.fullmatch(r"[+-]?[0-9]+", text):
            raise UsageError(f"{THREADS_KEY}={raw!r} is not a number", context=config)
        # (a number of more digits than an int has is not read: Python limits them)
        n = int(text) if len(text.lstrip("+-0")) <= 10 else \
            -1 if text.startswith("-") else INT32_MAX + 1
        if n < 1:
            raise UsageError(f"{THREADS_KEY}={text}: Kafka requires at least 1",
                             context=config)
        if n > INT32_MAX:
            raise UsageError(f"{THREADS_KEY}={text}: Kafka reads it as a 32-bit int (at "
                             f"most {INT32_MAX}) and refuses the config", context=config)
        return n, f"{THREADS_KEY}={n} in {config}"
    n = default_recovery_threads(version)
    return n, f"{THREADS_KEY}, Kafka {version}'s default"


def configured_dirs(config: str) -> list[str]:
    """The log dirs a server.properties names: ``log.dirs`` (else ``log.dir``), then
    ``metadata.log.dir`` (KafkaConfig)."""
    props = _server_properties(config)
    listed = props.get("log.dirs") or props.get("log.dir") or ""
    out = [d.strip() for d in listed.split(",") if d.strip()]
    meta = props.get("metadata.log.dir", "").strip()
    return out + ([meta] if meta and meta not in out else [])


def _check_log_dir(raw: str) -> Path:
    path = Path(raw)
    if not path.exists():
        raise UnreadableInput("no such file or directory", context=raw)
    if not path.is_dir():
        # no log dir to read here (a wrong level would name it: 2): exit 3
        raise UnreadableInput("not a directory: startup reads a broker's log dirs",
                              context=raw)
    if not os.access(path, os.R_OK | os.X_OK):
        raise UnreadableInput("directory cannot be read", context=raw)
    names = os.listdir(path)
    parsed = parse_partition_dir_name(path.name)
    if parsed is not None and any(n.endswith(".log") for n in names):
        raise UsageError("this is a partition dir", context=raw,
                         hint=f"give its log dir: kmeta startup {path.parent}")
    if not any(n in _LOG_DIR_FILES or parse_partition_dir_name(n) for n in names):
        below = _log_dirs_below(path)
        if below:
            raise UsageError("not a log dir: it holds no partition dir, meta.properties "
                             "or checkpoint", context=raw,
                             hint="the log dirs below it: " + " ".join(map(str, below)))
    return path


def _log_dirs_below(path: Path, depth: int = 3) -> list[Path]:
    """Directories under ``path`` (``depth`` levels at most) holding a log dir's files."""
    found: list[Path] = []
    level = [path]
    for _ in range(depth):
        nxt = []
        for d in level:
            try:
                children = sorted(e.path for e in os.scandir(d) if e.is_dir())
            except OSError:
                continue
            for c in map(Path, children):
                if any((c / f).is_file() for f in _LOG_DIR_FILES):
                    found.append(c)
                else:
                    nxt.append(c)
        level = nxt[:1000]
    return found[:20]


def _logs(path: Path) -> list[tuple[os.DirEntry[str], PartitionDirName | None]]:
    """The directories of a log dir LogManager takes for logs, by name, each with its name
    parsed (None: one Kafka refuses)."""
    with os.scandir(path) as it:
        entries = sorted((e for e in it if e.is_dir()), key=lambda e: e.name)
    return [(e, parse_partition_dir_name(e.name)) for e in entries if e.name != _SKIPPED]


def load_one_ahead(part_dir: str, seen: Any = None, imaged: Collection[str] = ()
                   ) -> LoadedAhead | None:
    """The log ``part_dir`` (a partition dir in a log dir) loaded as :func:`plan_startup`
    loads it, before the broker's image is known (``kmeta report``: where verify's
    workers check the partition, while verify replays that image): with the load config
    of a topic that sets none of its own, as nearly every topic is, in the image of a
    broker whose log dirs ``imaged`` name (else without an image); ``seen``: what
    verify's check read of the dir just now (see
    :func:`~kmeta.ops.startup.loader.load_partition`), or None.  plan_startup takes
    it only where the image's config of its topic and the log dir's checkpoints are those
    it was made with (its ``ahead``), and loads the log again otherwise.  None for a
    running broker's dir, a dir no log, and a log that cannot be read: plan_startup says
    what it meets there."""
    log_dir, name = os.path.split(part_dir)
    log_dir = log_dir or os.curdir  # a partition dir of the current dir, as given
    parsed = parse_partition_dir_name(name)
    if parsed is None or parsed.topic == METADATA_TOPIC or name == _SKIPPED:
        return None
    context = _AHEAD.get(log_dir)
    if context is None:
        context = _AHEAD[log_dir] = _ahead_context(Path(log_dir), log_dir in imaged)
    if context is False:
        return None
    clean, rps, lss, configs = context
    tp = (parsed.topic, parsed.partition)
    rp, ls = rps.get(tp, 0), lss.get(tp, 0)
    config = configs.for_topic(parsed.topic)
    try:
        part = load_partition(Path(log_dir), Path(part_dir), parsed, clean, rp, ls,
                              topic_id=True, config=config, seen=seen)
    except (OSError, KmetaError):
        return None
    return LoadedAhead(clean, rp, ls, config, part)


#: log dir -> what its logs are loaded ahead with (False: none are): per process, from
#: the last :func:`ahead_afresh` on
_AHEAD: dict[str, tuple[bool, dict, dict, LogConfigs] | bool] = {}


def ahead_afresh() -> None:
    """Forget the log dirs read for earlier loads ahead: a run's loads read them anew."""
    _AHEAD.clear()


def _ahead_context(log_dir: Path, imaged: bool) -> tuple[bool, dict, dict, LogConfigs] | bool:
    """What loading ahead takes from a log dir: its clean-shutdown marker, its recovery
    point and log start checkpoints, and the configs plan_startup gives a topic without
    settings of its own (a ZooKeeper-mode broker has no image; a KRaft node has one where
    ``imaged``); False for a running broker's dir."""
    if live_dirs([log_dir]):
        return False
    meta = read_meta(log_dir)
    broker = BrokerDirs([str(log_dir)], [meta])
    configs = LogConfigs(LAST_ZOOKEEPER, topics=None) \
        if broker.zookeeper or E.migrating(broker.metas) \
        else LogConfigs(NEWEST, topics={} if imaged else None)
    clean, _ = _marker(log_dir)
    _, rps = _checkpoint(log_dir, "recovery-point-offset-checkpoint")
    _, lss = _checkpoint(log_dir, "log-start-offset-checkpoint")
    return clean, rps, lss, configs


def _load_dir(path: Path, version: str, threads: int, report: StartupReport,
              placement: PlacementJudge | None, configs: LogConfigs,
              progress: Progress, ahead: Mapping[str, LoadedAhead]) -> LogDirStartup:
    clean, epoch = _marker(path)
    rp_use, rps = _checkpoint(path, "recovery-point-offset-checkpoint")
    ls_use, lss = _checkpoint(path, "log-start-offset-checkpoint")
    # not LogManager's: the ReplicaManager reads it once the broker runs (.offsets)
    _, hws = _checkpoint(path, "replication-offset-checkpoint")
    d = LogDirStartup(path, clean, epoch, rp_use, ls_use, threads)
    live = live_dirs([path])
    if live:
        # A running broker's own dir (S012, as every command says it): the question is
        # what it does if it stops now (as after a crash: LogManager deletes
        # .kafka_cleanshutdown once it has loaded), not that a second broker would fail
        # LogManager.lockLogDirs beside it.
        d.live = True
        told = live[0].finding()
        progress.notice(told)
        report.findings.append(told)
    for use in (rp_use, ls_use):
        if use.state == "corrupt":
            d.offline = True
            report.findings.append(Finding(
                "V176", f"{use.name} cannot be read ({use.problem}): Kafka warns, uses 0 "
                "for every partition, and queues the log dir offline", str(path / use.name)))
    partitions = []
    for e, parsed in _logs(path):
        if parsed is not None and parsed.state == "stray" and not knows_stray_dirs(version):
            parsed = None
        if parsed is None:
            # 2.8+: parsed in the filter loadLogs lists the dir's logs with, before it
            # loads any (4.1 LogManager.loadLogs)
            report.refuses_before_loading = True
            d.refused.append(e.name)
            report.refusals.append(
                f"{path / e.name}: KafkaException \"Found directory {path / e.name}, "
                f"'{e.name}' is not in the form of topic-partition or topic-partition."
                "uniqueId-delete (if marked for deletion).\"")
            report.findings.append(Finding(
                "V174", f"'{e.name}' is not in the form topic-partition (or "
                f"topic-partition.uniqueId-delete): Kafka {version} refuses to start "
                "(LocalLog.parseTopicPartitionName)", str(path / e.name)))
            continue
        if parsed.topic == METADATA_TOPIC:
            d.metadata_log = True
            continue
        partitions.append((e.path, parsed))
    if partitions and not clean and rp_use.state == "missing":
        report.findings.append(Finding(
            "V203", f"{rp_use.name} is missing: Kafka creates it empty, so after this "
            "unclean shutdown it recovers every segment of every log", str(path / rp_use.name)))
    topic_configs: dict[str, TopicLoadConfig] = {}
    for where, parsed in partitions:
        ppath = Path(where)
        tp = (parsed.topic, parsed.partition)
        rp, ls = rps.get(tp, 0), lss.get(tp, 0)
        config = topic_configs.get(parsed.topic)
        if config is None:
            config = topic_configs[parsed.topic] = configs.for_topic(parsed.topic)
        made = None if d.live else ahead.get(str(ppath))
        if made is not None and made[:4] == (clean, rp, ls, config):
            part = made.part  # loaded ahead from what this load is made from
            if placement is None:
                part.topic_id = None
        else:
            try:
                part = again_while_live(lambda ppath=ppath, parsed=parsed, rp=rp, ls=ls,
                                        config=config: load_partition(
                    path, ppath, parsed, clean, rp, ls, topic_id=placement is not None,
                    config=config, progress=progress), ppath)
            except (OSError, KmetaError) as e:
                problem = e.strerror if isinstance(e, OSError) else e.message
                if d.live and gone(e):
                    report.findings.append(Finding(
                        "S013", f"gone while kmeta read the dir ({problem}): the running "
                        "broker removed it (a deleted topic, a replica moved away)",
                        str(ppath)))
                    continue
                # LogManager.loadLogs: an IOException while loading a log takes its dir
                # offline
                d.offline = True
                report.findings.append(Finding(
                    "S008", f"cannot be read ({problem}): an I/O error while Kafka loads "
                    "it takes the whole log dir offline", str(ppath)))
                continue
        if part.load_failure is not None:
            report.refusals.append(f"{ppath}: {part.load_failure}")
        if part.offline is not None:
            d.offline = True
        _classify(part, version, placement)
        judge_offsets(part, hws.get(tp), d.live)
        d.partitions.append(part)
    n = sum(1 for p in d.partitions if p.recover and p.state != "delete")  # no recoverLog
    if d.live:
        # A running broker has no marker (LogManager deletes it once loaded): no V177.
        for p in d.partitions:
            p.findings[:] = [f for f in p.findings if not _in_flight(f)]
    elif not clean and n:
        report.findings.append(Finding(
            "V177", f"no .kafka_cleanshutdown: Kafka recovers {n} of {len(d.partitions)} "
            f"logs from their recovery points ({d.cost_bytes:,} bytes to re-read)", str(path),
            details={"logs": len(d.partitions), "recovered_logs": n}))
    return d


def _classify(part: PartitionStartup, version: str, placement: PlacementJudge | None) -> None:
    """LogManager.loadLog's verdict on a loaded log, by its name, then by the image."""
    where = str(part.path)
    if part.state == "delete":
        part.fate = "deleted after file.delete.delay.ms (60 s by default)"
        part.findings.append(Finding("V185", "marked for deletion: Kafka skips its "
                                     "recovery (its log end is 0), rebuilds only a missing "
                                     "index, and deletes it after file.delete.delay.ms",
                                     where))
        return
    if part.state == "stray":
        part.fate = "loaded aside as stray; never deleted by Kafka"
        part.findings.append(Finding("V184", f"a stray log (Kafka {version} loads it "
                                     "aside, WARN \"Loaded stray log\", and never deletes "
                                     "it): delete it once no replica needs it", where))
        return
    if part.state == "future":
        part.fate = "future log: the move to this log dir resumes"
        part.findings.append(Finding("V187", f"a replica move to this log dir in progress "
                                     f"({part.topic}-{part.partition}): Kafka loads it as a "
                                     "future log and the move resumes", where))
    if placement is None:
        return
    verdict = placement(LogView(part.log_dir, part.path, part.topic, part.partition,
                                part.topic_id, part.state, version))
    if verdict is None:
        return
    part.placement = verdict
    part.findings.extend(verdict.findings)
    if verdict.stray:
        part.fate = verdict.kafka_does


def _duplicates(report: StartupReport) -> None:
    """LogManager.loadLog throws on a partition's second current (or future) log after
    it loaded it (4.1: UnifiedLog.create, then the check): a refusal while loading, the
    logs loaded by then recovered on disk, unlike a refusal before loading."""
    seen: dict[tuple[str, int, bool], PartitionStartup] = {}
    for p in report.partitions:
        if p.state not in (None, "future"):
            continue
        key = (p.topic, p.partition, p.state == "future")
        other = seen.get(key)
        if other is None:
            seen[key] = p
            continue
        what = "future logs" if p.state == "future" else "logs"
        line = (f"{p.topic}-{p.partition}: {what} in both {other.log_dir} and {p.log_dir}")
        report.refusals.append(line)
        report.findings.append(Finding(
            "V197", f"duplicate {what} of {p.topic}-{p.partition} in {other.path} and "
            f"{p.path}: Kafka refuses to start (IllegalStateException \"Duplicate log "
            "directories\"); keep one of them", str(p.path)))


def _broker_epoch(dirs: list[LogDirStartup]) -> int | None:
    """readBrokerEpochFromCleanShutdownFiles (3.7+, KIP-966): the epoch every dir's marker
    holds, or None when one lacks it or two differ."""
    epochs = {d.broker_epoch for d in dirs}
    return epochs.pop() if len(epochs) == 1 and dirs else None


def plan_startup(paths: list[str], *, kafka_version: str | None = None,
                 version_from: str = "--kafka-version", config: str | None = None,
                 recovery_rate: float | None = None,
                 placement: PlacementJudge | None = None,
                 image: object | None = None, node_id: int | None = None,
                 metadata_loaded: dict[Path, PartitionStartup] | None = None,
                 ahead: Mapping[str, LoadedAhead] | None = None,
                 progress: Progress = QUIET) -> StartupReport:
    """What Kafka ``kafka_version`` does when it opens the log dirs ``paths`` of one broker.

    ``kafka_version``: whose rules (``version_from`` says why, in words); None: the
    broker's own (:func:`kmeta.ops.startup.brokers.default_version`: the release of its
    image's metadata.version, 3.9 for a ZooKeeper-mode broker); ``config``: a
    server.properties for ``num.recovery.threads.per.data.dir``, ``node.id`` and the log
    configs loading depends on; ``recovery_rate``: bytes/s one recovery thread re-reads
    (default :data:`~kmeta.ops.startup.model.DEFAULT_RECOVERY_RATE`); ``placement``:
    judges each current log against the metadata image (None: stray logs are not
    judged); ``image``: that MetadataImage (node ``node_id``'s), for the topics' configs
    (remote storage, index interval; :mod:`kmeta.ops.startup.configs`) and the default
    version; ``metadata_loaded``: the metadata log's load by a log dir
    (:func:`~kmeta.ops.startup.metadata_log.load_metadata_log`), where the caller made it
    already; ``ahead``: the logs' loads made before the image was known
    (:func:`load_one_ahead`), each taken where it was made from what this load is;
    ``progress`` hears of the segments recovered.
    """
    dirs = [_check_log_dir(p) for p in paths]
    seen: dict[Path, str] = {}
    for raw, d in zip(paths, dirs, strict=True):
        real = d.resolve()
        if real in seen:
            raise UsageError(f"the same log dir twice ({seen[real]})", context=raw,
                             hint="Kafka refuses duplicate log.dirs entries")
        seen[real] = raw
    broker = BrokerDirs(list(paths), [read_meta(d) for d in dirs])
    if kafka_version is None:
        # (an image without the attribute, a test's stand-in, tells no version)
        kafka_version, version_from = default_version(
            broker, getattr(image, "metadata_version", None),
            hasattr(image, "metadata_version"))
    threads, threads_from = server_threads(config, kafka_version)
    if recovery_rate is None:
        rate, rate_from = float(DEFAULT_RECOVERY_RATE), "assumed (an EBS gp3 disk; --recovery-rate)"
    else:
        rate, rate_from = recovery_rate, "--recovery-rate"
    report = StartupReport(kafka_version, threads, threads_from, rate, rate_from, [],
                           placement_judged=placement is not None,
                           kafka_version_from=version_from, node_id=broker.node_id)
    server = None if config is None else _server_properties(config)
    offline = _meta_faults(report, broker, kafka_version, _configured_node(server, broker))
    configs = log_configs(kafka_version, image=image, node_id=node_id, server=server)
    for d in dirs:
        loaded = _load_dir(d, kafka_version, threads, report, placement, configs, progress,
                           ahead or {})
        loaded.offline = loaded.offline or str(d) in offline
        report.dirs.append(loaded)
    _duplicates(report)
    _metadata_log(report, config, server, kafka_version, progress, broker.zookeeper,
                  metadata_loaded or {})
    for p in report.partitions:
        report.findings.extend(p.findings)
    if all(d.clean_shutdown for d in report.dirs) and version_key(kafka_version) >= (3, 7):
        report.broker_epoch = _broker_epoch(report.dirs)
    if config is not None:
        given = {d.resolve() for d in dirs}
        missing = [c for c in configured_dirs(config) if Path(c).resolve() not in given]
        if missing:
            report.notes.append(f"{config} names log dirs not given, whose logs are not in "
                                f"this report: {', '.join(missing)}")
    if placement is None:
        report.notes.append("stray logs not judged: no metadata image was given")
    if image is None and version_key(kafka_version) >= (3, 6) and report.partitions:
        report.notes.append("remote storage not judged (no metadata image, so no topic "
                            "configs): each log start is taken as max(checkpoint, first "
                            "segment base), as for a topic without remote storage")
    if broker.zookeeper:
        report.notes.append(
            "a ZooKeeper-mode broker (meta.properties version 0): there is no metadata log "
            "to judge stray logs by (the controller's first full LeaderAndIsr does, after "
            "the load)")
    elif not E.kraft_mode(broker.metas) and not any(m.state == E.READ
                                                    for m in broker.metas):
        report.notes.append(
            "no meta.properties tells this broker's mode: a KRaft node refuses to start on "
            "a log dir without one (\"No meta.properties found ... have you run "
            "kafka-storage.sh\"), a ZooKeeper-mode broker writes one")
    return report


def _metadata_dir(server: dict[str, str] | None) -> Path | None:
    """KafkaConfig.metadataLogDir: metadata.log.dir, else the first of log.dirs."""
    if server is None:
        return None
    named = server.get("metadata.log.dir", "").strip()
    if not named:
        listed = server.get("log.dirs") or server.get("log.dir") or ""
        named = next((d.strip() for d in listed.split(",") if d.strip()), "")
    return Path(named).resolve() if named else None


def _metadata_log(report: StartupReport, config: str | None,
                  server: dict[str, str] | None, version: str, progress: Progress,
                  zookeeper: bool, loaded: dict[Path, PartitionStartup]) -> None:
    """The node's __cluster_metadata-0 (kmeta.ops.startup.metadata_log), and the refusal
    of one found elsewhere than metadata.log.dir (KafkaRaftServer.initializeLogDirs,
    "Found unexpected metadata location in data directory", 3.3 to 4.1).  Both come
    before LogManager loads a data log: a refusal here is one before loading."""
    if zookeeper:
        return
    holders = [d for d in report.dirs if d.metadata_log]
    if not holders:
        if report.dirs:
            report.notes.append(
                "no log dir given holds __cluster_metadata-0: what the node does to its "
                "metadata log (opened first, re-read whole on every start) is not in this "
                "report; give its metadata.log.dir too")
        return
    expected = _metadata_dir(server)
    if expected is None:
        chosen = holders[0]
        others = holders[1:]
        why = "only one log dir of a node, its metadata.log.dir, may hold it"
    else:
        chosen = next((d for d in holders if d.path.resolve() == expected), None)
        others = [d for d in holders if d is not chosen]
        why = f"{config} makes {expected} the metadata log dir"
    for d in others:
        where = d.path / METADATA_DIR
        report.refusals.append(f"{where}: a metadata log outside metadata.log.dir")
        report.refuses_before_loading = True
        report.findings.append(Finding(
            "V236", f"the node does not start: {why} (KafkaException \"Found unexpected "
            "metadata location in data directory\", KafkaRaftServer.initializeLogDirs)",
            str(where)))
    if chosen is None:
        return
    live = bool(live_dirs([chosen.path]))
    try:
        # a running broker's log is read as it is now, never as it was loaded beside
        m = again_while_live(lambda: open_metadata_log(
            chosen.path, version, progress=progress,
            loaded=None if live else _loaded_for(loaded, chosen.path)),
            chosen.path / METADATA_DIR)
    except (OSError, KmetaError) as e:
        # LogLoader's "Could not read file" IOException: no offline dir for the metadata
        # log (its failure channel is its own), the node stops
        problem = e.strerror if isinstance(e, OSError) else e.message
        where = chosen.path / METADATA_DIR
        report.refusals.append(f"{where}: cannot be read ({problem})")
        report.refuses_before_loading = True
        report.findings.append(Finding(
            "S008", f"cannot be read ({problem}): an IOException while the node opens its "
            "metadata log stops it", str(where)))
        return
    report.metadata_log = m
    if m.refusal is not None:
        report.refusals.append(f"{m.path}: {m.refusal}")
        report.refuses_before_loading = True
    report.findings.extend(f for f in m.findings if not (live and _in_flight(f)))


def _loaded_for(loaded: dict[Path, PartitionStartup], log_dir: Path) -> PartitionStartup | None:
    """The metadata log's load made beside for ``log_dir`` (the same dir by another name
    too), or None."""
    real = log_dir.resolve()
    return next((part for d, part in loaded.items() if Path(d).resolve() == real), None)


def _in_flight(f: Finding) -> bool:
    """A finding of a running broker's dir that only says what its files show at any
    moment, which a start on them does as a matter of course: files awaiting deletion
    (file.delete.delay.ms) or a cleaner's swap (V179), the indexes of the segment just
    rolled, not made yet (V178 on the newest segment).  What the start does with them is
    in the model; none is an anomaly."""
    if f.code == "V179":
        return True
    if f.code != "V178" or f.file is None:
        return False
    seg = Path(f.file)
    base = classify(seg.name).base_offset
    newest = newest_segment_now(seg.parent)
    return base is not None and (newest is None or base >= newest)


def _configured_node(server: dict[str, str] | None, broker: BrokerDirs) -> int | None:
    """The node id a server.properties configures (``node.id``, else ``broker.id`` in
    ZooKeeper mode, where -1 means none), None when it sets none or not as an int."""
    if server is None:
        return None
    keys = ("broker.id", "node.id") if broker.zookeeper else ("node.id", "broker.id")
    raw = next((server[k].strip() for k in keys if k in server), None)
    if raw is None or not re.fullmatch(r"-?[0-9]{1,10}", raw):
        return None
    n = int(raw)
    return n if 0 <= n <= INT32_MAX else None


def _meta_faults(report: StartupReport, broker: BrokerDirs, version: str,
                 expected: int | None) -> set[str]:
    """What Kafka says of the broker's meta.properties before it loads a log (kmeta.core.
    meta_ensemble): refusals and findings; the log dirs it starts without."""
    offline: set[str] = set()
    for f in E.verify(broker.metas, version, expected_node=expected):
        said = f"{f.exception} \"{f.message.splitlines()[0]}\"" if f.exception else ""
        if f.effect == E.REFUSES:
            report.refuses_before_loading = True
            report.refusals.append(f"{f.path}: {said or f.text}")
        else:
            offline.add(str(Path(f.path)))
        report.findings.append(Finding(f.code, f.text + (f" ({f.exception})" if said else ""),
                                       f.path, details={**f.details,
                                                        "exception": f.exception or None,
                                                        "message": f.message or None}))
    return offline
