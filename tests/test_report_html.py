"""``kmeta report --html`` in a real browser: headless Chromium opens the page of each
fixture and of every real data dir, and the tests read what it shows.

Each page must load without a console error and without a request other than its own
file; each picture its data has must be there with a lane or a mark for each thing it
stands for; the findings table must list exactly ``kmeta verify --json``'s findings (and
the other analyses' own).  A screenshot of each picture is written to
``$KMETA_SCREENSHOTS`` (default ``build/screenshots/``, which git ignores) for a person to
look at.  Skipped, with the reason, only where Chromium is not installed."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from browser import Browser, Page
from clirun import run
from conftest import CORRUPT, DIVERGENT, FIXTURES, HEALTHY, REPO

from kmeta.ops.report import Report, build_report
from kmeta.render.report.html import findings_of, report_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# one worker runs them all (pytest-xdist --dist loadgroup): one Chromium, not one per worker
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser"),
              pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                 "(.ci/run installs Debian's chromium where it can)")]

SHOTS = Path(os.environ.get("KMETA_SCREENSHOTS") or REPO / "build" / "screenshots")
REAL = Path(os.environ.get("KMETA_REAL_DATA", REPO.parent / "shared" / "real"))
BIG = REPO / "fixtures" / "big" / "broker-4000x10" / "data"


@pytest.fixture(scope="module")
def browser() -> Any:
    b = Browser(CHROMIUM)
    try:
        yield b
    finally:
        b.close()


class Shown:
    """A report's page open in the browser, and the report it was made of."""

    def __init__(self, page: Page, report: Report, html: str, seconds: float) -> None:
        self.page, self.report, self.html, self.seconds = page, report, html, seconds

    def js(self, expression: str) -> Any:
        return self.page.js(expression)

    def pictures(self) -> list[str]:
        return self.js("[...document.querySelectorAll('[data-picture]')]"
                       ".filter(e => e.tagName !== 'svg').map(e => e.dataset.picture)")

    def lanes(self, picture: str) -> list[str]:
        return self.js(f"[...document.querySelectorAll('svg[data-picture=\"{picture}\"] "
                       "g.lane')].map(g => g.dataset.lane)")

    def marks(self, picture: str, kind: str, lane: str | None = None) -> int:
        """How many marks of ``kind`` (merged marks count what they stand for)."""
        inside = f' g.lane[data-lane="{lane}"]' if lane is not None else ""
        return self.js(f"[...document.querySelectorAll('svg[data-picture=\"{picture}\"]"
                       f"{inside} [data-mark=\"{kind}\"]')].reduce((n, e) => n + "
                       "Number(e.dataset.count || 1), 0)")

    def spans(self, picture: str, lane: str, kind: str) -> int:
        """How many spans of ``kind`` (merged shapes count what they stand for)."""
        return self.js(f"[...document.querySelectorAll('svg[data-picture=\"{picture}\"] "
                       f"g.lane[data-lane=\"{lane}\"] rect.span')].reduce((n, r) => {{"
                       "const m = r.dataset.merged; if (m) { const hit = m.split(' ')"
                       f".find(w => w.startsWith('{kind}:')); return n + (hit ? "
                       "Number(hit.split(':')[1]) : 0); }"
                       f"return n + (r.classList.contains('{kind}') ? 1 : 0); }}, 0)")

    def table(self) -> list[dict[str, Any]]:
        # each row's JSON as the page holds it, parsed here: JavaScript's numbers would
        # round an offset past 2^53 (the s011 case's run to 2^63 + 15)
        return [json.loads(text) for text in self.js(
            "[...document.querySelectorAll('#findings tbody tr')].map(r => r.dataset.finding)")]


