"""The storage writer: atomic files, segments with indexes, snapshots, small files — each
read back by kmeta's own readers (``kmeta.storage.segments.scan`` and ``kmeta.formats``)."""

from __future__ import annotations

import os
import stat
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kmeta.findings import Finding
from kmeta.formats.batch import BATCH_HEADER, HEADER_SIZE, Batch, Header, build_batch
from kmeta.formats.compression import CODEC_IDS
from kmeta.formats.filenames import classify, segment_file_name, snapshot_file_name
from kmeta.formats.indexes import (
    AbortedTxn,
    parse_offset_index,
    parse_time_index,
    parse_txn_index,
)
from kmeta.formats.payload import decode_control, decode_metadata, encode_metadata
from kmeta.formats.producer_state import (
    ProducerEntry,
    ProducerSnapshot,
    parse_producer_snapshot,
)
from kmeta.formats.textfiles import (
    EpochEntry,
    MetaProperties,
    OffsetCheckpoint,
    QuorumState,
    TopicPartitionOffset,
    parse_leader_epoch_checkpoint,
    parse_meta_properties,
    parse_offset_checkpoint,
    parse_partition_metadata,
    parse_quorum_state,
)
from kmeta.storage import writer as W
from kmeta.storage.segments import scan_batches

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def read_batches(path: Path) -> tuple[list[Batch], list[Finding]]:
    data = path.read_bytes()
    items = list(scan_batches(data, str(path)))
    return ([x for x in items if not isinstance(x, Finding)],
            [x for x in items if isinstance(x, Finding)])


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".")
                  or p.name.endswith((".tmp", ".part")))


# ----------------------------------------------------------------------- atomic writes


def test_atomic_write_creates_and_refuses_to_overwrite(tmp_path):
    target = tmp_path / "quorum-state"
    assert W.atomic_write(target, b"first") == target
    assert target.read_bytes() == b"first"
    with pytest.raises(FileExistsError):
        W.atomic_write(target, b"second")
    assert target.read_bytes() == b"first"
    W.atomic_write(target, b"second", overwrite=True)
    assert target.read_bytes() == b"second"
    assert leftovers(tmp_path) == []


def test_atomic_open_failure_leaves_no_trace(tmp_path):
    target = tmp_path / "x"
    W.atomic_write(target, b"kept")
    with pytest.raises(RuntimeError), W.atomic_open(target, overwrite=True) as f:
        f.write(b"half")
        raise RuntimeError("crash while writing")
    assert target.read_bytes() == b"kept"
    assert leftovers(tmp_path) == []
    with pytest.raises(RuntimeError), W.atomic_open(tmp_path / "new") as f:
        f.write(b"half")
        raise RuntimeError("crash while writing")
    assert not (tmp_path / "new").exists()
    assert leftovers(tmp_path) == []


