"""``plain_values`` (kmeta/formats/batch.py), the values of a section of plain metadata
records that verify sends to its replay process in one call: the compiled twin answers as
the pure reference does (or None: the caller's general path), on every batch of the
fixtures and the real data and on damaged sections; and where the reference answers, the
general path reads the same records and finds nothing to say about them."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_runs import FIXTURES, _segment_files, compiled, needs_compiled

from kmeta.formats.batch import (
    HEADER_SIZE,
    Batch,
    Header,
    build_batch,
    plain_values_py,
)
from kmeta.ops.verify.records import _rule_problem
from kmeta.storage.segments import batch_records, scan_batches


def _both(raw: bytes, count: int, base: int) -> list[bytes] | None:
    want = plain_values_py(raw, HEADER_SIZE, count, base)
    if compiled is not None:
        fast = compiled.plain_values(raw, HEADER_SIZE, count, base)
        if fast is not None:  # None: left to the general path
            assert fast == want
            assert all(type(v) is bytes for v in fast)
    return want


def _what_the_general_path_reads(b: Batch) -> list[bytes] | None:
    """The values, when batch_records reads exactly the plain records plain_values
    stands for (no finding, offsets in order, the base timestamp, no KRaft-rule break)."""
    records, findings = batch_records(b)
    if findings or len(records) != b.records_count or not records:
        return None
    for i, r in enumerate(records):
        if r.offset != b.base_offset + i or _rule_problem(r, b.base_timestamp, False):
            return None
    return [r.value for r in records]


@pytest.mark.parametrize("root", ["fixtures", "real"])
def test_plain_values_agree_on_every_batch(root: str, real_data: Path) -> None:
    found = multi = 0
    for f in _segment_files(FIXTURES if root == "fixtures" else real_data):
        for b in scan_batches(f.read_bytes(), str(f)):
            if type(b) is not Batch or b.attributes & 7 or b.is_control \
                    or b.delete_horizon_ms is not None:
                continue
            raw = bytes(b.raw)
            values = _both(raw, b.records_count, b.base_offset)
            if values is not None:
                assert values == _what_the_general_path_reads(b), (f, b.base_offset)
                found += 1
                multi += b.records_count > 1
    assert found > 10
    if root == "fixtures":
        assert multi > 0


def _record(key: bytes | None, value: bytes | None, headers: bool) -> tuple:
    return (key, value, [Header("h", b"v")]) if headers else (key, value)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.none() | st.binary(max_size=3),
                          st.none() | st.binary(max_size=30), st.booleans()),
                min_size=1, max_size=5),
       st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=3),
       st.integers(-2, 2), st.sampled_from([0, 7, 2**63 - 3, -2**63]),
       st.lists(st.integers(0, 3), max_size=5))
def test_plain_values_agree_on_damaged_sections(records: list, flips: list, skew: int,
                                               base: int, timestamps: list) -> None:
    ts = [1000 + (timestamps[i] if i < len(timestamps) else 0) for i in range(len(records))]
    raw = bytearray(build_batch(base, [_record(*r) for r in records], base_timestamp=1000,
                                timestamps=ts))
    for at, value in flips:
        at = HEADER_SIZE + at % (len(raw) - HEADER_SIZE)
        raw[at] = value
    count = len(records) + skew
    values = _both(bytes(raw), count, base)
    if values is not None:
        b = next(iter(scan_batches(bytes(raw), "x")))
        if type(b) is Batch and b.records_count == count:  # flips may break the CRC only
            assert values == _what_the_general_path_reads(b)


@needs_compiled
def test_the_compiled_twin_reads_a_plain_batch() -> None:
    raw = build_batch(40, [(None, b"abc"), (None, b"de"), (None, b"f")], base_timestamp=9)
    assert compiled.plain_values(raw, HEADER_SIZE, 3, 40) == [b"abc", b"de", b"f"]
    for other in ([(b"k", b"abc"), (None, b"de")], [(None, b""), (None, b"de")],
                  [(None, None), (None, b"de")], [(None, b"a", [Header("h", b"v")]), (None, b"b")]):
        assert compiled.plain_values(build_batch(40, other), HEADER_SIZE, 2, 40) is None
    assert compiled.plain_values(build_batch(40, [(None, b"a"), (None, b"b")],
                                             timestamps=[0, 1]), HEADER_SIZE, 2, 40) is None
    assert compiled.plain_values(raw, HEADER_SIZE, 2, 40) is None  # a record more
    assert compiled.plain_values(raw, HEADER_SIZE, 4, 40) is None  # a record fewer
