"""``kmeta verify`` of paths: its workers start before the checks of the metadata log
are even imported.

A data dir's partition dirs are left unlisted by discovery (``discover(defer=True)``)
and listed, classified and checked where they are claimed (:mod:`.partitions`, on the
processes of :mod:`.jobs`): this module starts those checks from what discovery found and
only then imports the rest of verify (:mod:`.run`: the metadata log's pass, the replay,
the replica model, placement), a few hundredths of a second spent while the workers
check partitions.  It imports only what the workers need.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kmeta.ops.verify.partitions import Relist, partition_scans
from kmeta.storage.discover import discover
from kmeta.storage.progress import QUIET, Progress

if TYPE_CHECKING:
    from kmeta.ops.verify.run import VerifyReport


def verify(paths: Iterable[str | os.PathLike[str]], jobs: int = 1, *,
           metadata: str | os.PathLike[str] | None = None,
           progress: Progress = QUIET) -> VerifyReport:
    """Run every check on the files under ``paths``; ``jobs``: how many processes may check
    the ordinary topics' partitions (the report is the same for any); ``metadata``: the
    broker's metadata log when it is not among them (then every data dir given is that
    broker's); ``progress`` hears of the reading."""
    paths = list(paths)
    discovery = discover(paths, defer=True, progress=progress)
    with partition_scans(discovery, jobs) as scans:
        from kmeta.ops.verify.run import verify_with  # while the workers check partitions

        with contextlib.suppress(Relist):
            return verify_with(discovery, scans, progress, metadata)
    # a partition dir was not what its name said: discovered again, as discover judges it
    from kmeta.ops.verify.run import verify_discovery

    return verify_discovery(discover(paths, progress=progress), progress, jobs,
                            metadata=metadata)
