"""The rich console every people-facing renderer prints through, and colour for plain lines.

Width: ``COLUMNS`` when set, else the terminal's; through a pipe with no ``COLUMNS``,
lines are not wrapped at all (a table row stays one line, for grep).  Colour only on a
terminal and never with ``NO_COLOR``.  Every fact comes from the run's
:class:`~kmeta.environment.Environment`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TextIO

from kmeta.environment import Environment

if TYPE_CHECKING:  # rich is imported where a console is made: the plain lines need none
    from rich.console import Console

#: The width of a pipe without COLUMNS: wide enough that nothing wraps.
UNWRAPPED = 4096

#: The width of a terminal that does not know its own size (a fresh pseudo-terminal
#: reports 0 columns); rich assumes the same.
UNKNOWN_TERMINAL = 80

#: ANSI styles of the words that must catch the eye (severities among them).
_STYLES = {"error": "1;31", "warning": "33", "info": "36", "diverged": "1;31", "lag": "33",
           "ok": "32"}


def make_console(env: Environment, stderr: bool = False) -> Console:
    """The console of ``env``'s stdout (or stderr).  NO_COLOR means no escape codes at all
    (rich alone would still send bold)."""
    stream = env.stderr if stderr else env.stdout
    assert stream is not None  # kmeta.cli refuses to run with stdout closed
    width = env.columns or (None if stream.isatty() else UNWRAPPED)
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            # rich would exit 1 here; the reader (``| head``) went away, which the command
            # turns into a quiet exit 0.
            raise BrokenPipeError

    return _Console(soft_wrap=True, color_system=None if env.no_color else "auto",
                    file=stream, width=width, _environ=env.environ)


def clip_width(env: Environment, stream: TextIO | None = None) -> int | None:
    """The width a long line to ``stream`` (``env``'s stdout by default) is cut to:
    ``COLUMNS`` or the terminal's; None through a pipe without ``COLUMNS`` (kept whole,
    for grep)."""
    stream = stream or env.stdout
    if (columns := env.columns) is not None:
        return columns
    try:
        if not stream.isatty():
            return None
        return os.get_terminal_size(stream.fileno()).columns or UNKNOWN_TERMINAL
    except (OSError, ValueError, AttributeError):
        return None


def fold(text: str, width: int | None, hang: str = "    ") -> str:
    """``text`` folded at spaces to ``width`` (a path or a name is never broken), the
    lines after the first indented by its own indent and ``hang``; whole when ``width``
    is None (a pipe without COLUMNS) or when it fits."""
    if width is None or len(text) <= width:
        return text
    import textwrap

    lead = " " * (len(text) - len(text.lstrip(" ")))
    return textwrap.fill(text, width=width, subsequent_indent=lead + hang,
                         break_long_words=False, break_on_hyphens=False)


def console_width(console: Console) -> int | None:
    """The width to fold prose to on ``console``; None when it does not wrap (a pipe)."""
    return console.width if console.width < UNWRAPPED else None


def clip(text: str, width: int | None) -> str:
    """``text`` cut to ``width`` characters, the cut shown by '…'."""
    if width is None or len(text) <= width:
        return text
    return text[:max(width - 1, 1)] + "…"


def paint(text: str, style: str, colour: bool) -> str:
    """``text`` in the colour of ``style`` (error, warning, diverged, lag, ok) when
    ``colour`` (the stream is a terminal and NO_COLOR is not set)."""
    return styled(text, style) if colour else text


def styled(text: str, style: str) -> str:
    """``text`` in the colour of ``style``, for a caller that knows its stream is a
    terminal."""
    return f"\x1b[{_STYLES[style]}m{text}\x1b[0m"
