"""``kmeta startup``: the rules of LogLoader that need a segment's batches one by one or
the topic's config: offsets going backwards (caught only where an index entry is
rebuilt), the split of a legacy segment whose offsets overrun its index, the log start
of a topic with remote storage, and the leader-epoch cache through loading.  Kafka's own
LogLoaderTest cases (apache/kafka ``core/src/test/scala/unit/kafka/log/
LogLoaderTest.scala``), rebuilt with kmeta's writer."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from kmeta import output_schema as schema
from kmeta.formats.batch import build_batch
from kmeta.formats.filenames import segment_file_name
from kmeta.formats.textfiles import EpochEntry, TopicPartitionOffset
from kmeta.ops.startup import plan_startup
from kmeta.storage import writer as W
from tests.clirun import run

INT_MAX = (1 << 31) - 1
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "startup" / "offsets"


def _log_dir(root: Path, *, clean: bool = False, recovery: int = 0, start: int = 0,
             topic: str = "orders") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if clean:
        (root / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":1}')
    for name, offset in (("recovery-point-offset-checkpoint", recovery),
                         ("log-start-offset-checkpoint", start)):
        W.write_offset_checkpoint(root / name, [TopicPartitionOffset(topic, 0, offset)],
                                  durable=False)
    return root


def _batch(offset: int, count: int = 1, *, epoch: int = 0, value: bytes = b"v") -> bytes:
    return build_batch(offset, [(str(offset + i).encode(), value) for i in range(count)],
                       leader_epoch=epoch, base_timestamp=1_000 + offset % 1000)


def _segment(part: Path, base: int, batches: list[bytes], *, index: bool = True) -> Path:
    """A segment written batch by batch (SegmentWriter keeps offsets in order), with empty
    index files as LogLoaderTest writes them (no index: loadSegmentFiles rebuilds it)."""
    part.mkdir(parents=True, exist_ok=True)
    log = part / segment_file_name(base)
    log.write_bytes(b"".join(batches))
    if index:
        for ext in ("index", "timeindex"):
            (part / segment_file_name(base, ext)).write_bytes(b"")
    return log


def _sample(base: int) -> list[bytes]:
    """LogTestUtils.initializeLogDirWithOverflowedSegment's writeSampleBatches."""
    return [_batch(base), _batch(base + 1, 2), _batch(base + INT_MAX - 1)]


def _overflowed(d: Path, *, index: bool = True) -> Path:
    part = d / "orders-0"
    _segment(part, 0, _sample(0))
    _segment(part, INT_MAX, _sample(INT_MAX) + _sample(2 * INT_MAX), index=index)
    _segment(part, 3 * INT_MAX, _sample(3 * INT_MAX))
    return part


def _one(report):
    (p,) = report.partitions
    return p


def _codes(report) -> set[str]:
    return {f.code for f in report.findings}


def _server(tmp: Path, text: str) -> str:
    path = tmp / "server.properties"
    path.write_text(text)
    return str(path)


# ------------------------------------------------------------------- offset overflow

def test_recovery_of_segment_with_offset_overflow(tmp_path: Path) -> None:
    """testRecoveryOfSegmentWithOffsetOverflow: unclean, recovery from 0: the middle
    segment's last batch overruns base + Int.MaxValue, Kafka splits it where a batch
    leaves a piece's reach (one more segment than before) and every key stays."""
    d = _log_dir(tmp_path / "d")
    _overflowed(d)
    p = _one(r := plan_startup([str(d)]))
    (split,) = p.splits
    # the first batch past the reach: offsets 2*MaxInt+1..2*MaxInt+2
    assert split.failure is None and split.overflow_offset == 2 * INT_MAX + 2
    assert [b for _, b, _, _ in split.pieces] == [INT_MAX, 2 * INT_MAX + 1]
    assert [n for _, _, _, n in split.pieces] == [4, 2]
    assert p.segments == 3 and p.log_end_offset == 4 * INT_MAX
    assert len(p.recover) == 4 and sum(w.batches for w in p.recover) == 12  # all kept
    assert "V202" in _codes(r) and not r.refusals and not r.loses_data
    # the split's read, and the recovery of segment 0 it restarts, are re-read bytes
    assert p.reread_bytes == split.bytes + (d / "orders-0" / segment_file_name(0)).stat().st_size


