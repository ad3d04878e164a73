"""Pictures as SVG, drawn here: scales, axes, lanes of spans and marks.

Every shape a person may point at carries a ``<title>``: the browser's own tooltip, which
needs no script and survives in a PDF printed from the page.  Shapes carry ``data-``
attributes the tests read.  Coordinates are rounded to a tenth of a pixel and shapes too
narrow to tell apart are merged (their tooltip says how many): a large log's picture
stays small."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from html import escape

#: Time steps an axis may tick at (ms): the finest that gives at most the ticks that fit.
_TIME_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000,
               30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000,
               2 * 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 12 * 3_600_000, 86_400_000,
               2 * 86_400_000, 7 * 86_400_000, 30 * 86_400_000, 365 * 86_400_000]
#: A time axis's times are within this of their middle one (20 years): KRaft is from
#: 2021, so a log whose times spread wider holds a stamp no clock wrote.
PLAUSIBLE_SPREAD_MS = 20 * 365 * 86_400_000
_YEAR_10000_MS = 253_402_300_800_000
#: A lane label's pixels per character (12 px sans-serif, wide letters counted), and the
#: most a label column takes of a 1000 px picture: a name longer is shortened to fit.
_LABEL_CHAR_PX = 7.5
_MOST_LABEL_PX = 420
#: Pixels a tick label needs (a time label is the widest: "11-14 22:13")
_TICK_PX = 96
#: Shapes narrower than this many pixels are merged with their neighbours.
_MERGE_PX = 2.0
#: Classes that alternate only to tell neighbouring spans apart (segments, epochs).
_SHADES = {"g0", "g1", "e0", "e1", "q0", "q1"}


def attr(value: object) -> str:
    return escape(str(value), quote=True)


def n(x: float) -> str:
    """A coordinate: a tenth of a pixel, no trailing zeros."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def utc(ms: int, step: int | None = None) -> str:
    """A point in time as a person reads it on an axis (``step``) or in a tooltip (UTC)."""
    try:
        t = datetime.fromtimestamp(ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"
    if step is None:
        return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d} UTC"
    if step >= 86_400_000:
        return t.strftime("%Y-%m-%d")
    if step >= 60_000:
        return t.strftime("%m-%d %H:%M")
    if step >= 1000:
        return t.strftime("%H:%M:%S")
    return t.strftime("%H:%M:%S.") + f"{t.microsecond // 1000:03d}"


def _far(ms: float) -> str:
    """A time perhaps far outside what a date can show: its date, or its year and ms."""
    if 0 <= ms < _YEAR_10000_MS:
        return utc(int(ms))
    return f"year {1970 + ms / 31_556_952_000:,.0f} ({int(ms)} ms)"


def count(value: float) -> str:
    """An offset or a count on an axis: 1.2M, 35k, 950."""
    for unit, size in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if abs(value) >= size:
            text = f"{value / size:.1f}".rstrip("0").rstrip(".")
            return f"{text}{unit}"
    return f"{value:g}"


def _round_up(raw: float) -> int:
    """The round step (1, 2 or 5 times a power of ten) at or above ``raw``, at least 1:
    the axis's ticks stay as few as fit, however long the domain."""
    if raw <= 1:
        return 1
    mag = 10 ** math.floor(math.log10(raw))
    return max(1, int(next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)))


