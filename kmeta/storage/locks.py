"""Whether a process holds a log dir's ``.lock``, as a running broker does
(``LogManager.lockLogDirs``): asked of the kernel, without taking the lock or writing.

Kafka's ``FileLock.tryLock`` is ``FileChannel.tryLock``, which the JDK takes on Linux as a
POSIX record lock (``fcntl(F_SETLK)``); other tools (and wrappers that guard a data dir)
take ``flock(2)``.  The two are separate on Linux: a ``flock`` is invisible to
``F_GETLK``, and the other way round.  ``/proc/locks`` lists both (and open-file-
description locks), with the holder's pid and the locked file's device and inode, so it
is asked, and only it where it can be read: asking by a descriptor of the file means
closing it after, and a close drops every POSIX lock the closing process holds on the
file (a program that locked the dir and then asks would lose its own lock).  Where it
cannot be read, ``F_GETLK`` asks for POSIX locks and a ``flock`` tried shared and at once
released tells whether another holds one exclusively.
"""

from __future__ import annotations

import contextlib
import errno
import os
import struct
from pathlib import Path
from typing import NamedTuple

_PROC_LOCKS = "/proc/locks"

#: The ``.lock`` files this process holds itself (kmeta.storage.swap.data_dir_lock), by
#: real path: never opened to be asked about (see :func:`lock_holders`).
HELD_HERE: set[str] = set()


class LockHolder(NamedTuple):
    """A process that holds a ``.lock``: its pid (None where the kernel does not say:
    an open-file-description lock, or a ``flock`` seen by trying it) and the kind of
    lock ("posix", "flock" or "ofd")."""

    pid: int | None
    lock: str

    def who(self) -> str:
        return f"process {self.pid}" if self.pid else "a process"


def lock_holders(log_dir: Path, proc_locks: str = _PROC_LOCKS) -> list[LockHolder]:
    """Every other process's lock on ``<log_dir>/.lock``; empty when none, when there is
    no ``.lock`` (no broker ever ran on this copy: Kafka creates it) or the platform
    cannot tell.  This process's own locks are left out (``kmeta repair`` holds it)."""
    path = log_dir / ".lock"
    try:
        st = os.stat(path)
    except OSError:
        return []
    found = _from_proc(st, proc_locks)
    if found is not None:
        return found
    if os.path.realpath(path) in HELD_HERE:
        # Closing any descriptor of a file drops every POSIX lock this process holds on
        # it: a file this process locked (kmeta repair --in-place) is never opened here.
        return []
    return _asked_by_descriptor(path)


_KINDS = {"POSIX": "posix", "FLOCK": "flock", "OFDLCK": "ofd"}


def _from_proc(st: os.stat_result, proc_locks: str) -> list[LockHolder] | None:
    """The holders ``/proc/locks`` names for the file ``st`` is of; None when it cannot
    be read.  A line: ``1: POSIX  ADVISORY  WRITE 1234 fe:00:2146910 0 EOF``; a waiter's
    has ``->`` after the number and holds nothing."""
    try:
        with open(proc_locks, encoding="ascii", errors="replace") as f:
            lines = f.read(1 << 22).splitlines()
    except OSError:
        return None
    me = os.getpid()
    device = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    out: list[LockHolder] = []
    for line in lines:
        fields = line.split()
        if len(fields) < 6 or fields[1] == "->" or fields[5] != device:
            continue
        kind = _KINDS.get(fields[1])
        if kind is None:
            continue
        try:
            pid = int(fields[4])
        except ValueError:
            pid = 0
        if pid == me:
            continue
        holder = LockHolder(pid if pid > 0 else None, kind)
        if holder not in out:
            out.append(holder)
    return out


def _asked_by_descriptor(path: Path) -> list[LockHolder]:
    """Where ``/proc/locks`` cannot be read: ``F_GETLK`` on a read-only descriptor asks
    whether a write lock could be taken, and by whom not, without taking it; a shared
    ``flock`` tried without waiting, and released at once by the close, tells whether
    another holds an exclusive one."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        return []
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return []
    out = []
    try:
        with contextlib.suppress(OSError):
            # struct flock: l_type, l_whence, l_start, l_len (0: the whole file), l_pid
            query = struct.pack("hhqqixxxx", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
            kind, _, _, _, pid = struct.unpack("hhqqixxxx",
                                               fcntl.fcntl(fd, fcntl.F_GETLK, query))
            if kind != fcntl.F_UNLCK:
                out.append(LockHolder(pid if pid > 0 else None, "posix"))
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                out.append(LockHolder(None, "flock"))
    finally:
        os.close(fd)
    return out
