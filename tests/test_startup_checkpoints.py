"""``kmeta startup``: the offsets a partition's checkpoints name past the log Kafka loads
(kmeta.ops.startup.offsets): a high watermark past the log end is committed records the
broker will not have (V212, exit 1); a recovery point past it alone is flushed records
Kafka lowers its recovery point over without a word (V213, a warning).  Built with
kmeta's writer; LogLoaderTest's testLogEndLessThanStartAfterReopen and UnifiedLogTest's
testLoadPartitionDirWithNoSegmentsShouldNotThrow (apache/kafka trunk 2024-10) rebuilt
with a high watermark beside them."""

from __future__ import annotations

import json
from pathlib import Path

from kmeta import output_schema as schema
from kmeta.formats.batch import build_batch
from kmeta.formats.filenames import segment_file_name
from kmeta.formats.textfiles import TopicPartitionOffset
from kmeta.ops.report.build import build_report
from kmeta.ops.startup import plan_startup
from kmeta.render.startup import startup_lines
from kmeta.storage import writer as W
from tests.clirun import run

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "startup" / "checkpoints"


def _checkpoint(path: Path, offsets: dict[int, int], topic: str = "orders") -> None:
    W.write_offset_checkpoint(path, [TopicPartitionOffset(topic, n, o)
                                     for n, o in sorted(offsets.items())], durable=False)


