"""``kmeta info`` and ``verify`` on a broker of many partitions (issue 24, point 3).

info reads a data topic's segments at their ends (``kmeta.storage.ends``): the facts it
gives of them must be the ones a full decode gives, on the fixtures, on the real broker
dirs and on segments damaged in each way the ends can be misread.  The default text of
both commands fits two 80x24 screens on a generated broker of 300 partitions (with
findings in 100 of them for verify); ``info --partitions`` lists every partition.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import clirun
import pytest
from conftest import FIXTURES, REPO

from kmeta.formats.batch import build_batch
from kmeta.ops.info import InfoReport, info
from kmeta.storage import writer as W
from kmeta.storage.ends import segment_ends

sys.path.insert(0, str(REPO / "tests" / "bench"))

from broker import generate  # noqa: E402

FACTS = ("file", "size", "base_offset", "first_offset", "last_offset", "first_timestamp",
         "last_timestamp")
TWO_SCREENS = 48


def _segments(report: InfoReport) -> dict[str, tuple]:
    every = [p for d in report.data_dirs for p in d.partitions] + report.partitions
    return {s.file: tuple(getattr(s, k) for k in FACTS) for p in every for s in p.segments}


def _same_as_decoded(path: Path) -> int:
    """Assert the ends' facts equal a full decode's; how many segments were read at
    their ends."""
    fast = info([path])
    whole = info([path], decode=True)
    assert _segments(fast) == _segments(whole)
    return sum(not s.decoded for d in fast.data_dirs for p in d.partitions
               for s in p.segments) + sum(not s.decoded for p in fast.partitions
                                          for s in p.segments)


@pytest.mark.parametrize("case", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_the_ends_say_what_a_decode_says_on_fixtures(case: str) -> None:
    _same_as_decoded(FIXTURES / case)


def test_the_ends_say_what_a_decode_says_on_real_data(real_data: Path) -> None:
    read_at_ends = sum(_same_as_decoded(d) for d in sorted(real_data.iterdir())
                       if d.is_dir())
    assert read_at_ends > 50  # the real brokers' data topics were read at their ends


# ----------------------------------------------------------- a data partition, damaged

def _partition(tmp_path: Path, segments: int = 2, batches: int = 200) -> Path:
    """orders-0: ``segments`` segments of ``batches`` batches (about 70 KB each: larger
    than one read, so their index is used), an index entry every 256 bytes."""
    pdir = tmp_path / "orders-0"
    offset, ts = 0, 1_700_000_000_000
    with W.SegmentWriter(pdir, index_interval_bytes=256, durable=False) as w:
        for s in range(segments):
            if s:
                w.roll()
            for i in range(batches):
                # times out of order: the newest is not the last batch's
                stamp = ts + (10_000 if i == batches // 2 else i)
                w.append(build_batch(offset, [(b"k%d" % i, b"v" * 90)] * 3,
                                     base_timestamp=stamp))
                offset += 3
    return pdir


def _log(pdir: Path) -> Path:
    return sorted(pdir.glob("*.log"))[-1]


def test_a_clean_segment_is_read_from_its_last_index_entry(tmp_path: Path) -> None:
    pdir = _partition(tmp_path)
    log = _log(pdir)
    read = segment_ends(str(log), int(log.stem))
    assert read is not None and read[1] is not None
    assert read[1].walked_from > 0  # not a walk of every header from byte 0
    assert _same_as_decoded(pdir) == 2
    [fast] = info([pdir]).partitions
    assert all(not s.decoded and s.batches is None for s in fast.segments)


def _index_entries(index: Path) -> list[tuple[int, int]]:
    data = index.read_bytes()
    return [(int.from_bytes(data[i:i + 4], "big"), int.from_bytes(data[i + 4:i + 8], "big"))
            for i in range(0, len(data), 8)]


def _set_last_entry(index: Path, relative: int, position: int) -> None:
    data = bytearray(index.read_bytes())
    data[-8:] = relative.to_bytes(4, "big") + position.to_bytes(4, "big")
    index.write_bytes(bytes(data))


def _damage_mid_batch_entry(pdir: Path) -> None:
    index = _log(pdir).with_suffix(".index")
    relative, position = _index_entries(index)[-1]
    _set_last_entry(index, relative, position + 7)  # inside a batch, not at its start


def _damage_wrong_batch_entry(pdir: Path) -> None:
    index = _log(pdir).with_suffix(".index")
    entries = _index_entries(index)
    # a real batch start, but of an earlier batch than the offset it is said to hold
    _set_last_entry(index, entries[-1][0], entries[0][1])


def _preallocate_index(pdir: Path) -> None:
    index = _log(pdir).with_suffix(".index")
    with open(index, "ab") as f:  # as a broker that did not close the index leaves it
        f.write(bytes(4096 * 3))


def _drop_index(pdir: Path) -> None:
    _log(pdir).with_suffix(".index").unlink()


def _torn_tail(pdir: Path) -> None:
    log = _log(pdir)
    os.truncate(log, log.stat().st_size - 20)


def _zeros_after(pdir: Path) -> None:
    with open(_log(pdir), "ab") as f:
        f.write(bytes(500))


def _garbage_last_batch_header(pdir: Path) -> None:
    log = _log(pdir)
    data = bytearray(log.read_bytes())
    relative, position = _index_entries(log.with_suffix(".index"))[-1]
    data[position + 16] = 7  # the magic byte of the batch the last entry names
    log.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [_damage_mid_batch_entry, _damage_wrong_batch_entry,
                                    _preallocate_index, _drop_index, _torn_tail,
                                    _zeros_after, _garbage_last_batch_header])
def test_a_damaged_segment_or_index_never_misleads(damage, tmp_path: Path) -> None:
    pdir = _partition(tmp_path)
    damage(pdir)
    _same_as_decoded(pdir)
    if damage in (_torn_tail, _zeros_after, _garbage_last_batch_header):
        # decoded whole, so that what is wrong with it is said
        [fast] = info([pdir]).partitions
        assert fast.segments[-1].decoded
        assert info([pdir]).findings


def test_an_index_that_lies_is_walked_past(tmp_path: Path) -> None:
    pdir = _partition(tmp_path)
    _damage_wrong_batch_entry(pdir)
    log = _log(pdir)
    read = segment_ends(str(log), int(log.stem))
    assert read is not None and read[1] is not None and read[1].walked_from == 0


# ------------------------------------------------------------- a broker of many partitions

@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(300, 3, tmp_path_factory.mktemp("broker") / "data")


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(300, 3, tmp_path_factory.mktemp("damaged") / "data", damaged=100)


def _text(*args: object) -> tuple[int, list[str]]:
    proc = clirun.run(*args, env={"COLUMNS": "80", "PATH": os.environ.get("PATH", "")},
                      timeout=120)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    return proc.returncode, proc.stdout.splitlines()


def test_info_of_a_broker_fits_two_screens(broker: Path) -> None:
    code, lines = _text("info", broker)
    assert code == 0
    assert len(lines) <= TWO_SCREENS, "\n".join(lines)
    topics = {p.name.rsplit("-", 1)[0] for p in broker.iterdir()
              if p.is_dir() and not p.name.startswith("__")}
    assert f"data topics: {len(topics)}, partitions: 300, segments: 900" in "\n".join(lines)
    assert "__cluster_metadata-0" in lines  # the metadata log whole, first


def test_info_partitions_lists_every_partition(broker: Path) -> None:
    code, lines = _text("info", "--partitions", broker)
    assert code == 0
    on_disk = {p.name for p in broker.iterdir()
               if p.is_dir() and not p.name.startswith("__")}
    # the rows under the topic table's head (the checkpoint files above name some too)
    table = lines[next(i for i, line in enumerate(lines) if line.startswith("parts ")):]
    listed = [word for line in table for word in line.split() if word in on_disk]
    assert sorted(listed) == sorted(on_disk)  # each once


def test_info_json_is_whole_on_a_broker(broker: Path) -> None:
    proc = clirun.run("info", "--json", broker, timeout=120)
    objs = [json.loads(line) for line in proc.stdout.splitlines()]
    parts = [o for o in objs if o["kind"] == "partition_dir" and not o["is_metadata"]]
    assert len(parts) == 300
    files = [f for p in parts for f in p["segment_files"]]
    assert len(files) == 900
    assert all(f["decoded"] is False and f["batches"] is None and f["epochs"] is None
               and f["last_offset"] is not None for f in files)
    assert all(p["control_records_by_type"] is None for p in parts)
    [meta] = [o for o in objs if o["kind"] == "partition_dir" and o["is_metadata"]]
    assert all(f["decoded"] for f in meta["segment_files"]) and meta["records_by_type"]


def test_verify_of_a_broker_with_findings_in_100_partitions_fits_two_screens(
        damaged: Path) -> None:
    code, lines = _text("verify", damaged)
    assert code == 1
    assert len(lines) <= TWO_SCREENS, "\n".join(lines)
    text = "\n".join(lines)
    assert "problems in 100 partition(s)" in text
    # a code met in many partitions of many topics is one line
    codes = [line.split()[1] for line in lines if line.startswith("!! ")]
    assert codes and len(codes) == len(set(codes)), codes
    assert lines[-1].startswith("broken") or lines[-2].startswith("broken")


def test_verify_all_lists_every_finding(damaged: Path) -> None:
    _, grouped = _text("verify", damaged)
    _, every = _text("verify", "--all", damaged)
    assert len(every) > 100 > len(grouped)


def test_info_of_a_damaged_broker_fits_two_screens(damaged: Path) -> None:
    _, lines = _text("info", damaged)
    assert len(lines) <= TWO_SCREENS, "\n".join(lines)


def test_a_partition_given_alone_says_what_was_not_counted(tmp_path: Path) -> None:
    pdir = _partition(tmp_path)
    code, lines = _text("info", pdir)
    assert code == 0
    assert "  2 segment(s) read at their ends: their batches, records and epochs not " \
           "counted" in "\n".join(lines)
