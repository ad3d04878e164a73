"""The report's HTML page without a browser: nothing in it can fetch anything, and its
pictures are built from the report (tests/test_report_html.py opens it in Chromium)."""

from __future__ import annotations

import re

import pytest
from conftest import CORRUPT, HEALTHY

from kmeta.ops.report import build_report
from kmeta.render.report import report_html
from kmeta.render.report.svg import Chart, Lane, Mark, Span


def test_nothing_in_the_page_is_fetched() -> None:
    html = report_html(build_report([str(HEALTHY)]))
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    # every URL the page names is a data: URL or the SVG namespace (never fetched)
    urls = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', html)
    assert all(u.startswith(("data:", "#")) for u in urls), urls
    assert not re.search(r"@import|url\((?!#)", html)
    assert "<link rel=\"stylesheet\"" not in html and "<script src" not in html


def test_damage_and_cut_of_a_corrupt_replica() -> None:
    report = build_report([str(CORRUPT / "bad-crc")])
    (m,) = report.metadata
    assert [(d.code, d.offset) for d in m.damage if d.severity == "error"] == [
        ("F001", 20), ("V040", 458)]
    assert m.repair_cut == 20  # the log ends before the batch whose CRC is bad
    assert [ts is not None for _, _, ts in m.epochs] == [True, True]
    html = report_html(report)
    assert html.count('data-mark="damaged"') == 2
    assert html.count('class="span cut"') == 1


def test_narrow_shapes_merge_and_say_how_many() -> None:
    lane = Lane("x", spans=[Span(i, i + 1, "g0", f"s{i}") for i in range(10_000)],
                marks=[Mark(i, "crash", f"m{i}") for i in range(0, 10_000, 10)])
    svg = Chart("t", [lane], 0, 10_000, legend=[("g0", "segment"), ("crash", "crash")]).svg()
    assert svg.count("<rect class=\"span") < 200  # 10,000 spans over ~800 pixels
    counts = [int(c) for c in re.findall(r'data-mark="crash" data-count="(\d+)"', svg)]
    assert sum(counts) == 1000 and len(counts) < 400
    assert "several too short to draw apart" not in svg  # all of one kind: no "many"
    assert 'class="swatch g0"' in svg and 'class="swatch crash"' in svg


def test_legend_names_only_what_is_drawn() -> None:
    lane = Lane("x", spans=[Span(0, 5, "state unfenced", "u")])
    svg = Chart("t", [lane], 0, 5, legend=[("unfenced", "up"), ("fenced", "down")]).svg()
    assert 'swatch unfenced' in svg and 'swatch fenced' not in svg


def test_copies_of_one_log_are_read_once_and_agree() -> None:
    """Replicas whose logs are the same bytes share their times (read once); each equals
    what reading it alone gives."""
    from conftest import DIVERGENT

    from kmeta.ops.report import pictures

    report = build_report([str(DIVERGENT / "identical")])
    a, b = report.metadata
    assert pictures._same_log(a, b)
    assert a.epochs == b.epochs and a.times == b.times and a.times
    alone = build_report([str(DIVERGENT / "identical" / "b")]).metadata[0]
    assert alone.epochs == b.epochs and alone.times == b.times
    assert [(s.first_timestamp, s.max_timestamp) for s in alone.segments] == [
        (s.first_timestamp, s.max_timestamp) for s in b.segments]
    lag = build_report([str(DIVERGENT / "lag")]).metadata
    assert not pictures._same_log(lag[0], lag[1])


def test_verdicts_are_the_report_areas_when_it_has_them() -> None:
    from kmeta.ops.report import Area

    report = build_report([str(HEALTHY)])
    fallback = report_html(report)
    assert fallback.count('class="verdict ') == 7  # one per area, judged by its findings
    report.areas = [Area("logs", "error", "2 batches damaged", [],
                         [("see where", ["kmeta", "verify", "--all", "x y"])]),
                    Area("tiering", "none", "no remote storage")]
    html = report_html(report)
    assert html.count('class="verdict ') == 2
    assert 'data-area="logs" data-verdict="error"' in html
    assert "<code>kmeta verify --all &#x27;x y&#x27;</code>" in html  # as a shell reads it


def test_a_report_with_nothing_in_it_is_still_a_page() -> None:
    from kmeta.ops.report import Report

    html = report_html(Report(["nothing"]))
    assert html.count('data-verdict="none"') == 7 and "No findings." in html
    assert "data-picture" not in html


@pytest.mark.parametrize("least_step", [1 << 16, 300])
def test_sampled_headers_give_what_reading_every_batch_gives(
        least_step: int) -> None:
    """The pictures' times come from a walk that skips over intact batches: each
    segment's first and newest time and each epoch's first time are those of reading
    every batch, on every fixture and real segment (damaged, legacy, torn, zero-filled
    ones too)."""
    import os
    from pathlib import Path

    from conftest import FIXTURES, REPO

    from kmeta.ops.report.pictures import SAMPLES_PER_SEGMENT
    from kmeta.storage.headers import sampled_headers
    from kmeta.storage.segments import read_batches

    def summary(rows: list[tuple[int, int, int, int]]) -> tuple:
        firsts: dict[int, int] = {}
        for _, epoch, ts, _top in rows:
            if ts >= 0:
                firsts.setdefault(epoch, ts)
        stamps = [ts for _, _, ts, _ in rows if ts >= 0]
        tops = [top for *_, top in rows if top >= 0]
        return (stamps[0] if stamps else None, max(tops, default=None), firsts)

    real = Path(os.environ.get("KMETA_REAL_DATA", REPO.parent / "shared" / "real"))
    segments = sorted(FIXTURES.rglob("*.log")) + sorted(real.rglob("*.log"))
    assert len(segments) > 400
    for seg in segments:
        every = [(b.base_offset, getattr(b, "leader_epoch", -1),
                  -1 if getattr(b, "base_timestamp", None) is None else b.base_timestamp,
                  getattr(b, "max_timestamp", -1)) for b in read_batches(seg, [])]
        # a few batches per step: every fixture segment is sampled many times over
        assert summary(list(sampled_headers(seg, SAMPLES_PER_SEGMENT, least_step))) == \
            summary(every), seg
