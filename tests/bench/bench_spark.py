"""The ``kmeta`` data source on Spark ``local[2]`` against ``kmeta verify`` (issue 35).

    python tests/bench/bench_spark.py [--size 256MiB] [--repeat 3] [--master local[2]]

The input is the generated metadata log of SIZE (fixtures/big/SIZE, 268 MB for 256MiB).
In one run, interleaved, each time the best of REPEAT:

- ``kmeta verify LOG`` as a whole process (start-up included): MB/s = segment bytes /
  wall;
- ``spark.read.format("kmeta")`` of the ``batches`` and of the ``records`` table in one
  SparkSession made once (``kmeta.spark.export.session``, as ``kmeta export`` makes it),
  timing the read action only: ``df.write.format("noop")``, which projects every column
  of every row (a ``count`` would let Spark skip the columns); MB/s of each table and its
  ratio to verify's.

The first read of each table in the session (its Python workers started, the JVM's code
not yet compiled) is timed apart from the steady ones.  With ``--floor``, each table is
also read through a source that plans the same tasks but yields, for each file, its first
Arrow batch over and over up to the file's rows: what Spark's side of the read costs
(planning, the Arrow stream, the rows made of it) when kmeta's parsing costs nothing.  On a
``local`` master each read's CPU time is printed too, split between the JVM and the
Python processes under it (the daemon and its workers): on two cores they take turns on
the same CPUs.  Target: the slower table at least 0.3x verify's rate.  The machine's load
average is printed before and after: other processes share the CPUs, so compare the
ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dump import big_log  # noqa: E402

TABLES = ("batches", "records")
TARGET = 0.3


def verify_seconds(log: Path) -> float:
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kmeta", "verify", str(log)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if done.returncode not in (0, 1):
        raise SystemExit(f"kmeta verify {log} exited {done.returncode}")
    return time.perf_counter() - t


def _ticks(pid: int) -> tuple[int, int, int]:
    """(parent pid, CPU ticks of the process, CPU ticks of its waited-for children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def cpu_seconds(jvm: int) -> tuple[float, float]:
    """CPU seconds so far of the JVM ``jvm`` and of every process under it (Python's
    daemon and workers, those that ended included)."""
    procs = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):  # ended meanwhile
                procs[int(entry.name)] = _ticks(int(entry.name))
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    under, todo = 0, list(children.get(jvm, []))
    while todo:
        pid = todo.pop()
        under += procs[pid][1] + procs[pid][2]
        todo += children.get(pid, [])
    hz = os.sysconf("SC_CLK_TCK")
    return procs[jvm][1] / hz, under / hz


def read_seconds(spark: object, table: str, log: Path) -> float:
    """The read of ``table``, every column of every row, written nowhere."""
    t = time.perf_counter()
    spark.read.format("kmeta").option("table", table).load([str(log)]) \
        .write.format("noop").mode("overwrite").save()
    return time.perf_counter() - t


def floor_source() -> type:
    """The ``kmeta_floor`` data source of ``--floor`` (defined here, in ``__main__``:
    pickled whole for the Python workers)."""
    import json

    from kmeta.ops.export import Scope, unit_chunks
    from kmeta.spark.source import KmetaDataSource, KmetaReader, arrow_schema, input_paths, to_arrow

    class FloorReader(KmetaReader):
        counts: dict[str, int] = {}

        def read(self, partition: object):  # type: ignore[override]
            schema = arrow_schema(self.table)
            for unit in partition.units:  # type: ignore[attr-defined]
                left = self.counts.get(unit.path, 0)
                first = to_arrow(next(iter(unit_chunks(unit))), schema) if left else None
                while left > 0:
                    batch = first if left >= first.num_rows else first.slice(0, left)
                    left -= batch.num_rows
                    yield batch

    class Floor(KmetaDataSource):
        @classmethod
        def name(cls) -> str:
            return "kmeta_floor"

        def reader(self, schema: object) -> FloorReader:
            reader = FloorReader(self._table(), input_paths(dict(self.options)),
                                 Scope.from_options(self.options))
            reader.counts = json.loads(self.options["counts"])
            return reader

    return Floor


