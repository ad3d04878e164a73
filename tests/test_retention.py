"""Snapshot retention (KIP-630) replayed offline: Kafka's own test cases
(``KafkaMetadataLogTest``) on replicas with the segments and snapshots their logs have."""

from __future__ import annotations

from kmeta.core.replica_log import BatchMeta, ReplicaLog, Segment, SnapshotId
from kmeta.core.retention import RetentionConfig, SnapshotFacts, plan_retention
from kmeta.storage.progress import QUIET


def _replica(records: int, per_segment: int, batch_bytes: int,
             snapshots: dict[tuple[int, int], SnapshotFacts], log_start: int | None = None,
             epoch: int = 1) -> tuple[ReplicaLog, dict[int, int], dict]:
    """One-record batches of ``epoch``, a segment rolled every ``per_segment`` of them."""
    segments, sizes = [], {}
    for base in range(0, records, per_segment):
        last = min(base + per_segment, records) - 1
        segments.append(Segment(base, tuple(BatchMeta(o, o, epoch, batch_bytes)
                                            for o in range(base, last + 1))))
        sizes[base] = (last - base + 1) * batch_bytes
    model, _ = ReplicaLog.from_observed(segments, snapshots=list(snapshots),
                                        log_start_offset=log_start)
    return model, sizes, {SnapshotId(*k): v for k, v in snapshots.items()}


def test_delete_snapshots_leaves_only_the_latest() -> None:
    # testDeleteSnapshots: 1,001 one-record batches in 1,024-byte segments, snapshots at
    # 100 ... 600 (epoch 1, ten records each), retention 1,024 bytes: only 600 is left and
    # the log starts at 600
    snaps = {(o, 1): SnapshotFacts(600) for o in (100, 200, 300, 400, 500, 600)}
    model, sizes, facts = _replica(1001, 13, 75, snaps)
    plan = plan_retention(model, sizes, facts, RetentionConfig(1024, 60_000), now=None)
    assert [s.offset for s in plan.after.snapshots if s.offset == 600] == [600]
    assert plan.after.latest_snapshot == plan.after.earliest_snapshot == SnapshotId(600, 1)
    assert plan.after.log_start_offset == 600
    assert [s.offset for s in plan.deleted_snapshots] == [100, 200, 300, 400, 500]
    # segments wholly below 600 are gone; the one holding 600 stays
    assert plan.after.segments[0].base_offset == 598
    assert all(b + 13 <= 600 for b in plan.deleted_segments)
    assert [step.rule for step in plan.steps] == ["size"] * 5
    assert "never deleted" in plan.stopped["size"]
    assert model.log_start_offset == 0  # the replica given is left as it is


def test_soft_limit_keeps_the_latest_snapshot_over_the_limit() -> None:
    # testSoftRetentionLimit: 2,001 batches, snapshots (1000, 1) and (2000, 1) of 500
    # records, retention 10,240 bytes: 2000 is kept and the total stays over
    snaps = {(1000, 1): SnapshotFacts(30_000), (2000, 1): SnapshotFacts(30_000)}
    model, sizes, facts = _replica(2001, 136, 75, snaps)
    plan = plan_retention(model, sizes, facts, RetentionConfig(10_240, 60_000), now=None)
    assert plan.after.latest_snapshot == plan.after.earliest_snapshot == SnapshotId(2000, 1)
    assert plan.total_bytes > 10_240
    assert plan.after.log_start_offset == 2000


def test_log_start_advances_to_the_next_snapshot() -> None:
    # testAdvanceLogStartOffsetAfterCleaning: snapshots 1000 and 2000, retention 256 bytes
    snaps = {(1000, 1): SnapshotFacts(5000), (2000, 1): SnapshotFacts(5000)}
    model, sizes, facts = _replica(101 * 47, 100, 40, snaps)
    plan = plan_retention(model, sizes, facts, RetentionConfig(256, 60_000), now=None)
    assert plan.after.log_start_offset == 2000 and len(plan.steps) == 1


