"""``kmeta startup``: what Kafka will do when it opens a broker's log dirs, how long it
will take, and whether it throws data away."""

from __future__ import annotations

from typing import Annotated

import typer

from kmeta.cli.app import AllOpt, JsonOpt, close, command, current_env, folded, reading_progress
from kmeta.core.kafka_releases import KAFKA_VERSIONS, LAST_ZOOKEEPER
from kmeta.errors import UsageError


def _rate(text: str | None) -> float | None:
    """``--recovery-rate``: bytes per second, with an optional k/M/G (powers of 1000) or
    KiB/MiB/GiB suffix and an optional ``/s``."""
    if text is None:
        return None
    raw = text.strip().removesuffix("/s").strip()
    units = {"gib": 1 << 30, "mib": 1 << 20, "kib": 1 << 10, "gb": 10**9, "mb": 10**6,
             "kb": 10**3, "g": 10**9, "m": 10**6, "k": 10**3, "b": 1, "": 1}
    for unit in sorted(units, key=len, reverse=True):
        if raw.lower().endswith(unit):
            number = raw[:len(raw) - len(unit)].strip() if unit else raw
            try:
                value = float(number) * units[unit]
            except ValueError:
                break
            if value > 0:
                return value
            break
    raise UsageError(f"--recovery-rate {text!r}: give bytes per second, such as 200MB or "
                     "1.5GiB (a number above 0)")


def complete_versions(incomplete: str) -> list[str]:
    return [v for v in KAFKA_VERSIONS if v.startswith(incomplete)]


