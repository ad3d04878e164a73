"""The image's fast paths (kmeta/core/image.py ``_FAST_HANDLERS``) against its full
handlers: on every metadata log and snapshot of the fixtures and of the real data, and on
records made to take every branch, both give the same problems record by record and the
same image."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_image import T1, base, broker, change, partition, topic

from kmeta.core import image as image_module
from kmeta.core.image import MetadataImage
from kmeta.findings import Finding
from kmeta.formats import payload as payload_module
from kmeta.formats.payload import Payload, decode_control, decode_metadata, encode_metadata
from kmeta.ops.replay import Replay
from kmeta.ops.replay import engine as replay_module
from kmeta.storage.segments import read_records

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"


def straightforward(image: MetadataImage) -> MetadataImage:
    """``image`` made to apply every record with the full handlers only."""
    image._handlers = image_module._HANDLERS
    return image


def test_the_fast_handlers_are_the_ones_apply_uses() -> None:
    fast = image_module._FAST_HANDLERS
    assert MetadataImage.empty()._handlers is fast
    assert fast["PARTITION_CHANGE_RECORD"] is not image_module._HANDLERS[
        "PARTITION_CHANGE_RECORD"]
    assert set(fast) == set(image_module._HANDLERS)


def _metadata_files(root: Path) -> list[list[Path]]:
    """Each metadata log (its segments in order) and each snapshot, under ``root``."""
    out: list[list[Path]] = []
    for d in sorted(p for p in root.rglob("__cluster_metadata-*") if p.is_dir()):
        segments = sorted(d.glob("*.log"))
        if segments:
            out.append(segments)
        out += [[s] for s in sorted(d.glob("*.checkpoint"))]
    out += [[s] for s in sorted(root.rglob("bootstrap.checkpoint"))]
    return out


def _both_ways(files: list[Path]) -> tuple[int, set[str]]:
    """Replay ``files`` with the fast and the full handlers side by side; the records
    applied and their types."""
    fast, full = MetadataImage.empty(), straightforward(MetadataImage.empty())
    applied, types = 0, set()
    for f in files:
        for item in read_records(f, decode_metadata, decode_control):
            if type(item) is Finding:
                continue
            batch, record, payload = item
            if batch.is_control or not batch.crc_valid or payload.finding:
                continue
            args = (payload.type, payload.version, payload.data, record.offset)
            assert fast.apply(*args) == full.apply(*args), (f, record.offset)
            applied += 1
            types.add(payload.type)
    assert fast.to_json() == full.to_json(), files
    assert fast.digest() == full.digest()
    return applied, types


@pytest.mark.parametrize("root", ["fixtures", "real"])
def test_fast_and_full_handlers_agree_on_every_log(root: str, real_data: Path) -> None:
    logs = _metadata_files(FIXTURES if root == "fixtures" else real_data)
    assert logs
    applied, types = 0, set()
    for files in logs:
        n, seen = _both_ways(files)
        applied += n
        types |= seen
    assert applied > 1000
    assert "PARTITION_CHANGE_RECORD" in types and "PARTITION_RECORD" in types


def _changes() -> list[tuple]:
    """PartitionChangeRecords that take each branch of the fast path, and some that
    leave it for the full one."""
    gone = "AAAAAAAAAAAAAAAAAAAAAQ"
    return [
        change(T1, isr=[1]),
        change(T1, isr=[2, 1]),
        change(T1, leader=2),
        change(T1, leader=-1, isr=[]),
        change(T1, leader=2, isr=[2]),
        change(T1, leader=3, isr=[1, 2]),        # leader not in the ISR
        change(T1, isr=[1, 2, 7]),               # ISR outside the replicas
        change(T1, leader=7, isr=[7]),           # leader not a registered broker
        change(T1, leader=-2, isr=[1]),          # -2: no leader change
        change(T1, pid=5, isr=[1]),              # no such partition
        change(gone, isr=[1]),                   # no such topic
        change(T1),                              # nothing but the name
        ("PARTITION_CHANGE_RECORD", 0, {"partitionId": 0, "isr": [1]}),  # no topic id
        ("PARTITION_CHANGE_RECORD", 0, {"topicId": T1, "isr": [1]}),     # no partition id
        change(T1, isr=None, leader=1),
        change(T1, replicas=[1, 2, 3], isr=[1]),                  # the full path
        change(T1, isr=[1], leaderRecoveryState=1),
        change(T1, directories=["AAAAAAAAAAAAAAAAAAAAAA"] * 2),
        change(T1, eligibleLeaderReplicas=[2], lastKnownElr=[]),
    ]


@pytest.mark.parametrize("record", _changes(), ids=lambda r: repr(r[2])[:60])
def test_fast_and_full_partition_change_agree(record: tuple[Any, ...]) -> None:
    fast, full = base(), straightforward(base())
    for image in (fast, full):
        image.apply(*broker(3))
        image.apply(*topic("gone", "AAAAAAAAAAAAAAAAAAAAAQ"))
        image.apply("REMOVE_TOPIC_RECORD", 0, {"topicId": "AAAAAAAAAAAAAAAAAAAAAQ"})
        image.apply(*partition(T1, pid=1, replicas=[1, 2, 3], isr=[3], leader=3))
    for pid in (0, 1):  # each record against two partitions, twice in a row
        rec = (record[0], record[1], {**record[2], "partitionId": pid}
               if "partitionId" in record[2] else record[2])
        for _ in range(2):
            assert fast.apply(*rec, offset=9) == full.apply(*rec, offset=9)
            assert fast.to_json() == full.to_json()


# ------------------------------------------------------------- the replay process's loop
#
# verify's replay process applies a batch's records through Replay.apply_quiet: the
# compiled apply_changes (kmeta/formats/_runs.c) or its reference apply_changes_py, each
# taking the plain PartitionChangeRecords that raise no problem and leaving every other
# record to Replay.problems.  Driven both ways and record by record against problems
# alone, they must raise the same problems and build the same image.

try:
    from kmeta.formats import _runs as compiled  # type: ignore[attr-defined]
except ImportError:  # no compiler where kmeta was installed
    compiled = None

WAYS = ["compiled", "pure"]


def _way(way: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if way == "compiled":
        if compiled is None:
            pytest.skip("the compiled twin is not built")
        monkeypatch.setattr(replay_module, "_compiled_changes", compiled.apply_changes)
    else:
        monkeypatch.setattr(replay_module, "_compiled_changes", None)
    # a payload decoded one way must not be what the other way finds
    monkeypatch.setattr(payload_module, "_DECODED", {})


def _quietly(replay: Replay, values: list, offsets: list) -> tuple[list, int]:
    """The records of one batch as verify's replay process applies them: the problems,
    each with its record's offset, and how many records the quick way took."""
    found, taken, i = [], 0, 0
    while i < len(values):
        j, payload = replay.apply_quiet(values, offsets, i)
        taken += j - i
        if payload is None:
            break
        if payload.type != "NO_OP_RECORD":
            found += [(offsets[j], p) for p in replay.problems(payload, offsets[j])]
        i = j + 1
    return found, taken


