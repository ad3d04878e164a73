"""``kmeta export`` on Spark ``local[2]`` against single-process ``kmeta dump --json``.

    python tests/bench/bench_export.py [--brokers 4] [--size 256MiB]

The input is a fleet of generated data dirs, fixtures/big/fleet/node-N (hard links to the
one generated log of SIZE, each with its own meta.properties: BROKERS brokers of one
cluster; 4 x 256 MiB is about 1.07 GB).  Both sides produce what ``dump --json --records``
does: the batches and the records.  Reported, from one run: wall times, throughput, and
Spark's throughput per core (input bytes / wall / 2) against the single process.
Targets: per core at least 0.5x the single process; total wall time below it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dump import big_log  # noqa: E402

KMETA = [sys.executable, "-m", "kmeta"]
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
    args = ap.parse_args()
    dirs = fleet(args.brokers, args.size)
    size = sum(f.stat().st_size for d in dirs for f in d.rglob("*.log"))
    mb = size / 1e6
    t = time.perf_counter()
    subprocess.run(KMETA + ["dump", "--json", "--records", *map(str, dirs)],
                   stdout=subprocess.DEVNULL, check=False)
    single = time.perf_counter() - t
    out = REPO / "fixtures" / "big" / "fleet-export"
    shutil.rmtree(out, ignore_errors=True)
    t = time.perf_counter()
    subprocess.run(KMETA + ["export", "--master", "local[2]", "--table", "batches",
                            "--table", "records", "--to", str(out), *map(str, dirs)],
                   stdout=subprocess.DEVNULL, check=True)
    spark = time.perf_counter() - t
    shutil.rmtree(out, ignore_errors=True)
    print(f"fleet: {len(dirs)} data dirs, {mb:,.0f} MB of segments")
    print(f"  kmeta dump --json --records (1 process)  {single:8.1f} s  {mb / single:6.1f} MB/s")
    print(f"  kmeta export, local[2] (batches+records) {spark:8.1f} s  {mb / spark:6.1f} MB/s; "
          f"{mb / spark / 2:.1f} MB/s per core = {single / spark / 2:.2f}x the single "
          f"process per core (target >= 0.5x); wall {single / spark:.2f}x (target > 1x)")


if __name__ == "__main__":
    main()
