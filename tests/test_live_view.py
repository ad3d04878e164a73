"""A live log dir, case by case: who holds ``.lock`` and how (kmeta.storage.locks), and
every reading command saying so once, before its answer (S012).  The whole dance of a
writer beside the reads is tests/test_live.py's."""

from __future__ import annotations

import contextlib
import json
import os
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


@contextlib.contextmanager
def _live_copy(tmp_path: Path, take: str) -> Iterator[tuple[Path, int]]:
    """A copy of kraft41-offsets' data dir whose .lock another process holds (``take``)."""
    from tests.live.kafka_like import copy_real

    data = copy_real(os.environ["KMETA_REAL_DATA"], tmp_path / "broker")
    (data / ".lock").write_bytes(b"")
    p = _hold(data / ".lock", take)
    try:
        yield data, p.pid
    finally:
        p.kill()
        p.wait()


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
    assert lock_holders(log_dir) == []
    assert lock_holders(tmp_path) == []  # no .lock: no broker ever ran on this copy
    fd = os.open(log_dir / ".lock", os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX)  # kmeta repair holds it itself: not another's
        assert lock_holders(log_dir) == []
    finally:
        os.close(fd)


def _locked_by_another(lock: Path) -> bool:
    probe = ("import fcntl, os, sys\n"
             "fd = os.open(sys.argv[1], os.O_RDWR)\n"
             "try:\n    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
             "except OSError:\n    sys.exit(1)\n")
    return subprocess.run([sys.executable, "-c", probe, str(lock)]).returncode == 1


@pytest.mark.parametrize("proc_locks", ["/proc/locks", "/nonexistent/locks"])
def test_asking_never_drops_the_lock_this_process_holds(log_dir: Path, proc_locks: str
                                                         ) -> None:
    """A close of any descriptor of a file drops the POSIX locks the closing process
    holds on it: kmeta repair --in-place holds .lock (data_dir_lock) and then discovers
    the dir, which asks who holds it; asking must not release it."""
    from kmeta.storage.swap import data_dir_lock

    with data_dir_lock(log_dir):
        assert _locked_by_another(log_dir / ".lock")
        assert lock_holders(log_dir, proc_locks=proc_locks) == []
        live_dirs([log_dir])
        assert _locked_by_another(log_dir / ".lock")


def test_the_log_dir_of_a_partition_or_a_file(log_dir: Path, held) -> None:
    seg = log_dir / "t-0" / "00000000000000000000.log"
    seg.parent.mkdir()
    seg.write_bytes(b"")
    assert log_dir_of(seg) == log_dir_of(seg.parent) == log_dir_of(log_dir) == log_dir
    assert [d.path for d in live_dirs([seg, seg.parent, log_dir])] == [log_dir]


@pytest.mark.skipif(not os.environ.get("KMETA_REAL_DATA"),
                    reason="KMETA_REAL_DATA unset")
def test_every_reading_command_says_it_once_first(tmp_path: Path) -> None:
    """S012 before the answer on stderr, in a pipe, once, and not again in the findings
    listed after it; in --json among the findings."""
    with _live_copy(tmp_path, "fcntl.lockf(fd, fcntl.LOCK_EX)") as (data, pid):
        for args in (["verify"], ["info"], ["report"], ["startup"], ["image"], ["brokers"],
                     ["retention"], ["consumers"], ["tiering"], ["history", "--topic",
                                                                 "alerts"], ["compact"]):
            r = run(*args, str(data / "alerts-0" if args == ["compact"] else data))
            assert r.returncode == 0, (args, r.stdout, r.stderr)
            said = [line for line in (r.stderr + r.stdout).splitlines() if "S012" in line]
            assert len(said) == 1 and said[0] == r.stderr.splitlines()[0], (args, said)
            assert f"process {pid} (posix lock) holds .lock" in said[0]
        r = run("verify", "--json", str(data))
        found = [json.loads(x) for x in r.stdout.splitlines() if '"S012"' in x]
        assert [f["details"]["pid"] for f in found] == [pid] and r.returncode == 0


def test_any_proc_locks_text_gives_holders_or_none(tmp_path: Path, log_dir: Path) -> None:
    """/proc/locks is read as text a kernel writes; whatever it holds (another kernel's
    layout, garbage, a line naming our file with a bad pid), the answer is a list."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    st_ = os.stat(log_dir / ".lock")
    ours = f"{os.major(st_.st_dev):02x}:{os.minor(st_.st_dev):02x}:{st_.st_ino}"
    word = st.sampled_from(["1:", "2:", "->", "POSIX", "FLOCK", "OFDLCK", "LEASE",
                            "ADVISORY", "WRITE", "READ", "-1", "0", "12x", "4711", ours,
                            "EOF", "\x00", "é"])
    lines = st.lists(st.lists(word, max_size=9).map(" ".join), max_size=8)
    table = tmp_path / "locks"

    @settings(max_examples=200, deadline=None)
    @given(lines)
    def check(text: list[str]) -> None:
        table.write_text("\n".join(text), encoding="utf-8")
        holders = lock_holders(log_dir, proc_locks=str(table))
        assert all(h.lock in ("posix", "flock", "ofd") for h in holders)
        assert all(h.pid is None or h.pid > 0 for h in holders)

    check()
    table.write_text(f"1: POSIX  ADVISORY  WRITE 4711 {ours} 0 EOF\n"
                     f"1: -> POSIX  ADVISORY  WRITE 4712 {ours} 0 EOF\n"
                     f"2: OFDLCK ADVISORY  WRITE -1 {ours} 0 EOF\n")
    assert lock_holders(log_dir, proc_locks=str(table)) == [
        LockHolder(4711, "posix"), LockHolder(None, "ofd")]


# ------------------------------------------------------------- a moving dir, case by case

def _segment(path: Path, batches: int, start: int = 0) -> list[bytes]:
    from kmeta.storage.writer import noop_batch

    out = [noop_batch(start + i, 1, 1_700_000_000_000 + i) for i in range(batches)]
    path.write_bytes(b"".join(out))
    return out


def test_a_small_file_replaced_while_read_is_read_again(tmp_path: Path, monkeypatch
                                                         ) -> None:
    """CheckpointFile.write renames its .tmp over the file: a read that began on the old
    one is made again, and its answer is the new file's, whole."""
    from kmeta.storage import regular

    target = tmp_path / "replication-offset-checkpoint"
    target.write_bytes(b"0\n1\nt 0 10\n")
    real_read, calls = os.read, []

    def read(fd: int, n: int) -> bytes:
        if not calls:
            (tmp_path / "new.tmp").write_bytes(b"0\n1\nt 0 20\n")
            os.replace(tmp_path / "new.tmp", target)
        calls.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(regular.os, "read", read)
    assert regular.read_regular(target, 1 << 20, "offset-checkpoint") == b"0\n1\nt 0 20\n"


