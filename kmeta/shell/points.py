"""Points in a metadata log's time, as the shell's commands name them.

A *point* is where an image stands: "the state after every record below offset N".  The
shell's ``at``, ``diff`` and ``records`` take one in any of these spellings:

* an offset, ``4000``;
* a time, ``2024-05-01T03:12Z``, ``2024-05-01 03:12:45.5``, ``03:12`` (a time of day
  on the day of the point the shell stands at): the state after every record stamped
  before that time.  Without a zone a time is UTC, as every time kmeta prints;
* ``start`` and ``end`` of the replica's log, ``.`` (where the shell stands);
* a snapshot, by its file name (``00000000000000004000-0000000003``, with or without
  ``.checkpoint``) or, for ``at``, ``snapshot NAME``;
* any of them after ``REPLICA@`` to name another replica (``ctrl-2@end``).

Where a command takes two points, ``A..B`` says both, as kmeta prints ranges
(:func:`parse_range`).

Pure: :func:`parse_point` turns the words into a :class:`Point`; the session resolves it
against a replica's timeline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from kmeta.errors import UsageError

# ASCII digits only ([0-9], not \d or str.isdigit: '²' is a digit to both, not to int)
_OFFSET = re.compile(r"[0-9]+")
_SNAPSHOT = re.compile(r"^([0-9]{20})-([0-9]{10})(?:\.checkpoint)?$")
_TIME_OF_DAY = re.compile(
    r"^([0-9]{1,2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,9}))?)?(Z|[+-][0-9]{2}:?[0-9]{2})?$")
_DATE_TIME = re.compile(
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[T ]([0-9]{1,2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,9}))?)?)?"
    r"(Z|[+-][0-9]{2}:?[0-9]{2})?$")


@dataclass(frozen=True)
class Point:
    """A point as written: ``kind`` is "offset", "time", "day_time" (a time of day),
    "start", "end", "here" or "snapshot"; ``value`` its number (ms since the epoch for
    a time, ms since midnight UTC for a time of day) or the snapshot's end offset;
    ``replica`` the replica named before ``@``, if any; ``text`` as typed."""

    kind: str
    value: int | None
    text: str
    replica: str | None = None


def parse_point(text: str) -> Point:
    """The point ``text`` names (see the module docstring); a UsageError that says what a
    point can be otherwise."""
    replica = None
    spec = text.strip()
    if "@" in spec:
        replica, _, spec = spec.rpartition("@")
        if not replica:
            raise UsageError(f"{text!r}: a replica's name goes before '@'")
    point = _point(spec, text)
    if point is None:
        raise UsageError(f"{text!r} is not a point in the log",
                         hint="an offset (4000), a time (2024-05-01T03:12Z, 03:12), start, "
                         "end, '.' or a snapshot's name; REPLICA@ before any of them")
    return Point(point.kind, point.value, text, replica)


def looks_like_point(text: str) -> bool:
    """Whether ``text`` spells a point (and not a node path): what tells ``diff A B PATH``
    from ``diff A PATH``."""
    try:
        parse_point(text)
    except UsageError:
        return False
    return not text.startswith("/")


def parse_range(text: str) -> tuple[Point, Point] | None:
    """``A..B``, the way kmeta prints a range (``records 10..12``, ``diff 0..20``), as its
    two points; None where ``text`` is not two points joined by ``..`` (``..`` alone is a
    path).  B without a replica is on A's: ``ctrl-2@4000..4099``."""
    if text.startswith("/"):
        return None
    at = text.find("..")
    while at >= 0:
        a, b = text[:at], text[at + 2:]
        if a.strip(".") and b.strip(".") and looks_like_point(a) and looks_like_point(b):
            first, second = parse_point(a), parse_point(b)
            if second.replica is None:
                second = Point(second.kind, second.value, second.text, first.replica)
            return first, second
        at = text.find("..", at + 1)
    return None


def _point(spec: str, text: str) -> Point | None:
    low = spec.lower()
    if low in ("start", "end"):
        return Point(low, None, text)
    if spec == ".":
        return Point("here", None, text)
    if _OFFSET.fullmatch(spec):
        return Point("offset", int(spec), text)
    if low.startswith("snapshot:"):
        spec = spec[len("snapshot:"):]
    m = _SNAPSHOT.match(spec)
    if m:
        return Point("snapshot", int(m.group(1)), text)
    m = _DATE_TIME.match(spec)
    if m:
        year, month, day, hour, minute, second, frac, zone = m.groups()
        try:
            when = datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0),
                            int(second or 0), _micros(frac), tzinfo=UTC)
        except ValueError:
            return None
        return Point("time", _ms(when) - _zone_ms(zone), text)
    m = _TIME_OF_DAY.match(spec)
    if m:
        hour, minute, second, frac, zone = m.groups()
        if int(hour) > 23 or int(minute) > 59 or int(second or 0) > 59:
            return None
        ms = ((int(hour) * 60 + int(minute)) * 60 + int(second or 0)) * 1000 + \
            _micros(frac) // 1000
        return Point("day_time", ms - _zone_ms(zone), text)
    return None


def on_day_of(day_ms: int, at_ms: int) -> int:
    """A time of day (``day_ms``, ms after midnight UTC) on the UTC day of ``at_ms``."""
    midnight = datetime.fromtimestamp(at_ms / 1000, UTC).replace(hour=0, minute=0, second=0,
                                                                 microsecond=0)
    return _ms(midnight) + day_ms


def _micros(frac: str | None) -> int:
    return int((frac or "0").ljust(6, "0")[:6])


def _ms(when: datetime) -> int:
    return (when - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)


def _zone_ms(zone: str | None) -> int:
    """How far ahead of UTC a zone suffix is, in ms (none and ``Z``: 0)."""
    if not zone or zone == "Z":
        return 0
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    return sign * (int(digits[:2]) * 60 + int(digits[2:])) * 60_000
