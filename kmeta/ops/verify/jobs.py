"""``verify --jobs N``: the ordinary topics' partitions of a run spread over processes.

An ordinary partition's check is independent of every other partition: its segments'
batch scan (framing, CRC, damage, where the log ends: :func:`scan_partition`), most of a
broker's bytes, and, for a data dir's partition dirs (``verify`` of paths), its listing,
the classifying of its files and the reading of its small files too
(:func:`kmeta.ops.verify.partitions.check_deferred`): on a broker of 4,000 small partitions
that was more than half the time, spent in the caller alone.  The caller then only lists
the data dirs and judges across partitions from the small results it gets back.
:class:`PartitionScans` hands out those checks: with one job it runs each when the
report reaches it; with N it starts N - 1 worker processes, and every process, the
caller included, claims the next partition not yet claimed (a counter in shared memory),
so a worker that starts late or a partition that is large leaves no one idle.  The caller takes each partition's result in input order, its own or a worker's,
and scans more while it waits for one.  A partition's findings are the same wherever it
was scanned and are merged in the order one process reports them: the report is the
same byte for byte.  :class:`Beside` runs one call in another process while the caller
goes on: a long metadata log's offset-index checks, beside its pass.

Workers are forked when this process has a single thread, on Linux (they start at once,
with every module already imported); otherwise (a progress bar's thread, say) they are
started by multiprocessing's ``forkserver``, or ``spawn`` where there is none, so that
no thread is ever forked.  No thread is started here.  A worker that dies leaves the
partitions it had claimed and not reported to the caller.
"""

from __future__ import annotations

import contextlib
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kmeta.core.log_rules import (
    MAX_OFFSET,
    MAX_RELATIVE_OFFSET,
    batch_out_of_segment,
    offsets_past_max,
)
from kmeta.findings import NOT_READ, Finding
from kmeta.formats.runs import Walked
from kmeta.ops import processes
from kmeta.storage.segments import read_batches

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

#: A partition's segments, as (path, base offset from the name, or None).
Segments = list[tuple[str, int | None]]
#: What scanning a partition found: its findings, and its log end offset (None when it
#: is unknown: no segment, or one could not be read).
Scanned = tuple[list[Finding], int | None]

#: Below this many bytes of ordinary partitions, a run keeps them in its own process: a
#: forked worker costs milliseconds, one from the forkserver a fresh interpreter and
#: kmeta's imports (about 0.2 s), against about 0.03 s of scanning per 64 MiB.  Where the
#: sizes are not known beforehand (partition dirs listed where they are checked), the
#: workers start once the partitions this process checked say the rest will reach it.
PARALLEL_FROM = 64 << 20
#: ... or at once for this many partitions: listing, classifying and reading the small
#: files of each costs about 0.3 ms, whatever its bytes.
PARALLEL_PARTITIONS = 512
#: A worker sends its results this many partitions at a time (and the rest at its end).
SEND_EVERY = 32


def scan_partition(segments: Segments) -> Scanned:
    """The batch-level checks of an ordinary topic's partition (kmeta does not interpret
    its records): every segment's scan, intact batches walked by header and CRC."""
    found: list[Finding] = []
    end: int | None = None
    known = True
    for i, (path, base) in enumerate(segments):
        # An empty segment still says where the log ends: Kafka names it for its base
        # offset, the next offset it will write (an empty 00000000000000000005.log: 5).
        base = base or 0
        end = base if end is None else max(end, base)
        high = base
        for item in read_batches(path, walk=True):
            if type(item) is Finding:
                found.append(item)
                if item.code in NOT_READ:
                    known = False
            elif type(item) is Walked:  # intact batches, by header and CRC
                high = max(high, item.high)
            else:
                high = max(high, item.last_offset + 1)
        end = max(end, high)
        following = segments[i + 1][1] if i + 1 < len(segments) else None
        past_max = high - 1 > MAX_OFFSET
        if past_max or high - 1 - base > MAX_RELATIVE_OFFSET or (following is not None
                                                                  and high > following):
            found.extend(_out_of_range(path, base, following, past_max))
    return found, end if known else None


