"""The progress bar every long command shows on standard error while it reads logs.

One bar for all commands: bytes read of the segments and snapshots the command reads,
rate and time left.  Shown only when stderr is a terminal; the storage layer reports how
far it has read each file through :data:`kmeta.storage.segments.READING`, so the ops
know nothing of it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kmeta.storage.discover import Discovery


def _sizes(found: Discovery, metadata_only: bool, into: dict[str, int]) -> None:
    """Add the size of every segment and snapshot ``found`` holds that the command reads."""
    for f in found.all_files():
        if f.is_batches and (f.is_metadata or not metadata_only) and str(f.path) not in into:
            try:
                into[str(f.path)] = f.path.stat().st_size
            except OSError:
                into[str(f.path)] = 0  # reported by whoever reads it


@contextlib.contextmanager
def reading(label: str, found: Discovery | None = None, *, metadata_only: bool = False,
            streams_stdout: bool = False) -> Iterator[None]:
    """Show the bar while the block runs.  Its total is the segments and snapshots of
    ``found`` and of every discovery made inside the block (only the metadata log's and
    snapshots with ``metadata_only``: what image, history, diff and repair read), each
    file counted once.  ``streams_stdout``: the command writes to stdout as it reads
    (dump), so a terminal on stdout gets no bar to garble it."""
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
    from kmeta.storage.discover import DISCOVERED
    from kmeta.storage.segments import READING

    sizes: dict[str, int] = {}
    if found is not None:
        _sizes(found, metadata_only, sizes)
    seen: dict[str, int] = {}
    with Progress(label, BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                  TimeRemainingColumn(), console=make_console(stderr=True),
                  transient=True) as bar:
        task = bar.add_task(label, total=sum(sizes.values()) or None)

        def discovered(more: Discovery) -> None:
            _sizes(more, metadata_only, sizes)
            bar.update(task, total=sum(sizes.values()) or None)

        def tell(path: str, position: int) -> None:
            # positions, not deltas: a file read twice (a replay after a scan) counts once
            before = seen.get(path, 0)
            if position > before:
                seen[path] = position
                bar.advance(task, position - before)

        token = READING.set(tell)
        found_token = DISCOVERED.set(discovered)
        try:
            yield
        finally:
            DISCOVERED.reset(found_token)
            READING.reset(token)
