"""The progress bar every long command shows on standard error while it reads logs.

One bar for all commands: bytes read of the segments and snapshots the command reads,
rate and time left.  It is a :class:`kmeta.storage.progress.Progress`, the observer every
run is given and every read tells: a command gets this one where stderr is a terminal,
the quiet one elsewhere, and runs the same code either way.

The bar is drawn by the reads themselves, at most :data:`REDRAWS` times a second, not by a
thread of rich's own: verify forks its replay while the bar shows
(:mod:`kmeta.ops.replay.process`), and a fork beside a thread that holds a lock (rich's,
while it draws) leaves the child a lock nobody will release.  A forked child that is told
anything draws nothing: the bar belongs to the process that made it.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from kmeta.storage.progress import Progress

if TYPE_CHECKING:
    from kmeta.environment import Environment
    from kmeta.storage.progress import Found

#: Redraws of the bar a second at most (rich's own thread draws ten).
REDRAWS = 10


class Bar(Progress):
    """A rich progress bar whose total is the segments and snapshots of every discovery
    it hears of (only the metadata log's and snapshots with ``metadata_only``: what
    image, history, diff and repair read), each file counted once, plus what other
    processes read.  A command that reads the files in several passes (the shell's
    opening indexes the log, then replays it) names each (:meth:`phase`): the bar then
    shows each pass against the files' bytes, so that its total is always the bytes of
    what is read, never a multiple of them.

    The partition dirs a discovery left to other processes (verify's workers list them)
    are counted in the total by what those read so far: each as large as the average of
    those heard of, until all are."""

    __slots__ = ("_bar", "_task", "_label", "_metadata_only", "_sizes", "_seen",
                 "_next_draw", "_pid", "_unlisted", "_elsewhere", "_elsewhere_told",
                 "_outside", "_listed", "_env", "_told")

    def __init__(self, bar: Any, label: str, metadata_only: bool,
                 env: Environment | None = None) -> None:
        self._env = env
        self._told: set[tuple[str, str | None]] = set()
        self._bar = bar
        self._task = bar.add_task(label, total=None)
        self._label = label
        self._metadata_only = metadata_only
        self._sizes: dict[str, int] = {}
        self._seen: dict[str, int] = {}
        self._next_draw = 0.0  # when the reads may redraw the bar again (monotonic seconds)
        self._pid = os.getpid()
        self._unlisted = 0  # partition dirs left to other processes
        self._elsewhere = self._elsewhere_told = 0  # bytes they read, and in how many calls
        self._outside = 0  # bytes read of files no discovery listed
        self._listed = 0  # the bytes of the files discoveries listed (sum of _sizes)

    def found(self, discovery: Found) -> None:
        if os.getpid() != self._pid:
            return
        sizes = self._sizes
        for f in discovery.listed_files():
            path = str(f.path)
            if f.is_batches and (f.is_metadata or not self._metadata_only) \
                    and path not in sizes:
                try:
                    sizes[path] = f.path.stat().st_size
                except OSError:
                    sizes[path] = 0  # reported by whoever reads it
                self._listed += sizes[path]
        self._unlisted += discovery.unlisted()
        self._total()

    def read(self, path: str, position: int) -> None:
        # positions, not deltas: a file read again in one pass counts once
        if os.getpid() != self._pid:
            return
        seen = self._seen
        before = seen.get(path, 0)
        if position > before:
            seen[path] = position
            if path not in self._sizes:  # a file no discovery listed: the total grows too
                self._outside += position - before
                self._total()
            self._advance(position - before)

    def read_elsewhere(self, size: int) -> None:
        if os.getpid() != self._pid:
            return
        self._elsewhere += size
        self._elsewhere_told += 1
        self._total()
        self._advance(size)

    def notice(self, finding: Any) -> None:
        key = (finding.code, finding.file)
        if self._env is None or os.getpid() != self._pid or key in self._told:
            return
        self._told.add(key)
        # above the bar, as rich prints while it shows one
        self._bar.console.print(notice_line(self._env, finding), markup=False,
                                highlight=False, soft_wrap=False)

    def phase(self, name: str) -> None:
        if os.getpid() != self._pid:
            return
        self._seen.clear()
        self._outside = 0
        self._bar.reset(self._task, description=f"{self._label}: {name}")
        self._total()
        self._bar.refresh()

    def _total(self) -> None:
        """What the command reads, as far as it is known now."""
        elsewhere = self._elsewhere
        if self._elsewhere_told:
            elsewhere = max(elsewhere, elsewhere * self._unlisted // self._elsewhere_told)
        total = self._listed + self._outside + elsewhere
        self._bar.update(self._task, total=total or None)

    def _advance(self, size: int) -> None:
        self._bar.advance(self._task, size)
        now = time.monotonic()
        if now >= self._next_draw:
            self._next_draw = now + 1 / REDRAWS
            self._bar.refresh()


@contextlib.contextmanager
def reading(env: Environment, label: str, *, metadata_only: bool = False,
            streams_stdout: bool = False) -> Iterator[Progress]:
    """The observer to give the command's op: a :class:`Bar` on ``env``'s stderr while
    the block runs where stderr is a terminal, else the quiet one.  ``streams_stdout``:
    the command writes to stdout as it reads (dump), so a terminal on stdout gets no bar
    to garble it."""
    assert env.stdout is not None  # kmeta.cli refuses to run with stdout closed
    if not env.stderr.isatty() or (streams_stdout and env.stdout.isatty()):
        yield Telling(env, inline=streams_stdout and env.stdout.isatty())
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )
    from rich.progress import Progress as RichProgress

    from kmeta.render.console import make_console

    with RichProgress("{task.description}", BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                      TimeRemainingColumn(), console=make_console(env, stderr=True),
                      transient=True, auto_refresh=False) as bar:
        yield Bar(bar, label, metadata_only, env)


def notice_line(env: Environment, finding: Any) -> str:
    """A notice as every finding is listed (``!! S012 info: where: what``), said on
    stderr before the answer (the findings listed after it leave it out)."""
    from kmeta.render.text import finding_line

    return finding_line(finding, env.colour(env.stderr))


class Telling(Progress):
    """The observer of a run without a bar (a pipe, a file, a terminal a dump writes
    to): it draws nothing, but says each notice on stderr once, as the bar does.
    ``inline``: the command's stdout is a terminal that shows its findings where met
    (a dump), where the notice is the first of them."""

    __slots__ = ("_env", "_pid", "_told", "_inline")

    def __init__(self, env: Environment, inline: bool = False) -> None:
        self._env = env
        self._pid = os.getpid()
        self._told: set[tuple[str, str | None]] = set()
        self._inline = inline

    def notice(self, finding: Any) -> None:
        key = (finding.code, finding.file)
        if self._inline or os.getpid() != self._pid or key in self._told:
            return
        self._told.add(key)
        print(notice_line(self._env, finding), file=self._env.stderr, flush=True)
