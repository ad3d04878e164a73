"""kmeta's command line run in-process, answered as a finished subprocess would be.

:func:`run` calls :func:`kmeta.cli.main` with an :class:`~kmeta.environment.Environment`
of its own: stdout and stderr are buffers (not terminals, as a pipe is not), the
environment variables are the ones given (``COLUMNS``, ``NO_COLOR`` …) instead of the test
process's, and what it returns is a :class:`subprocess.CompletedProcess` with the exit
code and both streams as bytes, or as text decoded as ``subprocess.run(text=True)``
decodes it.  A subprocess costs a fresh interpreter and kmeta's imports (~0.3 s); the
suite runs the command line more than a thousand times.

A run leaks nothing into the next: it runs in a copy of the context (kmeta's context
variables), with variables of its own instead of ``os.environ``, the current directory is
restored, and main itself gives back the cyclic collector (dump turns it off) and
``sys.stdout``/``sys.stderr`` (click writes help and usage errors there).

Real subprocesses stay where the process itself is what a test is about:

* a pseudo-terminal on stdout or stderr (colour, the progress bar, ``NO_COLOR`` there);
* pipes and file descriptors: ``| head`` and broken pipes, stdout closed (``>&-``) or on
  ``/dev/full``;
* a fresh interpreter: ``--help`` and other commands not importing pyspark or heavy
  modules; the installed ``kmeta`` script;
* the locale and encoding of stdout (``PYTHONIOENCODING``, ``LANG``);
* another user (``setpriv``), resource limits (``prlimit``), peak memory;
* signals, and hangs that only a killed child can end;
* shell completion (bash, zsh and fish run the script; click reads the completion
  variables from the process environment).
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import locale
import os
import signal
import subprocess
import traceback
from collections.abc import Mapping
from typing import Any

from kmeta.cli import main
from kmeta.environment import Environment


class _Timeout(BaseException):
    """Raised by the alarm: a BaseException, so that kmeta's own ``except Exception``
    cannot turn a hang into an internal error."""


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def run(*args: Any, env: Mapping[str, str] | None = None, timeout: float | None = None,
        text: bool = True, cwd: str | os.PathLike[str] | None = None,
        input: str | None = None) -> subprocess.CompletedProcess[Any]:
    """``kmeta ARGS`` with the variables ``env`` (default: this process's, as a child
    would inherit them); ``timeout`` raises subprocess.TimeoutExpired, as
    ``subprocess.run`` does; ``text``: the streams decoded (else bytes); ``input``: what
    standard input holds (default: nothing, as ``< /dev/null``)."""
    argv = [os.fsdecode(a) if isinstance(a, bytes) else str(a) for a in args]
    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace",
                              write_through=True)
    environment = Environment(stdout=stdout, stderr=stderr,
                              environ=dict(os.environ if env is None else env),
                              stdin=io.StringIO(input or ""))
    code = _call(argv, environment, timeout, cwd)
    for stream in (stdout, stderr):
        stream.flush()
    cmd = ["kmeta", *argv]
    if text:
        return subprocess.CompletedProcess(cmd, code, _decoded(out.getvalue()),
                                           _decoded(err.getvalue()))
    return subprocess.CompletedProcess(cmd, code, out.getvalue(), err.getvalue())


def _call(argv: list[str], env: Environment, timeout: float | None,
          cwd: str | os.PathLike[str] | None) -> int:
    """main's exit status, as the process's would be."""
    old = signal.signal(signal.SIGALRM, _alarm) if timeout else None
    if timeout:
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
            contextvars.copy_context().run(main, argv, env)
        return 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=env.stderr)
        return 1
    except _Timeout:
        raise subprocess.TimeoutExpired(["kmeta", *argv], timeout or 0) from None
    except BaseException as e:  # what escaped main (--traceback): Python prints it, exits 1
        env.stderr.write("".join(traceback.format_exception(e)))
        return 1
    finally:
        if timeout:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)


def _decoded(data: bytes) -> str:
    """As ``subprocess.run(text=True)``: the locale's encoding, strict, universal
    newlines."""
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_until_closed(fd: int) -> bytes:
    """Everything a pseudo-terminal's master end reads until its other end is closed (a
    child's stdout or stderr on the terminal: the tests of colour, the bar, the fork)."""
    chunks = []
    while True:
        try:
            data = os.read(fd, 1 << 16)
        except OSError:  # the other end closed (Linux answers EIO)
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)
