"""The records of ``__remote_log_metadata``, the topic-based remote log metadata manager's
log (KIP-405), in kmeta's schema language.

Facts from Kafka's schema files (``storage/src/main/resources/message/`` at apache/kafka
1eb7644, unchanged to the end of 2024): four record types, framed exactly as metadata
records are (unsigned varint frame version 1, apiKey, version, then the body: Kafka's
``RemoteLogMetadataSerde`` is an ``AbstractApiMessageSerde``), so they decode through the
same framing as :func:`kmeta.formats.payload.decode_metadata`.  The key is not used (the
producer writes null keys); a record's partition in the topic is that of its user
partition as :func:`metadata_partition` computes.

The states are Kafka's ``RemoteLogSegmentState`` and ``RemotePartitionDeleteState`` (ids
in the records' int8 state fields), with their allowed transitions.

Kafka before 3.8 (KAFKA-16161 removed it) also kept a ``remote_log_snapshot`` file in each
user partition's dir (:func:`parse_remote_log_snapshot`).
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass
from typing import Any

from kmeta.errors import FormatError
from kmeta.formats.payload import Payload, decode_framed
from kmeta.formats.schema import F, M, Message

__all__ = ["REMOTE_LOG_MESSAGES", "SEGMENT_STATES", "DELETE_STATES", "decode_remote_log_metadata",
           "metadata_partition", "parse_remote_log_snapshot", "valid_segment_transition"]

_TOPIC_ID_PARTITION = (
    F("Name", "string"),
    F("Id", "uuid"),
    F("Partition", "int32"),
)

_SEGMENT_LEADER_EPOCHS = F("SegmentLeaderEpochs", "[]SegmentLeaderEpochEntry", fields=(
    F("LeaderEpoch", "int32"),
    F("Offset", "int64"),
))

_SEGMENT_ID = F("RemoteLogSegmentId", "RemoteLogSegmentIdEntry", fields=(
    F("TopicIdPartition", "TopicIdPartitionEntry", fields=_TOPIC_ID_PARTITION),
    F("Id", "uuid"),
))

# A segment's facts, the same in the record that adds it and in a snapshot's entry.
_SEGMENT = (
    F("StartOffset", "int64"),
    F("EndOffset", "int64"),
    F("BrokerId", "int32"),
    F("MaxTimestampMs", "int64"),
    F("EventTimestampMs", "int64"),
    _SEGMENT_LEADER_EPOCHS,
    F("SegmentSizeInBytes", "int32"),
    F("CustomMetadata", "bytes", nullable="0+", default="null"),
    F("RemoteLogSegmentState", "int8"),
)

REMOTE_LOG_SEGMENT_METADATA = M(
    "RemoteLogSegmentMetadataRecord", 0, "0", "0+",
    _SEGMENT_ID,
    *_SEGMENT,
)

REMOTE_LOG_SEGMENT_METADATA_UPDATE = M(
    "RemoteLogSegmentMetadataUpdateRecord", 1, "0", "0+",
    _SEGMENT_ID,
    F("BrokerId", "int32"),
    F("EventTimestampMs", "int64"),
    F("CustomMetadata", "bytes", nullable="0+", default="null"),
    F("RemoteLogSegmentState", "int8"),
)

REMOTE_PARTITION_DELETE_METADATA = M(
    "RemotePartitionDeleteMetadataRecord", 2, "0", "0+",
    F("TopicIdPartition", "TopicIdPartitionEntry", fields=_TOPIC_ID_PARTITION),
    F("BrokerId", "int32"),
    F("EventTimestampMs", "int64"),
    F("RemotePartitionDeleteState", "int8"),
)

REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT = M(
    "RemoteLogSegmentMetadataSnapshotRecord", 3, "0", "0+",
    F("SegmentId", "uuid"),
    *_SEGMENT,
)

REMOTE_LOG_MESSAGES: dict[int, Message] = {m.api_key: m for m in (  # type: ignore[misc]
    REMOTE_LOG_SEGMENT_METADATA, REMOTE_LOG_SEGMENT_METADATA_UPDATE,
    REMOTE_PARTITION_DELETE_METADATA, REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT)}

SEGMENT_STATES = {0: "COPY_SEGMENT_STARTED", 1: "COPY_SEGMENT_FINISHED",
                  2: "DELETE_SEGMENT_STARTED", 3: "DELETE_SEGMENT_FINISHED"}
DELETE_STATES = {0: "DELETE_PARTITION_MARKED", 1: "DELETE_PARTITION_STARTED",
                 2: "DELETE_PARTITION_FINISHED"}

# RemoteLogSegmentState.isValidTransition: the states a segment may move to from each
# (None: not seen yet); staying in the same state is allowed, for retries.
_SEGMENT_NEXT = {None: {0}, 0: {1, 2}, 1: {2}, 2: {3}, 3: set()}


def valid_segment_transition(current: int | None, target: int) -> bool:
    return target == current or target in _SEGMENT_NEXT.get(current, set())


def decode_remote_log_metadata(key: bytes | None, value: bytes | None) -> Payload:
    """One ``__remote_log_metadata`` record; F012 when it breaks its schema, F013 for an
    apiKey or version kmeta does not know."""
    return decode_framed(value, REMOTE_LOG_MESSAGES, "__remote_log_metadata",
                         unknown="F013", broken="F012")


def _murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2`` (the partitioner's hash), as a signed 32-bit int."""
    m, r = 0x5BD1E995, 24
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    tail = length % 4
    base = length - tail
    if tail == 3:
        h ^= data[base + 2] << 16
    if tail >= 2:
        h ^= data[base + 1] << 8
    if tail >= 1:
        h ^= data[base]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def _java_hash(values: tuple[int, ...]) -> int:
    """``java.util.Objects.hash`` of boxed longs/ints: 31 * h + element hash, as int32."""
    h = 1
    for v in values:
        h = (31 * h + v) & 0xFFFFFFFF
    return h


