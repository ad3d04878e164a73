"""The ``kmeta`` command line: parse options, call one op, render, finish.

Imports of ops and renderers happen inside the commands so that ``kmeta --help`` stays
fast and never touches pyspark.  Every run writes through its
:class:`~kmeta.environment.Environment` (streams, COLUMNS, NO_COLOR, ``--traceback``),
which :func:`main` makes or a caller (a test) hands in.  All errors pass through
:func:`main`, which prints one line on stderr and exits with the documented code;
``--traceback`` re-raises instead.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import click
import typer

from kmeta import __version__
from kmeta.environment import Environment
from kmeta.errors import ExitCode, KmetaError, OutputError, UsageError, Verdict
from kmeta.findings import GROUP_OVER
from kmeta.formats.decoders import DECODERS, TOPIC_DECODERS

if TYPE_CHECKING:
    from kmeta.findings import Finding

#: The app's settings: also those of the one-command app :func:`_click_app` builds.
_APP = dict(
    name="kmeta",
    help="Inspect, verify and repair Apache Kafka KRaft metadata logs on disk.\n\n"
         "Exit codes: 0 clean, 1 findings of severity error, 2 usage error, "
         "3 input unreadable.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app = typer.Typer(**_APP)  # type: ignore[arg-type]


#: ``--decoder``'s choices: the names of kmeta's payload decoders, in their table's order.
Decoder = StrEnum("Decoder", {name: name for name in DECODERS})  # type: ignore[misc]


def _env() -> Environment:
    """The environment of this run: the one :func:`main` made, or the process's own when
    the app is called directly (click's test runner, the docs' sample runs)."""
    return click.get_current_context().ensure_object(Environment)


def _version(value: bool) -> None:
    if value:
        from kmeta.formats.compiled import IMPLEMENTATION

        # Which scan core runs: the compiled one, or its pure-Python reference.
        print(f"kmeta {__version__} (scan core: {IMPLEMENTATION})", file=_env().stdout)
        raise typer.Exit()


@app.callback()
def _root(
    traceback: Annotated[bool, typer.Option("--traceback", help="Show Python tracebacks "
                                            "instead of one-line errors.")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version, and which scan core runs (compiled or pure Python), and exit.")] = False,
) -> None:
    # Declared for --help and kmeta(1): main() takes --traceback out of the arguments
    # before click sees them (it may also follow the command's name).
    del traceback, version


def command(fn: Callable[..., None]) -> Callable[..., None]:
    """``@app.command()``, where a reader that went away (``| head``) ends the command
    quietly with status 0 (click would exit 1)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except BrokenPipeError:
            _env().quiet_stdout()
            raise typer.Exit(int(ExitCode.OK)) from None

    return app.command()(run)


def finish(env: Environment, verdict: Verdict | None = None, *, failed: bool | None = None,
           summary: bool = True) -> NoReturn:
    """End a command: the summary of its findings on stderr (``summary``: unless its
    report says it already), then the exit code the policy beside ExitCode picks
    (:meth:`kmeta.errors.Verdict.exit_code`; ``failed``: the command's own answer)."""
    verdict = verdict if verdict is not None else Verdict()
    if summary and verdict.total:
        from kmeta.render.text import summary_line

        print(summary_line(verdict), file=env.stderr)
    raise typer.Exit(int(verdict.exit_code(failed)))


#: Where the commands that list findings on stderr send a reader for all of them.
VERIFY_ALL = "run kmeta verify for all of them"


def _list_findings(env: Environment, findings: list[Finding], given: list[str],
                   more: str) -> None:
    """Findings on stderr (stdout is the data): a code met many times as one line, paths
    relative to ``given``, coloured on a terminal, at most FINDINGS_SHOWN of them."""
    from kmeta.render.text import Paths, listed_findings

    for line in listed_findings(findings, Paths(given), env.colour(env.stderr), more):
        print(line, file=env.stderr)


def _folded(lines: Iterable[str], width: int | None) -> Iterator[str]:
    """A report's prose lines folded at the terminal's ``width``, as verify, info and
    image fold theirs; whole through a pipe (None)."""
    from kmeta.render.console import fold

    return (fold(line, width) for line in lines)


def _complete_types(incomplete: str) -> list[str]:
    from kmeta.ops.dump import type_names

    return [n for n in type_names() if n.startswith(incomplete.upper())]


def _complete_actions(incomplete: str) -> list[str]:
    return [a for a in IMAGE_ACTIONS if a.startswith(incomplete)]


IMAGE_ACTIONS = ("ls", "cat")


# Plain strings: kmeta itself reports unreadable paths (exit 3), not the option parser.
PathsArg = Annotated[list[str], typer.Argument(
    help="Data directories, partition directories or files.", show_default=False,
    metavar="PATH")]
JsonOpt = Annotated[bool, typer.Option("--json", help="JSON Lines on stdout, one object per "
                                       "line (schema in kmeta(1)).")]
AllOpt = Annotated[bool, typer.Option("--all", help="List every finding on its own line "
                                      f"(by default a code met more than {GROUP_OVER} times "
                                      "is one line: how many, the first and the last).")]
JsonObjOpt = Annotated[bool, typer.Option("--json", help="One JSON object on stdout "
                                          "(schema in kmeta(1)).")]


