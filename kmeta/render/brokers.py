"""``kmeta brokers`` for people (a timeline, the quorum's leaders, a table per node) and
for scripts (JSON Lines: an object per event and per leader, then a summary)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from kmeta.core.lifecycle import (
    CANNOT_TELL,
    OWN_CONTROLLER,
    QUORUM_RESTARTED,
    UNCONTROLLED,
    UNKNOWN,
    LeaderSpan,
    NodeEvent,
    NodeSummary,
    Silence,
    duration,
)
from kmeta.findings import Finding
from kmeta.ops.brokers import BrokersResult
from kmeta.render.jsonl import dumps
from kmeta.render.text import Paths, finding_line

#: The findings that are part of the story (on stdout), not problems of the log.
LIFECYCLE_CODES = ("V130", "V131", "V132", "V133")


def story_findings(result: BrokersResult) -> tuple[list[Finding], list[Finding]]:
    """The findings the report tells (lifecycle anomalies) and the rest (the log's)."""
    told = [f for f in result.findings if f.code in LIFECYCLE_CODES]
    rest = [f for f in result.findings if f.code not in LIFECYCLE_CODES]
    return told, rest


def utc(ms: int | None) -> str:
    """A time in ms since the epoch as a UTC date and time; '?' when it is not known."""
    if ms is None:
        return "?"
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}" + ("" if n == 1 else "s")


def _moves(e: NodeEvent) -> str:
    parts = []
    if e.left_isr:
        parts.append(f"left {_count(e.left_isr, 'ISR')}")
    if e.lost_leadership:
        parts.append(f"lost {_count(e.lost_leadership, 'leadership')}")
    if e.gained_leadership:
        parts.append(f"won {_count(e.gained_leadership, 'leadership')}")
    return ", ".join(parts)


def _after(e: NodeEvent) -> str:
    if e.state_before == UNKNOWN:
        return " (its state before: not on disk)"
    if e.in_state_ms is None:
        return ""
    return _seen(e.in_state_ms, e.silent_ms, e.state_before.replace('_', ' '))


def _seen(ms: int, silent: int, state: str) -> str:
    """`` after MS STATE``; a stretch with no record in the log is no time in the state
    (the node is not seen then): said apart."""
    if not silent:
        return f" after {duration(ms)} {state}"
    return (f" after at least {duration(ms - silent)} {state} and "
            f"{duration(silent)} with no record in the log")


#: What a fence says of how the broker stopped (``NodeEvent.fence_kind``).
_FENCE_WORDS = {
    UNCONTROLLED: "it led partitions outside controlled shutdown: a lost session or a "
                  "crash, not a clean shutdown",
    OWN_CONTROLLER: "written by its own controller (combined node, same term): the process "
                    "was alive, not a crash",
    CANNOT_TELL: "it led nothing and no controlled shutdown is on disk: a clean shutdown "
                 "and a lost session look the same, the log cannot tell",
    QUORUM_RESTARTED: "every controller had just restarted: the new controller's session "
                      "ran out (a whole-cluster restart); a clean stop and a crash look "
                      "the same, the log cannot tell",
}


def _restart(e: NodeEvent) -> str:
    """How the incarnation before a new one stopped, as far as the log can tell."""
    if e.controlled_shutdown_first:
        return "after a controlled shutdown"
    if e.controlled_shutdown_first is False:
        return ("no controlled shutdown first" if e.fence_kind == UNCONTROLLED
                else "the one before was never fenced: no clean shutdown")
    if e.fence_kind == OWN_CONTROLLER:
        return ("no crash at its fence (its own controller wrote it); how it stopped "
                "after: cannot tell")
    if e.fence_kind == CANNOT_TELL:
        return "clean shutdown or crash: its fence cannot tell"
    if e.fence_kind == QUORUM_RESTARTED:
        return ("clean shutdown or crash: fenced after the whole quorum restarted, "
                "the log cannot tell")
    if e.state_before == UNKNOWN:
        return "how the one before stopped: not on disk"
    return ("how the one before stopped: cannot tell (fenced before the replay, or never "
            "unfenced)")


def _registration(e: NodeEvent) -> str:
    reg = e.registration or {}
    listeners = ", ".join(f"{p.get('name')}://{p.get('host')}:{p.get('port')}"
                          for p in reg.get("listeners") or ())
    parts = [f"epoch {e.broker_epoch}"] if e.broker_epoch is not None else []
    parts.append(f"incarnation {e.incarnation_id}")
    if e.role == "broker":
        parts.append(e.state.replace("_", " "))
        if reg.get("rack"):
            parts.append(f"rack {reg['rack']}")
        if reg.get("log_dirs"):
            parts.append(_count(len(reg["log_dirs"]), "log dir"))
    if listeners:
        parts.append(listeners)
    return "; ".join(parts)


