"""``kmeta export``: every kmeta table of many data dirs, written by a Spark job.

Output goes under ``OUT/<table>/``, partitioned by cluster id and node id (Spark's
``column=value`` directories), so a fleet's output can be queried by cluster or broker
without reading the rest.  The big tables, ``batches`` and ``records``, are made by Spark
tasks that each take a group of segment and snapshot files of similar total size, read
each file once and write both tables' Parquet files themselves with pyarrow: no row
passes through the JVM, which on a small machine costs as much CPU as the parsing.  The other tables (and ``--format json``) go
through the ``kmeta`` data source and Spark's own writer.  Spark runs embedded (``local[*]``) unless a master URL is
given; under ``spark-submit`` the session it provides is used.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kmeta.errors import UnreadableInput, UsageError
from kmeta.ops.export import TABLES, Scope, ddl, expand_globs, task_groups

__all__ = ["ExportResult", "run_export", "session"]

FORMATS = ("parquet", "json")
PARTITION_BY = ("cluster_id", "node_id")


@dataclass
class ExportResult:
    out: Path
    format: str
    master: str
    rows: dict[str, int] = field(default_factory=dict)
    findings: dict[str, int] = field(default_factory=dict)  # severity -> count
    partitions: dict[str, int] = field(default_factory=dict)  # Spark input partitions
    seconds: float = 0.0
    #: the log dirs a running process held (.lock) when the export listed them (S012)
    live_log_dirs: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"kind": "export", "out": str(self.out), "format": self.format,
                "master": self.master, "rows": self.rows,
                # every severity, as every command's finding_counts; null without the table
                "finding_counts": {s: self.findings.get(s, 0)
                                   for s in ("error", "warning", "info")}
                if "findings" in self.rows else None,
                "input_partitions": self.partitions, "seconds": round(self.seconds, 3),
                "live_log_dirs": self.live_log_dirs}


#: The JVM options of an embedded session whose big tables bypass it (Parquet written by
#: the executors): that JVM schedules the Python tasks and writes the small tables only,
#: so the second JIT tier and the parallel collector cost a second of start-up that is
#: never paid back.  Rows through the JVM (``--format json``) run 15% slower on them.
LIGHT_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

#: The JVM option of every embedded session: Arrow's buffers read without a bounds check
#: each.  The data source's rows come to the JVM as Arrow batches, and Spark reads every
#: value of every row through them: the checks were a seventh of its task threads' time
#: (the batches table of the 268 MB log: 1.30 s of CPU for 1.08-1.16 s).  The batches
#: come from kmeta's own Python workers, on the same machine.  Only for a JVM that kmeta
#: starts and that runs kmeta's job alone: a cluster's executors keep their options.
UNCHECKED_ARROW = "-Darrow.enable_unsafe_memory_access=true"

#: The collector of an embedded session whose rows go through the JVM (the data source
#: read in the session, ``--format json``): the throughput collector.  Each value Spark
#: reads of an Arrow batch is a short-lived object, millions a second; G1's write
#: barriers and concurrent work cost the records table of the 268 MB log 1.9-2.1 s of
#: JVM CPU against 1.55-1.65 s with this one (the batches table: 1.28-1.42 s against
#: 1.19-1.23 s).  A job that ends with the command has no pause to keep short.
THROUGHPUT_GC = "-XX:+UseParallelGC"


def session(master: str | None = None, *, progress: bool = False,
            light: bool = False) -> Any:
    """The active SparkSession (spark-submit), or a new one on ``master`` (default
    ``local[*]``) whose Python workers run this interpreter (started by
    kmeta.spark.daemon), with kmeta registered.  A local one has no web UI, as it ends
    with the command, reads Arrow buffers unchecked (UNCHECKED_ARROW) and runs LIGHT_JVM
    with ``light``, THROUGHPUT_GC without."""
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    from kmeta.spark import register

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        register(active)
        return active
    builder = SparkSession.builder.appName("kmeta export") \
        .config("spark.ui.showConsoleProgress", "true" if progress else "false")
    if master is not None or not SparkConf().contains("spark.master"):
        # Not under spark-submit (which sets the master): embedded, and the executors
        # must import the same kmeta, which on a laptop means this interpreter.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        master = master or "local[*]"
        builder = builder.master(master) \
            .config("spark.python.daemon.module", "kmeta.spark.daemon")
        if master.startswith("local"):  # a cluster's driver keeps its UI and its JIT
            builder = builder.config("spark.ui.enabled", "false").config(
                "spark.driver.extraJavaOptions",
                f"{LIGHT_JVM} {UNCHECKED_ARROW}" if light
                else f"{THROUGHPUT_GC} {UNCHECKED_ARROW}")
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def run_export(paths: Sequence[str], out: str | os.PathLike[str], *,
               fmt: str = "parquet", master: str | None = None,
               tables: Sequence[str] = tuple(TABLES), progress: bool = False,
               on_table: Callable[[str, int], None] | None = None,
               spark: Any = None, scope: Scope | None = None) -> ExportResult:
    """Write ``tables`` of ``paths`` under ``out``; ``out`` must not exist yet.  ``scope``
    (default: metadata records only) says what the records table holds."""
    scope = scope or Scope()
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt}: one of {', '.join(FORMATS)}")
    unknown = [t for t in tables if t not in TABLES]
    if unknown:
        raise UsageError(f"unknown table(s) {', '.join(unknown)}; one of {', '.join(TABLES)}")
    target = Path(out)
    if "://" not in str(out) and target.exists() and any(target.iterdir()):
        raise UsageError("the output directory exists and is not empty", context=str(target),
                         hint="give a new directory: export never overwrites")
    for p in paths:
        if not any(ch in p for ch in "*?[") and not Path(p).exists():
            raise UnreadableInput("no such file or directory", context=p)
    paths = expand_globs(paths)  # the same paths for every table (the data source does it too)
    started = time.perf_counter()
    files = [t for t in tables if t in FILE_TABLES]
    # batches and records are written by the executors, with local file APIs: a URL
    # (hdfs://, s3a://) goes through Spark's own writer instead, as does JSON
    direct = bool(files) and fmt == "parquet" and "://" not in str(out)
    spark = spark or session(master, progress=progress, light=direct)
    result = ExportResult(target, fmt, spark.sparkContext.master)
    # One writer per (cluster, node) partition at a time instead of sorting every row by
    # them first: a unit's rows all share one cluster and node.
    spark.conf.set("spark.sql.maxConcurrentOutputFileWriters", "64")
    if direct:
        # batches and records: both from one read of each file, written as Parquet by
        # the executors themselves (pyarrow), with no rows passing through the JVM
        counts, parts = _export_files(spark, list(paths), target, files, scope)
        for table in files:
            result.rows[table] = counts.get(table, 0)
            result.partitions[table] = parts
            if not result.rows[table]:
                _write_empty(spark, table, f"{target}/{table}", fmt)
            if on_table is not None:
                on_table(table, result.rows[table])
        tables = [t for t in tables if t not in files]
    for table in tables:
        df = spark.read.format("kmeta").options(table=table, **scope.to_options()) \
            .load(list(paths))
        result.partitions[table] = df.rdd.getNumPartitions()
        dest = f"{str(out).rstrip('/')}/{table}"  # a URL too (Path would fold its //)
        df.write.mode("errorifexists").partitionBy(*PARTITION_BY).format(fmt).save(dest)
        # Count what was written (cheap to read back) rather than reading the logs twice.
        written = spark.read.schema(ddl(table)).format(fmt).load(dest)
        result.rows[table] = written.count()
        if not result.rows[table]:
            _write_empty(spark, table, dest, fmt)
        if table == "findings":
            result.findings = {r["severity"]: r["count"] for r in
                               written.groupBy("severity").count().collect()}
        if on_table is not None:
            on_table(table, result.rows[table])
    result.seconds = time.perf_counter() - started
    return result


def _write_empty(spark: Any, table: str, dest: str, fmt: str) -> None:
    """A table without rows (a fleet that verifies clean has no findings) gets one empty
    file that carries its schema: a directory of no data files does not read back
    (``spark.read.parquet``: "Unable to infer schema").  Not partitioned, so
    cluster_id and node_id are columns of the file, with their types."""
    spark.createDataFrame([], ddl(table)).coalesce(1).write.mode("append") \
        .format(fmt).save(dest)


#: the tables read per segment or snapshot file, which export writes in one pass
FILE_TABLES = ("batches", "records")
#: characters Spark escapes in partition directory names (ExternalCatalogUtils)
_ESCAPE = set('"#%\'*/:=?\\\x7f{[]^') | {chr(c) for c in range(32)}
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def partition_dir(column: str, value: Any) -> str:
    """``column=value`` as Spark's writer names a partition directory, so that the tables
    written here and those Spark writes read back alike: null and the empty string are
    Hive's default partition (read back as null; Spark refuses an empty ``column=``)."""
    if value is None or value == "":
        return f"{column}={HIVE_NULL}"
    text = "".join(f"%{ord(ch):02X}" if ch in _ESCAPE else ch for ch in str(value))
    return f"{column}={text}"


