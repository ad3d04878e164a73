"""Running one kmeta command on a case, in-process or as a limited subprocess, and
classifying what happened.

Outcome classes (``Outcome.kind``):

* ``ok`` — a documented exit code (0, 1, 2, 3) with no traceback;
* ``internal`` — exit 70, a traceback on stderr, or an exception that escaped ``main``;
* ``hang`` — the command outlived its time limit;
* ``memory`` — MemoryError, or peak RSS above 2x the input size + 100 MB;
* ``input-written`` — a byte, an mtime or an entry of the input tree changed;
* ``batch-lost`` — repair's output lacks a batch of the input's valid prefix;
* ``missed-damage`` — a read command exited 0 on a log whose CRC-covered bytes were
  flipped (that batch cannot be trusted: "clean" by mistake);
* ``bad-output`` — what a command wrote (``compact --write``, ``snapshot --out``) is
  rejected by ``kmeta verify``;
* ``terminal`` — run again in a pseudo-terminal (80x24, colour and the bar on), it
  wrote a line wider than the terminal or left its progress bar on the screen
  (tests/terminal.py's checks; a crash there is ``internal``).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kmeta.errors import ExitCode

DOCUMENTED = {int(ExitCode.OK), int(ExitCode.FINDINGS), int(ExitCode.USAGE),
              int(ExitCode.UNREADABLE)}
MEMORY_SLACK = 100 << 20


@dataclass
class Outcome:
    kind: str
    exit_code: int | None
    seconds: float
    detail: str = ""
    stderr: str = ""
    peak_rss: int = 0
    stdout: bytes = b""  # in-process runs only: what the twin check compares

    @property
    def failed(self) -> bool:
        return self.kind != "ok"


class _Timeout(BaseException):
    """Raised by the alarm in the main thread; a BaseException so that kmeta's own
    ``except Exception`` handler cannot turn a hang into exit 70."""


def _on_alarm(signum: int, frame: object) -> None:
    raise _Timeout


def _rss_now() -> int:
    return _status_kb("VmRSS") * 1024


def _status_kb(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _reset_peak() -> bool:
    """Reset VmHWM (Linux >= 4.0) so the peak of one command can be read."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def classify(code: int | None, stderr: str, seconds: float, peak: int, budget: int,
             timed_out: bool) -> tuple[str, str]:
    """The outcome class of a finished command and a one-line reason."""
    if timed_out:
        return "hang", f"no exit after {seconds:.1f} s"
    if "MemoryError" in stderr:
        return "memory", "MemoryError"
    if peak > budget:
        return "memory", f"peak RSS {peak >> 20} MiB > budget {budget >> 20} MiB"
    if "Traceback (most recent call last)" in stderr:
        return "internal", "traceback on stderr"
    if code == int(ExitCode.INTERNAL):
        return "internal", _last_line(stderr)
    if code not in DOCUMENTED:
        return "internal", f"undocumented exit code {code}: {_last_line(stderr)}"
    return "ok", ""


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def run_inprocess(argv: list[str], timeout: float, input_bytes: int,
                  call: Callable[[list[str], Any], None] | None = None) -> Outcome:
    """``kmeta.cli.main(argv)`` with stdout/stderr captured (its Environment), an alarm
    for hangs and the peak RSS above the level before the call.  ``call``: another
    entry point taking (argv, environment), judged the same way."""
    from kmeta import cli
    from kmeta.environment import Environment

    out = io.BytesIO()
    err = io.StringIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    base = _rss_now()
    measured = _reset_peak()
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    code: int | None = None
    timed_out = False
    escaped = ""
    start = time.monotonic()
    try:
        (call or cli.main)(argv, Environment(stdout=stdout, stderr=err))
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except _Timeout:
        timed_out = True
    except BaseException as e:  # escaped main: always a bug
        import traceback

        escaped = "".join(traceback.format_exception(e))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        seconds = time.monotonic() - start
        with contextlib.suppress(Exception):
            stdout.flush()
    peak = max(0, _status_kb("VmHWM") * 1024 - base) if measured else 0
    stderr = err.getvalue() + escaped
    if escaped:
        kind, detail = "internal", "exception escaped main: " + _last_line(escaped)
    else:
        kind, detail = classify(code, stderr, seconds, peak, 2 * input_bytes + MEMORY_SLACK,
                                timed_out)
    return Outcome(kind, code, seconds, detail, stderr[-4000:], peak, out.getvalue())