def event_text(e: NodeEvent) -> str:
    """What happened to the node, in words."""
    moves = _moves(e)
    tail = f"; {moves}" if moves else ""
    if e.event == "registered":
        if e.state_before == UNKNOWN:
            return (f"registered; any registration before it is not on disk "
                    f"({_registration(e)}){tail}")
        return f"registered ({_registration(e)}){tail}"
    if e.event == "re_registered":
        return (f"new incarnation{_after(e)}: {_restart(e)} ({_registration(e)}){tail}"
                if e.role == "broker" else f"new incarnation ({_registration(e)})")
    if e.event == "amended":
        return f"registration amended, same incarnation ({_registration(e)}){tail}"
    if e.event == "unfenced":
        fenced = "" if e.fenced_ms is None else _seen(e.fenced_ms, e.fenced_silent_ms, "fenced")
        return f"unfenced{fenced}{tail}"
    if e.event == "log_dirs":
        return f"log dirs changed ({e.record}){tail}"
    if e.event == "fenced" and e.fence_kind in _FENCE_WORDS:
        words = _FENCE_WORDS[e.fence_kind]
        if e.fence_kind == CANNOT_TELL and e.lost_leadership is None:
            words = ("what it led is not on disk: a clean shutdown and a lost session "
                     "look the same, the log cannot tell")
        return f"fenced{_after(e)}{tail}; {words}"
    return f"{e.event.replace('_', ' ')}{_after(e)}{tail}"


def _silence_text(s: Silence) -> str:
    """A stretch the log holds no record of: nothing is seen of any node then."""
    return (f"  {utc(s.start)}  @{s.after}  no record in the log for at least "
            f"{duration(s.ms)}, to {utc(s.end)} (the next at offset {s.offset}): no node "
            "is seen then")


def _node(role: str, node: int) -> str:
    return f"{role} {node}"


def brokers_lines(result: BrokersResult, colour: bool = False,
                  given: list[str] | None = None) -> Iterator[str]:
    """The report: what was read, the timeline, the quorum's leaders, one row per node,
    the anomalies, and what the disk cannot say."""
    yield _header(result)
    unknown = _inexact(result)
    if unknown is not None:
        yield unknown
    if result.snapshot_only:
        yield ("no log: the snapshot holds each node's state at its offset, not how it "
               "got there")
    elif result.events:
        yield ""
        yield "timeline (UTC):"
        silences = list(result.silences)
        for e in result.events:
            while silences and silences[0].offset <= e.offset:
                yield _silence_text(silences.pop(0))
            yield f"  {utc(e.timestamp)}  @{e.offset}  {_node(e.role, e.node)}: {event_text(e)}"
        for s in silences:
            yield _silence_text(s)
    else:
        yield ""
        yield "no registration changed" + _window(result)
    if result.leaders:
        yield ""
        yield "quorum leaders:"
        for i, s in enumerate(result.leaders):
            yield "  " + _leader_text(s, i + 1 == len(result.leaders))
    yield ""
    yield _voters_line(result)
    yield from _table(result.summary)
    told, _ = story_findings(result)
    if told:
        yield ""
        yield "anomalies:"
        for f in told:
            # paths relative to what the user typed, as every finding line shows them
            yield "  " + finding_line(f, colour, Paths(given) if given else None)
    yield ""
    yield "not on disk: " + "; ".join(result.not_on_disk)


def _header(result: BrokersResult) -> str:
    start = (f"snapshot {result.snapshot.name}" if result.snapshot is not None
             else "offset 0")
    if result.snapshot_only:
        return f"state at offset {result.start_offset} from {start}"
    end = "-" if result.log_end_offset is None else result.log_end_offset - 1
    when = ""
    if result.first_timestamp is not None:
        when = f", {utc(result.first_timestamp)} to {utc(result.last_timestamp)} UTC"
    if result.state_known_from != result.start_offset:
        start = f"the log start, offset {result.start_offset}, which no snapshot covers"
    return (f"replayed from {start}: offsets {result.start_offset}..{end} "
            f"({result.metadata_records:,} metadata + "
            f"{_count(result.control_records, 'control record')}){when}{_window(result)}")


def _inexact(result: BrokersResult) -> str | None:
    """What is unknown when the log's start is not covered by a snapshot."""
    if result.state_known_from == result.start_offset:
        return None
    if result.state_known_from is None:
        return ("no usable snapshot: each node's state before its first record here, and "
                "what each change moved, is not on disk")
    name = result.exact_snapshot.name if result.exact_snapshot else "a snapshot"
    return (f"each node's state before its first record here, and what each change "
            f"moved, is not on disk up to offset {result.state_known_from} ({name}), "
            "exact from there")


def _window(result: BrokersResult) -> str:
    parts = []
    if result.broker is not None:
        parts.append(f"node {result.broker}")
    if result.since is not None:
        parts.append(f"since {result.since}")
    if result.until is not None:
        parts.append(f"until {result.until}")
    return f" (shown: {', '.join(parts)})" if parts else ""