def _plainly(replay: Replay, values: list, offsets: list) -> list:
    """The same records, each through Replay.problems (the process's loop before)."""
    found = []
    for value, offset in zip(values, offsets, strict=True):
        payload = decode_metadata(value)
        if payload.type != "NO_OP_RECORD":
            found += [(offset, p) for p in replay.problems(payload, offset)]
    return found


def _batches(files: list[Path]) -> list[tuple[list, list]]:
    """The values and offsets of each valid data batch of ``files``."""
    out: dict[int, tuple[list, list]] = {}
    for f in files:
        for item in read_records(f, decode_metadata, decode_control):
            if type(item) is Finding:
                continue
            batch, record, _ = item
            if batch.is_control or not batch.crc_valid:
                continue
            values, offsets = out.setdefault(id(batch), ([], []))
            values.append(record.value)
            offsets.append(record.offset)
    return list(out.values())


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("root", ["fixtures", "real"])
def test_the_quick_loop_agrees_with_problems_on_every_log(
        root: str, way: str, real_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _way(way, monkeypatch)
    taken = 0
    for files in _metadata_files(FIXTURES if root == "fixtures" else real_data):
        log = files[0].suffix == ".log"
        quick = Replay(MetadataImage.empty(), log=log)
        plain = Replay(straightforward(MetadataImage.empty()), log=log)
        for values, offsets in _batches(files):
            found, n = _quietly(quick, values, offsets)
            assert found == _plainly(plain, values, offsets), (files, offsets[0])
            taken += n
            if n:
                assert quick.image.changed_partition == plain.image.changed_partition
        assert quick.image.to_json() == plain.image.to_json(), files
    assert taken > 1000  # the quick way is what was compared


def _image(level: int | None = None) -> MetadataImage:
    """base(): brokers 1 and 2, orders-0 on replicas [1, 2], ISR [1, 2], leader 1; with a
    second partition on [1, 2, 3] led by 3 (registered), a removed topic, and ``level``."""
    image = base()
    records = [broker(3), partition(T1, pid=1, replicas=[1, 2, 3], isr=[3], leader=3),
               topic("gone", GONE), ("REMOVE_TOPIC_RECORD", 0, {"topicId": GONE})]
    if level is not None:
        records.append(("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version",
                                                    "featureLevel": level}))
    assert image.apply_all(records) == []
    return image


