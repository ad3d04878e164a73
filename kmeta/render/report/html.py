"""``kmeta report --html``: the report as one self-contained page.

Styles and the small script are inline and the Content-Security-Policy forbids fetching
anything, so the file opens the same on an air-gapped laptop.  The pictures are SVG drawn
here (:mod:`kmeta.render.report.pictures`): they print sharp, need no plotting library,
and show offsets and times on hover through SVG ``<title>``, which needs no script."""

from __future__ import annotations

import json
import shlex
from collections import Counter
from html import escape

from kmeta.findings import Finding, Severity
from kmeta.ops.report import AREAS, Area, Report
from kmeta.render.report import pictures
from kmeta.render.report.page import page
from kmeta.render.report.svg import attr, utc

__all__ = ["report_html"]

#: Rows of the consumers table past which the rest are counted, not drawn.
MOST_CONSUMER_ROWS = 1_000
#: Rows of the findings table past which the rest are counted, not listed (verify --json
#: lists them all): a damaged 4,000-partition broker's page stays under a few MB.
MOST_FINDING_ROWS = 2_000


def report_html(report: Report) -> str:
    """The page for ``report``."""
    sections = [_verdicts(report)]
    figures = [pictures.epochs_by_offset(report), pictures.epochs_by_time(report)]
    if any(figures):
        sections.append(_section("epochs", "Leader epochs", figures))
    figure = pictures.lifecycle(report)
    if figure:
        sections.append(_section("lifecycle", "Brokers and controllers", [figure]))
    figure = pictures.snapshots(report)
    if figure:
        sections.append(_section("snapshots", "Snapshots and retention", [figure]))
    figures = [pictures.layout(report), pictures.partitions(report, findings_of(report))]
    if any(figures):
        sections.append(_section("layout", "Log layout", figures))
    if report.consumers is not None and report.consumers.rows:
        sections.append(_section("consumers", "Consumer groups", [_consumers(report)]))
    sections.append(_section("findings", "Findings", [_findings(report)]))
    return page("kmeta report", _subtitle(report), sections)


def _section(name: str, title: str, parts: list[str]) -> str:
    return (f'<section id="s-{name}"><h2>{escape(title)}</h2>' + "".join(p for p in parts if p)
            + "</section>")


def _subtitle(report: Report) -> str:
    bits = [" ".join(report.paths)]
    if report.metadata:
        bits.append(f"{len(report.metadata)} metadata replica(s)")
    if report.partitions:
        bits.append(f"{len(report.partitions):,} partition(s)")
    b = report.brokers
    if b is not None and b.first_timestamp is not None and b.last_timestamp is not None:
        bits.append(f"log from {utc(b.first_timestamp)} to {utc(b.last_timestamp)}")
    return " · ".join(bits)


# -- verdicts ------------------------------------------------------------------------------


_NOTHING = "nothing to judge on these paths"


def _areas(report: Report) -> list[Area]:
    """The report's areas, or, before they are judged, one per analysis that ran, judged
    by its worst finding."""
    if report.areas:
        return report.areas
    results = {
        "logs": report.verify.findings if report.verify is not None else None,
        "snapshots": [f for r in report.retention for f in r.findings]
        if report.retention else None,
        "replicas": None if report.diff is None else report.diff.findings,
        "brokers": report.brokers.findings if report.brokers is not None else None,
        "consumers": report.consumers.findings if report.consumers is not None else None,
        "startup": [f for s in report.startup for f in getattr(s, "findings", [])]
        if report.startup else None,
        "tiering": report.tiering.findings if report.tiering is not None else None,
    }
    out = []
    for name in AREAS:
        found = results.get(name)
        if found is None:
            out.append(Area(name, "none", _NOTHING))
            continue
        area = Area(name, "ok", "", list(found))
        worst = area.worst
        area.verdict = {Severity.ERROR: "error", Severity.WARNING: "warning"}.get(
            worst, "ok") if worst is not None else "ok"
        counts = Counter(f.severity.value for f in found)
        area.line = ", ".join(f"{v} {k}" for k, v in counts.items()) or "no findings"
        out.append(area)
    return out


def _verdicts(report: Report) -> str:
    """A card per area, then what to do next (the commands that dig deeper), in the
    areas' order: the cards stay one size, the commands get the page's width."""
    cells, steps = [], []
    for a in _areas(report):
        cells.append(f'<div class="verdict {attr(a.verdict)}" data-area="{attr(a.name)}" '
                     f'data-verdict="{attr(a.verdict)}"><b>{escape(a.name)}</b>'
                     f'<em>{escape(a.verdict)}</em><span>{escape(a.line or _NOTHING)}</span></div>')
        steps += [f'<li data-area="{attr(a.name)}"><b>{escape(a.name)}</b>: {escape(why)}'
                  f'<br><code>{escape(shlex.join(cmd))}</code></li>'
                  for why, cmd in a.next_steps]
    nexts = (f'<h3>What to do next</h3><ul class="next">{"".join(steps)}</ul>'
             if steps else "")
    return (f'<section id="verdicts"><div class="verdicts">{"".join(cells)}</div>{nexts}'
            '</section>')


