"""kmeta run as a person runs it: in a terminal, watched through a terminal emulator.

:func:`run_in_terminal` starts ``python -m kmeta ARGS`` with standard input, output and
error all on the slave end of a pseudo-terminal that is the child's controlling terminal
(as a login shell gives every command it starts), ``TERM=xterm-256color``, a window size
set on the terminal itself (``TIOCSWINSZ``; ``COLUMNS`` and ``LINES`` unset, so kmeta
asks the terminal as it does for a person) and colour left on (``NO_COLOR`` unset).  The
test reads the master end while kmeta runs, since a full terminal buffer would block
kmeta, and feeds every byte to pyte, a VT100/xterm emulator, which also answers the
cursor-position requests prompt_toolkit sends, as a real terminal does.

What comes back, a :class:`TerminalRun`, holds the exit status as a shell reports it, the
raw bytes the terminal received, and the session rendered as text: the lines that
scrolled off the top, then the final screen, which is what a person reads scrolling back.
:func:`check` fails a run, listing every problem at once with that text, on the exit
status, "internal error" or a Python traceback, a line wider than the terminal, or the
transient progress bar left on the screen.

Beside it, :func:`run_piped` keeps stdout on a pipe the test reads and closes after N
lines (``kmeta dump | head -40``: the bar and errors still reach the terminal), and
:func:`run_interrupted` types Ctrl-C once kmeta has filled a screen.  A session driven
key by key (``kmeta shell``) uses :class:`Terminal` directly.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import re
import selectors
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator, Mapping

import pyte
from wcwidth import wcwidth

#: Variables that change what kmeta draws on a terminal: the harness leaves them out, so
#: that the terminal's own size, colour support and pager are what kmeta meets.
_DRAWING = ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "COLUMNS", "LINES", "TERM",
            "TTY_COMPATIBLE", "TTY_INTERACTIVE", "PAGER", "XDG_STATE_HOME")

#: Run before kmeta, in the child: a new session (Popen's start_new_session) has no
#: controlling terminal until it claims one.  Claiming the pseudo-terminal on stdin makes
#: it the child's, with the child's group in the foreground, so that Ctrl-C typed on the
#: master reaches kmeta as SIGINT and ``less`` can open /dev/tty.  Ctrl-C is reset to its
#: default as a shell does for what it starts: a pytest-xdist worker may ignore SIGINT,
#: and Python does not install its KeyboardInterrupt handler over an inherited SIG_IGN.
#: This launcher then becomes kmeta itself (exec: the same process, the same pid), which
#: a preexec_fn would do without a second interpreter's start but is not safe beside
#: pytest-xdist's threads.
_LAUNCHER = (
    "import fcntl, os, signal, sys, termios\n"
    "fcntl.ioctl(0, termios.TIOCSCTTY, 0)\n"
    "signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
    "os.execv(sys.executable, [sys.executable, '-m', 'kmeta', *sys.argv[1:]])\n"
)

#: The escape sequences a program writes to a terminal: CSI (colours, cursor moves,
#: erasing), OSC (titles, hyperlinks), DCS/SOS/PM/APC strings, and the two-byte ones.
ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)"
                     r"|[PX^_][^\x1b]*\x1b\\|[ -/]*[0-~])")

#: The parts of the line rich's progress bar draws for kmeta (kmeta/render/progress.py):
#: the label (the command's name), a bar of heavy rules, bytes read of the total
#: ("12.3/268.4 MB"; "0/? bytes" before the total is known), the rate ("45.1 MB/s", "?")
#: and the time left ("0:00:05", "-:--:--").
BAR_GLYPHS = re.compile(r"[━╸╺]{3,}")
BAR_BYTES = re.compile(r"\d[\d,.]*/(?:\d[\d,.]*|\?) ?(?:bytes|[kMGTPEZY]B)\b")
BAR_RATE = re.compile(r"(?:\d[\d,.]* ?(?:bytes|[kMGTPEZY]B)/s|\s\?\s)")
BAR_TIME_LEFT = re.compile(r"(?:\d+:\d\d:\d\d|-:--:--)\s*$")

#: Lines too wide for the terminal that a failure lists one by one; the rest are counted.
_WIDE_SHOWN = 5

#: What only a crash prints: kmeta's one line for a bug, Python's traceback, and the
#: message Python prints for an exception it could not raise (a flush failing at exit).
CRASHES = ("internal error", "Traceback", "Exception ignored")


@dataclasses.dataclass(frozen=True)
class TerminalRun:
    """A finished kmeta run in a terminal, as a person saw it."""

    args: tuple[str, ...]
    columns: int
    rows: int
    #: the status a shell reports ($?): the exit code, or 128 + N when signal N killed it
    exit_code: int
    #: every byte the terminal received (stderr always, stdout unless it was piped)
    raw: bytes
    #: the session rendered: the lines scrolled off the top, then the final screen's
    #: (each without trailing blanks; blank lines at the bottom left out)
    screen: tuple[str, ...]
    #: the rows of the final screen alone, as the terminal shows them when kmeta is done
    final_screen: tuple[str, ...]
    #: what the test read from stdout when it was a pipe (head's lines), else None
    stdout: bytes | None = None

    @property
    def command(self) -> str:
        return " ".join(("kmeta", *self.args))

    @property
    def text(self) -> str:
        """The session as a person reads it, scrolling back: one string."""
        return "\n".join(self.screen)

    @property
    def stream_text(self) -> str:
        """The terminal's bytes as text, escape sequences taken out: what was written,
        including what was erased or redrawn since (a bar, a prompt)."""
        return ESCAPES.sub("", self.raw.decode("utf-8", "replace"))


class _Emulator(pyte.HistoryScreen):
    """pyte's screen with its scrollback, answering the program's status requests
    (cursor position, device attributes) on the terminal as a real one does."""

    def __init__(self, columns: int, rows: int, answer: Callable[[bytes], None],
                 history: int) -> None:
        super().__init__(columns, rows, history=history)
        self._answer = answer

    def write_process_input(self, data: str) -> None:
        self._answer(data.encode())

    def rendered(self) -> list[str]:
        """The lines scrolled off, then the screen's, each without trailing blanks."""
        lines = [_render(line, self.columns) for line in self.history.top]
        lines += [line.rstrip() for line in self.display]
        return lines