def _out_of_range(path: str, base: int, following: int | None, past_max: bool
                  ) -> list[Finding]:
    """S005 for the first batch whose offsets cannot belong to its segment (the rule
    compact applies too: kmeta.core.cleaner.batch_out_of_segment) and, with ``past_max``,
    S011 for each whose offsets run past the largest Kafka has, in file order, read batch
    by batch: only a segment whose offsets already overrun is read again."""
    out: list[Finding] = []
    placed = False  # the S005 found
    for item in read_batches(path):
        if type(item) is Finding:
            continue
        if not placed:
            damage = batch_out_of_segment(path, item.position, item.base_offset,
                                          item.last_offset, base, following)
            if damage is not None:
                out.append(damage)
                placed = True
        if past_max and item.last_offset > MAX_OFFSET:
            out.append(offsets_past_max(path, item.position, item.base_offset,
                                        item.last_offset))
        elif placed and not past_max:
            break
    return out


def _serve(conn: Connection, tasks: list[Any], claims: Any, owner: Any, me: int,
           check: Callable[[Any], Any] | None) -> None:
    """A worker: claims partitions until none is left, sending their results
    :data:`SEND_EVERY` at a time (a message per small partition cost the caller more
    than a tenth of its time)."""
    check = check or scan_partition
    done: list[tuple[int, Any]] = []
    try:
        processes.collect_rarely()  # for the worker's life, which ends with the run
        while (k := _claim(claims, owner, me, len(tasks))) is not None:
            try:
                done.append((k, check(tasks[k])))
            except Exception:  # a bug: the caller says so, with the worker's traceback
                conn.send((done, traceback.format_exc()))
                return
            if len(done) >= SEND_EVERY:
                conn.send((done, None))
                done = []
        conn.send((done, None))
    except (BrokenPipeError, EOFError, OSError):
        pass  # the caller is gone or stopped listening
    finally:
        conn.close()


def _claim(claims: Any, owner: Any, me: int, count: int) -> int | None:
    """The next partition nobody has claimed, now ``me``'s; None when all are."""
    with claims.get_lock():
        k = claims.value
        if k >= count:
            return None
        claims.value = k + 1
        owner[k] = me
    return k


def _context(preload: Sequence[str] = ()) -> Any:
    return processes.worker_context([__name__, *preload])


