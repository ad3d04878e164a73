"""The replay of a long log in a second process, beside the verify pass that feeds it.

Applying records to the image is a quarter to a third of ``kmeta verify``'s time on a
long log, and it needs nothing of the pass but the records, in order.  Where a second CPU
is free, :func:`forked_replay` forks the :class:`~kmeta.ops.replay.Replay` the pass
would have driven into a child, and gives the pass a :class:`ForkedReplay` to drive
instead: each record's bytes, offset and place go down a pipe as the pass meets them, and
the pass goes on.  The child decodes the bytes again (the same decoder, so the same
payload), applies them in the same order and compares the same snapshots, so its image,
its findings and the snapshots it read are the ones the pass would have had.

Each finding comes back with the number of findings the pass had produced when its record
was sent: :meth:`ForkedReplay.finish` puts it at that place, so the report is the one a
single process writes, byte for byte (``tests/test_replay_process.py`` compares them on
every fixture and real directory).

Linux only, and only where this process runs no other thread: a thread that holds a lock
when the process forks (a logging handler's, a stream's, an import's) leaves the child
that lock held for ever, and Python 3.12 and later warn of it.  kmeta's own command line
starts none (its progress bar is drawn by the reads: kmeta.render.progress); a program
that calls verify from a threaded process gets the replay in its one process, and the same
report.  ``KMETA_ONE_PROCESS`` (non-empty) keeps the replay in the one process.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import pickle
import signal
import struct
import sys
from collections.abc import Callable, Iterable
from typing import Any

from kmeta.findings import SLOT_SETTERS, Finding
from kmeta.formats.payload import decode_metadata
from kmeta.ops import processes
from kmeta.ops.replay.engine import Replay

#: Logs shorter than this replay in the one process: the fork and the pipe cost more than
#: a short replay (bytes of segments).
FORK_ABOVE = 32 << 20
#: Records sent to the child at a time (a batch's records count one each: the child's
#: work after the pass's last record is at most one chunk).
CHUNK = 2048
#: The pipe's capacity asked for (Linux's default is 64 KiB, less than a chunk).
PIPE_BYTES = 1 << 20


_LENGTH = struct.Struct("<Q")
# what the queue holds: a record decoded by the pass (to apply), one it did not decode,
# a snapshot comparison, a plain span's values
_APPLY, _RECORD, _REACH, _RECORDS, _BATCH, _CONTROL, _END, _SPAN = 0, 1, 2, 3, 4, 5, 6, 7


#: The findings of a record's decoding problem: (position, offset, rule problem, payload,
#: file) -> findings (verify's ``_record_findings``, its one home).
Report = Callable[[int, int, str | None, Any, str], Iterable[Finding]]


def forked_replay(replay: Replay | None, sink: list[Finding], log_bytes: int,
                  report: Report) -> Replay | ForkedReplay | None:
    """``replay`` moved to a child process when that pays and is safe: a log of at least
    FORK_ABOVE bytes, a second CPU, Linux, no other thread, and KMETA_ONE_PROCESS not
    set.  ``sink``: the list the pass's findings go to, in order, as they are produced;
    ``report``: what says the decoding problem of a record the child decodes for the
    pass (:meth:`record`)."""
    if replay is None or log_bytes < FORK_ABOVE or os.environ.get("KMETA_ONE_PROCESS") \
            or processes.default_jobs() < 2 or not processes.may_fork():
        return replay
    try:
        return ForkedReplay(replay, sink, report)
    except OSError:  # no pipe or process to spare: the replay stays in this process
        return replay


class ForkedReplay:
    """What the verify pass drives in place of a :class:`Replay` whose work a child
    does: ``apply`` and ``reach`` queue, ``next_check`` follows the snapshots to compare,
    and :meth:`finish` gives the image and merges the child's findings into the sink."""

    def __init__(self, replay: Replay, sink: list[Finding], report: Report) -> None:
        self.start_offset = replay.start_offset
        #: the child's replay has a watch: the pass tells it of batches and control records
        self.watch = replay.watch
        self._ends = [end for end, _ in replay.checks]
        self.next_check = replay.next_check
        self._sink = sink
        self._queue: list[tuple] = []
        self._extra = 0  # records queued beyond one per item (batches of records)
        import fcntl  # Linux only, as the fork is

        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        # room for a few chunks: the pass does not wait on each hiccup of the child
        with contextlib.suppress(OSError, AttributeError):
            fcntl.fcntl(down_w, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        try:
            pid = os.fork()
        except OSError:  # no process to spare (a container's limit): the caller keeps one
            for fd in (down_r, down_w, up_r, up_w):
                os.close(fd)
            raise
        if pid == 0:  # the child: replay what comes down, send back what it found
            os.close(down_w)
            os.close(up_r)
            # What the child inherited lives as long as it does, and what the replay
            # makes is trees (the image, payloads, rows), freed as they go
            processes.collect_rarely()
            status = 1
            try:
                _serve(replay, report, down_r, up_w)
                status = 0
            finally:
                os._exit(status)
        os.close(down_r)
        os.close(up_w)
        self._pid: int | None = pid
        self._down: int | None = down_w
        self._up = up_r

    def apply(self, payload: Any, offset: int, path: str, position: int,
              value: bytes | None = None, timestamp: int | None = None) -> tuple[()]:
        """Queue a record for the child (``value``: the bytes ``payload`` was decoded
        from); its findings come with :meth:`finish`."""
        self._queue.append((_APPLY, value, offset, path, position, len(self._sink), False,
                            timestamp))
        if len(self._queue) + self._extra >= CHUNK:
            self._send()
        return ()

    def record(self, value: bytes | None, offset: int, path: str, position: int,
               flagged: bool, timestamp: int | None = None) -> None:
        """Queue a data record the pass has not decoded: the child decodes it, applies it
        unless it is a NoOp, and reports its decoding problem where the pass would have
        (after the pass's own finding for the record, when ``flagged``)."""
        self._queue.append((_RECORD, value, offset, path, position, len(self._sink),
                            flagged, timestamp))
        if len(self._queue) + self._extra >= CHUNK:
            self._send()

    def records(self, values: list[bytes], offsets: list[int], path: str,
                position: int, timestamp: int | None = None) -> None:
        """Queue the records of one batch, none of which broke a KRaft rule: as many
        :meth:`record` calls (unflagged), in one item (``timestamp``: every one's)."""
        self._queue.append((_RECORDS, values, offsets, path, position, len(self._sink),
                            timestamp))
        self._extra += len(values) - 1
        if len(self._queue) + self._extra >= CHUNK:
            self._send()

    def section(self, values: list[bytes], offsets: list[int], positions: list[int],
                path: str, told: list[tuple[int, int, int, int]] | None = None,
                epoch: int | None = None) -> None:
        """Queue the values of a plain span (formats.spans), none of which broke a KRaft
        rule: as many :meth:`record` calls (unflagged), each at its own offset and
        batch position, in one item.  ``told``: for a watch, each batch of them as
        (position, base offset, last offset, timestamp), of leader ``epoch``: the watch
        hears of it (:meth:`batch`) before its records."""
        self._queue.append((_SPAN, values, offsets, positions, path, len(self._sink),
                            told if self.watch is not None else None, epoch))
        self._extra += len(values) - 1
        if len(self._queue) + self._extra >= CHUNK:
            self._send()

    def batch(self, offset: int, last_offset: int, epoch: int, timestamp: int) -> None:
        """Queue a batch's start for the child's watch (see Replay.batch)."""
        self._queue.append((_BATCH, offset, last_offset, epoch, timestamp))

    def control(self, offset: int, epoch: int, key: bytes | None, value: bytes | None
                ) -> None:
        """Queue a control record for the child's watch (see Replay.control)."""
        self._queue.append((_CONTROL, offset, epoch, key, value))

    def end(self, offset: int, timestamp: int) -> None:
        """Queue where the log ends for the child's watch."""
        self._queue.append((_END, offset, timestamp))

    def reach(self, offset: int) -> tuple[()]:
        """Queue the comparison with every snapshot ending at or before ``offset``."""
        while self._ends and self._ends[0] <= offset:
            self._ends.pop(0)
        self.next_check = self._ends[0] if self._ends else None
        self._queue.append((_REACH, offset, len(self._sink)))
        return ()

    def finish(self, seen: dict[str, list[Finding]]) -> Any:
        """Wait for the child; put its findings into the sink where the pass would have
        had them, its snapshot findings into ``seen``; return the image."""
        self._send()
        os.close(self._down)  # type: ignore[arg-type]
        self._down = None
        try:
            result = pickle.loads(_read_all(self._up))
        except (EOFError, pickle.UnpicklingError) as e:
            raise RuntimeError(f"the replay process ended without its result ({e})") from e
        finally:
            self.close()
        if isinstance(result, BaseException):
            raise result
        packed, image, child_seen, self.watch = result
        found = marshal.loads(packed) if type(packed) is bytes else packed
        merged: list[Finding] = []
        append, at, sink, new = merged.append, 0, self._sink, object.__new__
        # its slots set one by one: a log can send back tens of thousands of findings
        set_code, set_message, set_file, set_position, set_offset, set_details = SLOT_SETTERS
        for place, code, message, path, position, offset, details in found:
            if place != at:
                merged += sink[at:place]
                at = place
            f = new(Finding)
            set_code(f, code)
            set_message(f, message)
            set_file(f, path)
            set_position(f, position)
            set_offset(f, offset)
            set_details(f, {} if details is None else details)
            append(f)
        merged += sink[at:]
        self._sink[:] = merged
        seen.clear()
        seen.update(child_seen)
        return image

    def close(self) -> None:
        """Stop the child, if it still runs (the pass ended early: an error)."""
        if self._down is not None:
            os.close(self._down)
            self._down = None
            if self._pid is not None:  # its work is of no use now: do not wait for it
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self._pid, signal.SIGKILL)
        if self._pid is not None:
            os.close(self._up)
            os.waitpid(self._pid, 0)
            self._pid = None

    def _send(self) -> None:
        if self._queue:
            # marshal: twice as fast as pickle on these plain tuples, and a value that
            # repeats (the same memoised record) is written once per chunk
            data = marshal.dumps(self._queue)
            _write_all(self._down, _LENGTH.pack(len(data)) + data)  # type: ignore[arg-type]
            self._queue = []
            self._extra = 0


