"""The shell's time machine (issue 26, point 4) on the generated 268 MB log, in one run.

    python tests/bench/bench_shell.py [--size 256MiB | --log DIR] [--points 20] [--peers 4]
                                      [--seed 26]

- ``Timeline.open`` of the log (``kmeta.ops.replay.timeline``): the index pass and the replay
  that keeps checkpoints, in process;
- ``image_at`` of ``--points`` random offsets (and the log end): max and median
  (target: any < 1 s);
- the peer figure: ``kmeta image --at OFFSET --json`` as a process for ``--peers`` of the
  same offsets, each replaying from the latest snapshot below it or from offset 0, and
  whether its digest is the timeline's;
- a copy of the image (``MetadataImage.copy``) and how many checkpoints were kept;
- the shell's own commands over the same timeline (``kmeta.shell.session.Session``, what
  a prompt or ``-c`` runs, their replies taken whole): ``at`` to each of the offsets,
  then ``diff`` between ``--points`` random pairs (targets: any ``at`` < 1 s, any
  ``diff`` < 2 s); and ``kmeta shell -c 'at OFFSET'`` as a process (opening included);
- with ``--replicas DIR`` (by default the ``<size>-copies3`` dir beside the log's data
  dir, where ``bench_diff.py`` made three copies of it): every replica under DIR opened
  as :class:`kmeta.ops.replay.timeline.Replicas`, as ``kmeta shell`` opens several;
- the peak RSS of this process (``resource.getrusage``), which holds the timelines
  (target: < 300 MB).

The log is made once by ``fixtures/generate.py`` into fixtures/big/ (git-ignored) and
reused; ``--log`` names one made before (another checkout's fixtures/big/256MiB/
__cluster_metadata-0) instead.  Machines are noisy: compare the ratios.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from bench_dump import big_log  # noqa: E402

from kmeta.ops.replay import Replicas, Timeline  # noqa: E402
from kmeta.shell.commands import run_line  # noqa: E402
from kmeta.shell.replies import texts  # noqa: E402
from kmeta.shell.session import Session  # noqa: E402

KMETA = [sys.executable, "-m", "kmeta"]


def peer_image(log: Path, offset: int) -> tuple[float, str]:
    """``kmeta image --at`` as a process: seconds, and the digest it prints."""
    t = time.perf_counter()
    done = subprocess.run(KMETA + ["image", str(log), "--at", str(offset), "--json"],
                          capture_output=True, text=True, check=False)
    took = time.perf_counter() - t
    if done.returncode not in (0, 1):
        raise SystemExit(f"kmeta image --at {offset} exited {done.returncode}: "
                         f"{done.stderr.strip()}")
    digest = ""
    for line in done.stdout.splitlines():
        obj = json.loads(line)
        if obj.get("kind") == "image":
            digest = obj.get("digest", "")
    return took, digest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="256MiB")
    ap.add_argument("--points", type=int, default=20)
    ap.add_argument("--peers", type=int, default=4)
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--log", type=Path, help="a metadata log to use instead of --size's")
    ap.add_argument("--replicas", type=Path, help="a dir of replicas' data dirs to open too")
    args = ap.parse_args()
    log = args.log.resolve() if args.log else big_log(args.size)
    size = sum(f.stat().st_size for f in log.glob("*.log"))

    t = time.perf_counter()
    tl = Timeline.open(log)
    opened = time.perf_counter() - t
    index = tl.index
    assert index is not None
    print(f"log {log}: {size / 1e6:,.0f} MB, {index.batches:,} batches "
          f"({len(index):,} index entries), offsets {tl.start:,}..{tl.end:,}, "
          f"{len(tl.snapshots())} snapshots")
    print(f"  Timeline.open                  {opened:7.2f} s ({size / 1e6 / opened:,.0f} MB/s),"
          f" {tl.checkpoints} checkpoints ({tl.checkpoint_bytes / 1e6:.1f} MB pickled)")

    rng = random.Random(args.seed)
    offsets = [rng.randint(tl.start, tl.end) for _ in range(args.points - 1)] + [tl.end]
    took: dict[int, float] = {}
    digests: dict[int, str] = {}
    for offset in offsets:
        t = time.perf_counter()
        image, _ = tl.image_at(offset)
        took[offset] = time.perf_counter() - t
        digests[offset] = image.digest()
    times = list(took.values())
    print(f"  image_at, {len(offsets)} offsets         max {max(times):.3f} s, median "
          f"{statistics.median(times):.3f} s (target: any < 1 s)")

    t = time.perf_counter()
    image.copy()
    print(f"  MetadataImage.copy (end image) {time.perf_counter() - t:7.4f} s "
          f"({len(image.topics)} topics, "
          f"{sum(len(x['partitions']) for x in image.topics.values())} partitions)")

    for offset in rng.sample(offsets, min(args.peers, len(offsets))):
        peer_s, digest = peer_image(log, offset)
        same = "same digest" if digest == digests[offset] else \
            f"DIGEST DIFFERS ({digest[:12]} vs {digests[offset][:12]})"
        print(f"  kmeta image --at {offset:>9,} (process) {peer_s:6.2f} s; image_at "
              f"{took[offset]:.3f} s: {peer_s / max(took[offset], 1e-9):5.0f}x, {same}")

    session = Session(Replicas({"log": tl}))

    def command(line: str) -> float:
        """Seconds to run a line and take its replies whole, as a script's loop does."""
        t = time.perf_counter()
        for reply in run_line(session, line):
            status = [0]
            for _ in texts(reply, False, status):
                pass
            if status[0] not in (0, 1):
                raise SystemExit(f"{line}: status {status[0]}")
        return time.perf_counter() - t

    ats = [command(f"at {offset}") for offset in offsets]
    print(f"  shell: at, {len(ats)} offsets            max {max(ats):.3f} s, median "
          f"{statistics.median(ats):.3f} s (target: any < 1 s)")
    pairs = [(rng.randint(tl.start, tl.end), rng.randint(tl.start, tl.end))
             for _ in range(args.points)]
    diffs = [command(f"diff {a} {b}") for a, b in pairs]
    print(f"  shell: diff, {len(diffs)} pairs           max {max(diffs):.3f} s, median "
          f"{statistics.median(diffs):.3f} s (target: any < 2 s)")
    t = time.perf_counter()
    subprocess.run(KMETA + ["shell", str(log), "-c", f"at {offsets[0]}; ls /image/topics"],
                   capture_output=True, check=True)
    print(f"  kmeta shell -c 'at …' (process, opening included) "
          f"{time.perf_counter() - t:6.2f} s")

    copies = args.replicas or log.parent.parent / f"{log.parent.name}-copies3"
    if copies.is_dir():
        homes = sorted(p for p in copies.iterdir() if p.is_dir())
        t = time.perf_counter()
        reps = Replicas.open(homes)
        both = time.perf_counter() - t
        t = time.perf_counter()
        for name in reps:
            reps[name].image_at(offsets[0])
        at = (time.perf_counter() - t) / len(reps)
        print(f"  Replicas.open of {len(reps)} ({', '.join(reps.names())}) {both:6.2f} s; "
              f"image_at on each {at:.3f} s")

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak RSS of this process       {rss:7.0f} MB (target < 300)")


if __name__ == "__main__":
    main()
