"""``kmeta startup``: Kafka's own LogLoaderTest and LogManagerTest cases (apache/kafka,
``core/src/test/scala/unit/kafka/log/``), each rebuilt with kmeta's writer and asserting
what kmeta says Kafka will do; then the command's exit codes, JSON and text."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kmeta import output_schema as schema
from kmeta.core.kafka_releases import NEWEST
from kmeta.findings import Finding, Severity
from kmeta.formats.batch import build_batch
from kmeta.formats.filenames import segment_file_name
from kmeta.formats.textfiles import TopicPartitionOffset
from kmeta.ops.startup import Placement, plan_startup
from kmeta.storage import writer as W
from tests.clirun import run


def _log_dir(root: Path, *, clean: bool = True, epoch: int | None = 7,
             recovery: dict[tuple[str, int], int] | None = None,
             starts: dict[tuple[str, int], int] | None = None) -> Path:
    """A log dir: the marker (clean) and both checkpoints (None: not written)."""
    root.mkdir(parents=True, exist_ok=True)
    if clean:
        text = "" if epoch is None else json.dumps({"version": 0, "brokerEpoch": epoch})
        (root / ".kafka_cleanshutdown").write_text(text)
    for name, entries in (("recovery-point-offset-checkpoint", recovery),
                          ("log-start-offset-checkpoint", starts)):
        if entries is not None:
            W.write_offset_checkpoint(root / name, [
                TopicPartitionOffset(t, p, o) for (t, p), o in entries.items()],
                durable=False)
    return root


def _partition(d: Path, topic: str = "orders", partition: int = 0, *, batches: int = 100,
               per_segment: int = 10, value: bytes = b"v" * 60,
               roll_each: bool = False) -> W.SegmentWriter:
    """``batches`` one-record batches, ``per_segment`` to a segment."""
    part = d / f"{topic}-{partition}"
    w = W.SegmentWriter(part, durable=False)
    with w:
        for i in range(batches):
            if i and i % per_segment == 0 or (roll_each and i):
                w.roll()
            w.append(build_batch(i, [(b"k%d" % i, value)], base_timestamp=1_000 + i))
    return w


def _one(report):  # the one partition of a report
    (p,) = report.partitions
    return p


def _codes(report) -> set[str]:
    return {f.code for f in report.findings}


# ------------------------------------------------------------- LogLoaderTest / LogManagerTest

def test_clean_shutdown_file_means_no_recovery(tmp_path: Path) -> None:
    """testCleanShutdownFile: recovery point 0, clean flag: nothing recovered, LEO 100."""
    d = _log_dir(tmp_path / "d", recovery={}, starts={})
    _partition(d)
    p = _one(r := plan_startup([str(d)]))
    assert r.dirs[0].clean_shutdown and r.dirs[0].broker_epoch == 7
    assert p.recover == [] and p.cost_bytes == 0
    assert p.log_end_offset == 100 and p.log_start_offset == 0
    assert "no snapshot after a clean shutdown" in p.producer_state


def test_broker_crash_recovers_from_the_recovery_point(tmp_path: Path) -> None:
    """testLogRecoveryIsCalledUponBrokerCrash / testProducerSnapshotsRecoveryAfterUnclean-
    Shutdown: no marker: the segment holding the recovery point and every later one are
    recovered, the earlier ones are not read."""
    d = _log_dir(tmp_path / "d", clean=False, recovery={("orders", 0): 65}, starts={})
    w = _partition(d)
    p = _one(r := plan_startup([str(d)]))
    assert not r.dirs[0].clean_shutdown
    assert [s.base_offset for s in p.recover] == [60, 70, 80, 90]
    assert sum(s.batches for s in p.recover) == 40
    assert p.recover_bytes == sum(s.size for s in w.segments[6:])
    assert p.log_end_offset == 100
    assert "V177" in _codes(r) and not r.loses_data


def test_producer_state_from_the_log_start_without_snapshots(tmp_path: Path) -> None:
    """testRecoverLastSegmentWithNoSnapshots: unclean, recovery point at the last segment,
    no snapshot: the producer state is rebuilt from the log start."""
    d = _log_dir(tmp_path / "d", clean=False, recovery={("orders", 0): 90}, starts={})
    w = _partition(d)
    p = _one(plan_startup([str(d)]))
    assert [s.base_offset for s in p.recover] == [90]
    assert p.producer_bytes == sum(s.size for s in w.segments[:9])
    assert "log start" in p.producer_state


def test_producer_state_from_the_newest_snapshot(tmp_path: Path) -> None:
    """testProducerSnapshotsRecoveryAfterUncleanShutdown: with snapshots at segment bases,
    only the segments after the newest one below the recovery are read."""
    d = _log_dir(tmp_path / "d", clean=False, recovery={("orders", 0): 90}, starts={})
    w = _partition(d)
    for base in (70, 80):
        W.write_producer_snapshot(d / "orders-0", base, durable=False)
    p = _one(plan_startup([str(d)]))
    assert p.producer_bytes == w.segments[8].size
    assert "snapshot at 80" in p.producer_state


def test_largest_stray_snapshot_is_kept(tmp_path: Path) -> None:
    """testLoadingLogKeepsLargestStrayProducerStateSnapshot: segments 0, 1 and 2 (offsets
    2 and 3), snapshots 1, 2 and 4 with a stray 3, unclean, recovery point 0: recovery
    deletes every snapshot past the segment it rebuilds to and writes each again where a
    recovered segment ends; 3 is gone, 1, 2 and 4 are there."""
    d = _log_dir(tmp_path / "d", clean=False, recovery={("orders", 0): 0}, starts={})
    part = d / "orders-0"
    with W.SegmentWriter(part, durable=False) as w:
        for i in range(4):
            if i in (1, 2):
                w.roll()
            w.append(build_batch(i, [(b"k", b"v")], base_timestamp=1_000 + i))
    for base in (1, 2, 3, 4):
        W.write_producer_snapshot(part, base, durable=False)
    p = _one(plan_startup([str(d)]))
    deleted = [f.file for f in p.leftovers if f.file.endswith(".snapshot")]
    assert deleted == [segment_file_name(3, "snapshot")]


def test_missing_offset_index_is_rebuilt_even_after_a_clean_shutdown(tmp_path: Path) -> None:
    """testIndexRebuild: every .index and .timeindex deleted: each segment is recovered
    (LogLoader.loadSegmentFiles: a missing offset index means a recovery, clean or not)."""
    d = _log_dir(tmp_path / "d", recovery={("orders", 0): 100}, starts={})
    _partition(d)
    for f in (d / "orders-0").iterdir():
        if f.suffix in (".index", ".timeindex"):
            f.unlink()
    p = _one(r := plan_startup([str(d)]))
    assert len(p.recover) == 10
    assert all("offset index is missing" in s.why for s in p.recover)
    assert "V178" in _codes(r) and not r.loses_data


def test_corrupt_index_contents_are_not_checked_on_a_clean_start(tmp_path: Path) -> None:
    """testCorruptIndexRebuild, the other way round: Kafka does not check offset or time
    index contents on load (LogSegment.sanityCheck only asks the .index to exist): after a
    clean shutdown nothing is rebuilt; after an unclean one, only the recovered segments'."""
    d = _log_dir(tmp_path / "d", recovery={("orders", 0): 100}, starts={})
    _partition(d)
    for f in (d / "orders-0").iterdir():
        if f.suffix in (".index", ".timeindex"):
            f.write_bytes(b"  ")
    assert _one(plan_startup([str(d)])).recover == []
    (d / ".kafka_cleanshutdown").unlink()
    p = _one(plan_startup([str(d)]))
    assert [s.base_offset for s in p.recover] == [90]


