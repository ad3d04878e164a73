"""Each area's one line: what its analysis found, said as its command says it."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    live = sum(1 for r in report.retention for s in r.snapshots if s.state == "live")
    gone = sum(1 for r in report.retention for s in r.snapshots
               if s.state == "live" and s.fate != "kept")
    segs = sum(1 for r in report.retention for s in r.segments if s.fate != "kept")
    deletes = (f"retention deletes {_plural(gone, 'snapshot')} and "
               f"{_plural(segs, 'segment')}") if gone or segs else "retention deletes nothing"
    return f"{_plural(live, 'snapshot')} in {_plural(len(report.retention), 'replica')}; " \
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
    groups = len({r.commit.group for r in c.rows})
    return f"{_plural(groups, 'group')}, {_plural(len(c.rows), 'committed offset')}"


def startup_line(report: Report) -> str | None:
    if not report.startup:
        return None
    refuse = sum(1 for s in report.startup if s.refusals)
    lose = sum(1 for s in report.startup if s.loses_data)
    nbytes = sum(s.cost_bytes for s in report.startup)
    seconds = max((s.seconds for s in report.startup), default=0.0)
    head = _plural(len(report.startup), "broker")
    if refuse:
        return f"{head}: {refuse} would not start"
    if lose:
        return f"{head}: recovery loses records on {lose}"
    if nbytes:
        took = "under a second" if seconds < 1 else f"about {seconds:,.0f} s"
        return f"{head}: {size(nbytes)} to re-read, {took}"
    return f"{head}: nothing to recover"


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
