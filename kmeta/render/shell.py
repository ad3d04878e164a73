"""The texts of ``kmeta shell``: its prompt, where it stands, what a step or a diff
changed, the records that touched a node, the replicas.  The node tree's own texts
(``ls``, ``cat``, ``tree``, ``find``) are kmeta.render.nodes'."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from kmeta.render.brokers import utc

#: how a change to a node is marked, as diff(1) and git mark lines
MARKS = {"added": "+", "removed": "-", "changed": "~"}
#: A changed node whose path and texts together are longer than this shows the old and
#: the new text on lines of their own (was:, now:), one above the other.
SIDE_BY_SIDE = 70

# Every line here is whole: a script greps it.  On a terminal the shell's front ends fold
# each line to the screen (kmeta.shell.replies.texts, as every command's lines are).


def _time(provenance: Any) -> int | None:
    stamp = provenance.last_contained_log_time_ms
    return stamp if stamp >= 0 else None


def _last(provenance: Any) -> int | None:
    last = provenance.last_contained_offset
    return last if last >= 0 else None


def prompt(replica: str, offset: int, provenance: Any, cwd: str, several: bool) -> str:
    """``[ctrl-1 @4000 2024-05-01 03:12:45] /image/topics> ``: the replica (when there
    are several), the offset, the time of the last batch applied, the working directory."""
    who = f"{replica} " if several else ""
    stamp = _time(provenance)
    when = f" {utc(stamp)}" if stamp is not None else ""
    return f"[{who}@{offset}{when}] {cwd}> "


def log_words(timeline: Any, images: bool = True) -> str:
    """The replica's log in the words kmeta uses everywhere: the log is the segments on
    disk, from the first one's base offset; ``A..B`` is the first and the last offset,
    both included.  Where the images start later (a log that does not start at 0 has
    none before the first snapshot inside it), that is said too; a replica of snapshots
    only has no log."""
    start, end = timeline.log_start, timeline.log_end
    if end is None:
        ends = ", ".join(str(s.end_offset) for s in timeline.snapshots()) or "none"
        return f"no log, snapshot(s) ending at {ends}"
    words = f"log offsets {start}..{end - 1}" if end > start else \
        f"log empty from offset {start}"
    words += f", log end offset {end}"
    if images and timeline.start != start:
        words += f"; images from offset {timeline.start} (the first snapshot inside it)"
    return words


def where_lines(replica: str, offset: int, provenance: Any, timeline: Any) -> list[str]:
    """Where the shell stands, in words: the point, the replica's log, then what the
    image holds."""
    last = _last(provenance)
    after = "no record applied yet" if last is None else \
        f"offset {last} applied last (epoch {provenance.last_contained_epoch}, " \
        f"{utc(_time(provenance))} UTC)"
    if offset == timeline.log_end:
        at = ", the log end offset"
    elif timeline.log_end is None:
        at = ", a snapshot's end"
    else:
        at = ""
    return [f"{replica} at offset {offset}{at}", f"  {log_words(timeline)}", f"  {after}"]


def time_note(typed: str, where: str, stamp: int) -> str:
    """A time outside the log's: ``(2020-01-01 is before the log's first batch, stamped
    …: the image before any record of it)``, or after its last."""
    if where == "before":
        return f"({typed} is before the log's first batch, stamped {utc(stamp)} UTC: " \
            "the image before any record of the log)"
    return f"({typed} is after the log's last batch, stamped {utc(stamp)} UTC: the image " \
        "after every record of the log)"


def where_object(replica: str, offset: int, provenance: Any, timeline: Any
                 ) -> dict[str, Any]:
    last = _last(provenance)
    return {"kind": "shell_at", "replica": replica, "offset": offset,
            "last_offset": last,
            "leader_epoch": None if last is None else provenance.last_contained_epoch,
            "timestamp": _time(provenance), **_extent(timeline)}


def _extent(timeline: Any) -> dict[str, Any]:
    return {"log_start_offset": timeline.log_start, "log_end_offset": timeline.log_end,
            "first_image_offset": timeline.start, "last_image_offset": timeline.end}


def change_lines(changes: list[tuple[str, str, str | None, str | None]]) -> list[str]:
    """A line per node changed: ``+ path: text``, ``- path: text``, ``~ path: old ->
    new``; a change to one of Kafka's ``Name(key=value, …)`` texts names only the fields
    that changed (``~ …/events/7: isr [4, 6] -> [4, 5, 6], partitionEpoch 11 -> 10``)."""
    out = []
    for path, kind, old, new in changes:
        mark = MARKS[kind]
        if kind == "changed":
            fields = changed_fields(old or "", new or "")
            if fields is not None:
                out.append(f"{mark} {path}: " + ", ".join(f"{k} {a} -> {b}"
                                                         for k, a, b in fields))
            elif len(path) + len(old or "") + len(new or "") < SIDE_BY_SIDE:
                out.append(f"{mark} {path}: {old} -> {new}")
            else:
                out += [f"{mark} {path}", f"    was: {old}", f"    now: {new}"]
        else:
            out.append(f"{mark} {path}: {new if kind == 'added' else old}")
    return out


_SHAPE = re.compile(r"^(\w+)\((.*)\)$", re.S)


def changed_fields(old: str, new: str) -> list[tuple[str, str, str]] | None:
    """The fields that differ between two texts of one ``Name(key=value, …)`` shape, or
    None when they are not both of it (or differ in their keys)."""
    a, b = _SHAPE.match(old), _SHAPE.match(new)
    if a is None or b is None or a.group(1) != b.group(1):
        return None
    fa, fb = _fields(a.group(2)), _fields(b.group(2))
    if fa is None or fb is None or list(fa) != list(fb):
        return None
    return [(k, fa[k], fb[k]) for k in fa if fa[k] != fb[k]]


def _fields(body: str) -> dict[str, str] | None:
    """``key=value`` items split at the commas outside brackets, quotes and parentheses."""
    items, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(body):
        if quote:
            quote = "" if ch == quote else quote
        elif ch == "'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(body[start:i].strip())
            start = i + 1
    items.append(body[start:].strip())
    out = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq:
            return None
        out[key] = value
    return out


def change_objects(changes: list[tuple[str, str, str | None, str | None]]
                   ) -> list[dict[str, Any]]:
    return [{"path": p, "change": k, "old_text": o, "new_text": n} for p, k, o, n in changes]


def step_lines(low: int, high: int, records: list[Any],
               changes: list[tuple[str, str, str | None, str | None]], forward: bool
               ) -> list[str]:
    """One step of next/prev: the offsets crossed, the records there by type, then the
    nodes they changed."""
    counts: dict[str, int] = {}
    for r in records:
        counts[r.type_name] = counts.get(r.type_name, 0) + 1
    what = ", ".join(f"{t} x{n}" if n > 1 else t for t, n in counts.items()) or \
        "no metadata record (heartbeats, control records)"
    when = f" epoch {records[-1].leader_epoch} {utc(records[-1].timestamp)}" if records \
        else ""
    arrow = ">>" if forward else "<<"
    out = [f"{arrow} offsets {low}..{high - 1}{when}: {what}"]
    out += change_lines(changes) if changes else ["  (no node changed)"]
    return out


def step_object(replica: str, before: int, after: int,
                changes: list[tuple[str, str, str | None, str | None]]) -> dict[str, Any]:
    return {"kind": "shell_step", "replica": replica, "from_offset": before,
            "to_offset": after, "node_changes": change_objects(changes)}


def diff_lines(changes: list[tuple[str, str, str | None, str | None]], a: str, b: str,
               path: str) -> list[str]:
    if not changes:
        return [f"{path}: the same at {a} and {b}"]
    counts = {k: sum(1 for c in changes if c[1] == k) for k in MARKS}
    head = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    return [f"{path}: {a} -> {b}: {head}", *change_lines(changes)]


def diff_object(ra: str, oa: int, rb: str, ob: int, path: str,
                changes: list[tuple[str, str, str | None, str | None]]) -> dict[str, Any]:
    return {"kind": "shell_diff", "path": path, "from_replica": ra, "from_offset": oa,
            "to_replica": rb, "to_offset": ob, "node_changes": change_objects(changes)}


def history_lines(rows: list[tuple], path: str) -> list[str]:
    """A line per record that touched ``path``: offset, time, type, and its fields."""
    if not rows:
        return [f"{path}: no record up to here touched it"]
    out = []
    for r in rows:
        fields = ", ".join(f"{k}={v}" for k, v in (r.data or {}).items())
        line = f"{r.offset:>10} {utc(r.timestamp)} e{r.leader_epoch} {r.type_name} v{r.version}"
        out.append(f"{line}: {fields}" if fields else line)
    return out


def history_object(r: Any) -> dict[str, Any]:
    return {"kind": "shell_record", "offset": r.offset, "timestamp": r.timestamp,
            "leader_epoch": r.leader_epoch, "type": r.type_name, "version": r.version,
            "data": r.data}


def replica_line(name: str, timeline: Any) -> str:
    return f"{name}: {log_words(timeline)}; {len(timeline.snapshots())} snapshot(s), " \
           f"{timeline.path}"


def replica_object(name: str, timeline: Any, current: bool) -> dict[str, Any]:
    return {"kind": "shell_replica", "name": name, "path": str(timeline.path),
            **_extent(timeline),
            "snapshot_names": [s.name for s in timeline.snapshots()], "current": current}


def node_objects(command: str, root: Any, cwd: str, targets: list[str]
                 ) -> Iterator[dict[str, Any]]:
    """``--json`` of ls, cat, tree and find: a ``shell_node`` object per node (find: per
    node under each target too), or a ``shell_error`` for a target that names none.
    Made as they are written: a find over a large tree is a stream."""
    from kmeta.core.image_nodes import resolve, walk

    for target in targets or ["."]:
        found = resolve(root, cwd, target)
        if not found:
            yield {"kind": "shell_error", "message": f"{command}: {target}: no such file or "
                   "directory.", "hint": None}
            continue
        for path, node in found:
            if command == "find":
                for sub, n in walk(node, path):
                    yield _node_object(sub, n, names=False, value=False)
            else:
                yield _node_object(path, node, names=command == "ls",
                                   value=command in ("cat", "tree"))


def _node_object(path: str, node: Any, names: bool, value: bool) -> dict[str, Any]:
    obj: dict[str, Any] = {"kind": "shell_node", "path": path, "directory": node.is_dir}
    if names:
        obj["names"] = node.names() if node.is_dir else None
    if value:
        obj["text"] = None if node.is_dir else node.text
        obj["value"] = node.json
    return obj


def findings_lines(findings: list[Any], given: list[str], colour: bool = False) -> list[str]:
    """What opening the replicas found, as every command lists its findings (a code met
    many times as one line, paths under what the user typed), the count line, and where
    to see the rest of the dir's; nothing when it found nothing."""
    if not findings:
        return []
    from kmeta.errors import Verdict
    from kmeta.render.text import Paths, listed_findings, shell_command, summary_line

    verify = shell_command("verify", *given)
    lines = list(listed_findings(findings, Paths(given), colour, f"{verify} lists them"))
    return [*lines, summary_line(Verdict(findings)),
            f"  (met opening the log; {verify} checks all of it)"]