def test_orphaned_indexes_and_deleted_files_go(tmp_path: Path) -> None:
    """testBogusIndexSegmentsAreRemoved and testOpenDeletesObsoleteFiles."""
    d = _log_dir(tmp_path / "d", recovery={("orders", 0): 100}, starts={})
    _partition(d)
    part = d / "orders-0"
    (part / segment_file_name(105, "index")).write_bytes(b"")
    (part / segment_file_name(105, "timeindex")).write_bytes(b"")
    os.rename(part / segment_file_name(0), part / (segment_file_name(0) + ".deleted"))
    p = _one(r := plan_startup([str(d)]))
    fates = {f.file: f.fate for f in p.leftovers}
    assert fates[segment_file_name(105, "index")] == "deleted"
    assert fates[segment_file_name(0) + ".deleted"] == "deleted"
    # the .index of the deleted segment is orphaned too
    assert fates[segment_file_name(0, "index")] == "deleted"
    assert p.segments == 9 and "V179" in _codes(r)


def test_garbage_tail_is_truncated_where_repair_cuts(tmp_path: Path) -> None:
    """testCorruptLog: garbage appended to the active segment: recovery truncates it where
    the last valid batch ends, and the log end is the messages written."""
    d = _log_dir(tmp_path / "d", clean=False, recovery={("orders", 0): 50}, starts={})
    w = _partition(d)
    active = d / "orders-0" / segment_file_name(90)
    size = active.stat().st_size
    with open(active, "ab") as f:
        f.write(os.urandom(300))
    p = _one(r := plan_startup([str(d)]))
    (cut,) = [s for s in p.recover if s.truncated_at is not None]
    assert cut.file == active.name and cut.truncated_at == size
    assert cut.removed_bytes == 300 and p.log_end_offset == 100
    assert p.deleted_segments == [] and w.segments[-1].size == size
    assert "V170" in _codes(r) and r.loses_data