def _render(line: Mapping[int, pyte.screens.Char], columns: int) -> str:
    """One row of cells as text, a wide character's second cell skipped (as
    ``Screen.display`` renders the rows still on the screen)."""
    out = []
    skip = False
    for x in range(columns):
        if skip:
            skip = False
            continue
        char = line[x].data
        skip = wcwidth(char[:1]) == 2
        out.append(char)
    return "".join(out).rstrip()


def terminal_environment(env: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """A person's environment in an xterm: this process's, without what would change
    the drawing (:data:`_DRAWING`), ``TERM=xterm-256color``, a UTF-8 locale where none
    is set; then ``env`` (a value of None removes the variable)."""
    environ = {k: v for k, v in os.environ.items() if k not in _DRAWING}
    environ["TERM"] = "xterm-256color"
    if not any(environ.get(k) for k in ("LC_ALL", "LC_CTYPE", "LANG")):
        environ["LANG"] = "C.UTF-8"
    for name, value in (env or {}).items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    return environ


class Terminal:
    """One kmeta process on a pseudo-terminal of ``columns`` x ``rows``, its output fed
    to an emulator as it comes.  Use as a context manager: leaving it kills a kmeta
    still running (its process group, which is its own) and closes the descriptors.

    ``stdout_piped``: stdout on a pipe this side reads (:meth:`read_stdout_lines`)
    instead of the terminal.
    """

    def __init__(self, args: list[str] | tuple[str, ...], *, columns: int = 80,
                 rows: int = 24, env: Mapping[str, str | None] | None = None,
                 cwd: str | os.PathLike[str] | None = None, stdout_piped: bool = False,
                 history: int = 20_000) -> None:
        self.args = tuple(os.fspath(a) if isinstance(a, os.PathLike) else str(a)
                          for a in args)
        self.columns, self.rows = columns, rows
        self._raw = bytearray()
        self._stdout = bytearray() if stdout_piped else None
        self._stdout_open = stdout_piped
        self._master, slave = os.openpty()
        fcntl.ioctl(self._master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self._screen = _Emulator(columns, rows, self._answer, history)
        self._stream = pyte.ByteStream(self._screen)
        self._master_open = True
        read_end = write_end = None
        if stdout_piped:
            read_end, write_end = os.pipe()
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-c", _LAUNCHER, *self.args],
                stdin=slave, stdout=slave if write_end is None else write_end, stderr=slave,
                env=terminal_environment(env), cwd=cwd, start_new_session=True)
        except BaseException:
            os.close(self._master)
            if read_end is not None:
                os.close(read_end)
            raise
        finally:
            os.close(slave)  # kmeta's alone now: the master reads EIO once it exits
            if write_end is not None:
                os.close(write_end)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._master, selectors.EVENT_READ)
        self._stdout_fd = read_end
        if read_end is not None:
            self._selector.register(read_end, selectors.EVENT_READ)

    # ------------------------------------------------------------------ the session

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait()
        self._selector.close()
        if self._master_open:
            os.close(self._master)
            self._master_open = False
        self.close_stdout()

    def send(self, data: bytes | str) -> None:
        """Type ``data`` on the keyboard (written to the master, as a terminal does)."""
        os.write(self._master, data.encode() if isinstance(data, str) else data)

    def _answer(self, data: bytes) -> None:
        """The emulator's reply to a request (where the cursor is): lost, as a real
        terminal's would be, once nothing is left to read it."""
        if self._master_open:
            with contextlib.suppress(OSError):
                self.send(data)

    def interrupt(self) -> None:
        """Ctrl-C: the terminal turns it into SIGINT for the foreground group, kmeta."""
        self.send(b"\x03")

    def close_stdout(self) -> None:
        """Close the read end of stdout's pipe, as ``head`` does when it has its lines:
        kmeta's next write fails (EPIPE)."""
        if self._stdout_fd is not None and self._stdout_open:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(self._stdout_fd)
            os.close(self._stdout_fd)
            self._stdout_open = False

    @property
    def lines(self) -> list[str]:
        """The session so far, rendered: scrollback, then the screen."""
        return self._screen.rendered()

    @property
    def cursor_row(self) -> int:
        """The index in :attr:`lines` of the row the cursor is on."""
        return len(self._screen.history.top) + self._screen.cursor.y

    def written_lines(self) -> int:
        """How many lines of the session hold text: a screenful is ``rows`` of them."""
        return sum(1 for line in self.lines if line)

    # ------------------------------------------------------------------ reading

    def _pump(self, wait: float) -> bool:
        """Read what is ready within ``wait`` seconds; False when nothing came."""
        got = False
        for key, _ in self._selector.select(wait):
            fd = key.fd
            try:
                data = os.read(fd, 1 << 16)
            except OSError:  # the master reads EIO once every slave descriptor is closed
                data = b""
            if fd == self._master:
                if not data:
                    self._selector.unregister(fd)
                    os.close(self._master)
                    self._master_open = False
                    continue
                self._raw += data
                self._stream.feed(data)
            elif data:
                assert self._stdout is not None
                self._stdout += data
            else:
                self.close_stdout()
            got = got or bool(data)
        return got

    def wait_for(self, condition: Callable[[Terminal], bool], what: str,
                 timeout: float = 60) -> None:
        """Read until ``condition(self)`` holds; fail, showing the screen, when kmeta
        exits or ``timeout`` seconds pass first."""
        deadline = time.monotonic() + timeout
        while not condition(self):
            if self._process.poll() is not None and not self._pump(0.2):
                raise AssertionError(f"{self.command} exited ({self._process.returncode}) "
                                     f"before {what}:\n{self.shown()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.command}: no {what} after {timeout} s:\n"
                                     f"{self.shown()}")
            if self._master_open or self._stdout_open:
                self._pump(0.05)
            else:
                time.sleep(0.05)

    def wait_for_line(self, pattern: str, *, after: int = 0, timeout: float = 60) -> int:
        """Read until a rendered line at index ``after`` or later matches ``pattern``
        (re.search); its index."""
        regex = re.compile(pattern)
        found: list[int] = []

        def appeared(term: Terminal) -> bool:
            for i, line in enumerate(term.lines[after:], after):
                if regex.search(line):
                    found.append(i)
                    return True
            return False

        self.wait_for(appeared, f"line matching {pattern!r}", timeout)
        return found[0]

    def read_stdout_lines(self, count: int, timeout: float = 60) -> bytes:
        """Read stdout's pipe until it holds ``count`` lines (or ends); those lines."""
        assert self._stdout is not None, "stdout is on the terminal"
        self.wait_for(lambda t: t._stdout.count(b"\n") >= count or not t._stdout_open,
                      f"{count} lines on stdout", timeout)
        return b"".join(bytes(self._stdout).splitlines(keepends=True)[:count])

    def finish(self, timeout: float = 120) -> TerminalRun:
        """Read until kmeta exits and the terminal has nothing more; the run."""
        deadline = time.monotonic() + timeout
        while self._process.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.command} still running after {timeout} s:\n"
                                     f"{self.shown()}")
            self._pump(0.05)
        # what is still in the terminal; a grandchild keeping the slave open (verify's
        # forks) gets a moment, then is not waited for
        quiet_until = time.monotonic() + 1.0
        while (self._master_open or self._stdout_open) and time.monotonic() < quiet_until:
            if self._pump(0.05):
                quiet_until = time.monotonic() + 1.0
        code = self._process.returncode
        return _run_of(self.args, self._screen, 128 - code if code < 0 else code,
                       bytes(self._raw), None if self._stdout is None else bytes(self._stdout))

    @property
    def command(self) -> str:
        return " ".join(("kmeta", *self.args))

    def shown(self) -> str:
        return _framed(self.lines)


