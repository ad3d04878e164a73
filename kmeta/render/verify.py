"""``kmeta verify`` for people: a summary and a findings table (rich), or JSON Lines."""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Console
from rich.table import Table

from kmeta.findings import HINTS
from kmeta.ops.verify import VerifyReport
from kmeta.render.console import make_console
from kmeta.render.jsonl import dumps
from kmeta.render.text import finding_line, summarise

#: The most findings drawn as a table: rich lays out every cell of a table before it
#: prints a row (milliseconds each), so 50,000 findings took minutes; past this many
#: they are plain lines, one per finding, then each code's hint once.
TABLE_ROWS = 1000


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
    if len(report.findings) > TABLE_ROWS:
        _print_lines(report, console)
    elif report.findings:
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


def _print_lines(report: VerifyReport, console: Console) -> None:
    # Straight to the console's file: rich would wrap and measure every line again.
    findings = report.findings
    write = console.file.write
    for i in range(0, len(findings), TABLE_ROWS):
        write("".join(finding_line(f) + "\n" for f in findings[i:i + TABLE_ROWS]))
    for code in sorted({f.code for f in findings} & HINTS.keys()):
        write(f"hint {code}: {HINTS[code]}\n")
