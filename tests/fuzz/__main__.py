"""``python -m tests.fuzz --minutes 60 [--seed N] [--out DIR]``: a long campaign by hand.

Prints the outcome counts per class and saves every failing input (up to 20 of one
failure signature), its command and its outcome under DIR (default ./fuzz-out), one folder
per failure with case.json, stderr.txt and repro.sh; the first of each signature also
minimised (minimal/).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from .campaign import Campaign
from .hostile import run_hostile
from .seeds import all_seeds


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n")[0])
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=Path("fuzz-out"))
    p.add_argument("--first", type=int, default=0, help="index of the first case")
    p.add_argument("--cases", type=int, default=None, help="stop after this many cases")
    p.add_argument("--commands-per-case", type=int, default=None,
                   help="run verify and N-1 other commands per case (default: all)")
    p.add_argument("--subprocess-every", type=int, default=25,
                   help="run every Nth case's commands as limited subprocesses "
                   "(prlimit) instead of in-process; 0: never")
    p.add_argument("--terminal-every", type=int, default=9,
                   help="run every Nth case's commands once more in a pseudo-terminal "
                   "(80x24, the bar and colours on); 0: never")
    p.add_argument("--seeds", default="", metavar="TEXT[,TEXT]",
                   help="only the seed inputs whose name holds one of these, e.g. "
                   "real/,healthy (default: all; names: real/<dir>, fixtures/<dir>)")
    p.add_argument("--heavy", action="store_true",
                   help="also the commands that start Spark (export --format json)")
    p.add_argument("--no-hostile", action="store_true")
    p.add_argument("--no-minimise", action="store_true")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kmeta-fuzz-") as tmp:
        wanted = [w for w in args.seeds.split(",") if w]
        seeds = [s for s in all_seeds() if not wanted or any(w in s.name for w in wanted)]
        if not seeds:
            p.error(f"no seed input matches {args.seeds!r}")
        camp = Campaign(args.seed, Path(tmp), args.out, seeds=seeds,
                        commands_per_case=args.commands_per_case,
                        minimise=not args.no_minimise,
                        subprocess_every=args.subprocess_every,
                        terminal_every=args.terminal_every, heavy=args.heavy,
                        log=lambda s: print(s, file=sys.stderr, flush=True))
        if not args.no_hostile:
            run_hostile(camp)
        stats = camp.run(seconds=args.minutes * 60, cases=args.cases, first=args.first)
    print(stats.summary())
    print(f"failures saved under {args.out}")
    return 1 if stats.failures else 0


if __name__ == "__main__":
    sys.exit(main())
