"""The rich console every people-facing renderer prints through, and colour for plain lines.

Width: ``COLUMNS`` when set, else the terminal's; through a pipe with no ``COLUMNS``,
lines are not wrapped at all (a table row stays one line, for grep).  Colour only on a
terminal and never with ``NO_COLOR``.  Every fact comes from the run's
:class:`~kmeta.environment.Environment`.

On a terminal every line is shown whole: what the console prints is folded as
``write_lines`` folds (:func:`kmeta.environment.fold`, here for the renderers too), and a
table is fitted first (:func:`fit_table`): columns left out and named, text folded, never
a number's digits cut.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from kmeta.environment import (  # fold: the renderers' too
    Environment,
    FoldedStream,
    fold,
    is_terminal,
)

if TYPE_CHECKING:  # rich is imported where a console is made: the plain lines need none
    from rich.console import Console
    from rich.table import Column, Table

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

    console = _Console(soft_wrap=True, color_system=None if env.no_color else "auto",
                       file=stream, width=width, _environ=env.environ)
    if not stderr and is_terminal(stream):  # the stream itself: FORCE_COLOR is not a terminal
        # what it prints is shown whole, as write_lines shows lines (tables fit already)
        console.file = FoldedStream(stream, console.width)  # type: ignore[assignment]
    return console


def on_terminal(console: Console) -> bool:
    """Whether ``console`` prints to a terminal (not one rich was told to pretend)."""
    return is_terminal(console.file)


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


#: The narrowest a column of text that may fold a word is made (``overflow="fold"``).
FOLDED_WORD = 10


def fit_table(table: Table, console: Console,
              drop: Sequence[str | tuple[str, ...]] = ()) -> list[str]:
    """Fit ``table`` to ``console``'s width in place, never cutting a number or a word:
    the columns headed by ``drop``'s names (a tuple: columns that go together) are taken
    out, first named first, while the table is wider than that even with each column at
    its narrowest; a column that may wrap (not ``no_wrap``) is then narrowed down to its
    longest word, rows folded at spaces, or further when its overflow is "fold" (words
    of text, never numbers: a column of numbers is ``no_wrap``).  The headers of the
    columns taken out, for the caller to say so (:func:`noted_title`).

    Should even that not fit (a very narrow terminal), every column folds: a number may
    then run over two rows, but no digit is lost (rich alone would crop it)."""
    width = console.width
    measured = {id(c): _column_widths(c, console) for c in table.columns}
    dropped = []
    for names in drop:
        if _table_width(table, [measured[id(c)][0] for c in table.columns]) <= width:
            break
        names = (names,) if isinstance(names, str) else names
        gone = [c for c in table.columns if c.header in names]
        for column in gone:
            table.columns.remove(column)
            dropped.append(str(column.header))
        for index, kept in enumerate(table.columns):
            kept._index = index  # rich reads a column's place from it
    columns = table.columns
    whole, least, widths = ([measured[id(c)][k] for c in columns] for k in range(3))
    if _table_width(table, least) > width:
        for column in columns:
            column.no_wrap, column.overflow = False, "fold"
        return dropped  # rich shares out what there is
    excess = _table_width(table, widths) - width
    for floor in (whole, least):  # words whole while they can be, then folded
        while excess > 0:  # the widest column above the floor loses a column at a time
            i = max(range(len(columns)), key=lambda i: (widths[i] > floor[i], widths[i]))
            if widths[i] <= floor[i]:
                break
            widths[i] -= 1
            excess -= 1
    for column, w in zip(columns, widths, strict=True):
        column.width = w  # rich then shares out nothing itself
    return dropped


def dropped_note(dropped: list[str]) -> str:
    """What a reader is told of the columns :func:`fit_table` took out."""
    return f"(--json or a wider terminal shows: {', '.join(dropped)})" if dropped else ""


def noted_title(title: str, dropped: list[str], console: Console) -> str:
    """A table's title, followed by what :func:`fit_table` took out of it, folded to the
    console's width (rich prints a title whole, however wide), as rich markup."""
    from rich.markup import escape

    said = " ".join(x for x in (title, dropped_note(dropped)) if x)
    return escape(fold(said, console_width(console)))


def _column_widths(column: Column, console: Console) -> tuple[int, int, int]:
    """A column's width with every word whole (every cell whole when ``no_wrap``), the
    least it may take (a column of text that folds: :data:`FOLDED_WORD`), and its
    widest: the header's and the cells' text, padding not counted."""
    from rich.cells import cell_len

    whole = widest = 1
    for cell in (column.header, *column.cells):
        text = cell if isinstance(cell, str) else getattr(cell, "plain", str(cell))
        if "[" in text:  # rich markup: its tags take no room
            text = console.render_str(text).plain
        full = cell_len(text)
        widest = max(widest, full)
        if column.no_wrap:
            whole = max(whole, full)
        elif full > whole:
            whole = max(whole, *(cell_len(word) for word in text.split()))
    least = whole
    if not column.no_wrap and column.overflow == "fold":
        # a column of text that may fold (a config's value): a long word runs on over
        # rows rather than push the numbers out
        least = min(whole, max(FOLDED_WORD, cell_len(str(column.header))))
    if column.min_width is not None:
        whole, least, widest = (max(x, column.min_width) for x in (whole, least, widest))
    return whole, least, widest


def _table_width(table: Table, widths: list[int]) -> int:
    """The columns ``table`` takes with its columns ``widths`` wide: padding, edges and
    rules added as rich draws them."""
    _, right, _, left = table.padding
    pads = (left + right) * len(widths)
    if widths and not table.pad_edge:
        pads -= left + right
    rules = 0
    if table.box is not None:
        rules = len(widths) - 1 + (2 if table.show_edge else 0)
    return sum(widths) + pads + rules


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
