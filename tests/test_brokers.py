"""``kmeta brokers``: broker and controller lifecycles (KIP-631) from the metadata log.

The real-data expectations were checked by hand against ``kmeta dump -r`` of each log: the
offsets, record types, broker ids, epochs and batch times of every RegisterBroker,
BrokerRegistrationChange, Fence/UnfenceBroker and LeaderChange record.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import run
from conftest import HEALTHY

from kmeta.core.lifecycle import duration
from kmeta.errors import UsageError
from kmeta.ops.brokers import Bound, brokers, parse_bound, parse_duration
from kmeta.output_schema import check


def _events(result) -> list[tuple[int, int, str]]:
    return [(e.offset, e.node, e.event) for e in result.events]


# quorum3-boaz kafka-3, from `kmeta dump -r`: brokers 2 and 3 register at offsets 3 and 4
# (RegisterBroker v2, brokerEpoch 2 and 4) and are unfenced by BrokerRegistrationChange v0
# fenced=-1 at 6 and 7; broker 1 registers at 310 (epoch 309) right after the LeaderChange
# of epoch 29 (offset 309) and is unfenced at 311; all three are fenced at 1392-1394
# (fenced=1, within 53 ms) with no controlled shutdown, register new incarnations at
# 1397-1399 after the LeaderChange of epoch 31 (1396), are unfenced at 1400, 1402, 1403;
# brokers 1 and 2 are fenced again at 2030-2031, and the LeaderChange of epoch 32 at 2034
# ends the log.  The log holds no topic: no broker leads anything, so each fence is what a
# clean shutdown writes too (BrokerHeartbeatManager grants SHUTDOWN_NOW to a broker that
# leads nothing) and nothing says the restarts at 1397-1399 were crashes.  Voters 1-3 are
# the brokers (combined nodes): broker 1's fence at 2030 was written by controller 1, the
# leader of epoch 31 that broker 1 registered in, so node 1's process was alive.
QUORUM3_EVENTS = [
    (3, 2, "registered"), (4, 3, "registered"), (6, 2, "unfenced"), (7, 3, "unfenced"),
    (310, 1, "registered"), (311, 1, "unfenced"),
    (1392, 2, "fenced"), (1393, 1, "fenced"), (1394, 3, "fenced"),
    (1397, 2, "re_registered"), (1398, 3, "re_registered"), (1399, 1, "re_registered"),
    (1400, 1, "unfenced"), (1402, 2, "unfenced"), (1403, 3, "unfenced"),
    (2030, 1, "fenced"), (2031, 2, "fenced"),
]


def test_quorum3_boaz_timeline(real_data: Path) -> None:
    result = brokers(real_data / "quorum3-boaz" / "data" / "kafka-3")
    assert _events(result) == QUORUM3_EVENTS
    assert (result.start_offset, result.log_end_offset) == (0, 2035)
    first = result.events[0]
    assert (first.broker_epoch, first.incarnation_id, first.state) == \
        (2, "RN-O4jpmSle9fxWQWOaoGQ", "fenced")
    assert first.timestamp == 1714532986015
    fence = result.events[6]
    assert (fence.state_before, fence.state, fence.in_state_ms) == \
        ("unfenced", "fenced", 1714533681439 - 1714532986540)
    new = {e.node: e for e in result.events if e.event == "re_registered"}
    assert new[2].broker_epoch == 1396
    assert {(e.controlled_shutdown_first, e.fence_kind) for e in new.values()} == \
        {(None, "cannot_tell")}
    assert [(e.offset, e.fence_kind) for e in result.events if e.event == "fenced"] == \
        [(1392, "cannot_tell"), (1393, "cannot_tell"), (1394, "cannot_tell"),
         (2030, "own_controller"), (2031, "cannot_tell")]
    assert [e.fenced_ms for e in result.events if e.offset == 1400] == [1714533704858 -
                                                                          1714533681439]
    assert [(s.epoch, s.leader, s.offset) for s in result.leaders] == \
        [(2, 2, 0), (29, 3, 309), (31, 1, 1396), (32, 3, 2034)]
    assert all(s.voters == [1, 2, 3] for s in result.leaders)
    # no crash and no storm: nothing on disk says so
    assert result.findings == []
    summary = {s.node: s for s in result.summary}
    assert (summary[1].state, summary[1].broker_epoch, summary[1].crashes) == \
        ("fenced", 1399, None)
    assert summary[3].state == "unfenced"
    # 2,031 metadata records (2,012 NoOps) and 4 LeaderChange records: verify's 2,035
    assert (result.metadata_records, result.control_records, result.records) == \
        (2031, 4, 2035)


def test_quorum3_lagging_replica_tells_the_same_story(real_data: Path) -> None:
    # kafka-1 lacks only the LeaderChange batch of epoch 32
    result = brokers(real_data / "quorum3-boaz" / "data" / "kafka-1")
    assert _events(result) == QUORUM3_EVENTS
    assert [s.epoch for s in result.leaders] == [2, 29, 31]


def test_data_store_is_a_state_without_history(real_data: Path) -> None:
    # no log segment: the newest snapshot, 63224-9, holds broker 1 unfenced at epoch 41581
    result = brokers(real_data / "data-store")
    assert result.snapshot_only and result.events == [] and result.leaders == []
    assert result.snapshot is not None and result.snapshot.name.startswith("00000000000000063224")
    assert [(s.role, s.node, s.state, s.broker_epoch) for s in result.summary] == \
        [("broker", 1, "unfenced", 41581), ("controller", 1, "registered", None)]


def test_kraft41_controlled_shutdown_moves_every_leadership(real_data: Path) -> None:
    # offset 1137: BrokerRegistrationChange v1 inControlledShutdown=1, then 52
    # PartitionChangeRecords in its batch take broker 1 out of every ISR and leadership;
    # offset 1190: fenced=1
    result = brokers(real_data / "kraft41-offsets")
    shutdown = [e for e in result.events if e.event == "controlled_shutdown"]
    assert [(e.offset, e.left_isr, e.lost_leadership) for e in shutdown] == [(1137, 52, 52)]
    last = result.events[-1]
    assert (last.offset, last.event, last.state_before, last.state) == \
        (1190, "fenced", "controlled_shutdown", "shut_down")
    assert [(e.role, e.node, e.event) for e in result.events[:2]] == \
        [("controller", 1, "registered"), ("broker", 1, "registered")]


def test_kraft32_old_records_and_one_batch_fencing_all(real_data: Path) -> None:
    # Kafka 3.2, no FeatureLevelRecord: RegisterBroker v0 at 1-3, UnfenceBroker at 4-6, and
    # one batch (131-187) holding FenceBroker records of brokers 1, 2, 3 at 148, 165, 187
    result = brokers(real_data / "kraft32-three" / "data" / "kafka1")
    assert _events(result) == [
        (1, 1, "registered"), (2, 3, "registered"), (3, 2, "registered"),
        (4, 1, "unfenced"), (5, 3, "unfenced"), (6, 2, "unfenced"),
        (148, 1, "fenced"), (165, 2, "fenced"), (187, 3, "fenced")]
    assert {e.record for e in result.events} == \
        {"REGISTER_BROKER_RECORD", "UNFENCE_BROKER_RECORD", "FENCE_BROKER_RECORD"}
    # the batch before (71-130) moved every leadership away: the controlled shutdowns of
    # Kafka 3.2, which write no record of the broker; the fences take none, so they are
    # what clean shutdowns write, not a fencing storm
    assert [(e.lost_leadership, e.fence_kind) for e in result.events[6:]] == \
        [(0, "cannot_tell")] * 3
    assert result.findings == []
    # no FeatureLevelRecord: below 3.3-IV3, where controlled shutdowns are not on disk
    assert {s.controlled_shutdowns for s in result.summary} == {None}


def test_ldi_poc_amended_registration_with_a_new_epoch(real_data: Path) -> None:
    # Kafka 3.7: broker 1 registers at 6 and again at 8 with the same incarnation, epoch 8
    result = brokers(real_data / "ldi-poc")
    amended = [e for e in result.events if e.event == "amended"]
    assert [(e.offset, e.broker_epoch) for e in amended] == [(8, 8)]
    assert [(f.code, f.severity.value) for f in result.findings] == [("V130", "info")]


def test_healthy_fixture_long_fences() -> None:
    result = brokers(HEALTHY)
    codes = [(f.code, f.details.get("broker")) for f in result.findings]
    assert codes == [("V132", 4), ("V132", 7)]
    assert result.findings[1].details["ongoing"] is True
    kinds = {e.event for e in result.events}
    assert {"registered", "re_registered", "unfenced", "fenced", "controlled_shutdown",
            "unregistered", "log_dirs"} <= kinds
    shorter = brokers(HEALTHY, fenced_longer_than_ms=30 * 60 * 1000)
    assert [f.code for f in shorter.findings] == []


def test_filters(real_data: Path) -> None:
    path = real_data / "quorum3-boaz" / "data" / "kafka-3"
    only = brokers(path, broker=2)
    assert {e.node for e in only.events} == {2}
    assert [s.node for s in only.summary] == [2]
    assert [s.leader for s in only.leaders] == [2]
    idle, _ = _lifecycle("idle")
    assert [(f.code, f.offset) for f in brokers(idle, broker=1).findings] == [("V131", 26)]
    assert [f.code for f in brokers(idle, broker=3).findings] == []
    window = brokers(path, since=Bound(offset=1392), until=Bound(offset=1399))
    assert [e.offset for e in window.events] == [1392, 1393, 1394, 1397, 1398, 1399]
    assert [s.epoch for s in window.leaders] == [29, 31]
    # times: 03:21:21.439 is the first fence, 03:21:44.437 the new incarnations
    timed = brokers(path, since=parse_bound("2024-05-01T03:21:21Z", "--since"),
                    until=parse_bound("2024-05-01 03:21:44.500", "--until"))
    assert [e.offset for e in timed.events] == [1392, 1393, 1394, 1397, 1398, 1399]
    assert brokers(path, since=parse_bound("2030-01-01", "--since")).events == []


def test_from_a_snapshot(real_data: Path) -> None:
    from_snap = brokers(HEALTHY, from_offset=8000)
    assert from_snap.snapshot is not None and from_snap.start_offset <= 8000
    assert all(e.offset >= from_snap.start_offset for e in from_snap.events)
    # a broker fenced before the snapshot: its fenced time is not known, so no V132 for it
    assert all(e.fenced_ms is None or e.offset > from_snap.start_offset
               for e in from_snap.events)


def test_parsing() -> None:
    assert parse_bound("1234", "--since") == Bound(offset=1234)
    assert parse_bound("2024-05-01T00:00:00Z", "--since").time_ms == 1714521600000
    assert parse_bound("2024-05-01T02:00:00+02:00", "--since").time_ms == 1714521600000
    for bad in ("yesterday", "-5", "12ab"):
        with pytest.raises(UsageError):
            parse_bound(bad, "--since")
    assert [parse_duration(t, "-") for t in ("90s", "5min", "5m", "2h", "1d", "1500ms")] == \
        [90_000, 300_000, 300_000, 7_200_000, 86_400_000, 1500]
    for bad in ("5", "five minutes", "-1s", "s"):
        with pytest.raises(UsageError):
            parse_duration(bad, "--fenced-longer-than")
    assert [duration(ms) for ms in (850, 12_000, 424_000, 12_000_000, 190_000_000)] == \
        ["850 ms", "12 s", "7 min 4 s", "3 h 20 min", "2 d 4 h"]


def test_cli_text_fits_80_columns_and_json_matches_its_schema(real_data: Path) -> None:
    path = real_data / "quorum3-boaz" / "data" / "kafka-3"
    text = run("brokers", path, env={"COLUMNS": "80"})
    assert text.returncode == 0, text.stderr
    assert all(len(line) <= 80 for line in text.stdout.splitlines())
    assert "broker 2: fenced after 11 min 34 s unfenced; it" in text.stdout
    assert "(2,031 metadata + 4 control records)" in text.stdout
    assert "not on disk: heartbeats" in text.stdout
    assert "V131" not in text.stdout and "V133" not in text.stdout
    out = run("brokers", "--json", path, env={})
    objects = [json.loads(line) for line in out.stdout.splitlines()]
    assert [o["kind"] for o in objects].count("node_event") == len(QUORUM3_EVENTS)
    assert objects[-1]["kind"] == "brokers_summary"
    for o in objects:
        assert check("brokers", o) == [], o


def test_cli_wrong_input(tmp_path: Path, real_data: Path) -> None:
    assert run("brokers", "/etc", env={}).returncode == 3
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    bad = run("brokers", text, env={})
    assert bad.returncode == 3 and "Traceback" not in bad.stderr  # no Kafka file
    assert len(bad.stderr.strip().splitlines()) == 1
    many = run("brokers", real_data / "quorum3-boaz", env={})
    assert many.returncode == 2 and "3 metadata partitions found" in many.stderr
    for args in (("--since", "yesterday"), ("--fenced-longer-than", "5"), ("--from", "-1")):
        r = run("brokers", *args, HEALTHY, env={})
        assert r.returncode == 2 and "Traceback" not in r.stderr, (args, r.stderr)
    absent = run("brokers", "--broker", "42", HEALTHY, env={})
    assert absent.returncode == 0 and "node 42 is not in" in absent.stderr


# ------------------------------------------- the scripted lifecycle fixtures (generate.py)

def _lifecycle(name: str) -> tuple[Path, dict]:
    from conftest import FIXTURES

    root = FIXTURES / "lifecycle"
    return root / name, json.loads((root / "MANIFEST.json").read_text())[name]


@pytest.mark.parametrize("name", ["new-mv", "old-mv"])
def test_lifecycle_fixture_changes_and_what_they_moved(name: str) -> None:
    path, truth = _lifecycle(name)
    result = brokers(path)
    told = {(e.offset, e.node): e for e in result.events}
    for change in truth["changes"]:
        e = told[change["offset"], change["broker"]]
        assert e.event == change["event"], change
        for key in ("left_isr", "lost_leadership", "gained_leadership"):
            if key in change:
                assert getattr(e, key) == change[key], (change, e)
    codes = [(f.code, f.details.get("broker"), f.details.get("brokers")) for f in result.findings]
    # broker 3 crashed and stayed fenced 7 min 4 s; brokers 1, 4 and 5 were fenced in 3 s
    assert ("V132", 3, None) in codes and ("V133", None, [1, 4, 5]) in codes
    storm = next(f for f in result.findings if f.code == "V133")
    assert "quorum leader changed near it (epoch 2, controller 3001" in storm.message
    amended = [e for e in result.events if e.event == "amended"]
    assert [(e.node, e.broker_epoch) for e in amended] == [(4, 8 if name == "new-mv" else 5)]
    assert not any(f.code == "V130" for f in result.findings)
    restarts = {e.node: e.controlled_shutdown_first for e in result.events
                if e.event == "re_registered"}
    if name == "new-mv":
        # broker 2 went through controlled shutdown, broker 3 crashed (its fence took
        # leaderships away)
        assert restarts == {2: True, 3: False}
        assert [c for c, b, _ in codes if c == "V131"] == ["V131"]
        assert [(e.node, e.state) for e in result.events if e.event == "unregistered"] == \
            [(5, "unregistered")]
        assert {e.record for e in result.events} >= {"BROKER_REGISTRATION_CHANGE_RECORD",
                                                     "REGISTER_CONTROLLER_RECORD",
                                                     "UNREGISTER_BROKER_RECORD"}
    else:
        # below 3.3-IV3 no record names a broker in controlled shutdown: its leader moves
        # come alone, then a fence that takes none, which a lost session of a broker
        # leading nothing writes too; broker 3's fence took leaderships, so it crashed
        assert restarts == {2: None, 3: False}
        assert [(c, b) for c, b, _ in codes if c == "V131"] == [("V131", 3)]
        assert {s.controlled_shutdowns for s in result.summary if s.role == "broker"} == \
            {None}
        assert {e.record for e in result.events} >= {"FENCE_BROKER_RECORD",
                                                     "UNFENCE_BROKER_RECORD"}


def test_lifecycle_fixture_from_its_snapshot_and_the_snapshot_alone() -> None:
    path, truth = _lifecycle("new-mv")
    mid = truth["snapshots"][0]
    result = brokers(path, from_offset=mid)
    assert result.start_offset == mid and result.snapshot is not None
    assert all(e.offset >= mid for e in result.events)
    # broker 1 was unfenced before the snapshot: how long is not known
    first = next(e for e in result.events if e.node == 1)
    assert first.event == "fenced" and first.in_state_ms is None
    alone = brokers(result.snapshot)
    assert alone.snapshot_only and alone.events == []
    assert {s.node: s.state for s in alone.summary if s.role == "broker"} == \
        {1: "unfenced", 2: "unfenced", 3: "unfenced", 4: "unfenced", 5: "unfenced"}


def test_damaged_logs_give_findings_not_a_crash() -> None:
    from conftest import CORRUPT

    for part in sorted(CORRUPT.glob("*/__cluster_metadata-0")):
        r = run("brokers", part, env={})
        assert r.returncode in (0, 1, 3) and "Traceback" not in r.stderr, (part, r.stderr)
    from conftest import VERIFY

    for case in ("v003-gap", "v003-overlap", "v009-missing-segment"):
        r = run("brokers", VERIFY / case, env={})
        assert r.returncode in (0, 1) and "not on disk:" in r.stdout, (case, r.stderr)


# ------------------------------- what the log can and cannot tell of how a broker stopped

def test_combined_node_fence_by_its_own_controller_is_not_a_crash() -> None:
    # combined: node 1 alone.  Its clean shutdown while leading nothing is a plain fence
    # (7) in epoch 1, where it registered; the restart (10) is no crash.  Then it crashes
    # leading `logs`: the restarted controller (epoch 3) fences it (23) and it comes back.
    path, truth = _lifecycle("combined")
    result = brokers(path)
    fences = [(e.offset, e.fence_kind, e.lost_leadership) for e in result.events
              if e.event == "fenced"]
    assert fences == [(7, "own_controller", 0), (23, "uncontrolled", 3)]
    restarts = [(e.offset, e.controlled_shutdown_first) for e in result.events
                if e.event == "re_registered" and e.role == "broker"]
    assert restarts == [(truth["marks"]["restart"], None),
                        (truth["marks"]["crash_restart"], False)]
    assert [(f.code, f.offset) for f in result.findings] == \
        [("V131", truth["marks"]["crash_restart"])]
    assert "led partitions" in result.findings[0].message
    summary = {(s.role, s.node): s for s in result.summary}
    assert summary["broker", 1].crashes is None  # the first restart cannot be judged
    assert summary["controller", 1].crashes == 0  # a controller's restarts are not judged


def test_fence_of_a_broker_leading_nothing_cannot_tell() -> None:
    # idle: broker 3 leads nothing when fenced (18): a clean shutdown and a lost session
    # are the same records, so its restart is neither; broker 1 loses leaderships at its
    # fence (25): no clean shutdown, a crash (V131); broker 2 stays fenced from 36 on
    path, truth = _lifecycle("idle")
    result = brokers(path)
    kinds = {e.offset: e.fence_kind for e in result.events if e.event == "fenced"}
    assert kinds == {18: "cannot_tell", 25: "uncontrolled", 36: "uncontrolled"}
    assert [(f.code, f.details.get("broker")) for f in result.findings] == \
        [("V131", 1), ("V132", 2)]
    summary = {s.node: s for s in result.summary if s.role == "broker"}
    assert (summary[1].crashes, summary[3].crashes) == (1, None)
    text = run("brokers", path, env={"COLUMNS": "80"}).stdout
    assert "broker 3: new incarnation after 1 min fenced: clean\n      shutdown or crash" \
        in text
    row = next(line for line in text.splitlines() if line.startswith("broker 3 "))
    assert row.split()[6] == "?"  # CRASHES


def test_fenced_for_counts_a_fence_still_open_at_the_end() -> None:
    path, truth = _lifecycle("idle")
    result = brokers(path)
    fence = next(e for e in result.events if e.offset == 36)
    broker2 = next(s for s in result.summary if s.node == 2)
    # 500 ms fenced after registering, then from its fence to the last batch read
    assert broker2.fenced_ms == 500 + result.last_timestamp - fence.timestamp
    assert broker2.longest_fenced_ms == result.last_timestamp - fence.timestamp
    # a window that stops before the end does not count the open fence
    early = brokers(path, until=Bound(offset=35))
    assert next(s for s in early.summary if s.node == 2).fenced_ms == 500
    text = run("brokers", path, env={"COLUMNS": "80"}).stdout
    row = next(line for line in text.splitlines() if line.startswith("broker 2 "))
    assert row.endswith("10 min 1 s")


def test_counts_the_log_cannot_know_are_unknown(real_data: Path) -> None:
    old, _ = _lifecycle("old-mv")
    result = brokers(old)
    assert {s.controlled_shutdowns for s in result.summary if s.role == "broker"} == {None}
    new, _ = _lifecycle("new-mv")
    assert {s.node: s.controlled_shutdowns for s in brokers(new).summary
            if s.role == "broker"} == {1: 0, 2: 1, 3: 0, 4: 0, 5: 1}
    lone = brokers(real_data / "data-store")
    for s in lone.summary:
        assert (s.registrations, s.incarnations, s.fences, s.controlled_shutdowns,
                s.crashes, s.fenced_ms, s.longest_fenced_ms) == (None,) * 7, s
    out = run("brokers", "--json", real_data / "data-store", env={})
    summary = json.loads(out.stdout.splitlines()[-1])
    assert summary["nodes"][0]["registrations"] is None
    assert summary["nodes"][0]["crashes"] is None
    assert check("brokers", summary) == []
    text = run("brokers", real_data / "data-store", env={"COLUMNS": "80"}).stdout
    row = next(line for line in text.splitlines() if line.startswith("broker 1 "))
    assert row.split()[4:] == ["?", "?", "?", "?"]


def test_a_log_start_no_snapshot_covers_is_told_from_the_start() -> None:
    # log-start: new-mv's log from offset 67 on (the snapshot that covered 0-66 is gone),
    # one snapshot at 133.  Every change on disk is told; before 133 what came before a
    # node's first record here is unknown.
    path, truth = _lifecycle("log-start")
    result = brokers(path)
    start = truth["log_start"]
    assert (result.start_offset, result.state_known_from) == (start, 133)
    assert result.snapshot is None and result.exact_snapshot is not None
    told = {(e.offset, e.node): e.event for e in result.events}
    for change in truth["changes"]:
        assert told.get((change["offset"], change["broker"])) == change["event"], change
    first = {}
    for e in result.events:
        first.setdefault(e.node, e)
    assert (first[2].offset, first[2].state_before, first[2].left_isr) == \
        (67, "unknown", None)
    assert first[3].state_before == "unknown"
    # nothing says the restarts of brokers 2 and 3 were crashes, nor what they moved
    assert not any(f.code == "V131" for f in result.findings)
    assert not any(f.severity.value == "error" for f in result.findings), result.findings
    assert [e.fence_kind for e in result.events if e.offset in (67, 108)] == \
        ["cannot_tell", "cannot_tell"]
    # from the snapshot on, the state is exact: the storm is told as before
    assert any(f.code == "V133" for f in result.findings)
    # --from the log start is the same story; --from the snapshot starts there
    assert _events(brokers(path, from_offset=start)) == _events(result)
    assert brokers(path, from_offset=133).start_offset == 133
    text = run("brokers", path, env={"COLUMNS": "80"})
    assert text.returncode == 0, text.stderr
    assert all(len(line) <= 80 for line in text.stdout.splitlines())
    assert "which no snapshot covers" in text.stdout
    assert "is\n    not on disk up to offset 133" in text.stdout or \
        "not on disk up to offset 133" in text.stdout.replace("\n    ", " ")
    out = run("brokers", "--json", path, env={})
    objects = [json.loads(line) for line in out.stdout.splitlines()]
    for o in objects:
        assert check("brokers", o) == [], o
    assert objects[-1]["state_known_from"] == 133


def test_a_log_start_without_any_usable_snapshot(tmp_path: Path) -> None:
    import shutil

    path, truth = _lifecycle("log-start")
    part = tmp_path / "__cluster_metadata-0"
    shutil.copytree(path / "__cluster_metadata-0", part)
    for snap in part.glob("*.checkpoint"):
        snap.unlink()
    result = brokers(part)
    assert (result.start_offset, result.state_known_from) == (truth["log_start"], None)
    assert len(result.events) >= len(truth["changes"])
    assert all(e.left_isr is None for e in result.events)
    assert not any(f.severity.value == "error" for f in result.findings), result.findings
    text = run("brokers", part, env={"COLUMNS": "80"})
    assert text.returncode == 0 and "no usable snapshot" in text.stdout


def test_a_long_fence_names_its_threshold_and_the_option_that_sets_it() -> None:
    """V132 read "longer than --fenced-longer-than" in a report, which has no such option,
    and never said the value: each now names both, and the option is brokers'."""
    from kmeta.findings import CODES

    assert "kmeta brokers --fenced-longer-than (default 5min)" in CODES["V132"].meaning
    result = brokers(HEALTHY)
    assert all(f.message.endswith(", over 5 min (kmeta brokers --fenced-longer-than)")
               for f in result.findings if f.code == "V132")
    longer = brokers(HEALTHY, fenced_longer_than_ms=60_000)
    assert all(f.message.endswith(", over 1 min (kmeta brokers --fenced-longer-than)")
               for f in longer.findings if f.code == "V132")


def test_the_time_fenced_column_says_it_is_a_total(real_data: Path) -> None:
    """kraft32-three: STATE fenced beside "FENCED FOR 296 ms" read as the current fence;
    it is every fence's time, summed."""
    text = run("brokers", real_data / "kraft32-three" / "data" / "kafka1").stdout
    head = next(line for line in text.splitlines() if line.startswith("NODE "))
    assert head.endswith("CRASHES  TOTAL FENCED") and "FENCED FOR" not in text
    assert len(head) <= 80
