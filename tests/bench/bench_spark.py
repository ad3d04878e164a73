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
not yet compiled) is timed apart from the steady ones.  Target: the slower table at
least 0.3x verify's rate.  The machine's load average is printed before and after:
other processes share the CPUs, so compare the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
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


def read_seconds(spark: object, table: str, log: Path) -> float:
    """The read of ``table``, every column of every row, written nowhere."""
    t = time.perf_counter()
    spark.read.format("kmeta").option("table", table).load([str(log)]) \
        .write.format("noop").mode("overwrite").save()
    return time.perf_counter() - t


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="256MiB")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args()
    log = big_log(args.size)
    mb = sum(f.stat().st_size for f in log.glob("*.log")) / 1e6
    print(f"input: {log} ({mb:,.0f} MB of segments); load average {load()}")

    from kmeta.spark.export import session

    started = time.perf_counter()
    spark = session(args.master)
    print(f"session on {args.master}: {time.perf_counter() - started:.1f} s")
    cold = {t: read_seconds(spark, t, log) for t in TABLES}
    times: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        for name, run in (("verify", lambda: verify_seconds(log)),
                          *((t, lambda t=t: read_seconds(spark, t, log)) for t in TABLES)):
            times.setdefault(name, []).append(run())
    spark.stop()
    best = {name: min(ts) for name, ts in times.items()}
    print("each run (s): " + "; ".join(f"{name} " + " ".join(f"{t:.2f}" for t in ts)
                                       for name, ts in times.items()))

    rate = mb / best["verify"]
    print(f"kmeta verify, one process             {best['verify']:6.2f} s  {rate:6.1f} MB/s")
    for t in TABLES:
        print(f"read {t:<8} {args.master}, first read   {cold[t]:6.2f} s  "
              f"{mb / cold[t]:6.1f} MB/s")
    worst = min(mb / best[t] for t in TABLES)
    for t in TABLES:
        r = mb / best[t]
        print(f"read {t:<8} {args.master}, steady       {best[t]:6.2f} s  {r:6.1f} MB/s = "
              f"{r / rate:.2f}x verify")
    print(f"slower table: {worst / rate:.2f}x verify (target >= {TARGET}x); "
          f"load average {load()}")


if __name__ == "__main__":
    main()
