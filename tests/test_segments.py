"""Segment scanning: every batch in order, and every kind of damage reported exactly once."""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from kmeta.findings import Finding
from kmeta.formats.batch import build_batch
from kmeta.formats.legacy import build_compressed, build_message
from kmeta.storage.segments import scan_batches, scan_records


def log(n: int = 10, per: int = 3, epoch_every: int = 4) -> tuple[bytes, list[int]]:
    out = bytearray()
    starts = []
    for i in range(n):
        starts.append(len(out))
        out += build_batch(i * per, [(None, b"value-%d-%d" % (i, j)) for j in range(per)],
                           leader_epoch=i // epoch_every, base_timestamp=1000 + i)
    return bytes(out), starts


def split(items):
    batches = [x for x in items if not isinstance(x, Finding)]
    findings = [x for x in items if isinstance(x, Finding)]
    return batches, findings


def test_clean_log_has_no_findings():
    data, starts = log()
    batches, findings = split(list(scan_batches(data, "f")))
    assert findings == []
    assert [b.position for b in batches] == starts
    assert [b.base_offset for b in batches] == [i * 3 for i in range(10)]


def test_torn_tail_reported_once_at_its_first_byte():
    data, starts = log()
    torn = data[:-7]
    batches, findings = split(list(scan_batches(torn, "f")))
    assert len(batches) == 9
    assert [(f.code, f.position) for f in findings] == [("S001", starts[-1])]


def test_short_torn_tail_smaller_than_a_header():
    data, starts = log(3)
    batches, findings = split(list(scan_batches(data + b"\x00\x00\x00\x00\x00\x00\x00\x09\x00", "f")))
    assert len(batches) == 3
    assert [f.code for f in findings] in (["S001"], ["S002"])


def test_zero_filled_tail():
    data, _ = log(4)
    batches, findings = split(list(scan_batches(data + bytes(4096), "f")))
    assert len(batches) == 4
    assert [(f.code, f.position) for f in findings] == [("S002", len(data))]


def test_garbage_tail():
    data, _ = log(4)
    batches, findings = split(list(scan_batches(data + b"\xde\xad\xbe\xef" * 40, "f")))
    assert len(batches) == 4
    assert [(f.code, f.position) for f in findings] == [("S004", len(data))]


def test_bad_crc_in_the_middle_keeps_reading():
    data, starts = log()
    bad = bytearray(data)
    bad[starts[4] + 70] ^= 0xFF  # inside batch 4's records
    batches, findings = split(list(scan_batches(bytes(bad), "f")))
    assert len(batches) == 10
    assert [b.crc_valid for b in batches].count(False) == 1
    assert [(f.code, f.position) for f in findings] == [("F001", starts[4])]


def test_corrupt_length_resyncs_on_next_valid_batch():
    data, starts = log()
    bad = bytearray(data)
    struct.pack_into(">i", bad, starts[3] + 8, 0x7FFF0000)  # absurd length
    batches, findings = split(list(scan_batches(bytes(bad), "f")))
    assert [b.base_offset for b in batches] == [0, 3, 6, 12, 15, 18, 21, 24, 27]
    assert [(f.code, f.position, f.details["end"]) for f in findings] == \
        [("S003", starts[3], starts[4])]


def test_garbage_in_the_middle_resyncs():
    data, starts = log()
    bad = data[:starts[5]] + b"\x17" * 333 + data[starts[5]:]
    batches, findings = split(list(scan_batches(bad, "f")))
    assert len(batches) == 10
    assert [(f.code, f.position, f.details["bytes"]) for f in findings] == \
        [("S003", starts[5], 333)]


def test_zeroed_hole_in_the_middle_resyncs():
    data, starts = log()
    bad = data[:starts[2]] + bytes(starts[4] - starts[2]) + data[starts[4]:]
    batches, findings = split(list(scan_batches(bad, "f")))
    assert [b.base_offset for b in batches] == [0, 3] + [i * 3 for i in range(4, 10)]
    assert [(f.code, f.position) for f in findings] == [("S003", starts[2])]


def test_bad_crc_and_corrupt_length_resync():
    data, starts = log()
    bad = bytearray(data)
    struct.pack_into(">i", bad, starts[6] + 8, 200)  # plausible but wrong length
    batches, findings = split(list(scan_batches(bytes(bad), "f")))
    assert [b.base_offset for b in batches if b.crc_valid] == \
        [i * 3 for i in range(10) if i != 6]
    codes = [f.code for f in findings]
    assert codes[0] == "F001" and "S003" in codes


def test_offsets_going_backwards():
    a = build_batch(10, [(None, b"a")])
    b = build_batch(5, [(None, b"b")])
    batches, findings = split(list(scan_batches(a + b, "f")))
    assert len(batches) == 2
    assert [f.code for f in findings] == ["S005"]


def test_max_bytes_stops_quietly():
    data, starts = log()
    batches, findings = split(list(scan_batches(data, "f", max_bytes=starts[3] + 10)))
    assert len(batches) == 3 and findings == []


def test_absurd_length_in_tiny_file():
    data = struct.pack(">qi", 0, 2**31 - 1) + bytes(1012)
    data = data[:16] + b"\x02" + data[17:]
    batches, findings = split(list(scan_batches(data, "f")))
    assert batches == [] and len(findings) == 1 and findings[0].position == 0


def test_negative_length():
    data = struct.pack(">qi", 0, -5) + b"\x00\x00\x00\x00\x02" + bytes(100)
    batches, findings = split(list(scan_batches(data, "f")))
    assert batches == [] and [f.code for f in findings] == ["S004"]


def test_legacy_message_sets():
    data = build_message(0, None, b"a", magic=0) + build_message(1, b"k", b"b", magic=1) + \
        build_compressed([2, 3, 4], [(None, b"x"), (None, b"y"), (None, b"z")], codec=1)
    batches, findings = split(list(scan_batches(data, "f")))
    assert findings == []
    assert [(b.magic, b.last_offset) for b in batches] == [(0, 0), (1, 1), (1, 4)]
    assert [r.value for r in batches[2].records()] == [b"x", b"y", b"z"]
    assert [r.offset for r in batches[2].records()] == [2, 3, 4]


def test_legacy_bad_crc():
    data = bytearray(build_message(0, None, b"abc", magic=1))
    data[-1] ^= 1
    batches, findings = split(list(scan_batches(bytes(data), "f")))
    assert [f.code for f in findings] == ["F009"] and not batches[0].crc_valid


@settings(max_examples=200)
@given(st.binary(max_size=2000))
def test_any_bytes_give_batches_or_findings(data):
    items = list(scan_batches(data, "f"))
    covered = 0
    for x in items:
        if isinstance(x, Finding):
            assert x.position is not None and 0 <= x.position <= len(data)
        else:
            covered += x.size
    assert covered <= len(data)


@settings(max_examples=100)
@given(st.integers(0, 10_000), st.binary(min_size=1, max_size=64))
def test_any_corruption_of_a_log_is_located(where, junk):
    data, _ = log(6)
    where %= len(data)
    bad = data[:where] + junk + data[where + len(junk):]
    items = list(scan_batches(bad, "f"))
    batches, findings = split(items)
    if bad != data:
        assert findings or all(b.crc_valid for b in batches)


@settings(max_examples=80)
@given(st.lists(st.tuples(st.one_of(st.none(), st.binary(max_size=40)),
                          st.one_of(st.none(), st.binary(max_size=80))), min_size=1, max_size=6),
       st.sampled_from([0, 1]), st.sampled_from([0, 1, 2, 3]), st.integers(0, 2**40))
def test_legacy_round_trip(items, magic, codec, first):
    from kmeta.formats.legacy import LEGACY_MESSAGE, LegacyBatch

    offsets = list(range(first, first + len(items)))
    if codec:
        data = build_compressed(offsets, items, codec=codec, magic=magic, timestamp=123)
    else:
        data = b"".join(build_message(o, k, v, magic=magic, timestamp=123)
                        for o, (k, v) in zip(offsets, items, strict=True))
    batches, findings = split(list(scan_batches(data, "f")))
    assert findings == []
    records = [r for b in batches for r in b.records()]
    assert [(r.offset, r.key, r.value) for r in records] == \
        [(o, k, v) for o, (k, v) in zip(offsets, items, strict=True)]
    first_entry = LEGACY_MESSAGE.parse(data)
    assert first_entry.magic == magic and first_entry.offset == batches[0].offset
    assert isinstance(batches[0], LegacyBatch) and batches[0].crc_valid


def _by_batches(data: bytes) -> list:
    from kmeta.formats.payload import decode_control, decode_metadata
    from kmeta.storage.segments import batch_records

    out = []
    for b in scan_batches(data, "f"):
        if isinstance(b, Finding):
            out.append((b.code, b.position))
            continue
        records, findings = batch_records(b)
        out.extend((f.code, f.position) for f in findings)
        for r in records:
            p = decode_control(r.key, r.value) if b.is_control else decode_metadata(r.value)
            out.append((b.position, r, p.type, p.version, p.data))
    return out


def _by_triples(data: bytes) -> list:
    from kmeta.formats.payload import decode_control, decode_metadata

    out = []
    for item in scan_records(data, "f", decode_metadata, decode_control):
        if isinstance(item, Finding):
            out.append((item.code, item.position))
        else:
            b, r, p = item
            out.append((b.position, r, p.type, p.version, p.data))
    return out


def test_triple_mode_equals_batches_then_records(tmp_path):
    """scan_records is a faster spelling of scan_batches + records + decode, damage included."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "fixtures" / "data"
    logs = sorted((root / "healthy" / "__cluster_metadata-0").glob("*.log"))
    logs += sorted((root / "corrupt").glob("*/__cluster_metadata-0/*.log"))
    assert len(logs) > 10
    for log in logs:
        data = log.read_bytes()
        assert _by_triples(data) == _by_batches(data), log


def test_magic0_lz4_with_kafkas_old_wrong_header_checksum_reads():
    """Kafka's magic 0 LZ4 writers got the frame header checksum wrong; Kafka ignores it."""
    import lz4.frame

    from kmeta.formats.compression import compress

    good = build_compressed([0, 1], [(None, b"a"), (None, b"b")], codec=3, magic=0)
    assert compress(3, b"x")[:4] == lz4.frame.compress(b"x")[:4]
    wrapper = bytearray(good)
    # The HC byte sits right after the 2-byte frame descriptor of the inner frame, whose
    # magic starts after the wrapper's 18-byte prefix, key length and value length.
    frame_start = bytes(wrapper).index(b"\x04\x22\x4d\x18")
    wrapper[frame_start + 6] ^= 0x5A
    # Fix up the wrapper's CRC-32 so that only the LZ4 header checksum is "wrong".
    import struct
    import zlib
    struct.pack_into(">I", wrapper, 12, zlib.crc32(bytes(wrapper[16:])))
    batches, findings = split(list(scan_batches(bytes(wrapper), "f")))
    assert findings == []
    assert [r.value for r in batches[0].records()] == [b"a", b"b"]


def test_segment_name_rule_allows_what_the_cleaner_leaves() -> None:
    from types import SimpleNamespace

    from kmeta.storage.segments import segment_name_finding

    above = SimpleNamespace(base_offset=47, file="x.log", position=0)
    below = SimpleNamespace(base_offset=3, file="x.log", position=0)
    # The cleaner removed offsets 0..46 of a compacted topic and kept the segment's name.
    assert segment_name_finding(0, above, compacted=True) is None
    assert segment_name_finding(0, above).code == "S009"  # never in the metadata log
    assert segment_name_finding(5, below, compacted=True).code == "S009"


# ---------------------------------------------------------------- large records sections
# A records section above STREAM_ABOVE bytes is decoded as a stream (RecordStream); with
# the threshold at 0 and tiny pieces every batch of the fixtures takes that path, which
# must give what the list path gives: the same records, the same findings.

def _fixture_batches():
    from pathlib import Path

    from kmeta.formats.batch import Batch
    from kmeta.storage.segments import mapped

    data = Path(__file__).resolve().parent.parent / "fixtures" / "data"
    for seg in sorted(data.rglob("*.log")) + sorted(data.rglob("*.checkpoint")):
        with mapped(seg) as buf:
            for b in scan_batches(buf, str(seg)):
                if type(b) is Batch:
                    yield b
    # damage a stream can meet: records cut short, a bad record, counts that disagree
    yield from scan_batches(build_batch(0, [(None, b"v%d" % i) for i in range(40)], compression=4), "z")
    good = build_batch(0, [(None, b"v%d" % i) for i in range(40)])
    for cut, junk in ((9, b""), (20, b"\x02\x00\x00\x00\x00\x00\x01\x00"), (0, b"\x7f")):
        body = good[61:len(good) - cut] + junk
        head = bytearray(good[:61])
        struct.pack_into(">i", head, 8, 49 + len(body))
        yield Batch(struct.unpack(">qiibIhiqqqhii", bytes(head)), bytes(head) + body, "x", 0,
                    True)
    for count in (39, 41):
        head = bytearray(good[:61])
        struct.pack_into(">i", head, 57, count)
        yield Batch(struct.unpack(">qiibIhiqqqhii", bytes(head)), bytes(head) + good[61:],
                    "x", 0, True)


def _records_and_findings(b):
    from kmeta.storage.segments import batch_records

    records, findings = batch_records(b)
    return type(records).__name__, list(records), [f.to_json() for f in findings]


def test_streamed_records_equal_listed_records(monkeypatch):
    import kmeta.formats.batch as batch_mod

    batches = list(_fixture_batches())
    assert len(batches) > 1000
    listed = [_records_and_findings(b) for b in batches]
    monkeypatch.setattr(batch_mod, "STREAM_ABOVE", 0)
    monkeypatch.setattr(batch_mod, "STREAM_PIECE", 7)
    streamed = [_records_and_findings(b) for b in batches]
    kinds = {s[0] for s in streamed}
    assert "RecordStream" in kinds
    for b, (_, lr, lf), (kind, sr, sf) in zip(batches, listed, streamed, strict=True):
        assert (sr, sf) == (lr, lf), (b.file, b.position, kind)
    damaged = [s for s in streamed[-7:] if s[2]]
    assert {f["code"] for s in damaged for f in s[2]} == {"F003", "F011"}


def test_streamed_dump_and_verify_equal_listed(monkeypatch, tmp_path):
    """dump (text and JSON, in pieces of 3 records) and verify say the same of the
    fixtures when every batch is streamed."""
    from pathlib import Path

    import kmeta.formats.batch as batch_mod
    import kmeta.ops.dump as dump_mod
    from kmeta.ops.dump import DumpOptions, dump
    from kmeta.ops.verify import verify
    from kmeta.render import jsonl, text
    from kmeta.storage.discover import discover

    data = Path(__file__).resolve().parent.parent / "fixtures" / "data"
    dirs = [data / "healthy", data / "corrupt", data / "verify" / "healthy"]

    def outputs():
        out = []
        for d in dirs:
            # the text as a whole: a batch in pieces is written in several parts
            out.append("\n".join(jsonl.render(dump(discover([d]), DumpOptions()))))
            out.append("\n".join(jsonl.render(dump(discover([d]), DumpOptions(show_hex=True)),
                                              show_hex=True)))
            out.append("\n".join(text.render(dump(discover([d]), DumpOptions(show_hex=True)),
                                             records=True, show_hex=True)))
            out.append([f.to_json() for f in verify(discover([d])).findings])
        return out

    listed = outputs()
    monkeypatch.setattr(batch_mod, "STREAM_ABOVE", 0)
    monkeypatch.setattr(dump_mod, "PIECE_RECORDS", 3)
    pieces = [ev for ev in dump(discover([dirs[0]]), DumpOptions())
              if type(ev) is dump_mod.BatchMore]
    assert pieces  # the dump did go by pieces
    assert outputs() == listed


def test_a_file_too_large_for_anonymous_memory_is_mapped_itself(monkeypatch):
    """A SegmentMap of a file larger than the system grants (here: 32 GiB) cannot be made:
    the file is then mapped, as before, and reads the same."""
    from pathlib import Path

    import kmeta.storage.segments as segments

    seg = Path(__file__).resolve().parent.parent / "fixtures" / "data" / "verify" / \
        "healthy" / "__cluster_metadata-0" / "00000000000000000000.log"
    with segments.mapped(seg) as buf:
        assert type(buf) is segments.SegmentMap
        want = [b[:14] for b in scan_batches(buf, "x")], buf.bytes_at(0, 80)

    def refuse(*_, **__):
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(segments, "SegmentMap", refuse)
    with segments.mapped(seg) as buf:
        assert type(buf) is segments.FileMap
        assert ([b[:14] for b in scan_batches(buf, "x")], buf.bytes_at(0, 80)) == want