def floor_seconds(spark: object, table: str, log: Path, counts: str) -> float:
    t = time.perf_counter()
    spark.read.format("kmeta_floor").option("table", table).option("counts", counts) \
        .load([str(log)]).write.format("noop").mode("overwrite").save()
    return time.perf_counter() - t


def unit_rows(log: Path, table: str) -> str:
    """The rows of each of ``table``'s units of ``log``, as JSON (path -> rows)."""
    import json

    from kmeta.ops.export import plan_units, unit_chunks

    units, _ = plan_units([str(log)], table)
    return json.dumps({u.path: sum(c.n for c in unit_chunks(u)) for u in units})


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="256MiB")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--floor", action="store_true",
                    help="also read each table through a source that does no parsing")
    args = ap.parse_args()
    log = big_log(args.size)
    mb = sum(f.stat().st_size for f in log.glob("*.log")) / 1e6
    print(f"input: {log} ({mb:,.0f} MB of segments); load average {load()}")

    from kmeta.spark.export import session

    started = time.perf_counter()
    spark = session(args.master)
    print(f"session on {args.master}: {time.perf_counter() - started:.1f} s")
    cold = {t: read_seconds(spark, t, log) for t in TABLES}
    runs = [("verify", lambda: verify_seconds(log)),
            *((t, lambda t=t: read_seconds(spark, t, log)) for t in TABLES)]
    if args.floor:
        spark.dataSource.register(floor_source())
        counts = {t: unit_rows(log, t) for t in TABLES}
        for t in TABLES:
            floor_seconds(spark, t, log, counts[t])  # its first read
        runs += [(f"floor {t}", lambda t=t: floor_seconds(spark, t, log, counts[t]))
                 for t in TABLES]
    local = args.master.startswith("local")
    jvm = spark.sparkContext._gateway.proc.pid if local else 0  # type: ignore[attr-defined]
    times: dict[str, list[float]] = {}
    cpu: dict[str, list[tuple[float, float]]] = {}
    for _ in range(args.repeat):
        for name, run in runs:
            before = cpu_seconds(jvm) if local and name != "verify" else (0.0, 0.0)
            times.setdefault(name, []).append(run())
            after = cpu_seconds(jvm) if local and name != "verify" else (0.0, 0.0)
            cpu.setdefault(name, []).append((after[0] - before[0], after[1] - before[1]))
    spark.stop()
    best = {name: min(ts) for name, ts in times.items()}
    print("each run (s): " + "; ".join(f"{name} " + " ".join(f"{t:.2f}" for t in ts)
                                       for name, ts in times.items()))

    rate = mb / best["verify"]

    def split(name: str) -> str:
        """The CPU seconds of the best run of ``name``."""
        if not local:
            return ""
        j, p = cpu[name][times[name].index(best[name])]
        return f"; CPU: JVM {j:.2f} s, Python {p:.2f} s"

    print(f"kmeta verify, one process             {best['verify']:6.2f} s  {rate:6.1f} MB/s")
    for t in TABLES:
        print(f"read {t:<8} {args.master}, first read   {cold[t]:6.2f} s  "
              f"{mb / cold[t]:6.1f} MB/s")
    worst = min(mb / best[t] for t in TABLES)
    for t in TABLES:
        r = mb / best[t]
        print(f"read {t:<8} {args.master}, steady       {best[t]:6.2f} s  {r:6.1f} MB/s = "
              f"{r / rate:.2f}x verify{split(t)}")
    for t in TABLES if args.floor else ():
        r = mb / best[f"floor {t}"]
        print(f"floor {t:<7} {args.master}, no parsing   {best[f'floor {t}']:6.2f} s  "
              f"{r:6.1f} MB/s = {r / rate:.2f}x verify{split(f'floor {t}')}")
    print(f"slower table: {worst / rate:.2f}x verify (target >= {TARGET}x); "
          f"load average {load()}")


if __name__ == "__main__":
    main()
