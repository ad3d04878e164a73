"""verify: batch/record rules and leader epochs, on real and built logs."""

from __future__ import annotations

from pathlib import Path

import clirun
import pytest
from heard import Heard

from kmeta.formats.batch import Header, build_batch
from kmeta.formats.payload import encode_control, encode_metadata
from kmeta.ops.verify import verify_metadata_partition
from kmeta.storage.discover import discover

NOOP = encode_metadata("NO_OP_RECORD", 0, {})
TS = 1_700_000_000_000


def leader_change(epoch: int, offset: int) -> bytes:
    return build_batch(offset, [encode_control("LEADER_CHANGE", {
        "version": 0, "leaderId": 1, "voters": [{"voterId": 1}],
        "grantingVoters": [{"voterId": 1}]})], leader_epoch=epoch, control=True,
        base_timestamp=TS)


def noop(offset: int, epoch: int, **kw) -> bytes:
    return build_batch(offset, [(None, NOOP)], leader_epoch=epoch, base_timestamp=TS, **kw)


def healthy(epochs=((1, 0, 5), (2, 5, 10))) -> list[bytes]:
    out = []
    for epoch, start, end in epochs:
        out.append(leader_change(epoch, start))
        out += [noop(o, epoch) for o in range(start + 1, end)]
    return out


def part_dir(tmp_path: Path, segments: dict[int, list[bytes]], checkpoint: str | None = None,
             quorum: str | None = None) -> Path:
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    for base, batches in segments.items():
        (d / f"{base:020d}.log").write_bytes(b"".join(batches))
    if checkpoint is not None:
        (d / "leader-epoch-checkpoint").write_text(checkpoint)
    if quorum is not None:
        (d / "quorum-state").write_text(quorum)
    return d


def codes(d: Path) -> list[str]:
    (part,) = list(discover([d]).all_partitions())
    findings, _ = verify_metadata_partition(part)
    return [f.code for f in findings]


def test_real_metadata_logs_verify_clean(real_data):
    for sub in ("ldi-poc", "quorum3-boaz"):
        for part in discover([real_data / sub]).all_partitions():
            if part.is_metadata:
                findings, stats = verify_metadata_partition(part)
                assert findings == [], (part.path, findings)
                assert stats.records > 2000


def test_real_data_store_is_reported_precisely(real_data):
    """Snapshots and an epoch file but no segment: said once, and the rest still checked."""
    (part,) = [p for p in discover([real_data / "data-store"]).all_partitions()
               if p.is_metadata]
    findings, _ = verify_metadata_partition(part)
    assert [f.code for f in findings] == ["V020"]
    assert "snapshots up to 63224" in findings[0].message


def test_fixture_log_verifies_clean():
    root = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "healthy"
    (part,) = [p for p in discover([root]).all_partitions() if p.is_metadata]
    findings, stats = verify_metadata_partition(part)
    assert findings == [] and stats.segments == 7 and len(stats.epochs) == 11


def test_healthy_built_log(tmp_path):
    d = part_dir(tmp_path, {0: healthy()}, "0\n2\n1 0\n2 5\n",
                 '{"leaderId":1,"leaderEpoch":2,"votedId":-1,"votedDirectoryId":'
                 '"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}')
    assert codes(d) == []


def test_gap_and_overlap_between_batches(tmp_path):
    batches = healthy()
    gap = batches[:3] + batches[4:]
    assert codes(part_dir(tmp_path, {0: gap})) == ["V003"]


def test_missing_segment(tmp_path):
    batches = healthy()
    d = part_dir(tmp_path, {0: batches[:3], 5: batches[5:]})
    assert codes(d) == ["V009"]


def test_epoch_going_back(tmp_path):
    batches = healthy()[:5] + [noop(5, 0)]
    assert "V005" in codes(part_dir(tmp_path, {0: batches}))