def export_tasks(argv: list[str], env: Any) -> None:
    """What the tasks of ``kmeta export --data-topics --payloads`` run on ``argv[-1]``,
    without Spark's JVM (tens of seconds a start here): every table's units as the
    ``kmeta`` data source reads them into Arrow (the ``--format json`` path), and the
    batches and records tables written as Parquet by ``write_unit_files`` (the direct
    path) under ``argv[-2]``.  A KmetaError exits as the command would; the rows read are
    counted on stdout."""
    from kmeta.errors import KmetaError
    from kmeta.ops.export import TABLES, Scope, plan_units

    out, path = argv[-2], argv[-1]
    scope = Scope(data_topics=True, payloads=True)
    try:
        from kmeta.spark.export import write_unit_files
        from kmeta.spark.source import KmetaReader
    except ImportError:  # no spark extra: the rows alone
        from kmeta.ops.export import unit_chunks

        for table in TABLES:
            units, _ = plan_units([path], table, scope)
            n = sum(len(list(c.rows())) for u in units for c in unit_chunks(u))
            print(f"{table} {n}", file=env.stdout)
        return
    try:
        for table in TABLES:
            reader = KmetaReader(table, [path], scope)
            n = sum(b.num_rows for part in reader.partitions() for b in reader.read(part))
            print(f"{table} {n}", file=env.stdout)
        units, _ = plan_units([path], "batches", scope)
        for table, n in write_unit_files(units, out, ("batches", "records")):
            print(f"written {table} {n}", file=env.stdout)
    except KmetaError as e:
        print(f"kmeta: {e.one_line()}", file=env.stderr)
        raise SystemExit(int(e.exit_code)) from None


@contextlib.contextmanager
def pure_core(runs_too: bool = True) -> Iterator[None]:
    """kmeta's pure-Python reference in place of its compiled scan core, for as long as
    the block runs; without ``runs_too``, no runs at all (every batch read alone, the
    path kmeta took before runs).  Either way verify's replay runs in a second process
    whatever the log's size (kmeta.ops.replay.process: cases are far below the size that
    forks), where its pass takes plain spans (formats.spans: the reference's, or none)."""
    from kmeta.formats import batch, payload, runs, spans
    from kmeta.ops import processes
    from kmeta.ops.export import chunks
    from kmeta.ops.replay import engine as replay
    from kmeta.ops.replay import process as replay_process
    from kmeta.render import jsonl

    saved = (runs.run_length, runs.fill, runs.gather_int64, batch._compiled_records,
             payload._compiled_body, runs.walk, runs.walk_file, spans.plain_span,
             replay._compiled_changes, jsonl.record_lines)
    fork_above, alone = replay_process.FORK_ABOVE, processes.no_other_thread
    runs.run_length = runs.run_length_py if runs_too else (lambda *args: 0)
    # walks are runs of a kind: the reference's, or none (each batch read by the scan)
    runs.walk = runs.walk_py if runs_too else \
        (lambda buf, pos, limit, stop, nxt, epoch: (pos, 0, nxt, epoch, nxt))
    runs.walk_file = runs.walk_file_py if runs_too else \
        (lambda fd, scratch, pos, n, stop, nxt, epoch: (pos, 0, nxt, epoch, nxt))
    spans.plain_span = spans.plain_span_py if runs_too else \
        (lambda buf, pos, *rest: (pos, 0, 0, rest[2], [], [], [], 0, 0, []))
    runs.fill, runs.gather_int64 = runs.fill_py, runs.gather_int64_py
    # a batch's record lines: the reference's, or as text (the path before either)
    jsonl.record_lines = jsonl.record_lines_py if runs_too else (lambda *args: None)
    batch._compiled_records, payload._compiled_body = None, None
    replay._compiled_changes = None  # the replay's loop: apply_changes_py
    # and whatever threads the test process runs (pytest-xdist's, a Spark session's)
    replay_process.FORK_ABOVE, processes.no_other_thread = 0, lambda: True
    # payloads the compiled reader decoded must not be reused
    payload._DECODED.clear()
    chunks._COLUMNS.clear()
    try:
        yield
    finally:
        (runs.run_length, runs.fill, runs.gather_int64, batch._compiled_records,
         payload._compiled_body, runs.walk, runs.walk_file, spans.plain_span,
         replay._compiled_changes, jsonl.record_lines) = saved
        replay_process.FORK_ABOVE, processes.no_other_thread = fork_above, alone
        payload._DECODED.clear()
        chunks._COLUMNS.clear()


@contextlib.contextmanager
def forked_replay() -> Iterator[None]:
    """verify's replay in a second process whatever the log's size, on the compiled
    core, for as long as the block runs: there the replay applies a batch's records
    through the compiled loop (kmeta.ops.replay.engine's apply_changes), which the campaign's
    cases, far below the size that forks, never reach otherwise."""
    from kmeta.ops import processes
    from kmeta.ops.replay import process as replay_process

    saved = replay_process.FORK_ABOVE, processes.no_other_thread
    replay_process.FORK_ABOVE, processes.no_other_thread = 0, lambda: True
    try:
        yield
    finally:
        replay_process.FORK_ABOVE, processes.no_other_thread = saved