@command
def dump(
    paths: PathsArg,
    records: Annotated[bool, typer.Option("--records", "-r", "--print-data-log",
                                          help="Text: also print a line per record with "
                                          "its decoded payload.")] = False,
    json_out: JsonOpt = False,
    decoder: Annotated[Decoder | None, typer.Option(
        "--decoder", help="Payload decoder; default: metadata for __cluster_metadata and "
        "snapshots, " + ", ".join(f"{d} for {t}" for t, d in TOPIC_DECODERS.items())
        + ", raw (base64) otherwise.  With -r, raw, utf8 and hex print each record's "
        "key, header keys and value as kafka-dump-log.sh --print-data-log does.")] = None,
    from_offset: Annotated[int | None, typer.Option("--from-offset", help="Skip records "
                                                   "before this offset.")] = None,
    to_offset: Annotated[int | None, typer.Option("--to-offset", help="Skip records after "
                                                 "this offset.")] = None,
    types: Annotated[list[str] | None, typer.Option(
        "--type", "-t", autocompletion=_complete_types,
        help="Only records of this type, e.g. PARTITION_RECORD or LEADER_CHANGE "
        "(repeatable); small files are left out and --json writes record and finding "
        "objects only. An unknown name is a usage error.")] = None,
    batches_only: Annotated[bool, typer.Option("--batches-only", help="Batch headers only; "
                                               "do not decode records.")] = False,
    skip_control: Annotated[bool, typer.Option("--skip-control", help="Leave out control "
                                               "batches.")] = False,
    max_bytes: Annotated[int | None, typer.Option("--max-bytes", min=1, help="Read at most "
                                                  "this many bytes of each file.")] = None,
    show_hex: Annotated[bool, typer.Option("--hex", help="Also show the raw bytes of each "
                                           "batch and record.")] = False,
    show_secrets: Annotated[bool, typer.Option("--show-secrets", help="Print SCRAM "
                                               "credentials, token ids and sensitive config "
                                               "values instead of [redacted].")] = False,
) -> None:
    """Decode every batch and record of Kafka log segments, snapshots and small files."""
    from kmeta.ops.dump import DumpOptions, dump, parse_types

    if types and batches_only:  # the type of a record is only known once it is decoded
        raise UsageError("--type needs the records decoded: it cannot go with --batches-only")
    if from_offset is not None and to_offset is not None and from_offset > to_offset:
        raise UsageError(f"--from-offset {from_offset} is after --to-offset {to_offset}")
    env = _env()
    verdict = Verdict()
    opts = DumpOptions(
        decoder=decoder.value if decoder else None, from_offset=from_offset,
        to_offset=to_offset, types=parse_types(types or []),
        batches_only=batches_only, skip_control=skip_control, max_bytes=max_bytes,
        show_hex=show_hex, show_secrets=show_secrets, on_finding=verdict.count, runs=True)
    with _reading(env, "dump", streams_stdout=True):
        events = dump(paths, opts)
        # A dump allocates millions of short-lived tuples and no reference cycles: the
        # cyclic collector would only spend time (a few percent) finding nothing.
        gc.disable()
        if json_out:
            from kmeta.render.jsonl import render as render_json

            lines = render_json(events, show_hex, records_only=bool(opts.types))
        else:
            from kmeta.render.text import render as render_text

            lines = render_text(events, records=records, show_hex=show_hex,
                                only_matches=bool(opts.types), colour=env.colour(env.stdout))
        env.write_lines(lines, json=json_out)
    if opts.types and not opts.matched:
        print(f"kmeta: no record of type {', '.join(sorted(opts.types))} in "
              f"{', '.join(paths)}", file=env.stderr)
    finish(env, verdict)


@command
def info(paths: PathsArg, json_out: JsonOpt = False, show_all: AllOpt = False) -> None:
    """One screen about a data dir: cluster, partitions, metadata log, snapshots, findings."""
    from kmeta.ops.info import info as run_info

    env = _env()
    with _reading(env, "info"):
        report = run_info(paths)
    if json_out:
        from kmeta.render.jsonl import dumps

        env.write_lines([dumps(report.to_json())], json=True)
    else:
        from kmeta.render.console import make_console
        from kmeta.render.info import render_info

        render_info(report, make_console(env), given=paths, expand=show_all)
    finish(env, Verdict(report.findings))


@command
def verify(paths: PathsArg, json_out: JsonOpt = False, show_all: AllOpt = False) -> None:
    """Check a metadata log, its snapshots, epochs, indexes and small files; replay the image.

    Exit 0 when nothing of severity error was found, 1 otherwise.
    """
    from kmeta.ops.verify import verify as run_verify

    env = _env()
    gc.disable()  # as for dump: millions of short-lived objects, no reference cycles
    with _reading(env, "verify"):
        report = run_verify(paths)
    if json_out:
        from kmeta.render.verify import render_json

        env.write_lines(render_json(report), json=True)
    else:
        from kmeta.render.verify import render_text

        render_text(report, env, given=paths, expand=show_all)
    finish(env, Verdict(report.findings), summary=False)  # its last line says it


PathArg = Annotated[str, typer.Argument(
    help="A data directory, its __cluster_metadata-0 directory, or one .checkpoint file.",
    show_default=False, metavar="PATH")]


