"""A live log dir, case by case: who holds ``.lock`` and how (kmeta.storage.locks), and
every reading command saying so once, before its answer (S012).  The whole dance of a
writer beside the reads is tests/test_live.py's."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kmeta.storage.live import live_dirs, log_dir_of
from kmeta.storage.locks import LockHolder, lock_holders
from tests.clirun import run

HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
{take}
print("locked", flush=True)
time.sleep(60)
"""


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    d = tmp_path / "kafka"
    d.mkdir()
    (d / ".lock").write_bytes(b"")
    return d


def _hold(lock: Path, take: str) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", HOLD.format(take=take), str(lock)],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "locked"
    return p


@pytest.fixture(params=["posix", "flock"])
def held(request: pytest.FixtureRequest, log_dir: Path) -> Iterator[tuple[str, int]]:
    take = {"posix": "fcntl.lockf(fd, fcntl.LOCK_EX)",  # what FileChannel.tryLock takes
            "flock": "fcntl.flock(fd, fcntl.LOCK_EX)"}[request.param]
    p = _hold(log_dir / ".lock", take)
    try:
        yield request.param, p.pid
    finally:
        p.kill()
        p.wait()


def test_a_lock_of_either_kind_is_seen_with_its_holder(log_dir: Path, held) -> None:
    kind, pid = held
    assert lock_holders(log_dir) == [LockHolder(pid, kind)]


def test_without_proc_locks_each_kind_is_still_seen(log_dir: Path, held) -> None:
    """/proc/locks missing (another OS, a locked-down container): F_GETLK sees a POSIX
    lock, a shared flock tried and released sees another's exclusive one."""
    kind, pid = held
    holders = lock_holders(log_dir, proc_locks="/nonexistent/locks")
    assert holders == [LockHolder(pid if kind == "posix" else None, kind)]


def test_no_holder_no_lock_file_and_our_own_lock(tmp_path: Path, log_dir: Path) -> None:
    import fcntl
    import os

    assert lock_holders(log_dir) == []
    assert lock_holders(tmp_path) == []  # no .lock: no broker ever ran on this copy
    fd = os.open(log_dir / ".lock", os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX)  # kmeta repair holds it itself: not another's
        assert lock_holders(log_dir) == []
    finally:
        os.close(fd)


def test_the_log_dir_of_a_partition_or_a_file(log_dir: Path, held) -> None:
    seg = log_dir / "t-0" / "00000000000000000000.log"
    seg.parent.mkdir()
    seg.write_bytes(b"")
    assert log_dir_of(seg) == log_dir_of(seg.parent) == log_dir_of(log_dir) == log_dir
    assert [d.path for d in live_dirs([seg, seg.parent, log_dir])] == [log_dir]


@pytest.mark.skipif(not __import__("os").environ.get("KMETA_REAL_DATA"),
                    reason="KMETA_REAL_DATA unset")
def test_every_reading_command_says_it_once_first(tmp_path: Path) -> None:
    """S012 before the answer on stderr, in a pipe, once, and not again in the findings
    listed after it; in --json among the findings."""
    import os
    import shutil

    data = tmp_path / "kafka-data"
    shutil.copytree(Path(os.environ["KMETA_REAL_DATA"]) / "kraft41-offsets" / "kafka-data",
                    data)
    (data / ".lock").write_bytes(b"")
    p = _hold(data / ".lock", "fcntl.lockf(fd, fcntl.LOCK_EX)")
    try:
        for args in (["verify"], ["info"], ["report"], ["startup"], ["image"], ["brokers"],
                     ["retention"], ["consumers"], ["tiering"], ["history", "--topic",
                                                                 "alerts"], ["compact"]):
            r = run(*args, str(data / "alerts-0" if args == ["compact"] else data))
            assert r.returncode == 0, (args, r.stdout, r.stderr)
            said = [line for line in (r.stderr + r.stdout).splitlines() if "S012" in line]
            assert len(said) == 1 and said[0] == r.stderr.splitlines()[0], (args, said)
            assert f"process {p.pid} (posix lock) holds .lock" in said[0]
        r = run("verify", "--json", str(data))
        found = [json.loads(x) for x in r.stdout.splitlines() if '"S012"' in x]
        assert [f["details"]["pid"] for f in found] == [p.pid] and r.returncode == 0
    finally:
        p.kill()
        p.wait()
