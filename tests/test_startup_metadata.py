"""``kmeta startup`` on ``__cluster_metadata-0``: Kafka's own KafkaMetadataLogTest cases
(apache/kafka ``core/src/test/scala/kafka/raft/KafkaMetadataLogTest.scala``, 3.9; each
test names the one it follows), rebuilt with kmeta's writer: a restart is
``KafkaMetadataLog.apply`` on the same dir, which ``plan_startup`` models; then the
LogLoaderTest cases as the metadata log meets them (recovered whole on every start), the
command's exit status, JSON and text, and the compiled walk against the batch-by-batch
reading it stands in for."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kmeta.formats.filenames import segment_file_name
from kmeta.formats.textfiles import METADATA_TOPIC_ID, EpochEntry, QuorumState
from kmeta.ops.startup import loader as L
from kmeta.ops.startup import plan_startup
from kmeta.storage import writer as W
from tests.clirun import run

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "data"


def _log(d: Path, spans: list[tuple[int, int, int]], *, per_segment: int = 10,
         clean: bool = False, snapshots: list[tuple[int, int]] = (),
         quorum: QuorumState | None = None) -> Path:
    """A node's log dir whose ``__cluster_metadata-0`` holds one NoOp batch per offset:
    ``spans`` of (first offset, last offset, epoch), ``per_segment`` batches a segment;
    ``snapshots`` (end offset, epoch) as frozen snapshot files."""
    part = d / "__cluster_metadata-0"
    part.mkdir(parents=True)
    if clean:
        (d / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":3}')
    w = W.SegmentWriter(part, durable=False)
    n = 0
    with w:
        for first, last, epoch in spans:
            for offset in range(first, last + 1):
                if n and n % per_segment == 0:
                    w.roll()
                w.append(W.noop_batch(offset, epoch, 1_000 + offset))
                n += 1
    if not spans:  # no segment at all
        for f in part.glob("*.log"):
            f.unlink()
    for end, epoch in snapshots:
        W.write_snapshot(part, end, epoch, [], last_contained_log_timestamp=1,
                         timestamp=2, durable=False)
    if quorum is not None:
        W.write_quorum_state(part, quorum, durable=False)
    return d


def _rebase(d: Path, first_base: int) -> None:
    """Delete the segments below ``first_base`` (what retention leaves): the log starts
    there."""
    part = d / "__cluster_metadata-0"
    for f in part.iterdir():
        if f.name[:20].isdigit() and f.suffix in (".log", ".index", ".timeindex") \
                and int(f.name[:20]) < first_base:
            f.unlink()


def _meta(d: Path, version: str = "4.1"):
    r = plan_startup([str(d)], kafka_version=version)
    assert r.metadata_log is not None
    return r, r.metadata_log


# ------------------------------------------------------------ KafkaMetadataLogTest


def test_startup_with_invalid_snapshot_state(tmp_path: Path) -> None:
    """testStartupWithInvalidSnapshotState: a log starting at 100 with no snapshot, or only
    one ending below 100, refuses (Inconsistent snapshot state); one at 100 opens."""
    for snaps, refuses in (((), True), (((50, 1),), True), (((100, 1),), False)):
        d = _log(tmp_path / f"n{len(snaps)}-{refuses}", [(0, 119, 1)], snapshots=snaps)
        _rebase(d, 100)
        r, m = _meta(d)
        assert (m.refusal is not None) is refuses, (snaps, m.refusal)
        if refuses:
            assert "Inconsistent snapshot state" in m.refusal
            assert any("Inconsistent snapshot state" in x for x in r.refusals)
            assert "V236" in {f.code for f in r.findings}
        else:
            assert m.log_start_offset == 100 and m.log_end_offset == 120


def test_higher_epoch_snapshot_beyond_the_log_truncates_fully(tmp_path: Path) -> None:
    """testStartupWithInvalidSnapshotState's end and testCreateReplicatedLogTruncatesFully:
    a snapshot of a higher epoch past the log end: the log restarts at it, nothing lost."""
    d = _log(tmp_path / "d", [(0, 9, 1)], snapshots=[(11, 2)])
    _, m = _meta(d)
    assert m.truncated_to == 11 and m.log_start_offset == m.log_end_offset == 11
    assert m.latest_epoch == 2 and m.records_lost == 0
    assert "V238" in {f.code for f in m.findings}


def test_snapshot_deletion_with_invalid_snapshot_state(tmp_path: Path) -> None:
    """testSnapshotDeletionWithInvalidSnapshotState: the only snapshot at the log start is
    a .checkpoint.deleted one: Kafka refuses before deleting anything."""
    d = _log(tmp_path / "d", [(0, 119, 1)], snapshots=[(100, 1)])
    _rebase(d, 100)
    part = d / "__cluster_metadata-0"
    (snap,) = part.glob("*.checkpoint")
    snap.rename(snap.with_name(snap.name + ".deleted"))
    _, m = _meta(d)
    assert m.refusal is not None and "Inconsistent snapshot state" in m.refusal
    assert m.snapshots == []  # nothing is deleted: the check comes first


def test_cleanup_partial_snapshots(tmp_path: Path) -> None:
    """testCleanupPartialSnapshots: .checkpoint.part files go on open, the frozen one stays;
    log start 0, log end 10."""
    d = _log(tmp_path / "d", [(0, 9, 1)], snapshots=[(5, 1)])
    part = d / "__cluster_metadata-0"
    for offset in (0, 1, 2):
        (part / f"{offset:020d}-{1:010d}-123456789.checkpoint.part").write_bytes(b"x")
    _, m = _meta(d)
    fates = {s.file: s.fate for s in m.snapshots}
    assert sum(1 for f in fates.values() if f == "deleted") == 3
    assert fates[f"{5:020d}-{1:010d}.checkpoint"] == "kept"
    assert (m.log_start_offset, m.log_end_offset, m.truncated_to) == (0, 10, None)


def test_cleanup_older_snapshots(tmp_path: Path) -> None:
    """testCleanupOlderSnapshots: snapshots (1,0), (2,1), (10,1), (30,1) over a log ending
    at 20 in epoch 1: the same-epoch snapshot past the log end truncates it to 30 and the
    older ones are marked for deletion."""
    d = _log(tmp_path / "d", [(0, 0, 0), (1, 19, 1)],
             snapshots=[(1, 0), (2, 1), (10, 1), (30, 1)])
    _, m = _meta(d)
    assert m.truncated_to == 30 and m.truncated_to_snapshot == "30-1"
    fates = sorted((s.end_offset, s.fate) for s in m.snapshots)
    assert fates == [(1, "marked for deletion"), (2, "marked for deletion"),
                     (10, "marked for deletion"), (30, "kept")]


def test_doesnt_truncate_fully(tmp_path: Path) -> None:
    """testDoesntTruncateFully: an older-epoch snapshot at the log end, and a same-epoch
    snapshot below it, leave the log as it is."""
    d = _log(tmp_path / "a", [(0, 9, 1), (10, 19, 2)], snapshots=[(20, 1)])
    _, m = _meta(d)
    assert m.truncated_to is None and m.log_end_offset == 20
    d = _log(tmp_path / "b", [(0, 9, 1), (10, 19, 2)], snapshots=[(15, 2)])
    _, m = _meta(d)
    assert m.truncated_to is None and m.log_end_offset == 20 and m.latest_epoch == 2


def test_topic_id(tmp_path: Path) -> None:
    """testTopicId: the metadata log carries the metadata topic's id; another one throws
    InconsistentTopicIdException and the node stops."""
    d = _log(tmp_path / "ok", [(0, 9, 1)])
    W.write_partition_metadata(d / "__cluster_metadata-0", METADATA_TOPIC_ID, durable=False)
    assert _meta(d)[1].refusal is None
    d = _log(tmp_path / "other", [(0, 9, 1)])
    W.write_partition_metadata(d / "__cluster_metadata-0", "d5Tcu8ePQHmQVNnJWYo-8A",
                               durable=False)
    m = _meta(d)[1]
    assert m.refusal is not None and "InconsistentTopicIdException" in m.refusal


def test_an_unparsable_snapshot_name_stops_the_node(tmp_path: Path) -> None:
    """Snapshots.parse reads any name ending .checkpoint as <20 digits>-<10 digits>: a
    name that does not hold them throws from recoverSnapshots."""
    d = _log(tmp_path / "d", [(0, 9, 1)])
    (d / "__cluster_metadata-0" / "latest.checkpoint").write_bytes(b"")
    m = _meta(d)[1]
    assert m.refusal is not None and "latest.checkpoint" in m.refusal
    assert "StringIndexOutOfBoundsException" in m.refusal


# ------------------------------------------------------ LogLoaderTest, as the metadata log


def test_recovered_whole_whatever_the_clean_shutdown_file_says(tmp_path: Path) -> None:
    """KafkaMetadataLog.apply passes lastShutdownClean = false and recovery point 0: with
    .kafka_cleanshutdown present every segment is still read (LogLoaderTest's
    testCleanShutdownFile holds for LogManager's logs only)."""
    d = _log(tmp_path / "d", [(0, 49, 1)], clean=True)
    r, m = _meta(d)
    size = sum(f.stat().st_size for f in (d / "__cluster_metadata-0").glob("*.log"))
    assert m.bytes_to_read == size and len(m.load.recover) == 5
    assert r.cost_bytes == size and r.seconds == pytest.approx(size / r.recovery_rate)
    assert not r.loses_data and m.refusal is None


def test_corrupt_log_cuts_the_garbage_only(tmp_path: Path) -> None:
    """testCorruptLog: garbage after the last batch: recovery truncates exactly it, every
    record stays."""
    d = _log(tmp_path / "d", [(0, 29, 1)])
    last = sorted((d / "__cluster_metadata-0").glob("*.log"))[-1]
    with open(last, "ab") as f:
        f.write(os.urandom(500))
    r, m = _meta(d)
    assert m.log_end_offset == 30 and m.records_lost == 0
    assert m.load.recover[-1].truncated_at is not None


def test_a_bad_crc_mid_log_loses_what_follows(tmp_path: Path) -> None:
    """LogSegmentTest.testRecoveryWithCorruptMessage, then LogLoader.recoverLog: the cut
    segment is truncated at the bad batch and every later segment deleted: the node comes
    back without offsets 15..49 (no snapshot holds them)."""
    d = _log(tmp_path / "d", [(0, 49, 1)])
    seg = d / "__cluster_metadata-0" / segment_file_name(10)
    data = bytearray(seg.read_bytes())
    size = len(data) // 10
    data[5 * size + 40] ^= 1  # a byte under the CRC of the batch at offset 15
    seg.write_bytes(bytes(data))
    r, m = _meta(d)
    assert m.log_end_offset == 15
    assert m.records_lost == 34 and m.lost_offsets == (15, 49)  # 15's own count untrusted
    assert len(m.load.deleted_segments) == 3
    assert r.loses_data and "V237" in {f.code for f in r.findings}
    assert "V170" not in {f.code for f in r.findings}  # V237 says the cut


def test_a_cut_below_a_newer_snapshot_loses_only_what_it_does_not_hold(tmp_path: Path
                                                                      ) -> None:
    """The cut leaves the log in epoch 1; the latest snapshot (40, 2) is of a higher
    epoch: truncateToLatestSnapshot restarts the log at 40: offsets 40..49 are lost, the
    ones below are in the snapshot."""
    d = _log(tmp_path / "d", [(0, 19, 1), (20, 49, 2)], snapshots=[(40, 2)])
    seg = d / "__cluster_metadata-0" / segment_file_name(10)
    data = bytearray(seg.read_bytes())
    data[(len(data) // 10) * 5 + 40] ^= 1
    seg.write_bytes(bytes(data))
    _, m = _meta(d)
    assert m.truncated_to == 40 and m.latest_epoch == 2
    assert m.records_lost == 10 and m.lost_offsets == (40, 49)
    assert m.records_dropped == 49  # 0..14 kept by recovery, 16..49 after the cut: all go


# ------------------------------------------------------------------- 3.8+: read at start


def test_a_damaged_latest_snapshot_stops_38_and_later(tmp_path: Path) -> None:
    """KRaftControlRecordStateMachine reads the latest snapshot at start from 3.8: a bad
    CRC there stops the node; 3.7 reads it only once a listener registers."""
    d = _log(tmp_path / "d", [(0, 9, 1)], snapshots=[(5, 1)])
    (snap,) = (d / "__cluster_metadata-0").glob("*.checkpoint")
    data = bytearray(snap.read_bytes())
    data[30] ^= 1
    snap.write_bytes(bytes(data))
    assert "CorruptRecordException" in (_meta(d, "3.8")[1].refusal or "")
    assert _meta(d, "3.7")[1].refusal is None


def test_an_unreadable_quorum_state_stops_38_and_is_cleared_before(tmp_path: Path) -> None:
    """FileQuorumStateStore (3.8+) throws on a quorum-state it cannot parse; 3.3 to 3.7
    clear it and start at epoch 0 (QuorumState.initialize)."""
    d = _log(tmp_path / "d", [(0, 9, 1)])
    (d / "__cluster_metadata-0" / "quorum-state").write_text("{not json")
    assert "FileQuorumStateStore" in (_meta(d, "3.9")[1].refusal or "")
    m = _meta(d, "3.7")[1]
    assert m.refusal is None and "V239" in {f.code for f in m.findings}


def test_a_second_metadata_log_refuses(tmp_path: Path) -> None:
    """KafkaRaftServer.initializeLogDirs: __cluster_metadata-0 in a log dir other than
    metadata.log.dir: "Found unexpected metadata location"."""
    a = _log(tmp_path / "a", [(0, 9, 1)])
    b = _log(tmp_path / "b", [(0, 9, 1)])
    r = plan_startup([str(a), str(b)])
    assert any("Found unexpected metadata location" in f.message for f in r.findings)
    assert any(str(b) in x for x in r.refusals)
    config = tmp_path / "server.properties"
    config.write_text(f"log.dirs={a},{b}\nmetadata.log.dir={b}\n")
    r = plan_startup([str(a), str(b)], config=str(config))
    assert r.metadata_log.log_dir == b
    assert any(str(a / "__cluster_metadata-0") in x for x in r.refusals)


# ----------------------------------------------------------------------- the command


def test_the_command_says_the_cut_and_exits_1() -> None:
    """The repair corpus' bad-crc-mid-log (one flipped CRC mid-log): startup loses what
    kmeta repair cuts: the same records, the same first offset."""
    case = FIXTURES / "repair" / "bad-crc-mid-log"
    r = run("startup", str(case))
    assert r.returncode == 1
    assert "comes back without 354 records (offsets 195..549)" in r.stdout
    plan = run("repair", "--dry-run", str(case / "__cluster_metadata-0")).stdout
    assert "354 record(s)" in plan and "offsets 195..549" in plan
    summary = json.loads(run("startup", "--json", str(case)).stdout.splitlines()[-1])
    ml = summary["metadata_log_startup"]
    assert ml["records_lost"] == 354 and ml["recovery_cut"]["code"] == "F001"
    assert ml["lost_first_offset"] == 195 and summary["loses_data"] is True
    assert summary["bytes_to_read"] >= ml["bytes_to_read"] > 0


def test_report_says_what_startup_says() -> None:
    case = FIXTURES / "repair" / "bad-crc-mid-log"
    said = run("report", str(case)).stdout
    line = next(x for x in said.splitlines() if x.startswith("startup"))
    assert "ERROR" in line and "1 metadata log cut on start, metadata records lost" in line, \
        line


def test_the_snapshot_only_copies_open_at_their_latest_snapshot(real_data: Path) -> None:
    """data-store and kraft412-scram-snapshots hold snapshots and no segment: Kafka makes
    an empty log at 0, then truncateToLatestSnapshot starts it at the latest snapshot."""
    for name, end in (("data-store/kafka-data", 63224),
                      ("kraft412-scram-snapshots/data/kafka", 106627)):
        _, m = _meta(real_data / name)
        assert m.log_start_offset == m.log_end_offset == end and m.records_lost == 0


@pytest.mark.parametrize("root", ["real", "fixtures"])
def test_the_walk_answers_as_the_batch_by_batch_reading(root: str, real_data: Path) -> None:
    """Recovery by the compiled walk (intact batches in order) gives the batches kept, the
    next offset, the cut and the epochs assigned that the batch-by-batch reading gives."""
    base = real_data if root == "real" else FIXTURES
    walked = 0
    for dirpath, _, files in os.walk(base):
        for name in files:
            if not (name.endswith(".log") and name[:20].isdigit()):
                continue
            path = os.path.join(dirpath, name)
            seg = L._Segment(int(name[:20]), name, path, os.path.getsize(path))
            w = L._recover_walked(seg, L.QUIET)
            if w is None:
                continue
            b = L._recover_batches(seg, 4096)
            walked += 1
            assert (w.batches, w.next_offset, w.valid_bytes, w.cut and w.cut[:2],
                    w.assigns, w.epochs_seen, w.fault) == \
                (b.batches, b.next_offset, b.valid_bytes, b.cut and b.cut[:2], b.assigns,
                 b.epochs_seen, b.fault), path
    assert walked > 50


def test_epochs_across_many_stretches_as_the_batch_by_batch_reading(tmp_path: Path) -> None:
    """The walk finds each new epoch by stretches of the compiled walk (_EPOCH_STRETCH):
    epochs that begin at a stretch's first batch, in its middle, two in one stretch, and
    an epoch number that skips, in a segment of many stretches."""
    changes = {0: 1, 700: 2, 701: 3, 2500: 7, 2510: 8, 4097: 9, 9000: 12}
    batches, epoch = [], 0
    for offset in range(10_000):
        epoch = changes.get(offset, epoch)
        batches.append(W.noop_batch(offset, epoch, 1_700_000_000_000 + offset))
    path = tmp_path / segment_file_name(0)
    path.write_bytes(b"".join(batches))
    assert path.stat().st_size > 8 * L._EPOCH_STRETCH
    seg = L._Segment(0, path.name, str(path), path.stat().st_size)
    w, b = L._recover_walked(seg, L.QUIET), L._recover_batches(seg, 4096)
    assert w is not None and w.assigns == b.assigns == [(e, o) for o, e in changes.items()]
    assert (w.batches, w.next_offset, w.epochs_seen) == (b.batches, b.next_offset, 12)


# ------------------------------------------------------- fixtures/data/kraftstart verdicts


def test_kraftstart_verdicts() -> None:
    """fixtures/README.md, "data/kraftstart/": each case's verdict."""
    root = FIXTURES / "kraftstart"
    r, m = _meta(root / "clean-but-cut")
    kept = sum(w.bytes for w in m.load.recover)  # every segment up to the cut, marker or not
    assert r.dirs[0].clean_shutdown and m.bytes_to_read == kept and len(m.load.recover) == 4
    assert m.load.recover[-1].truncated_at == 4374 and m.load.deleted_segments == [
        segment_file_name(451)]
    assert (m.records_lost, m.lost_offsets, m.truncated_to) == (143, (400, 543), None)
    r, m = _meta(root / "cut-under-snapshot")
    assert m.load.recover[0].truncated_at == 1611 and len(m.load.deleted_segments) == 4
    assert (m.records_lost, m.lost_offsets, m.truncated_to) == (420, (124, 543), 124)
    r, m = _meta(root / "inconsistent")
    assert m.refusal is not None and "start at 228" not in m.refusal
    assert "Inconsistent snapshot state: the log starts at 228" in m.refusal
    r = plan_startup([str(root / "two-logs" / "a"), str(root / "two-logs" / "b")])
    assert r.metadata_log.log_dir == root / "two-logs" / "a"
    assert [x.split(":")[0] for x in r.refusals] == [
        str(root / "two-logs" / "b" / "__cluster_metadata-0")]
    for case in ("clean-but-cut", "cut-under-snapshot", "inconsistent"):
        assert run("startup", str(root / case)).returncode == 1, case


def test_epochs_past_the_end_are_offsets_the_node_comes_back_without(tmp_path: Path
                                                                     ) -> None:
    """Issue 33, point 4, as startup says it: the log ends at 10 in epoch 1, its own
    leader-epoch-checkpoint names epochs 2-4 from offsets 10 to 60 (verify's V012):
    LogLoader drops those entries (truncateFromEnd) and the node comes back without
    offsets 10..59 (V235, exit 1)."""
    case = FIXTURES / "verify" / "v012-epochs-past-end"
    r, m = _meta(case)
    assert m.missing is not None and m.missing.epochs == (2, 3, 4)
    assert (m.missing.missing.start, m.missing.missing.stop) == (10, 60)
    assert r.loses_data and "V235" in {f.code for f in r.findings}
    said = run("startup", str(case))
    assert said.returncode == 1 and "WITHOUT METADATA OFFSETS 10..59" in said.stdout
    # an entry exactly at the log end (a leader that has not written yet) is no loss
    d = _log(tmp_path / "d", [(0, 9, 1)])
    W.write_leader_epoch_checkpoint(d / "__cluster_metadata-0", [EpochEntry(1, 0),
                                                                  EpochEntry(2, 10)],
                                    overwrite=True, durable=False)
    assert _meta(d)[1].missing is None


def test_a_malformed_epoch_checkpoint_stops_the_node(tmp_path: Path) -> None:
    """A leader-epoch-checkpoint Kafka cannot read takes a data log's dir offline
    (LogManager.loadLogs catches the IOException); the metadata log's failure channel is
    its own (KafkaMetadataLog.apply: new LogDirFailureChannel(5)): the node stops."""
    d = _log(tmp_path / "d", [(0, 9, 1)])
    (d / "__cluster_metadata-0" / "leader-epoch-checkpoint").write_text("0\n2\n1 0\n")
    r, m = _meta(d)
    assert m.refusal is not None and "KafkaStorageException" in m.refusal
    assert "V210" not in {f.code for f in r.findings} and r.refusals


@pytest.mark.parametrize(("name", "thrown"), [
    ("x.checkpoint", "StringIndexOutOfBoundsException"),
    ("0000000000000000abcd-0000000001.checkpoint", "NumberFormatException"),
    ("00000000000000000010-00000000x1.checkpoint", "NumberFormatException"),
    ("00000000000000000010.checkpoint", "NumberFormatException"),  # epoch: "checkpoint"
])
def test_snapshot_names_throw_as_snapshots_parse_does(tmp_path: Path, name: str,
                                                      thrown: str) -> None:
    """Snapshots.parse: substring(0, 20) parsed as a long, then substring(21, 31) as an
    int; the first step that fails names the exception."""
    d = _log(tmp_path / "d", [(0, 9, 1)])
    (d / "__cluster_metadata-0" / name).write_bytes(b"")
    m = _meta(d)[1]
    assert m.refusal is not None and name in m.refusal and thrown in m.refusal
    # a sign is a number to Java, and the separator is not checked
    d = _log(tmp_path / "ok", [(0, 9, 1)], snapshots=[(5, 1)])
    (snap,) = (d / "__cluster_metadata-0").glob("*.checkpoint")
    snap.rename(snap.with_name("+0000000000000000005_0000000001.checkpoint"))
    m = _meta(d)[1]
    assert m.refusal is None and [s.end_offset for s in m.snapshots] == [5]


def test_a_metadata_log_that_cannot_be_read_stops_the_node(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """LogLoader.removeTempFilesAndCollectSwapFiles: a file it cannot read is an
    IOException; the metadata log has no dir to take offline: the node stops."""
    from kmeta.ops.startup import manager

    def unreadable(*_: object, **__: object) -> None:
        raise PermissionError(13, "Permission denied")

    d = _log(tmp_path / "d", [(0, 9, 1)])
    monkeypatch.setattr(manager, "open_metadata_log", unreadable)
    r = plan_startup([str(d)])
    assert r.metadata_log is None and r.refusals and r.refuses_before_loading
    assert "S008" in {f.code for f in r.findings}
