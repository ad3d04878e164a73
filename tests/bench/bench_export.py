"""``kmeta export`` on Spark ``local[2]`` against single-process ``kmeta dump --json``.

    python tests/bench/bench_export.py [--brokers 4] [--size 256MiB] [--repeat 3]

The input is a fleet of generated data dirs, fixtures/big/fleet/node-N (hard links to the
one generated log of SIZE, each with its own meta.properties: BROKERS brokers of one
cluster; 4 x 256 MiB is about 1.07 GB).  Both sides produce what ``dump --json --records``
does: the batches and the records.  Reported, from one run, each time the best of REPEAT:

- the single process's throughput on the fleet;
- the export's wall time on the fleet and on one twice its size, and from the two its
  throughput per core (input bytes / wall / 2): *gross*, of the fleet's whole export, and
  *steady*, of the second fleet's extra bytes over its extra time.  Steady leaves out
  what every export pays once, whatever its input (the JVM, the session, the Python
  workers), which is reported too;
- each per core rate against the single process.

Target: per core at least 0.8x the single process.  ``--before REV`` runs both with
kmeta at an older commit too (bench_speed.Kmeta).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dump import big_log  # noqa: E402
from bench_speed import Kmeta, before_tree  # noqa: E402

CLUSTER = "ZmxlZXQtYmVuY2gtY2x1c3Q"
CORES = 2


def fleet(brokers: int, size: str) -> list[Path]:
    log_dir = big_log(size)
    dirs = []
    for n in range(1, brokers + 1):
        d = REPO / "fixtures" / "big" / "fleet" / f"node-{n}"
        part = d / "__cluster_metadata-0"
        if not part.is_dir():
            part.mkdir(parents=True)
            for f in log_dir.iterdir():
                os.link(f, part / f.name)
            (d / "meta.properties").write_text(
                f"#\nnode.id={n}\ndirectory.id=AAAAAAAAAAAAAAAAAAAAA{n}\nversion=1\n"
                f"cluster.id={CLUSTER}\n")
        dirs.append(d)
    return dirs


def megabytes(dirs: list[Path]) -> float:
    return sum(f.stat().st_size for d in dirs for f in d.rglob("*.log")) / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--brokers", type=int, default=4)
    ap.add_argument("--size", default="256MiB")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", default=None,
                    help="also run kmeta at this commit (checked out into a git worktree)")
    args = ap.parse_args()
    small = fleet(args.brokers, args.size)
    big = fleet(2 * args.brokers, args.size)
    mb, mb_big = megabytes(small), megabytes(big)
    kmetas = [Kmeta("after", None)]
    if args.before:
        kmetas.insert(0, Kmeta(f"before ({args.before})", before_tree(args.before)))
    print(f"fleets: {len(small)} data dirs, {mb:,.0f} MB of segments; "
          f"{len(big)} data dirs, {mb_big:,.0f} MB")
    out = REPO / "fixtures" / "big" / "fleet-export"

    def export(k: Kmeta, dirs: list[Path]) -> float:
        shutil.rmtree(out, ignore_errors=True)
        try:
            return k.time(["export", "--master", f"local[{CORES}]", "--table", "batches",
                           "--table", "records", "--to", str(out), *map(str, dirs)],
                          ok=(0,))
        finally:
            shutil.rmtree(out, ignore_errors=True)

    for k in kmetas:
        single = min(k.time(["dump", "--json", "--records", *map(str, small)])
                     for _ in range(args.repeat))
        spark = min(export(k, small) for _ in range(args.repeat))
        spark_big = min(export(k, big) for _ in range(args.repeat))
        rate = mb / single
        gross = mb / spark / CORES
        steady = (mb_big - mb) / (spark_big - spark) / CORES
        fixed = spark - mb / (steady * CORES)
        print(f"{k.label}:")
        print(f"  kmeta dump --json --records, 1 process   {single:7.1f} s  {rate:6.1f} MB/s")
        print(f"  kmeta export, local[{CORES}], {len(small)} dirs          {spark:7.1f} s  "
              f"{mb / spark:6.1f} MB/s (wall {single / spark:.2f}x the single process)")
        print(f"  kmeta export, local[{CORES}], {len(big)} dirs          {spark_big:7.1f} s  "
              f"{mb_big / spark_big:6.1f} MB/s")
        print(f"  per core, gross ({len(small)} dirs)        {gross:6.1f} MB/s = "
              f"{gross / rate:.2f}x the single process (target >= 0.8x)")
        print(f"  per core, steady ({len(small)} more dirs)  {steady:6.1f} MB/s = "
              f"{steady / rate:.2f}x the single process (target >= 0.8x)")
        print(f"  paid once by every export: {fixed:.1f} s")


if __name__ == "__main__":
    main()