def test_torn_segment_deletes_the_later_ones(tmp_path: Path) -> None:
    """LogLoader.recoverLog: a segment truncated, the later unflushed ones deleted."""
    d = _log_dir(tmp_path / "d", clean=False, recovery={("orders", 0): 50}, starts={})
    _partition(d)
    torn = d / "orders-0" / segment_file_name(60)
    data = torn.read_bytes()
    torn.write_bytes(data[:-20])
    p = _one(r := plan_startup([str(d)]))
    assert [s.truncated_at is not None for s in p.recover] == [False, True]
    assert p.deleted_segments == [segment_file_name(b) for b in (70, 80, 90)]
    assert p.log_end_offset == 69
    assert {"V170", "V172"} <= _codes(r)


def test_log_end_below_log_start_deletes_everything(tmp_path: Path) -> None:
    """testLogEndLessThanStartAfterReopen: 5 records, a segment each; log start 4; segment
    1 overwritten: it is truncated to nothing, the later ones deleted, the log end (1) is
    below the log start: every segment goes and the log starts empty at 4."""
    d = _log_dir(tmp_path / "d", clean=False, recovery={("orders", 0): 0},
                 starts={("orders", 0): 4})
    _partition(d, batches=5, per_segment=1)
    (d / "orders-0" / segment_file_name(1)).write_bytes(b"corruptRecord")
    p = _one(r := plan_startup([str(d)]))
    assert p.all_deleted and p.log_start_offset == 4 and p.log_end_offset == 4
    assert "V173" in _codes(r) and r.loses_data


def test_swap_replaces_and_cleaned_goes(tmp_path: Path) -> None:
    """testRecoveryAfterCrashDuringSplitPhase: .swap files are swapped in over the files
    they cover, .cleaned deleted, and a .swap at or above a .cleaned offset deleted."""
    d = _log_dir(tmp_path / "d", recovery={("orders", 0): 100}, starts={})
    _partition(d)
    part = d / "orders-0"
    swap = tmp_path / "swap"
    _partition(swap, batches=30, per_segment=30)  # one segment of offsets 0..29
    os.rename(swap / "orders-0" / segment_file_name(0),
              part / (segment_file_name(0) + ".swap"))
    (part / (segment_file_name(40) + ".cleaned")).write_bytes(b"")
    (part / (segment_file_name(50) + ".swap")).write_bytes(b"")
    p = _one(plan_startup([str(d)]))
    fates = {f.file: f.fate for f in p.leftovers}
    assert fates[segment_file_name(0) + ".swap"] == f"renamed to {segment_file_name(0)}"
    assert fates[segment_file_name(10)] == "deleted" and fates[segment_file_name(20)] == \
        "deleted"
    assert fates[segment_file_name(40) + ".cleaned"] == "deleted"
    assert fates[segment_file_name(50) + ".swap"] == "deleted"
    assert p.segments == 8