def _serve(replay: Replay, report: Report, down: int, up: int) -> None:
    # (place, code, message, file, position, offset, details or None) of each finding
    found: list[tuple] = []
    result: Any
    last_value: Any = None
    payload: Any = None
    last_path: Any = None
    problems = replay.problems
    watched = _watched(replay)
    # a watch that does not take records in bulk hears each through watched
    quiet = replay.apply_quiet if watched is None or hasattr(replay.watch, "applied") \
        else None

    def take(values: list, offsets: list, at: Any, place: int, path: str,
             timestamp: int | None) -> None:
        """The records of a batch (or of a span: ``at``, each one's position), none of
        which broke a KRaft rule: those with no word to say applied in one call
        (Replay.apply_quiet), the others one by one, their problems and decoding
        problems found where the pass would have had them."""
        i, n = 0, len(values)
        each = type(at) is list
        while i < n:
            if quiet is not None:
                i, payload = quiet(values, offsets, i, True, True)
                if payload is None:
                    break
            else:
                payload = decode_metadata(values[i])
            offset, position = offsets[i], at[i] if each else at
            i += 1
            if payload.type != "NO_OP_RECORD":
                for p in (problems(payload, offset) if watched is None else
                          watched(payload, offset, timestamp)):
                    found.append((place, p[0], p[1], path, position, p[2], None))
            if payload.finding:
                found.extend(_row(place, f) for f in
                             report(position, offset, None, payload, path))

    try:
        while True:
            head = _read_exactly(down, _LENGTH.size)
            if not head:
                break  # the parent closed the pipe: all is sent
            for item in marshal.loads(_read_exactly(down, _LENGTH.unpack(head)[0])):
                kind = item[0]
                if kind == _RECORDS:  # _RECORD's work for each record of a batch
                    _, values, offsets, path, position, place, timestamp = item
                    if path != last_path:
                        last_path = sys.intern(path)
                    take(values, offsets, position, place, last_path, timestamp)
                elif kind == _SPAN and item[6] is not None:  # a watch hears each batch
                    _, values, offsets, positions, path, place, told, epoch = item
                    if path != last_path:
                        last_path = sys.intern(path)
                    batches = {t[0]: t for t in told}
                    a, n = 0, len(values)
                    while a < n:  # batch by batch: the watch hears each before its records
                        position = positions[a]
                        b = a + 1
                        while b < n and positions[b] == position:
                            b += 1
                        _, base, last, stamp = batches[position]
                        replay.batch(base, last, epoch, stamp)
                        take(values[a:b], offsets[a:b], position, place, last_path, stamp)
                        a = b
                elif kind == _SPAN:  # _RECORDS' work, each record at its own position
                    _, values, offsets, positions, path, place = item[:6]
                    if path != last_path:
                        last_path = sys.intern(path)
                    take(values, offsets, positions, place, last_path, None)
                elif kind <= _RECORD:
                    value, offset, path, position, place, flagged, timestamp = item[1:8]
                    if quiet is not None:
                        # a NoOp is passed over as a batch's are (_RECORD), but applied
                        # where the pass decoded it (_APPLY: its V120 is the replay's)
                        payload = quiet([value], [offset], 0, kind == _RECORD)[1]
                        if payload is None:
                            continue
                        last_value = value
                    elif value is not last_value:
                        last_value, payload = value, decode_metadata(value)
                    if path != last_path:  # one object per file in the findings
                        last_path = sys.intern(path)
                    # the problems as plain tuples: the parent makes the Findings
                    if kind == _APPLY or payload.type != "NO_OP_RECORD":
                        for p in (problems(payload, offset) if watched is None else
                                  watched(payload, offset, timestamp)):
                            found.append((place, p[0], p[1], last_path, position, p[2],
                                          None))
                    if kind == _RECORD and payload.finding:
                        found += (_row(place + flagged, f)
                                  for f in report(position, offset, None, payload, last_path))
                elif kind == _REACH:
                    found += (_row(item[2], f) for f in replay.reach(item[1]))
                elif kind == _BATCH:
                    replay.batch(*item[1:])
                elif kind == _CONTROL:
                    replay.control(*item[1:])
                else:
                    replay.end(*item[1:])
        try:  # marshal writes the findings five times as fast as pickle
            packed: Any = marshal.dumps(found)
        except ValueError:  # a finding's details hold something only pickle writes
            packed = found
        result = (packed, replay.image, replay.seen, replay.watch)
    except Exception as e:  # the parent raises it, as the one process would have
        result = e
    try:
        data = pickle.dumps(result, pickle.HIGHEST_PROTOCOL)
    except Exception as e:
        data = pickle.dumps(RuntimeError(f"the replay process failed: {e!r}"))
    _write_all(up, data)
    os.close(up)


def _watched(replay: Replay) -> Callable[[Any, int, int | None], list] | None:
    """``replay.problems`` with the watch told before and after each record (as
    Replay.apply tells it), or None when the replay has no watch."""
    watch = replay.watch
    if watch is None:
        return None
    problems, start = replay.problems, replay.start_offset

    def watched(payload: Any, offset: int, timestamp: int | None) -> list:
        if offset < start or payload.finding:
            return problems(payload, offset)
        watch.before(payload.type, payload.data)
        found = problems(payload, offset)
        watch.after(payload.type, payload.data, offset, timestamp)
        return found

    return watched


def _row(place: int, f: Finding) -> tuple:
    """A finding as the child sends it back (see ``found`` in :func:`_serve`)."""
    return place, f.code, f.message, f.file, f.position, f.offset, f.details or None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, n: int) -> bytes:
    parts, got = [], 0
    while got < n:
        part = os.read(fd, n - got)
        if not part:
            if got:
                raise EOFError("the pipe ended inside a message")
            return b""
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def _read_all(fd: int) -> bytes:
    parts = []
    while part := os.read(fd, 1 << 20):
        parts.append(part)
    return b"".join(parts)
