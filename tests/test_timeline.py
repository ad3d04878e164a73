"""``kmeta.ops.replay.timeline``: the image at any offset from checkpoints, and moving in time.

Every answer is checked against an independent reading: ``build_image(at=…)`` (what
``kmeta image --at`` prints) for images, a plain batch-by-batch scan of the log for times,
steps and records, ``kmeta dump --json`` for record objects.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import clirun
import pytest
from conftest import DEFAULT_REAL_DATA, FIXTURES, HEALTHY, HEALTHY_META

import kmeta.ops.replay.timeline as timeline_mod
from kmeta.errors import KmetaError, UnreadableInput, UsageError
from kmeta.findings import Finding
from kmeta.formats.payload import decode_control, decode_metadata
from kmeta.formats.runs import Run
from kmeta.ops.redact import SECRET_TYPES, redact
from kmeta.ops.replay import EMPTY_PROVENANCE, Replay, Replicas, Timeline, build_image, replay_log
from kmeta.render.jsonl import render
from kmeta.storage.discover import discover
from kmeta.storage.segments import read_batches, read_records

FIXTURE_LOGS = sorted(FIXTURES.rglob("__cluster_metadata-0"))


def _real_logs() -> list[Path]:
    root = Path(os.environ.get("KMETA_REAL_DATA") or DEFAULT_REAL_DATA)
    return sorted(root.rglob("__cluster_metadata-0")) if root.is_dir() else []


REAL_LOGS = _real_logs()


@pytest.fixture
def small_checkpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checkpoints every few records, so that the small logs here replay from checkpoints
    inside segments (and inside metadata transactions) as a long log does."""
    monkeypatch.setattr(timeline_mod, "CHECKPOINT_RECORDS", 7)
    monkeypatch.setattr(timeline_mod, "CHECKPOINT_OFFSETS", 50)


def _outcome(fn, *args, **kw) -> str:
    """The image digest, or the kind of error."""
    try:
        return fn(*args, **kw)
    except KmetaError as e:
        return type(e).__name__


