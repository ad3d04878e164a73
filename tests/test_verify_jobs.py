"""``verify --jobs N`` (kmeta/ops/verify/jobs.py): the ordinary partitions scanned in worker
processes give the report of one process, byte for byte, on every fixture and real data
dir and on a broker of damaged partitions; a worker that dies leaves its share to the
caller; and the scan of an ordinary partition by walks is the scan batch by batch.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from kmeta.formats.batch import build_batch
from kmeta.ops import processes
from kmeta.ops.verify import Beside
from kmeta.ops.verify import jobs as verify_jobs
from kmeta.ops.verify import metadata_log as verify_module
from kmeta.ops.verify.jobs import PartitionScans, partitions_in, scan_partition
from kmeta.storage import writer as W
from kmeta.storage.discover import discover
from tests.clirun import run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"
ENV = {"COLUMNS": "100", "NO_COLOR": "1"}


@pytest.fixture
def parallel(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Workers start whatever the size of the input; the list gets, per run with workers,
    how many were started."""
    monkeypatch.setattr(verify_jobs, "PARALLEL_FROM", 0)
    monkeypatch.setattr(verify_module, "INDEXES_BESIDE_FROM", 0)
    started: list[int] = []
    real_init = PartitionScans.__init__

    def spy(self: PartitionScans, *args: object, **kwargs: object) -> None:
        real_init(self, *args, **kwargs)
        started.append(self.processes)

    monkeypatch.setattr(PartitionScans, "__init__", spy)
    real_beside = Beside.__init__

    def spy_beside(self: Beside, *args: object, **kwargs: object) -> None:
        real_beside(self, *args, **kwargs)
        if self._proc is not None:
            BESIDE.append(self._proc.pid)

    monkeypatch.setattr(Beside, "__init__", spy_beside)
    BESIDE.clear()
    return started


#: the processes started beside a metadata log's pass (its offset indexes)
BESIDE: list[int] = []


def _data_dirs(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("meta.properties"))


def _same_for_any_jobs(*paths: Path, jobs: tuple[int, ...] = (2,)) -> None:
    for args in (("--json",), ()):
        want = run("verify", *args, "--jobs", "1", *map(str, paths), env=ENV)
        for n in jobs:
            got = run("verify", *args, "--jobs", str(n), *map(str, paths), env=ENV)
            assert (got.returncode, got.stdout, got.stderr) == \
                (want.returncode, want.stdout, want.stderr), f"--jobs {n} {args} {paths}"


@pytest.mark.parametrize("root", ["fixtures", "real"])
def test_the_report_is_the_same_with_two_jobs(root: str, real_data: Path,
                                              parallel: list[int]) -> None:
    dirs = _data_dirs(FIXTURES if root == "fixtures" else real_data)
    assert len(dirs) > 5
    for d in dirs:
        _same_for_any_jobs(d)
    _same_for_any_jobs(*dirs, jobs=(2, 3))  # all of them in one run
    assert max(parallel) >= 1 and 1 in parallel  # two jobs: one worker beside this one
    assert BESIDE  # and the metadata logs' offset indexes checked in another process


def test_a_metadata_logs_index_findings_are_the_same_beside(tmp_path: Path,
                                                            parallel: list[int]) -> None:
    """Damaged offset indexes of a metadata log, checked beside the pass: the findings
    come where one process has them."""
    import shutil

    part = tmp_path / "__cluster_metadata-0"
    shutil.copytree(FIXTURES / "healthy" / "__cluster_metadata-0", part)
    index = sorted(part.glob("*.index"))[0]
    raw = bytearray(index.read_bytes())
    assert len(raw) >= 16
    raw[4:8] = (123456).to_bytes(4, "big")  # entry 0 points where no batch starts
    index.write_bytes(bytes(raw) + b"\x01\x02\x03")  # and a partial entry after
    (part / "00000000000000999999.index").write_bytes(bytes(8))  # no segment: V030
    _same_for_any_jobs(part, jobs=(2,))
    out = run("verify", "--json", "--jobs", "2", str(part), env=ENV).stdout
    assert BESIDE
    for code in ("V030", "V031", "V032"):
        assert f'"code":"{code}"' in out


def _topic(part: Path, batches: int, seed: int) -> None:
    rng = random.Random(seed)
    out, off = [], 0
    for i in range(batches):
        recs = [(b"key-%d" % rng.randrange(100), rng.randbytes(rng.randrange(10, 200)))
                for _ in range(rng.randrange(1, 10))]
        out.append(build_batch(off, recs, leader_epoch=i // 40,
                               base_timestamp=1_700_000_000_000 + off))
        off += len(recs)
    W.write_segments(part, out, segment_bytes=20_000, durable=False)