def test_overflow_is_not_seen_after_a_clean_shutdown(tmp_path: Path) -> None:
    """Only LogSegment.recover checks the offset range: after a clean shutdown the
    segment is not recovered and stays as it is; without its .index it is recovered
    (loadSegmentFiles) and split there, clean or not."""
    d = _log_dir(tmp_path / "d", clean=True)
    _overflowed(d)
    p = _one(r := plan_startup([str(d)]))
    assert p.splits == [] and p.segments == 3 and "V202" not in _codes(r)
    e = _log_dir(tmp_path / "e", clean=True)
    _overflowed(e, index=False)
    p = _one(r := plan_startup([str(e)]))
    assert [b for _, b, _, _ in p.splits[0].pieces] == [INT_MAX, 2 * INT_MAX + 1]
    assert len(p.splits[0].pieces) == 2 and "V202" in _codes(r)


def test_over_compacted_log_needs_no_split(tmp_path: Path) -> None:
    """testOverCompactedLogRecovery: batches at 0 then Int.MaxValue + 2 live in two
    segments (Kafka rolled): recovery keeps them, nothing to split."""
    d = _log_dir(tmp_path / "d")
    part = d / "orders-0"
    _segment(part, 0, [_batch(0)])
    _segment(part, INT_MAX + 2, [_batch(INT_MAX + 2), _batch(INT_MAX + 3),
                                 _batch(INT_MAX + 4)])
    p = _one(r := plan_startup([str(d)]))
    assert p.splits == [] and p.log_end_offset == INT_MAX + 5
    assert not {"V200", "V202", "V175"} & _codes(r)


def test_a_segment_kafka_cannot_split_stops_the_broker(tmp_path: Path) -> None:
    """LocalLog.splitOverflowedSegment requires the segment's last batch to overflow
    (hasOverflow); a batch past the reach in the middle fails the load, and the broker
    does not start (the exception escapes loadLogs).  The log dir's path is long: a
    refusal names its log relative to it, so no line outgrows the terminal."""
    d = _log_dir(tmp_path / ("a-folder-" + "x" * 64) / "d")
    _segment(d / "orders-0", 0, [_batch(0), _batch(INT_MAX + 5), _batch(10)])
    p = _one(r := plan_startup([str(d)]))
    assert p.load_failure is not None and "refuses to split" in p.load_failure
    assert "V200" in _codes(r) and r.refusals
    proc = run("startup", d, env={"COLUMNS": "80"})
    assert proc.returncode == 1 and "REFUSES TO START" in proc.stdout
    assert max(len(line) for line in proc.stdout.splitlines()) <= 80


def test_a_torn_overflowed_segment_cannot_be_split(tmp_path: Path) -> None:
    """The split copies whole batches only: a torn tail leaves the pieces short of the
    file ("Inconsistent segment sizes after split"), and the log does not load."""
    d = _log_dir(tmp_path / "d")
    part = _overflowed(d)
    middle = part / segment_file_name(INT_MAX)
    middle.write_bytes(middle.read_bytes() + _batch(4 * INT_MAX)[:30])
    p = _one(r := plan_startup([str(d)]))
    assert "Inconsistent segment sizes" in (p.load_failure or "")
    assert "V200" in _codes(r)


# ------------------------------------------------------------- offsets going backwards

def _backwards(d: Path, *, index: bool = True) -> Path:
    """Segment 0 whose batch 5 repeats offset 2, then segment 10."""
    part = d / "orders-0"
    _segment(part, 0, [_batch(i) for i in range(5)] + [_batch(2)] +
             [_batch(i) for i in range(6, 10)], index=index)
    _segment(part, 10, [_batch(i) for i in range(10, 15)])
    return part


