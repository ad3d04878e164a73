"""``A..B`` is the first and the last, both included, in every range kmeta prints (the
shell's were exclusive where verify and diff's were inclusive; issue 32 point 5)."""

from __future__ import annotations

from pathlib import Path

from kmeta.formats.batch import build_batch
from kmeta.formats.payload import encode_metadata
from kmeta.storage.segments import read_batches


def test_damaged_bytes_are_first_to_last(tmp_path: Path) -> None:
    value = encode_metadata("TOPIC_RECORD", 0, {"name": "t",
                                                "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"})
    good = build_batch(0, [(None, value)])
    garbage = b"\xff" * 50
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(good + garbage + build_batch(1, [(None, value)]))
    findings: list = []
    batches = list(read_batches(log, findings))
    assert [b.base_offset for b in batches] == [0, 1]
    (damage,) = [f for f in findings if f.code == "S003"]
    first, last = len(good), len(good) + len(garbage) - 1
    assert f"damaged bytes {first}..{last} (50 bytes" in damage.message, damage.message


def test_report_s_metadata_log_is_first_to_last() -> None:
    """report's header names the metadata log's offsets as verify does: the last offset
    held, not the log end offset (one past it)."""
    from tests.clirun import run

    here = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "healthy"
    verify = run("verify", here).stdout
    report = run("report", here).stdout
    held = next(w for w in verify.split() if ".." in w).rstrip(",")
    assert f"metadata log offsets {held} " in report, (held, report.splitlines()[:3])