def run_subprocess(argv: list[str], timeout: float, input_bytes: int, *,
                   stdout: str | None = None,
                   python: Sequence[str] = ()) -> Outcome:
    """``kmeta.cli.main`` in a child under ``prlimit`` (address space and CPU time); the
    child's own peak RSS comes from ``/usr/bin/time``.

    ``stdout``: None for /dev/null, "closed" for a closed descriptor 1, else a path
    (``/dev/full``).  ``python``: the command line that starts Python, if not this one
    (tests/nobody.py's, as user nobody: root reads a mode-000 file)."""
    budget = 2 * input_bytes + MEMORY_SLACK
    # Address space: the interpreter and its libraries map far more than they touch, so
    # the hard limit sits well above the RSS budget; the budget itself is checked on RSS.
    limit_as = budget + (1 << 30)
    cpu = max(1, int(timeout) + 1)
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        cmd = ["/usr/bin/time", "-q", "-f", "%M", "-o", rss.name,
               "prlimit", f"--as={limit_as}", f"--cpu={cpu}", "--",
               *(python or (sys.executable,)), "-c", "import sys; from kmeta.cli import main; "
               "main(sys.argv[1:])", *argv]
        # stdout as under LANG=en_US.UTF-8 (errors 'strict'), not the C.UTF-8 default
        # of containers, which escapes what cannot be encoded
        env = dict(os.environ, NO_COLOR="1", PYTHONIOENCODING="utf-8")
        start = time.monotonic()
        sink = open(stdout, "wb") if stdout not in (None, "closed") else None  # noqa: SIM115
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                stdout=sink or (None if stdout else subprocess.DEVNULL),
                                stderr=subprocess.PIPE, env=env, start_new_session=True,
                                preexec_fn=_close_stdout if stdout == "closed" else None)
        timed_out = False
        try:
            _, stderr_b = proc.communicate(timeout=timeout + 2)
        except subprocess.TimeoutExpired:
            timed_out = True
            # the whole group: kmeta runs as a grandchild (time, then prlimit's exec)
            os.killpg(proc.pid, signal.SIGKILL)
            _, stderr_b = proc.communicate()
        seconds = time.monotonic() - start
        peak = _read_rss(rss.name)
        if sink is not None:
            sink.close()
    code = proc.returncode
    stderr = stderr_b.decode("utf-8", "replace")
    # /usr/bin/time exits 128 + the signal that killed its child (kmeta's own 130 is
    # Ctrl-C, which nothing here sends)
    sig = code - 128 if code is not None and code > 128 else None
    if sig == signal.SIGXCPU or sig == signal.SIGKILL and timed_out:
        timed_out = True
    elif sig is not None:
        return Outcome("internal", code, seconds, f"killed by signal {sig}",
                       stderr[-4000:], peak)
    kind, detail = classify(code, stderr, seconds, peak, budget, timed_out)
    return Outcome(kind, code, seconds, detail, stderr[-4000:], peak)


def run_terminal(argv: list[str], timeout: float, cwd: Path) -> Outcome:
    """``kmeta ARGS`` typed at a prompt in ``cwd`` in an 80x24 xterm (tests/terminal.py),
    judged as a person would see it: a crash or a traceback on the screen, a status
    kmeta(1) does not document, a line wider than the terminal, a bar left behind."""
    from tests.terminal import CRASHES, problems, run_in_terminal

    start = time.monotonic()
    try:
        run = run_in_terminal(argv, cwd=cwd, timeout=timeout, env={"HOME": str(cwd)})
    except AssertionError as e:  # still running when the time was up: killed
        return Outcome("hang", None, time.monotonic() - start, str(e).splitlines()[0])
    seconds = time.monotonic() - start
    found = problems(run, exit_code=run.exit_code)
    tail = "\n".join(run.screen[-20:])
    if run.exit_code not in DOCUMENTED:
        return Outcome("internal", run.exit_code, seconds,
                       f"undocumented exit code {run.exit_code} in a terminal", tail)
    crashed = [p for p in found if any(repr(c) in p for c in CRASHES)]
    if crashed:
        return Outcome("internal", run.exit_code, seconds, crashed[0], tail)
    if found:
        return Outcome("terminal", run.exit_code, seconds, found[0][:300], tail)
    return Outcome("ok", run.exit_code, seconds)


def _read_rss(path: str) -> int:
    try:
        lines = Path(path).read_text().split()
        return int(lines[-1]) * 1024 if lines else 0
    except (OSError, ValueError):
        return 0


def _close_stdout() -> None:
    os.close(1)
