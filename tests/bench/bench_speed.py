"""The speed table: each command on each input, kmeta now and kmeta before, against the peer.

    python tests/bench/bench_speed.py [--before REV] [--repeat 3] [--diff-size 1GiB]
                                      [--rss-size 1GiB] [--no-before]

Inputs: the generated metadata log (fixtures/big/256MiB, 268 MB) and a log built from the
real segments of ../shared/real (tests/bench/real_log.py, 128 MiB).  For each input the
peer (kafka-python's MemoryRecords iteration with the CRC of every batch checked and every
record touched, in process: tests/bench/peer.py) runs, then ``kmeta verify``, ``kmeta
dump --json`` and ``kmeta dump -r`` end to end as processes (output to /dev/null), each
with this tree's kmeta ("after") and with kmeta at ``--before`` ("before", checked out
into a git worktree and run from it).  Runs are interleaved and the best of ``--repeat``
kept: machines are noisy, compare the ratios.

Then the other commands that read a whole log (brokers, retention, image, info,
history, repair --dry-run, truncate), before and after, on the generated log; ``kmeta
diff`` of two identical replicas (a copy of the generated log of
``--diff-size``), before and after; the peak RSS of ``dump --json`` and ``verify`` on
the log of ``--rss-size``; and start-up, ``kmeta verify`` of an empty directory (best of
10).  Targets (issue 14): verify >= 15x the peer, dump --json >= 3.5x, dump -r >= 3x,
diff >= 2x before, peak RSS <= 100 MB, start-up <= 0.12 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import peer  # noqa: E402
from bench_dump import big_log, segments_of  # noqa: E402
from real_log import real_log  # noqa: E402

COMMANDS = {"verify": ["verify"], "dump --json": ["dump", "--json"], "dump -r": ["dump", "-r"]}
TARGETS = {"verify": 15.0, "dump --json": 3.5, "dump -r": 3.0}


class Kmeta:
    """One kmeta to run: this tree's, or a checkout of an older commit."""

    def __init__(self, label: str, tree: Path | None) -> None:
        self.label = label
        self.env = dict(os.environ)
        self.cwd = None
        if tree is not None:
            # Run from elsewhere, the checkout first on the path: ``-m kmeta`` then finds
            # the old package, not this tree's (nor the installed one).
            self.env["PYTHONPATH"] = str(tree)
            self.cwd = tempfile.gettempdir()

    def time(self, args: list[str], ok: tuple[int, ...] = (0, 1)) -> float:
        t = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "kmeta", *args], cwd=self.cwd,
                              env=self.env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        if done.returncode not in ok:
            raise SystemExit(f"kmeta {' '.join(args)} ({self.label}) exited "
                             f"{done.returncode}")
        return time.perf_counter() - t

    def peak_rss(self, args: list[str]) -> float:
        """MB, of a fresh parent whose only child is this kmeta."""
        probe = ("import resource, subprocess, sys\n"
                 "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
                 "stderr=subprocess.DEVNULL)\n"
                 "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
        out = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "kmeta",
                              *args], cwd=self.cwd, env=self.env, capture_output=True,
                             text=True, check=True).stdout
        return int(out.split()[-1]) / 1024


def before_tree(rev: str) -> Path:
    """A checkout of ``rev`` with its compiled core built in place, as ``pip install``
    builds it (without it "before" would be the pure-Python reference)."""
    tree = Path(tempfile.gettempdir()) / f"kmeta-before-{rev}"
    if not (tree / "kmeta").is_dir():
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--force", "--detach",
                        str(tree), rev], check=True, capture_output=True)
    if (tree / "setup.py").is_file() and not list((tree / "kmeta" / "formats").glob("_runs*.so")):
        subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tree,
                       check=True, capture_output=True)
    return tree


def peer_seconds(files: list[Path]) -> float:
    t = time.perf_counter()
    for f in files:
        peer.iterate(f.read_bytes())
    return time.perf_counter() - t


def table(inputs: dict[str, Path], kmetas: list[Kmeta], repeat: int) -> None:
    print("| command | input | kmeta | seconds | MB/s | peer MB/s | x peer | target |")
    print("|---|---|---|---|---|---|---|---|")
    for name, log_dir in inputs.items():
        files = segments_of(log_dir)
        mb = sum(f.stat().st_size for f in files) / 1e6
        best: dict[tuple[str, str], float] = {}
        peer_best = float("inf")
        for _ in range(repeat):  # interleaved: a noisy moment hurts every side alike
            peer_best = min(peer_best, peer_seconds(files))
            for command, args in COMMANDS.items():
                for k in kmetas:
                    key = (command, k.label)
                    best[key] = min(best.get(key, float("inf")), k.time([*args, str(log_dir)]))
        for command in COMMANDS:
            for k in kmetas:
                t = best[(command, k.label)]
                print(f"| {command} | {name} ({mb:,.0f} MB) | {k.label} | {t:.2f} | "
                      f"{mb / t:,.1f} | {mb / peer_best:,.1f} | {peer_best / t:.2f}x | "
                      f">= {TARGETS[command]}x |")