def test_epoch_without_leader_change(tmp_path):
    batches = healthy()[:5] + [noop(o, 2) for o in range(5, 8)]
    assert codes(part_dir(tmp_path, {0: batches})) == ["V008"]


@pytest.mark.parametrize("bad, why", [
    (build_batch(5, [(b"key", NOOP)], leader_epoch=2, base_timestamp=TS), "key"),
    (build_batch(5, [(None, NOOP, [Header("h", b"v")])], leader_epoch=2, base_timestamp=TS),
     "header"),
    (build_batch(5, [(None, NOOP), (None, NOOP)], leader_epoch=2,
                 timestamps=[TS, TS + 5]), "timestamp delta"),
    (build_batch(5, [(None, b"")], leader_epoch=2, base_timestamp=TS), "without a value"),
])
def test_kraft_record_rules(tmp_path, bad, why):
    batches = healthy()[:5] + [bad]
    d = part_dir(tmp_path, {0: batches})
    (part,) = list(discover([d]).all_partitions())
    findings, _ = verify_metadata_partition(part)
    v001 = [f for f in findings if f.code == "V001"]
    assert v001 and why in v001[0].message


def test_max_timestamp_and_offset_deltas(tmp_path):
    odd = build_batch(5, [(None, NOOP), (None, NOOP)], leader_epoch=1, base_timestamp=TS,
                      offset_deltas=[0, 2])
    assert "V002" in codes(part_dir(tmp_path, {0: healthy()[:5] + [odd]}))


def test_checkpoint_disagrees(tmp_path):
    d = part_dir(tmp_path, {0: healthy()}, "0\n2\n1 0\n2 6\n")
    assert codes(d) == ["V006"]


def test_checkpoint_with_epoch_at_the_log_end(tmp_path):
    # a leader assigns its epoch at its log end before it writes (KafkaMetadataLog.
    # initializeLeaderEpoch): LogLoader drops the entry on load, nothing is missing
    d = part_dir(tmp_path, {0: healthy()}, "0\n3\n1 0\n2 5\n3 10\n")
    assert codes(d) == ["V011"]


def test_checkpoint_with_epochs_begun_past_the_log_end(tmp_path):
    # epoch 3 began at 99 on this node: offsets 10..98 were on it and are not now
    d = part_dir(tmp_path, {0: healthy()}, "0\n4\n1 0\n2 5\n3 40\n4 99\n",
                 '{"leaderId":1,"leaderEpoch":6,"votedId":-1,"votedDirectoryId":'
                 '"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}')
    (part,) = list(discover([d]).all_partitions())
    findings, _ = verify_metadata_partition(part)
    (f,) = findings
    assert (f.code, f.offset, f.severity.value) == ("V012", 10, "error")
    assert f.details["missing_from"] == 10 and f.details["missing_to"] == 98
    assert f.details["missing_offsets"] == 89 and f.details["epochs"] == [3, 4]
    assert f.details["quorum_epoch"] == 6
    assert "epochs 3 to 4 beginning at offsets 40 to 99" in f.message
    assert "(in epoch 2)" in f.message and "10..98" in f.message


def test_checkpoint_past_the_log_end_covered_by_a_snapshot(tmp_path):
    # a follower that fetched a snapshot past its log: Kafka truncates the log to the
    # snapshot on start (truncateToLatestSnapshot); the offsets below it are not missing
    from kmeta.ops.replica import epochs_past_end

    d = snapshot_dir(tmp_path, healthy(), [(5, 1), (30, 3)], "0\n3\n1 0\n2 5\n3 20\n")
    tail = epochs_past_end(d)
    assert tail is not None and not tail.lost and tail.snapshot_end == 30
    assert "V012" not in codes(d)


