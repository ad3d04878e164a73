"""``kmeta diff`` of two identical replicas against ``kmeta verify`` of one, in one run.

    python tests/bench/bench_diff.py [--size 1GiB] [--repeat 2]

The replica is the generated log in fixtures/big/SIZE (made once by
fixtures/generate.py); its twin is a byte copy in fixtures/big/SIZE-twin.  Both commands
run end to end as processes, interleaved, best of ``--repeat``.  Target: diff at least as
fast as verify: the replicas are compared by batch hash, and whole segment files
that are byte-identical are compared as files, so diff reads each byte once and decodes
nothing.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dump import big_log  # noqa: E402

KMETA = [sys.executable, "-m", "kmeta"]


def timed(cmd: list[str], ok: tuple[int, ...] = (0, 1)) -> float:
    t = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL)
    if done.returncode not in ok:
        raise SystemExit(f"{cmd} exited {done.returncode}")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="1GiB")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    log_dir = big_log(args.size)
    twin = REPO / "fixtures" / "big" / f"{args.size}-twin" / "__cluster_metadata-0"
    if not twin.is_dir():
        shutil.copytree(log_dir, twin)
    size = sum(f.stat().st_size for f in log_dir.glob("*.log"))
    best = {"verify": float("inf"), "diff": float("inf")}
    for _ in range(args.repeat):
        best["verify"] = min(best["verify"], timed(KMETA + ["verify", "--json",
                                                            str(log_dir)]))
        best["diff"] = min(best["diff"], timed(KMETA + ["diff", "--json", str(log_dir),
                                                        str(twin)], ok=(0,)))
    mb = size / 1e6
    print(f"replica: {log_dir} ({mb:,.0f} MB), twin: {twin}")
    print(f"  kmeta verify (one replica)       {best['verify']:8.2f} s  {mb / best['verify']:7.1f} MB/s")
    print(f"  kmeta diff (two replicas)        {best['diff']:8.2f} s  "
          f"{2 * mb / best['diff']:7.1f} MB/s read; "
          f"ratio {best['verify'] / best['diff']:.2f}x vs verify (target >= 1x)")


if __name__ == "__main__":
    main()