def test_remote_log_index_cache_is_skipped_and_an_odd_dir_refuses(tmp_path: Path) -> None:
    """testLoadLogsSkipRemoteIndexCache; LocalLog.parseTopicPartitionName refuses
    ``lost+found``: the broker does not start."""
    d = _log_dir(tmp_path / "d", recovery={}, starts={})
    _partition(d, batches=3)
    (d / "remote-log-index-cache").mkdir()
    r = plan_startup([str(d)])
    assert not r.refusals
    (d / "lost+found").mkdir()
    r = plan_startup([str(d)])
    assert r.dirs[0].refused == ["lost+found"] and "V174" in _codes(r)


def test_stray_dirs_by_version(tmp_path: Path) -> None:
    """-stray names: loaded aside from 3.6.1 (KAFKA-15605), unparsable before."""
    d = _log_dir(tmp_path / "d", recovery={}, starts={})
    _partition(d, "foo", 0, batches=3)
    os.rename(d / "foo-0", d / "foo-0.0123456789abcdef0123456789abcdef-stray")
    assert "V184" in _codes(plan_startup([str(d)], kafka_version="3.6.1"))
    assert "V174" in _codes(plan_startup([str(d)], kafka_version="3.6"))


def test_duplicate_logs_across_dirs_refuse(tmp_path: Path) -> None:
    """LogManager.loadLog: the same current log in two dirs: IllegalStateException; a
    current and a future one is a move."""
    a = _log_dir(tmp_path / "a", recovery={}, starts={})
    b = _log_dir(tmp_path / "b", recovery={}, starts={})
    _partition(a, batches=3)
    _partition(b, batches=3)
    r = plan_startup([str(a), str(b)])
    assert "V197" in _codes(r) and r.refusals
    os.rename(b / "orders-0", b / "orders-0.0123456789abcdef0123456789abcdef-future")
    r = plan_startup([str(a), str(b)])
    assert not r.refusals and "V187" in _codes(r)


def test_broker_epoch_of_the_markers(tmp_path: Path) -> None:
    """testCleanShutdownFileWithBrokerEpoch / testHandlingExceptionsDuringShutdown: the
    epoch both markers hold; none when one dir has no marker."""
    a = _log_dir(tmp_path / "a", epoch=3, recovery={}, starts={})
    b = _log_dir(tmp_path / "b", epoch=3, recovery={}, starts={})
    assert plan_startup([str(a), str(b)]).broker_epoch == 3
    (b / ".kafka_cleanshutdown").unlink()
    assert plan_startup([str(a), str(b)]).broker_epoch is None


def test_checkpoints_missing_and_corrupt(tmp_path: Path) -> None:
    """A missing checkpoint is created empty (every partition at 0); one Kafka cannot read
    is reset to 0 and the dir queued offline (CheckpointFileWithFailureHandler)."""
    d = _log_dir(tmp_path / "d", clean=False)
    _partition(d)
    p = _one(r := plan_startup([str(d)]))
    assert len(p.recover) == 10 and "V203" in _codes(r)
    (d / "recovery-point-offset-checkpoint").write_text("0\n1\norders 0 x\n")
    r = plan_startup([str(d)])
    assert r.dirs[0].offline and "V176" in _codes(r)
    text = run("startup", d, env={"COLUMNS": "80"})
    assert text.returncode == 1 and "GOES OFFLINE" in text.stdout


def test_delete_dir_is_not_recovered(tmp_path: Path) -> None:
    """LogLoader skips recoverLog for a -delete dir; LogManager queues it for deletion."""
    d = _log_dir(tmp_path / "d", clean=False, recovery={}, starts={})
    _partition(d)
    os.rename(d / "orders-0", d / "orders-0.0123456789abcdef0123456789abcdef-delete")
    p = _one(r := plan_startup([str(d)]))
    assert p.recover == [] and p.state == "delete" and "V185" in _codes(r)