def test_atomic_write_respects_umask(tmp_path):
    old = os.umask(0o022)
    try:
        path = W.atomic_write(tmp_path / "f", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_atomic_write_not_durable_still_atomic(tmp_path):
    W.atomic_write(tmp_path / "f", b"abc", durable=False)
    assert (tmp_path / "f").read_bytes() == b"abc"
    assert leftovers(tmp_path) == []


# ----------------------------------------------------------------------- batches

blobs = st.one_of(st.none(), st.binary(max_size=200))
headers = st.lists(st.builds(Header, st.text(max_size=10), blobs), max_size=2)
records = st.lists(st.one_of(st.tuples(blobs, blobs), st.tuples(blobs, blobs, headers)),
                   min_size=1, max_size=12)


@FAST
@given(records, st.integers(0, 2**40), st.integers(-1, 2**31 - 1), st.integers(0, 2**45),
       st.sampled_from(sorted(CODEC_IDS.values())), st.booleans(), st.booleans())
def test_build_batch_header_equals_the_construct_definition(recs, base, epoch, ts, codec,
                                                            control, txn):
    fast = build_batch(base, recs, leader_epoch=epoch, base_timestamp=ts, compression=codec,
                       control=control, transactional=txn)
    parsed = BATCH_HEADER.parse(fast)
    assert BATCH_HEADER.build(parsed) == fast[:HEADER_SIZE]
    assert (parsed.baseOffset, parsed.partitionLeaderEpoch, parsed.recordsCount) == \
        (base, epoch, len(recs))
    (batch,), findings = [x for x in scan_batches(fast, "f")], []
    assert batch.crc_valid and not findings
    got = [(r.key, r.value) for r in batch.records()]
    assert got == [(r[0], r[1]) for r in recs]


@given(st.integers(0, 2**50), st.integers(0, 2**31 - 1), st.integers(0, 2**45))
def test_noop_batch_is_a_lone_noop_record(offset, epoch, ts):
    data = W.noop_batch(offset, epoch, ts)
    assert data == build_batch(offset, [(None, encode_metadata("NO_OP_RECORD", 0, {}))],
                               leader_epoch=epoch, base_timestamp=ts)
    (batch,) = list(scan_batches(data, "f"))
    assert (batch.base_offset, batch.leader_epoch, batch.max_timestamp) == (offset, epoch, ts)
    (record,) = batch.records()
    assert decode_metadata(record.value).type == "NO_OP_RECORD"


def test_batch_info_rejects_malformed_batches():
    good = W.noop_batch(0, 0, 0)
    assert W.BatchInfo.of(good).size == len(good)
    with pytest.raises(ValueError):
        W.BatchInfo.of(good[:-1])
    with pytest.raises(ValueError):
        W.BatchInfo.of(good[:30])
    bad_magic = bytearray(good)
    bad_magic[16] = 1
    with pytest.raises(ValueError):
        W.BatchInfo.of(bytes(bad_magic))


# ----------------------------------------------------------------------- segments


def kafka_index(batches: list[bytes], base: int, interval: int) -> tuple[list, list]:
    """The index entries Kafka's LogSegment.append would write for one segment, computed
    independently of the writer (offset entries; time entries without the final one)."""
    offsets, times = [], []
    since, pos, max_ts, max_off = 0, 0, -1, -1
    for b in batches:
        info = W.BatchInfo.of(b)
        if info.max_timestamp > max_ts:
            max_ts, max_off = info.max_timestamp, info.last_offset
        if since > interval:
            offsets.append((info.last_offset, pos))
            if not times or max_ts > times[-1][0]:
                times.append((max_ts, max_off))
            since = 0
        since += len(b)
        pos += len(b)
    return offsets, times


def make_log(n: int, per_epoch: int = 7, start: int = 0, t0: int = 1_700_000_000_000,
             big_every: int = 5) -> list[bytes]:
    out = []
    offset = start
    for i in range(n):
        epoch = 1 + i // per_epoch
        ts = t0 + 500 * i
        if i % big_every == 0:
            values = [(None, encode_metadata("CONFIG_RECORD", 0, {
                "resourceType": 2, "resourceName": f"topic-{i}", "name": "retention.ms",
                "value": str(j * 1000)})) for j in range(1 + i % 4)]
            out.append(build_batch(offset, values, leader_epoch=epoch, base_timestamp=ts))
            offset += len(values)
        else:
            out.append(W.noop_batch(offset, epoch, ts))
            offset += 1
    return out


def check_partition(directory: Path, batches: list[bytes], w: W.SegmentWriter,
                    interval: int) -> None:
    """Everything the writer wrote, read back with kmeta's readers."""
    seen: list[bytes] = []
    expected_epochs: list[EpochEntry] = []
    for seg in w.segments:
        log = directory / segment_file_name(seg.base_offset)
        assert log.exists() and log.stat().st_size == seg.size
        assert seg.size <= w.segment_bytes or seg.batches == 1
        got, findings = read_batches(log)
        assert findings == []
        assert got[0].base_offset == seg.base_offset if got else seg.size == 0
        raw = [bytes(b.raw) for b in got]
        seen += raw
        offsets, times = kafka_index(raw, seg.base_offset, interval)
        idx = parse_offset_index((directory / segment_file_name(seg.base_offset, "index"))
                                 .read_bytes(), seg.base_offset)
        assert [(e.offset, e.position) for e in idx.entries] == offsets
        assert idx.preallocated == 0 and idx.trailing_bytes == 0
        by_pos = {b.position: b for b in got}
        for e in idx.entries:  # every entry points at the batch holding its offset
            assert by_pos[e.position].last_offset == e.offset
        tidx = parse_time_index((directory / segment_file_name(seg.base_offset, "timeindex"))
                                .read_bytes(), seg.base_offset)
        got_times = [(e.timestamp, e.offset) for e in tidx.entries]
        if got:  # the final entry written when the segment is rolled or closed
            final = max((b.max_timestamp, -b.last_offset) for b in got)
            final = (final[0], next(b.last_offset for b in got if b.max_timestamp == final[0]))
            if not times or final[0] > times[-1][0]:
                times.append(final)
        assert got_times == times
    assert seen == batches
    for b in batches:
        info = W.BatchInfo.of(b)
        if not expected_epochs or info.leader_epoch > expected_epochs[-1].epoch:
            expected_epochs.append(EpochEntry(info.leader_epoch, info.base_offset))
    assert w.epochs == expected_epochs
    checkpoint = parse_leader_epoch_checkpoint((directory / "leader-epoch-checkpoint")
                                               .read_bytes())
    assert list(checkpoint.entries) == expected_epochs
    assert leftovers(directory) == []


def test_segments_roll_and_index_like_kafka(tmp_path):
    batches = make_log(400)
    w = W.write_segments(tmp_path, batches, segment_bytes=4096, index_interval_bytes=512)
    assert len(w.segments) > 5
    assert [s.base_offset for s in w.segments] == sorted({s.base_offset for s in w.segments})
    check_partition(tmp_path, batches, w, 512)
    for seg, nxt in zip(w.segments, w.segments[1:], strict=False):
        assert seg.last_offset + 1 == nxt.base_offset


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(1, 120), st.integers(1, 40), st.integers(200, 6000),
       st.integers(0, 2000), st.integers(0, 10**6), st.integers(1, 9))
