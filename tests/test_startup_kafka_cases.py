"""``kmeta startup``: every path on which an exception escapes Kafka's ``LogLoader.load``
(the broker does not start: V200, or an IOException takes the log dir offline: V210),
a ``-delete`` dir, and corrupt producer snapshots (V211); then Kafka's own tests of the
loader that these rules touch, each naming the test it follows (apache/kafka trunk
2024-10: ``core/src/test/scala/unit/kafka/log/LogLoaderTest.scala`` and
``UnifiedLogTest.scala``, ``storage/src/test/java/org/apache/kafka/storage/internals/log/
ProducerStateManagerTest.java``), rebuilt with kmeta's writer.  Kafka has no test for
the refusals themselves (research: issue33-loader-refusals.md, 7.1): those cases follow
the code paths each test names."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import tests.test_startup as TS
import tests.test_startup_load as TL
from kmeta.formats.batch import build_batch
from kmeta.formats.filenames import segment_file_name
from kmeta.formats.indexes import AbortedTxn, build_txn_index
from kmeta.formats.producer_state import ProducerEntry, ProducerSnapshot, build_producer_snapshot
from kmeta.formats.textfiles import TopicPartitionOffset
from kmeta.ops.startup import plan_startup
from kmeta.storage import writer as W
from tests.clirun import run

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "startup" / "refusals"


def _log_dir(root: Path, *, clean: bool, recovery: int = 0, start: int = 0) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if clean:
        (root / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":1}')
    for name, offset in (("recovery-point-offset-checkpoint", recovery),
                         ("log-start-offset-checkpoint", start)):
        W.write_offset_checkpoint(root / name, [TopicPartitionOffset("orders", 0, offset)],
                                  durable=False)
    return root


def _partition(d: Path, batches: int = 30, per_segment: int = 10) -> Path:
    """One-record batches, ``per_segment`` to a segment, each with its indexes."""
    part = d / "orders-0"
    with W.SegmentWriter(part, durable=False) as w:
        for i in range(batches):
            if i and i % per_segment == 0:
                w.roll()
            w.append(build_batch(i, [(b"k%d" % i, b"v" * 40)], base_timestamp=1_000 + i))
    return part


def _zero_tail(seg: Path, n: int) -> None:
    with open(seg, "ab") as f:
        f.write(bytes(n))


def _one(report):
    (p,) = report.partitions
    return p


def _codes(report) -> set[str]:
    return {f.code for f in report.findings}


def _refuses(report, *words: str) -> None:
    """The report refuses (V200, a refusal line), naming each of ``words``."""
    p = _one(report)
    assert p.load_failure is not None and "V200" in _codes(report), p.load_failure
    assert report.refusals and all(w in p.load_failure for w in words), p.load_failure


def _loads(report) -> None:
    p = _one(report)
    assert p.load_failure is None and p.offline is None and not report.refusals, \
        p.load_failure or p.offline


# ------------------------------------------- the producer-state rebuild reads unchecked

def test_zeros_in_an_earlier_segment_stop_the_rebuild_of_a_later_index(tmp_path: Path) -> None:
    """Research table row 32 (LogLoader.loadSegmentFiles -> recoverSegment ->
    UnifiedLog.rebuildProducerState -> FileLogInputStream.nextBatch): segment 0 ends in
    100 zero bytes, segment 10 lost its .index; a clean shutdown.  Rebuilding the index of
    10 first rebuilds the producer state from the log start to 10, reads segment 0 without
    its CRCs and meets a size field of 0: CorruptRecordException, the broker stops."""
    d = _log_dir(tmp_path / "d", clean=True, recovery=30)
    part = _partition(d)
    _zero_tail(part / segment_file_name(0), 100)
    (part / segment_file_name(10, "index")).unlink()
    r = plan_startup([str(d)])
    _refuses(r, "CorruptRecordException", segment_file_name(0), "before recovering "
             + segment_file_name(10))
    assert run("startup", d).returncode == 1


def test_a_snapshot_at_the_rebuilt_segment_spares_the_read(tmp_path: Path) -> None:
    """The same disk with a producer snapshot at 10 (Kafka writes one on every roll):
    the rebuild starts there and never reads segment 0: the log loads.  A corrupt
    snapshot there is deleted (ProducerStateManager.loadFromSnapshot) and the read
    happens after all: the harmless snapshot becomes the fatal exception."""
    d = _log_dir(tmp_path / "d", clean=True, recovery=30)
    part = _partition(d)
    _zero_tail(part / segment_file_name(0), 100)
    (part / segment_file_name(10, "index")).unlink()
    W.write_producer_snapshot(part, 10, durable=False)
    _loads(r := plan_startup([str(d)]))
    assert "V211" not in _codes(r)
    (part / segment_file_name(10, "snapshot")).write_bytes(b"")
    r = plan_startup([str(d)])
    _refuses(r, "CorruptRecordException")
    assert "V211" in _codes(r)


def test_zeros_below_the_recovery_point_stop_recover_log(tmp_path: Path) -> None:
    """Row 32b (LogLoader.recoverLog catches only InvalidOffsetException, and 4.x
    IOException): unclean, recovery point 20; segment 0 ends in zeros.  Recovering 20
    rebuilds the producer state from the log start, reads 0 and 10, and stops."""
    d = _log_dir(tmp_path / "d", clean=False, recovery=20)
    part = _partition(d)
    _zero_tail(part / segment_file_name(0), 64)
    _refuses(plan_startup([str(d)]), "CorruptRecordException",
             "before recovering " + segment_file_name(20))


def test_zeros_in_the_recovered_segment_itself_are_cut(tmp_path: Path) -> None:
    """LogSegment.recover catches CorruptRecordException for its own segment: the zeros
    at the end of the segment that holds the recovery point are truncated (V171)."""
    d = _log_dir(tmp_path / "d", clean=False, recovery=20)
    part = _partition(d)
    _zero_tail(part / segment_file_name(20), 64)
    _loads(r := plan_startup([str(d)]))
    assert "V171" in _codes(r) and _one(r).log_end_offset == 30


def test_the_last_rebuild_reads_what_recovery_did_not(tmp_path: Path) -> None:
    """The load's last rebuild (LogLoader.load -> rebuildProducerState to the log end):
    after a clean shutdown with a snapshot at 10, segments 10 and 20 are read; zeros at
    the end of 10 stop the broker.  Without any snapshot after a clean shutdown nothing
    is read (empty snapshots are written): the same disk loads."""
    d = _log_dir(tmp_path / "d", clean=True, recovery=30)
    part = _partition(d)
    _zero_tail(part / segment_file_name(10), 64)
    _loads(r := plan_startup([str(d)]))
    assert "no snapshot after a clean shutdown" in _one(r).producer_state
    W.write_producer_snapshot(part, 10, durable=False)
    _refuses(plan_startup([str(d)]), "CorruptRecordException", "to the log end",
             segment_file_name(10))


@pytest.mark.parametrize(("zeros", "refuses"), [(64, True), (18, True), (17, False)])
def test_a_zero_tail_on_the_last_segment_after_a_clean_shutdown(tmp_path: Path, zeros: int,
                                                                refuses: bool) -> None:
    """Row 33 (LogSegment.readNextOffset, from recoverLog after a clean shutdown too):
    the last segment is not recovered, its batches are walked from the last index entry
    to the end of the file; 18 zero bytes or more are a size field of 0
    (CorruptRecordException); fewer than 18 end the walk quietly (FileLogInputStream's
    HEADER_SIZE_UP_TO_MAGIC)."""
    d = _log_dir(tmp_path / "d", clean=True, recovery=30)
    part = _partition(d)
    _zero_tail(part / segment_file_name(20), zeros)
    r = plan_startup([str(d)])
    if refuses:
        _refuses(r, "readNextOffset", "CorruptRecordException")
    else:
        _loads(r)
        assert _one(r).log_end_offset == 30


def test_zeros_in_a_swap_segment_stop_the_broker(tmp_path: Path) -> None:
    """LogLoader.load (3.0+) opens each valid .swap segment for its next offset
    (LogSegment.readNextOffset) before renaming it: zeros at its end are a size field of
    0 there too."""
    d = _log_dir(tmp_path / "d", clean=True, recovery=30)
    part = _partition(d)
    swap = part / (segment_file_name(0) + ".swap")
    swap.write_bytes((part / segment_file_name(0)).read_bytes() + bytes(32))
    _refuses(plan_startup([str(d)]), "CorruptRecordException", swap.name)


def test_a_snapshot_that_cannot_be_read_takes_the_dir_offline(tmp_path: Path,
                                                              monkeypatch) -> None:
    """Row 44 (ProducerStateManager.readSnapshot: Files.readAllBytes throws an
    IOException, which loadLogs catches): the log dir goes offline (S008), the broker
    starts.  The read error is simulated: this test may run as root, who reads any
    file."""
    from kmeta.errors import UnreadableInput
    from kmeta.ops.startup import producers

    d = _log_dir(tmp_path / "d", clean=False, recovery=20)
    part = _partition(d)
    W.write_producer_snapshot(part, 20, durable=False)

    def fail(path, limit, what):  # noqa: ARG001 - read_regular's signature
        raise UnreadableInput("cannot read: Input/output error", context=str(path))
    monkeypatch.setattr(producers, "read_regular", fail)
    r = plan_startup([str(d)])
    assert r.dirs[0].offline and not r.refusals and "S008" in _codes(r)


# -------------------------------------------------------------------------- file names

@pytest.mark.parametrize("name", ["foo.log", "x.index", "abc.snapshot",
                                  "y.log.cleaned", ".timeindex", "z.log.swap"])
def test_a_file_name_without_an_offset_stops_the_broker(tmp_path: Path, name: str) -> None:
    """Row 24 (LogFileUtils.offsetFromFileName: Long.parseLong of what precedes the first
    dot; in loadSegmentFiles, removeTempFilesAndCollectSwapFiles, and the
    ProducerStateManager's snapshot listing): NumberFormatException."""
    d = _log_dir(tmp_path / "d", clean=True, recovery=30)
    part = _partition(d)
    (part / name).write_bytes(b"")
    _refuses(plan_startup([str(d)]), "NumberFormatException", name)


def test_names_kafka_ignores_or_parses(tmp_path: Path) -> None:
    """What is not a segment, index, temp or snapshot name is not parsed (notes.txt,
    x.log.bak, a .deleted file), and a number before the first dot is enough (-5.txnindex
    is an orphaned index)."""
    d = _log_dir(tmp_path / "d", clean=True, recovery=30)
    part = _partition(d)
    for name in ("notes.txt", "x.log.bak", "foo.log.deleted"):
        (part / name).write_bytes(b"")
    _loads(plan_startup([str(d)]))


# ----------------------------------------------------------------------- .txnindex

def test_a_txn_index_entry_above_version_0_stops_the_broker(tmp_path: Path) -> None:
    """Row 28 (TransactionIndex's iterator, in LogSegment.sanityCheck): KafkaException
    "Unexpected aborted transaction version", not the CorruptIndexException
    loadSegmentFiles recovers from.  Version 0 ending below the base is recovered."""
    d = _log_dir(tmp_path / "d", clean=True, recovery=30)
    part = _partition(d)
    txn = part / segment_file_name(10, "txnindex")
    txn.write_bytes(build_txn_index([AbortedTxn(7, 10, 12, 12, 1)]))
    _refuses(plan_startup([str(d)]), "KafkaException", "version 1")
    txn.write_bytes(build_txn_index([AbortedTxn(7, 2, 3, 3, 0)]))
    _loads(r := plan_startup([str(d)]))
    assert [w.base_offset for w in _one(r).recover] == [10] and "V178" in _codes(r)


# --------------------------------------------------- leader-epoch-checkpoint, partition.metadata

@pytest.mark.parametrize(("text", "verdict", "words"), [
    ("0\n2\n0 0\n", "offline", "counts 2 entries but holds 1"),
    ("0\n1\n0 0 0\n", "offline", "malformed"),
    ("1\n0\n", "offline", "version 1"),
    ("x\n", "offline", "malformed"),
    ("0\n1\nzero 0\n", "stop", "NumberFormatException"),
    ("0\n1\n0 99999999999999999999\n", "stop", "NumberFormatException"),
    ("0\n-1\n", "stop", "IllegalArgumentException"),
    ("0\n1\n-1 0\n", "stop", "IllegalArgumentException"),
    ("", None, ""), ("0\n", None, ""), ("0\n1\n 0 0\n", "offline", "malformed"),
])
def test_leader_epoch_checkpoint_as_kafka_reads_it(tmp_path: Path, text: str,
                                                   verdict: str | None, words: str) -> None:
    """Rows 37b, 38, 39 (LeaderEpochFileCache's constructor reads the file through
    CheckpointFile.CheckpointReadBuffer and LeaderEpochCheckpointFile.Formatter, in
    UnifiedLog.apply before the segments load): an IOException takes the dir offline
    (3.3+: loadLogs catches the KafkaStorageException it becomes); a field that is not
    a number (3.1+), a negative count or entry escape: the broker stops.  An empty file,
    or one with the version line only, is an empty cache."""
    d = _log_dir(tmp_path / "d", clean=True, recovery=30)
    part = _partition(d)
    (part / "leader-epoch-checkpoint").write_text(text)
    r = plan_startup([str(d)])
    p = _one(r)
    if verdict is None:
        _loads(r)
    elif verdict == "stop":
        _refuses(r, words)
    else:
        assert p.offline is not None and words in p.offline, p.offline
        assert r.dirs[0].offline and not r.refusals and "V210" in _codes(r)
        assert p.recover == [] and p.fate.startswith("not loaded")


@pytest.mark.parametrize(("text", "verdict", "words"), [
    ("", "stop", "NullPointerException"),
    ("version: 0", "stop", "NullPointerException"),
    ("version: 0\ntopic_id: not*a*uuid", "stop", "IllegalArgumentException"),
    ("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", "offline", "zero topic id"),
    ("version:0\ntopic_id: b3JkZXJzLXRvcGljLWlkAA", "offline", "malformed"),
    ("version: -1\ntopic_id: b3JkZXJzLXRvcGljLWlkAA", "offline", "version"),
    ("version: 0\ntopic_id:b3JkZXJzLXRvcGljLWlkAA", "offline", "malformed"),
    ("v 0\nid b3JkZXJzLXRvcGljLWlkAA", None, ""),  # the keys are not read
    ("version: 0\ntopic_id: b3JkZXJzLXRvcGljLWlkAA", None, ""),
    ("version: 7\ntopic_id: b3JkZXJzLXRvcGljLWlkAA\nmore", None, ""),
])
def test_partition_metadata_as_kafka_reads_it(tmp_path: Path, text: str,
                                              verdict: str | None, words: str) -> None:
    """Rows 40b, 41 (UnifiedLog.initializeTopicId -> PartitionMetadataFile.read ->
    PartitionMetadataReadBuffer.read, once the log has loaded): a malformed line, a
    version below 0 or the zero topic id is an IOException (offline); an empty file or a
    missing second line splits a null line, and a topic id Uuid.fromString cannot decode
    throws IllegalArgumentException (the broker stops).  A newer version reads."""
    d = _log_dir(tmp_path / "d", clean=True, recovery=30)
    part = _partition(d)
    (part / "partition.metadata").write_text(text)
    r = plan_startup([str(d)])
    if verdict is None:
        _loads(r)
    elif verdict == "stop":
        _refuses(r, words)
    else:
        p = _one(r)
        assert p.offline is not None and words in p.offline, p.offline
        assert r.dirs[0].offline and not r.refusals and "V210" in _codes(r)


# ------------------------------------------------------------------------ -delete dirs

def test_a_delete_dir_keeps_its_index_rebuild_but_no_recovery(tmp_path: Path) -> None:
    """LogLoader.load: loadSegmentFiles runs for a -delete dir (a missing .index is still
    rebuilt), recoverLog does not: its recovery point and log end are 0, whatever its
    segments hold.  The screen says it rebuilds an index, not that it recovers."""
    d = _log_dir(tmp_path / "d", clean=False, recovery=0)
    part = _partition(d)
    (part / segment_file_name(20, "index")).unlink()
    gone = d / "orders-0.0123456789abcdef0123456789abcdef-delete"
    os.rename(part, gone)
    p = _one(r := plan_startup([str(d)]))
    assert [w.base_offset for w in p.recover] == [20] and p.log_end_offset == 0
    assert "V185" in _codes(r) and not r.refusals
    text = run("startup", "--all", d).stdout
    assert "rebuilds the indexes of 1 segment" in text and "recovers 1 segment" not in text
    assert "skips its recovery" in text and "V177" not in text


def test_a_delete_dir_rebuild_can_still_stop_the_broker(tmp_path: Path) -> None:
    """The index rebuild of a -delete dir rebuilds the producer state first: zeros in an
    earlier segment stop the broker there too."""
    d = _log_dir(tmp_path / "d", clean=True, recovery=30)
    part = _partition(d)
    _zero_tail(part / segment_file_name(0), 64)
    (part / segment_file_name(20, "index")).unlink()
    os.rename(part, d / "orders-0.0123456789abcdef0123456789abcdef-delete")
    _refuses(plan_startup([str(d)]), "CorruptRecordException")


def test_load_partition_dir_with_no_segments_should_not_throw(tmp_path: Path) -> None:
    """UnifiedLogTest.testLoadPartitionDirWithNoSegmentsShouldNotThrow: an empty
    foo-3.<uid>-delete dir loads (Kafka opens an empty segment at 0)."""
    d = _log_dir(tmp_path / "d", clean=False)
    (d / "foo-3.0123456789abcdef0123456789abcdef-delete").mkdir()
    p = _one(r := plan_startup([str(d)]))
    assert not r.refusals and p.log_end_offset == 0 and p.state == "delete"


# ------------------------------------------------------ corrupt producer snapshots

def _snapshot_cases() -> dict[str, bytes]:
    good = build_producer_snapshot(ProducerSnapshot((ProducerEntry(1, 0, 5, 9, 0, 1, 0),)))
    bad_crc = bytearray(good)
    bad_crc[-1] ^= 1
    unknown = bytearray(good)
    unknown[1] = 9
    return {"empty": b"", "truncated": good[:-10], "corrupt": bytes(bad_crc),
            "unknown version": bytes(unknown)}


@pytest.mark.parametrize("case", sorted(_snapshot_cases()))
def test_load_from_a_corrupt_snapshot_file(tmp_path: Path, case: str) -> None:
    """ProducerStateManagerTest.testLoadFromEmptySnapshotFile,
    testLoadFromTruncatedSnapshotFile, testLoadFromCorruptSnapshotFile (and an unknown
    version, readSnapshot's other CorruptSnapshotException): the snapshot at 20 is deleted
    (loadFromSnapshot) and the producer state rebuilt from the log start: segments 0 and
    10 are read, their bytes counted."""
    d = _log_dir(tmp_path / "d", clean=False, recovery=20)
    part = _partition(d)
    W.write_producer_snapshot(part, 20, durable=False)
    assert _one(plan_startup([str(d)])).producer_bytes == 0
    (part / segment_file_name(20, "snapshot")).write_bytes(_snapshot_cases()[case])
    p = _one(r := plan_startup([str(d)]))
    _loads(r)
    assert "V211" in _codes(r)
    fates = {f.file: f for f in p.leftovers}
    assert fates[segment_file_name(20, "snapshot")].fate == "deleted"
    assert p.producer_bytes == sum((part / segment_file_name(b)).stat().st_size
                                   for b in (0, 10))
    assert "log start" in p.producer_state


def test_an_older_snapshot_is_tried_next(tmp_path: Path) -> None:
    """loadFromSnapshot tries the next older snapshot: with a good one at 10 only
    segment 10 is read."""
    d = _log_dir(tmp_path / "d", clean=False, recovery=20)
    part = _partition(d)
    W.write_producer_snapshot(part, 10, durable=False)
    (part / segment_file_name(20, "snapshot")).write_bytes(b"\x00")
    p = _one(plan_startup([str(d)]))
    assert p.producer_bytes == (part / segment_file_name(10)).stat().st_size
    assert "snapshot at 10" in p.producer_state


# ------------------------------------------------- Kafka's LogLoaderTest, as ported

#: Kafka tests of the loader whose rules these changes touch, and the kmeta test that
#: follows each (in tests/test_startup.py, tests/test_startup_load.py or here).
PORTED = {
    "LogLoaderTest.testCorruptLog": TS.test_garbage_tail_is_truncated_where_repair_cuts,
    "LogLoaderTest.testIndexRebuild":
        TS.test_missing_offset_index_is_rebuilt_even_after_a_clean_shutdown,
    "LogLoaderTest.testBogusIndexSegmentsAreRemoved": TS.test_orphaned_indexes_and_deleted_files_go,
    "LogLoaderTest.testOpenDeletesObsoleteFiles": TS.test_orphaned_indexes_and_deleted_files_go,
    "LogLoaderTest.testLogEndLessThanStartAfterReopen":
        TS.test_log_end_below_log_start_deletes_everything,
    "LogLoaderTest.testCleanShutdownFile": TS.test_clean_shutdown_file_means_no_recovery,
    "LogLoaderTest.testLoadingLogKeepsLargestStrayProducerStateSnapshot":
        TS.test_largest_stray_snapshot_is_kept,
    "LogLoaderTest.testRecoveryOfSegmentWithOffsetOverflow":
        TL.test_recovery_of_segment_with_offset_overflow,
    "LogLoaderTest.testRecoverWithEmptyActiveSegment": None,  # below
    "LogLoaderTest.testLogRecoversToCorrectOffset": None,  # below
    "UnifiedLogTest.testLoadPartitionDirWithNoSegmentsShouldNotThrow":
        test_load_partition_dir_with_no_segments_should_not_throw,
    "ProducerStateManagerTest.testLoadFromEmptySnapshotFile": test_load_from_a_corrupt_snapshot_file,
    "ProducerStateManagerTest.testLoadFromTruncatedSnapshotFile":
        test_load_from_a_corrupt_snapshot_file,
    "ProducerStateManagerTest.testLoadFromCorruptSnapshotFile":
        test_load_from_a_corrupt_snapshot_file,
}


def test_each_ported_kafka_test_names_itself() -> None:
    """Each kmeta test above says in its docstring which Kafka test it follows."""
    for kafka, test in PORTED.items():
        if test is not None:
            assert kafka.split(".")[1] in (test.__doc__ or "") or \
                kafka.split(".")[1].replace("test", "", 1).lower() in test.__name__.replace(
                    "_", "").lower(), (kafka, test.__name__)


def _hundred(d: Path) -> Path:
    """testLogRecoversToCorrectOffset's log: 100 messages of 100 bytes, 700-byte
    segments."""
    part = d / "orders-0"
    with W.SegmentWriter(part, durable=False) as w:
        for i in range(100):
            batch = build_batch(i, [(None, bytes(100))], base_timestamp=1_000 + 10 * i)
            if w.active is not None and w.active.size + len(batch) > 700:
                w.roll()
            w.append(batch)
    return part


@pytest.mark.parametrize("recovery", [100, 10])
def test_log_recovers_to_correct_offset(tmp_path: Path, recovery: int) -> None:
    """LogLoaderTest.testLogRecoversToCorrectOffset: reopened unclean with the recovery
    point at the log end or at 10: 100 messages, nothing lost, nothing refused."""
    d = _log_dir(tmp_path / "d", clean=False, recovery=recovery)
    _hundred(d)
    p = _one(r := plan_startup([str(d)]))
    _loads(r)
    assert p.log_end_offset == 100 and not r.loses_data


def test_recover_with_empty_active_segment(tmp_path: Path) -> None:
    """LogLoaderTest.testRecoverWithEmptyActiveSegment (KAFKA-13603): 100 messages, then
    a roll to an empty active segment with no .index; reopened unclean at the log end:
    the empty segment's index is rebuilt, log end 100, nothing refused."""
    d = _log_dir(tmp_path / "d", clean=False, recovery=100)
    part = _hundred(d)
    (part / segment_file_name(100)).write_bytes(b"")
    p = _one(r := plan_startup([str(d)]))
    _loads(r)
    assert p.log_end_offset == 100 and p.recover[0].base_offset == 100


# ------------------------------------------------------------------------- the fixture

def test_the_refusals_fixture() -> None:
    """fixtures/data/startup/refusals: the verdicts its README states, in JSON."""
    proc = run("startup", "--json", FIXTURE)
    assert proc.returncode == 1
    objs = [json.loads(line) for line in proc.stdout.splitlines()]
    parts = {Path(o["path"]).name: o for o in objs if o["kind"] == "startup_partition"}
    summary = objs[-1]
    assert summary["refuses"] is True
    expect_stop = {
        "zeros-0": "CorruptRecordException", "tail-0": "readNextOffset",
        "name-0": "NumberFormatException", "txn-0": "Unexpected aborted transaction",
        "epochs-0": "NumberFormatException", "topicid-0": "IllegalArgumentException"}
    for name, words in expect_stop.items():
        assert words in (parts[name]["load_failure"] or ""), (name, parts[name])
    assert "counts 2 entries" in parts["offline-0"]["load_offline"]
    assert parts["snapshot-0"]["load_failure"] is None
    assert parts["snapshot-0"]["producer_bytes"] > 0
    assert parts["delete-0.0123456789abcdef0123456789abcdef-delete"]["log_end_offset"] == 0
    dirs = [o for o in objs if o["kind"] == "startup_dir"]
    assert dirs[0]["offline"] is True
    codes = {o["code"] for o in objs if o["kind"] == "finding"}
    assert {"V200", "V210", "V211", "V185"} <= codes
    assert len(summary["refusals"]) == len(expect_stop)
