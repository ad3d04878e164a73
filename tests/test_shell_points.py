"""The points in time the shell's commands take (kmeta/shell/points.py): every spelling
the help promises, and a clear refusal for anything else."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kmeta.errors import UsageError
from kmeta.shell.points import looks_like_point, on_day_of, parse_point


def ms(*args: int) -> int:
    return int(datetime(*args, tzinfo=UTC).timestamp() * 1000)


@pytest.mark.parametrize("text, kind, value, replica", [
    ("4000", "offset", 4000, None),
    ("0", "offset", 0, None),
    ("end", "end", None, None),
    ("START", "start", None, None),
    (".", "here", None, None),
    ("ctrl-2@end", "end", None, "ctrl-2"),
    ("a@b@123", "offset", 123, "a@b"),
    ("2024-05-01T03:12Z", "time", ms(2024, 5, 1, 3, 12), None),
    ("2024-05-01 03:12:45", "time", ms(2024, 5, 1, 3, 12, 45), None),
    ("2024-05-01T03:12:45.5Z", "time", ms(2024, 5, 1, 3, 12, 45) + 500, None),
    ("2024-05-01T05:12+02:00", "time", ms(2024, 5, 1, 3, 12), None),
    ("2024-05-01", "time", ms(2024, 5, 1), None),
    ("03:12", "day_time", (3 * 60 + 12) * 60_000, None),
    ("03:12:01.250", "day_time", ((3 * 60 + 12) * 60 + 1) * 1000 + 250, None),
    ("00000000000000004000-0000000003", "snapshot", 4000, None),
    ("00000000000000004000-0000000003.checkpoint", "snapshot", 4000, None),
    ("snapshot:00000000000000004000-0000000003", "snapshot", 4000, None),
])
def test_every_spelling(text: str, kind: str, value: int | None, replica: str | None) -> None:
    p = parse_point(text)
    assert (p.kind, p.value, p.replica, p.text) == (kind, value, replica, text)


@pytest.mark.parametrize("text", ["", "-5", "4k", "/image", "2024-13-01", "25:00", "@end",
                                  "03:61", "tomorrow", "²", "١٢"])  # digits, not ASCII
def test_what_is_not_a_point_is_one_clear_refusal(text: str) -> None:
    with pytest.raises(UsageError) as e:
        parse_point(text)
    assert "not a point" in e.value.message or "replica" in e.value.message
    assert not looks_like_point(text)


def test_a_time_of_day_falls_on_the_day_of_a_moment() -> None:
    assert on_day_of(3 * 3_600_000, ms(2024, 5, 1, 22, 0)) == ms(2024, 5, 1, 3, 0)


def test_paths_are_not_points() -> None:
    assert not looks_like_point("/image/topics")
    assert looks_like_point("end") and looks_like_point("7")


@settings(max_examples=1000)
@given(st.text(max_size=40))
def test_any_text_is_a_point_or_a_usage_error(text: str) -> None:
    with contextlib.suppress(UsageError):
        parse_point(text)


@pytest.mark.parametrize("text, want", [
    ("0..20", (("offset", 0, None), ("offset", 20, None))),
    ("4000..end", (("offset", 4000, None), ("end", None, None))),
    ("ctrl-2@4000..4099", (("offset", 4000, "ctrl-2"), ("offset", 4099, "ctrl-2"))),
    ("a@end..b@end", (("end", None, "a"), ("end", None, "b"))),
    ("2024-05-01T03:12Z..03:30", (("time", ms(2024, 5, 1, 3, 12), None),
                                  ("day_time", (3 * 60 + 30) * 60_000, None))),
    ("03:12:45.5..end", (("day_time", ((3 * 60 + 12) * 60 + 45) * 1000 + 500, None),
                         ("end", None, None))),
    ("00000000000000004000-0000000003.checkpoint..end",
     (("snapshot", 4000, None), ("end", None, None))),
])
def test_a_range_is_two_points(text: str, want: tuple) -> None:
    from kmeta.shell.points import parse_range

    got = parse_range(text)
    assert got is not None
    assert tuple((p.kind, p.value, p.replica) for p in got) == want


@pytest.mark.parametrize("text", ["..", "...", "../..", "/image/..", "4000..", "..4000",
                                  "4000...", "4000..nope", "topics", "4000"])
def test_what_is_not_a_range(text: str) -> None:
    """A parent dir (..), a path, a half range: not two points (diff A PATH reads them)."""
    from kmeta.shell.points import parse_range

    assert parse_range(text) is None
