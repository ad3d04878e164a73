"""``verify --jobs N``: the ordinary topics' partitions of a run spread over processes.

An ordinary partition's check is its segments' batch scan (framing, CRC, damage, where
the log ends: :func:`scan_partition`), independent of every other partition, and most of
a broker's bytes.  :class:`PartitionScans` hands out those scans: with one job it runs
each when the report reaches it; with N it starts N - 1 worker processes, gives each a
share of the partitions (balanced by bytes; the calling process keeps a share, less the
work it has of its own) and the caller takes each partition's result in input order, its
own or a worker's.  The findings of a partition are the same wherever it was scanned, and
they are merged in the order the one-process run reports them: the report is the same
byte for byte.

The workers are started by multiprocessing's ``forkserver`` (``spawn`` where there is
none): a fresh process that imports this module, so neither a progress bar's thread
nor a replay child's pipes are ever copied into a worker by a fork, and no thread is
started here.  A worker that dies leaves its remaining partitions to the caller.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import traceback
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from kmeta.findings import Finding
from kmeta.formats.runs import Walked
from kmeta.storage.segments import read_batches

#: A partition's segments, as (path, base offset from the name, or None).
Segments = list[tuple[str, int | None]]
#: What scanning a partition found: its findings, and its log end offset (None when it
#: is unknown: no segment, or one could not be read).
Scanned = tuple[list[Finding], int | None]

#: Below this many bytes of ordinary partitions, a run keeps them in its own process: a
#: worker costs a fresh interpreter and kmeta's imports (about 0.2 s).
PARALLEL_FROM = 64 << 20
#: The calling process's own work (the metadata log's checks and replay, the small files,
#: the report) counts as this many times the metadata log's bytes when shares are dealt:
#: its checks cost about that much more per byte than an ordinary partition's scan.
METADATA_WEIGHT = 8


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def scan_partition(segments: Segments) -> Scanned:
    """The batch-level checks of an ordinary topic's partition (kmeta does not interpret
    its records): every segment's scan, intact batches walked by header and CRC."""
    found: list[Finding] = []
    end: int | None = None
    known = True
    for path, base in segments:
        # An empty segment still says where the log ends: Kafka names it for its base
        # offset, the next offset it will write (an empty 00000000000000000005.log: 5).
        base = base or 0
        end = base if end is None else max(end, base)
        for item in read_batches(path, walk=True):
            if type(item) is Finding:
                found.append(item)
                if item.code == "S008":
                    known = False
            elif type(item) is Walked:  # intact batches, by header and CRC
                end = max(end, item.high)
            else:
                end = max(end, item.last_offset + 1)
    return found, end if known else None


def _serve(conn: Connection, share: list[tuple[int, Segments]]) -> None:
    """A worker: its share's scans, each result sent as it is done, in share order."""
    try:
        for index, segments in share:
            try:
                result: Any = scan_partition(segments)
            except Exception:  # a bug: the caller says so, with the worker's traceback
                conn.send((index, None, traceback.format_exc()))
                return
            conn.send((index, result, None))
    except (BrokenPipeError, EOFError, OSError):
        pass  # the caller is gone or stopped listening
    finally:
        conn.close()


def _context() -> Any:
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() \
        else "spawn"
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload([__name__])
    return ctx


class PartitionScans:
    """The scans of ``partitions`` (each a list of segments, with its size in bytes),
    taken one at a time in their order with :meth:`take`.  Use as a context manager: the
    workers are stopped on the way out."""

    def __init__(self, partitions: Sequence[tuple[Segments, int]], jobs: int = 1,
                 own_bytes: int = 0) -> None:
        self._segments = [segs for segs, _ in partitions]
        self._owner: list[int] = [0] * len(partitions)  # 0: this process; k: worker k
        self._next = 0
        self._workers: list[tuple[Any, Connection]] = []
        total = sum(size for _, size in partitions)
        jobs = min(jobs, len(partitions))
        if jobs <= 1 or total < PARALLEL_FROM:
            return
        # Largest first, each to the least loaded: the classic greedy balance.
        load = [own_bytes * METADATA_WEIGHT] + [0] * (jobs - 1)
        for i in sorted(range(len(partitions)), key=lambda i: -partitions[i][1]):
            k = min(range(jobs), key=load.__getitem__)
            self._owner[i] = k
            load[k] += partitions[i][1]
        ctx = _context()
        for k in range(1, jobs):
            share = [(i, self._segments[i]) for i in range(len(partitions))
                     if self._owner[i] == k]
            if not share:
                continue
            mine, theirs = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_serve, args=(theirs, share), daemon=True,
                               name=f"kmeta-verify-{k}")
            try:
                proc.start()
            except OSError:  # no process to be had: this one scans the share
                for i, _ in share:
                    self._owner[i] = 0
                continue
            finally:
                theirs.close()
            self._workers.append((proc, mine))
            for i, _ in share:
                self._owner[i] = len(self._workers)

    @property
    def processes(self) -> int:
        """The worker processes started (0: every scan runs in this one)."""
        return len(self._workers)

    def take(self) -> Scanned:
        """The next partition's scan, in input order."""
        index = self._next
        self._next += 1
        owner = self._owner[index]
        if owner:
            proc, conn = self._workers[owner - 1]
            try:
                got, result, error = conn.recv()
            except (EOFError, OSError):
                got = error = None
            if got == index and error is None:
                return result
            if error is not None:
                raise RuntimeError(f"a verify worker failed:\n{error}")
            # The worker died (killed, out of memory): the rest of its share is ours.
            self._orphan(owner)
        return scan_partition(self._segments[index])

    def _orphan(self, owner: int) -> None:
        for i, o in enumerate(self._owner):
            if o == owner:
                self._owner[i] = 0

    def close(self) -> None:
        for proc, conn in self._workers:
            conn.close()
            proc.join(timeout=0.5)
            if proc.is_alive():
                proc.terminate()
                proc.join()
        self._workers = []

    def __enter__(self) -> PartitionScans:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def partitions_in(segment_lists: Sequence[Sequence[Any]]) -> list[tuple[Segments, int]]:
    """(segments, bytes) of each partition, from its LogFiles."""
    out = []
    for files in segment_lists:
        segs: Segments = [(str(f.path), f.kind.base_offset) for f in files]
        size = 0
        for f in files:
            with contextlib.suppress(OSError):
                size += f.path.stat().st_size
        out.append((segs, size))
    return out

