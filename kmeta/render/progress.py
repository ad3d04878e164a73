"""The progress bar every long command shows on standard error while it reads logs.

One bar for all commands: bytes read of the segments and snapshots under the paths given,
rate and time left.  Shown only when stderr is a terminal; the storage layer reports how
far it has read each file through :data:`kmeta.storage.segments.READING`, so the ops
know nothing of it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

#: Files whose reading the bar counts: log segments and KRaft snapshots.
_READ_SUFFIXES = (".log", ".checkpoint")


def bytes_to_read(paths: Iterable[str]) -> int:
    """The bytes of every segment and snapshot under ``paths`` (files or directories)."""
    total = 0
    for p in paths:
        path = Path(p)
        if path.is_file():
            with contextlib.suppress(OSError):
                total += path.stat().st_size
            continue
        for root, _dirs, files in os.walk(path):
            for name in files:
                if name.endswith(_READ_SUFFIXES):
                    with contextlib.suppress(OSError):
                        total += os.stat(os.path.join(root, name)).st_size
    return total


@contextlib.contextmanager
def reading(label: str, paths: Iterable[str], *, streams_stdout: bool = False
            ) -> Iterator[None]:
    """Show the bar while the block runs.  ``streams_stdout``: the command writes to
    stdout as it reads (dump), so a terminal on stdout gets no bar to garble it."""
    if not sys.stderr.isatty() or (streams_stdout and sys.stdout.isatty()):
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
    from kmeta.storage.segments import READING

    total = bytes_to_read(paths)
    seen: dict[str, int] = {}
    with Progress(label, BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                  TimeRemainingColumn(), console=make_console(stderr=True),
                  transient=True) as bar:
        task = bar.add_task(label, total=total or None)

        def tell(path: str, position: int) -> None:
            # positions, not deltas: a file read twice (a replay after a scan) counts once
            before = seen.get(path, 0)
            if position > before:
                seen[path] = position
                bar.advance(task, position - before)

        token = READING.set(tell)
        try:
            yield
        finally:
            READING.reset(token)
