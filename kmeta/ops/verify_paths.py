"""``kmeta verify`` of paths: its workers start before the checks of the metadata log
are even imported.

A data dir's partition dirs are left unlisted by discovery (``discover(defer=True)``)
and listed, classified and checked where they are claimed (:mod:`kmeta.ops.verify_jobs`):
this module starts those checks from what discovery found and only then imports the rest
of verify (:mod:`kmeta.ops.verify`: the replay, the replica model, placement), a few
hundredths of a second spent while the workers check partitions.  It imports only what
the workers need.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kmeta.ops.verify_dirs import check_task
from kmeta.ops.verify_jobs import PartitionScans, partitions_in
from kmeta.storage.discover import DISCOVERED, DeferredPartition, Discovery, discover

if TYPE_CHECKING:
    from kmeta.ops.verify import VerifyReport


class Relist(Exception):
    """A deferred partition dir was no ordinary partition (or could not be listed): the
    input is discovered again, at once, as discover judges it."""


def verify(paths: Iterable[str | os.PathLike[str]], jobs: int = 1, *,
           metadata: str | os.PathLike[str] | None = None) -> VerifyReport:
    """Run every check on the files under ``paths`` (:func:`kmeta.ops.verify.verify`)."""
    paths = list(paths)
    if DISCOVERED.get() is None:  # no progress bar sums every file up front
        discovery = discover(paths, defer=True)
        with partition_scans(discovery, jobs) as scans:
            from kmeta.ops.verify import verify_with  # while the workers check partitions

            with contextlib.suppress(Relist):
                return verify_with(discovery, scans, None, metadata)
    from kmeta.ops.verify import verify_discovery

    return verify_discovery(discover(paths), jobs=jobs, metadata=metadata)


def partition_scans(discovery: Discovery, jobs: int) -> PartitionScans:
    """The checks of the ordinary partitions ``discovery`` found, in its order, with
    ``jobs`` processes: a deferred partition dir's whole check, a listed one's scan."""
    ordinary = [p for p in discovery.all_partitions() if not p.is_metadata]
    if not any(isinstance(p, DeferredPartition) for p in ordinary):
        return PartitionScans(partitions_in([p.segments for p in ordinary]), jobs)
    tasks: list[tuple[Any, int | None]] = [
        ((str(p.path), p.topic, p.partition), None) if isinstance(p, DeferredPartition)
        else partitions_in([p.segments])[0] for p in ordinary]
    return PartitionScans(tasks, jobs, check_task)