def _export_files(spark: Any, paths: list[str], out: Path, tables: Sequence[str],
                  scope: Scope) -> tuple[dict[str, int], int]:
    from kmeta.ops.export import plan_units

    # every segment and snapshot file (the batches table covers all topics); each unit
    # says whether its records belong in the records table too
    units, _ = plan_units(paths, "batches", scope)
    if "batches" not in tables:
        units = [u for u in units if u.records]
    wanted = tuple(tables)
    where = str(out)
    counts: dict[str, int] = {}
    groups = task_groups(units, spark.sparkContext.defaultParallelism)
    if groups:
        rdd = spark.sparkContext.parallelize(groups, len(groups))
        # a count per unit and table, summed here: a reduceByKey was a second stage and
        # a shuffle for a few hundred numbers
        for table, n in rdd.mapPartitions(
                lambda it: write_unit_files((u for g in it for u in g), where, wanted)) \
                .collect():
            counts[table] = counts.get(table, 0) + n
    for table in wanted:
        (out / table).mkdir(parents=True, exist_ok=True)
        (out / table / "_SUCCESS").write_bytes(b"")
    return counts, len(groups)


#: rows of a Parquet row group written by export's executors
ROW_GROUP = 1 << 18


def write_unit_files(units: Iterable[Any], out: str, tables: Sequence[str]
                     ) -> Iterator[tuple[str, int]]:
    """Executor side: each unit's batches and records as Parquet files under
    ``out/<table>/cluster_id=…/node_id=…/``; yields (table, rows written)."""
    from kmeta.spark.source import arrow_schema

    schemas = {t: arrow_schema(t) for t in tables}
    keep = {t: [i for i, f in enumerate(schemas[t]) if f.name not in PARTITION_BY]
            for t in tables}
    for unit in units:
        yield from _write_unit(unit, out, schemas, keep).items()


