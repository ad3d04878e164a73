"""Checkpoint files, quorum-state, partition.metadata and meta.properties."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kmeta.errors import FormatError
from kmeta.formats import textfiles as tf
from kmeta.formats.primitives import uuid_to_str

INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
JAVA_WS = " \t\n\x0b\f\r"

# ----------------------------------------------------------------------- strategies

epoch_entries = st.builds(tf.EpochEntry, INT32, INT64)


@st.composite
def leader_epoch_checkpoints(draw):
    header_lines = draw(st.sampled_from([2, 2, 2, 1, 0]))
    entries = draw(st.lists(epoch_entries, max_size=20)) if header_lines == 2 else []
    return tf.LeaderEpochCheckpoint(tuple(entries), 0, header_lines)


topics = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=JAVA_WS),
                 min_size=1, max_size=30)
tp_offsets = st.builds(tf.TopicPartitionOffset, topics, INT32, INT64)


@st.composite
def offset_checkpoints(draw):
    header_lines = draw(st.sampled_from([2, 2, 2, 1, 0]))
    entries = draw(st.lists(tp_offsets, max_size=20)) if header_lines == 2 else []
    return tf.OffsetCheckpoint(tuple(entries), 0, header_lines)


kafka_uuids = st.binary(min_size=16, max_size=16).map(uuid_to_str)
nonzero_uuids = st.binary(min_size=16, max_size=16).filter(any).map(uuid_to_str)
unicode_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)


@st.composite
def quorum_states(draw):
    common = {"leader_id": draw(INT32), "leader_epoch": draw(INT32), "voted_id": draw(INT32)}
    if draw(st.booleans()):
        voters = draw(st.none() | st.lists(INT32, max_size=5).map(tuple))
        return tf.QuorumState(0, cluster_id=draw(unicode_text), applied_offset=draw(INT64),
                              current_voters=voters, **common)
    return tf.QuorumState(1, voted_directory_id=draw(kafka_uuids), **common)


partition_metadatas = st.builds(tf.PartitionMetadata, nonzero_uuids,
                                st.integers(0, 2**31 - 1))

latin1_line = st.text(st.characters(max_codepoint=0xFF, blacklist_characters="\r\n"),
                      max_size=40)


@st.composite
def meta_properties(draw):
    version = draw(st.sampled_from([0, 1]))
    if version == 1:
        cluster_id, node_id = draw(unicode_text), draw(INT32)
    else:
        cluster_id = draw(st.none() | unicode_text)
        node_id = draw(st.none() | INT32)
    directory_id = draw(st.none() | kafka_uuids)
    typed = {"version", "cluster.id", "directory.id", "node.id" if version else "broker.id"}
    extra_keys = draw(st.lists(unicode_text.filter(lambda k: k not in typed),
                               unique=True, max_size=4))
    extra = tuple((k, draw(unicode_text)) for k in extra_keys)
    comments = tuple(draw(st.lists(latin1_line, max_size=3)))
    value = tf.MetaProperties(version, cluster_id, node_id, directory_id, comments, extra)
    if draw(st.booleans()):
        keys = [k for k, _ in value.items()]
        if version == 0 and draw(st.booleans()):
            keys.remove("version")
        value = tf.MetaProperties(version, cluster_id, node_id, directory_id, comments, extra,
                                  tuple(draw(st.permutations(keys))))
    return value


# Text made of the characters these formats are built from, so that the fuzzing reaches
# past the first check.
format_alphabet = st.sampled_from(list("0123456789-+ \t\n\r:=#!\\u{}[],\"abcdefAZ_.") +
                                  ["version", "topic_id", "data_version", "leaderId",
                                   "clusterId", "node.id", "cluster.id", "\xe9", "\u20ac"])
format_text = st.lists(format_alphabet, max_size=60).map(lambda xs: "".join(xs).encode())
any_bytes = st.binary(max_size=200) | format_text

PARSERS = [
    tf.parse_leader_epoch_checkpoint,
    tf.parse_offset_checkpoint,
    tf.parse_quorum_state,
    tf.parse_partition_metadata,
    tf.parse_clean_shutdown,
    tf.parse_meta_properties,
]


# --------------------------------------------------------------------- round trips


@given(leader_epoch_checkpoints())
def test_leader_epoch_round_trip(value):
    data = tf.build_leader_epoch_checkpoint(value)
    assert tf.parse_leader_epoch_checkpoint(data) == value
    json.dumps(value.to_json())


@given(offset_checkpoints())
def test_offset_checkpoint_round_trip(value):
    data = tf.build_offset_checkpoint(value)
    assert tf.parse_offset_checkpoint(data) == value
    json.dumps(value.to_json())


@given(quorum_states())
def test_quorum_state_round_trip(value):
    data = tf.build_quorum_state(value)
    assert tf.parse_quorum_state(data) == value
    assert b"\n" not in data
    assert json.loads(data) == value.to_json()


@given(partition_metadatas)
def test_partition_metadata_round_trip(value):
    assert tf.parse_partition_metadata(tf.build_partition_metadata(value)) == value


@given(meta_properties())
def test_meta_properties_round_trip(value):
    data = tf.build_meta_properties(value)
    assert tf.parse_meta_properties(data) == value
    json.dumps(value.to_json())


@pytest.mark.parametrize("parse", PARSERS, ids=lambda f: f.__name__)
@given(data=any_bytes)
def test_any_bytes_give_a_value_or_format_error(parse, data):
    try:
        value = parse(data)
    except FormatError as e:
        assert e.position is not None and 0 <= e.position <= len(data)
        return
    json.dumps(value.to_json())


@given(st.lists(st.sampled_from([b"0\n", b"1\n", b"2\n", b"3 4\n", b"t 1 2\n", b" \n", b"x\n"]),
                max_size=6).map(b"".join))
def test_checkpoint_fuzz_near_valid(data):
    for parse in (tf.parse_leader_epoch_checkpoint, tf.parse_offset_checkpoint):
        with contextlib.suppress(FormatError):
            parse(data)


# ------------------------------------------------------------- checkpoint details


def test_leader_epoch_checkpoint_text():
    data = b"0\n2\n0 0\n5 100\n"
    value = tf.parse_leader_epoch_checkpoint(data)
    assert value.entries == (tf.EpochEntry(0, 0), tf.EpochEntry(5, 100))
    assert value.to_json() == {"version": 0, "count": 2, "entries": [
        {"epoch": 0, "start_offset": 0}, {"epoch": 5, "start_offset": 100}]}
    assert tf.build_leader_epoch_checkpoint(value) == data


def test_checkpoint_accepts_what_kafka_accepts():
    # whitespace runs, CRLF, a last line without newline, trailing blanks
    value = tf.parse_leader_epoch_checkpoint(b"0\r\n2\r\n1\t\t7 \n2  9")
    assert value.entries == (tf.EpochEntry(1, 7), tf.EpochEntry(2, 9))
    assert tf.parse_leader_epoch_checkpoint(b"") == tf.LeaderEpochCheckpoint((), 0, 0)
    assert tf.parse_leader_epoch_checkpoint(b"0\n") == tf.LeaderEpochCheckpoint((), 0, 1)
    assert tf.build_leader_epoch_checkpoint(tf.LeaderEpochCheckpoint((), 0, 1)) == b"0\n"
    assert tf.build_offset_checkpoint(tf.OffsetCheckpoint((), 0, 0)) == b""


@pytest.mark.parametrize(("data", "position", "line", "words"), [
    (b"1\n0\n", 0, 1, "version"),
    (b"x\n0\n", 0, 1, "not a number"),
    (b"0\n2\n1 0\n", 2, 2, "count line says 2"),
    (b"0\n1\n1 0\n2 5\n", 2, 2, "holds 2"),
    (b"0\n-1\n", 2, 2, "negative"),
    (b"0\n1\nx 0\n", 4, 3, "not a number"),
    (b"0\n1\n1 2 3\n", 4, 3, "expected 2 fields"),
    (b"0\n1\n 1 2\n", 4, 3, "expected 2 fields"),
    (b"0\n1\n1 99999999999999999999\n", 4, 3, "out of range"),
    (b"0\n1\n4294967296 0\n", 4, 3, "out of range"),
    (b"0\n1\n\n", 4, 3, "fields"),
    (b"0\n1\n1 0\xff\n", 7, 3, "UTF-8"),
])
def test_leader_epoch_errors(data, position, line, words):
    with pytest.raises(FormatError) as e:
        tf.parse_leader_epoch_checkpoint(data)
    assert e.value.position == position
    assert f"line {line}" in e.value.message
    assert words in e.value.message


def test_offset_checkpoint_text():
    data = b"0\n2\nmy.topic-a 3 17\n__consumer_offsets 0 0\n"
    value = tf.parse_offset_checkpoint(data)
    assert value.entries == (tf.TopicPartitionOffset("my.topic-a", 3, 17),
                             tf.TopicPartitionOffset("__consumer_offsets", 0, 0))
    assert tf.build_offset_checkpoint(value) == data
    with pytest.raises(FormatError, match="line 3"):
        tf.parse_offset_checkpoint(b"0\n1\ntopic 0\n")
    with pytest.raises(FormatError, match="line 3"):
        tf.parse_offset_checkpoint(b"0\n1\ntopic x 0\n")


# ------------------------------------------------------------------ quorum-state


def test_quorum_state_v1_text():
    data = (b'{"leaderId":-1,"leaderEpoch":2,"votedId":1,'
            b'"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}')
    value = tf.parse_quorum_state(data)
    assert value == tf.QuorumState(1, -1, 2, 1, voted_directory_id="J8aAPcfLQt2bqs1JT_rMgQ")
    assert tf.build_quorum_state(value) == data


def test_quorum_state_v0_null_voters():
    data = (b'{"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,'
            b'"currentVoters":null,"data_version":0}')
    value = tf.parse_quorum_state(data)
    assert value.current_voters is None
    assert tf.build_quorum_state(value) == data


@pytest.mark.parametrize(("data", "words"), [
    (b"", "not JSON"),
    (b"[]", "not an object"),
    (b'{"leaderId":1}', "data_version"),
    (b'{"data_version":2}', "unsupported data_version 2"),
    (b'{"data_version":"0"}', "integer"),
    (b'{"leaderId":1,"leaderEpoch":1,"votedId":1,"data_version":1}', "votedDirectoryId"),
    (b'{"clusterId":"","leaderId":1.5,"leaderEpoch":1,"votedId":1,"appliedOffset":0,'
     b'"currentVoters":[],"data_version":0}', "leaderId must be an integer"),
    (b'{"clusterId":"","leaderId":1,"leaderEpoch":1,"votedId":1,"appliedOffset":0,'
     b'"currentVoters":[{"id":1}],"data_version":0}', "voterId"),
    (b'{"leaderId":1,"leaderEpoch":1,"votedId":1,"votedDirectoryId":"nope",'
     b'"data_version":1}', "not a Kafka UUID"),
    (b'{"a":NaN,"data_version":0}', "not JSON"),
    (b'{"data_version":0}\n{"x":1}', "not JSON"),
    (b"[" * 100000, "not JSON"),
])
def test_quorum_state_errors(data, words):
    with pytest.raises(FormatError, match=words):
        tf.parse_quorum_state(data)


def test_quorum_state_json_error_position():
    """The position is in bytes (the é before it is two).  A missing colon, which every
    Python places at the value after the name; a trailing comma is not: 3.13 places it at
    the comma, 3.11 and 3.12 after it."""
    with pytest.raises(FormatError) as e:
        tf.parse_quorum_state('{"clusterId":"\u00e9","leaderId" 1}'.encode())
    assert e.value.position == len('{"clusterId":"\u00e9","leaderId" '.encode())


# ------------------------------------------------------------- partition.metadata


def test_partition_metadata_errors():
    good = b"version: 0\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED5A"
    assert tf.parse_partition_metadata(good + b"\n").topic_id == "B3_HiNPgSQ6oxG9ZZ6ED5A"
    for bad, pos in [(b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", 11),
                     (b"version: -1\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED5A", 0),
                     (b"version 0\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED5A", 0),
                     (b"version: 0\n", 0),
                     (b"version: 0\ntopic_id: B3_HiNPg!Q6oxG9ZZ6ED5A", 11),
                     (good + b"\nmore", len(good) + 1)]:
        with pytest.raises(FormatError) as e:
            tf.parse_partition_metadata(bad)
        assert e.value.position == pos, bad


# ---------------------------------------------------------------- meta.properties


def test_meta_properties_key_order_is_javas():
    value = tf.MetaProperties(1, "q1w2e3r4t5y6u7i8o9p0", 1, "XHhkr4tkSsD900pOQ8pPfg",
                              ("", "Fri Jan 30 16:43:51 UTC 2026"))
    assert tf.build_meta_properties(value) == (
        b"#\n#Fri Jan 30 16:43:51 UTC 2026\nnode.id=1\ndirectory.id=XHhkr4tkSsD900pOQ8pPfg\n"
        b"version=1\ncluster.id=q1w2e3r4t5y6u7i8o9p0\n")
    v0 = tf.MetaProperties(0, "abc", 7)
    assert tf.build_meta_properties(v0) == b"broker.id=7\nversion=0\ncluster.id=abc\n"


def test_meta_properties_java_syntax():
    data = (b"  ! a comment\n"
            b"version : 0\n"
            b"broker.id\t5\n"
            b"cluster.id=ab\\\n"
            b"    cd\\u00e9\\=\n"
            b"other\\ key=x\n")
    value = tf.parse_meta_properties(data)
    assert value.version == 0 and value.node_id == 5
    assert value.cluster_id == "abcd\u00e9="
    assert value.extra == (("other key", "x"),)
    assert value.comments == (" a comment",)
    assert value.key_order == ("version", "broker.id", "cluster.id", "other key")


def test_meta_properties_v0_without_version_key():
    value = tf.parse_meta_properties(b"broker.id=3\ncluster.id=x\n")
    assert value.version == 0 and value.node_id == 3
    assert tf.build_meta_properties(value) == b"broker.id=3\ncluster.id=x\n"
    assert tf.parse_meta_properties(b"") == tf.MetaProperties(0, key_order=())


@pytest.mark.parametrize(("data", "position", "words"), [
    (b"version=2\n", 0, "unknown meta.properties version 2"),
    (b"version=x\n", 0, "not a number"),
    (b"version=1\ncluster.id=a\n", 0, "needs node.id"),
    (b"version=1\nnode.id=1\n", 0, "needs cluster.id"),
    (b"#c\nversion=1\ncluster.id=a\nnode.id=one\n", 26, "line 4"),
    (b"version=1\ncluster.id=a\nnode.id=1\ndirectory.id=xyz\n", 33, "directory.id"),
    (b"x=\xc3\xa9\nversion=1\ncluster.id=a\nnode.id=z\n", 28, "line 4"),
    (b"a=\\u12\n", 0, "uxxxx"),
    (b"a=\\ud800\n", 0, "surrogate"),
])
def test_meta_properties_errors(data, position, words):
    with pytest.raises(FormatError) as e:
        tf.parse_meta_properties(data)
    assert e.value.position == position
    assert words in e.value.message


def test_java_properties_order_known_sets():
    assert tf.java_properties_order(["version", "cluster.id", "node.id"]) == (
        "node.id", "version", "cluster.id")
    assert tf.java_properties_order(["version", "cluster.id", "broker.id", "directory.id"]) == (
        "broker.id", "directory.id", "version", "cluster.id")


# --------------------------------------------------------------------- real files

EPOCHS = {
    "ldi-poc/__cluster_metadata-0": [(1, 0)],
    "ldi-poc/TestTopicPatient-0": [(0, 0)],
    "ldi-poc/Retry.TestTopicPatient-0": [(0, 0)],
    "quorum3-boaz/data/kafka-1/__cluster_metadata-0": [(2, 0), (29, 309), (31, 1396)],
    "quorum3-boaz/data/kafka-2/__cluster_metadata-0": [(2, 0), (29, 309), (31, 1396)],
    "quorum3-boaz/data/kafka-3/__cluster_metadata-0": [(2, 0), (29, 309), (31, 1396),
                                                       (32, 2034)],
    "data-store/kafka-data/__cluster_metadata-0": [
        (1, 0), (2, 239), (3, 406), (4, 696), (5, 747), (6, 7424), (7, 8601), (8, 9184),
        (9, 41579), (10, 66260), (11, 67504), (12, 67641), (13, 72447), (14, 76061),
        (15, 77314)],
}


@pytest.mark.parametrize("partition", sorted(EPOCHS))
def test_real_leader_epoch_checkpoints(real_data, partition):
    data = (real_data / partition / "leader-epoch-checkpoint").read_bytes()
    value = tf.parse_leader_epoch_checkpoint(data)
    assert [(e.epoch, e.start_offset) for e in value.entries] == EPOCHS[partition]
    assert tf.build_leader_epoch_checkpoint(value) == data


QUORUM = {
    "ldi-poc/__cluster_metadata-0": (1, 1, (1,)),
    "data-store/kafka-data/__cluster_metadata-0": (1, 15, (1,)),
    "quorum3-boaz/data/kafka-1/__cluster_metadata-0": (3, 32, (1, 2, 3)),
    "quorum3-boaz/data/kafka-2/__cluster_metadata-0": (1, 31, (1, 2, 3)),
    "quorum3-boaz/data/kafka-3/__cluster_metadata-0": (3, 32, (1, 2, 3)),
}


@pytest.mark.parametrize("partition", sorted(QUORUM))
def test_real_quorum_state(real_data, partition):
    data = (real_data / partition / "quorum-state").read_bytes()
    value = tf.parse_quorum_state(data)
    leader, epoch, voters = QUORUM[partition]
    assert value == tf.QuorumState(0, leader, epoch, -1, cluster_id="", applied_offset=0,
                                   current_voters=voters)
    assert value.to_json()["leaderEpoch"] == epoch
    assert list(value.to_json()) == ["clusterId", "leaderId", "leaderEpoch", "votedId",
                                     "appliedOffset", "currentVoters", "data_version"]
    assert tf.build_quorum_state(value) == data


META = {
    "ldi-poc": ("q1w2e3r4t5y6u7i8o9p0", 1, "XHhkr4tkSsD900pOQ8pPfg"),
    "data-store/kafka-data": ("59e89b28-0084-46-5e-ba95-e812b7283840", 1,
                              "BjblrhBkm9Zc7HPgzt5Y6Q"),
    "quorum3-boaz/data/kafka-1": ("MkU3OEVBNTcwNTJENDM2Qg", 1, None),
    "quorum3-boaz/data/kafka-2": ("MkU3OEVBNTcwNTJENDM2Qg", 2, None),
    "quorum3-boaz/data/kafka-3": ("MkU3OEVBNTcwNTJENDM2Qg", 3, None),
}


@pytest.mark.parametrize("datadir", sorted(META))
def test_real_meta_properties(real_data, datadir):
    data = (real_data / datadir / "meta.properties").read_bytes()
    value = tf.parse_meta_properties(data)
    assert (value.cluster_id, value.node_id, value.directory_id) == META[datadir]
    assert value.version == 1
    assert value.key_order is None  # written in Kafka's own order
    assert value.extra == ()
    assert value.comments[0] == ""
    assert tf.build_meta_properties(value) == data


TOPIC_IDS = {
    "ldi-poc/__cluster_metadata-0": "AAAAAAAAAAAAAAAAAAAAAQ",
    "ldi-poc/TestTopicPatient-0": "B3_HiNPgSQ6oxG9ZZ6ED5A",
    "ldi-poc/Retry.TestTopicPatient-0": "_g4of-T3Rq-jr09kDxtjFA",
    "data-store/kafka-data/__cluster_metadata-0": "AAAAAAAAAAAAAAAAAAAAAQ",
    "quorum3-boaz/data/kafka-1/__cluster_metadata-0": "AAAAAAAAAAAAAAAAAAAAAQ",
}


@pytest.mark.parametrize("partition", sorted(TOPIC_IDS))
def test_real_partition_metadata(real_data, partition):
    data = (real_data / partition / "partition.metadata").read_bytes()
    value = tf.parse_partition_metadata(data)
    assert value == tf.PartitionMetadata(TOPIC_IDS[partition], 0)
    assert tf.build_partition_metadata(value) == data


def test_real_offset_checkpoints(real_data):
    ldi = real_data / "ldi-poc"
    recovery = tf.parse_offset_checkpoint((ldi / "recovery-point-offset-checkpoint").read_bytes())
    assert len(recovery.entries) == 54
    assert recovery.entries[0] == tf.TopicPartitionOffset("__consumer_offsets", 22, 0)
    replication = tf.parse_offset_checkpoint(
        (ldi / "replication-offset-checkpoint").read_bytes())
    assert tf.TopicPartitionOffset("__consumer_offsets", 6, 13) in replication.entries
    assert tf.TopicPartitionOffset("Retry.TestTopicPatient", 0, 0) in replication.entries
    assert tf.parse_offset_checkpoint((ldi / "log-start-offset-checkpoint").read_bytes()) == \
        tf.OffsetCheckpoint((), 0, 2)
    cleaner = tf.parse_offset_checkpoint((ldi / "cleaner-offset-checkpoint").read_bytes())
    assert cleaner == tf.OffsetCheckpoint((), 0, 0)  # zero-length: Kafka reads no entries
    ds = real_data / "data-store" / "kafka-data"
    assert len(tf.parse_offset_checkpoint(
        (ds / "recovery-point-offset-checkpoint").read_bytes()).entries) == 51


def test_every_real_text_file_round_trips(real_data):
    parsers = {
        "leader-epoch-checkpoint": (tf.parse_leader_epoch_checkpoint,
                                    tf.build_leader_epoch_checkpoint),
        "quorum-state": (tf.parse_quorum_state, tf.build_quorum_state),
        "partition.metadata": (tf.parse_partition_metadata, tf.build_partition_metadata),
        "meta.properties": (tf.parse_meta_properties, tf.build_meta_properties),
    }
    for name in tf.OFFSET_CHECKPOINT_FILES:
        parsers[name] = (tf.parse_offset_checkpoint, tf.build_offset_checkpoint)
    seen = 0
    for path in sorted(real_data.rglob("*")):
        if path.name in parsers:
            parse, build = parsers[path.name]
            data = path.read_bytes()
            assert build(parse(data)) == data, path
            seen += 1
    assert seen >= 30


@pytest.mark.parametrize("data, expected", [
    (b"", (None, None)),  # Kafka before 3.7 wrote an empty marker
    (b'{"version":0,"brokerEpoch":53326}', (0, 53326)),
    (b'{"version":0,"brokerEpoch":9,"later":true}', (0, 9)),  # unknown keys are ignored
])
def test_clean_shutdown(data, expected):
    value = tf.parse_clean_shutdown(data)
    assert (value.version, value.broker_epoch) == expected


@pytest.mark.parametrize("data, words", [
    (b"{", "not JSON"),
    (b"[1]", "not an object"),
    (b'{"version":0,"brokerEpoch":"9"}', "brokerEpoch must be an integer"),
    (b'{"version":0,"brokerEpoch":' + b"9" * 30 + b"}", "brokerEpoch must be an integer"),
])
def test_clean_shutdown_errors(data, words):
    with pytest.raises(FormatError) as e:
        tf.parse_clean_shutdown(data)
    assert words in e.value.message
