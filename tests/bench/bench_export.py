"""``kmeta export`` on Spark ``local[2]`` against single-process ``kmeta dump --json``.

    python tests/bench/bench_export.py [--brokers 4] [--size 256MiB]

The input is a fleet of generated data dirs, fixtures/big/fleet/node-N (hard links to the
one generated log of SIZE, each with its own meta.properties: BROKERS brokers of one
cluster; 4 x 256 MiB is about 1.07 GB).  Both sides produce what ``dump --json --records``
does: the batches and the records.  Reported, from one run: wall times, throughput, and
Spark's throughput per core (input bytes / wall / 2) against the single process.
Targets: per core at least 0.8x the single process; total wall time below it.
``--before REV`` runs both with kmeta at an older commit too (bench_speed.Kmeta).
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--brokers", type=int, default=4)
    ap.add_argument("--size", default="256MiB")
    ap.add_argument("--before", default=None,
                    help="also run kmeta at this commit (checked out into a git worktree)")
    args = ap.parse_args()
    dirs = fleet(args.brokers, args.size)
    size = sum(f.stat().st_size for d in dirs for f in d.rglob("*.log"))
    mb = size / 1e6
    kmetas = [Kmeta("after", None)]
    if args.before:
        kmetas.insert(0, Kmeta(f"before ({args.before})", before_tree(args.before)))
    print(f"fleet: {len(dirs)} data dirs, {mb:,.0f} MB of segments")
    out = REPO / "fixtures" / "big" / "fleet-export"
    for k in kmetas:
        single = k.time(["dump", "--json", "--records", *map(str, dirs)])
        shutil.rmtree(out, ignore_errors=True)
        spark = k.time(["export", "--master", "local[2]", "--table", "batches", "--table",
                        "records", "--to", str(out), *map(str, dirs)], ok=(0,))
        shutil.rmtree(out, ignore_errors=True)
        print(f"{k.label}:")
        print(f"  kmeta dump --json --records (1 process)  {single:8.1f} s  "
              f"{mb / single:6.1f} MB/s")
        print(f"  kmeta export, local[2] (batches+records) {spark:8.1f} s  "
              f"{mb / spark:6.1f} MB/s; {mb / spark / 2:.1f} MB/s per core = "
              f"{single / spark / 2:.2f}x the single process per core (target >= 0.8x); "
              f"wall {single / spark:.2f}x (target > 1x)")


if __name__ == "__main__":
    main()
