"""``kmeta diff`` for people (lines of text) and for scripts (one JSON object)."""

from __future__ import annotations

from collections.abc import Iterator

from kmeta.ops.diff import DiffReport, PairDiff, SideOnly
from kmeta.render.console import paint
from kmeta.render.jsonl import dumps
from kmeta.render.text import difference_lines, human


def diff_json(report: DiffReport) -> Iterator[str]:
    yield dumps(report.to_json())


def _range(start: int, end: int) -> str:
    return f"offsets {start}..{end - 1}" if end > start else f"empty log at offset {start}"


def _side(label: str, only: SideOnly | None) -> str | None:
    if only is None or not only.records:
        return None
    kinds = ", ".join(f"{t} x{n:,}" for t, n in only.by_type.most_common())
    return (f"  only on {label}: {only.records:,} record(s) at offsets "
            f"{only.first}..{only.last}: {kinds}")


def _headline(p: PairDiff, colour: bool) -> str:
    who = f"{p.local.label} vs {p.peer.label}"
    if p.status == "identical":
        span = _range(p.local.log_start, p.local.log_end)
        return f"{who}: {paint('IDENTICAL', 'ok', colour)} ({span}, same bytes)"
    if p.status == "equivalent":
        start = max(p.local.log_start, p.peer.log_start)
        return f"{who}: SAME CONTENT over offsets {start}..{p.local.log_end - 1}, which " \
            "both hold; their logs start at different offsets (see the notes)"
    if p.status == "lagging":
        shorter, longer = (p.local, p.peer) if p.lagging == p.local.label \
            else (p.peer, p.local)
        lag = paint("LAG", "lag", colour)
        if shorter.log_end < longer.log_start:
            return f"{who}: {lag}, not divergence: {shorter.label} ends at " \
                f"{shorter.log_end}, before {longer.label}'s log starts " \
                f"({longer.log_start}): it needs a snapshot"
        return f"{who}: {lag}, not divergence: {p.lagging} is a prefix of " \
            f"{longer.label}, " \
            f"{p.lag_offsets:,} offset(s) behind"
    epoch = f" in epoch {p.divergence_epoch}" if p.divergence_epoch is not None else ""
    diverged = paint("DIVERGED", "diverged", colour)
    return f"{who}: {diverged} at offset {p.divergence_offset}{epoch}"


def diff_lines(report: DiffReport, *, colour: bool = False, width: int | None = None
               ) -> Iterator[str]:
    """The report for people; ``colour``: the verdicts coloured (a terminal); ``width``:
    what an image difference is cut to (None: kept whole)."""
    for r in report.replicas:
        yield (f"{r.label}: node {r.node_id if r.node_id is not None else '?'}, "
               f"{_range(r.log_start, r.log_end)}, latest epoch {human(r.latest_epoch)}, "
               f"{r.stats.batches:,} batches, {r.stats.records:,} records"
               + (f", {len(r.findings)} finding(s) (see kmeta verify)" if r.findings else ""))
        for note in r.notes:
            yield f"  note: {note}"
    for p in report.pairs:
        yield ""
        yield _headline(p, colour)
        s = p.content_split
        if s is not None:
            yield (f"  bytes first differ at offset {s.offset}: {p.local.label} "
                   f"{s.places[0]} (epoch {s.epochs[0]}), {p.peer.label} {s.places[1]} "
                   f"(epoch {s.epochs[1]}); {s.batches:,} batch(es) at the same offsets "
                   "differ")
        for line in (_side(p.local.label, p.only_local), _side(p.peer.label, p.only_peer)):
            if line:
                yield line
        for note in p.notes:
            yield f"  note: {note}"
        for line in p.kafka:
            yield f"  kafka: {line}"
        for where, diffs in p.image_diff.items():
            yield from difference_lines(f"image {where.replace('_', ' ')}", diffs,
                                        width=width)
    m = report.majority
    if m is not None:
        yield ""
        # how many hold it, not the quorum size: three that agree are "3 of 3"
        # prefix_end is an end offset (exclusive): people read the last offset they share
        held = (f"the same bytes up to and including offset {m['prefix_end'] - 1} on "
                f"{', '.join(m['held_by'])}" if m["prefix_end"] else "no offset in common")
        yield (f"majority ({len(m['held_by'])} of {len(report.replicas)}, {m['majority_of']} "
               f"needed): {held}")
        for label, n in m["beyond"].items():
            yield f"  {label} holds {n:,} offset(s) beyond it"
    yield ""
    yield "verdict: " + (paint("DIVERGED", "diverged", colour) if report.diverged else
                         "no divergence" + (" (lag only)" if any(
                             p.status == "lagging" for p in report.pairs) else ""))