def test_within_the_limit_nothing_goes() -> None:
    snaps = {(50, 1): SnapshotFacts(100), (90, 1): SnapshotFacts(100)}
    model, sizes, facts = _replica(100, 50, 10, snaps)
    plan = plan_retention(model, sizes, facts, RetentionConfig(10_000, -1), now=None)
    assert plan.steps == [] and plan.after.log_start_offset == 0
    assert "within" in plan.stopped["size"] and plan.stopped["time"].startswith("off")


def test_time_rule_deletes_snapshots_older_than_retention() -> None:
    day = 24 * 3600 * 1000
    snaps = {(1000, 1): SnapshotFacts(10, 0), (2000, 1): SnapshotFacts(10, 6 * day),
             (2500, 1): SnapshotFacts(10, 8 * day)}
    model, sizes, facts = _replica(3000, 1000, 10, snaps)
    plan = plan_retention(model, sizes, facts, RetentionConfig(-1, 7 * day), now=8 * day)
    # 1000 is 8 days old: it goes and the log starts at 2000; 2000 is 2 days old: it stays
    assert [(s.rule, s.breached.offset, s.kept.offset) for s in plan.steps] == \
        [("time", 1000, 2000)]
    assert plan.after.log_start_offset == 2000 and plan.deleted_segments == [0, 1000]
    assert plan.steps[0].age_ms == 8 * day


def test_a_step_needs_the_log_start_below_the_next_snapshot() -> None:
    snaps = {(1000, 1): SnapshotFacts(10), (2000, 1): SnapshotFacts(10)}
    model, sizes, facts = _replica(3000, 1000, 100, snaps, log_start=2000)
    plan = plan_retention(model, sizes, facts, RetentionConfig(1, -1), now=None)
    assert plan.steps == [] and "cannot move the log start offset 2000" in plan.stopped["size"]


def test_snapshots_are_ordered_by_epoch_then_offset() -> None:
    # Raft orders (600, 1) before (500, 2): the walk deletes (600, 1) first
    snaps = {(500, 2): SnapshotFacts(10), (600, 1): SnapshotFacts(10)}
    model, sizes, facts = _replica(700, 100, 100, snaps, epoch=2)
    plan = plan_retention(model, sizes, facts, RetentionConfig(1, -1), now=None)
    assert [(s.offset, s.epoch) for s in plan.deleted_snapshots] == [(600, 1)]
    assert plan.after.log_start_offset == 500


# ---------------------------------------------------------------------- the command

def test_healthy_fixture_snapshots_segments_and_cadence() -> None:
    from conftest import HEALTHY

    from kmeta.ops.retention import retention

    result = retention(HEALTHY)
    assert [(s.id.offset, s.id.epoch, s.state) for s in result.snapshots] == \
        [(4000, 6, "live"), (8157, 11, "live"), (12294, 11, "live")]
    assert [s.records for s in result.snapshots] == [102, 170, 188]
    first, second = result.snapshots[0], result.snapshots[1]
    # the log from offset 0 to 4000, and from 4000 to 8157, batch by batch
    assert (first.log_records, second.log_records) == (4000, 4157)
    assert first.since_previous_ms is None and second.since_previous_ms == \
        second.timestamp - first.timestamp
    assert {s.trigger for s in result.snapshots} == {"unknown"}  # far below 20 MiB, 1 h
    assert [s.base_offset for s in result.segments][:2] == [0, 1802]
    assert result.now == max(s.max_timestamp for s in result.segments)
    assert result.plan is not None and result.plan.steps == []
    assert result.startup[0].startswith("nothing to clean up")