class PartitionScans:
    """The checks of ``partitions`` (each a task for ``check``, by default a list of
    segments for :func:`scan_partition`, with its size in bytes or None where it is not
    known), taken one at a time in their order with :meth:`take`.  ``check`` must be a
    module-level function; a result with a ``bytes`` attribute says what it read, for the
    start of workers where the sizes are not known.  Use as a context manager: the
    workers are stopped on the way out."""

    def __init__(self, partitions: Sequence[tuple[Any, int | None]], jobs: int = 1,
                 check: Callable[[Any], Any] | None = None) -> None:
        self._segments = [task for task, _ in partitions]
        self._check = check
        self._done: dict[int, Any] = {}
        self._next = 0
        self._workers: dict[int, tuple[Any, Connection]] = {}
        self._claims: Any = None
        #: the processes the run may use: for checks of its own beside the scans
        self.jobs = jobs
        self._want = min(jobs, len(partitions))
        #: the bytes of the partitions of unknown size checked here, while workers may
        #: still be started for the rest (None: they may not)
        self._read: int | None = None
        if self._want <= 1:
            return
        self._known = sum(size or 0 for _, size in partitions)
        self._unknown = sum(1 for _, size in partitions if size is None)
        if self._known >= PARALLEL_FROM or len(partitions) >= PARALLEL_PARTITIONS:
            self._start()
        elif self._unknown:
            self._read = 0

    def _run(self, task: Any) -> Any:
        return (self._check or scan_partition)(task)

    def _start(self) -> None:
        """Start the workers; the partitions taken so far are this process's."""
        self._read = None
        # The workers claim partitions through a shared counter, which multiprocessing
        # makes in /dev/shm on Linux: where it cannot, this process checks them all.
        if not processes.shared_memory():
            return
        # (the module of a partial's function: the caller's listener, say)
        preload = [] if self._check is None else \
            [getattr(self._check, "func", self._check).__module__]
        ctx = _context(preload)
        try:
            claims = ctx.Value("q", self._next)
            self._owner = ctx.Array("i", len(self._segments), lock=False)
        except (OSError, ImportError):  # no semaphore or no space to be had there
            return
        self._claims = claims
        for sink in (sys.stdout, sys.stderr):  # a forked worker must not write them again
            with contextlib.suppress(Exception):
                sink.flush()
        for me in range(1, self._want):
            mine, theirs = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_serve, name=f"kmeta-verify-{me}", daemon=True,
                               args=(theirs, self._segments, self._claims, self._owner, me,
                                     self._check))
            try:
                proc.start()
            except OSError:  # no process to be had: the others (this one) do its part
                mine.close()
                continue
            finally:
                theirs.close()
            self._workers[me] = (proc, mine)

    @property
    def processes(self) -> int:
        """The worker processes started (0: every scan runs in this one)."""
        return len(self._workers)

    def take(self) -> Any:
        """The next partition's result, in input order."""
        index = self._next
        self._next += 1
        if self._claims is None:
            result = self._run(self._segments[index])
            if self._read is not None and self._next < len(self._segments):
                # the partitions of unknown size checked so far, as a sample of them all
                self._read += getattr(result, "bytes", 0)
                if self._known + self._read * self._unknown // self._next >= PARALLEL_FROM:
                    self._start()
            return result
        while index not in self._done:
            if self._receive(block=False):
                continue
            k = _claim(self._claims, self._owner, 0, len(self._segments))
            if k is not None:
                self._done[k] = self._run(self._segments[k])
            elif not self._receive(block=True):
                # every partition claimed, no worker left to hear from: ours, then
                self._done[index] = self._run(self._segments[index])
        return self._done.pop(index)

    def _receive(self, block: bool) -> bool:
        """Read the results the workers have sent (waiting for one with ``block``);
        whether anything was read or a worker was found gone."""
        conns = {conn: me for me, (_, conn) in self._workers.items()}
        if not conns:
            return False
        if block:
            from multiprocessing.connection import wait

            ready = wait(list(conns))
        else:  # asked before every partition this process claims: a poll each is cheaper
            ready = [conn for conn in conns if conn.poll()]
        for conn in ready:
            me = conns[conn]
            try:
                done, error = conn.recv()
            except (EOFError, OSError):
                self._gone(me)
                continue
            if error is not None:
                raise RuntimeError(f"a verify worker failed:\n{error}")
            self._done.update(done)
        return bool(ready)

    def _gone(self, me: int) -> None:
        """Worker ``me`` ended (done, or killed): what it claimed and did not send is ours."""
        proc, conn = self._workers.pop(me)
        conn.close()
        proc.join()
        with self._claims.get_lock():
            claimed = self._claims.value
        for k in range(claimed):
            if self._owner[k] == me and k not in self._done and k >= self._next - 1:
                self._done[k] = self._run(self._segments[k])

    def close(self) -> None:
        for proc, conn in self._workers.values():
            conn.close()
            proc.join(timeout=0.5)
            if proc.is_alive():
                proc.terminate()
                proc.join()
        self._workers = {}

    def __enter__(self) -> PartitionScans:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _call(conn: Connection, fn: Any, args: tuple) -> None:
    """A worker for :class:`Beside`: ``fn(*args)``, sent back."""
    try:
        try:
            result: Any = (fn(*args), None)
        except Exception:  # a bug: the caller says so, with the worker's traceback
            result = (None, traceback.format_exc())
        conn.send(result)
    except (BrokenPipeError, OSError):
        pass
    finally:
        conn.close()


class Beside:
    """``fn(*args)`` in a worker process started now, while the caller does other work;
    :meth:`result` waits for it.  With one job (or no process to be had), or when the
    worker dies, :meth:`result` calls ``fn`` itself: the result is the same either way.
    ``fn`` must be a module-level function, its arguments and result picklable."""

    def __init__(self, fn: Any, args: tuple, jobs: int) -> None:
        self._fn, self._args = fn, args
        self._proc: Any = None
        if jobs <= 1:
            return
        ctx = _context()
        for sink in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                sink.flush()
        mine, theirs = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_call, args=(theirs, fn, args), daemon=True,
                           name="kmeta-verify-beside")
        try:
            proc.start()
        except OSError:
            mine.close()
            return
        finally:
            theirs.close()
        self._proc, self._conn = proc, mine

    def result(self) -> Any:
        if self._proc is None:
            return self._fn(*self._args)
        try:
            value, error = self._conn.recv()
        except (EOFError, OSError):  # the worker died: do it here
            value, error = self._fn(*self._args), None
        finally:
            self.close()
        if error is not None:
            raise RuntimeError(f"a verify worker failed:\n{error}")
        return value

    def close(self) -> None:
        if self._proc is not None:
            self._conn.close()
            self._proc.join(timeout=0.5)
            if self._proc.is_alive():
                self._proc.terminate()
                self._proc.join()
            self._proc = None


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

