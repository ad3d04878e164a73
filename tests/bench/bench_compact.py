"""``kmeta compact`` against ``kmeta dump`` and the peer, in one run, on a generated keyed
topic; prints the throughputs, the ratio and the peak RSS with the bytes per distinct key.

    python tests/bench/bench_compact.py [--size 1GiB] [--keys 1000000] [--repeat 2]

The input is written once by kmeta's writer into fixtures/big/compact-<size>-<keys>/:
``orders-0`` with records of ~100-byte values over ``--keys`` distinct keys (a quarter of
the writes update a recent key, the rest draw uniformly), 1% tombstones, batches of 1-20
records, 256 MiB segments.  Stages, interleaved, best of ``--repeat``:

- the peer: kafka-python iterating every record with CRC checks (tests/bench/peer.py);
- ``kmeta dump --json PARTITION > /dev/null``;
- ``kmeta compact --json --roll PARTITION``: the header pass, the map over the dirty range
  (the whole log with --roll) and the round over the log;
- peak RSS of compact (``resource.getrusage`` of a child of its own), on this input and
  on one of the same size with a tenth of the keys: the difference over the difference
  in distinct keys is the bytes each key costs (the mapped segments and the interpreter
  weigh the same in both).

Target (issue 13): compact at least half of dump's throughput; RSS bounded by the keys.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from kmeta.formats.batch import build_batch  # noqa: E402
from kmeta.storage import writer as W  # noqa: E402

KMETA = [sys.executable, "-m", "kmeta"]
T0 = 1_700_000_000_000


def parse_size(text: str) -> int:
    units = {"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "kb": 10**3, "mb": 10**6,
             "gb": 10**9}
    t = text.strip().lower()
    for unit, factor in sorted(units.items(), key=lambda u: -len(u[0])):
        if t.endswith(unit):
            return int(float(t[:-len(unit)]) * factor)
    return int(t)


def generate(size: int, keys: int) -> Path:
    out = REPO / "fixtures" / "big" / f"compact-{size}-{keys}" / "orders-0"
    if (out / "00000000000000000000.log").is_file():
        return out
    rng = random.Random(size ^ keys)
    value = bytes(rng.randrange(32, 127) for _ in range(100))
    offset = total = 0
    recent: list[bytes] = []

    def batches():
        nonlocal offset, total
        while total < size:
            recs = []
            for _ in range(rng.randrange(1, 21)):
                if recent and rng.random() < 0.25:
                    key = rng.choice(recent)
                else:
                    key = b"key-%09d" % rng.randrange(keys)
                    recent.append(key)
                    if len(recent) > 1000:
                        recent.pop(0)
                recs.append((key, None if rng.random() < 0.01 else value))
            b = build_batch(offset, recs, leader_epoch=0, base_timestamp=T0 + offset)
            offset += len(recs)
            total += len(b)
            yield b

    W.write_segments(out, batches(), segment_bytes=256 << 20)
    return out


#: runs a command and prints its peak RSS (KiB): each measurement in a fresh process, so
#: one stage's peak is not another's
_PEAK = ("import resource, subprocess, sys; "
         "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, "
         "stderr=subprocess.DEVNULL); "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def timed(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and the command's own peak RSS (bytes)."""
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _PEAK, *cmd], check=True,
                         capture_output=True, text=True)
    return time.perf_counter() - t, int(out.stdout.strip()) * 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="1GiB")
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    part = generate(parse_size(args.size), args.keys)
    fewer = generate(parse_size(args.size), max(args.keys // 10, 1))
    files = sorted(part.glob("*.log"))
    mb = sum(f.stat().st_size for f in files) / 1e6
    stages = {
        "peer": [sys.executable, str(Path(__file__).parent / "peer.py"), *map(str, files)],
        "dump": KMETA + ["dump", "--json", str(part)],
        "compact": KMETA + ["compact", "--json", "--roll", str(part)],
        "compact, a tenth of the keys": KMETA + ["compact", "--json", "--roll", str(fewer)],
    }
    best: dict[str, float] = {}
    rss = rss_fewer = 0
    for _ in range(args.repeat):
        for name, cmd in stages.items():
            wall, peak = timed(cmd)
            best[name] = min(best.get(name, float("inf")), wall)
            if name == "compact":
                rss = max(rss, peak)
            elif name.startswith("compact,"):
                rss_fewer = max(rss_fewer, peak)
    keys, keys_fewer = distinct(part), distinct(fewer)
    print(f"input: {part} ({mb:,.1f} MB, {keys:,} distinct keys)")
    for name in stages:
        print(f"  {name:<30} {best[name]:8.1f} s {mb / best[name]:8.1f} MB/s")
    print(f"  compact / dump throughput: {best['dump'] / best['compact']:.2f}x "
          f"(target >= 0.5x); compact vs the peer's process: "
          f"{best['peer'] / best['compact']:.2f}x")
    print(f"  compact's peak RSS {rss / 2**20:,.0f} MiB with {keys:,} keys, "
          f"{rss_fewer / 2**20:,.0f} MiB with {keys_fewer:,}: about "
          f"{(rss - rss_fewer) / max(keys - keys_fewer, 1):,.0f} bytes per distinct key")


def distinct(part: Path) -> int:
    """The distinct keys of the partition, as compact's map counts them."""
    import json

    out = subprocess.run(KMETA + ["compact", "--json", "--roll", str(part)], check=True,
                         capture_output=True, text=True).stdout
    return next(json.loads(line)["keys"] for line in out.splitlines()
                if '"kind":"compact_strategy"' in line)


if __name__ == "__main__":
    main()