def test_threads_and_estimate(tmp_path: Path) -> None:
    """num.recovery.threads.per.data.dir: 1 up to 3.9, 2 from 4.0, or server.properties."""
    d = _log_dir(tmp_path / "d", clean=False, recovery={}, starts={})
    for n in range(4):
        _partition(d, "t", n, batches=10)
    one = plan_startup([str(d)], kafka_version="3.9", recovery_rate=1000)
    two = plan_startup([str(d)], kafka_version="4.0", recovery_rate=1000)
    assert (one.threads, two.threads) == (1, 2)
    assert one.seconds == pytest.approx(one.cost_bytes / 1000)
    assert two.seconds == pytest.approx(one.seconds / 2)
    cfg = tmp_path / "server.properties"
    cfg.write_text("num.recovery.threads.per.data.dir=4\n")
    four = plan_startup([str(d)], config=str(cfg), recovery_rate=1000)
    assert four.threads == 4 and four.seconds == pytest.approx(one.seconds / 4)
    assert not [n for n in four.notes if "not given" in n]
    cfg.write_text(f"num.recovery.threads.per.data.dir=4\nlog.dirs={d},{tmp_path / 'e'}\n")
    (note,) = [n for n in plan_startup([str(d)], config=str(cfg)).notes if "not given" in n]
    assert str(tmp_path / "e") in note and f"{d}," not in note


def test_placement_seam(tmp_path: Path) -> None:
    """The image's judgement comes in through ``placement``; its findings join the
    report's and a stray log's fate is what the judge says Kafka does."""
    d = _log_dir(tmp_path / "d", recovery={}, starts={})
    _partition(d, batches=3)
    W.write_partition_metadata(d / "orders-0", "AAAAAAAAAAAAAAAAAAAAAw", durable=False)
    seen = []

    def judge(view):
        seen.append(view)
        return Placement(True, "not in the image", "renamed -stray and kept",
                         (Finding("V184", "judged stray", str(view.path)),))

    p = _one(r := plan_startup([str(d)], placement=judge))
    assert seen[0].topic == "orders" and seen[0].topic_id == "AAAAAAAAAAAAAAAAAAAAAw"
    # no metadata log among the dirs: the newest rules kmeta knows
    assert (seen[0].state, seen[0].kafka_version) == (None, NEWEST)
    assert p.fate == "renamed -stray and kept" and r.placement_judged
    assert "V184" in _codes(r)
    # future logs are judged too (recoverAbandonedFutureLogs); -delete dirs are not
    _partition(d, "moved", 0, batches=3)
    os.rename(d / "moved-0", d / "moved-0.0123456789abcdef0123456789abcdef-future")
    _partition(d, "gone", 0, batches=3)
    os.rename(d / "gone-0", d / "gone-0.0123456789abcdef0123456789abcdef-delete")
    seen.clear()
    plan_startup([str(d)], kafka_version="3.7.1", placement=judge)
    assert sorted((v.topic, v.state, v.kafka_version) for v in seen) == [
        ("moved", "future", "3.7.1"), ("orders", None, "3.7.1")]


# ------------------------------------------------------------------------------ command

def test_command_exit_codes_and_json(tmp_path: Path) -> None:
    d = _log_dir(tmp_path / "d", clean=False, recovery={("orders", 0): 50}, starts={})
    _partition(d)
    ok = run("startup", "--json", d, env={})
    assert ok.returncode == 0, ok.stderr
    lines = [json.loads(line) for line in ok.stdout.splitlines()]
    for obj in lines:
        assert schema.check("startup", obj) == [], obj
    assert [o["kind"] for o in lines][0] == "startup_dir"
    assert lines[-1]["kind"] == "startup_summary" and lines[-1]["bytes_to_read"] > 0
    torn = d / "orders-0" / segment_file_name(60)
    torn.write_bytes(torn.read_bytes()[:-20])
    bad = run("startup", "--json", d, env={})
    assert bad.returncode == 1
    kinds = [json.loads(line)["kind"] for line in bad.stdout.splitlines()]
    assert kinds[-1] == "startup_summary" and kinds[-2] == "finding"
    text = run("startup", d, env={"COLUMNS": "80"})
    assert text.returncode == 1 and "LOSES DATA" in text.stdout
    assert max(len(line) for line in text.stdout.splitlines()) <= 80


def test_command_usage(tmp_path: Path) -> None:
    d = _log_dir(tmp_path / "d", recovery={}, starts={})
    assert run("startup", d, "--kafka-version", "2.8", env={}).returncode == 2
    assert run("startup", d, "--recovery-rate", "fast", env={}).returncode == 2
    assert run("startup", tmp_path / "nope", env={}).returncode == 3
    _partition(d, batches=3)
    assert run("startup", d / "orders-0", env={}).returncode == 2
    assert run("startup", d, "--recovery-rate", "400MB", env={}).returncode == 0


