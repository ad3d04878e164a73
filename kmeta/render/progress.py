"""The progress bar every long command shows on standard error while it reads logs.

One bar for all commands: bytes read of the segments and snapshots the command reads,
rate and time left.  Shown only when stderr is a terminal; the storage layer reports how
far it has read each file through :data:`kmeta.storage.segments.READING`, so the ops
know nothing of it.

The bar is drawn by the reads themselves, at most :data:`REDRAWS` times a second, not by a
thread of rich's own: verify forks its replay while the bar shows
(:mod:`kmeta.ops.replay.process`), and a fork beside a thread that holds a lock (rich's,
while it draws) leaves the child a lock nobody will release.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kmeta.environment import Environment
    from kmeta.storage.discover import Discovery

#: Redraws of the bar a second at most (rich's own thread draws ten).
REDRAWS = 10


def _sizes(found: Discovery, metadata_only: bool, into: dict[str, int]) -> None:
    """Add the size of every segment and snapshot ``found`` holds that the command reads."""
    for f in found.all_files():
        if f.is_batches and (f.is_metadata or not metadata_only) and str(f.path) not in into:
            try:
                into[str(f.path)] = f.path.stat().st_size
            except OSError:
                into[str(f.path)] = 0  # reported by whoever reads it


@contextlib.contextmanager
def reading(env: Environment, label: str, *, metadata_only: bool = False,
            streams_stdout: bool = False, passes: int = 1) -> Iterator[None]:
    """Show the bar on ``env``'s stderr while the block runs.  Its total is the segments
    and snapshots of every discovery made inside the block (only the metadata log's and
    snapshots with ``metadata_only``: what image, history, diff and repair read), each
    file counted once.  ``streams_stdout``: the command writes to stdout as it reads
    (dump), so a terminal on stdout gets no bar to garble it.  ``passes``: how many
    times the command reads each file (the shell's opening indexes the log, then replays
    it): a file read again from its start counts again, up to that many times."""
    assert env.stdout is not None  # kmeta.cli refuses to run with stdout closed
    if not env.stderr.isatty() or (streams_stdout and env.stdout.isatty()):
        yield
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    from kmeta.render.console import make_console
    from kmeta.storage.discover import DISCOVERED
    from kmeta.storage.segments import READING

    sizes: dict[str, int] = {}
    seen: dict[str, int] = {}
    next_draw = [0.0]  # when the reads may redraw the bar again (monotonic seconds)
    with Progress(label, BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                  TimeRemainingColumn(), console=make_console(env, stderr=True),
                  transient=True, auto_refresh=False) as bar:
        task = bar.add_task(label, total=passes * sum(sizes.values()) or None)
        rounds: dict[str, int] = {}  # the passes over a file begun after its first

        def discovered(more: Discovery) -> None:
            _sizes(more, metadata_only, sizes)
            bar.update(task, total=passes * sum(sizes.values()) or None)

        def tell(path: str, position: int) -> None:
            # positions, not deltas: a file read again (a replay after a scan) counts once
            # more than its passes
            before = seen.get(path, 0)
            if position < before and rounds.get(path, 0) < passes - 1:
                rounds[path] = rounds.get(path, 0) + 1
                seen[path] = before = 0
            if position > before:
                seen[path] = position
                bar.advance(task, position - before)
                now = time.monotonic()
                if now >= next_draw[0]:
                    next_draw[0] = now + 1 / REDRAWS
                    bar.refresh()

        token = READING.set(tell)
        found_token = DISCOVERED.set(discovered)
        try:
            yield
        finally:
            DISCOVERED.reset(found_token)
            READING.reset(token)
