"""The interactive side of ``kmeta shell``: the prompt, completion, history, the pager.

Line editing is prompt_toolkit's (why, in DESIGN.md "The shell"): emacs keys, tab
completion of commands, node paths, points (snapshots, start, end) and replica names,
and a history kept across sessions in ``$XDG_STATE_HOME/kmeta/history`` (when
``XDG_STATE_HOME`` is set) or ``~/.kmeta_history``.  Ctrl-C at the prompt clears the
line; during a command it stops the command and the shell goes on; Ctrl-D or ``exit``
leaves.  A reply longer than the terminal goes through ``$PAGER`` (``less -FRX`` when
unset and installed).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from prompt_toolkit.completion import Completer, Completion

from kmeta.environment import Environment
from kmeta.errors import ExitCode
from kmeta.render.shell import prompt
from kmeta.shell.commands import COMMANDS, run_line
from kmeta.shell.replies import Reply, run_status, texts
from kmeta.shell.session import Session

#: commands whose arguments are node paths (every argument, or the first only)
_PATH_ARGS = {"ls", "cd", "cat", "tree", "find", "changes"}


def history_file(environ: Any = os.environ) -> Path:
    """Where the command history is kept across sessions."""
    state = environ.get("XDG_STATE_HOME")
    if state:
        return Path(state) / "kmeta" / "history"
    return Path(environ.get("HOME") or Path.home()) / ".kmeta_history"


def _history(environ: Any) -> Any:
    """A FileHistory where the file can be written, else one kept in memory (a read-only
    home must not stop the shell)."""
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    path = history_file(environ)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError:
        return InMemoryHistory()
    return FileHistory(str(path))


class ShellCompleter(Completer):
    """Completions for the word under the cursor."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def get_completions(self, document: Any, complete_event: Any) -> Iterator[Completion]:
        for text, start, display in self.candidates(document.text_before_cursor):
            yield Completion(text, start_position=start, display=display)

    def candidates(self, before: str) -> list[tuple[str, int, str]]:
        """(text, start position relative to the cursor, what the menu shows) for the
        line typed so far."""
        words = before.split()
        if before.endswith(" ") or not words:
            words.append("")
        current = words[-1]
        if len(words) == 1:
            names = sorted(n for n in COMMANDS if n.startswith(current))
            return [(n, -len(current), n) for n in names]
        command = words[0]
        if command in _PATH_ARGS or (command in ("grep", "diff")
                                     and current.startswith(("/", "."))):
            return self._paths(current)
        if command in ("help", "man"):
            return [(n, -len(current), n) for n in sorted(COMMANDS) if n.startswith(current)]
        if command == "replica":
            return [(n, -len(current), n) for n in self.session.replicas.names()
                    if n.startswith(current)]
        if command in ("at", "diff", "records"):
            return self._points(current, snapshot_word=command == "at" and words[-2:-1] == [
                "snapshot"])
        return []

    def _points(self, current: str, snapshot_word: bool) -> list[tuple[str, int, str]]:
        timeline = self.session.timeline
        snapshots = [s.name for s in timeline.snapshots()]
        if snapshot_word:
            options = snapshots
        else:
            options = ["start", "end", "snapshot", *snapshots, *(
                f"{n}@" for n in self.session.replicas.names()
                if len(self.session.replicas.names()) > 1)]
        return [(o, -len(current), o) for o in options if o.startswith(current)]

    def _paths(self, current: str) -> list[tuple[str, int, str]]:
        from kmeta.core.image_nodes import complete_path

        here = self.session.here
        out = []
        for text, _complete in complete_path(here.tree, here.cwd, current):
            out.append((text, -len(current), text.rstrip("/").rsplit("/", 1)[-1] + (
                "/" if text.endswith("/") else "")))
        return out


def repl(env: Environment, session: Session, json_out: bool, given: list[str]) -> int:
    """Read, run and print until Ctrl-D or ``exit``; the status of the last command, or
    1 where opening the log met an error finding, which the opening screen lists
    (``given``: the paths typed, which the findings' files are shown under)."""
    from prompt_toolkit import PromptSession

    from kmeta.render.shell import findings_lines

    prompt_session: Any = PromptSession(history=_history(env.environ),
                                        completer=ShellCompleter(session),
                                        complete_while_typing=False)
    status = int(ExitCode.OK)
    env.write_lines([f"kmeta shell: {len(session.replicas.names())} replica(s); help lists "
                     "the commands, Ctrl-D leaves.",
                     *findings_lines(session.findings, given, env.colour(env.stdout)),
                     *session.where().lines])
    while True:
        h = session.here
        session.width = shutil.get_terminal_size((80, 24)).columns
        try:
            line = prompt_session.prompt(prompt(h.replica, h.offset, h.provenance, h.cwd,
                                                len(session.replicas.names()) > 1))
        except KeyboardInterrupt:  # Ctrl-C at the prompt: a fresh line
            continue
        except EOFError:  # Ctrl-D
            break
        if not line.strip():
            continue
        session.typed.append(line)
        leave = False
        try:
            for reply in run_line(session, line, json_out):
                status = _show(env, reply, json_out)
                leave = reply.leave
        except KeyboardInterrupt:
            print("^C (stopped)", flush=True)
            status = int(ExitCode.INTERRUPTED)
            continue
        if leave:
            break
    return run_status(status, session.findings)


def _show(env: Environment, reply: Reply, json_out: bool) -> int:
    """Write a reply to the screen: through the pager when it is taller than the
    screen, streamed (a long find shows as it is walked); its status."""
    status = [0]
    columns, rows = shutil.get_terminal_size((80, 24))
    lines = texts(reply, json_out, status, columns)  # each folded to the screen's width
    head = []
    used = 0  # the screen's rows the head takes: a line wider than the screen, several
    for text, _ in lines:
        head.append(text)
        used += sum(screen_rows(row, columns) for row in text.split("\n"))
        if used >= rows - 1:
            break
    else:  # it fits: no pager
        _write(head)
        return status[0]
    pager = _pager(env)
    if pager is None:
        _write(head)
        _write(text for text, _ in lines)
        return status[0]
    _page(pager, head, (text for text, _ in lines))
    return status[0]


def screen_rows(text: str, columns: int) -> int:
    """The rows of a screen ``columns`` wide that ``text`` takes where the terminal wraps
    it (a character of two cells counts two)."""
    from rich.cells import cell_len

    return max(1, -(-cell_len(text) // max(columns, 1)))


def _write(lines: Iterable[str]) -> None:
    import sys

    for line in lines:
        sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _pager(env: Environment) -> list[str] | None:
    """The pager to run: ``$PAGER``, else ``less -FRX`` where it is installed."""
    pager = env.environ.get("PAGER")
    if pager:
        return shlex.split(pager)
    return ["less", "-FRX"] if shutil.which("less") else None


def _page(argv: list[str], head: list[str], rest: Iterable[str]) -> None:
    """Feed the pager as the lines come; a pager that quits (q) ends the reply."""
    try:
        pager = subprocess.Popen(argv, stdin=subprocess.PIPE)
    except OSError:
        _write(head)
        _write(rest)
        return
    assert pager.stdin is not None
    try:
        for line in head:
            pager.stdin.write((line + "\n").encode())
        for line in rest:
            pager.stdin.write((line + "\n").encode())
    except BrokenPipeError:  # the pager was left before the end
        pass
    finally:
        with contextlib.suppress(BrokenPipeError):
            pager.stdin.close()
        pager.wait()
