"""The JSON renderer's fast path writes exactly the objects its dict definitions describe."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from kmeta.findings import Finding
from kmeta.formats.batch import Header, build_batch, parse_batch
from kmeta.formats.payload import encode_control, encode_metadata
from kmeta.ops.dump import BatchDump, DumpOptions, FileEvent, OneRecord, dump
from kmeta.render import jsonl, text

NOOP = encode_metadata("NO_OP_RECORD", 0, {})
TOPIC = encode_metadata("TOPIC_RECORD", 0, {"name": "orders", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"})


def slow_lines(events) -> list[dict]:
    out = []
    for ev in events:
        if isinstance(ev, (BatchDump, OneRecord)):
            out.append(jsonl.batch_object(ev.batch))
            for e in ev.entries:
                if isinstance(e, Finding):
                    out.append(e.to_json())
                else:
                    out.append(jsonl.record_object(ev.batch.file, ev.batch, e[0], e[1]))
        elif isinstance(ev, Finding):
            out.append(ev.to_json())
        elif isinstance(ev, FileEvent):
            out.append(jsonl.file_object(ev))
    return json.loads(jsonl.dumps(out))


def fast_lines(events, utf8: bool = False) -> list[dict]:
    return [json.loads(line) for chunk in jsonl.render(events, utf8=utf8)
            for line in (chunk.decode() if type(chunk) is bytes else chunk).split("\n")]


def log_dir(tmp_path, batches: list[bytes]):
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(b"".join(batches))
    return d


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["noop", "topic", "pair", "control", "headers"]),
                          st.integers(0, 2**31 - 1), st.booleans(), st.integers(0, 4),
                          st.integers(-1, 2**40)), min_size=1, max_size=12))
def test_fast_json_equals_definitions(tmp_path_factory, specs):
    tmp_path = tmp_path_factory.mktemp("r")
    batches = []
    offset = 0
    for kind, epoch, txn, codec, pid in specs:
        kw = dict(leader_epoch=epoch % 100, transactional=txn, compression=codec,
                  producer_id=pid, producer_epoch=0 if pid >= 0 else -1,
                  base_sequence=3 if pid >= 0 else -1, base_timestamp=1_700_000_000_000)
        if kind == "noop":
            recs = [(None, NOOP)]
        elif kind == "topic":
            recs = [(None, TOPIC)]
        elif kind == "pair":
            recs = [(None, TOPIC), (None, NOOP)]
        elif kind == "headers":
            recs = [(None, NOOP, [Header("h", b"v")])]
        else:
            recs = [encode_control("LEADER_CHANGE", {"version": 0, "leaderId": 1,
                                                     "voters": [], "grantingVoters": []})]
            kw["control"] = True
        batches.append(build_batch(offset, recs, **kw))
        offset += len(recs)
    events = list(dump([log_dir(tmp_path, batches)], DumpOptions()))
    assert fast_lines(events) == slow_lines(events)
    assert fast_lines(events, utf8=True) == slow_lines(events)  # record_lines too


def test_text_batch_line_matches_kafka_dump_log_style():
    b = parse_batch(build_batch(7, [(None, NOOP)], leader_epoch=3, base_timestamp=1000))
    line = text.batch_line(b)
    assert line.startswith("baseOffset: 7 lastOffset: 7 count: 1 baseSequence: -1 "
                           "lastSequence: -1 producerId: -1 producerEpoch: -1 "
                           "partitionLeaderEpoch: 3 isTransactional: false isControl: false "
                           "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1000 ")
    assert line.endswith(f"magic: 2 compresscodec: none crc: {b.crc} isvalid: true")


def test_image_differences_fit_the_terminal_and_keep_both_sides() -> None:
    import io

    from kmeta.environment import Environment
    from kmeta.render.console import clip_width
    from kmeta.render.text import difference_lines

    width = clip_width(Environment(environ={"COLUMNS": "80"}))
    whole = '/topics/clicks: {"partitions":' + "x" * 300 + "} -> (absent)"
    lines = list(difference_lines("image before -> after", [whole, "/a: 1 -> 2"],
                                  width=width))
    assert lines[0] == "  image before -> after: 2 difference(s)"
    assert all(len(line) <= 80 for line in lines), lines
    assert lines[1].endswith("… -> (absent)") and lines[2] == "    /a: 1 -> 2"
    assert lines[-1].endswith("--json has them all, in full")
    # a pipe keeps lines whole, for grep
    pipe = clip_width(Environment(stdout=io.StringIO(), environ={}))
    assert whole in "\n".join(difference_lines("image", [whole], width=pipe))