def test_epochs_past_end_for_the_startup_model(tmp_path):
    """The public function the metadata log's startup model calls: from the dir alone, or
    with the log end Kafka recovers to (after its cut)."""
    from kmeta.ops.replica import epochs_past_end

    d = part_dir(tmp_path, {0: healthy()}, "0\n3\n1 0\n2 5\n3 12\n")
    tail = epochs_past_end(d)
    assert (tail.log_end_offset, tail.end_epoch, tail.named) == (10, 2, ((3, 12),))
    assert (tail.missing, tail.quorum_epoch) == (range(10, 12), None)
    cut = epochs_past_end(d, log_end=7)
    assert cut.missing == range(7, 12) and cut.named == ((3, 12),) and cut.end_epoch == 2
    assert not epochs_past_end(d, log_end=12).lost
    (d / "leader-epoch-checkpoint").unlink()
    assert epochs_past_end(d) is None


def test_quorum_state_behind(tmp_path):
    d = part_dir(tmp_path, {0: healthy()}, None,
                 '{"leaderId":1,"leaderEpoch":1,"votedId":-1,"votedDirectoryId":'
                 '"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}')
    assert codes(d) == ["V007"]


def test_record_rules_hold_on_the_inline_path_too(tmp_path):
    """A bad lone record in the middle of an epoch takes the inline path: still found."""
    keyed = build_batch(7, [(b"key", NOOP)], leader_epoch=2, base_timestamp=TS)
    batches = healthy()[:7] + [keyed] + healthy()[8:]
    d = part_dir(tmp_path, {0: batches})
    (part,) = list(discover([d]).all_partitions())
    findings, stats = verify_metadata_partition(part)
    assert [(f.code, f.offset) for f in findings] == [("V001", 7)]
    assert stats.batches == 10 and stats.epochs == {1: [0, 4], 2: [5, 9]}


def snapshot_dir(tmp_path: Path, log: list[bytes], snapshots: list[tuple[int, int]],
                 checkpoint: str | None = None, base: int = 0,
                 values: tuple[bytes, ...] = ()) -> Path:
    from kmeta.storage.writer import write_snapshot

    d = part_dir(tmp_path, {base: log} if log else {}, checkpoint)
    for end, epoch in snapshots:
        # The built logs hold only NoOps, so the image they replay to is empty: so is the
        # snapshot's (a snapshot with records would rightly differ: see the V040 test).
        write_snapshot(d, end, epoch, values, last_contained_log_timestamp=TS, timestamp=TS)
    return d


def test_snapshots_consistent_with_the_log(tmp_path):
    assert codes(snapshot_dir(tmp_path, healthy(), [(5, 1), (10, 2)])) == []


def test_snapshot_past_the_log_end(tmp_path):
    assert codes(snapshot_dir(tmp_path, healthy(), [(12, 2)])) == ["V022"]


def test_snapshot_epoch_disagrees_with_the_log(tmp_path):
    assert codes(snapshot_dir(tmp_path, healthy(), [(7, 1)])) == ["V023"]


def test_log_start_without_covering_snapshot(tmp_path):
    batches = healthy()[5:]  # the log starts at offset 5
    d = snapshot_dir(tmp_path, batches, [], "0\n1\n2 5\n", base=5)
    assert codes(d) == ["V026"]
    (tmp_path / "covered").mkdir()
    covered = snapshot_dir(tmp_path / "covered", batches, [(5, 1)], "0\n1\n2 5\n", base=5)
    assert codes(covered) == []


def test_unfinished_and_deleted_snapshots(tmp_path):
    d = snapshot_dir(tmp_path, healthy(), [(5, 1)])
    snap = next(d.glob("*.checkpoint"))
    (d / (snap.name + ".part")).write_bytes(snap.read_bytes())
    snap.rename(d / (snap.name + ".deleted"))
    assert sorted(codes(d)) == ["V024", "V025"]


def test_snapshot_without_footer(tmp_path):
    d = snapshot_dir(tmp_path, healthy(), [(5, 1)])
    snap = next(d.glob("*.checkpoint"))
    data = snap.read_bytes()
    # Drop the last batch (the footer): find the last batch start by scanning.
    from kmeta.storage.segments import scan_batches
    positions = [b.position for b in scan_batches(data, "s")]
    snap.write_bytes(data[:positions[-1]])
    assert codes(d) == ["V021"]


