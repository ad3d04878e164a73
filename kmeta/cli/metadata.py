"""``kmeta image``, ``history``, ``brokers`` and ``retention``: the cluster metadata log
replayed: its image, the records that touched a topic or broker, the brokers' lives, its
snapshots and retention."""

from __future__ import annotations

from typing import Annotated

import typer

from kmeta.cli.app import (
    IMAGE_ACTIONS,
    JsonOpt,
    PathArg,
    close,
    command,
    complete_actions,
    current_env,
    folded,
    reading_progress,
)
from kmeta.errors import UsageError


@command
def image(
    path: PathArg,
    action: Annotated[str | None, typer.Argument(
        autocompletion=complete_actions,
        help="What to show: 'ls' lists the names under NODE, 'cat' prints NODE; without "
        "it, the whole image.", show_default=False, metavar="ACTION")] = None,
    node: Annotated[str, typer.Argument(
        help="Where in the image: a path of Kafka's metadata shell, e.g. "
        "/image/topics/byName/NAME/0, /image/cluster/brokers/1, /image/configs/TOPIC:NAME "
        "(globs * ? {a,b}); or one of kmeta's older paths, e.g. /topics/NAME/0, /brokers/1, "
        "/configs/TOPIC/NAME.", metavar="NODE")] = "/",
    at: Annotated[int | None, typer.Option(
        "--at", min=0, metavar="OFFSET", help="The state after every record below this "
        "offset (default: the log end).")] = None,
    from_snapshot: Annotated[str | None, typer.Option(
        "--from-snapshot", metavar="FILE", help="Start from this snapshot (.checkpoint) "
        "instead of the latest one at or below the target offset.")] = None,
    digest: Annotated[bool, typer.Option("--digest", help="Print only the image digest "
                                         "(xxh3-128), on one line.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="JSON Lines: the image object "
                                           "(kind, offset, digest, image), then a finding "
                                           "object per finding; with ls, a JSON array of "
                                           "the names (an object path -> names when a glob "
                                           "matched several nodes); with cat, the node's "
                                           "JSON, one line per node.")] = False,
) -> None:
    """The cluster metadata image replayed from the latest snapshot and the log.

    ls and cat walk the node tree of Kafka 4.0's kafka-metadata-shell: / holds image and
    local (kmeta's version); ls prints the names under NODE one a line, sorted as Kafka
    sorts them; cat prints a leaf as Kafka's shell does (BrokerRegistration(...),
    PartitionRegistration(...), Optional[4.0-IV3] ...), except that secrets are [redacted],
    and a directory as JSON. Unlike Kafka 4.0, /image/features/zkMigrationState reads the
    state, finalized_kraft.version is shown, a quota entity's default part is its type
    alone (user, clientId(app)_user), a delegation token is named by its fingerprint and
    /image/provenance gives the log's offset. A glob that matches several nodes prints
    each. The paths kmeta took before (those under /features, /brokers, /topics,
    /configs ... and cat /) still print the image JSON as they did; /configs/BROKER/KEY
    reads the cluster-wide default.

    Exit 1 when records that break the image's rules were met while replaying.
    """
    from pathlib import Path

    from kmeta.ops.replay import build_image, look_up
    from kmeta.render import image as render

    if action is not None and action not in IMAGE_ACTIONS:
        raise UsageError(f"unknown action {action!r}", hint="use ls or cat")
    if digest and action:
        raise UsageError(f"--digest cannot be combined with {action}")
    env = current_env()
    with reading_progress(env, "image") as progress:
        result = build_image(path, at=at,
                             from_snapshot=Path(from_snapshot) if from_snapshot else None,
                             progress=progress)
    data = bool(action) or digest  # what a script reads whole: findings go to stderr
    if action:
        found = look_up(result, path, node, action)
        env.write_lines(render.node_lines(found, action, json_out), json=json_out)
    elif digest:
        env.write_lines([result.image.digest()])
    elif json_out:
        env.write_lines([render.image_json(result)], json=True)
    else:
        from kmeta.render.console import make_console

        render.render_image(result, make_console(env))
    close(env, result.findings, [path], json_out=json_out and not data, beside_data=data)


