"""``kmeta export``: kmeta's tables of many data dirs, written by a Spark job."""

from __future__ import annotations

from typing import Annotated

import typer

from kmeta.cli.app import (
    command,
    current_env,
)
from kmeta.errors import ExitCode, UsageError


@command
def export(
    paths: Annotated[list[str], typer.Argument(
        help="Data dirs, partition dirs, files or globs (quote them), from any number of "
        "brokers.", show_default=False, metavar="PATH...")],
    to: Annotated[str, typer.Option(
        "--to", metavar="OUTDIR", show_default=False,
        help="A new directory outside the inputs and Kafka's data and partition dirs: "
        "OUTDIR/<table>/cluster_id=ID/node_id=N/part-*.")],
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
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object on stdout: where "
                                           "the tables went and their rows (schema in "
                                           "kmeta(1)).")] = False,
) -> None:
    """Write kmeta's tables of many data dirs as Parquet (or JSON) with a Spark job.

    Needs the spark extra: pip install 'kmeta[spark]'. The files are shared out over
    Spark tasks; the output is partitioned by cluster id and node id. The records table
    holds the metadata log's records only (__cluster_metadata, KRaft snapshots,
    bootstrap.checkpoint) unless --data-topics is given; the batches table holds the batch
    headers of every topic (no record bytes).
    """
    from kmeta.ops.export import TABLES, Scope, expand_globs
    from kmeta.storage.discover import discover

    scope = Scope(data_topics=data_topics, payloads=payloads)
    if "://" not in to:  # before Spark starts: never into what it reads, nor a broker's dirs
        from kmeta.storage.targets import check_target

        check_target(to, expand_globs(paths), what="--to")
    # before Spark starts too: a path without a Kafka file exits 3 as for every command
    # (its top level only: the executors list the rest)
    env = current_env()
    from kmeta.render.progress import Telling

    found = discover([p for p in expand_globs(paths) if "://" not in p], defer=True,
                     progress=Telling(env))
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise UsageError("kmeta export runs on Spark, which is not installed",
                         hint="pip install 'kmeta[spark]' (pyspark and pyarrow; Java 17+)"
                         ) from None
    from kmeta.render.export import export_json, export_lines, table_line
    from kmeta.spark.export import run_export


    def done(name: str, rows: int) -> None:
        print(table_line(name, rows), file=env.stderr)

    result = run_export(paths, to, fmt=fmt, master=master,
                        tables=table or tuple(TABLES), progress=env.stderr.isatty(),
                        on_table=done, scope=scope)
    result.live_log_dirs = [str(d.path) for d in found.live]
    env.write_lines([export_json(result)] if json_out else export_lines(result),
                    json=json_out)
    # the findings are rows of the findings table; the exit code is the worst of them
    raise typer.Exit(int(ExitCode.FINDINGS if result.findings.get("error") else ExitCode.OK))