class _UnitFiles:
    """The Parquet files of one unit, a file per table, written ROW_GROUP rows at a time:
    a row group per 65,536-row chunk made the writer three times slower than the whole
    export's parsing."""

    def __init__(self, unit: Any, out: str) -> None:
        import hashlib

        self.name = hashlib.sha1(unit.path.encode()).hexdigest()[:20]
        self.sub = Path(partition_dir("cluster_id", unit.cluster_id),
                        partition_dir("node_id", unit.node_id))
        self.out = out
        self.writers: dict[str, Any] = {}
        self.pending: dict[str, list[Any]] = {}
        self.rows: dict[str, int] = {}

    def add(self, table: str, batch: Any) -> None:
        self.pending.setdefault(table, []).append(batch)
        self.rows[table] = self.rows.get(table, 0) + batch.num_rows
        if self.rows[table] >= ROW_GROUP:
            self.flush(table)

    def flush(self, table: str) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        batches = self.pending.get(table)
        if not batches:
            return
        writer = self.writers.get(table)
        if writer is None:
            target = Path(self.out) / table / self.sub
            target.mkdir(parents=True, exist_ok=True)
            # store_schema=False: the dictionary columns read back as the strings they
            # stand for, as Spark reads them
            writer = self.writers[table] = pq.ParquetWriter(
                str(target / f"part-{self.name}.parquet"), batches[0].schema,
                store_schema=False, **_encodings(batches[0].schema))
        # One dictionary per column of a row group: the writer would give up its
        # dictionary at the first chunk with another, and hash every row.
        writer.write_table(pa.Table.from_batches(batches).unify_dictionaries())
        batches.clear()
        self.rows[table] = 0

    def close(self) -> None:
        try:
            for table in list(self.pending):
                self.flush(table)
        finally:
            for w in self.writers.values():
                w.close()


def _encodings(schema: Any) -> dict[str, Any]:
    """How the Parquet writer encodes each column: strings with a dictionary (a log
    repeats its file names, record types and payloads), integers as deltas (offsets,
    positions and timestamps climb by small steps).  A segment's tables come out 14 times
    smaller than with pyarrow's default (a dictionary for every column), and twice as
    fast; Spark reads both encodings.  Statistics (min and max per page and row group)
    only where a query can skip by them: a string column is one value per file (a file
    name) or all kinds in every row group (record types, payloads), and Spark still
    skips by its dictionary.  Those of strings were a sixth of the writer's time."""
    import pyarrow as pa

    strings = [f.name for f in schema if pa.types.is_string(f.type) or
               pa.types.is_dictionary(f.type)]
    return {"use_dictionary": strings,
            "column_encoding": {f.name: "DELTA_BINARY_PACKED" for f in schema
                                if pa.types.is_integer(f.type)},
            "write_statistics": [f.name for f in schema if f.name not in strings]}


def _write_unit(unit: Any, out: str, schemas: dict[str, Any], keep: dict[str, list[int]]
                ) -> dict[str, int]:
    from kmeta.ops.export import file_chunks
    from kmeta.spark.source import to_arrow

    files = _UnitFiles(unit, out)
    counts = dict.fromkeys(schemas, 0)
    try:
        # a chunk a row group: Arrow's kernels cost a call per column and chunk
        for table, chunk in file_chunks(unit, ROW_GROUP):
            if table not in schemas:
                continue
            batch = to_arrow(chunk, schemas[table], dictionaries=True).select(keep[table])
            files.add(table, batch)
            counts[table] += batch.num_rows
    finally:
        files.close()
    return counts