def test_a_dir_above_log_dirs_is_refused_naming_them(tmp_path: Path) -> None:
    d = _log_dir(tmp_path / "data" / "kafka", recovery={}, starts={})
    (d / "meta.properties").write_text("version=0\nbroker.id=0\n")
    proc = run("startup", tmp_path / "data", env={})
    assert proc.returncode == 2 and str(d) in proc.stderr


def test_a_zookeeper_broker_is_said_to_be_one(tmp_path: Path) -> None:
    """meta.properties version 0: no metadata log to judge stray logs by."""
    d = _log_dir(tmp_path / "kafka", recovery={}, starts={})
    (d / "meta.properties").write_text("version=0\nbroker.id=0\n")
    _partition(d, batches=3)
    r = plan_startup([str(d)], kafka_version="3.9")
    assert any("ZooKeeper-mode" in n for n in r.notes)


def test_a_held_lock_is_the_running_brokers_own(tmp_path: Path) -> None:
    """testTwoLogManagersUsingSameDirFails: a second broker on a locked dir fails; the
    lock is Kafka's FileChannel.tryLock, a POSIX record lock (lockf here)."""
    import subprocess
    import sys

    d = _log_dir(tmp_path / "d", recovery={}, starts={})
    (d / ".lock").write_bytes(b"")
    assert "S012" not in _codes(plan_startup([str(d)]))
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(d / '.lock')!r}, os.O_RDWR)\n"
        "fcntl.lockf(fd, fcntl.LOCK_EX)\n"
        "print('locked', flush=True)\n"
        "time.sleep(30)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        r = plan_startup([str(d)])
        # the running broker's own dir: what it does if killed now, not a refusal
        assert "S012" in _codes(r) and not r.refusals and not r.refuses_before_loading
        assert r.dirs[0].live and next(
            f.severity for f in r.findings if f.code == "S012") == Severity.INFO
    finally:
        holder.kill()
        holder.wait()


def test_a_partition_dir_that_cannot_be_read_takes_the_dir_offline(tmp_path: Path,
                                                                   monkeypatch) -> None:
    """LogManager.loadLogs: an IOException in a log's load marks its dir offline."""
    import kmeta.ops.startup.loader as loader

    d = _log_dir(tmp_path / "d", recovery={}, starts={})
    _partition(d, batches=3)

    def refuse(path):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(loader, "_listing", refuse)
    r = plan_startup([str(d)])
    assert r.dirs[0].offline and "S008" in _codes(r) and r.partitions == []


def test_the_image_judges_each_log_as_verify_does() -> None:
    """startup asks the placement (kmeta.ops.placement, verify's too) about each log: the
    JBOD fixture's strays get their fate, the replica missing with records is data lost
    (V190, exit 1), and the JSON carries the placement and missing_replica objects."""
    jbod = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "placement" / "jbod"
    dirs = [jbod / "logs-a", jbod / "logs-b"]
    proc = run("startup", *dirs, env={"COLUMNS": "80"})
    assert proc.returncode == 1, proc.stderr
    assert "Kafka LOSES DATA the image expects here: 1 replica" in proc.stdout
    assert "stray logs not judged" not in proc.stdout
    objects = [json.loads(line) for line in run("startup", "--json", *dirs,
                                                 env={}).stdout.splitlines()]
    kinds = [o["kind"] for o in objects]
    assert "placement" in kinds and "missing_replica" in kinds
    stray = {Path(o["path"]).name: o for o in objects if o["kind"] == "startup_partition"}
    assert "renamed -stray while loading" in stray["nameless-0"]["fate"]
    codes = [o["code"] for o in objects if o["kind"] == "finding"]
    assert codes.count("V187") == 1 and "V190" in codes  # said once, by the loader
    assert objects[-1]["kind"] == "startup_summary" and objects[-1]["stray_judged"]
    for o in objects:
        assert schema.check("startup", o) == [], o


