"""``kmeta tiering`` (KIP-405 remote segments, KIP-1023 follower bootstrap): the rules of
``core/tiering`` on the KIP's walk-through and Kafka's fetcher cases, and the command on
``fixtures/data/tiering``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import run

from kmeta.core.epochs import EpochCache
from kmeta.core.tiering import (
    RemoteLog,
    RemoteSegment,
    bootstrap,
    earliest_pending_upload,
    highest_remote_offset,
)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "tiering"


def _segment(sid: str, start: int, end: int, epochs: dict[int, int]) -> RemoteSegment:
    return RemoteSegment(sid, start, end, epochs, 100, 0, 1, 0, 0, 0)


def _remote(*segments: RemoteSegment, finish: bool = True) -> RemoteLog:
    log = RemoteLog()
    for s in segments:
        log.add(s)
        if finish:
            log.update(s.segment_id, 1, 1, 0, 0)
    return log


def test_the_kips_walk_through() -> None:
    # epochs 0@0, 1@3, 2@5, 3@7; local log 3-7; remote segments 0-2 (0@0), 3-5 (1@3, 2@5)
    cache = EpochCache.from_entries([(0, 0), (1, 3), (2, 5), (3, 7)])
    remote = _remote(_segment("a", 0, 2, {0: 0}), _segment("b", 3, 5, {1: 3, 2: 5}))
    highest = highest_remote_offset(remote, cache, 8)
    assert highest == 5
    assert earliest_pending_upload(highest, 0, 3) == 6  # max(5 + 1, 0, 3)
    replicated = {3: (5, 500), 6: (2, 200), 0: (5, 500)}
    classic, kip = bootstrap(cache, 0, 3, 8, 6, replicated)
    assert kip.fetch_from == 6 and kip.epochs == ((0, 0), (1, 3), (2, 5))
    assert (kip.records, kip.bytes) == (2, 200)
    assert classic.fetch_from == 3 and "out of range" in classic.why


@pytest.mark.parametrize(("highest", "log_start", "local", "expected"), [
    # Kafka's fetcher cases: log start 0, local 10 -> EPUO 10; EPUO 150; all uploaded: 200
    (9, 0, 10, 10), (149, 0, 10, 150), (199, 0, 10, 200),
    # nothing uploaded: the log start if the local log starts there, else unknown (wait)
    (-1, 0, 0, 0), (-1, 0, 10, None),
    # a log start above everything tiered
    (5, 20, 10, 20),
])
def test_earliest_pending_upload(highest, log_start, local, expected) -> None:
    assert earliest_pending_upload(highest, log_start, local) == expected


def test_highest_remote_offset_walks_down_the_epochs_and_caps_at_their_end() -> None:
    cache = EpochCache.from_entries([(0, 0), (2, 100)])
    # a segment copied by an old leader claims epoch 0 up to 150, but epoch 0 ends at 100
    remote = _remote(_segment("a", 0, 150, {0: 0}))
    assert highest_remote_offset(remote, cache, 200) == 99
    # nothing for the latest epoch: the one below answers
    remote = _remote(_segment("a", 0, 49, {0: 0}))
    assert highest_remote_offset(remote, cache, 200) == 49
    # only copies under way: nothing tiered
    assert highest_remote_offset(_remote(_segment("a", 0, 49, {0: 0}), finish=False),
                                 cache, 200) == -1


def test_state_transitions_kafka_drops() -> None:
    log = _remote(_segment("a", 0, 9, {0: 0}))
    log.update("a", 0, 1, 0, 7)  # FINISHED -> STARTED
    log.update("zz", 1, 1, 0, 8)  # unknown segment
    log.add(RemoteSegment("b", 10, 19, {0: 10}, 100, 1, 1, 0, 0, 9))  # added as FINISHED
    assert len(log.dropped) == 3 and "b" not in log.segments
    log.update("a", 2, 1, 0, 10)
    log.update("a", 3, 1, 0, 11)
    assert "a" not in log.segments and [s.segment_id for s in log.forgotten] == ["a"]
    assert log.highest_by_epoch == {0: 9}  # a deletion never lowers it


def _json(*args) -> tuple[list[dict], object]:
    out = run("tiering", "--json", *args, env={})
    return [json.loads(line) for line in out.stdout.splitlines()], out


def test_the_walk_through_on_disk() -> None:
    objects, out = _json(FIXTURE / "seed-example" / "tiered-0")
    assert out.returncode == 0 and out.stderr == ""
    (part,) = [o for o in objects if o["kind"] == "tiered_partition"]
    assert part["last_tiered_offset"] == 5 and part["earliest_pending_upload"] == 6
    assert [(e["epoch"], e["start_offset"]) for e in part["kip1023"]["epoch_cache"]] == \
        [(0, 0), (1, 3), (2, 5)]
    assert (part["classic"]["fetch_from"], part["kip1023"]["fetch_from"]) == (3, 6)
    assert (part["classic"]["records"], part["kip1023"]["records"]) == (5, 2)
    assert part["found_in"][0].endswith(f"__remote_log_metadata-{part['metadata_partition']}")


def test_a_broker_with_a_tiered_topic() -> None:
    objects, out = _json(FIXTURE / "broker")
    parts = {o["partition"]: o for o in objects if o["kind"] == "tiered_partition"}
    p0 = parts[0]
    assert (p0["last_tiered_offset"], p0["earliest_pending_upload"]) == (899, 900)
    assert (p0["classic"]["records"], p0["kip1023"]["records"]) == (1000, 100)
    assert 0.05 < p0["ratio"] < 0.15  # "as low as 10-15%"
    states = [o["state"] for o in objects if o["kind"] == "remote_segment"
              and o["partition"] == 0]
    assert states.count("COPY_SEGMENT_FINISHED") == 4 and "COPY_SEGMENT_STARTED" in states
    assert p0["remote_segments_deleted"] == 1
    assert parts[1]["earliest_pending_upload"] == 0  # nothing uploaded, starts at 0
    assert parts[2]["earliest_pending_upload"] is None  # nothing uploaded, starts above
    assert parts[2]["kip1023"]["fetch_from"] is None
    assert parts[3]["earliest_pending_upload"] == 200
    codes = [o["code"] for o in objects if o["kind"] == "finding"]
    for code in ("V150", "V151", "V152", "V153"):
        assert code in codes, code
    assert codes.count("V151") == 2  # the gap and the overlap


def test_text_reads_well_in_80_columns() -> None:
    out = run("tiering", FIXTURE / "broker", env={"COLUMNS": "80"})
    assert "KIP-1023: fetches from 900: 100 records" in out.stdout
    assert all(len(line) <= 80 for line in out.stdout.splitlines())


def _block(text: str, name: str) -> list[str]:
    lines = text.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith(f"{name}:"))
    return lines[i:lines.index("", i) if "" in lines[i:] else None]


def test_a_partition_with_nothing_tiered_explains_no_remote_storage(tmp_path: Path) -> None:
    import shutil

    out = run("tiering", FIXTURE / "broker", env={"COLUMNS": "200"})
    # events-1 and -2: no remote segment; their metadata partitions (29, 8) are not here
    for name, home in (("events-1", 29), ("events-2", 8)):
        block = _block(out.stdout, name)
        assert block[1:] == [f"  nothing tiered as far as this disk tells: "
                             f"__remote_log_metadata-{home}, where Kafka's partitioner puts "
                             "its metadata, is not here (--metadata-dir)"], block
    assert "the earliest-pending-upload offset is unknown" not in out.stdout
    # its own metadata partition read, and no record of it names events-1: no "as far as"
    shutil.copytree(FIXTURE / "broker" / "events-1", tmp_path / "events-1")
    shutil.copytree(FIXTURE / "broker" / "__remote_log_metadata-14",
                    tmp_path / "__remote_log_metadata-29")  # records of events-0 only
    out = run("tiering", tmp_path / "events-1", env={"COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1:] == [
        "", "events-1: log start 0, local log 0..199, log end 200; 1 local segment(s), 4.2 KiB",
        "  nothing tiered: no record of __remote_log_metadata-29 (where Kafka's partitioner "
        "puts its metadata) names it"]
    (part,) = [o for o in map(json.loads, run("tiering", "--json", tmp_path / "events-1",
                                              env={}).stdout.splitlines())
               if o["kind"] == "tiered_partition"]
    assert part["notes"] == ["nothing tiered: no record of __remote_log_metadata-29 (where "
                             "Kafka's partitioner puts its metadata) names it"]


@pytest.mark.parametrize(("where", "says"), [
    (FIXTURE.parents[0] / "healthy", "no __remote_log_metadata partition in"),
    (FIXTURE.parents[0] / "corrupt" / "pristine", "no user topic partition in"),
])
def test_nothing_tiered_here_is_not_an_error(where: Path, says: str) -> None:
    out = run("tiering", where, env={"COLUMNS": "300"})
    assert out.returncode == 0 and out.stderr == "", out.stderr
    (line,) = out.stdout.splitlines()
    assert line.startswith(f"nothing tiered here: {says}"), line
    objects = [json.loads(x) for x in run("tiering", "--json", where, env={}).stdout.splitlines()]
    assert [(o["kind"], o["partitions"], o["metadata_dirs"]) for o in objects] == \
        [("tiering_summary", 0, [])]


@pytest.mark.parametrize(("args", "says"), [
    ([str(FIXTURE / "seed-example" / "__remote_log_metadata-42")], "no user topic partition"),
    ([str(FIXTURE / "seed-example" / "tiered-0"), "--metadata-dir", "/etc"], "no Kafka files"),
    ([str(FIXTURE / "seed-example" / "tiered-0"), "--local-retention", "soon"], "duration"),
    ([str(FIXTURE / "seed-example" / "tiered-0"), "--metadata-dir",
      str(FIXTURE / "broker" / "events-0")], "no __remote_log_metadata"),
])
def test_wrong_input(args, says) -> None:
    out = run("tiering", *args, env={})
    assert out.returncode in (2, 3) and says in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


def test_the_metadata_partition_is_kafkas_choice() -> None:
    # with another partition count the partitioner chooses another partition: reported
    out = run("tiering", FIXTURE / "seed-example" / "tiered-0", "--metadata-partitions", "7",
              env={})
    assert "V154" in out.stdout