def _index_dir(tmp_path: Path, entries: list[tuple[int, int]], times=None) -> Path:
    from kmeta.formats.indexes import (
        OffsetPosition,
        TimestampOffset,
        build_offset_index,
        build_time_index,
    )

    batches = healthy()
    d = part_dir(tmp_path, {0: batches})
    (d / f"{0:020d}.index").write_bytes(
        build_offset_index([OffsetPosition(o, p) for o, p in entries], 0))
    if times is not None:
        (d / f"{0:020d}.timeindex").write_bytes(
            build_time_index([TimestampOffset(t, o) for t, o in times], 0))
    return d


def test_indexes_pointing_at_batches(tmp_path):
    starts = [0]
    for b in healthy():
        starts.append(starts[-1] + len(b))
    good = _index_dir(tmp_path, [(3, starts[3]), (7, starts[7])], [(TS, 3), (TS, 7)])
    assert codes(good) == []


def test_index_entry_between_batches(tmp_path):
    assert codes(_index_dir(tmp_path, [(3, 5)])) == ["V032"]


def test_index_entries_out_of_order(tmp_path):
    starts = [0]
    for b in healthy():
        starts.append(starts[-1] + len(b))
    d = _index_dir(tmp_path, [(7, starts[7]), (3, starts[3])], [(TS + 5, 3), (TS, 7)])
    assert sorted(codes(d)) == ["V031", "V031"]


def test_index_without_segment(tmp_path):
    d = part_dir(tmp_path, {0: healthy()})
    (d / f"{100:020d}.index").write_bytes(b"")
    assert codes(d) == ["V030"]


def test_snapshot_whose_image_differs_from_the_log(tmp_path):
    feature = encode_metadata("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version",
                                                          "featureLevel": 19})
    d = snapshot_dir(tmp_path, healthy(), [(5, 1)], values=(feature,))
    (part,) = list(discover([d]).all_partitions())
    findings, _ = verify_metadata_partition(part)
    assert [f.code for f in findings] == ["V040"]
    assert "features" in findings[0].message


def test_image_problems_are_findings(tmp_path):
    change = encode_metadata("PARTITION_CHANGE_RECORD", 0, {
        "partitionId": 0, "topicId": "AAAAAAAAAAAAAAAAAAAAAg", "leader": 1})
    batches = healthy()[:7] + [build_batch(7, [(None, change)], leader_epoch=2,
                                           base_timestamp=TS)] + healthy()[8:]
    assert codes(part_dir(tmp_path, {0: batches})) == ["V101"]


def test_verify_command(real_data):
    import json

    def run(*args):
        return clirun.run("verify", *args, timeout=120)

    # ldi-poc's copy left out the partitions of __consumer_offsets and two topics its
    # image gives node 1, the only replica: Kafka would create them empty.  Its checkpoints
    # say only __consumer_offsets-6 held records (high watermark 13): that one is lost.
    ldi = run("--json", str(real_data / "ldi-poc"))
    assert ldi.returncode == 1 and "Traceback" not in ldi.stderr
    found = [json.loads(line) for line in ldi.stdout.splitlines()]
    errors = [x for x in found if x["kind"] == "finding" and x["severity"] == "error"]
    assert [(x["code"], x["details"]["partition"]) for x in errors] == [("V190", 6)]
    broken = run("--json", str(real_data / "data-store"))
    assert broken.returncode == 1
    lines = [json.loads(line) for line in broken.stdout.splitlines()]
    found = [x for x in lines if x["kind"] == "finding"]
    # the copy holds none of the 51 partitions its checkpoints name: said once (V037),
    # then what Kafka does with each: 7 held records (lost), 44 held none
    errors = [x["code"] for x in found if x["severity"] == "error"]
    assert errors == ["V020"] + ["V190"] * 7
    assert sorted(x["code"] for x in found if x["severity"] != "error") == \
        ["V037"] + ["V198"] * 44
    assert lines[-1]["kind"] == "summary" and lines[-1]["finding_counts"]["error"] == 8
    corrupt = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "corrupt"
    torn = run("--json", str(corrupt / "torn-tail"))
    assert torn.returncode == 1 and '"S001"' in torn.stdout