def _run_of(args: tuple[str, ...], screen: _Emulator, exit_code: int, raw: bytes,
            stdout: bytes | None) -> TerminalRun:
    lines = screen.rendered()
    while lines and not lines[-1]:
        lines.pop()
    return TerminalRun(args=args, columns=screen.columns, rows=screen.lines,
                       exit_code=exit_code, raw=raw, screen=tuple(lines),
                       final_screen=tuple(line.rstrip() for line in screen.display),
                       stdout=stdout)


def render(args: list[str] | tuple[str, ...], raw: bytes, *, exit_code: int = 0,
           columns: int = 80, rows: int = 24, stdout: bytes | None = None) -> TerminalRun:
    """The run a terminal would show had kmeta written ``raw`` to it: for the tests of
    the checks themselves, and for looking at bytes saved from a run."""
    screen = _Emulator(columns, rows, lambda answer: None, history=20_000)
    pyte.ByteStream(screen).feed(raw)
    return _run_of(tuple(args), screen, exit_code, raw, stdout)


# ---------------------------------------------------------------------- the runs

def run_in_terminal(args: list[str] | tuple[str, ...], *, columns: int = 80, rows: int = 24,
                    env: Mapping[str, str | None] | None = None, timeout: float = 120,
                    stdin_text: str | None = None,
                    cwd: str | os.PathLike[str] | None = None) -> TerminalRun:
    """``kmeta ARGS`` typed at a shell prompt in an xterm of ``columns`` x ``rows``;
    ``stdin_text`` is typed at the terminal once it has started (type-ahead)."""
    with Terminal(args, columns=columns, rows=rows, env=env, cwd=cwd) as term:
        if stdin_text:
            term.send(stdin_text)
        return term.finish(timeout)