def damaged_broker(root: Path) -> Path:
    """A data dir of twelve partitions, most of them damaged in a way of their own."""
    data = root / "broker"
    data.mkdir()
    (data / "meta.properties").write_text(
        "version=1\nnode.id=1\ncluster.id=5L6g3nShT-eMCtK--X86sw\n"
        "directory.id=J8aAPcfLQt2bAHAnpAuCpw\n")
    for p in range(12):
        part = data / f"orders-{p}"
        _topic(part, 120, seed=p)
        seg = sorted(part.glob("*.log"))[1]
        raw = bytearray(seg.read_bytes())
        if p % 6 == 1:
            raw[len(raw) // 2] ^= 0xFF  # a bad CRC, or damage to resync past
        elif p % 6 == 2:
            raw += b"\x00" * 300  # a zero-filled tail
        elif p % 6 == 3:
            raw = raw[:-17]  # a torn tail
        elif p % 6 == 4:
            raw[100:140] = b"garbage!" * 5
        seg.write_bytes(bytes(raw))
    return data


def test_damaged_partitions_are_reported_in_their_order(tmp_path: Path,
                                                        parallel: list[int]) -> None:
    data = damaged_broker(tmp_path)
    _same_for_any_jobs(data, jobs=(2, 3, 5))
    assert parallel[:4] == [0, 1, 2, 4]  # --jobs 1, 2, 3, 5: that many processes in all
    out = run("verify", "--json", "--jobs", "3", str(data), env=ENV).stdout
    named = [line.split('"file":"')[1].split("/")[-2] for line in out.splitlines()
             if '"file":"' in line and "/orders-" in line]
    assert len(set(named)) >= 7  # damage in most partitions...
    assert named == sorted(named, key=named.index)  # each partition's findings together
    order = list(dict.fromkeys(named))
    found = [p.path.name for p in discover([data]).all_partitions()]
    # ...reported partition by partition, in the order they were found
    assert order == [name for name in found if name in order]


def _ordinary(data: Path) -> list:
    found = discover([data])
    return partitions_in([p.segments for p in found.all_partitions() if not p.is_metadata])


def test_a_worker_that_dies_leaves_its_share_to_the_caller(
        tmp_path: Path, parallel: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import signal

    parts = _ordinary(damaged_broker(tmp_path))
    want = [scan_partition(segs) for segs, _ in parts]
    caller = os.getpid()
    real_scan = verify_jobs.scan_partition

    def dying(segments: list) -> tuple:
        if os.getpid() != caller:  # a worker (forked: it has this patch) dies mid-way,
            os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would end it
        return real_scan(segments)

    monkeypatch.setattr(verify_jobs, "scan_partition", dying)
    # forked (so they have the patch), even beside pytest-xdist's thread

    monkeypatch.setattr(processes, "no_other_thread", lambda: True)
    assert verify_jobs._context().get_start_method() == "fork"
    with PartitionScans(parts, jobs=3) as scans:
        assert scans.processes == 2
        got = [scans.take() for _ in parts]
    assert got == want


def test_workers_share_the_partitions(tmp_path: Path, parallel: list[int]) -> None:
    parts = _ordinary(damaged_broker(tmp_path))
    with PartitionScans(parts, jobs=2) as scans:
        got = [scans.take() for _ in parts]
        owners = list(scans._owner)
    assert got == [scan_partition(segs) for segs, _ in parts]
    assert set(owners) <= {0, 1}


def test_one_job_starts_no_process(tmp_path: Path) -> None:
    parts = _ordinary(damaged_broker(tmp_path))
    with PartitionScans(parts, jobs=1) as scans:
        assert scans.processes == 0
    with PartitionScans(parts, jobs=4) as scans:  # too few bytes to be worth a process
        assert scans.processes == 0
        assert [scans.take() for _ in parts] == [scan_partition(s) for s, _ in parts]


def test_jobs_must_be_positive() -> None:
    done = run("verify", "--jobs", "0", str(FIXTURES / "healthy"))
    assert done.returncode == 2
    assert "--jobs" in done.stderr


def test_with_a_thread_alive_workers_are_not_forked(tmp_path: Path,
                                                    parallel: list[int]) -> None:
    """A progress bar's thread, say: fork would copy it half-way; the forkserver starts
    workers from a process of its own."""
    import threading

    parts = _ordinary(damaged_broker(tmp_path))
    stop = threading.Event()
    bar = threading.Thread(target=stop.wait)
    bar.start()
    try:
        assert verify_jobs._context().get_start_method() in ("forkserver", "spawn")
        with PartitionScans(parts, jobs=2) as scans:
            assert scans.processes == 1
            got = [scans.take() for _ in parts]
    finally:
        stop.set()
        bar.join()
    assert got == [scan_partition(segs) for segs, _ in parts]


@pytest.mark.parametrize("how", ["max-offset", "swapped"])
def test_verify_and_compact_agree_on_offsets_a_segment_cannot_hold(tmp_path: Path,
                                                                    how: str) -> None:
    """A batch at base offset 2^63-1 in the first of two segments: past what its index
    addresses and past the next segment's base.  compact called it S005 and verify
    clean; both now judge it by one rule (kmeta.core.cleaner.batch_out_of_segment)."""
    from tests.clirun import run
    from tests.fuzz.seeds import damaged_partition

    part = damaged_partition(how, tmp_path / "orders-0")
    checked = run("verify", "--json", "--jobs", "1", part, env={})
    assert checked.returncode == 1
    codes = [json.loads(line).get("code") for line in checked.stdout.splitlines()]
    assert "S005" in codes
    compacted = run("compact", "--json", part, env={})
    assert "S005" in [json.loads(line).get("code") for line in compacted.stdout.splitlines()]
    assert run("verify", "--json", "--jobs", "2", part, env={}).stdout == checked.stdout


def hostile_broker(root: Path) -> Path:
    """:func:`damaged_broker` with what a partition dir's listing and small files can say
    besides its segments: unknown files and a directory in a partition dir, a FIFO named
    like an index, partition.metadata unreadable or naming another topic id, a producer
    snapshot of garbage, a partition without segments, offset checkpoints that name a
    partition beyond its end and one that is not on disk; and a metadata log whose
    indexes are damaged (listed and checked by the first process)."""
    import os
    import shutil

    data = damaged_broker(root)
    meta = data / "__cluster_metadata-0"
    shutil.copytree(FIXTURES / "healthy" / "__cluster_metadata-0", meta)
    index = sorted(meta.glob("*.index"))[0]
    raw = bytearray(index.read_bytes())
    raw[4:8] = (123456).to_bytes(4, "big")  # entry 0 points where no batch starts
    index.write_bytes(bytes(raw) + b"\x01\x02\x03")  # and a partial entry after
    (meta / "00000000000000999999.timeindex").write_bytes(bytes(12))  # no segment
    ids = ["AAAAAAAAAAAAAAAAAAAAAQ", "BAAAAAAAAAAAAAAAAAAAAQ"]
    for p in range(12):
        W.write_partition_metadata(data / f"orders-{p}", ids[p == 2], durable=False)
    (data / "orders-0" / "junk.txt").write_text("not Kafka's")
    (data / "orders-0" / "leftovers").mkdir()
    os.mkfifo(data / "orders-1" / "00000000000000000999.index")
    (data / "orders-3" / "partition.metadata").write_text("version: 7\n")
    (data / "orders-4" / "00000000000000000010.snapshot").write_bytes(b"\x00\x01garbage")
    for seg in (data / "orders-5").glob("*.log"):
        seg.unlink()
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
        (data / name).write_text("0\n2\norders 0 99999\ngone 0 5\n")
    return data


def _report_json(report: object) -> list[str]:
    from kmeta.render.verify import render_json

    return list(render_json(report))  # type: ignore[arg-type]


def _as_one_listing(*paths: Path, jobs: int = 2) -> None:
    """verify, its partition dirs listed in the workers, reports what it reports from a
    discovery that listed every file up front (the way taken with a progress bar, or for
    a discovery made by hand), for one job and for ``jobs``."""
    from kmeta.ops.verify import verify, verify_discovery

    want = _report_json(verify_discovery(discover(paths)))
    for n in (1, jobs):
        assert _report_json(verify(paths, jobs=n)) == want, f"--jobs {n} {paths}"


def test_a_data_dir_listed_in_the_workers_reports_what_one_listing_does(
        tmp_path: Path, real_data: Path, parallel: list[int]) -> None:
    data = hostile_broker(tmp_path)
    discovered = discover([data], defer=True)
    from kmeta.storage.discover import DeferredPartition

    deferred = [p for p in discovered.all_partitions() if isinstance(p, DeferredPartition)]
    assert len(deferred) == 12 and all(p._files is None for p in deferred)  # not listed
    _as_one_listing(data, jobs=3)
    out = run("verify", "--json", "--jobs", "2", str(data), env=ENV).stdout
    for code in ("S007", "S008", "F010", "V028", "V030", "V031", "V032", "V035", "V037",
                 "V038"):
        assert f'"code":"{code}"' in out, code
    _same_for_any_jobs(data, jobs=(2, 3))
    for d in _data_dirs(FIXTURES) + _data_dirs(real_data):
        _as_one_listing(d)
    _as_one_listing(*_data_dirs(real_data), jobs=3)


@pytest.mark.parametrize("odd", ["unknown-files-only", "metadata-by-its-files"])
def test_a_topic_dir_that_is_no_ordinary_partition_is_judged_as_discover_does(
        tmp_path: Path, odd: str, parallel: list[int]) -> None:
    """A ``topic-N`` dir of a data dir whose files say it is no ordinary partition: a
    folder of other files (discover looks for data dirs below it), or a copy of the
    metadata partition under a data topic's name.  The workers find out; verify then
    reads the input as discover does."""
    import shutil

    data = hostile_broker(tmp_path)
    if odd == "unknown-files-only":
        (data / "notes-0").mkdir()
        (data / "notes-0" / "README").write_text("kept by an operator")
    else:
        shutil.copytree(FIXTURES / "healthy" / "__cluster_metadata-0", data / "copy-0")
    _as_one_listing(data)
    _same_for_any_jobs(data, jobs=(2,))


def test_partition_dirs_are_listed_and_checked_where_they_are_claimed(
        tmp_path: Path, parallel: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """Each partition dir is listed once, by the process that claimed it, workers
    included: the caller lists the data dir, not the 136,000 files of a broker."""
    import os
    import time

    from kmeta.ops.verify import partitions as verify_dirs
    from kmeta.storage import discover as discover_module

    data = damaged_broker(tmp_path)
    log = tmp_path / "listed"
    real_list = discover_module.list_deferred

    def spy(path: str, topic: str, partition: int) -> object:
        with open(log, "a") as out:  # the workers are forked: they write it too
            out.write(f"{os.getpid()} {Path(path).name}\n")
        time.sleep(0.02)  # so that the worker gets its share
        return real_list(path, topic, partition)

    monkeypatch.setattr(verify_dirs, "list_deferred", spy)
    monkeypatch.setattr(processes, "no_other_thread", lambda: True)
    from kmeta.ops.verify import verify

    report = verify([data], jobs=2)
    lines = [line.split() for line in log.read_text().splitlines()]
    assert sorted(name for _, name in lines) == sorted(f"orders-{p}" for p in range(12))
    assert {pid for pid, _ in lines} - {str(os.getpid())}  # a worker listed some
    assert report.files == sum(len(p.files) for p in discover([data]).all_partitions()) + 1


def _deferred_tasks(data: Path) -> list:
    from kmeta.storage.discover import DeferredPartition

    return [((str(p.path), p.topic, p.partition), None)
            for p in discover([data], defer=True).all_partitions()
            if isinstance(p, DeferredPartition)]


def test_a_worker_that_dies_leaves_its_partition_dirs_to_the_caller(
        tmp_path: Path, parallel: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import signal

    from kmeta.ops.verify import partitions as verify_dirs

    tasks = _deferred_tasks(hostile_broker(tmp_path))
    want = [verify_dirs.check_task(t) for t, _ in tasks]
    caller = os.getpid()
    real_check = verify_dirs.check_deferred

    def dying(task: tuple, hear: object = None) -> object:
        if os.getpid() != caller:
            os.kill(os.getpid(), signal.SIGKILL)
        return real_check(task, hear)

    monkeypatch.setattr(verify_dirs, "check_deferred", dying)
    monkeypatch.setattr(processes, "no_other_thread", lambda: True)
    with PartitionScans(tasks, jobs=3, check=verify_dirs.check_task) as scans:
        assert scans.processes == 2
        got = [scans.take() for _ in tasks]
    assert got == want


def test_with_a_thread_alive_partition_dirs_are_checked_by_the_forkserver(
        tmp_path: Path, parallel: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    import threading
    import time

    from kmeta.ops.verify import partitions as verify_dirs
    from kmeta.ops.verify.partitions import check_task

    tasks = _deferred_tasks(hostile_broker(tmp_path))
    want = [check_task(t) for t, _ in tasks]
    real_check = verify_dirs.check_deferred

    def slow(task: tuple, hear: object = None) -> object:  # here only: the forkserver's
        time.sleep(0.3)  # worker imports its own; twelve of them: seconds for the worker
        return real_check(task, hear)  # to start and claim some

    monkeypatch.setattr(verify_dirs, "check_deferred", slow)
    stop = threading.Event()
    bar = threading.Thread(target=stop.wait)
    bar.start()
    try:
        assert verify_jobs._context().get_start_method() in ("forkserver", "spawn")
        with PartitionScans(tasks, jobs=2, check=check_task) as scans:
            assert scans.processes == 1
            got = [scans.take() for _ in tasks]
            owners = list(scans._owner)
    finally:
        stop.set()
        bar.join()
    assert got == want
    assert 1 in owners  # the worker checked some


def test_workers_start_once_this_process_has_read_enough(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Partition dirs of unknown size: this process checks them until those it checked
    say that all of them reach PARALLEL_FROM bytes, then the workers take their share of
    the rest."""
    from kmeta.ops.verify.partitions import check_task

    tasks = _deferred_tasks(damaged_broker(tmp_path))
    first = check_task(tasks[0][0])
    monkeypatch.setattr(verify_jobs, "PARALLEL_FROM", first.bytes * len(tasks))
    with PartitionScans(tasks, jobs=2, check=check_task) as scans:
        assert scans.processes == 0
        got = [scans.take()]
        assert scans.processes == 1
        got += [scans.take() for _ in tasks[1:]]
    assert got == [check_task(t) for t, _ in tasks]
    monkeypatch.setattr(verify_jobs, "PARALLEL_FROM", first.bytes * len(tasks) * 4)
    with PartitionScans(tasks, jobs=2, check=check_task) as scans:
        assert [scans.take() for _ in tasks] == [check_task(t) for t, _ in tasks]
        assert scans.processes == 0


def test_a_time_index_past_its_segment_is_judged_by_the_pass(tmp_path: Path,
                                                             parallel: list[int]) -> None:
    """A segment cut at a batch, its indexes left whole: the offset index, checked beside
    the pass, and the time index, checked against where the pass found the segment's
    end, say what one process says (V032 past the segment's last offset)."""
    import shutil

    from kmeta.storage.segments import read_batches

    data = tmp_path / "healthy"
    shutil.copytree(FIXTURES / "healthy", data)
    meta = data / "__cluster_metadata-0"
    last = sorted(meta.glob("*.log"))[-1]
    starts = [b.position for b in read_batches(last) if hasattr(b, "position")]
    with open(last, "r+b") as f:
        f.truncate(starts[len(starts) // 2])
    _same_for_any_jobs(data)
    assert BESIDE
    found = run("verify", "--json", "--jobs", "2", str(data), env=ENV).stdout
    assert "past the segment's last offset" in found


def test_without_shared_memory_every_partition_is_checked_here(
        tmp_path: Path, parallel: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers' shared counter is a file and a semaphore in /dev/shm: where it is
    missing (or read-only), no worker starts and the report is the one of one process."""
    data = damaged_broker(tmp_path)
    parts = _ordinary(data)
    want = [scan_partition(segs) for segs, _ in parts]
    one = run("verify", "--json", "--jobs", "1", str(data), env=ENV)
    monkeypatch.setattr(processes, "SHARED_MEMORY_DIR", str(tmp_path / "no-shm"))
    assert processes.shared_memory() is False
    with PartitionScans(parts, jobs=2) as scans:
        assert scans.processes == 0
        assert [scans.take() for _ in parts] == want
    two = run("verify", "--json", "--jobs", "2", str(data), env=ENV)
    assert (two.returncode, two.stdout, two.stderr) == \
        (one.returncode, one.stdout, one.stderr)
    assert parallel[-1] == 0  # the run's scans started no worker


def test_a_shared_counter_that_cannot_be_made_leaves_the_partitions_here(
        tmp_path: Path, parallel: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """/dev/shm there but no semaphore or space to be had in it (multiprocessing raises
    OSError): as without it."""
    parts = _ordinary(damaged_broker(tmp_path))
    real = verify_jobs._context

    class NoShm:
        def __init__(self, ctx: object) -> None:
            self._ctx = ctx

        def __getattr__(self, name: str) -> object:
            return getattr(self._ctx, name)

        def Value(self, *args: object, **kwargs: object) -> object:  # noqa: N802
            raise FileNotFoundError(2, "No such file or directory", "/dev/shm/sem.mp-x")

    monkeypatch.setattr(verify_jobs, "_context", lambda preload=(): NoShm(real(preload)))
    with PartitionScans(parts, jobs=2) as scans:
        assert scans.processes == 0
        assert [scans.take() for _ in parts] == [scan_partition(s) for s, _ in parts]