def test_healthy_fixture_under_tight_limits() -> None:
    from conftest import HEALTHY

    from kmeta.ops.retention import retention, settings

    config, cadence, _ = settings(None, retention_bytes="600KiB", retention_ms="40min")
    result = retention(HEALTHY, config=config, cadence=cadence,
                       replicas=[("2", 3000, None), ("3", 12704, None), ("4", 20000, 99)])
    plan = result.plan
    assert plan is not None
    # size first: 888 KiB of log + 41 KiB of snapshots > 600 KiB: 4000-6 goes and the
    # log starts at 8157, leaving 417 KB, within; then the time rule: 8157-11 is 36 min
    # old, within 40 min
    assert [(s.rule, s.breached.offset, s.kept.offset) for s in plan.steps] == \
        [("size", 4000, 8157)]
    assert plan.after.log_start_offset == 8157
    assert "within 614,400" in plan.stopped["size"]
    assert "35 min 51 s old, not older than 40 min" in plan.stopped["time"]
    assert [s.fate for s in result.snapshots] == ["deleted (size)", "kept", "kept"]
    assert [s.fate for s in result.segments] == ["deleted"] * 4 + ["kept"] * 3
    answers = [(f.node, f.answer.kind.value, f.answer.offset_and_epoch.offset)
               for f in result.followers]
    assert answers == [("2", "snapshot", 12294), ("3", "valid", 12704),
                       ("4", "diverging", 12704)]


def test_real_data_store_without_its_log(real_data) -> None:
    from kmeta.ops.retention import retention

    # seven snapshots, no segment: Kafka starts an empty log at 0, truncates to the
    # latest snapshot 63224-9 and deletes the six before it
    result = retention(real_data / "data-store")
    assert [f.code for f in result.findings] == ["V020"]
    assert [s.id.offset for s in result.snapshots] == \
        [16435, 23631, 30827, 38023, 48831, 56027, 63224]
    assert [s.fate for s in result.snapshots].count("deleted at startup (truncation)") == 6
    assert result.plan is not None and result.plan.after.log_start_offset == 63224
    assert result.now_from == "the newest snapshot"
    # a follower is answered from the log as Kafka opened it: from the latest snapshot on
    # (this crashed before: the model before startup has no epoch and a snapshot past it)
    result = retention(real_data / "data-store", replicas=[("2", 1, None), ("3", 63224, 9)])
    assert [(f.node, f.answer.kind.name, f.answer.offset_and_epoch.offset)
            for f in result.followers] == [("2", "SNAPSHOT", 63224), ("3", "VALID", 63224)]


def test_inconsistent_snapshot_state_is_a_refusal(tmp_path) -> None:
    import shutil

    from conftest import HEALTHY

    from kmeta.ops.retention import retention

    # the log starting at 1802 with no snapshot at or after it: copy the healthy log, drop
    # its first segment and its snapshots
    part = tmp_path / "__cluster_metadata-0"
    shutil.copytree(HEALTHY / "__cluster_metadata-0", part)
    for f in part.iterdir():
        if f.name.startswith("00000000000000000000.") or f.name.endswith(".checkpoint"):
            f.unlink()
    result = retention(part, replicas=[("2", 2000, None)])
    assert result.refusal is not None and "Inconsistent snapshot state" in result.refusal
    assert result.plan is None
    # a leader that does not start answers no follower
    assert result.followers == [] and "answers no follower (1 given)" in result.startup[-1]


def test_settings_from_server_properties(tmp_path) -> None:
    import pytest

    from kmeta.errors import UsageError
    from kmeta.ops.retention import parse_replica, parse_size, settings

    props = tmp_path / "server.properties"
    props.write_text("# a controller\nmetadata.max.retention.bytes=52428800\n"
                     "metadata.max.retention.ms : 86400000\n"
                     "metadata.log.max.snapshot.interval.ms=0\n")
    config, cadence, held = settings(str(props), retention_ms="2h")
    assert held == ["metadata.max.retention.bytes", "metadata.max.retention.ms",
                    "metadata.log.max.snapshot.interval.ms"]
    assert (config.retention_bytes, config.retention_ms) == (52428800, 7_200_000)
    assert (cadence.bytes_between, cadence.interval_ms) == (20 * 1024 * 1024, 0)
    assert [parse_size(t, "-") for t in ("-1", "100MiB", "1GiB", "500MB", "4096")] == \
        [-1, 104857600, 1 << 30, 500_000_000, 4096]
    assert parse_replica("2=14000:7") == ("2", 14000, 7)
    assert parse_replica("c-1=5") == ("c-1", 5, None)
    for bad in ("2", "=5", "2=x", "2=5:e"):
        with pytest.raises(UsageError):
            parse_replica(bad)
    with pytest.raises(UsageError):
        settings(None, retention_bytes="lots")


