"""The ``kmeta`` command line: parse options, call one op, render, choose the exit code.

Imports of ops and renderers happen inside the commands so that ``kmeta --help`` stays
fast and never touches pyspark.  All errors pass through :func:`main`, which prints one
line on stderr and exits with the documented code; ``--traceback`` re-raises instead.
"""

from __future__ import annotations

import gc
import os
import re
import sys
from collections.abc import Iterable, Iterator
from enum import StrEnum
from typing import Annotated, Any

import typer

from kmeta import __version__
from kmeta.errors import ExitCode, KmetaError, OutputError, UsageError

app = typer.Typer(
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

_state = {"traceback": False}


class Decoder(StrEnum):
    metadata = "metadata"
    raw = "raw"
    utf8 = "utf8"
    hex = "hex"


def _version(value: bool) -> None:
    if value:
        print(f"kmeta {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    traceback: Annotated[bool, typer.Option("--traceback", help="Show Python tracebacks "
                                            "instead of one-line errors.")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    if traceback:  # also taken out of the arguments before click saw them
        _state["traceback"] = True


class Tally:
    """Counts findings by severity as events stream past."""

    def __init__(self) -> None:
        self.errors = 0
        self.warnings = 0
        self.infos = 0
        self.unreadable = 0

    def count(self, finding: Any) -> None:
        from kmeta.findings import Severity

        if finding.code == "S008":
            self.unreadable += 1
        sev = finding.severity
        if sev is Severity.ERROR:
            self.errors += 1
        elif sev is Severity.WARNING:
            self.warnings += 1
        else:
            self.infos += 1

    def count_all(self, findings: Iterable[Any]) -> None:
        for f in findings:
            self.count(f)

    @property
    def exit_code(self) -> ExitCode:
        """3 if some input could not be read at all, else 1 for error findings, else 0."""
        if self.unreadable:
            return ExitCode.UNREADABLE
        return ExitCode.FINDINGS if self.errors else ExitCode.OK

    def summary(self) -> str | None:
        total = self.errors + self.warnings + self.infos
        if not total:
            return None
        return (f"kmeta: {total} finding(s): {self.errors} error(s), "
                f"{self.warnings} warning(s), {self.infos} info")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _json_bytes(text: str) -> bytes:
    """JSON text as UTF-8.  A path that is not UTF-8 reaches here holding lone surrogates
    (Python's surrogateescape); written raw they would make the output invalid UTF-8, so
    they become JSON escapes (``\\udcff``), which every JSON reader accepts."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def _text_bytes(text: str) -> bytes:
    # Text for people keeps a non-UTF-8 path's own bytes, so that it can be copied.
    return text.encode("utf-8", "surrogateescape")


def _folded(lines: Iterable[str]) -> Iterator[str]:
    """A report's prose lines folded at the terminal's width (COLUMNS or the tty), as
    verify, info and image fold theirs; whole through a pipe."""
    from kmeta.render.console import clip_width, fold

    width = clip_width()
    return (fold(line, width) for line in lines)


def write_lines(lines: Iterable[str], *, json: bool = False) -> None:
    """Write lines to stdout as UTF-8, in large chunks: a dump writes gigabytes.

    ``json``: the lines are JSON, which must stay valid UTF-8 whatever the paths hold.
    """
    encode = _json_bytes if json else _text_bytes
    try:
        sys.stdout.flush()
        out = sys.stdout.buffer
        buf: list[str] = []
        append = buf.append
        size = 0
        for line in lines:
            append(line)
            size += len(line)
            # ~200 KB: joins stay in cache (one item may hold a whole piece of a batch)
            if len(buf) >= 256 or size >= 1 << 18:
                append("")
                out.write(encode("\n".join(buf)))
                buf.clear()
                size = 0
        if buf:
            append("")
            out.write(encode("\n".join(buf)))
        out.flush()
    except BrokenPipeError:
        _quiet_stdout()
        raise typer.Exit(0) from None


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
                                      "(by default a code met more than 3 times is one "
                                      "line: how many, the first and the last).")]
JsonObjOpt = Annotated[bool, typer.Option("--json", help="One JSON object on stdout "
                                          "(schema in kmeta(1)).")]


@app.command()
def dump(
    paths: PathsArg,
    records: Annotated[bool, typer.Option("--records", "-r", help="Text: also print a line "
                                          "per record with its decoded payload.")] = False,
    json_out: JsonOpt = False,
    decoder: Annotated[Decoder | None, typer.Option(
        "--decoder", help="Payload decoder; default: metadata for __cluster_metadata and "
        "snapshots, raw (base64) otherwise.")] = None,
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
    from kmeta.storage.discover import discover

    if types and batches_only:  # the type of a record is only known once it is decoded
        raise UsageError("--type needs the records decoded: it cannot go with --batches-only")
    if from_offset is not None and to_offset is not None and from_offset > to_offset:
        raise UsageError(f"--from-offset {from_offset} is after --to-offset {to_offset}")
    opts = DumpOptions(
        decoder=decoder.value if decoder else None, from_offset=from_offset,
        to_offset=to_offset, types=parse_types(types or []),
        batches_only=batches_only, skip_control=skip_control, max_bytes=max_bytes,
        show_hex=show_hex, show_secrets=show_secrets)
    tally = Tally()
    opts.on_finding = tally.count
    found = discover(paths)
    events = dump(found, opts)
    # A dump allocates millions of short-lived tuples and no reference cycles: the cyclic
    # collector would only spend time (a few percent) finding nothing.
    gc.disable()
    if json_out:
        from kmeta.render.jsonl import render as render_json

        lines = render_json(events, show_hex, records_only=bool(opts.types))
    else:
        from kmeta.render.console import colour_on
        from kmeta.render.text import render as render_text

        lines = render_text(events, records=records, show_hex=show_hex,
                            only_matches=bool(opts.types), colour=colour_on(sys.stdout))
    with _reading("dump", found, streams_stdout=True):
        write_lines(lines, json=json_out)
    if opts.types and not opts.matched:
        print(f"kmeta: no record of type {', '.join(sorted(opts.types))} in "
              f"{', '.join(paths)}", file=sys.stderr)
    _finish(tally)


@app.command()
def info(paths: PathsArg, json_out: JsonOpt = False, show_all: AllOpt = False) -> None:
    """One screen about a data dir: cluster, partitions, metadata log, snapshots, findings."""
    from kmeta.ops.info import info as run_info
    from kmeta.storage.discover import discover

    tally = Tally()
    with _reading("info"):
        report = run_info(discover(paths))
    tally.count_all(report.findings)
    if json_out:
        from kmeta.render.jsonl import dumps

        write_lines([dumps(report.to_json())], json=True)
    else:
        from kmeta.render.info import render_info

        render_info(report, given=paths, expand=show_all)
    _finish(tally)


@app.command()
def verify(paths: PathsArg, json_out: JsonOpt = False, show_all: AllOpt = False) -> None:
    """Check a metadata log, its snapshots, epochs, indexes and small files; replay the image.

    Exit 0 when nothing of severity error was found, 1 otherwise.
    """
    from kmeta.ops.verify import verify as run_verify
    from kmeta.storage.discover import discover

    found = discover(paths)
    # As for dump: millions of short-lived objects, no reference cycles to find.
    gc.disable()
    with _reading("verify", found):
        report = run_verify(found)
    tally = Tally()
    tally.count_all(report.findings)
    if json_out:
        from kmeta.render.verify import render_json

        write_lines(render_json(report), json=True)
    else:
        from kmeta.render.verify import render_text

        render_text(report, given=paths, expand=show_all)
    raise typer.Exit(int(tally.exit_code))


PathArg = Annotated[str, typer.Argument(
    help="A data directory, its __cluster_metadata-0 directory, or one .checkpoint file.",
    show_default=False, metavar="PATH")]


@app.command()
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
    from kmeta.storage.discover import discover

    if action is not None and action not in IMAGE_ACTIONS:
        raise UsageError(f"unknown action {action!r}", hint="use ls or cat")
    if digest and action:
        raise UsageError(f"--digest cannot be combined with {action}")
    with _reading("image"):
        result = build_image(discover([path]), at=at,
                             from_snapshot=Path(from_snapshot) if from_snapshot else None)
    tally = Tally()
    tally.count_all(result.findings)
    if action:
        found = browse(public_json(result.image), node)
        if action == "ls":
            names = render.ls_lines(found)
            write_lines([render.dumps(names)] if json_out else names, json=json_out)
        else:
            write_lines([render.dumps(found) if json_out else render.cat_text(found)],
                        json=json_out)
    elif digest:
        write_lines([result.image.digest()])
    elif json_out:
        write_lines([render.image_json(result)], json=True)
    else:
        try:
            render.render_image(result)
            sys.stdout.flush()
        except BrokenPipeError:  # | head: click would exit 1
            _quiet_stdout()
            raise typer.Exit(0) from None
    _report(result.findings, tally, [path])


@app.command()
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
    from kmeta.storage.discover import discover

    if (topic is None) == (broker is None):
        raise UsageError("give exactly one of --topic and --broker")
    if partition is not None and topic is None:
        raise UsageError("--partition needs --topic")
    findings: list[Any] = []
    with _reading("history"):
        rows = run_history(discover([path]), topic=topic, partition=partition,
                           broker=broker, findings=findings)
    write_lines(history_json(rows) if json_out else history_lines(rows), json=json_out)
    if not rows:  # a misspelt name must not look like a quiet history
        who = f"broker {broker}" if broker is not None else f"topic {topic!r}" + (
            "" if partition is None else f" partition {partition}")
        print(f"kmeta: no record in {path} touched {who}", file=sys.stderr)
    tally = Tally()
    tally.count_all(findings)
    _report(findings, tally, [path])  # a damaged log: where the history has holes, and exit 1


@app.command()
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
    from kmeta.render.diff import diff_json, diff_lines

    with _reading("diff"):
        report = diff_replicas(replicas, images=not no_images)
    write_lines(diff_json(report) if json_out else _folded(diff_lines(report)), json=json_out)
    # What reading met (bad CRCs, torn tails …) goes to stderr; the exit code says only
    # whether the replicas diverged (kmeta verify judges each replica).
    _print_findings(report.findings, replicas, 20, "run kmeta verify on each replica")
    if any(f.code == "S008" for f in report.findings):
        raise typer.Exit(int(ExitCode.UNREADABLE))
    raise typer.Exit(int(ExitCode.FINDINGS if report.diverged else ExitCode.OK))


@app.command()
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
    from kmeta.render.snapshot import snapshot_json, snapshot_lines

    with _reading("snapshot"):
        result = write_snapshot_at(path, out, at=at)
    tally = Tally()
    tally.count_all(result.findings)
    write_lines([snapshot_json(result)] if json_out else _folded(snapshot_lines(result)),
                json=json_out)
    _report(result.findings, tally, [path])


@app.command()
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
    from kmeta.ops.truncate import simulate_truncate
    from kmeta.render.truncate import truncate_json, truncate_lines

    if apply != (out is not None):
        raise UsageError("--apply and --out go together", hint="without them, nothing "
                         "is written: the command only simulates")
    with _reading("truncate"):
        plan = simulate_truncate(path, to, peer=peer, images=not no_images and not apply)
    if not apply:
        write_lines(truncate_json(plan) if json_out else _folded(truncate_lines(plan)),
                    json=json_out)
        raise typer.Exit(int(ExitCode.OK))
    from kmeta.ops.repair import apply_repair, plan_repair
    from kmeta.render.repair import repair_json, repair_lines

    # What was written, counted once (by repair): the simulation's lines would say
    # "nothing written" above it and count a damaged batch differently.
    with _reading("truncate"):
        result = apply_repair(plan_repair(plan.replica.path, truncate_to=plan.cut), out)
    result.notes += [n for n in (plan.reason, *plan.notes) if n]
    write_lines([repair_json(result)] if json_out else _folded(repair_lines(result)),
                json=json_out)
    raise typer.Exit(int(ExitCode.FINDINGS if result.remaining_errors else ExitCode.OK))


@app.command()
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
    from kmeta.ops.repair import apply_repair, apply_repair_in_place, plan_repair
    from kmeta.render.repair import repair_json, repair_lines

    if not dry_run and in_place == (out is not None):
        raise UsageError("give exactly one of --out DIR and --in-place")
    if backup is not None and not in_place:
        raise UsageError("--backup goes with --in-place")
    with _reading("repair"):
        plan = plan_repair(path, truncate_to=truncate_to, follow_snapshot=follow_snapshot)
        if dry_run:
            result: Any = plan
        elif in_place:
            result = apply_repair_in_place(plan, backup)
        else:
            result = apply_repair(plan, out)
    write_lines([repair_json(result)] if json_out else _folded(repair_lines(result)),
                json=json_out)
    remaining = [] if dry_run else result.remaining_errors
    raise typer.Exit(int(ExitCode.FINDINGS if remaining else ExitCode.OK))


@app.command()
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
        "findings, epochs, image.")] = None,
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
    from kmeta.spark.export import run_export

    def done(name: str, rows: int) -> None:
        print(f"{name}: {rows:,} rows", file=sys.stderr)

    result = run_export(paths, to, fmt=fmt, master=master,
                        tables=table or tuple(TABLES), progress=sys.stderr.isatty(),
                        on_table=done, scope=scope)
    if json_out:
        from kmeta.render.jsonl import dumps

        write_lines([dumps(result.to_json())], json=True)
    else:
        found = ", ".join(f"{n} {s}" for s, n in sorted(result.findings.items())) or "none"
        write_lines([f"exported to {result.out} ({result.format}, Spark {result.master}) "
                     f"in {result.seconds:.1f} s",
                     *(f"  {t}: {n:,} rows from {result.partitions[t]} input partition(s)"
                       for t, n in result.rows.items()),
                     f"  findings: {found}"])
    raise typer.Exit(int(ExitCode.OK))


#: Commands that read only the metadata log and snapshots of what they are given.
_METADATA_ONLY = frozenset({"image", "history", "diff", "snapshot", "truncate", "repair"})


def _reading(label: str, found: Any = None, streams_stdout: bool = False) -> Any:
    """The progress bar of every long command (kmeta.render.progress), imported late:
    ``kmeta --help`` imports no renderer.  ``found``: the discovery already made, when
    it was made before the bar started."""
    from kmeta.render.progress import reading

    return reading(label, found, metadata_only=label in _METADATA_ONLY,
                   streams_stdout=streams_stdout)


def _report(findings: list[Any], tally: Tally, given: list[str]) -> None:
    """Findings on stderr (stdout is the data), then the summary and the exit code."""
    _print_findings(findings, given, 50, "run kmeta verify for all of them")
    _finish(tally)


def _print_findings(findings: list[Any], given: list[str], most: int, more: str) -> None:
    """Findings on stderr, a code met many times as one line, paths relative to
    ``given``, coloured on a terminal; at most ``most`` lines."""
    from kmeta.render.console import colour_on
    from kmeta.render.text import Paths, group_line, grouped

    groups = grouped(findings)
    paths = Paths(given)
    colour = colour_on(sys.stderr)
    for g in groups[:most]:
        print(group_line(g, paths, colour), file=sys.stderr)
    if len(groups) > most:
        rest = sum(g.count for g in groups[most:])
        print(f"kmeta: {rest} more finding(s): {more}", file=sys.stderr)


def _finish(tally: Tally) -> None:
    summary = tally.summary()
    if summary:
        print(summary, file=sys.stderr)
    raise typer.Exit(int(tally.exit_code))


class _GuardedStream:
    """stdout, with a failed write (full disk, /dev/full, I/O error) turned into one
    OutputError line instead of an internal error; a reader gone away stays a
    BrokenPipeError, which ends the command quietly."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def _guard(self, call: Any, *args: Any) -> Any:
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise OutputError(f"standard output cannot be written: {e.strerror or e}",
                              hint="free space where it goes, or redirect it elsewhere"
                              ) from e

    def write(self, data: Any) -> Any:
        return self._guard(self._raw.write, data)

    def flush(self) -> None:
        self._guard(self._raw.flush)

    @property
    def buffer(self) -> _GuardedStream:
        return _GuardedStream(self._raw.buffer)


def _guard_stdout() -> None:
    """File names are bytes on Linux; one that is not UTF-8 reaches text output as
    surrogates, written back as its own bytes (copyable) instead of failing under a
    strict UTF-8 locale.  JSON output escapes them instead (write_lines)."""
    raw = sys.stdout
    if isinstance(raw, _GuardedStream):
        return
    if hasattr(raw, "reconfigure"):
        raw.reconfigure(errors="surrogateescape")
    sys.stdout = _GuardedStream(raw)


def _quiet_stdout() -> None:
    """The reader (``| head``) went away: point stdout at /dev/null so that the flush at
    exit does not complain."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _take_traceback(args: list[str]) -> list[str]:
    """``--traceback`` is accepted anywhere before ``--``, also after the command name
    (where the crash message tells users to add it): taken out here, before click sees it."""
    end = args.index("--") if "--" in args else len(args)
    _state["traceback"] = False  # a caller may run kmeta in-process more than once
    if "--traceback" in args[:end]:
        _state["traceback"] = True
        return [a for a in args[:end] if a != "--traceback"] + args[end:]
    return args


def main(argv: list[str] | None = None) -> None:
    """Entry point: one place turns errors into a line on stderr and an exit code.

    Usage errors are click's (exit 2); a KmetaError is one line and its own exit code;
    anything else is a bug, reported in one line unless ``--traceback`` was given.
    """
    args = _take_traceback(sys.argv[1:] if argv is None else list(argv))
    try:
        if sys.stdout is None:  # started with stdout closed (``>&-``)
            raise OutputError("standard output is closed: kmeta writes its results there",
                              hint="redirect it to a file or to /dev/null instead")
        _guard_stdout()
        app(args=args, prog_name="kmeta")
    except BrokenPipeError:
        _quiet_stdout()
        sys.exit(0)
    except KmetaError as e:
        if _state["traceback"]:
            raise
        print(e.one_line(), file=sys.stderr)
        if isinstance(e, OutputError) and sys.stdout is not None:
            _quiet_stdout()  # what is still buffered would fail again at exit
        sys.exit(int(e.exit_code))
    except KeyboardInterrupt:
        sys.exit(ExitCode.INTERRUPTED)
    except Exception as e:
        if _state["traceback"]:
            raise
        print(f"kmeta: internal error: {type(e).__name__}: {e} (a bug in kmeta: run the "
              "same command again with --traceback added and report what it prints)",
              file=sys.stderr)
        sys.exit(ExitCode.INTERNAL)
    finally:
        if isinstance(sys.stdout, _GuardedStream):
            sys.stdout = sys.stdout._raw
        # dump and verify turn the cyclic collector off for speed; a caller that runs
        # kmeta in-process (tests, scripts) gets it back
        gc.enable()