GONE = "AAAAAAAAAAAAAAAAAAAAAQ"
DIR = "ZGlyLWEtMDAwMDAwMDAwMQ"
MIGRATING = image_module.MIGRATING_DIR

#: PartitionChangeRecords the quick way takes (they raise no problem).
TAKEN = [
    change(T1, isr=[1]),
    change(T1, isr=[2, 1]),
    change(T1, pid=1, isr=[3, 1]),
    change(T1, leader=2),
    change(T1, leader=-1, isr=[]),
    change(T1, leader=2, isr=[2]),
    change(T1, leader=-2, isr=[1]),           # -2: no leader change (not even written)
    change(T1),                               # nothing but the name
    change(T1, pid=1, leader=1, isr=[1, 3]),
    ("PARTITION_CHANGE_RECORD", 1, {"partitionId": 0, "topicId": T1, "isr": [1]}),
    ("PARTITION_CHANGE_RECORD", 2, {"partitionId": 0, "topicId": T1, "leader": 2}),
    partition(T1, pid=2),
    partition(T1, pid=0, replicas=[2, 1], isr=[2], leader=2, leader_epoch=1,
              partition_epoch=1),
    partition(T1, pid=0, leader=-1, isr=[]),
    partition(T1, pid=3, replicas=[1, 2, 3], isr=[3, 1], leader=3),
    ("PARTITION_RECORD", 1, partition(T1, pid=2, directories=[DIR, DIR])[2]),
    ("PARTITION_RECORD", 1, partition(T1, pid=2, directories=[MIGRATING, MIGRATING])[2]),
    ("PARTITION_RECORD", 1, partition(T1, pid=2, directories=[MIGRATING, DIR])[2]),
    ("PARTITION_RECORD", 2, partition(T1, pid=2, eligibleLeaderReplicas=[2],
                                      lastKnownElr=[1], leaderRecoveryState=1)[2]),
]

#: Records it leaves to Replay.problems, each for a reason of its own.
LEFT = [
    change("dW5rbm93bi10b3BpYy1pZA", isr=[1]),  # no such topic
    change(GONE, isr=[1]),                    # a removed topic
    change(T1, pid=5, isr=[1]),               # no such partition
    change(T1, leader=2, isr=[1]),            # leader not in the ISR
    change(T1, isr=[2]),                      # the leader (1) left the ISR
    change(T1, isr=[1, 2, 7]),                # ISR outside the replicas
    change(T1, leader=7, isr=[7]),            # ... and an unregistered leader
    change(T1, pid=1, leader=3, isr=[3]),     # re-elected and registered: taken (below)
    change(T1, replicas=[1, 2, 3], isr=[1]),  # a field of the full path
    change(T1, isr=[1], leaderRecoveryState=1),
    ("PARTITION_CHANGE_RECORD", 1, {"partitionId": 0, "topicId": T1,
                                    "directories": [GONE, GONE]}),
    ("PARTITION_CHANGE_RECORD", 2, {"partitionId": 0, "topicId": T1,
                                    "eligibleLeaderReplicas": [2], "lastKnownElr": []}),
    partition("dW5rbm93bi10b3BpYy1pZA"),    # no such topic
    partition(GONE),                          # a removed topic
    partition(T1, leader=3, isr=[1, 2]),      # leader not in the ISR
    partition(T1, isr=[1, 2, 7]),             # ISR outside the replicas
    partition(T1, pid=4, replicas=[7], isr=[7], leader=7),  # an unregistered leader
    partition(T1, leader_epoch=-1),           # the leader epoch goes back (from 0)
    partition(T1, partition_epoch=-1),        # the partition epoch goes back
    ("PARTITION_RECORD", 1, partition(T1, directories=[DIR])[2]),  # 1 dir, 2 replicas
    ("PARTITION_RECORD", 0, partition(T1, leaderRecoveryState=2)[2]),
    ("CONFIG_RECORD", 0, {"resourceType": 2, "resourceName": "orders", "name": "x",
                          "value": "1"}),
]
assert MIGRATING == "A" * 22  # as _runs.c has it