#: the other commands that read a whole log, on the generated one (metadata partition)
OTHERS = {"brokers --json": ["brokers", "--json"], "retention --json": ["retention", "--json"],
          "image --json": ["image", "--json"], "info --json": ["info", "--json"],
          "history --broker 1": ["history", "--json", "--broker", "1"],
          "repair --dry-run": ["repair", "--dry-run", "--json"],
          "truncate --to 3000000": ["truncate", "--json", "--to", "3000000"]}


def others_table(log_dir: Path, kmetas: list[Kmeta], repeat: int) -> None:
    print("| command (268 MB generated log) | " + " | ".join(k.label for k in kmetas) +
          " | as fast |")
    print("|---" * (len(kmetas) + 2) + "|")
    for name, args in OTHERS.items():
        times = {k.label: min(k.time([*args, str(log_dir)]) for _ in range(repeat))
                 for k in kmetas}
        row = " | ".join(f"{times[k.label]:.2f} s" for k in kmetas)
        ratio = f"{times[kmetas[0].label] / times[kmetas[-1].label]:.1f}x" \
            if len(kmetas) == 2 else "-"
        print(f"| {name} | {row} | {ratio} |")


def diff_row(size: str, kmetas: list[Kmeta], repeat: int) -> None:
    log_dir = big_log(size)
    twin = REPO / "fixtures" / "big" / f"{size}-twin" / "__cluster_metadata-0"
    if not twin.is_dir():
        shutil.copytree(log_dir, twin)
    mb = sum(f.stat().st_size for f in segments_of(log_dir)) / 1e6
    times = {k.label: min(k.time(["diff", "--json", str(log_dir), str(twin)])
                          for _ in range(repeat)) for k in kmetas}
    for k in kmetas:
        print(f"diff of two identical {mb:,.0f} MB replicas, {k.label}: "
              f"{times[k.label]:.2f} s ({2 * mb / times[k.label]:,.0f} MB/s read)")
    if len(kmetas) == 2:
        print(f"  diff after vs before: {times[kmetas[0].label] / times[kmetas[1].label]:.2f}x"
              " as fast (target >= 2x)")


def rss_rows(size: str, kmetas: list[Kmeta]) -> None:
    log_dir = big_log(size)
    for args in (["dump", "--json"], ["verify"], ["dump", "-r"]):
        for k in kmetas:
            print(f"peak RSS of kmeta {' '.join(args)} on {size} ({k.label}): "
                  f"{k.peak_rss([*args, str(log_dir)]):.0f} MB (target <= 100 MB)")


def startup_rows(kmetas: list[Kmeta]) -> None:
    with tempfile.TemporaryDirectory() as empty:
        for k in kmetas:
            # exit 3: nothing to check there, which is the answer
            t = min(k.time(["verify", empty], ok=(3,)) for _ in range(10))
            print(f"start-up, kmeta verify of an empty dir ({k.label}): {t:.3f} s "
                  "(target <= 0.12 s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", default="78b328e", help="the commit to compare with")
    ap.add_argument("--no-before", action="store_true", help="this tree only")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--diff-size", default="1GiB")
    ap.add_argument("--rss-size", default="1GiB")
    ap.add_argument("--only", choices=["table", "others", "diff", "rss", "startup"],
                    help="run one part only")
    args = ap.parse_args()
    kmetas = [Kmeta("after", None)]
    if not args.no_before:
        kmetas.insert(0, Kmeta(f"before ({args.before})", before_tree(args.before)))
    version = subprocess.run([sys.executable, "-m", "kmeta", "--version"], capture_output=True,
                             text=True, check=True).stdout.strip()
    print(f"after: {version}\n")
    parts = {
        "table": lambda: table({"generated": big_log("256MiB"), "real": real_log("128MiB")},
                               kmetas, args.repeat),
        "others": lambda: others_table(big_log("256MiB"), kmetas, max(1, args.repeat - 1)),
        "diff": lambda: diff_row(args.diff_size, kmetas, max(1, args.repeat - 1)),
        "rss": lambda: rss_rows(args.rss_size, kmetas),
        "startup": lambda: startup_rows(kmetas),
    }
    for name, run in parts.items():
        if args.only in (None, name):
            run()
            print()


if __name__ == "__main__":
    main()