def test_backwards_offsets_are_kept_where_no_index_entry_lands(tmp_path: Path) -> None:
    """LogSegment.recover has no per-batch order check: with the default 4,096-byte
    index interval no entry lands in these small batches and Kafka keeps them."""
    d = _log_dir(tmp_path / "d")
    _backwards(d)
    p = _one(r := plan_startup([str(d)]))
    w = p.recover[0]
    assert w.truncated_at is None and w.batches == 10
    assert w.backwards is not None and w.backwards[1:] == (2, 5)
    assert "V201" in _codes(r) and not r.loses_data and p.log_end_offset == 15


def test_backwards_offsets_at_an_index_entry_empty_the_segment(tmp_path: Path) -> None:
    """With index.interval.bytes 1 (as LogLoaderTest configures its logs) every batch gets
    an index entry: the repeated offset is an InvalidOffsetException, recoverLog empties
    the segment and deletes the later ones."""
    d = _log_dir(tmp_path / "d")
    part = _backwards(d)
    cfg = _server(tmp_path, "log.index.interval.bytes=1\n")
    p = _one(r := plan_startup([str(d)], config=cfg))
    (w,) = p.recover  # recovery stops at the emptied segment
    assert w.truncated_at == 0 and w.cut_code == "V175" and w.batches == 0
    assert w.removed_bytes == (part / segment_file_name(0)).stat().st_size
    assert p.deleted_segments == [segment_file_name(10)]
    assert p.log_end_offset == 0 and r.loses_data
    assert {"V175", "V172"} <= _codes(r) and "V201" not in _codes(r)


def test_backwards_offsets_while_rebuilding_a_missing_index_stop_the_broker(
        tmp_path: Path) -> None:
    """loadSegmentFiles catches only a missing or corrupt index around its recovery:
    an InvalidOffsetException there escapes LogLoader, and the broker does not start."""
    d = _log_dir(tmp_path / "d", clean=True)
    _backwards(d, index=False)
    cfg = _server(tmp_path, "log.index.interval.bytes=1\n")
    p = _one(r := plan_startup([str(d)], config=cfg))
    assert "InvalidOffsetException" in (p.load_failure or "")
    assert "V200" in _codes(r) and r.refusals


def test_the_offsets_fixture(tmp_path: Path) -> None:
    """fixtures/data/startup/offsets: the verdicts its README states, in JSON."""
    proc = run("startup", "--json", FIXTURE, env={})
    assert proc.returncode == 1, proc.stderr
    objects = [json.loads(line) for line in proc.stdout.splitlines()]
    for o in objects:
        assert schema.check("startup", o) == [], o
    parts = {Path(o["path"]).name: o for o in objects if o["kind"] == "startup_partition"}
    legacy = parts["legacy-0"]
    assert [p["base_offset"] for p in legacy["splits"][0]["pieces"]] == [INT_MAX,
                                                                          2 * INT_MAX + 1]
    assert len(legacy["recover"]) == 4 and legacy["log_end_offset"] == 4 * INT_MAX
    assert parts["backwards-0"]["recover"][0]["backwards"] == {
        "position": 700, "offset": 5, "expected_offset": 10}
    emptied = parts["emptied-0"]
    assert emptied["recover"][0]["cut_code"] == "V175"
    assert emptied["deleted_segment_files"] == [segment_file_name(200)]
    assert emptied["epoch_cache_load"]["removed_entries"] == [{"epoch": 5, "start_offset": 100},
                                                 {"epoch": 7, "start_offset": 200}]
    codes = [o["code"] for o in objects if o["kind"] == "finding"]
    assert {"V172", "V175", "V201", "V202", "V206"} <= set(codes)
    assert objects[-1]["segments_split"] == 1


# --------------------------------------------------------------- remote storage start

def _image(**configs: str) -> SimpleNamespace:
    """A stand-in for the MetadataImage: only its configs are read."""
    return SimpleNamespace(configs={(2, "orders"): dict(configs)})


def _from_five(d: Path) -> None:
    """testLogStartOffsetWhenRemoteStorageIsEnabled: segments [5]..[8] and an empty
    active one at 9, the log start checkpoint 0."""
    w = W.SegmentWriter(d / "orders-0", base_offset=5, durable=False)
    with w:
        for i in range(5, 9):
            if i > 5:
                w.roll()
            w.append(_batch(i))
    w.roll_empty()