@command
def image(
    path: PathArg,
    action: Annotated[str | None, typer.Argument(
        autocompletion=_complete_actions,
        help="What to show: 'ls' lists the names under NODE, 'cat' prints NODE as JSON; "
        "without it, the whole image.", show_default=False, metavar="ACTION")] = None,
    node: Annotated[str, typer.Argument(
        help="Where in the image, e.g. /topics, /topics/NAME/0, /brokers/1, "
        "/configs/TOPIC/NAME.", metavar="NODE")] = "/",
    at: Annotated[int | None, typer.Option(
        "--at", min=0, metavar="OFFSET", help="The state after every record below this "
        "offset (default: the log end).")] = None,
    from_snapshot: Annotated[str | None, typer.Option(
        "--from-snapshot", metavar="FILE", help="Start from this snapshot (.checkpoint) "
        "instead of the latest one at or below the target offset.")] = None,
    digest: Annotated[bool, typer.Option("--digest", help="Print only the image digest "
                                         "(xxh3-128), on one line.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object: kind, offset, "
                                           "digest, image (ls: a JSON array).")] = False,
) -> None:
    """The cluster metadata image replayed from the latest snapshot and the log.

    Exit 1 when records that break the image's rules were met while replaying.
    """
    from pathlib import Path

    from kmeta.ops.image import browse, build_image, public_json
    from kmeta.render import image as render

    if action is not None and action not in IMAGE_ACTIONS:
        raise UsageError(f"unknown action {action!r}", hint="use ls or cat")
    if digest and action:
        raise UsageError(f"--digest cannot be combined with {action}")
    env = _env()
    with _reading(env, "image"):
        result = build_image(path, at=at,
                             from_snapshot=Path(from_snapshot) if from_snapshot else None)
    if action:
        found = browse(public_json(result.image), node)
        if action == "ls":
            names = render.ls_lines(found)
            env.write_lines([render.dumps(names)] if json_out else names, json=json_out)
        else:
            env.write_lines([render.dumps(found) if json_out else render.cat_text(found)],
                            json=json_out)
    elif digest:
        env.write_lines([result.image.digest()])
    elif json_out:
        env.write_lines([render.image_json(result)], json=True)
    else:
        from kmeta.render.console import make_console

        render.render_image(result, make_console(env))
        env.stdout.flush()  # before the findings on stderr
    _list_findings(env, result.findings, [path], VERIFY_ALL)
    finish(env, Verdict(result.findings))


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
    from kmeta.ops.image import history as run_history
    from kmeta.render.image import history_json, history_lines

    env = _env()
    with _reading(env, "history"):
        found = run_history(path, topic=topic, partition=partition, broker=broker)
    env.write_lines(history_json(found.rows) if json_out else history_lines(found.rows),
                    json=json_out)
    if not found.rows:  # a misspelt name must not look like a quiet history
        who = f"broker {broker}" if broker is not None else f"topic {topic!r}" + (
            "" if partition is None else f" partition {partition}")
        print(f"kmeta: no record in {path} touched {who}", file=env.stderr)
    # a damaged log: where the history has holes, and exit 1
    _list_findings(env, found.findings, [path], VERIFY_ALL)
    finish(env, Verdict(found.findings))


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
                                                    "or below OFFSET (default: the whole "
                                                    "log from its start).")] = None,
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
    change moved in its batch; then the quorum's leader per epoch, a table per node, and
    anomalies: crashes (a new incarnation without a controlled shutdown), long fences,
    fencing storms, amended registrations with a new epoch.  Heartbeats and the cause of
    a fence are not on disk.
    """
    from kmeta.ops.brokers import brokers as run_brokers
    from kmeta.ops.brokers import parse_bound, parse_duration
    from kmeta.render.brokers import brokers_json, brokers_lines, story_findings
    from kmeta.render.console import clip_width

    env = _env()
    lo = parse_bound(since, "--since") if since is not None else None
    hi = parse_bound(until, "--until") if until is not None else None
    longer = parse_duration(fenced_longer_than, "--fenced-longer-than")
    with _reading(env, "brokers"):
        result = run_brokers(path, broker=broker, since=lo, until=hi, from_offset=from_offset,
                             fenced_longer_than_ms=longer)
    if json_out:
        env.write_lines(brokers_json(result), json=True)
    else:
        lines = brokers_lines(result, env.colour(env.stdout))
        env.write_lines(_folded(lines, clip_width(env)), json=False)
    env.stdout.flush()  # before the findings on stderr
    if broker is not None and not result.summary and not result.events:
        print(f"kmeta: node {broker} is not in {path}", file=env.stderr)
    _, rest = story_findings(result)
    _list_findings(env, rest, [path], VERIFY_ALL)
    finish(env, Verdict(result.findings))


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
        "offset (and last fetched epoch; default this log's epoch there), or its data dir: "
        "what the leader answers its fetch. Repeatable.")] = None,
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

    env = _env()
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
    with _reading(env, "retention"):
        result = run_retention(path, config=config, cadence=cadence,
                               now=None if at is None else at.time_ms, replicas=followers)
    if json_out:
        env.write_lines(retention_json(result), json=True)
    else:
        env.write_lines(_folded(retention_lines(result), clip_width(env)), json=False)
    env.stdout.flush()  # before the findings on stderr
    _list_findings(env, result.findings, [path], VERIFY_ALL)
    finish(env, Verdict(result.findings), failed=result.refusal is not None or None)


@command
def consumers(
    path: Annotated[str | None, typer.Argument(
        help="A broker's data dir, or __consumer_offsets-N dirs' parent: where the groups' "
        "commits are (not needed with --position).", show_default=False,
        metavar="PATH")] = None,
    group: Annotated[str | None, typer.Option("--group", metavar="GROUP", help="Only this "
                                              "group's offsets.")] = None,
    against: Annotated[str | None, typer.Option(
        "--against", metavar="REPLICA_DIR", help="A replica's data dir or partition dir: "
        "what each consumer would meet on its next fetch if that replica led (KIP-320).")
    ] = None,
    position: Annotated[str | None, typer.Option(
        "--position", metavar="OFFSET:EPOCH", help="Check this consumer position instead of "
        "the committed ones (needs --against naming one partition dir).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Consumer groups' committed offsets, and whether a replica would truncate them.

    Replays __consumer_offsets as the group coordinator loads it (the last record of a
    key wins, tombstones delete, transactional commits wait for their COMMIT marker)
    and lists every group's committed offset and leader epoch per partition.  With
    --against, validates each against the replica's leader-epoch cache and log as a
    KIP-320 consumer does on a new leader: fine, truncated (the offset it would be reset
    to), epoch unknown or out of range (it resets by auto.offset.reset); offsets without
    an epoch cannot be checked and are counted.  Exit 1 when a consumer would move.
    """
    from kmeta.ops.consumers import consumers as run_consumers
    from kmeta.ops.consumers import parse_position
    from kmeta.render.console import clip_width
    from kmeta.render.consumers import consumers_json, consumers_lines

    env = _env()
    at = parse_position(position) if position is not None else None
    if at is not None and against is None:
        raise UsageError("--position needs --against: the replica partition to check it on")
    if at is None and path is None:
        raise UsageError("give PATH (a data dir with __consumer_offsets), or --position with "
                         "--against")
    with _reading(env, "consumers"):
        result = run_consumers(path, group=group, against=against, position=at)
    if json_out:
        env.write_lines(consumers_json(result), json=True)
    else:
        env.write_lines(_folded(consumers_lines(result), clip_width(env)), json=False)
    env.stdout.flush()  # before the findings on stderr
    if group is not None and not result.rows:
        print(f"kmeta: group {group} has no committed offset in {path}", file=env.stderr)
    _list_findings(env, result.findings, [p for p in (path, against) if p], VERIFY_ALL)
    finish(env, Verdict(result.findings), failed=result.failed or None)