def show(browser: Browser, tmp_path: Path, name: str, *paths: str | Path) -> Shown:
    """Build the report of ``paths``, open its page, check it loaded cleanly, and write a
    screenshot of each picture (and of the whole page) named after ``name``."""
    report = build_report([str(p) for p in paths])
    html = report_html(report)
    file = tmp_path / f"{name}.html"
    file.write_text(html, encoding="utf-8")
    page = Page(browser, width=1200, height=900)
    try:
        seconds = page.open(file.as_uri())
        shown = Shown(page, report, html, seconds)
        assert page.console_errors() == []
        assert page.requests() == [file.as_uri()]
        SHOTS.mkdir(parents=True, exist_ok=True)
        for picture in shown.pictures():
            page.screenshot(SHOTS / f"{name}-{picture}.png", f'[data-picture="{picture}"]')
        page.screenshot(SHOTS / f"{name}.png")
    except BaseException:
        page.close()
        raise
    return shown


@pytest.fixture
def shown_pages(browser: Browser) -> Any:
    opened: list[Shown] = []

    def open_(tmp_path: Path, name: str, *paths: str | Path) -> Shown:
        s = show(browser, tmp_path, name, *paths)
        opened.append(s)
        return s

    yield open_
    for s in opened:
        s.page.close()


def verify_json(*paths: str | Path) -> list[dict[str, Any]]:
    done = run("verify", "--json", *[str(p) for p in paths])
    assert done.returncode in (0, 1, 3), done.stderr  # 3: some file could not be read
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return [r for r in rows if r.get("kind") == "finding"]


def _key(finding: dict[str, Any]) -> str:
    return json.dumps(finding, sort_keys=True)


def check_findings(s: Shown, *paths: str | Path) -> None:
    """The table lists each of verify --json's findings, and besides them only the other
    analyses' own, each as its command gives it."""
    table = Counter(_key(f) for f in s.table())
    verified = Counter(_key(f) for f in verify_json(*paths))
    assert verified - table == Counter(), "verify findings missing from the table"
    expected = Counter(_key(json.loads(json.dumps(f.to_json(), default=str)))
                       for f in findings_of(s.report))
    assert table == expected
    shown = s.js("document.getElementById('f-shown') ? "
                 "document.getElementById('f-shown').textContent : ''")
    if table:
        assert shown == f"{sum(table.values()):,} of {sum(table.values()):,} rows shown"


def check_lifecycle(s: Shown) -> None:
    """One lane per broker and controller the log registered, as brokers' summary."""
    b = s.report.brokers
    if b is None or not b.summary:
        assert "lifecycle" not in s.pictures()
        return
    assert s.lanes("lifecycle") == [f"{n.role}-{n.node}" for n in b.summary]
    crashes = sum(1 for f in b.findings if f.code == "V131")
    assert s.marks("lifecycle", "crash") == crashes
    storms = sum(len(f.details.get("brokers", [])) for f in b.findings if f.code == "V133")
    assert s.marks("lifecycle", "storm") == storms


def check_epochs(s: Shown) -> None:
    # a replica without a segment (V020) has its epoch cache but no log end to draw to
    reps = [m for m in s.report.metadata if m.epochs and m.segments]
    if not reps:
        assert "epochs-offsets" not in s.pictures()
        return
    quorum = ["quorum"] if s.report.brokers is not None and s.report.brokers.leaders else []
    assert s.lanes("epochs-offsets") == [m.label for m in reps] + quorum
    for m in reps:
        assert s.spans("epochs-offsets", m.label, "epoch") == len(m.epochs)


def check_layout(s: Shown) -> None:
    reps = [m for m in s.report.metadata if m.segments]
    if not reps:
        assert "layout" not in s.pictures()
        return
    assert s.lanes("layout") == [m.label for m in reps]
    for m in reps:
        assert s.marks("layout", "snapshot", m.label) == len(m.snapshots)
        drawn = s.spans("layout", m.label, "segment") + s.spans("layout", m.label,
                                                                 "deleted")
        assert drawn == len(m.segments)


