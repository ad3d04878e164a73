"""``kmeta verify`` for people: a summary, one line per finding, hints; or JSON Lines.

Findings are lines, not a table: at 80 columns a table folds two findings into a
screenful, and through a pipe a line per finding is what grep wants.  Paths are shown
relative to the paths given; a code met many times is one line (``--all`` lists each).
"""

from __future__ import annotations

from collections.abc import Iterator

from kmeta.environment import Environment
from kmeta.findings import HINTS
from kmeta.ops.verify import VerifyReport
from kmeta.render.console import clip_width, fold, styled
from kmeta.render.jsonl import dumps
from kmeta.render.text import Paths, group_line, grouped, summarise


def render_json(report: VerifyReport) -> Iterator[str]:
    for f in report.findings:
        yield dumps(f.to_json())
    yield dumps(report.summary_json())


def render_text(report: VerifyReport, env: Environment, given: list[str] | None = None,
                expand: bool = False) -> None:
    """``given``: the paths the user gave (file names are shown relative to them);
    ``expand``: every finding on its own line, no groups.  Plain lines, coloured on a
    terminal (no rich: it measured every line, which took minutes for 50,000 findings
    with --all, and importing it was a tenth of a short run)."""
    paths = Paths(given or [])
    colour = env.colour(env.stdout)
    width = clip_width(env)
    lines: list[str] = []

    def out(line: str) -> None:
        lines.append(fold(line, width))

    counts = report.counts()
    for path, s in report.logs.items():
        digest = s.image.digest() if s.image is not None else "not replayed"
        offsets = "no batches" if s.first_offset is None else \
            f"offsets {s.first_offset}..{s.last_offset}"
        out(f"{paths.show(path)}: {s.segments} segment(s), {s.batches:,} batches, "
            f"{s.records:,} records, {offsets}, "
            f"epochs {summarise(sorted(s.epochs), 'epochs')}, image {digest}")
    for g in grouped(report.findings, expand):
        out(group_line(g, paths, colour))
    codes = list(dict.fromkeys(f.code for f in report.findings if f.code in HINTS))
    for code in codes:
        out(f"   hint {code}: {HINTS[code]}")
    for line in report.not_run:
        out(f"not checked: {line}")
    verdict = "broken" if counts["error"] else "clean" if report.checked_logs else \
        "no log checked"
    if colour:
        verdict = styled(verdict, "error" if counts["error"] else "ok")
    out(f"{verdict}: {counts['error']} error(s), {counts['warning']} warning(s), "
        f"{counts['info']} info; {report.segments} segment(s), "
        f"{report.snapshots} snapshot(s), {report.files} file(s) in all checked")
    env.write_lines(lines)
