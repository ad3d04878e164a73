"""Runs of repeated batches (kmeta/formats/runs.py) and their compiled twin (_runs.c).

The pure-Python functions are the reference.  Each test runs the compiled twin against
them: CRC-32C, run lengths and record sections at every batch of every fixture and real
file and on mutated bytes, and filled templates; then whole commands (dump in each form, verify) on every
fixture and real directory and on a log made to break runs in every way, with runs found
by the compiled twin, by the reference, and not at all (each batch read alone, the path
without runs): the outputs must be byte for byte the same.
"""

from __future__ import annotations

import os
import random
import struct
from pathlib import Path

import pytest
from heard import Heard
from hypothesis import given, settings
from hypothesis import strategies as st

from kmeta.errors import FormatError
from kmeta.findings import Finding
from kmeta.formats import batch as batch_module
from kmeta.formats import compiled as compiled_module
from kmeta.formats import coordinator as coordinator_module
from kmeta.formats import payload as payload_module
from kmeta.formats import runs
from kmeta.formats.batch import BASE_OFFSET as BASE_OFFSET_SLOT
from kmeta.formats.batch import Batch, Header, Record, build_batch
from kmeta.formats.checksum import crc32c as package_crc32c
from kmeta.formats.payload import Payload, encode_control, encode_metadata
from kmeta.formats.readergen import body_program, message_reader
from kmeta.ops.export import chunks as chunks_module
from kmeta.ops.replay import engine as replay_module
from kmeta.render import jsonl as jsonl_module
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.segments import read_batches, scan_batches
from tests.clirun import run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"

try:
    from kmeta.formats import _runs as compiled  # type: ignore[attr-defined]
except ImportError:  # no compiler where kmeta was installed
    compiled = None
    if os.environ.get("CI"):
        raise  # CI installs with a compiler: the fast path must be built and tested

needs_compiled = pytest.mark.skipif(compiled is None, reason="the compiled twin is not built")

NOOP = encode_metadata("NO_OP_RECORD", 0, {})
FEATURE = encode_metadata("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version",
                                                      "featureLevel": 19})


# ---------------------------------------------------------------------------- primitives

@needs_compiled
def test_crc32c_matches_the_package() -> None:
    rng = random.Random(7)
    # every length the three-stream CRC splits differently (parts of 64, 256, 1024 bytes)
    for n in [*range(0, 70), 191, 192, 193, 767, 768, 769, 1000, 3071, 3072, 3073, 4097,
              3 * 1024 + 3 * 256 + 3 * 64 + 7, 100_000]:
        data = rng.randbytes(n)
        start = rng.getrandbits(32)
        assert compiled.crc32c(data) == package_crc32c(data)
        assert compiled.crc32c(data, start) == package_crc32c(data, start)


def _segment_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".log",
                                                                             ".checkpoint"))


def _both_lengths(buf: bytes, positions: list[int], limit: int | None = None) -> None:
    limit = len(buf) if limit is None else limit
    for pos in positions:
        for max_count in (0, 1, 3, runs.MAX_RUN):
            want = runs.run_length_py(buf, pos, limit, max_count)
            assert compiled.run_length(buf, pos, limit, max_count) == want, (pos, max_count)


@needs_compiled
@pytest.mark.parametrize("root", ["fixtures", "real"])
def test_run_length_agrees_at_every_batch_of_every_file(root: str, real_data: Path) -> None:
    files = _segment_files(FIXTURES if root == "fixtures" else real_data)
    assert files
    for f in files:
        buf = f.read_bytes()
        starts = [b.position for b in scan_batches(buf, str(f)) if hasattr(b, "position")]
        # every batch start, the bytes around a few of them, and a limit that cuts the file
        near = [p + d for p in starts[:5] for d in (-1, 1, 17)]
        _both_lengths(buf, starts + near + [-5, len(buf), len(buf) + 3])
        _both_lengths(buf, starts[:20], limit=len(buf) // 2)


def _noops(n: int, base: int = 0, epoch: int = 1, ts: int = 1_700_000_000_000,
           **options: object) -> bytes:
    return b"".join(build_batch(base + i, [(None, NOOP)], leader_epoch=epoch,
                                base_timestamp=ts + 500 * i, **options) for i in range(n))


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=4),
       st.integers(0, 5))
def test_run_length_agrees_on_damaged_runs(flips: list[tuple[int, int]], start: int) -> None:
    buf = bytearray(_noops(40))
    for at, value in flips:
        buf[at % len(buf)] = value
    data = bytes(buf)
    size = len(_noops(1))
    _both_lengths(data, [start * size, start * size + 1])


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=61, max_size=400), st.integers(1, 4),
       st.lists(st.one_of(st.text(max_size=6),
                          st.tuples(st.sampled_from([0, 4, 5, 8]), st.integers(0, 64),
                                    st.integers(-2**40, 2**40))), max_size=8),
       st.integers(0, 2**40), st.booleans())