def test_record_newer_than_the_metadata_version(tmp_path):
    from kmeta.core.versions import required_level

    assert required_level("PARTITION_RECORD", 0) is None
    assert required_level("PARTITION_RECORD", 1) == 17
    assert required_level("REGISTER_BROKER_RECORD", 3) == 17
    assert required_level("REGISTER_BROKER_RECORD", 2) == 8
    level7 = encode_metadata("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version",
                                                        "featureLevel": 7})
    token = encode_metadata("DELEGATION_TOKEN_RECORD", 0, {
        "owner": "User:alice", "requester": "User:alice", "renewers": [],
        "issueTimestamp": 1, "maxTimestamp": 2,
        "expirationTimestamp": 2, "tokenId": "t1"})
    batches = [leader_change(1, 0),
               build_batch(1, [(None, level7)], leader_epoch=1, base_timestamp=TS),
               build_batch(2, [(None, token)], leader_epoch=1, base_timestamp=TS)]
    (part,) = list(discover([part_dir(tmp_path, {0: batches})]).all_partitions())
    findings, _ = verify_metadata_partition(part)
    assert [(f.code, f.offset) for f in findings] == [("V120", 2)]
    assert "3.6-IV2" in findings[0].message


def test_epoch_cache_starting_at_an_older_log_start(tmp_path):
    """Kafka moved the LBO to the snapshot at 7 and truncated the epoch cache from the
    start there, but kept the segment from 0: after a restart the LBO is 0 again and the
    checkpoint still starts at 7. That is Kafka's own state, not a disagreement."""
    d = snapshot_dir(tmp_path, healthy(), [(7, 2)], "0\n1\n2 7\n")
    assert codes(d) == []
    # the same checkpoint with no snapshot at 7 lost epoch 1's entry: a real disagreement
    (tmp_path / "lost").mkdir()
    lost = snapshot_dir(tmp_path / "lost", healthy(), [], "0\n1\n2 7\n")
    assert codes(lost) == ["V006"]


def test_model_is_built_from_the_verify_pass(tmp_path):
    """verify's epoch and snapshot checks come from the core ReplicaLog (one run per epoch
    per segment), so it answers Kafka's questions about the same directory."""
    from kmeta.core.replica_log import OffsetAndEpoch, SnapshotId, SnapshotState

    batches = healthy(((1, 0, 5), (2, 5, 10), (4, 10, 14)))
    d = part_dir(tmp_path, {0: batches[:7], 7: batches[7:]}, "0\n3\n1 0\n2 5\n4 10\n")
    from kmeta.storage.writer import write_snapshot

    write_snapshot(d, 10, 2, (), last_contained_log_timestamp=TS, timestamp=TS)
    (part,) = list(discover([d]).all_partitions())
    findings, stats = verify_metadata_partition(part)
    assert findings == []
    assert stats.layout == [(0, [[0, 4, 1], [5, 6, 2]]), (7, [[7, 9, 2], [10, 13, 4]])]
    model = stats.model
    assert (model.log_start_offset, model.log_end_offset) == (0, 14)
    assert model.snapshots == {SnapshotId(10, 2): SnapshotState.LIVE}
    assert model.end_offset_for_epoch(2) == OffsetAndEpoch(10, 2)
    assert model.end_offset_for_epoch(3) == OffsetAndEpoch(10, 2)