def test_segments_round_trip(tmp_path_factory, n, per_epoch, seg_bytes, interval, start,
                             big_every):
    directory = tmp_path_factory.mktemp("p")
    batches = make_log(n, per_epoch, start=start, big_every=big_every)
    w = W.write_segments(directory, batches, base_offset=start, segment_bytes=seg_bytes,
                         index_interval_bytes=interval)
    check_partition(directory, batches, w, interval)
    assert w.log_end_offset == W.BatchInfo.of(batches[-1]).last_offset + 1


def test_writer_refuses_offsets_going_backwards_and_existing_segments(tmp_path):
    with W.SegmentWriter(tmp_path) as w:
        w.append(W.noop_batch(5, 1, 1000))
        with pytest.raises(ValueError, match="below the log end offset"):
            w.append(W.noop_batch(5, 1, 1001))
        with pytest.raises(ValueError):
            w.append(W.noop_batch(6, 1, 1001)[:-2])
        w.append(W.noop_batch(9, 1, 1002))  # a gap, as a compacted log has, is fine
    with pytest.raises(FileExistsError), W.SegmentWriter(tmp_path) as w2:
        w2.append(W.noop_batch(0, 1, 1000))  # 00000000000000000000.log: new, fine
        w2.roll()
        w2.append(W.noop_batch(5, 1, 1000))  # 00000000000000000005.log exists
    assert w.log_end_offset == 10


def test_writer_abandons_the_active_segment_on_error(tmp_path):
    with pytest.raises(RuntimeError), W.SegmentWriter(tmp_path) as w:
        w.append(W.noop_batch(0, 1, 1000))
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_roll_empty_leaves_an_empty_active_segment(tmp_path):
    with W.SegmentWriter(tmp_path) as w:
        w.extend(make_log(10))
        seg = w.roll_empty()
    assert seg.base_offset == w.log_end_offset
    for ext in ("log", "index", "timeindex"):
        assert (tmp_path / segment_file_name(seg.base_offset, ext)).stat().st_size == 0


def test_txn_index_written_for_aborted_transactions(tmp_path):
    entry = AbortedTxn(1000, 3, 4, 3)
    with W.SegmentWriter(tmp_path) as w:
        w.append(build_batch(0, [(b"k", b"v")] * 3, transactional=True, producer_id=1000,
                                producer_epoch=0, base_sequence=0))
        w.append(build_batch(3, [(b"k", b"v")], transactional=True, producer_id=1000,
                                producer_epoch=0, base_sequence=3))
        with pytest.raises(ValueError):
            W.SegmentWriter(tmp_path / "other").add_aborted_txn(entry)
        w.add_aborted_txn(entry)
    idx = parse_txn_index((tmp_path / segment_file_name(0, "txnindex")).read_bytes(), 0)
    assert idx.entries == (entry,)


