"""``kmeta verify`` for people: a summary, one line per finding, hints; or JSON Lines.

Findings are lines, not a table: at 80 columns a table folds two findings into a
screenful, and through a pipe a line per finding is what grep wants.  Paths are shown
relative to the paths given; a code met many times is one line (``--all`` lists each).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator

from kmeta.environment import Environment
from kmeta.findings import HINTS, Finding, hint_for, is_live
from kmeta.formats.filenames import parse_partition_dir_name
from kmeta.ops.verify import VerifyReport
from kmeta.render.console import clip_width, fold, styled
from kmeta.render.jsonl import dumps
from kmeta.render.text import Paths, group_line, grouped, short_group_line, summarise

#: Two screens of an 80x24 terminal: verify's text fits them by default, however many
#: partitions have findings (--all lists every finding).
TWO_SCREENS = 48
#: Topic rows of the problems block shown whatever the rest takes.
MIN_TOPIC_ROWS = 3


def render_json(report: VerifyReport) -> Iterator[str]:
    for f in report.findings:
        yield dumps(f.to_json())
    yield dumps(report.summary_json())


def _topic_of(file: str | None) -> tuple[str, str] | None:
    """(topic, partition dir name) of the dir holding a finding's file.  A finding about
    a dir itself is left out: a file may be named like a partition dir too."""
    if not file:
        return None
    parent = os.path.basename(os.path.dirname(os.path.normpath(file)))
    name = parse_partition_dir_name(parent)
    return None if name is None else (name.topic, parent)


def topic_problems(findings: list[Finding]) -> list[tuple[str, set[str], Counter]]:
    """Per topic with a finding in a partition dir: the partitions, the codes met; the
    topics with most partitions first."""
    by_topic: dict[str, tuple[set[str], Counter]] = {}
    for f in findings:
        where = _topic_of(f.file)
        if where is not None:
            parts, codes = by_topic.setdefault(where[0], (set(), Counter()))
            parts.add(where[1])
            codes[f.code] += 1
    return sorted(((t, p, c) for t, (p, c) in by_topic.items()),
                  key=lambda x: (-len(x[1]), x[0]))


def _problem_lines(findings: list[Finding], rows: int | None) -> list[str]:
    """The topics with findings, most partitions first, ``rows`` of them (None: all),
    when the findings are in more than one partition (else the findings say it)."""
    topics = topic_problems(findings)
    partitions = sum(len(p) for _, p, _ in topics)
    if partitions < 2:
        return []
    out = [f"problems in {partitions:,} partition(s) of {len(topics):,} topic(s):"]
    for n, (topic, parts, codes) in enumerate(topics):
        if rows is not None and n >= rows and n < len(topics):
            rest = topics[n:]
            out.append(f"  … {len(rest):,} more topic(s), "
                       f"{sum(len(p) for _, p, _ in rest):,} partition(s) "
                       "(--all lists every finding)")
            break
        said = ", ".join(f"{c} x{k:,}" if k > 1 else c for c, k in codes.most_common())
        out.append(f"  {topic}: {len(parts):,} partition(s): {said}")
    return out


def render_text(report: VerifyReport, env: Environment, given: list[str] | None = None,
                expand: bool = False) -> None:
    """``given``: the paths the user gave (file names are shown relative to them);
    ``expand``: every finding on its own line, no groups.  Plain lines, coloured on a
    terminal (no rich: it measured every line, which took minutes for 50,000 findings
    with --all, and importing it was a tenth of a short run).  By default the text fits
    two screens: the topics with problems first (as many as fit), then the findings, a
    code met more than a few times one line (every code met twice or more when that is
    still too long)."""
    paths = Paths(given or [])
    colour = env.colour(env.stdout)
    width = clip_width(env)

    def folded(line: str) -> str:
        return fold(line, width)

    counts = report.counts()
    head: list[str] = []
    for path, s in report.logs.items():
        digest = s.image_digest() or "not replayed"
        # said once: no segment (snapshots alone), segments with no batch, or what they hold
        held = "no log segment" if not s.segments else \
            f"{s.segments:,} segment(s), no batch" if s.first_offset is None else \
            (f"{s.segments:,} segment(s), {s.batches:,} batches, {s.records:,} records, "
             f"offsets {s.first_offset}..{s.last_offset}")
        epochs = f"epochs {summarise(sorted(s.epochs), 'epochs')}, " if s.epochs else ""
        head.append(folded(f"{paths.show(path)}: {held}, {epochs}image {digest}"))

    def findings_lines(over: int | None) -> list[str]:
        if over is None:
            out = [folded(group_line(g, paths, colour))
                   for g in grouped(report.findings, expand)]
        else:
            out = [folded(short_group_line(g, paths, colour))
                   for g in grouped(report.findings, over=over)]
        codes = list(dict.fromkeys(f.code for f in report.findings if f.code in HINTS))
        live = is_live(report.findings)
        out += [folded(f"   hint {code}: {hint_for(code, live)}") for code in codes]
        return out

    body = findings_lines(None)
    tail = [folded(f"not checked: {line}") for line in report.not_run]
    verdict = "broken" if counts["error"] else "clean" if report.checked_logs else \
        "no log checked"
    if colour:
        verdict = styled(verdict, "error" if counts["error"] else "ok")
    tail.append(folded(
        f"{verdict}: {counts['error']:,} error(s), {counts['warning']:,} warning(s), "
        f"{counts['info']:,} info; {report.segments:,} segment(s), "
        f"{_snapshots(report)}, {report.files:,} file(s) in all checked"))

    def size(lines: list[str]) -> int:
        return sum(line.count("\n") + 1 for line in lines)

    if expand:  # every finding its own line, each naming its partition
        problems = []
    else:
        # room for the problems block's head, a few topics and the rest summed
        if size(head) + size(body) + size(tail) + MIN_TOPIC_ROWS + 8 > TWO_SCREENS:
            body = findings_lines(1)
        room = TWO_SCREENS - size(head) - size(body) - size(tail) - 2
        problems = [folded(x) for x in _problem_lines(report.findings,
                                                      max(MIN_TOPIC_ROWS, room))]
        while len(problems) > 3 and size(head + problems + body + tail) > TWO_SCREENS:
            # a folded row takes two lines: cut one row more, the rest summed
            problems = [folded(x) for x in _problem_lines(report.findings,
                                                          len(problems) - 3)]
    env.write_lines(head + problems + body + tail)


def _snapshots(report: VerifyReport) -> str:
    """The snapshots read, bootstrap.checkpoint said apart: it is a new cluster's first
    metadata, not a snapshot of the log (report counts the log's snapshots alone)."""
    said = f"{report.snapshots - report.bootstraps:,} snapshot(s)"
    if report.bootstraps == 1:
        said += " and bootstrap.checkpoint"
    elif report.bootstraps:
        said += f" and {report.bootstraps:,} bootstrap.checkpoint files"
    return said