def test_fill_agrees(raw: bytes, count: int, parts: list, first: int, as_bytes: bool) -> None:
    size = len(raw) // count
    spec = [(p.encode("utf-8", "surrogatepass") if as_bytes else p) if isinstance(p, str)
            else (p[1], p[0], p[2]) for p in parts]
    sep = b"\n" if as_bytes else "\n"
    try:
        want: object = runs.fill_py(raw, count, size, first, spec, sep)
    except ValueError:
        want = ValueError
    try:
        got: object = compiled.fill(raw, count, size, first, spec, sep)
    except ValueError:
        got = ValueError
    assert got == want
    if want is not ValueError and as_bytes:  # the bytes are the text's, encoded
        text = runs.fill_py(raw, count, size, first,
                            [p.decode("utf-8", "surrogatepass") if type(p) is bytes else p
                             for p in spec], "\n")
        assert want == text.encode("utf-8", "surrogatepass")


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(-2**63, 2**63 - 1),
                          st.lists(st.integers(-3, 12_000), min_size=1, max_size=40)),
                min_size=1, max_size=4),
       st.integers(-2**40, 2**40), st.sampled_from([8, 4, 5]), st.booleans())
def test_fill_agrees_along_runs(stretches: list[tuple[int, list[int]]], add: int, kind: int,
                                as_bytes: bool) -> None:
    """Values as a run's fields go (small steps up, across a power of ten, now and then
    a jump): the compiled fill copies the leading digits a value shares with the one
    before it, which the reference works out each time."""
    width = 8 if kind == 8 else 4
    values = []
    for start, steps in stretches:
        v = start
        for step in steps:
            v += step
            values.append(v)
    fmt, mask = (">Q", (1 << 64) - 1) if width == 8 else (">I", (1 << 32) - 1)
    raw = b"".join(struct.pack(fmt, v & mask) + b"\x00" for v in values)
    size = width + 1
    text = [b"x", (0, kind, add), b"", (0, kind, 0), (0, 0, add)] if as_bytes else \
        ["x", (0, kind, add), "", (0, kind, 0), (0, 0, add)]
    sep = b"\n" if as_bytes else "\n"
    want = runs.fill_py(raw, len(values), size, 10**6, text, sep)
    assert compiled.fill(raw, len(values), size, 10**6, text, sep) == want


@needs_compiled
@pytest.mark.parametrize("fill", ["fill_py", "compiled"])
def test_fill_takes_literals_of_its_separator_type(fill: str) -> None:
    f = runs.fill_py if fill == "fill_py" else compiled.fill
    raw = bytes(range(16))
    with pytest.raises(TypeError):
        f(raw, 1, 16, 0, [b"x", (0, 4, 0)], "\n")
    with pytest.raises(TypeError):
        f(raw, 1, 16, 0, ["x", (0, 4, 0)], b"\n")
    with pytest.raises(TypeError):
        f(raw, 1, 16, 0, ["x"], 1)
    assert f(raw, 2, 8, 5, [b"p=", (0, 0, 0), b" v=", (0, 4, 1)], b";") == \
        b"p=5 v=66052;p=13 v=134810124"


_TEXTS = st.one_of(st.just('"type":"NO_OP_RECORD","version":0,"data":{}'),
                  st.text(max_size=12), st.just('"data":"\udcff"'), st.integers(0, 3))


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.integers(-2**64, 2**64), st.integers(-2**64, 2**64),
                          st.sampled_from([(), (Header("k", b"v"),)]),
                          st.sampled_from([(), ("masked",)]),
                          st.sampled_from(["pair", "finding", "triple", "short", "bool"]),
                          st.booleans(), _TEXTS), max_size=6),
       st.sampled_from([None, b'{"kind":"batch"}']), st.integers(0, 3))
def test_record_lines_agrees(rows: list, first: bytes | None, clear_at: int) -> None:
    """The compiled record_lines against jsonl.record_lines_py: the same bytes, the same
    None (an entry that is not a plain record, a text UTF-8 cannot encode), the same
    error, and the same calls for the texts not in the memo (the memo is emptied by
    one of them, as a full one is)."""
    entries: list = []
    payloads = []
    for offset, ts, headers, redacted, shape, known, text in rows:
        p = tuple.__new__(Payload, ("T", 0, {}, None, 1, redacted))
        payloads.append((p, known, text))
        r = Record(offset, ts, None, b"v", headers)
        entries.append({"pair": (r, p), "finding": Finding("F005", "x", "f", 0),
                        "triple": (r, p, p), "short": (r[:3], p),
                        "bool": (Record(True, ts, None, b"v", headers), p)}[shape])
    results = []
    for lines in (compiled.record_lines, jsonl_module.record_lines_py):
        texts = {id(p): (p, text) for p, known, text in payloads if known}
        asked = []

        def payload_text(p: object, texts: dict = texts, asked: list = asked) -> object:
            asked.append(id(p))
            if len(asked) == clear_at:
                texts.clear()
            return next(t for q, _, t in payloads if q is p)

        try:
            got: object = lines(first, entries, b'{"o":', b',"p":1,', texts, payload_text)
        except TypeError:
            got = TypeError
        results.append((got, asked, sorted(texts)))
    assert results[0] == results[1]


