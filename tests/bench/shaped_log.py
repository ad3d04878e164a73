"""A metadata log shaped like a busy real cluster's, for the report benchmark (issue 35).

The generated log of ``bench_dump.big_log`` is mostly NoOp heartbeats (an event every
two minutes of its clock), which the compiled core takes a run at a time; a real
cluster's log is not.  This one is written by the same simulator (fixtures/generate.py)
with an event every tick or two: topics created and deleted, leader elections, ISR
changes, reassignments, broker restarts and bounces, configs, ACLs, quotas, SCRAM
credentials, delegation tokens and producer ids between the heartbeats, so most batches
are small and of mixed record types, and the image grows to hundreds of topics.  It keeps
the twelve newest snapshots (one every 16 MiB or so) and then deletes the first segments, so
the log starts between two snapshots and two older ones are still on disk.
The replay of the whole is coherent: ``kmeta verify`` finds nothing to say of it.

    python tests/bench/shaped_log.py [--size 128MiB]   # -> fixtures/big/shaped-128MiB/
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from broker import _generate_module  # noqa: E402
from real_log import parse_size  # noqa: E402

from kmeta.formats.filenames import classify  # noqa: E402

SEED = 20261202
SEGMENT_BYTES = 16 << 20
#: segments written beyond the size asked, then deleted below the log start
DROPPED = 2


def shaped_log(size: str = "128MiB") -> Path:
    """The data dir (built once into fixtures/big/shaped-SIZE/)."""
    out = REPO / "fixtures" / "big" / f"shaped-{size}"
    if (out / "__cluster_metadata-0").is_dir():
        return out
    target = parse_size(size)
    gen = _generate_module()
    tmp = out.with_name(out.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    # a snapshot every 16 MiB or so of log (about 21,000 records a MiB here)
    sim = gen.Simulator(SEED, snapshot_every=340_000, event_ticks=2, idle_ticks=2,
                        max_topics=400)

    def items() -> Iterator:
        yield from sim.run(until_story=True)
        yield from sim.run(until_bytes=target + DROPPED * SEGMENT_BYTES)
    gen.write_data_dir(tmp, sim, items(), segment_bytes=SEGMENT_BYTES, keep_snapshots=12,
                       durable=False)
    _start_after_snapshots(tmp / "__cluster_metadata-0")
    tmp.rename(out)
    return out


def _start_after_snapshots(part: Path) -> None:
    """Delete the segments (and their indexes) below the first one that holds a snapshot
    end offset with two snapshots ending before its base: the log then starts between
    two snapshots, as Kafka leaves it after ``deleteBeforeSnapshot`` (segments are deleted
    whole), with snapshots older than the log start still on disk."""
    ends = sorted(classify(p.name).base_offset or 0 for p in part.glob("*.checkpoint"))
    bases = sorted(int(p.stem) for p in part.glob("*.log"))
    start = next((b for b in bases if sum(e < b for e in ends) >= 2 and any(e > b for e in ends)),
                 None)
    if start is None:
        raise SystemExit(f"{part}: snapshots at {ends}, segments at {bases}: too short to shape")
    for base in bases:
        if base >= start:
            break
        for suffix in (".log", ".index", ".timeindex"):
            (part / f"{base:020d}{suffix}").unlink(missing_ok=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="128MiB")
    print(shaped_log(ap.parse_args().size))