def test_the_largest_thread_count_kafka_takes(tmp_path: Path) -> None:
    """num.recovery.threads.per.data.dir=2147483647 (Kafka's INT, atLeast(1): it takes
    it): the estimate is the one of a thread per log, modelled without a slot per thread
    (a list of 2^31 slots was a MemoryError; here the process may not grow past 1 GiB).
    One more is no int: Kafka refuses the config, and so does startup (exit 2)."""
    import resource
    import subprocess
    import sys

    d = _log_dir(tmp_path / "d", clean=False, recovery={}, starts={})
    for n in range(4):
        _partition(d, "t", n, batches=10)
    cfg = tmp_path / "server.properties"

    def startup(threads: str) -> subprocess.CompletedProcess[str]:
        cfg.write_text(f"num.recovery.threads.per.data.dir={threads}\n")

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

        return subprocess.run(
            [sys.executable, "-m", "kmeta", "startup", "--json", "--config", str(cfg),
             "--recovery-rate", "1000", str(d)], capture_output=True, text=True,
            timeout=120, preexec_fn=limit, env={**os.environ, "NO_COLOR": "1"})

    most, four = startup("2147483647"), startup("4")
    for done in (most, four):
        assert "internal error" not in done.stderr and done.returncode == 0, done.stderr
    head = [json.loads(line) for line in most.stdout.splitlines()][-1]
    assert head["recovery_threads"] == 2147483647
    assert head["estimate_ms"] == json.loads(four.stdout.splitlines()[-1])["estimate_ms"]
    for past in ("2147483648", "9" * 5000):
        done = startup(past)
        assert done.returncode == 2 and "32-bit int" in done.stderr, done.stderr


def test_all_lists_each_finding_and_without_it_a_code_met_often_is_one_line() -> None:
    """``startup --all`` keeps its word: the four stray logs of the placement fixture
    are four V181 lines, none folded into "x4 ... (--all lists each)"; without it they
    are one line that says how to see each."""
    where = str(Path(__file__).resolve().parents[1] / "fixtures" / "data" / "placement")
    folded = run("startup", where)
    strays = [line for line in folded.stdout.splitlines() if "V181" in line]
    assert len(strays) == 1 and " x4:" in strays[0], strays
    assert strays[0].endswith("(--all lists each)"), strays[0]
    every = run("startup", "--all", where)
    assert "lists each" not in every.stdout, every.stdout
    assert len([line for line in every.stdout.splitlines() if "V181" in line]) == 4
    assert every.returncode == folded.returncode == 1


def test_a_command_without_all_points_to_the_one_that_lists_each() -> None:
    """A group folded by a command that has no ``--all`` (brokers, image …) does not
    send the reader to an option it would reject."""
    from kmeta.findings import CODES
    from kmeta.render.text import Paths, listed_findings

    code = next(iter(CODES))
    found = [Finding(code, "warning", f"p-{n}/00000000000000000000.log", f"m{n}")
             for n in range(5)]
    lines = list(listed_findings(found, Paths(["."]), False, "more"))
    assert lines[0].endswith("(kmeta verify --all lists each)"), lines
    assert list(listed_findings(found, Paths(["."]), False, "more", every=False))[0] \
        .endswith("(--all lists each)")
    assert len(list(listed_findings(found, Paths(["."]), False, "more", every=True))) == 5


def test_the_image_judges_a_log_reached_through_links(tmp_path: Path) -> None:
    """The judge matches a log to its placement verdict by real path: the log dirs given
    through a link, and a partition dir that is itself a link to a dir elsewhere, get the
    verdicts and fates they get given plainly."""
    import shutil

    from kmeta.ops.startup import image_judge

    jbod = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "placement" / "jbod"
    copy = tmp_path / "jbod"
    shutil.copytree(jbod, copy, symlinks=True)
    aside = tmp_path / "aside"
    aside.mkdir()
    moved = next(p for p in sorted((copy / "logs-a").iterdir()) if p.name == "nameless-0")
    shutil.move(str(moved), aside / moved.name)
    (copy / "logs-a" / moved.name).symlink_to(aside / moved.name, target_is_directory=True)
    (tmp_path / "via").symlink_to(copy, target_is_directory=True)

    def fates(root: Path) -> dict[str, tuple]:
        dirs = [str(root / "logs-a"), str(root / "logs-b")]
        judge, placed = image_judge(dirs)
        r = plan_startup(dirs, placement=judge, image=placed.image, node_id=placed.node_id)
        return {p.name: (p.fate, p.placement and p.placement.stray) for p in r.partitions}

    plain = fates(jbod)
    assert "renamed -stray" in plain["nameless-0"][0]
    assert fates(copy) == plain
    assert fates(tmp_path / "via") == plain
