"""Taking a data directory from a stopped broker, and swapping two directories in one step.

* :func:`data_dir_lock` holds ``<data dir>/.lock`` as Kafka's ``LogManager`` does while a
  broker runs (``FileChannel.tryLock``: a POSIX ``fcntl`` lock on Linux), refusing when
  another process holds it.
* :func:`swap_in` puts a new directory in the place of an old one: atomically where
  Linux's ``renameat2(RENAME_EXCHANGE)`` works, else by two renames.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

from kmeta.errors import UsageError
from kmeta.storage.locks import HELD_HERE
from kmeta.storage.tree import temp_beside
from kmeta.storage.writer import fsync_directory


@contextlib.contextmanager
def data_dir_lock(data_dir: Path, hint: str = "stop the broker before repairing in place, "
                  "or repair into --out") -> Iterator[None]:
    """Hold ``<data_dir>/.lock`` as Kafka does while it runs; refuse if someone holds it
    (``hint``: what the user can do then).

    Kafka (``FileChannel.tryLock``) takes a POSIX record lock, which ``lockf`` sees; other
    tools may use ``flock``: both are tried, without blocking.  POSIX locks belong to a
    process, so a lock held by *this* process is not seen.  No ``.lock`` file: no broker
    ever ran on this copy (Kafka creates it), and none is created here.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        raise UsageError("cannot check whether a broker holds the data directory on this "
                         "platform", hint="repair into --out instead") from None
    lock = data_dir / ".lock"
    try:
        fd = os.open(lock, os.O_RDWR)
    except FileNotFoundError:
        yield
        return
    except OSError as e:
        raise UsageError(f"cannot open .lock to check for a running broker: {e.strerror}",
                         context=str(lock)) from e
    try:
        for take in (fcntl.lockf, fcntl.flock):
            try:
                take(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                if e.errno not in (errno.EACCES, errno.EAGAIN, errno.EWOULDBLOCK):
                    raise
                raise UsageError("a running process holds the data directory's .lock (a "
                                 "Kafka broker?)", context=str(lock), hint=hint) from None
        HELD_HERE.add(os.path.realpath(lock))
        yield
    finally:
        HELD_HERE.discard(os.path.realpath(lock))
        os.close(fd)  # releases both locks


def exchange(a: Path, b: Path) -> bool:
    """Swap two directories atomically (Linux ``renameat2`` with ``RENAME_EXCHANGE``);
    False, having changed nothing, where the system or file system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # a libc without it (glibc < 2.28, some others)
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def swap_in(new: Path, part: Path) -> Path:
    """Put the directory ``new`` in the place of ``part`` (beside it, in one data dir);
    where ``part``'s old content now is, under a hidden name, for the caller to remove.

    Where Linux's renameat2(RENAME_EXCHANGE) works (most local file systems) this is one
    atomic step: a crash leaves ``part`` either old or new, and the other one under
    ``new``'s name.  Elsewhere ``part`` is renamed away to a hidden name, then ``new`` to
    ``part``, with the data dir fsynced after each: a crash between the two leaves no
    ``part`` at all.  A broker then refuses to start (LogManager cannot parse the hidden
    names), but a controller-only node would start a new, empty metadata log: rename the
    hidden original back first.
    """
    data_dir = part.parent
    if exchange(new, part):
        old = new
    else:
        old = temp_beside(part, "original")
        os.rename(part, old)
        fsync_directory(data_dir)
        try:
            os.rename(new, part)
        except BaseException:
            os.rename(old, part)
            fsync_directory(data_dir)
            shutil.rmtree(new, ignore_errors=True)
            raise
    fsync_directory(data_dir)
    return old