def test_cli(real_data) -> None:
    import json

    from clirun import run
    from conftest import HEALTHY

    from kmeta.output_schema import check

    text = run("retention", HEALTHY, env={"COLUMNS": "80"})
    assert text.returncode == 0, text.stderr
    assert all(len(line) <= 80 for line in text.stdout.splitlines())
    assert "at startup, Kafka:" in text.stdout and "retention at" in text.stdout
    out = run("retention", "--json", "--retention-bytes", "600KiB", "--replica", "2=3000",
              HEALTHY, env={})
    objects = [json.loads(line) for line in out.stdout.splitlines()]
    assert objects[-1]["kind"] == "retention_summary"
    assert objects[-1]["log_start_offset_after"] == 8157
    for o in objects:
        assert check("retention", o) == [], o
    gone = run("retention", real_data / "data-store", env={})
    assert gone.returncode == 1 and "V020" in gone.stdout
    for args in (("--retention-bytes", "lots"), ("--now", "5"), ("--replica", "x")):
        bad = run("retention", *args, HEALTHY, env={})
        assert bad.returncode == 2 and "Traceback" not in bad.stderr, (args, bad.stderr)
    assert run("retention", "/etc", env={}).returncode == 3


def test_the_replica_model_is_verifys(real_data) -> None:
    """retention lays the log out in its own lean pass; the runs must be verify's, so that
    both say the same of the directory (gaps, epochs going back, legacy messages)."""
    from conftest import CORRUPT, HEALTHY

    from kmeta.ops.replay import metadata_source
    from kmeta.ops.replica import LogStats
    from kmeta.ops.retention import Cadence, _read_log, _snapshot_rows
    from kmeta.ops.verify import verify_log
    from kmeta.storage.discover import discover

    dirs = [HEALTHY, real_data / "quorum3-boaz" / "data" / "kafka-3",
            real_data / "kraft32-three" / "data" / "kafka1"]
    dirs += sorted(p.parent for p in CORRUPT.glob("*/__cluster_metadata-0/*.log"))
    for d in dirs:
        part = metadata_source(discover([d]))
        theirs = LogStats()
        list(verify_log(part.segments, theirs))
        ours, found = LogStats(), []
        _read_log(part, _snapshot_rows(part, found), Cadence(), ours, found, QUIET)
        assert ours.layout == theirs.layout, d


# ------------------------------------------- Kafka's cases as logs written by kmeta's writer

def _kip630(case: str):
    from conftest import FIXTURES

    return FIXTURES / "kip630" / case


def test_kafka_retention_cases_on_disk() -> None:
    from kmeta.ops.retention import retention, settings

    def run(case: str, limit: str):
        config, cadence, _ = settings(None, retention_bytes=limit, retention_ms="1min")
        result = retention(_kip630(case), config=config, cadence=cadence)
        assert result.plan is not None
        return result, result.plan

    # testDeleteSnapshots: only 600 is left and the log starts at 600
    result, plan = run("delete-snapshots", "1024")
    assert [s.id.offset for s in result.snapshots if s.fate == "kept"] == [600]
    assert plan.after.log_start_offset == 600
    # testSoftRetentionLimit: 2000 is kept, and the total is still over the limit
    result, plan = run("soft-limit", "10240")
    assert [s.id.offset for s in result.snapshots if s.fate == "kept"] == [2000]
    assert plan.total_bytes > 10240
    # testAdvanceLogStartOffsetAfterCleaning: the log start moves to 2000
    _, plan = run("advance-log-start", "256")
    assert plan.after.log_start_offset == 2000