def test_log_start_when_remote_storage_is_enabled(tmp_path: Path) -> None:
    """testLogStartOffsetWhenRemoteStorageIsEnabled (3.6+): with remote storage the log
    start is the checkpoint's 0; without it max(0, 5); 3.5 has no remote branch."""
    d = _log_dir(tmp_path / "d", clean=True, recovery=9)
    _from_five(d)
    on = _image(**{"remote.storage.enable": "true"})
    p = _one(r := plan_startup([str(d)], image=on))
    assert p.remote_storage and p.log_start_offset == 0 and p.first_local_offset == 5
    assert "V205" in _codes(r)
    assert _one(plan_startup([str(d)], image=_image())).log_start_offset == 5
    assert _one(plan_startup([str(d)], image=on, kafka_version="3.5")).log_start_offset == 5
    assert _one(plan_startup([str(d)], image=on, kafka_version="3.6")).log_start_offset == 0


def test_remote_storage_needs_the_broker_switch_and_a_deletion_policy(tmp_path: Path) -> None:
    """UnifiedLog.isRemoteLogEnabled: remote.log.storage.system.enable on the broker, and
    not a compacted topic; without an image it is not judged (the max is taken)."""
    d = _log_dir(tmp_path / "d", clean=True, recovery=9)
    _from_five(d)
    on = _image(**{"remote.storage.enable": "true"})
    off = _server(tmp_path, "remote.log.storage.system.enable=false\n")
    assert _one(plan_startup([str(d)], image=on, config=off)).log_start_offset == 5
    compacted = _image(**{"remote.storage.enable": "true", "cleanup.policy": "compact"})
    assert _one(plan_startup([str(d)], image=compacted)).log_start_offset == 5
    p = _one(r := plan_startup([str(d)]))
    assert p.remote_storage is None and p.log_start_offset == 5
    assert any("remote storage not judged" in n for n in r.notes)


# ------------------------------------------------------------------ leader-epoch cache

def test_log_recovers_for_leader_epoch(tmp_path: Path) -> None:
    """testLogRecoversForLeaderEpoch: epochs 1@0, 2@1, 3@3 written, the checkpoint cut
    to 1@0, 2@1; an unclean reload from 0 assigns 3@3 again."""
    d = _log_dir(tmp_path / "d")
    part = d / "orders-0"
    _segment(part, 0, [_batch(0, epoch=1), _batch(1, epoch=2), _batch(2, epoch=2),
                       _batch(3, epoch=3)])
    W.write_leader_epoch_checkpoint(part, [EpochEntry(1, 0), EpochEntry(2, 1)],
                                    durable=False)
    p = _one(r := plan_startup([str(d)]))
    assert p.epoch_cache is not None
    assert p.epoch_cache.after == [(1, 0), (2, 1), (3, 3)]
    assert p.epoch_cache.added == [(3, 3)] and "V206" in _codes(r)
    # after a clean shutdown nothing is recovered and the cache stays as it is
    (d / ".kafka_cleanshutdown").write_text("")
    p = _one(r := plan_startup([str(d)]))
    assert p.epoch_cache.after == [(1, 0), (2, 1)] and "V206" not in _codes(r)


def test_epoch_cache_is_truncated_to_the_log(tmp_path: Path) -> None:
    """truncateFromEnd(log end) drops entries past it (a torn tail); truncateFromStart(the
    log start checkpoint) drops those below it and moves the last of them up."""
    d = _log_dir(tmp_path / "d", start=2)
    part = d / "orders-0"
    log = _segment(part, 0, [_batch(0, epoch=1), _batch(1, epoch=1), _batch(2, epoch=2),
                             _batch(3, epoch=2), _batch(4, epoch=4)])
    last = len(_batch(4, epoch=4))
    log.write_bytes(log.read_bytes()[:-last - 10])  # torn inside offset 3's batch
    W.write_leader_epoch_checkpoint(part, [EpochEntry(1, 0), EpochEntry(2, 2),
                                           EpochEntry(4, 4)], durable=False)
    p = _one(r := plan_startup([str(d)]))
    assert p.log_end_offset == 3
    assert p.epoch_cache.after == [(2, 2)]
    assert p.epoch_cache.removed == [(1, 0), (4, 4)]
    assert "V206" in _codes(r)  # 4@4 named records that are gone


