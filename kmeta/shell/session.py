"""The state of a ``kmeta shell`` and what its commands do to it.

A session stands at a point of one replica's log (its *position*: the image after every
record below an offset) and in a node of that image (its *working directory*, as
``kafka-metadata-shell.sh`` has one).  Commands move it through the node tree (``cd``),
through time (``at``, ``next``, ``prev``) and across replicas (``replica``), or read
what is there (``ls``, ``cat``, ``tree``, ``find``, ``grep``, ``diff``, ``changes``,
``records``).  Each returns a :class:`~kmeta.shell.replies.Reply`; nothing here
prints or reads a terminal.

The images come from each replica's :class:`~kmeta.ops.replay.timeline.Timeline` (checkpoints
at intervals: any point in well under a second), the node tree and its texts from
:mod:`kmeta.core.image_nodes` (Kafka 4.0's names), the record texts from ``kmeta dump``'s
own renderers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from kmeta.core import image_nodes as nodes
from kmeta.core.image import MetadataImage
from kmeta.errors import ExitCode, KmetaError, UsageError
from kmeta.findings import Finding
from kmeta.ops.replay import Provenance, Replicas, Timeline
from kmeta.render import nodes as node_text
from kmeta.render import shell as text
from kmeta.shell.points import Point, on_day_of, parse_point
from kmeta.shell.replies import Reply, refused
from kmeta.storage.progress import QUIET, Progress


@dataclass
class Here:
    """Where the session stands: the replica, the offset, the image there and its tree
    (built when first asked for), and the working directory."""

    replica: str
    offset: int
    image: Any
    provenance: Any
    cwd: str = "/"
    _tree: Any = None

    @property
    def tree(self) -> Any:
        if self._tree is None:
            self._tree = tree_of(self.image, self.provenance)
        return self._tree


def tree_of(image: MetadataImage, provenance: Provenance) -> Any:
    """The node tree of an image, with where it stands at /image/provenance."""
    return nodes.image_tree(image, provenance=nodes.Provenance(
        provenance.last_contained_offset, provenance.last_contained_epoch,
        provenance.last_contained_log_time_ms))


def absolute(cwd: str, path: str) -> str:
    """``path`` (relative to ``cwd``, with . and ..) as an absolute node path."""
    return nodes.path_of(nodes.split_path(cwd, path))


class Session:
    """One shell over ``replicas``, standing at the end of the first one's log."""

    def __init__(self, replicas: Replicas) -> None:
        self.replicas = replicas
        first = replicas.names()[0]
        self.here = self._stand(first, replicas[first].end, "/")
        #: command lines typed, for ``history N`` (the front end appends to it)
        self.typed: list[str] = []
        #: the screen's width where a person reads (ls then lays names out in columns,
        #: as Kafka's shell does at a terminal); None: one name a line
        self.width: int | None = None

    # ------------------------------------------------------------------ positions

    @property
    def findings(self) -> list[Finding]:
        """What opening the replicas found (damaged batches, a log that is gone), as
        ``kmeta image`` reports it: the shell's findings, for its exit status."""
        return [f for name in self.replicas.names() for f in self.replicas[name].findings]

    @property
    def timeline(self) -> Timeline:
        return self.replicas[self.here.replica]

    def _stand(self, replica: str, offset: int, cwd: str) -> Here:
        image, provenance = self.replicas[replica].image_at(offset)
        return Here(replica, offset, image, provenance, cwd)

    def resolve_point(self, point: Point) -> tuple[str, int]:
        """The replica and offset ``point`` names, from where the session stands."""
        replica = self.here.replica if point.replica is None else self.replica_name(
            point.replica)
        timeline = self.replicas[replica]
        if point.kind == "here":
            offset = self.here.offset if replica == self.here.replica else timeline.end
        elif point.kind == "start":
            offset = timeline.start
        elif point.kind == "end":
            offset = timeline.end
        elif point.kind == "offset":
            offset = point.value  # type: ignore[assignment]
        elif point.kind == "snapshot":
            if point.value not in [s.end_offset for s in timeline.snapshots()]:
                raise UsageError(f"{point.text}: no such snapshot in {replica}",
                                 hint="snapshots: " + snapshot_names(timeline))
            offset = point.value  # type: ignore[assignment]
        else:
            offset = timeline.offset_at(self._ms(point, timeline))
        if offset > timeline.end:
            past = f"past {replica}'s log end offset {timeline.end}" \
                if timeline.log_end is not None else \
                f"past {replica}'s last snapshot (it has no log), which ends at {timeline.end}"
            raise UsageError(f"{point.text}: offset {offset} is {past}",
                             hint=text.log_words(timeline))
        if offset < timeline.start:
            raise UsageError(f"{point.text}: offset {offset} is before {timeline.start}, "
                             f"the first offset {replica} has an image at",
                             hint=text.log_words(timeline, images=False))
        return replica, offset

    def _ms(self, point: Point, timeline: Timeline) -> int:
        """The time a time point names, in ms: a time of day on the day the session
        stands at."""
        assert point.value is not None
        return point.value if point.kind == "time" else on_day_of(
            point.value, self._time_here(timeline))

    def time_note(self, point: Point, replica: str) -> str | None:
        """Where a time point falls outside the log's times, a line that says so (the
        image there is still the state after every record stamped before it: none of
        the log's, or all of them); None otherwise.  Asked before the session moves (a
        time of day is on the day where it stands)."""
        timeline = self.replicas[replica]
        span = timeline.time_range()
        if point.kind not in ("time", "day_time") or span is None:
            return None
        ms = self._ms(point, timeline)
        if ms < span[0]:
            return text.time_note(point.text, "before", span[0])
        if ms > span[1]:
            return text.time_note(point.text, "after", span[1])
        return None

    def _time_here(self, timeline: Timeline) -> int:
        stamp = self.here.provenance.last_contained_log_time_ms
        if stamp < 0:
            stamp = timeline.provenance(timeline.end).last_contained_log_time_ms
        return max(stamp, 0)

    def replica_name(self, name: str) -> str:
        """The replica called ``name`` (or the one name it starts), else a UsageError."""
        names = self.replicas.names()
        if name in names:
            return name
        matches = [n for n in names if n.startswith(name)]
        if len(matches) == 1:
            return matches[0]
        raise UsageError(f"no replica {name!r}", hint="replicas: " + ", ".join(names))

    def move(self, replica: str, offset: int) -> None:
        """Stand at ``offset`` of ``replica``, keeping the working directory where it
        still exists (else its nearest parent that does)."""
        here = self._stand(replica, offset, self.here.cwd)
        cwd = here.cwd
        while cwd != "/" and not _is_dir(here.tree, cwd):
            cwd = cwd.rsplit("/", 1)[0] or "/"
        here.cwd = cwd
        self.here = here

    # ------------------------------------------------------------------ commands

    def ls(self, targets: list[str]) -> Reply:
        h = self.here
        return Reply(_hinted(node_text.ls_lines(h.tree, h.cwd, targets or ["."], self.width),
                             h.tree, h.cwd, targets),
                     text.node_objects("ls", h.tree, h.cwd, targets))

    def cat(self, targets: list[str]) -> Reply:
        return self._nodes("cat", targets, node_text.cat_lines)

    def tree(self, targets: list[str]) -> Reply:
        return self._nodes("tree", targets or ["."], node_text.tree_lines)

    def find(self, targets: list[str]) -> Reply:
        return self._nodes("find", targets or ["."], node_text.find_lines)

    def _nodes(self, command: str, targets: list[str],
               lines: Callable[..., Iterator[node_text.Line]]) -> Reply:
        h = self.here
        return Reply(_hinted(lines(h.tree, h.cwd, targets), h.tree, h.cwd, targets),
                     text.node_objects(command, h.tree, h.cwd, targets))

    def cd(self, target: str | None) -> Reply:
        before = self.here.cwd
        cwd, errors = nodes.change_dir(self.here.tree, before, target)
        self.here.cwd = cwd
        if errors:
            return refused(errors[0], path_hint(self.here.tree, before, target or "/"))
        return Reply(objects=[{"kind": "shell_cd", "path": cwd}])

    def pwd(self) -> Reply:
        return Reply([self.here.cwd], [{"kind": "shell_cd", "path": self.here.cwd}])

    def at(self, words: list[str]) -> Reply:
        if not words:
            return self.where()
        if words[0].lower() == "snapshot":
            if len(words) != 2:
                return refused("at snapshot: name one snapshot",
                               "snapshots: " + self._snapshot_names())
            words = ["snapshot:" + words[1]]
        if len(words) != 1:
            return refused("at: one point", "at OFFSET | at TIME | at snapshot NAME | at end")
        point = parse_point(words[0])
        replica, offset = self.resolve_point(point)
        note = self.time_note(point, replica)
        self.move(replica, offset)
        reply = self.where()
        if note is not None:
            reply.lines = [note, *reply.lines]
        return reply

    def _snapshot_names(self) -> str:
        return snapshot_names(self.timeline)

    def where(self) -> Reply:
        """Where the session stands, in a line and an object."""
        h = self.here
        return Reply(text.where_lines(h.replica, h.offset, h.provenance, self.timeline),
                     [text.where_object(h.replica, h.offset, h.provenance, self.timeline)])

    def step(self, forward: bool, count: int) -> Reply:
        """``next``/``prev``: move ``count`` record batches, each step printed as the
        nodes it changed.  One replay over the steps (:meth:`Timeline.walk`), each batch
        read by its position: a step costs the batch and the image, however long the
        log; two trees are held at a time, and the steps' lines."""
        name = "next" if forward else "prev"
        if count < 1:
            return refused(f"{name}: {count}: a count is 1 or more")
        out = Reply()
        timeline = self.timeline
        here = self.here
        if timeline.index is None:  # a step is a record batch: snapshots alone have none
            ends = ", ".join(str(s.end_offset) for s in timeline.snapshots())
            return refused(f"{name}: {here.replica} has no log, only snapshots: no record "
                           "batch to step over", f"at OFFSET stands at a snapshot's end: {ends}")
        to = timeline.next_batch(here.offset, count) if forward else \
            timeline.prev_batch(here.offset, count)
        low, high = sorted((here.offset, to))
        steps: list[tuple[int, int, list[Any]]] = []  # (low, high, changes) in log order
        before_offset, before_tree = low, None
        for offset, image, provenance in timeline.walk(low, high):
            tree = tree_of(image, provenance)
            if offset > low:
                changes = changes_under(before_tree, tree, "/image") if forward else \
                    changes_under(tree, before_tree, "/image")
                steps.append((before_offset, offset, changes))
            before_offset, before_tree = offset, tree
        if not steps and high > low:
            # no data batch between, only heartbeats (or control batches) up to the log's
            # end or from its start: a step all the same, which changes no node
            steps.append((low, high, []))
        elif steps and steps[-1][1] < high:
            # the heartbeats after the last data batch, up to where the shell stood (or
            # the log's end): part of that step, which they change nothing of
            steps[-1] = (steps[-1][0], high, steps[-1][2])
        for a, b, changes in steps if forward else reversed(steps):
            records = list(timeline.history_records(a, b))
            out.lines += text.step_lines(a, b, records, changes, forward)
            out.objects.append(text.step_object(here.replica, *((a, b) if forward else (b, a)),
                                                changes))
        if len(steps) < count:
            # where the images end or start: the log end offset, or the first snapshot
            # inside a log that does not start at 0 (not the log's start)
            out.lines.append(f"({here.replica} has no image {'past' if forward else 'before'}"
                             f" offset {to}: {len(steps)} of {count} step(s))")
        if to != here.offset:
            self.move(here.replica, to)
        return out

    def diff(self, words: list[str]) -> Reply:
        """``diff A [B] [PATH]``: the nodes added, removed and changed from point A to
        point B (default: where the session stands), under PATH (default: /image)."""
        from kmeta.shell.points import looks_like_point, parse_range

        points: list[Point] = []
        both = parse_range(words[0]) if words else None
        if both is not None:  # diff 0..20, as records 0..20
            points += both
            words.pop(0)
        while words and len(points) < 2 and looks_like_point(words[0]):
            points.append(parse_point(words.pop(0)))
        if not points or len(words) > 1:
            return refused("diff: diff POINT [POINT] [PATH]",
                           "e.g. diff 4000 end /image/topics, diff ctrl-1@end ctrl-2@end")
        if len(points) == 1:
            points.append(Point("here", None, "."))
        (ra, oa), (rb, ob) = (self.resolve_point(p) for p in points)
        notes = [n for p, r in zip(points, (ra, rb), strict=True)
                 if (n := self.time_note(p, r)) is not None]
        path = absolute(self.here.cwd, words[0]) if words else "/image"
        changes = changes_under(self._tree_at(ra, oa), self._tree_at(rb, ob), path)
        return Reply([*notes, *text.diff_lines(changes, f"{ra}@{oa}", f"{rb}@{ob}", path)],
                     [text.diff_object(ra, oa, rb, ob, path, changes)])

    def _tree_at(self, replica: str, offset: int) -> Any:
        if replica == self.here.replica and offset == self.here.offset:
            return self.here.tree
        return tree_of(*self.replicas[replica].image_at(offset))

    def history(self, words: list[str]) -> Reply:
        """``history [N]``: the last N command lines typed (all of them without N), as
        Kafka's shell and bash have it.  A node's records are :meth:`changes`'."""
        if len(words) > 1 or (words and not re.fullmatch(r"[0-9]+", words[0])):
            what = " ".join(words)
            return refused(f"history: {what}: a number of lines typed",
                           f"the records that changed a node: changes {what}")
        n = int(words[0]) if words else len(self.typed)
        shown = self.typed[-n:] if n else []
        start = len(self.typed) - len(shown) + 1
        lines = [f"{start + i:5d}  {line}" for i, line in enumerate(shown)]
        if words and nodes.resolve(self.here.tree, self.here.cwd, words[0]):
            # "history 0" in a topic's dir, where 0 is a partition: say which is which
            lines.append(f"(history {words[0]}: the last {n} line(s) typed; the records "
                         f"that changed node {words[0]}: changes {words[0]})")
        return Reply(lines, [{"kind": "shell_command", "number": start + i, "line": line}
                             for i, line in enumerate(shown)])

    def changes(self, words: list[str]) -> Reply:
        """``changes [PATH]``: every record up to here that touched the node at PATH (or
        under it, or above it): the node's history in the log."""
        if len(words) > 1:
            return refused("changes: one path at most", "changes [PATH]")
        path = absolute(self.here.cwd, words[0] if words else ".")
        rows = list(self._touching(path))
        return Reply(text.history_lines(rows, path), [text.history_object(r) for r in rows])

    def _touching(self, path: str) -> Iterator[Any]:
        """The records up to where the session stands that touched ``path``.  A record's
        paths name topics by the names they had then: a small image follows the records
        that give and take names (topics, their configs) alongside."""
        timeline = self.timeline
        names, _ = timeline.image_at(timeline.start)
        for row in timeline.history_records(timeline.start, self.here.offset):
            touched = nodes.record_paths(row.type_name, row.data, names)
            if row.type_name in _NAMING:
                names.apply(row.type_name, row.version, row.data, row.offset)
            if any(nodes.related(path, p) for p in touched):
                yield row

    def grep(self, words: list[str]) -> Reply:
        """``grep PATTERN [PATH]``: the leaves under PATH (default: the working directory)
        whose text matches the regular expression, a line each."""
        if not words or len(words) > 2:
            return refused("grep: grep PATTERN [PATH]", "e.g. grep 'leader=-1' /image/topics")
        try:
            pattern = re.compile(words[0])
        except re.error as e:
            return refused(f"grep: {words[0]!r} is not a regular expression: {e}")
        root = words[1] if len(words) > 1 else "."
        matches = nodes.resolve(self.here.tree, self.here.cwd, root)
        if not matches:
            return refused(f"grep: {root}: no such file or directory.")
        out = Reply()
        for base, node in matches:
            for path, leaf in nodes.flatten(node, base).items():
                if pattern.search(leaf):
                    out.lines.append(f"{path}: {leaf}")
                    out.objects.append({"kind": "shell_match", "path": path, "text": leaf})
        if not out.lines:
            out.status = ExitCode.FINDINGS  # as grep(1): 1 when nothing matched
        return out

    def records(self, words: list[str], json_out: bool) -> Reply:
        """``records FROM [TO]``: the records of offsets FROM to TO, both included (as
        ``kmeta dump --from-offset --to-offset`` and every ``A..B`` kmeta prints), as
        ``kmeta dump -r`` prints them (``--json``: its record objects).  Streamed: read
        as they are written, so a range of the whole log shows its first screen at once
        and holds what ``dump -r`` holds."""
        from kmeta.shell.points import parse_range

        both = parse_range(words[0]) if len(words) == 1 else None
        if not both and (not words or len(words) > 2 or not all(words)):
            return refused("records: records FROM [TO]", "e.g. records 4000 4099, "
                           "records 4000..4099")
        points = list(both) if both else [parse_point(w) for w in words]
        (ra, oa), *rest = (self._record_point(p) for p in points)
        rb, ob = rest[0] if rest else (ra, oa)
        if ra != rb:
            return refused("records: both points on one replica")
        if ob < oa:
            return refused(f"records: {points[-1].text} is before {points[0].text}")
        from kmeta.render.jsonl import render as render_json
        from kmeta.render.text import render as render_text
        from kmeta.render.text import shell_command

        timeline = self.replicas[ra]
        if timeline.index is None:  # the records of a snapshot are dump's to print
            snaps = timeline.snapshots()
            snap = next((s for s in reversed(snaps) if s.end_offset <= ob + 1), snaps[0])
            return refused(f"records: {ra} has no log, only snapshots",
                           "a snapshot's records: " + shell_command("dump", "-r",
                                                                    str(snap.path)))
        return Reply(render_text(timeline.records(oa, ob), records=True),
                     (json.loads(line) for line in render_json(timeline.records(oa, ob),
                                                               records_only=True)))

    def _record_point(self, point: Point) -> tuple[str, int]:
        """The replica and offset of a record a point names: ``end`` is the log's last
        record, not the log end offset after it."""
        replica, offset = self.resolve_point(point)
        if point.kind == "end" and offset > self.replicas[replica].start:
            offset -= 1
        return replica, offset

    def replica(self, words: list[str]) -> Reply:
        if not words:
            names = self.replicas.names()
            return Reply([("* " if n == self.here.replica else "  ")
                          + text.replica_line(n, self.replicas[n]) for n in names],
                [text.replica_object(n, self.replicas[n], n == self.here.replica)
                 for n in names])
        if len(words) != 1:
            return refused("replica: replica [NAME]")
        name = self.replica_name(words[0])
        timeline = self.replicas[name]
        offset = min(max(self.here.offset, timeline.start), timeline.end)
        self.move(name, offset)
        return self.where()


