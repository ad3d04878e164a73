"""``kmeta snapshot`` output: a short summary for people, one JSON object for scripts.

Findings are not rendered here: the command prints them on stderr as every command does.
"""

from __future__ import annotations

from kmeta.core.versions import level_label
from kmeta.ops.snapshot import SnapshotWritten
from kmeta.render.image import _ts
from kmeta.render.jsonl import dumps
from kmeta.render.text import human

__all__ = ["snapshot_json", "snapshot_lines"]


def snapshot_lines(result: SnapshotWritten) -> list[str]:
    """The summary: what was written, from what, and any notes."""
    level = level_label(result.metadata_version)
    voters = "" if result.voters is None else \
        " voters: " + ",".join(map(str, result.voters))
    started = "offset 0" if result.started_from is None else str(result.started_from)
    lines = [
        f"wrote {result.path}",
        f"snapshot id: endOffset {result.end_offset} epoch {result.epoch}, "
        f"{result.record_count:,} record(s), {result.size:,} bytes",
        f"image digest {result.digest} (from {started}, {result.replayed_records:,} log "
        "record(s) applied)",
        f"lastContainedLogTimestamp: {result.last_contained_log_timestamp} "
        f"({_ts(result.last_contained_log_timestamp)}) metadata.version: {level} "
        f"kraft.version: {human(result.kraft_version)}{voters}",
        "records: " + (", ".join(f"{t} {n:,}" for t, n in result.records.items()) or "none"),
    ]
    lines += [f"note: {n}" for n in result.notes]
    return lines


def snapshot_json(result: SnapshotWritten) -> str:
    """One JSON object, ``kind`` "snapshot" (see :meth:`SnapshotWritten.to_json`)."""
    return dumps(result.to_json())
