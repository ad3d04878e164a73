"""The verdict of each area of a report, its findings, and what to do next.

A finding belongs to one area, by its code (the area whose analysis says it); the same
finding said by two analyses (verify and startup both judge stray logs) is kept once.
The words are the findings' own (:data:`kmeta.findings.CODES` and
:data:`~kmeta.findings.HINTS`): the report has no second vocabulary."""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from kmeta.findings import (
    CODES,
    HINTS,
    STOP_FIRST,
    Finding,
    Severity,
    hint_for,
    is_live,
)
from kmeta.formats.filenames import parse_partition_dir
from kmeta.ops.report.model import AREAS, Area, Report

#: Codes by the area that says them (the rest are the logs').
_AREA_OF_RANGE = (
    ("replicas", 160, 169), ("brokers", 130, 139), ("consumers", 140, 149),
    ("tiering", 150, 159), ("startup", 170, 239),
)
_SNAPSHOT_CODES = {"V021", "V022", "V023", "V024", "V025", "V026", "V040"}
#: Codes that mean damage ``kmeta repair`` cuts away (a torn tail, garbage, a bad CRC).
_REPAIRABLE = {"S001", "S003", "S004", "S010", "F001", "F006", "F009"}


@cache  # a few dozen codes, asked once per finding (tens of thousands on a bad log)
def area_of(code: str) -> str:
    if code in _SNAPSHOT_CODES:
        return "snapshots"
    if code.startswith("V") and code[1:].isdigit():
        number = int(code[1:])
        for area, lo, hi in _AREA_OF_RANGE:
            if lo <= number <= hi:
                return area
    return "logs"


def _key(f: Finding) -> tuple:
    return (f.code, f.file, f.position, f.offset, f.message)


def collect(report: Report) -> list[Finding]:
    """Every finding of every analysis, each once, in the order of the areas."""
    sources: list[Iterable[Finding]] = []
    if report.verify is not None:
        sources.append(report.verify.findings)
    sources += [r.findings for r in report.retention]
    if report.diff is not None:
        sources.append(report.diff.findings)
    if report.brokers is not None:
        sources.append(report.brokers.findings)
    if report.consumers is not None:
        sources.append(report.consumers.findings)
    sources += [s.findings for s in report.startup]
    if report.tiering is not None:
        sources.append(report.tiering.findings)
    seen: set[tuple] = set()
    out: list[Finding] = []
    for source in sources:
        for f in source:
            k = _key(f)
            if k not in seen:
                seen.add(k)
                out.append(f)
    order = {a: i for i, a in enumerate(AREAS)}
    return sorted(out, key=lambda f: order[area_of(f.code)])  # stable: each area's order


def _verdict(findings: list[Finding]) -> str:
    if any(f.severity is Severity.ERROR for f in findings):
        return "error"
    if any(f.severity is Severity.WARNING for f in findings):
        return "warning"
    return "ok"


def judge(report: Report, lines: dict[str, str | None]) -> list[Area]:
    """The areas, each with its findings and its one line (``lines``: None where there
    was nothing to judge)."""
    by_area: dict[str, list[Finding]] = {a: [] for a in AREAS}
    for f in report.findings:
        by_area[area_of(f.code)].append(f)
    areas = []
    for name in AREAS:
        found = by_area[name]
        line = lines.get(name)
        verdict = "none" if line is None and not found else _verdict(found)
        if line is None and found:  # its analysis had nothing to read; verify spoke
            line = "nothing of its own to judge; verify's findings"
        area = Area(name, verdict, line or "", found)
        area.next_steps = next_steps(report, name, found)
        areas.append(area)
    return areas


def _partition_dir(f: Finding) -> str | None:
    """The partition dir a finding's file is in, or the file itself where it is in none
    (a segment given alone); None for a finding of no file."""
    if not f.file:
        return None
    path = Path(f.file)
    for candidate in (path, path.parent):
        if parse_partition_dir(candidate.name) is not None:
            return str(candidate)
    return str(path)


def _first_codes(findings: list[Finding], severities: tuple[Severity, ...]) -> list[str]:
    return list(dict.fromkeys(f.code for f in findings if f.severity in severities))


def next_steps(report: Report, area: str, findings: list[Finding]
               ) -> list[tuple[str, list[str]]]:
    """(why, command) for an area: the hint of its worst codes and the kmeta command
    that shows more."""
    bad = (Severity.ERROR, Severity.WARNING)
    codes = _first_codes(findings, bad)
    if not codes:
        return []
    steps: list[tuple[str, list[str]]] = []
    # the worst findings speak first: under an error, a warning's hint ("nothing is
    # lost") would say the opposite of the verdict
    worst = _first_codes(findings, (Severity.ERROR,)) or codes
    live = is_live(report.findings)
    why = next((hint_for(c, live) for c in worst if c in HINTS), CODES[worst[0]].meaning)
    if area == "logs":
        damaged = [f for f in findings if f.code in _REPAIRABLE and f.severity in bad]
        dirs = list(dict.fromkeys(d for f in damaged if (d := _partition_dir(f))))
        for d in dirs[:3]:
            name = Path(d).name
            if name.startswith("__cluster_metadata-"):  # what repair writes a copy of
                # named like the input, so every command reads the copy as one
                label = Path(d).parent.name or "log"
                said = STOP_FIRST + why if live and not why.startswith(STOP_FIRST) else why
                steps.append((said, ["kmeta", "repair", d, "--out",
                                     os.path.join("/tmp", f"{label}.repaired", name)]))
            else:  # Kafka's own recovery cuts an ordinary log: startup says where
                steps.append((why, ["kmeta", "verify", d]))
        if not steps:
            steps.append((why, ["kmeta", "verify", *report.paths]))
    elif area == "replicas" and report.diff is not None:
        # each replica by its data dir where it has one: the shorter path diff takes
        data_dirs = {str(d) for d in report.data_dirs}
        paths = [str(Path(r.path).parent) if str(Path(r.path).parent) in data_dirs
                 else r.path for r in report.diff.replicas]
        steps.append((why, ["kmeta", "diff", *paths]))
    elif area == "brokers" and report.brokers is not None:
        lead = _lead(report)
        steps.append((why, ["kmeta", "brokers", *([lead] if lead else report.paths)]))
    elif area == "snapshots":
        lead = _lead(report)
        # retention reads a metadata replica; a snapshot file beside none (a lone
        # bootstrap.checkpoint) is verify's to tell about
        steps.append((why, ["kmeta", "retention", lead] if lead
                      else ["kmeta", "verify", *report.paths]))
    elif area == "consumers" and report.consumers is not None:
        against = report.consumers.against
        steps.append((why, ["kmeta", "consumers", str(report.consumers_dir or report.paths[0]),
                            *([] if against is None else ["--against", against])]))
    elif area == "startup":
        for s in report.startup:
            if any(f.severity in bad for f in s.findings):
                steps.append((why, ["kmeta", "startup", *(str(d.path) for d in s.dirs),
                                    "--partitions"]))
    elif area == "tiering":
        steps.append((why, ["kmeta", "tiering", *report.paths]))
    return steps[:3]


def _lead(report: Report) -> str | None:
    """The metadata replica the report told brokers from: the longest log (None: the
    paths hold no metadata replica)."""
    lead = max(report.metadata, key=lambda m: m.log_end_offset or -1, default=None)
    return None if lead is None else str(lead.path)