def test_kafka_fetch_validation_cases_on_disk() -> None:
    from kmeta.ops.retention import retention

    def answer(case: str, offset: int, epoch: int) -> tuple[str, int, int]:
        result = retention(_kip630(case), replicas=[("f", offset, epoch)])
        a = result.followers[0].answer
        return a.kind.value, a.offset_and_epoch.offset, a.offset_and_epoch.epoch

    assert answer("fetch-epochs-1-2-4", 100, 3) == ("diverging", 20, 2)
    assert answer("fetch-epoch-3", 100, 2) == ("diverging", 10, 1)
    assert answer("fetch-below-log-start", 1, 1) == ("snapshot", 2, 1)
    assert answer("fetch-two-epochs", 11, 1) == ("diverging", 10, 1)
    assert answer("fetch-two-epochs", 20, 2) == ("valid", 20, 2)


def test_real_dirs_by_hand(real_data) -> None:
    """Checked against ``kmeta dump`` and ``ls -l``: data-store's seven snapshot files are
    4,552 bytes each and hold 63 records (the batch counts of ``kmeta dump``); the newest,
    63224-9, says lastContainedLogTimestamp 1740474438582 (2025-02-25 09:07:18 UTC).
    quorum3-boaz's logs have no snapshot; kafka-1 and kafka-2 end one batch short of
    kafka-3 (2034, epoch 31): their fetches are valid, a lag."""
    from kmeta.ops.retention import parse_replica, retention

    store = retention(real_data / "data-store")
    assert {(s.size, s.records) for s in store.snapshots} == {(4552, 63)}
    assert store.snapshots[-1].timestamp == 1740474438582 == store.now
    data = real_data / "quorum3-boaz" / "data"
    q = retention(data / "kafka-3", replicas=[parse_replica(str(data / "kafka-1")),
                                              parse_replica(str(data / "kafka-2"))])
    assert q.snapshots == [] and (q.log_start, q.log_end) == (0, 2035)
    assert q.refusal is None and q.startup[0].startswith("nothing to clean up")
    assert [(f.node, f.offset, f.epoch, f.answer.kind.value) for f in q.followers] == \
        [("1", 2034, 31, "valid"), ("2", 2034, 31, "valid")]


# ----------------------------------------- followers: how far they truncate, whose they are

def _follower_behind(root, epochs: list[int] | None = None) -> object:
    """A follower of fetch-epochs-1-2-4's leader (snapshot 10-1, epochs 1@10, 2@15, 4@20,
    end 25), by default one that fell behind where the leader's epoch 2 ends (20): it holds
    epoch 1 to 14, epoch 2 at 15-16, then led epoch 3 and wrote 17-18 that no one fetched
    (end 19).  ``epochs``: the epoch of each offset from 0."""
    from kmeta.storage.writer import noop_batch, write_segments

    part = root / "__cluster_metadata-0"
    part.mkdir(parents=True)
    epochs = epochs or [1] * 15 + [2] * 2 + [3] * 2
    write_segments(part, (noop_batch(o, e, 1_700_000_000_000 + o) for o, e in enumerate(epochs)))
    return root


def test_a_follower_behind_the_divergence_truncates_within_its_own_log(tmp_path) -> None:
    from kmeta.ops.retention import retention

    leader = _kip630("fetch-epochs-1-2-4")
    follower = _follower_behind(tmp_path / "f")
    # ReplicatedLog.truncateToEndOffset on the follower: its own end of epoch 2 is 17,
    # below the leader's 20; from its END_OFFSET:EPOCH alone, no further than its end 19
    result = retention(leader, replicas=[(str(follower), None, None), ("n", 19, 3),
                                         ("m", 100, 3), ("k", 30, 4)])
    got = [(f.offset, f.epoch, f.answer.kind.value, f.answer.offset_and_epoch.offset,
            f.truncate_to, f.truncate_exact) for f in result.followers]
    assert got == [(19, 3, "diverging", 20, 17, True),
                   (19, 3, "diverging", 20, 19, False),
                   (100, 3, "diverging", 20, 20, False),
                   (30, 4, "diverging", 25, 25, True)]  # its own epoch: it ends it at 30
    # A follower that never had epoch 2 (epoch 1 to 24, its own epoch 3 at 25-26): its
    # first truncation is to 25, where its epoch 1 ends, past the leader's answer (20);
    # the next fetch (25, epoch 1) is told epoch 1 ends at 15, and there it agrees.
    skipped = _follower_behind(tmp_path / "g", [1] * 25 + [3] * 2)
    (f,) = retention(leader, replicas=[(str(skipped), None, None)]).followers
    assert (f.offset, f.epoch, f.answer.offset_and_epoch.offset) == (27, 3, 20)
    assert (f.truncate_to, f.truncate_exact, f.refused_below) == (15, True, None)


