"""``kmeta verify`` at the speed of the hardware (issue 24, point 4), in one run.

    python tests/bench/bench_verify.py [--size 512MiB] [--broker-size 1GiB]
                                       [--partitions 32] [--many 4000x10] [--repeat 3]
                                       [--only data,jobs,metadata]

Three stages, each against what bounds it, on inputs written by kmeta's writer into
fixtures/big/ (git-ignored, reused by later runs):

- **data**: one ordinary partition, the keyed topic of ``bench_compact.py`` (``--size``,
  256 MiB segments).  ``kmeta verify --jobs 1`` end to end as a process, and in process
  (the scan alone: ``verify_jobs.scan_partition``), and its start-up (``verify`` of an
  empty directory); the bare CRC-32C (the ``crc32c``
  package) over the same bytes held in memory; the peer, kafka-python iterating every
  batch and record with CRC checks (tests/bench/peer.py), in process.  Target: verify
  >= 1.5 GB/s on one core.
- **jobs**: a data dir of ``--partitions`` partitions of ``--broker-size`` in all (each
  the same batches, written by the writer once per partition), ``kmeta verify --jobs 1``
  against ``--jobs 2``; then the same on a broker of ``--many`` partitions x segments
  (tests/bench/broker.py: 4,000 x 10, 2.2 GB), where listing the partition dirs and
  reading their small files weigh as much as the bytes.  Target: >= 1.7x on two cores.
- **metadata**: the generated metadata log (``bench_dump.big_log("256MiB")``, 268 MB),
  ``kmeta verify`` end to end against the peer in process, and the peak RSS of the
  verify process and of its replay child (``ru_maxrss`` of the children: the largest of
  them).  Target: >= 40x the peer, <= 100 MB per process.

Runs are interleaved and the best of ``--repeat`` kept: machines are noisy, compare the
ratios, and run it on an idle machine for the absolute numbers.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

import peer  # noqa: E402
from bench_compact import generate as keyed_partition  # noqa: E402
from bench_compact import parse_size  # noqa: E402
from bench_dump import big_log, segments_of  # noqa: E402

from kmeta.formats.checksum import crc32c  # noqa: E402
from kmeta.storage import writer as W  # noqa: E402

KMETA = [sys.executable, "-m", "kmeta"]


def wall(cmd: list[str], env: dict[str, str] | None = None, ok: tuple[int, ...] = (0, 1)
         ) -> float:
    t = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}")
    return time.perf_counter() - t


def best(fn, repeat: int) -> float:  # noqa: ANN001
    return min(fn() for _ in range(repeat))


def size_of(files: list[Path]) -> int:
    return sum(f.stat().st_size for f in files)


def peer_seconds(files: list[Path]) -> float:
    t = time.perf_counter()
    for f in files:
        peer.iterate(f.read_bytes())
    return time.perf_counter() - t


def crc_seconds(files: list[Path]) -> float:
    """The crc32c package over every byte of the files, already in memory, 8 MiB at a
    time (what one core's CRC can do, with no reading and no header walk)."""
    total = 0.0
    for f in files:
        data = memoryview(f.read_bytes())
        t = time.perf_counter()
        for pos in range(0, len(data), 8 << 20):
            crc32c(data[pos:pos + (8 << 20)])
        total += time.perf_counter() - t
    return total


def scan_seconds(part: Path) -> float:
    from kmeta.ops.verify.jobs import scan_partition

    segs = [(str(f), int(f.stem)) for f in segments_of(part)]
    t = time.perf_counter()
    found, _ = scan_partition(segs)
    if found:
        raise SystemExit(f"finding in the benchmark input: {found[0]}")
    return time.perf_counter() - t


def data_stage(size: str, repeat: int) -> None:
    part = keyed_partition(parse_size(size), 1_000_000)
    files = segments_of(part)
    gb = size_of(files) / 1e9
    verify = scan = crc = start = float("inf")
    empty = REPO / "fixtures" / "big" / "empty"
    empty.mkdir(parents=True, exist_ok=True)
    for _ in range(repeat):
        start = min(start, wall(KMETA + ["verify", str(empty)], ok=(3,)))
        verify = min(verify, wall(KMETA + ["verify", "--jobs", "1", str(part)]))
        scan = min(scan, scan_seconds(part))
        crc = min(crc, crc_seconds(files))
    peer_s = peer_seconds(files)
    print(f"data partition {part.relative_to(REPO)} ({gb * 1e3:,.0f} MB)")
    print(f"  kmeta verify --jobs 1 (process)  {verify:7.2f} s {gb / verify:6.2f} GB/s "
          f"(target >= 1.5)")
    print(f"  its start-up (verify of an empty dir) {start:.2f} s: over the bytes "
          f"{gb / max(verify - start, 1e-9):.2f} GB/s")
    print(f"  kmeta scan (in process)          {scan:7.2f} s {gb / scan:6.2f} GB/s")
    print(f"  bare crc32c (bytes in memory)    {crc:7.2f} s {gb / crc:6.2f} GB/s")
    print(f"  peer kafka-python (in process)   {peer_s:7.2f} s {gb * 1e3 / peer_s:6.1f} MB/s; "
          f"verify is {peer_s / verify:.0f}x the peer")


def broker(total: int, partitions: int) -> Path:
    """A data dir of ``partitions`` partitions of one topic, ``total`` bytes in all: the
    same batches in each, written by the writer (made once, then reused)."""
    out = REPO / "fixtures" / "big" / f"broker-{total}-{partitions}"
    last = out / f"events-{partitions - 1}"
    if last.is_dir() and any(last.glob("*.log")):
        return out
    from kmeta.formats.batch import build_batch

    each = total // partitions
    batches, offset, written = [], 0, 0
    value = bytes(range(32, 127)) + bytes(range(32, 67))
    while written < each:
        recs = [(b"key-%06d" % ((offset + i) % 50_000), value) for i in range(10)]
        b = build_batch(offset, recs, leader_epoch=0, base_timestamp=1_700_000_000_000 + offset)
        batches.append(b)
        offset += len(recs)
        written += len(b)
    out.mkdir(parents=True, exist_ok=True)
    (out / "meta.properties").write_text("version=1\nnode.id=1\n"
                                         "cluster.id=5L6g3nShT-eMCtK--X86sw\n")
    for p in range(partitions):
        W.write_segments(out / f"events-{p}", batches, segment_bytes=64 << 20,
                         durable=False, overwrite=True)
    return out


def scans_seconds(data: Path, jobs: int) -> float:
    """The scans of every partition of ``data`` in process, with ``jobs`` processes: what
    --jobs spreads, without the start-up and the rest of verify."""
    from kmeta.ops.verify.jobs import PartitionScans, partitions_in
    from kmeta.storage.discover import discover

    parts = partitions_in([p.segments for p in discover([data]).all_partitions()])
    t = time.perf_counter()
    with PartitionScans(parts, jobs) as scans:
        for _ in parts:
            scans.take()
    return time.perf_counter() - t


def jobs_stage(size: str, partitions: int, repeat: int, many: str = "4000x10") -> None:
    jobs_of(broker(parse_size(size), partitions), repeat)
    if many:  # a broker of many small partitions: listing and small files, not bytes
        import broker as many_partitions

        count, segments = (int(n) for n in many.split("x"))
        jobs_of(many_partitions.generate(count, segments), repeat)


def jobs_of(data: Path, repeat: int) -> None:
    """``kmeta verify --jobs 1`` against ``--jobs 2`` on the data dir ``data``, and the
    peak RSS of each."""
    partitions = sum(1 for p in data.iterdir() if p.is_dir())
    gb = sum(size_of(segments_of(p)) for p in data.iterdir() if p.is_dir()) / 1e9
    one = two = in_one = in_two = float("inf")
    for _ in range(repeat):
        one = min(one, wall(KMETA + ["verify", "--jobs", "1", str(data)]))
        two = min(two, wall(KMETA + ["verify", "--jobs", "2", str(data)]))
        in_one = min(in_one, scans_seconds(data, 1))
        in_two = min(in_two, scans_seconds(data, 2))
    print(f"broker {data.relative_to(REPO)} ({partitions} partitions, {gb * 1e3:,.0f} MB), "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print(f"  kmeta verify --jobs 1  {one:7.2f} s {gb / one:6.2f} GB/s")
    print(f"  kmeta verify --jobs 2  {two:7.2f} s {gb / two:6.2f} GB/s; "
          f"{one / two:.2f}x (target >= 1.7x)")
    print(f"  the scans in process, 1 vs 2 jobs: {in_one:.2f} s vs {in_two:.2f} s, "
          f"{in_one / in_two:.2f}x")
    rss = [int(subprocess.run([sys.executable, "-c", _PEAK, *KMETA, "verify", "--jobs", j,
                               str(data)], capture_output=True, text=True,
                              check=True).stdout) / 1024 for j in ("1", "2")]
    print(f"  peak RSS of the largest verify process, 1 vs 2 jobs: {rss[0]:,.0f} MB vs "
          f"{rss[1]:,.0f} MB")


#: the peak RSS (KiB) of the largest process among a command's and its children's
_PEAK = ("import resource, subprocess, sys; "
         "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def metadata_stage(repeat: int) -> None:
    log_dir = big_log("256MiB")
    files = segments_of(log_dir)
    mb = size_of(files) / 1e6
    verify = float("inf")
    for _ in range(repeat):
        verify = min(verify, wall(KMETA + ["verify", str(log_dir)]))
    peer_s = peer_seconds(files)
    rss = int(subprocess.run([sys.executable, "-c", _PEAK, *KMETA, "verify", str(log_dir)],
                             capture_output=True, text=True, check=True).stdout) / 1024
    print(f"metadata log {log_dir.relative_to(REPO)} ({mb:,.0f} MB)")
    print(f"  kmeta verify                     {verify:7.2f} s {mb / verify:7.1f} MB/s")
    print(f"  peer kafka-python (in process)   {peer_s:7.2f} s {mb / peer_s:7.1f} MB/s; "
          f"verify is {peer_s / verify:.1f}x the peer (target >= 40x)")
    print(f"  peak RSS of the largest verify process {rss:,.0f} MB (target <= 100)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="512MiB")
    ap.add_argument("--broker-size", default="1GiB")
    ap.add_argument("--partitions", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="data,jobs,metadata")
    ap.add_argument("--many", default="4000x10", metavar="PxS",
                    help="the jobs stage's second broker: P partitions of S segments "
                    "(tests/bench/broker.py); '' for none")
    args = ap.parse_args()
    stages = args.only.split(",")
    if "data" in stages:
        data_stage(args.size, args.repeat)
    if "jobs" in stages:
        jobs_stage(args.broker_size, args.partitions, args.repeat, args.many)
    if "metadata" in stages:
        metadata_stage(args.repeat)


if __name__ == "__main__":
    main()