def _data_dir(root: Path, node: int, directory_id: str, checkpoints: dict[str, str],
              topics: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    (root / "meta.properties").write_text(
        f"version=1\nnode.id={node}\ncluster.id=AAAAAAAAAAAAAAAAAAAAAg\n"
        f"directory.id={directory_id}\n")
    for name, body in checkpoints.items():
        (root / name).write_text(body)
    for dirname, topic_id in topics.items():
        (root / dirname).mkdir()
        (root / dirname / f"{0:020d}.log").write_bytes(b"")
        (root / dirname / "partition.metadata").write_text(
            f"version: 0\ntopic_id: {topic_id}\n")
    return root


def _all_codes(*paths: Path) -> list[str]:
    from kmeta.ops.verify import verify

    return sorted(f.code for f in verify(list(paths)).findings)


def test_offset_checkpoints_agree_with_each_other(tmp_path):
    good = _data_dir(tmp_path / "good", 1, "MvDxzVmcRsaTz33bUuRU6A", {
        "log-start-offset-checkpoint": "0\n0\n",
        "recovery-point-offset-checkpoint": "0\n1\norders 0 0\n",
        "replication-offset-checkpoint": "0\n1\norders 0 0\n"},
        {"orders-0": "VtCDHiv5RBqI6QiD8ZgGtw"})
    assert _all_codes(good) == []
    # the log start moved to 5 (empty log: the offsets also pass its end, V035) while the
    # high watermark file still says 0
    bad = _data_dir(tmp_path / "bad", 1, "MvDxzVmcRsaTz33bUuRU6A", {
        "log-start-offset-checkpoint": "0\n1\norders 0 5\n",
        "recovery-point-offset-checkpoint": "0\n2\norders 0 5\nlost 3 0\n",
        "replication-offset-checkpoint": "0\n1\norders 0 0\n"},
        {"orders-0": "VtCDHiv5RBqI6QiD8ZgGtw", "extra-0": "b9xVvJcZRN2kgbJlkIqQWw"})
    codes_found = _all_codes(bad)
    assert codes_found.count("V036") == 1 and codes_found.count("V037") == 2


def test_topic_and_directory_ids_across_data_dirs(tmp_path):
    one = _data_dir(tmp_path / "one", 1, "MvDxzVmcRsaTz33bUuRU6A", {},
                    {"orders-0": "VtCDHiv5RBqI6QiD8ZgGtw"})
    two = _data_dir(tmp_path / "two", 2, "MvDxzVmcRsaTz33bUuRU6A", {},
                    {"orders-0": "b9xVvJcZRN2kgbJlkIqQWw"})
    assert _all_codes(one, two) == ["V038", "V039"]


def test_progress_is_told_every_few_bytes_and_adds_up(monkeypatch):
    """The progress bar moves inside a segment (a metadata segment can be 1 GiB), and
    what it hears adds up to the bytes of the log."""
    import kmeta.storage.segments as segments

    monkeypatch.setattr(segments, "PROGRESS_EVERY", 2000)
    root = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "healthy"
    (part,) = [p for p in discover([root]).all_partitions() if p.is_metadata]
    heard = Heard()
    verify_metadata_partition(part, heard)
    furthest = heard.furthest()  # the snapshots the pass compares are heard of too
    assert {str(f.path): furthest.get(str(f.path)) for f in part.segments} == \
        {str(f.path): f.path.stat().st_size for f in part.segments}
    assert len(heard.reads) > 3 * len(part.segments)
    for f in part.segments:  # each file's positions only grow
        told = [n for path, n in heard.reads if path == str(f.path)]
        assert told == sorted(told)


def test_leader_change_of_the_first_epoch_may_lie_below_the_log_start(tmp_path):
    """A log starting at 5 inside epoch 2 (its LeaderChange deleted with the segment
    below) is fine; epoch 3 opening at 8 without a LeaderChange is still V008."""
    batches = [noop(o, 2) for o in range(5, 8)] + [noop(o, 3) for o in range(8, 10)]
    d = snapshot_dir(tmp_path, batches, [(5, 1)], "0\n2\n2 5\n3 8\n", base=5)
    (part,) = list(discover([d]).all_partitions())
    findings, _ = verify_metadata_partition(part)
    assert [(f.code, f.offset) for f in findings] == [("V008", 8)]


def test_time_index_entry_past_the_segment(tmp_path):
    d = _index_dir(tmp_path, [], [(TS, 3), (TS + 5, 12)])  # the log ends at offset 9
    (part,) = list(discover([d]).all_partitions())
    findings, _ = verify_metadata_partition(part)
    assert [(f.code, f.position, f.offset) for f in findings] == [("V032", 12, 12)]


def test_two_snapshots_ending_at_one_offset(tmp_path):
    """Snapshot files at one end offset and two epochs: read, not a crash; the one whose
    epoch disagrees with the log is V023."""
    d = snapshot_dir(tmp_path, healthy(), [(7, 2), (7, 1)])
    found = codes(d)
    assert found == ["V023"]


def test_a_dir_without_a_metadata_log_says_its_rules_did_not_run(real_data):
    import json

    # a ZooKeeper-mode broker keeps its metadata in ZooKeeper: its logs are fine (exit 0)
    # but "clean" alone would claim the KRaft rules passed
    zk = real_data / "kafka25-zk-offsets"
    text = clirun.run("verify", str(zk))
    assert text.returncode == 0, text.stderr
    (line,) = [x for x in text.stdout.splitlines() if x.startswith("not checked:")]
    assert "no metadata log (a ZooKeeper-mode data dir: meta.properties version 0)" in line
    summary = json.loads(clirun.run("verify", "--json", str(zk)).stdout.splitlines()[-1])
    (said,) = summary["not_run"]
    assert "metadata rules" in said and "KRaft records" in said
    # where a metadata log is, nothing of the kind is said
    kraft = clirun.run("verify", "--json", str(real_data / "kraft41-offsets"))
    assert "no metadata log" not in kraft.stdout


def test_a_metadata_dir_of_snapshots_alone_is_said_once_and_counted_as_report_does(
        real_data):
    # data-store kept seven KRaft snapshots and bootstrap.checkpoint, not its log segment
    proc = clirun.run("verify", str(real_data / "data-store"))
    lines = proc.stdout.splitlines()
    (log,) = [x for x in lines if x.startswith("kafka-data/__cluster_metadata-0: ")]
    assert log == "kafka-data/__cluster_metadata-0: no log segment, image not replayed"
    assert "0 segment(s), 7 snapshot(s) and bootstrap.checkpoint, 17 file(s)" in lines[-1]
    report = clirun.run("report", str(real_data / "data-store")).stdout
    assert "7 snapshots in 1 replica" in report


def test_past_end_of_the_real_node_in_issue_33() -> None:
    """The numbers of the node that raised it: the log ends at 15,423 in epoch 4, its
    checkpoint goes on to epochs 5-9 beginning up to 94,434, quorum-state says 9."""
    from kmeta.ops.replica import past_end

    entries = [(1, 0), (2, 3_100), (3, 9_800), (4, 14_002), (5, 15_423), (6, 31_000),
               (7, 52_007), (8, 80_118), (9, 94_434)]
    tail = past_end(entries, 15_423, quorum_epoch=9)
    assert tail.lost and len(tail.missing) == 79_011 and tail.end_epoch == 4
    assert tail.epochs == (5, 6, 7, 8, 9) and tail.missing == range(15_423, 94_434)
    assert tail.describe().startswith("leader-epoch-checkpoint names epochs 5 to 9 "
                                      "beginning at offsets 15,423 to 94,434, past the "
                                      "log end 15,423 (in epoch 4); quorum-state says "
                                      "epoch 9: at least 79,011 offsets")
    # an election this node voted in, with nothing written past the end: normal
    assert not past_end(entries[:5], 15_423, quorum_epoch=9).lost
