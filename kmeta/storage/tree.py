"""Whole directory trees: copied, compared, fingerprinted, and built beside their place
before one rename puts them there (a crash leaves no half-written directory).

What ``kmeta repair`` needs of a file system, kept apart from what it decides.
"""

from __future__ import annotations

import filecmp
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kmeta.errors import KmetaError, UnreadableInput
from kmeta.storage.regular import open_regular
from kmeta.storage.writer import atomic_open, fsync_directory


def fingerprint(path: Path, prefix: str = "") -> dict[str, tuple[int, int]]:
    """Relative name -> (size, mtime) of everything below ``path`` (links not followed
    into directories).  Plain strings and scandir's cached types: a Path and two stats
    per entry made planning a repair of 100,000 files take a minute."""
    out = {}
    for entry in os.scandir(path):
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:  # gone since the listing: not part of the tree
            continue
        name = prefix + entry.name
        try:
            regular = entry.is_file()
        except OSError:  # a link that loops: DirEntry raises where Path said False
            regular = False
        out[name] = (st.st_size if regular else -1, st.st_mtime_ns)
        if entry.is_dir(follow_symlinks=False):
            out.update(fingerprint(Path(entry.path), name + os.sep))
    return out


def is_within(path: Path, other: Path) -> bool:
    return path == other or other in path.parents


def copy_file(src: Path, dst: Path, *, limit: int | None = None,
               durable: bool = True) -> int:
    """Copy ``src`` (its first ``limit`` bytes) to ``dst`` atomically; returns the bytes."""
    copied = 0
    fd = open_regular(src)  # never a FIFO or a device, even one swapped in since the plan
    try:
        with os.fdopen(fd, "rb") as inp, atomic_open(dst, durable=durable) as out:
            while limit is None or copied < limit:
                want = 1 << 20 if limit is None else min(1 << 20, limit - copied)
                chunk = inp.read(want)
                if not chunk:
                    break
                out.write(chunk)
                copied += len(chunk)
            if limit is not None and copied != limit:
                raise UnreadableInput(f"ended after {copied} of {limit} bytes while being "
                                      "copied (changed since the plan?)", context=str(src))
    except OSError as e:
        raise KmetaError(f"cannot copy to {dst}: {e.strerror}", context=str(src)) from e
    return copied


def copy_tree(src: Path, dst: Path, durable: bool = True) -> None:
    """Copy a directory into ``dst`` (created if absent): files, subdirectories, symlinks
    as links, fsyncing it all."""
    dst.mkdir(exist_ok=True)
    for entry in sorted(os.scandir(src), key=lambda e: e.name):
        target = dst / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), target)
        elif entry.is_dir():
            copy_tree(Path(entry.path), target, durable)
        elif entry.is_file():
            copy_file(Path(entry.path), target, durable=durable)
        # A FIFO, socket or device is not copied: reading it could block or never end.
    if durable:
        fsync_directory(dst)


def temp_beside(path: Path, tag: str) -> Path:
    """A hidden name beside ``path`` for a directory kmeta builds or moves away."""
    # The name starts with a dot and ends in ".tmp": Kafka cannot parse it as
    # topic-partition (the text after the last '-' is never a number), so a broker that
    # finds one left by a crash refuses to start and names it, rather than load it as a
    # partition; and it never ends in -delete/-future/-stray, which Kafka acts on.
    return path.parent / f".{path.name}.kmeta-{tag}-{secrets.token_hex(4)}.tmp"


def materialize(target: Path, fill: Callable[[Path], Any], durable: bool, tag: str = "repair"
                ) -> None:
    """Build a directory beside ``target`` with ``fill(dir)`` and rename it to ``target``
    (absent or empty): a crash leaves no half-written ``target``, only a hidden temp
    directory."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_beside(target, tag)
    tmp.mkdir()
    try:
        fill(tmp)
        if durable:
            fsync_directory(tmp)
        os.rename(tmp, target)  # replaces an empty directory on POSIX
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)  # our own partial output only
        raise
    if durable:
        fsync_directory(target.parent)


def same_tree(a: Path, b: Path) -> bool:
    """Whether two directories hold the same names and the same bytes."""
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    if mismatch or errors:
        return False
    return all(same_tree(a / d, b / d) for d in cmp.common_dirs)