def _log_dir(root: Path, *, clean: bool = True, recovery: dict[int, int] | None = None,
             start: dict[int, int] | None = None, hw: dict[int, int] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if clean:
        (root / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":1}')
    _checkpoint(root / "recovery-point-offset-checkpoint", recovery or {})
    _checkpoint(root / "log-start-offset-checkpoint", start or {})
    if hw is not None:
        _checkpoint(root / "replication-offset-checkpoint", hw)
    return root


def _records(part: Path, count: int, per_segment: int = 10) -> None:
    with W.SegmentWriter(part) as w:
        for i in range(count):
            if i and i % per_segment == 0:
                w.roll()
            w.append(build_batch(i, [(b"k", b"v%d" % i)], base_timestamp=1_000 + i,
                                 leader_epoch=0))


def _codes(report) -> list[tuple[str, str]]:
    return sorted((f.code, Path(f.file).name) for f in report.findings
                  if f.code in ("V212", "V213"))


def test_a_high_watermark_past_the_log_end_is_committed_records_lost(tmp_path: Path) -> None:
    # a real broker's copy: the high watermark 14 records past the log end
    d = _log_dir(tmp_path / "d", recovery={0: 20}, hw={0: 34})
    _records(d / "orders-0", 20)
    report = plan_startup([str(d)])
    (p,) = report.partitions
    assert (p.log_end_offset, p.high_watermark) == (20, 34)
    assert p.committed_missing == range(20, 34) and not p.flushed_missing
    (f,) = [f for f in report.findings if f.code == "V212"]
    assert f.severity.value == "error" and f.offset == 20
    assert "offsets 20..33, below the high watermark 34" in f.message
    assert "not on disk" in f.message and "drops to 20" in f.message
    assert report.loses_data and not report.refusals
    text = "\n".join(startup_lines(report, [str(d)]))
    assert "every record" not in text and "LOSES COMMITTED RECORDS: 14 offsets" in text
    assert "LACKS COMMITTED offsets 20..33 (high watermark 34)" in text


def test_without_the_high_watermark_file_nothing_is_said_committed(tmp_path: Path) -> None:
    d = _log_dir(tmp_path / "d", recovery={0: 20})
    _records(d / "orders-0", 20)
    report = plan_startup([str(d)])
    assert _codes(report) == [] and not report.loses_data
    assert report.partitions[0].high_watermark is None


def test_a_recovery_point_alone_past_the_end_is_a_warning(tmp_path: Path) -> None:
    """LogLoader.recoverLog: min(checkpoint, log end) (2.8+), quietly; none of the
    offsets was committed, so the broker keeps every committed record."""
    d = _log_dir(tmp_path / "d", clean=False, recovery={0: 30}, hw={0: 20})
    _records(d / "orders-0", 20)
    report = plan_startup([str(d)])
    (p,) = report.partitions
    assert p.flushed_missing == range(20, 30) and not p.committed_missing
    assert _codes(report) == [("V213", "orders-0")] and not report.loses_data
    (f,) = [f for f in report.findings if f.code == "V213"]
    assert f.severity.value == "warning" and "none is below the high watermark 20" in f.message
    text = "\n".join(startup_lines(report, [str(d)]))
    assert "every committed record, but not with 10 offsets flushed once in 1 log" in text
    proc = run("startup", d)
    assert proc.returncode == 0, proc.stdout


def test_a_recovery_point_past_the_end_without_a_high_watermark(tmp_path: Path) -> None:
    d = _log_dir(tmp_path / "d", recovery={0: 12}, hw={})
    _records(d / "orders-0", 10)
    report = plan_startup([str(d)])
    (f,) = [f for f in report.findings if f.code == "V213"]
    assert "offsets 10..11" in f.message and "says whether any was committed" in f.message


def test_a_dir_without_segments_starts_empty_and_lacks_its_committed_records(
        tmp_path: Path) -> None:
    """UnifiedLogTest.testLoadPartitionDirWithNoSegmentsShouldNotThrow: one empty
    segment, at the log start checkpoint (0 here); the high watermark 10 says offsets
    0..9 were committed (a copy that left the .log files out)."""
    d = _log_dir(tmp_path / "d", recovery={0: 10}, hw={0: 10})
    (d / "orders-0").mkdir()
    report = plan_startup([str(d)])
    (p,) = report.partitions
    assert (p.segments, p.log_start_offset, p.log_end_offset) == (0, 0, 0)
    assert p.committed_missing == range(0, 10) and p.flushed_missing == range(0, 10)
    (f,) = [f for f in report.findings if f.code == "V212"]
    assert "creates an empty segment at 0 (the dir holds none)" in f.message
    assert report.loses_data


def test_a_dir_without_segments_at_its_log_start_misses_nothing(tmp_path: Path) -> None:
    # checkpoints all at 35,351: retention had removed everything below it
    d = _log_dir(tmp_path / "d", recovery={0: 35351}, start={0: 35351}, hw={0: 35351})
    (d / "orders-0").mkdir()
    report = plan_startup([str(d)])
    (p,) = report.partitions
    assert (p.log_start_offset, p.log_end_offset) == (35351, 35351)
    assert _codes(report) == [] and not report.loses_data
    text = "\n".join(startup_lines(report, [str(d)], partitions=True))
    assert "no segment: Kafka creates an empty one at 35,351" in text
    assert "every record" in text


def test_log_end_less_than_start_after_reopen_with_its_high_watermark(tmp_path: Path) -> None:
    """LogLoaderTest.testLogEndLessThanStartAfterReopen: five one-record segments and the
    empty active one at 5, the high watermark at the log end (5), the log start moved to 4,
    garbage after the record of segment 1; unclean.  Recovery truncates segment 1 and
    deletes the later ones, the log end (2) is below the log start: every segment goes,
    the log starts empty at 4, and the committed offset 4 is lost."""
    d = _log_dir(tmp_path / "d", clean=False, recovery={0: 0}, start={0: 4}, hw={0: 5})
    part = d / "orders-0"
    with W.SegmentWriter(part) as w:
        for i in range(5):
            w.append(build_batch(i, [(None, str(i).encode())], base_timestamp=1_000,
                                 leader_epoch=0))
            w.roll()
    seg = part / segment_file_name(1)
    seg.write_bytes(seg.read_bytes() + b"corruptRecord")
    report = plan_startup([str(d)])
    (p,) = report.partitions
    assert p.all_deleted and (p.log_start_offset, p.log_end_offset) == (4, 4)
    assert p.committed_missing == range(4, 5) and p.missing_cause == "cut off by recovery"
    (f,) = [f for f in report.findings if f.code == "V212"]
    assert f.message.startswith("offset 4, below the high watermark 5")
    assert "Kafka starts the log empty at 4" in f.message


def test_renamed_logs_are_not_judged(tmp_path: Path) -> None:
    """-delete dirs are going and -future ones take the current log's high watermark."""
    d = _log_dir(tmp_path / "d", recovery={0: 40}, hw={0: 40})
    _records(d / "orders-0.6d6f76696e672d6f72646572732d332d-delete", 10)
    report = plan_startup([str(d)])
    assert _codes(report) == [] and not report.loses_data


def test_the_checkpoints_fixture() -> None:
    proc = run("startup", "--json", FIXTURE)
    assert proc.returncode == 1, proc.stderr
    objs = [json.loads(line) for line in proc.stdout.splitlines()]
    for o in objs:
        assert schema.check("startup", o) == [], o
    parts = {o["partition"]: o for o in objs if o["kind"] == "startup_partition"}
    assert parts[0]["high_watermark_checkpoint_offset"] == 34
    assert parts[0]["offsets_not_loaded"] == {
        "from_offset": 20, "committed_to_offset": 33, "flushed_to_offset": None,
        "committed_offsets": 14, "flushed_offsets": 0, "cause": "not on disk"}
    assert parts[1]["offsets_not_loaded"]["committed_offsets"] == 10
    assert parts[1]["segments"] == 0 and parts[1]["log_end_offset"] == 0
    assert parts[2]["offsets_not_loaded"] is None
    assert parts[2]["log_start_offset"] == parts[2]["log_end_offset"] == 35351
    assert parts[3]["offsets_not_loaded"]["flushed_to_offset"] == 29
    assert parts[3]["offsets_not_loaded"]["committed_offsets"] == 0
    assert parts[4]["offsets_not_loaded"] is None
    codes = sorted((o["code"], Path(o["file"]).name) for o in objs
                   if o["kind"] == "finding" and o["code"] in ("V212", "V213"))
    assert codes == [("V212", "orders-0"), ("V212", "orders-1"), ("V213", "orders-3")]
    (summary,) = [o for o in objs if o["kind"] == "startup_summary"]
    assert summary["loses_data"] and summary["logs_missing_committed"] == 2
    assert summary["committed_offsets_missing"] == 24 and summary["logs_missing_flushed"] == 1


def test_the_report_says_what_startup_says() -> None:
    report = build_report([str(FIXTURE)])
    area = next(a for a in report.areas if a.name == "startup")
    assert area.verdict == "error"
    assert "2 logs without committed records, not on disk" in area.line
