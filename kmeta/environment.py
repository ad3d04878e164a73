"""What one run of kmeta reads of the world besides its arguments, and how it writes there.

Its two output streams, the environment variables that shape what it writes on them
(``COLUMNS`` and ``NO_COLOR``; rich also reads ``TERM``, ``FORCE_COLOR`` and the like) and
whether an error shows its traceback.  The command line makes one per run and hands it to
every renderer; nothing else reads ``sys.stdout`` or ``os.environ`` for output.  A test
builds one around buffers and a dict of variables and runs kmeta in-process with it, so
nothing of one run leaks into the next (httpie's ``Environment``).

On a terminal a line wider than it is folded (:func:`fold`), so that every line is seen
whole; through a pipe every byte is as written.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
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
        such names instead (:meth:`write_lines`).

        A stderr that is a terminal folds what is printed there (an error line, the
        count of findings) to its width, as :meth:`write_lines` folds stdout's lines."""
        stdout = self.stdout
        if stdout is None or isinstance(stdout, _GuardedStream):
            return self
        if hasattr(stdout, "reconfigure"):
            stdout.reconfigure(errors="surrogateescape")
        stderr = self.stderr
        if is_terminal(stderr) and not isinstance(stderr, FoldedStream):
            stderr = FoldedStream(stderr, self._columns_of(stderr))  # type: ignore[assignment]
        return replace(self, stdout=_GuardedStream(stdout), stderr=stderr)

    def write_lines(self, lines: Iterable[str | bytes], *, json: bool = False) -> None:
        """Write lines to stdout as UTF-8, in large chunks: a dump writes gigabytes.

        ``json``: the lines are JSON, which must stay valid UTF-8 whatever the paths hold.

        An item may be bytes: lines as UTF-8 that holds no escape to make (a dump's runs
        of batches and batches of many records, which the renderers make so with
        ``utf8=True``), written as they are, then a newline; on a terminal they are
        shown as the text they are.

        On a terminal every line is shown whole: one wider than the terminal is folded,
        JSON indented as jq shows it (:func:`terminal_lines`).  A pipe or a file gets
        the lines byte for byte, at no cost.
        """
        assert self.stdout is not None  # kmeta.cli.main refuses to run with stdout closed
        width = self.terminal_width()
        if width is not None:
            lines = terminal_lines(_as_text(lines), width, json)
        encode = _json_bytes if json else _text_bytes
        self.stdout.flush()
        out = self.stdout.buffer
        buf: list[str] = []
        append = buf.append
        size = 0
        for line in lines:
            if type(line) is bytes:  # encoded by the renderer: no join, no encoding again
                if buf:
                    append("")
                    out.write(encode("\n".join(buf)))
                    buf.clear()
                    size = 0
                out.write(line)
                out.write(b"\n")
                continue
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

    def terminal_width(self) -> int | None:
        """The columns of stdout when it is a terminal (``COLUMNS`` when set, else the
        terminal's own, 80 when it does not know); None otherwise: a pipe or a file gets
        every line as written."""
        return self._columns_of(self.stdout) if is_terminal(self.stdout) else None

    def _columns_of(self, terminal: Any) -> int:
        """``COLUMNS`` when set, else the width of ``terminal``, 80 when it does not
        know its own (a fresh pseudo-terminal says 0)."""
        if (columns := self.columns) is not None:
            return columns
        try:
            return os.get_terminal_size(terminal.fileno()).columns or 80
        except (OSError, ValueError, AttributeError):
            return 80

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


# ---------------------------------------------------------------------- a terminal's lines

