"""The Python daemon of kmeta's embedded Spark session: pyspark's own (``pyspark.daemon``),
with the workers' imports served by the installed pyspark rather than Spark's zip files,
their sockets acknowledging at once what they read, and their garbage collections
sparing what lives for the worker's life.

Spark puts its ``pyspark.zip``, py4j's zip and the ``spark-core`` jar at the head of every
Python worker's path.  Before each task a worker calls ``importlib.invalidate_caches()``,
and on Python 3.11 every zip importer then reads its archive's whole directory again:
pyspark.zip's 1,220 entries once for each of its packages, the jar's 5,264.  That is a
tenth of a second a task, a third of a big export's time on two cores.  Where pyspark is
installed as a package (as kmeta's ``spark`` extra installs it), Spark's home is that
package: those files hold the very code the package does, and come off the path here,
before pyspark is imported.
"""

from __future__ import annotations

import io
import os
import socket
import sys
import zipimport
from importlib.machinery import PathFinder
from typing import Any

from kmeta.ops.processes import collect_rarely


def spark_copies(path: list[str]) -> list[str]:
    """The archives on ``path`` (zip files, jars) inside the directory of the pyspark
    package installed on its other entries, where py4j is installed there too; none
    where either is not."""
    folders = [p for p in path if not os.path.isfile(p)]
    spark = PathFinder.find_spec("pyspark", folders)
    if spark is None or not spark.submodule_search_locations or \
            PathFinder.find_spec("py4j", folders) is None:
        return []
    home = os.path.join(os.path.realpath(spark.submodule_search_locations[0]), "")
    return [p for p in path if os.path.isfile(p) and os.path.realpath(p).startswith(home)]


def keep_archives() -> None:
    """In a Python worker this daemon did not start (the driver's planning workers, which
    Spark forks from its own daemon, and every worker of a session not made by kmeta):
    the zip importers of Spark's copies stop re-reading their archives at each task.
    Their modules may come from those archives already, so the archives stay on the
    path; what goes is the re-read, of files that are the installed package's own and do
    not change while the worker lives.  About 0.1 s a task, and each query of the data
    source starts two planning tasks one after the other.  Cheap to call again: an
    importer made since (a package imported later) is caught then."""
    if not _ARCHIVES:
        _ARCHIVES.append({os.path.realpath(p) for p in spark_copies(sys.path)})
    archives = _ARCHIVES[0]
    if not archives:
        return
    for finder in list(sys.path_importer_cache.values()):
        if isinstance(finder, zipimport.zipimporter) and \
                "invalidate_caches" not in vars(finder) and \
                os.path.realpath(finder.archive) in archives:
            finder.invalidate_caches = _keep  # type: ignore[method-assign]


def _keep() -> None:
    """A zip importer's invalidate_caches that keeps what it read."""


#: the realpaths of Spark's copies on this process's path (computed once)
_ARCHIVES: list[set[str]] = []


class AckingReader(io.RawIOBase):
    """A worker's socket, read with each read acknowledged at once (TCP_QUICKACK).

    Spark's JVM writes a task's command, then its input as a second small write; with
    Nagle's algorithm on its socket (Spark 4.0 does not turn it off), that write waits
    for the acknowledgement of the first, which the worker's kernel delays by up to 40
    ms.  Every task of the data source waited so, a tenth of a 268 MB log's read on two
    cores.  Quick acknowledgement is not a lasting mode of a Linux socket: it is asked
    again after each read."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._ack = True

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        n = self._sock.recv_into(b)
        if n and self._ack:
            try:
                self._sock.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)
            except OSError:  # not a TCP socket
                self._ack = False
        return n

    def fileno(self) -> int:
        return self._sock.fileno()

    def close(self) -> None:
        if not self.closed:
            self._sock.close()
        super().close()


_QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)


class _DaemonOs:
    """``os`` as pyspark's daemon sees it: its worker's socket opened for reading as an
    AckingReader where the system has TCP_QUICKACK (a descriptor that is not a TCP
    socket, or a system without it: as ``os.fdopen`` opens it)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    @staticmethod
    def fdopen(fd: int, mode: str = "r", buffering: int = -1, *args: Any, **kw: Any) -> Any:
        if mode == "rb" and _QUICKACK is not None and not args and not kw:
            try:
                sock = socket.socket(fileno=fd)
            except OSError:
                pass
            else:
                if sock.family in (socket.AF_INET, socket.AF_INET6):
                    return io.BufferedReader(AckingReader(sock),
                                             buffering if buffering > 0 else io.DEFAULT_BUFFER_SIZE)
                sock.detach()
        return os.fdopen(fd, mode, buffering, *args, **kw)


def _sparing(worker: Any) -> Any:
    """pyspark's per-task ``worker``, its collector run rarely and never over what lived
    before the task (``collect_rarely``): the daemon collects after every task, and a
    collection through the modules a worker holds (kmeta, pyarrow, pyspark: 50,000
    objects) took 15 ms of each task; during a task the records table's columns, freed
    as they go, set off collections that found nothing (a twentieth of its parsing)."""
    def sparing_worker(sock: socket.socket, authenticated: bool) -> int:
        collect_rarely()
        return worker(sock, authenticated)
    return sparing_worker


def main() -> None:
    copies = spark_copies(sys.path)
    sys.path[:] = [p for p in sys.path if p not in copies]
    for p in copies:  # importers made already (finding the daemon) are invalidated too
        sys.path_importer_cache.pop(p, None)
    import pyspark.daemon as daemon

    daemon.os = _DaemonOs()  # type: ignore[assignment]
    daemon.worker = _sparing(daemon.worker)
    daemon.manager()


if __name__ == "__main__":
    main()