@pytest.mark.slow
def test_segment_writer_streams(tmp_path):
    """Writing a log does not hold it in memory: 12 MiB through the writer, under half of
    that at peak (the write buffer and the index entries it keeps for its SegmentInfo:
    2.7 MiB on Python 3.11, 3.2 MiB on 3.13; tracemalloc also counts what other threads
    of a test worker allocate meanwhile, which took 3.13 past 4 MiB once)."""
    # what the first write imports (lazily, and in any order the workers ran tests in)
    # is not the writer's memory: a first write outside the trace
    with W.SegmentWriter(tmp_path / "warm", durable=False) as warm:
        warm.append(W.noop_batch(0, 1, 1_700_000_000_000))
    tracemalloc.start()
    try:
        with W.SegmentWriter(tmp_path / "log", segment_bytes=8 << 20, durable=False) as w:
            t = 1_700_000_000_000
            for i in range(12 * 1024 * 1024 // 72 + 1):
                w.append(W.noop_batch(i, 1, t + i))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sum(s.size for s in w.segments) >= 12 << 20
    assert peak < 6 << 20, f"peak {peak} bytes"


# ----------------------------------------------------------------------- snapshots


def _values(n: int) -> list[bytes]:
    return [encode_metadata("TOPIC_RECORD", 0, {"name": f"topic-{i}",
                                                "topicId": "LpjaivfUSGCieX6BI82CbQ"})
            for i in range(n)]


VOTERS = {"voters": [{"voterId": 1, "voterDirectoryId": "J9VM5-W-R2Ss0prVnE0vQg",
                      "endpoints": [{"name": "CONTROLLER", "host": "c1", "port": 9093}],
                      "kRaftVersionFeature": {"minSupportedVersion": 0,
                                              "maxSupportedVersion": 1}}]}


@pytest.mark.parametrize("kraft", [None, 1])
def test_snapshot_layout(tmp_path, kraft):
    values = _values(300)
    path = W.write_snapshot(tmp_path, 12345, 7, values, last_contained_log_timestamp=111,
                            timestamp=222, kraft_version=kraft,
                            voters=VOTERS if kraft else None, max_batch_bytes=2048)
    assert path.name == snapshot_file_name(12345, 7) == "00000000000000012345-0000000007.checkpoint"
    kind = classify(path.name)
    assert (kind.kind, kind.base_offset, kind.epoch) == ("kraft-snapshot", 12345, 7)
    assert leftovers(tmp_path) == []
    batches, findings = read_batches(path)
    assert findings == []
    assert len(batches) > 4  # records split over several batches
    assert all(b.leader_epoch == 7 and b.crc_valid for b in batches)
    assert batches[0].base_offset == 0
    for a, b in zip(batches, batches[1:], strict=False):
        assert b.base_offset == a.last_offset + 1
    head = [decode_control(r.key, r.value) for r in batches[0].records()]
    assert batches[0].is_control and head[0].type == "SNAPSHOT_HEADER"
    assert head[0].data["lastContainedLogTimestamp"] == 111
    assert [p.type for p in head] == (["SNAPSHOT_HEADER", "KRAFT_VERSION", "KRAFT_VOTERS"]
                                      if kraft else ["SNAPSHOT_HEADER"])
    foot = [decode_control(r.key, r.value) for r in batches[-1].records()]
    assert batches[-1].is_control and [p.type for p in foot] == ["SNAPSHOT_FOOTER"]
    got = [bytes(r.value) for b in batches[1:-1] for r in b.records()]
    assert got == values
    assert all(not b.is_control and b.size - 61 <= 2048 + 64 for b in batches[1:-1])


def test_snapshot_compressed_and_empty(tmp_path):
    path = W.write_snapshot(tmp_path, 10, 1, _values(50), last_contained_log_timestamp=1,
                            timestamp=2, compression=CODEC_IDS["zstd"])
    batches, findings = read_batches(path)
    assert findings == [] and batches[1].compression == "zstd"
    assert [bytes(r.value) for r in batches[1].records()] == _values(50)
    empty = W.write_snapshot(tmp_path, 0, 0, [], last_contained_log_timestamp=0, timestamp=0)
    batches, findings = read_batches(empty)
    assert findings == [] and len(batches) == 2


def test_snapshot_refuses_to_overwrite(tmp_path):
    W.write_snapshot(tmp_path, 5, 1, _values(2), last_contained_log_timestamp=0, timestamp=0)
    with pytest.raises(FileExistsError):
        W.write_snapshot(tmp_path, 5, 1, _values(2), last_contained_log_timestamp=0,
                         timestamp=0)
    assert leftovers(tmp_path) == []


def test_bootstrap_checkpoint(tmp_path):
    values = [encode_metadata("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version",
                                                          "featureLevel": 21})]
    path = W.write_bootstrap_checkpoint(tmp_path, values, timestamp=1_700_000_000_000)
    assert path.name == "bootstrap.checkpoint"
    assert classify(path.name).kind == "bootstrap-checkpoint"
    batches, findings = read_batches(path)
    assert findings == [] and len(batches) == 3
    assert [b.base_offset for b in batches] == [0, 1, 2]
    assert all(b.leader_epoch == 0 for b in batches)
    header = decode_control(*(lambda r: (r.key, r.value))(batches[0].records()[0]))
    assert header.data == {"version": 0, "lastContainedLogTimestamp": 0}
    assert decode_metadata(batches[1].records()[0].value).data["featureLevel"] == 21
    assert leftovers(tmp_path) == []