@command
def tiering(
    path: Annotated[str, typer.Argument(
        help="A partition dir of a tiered topic (orders-0), or the data dir holding such "
        "partitions.", show_default=False, metavar="PATH")],
    metadata_dir: Annotated[str | None, typer.Option(
        "--metadata-dir", metavar="DIR", help="The data dir with the __remote_log_metadata-N "
        "partitions (default: PATH's data dir).")] = None,
    metadata_partitions: Annotated[int, typer.Option(
        "--metadata-partitions", metavar="N", min=1, help="remote.log.metadata.topic.num."
        "partitions, for Kafka's partitioner.")] = 50,
    local_retention: Annotated[str, typer.Option(
        "--local-retention", metavar="DURATION", help="The topic's local.retention.ms (its "
        "retention.ms when -2): tiered segments older than this should be gone from disk; "
        "-1: never.")] = "7d",
    now: Annotated[str | None, typer.Option(
        "--now", metavar="TIME", help="Judge ages at this time (default: the newest local "
        "batch's time).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Tiered storage: remote segments, the last tiered offset, and a new follower's start.

    Replays __remote_log_metadata as the remote log metadata manager's cache does (only
    segments whose copy finished count; invalid state transitions are dropped and
    reported) for each partition found, and computes its last tiered offset as
    RemoteLogManager.findHighestRemoteOffset does with the partition's own epoch cache;
    then an empty follower's bootstrap two ways: classic (from the local log start) and
    KIP-1023 (from the earliest pending upload offset), with the records and bytes each
    replicates.  Findings: tiered segments still on disk past local retention, gaps and
    overlaps between remote segments, epochs the local cache does not have.
    """
    from kmeta.ops.brokers import parse_bound, parse_duration
    from kmeta.ops.tiering import tiering as run_tiering
    from kmeta.render.console import clip_width
    from kmeta.render.tiering import tiering_json, tiering_lines

    env = _env()
    keep = -1 if local_retention.strip() == "-1" else \
        parse_duration(local_retention, "--local-retention")
    at = parse_bound(now, "--now") if now is not None else None
    if at is not None and at.time_ms is None:
        raise UsageError(f"--now {now}: give a time (2024-05-01T12:00:00Z), not an offset")
    with _reading(env, "tiering"):
        result = run_tiering(path, metadata_dir=metadata_dir,
                             metadata_partitions=metadata_partitions, local_retention_ms=keep,
                             now=None if at is None else at.time_ms)
    if json_out:
        env.write_lines(tiering_json(result), json=True)
    else:
        env.write_lines(_folded(tiering_lines(result), clip_width(env)), json=False)
    env.stdout.flush()  # before the findings on stderr
    _list_findings(env, result.findings, [path], VERIFY_ALL)
    finish(env, Verdict(result.findings))


@command
def compact(
    path: Annotated[str, typer.Argument(
        help="A partition dir of a compacted topic (orders-0).", show_default=False,
        metavar="PARTITION_DIR")],
    strategy: Annotated[list[str] | None, typer.Option(
        "--strategy", metavar="offset|timestamp|header:NAME", help="Kafka's cleaner "
        "(offset) or a KIP-280 strategy; repeatable (default: the topic's "
        "compaction.strategy, else offset).")] = None,
    compare: Annotated[bool, typer.Option(
        "--compare", help="The strategies side by side: offset, timestamp, and header:NAME "
        "with --header.")] = False,
    header: Annotated[str | None, typer.Option(
        "--header", metavar="NAME", help="The header --compare's header strategy reads "
        "(with --compare only; one strategy: --strategy header:NAME).")
    ] = None,
    now: Annotated[str | None, typer.Option(
        "--now", metavar="TIME", help="The cleaner's clock: epoch milliseconds or an ISO 8601 "
        "time (default: the newest record's timestamp).")] = None,
    from_offset: Annotated[int | None, typer.Option(
        "--from", metavar="OFFSET", help="The first dirty offset (default: "
        "cleaner-offset-checkpoint).")] = None,
    delete_retention: Annotated[str | None, typer.Option(
        "--delete-retention", metavar="DURATION", help="delete.retention.ms (default: the "
        "topic's, else 1d).")] = None,
    min_lag: Annotated[str | None, typer.Option(
        "--min-compaction-lag", metavar="DURATION", help="min.compaction.lag.ms (default: the "
        "topic's, else 0).")] = None,
    key: Annotated[str | None, typer.Option(
        "--key", metavar="KEY", help="Show this key's records (UTF-8, or 0x-prefixed hex) and "
        "which each strategy keeps.")] = None,
    roll: Annotated[bool, typer.Option(
        "--roll", help="As if the active segment had rolled (Kafka never cleans it).")
    ] = False,
    batches: Annotated[bool, typer.Option(
        "--batches", help="Also every batch's fate: kept, rewritten (and which records "
        "stay), emptied or deleted, and why.")] = False,
    write: Annotated[str | None, typer.Option(
        "--write", metavar="NEWDIR", help="Write the compacted partition under NEWDIR (new "
        "indexes; the input is never touched).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """What Kafka's log cleaner, or a KIP-280 strategy, would do to a partition.

    Simulates one cleaning round on the disk's data without touching it: the dirty range
    (cleaner-offset-checkpoint) and its cleanable end (last stable offset, the active
    segment, min.compaction.lag.ms), the key map, aborted transactions dropped by the
    .txnindex, markers and tombstones kept until their delete horizon, empty batches
    kept for producers; then the records and bytes each strategy keeps, tombstones,
    keys where the strategies disagree and out-of-order writes.  Topic configs come
    from the metadata log beside the partition, when there is one (__consumer_offsets
    and __transaction_state are compacted whatever it says).  A batch kmeta cannot trust
    (a bad CRC, offsets outside its segment) is a finding: Kafka's cleaner stops its
    round where it cannot read one and marks the partition uncleanable, and --write
    then writes nothing, nor when a file it would copy (partition.metadata,
    leader-epoch-checkpoint, a producer snapshot) is broken.
    """
    from pathlib import Path

    from kmeta.core.cleaner import Strategy
    from kmeta.ops.brokers import parse_bound, parse_duration
    from kmeta.ops.compact import CompactOptions
    from kmeta.ops.compact import compact as run_compact
    from kmeta.render.compact import compact_json, compact_lines
    from kmeta.render.console import clip_width

    env = _env()
    names = list(strategy or ())
    if header is not None and not compare:
        raise UsageError("--header names the header strategy of --compare; for one strategy "
                         f"give --strategy header:{header}")
    if compare:
        names = ["offset", "timestamp"] + ([f"header:{header}"] if header else [])
    try:
        chosen = [Strategy.parse(n) for n in names]  # none: the topic's, else offset
    except ValueError as e:
        raise UsageError(f"--strategy {e}") from None
    at = None
    if now is not None:
        if now.strip().lstrip("-").isdigit():
            at = int(now)
        else:
            bound = parse_bound(now, "--now")
            if bound.time_ms is None:
                raise UsageError(f"--now {now}: give a time (2024-05-01T12:00:00Z) or epoch "
                                 "milliseconds")
            at = bound.time_ms
    wanted = None
    if key is not None:
        try:
            wanted = bytes.fromhex(key[2:]) if key.startswith("0x") else key.encode()
        except ValueError:
            raise UsageError(f"--key {key}: not hex after 0x") from None
    options = CompactOptions(
        chosen, at, from_offset,
        None if delete_retention is None else parse_duration(delete_retention,
                                                             "--delete-retention"),
        None if min_lag is None else parse_duration(min_lag, "--min-compaction-lag"), wanted,
        roll, batches, None if write is None else Path(write))
    with _reading(env, "compact"):
        result = run_compact(path, options)
    if json_out:
        env.write_lines(compact_json(result), json=True)
    else:
        env.write_lines(_folded(compact_lines(result), clip_width(env)), json=False)
    env.stdout.flush()  # before the findings on stderr
    if result.written is not None:
        print(f"kmeta: wrote {result.written} (check it: kmeta verify {result.written})",
              file=env.stderr)
    if result.refused is not None:
        print(f"kmeta: --write: nothing written: {result.refused}", file=env.stderr)
    _list_findings(env, result.findings, [path], VERIFY_ALL)
    finish(env, Verdict(result.findings))


@command
def diff(
    replicas: Annotated[list[str], typer.Argument(
        help="LOCAL PEER [MORE...]: data dirs or __cluster_metadata-0 directories of "
        "replicas of one cluster.", show_default=False, metavar="LOCAL PEER [MORE...]")],
    no_images: Annotated[bool, typer.Option(
        "--no-images", help="Skip the cluster-image comparison (faster on long logs).")
    ] = False,
    json_out: JsonObjOpt = False,
) -> None:
    """Find where replicas of the metadata log diverged, and what Kafka would do.

    Divergence is found twice: by leader epochs, as a follower's fetch would (KIP-595),
    and by the bytes of the batches both replicas hold. Exit 0 when the replicas are
    identical or only lag, 1 when any diverged, 3 when a replica's segment could not be
    read whole (the verdict would be about part of it).
    """
    from kmeta.ops.diff import diff_replicas
    from kmeta.render.console import clip_width
    from kmeta.render.diff import diff_json, diff_lines

    env = _env()
    with _reading(env, "diff"):
        report = diff_replicas(replicas, images=not no_images)
    width = clip_width(env)
    env.write_lines(diff_json(report) if json_out else _folded(diff_lines(
        report, colour=env.colour(env.stdout), width=width), width), json=json_out)
    # What reading met (bad CRCs, torn tails …) goes to stderr; the exit code says only
    # whether the replicas diverged (kmeta verify judges each replica).
    _list_findings(env, report.findings, replicas, "run kmeta verify on each replica")
    finish(env, Verdict(report.findings), failed=report.diverged, summary=False)


@command
def snapshot(
    path: Annotated[str, typer.Argument(
        help="A data directory or its __cluster_metadata-0 directory.",
        show_default=False, metavar="PARTITION_DIR")],
    out: Annotated[str, typer.Option(
        "--out", metavar="FILE|DIR", show_default=False,
        help="Where to write: a directory (the file gets Kafka's name "
             "<offset>-<epoch>.checkpoint) or a new file. An existing file is never "
             "overwritten.")],
    at: Annotated[int | None, typer.Option(
        "--at", min=0, metavar="OFFSET", help="The snapshot's end offset: the state after "
        "every record below it (default: the log end).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Write a KRaft snapshot (.checkpoint) of the cluster image at an offset.

    The image is replayed from the latest snapshot at or below OFFSET and the log; the
    file is read back and checked before kmeta reports success. Refused (exit 2) when
    OFFSET is not above the log start or past the log end, falls inside a metadata
    transaction, or the replay met findings of severity error.
    """
    from kmeta.ops.snapshot import write_snapshot_at
    from kmeta.render.console import clip_width
    from kmeta.render.snapshot import snapshot_json, snapshot_lines

    env = _env()
    with _reading(env, "snapshot"):
        result = write_snapshot_at(path, out, at=at)
    env.write_lines([snapshot_json(result)] if json_out else _folded(
        snapshot_lines(result), clip_width(env)), json=json_out)
    _list_findings(env, result.findings, [path], VERIFY_ALL)
    finish(env, Verdict(result.findings))


@command
def truncate(
    path: Annotated[str, typer.Argument(
        help="A data dir or __cluster_metadata-0 directory; only read unless --apply.",
        show_default=False, metavar="PATH")],
    to: Annotated[int | None, typer.Option(
        "--to", min=0, metavar="OFFSET", help="End the log before this offset (a target "
        "inside a batch cuts at the batch's start, as Kafka does).")] = None,
    peer: Annotated[str | None, typer.Option(
        "--to-divergence-with", metavar="PEER", help="Truncate to where PATH diverged "
        "from this replica (see kmeta diff).")] = None,
    apply: Annotated[bool, typer.Option(
        "--apply", help="Write the truncated copy (needs --out).")] = False,
    out: Annotated[str | None, typer.Option(
        "--out", metavar="NEWDIR", help="With --apply: a new or empty directory outside "
        "the input for the truncated copy.")] = None,
    no_images: Annotated[bool, typer.Option(
        "--no-images", help="Skip the image before/after (faster on long logs).")] = False,
    json_out: JsonObjOpt = False,
) -> None:
    """Show what truncating the metadata log would remove and change; write nothing
    unless --apply --out NEWDIR is given.

    The simulation lists the batches and records removed (by type), the new log end
    offset and epoch cache, the snapshots made invalid and the image before and after.
    """
    from kmeta.ops.truncate import simulate_truncate, write_truncated
    from kmeta.render.console import clip_width
    from kmeta.render.repair import repair_json, repair_lines
    from kmeta.render.truncate import truncate_json, truncate_lines

    if apply != (out is not None):
        raise UsageError("--apply and --out go together", hint="without them, nothing "
                         "is written: the command only simulates")
    env = _env()
    width = clip_width(env)
    if out is not None:
        with _reading(env, "truncate"):
            result = write_truncated(path, out, to, peer=peer)
        env.write_lines([repair_json(result)] if json_out else _folded(
            repair_lines(result), width), json=json_out)
        finish(env, failed=bool(result.remaining_errors))
    with _reading(env, "truncate"):
        plan = simulate_truncate(path, to, peer=peer, images=not no_images)
    env.write_lines(truncate_json(plan) if json_out else _folded(
        truncate_lines(plan, width), width), json=json_out)
    finish(env)


@command
def repair(
    path: Annotated[str, typer.Argument(
        help="The __cluster_metadata-0 directory to repair; only read, unless --in-place.",
        show_default=False, metavar="PARTITION_DIR")],
    out: Annotated[str | None, typer.Option(
        "--out", metavar="DIR", help="Write the repaired copy here: a new or empty "
        "directory outside the input (name it like the input to use it).")] = None,
    truncate_to: Annotated[int | None, typer.Option(
        "--truncate-to", min=0, metavar="OFFSET", help="Also end the log before this "
        "offset (a batch boundary); snapshots past it are quarantined.")] = None,
    in_place: Annotated[bool, typer.Option(
        "--in-place", help="Replace PARTITION_DIR with its repaired copy; needs --backup, "
        "refused while a broker holds the data dir's .lock.")] = False,
    backup: Annotated[str | None, typer.Option(
        "--backup", metavar="DIR", help="With --in-place: where the original goes first "
        "(new or empty, outside the data dir).")] = None,
    follow_snapshot: Annotated[bool, typer.Option(
        "--follow-snapshot", help="When the latest intact snapshot is ahead of the "
        "repaired log, do what Kafka does on start: drop the log and start at the "
        "snapshot (default: quarantine the snapshot, keep the log).")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Show what would change; write nothing.")] = False,
    json_out: JsonObjOpt = False,
) -> None:
    """Write a repaired copy of a metadata partition: the log cut at its first damage as
    Kafka's recovery cuts it, leader-epoch-checkpoint rebuilt, snapshots and leftovers
    that no longer fit moved to quarantine/, stale indexes left out.

    Exit 0 when the output verifies without errors, 1 when some remain (they are shown).
    """
    from kmeta.ops.repair import (
        RepairPlan,
        RepairResult,
        apply_repair,
        apply_repair_in_place,
        plan_repair,
    )
    from kmeta.render.console import clip_width
    from kmeta.render.repair import repair_json, repair_lines

    if not dry_run and in_place == (out is not None):
        raise UsageError("give exactly one of --out DIR and --in-place")
    if backup is not None and not in_place:
        raise UsageError("--backup goes with --in-place")
    env = _env()
    result: RepairPlan | RepairResult
    with _reading(env, "repair"):
        result = plan_repair(path, truncate_to=truncate_to, follow_snapshot=follow_snapshot)
        if dry_run:
            pass
        elif in_place:
            result = apply_repair_in_place(result, backup)
        else:
            result = apply_repair(result, out)
    env.write_lines([repair_json(result)] if json_out else _folded(
        repair_lines(result), clip_width(env)), json=json_out)
    finish(env, failed=isinstance(result, RepairResult) and bool(result.remaining_errors))


@command
def export(
    paths: Annotated[list[str], typer.Argument(
        help="Data dirs, partition dirs, files or globs (quote them), from any number of "
        "brokers.", show_default=False, metavar="PATHS...")],
    to: Annotated[str, typer.Option(
        "--to", metavar="OUTDIR", show_default=False,
        help="A new directory: OUTDIR/<table>/cluster_id=ID/node_id=N/part-*.")],
    fmt: Annotated[str, typer.Option(
        "--format", metavar="parquet|json", help="Output format.")] = "parquet",
    master: Annotated[str | None, typer.Option(
        "--master", metavar="URL", help="Spark master (default: the spark-submit session, "
        "else embedded local[*]).")] = None,
    table: Annotated[list[str] | None, typer.Option(
        "--table", metavar="NAME", help="Only this table (repeatable): batches, records, "
        "findings, epochs, timeline, snapshots, image.")] = None,
    data_topics: Annotated[bool, typer.Option(
        "--data-topics", help="The records table also holds the records of the other topics "
        "(data and internal topics such as __consumer_offsets), without their keys and "
        "values.")] = False,
    payloads: Annotated[bool, typer.Option(
        "--payloads", help="With --data-topics: keep those records' keys and values "
        "(customer data) in the data column.")] = False,
    json_out: JsonObjOpt = False,
) -> None:
    """Write kmeta's tables of many data dirs as Parquet (or JSON) with a Spark job.

    Needs the spark extra: pip install 'kmeta[spark]'. The files are shared out over
    Spark tasks; the output is partitioned by cluster id and node id. The records table
    holds the metadata log's records only (__cluster_metadata, KRaft snapshots,
    bootstrap.checkpoint) unless --data-topics is given; the batches table holds the batch
    headers of every topic (no record bytes).
    """
    from kmeta.ops.rows import TABLES, Scope

    scope = Scope(data_topics=data_topics, payloads=payloads)
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise UsageError("kmeta export runs on Spark, which is not installed",
                         hint="pip install 'kmeta[spark]' (pyspark and pyarrow; Java 17+)"
                         ) from None
    from kmeta.render.export import export_json, export_lines, table_line
    from kmeta.spark.export import run_export

    env = _env()

    def done(name: str, rows: int) -> None:
        print(table_line(name, rows), file=env.stderr)

    result = run_export(paths, to, fmt=fmt, master=master,
                        tables=table or tuple(TABLES), progress=env.stderr.isatty(),
                        on_table=done, scope=scope)
    env.write_lines([export_json(result)] if json_out else export_lines(result),
                    json=json_out)
    finish(env)


#: Commands that read only the metadata log and snapshots of what they are given.
_METADATA_ONLY = frozenset({"image", "history", "brokers", "retention", "diff", "snapshot",
                            "truncate", "repair"})


def _reading(env: Environment, label: str, streams_stdout: bool = False) -> Any:
    """The progress bar of every long command (kmeta.render.progress), imported late:
    ``kmeta --help`` imports no renderer."""
    from kmeta.render.progress import reading

    return reading(env, label, metadata_only=label in _METADATA_ONLY,
                   streams_stdout=streams_stdout)


@contextlib.contextmanager
def _streams(env: Environment) -> Iterator[None]:
    """sys.stdout and sys.stderr are ``env``'s while the command runs: click and typer
    write help, usage errors and completions there themselves."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = env.stdout, env.stderr
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


@functools.cache
def _click_app(only: str | None = None) -> click.Command:
    """The click command typer builds from ``app``, once: ``app()`` builds it anew on every
    call, which costs more than a small command (in-process runs add up).

    ``only``: the command about to run, the one built.  Typer reads the signatures and
    type hints of every command to build them all, a sixth of a short run's time; the
    rest are needed only to list them (``--help``), suggest one for a typo, or complete.
    """
    if only is None:
        return typer.main.get_command(app)
    one = typer.Typer(**_APP)  # type: ignore[arg-type]
    one.registered_callback = app.registered_callback
    one.registered_commands = [c for c in app.registered_commands if _name(c) == only]
    return typer.main.get_command(one)


def _name(info: typer.models.CommandInfo) -> str:
    return info.name or typer.main.get_command_name(info.callback.__name__)


def _command_named(args: list[str], env: Environment) -> str | None:
    """The command ``args`` run, when it is one of the app's; None for ``--help``,
    ``--version``, a typo or a shell's completion request (those need them all)."""
    if any(k.endswith("_COMPLETE") for k in (*os.environ, *env.environ)):
        return None
    for arg in args:
        if not arg.startswith("-"):
            known = {_name(c) for c in app.registered_commands}
            return arg if arg in known else None
        if arg in ("--", "-h", "--help", "--version"):
            return None
    return None


def _take_traceback(args: list[str]) -> tuple[list[str], bool]:
    """``--traceback`` is accepted anywhere before ``--``, also after the command name
    (where the crash message tells users to add it): taken out here, before click sees
    it.  The arguments without it, and whether it was there."""
    end = args.index("--") if "--" in args else len(args)
    if "--traceback" in args[:end]:
        return [a for a in args[:end] if a != "--traceback"] + args[end:], True
    return args, False


def main(argv: list[str] | None = None, env: Environment | None = None) -> None:
    """Entry point: one place turns errors into a line on stderr and an exit code.

    ``env``: the streams and variables of the run (default: the process's own).  Usage
    errors are click's (exit 2); a KmetaError is one line and its own exit code;
    anything else is a bug, reported in one line unless ``--traceback`` was given.
    """
    env = env or Environment()
    args, traceback = _take_traceback(sys.argv[1:] if argv is None else list(argv))
    env = replace(env, traceback=env.traceback or traceback)
    try:
        if env.stdout is None:  # started with stdout closed (``>&-``)
            raise OutputError("standard output is closed: kmeta writes its results there",
                              hint="redirect it to a file or to /dev/null instead")
        env = env.guarded()
        with _streams(env):
            _click_app(_command_named(args, env)).main(args=args, prog_name="kmeta", obj=env)
    except BrokenPipeError:
        env.quiet_stdout()
        sys.exit(0)
    except KmetaError as e:
        if env.traceback:
            raise
        print(e.one_line(), file=env.stderr)
        if isinstance(e, OutputError) and env.stdout is not None:
            env.quiet_stdout()  # what is still buffered would fail again at exit
        sys.exit(int(e.exit_code))
    except KeyboardInterrupt:
        sys.exit(ExitCode.INTERRUPTED)
    except Exception as e:
        if env.traceback:
            raise
        print(f"kmeta: internal error: {type(e).__name__}: {e} (a bug in kmeta: run the "
              "same command again with --traceback added and report what it prints)",
              file=env.stderr)
        sys.exit(ExitCode.INTERNAL)
    finally:
        # dump and verify turn the cyclic collector off for speed; a caller that runs
        # kmeta in-process (tests, scripts) gets it back
        gc.enable()
