"""The processes a run may start beside itself: how many CPUs it may use, whether this
process may be forked, and how a worker is started.  The one home of these judgements for
verify's workers (:mod:`kmeta.ops.verify.jobs`) and the replay's child
(:mod:`kmeta.ops.replay.process`).

A fork copies every lock a thread of the parent holds, and nothing in the child will
release it: so a fork happens only in a process that runs one thread, and only on Linux
(macOS's system libraries are not safe across one).  Elsewhere a worker is started by
multiprocessing's ``forkserver``, or ``spawn`` where there is none.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def no_other_thread() -> bool:
    """This process runs no thread but the one calling: where a fork leaves the child no
    lock held.  Counted by the kernel, as Python's own warning counts them: a thread that
    ``threading`` does not know (a C library's, one started by ``_thread``) holds locks
    too."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:  # no /proc: the threads Python started
        return threading.active_count() == 1


def may_fork() -> bool:
    """Whether this process may fork a child now (Linux, and no other thread)."""
    return sys.platform.startswith("linux") and no_other_thread()


#: Where multiprocessing keeps a shared value on Linux: the file of its heap's arena and
#: the named semaphore of the value's lock are made there (and unlinked at once).
SHARED_MEMORY_DIR = "/dev/shm"


def shared_memory() -> bool:
    """Whether multiprocessing can make a shared value here: elsewhere than Linux it
    needs no directory; on Linux :data:`SHARED_MEMORY_DIR` must be a directory this
    process may write (a container may have none, or mount it read-only)."""
    if not sys.platform.startswith("linux"):
        return True
    return os.path.isdir(SHARED_MEMORY_DIR) and \
        os.access(SHARED_MEMORY_DIR, os.W_OK | os.X_OK)


def worker_context(preload: Sequence[str] = ()) -> Any:
    """The multiprocessing context a worker is started with: fork where :func:`may_fork`,
    else the forkserver (its server imports ``preload`` once) or spawn."""
    import multiprocessing  # only where workers are started: it costs start-up

    if may_fork():
        return multiprocessing.get_context("fork")
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() \
        else "spawn"
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(list(preload))
    return ctx


#: The first-generation collection threshold of a run that allocates trees freed as they
#: go (Python's default is 2,000): the replay's child, verify's workers, kmeta report.
FEW_COLLECTIONS = 20_000


def collect_rarely() -> tuple[int, ...]:
    """The cyclic collector made to run rarely, and never over what exists now (the
    imported modules, a forked worker's inheritance): what a run allocates is freed by
    reference counting as it goes, and the collections found nothing but cost a tenth of
    ``kmeta report``'s pass over a broker of 4,000 small partitions, and of the replay
    child's time on the generated benchmark log.  Returns the thresholds it replaced."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(FEW_COLLECTIONS, *threshold[1:])
    return threshold


@contextlib.contextmanager
def few_collections() -> Iterator[None]:
    """:func:`collect_rarely` for the time of a ``with``, then as it was."""
    threshold = collect_rarely()
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()