def check_partitions(s: Shown) -> None:
    """One lane per topic; a partition with findings is a shape of its own, coloured by
    its worst."""
    from kmeta.render.report.pictures import MOST_TOPICS

    parts = s.report.partitions
    if not parts:
        assert "partitions" not in s.pictures()
        return
    topics = sorted({t for t, _ in parts})
    lanes = s.lanes("partitions")
    if len(topics) <= MOST_TOPICS:
        assert lanes == topics
    else:
        assert len(lanes) == MOST_TOPICS
    owner = {str(d): key for key, dirs in parts.items() for d in dirs}
    worst: dict[tuple[str, int], str] = {}
    rank = {"info": 0, "warning": 1, "error": 2}
    for f in findings_of(s.report):
        key = f.file and (owner.get(f.file) or owner.get(str(Path(f.file).parent)))
        named = re.match(r"(\S+)-(\d+) ", f.message)
        if not key and f.file and named and (named[1], int(named[2])) in parts:
            key = (named[1], int(named[2]))  # a checkpoint's finding names its partition
        if key and key[0] in lanes:
            sev = f.severity.value
            if key not in worst or rank[sev] > rank[worst[key]]:
                worst[key] = sev
    for sev in ("error", "warning", "info"):
        drawn = s.js("document.querySelectorAll('svg[data-picture=\"partitions\"] "
                     f"rect.p-{sev}').length")
        assert drawn == sum(1 for v in worst.values() if v == sev), sev


def check_all(s: Shown, *paths: str | Path) -> None:
    check_findings(s, *paths)
    check_lifecycle(s)
    check_epochs(s)
    check_layout(s)
    check_partitions(s)
    assert re.search(r"default-src 'none'", s.html)
    assert s.js("document.querySelectorAll('[data-area]').length") >= 1


def test_healthy_has_every_picture_of_its_log(shown_pages: Any, tmp_path: Path) -> None:
    s = shown_pages(tmp_path, "healthy", HEALTHY)
    assert s.pictures() == ["epochs-offsets", "epochs-time", "lifecycle", "snapshots",
                            "layout", "partitions"]
    check_all(s, HEALTHY)
    m = s.report.metadata[0]
    assert len(m.segments) == 7 and len(m.epochs) == 11
    retention = s.report.retention[0]
    assert s.marks("snapshots", "snapshot", m.label) + s.marks(
        "snapshots", "snapshot-deleted", m.label) == len(retention.snapshots) == 3
    # time axes are UTC, and hovering names offsets and times
    tips = s.js("[...document.querySelectorAll('svg[data-picture=\"epochs-time\"] "
                "rect.span')].map(r => r.dataset.tip)")
    assert tips and all("UTC" in t and "offset" in t for t in tips)
    tips = s.js("[...document.querySelectorAll('svg[data-picture=\"lifecycle\"] "
                "rect.span, svg[data-picture=\"lifecycle\"] .mark')].map(r => r.dataset.tip)")
    assert tips and all("UTC" in t and "offset" in t for t in tips)
    # the page's script turned the SVG titles into its own tooltip: none is left behind
    assert s.js("document.querySelectorAll('svg.chart g title').length") == 0
    # pointing at epoch 11 shows its tooltip next to the pointer
    box = s.js("(() => {const r = [...document.querySelectorAll("
               "'svg[data-picture=\"epochs-offsets\"] rect.span.epoch')].pop()"
               ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]})()")
    s.page.b.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": box[0],
                                               "y": box[1]}, session=s.page.s)
    shown = s.js("(() => {const t = document.getElementById('tip');"
                 "return [getComputedStyle(t).display, t.textContent]})()")
    assert shown[0] == "block" and "epoch 11" in shown[1]
    assert f"offsets {m.epochs[-1][1]}..{m.log_end_offset - 1}" in shown[1]
    s.page.screenshot(SHOTS / "healthy-hover.png")
    assert s.js("document.querySelector('svg[data-picture=\"lifecycle\"] text.axis-label')"
                ".textContent") == "time (UTC)"