@command
def history(
    path: PathArg,
    topic: Annotated[str | None, typer.Option("--topic", metavar="NAME", help="Records "
                                              "that touched this topic (by name, then by "
                                              "its topic id).")] = None,
    partition: Annotated[int | None, typer.Option("--partition", min=0, metavar="N",
                                                  help="With --topic: only this "
                                                  "partition's Partition(Change) "
                                                  "records.")] = None,
    broker: Annotated[int | None, typer.Option("--broker", metavar="ID", help="Records that "
                                               "touched this node id: registrations, "
                                               "fencing, leader or replica of a "
                                               "partition.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Every metadata record that touched one topic or one broker, in offset order."""
    from kmeta.ops.replay import history as run_history
    from kmeta.render.image import history_json, history_lines

    env = current_env()
    with reading_progress(env, "history") as progress:
        found = run_history(path, topic=topic, partition=partition, broker=broker,
                            progress=progress)
    env.write_lines(history_json(found.rows) if json_out else history_lines(found.rows),
                    json=json_out)
    if not found.rows:  # a misspelt name must not look like a quiet history
        who = f"broker {broker}" if broker is not None else f"topic {topic!r}" + (
            "" if partition is None else f" partition {partition}")
        print(f"kmeta: no record in {path} touched {who}", file=env.stderr)
    # a damaged log: where the history has holes, and exit 1
    close(env, found.findings, [path], json_out=json_out)


@command
def brokers(
    path: PathArg,
    broker: Annotated[int | None, typer.Option("--broker", metavar="ID", help="Only this "
                                               "node's events (a broker or controller "
                                               "id).")] = None,
    since: Annotated[str | None, typer.Option("--since", metavar="OFFSET|TIME", help="Only "
                                              "events at or after this offset or time "
                                              "(2024-05-01T12:00:00Z; UTC unless it says "
                                              "otherwise).")] = None,
    until: Annotated[str | None, typer.Option("--until", metavar="OFFSET|TIME", help="Only "
                                              "events at or before this offset or "
                                              "time.")] = None,
    from_offset: Annotated[int | None, typer.Option("--from", metavar="OFFSET", help="Start "
                                                    "the replay from the latest snapshot at "
                                                    "or below OFFSET, or from the log start "
                                                    "when none is (default: the whole log "
                                                    "from its start).")] = None,
    fenced_longer_than: Annotated[str, typer.Option(
        "--fenced-longer-than", metavar="DURATION", help="A broker fenced longer than this "
        "is an anomaly (V132): 90s, 5min, 2h.")] = "5min",
    json_out: JsonOpt = False,
) -> None:
    """The life of every broker and controller: registrations, fences, shutdowns, leaders.

    Replays the metadata log and tells, per node, every registration (epoch,
    incarnation, listeners, rack, log dirs) and every state change (fenced, unfenced,
    controlled shutdown, new incarnation, unregistered) with its offset, its batch time,
    how long the node had been in the state before, and the ISRs and leaderships the
    change moved in its batch, and what each fence tells of how the broker stopped; then
    the quorum's leader per epoch, a table per node, and anomalies: crashes (a new
    incarnation after no fence, or after a fence that took leaderships away outside
    controlled shutdown), long fences, fencing storms, amended registrations with a new
    epoch.  A fence of a broker that leads nothing is what a clean shutdown writes too:
    kmeta says it cannot tell.  Heartbeats, and counts the log cannot know (shown as ?),
    are not on disk.
    """
    from kmeta.ops.brokers import brokers as run_brokers
    from kmeta.ops.brokers import parse_bound, parse_duration
    from kmeta.render.brokers import brokers_json, brokers_lines, story_findings
    from kmeta.render.console import clip_width

    env = current_env()
    lo = parse_bound(since, "--since") if since is not None else None
    hi = parse_bound(until, "--until") if until is not None else None
    longer = parse_duration(fenced_longer_than, "--fenced-longer-than")
    with reading_progress(env, "brokers") as progress:
        result = run_brokers(path, broker=broker, since=lo, until=hi, from_offset=from_offset,
                             fenced_longer_than_ms=longer, progress=progress)
    if json_out:
        env.write_lines(brokers_json(result), json=True)
    else:
        lines = brokers_lines(result, env.colour(env.stdout), given=[path])
        env.write_lines(folded(lines, clip_width(env)), json=False)
    if broker is not None and not result.summary and not result.events:
        print(f"kmeta: node {broker} is not in {path}", file=env.stderr)
    _, rest = story_findings(result)  # the report tells the lifecycle anomalies
    close(env, result.findings, [path], json_out=json_out, told=json_out, untold=rest)


@command
def retention(
    path: PathArg,
    retention_bytes: Annotated[str | None, typer.Option(
        "--retention-bytes", metavar="SIZE", help="metadata.max.retention.bytes (default "
        "100MiB; -1 off): 512MiB, 1GiB, 104857600.")] = None,
    retention_ms: Annotated[str | None, typer.Option(
        "--retention-ms", metavar="DURATION", help="metadata.max.retention.ms (default 7d; "
        "-1 off): 36h, 7d, 604800000ms.")] = None,
    bytes_between: Annotated[str | None, typer.Option(
        "--max-bytes-between-snapshots", metavar="SIZE", help="metadata.log.max.record."
        "bytes.between.snapshots (default 20MiB), for the trigger column.")] = None,
    interval: Annotated[str | None, typer.Option(
        "--snapshot-interval", metavar="DURATION", help="metadata.log.max.snapshot."
        "interval.ms (default 1h; 0 off), for the trigger column.")] = None,
    config_file: Annotated[str | None, typer.Option(
        "--config", metavar="FILE", help="Read the four settings from a broker's or "
        "controller's server.properties (the options above win).")] = None,
    now: Annotated[str | None, typer.Option(
        "--now", metavar="TIME", help="Judge ages at this time (2024-05-01T12:00:00Z; "
        "default: the newest batch's time).")] = None,
    replica: Annotated[list[str] | None, typer.Option(
        "--replica", metavar="NODE=END_OFFSET[:EPOCH]|DIR", help="A follower's log end "
        "offset (and last fetched epoch; default this log's epoch there), or its data dir "
        "(of this cluster, not this log's own): what the leader answers its fetch, and "
        "where it truncates. Repeatable.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Snapshots, their cadence, and what Kafka's retention and startup do with them.

    Every snapshot with its size, records, last-contained timestamp and age, and the log
    between it and the one before (bytes, records, time: which trigger wrote it); every
    segment; what Kafka does when it opens the directory (removes .part and .deleted
    files, deletes snapshots below the log start, refuses an inconsistent snapshot
    state, truncates to a snapshot past the log); Kafka's retention replayed
    (KafkaMetadataLog.maybeClean): which snapshots and segments go and where the log
    start moves; and, per --replica, whether a follower fetches on, truncates or is sent
    the snapshot.
    """
    from kmeta.ops.brokers import parse_bound
    from kmeta.ops.retention import parse_replica, settings
    from kmeta.ops.retention import retention as run_retention
    from kmeta.render.console import clip_width
    from kmeta.render.retention import retention_json, retention_lines

    env = current_env()
    config, cadence, held = settings(config_file, retention_bytes=retention_bytes,
                                     retention_ms=retention_ms, bytes_between=bytes_between,
                                     interval=interval)
    if config_file is not None and not held:  # a wrong file must not look like defaults
        print(f"kmeta: {config_file} sets none of metadata.max.retention.bytes, "
              "metadata.max.retention.ms, metadata.log.max.record.bytes.between.snapshots, "
              "metadata.log.max.snapshot.interval.ms: Kafka's defaults are used",
              file=env.stderr)
    at = parse_bound(now, "--now") if now is not None else None
    if at is not None and at.time_ms is None:
        raise UsageError(f"--now {now}: give a time (2024-05-01T12:00:00Z), not an offset")
    followers = [parse_replica(r) for r in replica or ()]
    with reading_progress(env, "retention") as progress:
        result = run_retention(path, config=config, cadence=cadence,
                               now=None if at is None else at.time_ms, replicas=followers,
                               progress=progress)
    if json_out:
        env.write_lines(retention_json(result), json=True)
    else:
        env.write_lines(folded(retention_lines(result), clip_width(env)), json=False)
    close(env, result.findings, [path], json_out=json_out, told=json_out)