def _both_decoders(section: bytes, count: int, base: int = 100, ts: int = 5,
                   seq: int = -1) -> None:
    fast = compiled.decode_records(section, count, base, ts, seq, Record, ())
    try:
        want: object = batch_module._decode_records(section, count, base, ts, seq)
    except (FormatError, IndexError):
        want = FormatError
    if fast is not None:  # None: the section is left to the Python reader
        assert fast == want
        assert all(type(r) is Record for r in fast)


@needs_compiled
@pytest.mark.parametrize("root", ["fixtures", "real"])
def test_record_decoders_agree_on_every_batch(root: str, real_data: Path) -> None:
    decoded = 0
    for f in _segment_files(FIXTURES if root == "fixtures" else real_data):
        for b in scan_batches(f.read_bytes(), str(f)):
            if type(b) is not Batch or b.attributes & 7:
                continue
            section = bytes(b.raw[61:])
            _both_decoders(section, b.records_count, b.base_offset, b.base_timestamp,
                           b.base_sequence)
            decoded += compiled.decode_records(section, b.records_count, 0, 0, -1, Record,
                                               ()) is not None
    assert decoded > 10


@needs_compiled
@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.binary(max_size=5) | st.none(), st.binary(max_size=30) | st.none()),
                min_size=1, max_size=5),
       st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=3),
       st.integers(-2, 2), st.sampled_from([-1, 0, 2**31 - 1]),
       st.sampled_from([0, 2**63 - 2, -2**63]))
def test_record_decoders_agree_on_damaged_sections(records: list, flips: list, skew: int,
                                                   seq: int, base: int) -> None:
    section = bytearray(build_batch(0, records, base_timestamp=7)[61:])
    for at, value in flips:
        section[at % len(section)] = value
    _both_decoders(bytes(section), len(records) + skew, base, 2**62, seq)