def test_divergent_pair_marks_where_they_part(shown_pages: Any, tmp_path: Path) -> None:
    paths = [DIVERGENT / "diverged" / "a", DIVERGENT / "diverged" / "b"]
    s = shown_pages(tmp_path, "diverged", *paths)
    check_all(s, *paths)
    (pair,) = s.report.diff.pairs
    assert pair.divergence_offset is not None
    for m in s.report.metadata:
        assert s.marks("epochs-offsets", "diverge", m.label) == 1
        assert s.marks("epochs-time", "diverge", m.label) == 1
    tip = s.js("document.querySelector('[data-mark=\"diverge\"]').dataset.tip")
    assert f"offset {pair.divergence_offset}" in tip


def test_unclean_pair(shown_pages: Any, tmp_path: Path) -> None:
    s = shown_pages(tmp_path, "unclean", DIVERGENT / "unclean")
    check_all(s, DIVERGENT / "unclean")
    diverged = [p for p in s.report.diff.pairs if p.divergence_offset is not None]
    assert diverged
    for m in s.report.metadata:
        mine = [p for p in diverged
                if m.path.resolve() in (Path(p.local.label).resolve(),
                                        Path(p.peer.label).resolve())]
        assert s.marks("epochs-offsets", "diverge", m.label) == len(mine)
    # the replicas' verdict says they diverged (V160, as kmeta diff says it)
    assert s.js("document.querySelector('[data-area=replicas]').dataset.verdict") == "error"


def test_crashes_and_fencing_storms_are_marked(shown_pages: Any, tmp_path: Path) -> None:
    s = shown_pages(tmp_path, "lifecycle", FIXTURES / "lifecycle")
    check_all(s, FIXTURES / "lifecycle")
    assert s.marks("lifecycle", "storm") >= 2  # the fixture's storm fences brokers 1, 4, 5


@pytest.mark.parametrize("case", ["combined", "new-mv"])
def test_a_crash_is_marked_on_its_lane(shown_pages: Any, tmp_path: Path, case: str) -> None:
    """A broker that re-registered without a clean shutdown (V131) has a crash mark on
    its own lane, at the time of its new registration."""
    path = FIXTURES / "lifecycle" / case
    s = shown_pages(tmp_path, f"crash-{case}", path)
    check_all(s, path)
    crashes = [f for f in s.report.brokers.findings if f.code == "V131"]
    assert crashes
    for f in crashes:
        (event,) = [e for e in s.report.brokers.events
                    if e.offset == f.offset and e.event == "re_registered"]
        assert s.marks("lifecycle", "crash", f"{event.role}-{event.node}") >= 1


def test_damage_and_repair_cut(shown_pages: Any, tmp_path: Path) -> None:
    path = CORRUPT / "bad-crc"
    s = shown_pages(tmp_path, "bad-crc", path)
    check_all(s, path)
    (m,) = s.report.metadata
    errors = [d for d in m.damage if d.severity == "error"]
    assert errors and s.marks("layout", "damaged", m.label) == len(errors)
    assert m.repair_cut is not None
    assert s.spans("layout", m.label, "cut") == 1
    # the table filters by severity, code and file
    s.js("(() => {const e = document.getElementById('f-sev'); e.value = 'error';"
         "e.dispatchEvent(new Event('input'))})()")
    visible = s.js("[...document.querySelectorAll('#findings tbody tr')]"
                   ".filter(r => !r.hidden).map(r => r.dataset.severity)")
    assert visible and set(visible) == {"error"}
    s.js("(() => {const e = document.getElementById('f-sev'); e.value = '';"
         "e.dispatchEvent(new Event('input')); const f = document.getElementById('f-file');"
         "f.value = '.checkpoint'; f.dispatchEvent(new Event('input'))})()")
    files = s.js("[...document.querySelectorAll('#findings tbody tr')]"
                 ".filter(r => !r.hidden).map(r => r.dataset.file)")
    assert files and all(".checkpoint" in f for f in files)
    # a code's button above the table shows that code only
    s.js("(() => {const f = document.getElementById('f-file'); f.value = '';"
         "document.querySelector('.codes .chip[data-code=\"F001\"]').click()})()")
    codes = s.js("[...document.querySelectorAll('#findings tbody tr')]"
                 ".filter(r => !r.hidden).map(r => r.dataset.code)")
    assert codes and set(codes) == {"F001"}
    # a column's header sorts the rows by it (offsets as numbers), twice: the other way
    s.js("document.querySelector('.codes .chip[data-code=\"F001\"]').click()")
    column = "[...document.querySelectorAll('#findings tbody tr')].map(r => r.cells[4]" \
             ".textContent).filter(t => t).map(Number)"
    s.js("document.querySelectorAll('#findings thead th')[4].click()")
    offsets = s.js(column)
    assert len(offsets) >= 2 and offsets == sorted(offsets)
    s.js("document.querySelectorAll('#findings thead th')[4].click()")
    assert s.js(column) == sorted(offsets, reverse=True)


