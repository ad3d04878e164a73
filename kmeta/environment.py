"""What one run of kmeta reads of the world besides its arguments, and how it writes there.

Its two output streams, the environment variables that shape what it writes on them
(``COLUMNS`` and ``NO_COLOR``; rich also reads ``TERM``, ``FORCE_COLOR`` and the like) and
whether an error shows its traceback.  The command line makes one per run and hands it to
every renderer; nothing else reads ``sys.stdout`` or ``os.environ`` for output.  A test
builds one around buffers and a dict of variables and runs kmeta in-process with it, so
nothing of one run leaks into the next (httpie's ``Environment``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TextIO

from kmeta.errors import OutputError

#: A line longer than this (the hex of a large batch: tens of MB) is written in slices of
#: this size instead of joined and encoded whole, which would copy it twice more.
_HUGE_LINE = 1 << 20


@dataclass
class Environment:
    """``Environment()`` is the process's own: its streams and variables as they are now.

    ``stdout`` is None when the process was started with it closed (``>&-``).
    """

    stdout: TextIO | None = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    #: ``--traceback``: a failure re-raises instead of being one line.
    traceback: bool = False
    #: where ``kmeta shell`` reads commands when it is not at a terminal (None: closed)
    stdin: TextIO | None = field(default_factory=lambda: sys.stdin)

    @property
    def no_color(self) -> bool:
        """``NO_COLOR`` is set: no escape codes at all, on a terminal too."""
        return bool(self.environ.get("NO_COLOR"))

    @property
    def columns(self) -> int | None:
        """``COLUMNS`` when it is a positive number: the width asked for, tty or pipe."""
        value = self.environ.get("COLUMNS", "")
        return int(value) if value.isdigit() and int(value) > 0 else None

    def colour(self, stream: TextIO) -> bool:
        """Whether what goes to ``stream`` (one of the two) may be coloured: a terminal,
        and no ``NO_COLOR``."""
        return not self.no_color and stream.isatty()

    def guarded(self) -> Environment:
        """This environment with its stdout guarded: a write that fails (full disk,
        /dev/full, I/O error) is one OutputError, not an internal error, and a file name
        that is not UTF-8 (it reaches text as surrogates) is written as its own bytes
        (copyable) instead of failing under a strict UTF-8 locale.  JSON output escapes
        such names instead (:meth:`write_lines`)."""
        stdout = self.stdout
        if stdout is None or isinstance(stdout, _GuardedStream):
            return self
        if hasattr(stdout, "reconfigure"):
            stdout.reconfigure(errors="surrogateescape")
        return replace(self, stdout=_GuardedStream(stdout))

    def write_lines(self, lines: Iterable[str], *, json: bool = False) -> None:
        """Write lines to stdout as UTF-8, in large chunks: a dump writes gigabytes.

        ``json``: the lines are JSON, which must stay valid UTF-8 whatever the paths hold.

        On a terminal every line is shown whole: one wider than the terminal is folded,
        JSON indented as jq shows it (:func:`kmeta.render.console.terminal_lines`).  A
        pipe or a file gets the lines byte for byte, at no cost.
        """
        assert self.stdout is not None  # kmeta.cli.main refuses to run with stdout closed
        if _isatty(self.stdout):
            from kmeta.render.console import terminal_lines, terminal_width

            width = terminal_width(self)
            if width is not None:
                lines = terminal_lines(lines, width, json)
        encode = _json_bytes if json else _text_bytes
        self.stdout.flush()
        out = self.stdout.buffer
        buf: list[str] = []
        append = buf.append
        size = 0
        for line in lines:
            if len(line) > _HUGE_LINE:  # a batch's hex: written in slices, never copied whole
                if buf:
                    append("")
                    out.write(encode("\n".join(buf)))
                    buf.clear()
                    size = 0
                for i in range(0, len(line), _HUGE_LINE):
                    out.write(encode(line[i:i + _HUGE_LINE]))
                out.write(b"\n")
                continue
            append(line)
            size += len(line)
            # ~200 KB: joins stay in cache (one item may hold a whole piece of a batch)
            if len(buf) >= 256 or size >= 1 << 18:
                append("")
                out.write(encode("\n".join(buf)))
                buf.clear()
                size = 0
        if buf:
            append("")
            out.write(encode("\n".join(buf)))
        out.flush()

    def quiet_stdout(self) -> None:
        """The reader (``| head``) went away: point stdout at /dev/null so that the flush
        at exit does not complain.  (A stream without a descriptor, a test's buffer, has
        nothing to complain about.)"""
        try:
            fd = self.stdout.fileno() if self.stdout is not None else None
        except (OSError, ValueError):
            return
        if fd is not None:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, fd)


class _GuardedStream:
    """stdout, with a failed write turned into an OutputError; a reader gone away stays a
    BrokenPipeError, which ends the command quietly."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def _guard(self, call: Any, *args: Any) -> Any:
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise OutputError(f"standard output cannot be written: {e.strerror or e}",
                              hint="free space where it goes, or redirect it elsewhere"
                              ) from e

    def write(self, data: Any) -> Any:
        return self._guard(self._raw.write, data)

    def flush(self) -> None:
        self._guard(self._raw.flush)

    @property
    def buffer(self) -> _GuardedStream:
        return _GuardedStream(self._raw.buffer)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (ValueError, AttributeError):  # closed, or a stand-in without it
        return False


_SURROGATE = re.compile("[\ud800-\udfff]")


def _json_bytes(text: str) -> bytes:
    """JSON text as UTF-8.  A path that is not UTF-8 reaches here holding lone surrogates
    (Python's surrogateescape); written raw they would make the output invalid UTF-8, so
    they become JSON escapes (``\\udcff``), which every JSON reader accepts."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def _text_bytes(text: str) -> bytes:
    # Text for people keeps a non-UTF-8 path's own bytes, so that it can be copied.
    return text.encode("utf-8", "surrogateescape")