def run_piped(args: list[str] | tuple[str, ...], *, head: int | None = None,
              columns: int = 80, rows: int = 24,
              env: Mapping[str, str | None] | None = None, timeout: float = 120,
              cwd: str | os.PathLike[str] | None = None) -> TerminalRun:
    """``kmeta ARGS | head -HEAD`` at the prompt: stdout on a pipe the test reads and
    closes after ``head`` lines (None: read to the end), stdin and stderr on the
    terminal.  The run's ``stdout`` holds the lines kept."""
    with Terminal(args, columns=columns, rows=rows, env=env, cwd=cwd,
                  stdout_piped=True) as term:
        if head is not None:
            kept = term.read_stdout_lines(head, timeout)
            term.close_stdout()
            run = term.finish(timeout)
            return dataclasses.replace(run, stdout=kept)
        return term.finish(timeout)


def run_interrupted(args: list[str] | tuple[str, ...], *, after_lines: int | None = None,
                    columns: int = 80, rows: int = 24,
                    env: Mapping[str, str | None] | None = None, timeout: float = 120,
                    cwd: str | os.PathLike[str] | None = None) -> TerminalRun:
    """``kmeta ARGS`` stopped with Ctrl-C once ``after_lines`` lines (default: a
    screenful) have reached the terminal."""
    wanted = rows if after_lines is None else after_lines
    with Terminal(args, columns=columns, rows=rows, env=env, cwd=cwd) as term:
        term.wait_for(lambda t: t.written_lines() >= wanted, f"{wanted} lines of output",
                      timeout)
        term.interrupt()
        return term.finish(timeout)


# ---------------------------------------------------------------------- the checks

def display_width(text: str) -> int:
    """Columns ``text`` takes on a terminal (wide characters two, controls none, tabs to
    the next multiple of eight)."""
    width = 0
    for char in text:
        if char == "\t":
            width += 8 - width % 8
        else:
            width += max(wcwidth(char), 0)
    return width


def output_lines(raw: bytes) -> Iterator[tuple[int, str, int]]:
    """(line number, text, width) of every line in the bytes a terminal received: escape
    sequences taken out, each line split at its carriage returns into the texts that
    overwrite each other (a bar redrawn, "^C" echoed), the widest of them kept.

    The cursor moves a line editor makes are kept as what they do to a line's width
    (:func:`_as_text`): a prompt redrawn in place after moving back over it is not a
    line twice as long."""
    text = ESCAPES.sub(_as_text, raw.decode("utf-8", "replace")).replace("\b", "\r")
    for number, line in enumerate(text.split("\n"), 1):
        pieces = line.split("\r")
        widest = max(pieces, key=display_width)
        yield number, widest, display_width(widest)


