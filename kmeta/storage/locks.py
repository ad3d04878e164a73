"""Whether a process holds a log dir's ``.lock``, as a running broker does
(``LogManager.lockLogDirs``): asked of the kernel, without taking the lock or writing."""

from __future__ import annotations

import os
import struct
from pathlib import Path


def lock_holder(log_dir: Path) -> int | None:
    """The pid of another process holding ``<log_dir>/.lock`` as Kafka holds it while it
    runs (``LogManager.lockLogDirs``: ``FileChannel.tryLock``, a POSIX record lock), or
    None: no such lock, no ``.lock``, or a platform that cannot tell.  Asked with F_GETLK
    on a read-only descriptor: nothing is locked or written."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        return None
    try:
        fd = os.open(log_dir / ".lock", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        # struct flock: l_type, l_whence, l_start, l_len (0: the whole file), l_pid
        query = struct.pack("hhqqixxxx", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
    except OSError:
        return None
    finally:
        os.close(fd)
    kind, _, _, _, pid = struct.unpack("hhqqixxxx", answer)
    return pid if kind != fcntl.F_UNLCK else None