@command
def startup(
    dirs: Annotated[list[str], typer.Argument(
        help="Every log dir of the broker (log.dirs, and metadata.log.dir where it is "
        "separate); the dirs of several brokers are told apart by the node.id and "
        "cluster.id of their meta.properties.", show_default=False, metavar="DATA_DIR...")],
    kafka_version: Annotated[str | None, typer.Option(
        "--kafka-version", metavar="VERSION", autocompletion=complete_versions,
        help=f"Whose rules to apply: one of {', '.join(KAFKA_VERSIONS)} (default: the "
        "broker's own: the release of the metadata.version its metadata log finalized, "
        f"{LAST_ZOOKEEPER} for a ZooKeeper-mode broker, else the newest).",
        show_default=False)] = None,
    config: Annotated[str | None, typer.Option(
        "--config", metavar="FILE", help="The broker's server.properties: "
        "num.recovery.threads.per.data.dir (default: the Kafka version's), log.dirs "
        "and metadata.log.dir (a dir they name that is not given is said), and what "
        "loading depends on: log.index.interval.bytes, log.cleanup.policy, "
        "remote.log.storage.system.enable, inter.broker.protocol.version and "
        "log.message.format.version.")] = None,
    recovery_rate: Annotated[str | None, typer.Option(
        "--recovery-rate", metavar="BYTES/S", help="Bytes per second one recovery thread "
        "re-reads, such as 400MB (default: 125MB, an assumption: see kmeta(1)).")] = None,
    metadata: Annotated[str | None, typer.Option(
        "--metadata", metavar="DIR", help="The broker's metadata log (its metadata.log.dir, "
        "or the __cluster_metadata-0 in it) when it is not among DATA_DIR...: the image "
        "each log is judged against (stray logs, missing replicas).")] = None,
    peer: Annotated[list[str] | None, typer.Option(
        "--peer", metavar="DIR", help="Another broker's data dir, read only to say how many "
        "bytes a replica missing here fetches (repeatable).")] = None,
    partitions: Annotated[bool, typer.Option(
        "--partitions", help="List every partition, with what Kafka does to it.")] = False,
    every: AllOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """What Kafka does when it opens a broker's log dirs, how long it takes, and what it
    throws away.

    Follows LogManager.loadLogs and LogLoader of the Kafka version chosen: the clean
    shutdown marker, the recovery-point and log-start checkpoints, the segments recovered
    after an unclean shutdown (their bytes and batches), where recovery truncates (the
    cut kmeta repair makes), indexes rebuilt, .swap/.cleaned/.deleted files, the producer
    state rebuilt, -delete/-future/-stray dirs, and what stops the broker from starting.
    Inside each recovered segment it follows LogSegment.recover batch by batch: offsets
    going backwards are caught only where an index entry is rebuilt (every
    index.interval.bytes), and then the segment is emptied and the later ones deleted; a
    legacy segment whose offsets overrun base + Int.MaxValue is split (into which
    segments is said) or, where Kafka cannot split it, the broker does not start. The
    log start of a topic with remote storage is the checkpoint's (3.6+; the topic's
    configs come from the metadata image), and the leader-epoch cache is followed
    through loading: epochs of recovered batches added, entries past the log end or
    below the log start removed, or the file deleted for a message format before v2
    (3.5 to 3.9 with inter.broker.protocol.version below 3.0).
    Every exception that escapes LogLoader is a refusal: a zero or garbage batch header
    where Kafka reads batches without recovering them (the producer-state rebuild before
    each segment recovered and at the end, the next offset of the last segment after a
    clean shutdown), a file name without an offset, a .txnindex entry above version 0, a
    leader-epoch-checkpoint entry that is not a number or is negative, an empty
    partition.metadata or a topic id Kafka cannot decode; a malformed
    leader-epoch-checkpoint or partition.metadata takes the log dir offline instead. A
    corrupt producer snapshot is deleted and the log read in its place. A -delete dir is
    not recovered (its log end is 0), but a missing index in it is still rebuilt. Offsets
    a partition's checkpoints name past the log Kafka loads are said: below the high watermark of
    replication-offset-checkpoint they are committed records the broker will not have
    (exit 1); below the recovery point alone, flushed ones Kafka forgets quietly.
    Before any log, the meta.properties of the log dirs as Kafka checks them
    (MetaPropertiesEnsemble.verify, 3.7+; BrokerMetadataCheckpoint before): a cluster.id or
    node.id that differs, a repeated or reserved directory.id, a KRaft dir never
    formatted or a file of the wrong mode refuse, before any log loads (then nothing
    loads, and the costs said are those once the broker starts); an unreadable file takes
    its dir offline. Log dirs of different node ids are different brokers, each started
    on its own (one node id of two clusters each with its own metadata log too);
    --config makes the dirs one broker's. The rules are those of the broker's own Kafka
    release unless --kafka-version is given: the release of the metadata.version its
    metadata log finalized, 3.9 for a ZooKeeper-mode broker (4.x runs KRaft only), else
    the newest kmeta knows; the first line says which and why.
    After a clean shutdown only what Kafka itself reads is read: Kafka does not check the
    contents of offset and time indexes on load (LogSegment.sanityCheck asks only that
    the .index exists), so neither does startup; kmeta verify does. Exit 1 when Kafka
    would refuse to start or lose records.

    The metadata log (__cluster_metadata-0) is not LogManager's: every KRaft node opens it
    first, on every start, with recovery point 0 and as after an unclean shutdown
    (KafkaMetadataLog.apply), so it is re-read whole whatever .kafka_cleanshutdown says,
    on one thread before the data logs. Its cut is repair's; records past it are lost to
    the node unless a newer snapshot holds them (truncateToLatestSnapshot restarts the log
    there); recoverSnapshots deletes .part, .deleted and older snapshots and refuses a log
    that starts above 0 with no snapshot at or past its start; from 3.8 the latest
    snapshot and quorum-state are read at start too, and a damaged one stops the node.

    Not modelled: the node's roles (a controller-only node's log dirs are judged as a
    broker's), checks that need config beyond --config's keys (3.3 to 3.7's quorum-state
    voters, the metadata.log.segment.bytes floor), I/O errors on a readable copy (what
    cannot be read is said offline), what happens after the logs are open (fetching,
    retention), Kafka before 3.5.

    The estimate: the metadata log's bytes on one thread, then per log dir, its logs'
    bytes to re-read shared among num.recovery.threads.per.data.dir threads (largest
    first), each reading at --recovery-rate; the log dirs' pools run at once. Kafka documents no recovery rate.
    The default, 125 MB/s, is the baseline throughput of an AWS EBS gp3 volume (AWS's
    EBS volume types documentation): a sequential read from a common broker disk, the
    pace recovery keeps since CRC-32C runs at GB/s on one core. It is an assumption:
    measure the broker's disk (dd, fio) and pass --recovery-rate. The thread count's
    default is the Kafka version's: 1 up to 3.9, 2 from 4.0 (KIP-1030); Kafka takes any
    count from 1 to 2147483647 (an int) and refuses the config outside it, as kmeta does
    (exit 2).
    """
    from kmeta.ops.startup import group_brokers, image_judge, plan_startup, with_broker_findings
    from kmeta.render.console import clip_width
    from kmeta.render.jsonl import dumps
    from kmeta.render.startup import brokers_lines, brokers_object, startup_json, startup_lines

    if kafka_version is not None and kafka_version not in KAFKA_VERSIONS:
        raise UsageError(f"--kafka-version {kafka_version}: kmeta knows the rules of "
                         f"{', '.join(KAFKA_VERSIONS)}")
    rate = _rate(recovery_rate)
    env = current_env()
    # log dirs of different node ids are different brokers; --config names one broker's
    brokers = group_brokers(dirs, one_broker=config is not None)
    reports = []
    with reading_progress(env, "startup") as progress:
        for b in brokers:
            # the image against the disk: stray logs, missing replicas (kmeta.ops.placement);
            # the other brokers given are peers a missing replica is fetched from
            others = [p for o in brokers if o is not b for p in o.paths]
            judge, placed = image_judge(b.paths, metadata=metadata,
                                        peers=[*(peer or ()), *others], progress=progress)
            report = plan_startup(b.paths, kafka_version=kafka_version, config=config,
                                  recovery_rate=rate, placement=judge,
                                  image=None if placed is None else placed.image,
                                  node_id=None if placed is None else placed.node_id,
                                  progress=progress)
            report.placement_objects = with_broker_findings(report, placed)
            reports.append(report)
    findings = [f for r in reports for f in r.findings]
    if json_out:
        for r in reports:
            env.write_lines(startup_json(r), json=True)
        if len(reports) > 1:
            env.write_lines([dumps(brokers_object(reports))], json=True)
    elif len(reports) > 1:
        env.write_lines(folded(brokers_lines(reports, dirs, partitions=partitions,
                                             every=every), clip_width(env)))
    else:
        env.write_lines(folded(startup_lines(reports[0], dirs, partitions=partitions,
                                             every=every), clip_width(env)))
    close(env, findings, dirs, json_out=json_out, told=json_out, every=every)
