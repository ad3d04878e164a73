"""The report's pictures, each a :class:`~kmeta.render.report.svg.Chart` of the results the
report holds: leader epochs (over offsets and over time), the lives of brokers and
controllers, snapshots and retention, and each replica's log layout.

Each function returns the figure's HTML, or "" when the data has no such picture."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

from kmeta.core.lifecycle import Silence, duration
from kmeta.findings import Finding
from kmeta.ops.report import MetadataReplica, Report
from kmeta.render.report.svg import Chart, Lane, Mark, Span, utc
from kmeta.render.retention import size

__all__ = ["epochs_by_offset", "epochs_by_time", "layout", "lifecycle", "partitions",
           "snapshots"]

#: Topics drawn in the partitions picture: the ones with the most findings first.
MOST_TOPICS = 80

#: What each state of a node's registration is called, in the lanes' legend.
STATES = {
    "unfenced": "unfenced (serving)",
    "fenced": "fenced",
    "controlled_shutdown": "in controlled shutdown",
    "shut_down": "shut down (fenced after controlled shutdown)",
    "registered": "registered (controller)",
    "unregistered": "not registered",
    "unknown": "state unknown (before the log on disk)",
    "silent": "no record in the log (the cluster off, or quiet before Kafka 3.3): "
              "no state seen",
}


def _same(a: str | Path, b: Path) -> bool:
    try:
        return Path(a).resolve() == b.resolve()
    except OSError:
        return str(a) == str(b)


def _replica_of(report: Report, label: str) -> MetadataReplica | None:
    return next((m for m in report.metadata if _same(label, m.path)), None)


def _end(m: MetadataReplica) -> int:
    if m.log_end_offset is not None:
        return m.log_end_offset
    return max((s.end_offset or s.base_offset for s in m.segments), default=0)


def _replica_tip(m: MetadataReplica) -> str:
    node = f", node {m.node_id}" if m.node_id is not None else ""
    if m.log_start_offset is None or m.log_end_offset is None:
        return f"{m.path}{node}: no log segment"
    if m.log_end_offset <= m.log_start_offset:
        return f"{m.path}{node}: an empty log, its end offset {m.log_end_offset}"
    # first..last, both held, as every range kmeta prints (the log end offset is one past)
    return f"{m.path}{node}: offsets {m.log_start_offset}..{m.log_end_offset - 1}"


def _divergences(report: Report) -> dict[str, list[Mark]]:
    """Per replica label: a mark where it and another replica part ways."""
    out: dict[str, list[Mark]] = {}
    if report.diff is None:
        return out
    for p in report.diff.pairs:
        if p.divergence_offset is None:
            continue
        a, b = _replica_of(report, p.local.label), _replica_of(report, p.peer.label)
        if a is None or b is None:
            continue
        epoch = f" (epoch {p.divergence_epoch})" if p.divergence_epoch is not None else ""
        for me, other in ((a, b), (b, a)):
            out.setdefault(me.label, []).append(Mark(
                p.divergence_offset, "diverge",
                f"{me.label} and {other.label} diverge at offset {p.divergence_offset}"
                f"{epoch}: {p.status}", shape="bar"))
    return out


def time_at(m: MetadataReplica, offset: int) -> int | None:
    """When ``offset`` was written in replica ``m``, as near as its time samples say: the
    time of the last sampled batch at or below it."""
    import bisect

    if not m.times:
        return None
    i = bisect.bisect_right(m.times, (offset, float("inf"))) - 1
    return m.times[max(i, 0)][1]


def _epoch_spans(m: MetadataReplica, ends: list[float], time: bool) -> list[Span]:
    spans = []
    for i, (epoch, start, ts) in enumerate(m.epochs):
        lo = ts if time else start
        hi = ends[i]
        if lo is None or hi is None:
            continue
        until = m.epochs[i + 1][1] if i + 1 < len(m.epochs) else _end(m)
        when = f", from {utc(ts)}" if ts is not None else ""
        spans.append(Span(lo, max(hi, lo), f"epoch e{i % 2}",
                          f"{m.label}: epoch {epoch}, offsets {start}..{until - 1}{when}",
                          label=str(epoch)))
    return spans


def _quorum_lane(report: Report, time: bool) -> Lane | None:
    b = report.brokers
    if b is None or not b.leaders:
        return None
    lane = Lane("quorum leader", key="quorum", kind="quorum",
                tip="who led each epoch of the quorum (LeaderChange records)")
    end = b.log_end_offset if b.log_end_offset is not None else b.leaders[-1].offset
    for i, s in enumerate(b.leaders):
        who = f"controller {s.leader}" if s.leader is not None else "leader not recorded"
        lo = s.timestamp if time else s.offset
        hi = (s.timestamp + s.duration_ms) if time else (
            b.leaders[i + 1].offset if i + 1 < len(b.leaders) else end)
        voters = f", voters {s.voters}" if s.voters else ""
        lane.spans.append(Span(lo, max(lo, hi), f"leader q{i % 2}",
                               f"epoch {s.epoch}: {who} from offset {s.offset}, "
                               f"{utc(s.timestamp)}, for {duration(s.duration_ms)}{voters}",
                               label="?" if s.leader is None else str(s.leader)))
    return lane


_EPOCH_LEGEND = (("e0", "leader epoch (shades alternate; the number is the epoch)"),
                 ("q0", "quorum leader: the controller id that led the epoch"),
                 ("before", "before the log start (held by a snapshot)"),
                 ("no-epoch", "in the log, but its epoch is not in the epoch cache"),
                 ("diverge", "replicas diverge here (kmeta diff)"))


def epochs_by_offset(report: Report) -> str:
    # a replica without a segment has an epoch cache but no log end to draw it to
    reps = [m for m in report.metadata if m.epochs and m.segments]
    if not reps:
        return ""
    marks = _divergences(report)
    lanes = []
    for m in reps:
        ends = [float(m.epochs[i + 1][1]) if i + 1 < len(m.epochs) else float(_end(m))
                for i in range(len(m.epochs))]
        lane = Lane(m.label, key=m.label, tip=_replica_tip(m))
        if m.log_start_offset:
            lane.spans.append(Span(0, m.log_start_offset, "before",
                                   f"{m.label}: offsets below {m.log_start_offset} are "
                                   "no longer in the log"))
        begin = m.log_start_offset or 0
        if m.epochs[0][1] > begin:
            lane.spans.append(Span(begin, m.epochs[0][1], "no-epoch",
                                   f"{m.label}: offsets {begin}..{m.epochs[0][1] - 1}: "
                                   "their epoch is not in the leader-epoch cache"))
        lane.spans += _epoch_spans(m, ends, time=False)
        lane.marks = marks.get(m.label, [])
        lanes.append(lane)
    quorum = _quorum_lane(report, time=False)
    if quorum is not None:
        lanes.append(quorum)
    hi = max(max(_end(m) for m in reps), max((s.end for s in (quorum.spans if quorum
                                                               else [])), default=0))
    return Chart("Leader epochs over offsets", lanes, 0, hi, axis_label="offset",
                 name="epochs-offsets", legend=_EPOCH_LEGEND,
                 note="Each replica's log by leader epoch; the last lane is who led each "
                      "epoch, from the metadata log read by kmeta brokers.").svg()


def epochs_by_time(report: Report) -> str:
    reps = [m for m in report.metadata if any(ts is not None for _, _, ts in m.epochs)]
    if not reps:
        return ""
    marks = _divergences(report)
    lanes = []
    lo: float = math.inf
    hi: float = -math.inf
    for m in reps:
        last = max((s.max_timestamp for s in m.segments if s.max_timestamp is not None),
                   default=None)
        times = [ts for _, _, ts in m.epochs]
        ends = [next((t for t in times[i + 1:] if t is not None), last)
                for i in range(len(times))]
        lane = Lane(m.label, key=m.label, tip=_replica_tip(m))
        lane.spans = _epoch_spans(m, ends, time=True)
        for s in lane.spans:
            lo, hi = min(lo, s.start), max(hi, s.end)
        for mark in marks.get(m.label, []):
            when = time_at(m, int(mark.at))
            if when is not None:
                lane.marks.append(Mark(when, mark.kind, f"{mark.tip}; written about "
                                       f"{utc(when)} here", shape="bar"))
        lanes.append(lane)
    quorum = _quorum_lane(report, time=True)
    if quorum is not None:
        lanes.append(quorum)
        for s in quorum.spans:
            lo, hi = min(lo, s.start), max(hi, s.end)
    return Chart("Leader epochs over time (UTC)", lanes, lo, hi, time=True,
                 axis_label="time (UTC)", name="epochs-time",
                 legend=(_EPOCH_LEGEND[0], _EPOCH_LEGEND[1], _EPOCH_LEGEND[4]),
                 note="When each epoch's first batch was written, per replica, "
                      "and who led it.").svg()


def lifecycle(report: Report) -> str:
    b = report.brokers
    if b is None or not b.summary:
        return ""
    crashes = {f.offset for f in b.findings if f.code == "V131"}
    storms = [f for f in b.findings if f.code == "V133"]
    lo = b.first_timestamp
    hi = b.last_timestamp
    if lo is None or hi is None:
        times = [e.timestamp for e in b.events]
        lo, hi = (min(times), max(times)) if times else (0, 0)
    if not b.events:
        return _states_only(report)
    lanes = []
    for s in b.summary:
        events = [e for e in b.events if e.role == s.role and e.node == s.node]
        lane = Lane(f"{s.role} {s.node}", key=f"{s.role}-{s.node}", kind=s.role,
                    tip=_summary_tip(s))
        state = events[0].state_before if events else s.state
        since, since_offset = lo, b.start_offset
        for e in events:
            if e.timestamp > since or e is events[0]:
                lane.spans.append(_state_span(lane.label, state, since, e.timestamp,
                                              since_offset, e.offset))
            state, since, since_offset = e.state, e.timestamp, e.offset
            what = (f"{lane.label} {e.event.replace('_', ' ')} at offset {e.offset}, "
                    f"{utc(e.timestamp)}: {e.state_before} → {e.state}")
            if e.fence_kind:
                what += f" ({e.fence_kind.replace('_', ' ')})"
            if e.offset in crashes and e.event == "re_registered":
                lane.marks.append(Mark(e.timestamp, "crash", what + ": it had crashed "
                                       "(V131)", radius=6))
            elif e.event in ("registered", "re_registered", "unregistered"):
                lane.marks.append(Mark(e.timestamp, "registration", what, shape="bar"))
        lane.spans.append(_state_span(lane.label, state, since, hi, since_offset,
                                      b.log_end_offset))
        lane.spans = _silenced(lane.label, lane.spans, b.silences)
        for f in storms:
            nodes = f.details.get("brokers", [])
            first, last = f.details.get("first_offset"), f.details.get("last_offset")
            if s.role != "broker" or s.node not in nodes or first is None or last is None:
                continue
            hit = next((e for e in events if e.event == "fenced"
                        and first <= e.offset <= last), None)
            if hit is not None:
                lane.marks.append(Mark(hit.timestamp, "storm",
                                       f"fencing storm (V133): {f.message}", shape="dot"))
        lanes.append(lane)
    kinds = {sp.kind.split()[-1] for lane in lanes for sp in lane.spans}
    legend = [(k, text) for k, text in STATES.items() if k in kinds]
    legend += [("registration", "registered, re-registered or unregistered"),
               ("crash", "crashed: re-registered without a clean shutdown (V131)"),
               ("storm", "fencing storm: brokers fenced together (V133)")]
    note = ("One lane per broker and controller the log registered, from "
            f"{utc(lo)} to {utc(hi)}.")
    if b.snapshot_only:
        note = "Only a snapshot was read: each node's state at it, no history."
    return Chart("Brokers and controllers over time (UTC)", lanes, lo, hi, time=True,
                 axis_label="time (UTC)", name="lifecycle", legend=legend, note=note).svg()


def _silenced(who: str, spans: list[Span], silences: list[Silence]) -> list[Span]:
    """The state spans with the stretches the log holds no record of cut out and drawn
    as such: a broker is not seen serving, or fenced, while nothing was written."""
    out: list[Span] = []
    for span in spans:
        pieces = [span]
        for quiet in silences:
            cut: list[Span] = []
            for p in pieces:
                if quiet.end <= p.start or quiet.start >= p.end:
                    cut.append(p)
                    continue
                if quiet.start > p.start:
                    cut.append(_retold(who, p, p.start, quiet.start))
                if quiet.end < p.end:
                    cut.append(_retold(who, p, quiet.end, p.end))
            pieces = cut
        out += pieces
    for quiet in silences:
        out.append(Span(quiet.start, quiet.end, "state silent",
                        f"{who}: no record in the log for at least {duration(quiet.ms)}, "
                        f"{utc(quiet.start)} to {utc(quiet.end)} (between offsets {quiet.after} "
                        f"and {quiet.offset}): the cluster was off, or quiet before Kafka "
                        "3.3's NoOps; no state is seen"))
    return sorted(out, key=lambda x: x.start)


def _retold(who: str, span: Span, start: float, end: float) -> Span:
    """A piece of a state span between silences, its tooltip its own."""
    state = span.kind.split()[-1]
    return replace(span, start=start, end=end,
                   tip=f"{who}: {STATES.get(state, state)} from {utc(int(start))} to "
                       f"{utc(int(end))} ({duration(int(end - start))}); a stretch with no "
                       "record in the log cuts it")


def _states_only(report: Report) -> str:
    """Each node's state where the log tells no change (a lone snapshot, or a log with
    no registration record): one bar per node, no time axis."""
    b = report.brokers
    assert b is not None
    lanes = []
    for s in b.summary:
        lane = Lane(f"{s.role} {s.node}", key=f"{s.role}-{s.node}", kind=s.role,
                    tip=_summary_tip(s))
        lane.spans.append(Span(0, 1, f"state {s.state}",
                               f"{lane.label}: {STATES.get(s.state, s.state)}",
                               label=STATES.get(s.state, s.state)))
        lanes.append(lane)
    where = f" at offset {b.start_offset}" if b.snapshot_only else ""
    note = (f"Only a snapshot was read: each node's state{where}, no history."
            if b.snapshot_only else "The log holds no registration change: each node's "
            "state as the log leaves it.")
    return Chart("Brokers and controllers", lanes, 0, 1, name="lifecycle", axis=False,
                 legend=[(k, t) for k, t in STATES.items()], note=note).svg()


def _summary_tip(s) -> str:  # noqa: ANN001
    parts = [f"{s.role} {s.node}: now {s.state}"]
    for name in ("registrations", "fences", "controlled_shutdowns", "crashes"):
        v = getattr(s, name)
        if v:
            parts.append(f"{name.replace('_', ' ')} {v}")
    if s.fenced_ms:
        parts.append(f"fenced for {duration(s.fenced_ms)} in all")
    return ", ".join(parts)


def _state_span(who: str, state: str, start: float, end: float, first: int | None,
                last: int | None) -> Span:
    offsets = "" if first is None or last is None else f", offsets {first}..{last}"
    return Span(start, max(start, end), f"state {state}",
                f"{who}: {STATES.get(state, state)} from {utc(int(start))} to "
                f"{utc(int(end))} ({duration(int(end - start))}){offsets}")


def _retention_of(report: Report, m: MetadataReplica):  # noqa: ANN202
    return next((r for r in report.retention if _same(r.partition, m.path)), None)


def snapshots(report: Report) -> str:
    lanes = []
    lo: float = math.inf
    hi: float = -math.inf
    biggest_snap = max((s.size or 0 for r in report.retention for s in r.snapshots),
                       default=0) or 1
    biggest_log = max((s.log_bytes or 0 for r in report.retention for s in r.snapshots),
                      default=0) or 1
    for m in report.metadata:
        r = _retention_of(report, m)
        if r is None or not any(s.timestamp is not None for s in r.snapshots):
            continue
        lane = Lane(m.label, key=m.label, tip=_replica_tip(m))
        # the log before the first snapshot began with the log's first batch
        first = next((s.first_timestamp for s in m.segments
                      if s.first_timestamp is not None), None)
        previous = first
        for s in sorted(r.snapshots, key=lambda s: s.id.offset):
            if s.timestamp is None:
                continue
            if previous is not None and s.log_bytes is not None:
                lane.spans.append(Span(previous, s.timestamp, "between",
                                       f"{size(s.log_bytes)} of log ({s.log_records} "
                                       f"records) before snapshot {s.id.offset}; trigger: "
                                       f"{s.trigger or 'unknown'}",
                                       label=size(s.log_bytes),
                                       fill=s.log_bytes / biggest_log))
            deleted = s.fate != "kept" or s.state == "deleted"
            lane.marks.append(Mark(
                s.timestamp, "snapshot-deleted" if deleted else "snapshot",
                f"snapshot {s.path.name}: end offset {s.id.offset}, epoch {s.id.epoch}, "
                f"{size(s.size)}, {s.records} records, {utc(s.timestamp)}; {s.fate}",
                shape="dot", radius=3 + 6 * math.sqrt((s.size or 0) / biggest_snap)))
            previous = s.timestamp
            lo, hi = min(lo, s.timestamp), max(hi, s.timestamp)
        for seg in m.segments:
            row = next((g for g in r.segments if g.base_offset == seg.base_offset), None)
            if row is None or row.fate == "kept" or seg.first_timestamp is None:
                continue
            end = seg.max_timestamp or seg.first_timestamp
            lane.spans.append(Span(seg.first_timestamp, end, "deleted",
                                   f"segment {seg.path.name} ({size(seg.size)}): {row.fate}",
                                   fill=0.25))
            lo, hi = min(lo, seg.first_timestamp), max(hi, end)
        if first is not None and r.log_start is not None:
            lane.marks.append(Mark(first, "log-start",
                                   f"{m.label}: the log starts at offset {r.log_start}, "
                                   f"{utc(first)}", shape="bar"))
            lo, hi = min(lo, first), max(hi, first)
        lanes.append(lane)
    if not lanes:
        return ""
    return Chart("Snapshots and retention over time (UTC)", lanes, lo, hi, time=True,
                 axis_label="time (UTC)", name="snapshots",
                 legend=(("snapshot", "snapshot kept (area: its size)"),
                         ("snapshot-deleted", "snapshot retention deletes"),
                         ("between", "log bytes between snapshots (height: bytes)"),
                         ("deleted", "segment retention deletes"),
                         ("log-start", "where the log starts")),
                 note="When each snapshot was taken (its last record's time), how much "
                      "log came before it, and what kmeta retention says Kafka deletes."
                 ).svg()


def layout(report: Report) -> str:
    reps = [m for m in report.metadata if m.segments]
    if not reps:
        return ""
    lanes = []
    hi = 0
    for m in reps:
        r = _retention_of(report, m)
        fates = {g.base_offset: g.fate for g in r.segments} if r else {}
        lane = Lane(m.label, key=m.label, tip=_replica_tip(m))
        end = _end(m)
        for i, seg in enumerate(m.segments):
            stop = seg.end_offset if seg.end_offset is not None else seg.base_offset
            fate = fates.get(seg.base_offset, "kept")
            kind = "deleted" if fate != "kept" else f"segment g{i % 2}"
            when = ""
            if seg.first_timestamp is not None and seg.max_timestamp is not None:
                when = f", {utc(seg.first_timestamp)} to {utc(seg.max_timestamp)}"
            lane.spans.append(Span(seg.base_offset, max(stop, seg.base_offset), kind,
                                   f"{seg.path.name}: offsets {seg.base_offset}..{stop - 1}, "
                                   f"{size(seg.size)}{when}; retention: {fate}",
                                   label=size(seg.size)))
            hi = max(hi, stop)
        if m.repair_cut is not None and m.repair_cut < end:
            lane.spans.append(Span(m.repair_cut, end, "cut",
                                   f"kmeta repair cuts offsets {m.repair_cut}..{end - 1} "
                                   "(the log ends before the first damage)"))
        for snap_end, path, snap_size, _ in m.snapshots:
            lane.marks.append(Mark(snap_end, "snapshot", f"snapshot {path.name}: end offset "
                                   f"{snap_end}, {size(snap_size)}", shape="pin"))
        if m.log_start_offset is not None:
            lane.marks.append(Mark(m.log_start_offset, "log-start",
                                   f"{m.label}: the log starts at offset "
                                   f"{m.log_start_offset}", shape="bar"))
        for d in sorted(m.damage, key=lambda d: d.severity == "error"):
            at = d.offset
            if at is None:
                at = next((s.base_offset for s in m.segments if s.path == d.path), None)
            if at is None:
                continue
            where = f"byte {d.position}, " if d.position is not None else ""
            lane.marks.append(Mark(at, "damaged" if d.severity == "error" else "warned",
                                   f"{d.code} ({d.severity}) in {d.path.name}: {where}"
                                   f"offset {d.offset if d.offset is not None else '?'}"))
        lanes.append(lane)
    return Chart("Log layout of each replica", lanes, 0, hi, axis_label="offset",
                 name="layout",
                 legend=(("g0", "segment (shades alternate; label: its size)"),
                         ("deleted", "segment retention deletes"),
                         ("damaged", "damage an error finding names"),
                         ("warned", "a warning finding"),
                         ("cut", "what kmeta repair would cut"),
                         ("snapshot", "snapshot (its end offset)"),
                         ("log-start", "where the log starts")),
                 note="Segments as offset ranges; hover for file, bytes and times."
                 ).svg()


def partitions(report: Report, found: list[Finding]) -> str:
    """Every ordinary partition on the paths, by topic (a lane) and partition number,
    coloured by its worst finding: where a large broker's damage is, at a glance.
    Consecutive partitions alike are one shape."""
    if not report.partitions:
        return ""
    owner: dict[str, tuple[str, int]] = {}
    for key, dirs in report.partitions.items():
        for d in dirs:
            owner[str(d)] = key
    hits: dict[tuple[str, int], list[Finding]] = {}
    for f in found:
        key = _partition_of(f, owner, report.partitions)
        if key is not None:
            hits.setdefault(key, []).append(f)
    topics: dict[str, list[int]] = {}
    for topic, number in report.partitions:
        topics.setdefault(topic, []).append(number)
    worst_first = sorted(topics, key=lambda t: (-sum(len(hits.get((t, p), []))
                                                     for p in topics[t]), t))
    shown = sorted(worst_first[:MOST_TOPICS])
    lanes = []
    for topic in shown:
        lane = Lane(topic, key=topic, tip=f"{topic}: {len(topics[topic])} partition(s)")
        run: list[tuple[int, str, list[Finding]]] = []
        for number in sorted(topics[topic]):
            mine = hits.get((topic, number), [])
            sev = _worst(mine)
            if run and (sev != run[-1][1] or mine or run[-1][2]
                        or number != run[-1][0] + 1):
                lane.spans.append(_partition_span(topic, run))
                run = []
            run.append((number, sev, mine))
        if run:
            lane.spans.append(_partition_span(topic, run))
        lanes.append(lane)
    hi = max(max(numbers) for numbers in topics.values()) + 1
    left = len(topics) - len(shown)
    note = (f"{len(report.partitions):,} partition(s) of {len(topics):,} topic(s), each "
            "coloured by its worst finding (a gap: a partition not on these paths)")
    if left:
        note += f"; the {left:,} topic(s) with the fewest findings are left out"
    return Chart("Partitions by topic", lanes, 0, hi, axis_label="partition",
                 name="partitions", lane_height=18, note=note + ".",
                 legend=(("p-ok", "no finding"), ("p-info", "worst finding: info"),
                         ("p-warning", "worst finding: warning"),
                         ("p-error", "worst finding: error"))).svg()


_NAMED = re.compile(r"(\S+)-(\d+)\b")


def _partition_of(f: Finding, owner: dict[str, tuple[str, int]],
                  partitions: dict[tuple[str, int], list[Path]]) -> tuple[str, int] | None:
    """The partition a finding is about: the one whose dir holds its file; else, for a
    finding on a data dir or its checkpoint files, the partition its details or the start
    of its message name ("orders-1 at offset 40, beyond its log end", V035)."""
    if f.file is None:
        return None
    path = Path(f.file)
    key = owner.get(str(path)) or owner.get(str(path.parent))
    if key is not None:
        return key
    topic, number = f.details.get("topic"), f.details.get("partition")
    if isinstance(topic, str) and isinstance(number, int) and (topic, number) in partitions:
        return topic, number
    named = _NAMED.match(f.message)
    if named is not None and (named[1], int(named[2])) in partitions:
        return named[1], int(named[2])
    return None


def _worst(found: list[Finding]) -> str:
    sevs = {f.severity.value for f in found}
    return next((s for s in ("error", "warning", "info") if s in sevs), "ok")


def _partition_span(topic: str, run: list[tuple[int, str, list[Finding]]]) -> Span:
    first, sev, mine = run[0]
    last = run[-1][0]
    name = f"{topic}-{first}" if first == last else f"{topic} partitions {first}–{last}"
    if mine:
        codes = ", ".join(f"{c} ×{k}" for c, k in sorted(
            Counter(f.code for f in mine).items()))
        where = next((f for f in mine if f.offset is not None), None)
        at = f"; first at offset {where.offset}" if where else ""
        tip = f"{name}: {len(mine)} finding(s): {codes}{at}"
    else:
        tip = f"{name}: no finding"
    return Span(first, last + 1, f"p-{sev}", tip,
                label=str(first) if first == last else f"{first}–{last}")
