"""kmeta against its peer, in one run, on the same inputs; prints throughputs and ratios.

    python tests/bench/bench_dump.py [--big PATH] [--repeat N] [--rss-gib 1]

(a) the peer: kafka-python's MemoryRecords iteration with CRC validation of every
    batch, touching every record (tests/bench/peer.py), in process;
(b) kmeta in process: scan every batch (CRC checked) and decode every record's
    payload into fields;
(c) ``kmeta dump --json FILE > /dev/null`` end to end, against the peer run end to end
    as a process (startup, reading and iterating) on the same file;
(d) ``kmeta verify --json DIR`` end to end: CRC, decode, every check, image replay;
(e) ``kmeta brokers --json DIR`` end to end: the replay with every broker's lifecycle,
    which must keep up with (d);
(f) ``kmeta retention --json DIR`` end to end: snapshots, segments, startup and retention,
    which must keep up with (d) too.

Inputs: the real ldi-poc metadata segment (KMETA_REAL_DATA or ../shared/real) and a
generated log of at least 200 MB (``--big``; by default generated once into
fixtures/big/ with fixtures/generate.py).  Runs are interleaved and the best of
``--repeat`` is kept: machines are noisy, so compare ratios, not seconds.
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

import peer  # noqa: E402

from kmeta.findings import Finding  # noqa: E402
from kmeta.formats.payload import decode_control, decode_metadata  # noqa: E402
from kmeta.storage.segments import mapped, scan_records  # noqa: E402

KMETA = [sys.executable, "-m", "kmeta"]


def real_segment() -> Path:
    base = Path(os.environ.get("KMETA_REAL_DATA") or REPO.parent / "shared" / "real")
    return base / "ldi-poc" / "__cluster_metadata-0" / "00000000000000000000.log"


def big_log(size: str) -> Path:
    out = REPO / "fixtures" / "big" / size
    log_dir = out / "__cluster_metadata-0"
    if not log_dir.is_dir():
        subprocess.run([sys.executable, str(REPO / "fixtures" / "generate.py"), "--size", size,
                        "--out", str(out)], check=True)
    return log_dir


def segments_of(path: Path) -> list[Path]:
    return sorted(path.glob("*.log")) if path.is_dir() else [path]


def run_peer(files: list[Path]) -> int:
    n = 0
    for f in files:
        n += peer.iterate(f.read_bytes())
    return n


def run_kmeta(files: list[Path]) -> int:
    """Every record with its batch and decoded payload (scan's one-loop triple mode)."""
    n = 0
    for f in files:
        with mapped(f) as buf:
            for item in scan_records(buf, str(f), decode_metadata, decode_control):
                if type(item) is Finding:
                    raise SystemExit(f"finding in benchmark input: {item}")
                n += 1
    return n


def best_of(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def wall(cmd: list[str], stdout=subprocess.DEVNULL, check: bool = True) -> float:
    # stderr too: the findings verify and brokers report are not the benchmark's output
    t = time.perf_counter()
    subprocess.run(cmd, check=check, stdout=stdout, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def bench_input(name: str, path: Path, repeat: int) -> None:
    files = segments_of(path)
    size = sum(f.stat().st_size for f in files)
    mb = size / 1e6
    results: dict[str, float] = {}
    counts = {}
    for _ in range(repeat):  # interleaved: a noisy moment hurts both sides alike
        for key, fn in (("a", lambda: run_peer(files)), ("b", lambda: run_kmeta(files))):
            t, n = best_of(fn, 1)
            results[key] = min(results.get(key, float("inf")), t)
            counts[key] = n
        part_dir = path if path.is_dir() else path.parent
        for key, cmd in (("peer_e2e", [sys.executable, str(Path(__file__).parent / "peer.py"),
                                       *map(str, files)]),
                         ("c", KMETA + ["dump", "--json", str(path)]),
                         ("d", KMETA + ["verify", "--json", str(part_dir)]),
                         ("e", KMETA + ["brokers", "--json", str(part_dir)]),
                         ("f", KMETA + ["retention", "--json", str(part_dir)])):
            t = wall(cmd, check=key not in ("d", "e", "f"))
            results[key] = min(results.get(key, float("inf")), t)
    assert counts["a"] == counts["b"], counts
    print(f"\n{name}: {path} ({mb:,.1f} MB, {counts['a']:,} records)")
    print(f"  (a) peer, kafka-python iterate+CRC      {results['a']:8.3f} s {mb / results['a']:8.1f} MB/s")
    print(f"  (b) kmeta scan+CRC+decode, in process  {results['b']:8.3f} s {mb / results['b']:8.1f} MB/s"
          f"   ratio {results['a'] / results['b']:.2f}x  (target >= 3x)")
    print(f"  (c) kmeta dump --json > /dev/null      {results['c']:8.3f} s {mb / results['c']:8.1f} MB/s"
          f"   ratio {results['a'] / results['c']:.2f}x vs (a)  (target >= 1.3x)")
    print(f"      peer as a process, end to end      {results['peer_e2e']:8.3f} s"
          f"   ratio {results['peer_e2e'] / results['c']:.2f}x vs kmeta end to end")
    print(f"  (d) kmeta verify (all checks, replay)  {results['d']:8.3f} s {mb / results['d']:8.1f} MB/s"
          f"   ratio {results['a'] / results['d']:.2f}x vs (a)  (target >= 2.5x); "
          f"{results['peer_e2e'] / results['d']:.2f}x vs the peer's process")
    print(f"  (e) kmeta brokers (replay, lifecycles) {results['e']:8.3f} s {mb / results['e']:8.1f} MB/s"
          f"   {results['d'] / results['e']:.2f}x verify's speed (target >= 1x); "
          f"{results['peer_e2e'] / results['e']:.2f}x vs the peer's process")
    print(f"  (f) kmeta retention (snapshots, rules) {results['f']:8.3f} s {mb / results['f']:8.1f} MB/s"
          f"   {results['d'] / results['f']:.2f}x verify's speed (target >= 1x); "
          f"{results['peer_e2e'] / results['f']:.2f}x vs the peer's process")


def bench_help(repeat: int) -> None:
    t = min(wall(KMETA + ["--help"]) for _ in range(max(repeat, 3)))
    probe = subprocess.run(
        [sys.executable, "-c", "import sys\nfrom kmeta.cli import main\n"
         "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
         "print('pyspark' in sys.modules, file=sys.stderr)"],
        capture_output=True, text=True, check=True)
    print(f"\nkmeta --help: {t:.3f} s (target < 0.5 s); imports pyspark: "
          f"{probe.stderr.strip().splitlines()[-1]}")


def bench_rss(size: str) -> None:
    for command in (["dump", "--json"], ["verify", "--json"], ["brokers", "--json"],
                    ["retention", "--json"]):
        _rss(size, command)


def _rss(size: str, command: list[str]) -> None:
    path = big_log(size)
    # A fresh parent whose only child is kmeta: RUSAGE_CHILDREN is then kmeta's own peak
    # (this process's children include the generator).
    probe = ("import resource, subprocess, sys, time\n"
             "t = time.perf_counter()\n"
             "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,"
             " time.perf_counter() - t)")
    probe = probe.replace("check=True", "check=False")  # verify exits 1 on findings
    out = subprocess.run([sys.executable, "-c", probe, *KMETA, *command, str(path)],
                         check=True, capture_output=True, text=True).stdout.split()
    peak_kb, t = int(out[0]), float(out[1])
    total = sum(f.stat().st_size for f in segments_of(path)) / 2**30
    target = {"dump": 200, "verify": 300, "brokers": 150, "retention": 150}[command[0]]
    print(f"\nRSS of kmeta {' '.join(command)} on {total:.2f} GiB: peak {peak_kb / 1024:.0f} MB "
          f"(target < {target} MB; {t:.1f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--big", type=Path, help="a generated metadata log (dir or segment), >= 200 MB")
    ap.add_argument("--big-size", default="256MiB", help="size to generate when --big is absent")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rss-size", default=None, help="also measure peak RSS on a log this big "
                    "(e.g. 1GiB), generated when absent")
    args = ap.parse_args()
    bench_help(args.repeat)
    bench_input("real ldi-poc segment", real_segment(), max(args.repeat, 5))
    bench_input("generated log", args.big or big_log(args.big_size), args.repeat)
    if args.rss_size:
        bench_rss(args.rss_size)


if __name__ == "__main__":
    main()