# -- consumers -----------------------------------------------------------------------------


def _consumers(report: Report) -> str:
    result = report.consumers
    assert result is not None
    rows = sorted(result.rows, key=lambda r: (r.commit.group, r.commit.topic,
                                              r.commit.partition))
    out = ['<p class="note">Each group\'s committed offset (▲) against the partition\'s '
           'log on these paths (bar: log start to end). The verdict is KIP-320\'s, when '
           'the position was checked against a replica.</p>',
           '<table class="consumers" data-picture="consumers"><thead><tr><th>group</th>'
           '<th>partition</th><th class="num">committed</th><th class="num">log start</th>'
           '<th class="num">log end</th><th class="num">lag</th><th>position</th>'
           '<th>verdict</th></tr></thead><tbody>']
    for r in rows[:MOST_CONSUMER_ROWS]:
        c = r.commit
        bounds = report.partition_bounds.get((c.topic, c.partition))
        start, end = bounds if bounds else (None, None)
        lag = "" if end is None or c.offset is None else f"{end - c.offset:,}"
        verdict = r.check.verdict if r.check is not None else ""
        why = r.check.why if r.check is not None else ""
        when = f", committed {utc(c.commit_timestamp)}" if c.commit_timestamp else ""
        epoch = f", leader epoch {c.leader_epoch}" if c.leader_epoch >= 0 else ""
        out.append(
            f'<tr class="consumer" data-group="{attr(c.group)}" '
            f'data-verdict="{attr(verdict)}"><td>{escape(c.group)}</td>'
            f'<td>{escape(c.topic)}-{c.partition}</td>'
            f'<td class="num">{_num(c.offset)}</td><td class="num">{_num(start)}</td>'
            f'<td class="num">{_num(end)}</td><td class="num">{lag}</td>'
            f'<td>{_position_bar(c.offset, start, end, f"{c.group} at {c.offset}{epoch}{when}", _absent(report, (c.topic, c.partition)))}'
            f'</td><td class="verdict-{attr(verdict)}" title="{attr(why)}">'
            f'{escape(verdict or "not checked")}</td></tr>')
    out.append('</tbody></table>')
    if len(rows) > MOST_CONSUMER_ROWS:
        out.append(f'<p class="note">{len(rows) - MOST_CONSUMER_ROWS:,} more positions: '
                   '<code>kmeta consumers</code> lists them all.</p>')
    return "".join(out)


def _num(v: int | None) -> str:
    return "–" if v is None else f"{v:,}"


def _absent(report: Report, key: tuple[str, int]) -> str:
    """Why a partition's log has no bounds to place a position in."""
    if key not in report.partitions:
        return "partition not on these paths"
    dirs = ", ".join(str(d) for d in report.partitions[key])
    why = report.unbounded.get(key, "its log was not read")
    return f"dir here, bounds unknown: {why} ({dirs})"


def _position_bar(offset: int | None, start: int | None, end: int | None, tip: str,
                  absent: str = "partition not on these paths") -> str:
    w, h = 220, 16
    if offset is None:
        return ""
    if start is None or end is None:
        short, _, why = absent.partition(": ")
        return (f'<svg class="pos" viewBox="0 0 {w} {h}" width="{w}" height="{h}">'
                f'<text x="0" y="12" class="tick-left">{escape(short)}</text>'
                f'<title>{escape(tip)}{": " + escape(why) if why else ""}</title></svg>')
    if end <= start and offset == start:  # an empty log: nothing to place it in
        return (f'<svg class="pos" viewBox="0 0 {w} {h}" width="{w}" height="{h}">'
                f'<polygon class="mark committed" data-mark="committed" points="5,2 10,14 '
                f'0,14"><title>{escape(tip)}: the log is empty, its end is {end:,}</title>'
                f'</polygon><text x="16" y="12" class="tick-left">empty log, at its end'
                f'</text></svg>')
    lo, hi = min(start, offset), max(end, offset)
    span = max(hi - lo, 1)

    def x(v: int) -> float:
        return 4 + (v - lo) * (w - 8) / span

    where = "below the log start" if offset < start else (
        "past the log end" if offset > end else "inside the log")
    return (f'<svg class="pos" viewBox="0 0 {w} {h}" width="{w}" height="{h}">'
            f'<rect class="track" x="{x(start):.1f}" y="5" width="{max(x(end) - x(start), 1):.1f}"'
            f' height="6"><title>log start offset {start}, log end offset {end}</title></rect>'
            f'<polygon class="mark committed{" outside" if where != "inside the log" else ""}"'
            f' data-mark="committed" points="{x(offset):.1f},2 {x(offset) + 5:.1f},14 '
            f'{x(offset) - 5:.1f},14"><title>{escape(tip)}: {where} '
            f'(log start offset {start}, log end offset {end})</title></polygon></svg>')