def fold(text: str, width: int | None, hang: str = "    ") -> str:
    """``text`` folded to ``width`` columns, the rows after the first indented by its own
    indent and ``hang``; whole when ``width`` is None (a pipe without COLUMNS) or when it
    fits.

    Rows break at spaces; a word wider than a row (a path, a JSON value) breaks after a
    ``,``, ``/`` or ``;`` in it, and only a word with none of them is cut at the width.
    Columns are a terminal's: escape sequences (colour) take none, East Asian wide
    characters two.  ``text`` with newlines is folded line by line."""
    if width is None or (len(text) <= width and text.isascii()):
        return text  # the common case, a line that fits: one length check
    if "\n" in text:
        return "\n".join(fold(line, width, hang) for line in text.split("\n"))
    if text.isascii() and "\x1b" not in text:
        return _fold_plain(text, width, hang)
    escapes: list[tuple[int, str]] = []
    plain = text
    if "\x1b" in text:
        plain, escapes = _without_escapes(text)
    cells = None if plain.isascii() else _cell_offsets(plain)
    if (len(plain) if cells is None else cells[-1]) <= width:
        return text
    lead = len(plain) - len(plain.lstrip(" "))
    indent = " " * min(lead + len(hang), width // 2)
    rows = _rows(plain, cells, width, lead, width - len(indent))
    return _joined(plain, rows, indent, escapes)


#: A CSI escape sequence (colours, styles): no columns on a terminal.
_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")

#: Where a word wider than a row may break: after one of these.
_SOFT_BREAKS = ",/;"


def _fold_plain(text: str, width: int, hang: str) -> str:
    """:func:`fold` of a line of plain ASCII (a character a column, no escape), the
    common case, made in one pass: ``dump`` on a terminal folds millions."""
    n = len(text)
    lead = n - len(text.lstrip(" "))
    indent = " " * min(lead + len(hang), width // 2)
    room = width - len(indent)
    rfind = text.rfind
    rows = []
    start, space, low = 0, width, lead + 1  # low: a row holds a character of its own
    while n - start > space:
        reach = start + space
        cut = rfind(" ", low, reach + 1)
        if cut >= low:
            rows.append(text[start:cut].rstrip(" "))
            start = cut + 1
            while start < n and text[start] == " ":
                start += 1
        else:
            soft = max(rfind(",", low - 1, reach), rfind("/", low - 1, reach),
                       rfind(";", low - 1, reach))
            end = soft + 1 if soft >= low - 1 else reach
            rows.append(text[start:end])
            start = end
        space, low = room, start + 1
    if start < n:
        rows.append(text[start:])
    return ("\n" + indent).join(rows)


def _without_escapes(text: str) -> tuple[str, list[tuple[int, str]]]:
    """``text`` without its escape sequences, and each sequence with its place in it."""
    escapes = []
    pieces = []
    at = taken = 0
    for m in _ESCAPE.finditer(text):
        pieces.append(text[at:m.start()])
        taken += m.start() - at
        escapes.append((taken, m.group()))
        at = m.end()
    pieces.append(text[at:])
    return "".join(pieces), escapes


def _cell_offsets(text: str) -> list[int]:
    """The columns before each character of ``text``, and after the last."""
    from rich.cells import get_character_cell_size

    out = [0]
    for char in text:
        out.append(out[-1] + get_character_cell_size(char))
    return out


def _rows(text: str, cells: list[int] | None, width: int, lead: int,
          room: int) -> list[tuple[int, int]]:
    """Where ``text`` is cut into rows: (start, end) of each.  The first row has
    ``width`` columns (``lead`` of them its own indent), the others ``room``."""
    import bisect

    n = len(text)
    rows = []
    start, space, first = 0, width, True
    while True:
        if cells is None:
            reach = start + space
        else:  # the last character that ends within the row's columns
            reach = bisect.bisect_right(cells, cells[start] + space) - 1
        if reach >= n:
            rows.append((start, n))
            return rows
        low = start + (lead if first else 0) + 1  # a row holds a character of its own
        cut = text.rfind(" ", low, reach + 1)
        if cut >= low:
            end = cut
            while end > start and text[end - 1] == " ":
                end -= 1
            following = cut + 1
            while following < n and text[following] == " ":
                following += 1
        else:
            soft = max(text.rfind(c, low - 1, reach) for c in _SOFT_BREAKS)
            end = following = soft + 1 if soft >= low - 1 else max(reach, start + 1)
        rows.append((start, end))
        if following >= n:
            return rows
        start, space, first = following, room, False


def _joined(text: str, rows: list[tuple[int, int]], indent: str,
            escapes: list[tuple[int, str]]) -> str:
    """The rows of ``text``, each after the first behind ``indent``, with the escape
    sequences put back where they were (one between two rows ends the first)."""
    if not escapes:
        return "\n".join([text[rows[0][0]:rows[0][1]],
                          *(indent + text[a:b] for a, b in rows[1:])])
    out = []
    i = 0
    for n, (a, b) in enumerate(rows):
        last = n == len(rows) - 1
        upto = len(text) + 1 if last else rows[n + 1][0]
        piece = [] if n == 0 else [indent]
        at = a
        while i < len(escapes) and escapes[i][0] < upto:
            place, seq = escapes[i]
            place = min(max(place, a), b)
            piece.append(text[at:place])
            piece.append(seq)
            at = place
            i += 1
        piece.append(text[at:b])
        out.append("".join(piece))
    return "\n".join(out)


def indented_json(text: str) -> str:
    """JSON lines as jq shows them on a terminal: each value indented two spaces a
    level (``text`` may hold several lines, one value each)."""
    import json

    out = []
    for line in text.split("\n"):
        try:
            out.append(json.dumps(json.loads(line), indent=2, ensure_ascii=False))
        except ValueError:
            out.append(line)
    return "\n".join(out)


def terminal_lines(lines: Iterable[str], width: int, json: bool = False) -> Iterator[str]:
    """``lines`` as a terminal of ``width`` columns shows them whole: each longer line
    folded (:func:`fold`), JSON indented first (:func:`indented_json`).  A line that
    fits costs a length check."""
    if json:
        for line in lines:
            if (len(line) <= width and line.isascii()) or fold(line, width) is line:
                yield line
            else:
                yield fold(indented_json(line), width, "  ")
        return
    for line in lines:
        yield line if len(line) <= width and line.isascii() else fold(line, width)


class FoldedStream:
    """A terminal's text stream whose lines are folded to ``width`` as they are written
    (:func:`fold`; a write is taken as whole lines, as ``print`` and a rich console write
    them).  A write that moves the cursor (a progress bar's redraw, a line editor's)
    passes as it is: it draws within the width itself."""

    def __init__(self, raw: Any, width: int) -> None:
        self._raw = raw
        self._width = width

    def write(self, text: str) -> int:
        if "\r" in text or _CURSOR.search(text):
            return self._raw.write(text)
        return self._raw.write(fold(text, self._width))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


#: A CSI escape sequence other than colour (SGR, ending in "m"): a cursor move, an erase.
_CURSOR = re.compile(r"\x1b\[[0-?]*[ -/]*[@-ln-~]")


def is_terminal(stream: Any) -> bool:
    """Whether ``stream`` is a terminal (a closed one, or a stand-in without the
    question, is not)."""
    try:
        return bool(stream.isatty())
    except (ValueError, AttributeError):
        return False


_SURROGATE = re.compile("[\ud800-\udfff]")


def _as_text(lines: Iterable[str | bytes]) -> Iterator[str]:
    for line in lines:
        yield line.decode("utf-8") if type(line) is bytes else line


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