def _long_hash(v: int) -> int:
    v &= 0xFFFFFFFFFFFFFFFF
    return (v ^ (v >> 32)) & 0xFFFFFFFF


def metadata_partition(topic_id: str, partition: int, partitions: int) -> int:
    """The ``__remote_log_metadata`` partition that holds a user partition's records, as
    Kafka's ``RemoteLogMetadataTopicPartitioner`` computes it: murmur2 of the big-endian
    ``Objects.hash(leastSigBits, mostSigBits, partition)``, made positive, mod the count."""
    u = uuid.UUID(bytes=_uuid_bytes(topic_id)).int
    most, least = u >> 64, u & 0xFFFFFFFFFFFFFFFF
    h = _java_hash((_long_hash(least), _long_hash(most), partition & 0xFFFFFFFF))
    return (_murmur2(struct.pack(">I", h)) & 0x7FFFFFFF) % partitions


def _uuid_bytes(topic_id: str) -> bytes:
    """A topic id as Kafka prints it (url-safe base64, 22 chars) or in the 8-4-4-4-12 form."""
    import base64

    if len(topic_id) == 22:
        return base64.urlsafe_b64decode(topic_id + "==")
    return uuid.UUID(topic_id).bytes


# ---------------------------------------------------------------- the remote_log_snapshot file

#: The file the topic-based remote log metadata manager kept in a user partition's dir,
#: until Kafka 3.8 removed it (KAFKA-16161).
REMOTE_LOG_SNAPSHOT_FILE = "remote_log_snapshot"
_SNAPSHOT_HEADER = struct.Struct(">hiqi")  # version, metadata partition, its offset, count


@dataclass(frozen=True)
class RemoteLogSnapshot:
    """``remote_log_snapshot``: which ``__remote_log_metadata`` partition and offset it was
    taken at, and the remote segments' metadata it held (each decoded as the
    ``RemoteLogSegmentMetadataSnapshotRecord`` it was written as)."""

    version: int | None  # the four header fields are None for an empty file
    metadata_partition: int | None
    metadata_partition_offset: int | None
    declared_entries: int | None
    entries: tuple[dict[str, Any], ...]

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "metadata_partition": self.metadata_partition,
                "metadata_partition_offset": self.metadata_partition_offset,
                "declared_entries": self.declared_entries, "entries": list(self.entries)}


def parse_remote_log_snapshot(data: bytes) -> RemoteLogSnapshot:
    """The file's content, layout as Kafka's ``RemoteLogMetadataSnapshotFile`` wrote it: a
    big-endian header (int16 version 0, int32 metadata partition, int64 offset, int32 entry
    count), then per entry an int32 length and the framed record.  An empty file (Kafka
    created one before it had anything to write) has no header and no entries.  FormatError for anything else
    that does not follow the layout: Kafka refuses such a file too."""
    if not data:
        return RemoteLogSnapshot(None, None, None, None, ())
    if len(data) < _SNAPSHOT_HEADER.size:
        raise FormatError(f"remote_log_snapshot header needs {_SNAPSHOT_HEADER.size} bytes, "
                          f"the file has {len(data)}", position=0)
    version, partition, offset, count = _SNAPSHOT_HEADER.unpack_from(data, 0)
    if version != 0:
        raise FormatError(f"remote_log_snapshot version {version} is not 0", position=0)
    entries = []
    pos = _SNAPSHOT_HEADER.size
    while pos < len(data):
        if pos + 4 > len(data):
            raise FormatError("remote_log_snapshot entry length is cut off", position=pos)
        (length,) = struct.unpack_from(">i", data, pos)
        if length < 0 or pos + 4 + length > len(data):
            raise FormatError(f"remote_log_snapshot entry of {length} bytes runs past the end "
                              "of the file", position=pos)
        p = decode_remote_log_metadata(None, data[pos + 4:pos + 4 + length])
        if p.finding or p.type != REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT.type_name:
            why = p.finding[1] if p.finding else f"a {p.type}, not a segment snapshot record"
            raise FormatError(f"remote_log_snapshot entry {len(entries)}: {why}", position=pos)
        entries.append(p.data)
        pos += 4 + length
    return RemoteLogSnapshot(version, partition, offset, count, tuple(entries))
