"""Opening input files so that no name in a log dir can block, flood or loop kmeta.

A name that looks like a segment may be a FIFO (opening it blocks until a writer comes),
a link to ``/dev/zero`` (endless bytes) or a link that loops.  Kafka itself only loads
regular files; kmeta reads only those too: :func:`open_regular` opens with
``O_NONBLOCK`` (so opening never waits for a FIFO's writer) and checks the opened file
(not the name, which could be swapped in between) before a byte is read.
"""

from __future__ import annotations

import errno
import os
import stat

from kmeta.errors import UnreadableInput, VanishedInput
from kmeta.findings import Finding

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def describe_mode(mode: int) -> str:
    """What a non-regular file is, in words ("a FIFO (named pipe)" ...)."""
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def _stat_problem(err: OSError) -> str:
    if err.errno == errno.ELOOP:
        return "a symbolic link loop"
    if err.errno == errno.ENOENT:
        return "a dangling symbolic link"
    return f"cannot be examined: {err.strerror}"


def not_regular(path: str | os.PathLike[str]) -> str | None:
    """None for a regular file (after following links), else what the name is instead."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        return _stat_problem(e)
    return None if stat.S_ISREG(mode) else describe_mode(mode)


def entry_problem(entry: os.DirEntry[str]) -> str | None:
    """``not_regular`` of a directory entry, from the file type the listing gives where
    that is enough: a stat per entry costs seconds in a directory of 100,000 files."""
    try:
        if entry.is_file():  # follows a link (one stat); a plain file needs none
            return None
        if entry.is_dir():
            return "a directory"
    except OSError:
        pass
    return not_regular(entry.path)  # the rare rest: FIFOs, devices, broken or looping links


def open_regular(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor of the regular file at ``path``; raises UnreadableInput for
    anything else (FIFO, device, socket, link loop) without ever blocking."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnreadableInput("a symbolic link loop; not read", context=str(path)) from e
        if e.errno == errno.ENOENT:
            raise vanished(path) from e
        raise UnreadableInput(f"cannot open: {e.strerror}", context=str(path),
                              hint="check the path and its permissions") from e
    try:
        mode = os.fstat(fd).st_mode
    except OSError as e:
        os.close(fd)
        raise UnreadableInput(f"cannot examine: {e.strerror}", context=str(path)) from e
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnreadableInput(f"not a regular file but {describe_mode(mode)}; Kafka reads "
                              "only regular files, and so does kmeta", context=str(path))
    return fd


#: The names Kafka gives a file it takes out of a log (LogSegment.changeFileSuffixes,
#: Snapshots.markForDelete), and what each says happened.
_RENAMED = ((".deleted", "renamed to {name}.deleted: Kafka deletes it (retention, the log "
             "start moving past it, a cleaner or a truncation replaced it)"),
            (".swap", "renamed to {name}.swap: the log cleaner is replacing it"))


def vanished(path: str | os.PathLike[str]) -> VanishedInput:
    """A file listed, gone at its read: what Kafka did with it, where its new name says."""
    name = os.path.basename(os.fspath(path))
    for suffix, what in _RENAMED:
        if os.path.lexists(os.fspath(path) + suffix):
            return VanishedInput(f"gone while kmeta read the dir: {what.format(name=name)}",
                                 context=str(path))
    return VanishedInput("gone while kmeta read the dir: removed after it was listed "
                         "(by the broker writing the dir, or another process)",
                         context=str(path))


def os_error_finding(path: str | os.PathLike[str], err: OSError) -> Finding:
    """What an OSError met reading a listed file says of it: S013 when the file is gone
    (a live broker removed or renamed it), S008 otherwise."""
    if err.errno == errno.ENOENT:
        return vanished(path).finding(str(path))
    return Finding("S008", f"cannot read: {err.strerror}", str(path))


#: Reads of a small file that changed under them (resized, or replaced by a rename) before
#: its bytes are taken as they last came.
_READS = 3


def read_regular(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """The whole regular file at ``path``, refused when it holds more than ``limit`` bytes
    (counted while reading: the size a stat gives can change).

    A file that changes while it is read is read again, up to :data:`_READS` times: one
    whose size moved during the read (a running broker trims a rolled segment's
    preallocated index, or appends), or whose name another file took meanwhile (Kafka
    replaces a checkpoint by renaming its ``.tmp`` over it): the bytes of one state of it,
    the newest, not a mix."""
    for attempt in range(_READS):
        data, steady = _read_once(path, limit, what)
        if steady or attempt + 1 == _READS:
            return data
    raise AssertionError("unreachable")  # pragma: no cover


def _read_once(path: str | os.PathLike[str], limit: int, what: str) -> tuple[bytes, bool]:
    """The file's bytes, and whether it held still while they were read."""
    fd = open_regular(path)
    try:
        before = os.fstat(fd)
        size = before.st_size
        if size > limit:
            raise UnreadableInput(f"{size} bytes is too large for a {what} file (at most "
                                  f"{limit})", context=str(path))
        chunks = []
        got = 0
        while got <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > limit:
            raise UnreadableInput(f"grew past {limit} bytes while being read; too large for "
                                  f"a {what} file", context=str(path))
        after = os.fstat(fd)
        try:
            named = os.stat(path)
            replaced = (named.st_dev, named.st_ino) != (after.st_dev, after.st_ino)
        except FileNotFoundError:
            replaced = False  # renamed away after the read (to .deleted): what was read stands
        steady = got == size == after.st_size and not replaced
        return b"".join(chunks), steady
    except OSError as e:
        if e.errno == errno.ENOENT:
            raise vanished(path) from e
        raise UnreadableInput(f"cannot read: {e.strerror}", context=str(path)) from e
    finally:
        os.close(fd)


__all__ = ["describe_mode", "entry_problem", "not_regular", "open_regular",
           "os_error_finding", "read_regular", "vanished"]
