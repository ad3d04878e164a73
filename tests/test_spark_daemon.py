"""kmeta's Python daemon for Spark's workers (kmeta.spark.daemon), without a JVM: its
sockets acknowledge what they read at once, and its workers spare the collector what
lives before a task."""

from __future__ import annotations

import gc
import io
import os
import socket
import time
from pathlib import Path

import pytest

from kmeta.spark import daemon

needs_quickack = pytest.mark.skipif(daemon._QUICKACK is None,
                                    reason="TCP_QUICKACK is Linux's")


def _second_write_waits(open_reader) -> list[float]:
    """Spark's exchange with a worker, played on loopback: the JVM's side (Nagle's
    algorithm on, as Spark 4.0 leaves it) writes a command, then the task's input as a
    second small write; the milliseconds each input took to reach the worker."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        jvm = socket.create_connection(server.getsockname())
        worker, _ = server.accept()
        infile = open_reader(os.dup(worker.fileno()))
        waits = []
        try:
            for _ in range(6):
                jvm.sendall(b"c" * 7000)
                assert infile.read(7000) == b"c" * 7000
                time.sleep(0.003)  # the JVM builds the input's Arrow batch
                started = time.perf_counter()
                jvm.sendall(b"i" * 800)
                assert infile.read(800) == b"i" * 800
                waits.append((time.perf_counter() - started) * 1000)
                worker.sendall(b"done")  # the task's answer
                assert jvm.recv(4) == b"done"
        finally:
            for s in (infile, jvm, worker):
                s.close()
    return sorted(waits)


@needs_quickack
def test_a_task_input_is_not_held_by_a_delayed_acknowledgement() -> None:
    """Read as pyspark's daemon reads a worker's socket, each task's input waits for the
    worker's kernel to acknowledge the command (40 ms on Linux); through kmeta's
    daemon it comes at once."""
    plain = _second_write_waits(lambda fd: os.fdopen(fd, "rb", 65536))
    acking = _second_write_waits(lambda fd: daemon._DaemonOs.fdopen(fd, "rb", 65536))
    if plain[len(plain) // 2] < 20:
        pytest.skip(f"this kernel does not delay the acknowledgement: {plain}")
    assert acking[len(acking) // 2] < 10, acking


def test_the_daemon_opens_other_descriptors_as_os_does(tmp_path: Path, monkeypatch) -> None:
    """Only a TCP socket opened for reading becomes an AckingReader, where the system has
    TCP_QUICKACK; a file, a Unix socket and any socket opened for writing are opened by
    ``os.fdopen``."""
    f = tmp_path / "f"
    f.write_bytes(b"kafka")
    with daemon._DaemonOs.fdopen(os.open(f, os.O_RDONLY), "rb", 65536) as r:
        assert type(r.raw) is io.FileIO and r.read() == b"kafka"
    a, b = socket.socketpair()
    with a, b, daemon._DaemonOs.fdopen(os.dup(a.fileno()), "rb", 65536) as r:
        b.sendall(b"x")
        assert type(r.raw) is io.FileIO and r.read(1) == b"x"
    with socket.create_server(("127.0.0.1", 0)) as server, \
            socket.create_connection(server.getsockname()) as c:
        s, _ = server.accept()
        with s, daemon._DaemonOs.fdopen(os.dup(s.fileno()), "wb", 65536) as w:
            assert type(w.raw) is io.FileIO
            w.write(b"out")
        assert c.recv(3) == b"out"
        with daemon._DaemonOs.fdopen(os.dup(c.fileno()), "rb", 65536) as r:
            assert type(r.raw) is (daemon.AckingReader if daemon._QUICKACK else io.FileIO)
            assert r.read() == b""  # the other end closed above
        monkeypatch.setattr(daemon, "_QUICKACK", None)  # not Linux
        with daemon._DaemonOs.fdopen(os.dup(c.fileno()), "rb", 65536) as r:
            assert type(r.raw) is io.FileIO
    assert daemon._DaemonOs().getpid() == os.getpid()  # the rest of os, as it is


def test_a_worker_spares_the_collector_what_lived_before_its_task() -> None:
    from kmeta.ops.processes import FEW_COLLECTIONS

    seen = []

    def worker(sock, authenticated):
        seen.append((gc.get_freeze_count(), gc.get_threshold()[0]))
        return 0

    threshold = gc.get_threshold()
    try:
        assert daemon._sparing(worker)(None, True) == 0
        assert seen and seen[0][0] > 0 and seen[0][1] == FEW_COLLECTIONS
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()
