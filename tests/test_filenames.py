"""File and directory names of a Kafka log directory."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kmeta.formats import filenames as fn
from kmeta.formats.filenames import FileKind, classify

OFFSETS = st.integers(0, 2**63 - 1)
EPOCHS = st.integers(0, 2**31 - 1)
TOPICS = st.from_regex(r"[a-zA-Z0-9._-]{1,60}", fullmatch=True)  # Kafka's legal topic names
UNIQUE_IDS = st.from_regex(r"[0-9a-f]{32}", fullmatch=True)


@given(OFFSETS, st.sampled_from(sorted(fn.OFFSET_FILE_EXTENSIONS)),
       st.sampled_from([None, "deleted", "cleaned", "swap"]), st.booleans())
def test_segment_names_round_trip(offset, ext, suffix, dot):
    name = fn.segment_file_name(offset, "." + ext if dot else ext, suffix)
    assert len(name.split(".")[0]) == 20
    kind = classify(name)
    assert kind == FileKind(fn.OFFSET_FILE_EXTENSIONS[ext], offset, None, suffix)
    assert fn.file_name(kind) == name


@given(OFFSETS, EPOCHS, st.sampled_from([None, "deleted"]))
def test_snapshot_names_round_trip(offset, epoch, suffix):
    name = fn.snapshot_file_name(offset, epoch, suffix)
    assert name[20] == "-" and name[31:42] == ".checkpoint"
    kind = classify(name)
    assert kind == FileKind("kraft-snapshot", offset, epoch, suffix)
    assert fn.file_name(kind) == name


@given(OFFSETS, EPOCHS, st.integers(0, 2**64 - 1))
def test_partial_snapshot_names(offset, epoch, random):
    # Files.createTempFile(dir, "<id>-", ".checkpoint.part")
    name = f"{offset:020d}-{epoch:010d}-{random}.checkpoint.part"
    assert classify(name) == FileKind("kraft-snapshot", offset, epoch, "part")


@given(TOPICS, st.integers(0, 2**31 - 1),
       st.sampled_from([None, "delete", "future", "stray"]), UNIQUE_IDS)
def test_partition_dir_names_round_trip(topic, partition, state, uid):
    name = fn.partition_dir_name(topic, partition, state, uid if state else None)
    parsed = fn.parse_partition_dir_name(name)
    assert parsed == fn.PartitionDirName(topic, partition, state, uid if state else None)
    assert fn.parse_partition_dir(name) == (topic, partition)


@given(st.text(max_size=60) | st.from_regex(r"[0-9a-z.\-]{0,50}", fullmatch=True))
def test_any_name_classifies(name):
    kind = classify(name)
    assert kind.kind in fn.KINDS
    assert kind.suffix in fn.SUFFIXES
    parsed = fn.parse_partition_dir(name)
    assert parsed is None or (parsed[0] and 0 <= parsed[1] < 2**31)


@pytest.mark.parametrize(("name", "expected"), [
    ("00000000000000000000.log", FileKind("segment", 0)),
    ("00000000000000001396.index", FileKind("offset-index", 1396)),
    ("00000000000000001396.timeindex.deleted", FileKind("time-index", 1396, None, "deleted")),
    ("00000000000000001396.txnindex.cleaned", FileKind("txn-index", 1396, None, "cleaned")),
    ("00000000000000001396.log.swap", FileKind("segment", 1396, None, "swap")),
    ("00000000000000077314.snapshot", FileKind("producer-snapshot", 77314)),
    ("00000000000000077314.snapshot.deleted",
     FileKind("producer-snapshot", 77314, None, "deleted")),
    ("00000000000000063224-0000000009.checkpoint", FileKind("kraft-snapshot", 63224, 9)),
    ("00000000000000063224-0000000009.checkpoint.deleted",
     FileKind("kraft-snapshot", 63224, 9, "deleted")),
    ("00000000000000063224-0000000009-8271365.checkpoint.part",
     FileKind("kraft-snapshot", 63224, 9, "part")),
    ("bootstrap.checkpoint", FileKind("bootstrap-checkpoint")),
    ("leader-epoch-checkpoint", FileKind("leader-epoch-checkpoint")),
    ("recovery-point-offset-checkpoint",
     FileKind("offset-checkpoint", checkpoint="recovery-point")),
    ("replication-offset-checkpoint", FileKind("offset-checkpoint", checkpoint="replication")),
    ("log-start-offset-checkpoint", FileKind("offset-checkpoint", checkpoint="log-start")),
    ("cleaner-offset-checkpoint", FileKind("offset-checkpoint", checkpoint="cleaner")),
    ("quorum-state", FileKind("quorum-state")),
    ("partition.metadata", FileKind("partition-metadata")),
    ("meta.properties", FileKind("meta-properties")),
    (".kafka_cleanshutdown", FileKind("clean-shutdown")),
    (".lock", FileKind("lock")),
    ("/data/kafka/__cluster_metadata-0/quorum-state", FileKind("quorum-state")),
    ("quorum-state.tmp", FileKind("unknown")),
    ("00000000000000000000.log.tmp", FileKind("unknown")),
    ("99999999999999999999.log", FileKind("unknown")),  # beyond a Java long
    ("00000000000000063224-9999999999.checkpoint", FileKind("unknown")),  # beyond an int
    ("0000000000000063224-0000000009.checkpoint", FileKind("unknown")),
    ("README.md", FileKind("unknown")),
    ("", FileKind("unknown")),
])
def test_classify_examples(name, expected):
    assert classify(name) == expected
    if name:
        assert classify(Path(name)) == expected


@pytest.mark.parametrize(("name", "expected"), [
    ("__cluster_metadata-0", ("__cluster_metadata", 0)),
    ("Retry.TestTopicPatient-0", ("Retry.TestTopicPatient", 0)),
    ("my-topic-with-dashes-17", ("my-topic-with-dashes", 17)),
    ("a.b-3.0123456789abcdef0123456789abcdef-delete", ("a.b", 3)),
    ("t-1.abc-future", ("t", 1)),
    ("t-1.abc-stray", ("t", 1)),
    ("topic", None),
    ("topic-", None),
    ("-5", None),
    ("topic-x", None),
    ("topic-1-delete", None),  # no uniqueId
    ("topic-99999999999", None),
    ("lost+found", None),
    ("", None),
])
def test_partition_dir_examples(name, expected):
    assert fn.parse_partition_dir(name) == expected


def test_builders_refuse_bad_input():
    with pytest.raises(ValueError):
        fn.segment_file_name(-1)
    with pytest.raises(ValueError):
        fn.segment_file_name(1, "txt")
    with pytest.raises(ValueError):
        fn.snapshot_file_name(1, -1)
    with pytest.raises(ValueError):
        fn.snapshot_file_name(1, 1, "part")
    assert fn.segment_file_name(42) == "00000000000000000042.log"
    assert fn.snapshot_file_name(42, 7) == "00000000000000000042-0000000007.checkpoint"


def test_real_file_names(real_data):
    kinds: dict[str, int] = {}
    for path in sorted(real_data.rglob("*")):
        if path.is_file() and path.name != "README.md":
            kind = classify(path.name)
            assert kind.kind != "unknown", path
            assert kind.suffix is None
            kinds[kind.kind] = kinds.get(kind.kind, 0) + 1
            if kind.base_offset is not None:
                assert fn.file_name(kind) == path.name
        elif path.is_dir() and path.name.endswith("-0"):
            assert fn.parse_partition_dir(path.name) is not None, path
    # data-store 7, kraft-ksql-txn 3 and kraft412-scram-snapshots 13 KRaft snapshots
    assert kinds["kraft-snapshot"] == 23
    assert kinds["bootstrap-checkpoint"] == 8
    assert kinds["producer-snapshot"] == 118
    assert kinds["clean-shutdown"] == 6 and kinds["lock"] == 7
    assert kinds["meta-properties"] == 13
    ds = real_data / "data-store" / "kafka-data" / "__cluster_metadata-0"
    assert classify(ds / "00000000000000063224-0000000009.checkpoint") == \
        FileKind("kraft-snapshot", 63224, 9)
    assert classify(ds / "00000000000000077314.snapshot") == \
        FileKind("producer-snapshot", 77314)
    assert fn.parse_partition_dir(ds.name) == ("__cluster_metadata", 0)