def _targets(tl: Timeline, rng: random.Random, most: int = 45) -> list[int]:
    """Offsets worth asking for: 0, start, end, past the end, snapshot ends, checkpoint
    offsets, and the first, middle, last and one-past offsets of batches (inside
    multi-record batches too)."""
    offsets = {0, tl.start, tl.end, tl.end + 1}
    offsets |= {s.end_offset for s in tl.snapshots()}
    offsets |= {c.offset for c in tl._checkpoints}
    if tl.index is not None:
        for i in range(len(tl.index)):
            base, last = tl.index.base[i], tl.index.last[i]
            offsets |= {base, last, last + 1, (base + last) // 2}
    picked = sorted(offsets)
    if len(picked) > most:
        keep = {0, tl.start, tl.end} | {s.end_offset for s in tl.snapshots()}
        picked = sorted(keep | set(rng.sample(picked, most)))
    return picked


def _check_against_build_image(log: Path) -> None:
    try:
        tl = Timeline.open(log)
    except KmetaError as e:
        # where the timeline cannot open, kmeta image fails the same way
        assert _outcome(lambda: build_image(log).image.digest()) == type(e).__name__
        return
    for offset in _targets(tl, random.Random(str(log))):
        want = _outcome(lambda o=offset: build_image(log, at=o).image.digest())
        got = _outcome(lambda o=offset: tl.image_at(o)[0].digest())
        assert got == want, (log, offset)


@pytest.mark.usefixtures("small_checkpoints")
@pytest.mark.parametrize("log", FIXTURE_LOGS, ids=lambda p: str(p.parent.relative_to(FIXTURES)))
def test_image_at_is_kmeta_image_at_on_every_fixture(log: Path) -> None:
    _check_against_build_image(log)


@pytest.mark.usefixtures("small_checkpoints")
@pytest.mark.parametrize("log", REAL_LOGS, ids=lambda p: str(p.parent.name))
def test_image_at_is_kmeta_image_at_on_every_real_dir(log: Path) -> None:
    _check_against_build_image(log)


def test_real_dirs_are_there(real_data: Path) -> None:
    assert len(_real_logs()) >= 10


@pytest.mark.usefixtures("small_checkpoints")
def test_checkpoints_are_kept_inside_the_log_and_images_are_independent() -> None:
    tl = Timeline.open(HEALTHY_META)
    inside = [c.offset for c in tl._checkpoints if c.offset not in
              {0, *(s.end_offset for s in tl.snapshots())}]
    assert len(inside) > 10
    offset = inside[len(inside) // 2] + 1
    first, _ = tl.image_at(offset)
    first.topics.clear()  # what a caller does to its image stays its own
    again, _ = tl.image_at(offset)
    assert again.digest() == build_image(HEALTHY_META, at=offset).image.digest()


def test_image_at_from_a_checkpoint_inside_a_transaction(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setattr(timeline_mod, "CHECKPOINT_RECORDS", 1)
    tl = Timeline.open(HEALTHY_META)
    inside = [c.offset for c in tl._checkpoints if c.image().in_transaction]
    assert inside, "the healthy log holds metadata transactions"
    for offset in inside[:5]:
        for at in (offset, offset + 1, offset + 3):
            assert tl.image_at(at)[0].digest() == \
                build_image(HEALTHY_META, at=at).image.digest()


def test_checkpoints_are_thinned_to_their_byte_budget(monkeypatch: pytest.MonkeyPatch
                                                     ) -> None:
    monkeypatch.setattr(timeline_mod, "CHECKPOINT_RECORDS", 2)
    monkeypatch.setattr(timeline_mod, "CHECKPOINT_OFFSETS", 20)
    roomy = Timeline.open(HEALTHY_META)
    each = max(len(c.pickled) for c in roomy._checkpoints)
    monkeypatch.setattr(timeline_mod, "CHECKPOINT_BYTES", 12 * each)
    tight = Timeline.open(HEALTHY_META)
    assert tight._every > 2
    assert 4 <= tight.checkpoints < roomy.checkpoints
    assert tight._kept == sum(len(c.pickled) for c in tight._checkpoints) <= 12 * each
    # where replays start stays: offset 0 and every snapshot the log holds
    assert {c.offset for c in roomy._checkpoints if c.starts_span} <= \
        {c.offset for c in tight._checkpoints}
    for offset in random.Random(9).sample(range(tight.start, tight.end + 1), 12):
        assert tight.image_at(offset)[0].digest() == roomy.image_at(offset)[0].digest()


# ---------------------------------------------------------------------- provenance

def _plain_batches(log: Path) -> list:
    """Every batch of the log, one by one (no runs): the independent reading."""
    out = []
    for seg in next(discover([log]).all_partitions()).segments:
        out += [b for b in read_batches(seg.path, []) if b.crc_valid]
    return out


def _is_noop_only(batch) -> bool:
    return all(decode_metadata(r.value).type == "NO_OP_RECORD" for r in batch.records())


def test_provenance_is_the_last_batch_of_metadata_records_applied() -> None:
    tl = Timeline.open(HEALTHY_META)
    batches = [b for b in _plain_batches(HEALTHY_META) if not b.is_control]
    assert tl.image_at(0)[1] == EMPTY_PROVENANCE
    end = tl.image_at(tl.end)[1]
    last = batches[-1]
    assert end == (last.last_offset, last.leader_epoch, last.max_timestamp, True)
    multi = next(b for b in batches if b.last_offset > b.base_offset + 1)
    inside = tl.provenance(multi.base_offset + 1)
    assert inside == (multi.base_offset, multi.leader_epoch, multi.max_timestamp, False)
    # a NoOp heartbeat is a batch the image contains: it moves the provenance
    noop = next(b for b in batches[10:] if _is_noop_only(b))
    assert tl.provenance(noop.last_offset + 1).last_contained_offset == noop.last_offset


def test_provenance_of_an_image_loaded_from_a_snapshot() -> None:
    log = FIXTURES / "kip630" / "fetch-epoch-3" / "__cluster_metadata-0"
    tl = Timeline.open(log)
    snap = tl.snapshots()[0]
    assert tl.start == snap.end_offset
    prov = tl.image_at(tl.start)[1]
    header = next(item for item in read_records(snap.path, decode_metadata, decode_control))
    assert prov == (snap.end_offset - 1, snap.epoch,
                    header[2].data["lastContainedLogTimestamp"], True)


def test_batches_are_every_batch_of_the_log_by_its_header() -> None:
    tl = Timeline.open(HEALTHY_META)
    plain = _plain_batches(HEALTHY_META)
    got = list(tl.batches(tl.start, tl.end))
    assert [(b.base_offset, b.last_offset, b.leader_epoch, b.max_timestamp, b.file,
             b.position, b.is_control) for b in got] == \
        [(b.base_offset, b.last_offset, b.leader_epoch, b.max_timestamp, b.file, b.position,
          b.is_control) for b in plain]
    for b in plain[::97]:
        assert tl.batch_at(b.last_offset) == next(g for g in got
                                                  if g.base_offset == b.base_offset)
    assert tl.batch_at(tl.end) is None


def test_snapshots_by_name() -> None:
    tl = Timeline.open(HEALTHY_META)
    snaps = tl.snapshots()
    assert snaps and [s.end_offset for s in snaps] == sorted(s.end_offset for s in snaps)
    last = snaps[-1]
    for name in (last.name, last.path.stem, str(last.end_offset)):
        assert tl.snapshot(name) == last
    with pytest.raises(UsageError, match="the snapshots are"):
        tl.snapshot("nope")


# ---------------------------------------------------------------------- time

def test_offset_at_is_the_first_batch_stamped_at_or_after_a_time() -> None:
    tl = Timeline.open(HEALTHY_META)
    batches = _plain_batches(HEALTHY_META)
    rng = random.Random(3)
    stamps = sorted({b.max_timestamp for b in batches})
    times = [stamps[0] - 1, stamps[-1], stamps[-1] + 1] + rng.sample(stamps, 40) + \
        [s + 1 for s in rng.sample(stamps, 20)]
    for t in times:
        want = next((b.base_offset for b in batches if b.max_timestamp >= t), tl.end)
        assert tl.offset_at(t) == want, t
        # the image there holds every record stamped before t, and none at or after it
        below = [b for b in batches if b.base_offset < want]
        assert all(b.max_timestamp < t for b in below)


def test_offset_at_lands_inside_a_run_of_heartbeats() -> None:
    tl = Timeline.open(HEALTHY_META)
    runs = [i for i in range(len(tl.index)) if tl.index.count[i] > 5]
    assert runs
    i = runs[0]
    k = 3
    stamps = tl.index._stamps(i)
    assert tl.offset_at(stamps[k]) <= tl.index.base[i] + k * tl.index.step[i]
    assert tl.offset_at(stamps[k]) > tl.index.base[i]


def test_time_needs_a_log() -> None:
    snap = sorted((FIXTURES / "healthy" / "__cluster_metadata-0").glob("*.checkpoint"))[0]
    with pytest.raises(UsageError, match="no log"):
        Timeline.open(snap).offset_at(0)


# ---------------------------------------------------------------------- steps

def test_steps_skip_heartbeats_and_control_batches() -> None:
    tl = Timeline.open(HEALTHY_META)
    batches = _plain_batches(HEALTHY_META)
    data = [b for b in batches if not b.is_control and not _is_noop_only(b)]
    assert len(data) < len([b for b in batches if not b.is_control])  # heartbeats exist
    ends = [b.last_offset + 1 for b in data]
    rng = random.Random(5)
    points = sorted({tl.start, tl.end, *ends[:20], *(b.base_offset for b in data[:20]),
                     *rng.sample(range(tl.start, tl.end + 1), 60)})
    for x in points:
        ahead = [b for b in data if b.last_offset >= x]
        for n in (1, 2, 5):
            want = ahead[n - 1].last_offset + 1 if len(ahead) >= n else tl.end
            assert tl.next_batch(x, n) == want, (x, n)
        applied = [b for b in data if b.base_offset < x]
        for n in (1, 3):
            want = applied[-1 - n].last_offset + 1 if len(applied) > n else tl.start
            assert tl.prev_batch(x, n) == want, (x, n)
    # a step forward changes the image (a heartbeat would not)
    x = tl.start
    for _ in range(10):
        y = tl.next_batch(x)
        assert tl.image_at(y)[0].digest() != tl.image_at(x)[0].digest() or \
            tl.image_at(y)[0].in_transaction or tl.image_at(x)[0].in_transaction
        assert tl.prev_batch(y) <= x
        x = y
    with pytest.raises(UsageError):
        tl.next_batch(x, 0)


@pytest.mark.parametrize("span", [(0, 400), (4003, 4600), (6001, 6050), (11900, 12704),
                                  (8000, 8000)])
def test_walk_gives_the_image_after_each_step(span: tuple[int, int]) -> None:
    tl = Timeline.open(HEALTHY_META)
    lo, hi = span
    data = [b for b in _plain_batches(HEALTHY_META)
            if not b.is_control and not _is_noop_only(b)]
    want = [lo] + [b.last_offset + 1 for b in data if lo < b.last_offset + 1 <= hi]
    want += [hi for b in data if b.base_offset < hi <= b.last_offset and hi > lo]
    walked = list(tl.walk(lo, hi))
    assert [w[0] for w in walked] == want
    for offset, image, prov in walked:
        assert (image.digest(), prov) == (tl.image_at(offset)[0].digest(),
                                          tl.image_at(offset)[1])


def test_walk_cut_inside_a_batch() -> None:
    tl = Timeline.open(HEALTHY_META)
    multi = next(b for b in _plain_batches(HEALTHY_META)
                 if b.last_offset > b.base_offset + 2 and not b.is_control
                 and b.base_offset > 100)
    lo, hi = multi.base_offset - 30, multi.base_offset + 2
    walked = list(tl.walk(lo, hi))
    assert walked[-1][0] == hi
    assert walked[-1][1].digest() == build_image(HEALTHY_META, at=hi).image.digest()


# ---------------------------------------------------------------------- records

def _dump_lines(log: Path, lo: int, hi: int) -> list[str]:
    """``kmeta dump --json`` of the log's segments (not its snapshots) in the range."""
    segments = sorted(log.glob("*.log"))
    proc = clirun.run("dump", *segments, "--json", "--from-offset", lo, "--to-offset", hi,
                      timeout=60, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines()
            if json.loads(line)["kind"] != "file"]


@pytest.mark.parametrize("span", [(0, 0), (0, 40), (17, 19), (3000, 3100), (5000, 9000)])
def test_records_are_dump_json_rows(span: tuple[int, int]) -> None:
    tl = Timeline.open(HEALTHY_META)
    lo, hi = span
    hi = min(hi, tl.end - 1)
    got = [line for text in render(tl.records(lo, hi)) for line in text.split("\n")]
    assert got == _dump_lines(HEALTHY_META, lo, hi)
    assert any(json.loads(line)["kind"] == "record" for line in got)


def test_records_hide_secrets() -> None:
    tl = Timeline.open(HEALTHY_META)
    secret = next(h for h in tl.history_records() if h.type_name in SECRET_TYPES)
    lines = [json.loads(line) for text in render(tl.records(secret.offset, secret.offset))
             for line in text.split("\n")]
    record = next(o for o in lines if o["kind"] == "record")
    assert record["data"] == secret.data  # both redacted, the same way


# ---------------------------------------------------------------------- history

def _all_records(log: Path) -> list[tuple]:
    out = []
    for seg in next(discover([log]).all_partitions()).segments:
        for item in read_records(seg.path, decode_metadata, decode_control):
            if type(item) is Finding:
                continue
            batch, r, p = item
            if batch.is_control or not batch.crc_valid or p.finding or \
                    p.type == "NO_OP_RECORD":
                continue
            data = redact(p.type, p.data) if p.type in SECRET_TYPES else p.data
            out.append((r.offset, r.timestamp, batch.leader_epoch, p.type, p.version, data))
    return out


WITH_SEGMENTS = [p for p in REAL_LOGS if any(p.glob("*.log"))]


@pytest.mark.parametrize("log", [HEALTHY_META, *WITH_SEGMENTS], ids=str)
def test_history_records_are_every_metadata_record_in_order(log: Path) -> None:
    tl = Timeline.open(log)
    want = _all_records(log)
    assert [tuple(h) for h in tl.history_records()] == want
    assert [tuple(h) for h in tl.history_records()] == want  # again: nothing used up
    mid = want[len(want) // 2][0]
    assert [tuple(h) for h in tl.history_records(mid, mid + 50)] == \
        [w for w in want if mid <= w[0] < mid + 50]


def test_history_records_keep_secrets_hidden() -> None:
    tl = Timeline.open(HEALTHY_META)
    scram = [h for h in tl.history_records() if h.type_name == "USER_SCRAM_CREDENTIAL_RECORD"]
    assert scram and all(h.data["salt"] == "[redacted]" for h in scram)


# ---------------------------------------------------------------------- a snapshot file

def test_a_lone_snapshot_file() -> None:
    snap = sorted(HEALTHY_META.glob("*.checkpoint"))[-1]
    tl = Timeline.open(snap)
    end = int(snap.name.split("-")[0])
    assert tl.start == tl.end == end
    assert [s.path for s in tl.snapshots()] == [snap]
    image, prov = tl.image_at(end)
    assert image.digest() == build_image(snap).image.digest()
    assert prov.last_contained_offset == end - 1
    with pytest.raises(UsageError, match="only the snapshot"):
        tl.image_at(end - 1)
    assert tl.next_batch(end) == end and tl.prev_batch(end) == end
    assert any(h.type_name == "TOPIC_RECORD" for h in tl.history_records())


def test_snapshots_only(real_data: Path) -> None:
    log = real_data / "data-store" / "kafka-data" / "__cluster_metadata-0"
    tl = Timeline.open(log)
    ends = [s.end_offset for s in tl.snapshots()]
    assert len(ends) == 7 and tl.start == ends[0] and tl.end == ends[-1]
    for end in ends:
        assert tl.image_at(end)[0].digest() == build_image(log, at=end).image.digest()
    with pytest.raises(UsageError, match="no log"):
        tl.image_at(ends[0] + 1)
    # no batch to step over: a step goes nowhere (it went to the last or first snapshot)
    assert tl.next_batch(ends[0]) == ends[0] and tl.prev_batch(ends[-1]) == ends[-1]
    # the log is gone, as image says (V020)
    assert [f.code for f in tl.findings] == ["V020"]
    assert [f.code for f in build_image(log).findings] == ["V020"]


def test_findings_are_told_once(tmp_path: Path) -> None:
    """The index and the replay both read a torn tail: one S001, as kmeta image has it."""
    copy = tmp_path / "__cluster_metadata-0"
    shutil.copytree(HEALTHY_META, copy)
    last = sorted(copy.glob("*.log"))[-1]
    last.write_bytes(last.read_bytes()[:-30])
    tl = Timeline.open(copy)
    assert [f.code for f in tl.findings] == ["S001"]
    assert [(f.code, f.offset) for f in tl.findings] == \
        [(f.code, f.offset) for f in build_image(copy).findings]


def test_the_times_of_the_log() -> None:
    tl = Timeline.open(HEALTHY)
    first, last = tl.time_range()
    assert tl.offset_at(first - 1) == 0 and tl.offset_at(last + 1) == tl.end
    assert tl.offset_at(last) < tl.end
    assert Timeline.open(sorted(HEALTHY_META.glob("*.checkpoint"))[-1]).time_range() is None


# ---------------------------------------------------------------------- replicas

def test_replicas_are_named_by_their_data_dirs() -> None:
    div = FIXTURES / "divergent" / "diverged"
    reps = Replicas.open([div / "a", div / "b" / "__cluster_metadata-0"])
    assert reps.names() == ["a", "b"]
    for name in ("a", "b"):
        tl = reps[name]
        assert tl.image_at(tl.end)[0].digest() == \
            build_image(div / name).image.digest()
    assert reps["a"].path != reps["b"].path
    with pytest.raises(UsageError, match="no replica 'c'"):
        reps["c"]


def test_replicas_whose_dirs_share_a_name(tmp_path: Path) -> None:
    for side in ("x", "y"):
        shutil.copytree(HEALTHY_META, tmp_path / side / "node" / "__cluster_metadata-0")
    reps = Replicas.open([tmp_path / "x" / "node", tmp_path / "y" / "node"])
    assert reps.names() == ["x/node", "y/node"]


# ---------------------------------------------------------------------- errors

def test_a_path_without_a_metadata_log_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UnreadableInput) as e:
        Timeline.open(tmp_path)  # nothing of Kafka's there: as kmeta image says
    assert "\n" not in e.value.one_line()
    (tmp_path / "orders-0").mkdir()
    shutil.copy(next((HEALTHY / "orders-0").glob("*.log")), tmp_path / "orders-0")
    with pytest.raises(UnreadableInput, match="no metadata log here") as u:
        Timeline.open(tmp_path / "orders-0")
    assert "\n" not in u.value.one_line()


def test_offsets_outside_the_timeline() -> None:
    tl = Timeline.open(FIXTURES / "lifecycle" / "log-start" / "__cluster_metadata-0")
    assert tl.log_start is not None and tl.log_start < tl.start
    with pytest.raises(UsageError, match="first offset with an image"):
        tl.image_at(tl.log_start)
    with pytest.raises(UsageError, match="past the log end"):
        tl.image_at(tl.end + 1)


def test_a_log_with_nothing_to_start_an_image_from() -> None:
    log = FIXTURES / "verify" / "v026-no-snapshot-below-start" / "__cluster_metadata-0"
    with pytest.raises(UsageError, match="the log starts at offset [1-9].* no usable "
                                         "snapshot ends inside it"):
        Timeline.open(log)


def test_progress_is_told() -> None:
    """The opening reads the log twice (the index, then the replay): every segment is
    heard of whole, from a discovery that listed it."""
    from heard import Heard

    heard = Heard()
    Timeline.open(HEALTHY_META, progress=heard)
    segments = {str(p): p.stat().st_size for p in Path(HEALTHY_META).glob("*.log")}
    assert segments and all(heard.furthest()[p] == n for p, n in segments.items())
    assert set(segments) <= set(heard.found_files)
    assert len(heard.reads) >= 2 * len(segments)


# ---------------------------------------------------------------------- replay_log

def test_a_replay_from_inside_a_segment_expands_no_run_below_its_start(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What makes image_at fast: a replay from a checkpoint inside a long segment passes
    over the runs of heartbeats below it instead of expanding them batch by batch."""
    part = next(discover([HEALTHY_META]).all_partitions())
    end = build_image(HEALTHY_META).log_end
    start = end - 50
    expanded: list[int] = []
    batches = Run.batches

    def counting(run: Run):
        expanded.append(run.last_offset)
        return batches(run)

    monkeypatch.setattr(Run, "batches", counting)
    image = build_image(HEALTHY_META, at=start).image
    expanded.clear()
    replay_log(part, Replay(image, start), end, [])
    assert expanded and all(last >= start for last in expanded)
    assert image.digest() == build_image(HEALTHY_META).image.digest()


def _topic_value(name: str) -> bytes:
    from kmeta.formats.payload import encode_metadata

    return encode_metadata("TOPIC_RECORD", 0, {"name": name,
                                               "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"})


@pytest.mark.parametrize("second", [
    # a valid batch whose lastOffsetDelta is 2^31-1: one step of 2^31 offsets
    {"base_offset": 1, "records": ["u"], "last_offset_delta": (1 << 31) - 1},
    # a batch at base offset 2^63-1 holding two records: its last offset is past Long.MAX
    {"base_offset": (1 << 63) - 1, "records": ["u", "v"]},
])
def test_offsets_at_the_edge_of_long_are_indexed(tmp_path: Path, second: dict) -> None:
    """Found by the fuzz campaign: the index's columns overflowed (OverflowError in
    BatchIndex._add) and every shell command ended in an internal error."""
    from kmeta.formats.batch import build_batch

    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    extra = {"last_offset_delta": second["last_offset_delta"]} \
        if "last_offset_delta" in second else {}
    data = build_batch(0, [(None, _topic_value("t"))]) + build_batch(
        second["base_offset"], [(None, _topic_value(n)) for n in second["records"]], **extra)
    (part / "00000000000000000000.log").write_bytes(data)
    tl = Timeline.open(part)
    last = second["base_offset"] + extra.get("last_offset_delta", len(second["records"]) - 1)
    assert tl.end == last + 1
    assert tl.prev_batch(tl.end) == 1
    assert tl.next_batch(1) == tl.end
    first = second["base_offset"]
    assert [r.offset for r in tl.history_records()] == \
        [0, *(first + k for k in range(len(second["records"])))]
    image, _ = tl.image_at(tl.end)
    assert image.topics  # the last batch applied
