"""``kmeta export`` output: a few lines for people, one JSON object for scripts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kmeta.render.jsonl import dumps

if TYPE_CHECKING:  # kmeta.spark sits beside render, not below it: for the type only
    from kmeta.spark.export import ExportResult

__all__ = ["export_json", "export_lines", "table_line"]


def table_line(name: str, rows: int) -> str:
    """Said on stderr as each table is written (a long export shows it is moving)."""
    return f"{name}: {rows:,} rows"


def export_lines(result: ExportResult) -> list[str]:
    """Where the tables went, the rows of each and the findings met, by severity."""
    found = ", ".join(f"{n:,} {s}" for s, n in sorted(result.findings.items())) or "none"
    return [f"exported to {result.out} ({result.format}, Spark {result.master}) "
            f"in {result.seconds:.1f} s",
            *(f"  {t}: {n:,} rows from {result.partitions[t]} input partition(s)"
              for t, n in result.rows.items()),
            f"  findings: {found}"]


def export_json(result: ExportResult) -> str:
    """One JSON object, ``kind`` "export" (see :meth:`ExportResult.to_json`)."""
    return dumps(result.to_json())
