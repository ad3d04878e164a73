"""``Environment.write_lines``: the bytes are those of the lines joined by newlines,
whether a line is short or so long (a large batch's hex) that it is written in slices."""

from __future__ import annotations

import io

import pytest

from kmeta.environment import _HUGE_LINE, Environment


@pytest.mark.parametrize("json", [False, True])
def test_huge_lines_are_written_in_slices_with_the_same_bytes(json: bool) -> None:
    lines = ["first", "é" * 10, "x" * (3 * _HUGE_LINE + 17), "after", "ab" * _HUGE_LINE,
             "last"]
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8")
    Environment(stdout=out, stderr=io.StringIO(), environ={}).write_lines(lines, json=json)
    assert raw.getvalue() == ("\n".join(lines) + "\n").encode("utf-8")
