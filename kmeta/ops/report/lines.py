"""Each area's one line: what its analysis found, said as its command says it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kmeta.findings import Severity
from kmeta.ops.report.model import Report

if TYPE_CHECKING:
    from kmeta.core.lifecycle import NodeSummary
    from kmeta.ops.brokers import BrokersResult


def size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def logs_line(report: Report) -> str | None:
    v = report.verify
    if v is None or not v.checked_logs:
        return None
    nbytes = report.segment_bytes
    parts = len(report.partitions) + len(report.metadata)
    return (f"{_plural(parts, 'log')}, {_plural(v.segments, 'segment')}, "
            f"{size(nbytes)} checked")


def snapshots_line(report: Report) -> str | None:
    if not report.retention:
        return None
    live = [s for r in report.retention for s in r.snapshots if s.state == "live"]
    # who deletes each: startup (below the log start, or the truncation to the latest
    # snapshot when the log ends before it) or retention's rules (fate "deleted (RULE)")
    at_start = [s for s in live if s.fate.startswith("deleted at startup")]
    by_rule = sum(1 for s in live if s.fate.startswith("deleted ("))
    segs = sum(1 for r in report.retention for s in r.segments if s.fate != "kept")
    deletes = (f"retention deletes {_plural(by_rule, 'snapshot')} and "
               f"{_plural(segs, 'segment')}") if by_rule or segs else "retention deletes nothing"
    if at_start:
        who = "startup's truncation" \
            if any(s.fate.endswith("(truncation)") for s in at_start) else "startup"
        deletes = f"{who} deletes {_plural(len(at_start), 'snapshot')}, {deletes}"
    return f"{_plural(len(live), 'snapshot')} in {_plural(len(report.retention), 'replica')}; " \
           f"{deletes}"


def replicas_line(report: Report) -> str | None:
    d = report.diff
    if d is None:
        return None
    diverged = [p for p in d.pairs if p.status == "diverged"]
    if diverged:
        p = min(diverged, key=lambda p: p.divergence_offset or 0)
        epoch = "" if p.divergence_epoch is None else f" (epoch {p.divergence_epoch})"
        peer, local = report.label_of(p.peer.label), report.label_of(p.local.label)
        where = "" if p.divergence_offset is None else f" at offset {p.divergence_offset:,}"
        # the direction of its finding (V160: LOCAL's file, "diverged from PEER")
        return f"{local} diverged from {peer}{where}{epoch}"
    behind = {p.lagging for p in d.pairs if p.lagging}
    # a replica equivalent to one behind is behind as well (diff pairs each with the
    # first replica given, not with one another)
    for p in d.pairs:
        if p.status in ("identical", "equivalent") and \
                {p.local.label, p.peer.label} & behind:
            behind |= {p.local.label, p.peer.label}
    lagging = sorted({report.label_of(label) for label in behind})
    if lagging:
        return (f"{_plural(len(d.replicas), 'replica')} agree; "
                f"{', '.join(lagging)} behind (a prefix of the longest)")
    return f"{_plural(len(d.replicas), 'replica')} agree"


def brokers_line(report: Report) -> str | None:
    b = report.brokers
    if b is None:
        return None
    nodes = [s for s in b.summary if s.role == "broker"]
    controllers = [s for s in b.summary if s.role == "controller"]
    # the quorum by its voters: no record registers a controller before Kafka 3.7
    quorum = _plural(len(b.voters), "voter") if b.voters is not None \
        else _plural(len(controllers), "controller")
    line = f"{_plural(len(nodes), 'broker')}, {quorum}"
    if b.snapshot_only:
        return line + " (a snapshot: no history)"
    return f"{line}; {_crashes(b)}, {_counted(b.summary, 'fences', 'fence')}"


def _crashes(b: BrokersResult) -> str:
    """The crashes the findings tell (V131), and whether restarts the log cannot judge
    may hide more."""
    told = sum(1 for f in b.findings if f.code == "V131")
    unknown = any(s.crashes is None for s in b.summary if s.role == "broker")
    if not unknown:
        return f"{told:,} crash" + ("" if told == 1 else "es")
    if told:
        return f"at least {told:,} crash" + ("" if told == 1 else "es")
    return "? crashes"


def _counted(summary: list[NodeSummary], key: str, what: str) -> str:
    """A count summed over the brokers, or ? when one of them is unknown."""
    counts = [getattr(s, key) for s in summary if s.role == "broker"]
    if any(c is None for c in counts):
        return f"? {what}s"
    return _plural(sum(counts), what)


def consumers_line(report: Report) -> str | None:
    c = report.consumers
    if c is None:
        return None
    live = sum(1 for r in c.rows if not r.commit.deleted)
    if c.log is None:
        groups = len({r.commit.group for r in c.rows})
        return f"{_plural(groups, 'group')}, {_plural(live, 'committed offset')}"
    # the count ``kmeta consumers`` prints, in its words: every group the log holds
    # metadata of (a group with no commit, a deleted one), not only those with offsets
    groups = c.log.groups
    dead = sum(1 for g in groups.values() if g.deleted)
    return (f"{_plural(len(groups), 'group')} with metadata ({dead:,} deleted), "
            f"{_plural(live, 'committed offset')}")


#: The gist of each startup error, for the area's line: (one, many, what it means).
_STARTUP_GISTS = {
    "V170": ("segment truncated at a torn batch", "segments truncated at a torn batch",
             "records lost"),
    "V172": ("log loses its later segments", "logs lose their later segments",
             "records lost"),
    "V173": ("log ends below its log start", "logs end below their log start", ""),
    "V174": ("dir name Kafka cannot parse", "dir names Kafka cannot parse", ""),
    "V175": ("segment emptied", "segments emptied", "records lost"),
    "V176": ("offset checkpoint unreadable", "offset checkpoints unreadable", ""),
    "V180": ("stray log Kafka deletes", "stray logs Kafka deletes", ""),
    "V182": ("partition dir without a topic id", "partition dirs without a topic id",
             "Kafka refuses to start"),
    "V188": ("-future log without a topic id", "-future logs without a topic id",
             "Kafka refuses to start"),
    "V190": ("replica missing", "replicas missing", "records lost"),
    "V194": ("log dir of another cluster", "log dirs of another cluster", ""),
    "V195": ("log dir of another node", "log dirs of another node", ""),
    "V196": ("reserved or shared directory.id", "reserved or shared directory.ids", ""),
    "V197": ("partition in two log dirs", "partitions in two log dirs", ""),
    "V200": ("log Kafka cannot load", "logs Kafka cannot load", ""),
    "V210": ("partition file that takes its log dir offline",
             "partition files that take their log dir offline", ""),
    "V212": ("log without committed records", "logs without committed records",
             "not on disk"),
    "V230": ("log dir not formatted", "log dirs not formatted", ""),
    "V231": ("meta.properties unreadable", "meta.properties unreadable", ""),
    "V232": ("meta.properties of the wrong mode", "meta.properties of the wrong mode", ""),
    "V233": ("meta.properties that differ", "meta.properties that differ", ""),
    "V236": ("metadata log that stops the node", "metadata logs that stop the node", ""),
    "V237": ("metadata log cut on start", "metadata logs cut on start",
             "metadata records lost"),
}


def _startup_errors(report: Report) -> list[str]:
    """The gist of each startup error finding, counted: what an ERROR line says first."""
    from kmeta.ops.report.areas import area_of

    counts: dict[str, int] = {}
    for f in report.findings:
        if f.severity is Severity.ERROR and area_of(f.code) == "startup":
            counts[f.code] = counts.get(f.code, 0) + 1
    out = []
    for code, n in counts.items():
        one, many, tail = _STARTUP_GISTS.get(code, (f"{code} error", f"{code} errors", ""))
        out.append(f"{n:,} {one if n == 1 else many}" + (f", {tail}" if tail else ""))
    return out


def startup_line(report: Report) -> str | None:
    if not report.startup:
        return None
    refuse = sum(1 for s in report.startup if s.refusals)
    lose = sum(1 for s in report.startup if s.loses_data)
    nbytes = sum(s.cost_bytes for s in report.startup)
    seconds = max((s.seconds for s in report.startup), default=0.0)
    head = _plural(len(report.startup), "broker")
    # under an ERROR the errors speak first (what its findings say), then the cost
    errors = _startup_errors(report)
    gist = "; ".join(errors) + "; " if errors else ""
    if refuse:
        return f"{head}: {gist}{refuse} would not start"
    if lose:
        return f"{head}: {gist}records lost on {lose}"
    if nbytes:
        took = "under a second" if seconds < 1 else f"about {seconds:,.0f} s"
        return f"{head}: {gist}{size(nbytes)} to re-read, {took}"
    return f"{head}: {gist}" + ("nothing to re-read" if errors else "nothing to recover")


def tiering_line(report: Report) -> str | None:
    t = report.tiering
    if t is None:
        return None
    if t.nothing_tiered:
        return t.nothing_tiered
    return f"{_plural(len(t.partitions), 'tiered partition')}"


def area_lines(report: Report) -> dict[str, str | None]:
    return {"logs": logs_line(report), "snapshots": snapshots_line(report),
            "replicas": replicas_line(report), "brokers": brokers_line(report),
            "consumers": consumers_line(report), "startup": startup_line(report),
            "tiering": tiering_line(report)}