# -- findings ------------------------------------------------------------------------------


def findings_of(report: Report) -> list[Finding]:
    """The findings the table lists: the report's, or before they are gathered, verify's
    and each analysis's own, each once."""
    if report.findings:
        return list(report.findings)
    found: list[Finding] = []
    if report.verify is not None:
        found += report.verify.findings
    if report.brokers is not None:
        found += report.brokers.findings
    for r in report.retention:
        found += r.findings
    if report.diff is not None:
        found += report.diff.findings
    if report.consumers is not None:
        found += report.consumers.findings
    for s in report.startup:
        found += getattr(s, "findings", [])
    if report.tiering is not None:
        found += report.tiering.findings
    seen: set[str] = set()
    out = []
    for f in found:
        key = json.dumps(f.to_json(), sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def _first(found: list[Finding], code: str) -> Finding:
    return next(f for f in found if f.code == code)


def _findings(report: Report) -> str:
    found = findings_of(report)
    if not found:
        return '<p class="none" data-findings="0">No findings.</p>'
    order = {"error": 0, "warning": 1, "info": 2}
    by_code = Counter(f.code for f in found)
    codes = sorted(by_code)
    chips = "".join(
        f'<button type="button" class="chip sev-{f.severity.value}" data-code="{attr(c)}" '
        f'title="{attr(f.severity.value)}: show only {attr(c)}">{escape(c)} '
        f'<b>{by_code[c]:,}</b></button>'
        for c in sorted(codes, key=lambda c: (order[_first(found, c).severity.value], c))
        for f in [_first(found, c)])
    options = "".join(f'<option value="{attr(c)}">{escape(c)}</option>' for c in codes)
    out = [f'<div class="codes">{chips}</div>',
           '<div class="filters"><label>severity <select id="f-sev"><option value="">all'
           '</option><option value="error">error</option><option value="warning">warning'
           '</option><option value="info">info</option></select></label>'
           f'<label>code <select id="f-code"><option value="">all</option>{options}'
           '</select></label><label>file <input id="f-file" type="search" '
           'placeholder="part of a path"></label><span id="f-shown"></span></div>',
           f'<table id="findings" data-total="{len(found)}"><thead><tr><th>severity</th><th>code</th><th>file</th>'
           '<th class="num">byte</th><th class="num">offset</th><th>message</th></tr>'
           '</thead><tbody>']
    shown = sorted(found, key=lambda f: order[f.severity.value])[:MOST_FINDING_ROWS]
    for f in shown:
        sev = f.severity.value
        out.append(
            f'<tr data-severity="{sev}" data-code="{attr(f.code)}" '
            f'data-file="{attr(f.file or "")}" '
            f'data-finding="{attr(json.dumps(f.to_json(), default=str))}">'
            f'<td class="sev-{sev}">{sev}</td><td>{escape(f.code)}</td>'
            f'<td class="file">{escape(f.file or "–")}</td>'
            f'<td class="num">{"" if f.position is None else f.position}</td>'
            f'<td class="num">{"" if f.offset is None else f.offset}</td>'
            f'<td>{escape(f.message)}</td></tr>')
    out.append('</tbody></table>')
    return _findings_count(report, found, len(shown)) + "".join(out)


def _findings_count(report: Report, found: list[Finding], listed: int) -> str:
    """How many findings there are, how many the table lists, and the command that lists
    the rest: the table's own count ("k of n shown") is of its rows only."""
    counts = Counter(f.severity.value for f in found)
    sevs = ", ".join(f"{counts[s]:,} {s}{'' if s == 'info' or counts[s] == 1 else 's'}"
                     for s in ("error", "warning", "info") if counts[s])
    head = f"{len(found):,} finding{'' if len(found) == 1 else 's'} ({sevs})"
    if listed >= len(found):
        return f'<p class="note" data-findings="{len(found)}">{head}, each listed below.</p>'
    every = shlex.join(["kmeta", "report", "--all", *report.paths])
    return (f'<p class="note" data-findings="{len(found)}" data-listed="{listed}">{head}: '
            f'the table lists the first {listed:,} (errors first); the other '
            f'{len(found) - listed:,} are not on this page. <code>{escape(every)}</code> '
            'lists every one (with <code>--json</code> instead of <code>--all</code>, one '
            'JSON object each).</p>')