def _bodies(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """(message, version, buffer, position) of every record body ``dump --json``
    decodes in ``path``, the internal topics' keys and values too."""
    seen: list[tuple] = []
    real = payload_module.read_body

    def spy(message, version, buf, pos):  # noqa: ANN001, ANN202
        seen.append((message, version, bytes(buf), pos))
        return real(message, version, buf, pos)

    with monkeypatch.context() as m:
        m.setattr(payload_module, "read_body", spy)
        m.setattr(coordinator_module, "read_body", spy)
        m.setattr(payload_module, "_DECODED", {})
        run("dump", "--json", str(path))
    return seen


@needs_compiled
@pytest.mark.parametrize("root", ["fixtures", "real"])
def test_body_readers_agree_on_every_record(root: str, real_data: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Every record body of every fixture and real file: the compiled reader reads each
    one the generated reader reads, to the same fields of the same types, and gives up
    only where that reader finds a problem."""
    read = given_up = 0
    for d in _dirs(FIXTURES if root == "fixtures" else real_data):
        for message, version, buf, pos in _bodies(d, monkeypatch):
            fast = compiled.decode_body(body_program(message, version), buf, pos)
            try:
                want, end = message_reader(message, version)(buf, pos)
            except (FormatError, IndexError, struct.error):
                want, end = FormatError, None
            if end == len(buf):
                assert repr(fast) == repr(want), (message.name, version, buf.hex())
                read += 1
            else:
                assert fast is None, (message.name, version, buf.hex())
                given_up += 1
    assert read > (1000 if root == "fixtures" else 300)


def test_a_run_stops_where_a_batch_differs() -> None:
    size = len(_noops(1))
    log = _noops(10) + _noops(5, base=10, epoch=2) + _noops(3, base=16)
    assert runs.run_length_py(log, 0, len(log), 100) == 9
    assert runs.run_length_py(log, 10 * size, len(log), 100) == 4  # epoch 2 from 10
    assert runs.run_length_py(log, 14 * size, len(log), 100) == 0  # next: 16, epoch 1
    assert runs.run_length_py(log, 15 * size, len(log), 100) == 2
    assert runs.run_length_py(log, 0, len(log), 4) == 4
    assert runs.run_length_py(log, 0, 5 * size - 1, 100) == 3  # the 5th batch is cut
    bad = bytearray(log)
    bad[3 * size + 30] ^= 1  # a timestamp of batch 3: its CRC no longer matches
    assert runs.run_length_py(bytes(bad), 0, len(bad), 100) == 2


def test_run_batches_are_the_batches_a_scan_yields() -> None:
    log = _noops(50)
    plain = [b for b in scan_batches(log, "x", memo=True)]
    items = list(scan_batches(log, "x", memo=True, runs=True))
    assert [type(i).__name__ for i in items] == ["Batch", "Run"]
    assert [items[0], *items[1].batches()] == plain
    assert items[1].count == 49 and items[1].last_offset == 49


# ---------------------------------------------------------------------------- walks

def _data_log(n: int, seed: int = 3) -> bytes:
    """Batches of an ordinary topic: 1-8 keyed records each, some compressed."""
    rng = random.Random(seed)
    out, off = [], 0
    for i in range(n):
        recs = [(b"k%d" % rng.randrange(50), rng.randbytes(rng.randrange(0, 300)))
                for _ in range(rng.randrange(1, 9))]
        out.append(build_batch(off, recs, leader_epoch=i // 7,
                               compression=1 if i % 5 == 4 else 0,
                               base_timestamp=1_700_000_000_000 + i))
        off += len(recs)
    return b"".join(out)


def _both_walks(buf: bytes, positions: list[int], tmp_path: Path) -> None:
    f = tmp_path / "walk.log"
    f.write_bytes(buf)
    fd = os.open(f, os.O_RDONLY)
    try:
        for pos in positions:
            for limit, stop, nxt, epoch in ((len(buf), len(buf) + 1, 0, -1),
                                            (len(buf) // 2, len(buf), 0, 5),
                                            (len(buf), pos + 500, 2**62, -1),
                                            (len(buf), len(buf), 2**64, 2**70),
                                            (len(buf), len(buf), -3, -1)):
                want = runs.walk_py(buf, pos, limit, stop, nxt, epoch)
                assert compiled.walk(buf, pos, limit, stop, nxt, epoch) == want, (pos, limit)
                for cap in (61, 200, 5000, len(buf) + 10):
                    scratch = bytearray(cap)
                    want = runs.walk_file_py(fd, scratch, pos, limit, stop, nxt, epoch)
                    got = compiled.walk_file(fd, scratch, pos, limit, stop, nxt, epoch)
                    assert got == want, (pos, limit, cap)
    finally:
        os.close(fd)


@needs_compiled
@pytest.mark.parametrize("root", ["fixtures", "real"])
def test_walks_agree_at_every_batch_of_every_file(root: str, real_data: Path,
                                                 tmp_path: Path) -> None:
    files = _segment_files(FIXTURES if root == "fixtures" else real_data)
    for f in files:
        buf = f.read_bytes()
        starts = [b.position for b in scan_batches(buf, str(f)) if hasattr(b, "position")]
        _both_walks(buf, sorted({0, *starts[:3], *starts[-3:], 7, len(buf)}), tmp_path)


@needs_compiled
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=4),
       st.integers(0, 3))
def test_walks_agree_on_damaged_logs(tmp_path_factory: pytest.TempPathFactory,
                                    flips: list[tuple[int, int]], start: int) -> None:
    buf = bytearray(_data_log(30))
    for at, value in flips:
        buf[at % len(buf)] = value
    data = bytes(buf)
    starts = [b.position for b in scan_batches(data, "x") if hasattr(b, "position")]
    _both_walks(data, [0, *starts[start:start + 2]], tmp_path_factory.mktemp("walk"))


def _scan_outcome(path: Path, walk: bool, progress: Progress = QUIET
                  ) -> tuple[list, int | None, int]:
    """The findings of a scan of ``path``, where its log ends and the batches read."""
    findings, end, batches = [], None, 0
    for item in read_batches(path, walk=walk, progress=progress):
        if type(item) is Finding:
            findings.append(item)
        elif type(item) is runs.Walked:
            end = max(end or 0, item.high)
            batches += item.count
        else:
            end = max(end or 0, item.last_offset + 1)
            batches += 1
    return findings, end, batches


@pytest.mark.parametrize("walker", ["compiled", "pure"])
def test_a_walk_finds_what_the_scan_finds(walker: str, tmp_path: Path, real_data: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every fixture and real file, and damaged logs, read with and without walks (in
    small chunks, with progress, so every boundary is crossed): the same findings, the
    same log end, the same batches."""
    from kmeta.storage import segments

    if walker == "compiled":
        if compiled is None:
            pytest.skip("the compiled twin is not built")
        monkeypatch.setattr(runs, "walk", compiled.walk)
        monkeypatch.setattr(runs, "walk_file", compiled.walk_file)
    else:
        monkeypatch.setattr(runs, "walk", runs.walk_py)
        monkeypatch.setattr(runs, "walk_file", runs.walk_file_py)
    monkeypatch.setattr(segments, "WALK_CHUNK", 3000)
    monkeypatch.setattr(segments, "PROGRESS_EVERY", 5000)
    monkeypatch.setattr(segments, "FILL_EVERY", 7000)
    files = _segment_files(FIXTURES) + _segment_files(real_data)
    log = _data_log(60)
    size = len(log)
    for k, flips in enumerate([[(size // 3, 0)], [(size // 2 + 9, 7)], [(size - 40, 1)],
                               [(8 + size // 4, 255), (size // 5, 0)], [(16, 1)]]):
        bad = bytearray(log)
        for at, value in flips:
            bad[at] = value
        files.append(tmp_path / f"{k:020d}.log")
        files[-1].write_bytes(bytes(bad) + (b"\0" * 100 if k == 2 else b""))
    told = Heard()
    walked = 0
    for f in files:
        want = _scan_outcome(f, walk=False, progress=told)
        got = _scan_outcome(f, walk=True, progress=told)
        assert got == want, f
        walked += got[2]
    assert walked > 1000
    assert told.reads


@pytest.mark.parametrize("walker", ["compiled", "pure"])
def test_a_batch_longer_than_the_walk_buffer_is_walked(walker: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from kmeta.storage import segments

    if walker == "compiled" and compiled is None:
        pytest.skip("the compiled twin is not built")
    monkeypatch.setattr(runs, "walk_file", compiled.walk_file if walker == "compiled"
                        else runs.walk_file_py)
    monkeypatch.setattr(segments, "WALK_CHUNK", 3000)
    big = build_batch(3, [(b"k", bytes(range(256)) * 40)])  # 10 KiB
    f = tmp_path / "00000000000000000000.log"
    f.write_bytes(build_batch(0, [(b"a", b"b")] * 3) + big +
                  build_batch(4, [(b"c", b"d")]))
    loads: list[int] = []
    load = segments.SegmentMap.load
    monkeypatch.setattr(segments.SegmentMap, "load",
                        lambda self, a, b: loads.append(a) or load(self, a, b))
    items = list(read_batches(f, walk=True))
    assert not loads  # read by the walk, never copied into the map
    assert all(type(i) is runs.Walked for i in items)
    assert sum(i.count for i in items) == 3 and items[-1].high == 5


@pytest.mark.parametrize("walk", [True, False])
def test_a_file_that_shrinks_under_a_walk_is_reported(walk: bool, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A live broker truncating a segment while it is walked: the batches before the cut
    are read, then S008 says the file shrank, as without walks."""
    from kmeta.storage import segments

    monkeypatch.setattr(segments, "WALK_CHUNK", 4000)
    monkeypatch.setattr(segments, "PROGRESS_EVERY", 4000)  # a walk stops every 4000 bytes
    monkeypatch.setattr(segments, "FILL_EVERY", 4000)  # and so does the map's loading
    log = _data_log(200)
    f = tmp_path / "00000000000000000000.log"
    f.write_bytes(log)
    starts = [b.position for b in scan_batches(log, "x")]
    cut = next(p for p in starts if p > len(log) // 2)
    items = []
    for item in read_batches(f, walk=walk):
        items.append(item)
        if len(items) == 1:
            os.truncate(f, cut)
    last = items[-1]
    assert type(last) is Finding and last.code == "S008"
    assert f"shrank while it was read (from {len(log)} to {cut} bytes)" in last.message
    read = sum(i.count if type(i) is runs.Walked else 1 for i in items[:-1])
    assert read == starts.index(cut)  # every batch before the cut, none after it


# ---------------------------------------------------------------------------- commands

def _leader_change(base: int, epoch: int) -> bytes:
    key, value = encode_control("LEADER_CHANGE", {"version": 0, "leaderId": 1, "voters": [
        {"voterId": 1}], "grantingVoters": [{"voterId": 1}]})
    return build_batch(base, [(key, value)], leader_epoch=epoch, control=True,
                       base_timestamp=1_700_000_000_000)


def disturbed_log(tmp_path: Path) -> Path:
    """A metadata log whose NoOp runs are broken in every way a run can end."""
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    parts = [_leader_change(0, 1), build_batch(1, [(None, FEATURE)], leader_epoch=1)]
    off = 2

    def add(blob: bytes, n: int) -> None:
        nonlocal off
        parts.append(blob)
        off += n

    add(_noops(5000, off), 5000)  # longer than MAX_RUN
    add(build_batch(off, [(None, NOOP)], leader_epoch=1, crc=12345), 1)  # bad CRC
    add(_noops(30, off), 30)
    add(build_batch(off, [(None, NOOP)], leader_epoch=1, base_timestamp=5,
                    max_timestamp=9), 1)  # V004: maxTimestamp is not the record's
    add(build_batch(off, [(None, NOOP)], leader_epoch=1, base_timestamp=5,
                    max_timestamp=9), 1)
    add(_noops(20, off, producer_id=7, producer_epoch=0, base_sequence=0), 20)
    add(_noops(20, off, log_append_time=True), 20)
    add(b"".join(build_batch(off + i, [(None, NOOP, [Header("h", b"v")])], leader_epoch=1)
                 for i in range(10)), 10)  # V001 on each: runs of flagged records
    add(_leader_change(off, 2), 1)
    add(_noops(40, off, epoch=2), 40)
    add(_noops(60, off - 30, epoch=2), 30)  # offsets go back 30: a run inside the overlap
    off += 5  # a gap of five offsets
    add(_noops(40, off, epoch=2), 40)
    add(build_batch(off, [(None, FEATURE)], leader_epoch=2), 1)
    add(_noops(40, off, epoch=2), 40)
    first = b"".join(parts)
    (part / "00000000000000000000.log").write_bytes(first)
    second = _noops(300, off, epoch=2) + _noops(3, off + 300, epoch=2)[:-20]  # torn tail
    (part / f"{off:020d}.log").write_bytes(second)
    return part


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.integers(-2, 70), st.integers(0, 80), st.integers(-1, 40))
def test_gather_int64_agrees(raw: bytes, at: int, stride: int, count: int) -> None:
    results = []
    for gather in (runs.gather_int64_py, compiled.gather_int64):
        try:
            results.append(gather(raw, at, stride, count))
        except ValueError:
            results.append(ValueError)
    assert results[0] == results[1]
    if results[0] is not ValueError:
        want = [struct.unpack_from(">q", raw, at + i * stride)[0] for i in range(count)]
        assert list(struct.unpack(f"={count}q", results[0])) == want


MODES = ["compiled", "pure", "no runs"]


def _no_runs(m: pytest.MonkeyPatch) -> None:
    """Each batch read alone: no runs, no walks."""
    m.setattr(runs, "run_length", lambda *args: 0)
    m.setattr(runs, "walk", lambda buf, pos, limit, stop, nxt, epoch: (pos, 0, nxt, epoch, nxt))
    m.setattr(runs, "walk_file", lambda fd, scratch, pos, n, stop, nxt, epoch:
              (pos, 0, nxt, epoch, nxt))
    m.setattr(jsonl_module, "record_lines", lambda *args: None)  # lines made as text


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "compiled":
        if compiled is None:
            pytest.skip("the compiled twin is not built")
        monkeypatch.setattr(runs, "run_length", compiled.run_length)
        monkeypatch.setattr(runs, "fill", compiled.fill)
        monkeypatch.setattr(jsonl_module, "record_lines", compiled.record_lines)
        monkeypatch.setattr(runs, "gather_int64", compiled.gather_int64)
        monkeypatch.setattr(runs, "walk", compiled.walk)
        monkeypatch.setattr(runs, "walk_file", compiled.walk_file)
        monkeypatch.setattr(batch_module, "_compiled_records", compiled.decode_records)
        monkeypatch.setattr(payload_module, "_compiled_body", compiled.decode_body)
    elif request.param == "pure":
        monkeypatch.setattr(runs, "run_length", runs.run_length_py)
        monkeypatch.setattr(runs, "fill", runs.fill_py)
        monkeypatch.setattr(jsonl_module, "record_lines", jsonl_module.record_lines_py)
        monkeypatch.setattr(runs, "gather_int64", runs.gather_int64_py)
        monkeypatch.setattr(runs, "walk", runs.walk_py)
        monkeypatch.setattr(runs, "walk_file", runs.walk_file_py)
        monkeypatch.setattr(batch_module, "_compiled_records", None)
        monkeypatch.setattr(payload_module, "_compiled_body", None)
        monkeypatch.setattr(replay_module, "_compiled_changes", None)
    else:
        _no_runs(monkeypatch)
    # decoded payloads are kept by their bytes: a mode must not see another mode's
    monkeypatch.setattr(payload_module, "_DECODED", {})
    monkeypatch.setattr(chunks_module, "_COLUMNS", {})
    return request.param


COMMANDS = [("dump", "--json"), ("dump", "-r"), ("dump",), ("verify", "--json"),
            ("verify",), ("brokers", "--json"), ("retention", "--json"), ("image", "--json"),
            ("info", "--json"), ("history", "--broker", "1", "--json"),
            ("repair", "--dry-run", "--json"), ("truncate", "--json", "--to", "5000")]


def _outputs(path: Path) -> list[tuple[int, str, str]]:
    out = []
    for args in COMMANDS:
        done = run(*args, str(path), env={"COLUMNS": "80", "NO_COLOR": "1"})
        out.append((done.returncode, done.stdout, done.stderr))
    return out


_reference: dict[str, list] = {}


def _same_as_without_runs(path: Path, mode: str, key: str) -> None:
    got = _outputs(path)
    if key not in _reference:
        with pytest.MonkeyPatch.context() as m:
            _no_runs(m)
            _reference[key] = _outputs(path)
    for args, want, have in zip(COMMANDS, _reference[key], got, strict=True):
        assert have == want, f"kmeta {' '.join(args)} {path} differs with runs ({mode})"


def test_disturbed_runs_give_the_same_output(tmp_path: Path, mode: str) -> None:
    part = disturbed_log(tmp_path)
    items = list(read_batches(part / "00000000000000000000.log", memo=True, runs=True))
    assert mode == "no runs" or max(i.count for i in items if type(i) is runs.Run) == runs.MAX_RUN
    _same_as_without_runs(part, mode, f"disturbed {mode}")
    findings = run("verify", "--json", str(part)).stdout
    for code in ("F001", "V004", "V001", "S001"):
        assert f'"code":"{code}"' in findings


def _dirs(root: Path) -> list[Path]:
    return sorted({p.parent.parent if p.parent.name.startswith("__cluster_metadata")
                   else p.parent for p in root.rglob("*.log")})


@pytest.mark.slow
@pytest.mark.parametrize("root", ["fixtures", "real"])
def test_every_directory_gives_the_same_output(root: str, mode: str, real_data: Path) -> None:
    base = FIXTURES if root == "fixtures" else real_data
    dirs = _dirs(base)
    assert len(dirs) > 5
    for d in dirs:
        _same_as_without_runs(d, mode, str(d))


def test_implementation_is_named() -> None:
    assert compiled_module.IMPLEMENTATION.startswith(("compiled", "pure Python"))
    assert ("kmeta " in run("--version").stdout)
    assert compiled_module.IMPLEMENTATION in run("--version").stdout


def test_pure_python_is_chosen_on_request() -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", "from kmeta.formats import compiled;"
                          "print(compiled.IMPLEMENTATION)"], capture_output=True, text=True,
                         env={**os.environ, "KMETA_PURE_PYTHON": "1"}, check=True).stdout
    assert out.strip() == "pure Python"



def _export_rows(paths: list[Path]) -> dict[str, list[tuple]]:
    from kmeta.ops.export import file_chunks, plan_units

    rows: dict[str, list[tuple]] = {"batches": [], "records": []}
    units, _ = plan_units([str(p) for p in paths], "batches")
    for u in units:
        for table, chunk in file_chunks(u, 1000):
            rows[table] += chunk.rows()
    return rows


def test_export_rows_are_the_same_with_runs(tmp_path: Path, mode: str) -> None:
    paths = [disturbed_log(tmp_path), FIXTURES / "healthy"]
    got = _export_rows(paths)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(runs, "run_length", lambda *args: 0)
        want = _export_rows(paths)
    assert len(got["records"]) > 5000
    assert got == want


def _wrapping_log(tmp_path: Path) -> Path:
    """Runs whose timestamps wrap (their gap is equal modulo 2**64), records a timestamp
    delta apart from their batch's, multi-record batches and a compacted one."""
    part = tmp_path / "wrapping" / "__cluster_metadata-0"
    part.mkdir(parents=True)
    stamps = [(0, 65)] + [(2**63 - 40 + i, -2**63 + 25 + i) for i in range(39)]
    log = b"".join(build_batch(i, [(None, NOOP)], leader_epoch=1, base_timestamp=b,
                               max_timestamp=m) for i, (b, m) in enumerate(stamps))
    log += b"".join(build_batch(40 + 3 * i, [(None, FEATURE), (None, NOOP), (None, NOOP)],
                                leader_epoch=1, base_timestamp=10**12 + i,
                                max_timestamp=10**12 + i + 2) for i in range(20))
    # a compacted batch: its records' offsets with gaps
    log += build_batch(100, [(None, FEATURE), (None, NOOP), (None, NOOP)], leader_epoch=1,
                       base_timestamp=10**12, offset_deltas=[0, 2, 5])
    (part / "00000000000000000000.log").write_bytes(log)
    return part


def test_export_arrow_columns_are_the_rows(tmp_path: Path, mode: str,
                                           real_data: Path) -> None:
    """export's Arrow columns, made by Arrow's kernels from spans and timestamps read at
    once (and with the repeated strings as dictionaries), hold each chunk's rows, which
    are each table's (``unit_rows``): on runs broken every way, wrapping timestamps,
    legacy messages, corrupt files and real data."""
    from dataclasses import replace

    from kmeta.ops.export import Scope, file_chunks, plan_units, unit_chunks, unit_rows
    from kmeta.spark.source import arrow_schema, to_arrow

    paths = [disturbed_log(tmp_path), _wrapping_log(tmp_path), FIXTURES / "healthy",
             FIXTURES / "corrupt", FIXTURES / "verify" / "v010-legacy-message",
             real_data / "ldi-poc"]
    units, _ = plan_units([str(p) for p in paths], "batches", Scope())
    schemas = {t: arrow_schema(t) for t in ("batches", "records")}
    seen = 0
    for u in units:
        for size in (700, 1 << 16):
            got: dict[str, list] = {"batches": [], "records": []}
            for table, chunk in file_chunks(u, size):
                rows = list(chunk.rows())
                names = schemas[table].names
                want = [dict(zip(names, row, strict=True)) for row in rows]
                assert to_arrow(chunk, schemas[table]).to_pylist() == want
                assert to_arrow(chunk, schemas[table], dictionaries=True).to_pylist() == want
                got[table] += rows
                seen += len(rows)
            assert got["batches"] == list(unit_rows(u)), u.path
            # the data source's chunks of each table (the batches without record work)
            assert [r for c in unit_chunks(u, size) for r in c.rows()] == got["batches"]
            if u.records:  # (a data topic's records are not in the table: Scope())
                records = replace(u, table="records")
                assert got["records"] == list(unit_rows(records))
                assert [r for c in unit_chunks(records, size) for r in c.rows()] == \
                    got["records"]
    assert seen > 20000


@pytest.mark.slow
def test_without_a_compiler_kmeta_installs_and_runs_pure_python(tmp_path: Path) -> None:
    """A machine without a C compiler: the build goes on without the core, and the
    installed kmeta runs the pure-Python one and says so."""
    import shutil
    import subprocess
    import sys
    import zipfile

    # the tracked files only, as a fresh clone has them (this tree holds a built core)
    repo = Path(__file__).resolve().parents[1]
    tracked = subprocess.run(["git", "ls-files", "pyproject.toml", "setup.py", "README.md",
                              "kmeta", "man", "completions"], cwd=repo, capture_output=True, text=True,
                             check=True).stdout.split()
    src = tmp_path / "src"
    for name in tracked:
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(repo / name, src / name)
    env = {**os.environ, "CC": "/bin/false"}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(tmp_path / "wheel"), str(src)],
                   env=env, check=True, capture_output=True, cwd=tmp_path)
    (wheel,) = (tmp_path / "wheel").glob("kmeta-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        z.extractall(tmp_path / "site")
    assert "kmeta/formats/runs.py" in names
    assert not [n for n in names if n.startswith("kmeta/formats/_runs") and
                not n.endswith(".c")], names
    run_env = {k: v for k, v in os.environ.items() if k != "KMETA_PURE_PYTHON"}
    run_env["PYTHONPATH"] = str(tmp_path / "site")
    done = subprocess.run([sys.executable, "-m", "kmeta", "--version"], env=run_env,
                          capture_output=True, text=True, cwd=tmp_path, check=True)
    assert done.stdout.strip().endswith("(scan core: pure Python)")
    dumped = subprocess.run([sys.executable, "-m", "kmeta", "dump", "--json",
                             str(FIXTURES / "healthy" / "__cluster_metadata-0")],
                            env=run_env, capture_output=True, cwd=tmp_path)
    assert dumped.returncode == 0
    assert dumped.stdout == run("dump", "--json", str(FIXTURES / "healthy" /
                                                     "__cluster_metadata-0"),
                                text=False).stdout


def test_export_chunks_hold_their_rows_after_a_run(tmp_path: Path) -> None:
    """A chunk of ``file_chunks`` holds at least ``size`` rows (a run goes in whole)
    whatever runs it took: a run's batch length once took the place of the chunk size,
    and an export wrote chunks of 74 rows, at half the speed."""
    from kmeta.ops.export import file_chunks, plan_units

    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    # runs of 99 NoOps, each after a batch of its own
    log = b"".join(build_batch(i * 100, [(None, FEATURE)], leader_epoch=1) +
                   _noops(99, i * 100 + 1) for i in range(50))
    (part / "00000000000000000000.log").write_bytes(log)
    units, _ = plan_units([str(part)], "batches")
    sizes: dict[str, list[int]] = {"batches": [], "records": []}
    for u in units:
        for table, chunk in file_chunks(u, 1000):
            sizes[table].append(chunk.n)
    for n in sizes.values():  # a run goes into one chunk whole
        assert sum(n) == 5000
        assert len(n) == 5 and all(1000 <= k <= 1000 + runs.MAX_RUN for k in n[:-1]), n


@pytest.mark.parametrize("stamps", [
    [(1000 + 500 * i, 1000 + 500 * i) for i in range(40)],           # no gap
    [(1000 + 500 * i, 1007 + 500 * i) for i in range(40)],           # the same gap
    [(0, 65)] + [(2**63 - 40 + i, -2**63 + 25 + i) for i in range(39)],  # wraps: 65 mod 2**64
])
def test_run_timestamps_are_each_batchs_own(tmp_path: Path, stamps: list) -> None:
    """run_timestamps reads the base timestamps and adds the gap run_length found equal:
    the same as each batch's own two fields, also where that gap is equal only modulo
    2**64."""
    log = b"".join(build_batch(i, [(None, NOOP)], leader_epoch=1, base_timestamp=b,
                               max_timestamp=m) for i, (b, m) in enumerate(stamps))
    found = [x for x in scan_batches(log, "x", memo=True, runs=True) if type(x) is runs.Run]
    assert found and sum(r[1] for r in found) == len(stamps) - 1
    for r in found:
        want = [stamps[r[0][BASE_OFFSET_SLOT] + 1 + k] for k in range(r[1])]
        assert tuple(zip(*runs.run_timestamps(r), strict=True)) == tuple(want)
        assert struct.unpack(f"={r[1]}q", runs.run_stamps(r)) == tuple(b for b, _ in want)
        # the newest alone (what retention's tally needs of a run): the same maximum
        assert runs.run_newest(r) == max(m for _, m in want)
