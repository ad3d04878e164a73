"""kmeta on a broker the size of a real one: ``info``, ``verify`` and ``startup`` (where
this kmeta has it) on the generated broker of ``broker.py`` (4,000 partitions, 40,000
segment files by default), each as a whole process, best of ``--repeat``; with the lines
of its text report, which must fit two screens (issue 24: each within 3 s).

    python tests/bench/bench_broker.py [--partitions 4000] [--segments 10] [--repeat 2]
                                       [--damage N]

``--damage N``: the broker with a byte flipped in N partitions (``broker.py --damage``),
where verify has findings in N partitions to say in two screens.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from broker import generate  # noqa: E402

KMETA = [sys.executable, "-m", "kmeta"]
#: Two screens of an 80x24 terminal.
TWO_SCREENS = 48


def _run(args: list[str], env: dict[str, str]) -> tuple[float, int, int, int]:
    """Wall seconds, exit code, lines of stdout and the child's peak RSS (MB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, env=env)
    took = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return took, proc.returncode, len(proc.stdout.splitlines()), max(peak, before) // 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partitions", type=int, default=4000)
    ap.add_argument("--segments", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--damage", type=int, default=0, metavar="N")
    a = ap.parse_args()
    data = generate(a.partitions, a.segments, damaged=a.damage)
    env = {**os.environ, "COLUMNS": "80"}
    help_text = subprocess.run([*KMETA, "--help"], capture_output=True, text=True).stdout
    commands = [c for c in ("info", "verify", "startup") if f"  {c} " in help_text]
    print(f"broker: {a.partitions} partitions x {a.segments} segments ({data})")
    print("| command | best s | exit | lines (80 cols) | fits two screens | within 3 s |")
    print("|---|---|---|---|---|---|")
    for c in commands:
        runs = [_run([*KMETA, c, str(data)], env) for _ in range(a.repeat)]
        best = min(runs)
        print(f"| {c} | {best[0]:.2f} | {best[1]} | {best[2]} | "
              f"{'yes' if best[2] <= TWO_SCREENS else 'no'} | "
              f"{'yes' if best[0] <= 3 else 'no'} |")
    if "startup" in commands:
        # the same broker after a crash: its files hard-linked (nothing copied), without
        # the clean shutdown marker, so Kafka recovers every log from its recovery point
        crashed = _crashed(data)
        runs = [_run([*KMETA, "startup", str(crashed)], env) for _ in range(a.repeat)]
        best = min(runs)
        print(f"| startup (unclean) | {best[0]:.2f} | {best[1]} | {best[2]} | "
              f"{'yes' if best[2] <= TWO_SCREENS else 'no'} | "
              f"{'yes' if best[0] <= 3 else 'no'} |")


def _crashed(data: Path) -> Path:
    """``data`` hard-linked beside it without ``.kafka_cleanshutdown`` (made once)."""
    import shutil

    crashed = data.parent / "crashed"
    if not crashed.exists():
        shutil.copytree(data, crashed, copy_function=os.link)
        (crashed / ".kafka_cleanshutdown").unlink()
    return crashed


if __name__ == "__main__":
    main()