def test_a_truncation_below_the_followers_snapshot_is_refused(tmp_path) -> None:
    """The follower behind the divergence, with a snapshot at its end (19-3): its high
    watermark was at least 19, so truncating to 17 would lose committed data; Kafka
    refuses, and retention says so as diff does."""
    from clirun import run

    from kmeta.formats.payload import encode_metadata
    from kmeta.ops.retention import retention
    from kmeta.storage.writer import write_snapshot

    follower = _follower_behind(tmp_path / "f")
    write_snapshot(follower / "__cluster_metadata-0", 19, 3,
                   [encode_metadata("NO_OP_RECORD", 0, {})],
                   last_contained_log_timestamp=1_700_000_000_018, timestamp=1_700_000_000_020)
    leader = _kip630("fetch-epochs-1-2-4")
    (f,) = retention(leader, replicas=[(str(follower), None, None)]).followers
    assert (f.truncate_to, f.refused_below) == (17, 19)
    said = "would have to truncate to 17, below its own snapshot at 19: Kafka refuses"
    for args in (("retention", leader, "--replica", follower), ("diff", leader, follower)):
        out = " ".join(run(*args, env={"COLUMNS": "80"}).stdout.split())  # lines unfolded
        assert said in out, args


def test_a_follower_truncation_in_words_and_json(tmp_path) -> None:
    import json

    from clirun import run

    from kmeta.output_schema import check

    leader = _kip630("fetch-epochs-1-2-4")
    out = run("retention", leader, "--replica", "n=19:3", "--replica",
              _follower_behind(tmp_path / "f"), env={"COLUMNS": "200"}).stdout
    assert "node n at offset 19, epoch 3: diverging (this log's epoch 2 ends at 20): " \
        "it truncates to at most 19 and fetches on" in out
    assert "it truncates to 17 and fetches on" in out
    assert "truncates to 20" not in out
    objects = [json.loads(line) for line in run("retention", "--json", leader, "--replica",
                                                "n=19:3", env={}).stdout.splitlines()]
    (f,) = [o for o in objects if o["kind"] == "follower"]
    assert (f["truncate_to"], f["truncate_exact"]) == (19, False) and check("retention", f) == []


def test_a_replica_of_another_cluster_or_the_leader_itself_is_refused(tmp_path) -> None:
    import shutil

    from clirun import run
    from conftest import FIXTURES

    from kmeta.errors import ExitCode
    from kmeta.formats.textfiles import MetaProperties
    from kmeta.storage.writer import write_meta_properties

    lag = FIXTURES / "divergent" / "lag"
    other = tmp_path / "other"
    shutil.copytree(lag / "a", other)
    write_meta_properties(other, MetaProperties(cluster_id="AnotherClusterIdXXXXXX", node_id=2),
                          overwrite=True)
    for replica, said in ((other, "not replicas of one cluster"),
                          (lag / "b" / "__cluster_metadata-0", "are the same replica")):
        proc = run("retention", lag / "b", "--replica", replica, env={})
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == ExitCode.USAGE and len(lines) == 1, proc.stderr
        assert said in lines[0] and "Traceback" not in proc.stderr
    # a replica of the same cluster is answered
    assert run("retention", lag / "b", "--replica", lag / "a", env={}).returncode == 0
