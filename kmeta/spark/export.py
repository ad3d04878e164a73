"""``kmeta export``: every kmeta table of many data dirs, written by a Spark job.

The job reads each table through the ``kmeta`` data source (one Spark task per segment
or snapshot file) and writes it as Parquet (or JSON) under ``OUT/<table>/``, partitioned
by cluster id and node id, so a fleet's output can be queried by cluster or broker
without reading the rest.  Spark runs embedded (``local[*]``) unless a master URL is
given; under ``spark-submit`` the session it provides is used.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kmeta.errors import UsageError
from kmeta.ops.rows import TABLES, ddl

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

    def to_json(self) -> dict[str, Any]:
        return {"kind": "export", "out": str(self.out), "format": self.format,
                "master": self.master, "rows": self.rows, "findings": self.findings,
                "input_partitions": self.partitions, "seconds": round(self.seconds, 3)}


def session(master: str | None = None, *, progress: bool = False) -> Any:
    """The active SparkSession (spark-submit), or a new one on ``master`` (default
    ``local[*]``) whose Python workers run this interpreter, with kmeta registered."""
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
        builder = builder.master(master or "local[*]")
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def run_export(paths: Sequence[str], out: str | os.PathLike[str], *,
               fmt: str = "parquet", master: str | None = None,
               tables: Sequence[str] = tuple(TABLES), progress: bool = False,
               on_table: Callable[[str, int], None] | None = None,
               spark: Any = None) -> ExportResult:
    """Write ``tables`` of ``paths`` under ``out``; ``out`` must not exist yet."""
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt}: one of {', '.join(FORMATS)}")
    unknown = [t for t in tables if t not in TABLES]
    if unknown:
        raise UsageError(f"unknown table(s) {', '.join(unknown)}; one of {', '.join(TABLES)}")
    target = Path(out)
    if target.exists() and any(target.iterdir()):
        raise UsageError("the output directory exists and is not empty", context=str(target),
                         hint="give a new directory: export never overwrites")
    for p in paths:
        if not any(ch in p for ch in "*?[") and not Path(p).exists():
            raise UsageError("no such file or directory", context=p)
    started = time.perf_counter()
    spark = spark or session(master, progress=progress)
    result = ExportResult(target, fmt, spark.sparkContext.master)
    # One writer per (cluster, node) partition at a time instead of sorting every row by
    # them first: a unit's rows all share one cluster and node.
    spark.conf.set("spark.sql.maxConcurrentOutputFileWriters", "64")
    for table in tables:
        df = spark.read.format("kmeta").option("table", table).load(list(paths))
        result.partitions[table] = df.rdd.getNumPartitions()
        dest = str(target / table)
        df.write.mode("errorifexists").partitionBy(*PARTITION_BY).format(fmt).save(dest)
        # Count what was written (cheap to read back) rather than reading the logs twice.
        written = spark.read.schema(ddl(table)).format(fmt).load(dest)
        result.rows[table] = written.count()
        if table == "findings":
            result.findings = {r["severity"]: r["count"] for r in
                               written.groupBy("severity").count().collect()}
        if on_table is not None:
            on_table(table, result.rows[table])
    result.seconds = time.perf_counter() - started
    return result