def changes_under(before: Any, after: Any, path: str) -> list[Any]:
    """The leaves added, removed and changed under ``path`` from one tree to the other,
    as a person reads them: a partition once (by its topic's name; by id only under
    /image/topics/byId), and not /image/provenance, which every step changes (unless
    ``path`` is it)."""
    a = nodes.resolve(before, "/", path)
    b = nodes.resolve(after, "/", path)
    if a and b:
        changes = nodes.diff_nodes(a[0][1], b[0][1], path)
    else:
        changes = [(p, "added", None, t) for p, t in nodes.flatten(b[0][1], path).items()] \
            if b else [(p, "removed", t, None) for p, t in nodes.flatten(
                a[0][1], path).items()] if a else []
    by_id = path.startswith("/image/topics/byId")
    return [c for c in changes if (by_id or not c[0].startswith("/image/topics/byId/"))
            and (c[0] != "/image/provenance" or path == c[0])]


def path_hint(tree: Any, cwd: str, target: str) -> str | None:
    """A suggestion for a path that names nothing: the path with its first missing part
    replaced by the nearest name where it points ("did you mean
    /image/cluster/brokers/1?"), or None."""
    import difflib

    parts = nodes.split_path(cwd, target)
    node = tree
    for i, part in enumerate(parts):
        child = node.child(part) if node.is_dir else None
        if child is not None:
            node = child
            continue
        close = difflib.get_close_matches(part, node.names(), n=1) if node.is_dir else []
        if not close:
            return None
        return f"did you mean {nodes.path_of([*parts[:i], close[0], *parts[i + 1:]])}?"
    return None