@dataclass
class Scale:
    """A linear map from a domain (offsets, ms) onto pixels."""

    lo: float
    hi: float
    left: float
    right: float

    def __call__(self, v: float) -> float:
        if self.hi == self.lo:
            return self.left
        return self.left + (v - self.lo) * (self.right - self.left) / (self.hi - self.lo)

    def ticks(self, time: bool = False) -> list[tuple[float, str]]:
        most = max(2, int((self.right - self.left) // _TICK_PX))
        span = self.hi - self.lo
        if span <= 0:
            return [(self.lo, utc(int(self.lo), 1000) if time else count(self.lo))]
        if time:
            step = next((s for s in _TIME_STEPS if span / s <= most), None)
            if step is None:  # longer than the steps go: whole years, a round number
                step = _TIME_STEPS[-1] * _round_up(span / most / _TIME_STEPS[-1])
            first = math.ceil(self.lo / step) * step
            return [(v, utc(v, step)) for v in range(int(first), int(self.hi) + 1, step)]
        step = _round_up(span / most)
        first = math.ceil(self.lo / step) * step
        return [(v, count(v)) for v in range(int(first), int(self.hi) + 1, step)]


@dataclass
class Span:
    """A stretch of a lane: [start, end) in the lane's domain."""

    start: float
    end: float
    kind: str  # a CSS class: the colour and the legend entry
    tip: str
    label: str = ""  # written inside the span when it fits
    fill: float = 1.0  # the share of the lane's height it fills (a bar of a quantity)
    #: once merged: how many spans of each class it stands for (data-merged)
    merged: dict[str, int] | None = None


@dataclass
class Mark:
    """A point on a lane: an event (a crash, a snapshot, a damaged batch)."""

    at: float
    kind: str
    tip: str
    shape: str = "tri"  # tri, dot, bar, pin
    radius: float = 4.5
    count: int = 1  # the marks it stands for, once merged


@dataclass
class Lane:
    label: str
    spans: list[Span] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    key: str = ""  # data-lane: what the lane is (a node, a replica)
    kind: str = ""  # data-kind: a lane unlike the others (the quorum's leaders)
    tip: str = ""  # what the lane's label means, on hover


@dataclass
class Chart:
    """Lanes over a shared axis: the figure every timeline and layout picture is."""

    title: str
    lanes: list[Lane]
    lo: float
    hi: float
    time: bool = False
    axis_label: str = ""
    name: str = ""  # data-picture
    note: str = ""  # one sentence under the title: what the picture shows
    width: int = 1000
    lane_height: int = 24
    legend: Sequence[tuple[str, str]] = ()  # (css class, what it means)
    rules: Sequence[Mark] = ()  # vertical lines across every lane (a divergence point)
    axis: bool = True  # False: the lanes have no domain to tick (states at one point)

    def svg(self) -> str:
        if not self.time:
            return self._draw()
        return self._plausible()._draw()

    def _plausible(self) -> Chart:
        """The chart with the times no clock wrote left off (a corrupt timestamp of year
        two million would squeeze the log into a pixel): any before 1970 or in year 10,000
        or later, and any more than :data:`PLAUSIBLE_SPREAD_MS` from the middle of the
        others; the note says how many and which."""
        points = sorted([v for lane in self.lanes for s in lane.spans for v in (s.start, s.end)]
                        + [m.at for lane in self.lanes for m in lane.marks]
                        + [r.at for r in self.rules])
        inside = [v for v in points if 0 <= v < _YEAR_10000_MS]
        if not inside:
            return self
        middle = inside[len(inside) // 2]
        lo = max(0, middle - PLAUSIBLE_SPREAD_MS)
        hi = min(_YEAR_10000_MS - 1, middle + PLAUSIBLE_SPREAD_MS)
        odd = sorted({v for v in points if not lo <= v <= hi})
        if not odd:
            return self

        def ok(v: float) -> bool:
            return lo <= v <= hi

        kept = [v for v in points if ok(v)]
        first, last = min(kept), max(kept)  # a span with one end off ends at the axis's
        lanes = []
        for lane in self.lanes:
            spans = [replace(s, start=min(max(s.start, first), last),
                             end=min(max(s.end, first), last))
                     for s in lane.spans if ok(s.start) or ok(s.end)]
            lanes.append(replace(lane, spans=spans, marks=[m for m in lane.marks if ok(m.at)]))
        shown = ", ".join(_far(v) for v in odd[:3]) + (" …" if len(odd) > 3 else "")
        note = (f"{self.note} " if self.note else "") + (
            f"{len(odd):,} implausible time(s) left off the axis: {shown}; a wrong clock "
            "or a corrupt batch header wrote them.")
        return replace(self, lanes=lanes, rules=[r for r in self.rules if ok(r.at)],
                       lo=max(self.lo, first), hi=min(self.hi, last), note=note)

    def _draw(self) -> str:
        lo, hi = self.lo, self.hi
        if hi <= lo:  # one point in time or one offset: give it room
            pad = 1000 if self.time else 1
            lo, hi = lo - pad, hi + pad
        longest = max((len(lane.label) for lane in self.lanes), default=4)
        label_width = min(_MOST_LABEL_PX, max(70, int(_LABEL_CHAR_PX * longest) + 16))
        top = 16 if self.rules else 6
        axis_y = top + len(self.lanes) * self.lane_height
        h = axis_y + (36 if self.axis_label else 22)
        # room at both ends for a mark drawn at the first or the last point
        x = Scale(lo, hi, label_width + 10, self.width - 26)
        out = [f'<svg class="chart" data-picture="{attr(self.name)}" role="img" '
               f'viewBox="0 0 {self.width} {h}" preserveAspectRatio="xMinYMin meet" '
               f'xmlns="http://www.w3.org/2000/svg"><title>{escape(self.title)}</title>']
        for i in range(0, len(self.lanes), 2):  # banded rows: the eye follows a lane
            out.append(f'<rect class="band" x="0" y="{top + i * self.lane_height}" '
                       f'width="{self.width}" height="{self.lane_height}"/>')
        for v, label in (x.ticks(time=self.time) if self.axis else []):
            px = n(x(v))
            # a label near the right edge ends at its tick rather than past the edge
            anchor = ' text-anchor="end"' if x(v) + 4.5 * len(label) > self.width else ""
            out.append(f'<line class="grid" x1="{px}" x2="{px}" y1="{top}" y2="{axis_y}"/>'
                       f'<text class="tick" x="{px}" y="{axis_y + 14}"{anchor}>'
                       f'{escape(label)}</text>')
        out.append(f'<line class="axis" x1="{label_width}" x2="{self.width - 16}" '
                   f'y1="{axis_y}" y2="{axis_y}"/>')
        if self.axis_label:
            out.append(f'<text class="axis-label" x="{self.width - 16}" y="{axis_y + 30}">'
                       f'{escape(self.axis_label)}</text>')
        used: set[str] = set()  # the classes drawn: the legend names only those
        for i, lane in enumerate(self.lanes):
            out.append(self._lane(lane, x, top + i * self.lane_height, label_width, used))
        for r in _merge_marks(list(self.rules), x):
            px = n(x(r.at))
            out.append(f'<g class="rule {attr(r.kind)}" data-mark="{attr(r.kind)}" '
                       f'data-count="{r.count}">'
                       f'<line x1="{px}" x2="{px}" y1="{top - 10}" y2="{axis_y}"/>'
                       f'<polygon points="{px},{top - 2} {n(x(r.at) - 5)},{top - 10} '
                       f'{n(x(r.at) + 5)},{top - 10}"/>'
                       f'<title>{escape(r.tip)}</title></g>')
        out.append('</svg>')
        used |= {r.kind for r in self.rules}
        keys = [*self.legend, ("many", "several too short to draw apart (hover: which)")]
        legend = "".join(f'<span class="key"><i class="swatch {attr(c)}"></i>{escape(t)}</span>'
                         for c, t in keys if c in used)
        note = f'<p class="note">{escape(self.note)}</p>' if self.note else ""
        return (f'<figure class="picture" data-picture="{attr(self.name)}">'
                f'<figcaption>{escape(self.title)}</figcaption>{note}{"".join(out)}'
                + (f'<div class="legend">{legend}</div>' if legend else "") + '</figure>')

    def _lane(self, lane: Lane, x: Scale, y: float, label_width: int,
              used: set[str]) -> str:
        h = self.lane_height
        kind = f' data-kind="{attr(lane.kind)}"' if lane.kind else ""
        label = _fit(lane.label, label_width - 12)
        # a name too long to show whole is shortened in its middle, whole on hover
        whole = lane.label if label != lane.label else ""
        said = "; ".join(t for t in (whole, lane.tip) if t)
        tip = f'<title>{escape(said)}</title>' if said else ""
        out = [f'<g class="lane" data-lane="{attr(lane.key or lane.label)}"{kind}>'
               f'<text class="lane-label" x="{label_width - 8}" y="{n(y + h * 0.66)}">'
               f'{escape(label)}{tip}</text>']
        for s in _merge_spans(lane.spans, x, time=self.time):
            used.update(s.kind.split())
            x0, x1 = x(s.start), x(s.end)
            w = max(x1 - x0, 1.5)
            bar = (h - 6) * max(0.08, min(1.0, s.fill))
            merged = "" if not s.merged else ' data-merged="{}"'.format(
                " ".join(f"{k}:{v}" for k, v in sorted(s.merged.items())))
            out.append(f'<rect class="span {attr(s.kind)}"{merged} x="{n(x0)}" '
                       f'y="{n(y + 3 + (h - 6) - bar)}" width="{n(w)}" height="{n(bar)}">'
                       f'<title>{escape(s.tip)}</title></rect>')
            if s.label and w >= 7 * len(s.label) + 6:
                out.append(f'<text class="span-label" x="{n(x0 + w / 2)}" '
                           f'y="{n(y + h * 0.66)}">{escape(s.label)}</text>')
        for m in _merge_marks(lane.marks, x):
            used.add(m.kind)
            out.append(_mark(m, x(m.at), y, h))
        out.append('</g>')
        return "".join(out)


def _fit(label: str, px: float) -> str:
    """``label`` whole where it fits ``px``, else its start and end around an ellipsis
    (a topic's name differs at either end: its prefix and its version or suffix)."""
    most = max(8, int(px / _LABEL_CHAR_PX))
    if len(label) <= most:
        return label
    head = (most - 1) // 2
    return label[:head] + "…" + label[len(label) - (most - 1 - head):]


def _merge_spans(spans: list[Span], x: Scale, *, time: bool = False) -> list[Span]:
    """Consecutive spans too narrow to see apart become one, whose tooltip counts them
    and says where they run (``time``: the domain is ms since the epoch, said as times;
    else offsets, said whole: a tooltip is read, not fitted under a tick)."""
    def where(v: float) -> str:
        return _far(v) if time else f"{int(v):,}"

    out: list[Span] = []
    run: list[Span] = []

    def flush() -> None:
        if len(run) == 1:
            out.append(run[0])
        elif run:
            # shades that only tell neighbours apart do not make kinds differ
            kinds = {" ".join(w for w in s.kind.split() if w not in _SHADES) for s in run}
            merged: dict[str, int] = {}
            for s in run:
                for word in s.kind.split():
                    merged[word] = merged.get(word, 0) + (s.merged or {}).get(word, 1)
            out.append(Span(run[0].start, run[-1].end,
                            run[0].kind if len(kinds) == 1 else "many",
                            f"{len(run)} stretches too narrow to draw apart, "
                            f"{where(run[0].start)} – {where(run[-1].end)}; first: "
                            f"{run[0].tip}; last: {run[-1].tip}",
                            fill=max(s.fill for s in run), merged=merged))
        run.clear()

    for s in spans:
        if x(s.end) - x(s.start) < _MERGE_PX:
            run.append(s)
            if x(run[-1].end) - x(run[0].start) >= 4 * _MERGE_PX:
                flush()
        else:
            flush()
            out.append(s)
    flush()
    return out


def _merge_marks(marks: list[Mark], x: Scale) -> list[Mark]:
    """Marks of one kind closer than a few pixels become one, whose tooltip counts them."""
    out: list[Mark] = []
    # kinds in the order given: a lane lists the marks to draw on top last
    rank: dict[str, int] = {}
    for m in marks:
        rank.setdefault(m.kind, len(rank))
    for m in sorted(marks, key=lambda m: (rank[m.kind], m.at)):
        last = out[-1] if out else None
        if last is not None and last.kind == m.kind and abs(x(m.at) - x(last.at)) < 3:
            if "\n(and " in last.tip:
                head, _, more = last.tip.rpartition("\n(and ")
                k = int(more.split()[0]) + 1
                last.tip = f"{head}\n(and {k} more here)"
            else:
                last.tip = f"{last.tip}\n(and 1 more here)"
            last.radius = max(last.radius, m.radius)
            last.count += m.count
            continue
        out.append(Mark(m.at, m.kind, m.tip, m.shape, m.radius, m.count))
    return out


def _mark(m: Mark, px: float, y: float, h: int) -> str:
    cy = y + h / 2
    tip = f'<title>{escape(m.tip)}</title>'
    cls = f'mark {attr(m.kind)}'
    data = f'data-mark="{attr(m.kind)}" data-count="{m.count}"'
    if m.shape == "dot":
        return (f'<circle class="{cls}" {data} cx="{n(px)}" cy="{n(cy)}" '
                f'r="{n(m.radius)}">{tip}</circle>')
    if m.shape == "bar":
        return (f'<rect class="{cls}" {data} x="{n(px - 1.5)}" y="{n(y + 1)}" width="3" '
                f'height="{h - 2}">{tip}</rect>')
    if m.shape == "pin":  # a small flag hanging from the lane's top edge
        pts = f"{n(px - 4)},{n(y + 1)} {n(px + 4)},{n(y + 1)} {n(px)},{n(y + 8)}"
        return f'<polygon class="{cls}" {data} points="{pts}">{tip}</polygon>'
    s = m.radius + 1
    pts = f"{n(px)},{n(cy + s - 2 * s)} {n(px + s)},{n(cy + s)} {n(px - s)},{n(cy + s)}"
    return f'<polygon class="{cls}" {data} points="{pts}">{tip}</polygon>'