def test_an_entry_at_the_log_end_goes_without_a_finding(tmp_path: Path) -> None:
    """A leader of an empty log writes its epoch at offset 0; truncateFromEnd(0) drops it
    on every load: the plan lists it, no finding."""
    d = _log_dir(tmp_path / "d", clean=True)
    part = d / "orders-0"
    _segment(part, 0, [])
    W.write_leader_epoch_checkpoint(part, [EpochEntry(38, 0)], durable=False)
    p = _one(r := plan_startup([str(d)]))
    assert p.epoch_cache.removed == [(38, 0)] and "V206" not in _codes(r)


def test_leader_epoch_cache_cleared_after_static_message_format_downgrade(
        tmp_path: Path) -> None:
    """testLeaderEpochCacheClearedAfterStaticMessageFormatDowngrade: message format
    0.10.2 deletes the cache, but only while inter.broker.protocol.version is below 3.0
    (a ZooKeeper-mode broker of 3.5 to 3.9: LogConfig.shouldIgnoreMessageFormatVersion);
    4.0 has no message.format.version (KIP-724)."""
    d = _log_dir(tmp_path / "d", clean=True)
    part = d / "orders-0"
    _segment(part, 0, [_batch(0, epoch=5)])
    W.write_leader_epoch_checkpoint(part, [EpochEntry(5, 0)], durable=False)
    old = _server(tmp_path, "inter.broker.protocol.version=2.8\n"
                  "log.message.format.version=0.10.2\n")
    p = _one(r := plan_startup([str(d)], config=old, kafka_version="3.9"))
    assert p.epoch_cache.cleared is not None and p.epoch_cache.after == []
    assert "V206" in _codes(r)
    assert _one(plan_startup([str(d)], config=old, kafka_version="4.0")
                ).epoch_cache.cleared is None
    new = _server(tmp_path, "inter.broker.protocol.version=3.0\n"
                  "log.message.format.version=0.10.2\n")
    p = _one(plan_startup([str(d)], config=new, kafka_version="3.9"))
    assert p.epoch_cache.cleared is None and p.epoch_cache.after == [(5, 0)]


def test_a_torn_segment_rebuilt_for_its_index_keeps_the_later_ones(tmp_path: Path) -> None:
    """loadSegmentFiles rebuilds a missing index by recovering the segment and ignores
    what that truncates; recoverLog then finds nothing more to cut there, so the later
    segments stay (only a truncation inside recoverLog deletes them)."""
    d = _log_dir(tmp_path / "d")
    part = d / "orders-0"
    torn = _segment(part, 0, [_batch(i) for i in range(5)], index=False)
    torn.write_bytes(torn.read_bytes()[:-10])
    _segment(part, 5, [_batch(i) for i in range(5, 10)])
    p = _one(r := plan_startup([str(d)]))
    assert p.recover[0].truncated_at is not None and p.deleted_segments == []
    assert p.log_end_offset == 10 and "V172" not in _codes(r) and "V170" in _codes(r)


def test_the_command_reads_topic_configs_from_the_image() -> None:
    """kmeta startup hands the broker's image to the loader: with one, remote storage is
    judged (off here: no topic sets remote.storage.enable) and no note says otherwise."""
    jbod = FIXTURE.parents[1] / "placement" / "jbod"
    proc = run("startup", "--json", jbod / "logs-a", jbod / "logs-b", env={})
    objects = [json.loads(line) for line in proc.stdout.splitlines()]
    parts = [o for o in objects if o["kind"] == "startup_partition"]
    assert parts and all(o["remote_storage"] is False for o in parts)
    assert not any("remote storage not judged" in n for n in objects[-1]["notes"])
