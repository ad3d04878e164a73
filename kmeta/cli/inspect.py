"""``kmeta dump``, ``info`` and ``verify``: what is on the disk, decoded and checked."""

from __future__ import annotations

import gc
from typing import Annotated

import typer

from kmeta.cli.app import (
    AllOpt,
    Decoder,
    JsonOpt,
    PathsArg,
    close,
    command,
    complete_types,
    current_env,
    finish,
    reading_progress,
)
from kmeta.errors import UsageError, Verdict
from kmeta.formats.decoders import TOPIC_DECODERS


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
        "--type", "-t", autocompletion=complete_types,
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
                                           "batch and record; a secret's bytes show as ** "
                                           "(a masked: note says which).")] = False,
    show_secrets: Annotated[bool, typer.Option("--show-secrets", help="Print SCRAM "
                                               "credentials, token ids and sensitive config "
                                               "values instead of [redacted], and their bytes "
                                               "in --hex and in raw, utf8 and hex values "
                                               "instead of *.")] = False,
) -> None:
    """Decode every batch and record of Kafka log segments, snapshots and small files."""
    from kmeta.ops.dump import DumpOptions, dump, parse_types

    if types and batches_only:  # the type of a record is only known once it is decoded
        raise UsageError("--type needs the records decoded: it cannot go with --batches-only")
    if from_offset is not None and to_offset is not None and from_offset > to_offset:
        raise UsageError(f"--from-offset {from_offset} is after --to-offset {to_offset}")
    from kmeta.ops.replay import check_offset  # a bad value is 2, as every offset option's

    check_offset(from_offset, "--from-offset")
    check_offset(to_offset, "--to-offset")
    env = current_env()
    verdict = Verdict()
    opts = DumpOptions(
        decoder=decoder.value if decoder else None, from_offset=from_offset,
        to_offset=to_offset, types=parse_types(types or []),
        batches_only=batches_only, skip_control=skip_control, max_bytes=max_bytes,
        show_hex=show_hex, show_secrets=show_secrets, on_finding=verdict.count, runs=True)
    with reading_progress(env, "dump", streams_stdout=True) as opts.progress:
        events = dump(paths, opts)
        # A dump allocates millions of short-lived tuples and no reference cycles: the
        # cyclic collector would only spend time (a few percent) finding nothing.
        gc.disable()
        if json_out:
            from kmeta.render.jsonl import render as render_json

            lines = render_json(events, show_hex, records_only=bool(opts.types), utf8=True)
        else:
            from kmeta.render.text import render as render_text

            lines = render_text(events, records=records, show_hex=show_hex,
                                only_matches=bool(opts.types), colour=env.colour(env.stdout),
                                utf8=True)
        env.write_lines(lines, json=json_out)
    if opts.types and not opts.matched:
        print(f"kmeta: no record of type {', '.join(sorted(opts.types))} in "
              f"{', '.join(paths)}", file=env.stderr)
    finish(env, verdict)


@command
def info(paths: PathsArg, json_out: JsonOpt = False, show_all: AllOpt = False,
         listing: Annotated[bool, typer.Option(
             "--partitions", help="Text: every data topic, each with a line per partition "
             "(segments, bytes, offsets, oldest and newest batch time). By default the "
             "topics are a row each, as many as fit two screens. --all is about findings, "
             "not partitions.")] = False) -> None:
    """Two screens about a data dir: cluster, metadata log, snapshots, topics, findings.

    The metadata log is decoded whole; a data topic's segments are read at their ends
    (first batch, last offset index entry, the batch headers after it), or whole where
    they do not read cleanly so. The findings are those met reading; the log's rules
    (offsets, epochs, CRCs, indexes, snapshots, the replayed image) are checked by kmeta
    verify, which the last line names.
    """
    from kmeta.ops.info import info as run_info

    env = current_env()
    with reading_progress(env, "info") as progress:
        report = run_info(paths, progress=progress)
    if json_out:
        from kmeta.render.jsonl import dumps

        env.write_lines((dumps(o) for o in report.json_objects()), json=True)
    else:
        from kmeta.render.console import make_console
        from kmeta.render.info import render_info

        render_info(report, make_console(env), given=paths, expand=show_all,
                    partitions=listing)
    close(env, report.findings, paths, json_out=json_out, told=True)


@command
def verify(paths: PathsArg, json_out: JsonOpt = False, show_all: AllOpt = False,
           jobs: Annotated[int | None, typer.Option(
               "--jobs", "-j", min=1, metavar="N", show_default=False,
               help="Processes that scan the ordinary topics' partitions (default: the "
               "CPUs); the report is the same for any N.")] = None,
           metadata: Annotated[str | None, typer.Option(
               "--metadata", metavar="DIR",
               help="The broker's metadata log (its metadata.log.dir, or the "
               "__cluster_metadata-0 in it) when it is not among PATH...: every data dir "
               "given is then that one broker's, judged against its image")] = None,
           ) -> None:
    """Check a metadata log, its snapshots, epochs, indexes and small files; replay the image;
    judge each broker's partition dirs against its own image.

    The data dirs given are grouped into brokers by the node.id of their meta.properties;
    each broker's partition dirs are judged against the image at the end of the metadata
    log among its own dirs (or --metadata): stray logs (LogManager.isStrayKraftReplica)
    and what each Kafka version does with them, abandoned -future logs, replicas the image
    assigns to the node that are missing on disk, and each replica's directory assignment
    (KIP-858).  ZooKeeper-mode data dirs have no image: nothing is said of them.

    Exit 0 when nothing of severity error was found, 1 otherwise.
    """
    from kmeta.ops.processes import default_jobs
    from kmeta.ops.verify import verify as run_verify

    env = current_env()
    gc.disable()  # as for dump: millions of short-lived objects, no reference cycles
    with reading_progress(env, "verify") as progress:
        report = run_verify(paths, jobs=jobs or default_jobs(), metadata=metadata,
                            progress=progress)
    if json_out:
        from kmeta.render.verify import render_json

        env.write_lines(render_json(report), json=True)
    else:
        from kmeta.render.verify import render_text

        render_text(report, env, given=paths, expand=show_all)
    finish(env, Verdict(report.findings), summary=False)  # its last line says it