#: CSI sequences that move the cursor, by final byte: "up, down, next or previous line,
#: to a row" (a line ends), "to a column or position" (columns from the start), "back"
#: (overwrites from a column unknown here: counted from the start, never overstated)
_CURSOR = re.compile(r"\x1b\[([\d;]*)([ABCDEFGHdf`])")


def _as_text(escape: re.Match[str]) -> str:
    """An escape sequence as the text that leaves the cursor where it does: nothing for
    colours and the rest; a newline, a carriage return or spaces for a cursor move."""
    move = _CURSOR.fullmatch(escape.group())
    if move is None:
        return ""
    numbers = [int(n) if n else 1 for n in move.group(1).split(";")]
    final = move.group(2)
    if final == "C":  # forward: the columns passed over are the line's
        return " " * numbers[0]
    if final in "G`":  # to a column
        return "\r" + " " * (numbers[0] - 1)
    if final in "Hf":  # to a row and column
        return "\n" + " " * ((numbers[1] if len(numbers) > 1 else 1) - 1)
    if final == "D":
        return "\r"
    return "\n"


def bar_lines(lines: list[str] | tuple[str, ...], label: str | None = None) -> list[str]:
    """The lines that are (what is left of) kmeta's progress bar: its byte count, or its
    rule with a rate or time left, or, given ``label``, the label followed by the rule."""
    found = []
    for line in lines:
        rule = BAR_GLYPHS.search(line)
        if (BAR_BYTES.search(line) and (rule or BAR_RATE.search(line)
                                        or BAR_TIME_LEFT.search(line))) \
                or (rule and (BAR_RATE.search(line[rule.end():])
                              or BAR_TIME_LEFT.search(line))) \
                or (label and re.match(rf"\s*{re.escape(label)} +[━╸╺]", line)):
            found.append(line)
    return found


def drawn_bars(run: TerminalRun) -> list[str]:
    """Every state of the progress bar the terminal was sent, erased since or not (each
    redraw begins with a carriage return): proof that kmeta took its terminal path."""
    return bar_lines(re.split(r"[\r\n]", run.stream_text), run.args[0] if run.args else None)


def problems(run: TerminalRun, *, exit_code: int) -> list[str]:
    """Everything a person would call wrong with the run, one sentence each."""
    found = []
    if run.exit_code != exit_code:
        found.append(f"exit status {run.exit_code}, expected {exit_code}")
    streams = [("on the terminal", run.stream_text)]
    if run.stdout is not None:
        streams.append(("on stdout", run.stdout.decode("utf-8", "replace")))
    for where, text in streams:
        for crash in CRASHES:
            for line in text.splitlines():
                if crash in line:
                    found.append(f"{crash!r} {where}: {line.strip()!r}")
                    break
    wide = [(n, line, width) for n, line, width in output_lines(run.raw)
            if width > run.columns]
    for number, line, width in wide[:_WIDE_SHOWN]:
        found.append(f"line {number} written to the terminal is {width} columns wide, "
                     f"more than its {run.columns}: {line!r}")
    if len(wide) > _WIDE_SHOWN:
        found.append(f"... and {len(wide) - _WIDE_SHOWN} more lines wider than "
                     f"{run.columns} columns")
    label = run.args[0] if run.args else None
    for line in bar_lines(run.screen, label):
        found.append(f"the progress bar was left on the screen: {line!r}")
    return found


def check(run: TerminalRun, *, exit_code: int = 0) -> None:
    """Fail, with every problem and the session as the screen shows it, unless ``run``
    exited with ``exit_code`` and looks right to a person (:func:`problems`)."""
    found = problems(run, exit_code=exit_code)
    if found:
        listed = "\n".join(f"  - {p}" for p in found)
        raise AssertionError(f"{run.command} in a {run.columns}x{run.rows} terminal:\n"
                             f"{listed}\nthe terminal (scrollback, then the screen):\n"
                             f"{_framed(run.screen)}")


def _framed(lines: list[str] | tuple[str, ...], most: int = 80) -> str:
    """The last ``most`` lines, each behind a bar, so that blank ones show."""
    shown = list(lines)[-most:]
    cut = len(lines) - len(shown)
    head = [f"   | ... {cut} lines before" if cut else None]
    return "\n".join([h for h in head if h] + [f"   |{line}" for line in shown])