# ----------------------------------------------------------------------- small files


def test_small_files_round_trip(tmp_path):
    W.write_leader_epoch_checkpoint(tmp_path, [EpochEntry(1, 0), EpochEntry(4, 77)])
    assert parse_leader_epoch_checkpoint((tmp_path / "leader-epoch-checkpoint").read_bytes()
                                         ).entries == (EpochEntry(1, 0), EpochEntry(4, 77))
    qs = QuorumState(1, leader_id=2, leader_epoch=9, voted_id=-1,
                     voted_directory_id="AAAAAAAAAAAAAAAAAAAAAA")
    W.write_quorum_state(tmp_path, qs)
    assert parse_quorum_state((tmp_path / "quorum-state").read_bytes()) == qs
    W.write_partition_metadata(tmp_path, W.METADATA_TOPIC_ID)
    assert parse_partition_metadata((tmp_path / "partition.metadata").read_bytes()
                                    ).topic_id == W.METADATA_TOPIC_ID
    mp = MetaProperties(version=1, cluster_id="q1w2e3r4t5y6u7i8o9p0", node_id=4,
                        directory_id="XHhkr4tkSsD900pOQ8pPfg", comments=("", "a date"))
    W.write_meta_properties(tmp_path, mp)
    assert parse_meta_properties((tmp_path / "meta.properties").read_bytes()) == mp
    tp = [TopicPartitionOffset("orders", 0, 11), TopicPartitionOffset("audit", 3, 0)]
    W.write_offset_checkpoint(tmp_path / "recovery-point-offset-checkpoint", tp)
    assert parse_offset_checkpoint((tmp_path / "recovery-point-offset-checkpoint")
                                   .read_bytes()).entries == tuple(tp)
    W.write_offset_checkpoint(tmp_path / "cleaner-offset-checkpoint",
                              OffsetCheckpoint((), header_lines=0))
    assert (tmp_path / "cleaner-offset-checkpoint").read_bytes() == b""
    empty = W.write_producer_snapshot(tmp_path, 42)
    assert empty.name == "00000000000000000042.snapshot"
    assert empty.read_bytes() == bytes.fromhex("000148674bc700000000")
    snap = ProducerSnapshot((ProducerEntry(1000, 0, 2, 9, 0, 5, 3, -1),))
    path = W.write_producer_snapshot(tmp_path, 43, snap)
    assert parse_producer_snapshot(path.read_bytes()) == snap
    with pytest.raises(FileExistsError):
        W.write_quorum_state(tmp_path, qs)
    assert leftovers(tmp_path) == []