def test_consumers_against_their_partitions(shown_pages: Any, tmp_path: Path) -> None:
    path = REAL / "kafka25-zk-offsets"
    if not path.is_dir():
        pytest.skip(f"no real data at {REAL} (set KMETA_REAL_DATA)")
    s = shown_pages(tmp_path, "kafka25-consumers", path)
    check_all(s, path)
    rows = s.report.consumers.rows
    assert s.js("document.querySelectorAll('table.consumers tbody tr').length") == len(rows)
    placed = sum(1 for r in rows if (r.commit.topic, r.commit.partition)
                 in s.report.partition_bounds and r.commit.offset is not None)
    assert placed and s.js("document.querySelectorAll('table.consumers "
                           "[data-mark=committed]').length") == placed


def test_consumers_checked_against_a_replica(shown_pages: Any, tmp_path: Path) -> None:
    """Positions checked against another data dir's replica (KIP-320): each row's bar is
    that replica's log, and its verdict is consumers'."""
    path = FIXTURES / "consumers"
    s = shown_pages(tmp_path, "consumers-kip320", path)
    check_all(s, path)
    result = s.report.consumers
    assert result.replicas, "the fixture's positions are checked against node2"
    rows = s.js("[...document.querySelectorAll('table.consumers tbody tr')].map(r => "
                "[r.dataset.group, r.cells[1].textContent, r.cells[3].textContent, "
                "r.cells[4].textContent, r.dataset.verdict])")
    wanted = sorted(
        [r.commit.group, f"{r.commit.topic}-{r.commit.partition}",
         f"{result.replicas[(r.commit.topic, r.commit.partition)].log_start:,}",
         f"{result.replicas[(r.commit.topic, r.commit.partition)].log_end:,}",
         r.check.verdict if r.check else ""]
        for r in result.rows)
    assert sorted(rows) == wanted
    assert {v for *_, v in rows} >= {"truncated", "out_of_range"}


def test_prints_to_pdf(shown_pages: Any, tmp_path: Path) -> None:
    """Printed, the page keeps its pictures (SVG) and hides the filters."""
    s = shown_pages(tmp_path, "print", HEALTHY)
    s.page.b.send("Emulation.setEmulatedMedia", {"media": "print"}, session=s.page.s)
    assert s.js("getComputedStyle(document.querySelector('.filters')).display") == "none"
    SHOTS.mkdir(parents=True, exist_ok=True)
    s.page.screenshot(SHOTS / "healthy-printed.png")
    pdf = s.page.b.send("Page.printToPDF", {"printBackground": True}, session=s.page.s,
                        timeout=60)["data"]
    import base64
    data = base64.b64decode(pdf)
    assert data.startswith(b"%PDF")
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "healthy.pdf").write_bytes(data)


