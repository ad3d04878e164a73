"""``kmeta report`` against ``kmeta verify`` on the same input, in one run (issue 25: the
report reads each file once and feeds every analysis from that pass).

    python tests/bench/bench_report.py [--size 256MiB] [--shaped 128MiB] [--repeat 3]
                                       [--only one,replicas,shaped,broker]

Four inputs, written by kmeta's writer into fixtures/big/ (git-ignored, reused):

- **one log**: the generated metadata log (``bench_dump.big_log``, 268 MB at 256MiB) in
  its data dir, mostly NoOp heartbeats.  Target: report <= 1.5x verify.
- **three replicas**: three data dirs of that log (copies of its files, as replicas on
  three machines are, each with its own meta.properties: node 1, 2, 3).  Target: report
  <= 1.5x verify of the three.
- **a busy cluster's log** (``shaped_log.py``, about 117 MB at 128MiB): small batches of
  every record type, hundreds of topics, a log start no snapshot covers and snapshots
  older than it.  Target: report <= 1.5x verify.
- **a broker** (``broker.py``: 4,000 partitions, 40,000 segments, 2.2 GB).  Target:
  report <= 1.5x verify.

Whole processes, interleaved, the best of ``--repeat`` kept; compare the ratios.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from bench_dump import big_log  # noqa: E402

KMETA = [sys.executable, "-m", "kmeta"]


def wall(cmd: list[str]) -> float:
    t = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr[-500:]!r}")
    return time.perf_counter() - t


def replicas(data_dir: Path, count: int = 3) -> list[Path]:
    """``count`` data dirs holding the same log under their own node ids."""
    from kmeta.storage.discover import meta_properties_at
    from kmeta.storage.files import load_checked
    from kmeta.storage.writer import write_meta_properties

    out = REPO / "fixtures" / "big" / f"{data_dir.name}-copies{count}"
    dirs = [out / f"node-{k}" for k in range(1, count + 1)]
    if all((d / "__cluster_metadata-0").is_dir() for d in dirs):
        return dirs
    shutil.rmtree(out, ignore_errors=True)
    meta, _ = load_checked(meta_properties_at(data_dir))
    for k, d in enumerate(dirs, 1):
        d.mkdir(parents=True)
        for name in ("__cluster_metadata-0",):
            shutil.copytree(data_dir / name, d / name)
        write_meta_properties(d, dataclasses.replace(meta, node_id=k), durable=False)
    return dirs


def compare(label: str, paths: list[Path], repeat: int) -> None:
    report = verify = float("inf")
    for _ in range(repeat):
        verify = min(verify, wall(KMETA + ["verify", *map(str, paths)]))
        report = min(report, wall(KMETA + ["report", *map(str, paths)]))
    size = sum(f.stat().st_size for p in paths for f in p.rglob("*.log"))
    print(f"{label} ({size / 1e6:,.0f} MB, {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.1f})")
    print(f"  kmeta verify  {verify:6.2f} s")
    print(f"  kmeta report  {report:6.2f} s   {report / verify:.2f}x verify (target <= 1.5x)")


def broker_dir() -> Path:
    """The generated broker of bench_broker.py and bench_verify.py (built once)."""
    import broker

    return broker.generate(4000, 10)


def main() -> None:
    from shaped_log import shaped_log

    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="256MiB")
    ap.add_argument("--shaped", default="128MiB")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="one,replicas,shaped,broker")
    args = ap.parse_args()
    only = set(args.only.split(","))
    if only & {"one", "replicas"}:
        data_dir = big_log(args.size).parent
        if "one" in only:
            compare("one metadata log", [data_dir], args.repeat)
        if "replicas" in only:
            compare("three replicas of it", replicas(data_dir), args.repeat)
    if "shaped" in only:
        compare("a busy cluster's metadata log", [shaped_log(args.shaped)], args.repeat)
    if "broker" in only:
        compare("a broker of 4,000 partitions", [broker_dir()], args.repeat)


if __name__ == "__main__":
    main()
