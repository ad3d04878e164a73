"""``kmeta report`` in the terminal (one screen: a verdict per area, what to do next) and
as JSON Lines."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kmeta.findings import finding_counts
from kmeta.ops.report import Report, size
from kmeta.render.brokers import utc
from kmeta.render.jsonl import dumps
from kmeta.render.text import shell_command

_MARK = {"ok": "ok", "warning": "WARNING", "error": "ERROR", "none": "-"}


def _span(report: Report) -> str | None:
    """The metadata log the report read: offsets and times."""
    if not report.metadata:
        return None
    lead = max(report.metadata, key=lambda m: m.log_end_offset or -1)
    b = report.brokers
    when = ""
    if b is not None and b.first_timestamp is not None and b.last_timestamp is not None:
        when = f", {utc(b.first_timestamp)} to {utc(b.last_timestamp)} UTC"
    if not lead.segments:  # V020: the log is gone; its snapshots say how far it went
        snaps = f", snapshots to {max(s[0] for s in lead.snapshots):,}" \
            if lead.snapshots else ""
        return f"metadata log: no segment left ({lead.label}){snaps}"
    start = lead.log_start_offset if lead.log_start_offset is not None else "?"
    # ``A..B`` is first..last, both held, as verify and diff print it; the log end
    # offset is the next offset, one past the last
    end = lead.log_end_offset
    if end is not None and end == lead.log_start_offset:
        return f"metadata log empty, log end offset {end} ({lead.label}){when}"
    last = end - 1 if end is not None else "?"
    return f"metadata log offsets {start}..{last} ({lead.label}){when}"


def command_lines(args: list[str], width: int | None, indent: str = "    "
                  ) -> Iterator[str]:
    """``kmeta ARGS`` as lines to paste: one where it fits ``width``, else broken between
    arguments with a shell's line continuation (a folded line would paste as two
    commands)."""
    line = indent + shell_command(*args)
    if width is None or len(line) <= width:
        yield line
        return
    words = shell_command(*args).split(" ")  # shell_command quotes any space in an arg
    current = indent + words[0]
    for word in words[1:]:
        if len(current) + 1 + len(word) + 2 > width and current.strip():
            yield current + " \\"
            current = indent + "    " + word
        else:
            current += " " + word
    yield current


def report_lines(report: Report, width: int | None = None) -> Iterator[str]:
    dirs = len(report.data_dirs)
    parts = len(report.partitions)
    head = (f"kmeta report: {dirs:,} data dir{'' if dirs == 1 else 's'}, "
            f"{parts:,} partition{'' if parts == 1 else 's'}, "
            f"{size(report.segment_bytes)} of segments")
    if report.metadata:
        head += f", {len(report.metadata)} metadata replica" + \
            ("" if len(report.metadata) == 1 else "s")
    yield head
    span = _span(report)
    if span:
        yield f"  {span}"
    yield ""
    for a in report.areas:
        line = a.line or ("nothing to judge here" if a.verdict == "none" else "")
        count = f" [{len(a.findings)}]" if a.findings else ""
        yield f"{a.name:<10} {_MARK[a.verdict]:<8} {line}{count}"
    if any(a.findings for a in report.areas):  # the brackets, said where they first appear
        yield "[N]: the area's number of findings (the !! lines at the end)"
    steps = [(a.name, why, cmd) for a in report.areas for why, cmd in a.next_steps]
    if steps:
        yield ""
        yield "What to do next"
        told = None
        for name, why, cmd in steps:
            if (name, why) != told:  # one why for the commands it leads to
                yield f"  {name}: {why}"
                told = (name, why)
            yield from command_lines(cmd[1:], width)


def area_json(report: Report) -> Iterator[dict[str, Any]]:
    for a in report.areas:
        yield {"kind": "report_area", "area": a.name, "verdict": a.verdict,
               "line": a.line or None, "finding_counts": finding_counts(a.findings),
               "next_steps": [{"why": why, "command": shell_command(*cmd[1:])}
                              for why, cmd in a.next_steps]}


def replica_json(report: Report) -> Iterator[dict[str, Any]]:
    for m in report.metadata:
        yield {"kind": "report_replica", "label": m.label, "partition_dir": str(m.path),
               "node_id": m.node_id, "cluster_id": m.cluster_id,
               "log_start_offset": m.log_start_offset, "log_end_offset": m.log_end_offset,
               "epoch_cache": [{"epoch": e, "start_offset": o} for e, o, _ in m.epochs],
               "segments": len(m.segments), "bytes": sum(s.size for s in m.segments),
               "snapshot_ids": [p.name.removesuffix(".checkpoint")
                                for _, p, _, _ in m.snapshots]}


def report_json(report: Report) -> Iterator[str]:
    """The replicas, the areas, each finding once, then the summary."""
    for obj in replica_json(report):
        yield dumps(obj)
    for obj in area_json(report):
        yield dumps(obj)
    for f in report.findings:
        yield dumps(f.to_json())
    worst = next((v for v in ("error", "warning") if any(a.verdict == v
                                                         for a in report.areas)), "ok")
    yield dumps({"kind": "report_summary", "paths": report.paths,
                 "data_dirs": len(report.data_dirs),
                 "data_dir_paths": [str(d) for d in report.data_dirs],
                 "partitions": len(report.partitions),
                 "metadata_replicas": len(report.metadata),
                 "segment_bytes": report.segment_bytes, "verdict": worst,
                 "finding_counts": finding_counts(report.findings)})