@pytest.mark.parametrize("name", sorted(d.name for d in FIXTURES.iterdir() if d.is_dir()))
def test_fixture_dirs(shown_pages: Any, tmp_path: Path, name: str) -> None:
    """Each fixture dir as a whole (its cases side by side)."""
    s = shown_pages(tmp_path, f"fixture-{name}", FIXTURES / name)
    check_all(s, FIXTURES / name)


def _real_dirs() -> list[Path]:
    if not REAL.is_dir():
        return []
    return sorted(p for p in REAL.iterdir() if p.is_dir())


@pytest.mark.parametrize("path", _real_dirs(), ids=lambda p: p.name)
def test_real_data(shown_pages: Any, tmp_path: Path, path: Path) -> None:
    s = shown_pages(tmp_path, f"real-{path.name}", path)
    check_all(s, path)


def test_real_data_present() -> None:
    """The real dirs are not silently left out: CI sets KMETA_REAL_DATA."""
    if "KMETA_REAL_DATA" not in os.environ and not REAL.is_dir():
        pytest.skip("KMETA_REAL_DATA is not set and ../shared/real is absent")
    assert _real_dirs(), f"no real data dirs under {REAL}"


def _generated_broker(out: Path, *args: str) -> Path:
    """A broker made by tests/bench/broker.py (the generator of fixtures/big)."""
    import subprocess
    import sys

    subprocess.run([sys.executable, str(REPO / "tests" / "bench" / "broker.py"), *args,
                    "--out", str(out)], check=True, stdout=subprocess.DEVNULL, timeout=600)
    return out


def check_big(s: Shown) -> None:
    assert len(s.html.encode()) < 5 * 1024 * 1024
    assert s.seconds < 3
    check_lifecycle(s)
    check_epochs(s)
    check_layout(s)
    check_partitions(s)


@pytest.mark.slow
def test_4000_partitions_page_is_small_and_quick(shown_pages: Any, tmp_path: Path) -> None:
    """fixtures/big/broker-4000x10 (tests/bench/broker.py's default broker, kept there
    once made).  Where it is absent (CI) the same broker with one segment a partition is
    made here: 280 MB and ten seconds, not 2.2 GB; the page draws partitions, not their
    segments, so it is the same page."""
    path = BIG if BIG.is_dir() else _generated_broker(tmp_path / "broker",
                                                      "--segments", "1")
    check_big(shown_pages(tmp_path, "broker-4000x10", path))


@pytest.mark.slow
def test_4000_damaged_partitions_page_is_small_and_quick(shown_pages: Any,
                                                         tmp_path: Path) -> None:
    """Every partition of a 4,000-partition broker damaged: thousands of findings, the
    table lists the first of them and counts the rest, every code is counted."""
    path = _generated_broker(tmp_path / "broker", "--segments", "1", "--damage", "4000")
    s = shown_pages(tmp_path, "broker-4000-damaged", path)
    check_big(s)
    found = findings_of(s.report)
    assert len(found) > 4000
    from kmeta.render.report.html import MOST_FINDING_ROWS

    assert len(s.table()) == MOST_FINDING_ROWS
    counted = s.js("[...document.querySelectorAll('.codes .chip b')]"
                   ".reduce((n, b) => n + Number(b.textContent.replace(/,/g, '')), 0)")
    assert counted == len(found)
    # the page says how many there are, where the rest are, and the command lists them
    assert f"{len(found):,} findings (" in s.html
    assert f"the other {len(found) - MOST_FINDING_ROWS:,} are not on this page" in s.html
    shown = s.js("document.getElementById('f-shown').textContent")
    assert shown == (f"{MOST_FINDING_ROWS:,} of {MOST_FINDING_ROWS:,} rows shown (the page "
                     f"lists {MOST_FINDING_ROWS:,} of {len(found):,} findings)")
    every = run("report", "--all", path)
    assert sum(1 for line in every.stdout.splitlines() if line.startswith("!! ")) == \
        len(found)
