"""``python -m tools.docs --write | --check | --man``, from the repository root."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tools.docs import ROOT, DocsError
from tools.docs.generated import stale_files, write
from tools.docs.manpage import man_page


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.docs",
        description="Generate kmeta's man page and shell completion scripts from its CLI.")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate the files")
    mode.add_argument("--check", action="store_true",
                      help="exit 1 when a checked-in file differs from what would be "
                           "generated")
    mode.add_argument("--man", action="store_true", help="print the man page on stdout")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help=f"repository root holding man/ and completions/ (default: "
                             f"{ROOT})")
    args = parser.parse_args(argv)
    try:
        if args.man:
            sys.stdout.write(man_page())
            return 0
        if args.write:
            for rel in write(args.root):
                print(f"wrote {rel}")
            return 0
        stale = stale_files(args.root)
    except DocsError as e:
        print(f"tools.docs: {e}", file=sys.stderr)
        return 2
    for diff in stale.values():
        print(diff, file=sys.stderr)
    if stale:
        print(f"tools.docs: {len(stale)} generated file(s) out of date: "
              f"{', '.join(map(str, stale))}; run python -m tools.docs --write",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
