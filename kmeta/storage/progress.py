"""How far a run has read: the observer every read of a log tells as it goes.

A command passes one :class:`Progress` to the op it runs, and the op passes it on to
every discovery and every read it makes; storage tells it what a discovery found and how
far each file has been read.  Every run calls it, whether or not anybody listens: this
base class hears nothing (a pipe, a script, the library), and the command line's bar
(:class:`kmeta.render.progress.Bar`) is another one.  So the code a person's terminal
runs is the code every test runs, bar or no bar; only what the observer does differs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol


class Found(Protocol):
    """What a discovery found, as the observer sees it (a
    :class:`kmeta.storage.discover.Discovery`)."""

    def listed_files(self) -> Iterable[Any]:
        """The files listed (each with a ``path``, ``is_batches`` and ``is_metadata``)."""
        ...

    def unlisted(self) -> int:
        """How many partition dirs were left for others to list."""
        ...


class Progress:
    """The observer of a run's reading.  Its methods are called from the reads' hot
    loops, a few times per file and every few megabytes: an observer must be cheap."""

    __slots__ = ()

    def found(self, discovery: Found) -> None:
        """A discovery was made: the files it listed are what the run may read (a
        partition dir left to a worker is not listed here: see :meth:`read_elsewhere`)."""

    def read(self, path: str, position: int) -> None:
        """The file at ``path`` has been read up to byte ``position`` (its size: whole).
        A file read again from its start tells smaller positions again."""

    def read_elsewhere(self, size: int) -> None:
        """Another process read ``size`` bytes of files this one never listed (verify's
        workers list and check a data dir's partition dirs themselves)."""

    def notice(self, finding: Any) -> None:
        """Something the person must know before the answer, said once where it is found
        (a live log dir: S012); it is among the run's findings too, for ``--json``."""

    def phase(self, name: str) -> None:
        """The run begins another pass over the files listed, called ``name`` (the
        shell's opening indexes the log, then replays it): what is read from here on is
        counted afresh against the files' bytes, not added to the pass before."""


#: The observer that hears nothing: what a run gets when nobody listens.
QUIET = Progress()
