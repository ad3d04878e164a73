"""``kmeta verify`` for people: a summary and a findings table (rich), or JSON Lines."""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Console
from rich.table import Table

from kmeta.findings import HINTS
from kmeta.ops.verify import VerifyReport
from kmeta.render.console import make_console
from kmeta.render.jsonl import dumps
from kmeta.render.text import summarise


def render_json(report: VerifyReport) -> Iterator[str]:
    for f in report.findings:
        yield dumps(f.to_json())
    yield dumps(report.summary_json())


def render_text(report: VerifyReport, console: Console | None = None) -> None:
    if console is None:
        console = make_console()
    counts = report.counts()
    for path, s in report.logs.items():
        digest = s.image.digest() if s.image is not None else "not replayed"
        offsets = "no batches" if s.first_offset is None else \
            f"offsets {s.first_offset}..{s.last_offset}"
        console.print(f"{path}: {s.segments} segment(s), {s.batches:,} batches, "
                      f"{s.records:,} records, {offsets}, "
                      f"epochs {summarise(sorted(s.epochs), 'epochs')}, "
                      f"image {digest}", markup=False, highlight=False)
    if report.findings:
        table = Table(show_edge=False, title_justify="left")
        for col in ("code", "severity", "where", "what", "hint"):
            table.add_column(col, overflow="fold")
        for f in report.findings:
            table.add_row(f.code, f.severity.value, f.where(), f.message, HINTS.get(f.code, ""))
        console.print(table)
    for line in report.not_run:
        console.print(f"not checked: {line}", markup=False, highlight=False)
    verdict = "broken" if counts["error"] else "clean" if report.checked_logs else \
        "no log checked"
    console.print(f"{verdict}: {counts['error']} error(s), {counts['warning']} warning(s), "
                  f"{counts['info']} info; {report.segments} segment(s), "
                  f"{report.snapshots} snapshot(s), {report.files} file(s) in all checked",
                  markup=False, highlight=False)