def _leader_text(s: LeaderSpan, last: bool) -> str:
    who = "leader unknown (no LeaderChange read)" if s.leader is None \
        else f"controller {s.leader}"
    voters = f", voters {', '.join(map(str, s.voters))}" if s.voters else ""
    held = f"to the end of the log ({duration(s.duration_ms)})" if last \
        else f"for {duration(s.duration_ms)}"
    return (f"epoch {s.epoch}: {who} from offset {s.offset} at {utc(s.timestamp)}, "
            f"{held}{voters}")


def _voters_line(result: BrokersResult) -> str:
    """The quorum's voters and what named them: before Kafka 3.7 no record registers a
    controller, so the nodes' table alone would show a quorum of none."""
    if result.voters is None:
        return "quorum voters: not on disk (no record or quorum-state names them)"
    return (f"quorum voters: {', '.join(map(str, result.voters))} "
            f"(from {result.voters_from})")


def _table(summary: list[NodeSummary]) -> Iterator[str]:
    if not summary:
        yield "no broker or controller is registered"
        return
    # the time fenced is every fence's, summed (beside STATE "fenced", "FENCED FOR" read
    # as the current fence's); 80 columns hold no longer name
    yield (f"{'NODE':<16}{'STATE':<20}{'EPOCH':>8}{'REG':>5}{'FENCES':>7}{'CRASHES':>8}"
           "  TOTAL FENCED")
    for s in summary:
        fenced = "?" if s.fenced_ms is None else duration(s.fenced_ms) if s.fenced_ms else "-"
        epoch = "-" if s.broker_epoch is None else str(s.broker_epoch)
        broker = s.role == "broker"  # a controller is never fenced
        yield (f"{_node(s.role, s.node):<16}{s.state.replace('_', ' '):<20}{epoch:>8}"
               f"{_known(s.registrations):>5}{_known(s.fences) if broker else '-':>7}"
               f"{_known(s.crashes) if broker else '-':>8}  "
               f"{fenced if broker else '-':<12}").rstrip()
    if any(s.role == "broker" and None in (s.registrations, s.crashes, s.fenced_ms)
           for s in summary):
        yield "? the log cannot know it"


def _known(n: int | None) -> str:
    return "?" if n is None else str(n)


# ---------------------------------------------------------------------- JSON

def event_json(e: NodeEvent) -> dict[str, Any]:
    return {"kind": "node_event", "role": e.role, "node": e.node, "event": e.event,
            "offset": e.offset, "timestamp": e.timestamp, "record": e.record,
            "state_before": e.state_before, "state": e.state,
            "in_state_ms": e.in_state_ms, "silent_ms": e.silent_ms,
            "broker_epoch": e.broker_epoch,
            "incarnation_id": e.incarnation_id, "left_isr": e.left_isr,
            "lost_leadership": e.lost_leadership, "gained_leadership": e.gained_leadership,
            "fenced_ms": e.fenced_ms, "fenced_silent_ms": e.fenced_silent_ms,
            "controlled_shutdown_first": e.controlled_shutdown_first,
            "fence_kind": e.fence_kind, "registration": e.registration}


def leader_json(s: LeaderSpan) -> dict[str, Any]:
    return {"kind": "quorum_leader", "epoch": s.epoch, "leader": s.leader,
            "offset": s.offset, "timestamp": s.timestamp, "voters": s.voters,
            "duration_ms": s.duration_ms}


def node_json(s: NodeSummary) -> dict[str, Any]:
    return {"role": s.role, "node": s.node, "state": s.state, "broker_epoch": s.broker_epoch,
            "incarnation_id": s.incarnation_id, "registrations": s.registrations,
            "incarnations": s.incarnations, "fences": s.fences,
            "controlled_shutdowns": s.controlled_shutdowns, "crashes": s.crashes,
            "fenced_ms": s.fenced_ms, "longest_fenced_ms": s.longest_fenced_ms,
            "last_offset": s.last_offset, "last_timestamp": s.last_timestamp}


def brokers_json(result: BrokersResult) -> Iterator[str]:
    """An object per event and per quorum leader, a finding object per finding, then
    the summary."""
    for e in result.events:
        yield dumps(event_json(e))
    for s in result.leaders:
        yield dumps(leader_json(s))
    for f in result.findings:  # the anomalies and the log's own problems alike
        yield dumps(f.to_json())
    yield dumps({
        "kind": "brokers_summary",
        "snapshot": None if result.snapshot is None else str(result.snapshot),
        "snapshot_only": result.snapshot_only, "start_offset": result.start_offset,
        "log_end_offset": result.log_end_offset, "first_timestamp": result.first_timestamp,
        "last_timestamp": result.last_timestamp, "records": result.records,
        "metadata_records": result.metadata_records,
        "control_records": result.control_records,
        "state_known_from": result.state_known_from,
        "exact_snapshot": None if result.exact_snapshot is None else str(result.exact_snapshot),
        "voters": result.voters, "voters_from": result.voters_from,
        "nodes": [node_json(s) for s in result.summary],
        "not_on_disk": result.not_on_disk,
    })