def _unregistered() -> tuple:
    """An elected leader whose broker is not registered, with every other check passed."""
    return change(T1, pid=1, leader=3, isr=[3])


def _value(record: tuple) -> bytes:
    return encode_metadata(record[0], record[1], record[2])


def _one_record(way: str, image: MetadataImage, value: bytes, offset: int = 9, *,
                start: int = 0, skip_noops: bool = True, watch: object = None
                ) -> tuple[int, Any, list, MetadataImage]:
    """``value`` through Replay.apply_quiet on ``image``, then Replay.problems on a copy
    made before (the reference): the index, payload, problems of the quick replay (none
    when taken) and the reference's image."""
    reference = Replay(image.copy(), start)
    before = image.to_json()
    replay = Replay(image, start)
    replay.watch = watch
    i, payload = replay.apply_quiet([value], [offset], 0, skip_noops)
    want = reference.problems(decode_metadata(value), offset)
    if i == 1:
        assert payload is None
        assert want == [], (way, want)  # only what raises no problem is taken
    else:
        assert payload == decode_metadata(value)
        assert image.to_json() == before  # the image is untouched by what is left
        assert replay.problems(payload, offset) == want
    return i, payload, want, reference.image


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("record", TAKEN, ids=lambda r: repr(r[2])[:60])
def test_the_quick_way_takes_a_plain_change(record: tuple, way: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    _way(way, monkeypatch)
    image = _image()
    i, _, _, reference = _one_record(way, image, _value(record))
    assert i == 1
    assert image.to_json() == reference.to_json()
    assert image.changed_partition == reference.changed_partition
    new = image.topics[T1]["partitions"][record[2]["partitionId"]]
    if record[0] == "PARTITION_CHANGE_RECORD":
        assert image.changed_partition is not None
        assert image.changed_partition[1] is new
    # the partition's lists are its own, not the decoded payload's
    data = decode_metadata(_value(record)).data
    assert all(new[k] is not data.get(k) for k in new if type(new[k]) is list)


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("record", LEFT, ids=lambda r: repr(r[2])[:60])
def test_the_quick_way_leaves_a_change_with_a_problem(record: tuple, way: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _way(way, monkeypatch)
    image = _image()
    if record == _unregistered():  # broker 3 leaves: its election is V114's
        image.apply("UNREGISTER_BROKER_RECORD", 0, {"brokerId": 3, "brokerEpoch": 10})
    i, _, want, _ = _one_record(way, image, _value(record))
    assert i == 0
    if record[0] == "PARTITION_RECORD" or \
            record[2].keys() <= {"topicId", "partitionId", "isr", "leader"}:
        assert want  # left for its problem, not for its fields


@pytest.mark.parametrize("way", WAYS)
def test_the_quick_way_leaves_what_the_replay_must_say(way: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _way(way, monkeypatch)
    plain = _value(TAKEN[0])
    # a record below where the replay starts: passed over by problems
    assert _one_record(way, _image(), plain, 9, start=10)[0] == 0
    # a watch hears of every record
    assert _one_record(way, _image(), plain, watch=object())[0] == 0
    # inside a metadata transaction the record is buffered
    image = _image(level=20)
    image.apply("BEGIN_TRANSACTION_RECORD", 0, {"name": "t"})
    assert _one_record(way, image, plain)[0] == 0
    assert image.in_transaction
    # a version newer than the log's metadata.version allows: V120
    v2 = _value(TAKEN[-1])
    i, _, want, _ = _one_record(way, _image(level=7), v2)
    assert i == 0 and [p.code for p in want] == ["V120"]
    assert _one_record(way, _image(level=23), v2)[0] == 1
    # a NoOp: passed over in a batch, applied when the pass decoded it (V120 below 5)
    noop = _value(("NO_OP_RECORD", 0, {}))
    assert _one_record(way, _image(), noop)[0] == 1
    assert _one_record(way, _image(), noop, skip_noops=False)[0] == 0
    # a value that does not decode
    i, payload, _, _ = _one_record(way, _image(), plain[:-3])
    assert i == 0 and payload.finding


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("data", [
    {"topicId": T1, "partitionId": 0, "isr": "12"},
    {"topicId": T1, "partitionId": 0, "isr": (1,)},
    {"topicId": T1, "partitionId": 0, "isr": [1, True]},
    {"topicId": T1, "partitionId": 0, "leader": "2"},
    {"topicId": T1, "partitionId": 0, "leader": 2 ** 70},
    {"topicId": T1, "partitionId": "0", "isr": [1]},
    {"topicId": T1, "partitionId": [0], "isr": [1]},
    {"topicId": [T1], "partitionId": 0, "isr": [1]},
    {"topicId": T1, "isr": [1]},
    {"partitionId": 0, "isr": [1]},
    {"topicId": T1, "partitionId": 0, "isr": [1], "extra": 1},
    None,
] + [("PARTITION_RECORD", {**partition(T1, pid=2)[2], **change}) for change in [
    {"replicas": (1, 2)}, {"replicas": None}, {"isr": [1, 2.0]}, {"leader": True},
    {"leaderEpoch": "0"}, {"partitionEpoch": None}, {"leaderRecoveryState": 1.0},
    {"directories": (DIR, DIR)}, {"removingReplicas": (1,)}, {"addingReplicas": "1"},
    {"eligibleLeaderReplicas": 1}, {"lastKnownElr": {1}}, {"partitionId": [2]},
    {"topicId": None}]] + [("PARTITION_RECORD", None), ("PARTITION_RECORD", [])],
    ids=lambda d: repr(d)[-70:])
def test_the_quick_way_leaves_malformed_data(data: Any, way: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A payload whose data no decoding makes (put in the memo under bytes the quick
    reading does not take): left to the full path, the image untouched; and the same
    data with one field made right is taken."""
    _way(way, monkeypatch)
    type_name = "PARTITION_CHANGE_RECORD"
    if type(data) is tuple:
        type_name, data = data
    api_key = payload_module.metadata_message(type_name).api_key
    value = b"\x00not a value the quick way reads"
    payload_module._DECODED[value] = Payload(type_name, 0, data, None, api_key)
    image = _image()
    before = image.to_json()
    i, payload = Replay(image).apply_quiet([value], [9])
    assert (i, payload) == (0, payload_module._DECODED[value])
    assert image.to_json() == before
    good = {"topicId": T1, "partitionId": 0, "isr": [1]} \
        if type_name == "PARTITION_CHANGE_RECORD" else partition(T1, pid=2)[2]
    payload_module._DECODED[value] = Payload(type_name, 0, good, None, api_key)
    assert Replay(image).apply_quiet([value], [9]) == (1, None)  # the test can fail


@pytest.mark.parametrize("way", WAYS)
def test_the_quick_way_stops_at_the_first_record_it_leaves(
        way: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _way(way, monkeypatch)
    noop = _value(("NO_OP_RECORD", 0, {}))
    values = [_value(TAKEN[0]), noop, _value(TAKEN[1]), _value(LEFT[3]), _value(TAKEN[2])]
    offsets = [10, 11, 12, 13, 14]
    replay = Replay(_image())
    i, payload = replay.apply_quiet(values, offsets)
    assert i == 3 and payload == decode_metadata(values[3])
    assert replay.image.topics[T1]["partitions"][0]["isr"] == [2, 1]
    assert replay.apply_quiet(values, offsets, 4) == (5, None)
    assert replay.apply_quiet(values, offsets, 5) == (5, None)
    assert replay.image.topics[T1]["partitions"][1]["isr"] == [3, 1]


@pytest.mark.skipif(compiled is None, reason="the compiled twin is not built")
def test_the_compiled_decoding_is_decode_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    """metadata_payload, the decoding apply_changes does for the records it does not read
    straight from their bytes: the payload decode_metadata gives, and the same memo."""
    values = [v for files in _metadata_files(FIXTURES) for batch in _batches(files)
              for v in batch[0]]
    values += [_value(r) for r in TAKEN + LEFT]
    values += [v[:n] for v in values[:200] for n in (0, 1, 3, 4, len(v) - 1)]
    values += [None, b"\x02\x05\x00", b"\x01\x7f\x00\x00", b"\x01\x05\x7f\x00",
               b"\x81\x00\x05\x00\x00"]
    assert len(values) > 1000
    monkeypatch.setattr(payload_module, "_DECODED", {})
    got = [compiled.metadata_payload(v, payload_module._DECODED, payload_module.DECODER)
           for v in values]
    memo = payload_module._DECODED
    monkeypatch.setattr(payload_module, "_DECODED", {})
    want = [decode_metadata(v) for v in values]
    assert got == want
    assert all(type(p) is Payload for p in got)
    assert list(memo) == list(payload_module._DECODED)  # the same memo, in one order


@pytest.mark.skipif(compiled is None, reason="the compiled twin is not built")
@settings(max_examples=400, deadline=None)
@given(record=st.sampled_from(TAKEN + LEFT[:8]), edits=st.lists(
    st.tuples(st.integers(0, 60), st.integers(0, 255), st.sampled_from("sid")),
    min_size=1, max_size=4))
def test_the_compiled_reading_of_damaged_changes_is_the_reference(
        record: tuple, edits: list[tuple[int, int, str]]) -> None:
    """PartitionChangeRecord values with bytes set, inserted or deleted after their
    frame (the bytes the compiled core reads itself, tags and lengths among them): the
    compiled apply_changes and apply_changes_py take the same records, leave the same
    payloads and build the same image."""
    value = bytearray(_value(record))
    for at, byte, how in edits:
        at = 3 + at % max(1, len(value) - 3)
        if how == "s" and at < len(value):
            value[at] = byte
        elif how == "i":
            value.insert(at, byte)
        elif at < len(value):
            del value[at]
    values, offsets = [bytes(value), _value(TAKEN[0])], [9, 10]
    results = []
    for way in (compiled.apply_changes, None):
        saved = payload_module._DECODED, replay_module._compiled_changes
        payload_module._DECODED, replay_module._compiled_changes = {}, way
        try:
            replay = Replay(_image())
            got = replay.apply_quiet(values, offsets)
            results.append((got, replay.image.to_json(), replay.image.changed_partition))
        finally:
            payload_module._DECODED, replay_module._compiled_changes = saved
    assert results[0] == results[1]


@pytest.mark.parametrize("way", WAYS)
def test_topic_ids_alike_in_their_first_bytes_stay_apart(
        way: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled reading keeps the text of the topic ids met last by their first
    bytes: two ids that share them must each find their own topic."""
    _way(way, monkeypatch)
    ids = [base64.urlsafe_b64encode(b"same-8by" + tail).rstrip(b"=").decode()
           for tail in (b"-topic-1", b"-topic-2")]
    image = _image()
    for n, tid in enumerate(ids):
        image.apply_all([topic(f"t{n}", tid), partition(tid, replicas=[1, 2, 3])])
    values = [_value(change(tid, isr=[1, 2, 3][:k + 1], leader=1))
              for k in range(3) for tid in ids]
    reference = Replay(image.copy())
    replay = Replay(image)
    assert replay.apply_quiet(values, list(range(len(values)))) == (len(values), None)
    for n, value in enumerate(values):
        assert reference.problems(decode_metadata(value), n) == []
    assert image.to_json() == reference.image.to_json()
    assert [image.topics[t]["partitions"][0]["isr"] for t in ids] == [[1, 2, 3]] * 2


class _Heard:
    """A watch that writes down what it hears of the applied records: the offset of
    each, and the moves (kmeta.core.lifecycle.count_moves) of each partition change,
    summed per node."""

    def __init__(self, image: MetadataImage) -> None:
        self.image = image
        self.offsets: list[int] = []
        self.moves: dict[int, list[int]] = {}

    def before(self, type_name: str, data: Any) -> None:
        self.image.changed_partition = None

    def after(self, type_name: str, data: Any, offset: int, timestamp: int | None) -> None:
        from kmeta.core.lifecycle import count_moves

        change = self.image.changed_partition if type_name == "PARTITION_CHANGE_RECORD" \
            else None
        if change is not None:
            count_moves(self.moves, *change)
        self.offsets.append(offset)

    def applied(self, moves: list) -> None:
        last, counts = moves[:2]
        self.offsets.append(last)
        for node, c in counts.items():
            mine = self.moves.setdefault(node, [0, 0, 0])
            for k in range(3):
                mine[k] += c[k]


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("root", ["fixtures", "real"])
def test_a_watch_hears_the_quick_way_as_the_plain_one(
        root: str, way: str, real_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a watch that takes records applied in bulk (kmeta report's lifecycles), the
    quick way tells it what the plain way's before and after do, record by record."""
    from kmeta.ops.replay.process import _watched

    _way(way, monkeypatch)
    told = 0
    for files in _metadata_files(FIXTURES if root == "fixtures" else real_data):
        log = files[0].suffix == ".log"
        quick = Replay(MetadataImage.empty(), log=log)
        plain = Replay(straightforward(MetadataImage.empty()), log=log)
        quick.watch, plain.watch = _Heard(quick.image), _Heard(plain.image)
        for values, offsets in _batches(files):
            i = 0
            while i < len(values):
                j, payload = quick.apply_quiet(values, offsets, i)
                if payload is None:
                    break
                if payload.type != "NO_OP_RECORD":
                    _watched(quick)(payload, offsets[j], 0)
                i = j + 1
            for value, offset in zip(values, offsets, strict=True):
                payload = decode_metadata(value)
                if payload.type != "NO_OP_RECORD":
                    _watched(plain)(payload, offset, 0)
        # the bulk path tells the last offset of each call: the plain one's, each record
        assert set(quick.watch.offsets) <= set(plain.watch.offsets), files
        assert quick.watch.offsets[-1:] == plain.watch.offsets[-1:], files
        assert quick.watch.moves == plain.watch.moves, files
        told += len(plain.watch.offsets)
    assert told > 1000


class _Moves:
    """A watch that takes records in bulk and keeps every moves list it is told."""

    def __init__(self) -> None:
        self.told: list[list] = []

    def applied(self, moves: list) -> None:
        self.told.append([moves[0], {n: list(c) for n, c in moves[1].items()}])


@pytest.mark.parametrize("way", WAYS)
def test_only_a_batch_that_changes_a_node_s_state_counts_its_moves(
        way: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """kmeta report's watch takes a partition change's moves only in a batch that also
    holds a broker's or a controller's record (Lifecycles drops them at the next batch):
    the quick way counts them for a whole batch only then, and always for records given
    apart from their batch; the compiled loop and its pure twin alike."""
    _way(way, monkeypatch)
    moved = [_value(change(T1, isr=[1])), _value(change(T1, leader=2, isr=[2]))]
    fence = _value(("BROKER_REGISTRATION_CHANGE_RECORD", 0, {"brokerId": 1, "brokerEpoch": 10,
                                                            "fenced": 1}))
    cases = [(moved, True, {}), (moved, False, {1: [1, 1, 0], 2: [1, 0, 1]}),
             (moved + [fence], True, {1: [1, 1, 0], 2: [1, 0, 1]})]
    for values, whole, counted in cases:
        replay = Replay(_image())
        replay.watch = _Moves()
        at, _ = replay.apply_quiet(values, list(range(10, 10 + len(values))), 0, True, whole)
        assert at == 2
        assert replay.watch.told == [[11, counted]], (whole, len(values))
