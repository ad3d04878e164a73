"""Whether the log dirs a run reads belong to a running broker, and saying so once.

A broker holds each of its log dirs' ``.lock`` while it runs (``LogManager.lockLogDirs``)
and keeps writing under a reader's feet: batches appended to each active segment and its
indexes, segments rolled and deleted, checkpoints replaced.  A run that reads such a dir
says so first (S012), in the terminal, in a pipe and in ``--json`` alike: its answer is of
the files as it read them, and what Kafka did meanwhile is told as that, not as damage.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple, TypeVar

from kmeta.errors import KmetaError, VanishedInput
from kmeta.findings import Finding
from kmeta.storage.locks import LockHolder, lock_holders

#: What a live dir means for the answer, said once with the dir.
MEANING = ("kmeta judges each log as far as Kafka had written it when read; what Kafka "
           "writes, rolls or deletes meanwhile is told as such, not as damage; stop the "
           "broker before anything that changes files")


class LiveDir(NamedTuple):
    """A log dir whose ``.lock`` another process holds, and who holds it."""

    path: Path
    holders: tuple[LockHolder, ...]

    def finding(self) -> Finding:
        who = " and ".join(f"{h.who()} ({h.lock} lock)" for h in self.holders)
        verb = "holds" if len(self.holders) == 1 else "hold"
        return Finding(
            "S012", f"{who} {verb} .lock: a broker runs on this log dir now; {MEANING}",
            str(self.path / ".lock"),
            details={"pid": self.holders[0].pid, "locks": [h.lock for h in self.holders],
                     "live": True})


def log_dir_of(path: Path) -> Path | None:
    """The log dir ``path`` is in or is: the nearest of itself and its two parents that
    holds a ``.lock`` (a data dir, a partition dir's parent, a segment's grandparent)."""
    for candidate in (path, *list(path.parents)[:2]):
        if (candidate / ".lock").exists():
            return candidate
    return None


def live_dirs(paths: Iterable[Path]) -> list[LiveDir]:
    """The log dirs among and above ``paths`` that a running process holds, each once."""
    seen: set[Path] = set()
    out = []
    for path in paths:
        log_dir = log_dir_of(path)
        if log_dir is None or log_dir in seen:
            continue
        seen.add(log_dir)
        holders = lock_holders(log_dir)
        if holders:
            out.append(LiveDir(log_dir, tuple(holders)))
    return out


T = TypeVar("T")

#: How many times a read a running broker changed under (a file listed, then gone) is
#: made again, from a fresh listing.
TRIES = 3


def gone(e: BaseException) -> bool:
    """A file or dir listed and gone when read: removed or renamed meanwhile."""
    return isinstance(e, VanishedInput) or (isinstance(e, OSError)
                                            and e.errno == errno.ENOENT)


def again_while_live(load: Callable[[], T], where: str | Path) -> T:
    """``load()``, made again (it lists afresh) when a file it listed was gone by its read
    and ``where`` (a partition or data dir) is still there in a dir a running broker
    holds: Kafka rolled, cleaned or deleted a segment or snapshot meanwhile.  Up to
    :data:`TRIES` times; then, or on a dir at rest, the error stands."""
    where = Path(where)
    for attempt in range(TRIES):
        try:
            return load()
        except (OSError, KmetaError) as e:
            if not gone(e) or attempt + 1 == TRIES or not where.is_dir() \
                    or not live_dirs([where]):
                raise
    raise AssertionError("unreachable")  # pragma: no cover
