"""What a shell command gives back: lines for a person, objects for ``--json``, a status.

Commands never print: the shell's front ends (a script's loop in kmeta/cli/shell.py, the
prompt in kmeta/shell/repl.py) write a reply with :func:`write_reply`, and the last
reply's status is the exit code of a script.  Lines and objects may be streams (a
``find`` over a large tree is written as it is walked, and Ctrl-C stops it there).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from kmeta.errors import ExitCode


@dataclass
class Reply:
    """``lines`` of text (a line marked as an error, ``Line(text, True)``, is a "no such"
    line: it goes to standard error in a script and makes the status 2), ``objects`` for
    ``--json`` (each with its ``kind``; a ``shell_error`` object makes the status 2), and
    the ``status`` otherwise."""

    lines: Iterable[Any] = field(default_factory=list)
    objects: Iterable[dict[str, Any]] = field(default_factory=list)
    status: int = ExitCode.OK
    #: the command was ``exit``: the shell ends here (the rest of a line is not run)
    leave: bool = False


def refused(message: str, hint: str | None = None) -> Reply:
    """A command that cannot run as typed: one line (and a suggestion), status 2."""
    from kmeta.render.nodes import Line

    lines = [Line(message, True)] + ([Line(f"  {hint}", True)] if hint else [])
    obj: dict[str, Any] = {"kind": "shell_error", "message": message, "hint": hint}
    return Reply(lines, [obj], ExitCode.USAGE)


def texts(reply: Reply, json_out: bool, status: list[int], width: int | None = None
          ) -> Iterator[tuple[str, bool]]:
    """The reply's lines as (text, is an error), or its objects as JSON lines; ``status``
    (one item) ends as the reply's status once they are all taken.  ``width``: a
    terminal's, where each line is shown whole, folded as every command folds its own
    (:func:`kmeta.environment.terminal_lines`)."""
    if width is None:
        yield from _texts(reply, json_out, status)
        return
    from kmeta.environment import terminal_lines

    for text, error in _texts(reply, json_out, status):
        yield "\n".join(terminal_lines([text], width, json_out)), error


def _texts(reply: Reply, json_out: bool, status: list[int]) -> Iterator[tuple[str, bool]]:
    from kmeta.render.jsonl import dumps

    status[0] = int(reply.status)
    if json_out:
        for obj in reply.objects:
            if obj.get("kind") == "shell_error":
                status[0] = int(ExitCode.USAGE)
            yield dumps(obj), False
        return
    for line in reply.lines:
        if isinstance(line, str):
            yield line, False
        else:
            if line.error:
                status[0] = int(ExitCode.USAGE)
            yield line.text, line.error


def write_reply(reply: Reply, json_out: bool, out: TextIO, err: TextIO,
                width: int | None = None) -> int:
    """Write a reply (errors to ``err``), line by line, folded at a terminal's ``width``;
    its status."""
    status = [0]
    for text, error in texts(reply, json_out, status, width):
        stream = err if error else out
        stream.write(text + "\n")
    out.flush()
    err.flush()
    return status[0]


def run_status(last: int, findings: Iterable[Any]) -> int:
    """The exit status of a shell run: its last reply's where that is not 0 (2: it could
    not run as typed, 1: grep matched nothing), else what every command's findings give
    (1 when opening the log met a finding of severity error: one language)."""
    if last != ExitCode.OK:
        return last
    from kmeta.errors import Verdict

    return int(Verdict(findings).exit_code())
