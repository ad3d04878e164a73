"""Plain spans (kmeta/formats/spans.py): the compiled walk answers as the pure reference
does, on every batch of the fixtures and the real data and on damaged batches; and
verify's pass, which takes them whole where its replay runs beside it, writes the report
it writes without them, on a log where spans end in every way one can (and where the
replay finds problems and undecodable records inside them)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kmeta.core.image_records import image_records
from kmeta.formats import spans
from kmeta.formats.batch import HEADER, HEADER_SIZE, Header, build_batch
from kmeta.formats.payload import NOOP_VALUE, encode_metadata
from kmeta.ops import processes
from kmeta.ops.replay import build_image
from kmeta.ops.replay import process as replay_process
from kmeta.storage.writer import write_snapshot
from tests.clirun import run
from tests.test_image import broker, partition, topic
from tests.test_runs import FIXTURES, _leader_change, _segment_files, compiled, needs_compiled

T = "dG9waWMtb25lLWlkLTAwMQ"  # a topic id
BIG = (1 << 63) - 1


def _both(buf: bytes, pos: int, nxt: int, epoch: int, before: int = BIG,
          stop: int | None = None, most_values: int = spans.MOST_VALUES) -> tuple:
    stop = len(buf) if stop is None else stop
    for tell in (False, True):
        want = spans.plain_span_py(buf, pos, len(buf), stop, nxt, epoch, before, NOOP_VALUE,
                                   spans.MOST_SECTION, most_values, tell)
        if compiled is not None:
            got = compiled.plain_span(buf, pos, len(buf), stop, nxt, epoch, before,
                                      NOOP_VALUE, spans.MOST_SECTION, most_values, tell)
            assert got == want, (pos, nxt, epoch, before, stop, most_values, tell)
        assert bool(want[9]) == (tell and bool(want[4]))
    return want[:7]


def _walk(buf: bytes, rng: random.Random) -> int:
    """Both walks from after every batch a scan could stand on; the batches spanned."""
    pos, taken = 0, 0
    while pos + HEADER_SIZE <= len(buf):
        fields = HEADER.unpack_from(buf, pos)
        end = pos + 12 + fields[1]
        if fields[1] < HEADER_SIZE - 12 or end > len(buf) or fields[3] != 2:
            break
        nxt = fields[0] + fields[6] + 1
        if nxt > BIG:  # past the largest offset: the scan takes no span after it
            break
        before = rng.choice([BIG, min(BIG, nxt + rng.randrange(0, 50))])
        most = rng.choice([1, 3, spans.MOST_VALUES])
        span = _both(buf, end, nxt, fields[2], before, None, most)
        taken += span[1]
        pos = span[0] if span[1] else end
    return taken


@needs_compiled
@pytest.mark.parametrize("root", ["fixtures", "real"])
def test_the_twins_agree_on_every_batch(root: str, real_data: Path) -> None:
    rng = random.Random(11)
    taken = 0
    for f in _segment_files(FIXTURES if root == "fixtures" else real_data):
        if f.suffix == ".log" and "__cluster_metadata" in str(f):
            taken += _walk(f.read_bytes(), rng)
    assert taken > 100


def _change(partition: int, isr: list[int], leader: int | None = None) -> bytes:
    data = {"topicId": T, "partitionId": partition, "isr": isr}
    if leader is not None:
        data["leader"] = leader
    return encode_metadata("PARTITION_CHANGE_RECORD", 0, data)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.sampled_from(
    ["plain", "noop", "key", "header", "ts", "maxts", "epoch", "txn", "gzip", "control",
     "crc", "gap"])), min_size=1, max_size=8),
    st.lists(st.tuples(st.integers(0, 10**4), st.integers(0, 255)), max_size=3),
    st.integers(0, 5), st.integers(1, 4))
def test_the_twins_agree_on_damaged_batches(shapes: list, flips: list, before: int,
                                            most: int) -> None:
    raw = bytearray(_batches(shapes))
    for at, value in flips:
        raw[at % len(raw)] = value
    buf = bytes(raw)
    end = 12 + HEADER.unpack_from(buf, 0)[1]
    if HEADER_SIZE <= end <= len(buf):  # where a scan could stand after the first batch
        _both(buf, end, 1, 1, 1 + before, None, most)
        _both(buf, end, 1, 1, BIG, end + 100, most)


def _shaped(off: int, values: list[bytes], shape: str) -> tuple[bytes, int]:
    """A batch at ``off`` of ``values``, plain or broken in the named way; the offset
    after it."""
    n = len(values)
    records: list = [(None, v) for v in values]
    options: dict = {"leader_epoch": 1, "base_timestamp": 10}
    if shape == "key":
        records[-1] = (b"k", values[-1])
    elif shape == "header":
        records[0] = (None, values[0], [Header("h", b"v")])
    elif shape == "ts":
        options["timestamps"] = [10] * (n - 1) + [11]
    elif shape == "maxts":
        options["max_timestamp"] = 12
    elif shape == "epoch":
        options["leader_epoch"] = 2
    elif shape == "txn":
        options["transactional"] = True
    elif shape == "gzip":
        options["compression"] = 1
    elif shape == "control":
        return _leader_change(off, 1), off + 1
    elif shape == "crc":
        options["crc"] = 7
    elif shape == "gap":
        off += 2
    return build_batch(off, records, **options), off + n


def _batches(shapes: list[tuple[int, str]], base: int = 0, lead: bool = True) -> bytes:
    """A batch of one NoOp (unless not ``lead``), then a batch per shape: ``n``
    partition changes (NoOps for "noop") each, plain or broken in the named way."""
    out = [build_batch(base, [(None, NOOP_VALUE)], leader_epoch=1)] if lead else []
    off = base + lead
    for n, shape in shapes:
        values = [_change(i % 3, [1, 2]) if shape != "noop" else NOOP_VALUE
                  for i in range(n)]
        blob, off = _shaped(off, values, shape)
        out.append(blob)
    return b"".join(out)


def test_a_span_ends_before_what_is_not_plain() -> None:
    plain = _batches([(3, "plain"), (1, "noop"), (2, "plain")])
    for shape in ("key", "header", "ts", "maxts", "epoch", "txn", "gzip", "control", "crc",
                  "gap"):
        buf = plain + _batches([(2, shape)], base=7, lead=False)
        first = 12 + HEADER.unpack_from(buf, 0)[1]
        to, count, records, after, values, offsets, positions = _both(buf, first, 1, 1)
        assert (to, count, records, after) == (len(plain), 3, 6, 7), shape
        assert offsets == [1, 2, 3, 5, 6]  # the NoOp at offset 4 is left out
        assert values[0] == _change(0, [1, 2])
        assert positions[0] == positions[2] == first
    # where it must stop: the values kept, the offset a snapshot is compared at
    buf = _batches([(3, "plain"), (3, "plain")])
    first = 12 + HEADER.unpack_from(buf, 0)[1]
    assert _both(buf, first, 1, 1, most_values=2)[1] == 1
    assert _both(buf, first, 1, 1, before=4)[1] == 1
    assert _both(buf, first, 1, 1, before=3)[1] == 1  # a snapshot inside a batch: after it
    assert _both(buf, first, 1, 1, before=1)[1] == 0
    assert _both(buf, first, 2, 1)[1] == 0  # not where the reader expects the next offset
    assert _both(buf, first, 1, 0)[1] == 0  # nor in the epoch it read


def _span_log(tmp_path: Path) -> Path:
    """A metadata log of spans broken in every way, a replay problem (a leader outside
    the ISR) and an undecodable record inside spans, and a snapshot inside one."""
    part = tmp_path / "data" / "__cluster_metadata-0"
    part.mkdir(parents=True)
    records = [("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version",
                                             "featureLevel": 19}),
               broker(1), broker(2), topic("t", T),
               *(partition(T, p) for p in range(3))]
    setup = [encode_metadata(*r) for r in records]
    out = [_leader_change(0, 1), build_batch(1, [(None, v) for v in setup], leader_epoch=1,
                                             base_timestamp=10)]
    off = 1 + len(setup)
    rng = random.Random(5)
    shapes = ["plain"] * 6 + ["noop"] * 6 + ["key", "header", "ts", "maxts", "txn", "gzip",
                                             "crc", "gap", "control", "epoch"]
    for i in range(400):
        # an epoch that goes up, then back, late: no span follows it (V005 each)
        shape = rng.choice(shapes if i > 330 else shapes[:-1])
        n = rng.randint(1, 4)
        values = [NOOP_VALUE] * n if shape == "noop" else \
            [_change(rng.randrange(3), rng.choice([[1, 2], [1], [2, 1]])) for _ in range(n)]
        if i == 150:
            shape, values[0] = "plain", _change(1, [2], leader=1)  # V103: 1 is not in [2]
        if i == 250:
            shape, values[-1] = "plain", b"\x01\x7f\x00junk"  # an apiKey kmeta does not know
        blob, off = _shaped(off, values, shape)
        out.append(blob)
        if shape == "epoch" and i % 2:  # then plain batches of the epoch before: back
            for _ in range(3):
                blob, off = _shaped(off, values[:1], "plain")
                out.append(blob)
    (part / "00000000000000000000.log").write_bytes(b"".join(out))
    # the image there, as kmeta replays it, whatever the problems before
    at = _end(b"".join(out[:len(out) // 2]))
    image = build_image(part, at=at).image
    write_snapshot(part, at, 1, [encode_metadata(*r) for r in image_records(image)],
                   last_contained_log_timestamp=10, timestamp=10)
    return part


def _end(buf: bytes) -> int:
    pos, nxt = 0, 0
    while pos < len(buf):
        fields = HEADER.unpack_from(buf, pos)
        nxt = fields[0] + fields[6] + 1
        pos += 12 + fields[1]
    return nxt


@pytest.mark.skipif(not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2,
                    reason="spans are taken where the replay forks: two CPUs")
def test_verify_says_the_same_with_spans(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    part = _span_log(tmp_path)
    assert list(part.glob("*.checkpoint")), "the snapshot inside the spans was not written"
    outputs = {}
    for mode in ("spans", "no spans", "one process"):
        with monkeypatch.context() as m:
            if mode == "one process":
                m.setenv("KMETA_ONE_PROCESS", "1")
            else:
                m.setattr(replay_process, "FORK_ABOVE", 0)
                m.setattr(processes, "no_other_thread", lambda: True)
                m.delenv("KMETA_ONE_PROCESS", raising=False)
            if mode == "no spans":
                m.setattr(spans, "plain_span",
                          lambda buf, pos, *rest: (pos, 0, 0, rest[2], [], [], [], 0, 0, []))
            taken = []
            if mode == "spans":
                real = spans.plain_span

                def counting(*args: object, real=real, taken=taken) -> tuple:
                    got = real(*args)
                    taken.append(got[1])
                    return got
                m.setattr(spans, "plain_span", counting)
            outputs[mode] = [run("verify", *opts, str(part)).stdout
                             for opts in (("--json",), ("--all",))]
            if mode == "spans":
                assert sum(taken) > 100
    assert outputs["spans"] == outputs["no spans"] == outputs["one process"]
    assert '"V103"' in outputs["spans"][0] and '"F004"' in outputs["spans"][0]
    assert '"V001"' in outputs["spans"][0] and '"F001"' in outputs["spans"][0]