def _hinted(lines: Iterator[Any], tree: Any, cwd: str, targets: list[str]) -> Iterator[Any]:
    """Kafka's lines, each "no such" line followed by a suggestion where one is near."""
    for line in lines:
        yield line
        if isinstance(line, node_text.Line) and line.error:
            target = next((t for t in targets if f": {t}: " in line.text), None)
            hint = path_hint(tree, cwd, target) if target is not None else None
            if hint is not None:
                yield node_text.Line(f"  {hint}", True)


#: the records that give or take a topic's name or its configs: what history's small
#: image of names follows
_NAMING = frozenset(("TOPIC_RECORD", "REMOVE_TOPIC_RECORD", "CONFIG_RECORD"))


def snapshot_names(timeline: Timeline) -> str:
    return ", ".join(s.name for s in timeline.snapshots()) or "none"


def _is_dir(tree: Any, path: str) -> bool:
    found = nodes.resolve(tree, "/", path)
    return bool(found) and found[0][1].is_dir


def open_session(paths: list[str], progress: Progress = QUIET) -> Session:
    """A session over the metadata replicas under ``paths``: each path one, or each
    ``__cluster_metadata`` partition under it where it holds several (a cluster's copies
    in one folder); a KmetaError (one line) when one holds no metadata log.  ``progress``
    hears of the opening's reads."""
    return Session(Replicas.open(replica_paths(paths), progress))


def replica_paths(paths: list[str]) -> list[str]:
    """``paths``, with a folder that holds several metadata partitions given as each of
    them (their data dirs, which name the replicas)."""
    from kmeta.storage.discover import discover

    out: list[str] = []
    for path in paths:
        try:
            parts = [p for p in discover([path]).all_partitions() if p.is_metadata]
        except KmetaError:  # said again, in its one line, when it is opened
            parts = []
        out += [str(p.path.parent) for p in parts] if len(parts) > 1 else [path]
    return out