def test_an_index_trimmed_while_read_is_read_again(tmp_path: Path, monkeypatch) -> None:
    """A rolled segment's preallocated index is trimmed to its entries
    (AbstractIndex.trimToValidSize): a read that took the first MiB of 10 is made again
    (it was taken for an index of 87,381 entries and 4 trailing bytes)."""
    from kmeta.storage import regular

    index = tmp_path / "00000000000000000000.timeindex"
    with open(index, "wb") as f:
        f.write(b"\x01" * 84)
        f.truncate(10 * 1024 * 1024 - 4)
    real_read = os.read

    def read(fd: int, n: int) -> bytes:
        got = real_read(fd, n)
        if os.fstat(fd).st_size > 84:
            os.truncate(index, 84)
        return got

    monkeypatch.setattr(regular.os, "read", read)
    assert len(regular.read_regular(index, 64 << 20, "time-index")) == 84


def test_a_file_gone_between_listing_and_read_is_info_naming_where_it_went(
        tmp_path: Path) -> None:
    from kmeta.errors import VanishedInput
    from kmeta.findings import Severity
    from kmeta.storage.regular import open_regular

    seg = tmp_path / "00000000000000000000.log"
    _segment(seg, 2)
    seg.rename(str(seg) + ".deleted")
    with pytest.raises(VanishedInput) as e:
        open_regular(seg)
    f = e.value.finding(str(seg))
    assert f.code == "S013" and f.severity is Severity.INFO
    assert "renamed to 00000000000000000000.log.deleted" in f.message
    (tmp_path / "00000000000000000000.log.deleted").unlink()
    with pytest.raises(VanishedInput):
        open_regular(seg)


def test_a_batch_being_appended_is_written_since_not_torn(tmp_path: Path) -> None:
    """LogSegment.append writes a batch whole, but a reader may meet it half there: a
    segment that has grown since it was opened is being written, not torn (S015, not
    S001); one that has not is torn."""
    from kmeta.storage.segments import read_batches

    seg = tmp_path / "00000000000000000000.log"
    whole = _segment(seg, 3)
    seg.write_bytes(b"".join(whole[:2]) + whole[2][:30])
    read = read_batches(seg)
    items = [next(read), next(read)]  # the map is made and two batches read
    with open(seg, "ab") as f:
        f.write(whole[2][30:])
    items += list(read)
    codes = [i.code for i in items if hasattr(i, "code")]
    assert codes == ["S015"], items
    seg.write_bytes(b"".join(whole[:2]) + whole[2][:30])
    assert [i.code for i in read_batches(seg) if hasattr(i, "code")] == ["S001"]


def test_time_index_entries_past_the_read_are_written_since_when_the_log_has_them(
        tmp_path: Path) -> None:
    from kmeta.formats.filenames import classify
    from kmeta.formats.indexes import TimestampOffset
    from kmeta.ops.verify.indexes import _time_index_in_order
    from kmeta.storage.discover import LogFile

    seg = tmp_path / "00000000000000000000.log"
    _segment(seg, 5)
    f = LogFile(seg, classify(seg.name))
    entries = (TimestampOffset(1, 1), TimestampOffset(2, 3), TimestampOffset(3, 4))
    # the pass read offsets 0..2; the log holds 0..4 now: the last two entries are new
    said = list(_time_index_in_order(entries, "t", 2, f))
    assert [x.code for x in said] == ["S015"] and "offsets 3..4" in said[0].message
    # an entry the log does not hold, now either, is V032 as before
    late = entries + (TimestampOffset(4, 9),)
    assert [x.code for x in _time_index_in_order(late, "t", 2, f)] == ["S015", "V032"]


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("KMETA_REAL_DATA"),
                    reason="KMETA_REAL_DATA unset")
def test_in_a_terminal_the_live_dir_is_the_first_thing_said(tmp_path: Path) -> None:
    """The path people take: an 80-column terminal, progress bar on.  The notice comes
    first, folded at the width, above the report, and once."""
    from tests.terminal import run_in_terminal

    with _live_copy(tmp_path, "fcntl.flock(fd, fcntl.LOCK_EX)") as (data, pid):
        for args in (["verify", str(data)], ["report", str(data)]):
            seen = run_in_terminal(args, cwd=tmp_path)
            assert seen.exit_code == 0, seen.screen
            text = [line for line in seen.screen if line.strip()]
            assert text[0].startswith("!! S012 info:") and f"process {pid}" in \
                " ".join(text[:3]), text[:4]
            assert all(len(line) <= 80 for line in seen.screen)
            assert sum("S012" in line for line in seen.screen) == 1, seen.screen
