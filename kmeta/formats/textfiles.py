"""The small text files of a Kafka log directory: parse them, and render them back.

Spec (read for facts, in ``apache/kafka``):

* ``server-common/.../CheckpointFile.java`` with ``storage/.../checkpoint/
  LeaderEpochCheckpointFile.java`` and ``OffsetCheckpointFile.java``: a version line
  (always ``0``), an entry-count line, then one entry a line — ``epoch startOffset`` for
  ``leader-epoch-checkpoint``; ``topic partition offset`` for
  ``recovery-point-offset-checkpoint``, ``replication-offset-checkpoint``,
  ``log-start-offset-checkpoint`` and ``cleaner-offset-checkpoint``.  Fields are split on
  runs of Java whitespace.  A zero-length file (Kafka creates the file before it first
  writes it) and a file holding only the version line both read as "no entries".
* ``raft/.../FileQuorumStateStore.java`` and ``raft/src/main/resources/common/message/
  QuorumStateData.json``: ``quorum-state`` is one line of compact JSON, the
  ``QuorumStateData`` fields of ``data_version`` 0 (``clusterId``, ``leaderId``,
  ``leaderEpoch``, ``votedId``, ``appliedOffset``, ``currentVoters``) or 1 (``leaderId``,
  ``leaderEpoch``, ``votedId``, ``votedDirectoryId``), then ``data_version``.
* ``storage/.../checkpoint/PartitionMetadataFile.java``: ``partition.metadata`` is
  ``version: 0`` and ``topic_id: <uuid>``, with no final newline.
* ``metadata/.../properties/MetaProperties*.java`` and ``PropertiesUtils.java``:
  ``meta.properties`` is a ``java.util.Properties`` file.  Version 0 (the default when
  ``version`` is missing) may carry ``broker.id``; version 1 must carry ``cluster.id`` and
  ``node.id``; either may carry ``directory.id``.  Kafka writes it with
  ``Properties.store``: an empty comment line, a date comment, then ``key=value`` lines in
  the iteration order of the JDK's hash table, which this module reproduces.  Kafka
  writes the file as UTF-8 but ``Properties.load(InputStream)`` reads it as ISO-8859-1;
  kmeta reads it the way Kafka does (so every byte survives a round trip) and writes a
  character beyond Latin-1 as a ``\\uXXXX`` escape.

Every ``parse_*`` takes bytes and returns a frozen dataclass with ``to_json()``; every
``build_*`` renders that dataclass to the bytes Kafka itself would write, so
``build_x(parse_x(data)) == data`` for any file Kafka wrote and
``parse_x(build_x(value)) == value`` for any value.  Malformed content raises
:class:`~kmeta.errors.FormatError` with the byte position (and the line number in the
message); no other exception escapes a parser.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from kmeta.errors import FormatError
from kmeta.formats.filenames import OFFSET_CHECKPOINTS
from kmeta.formats.primitives import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    ZERO_UUID,
    uuid_to_str,
)

#: The only checkpoint-file version Kafka has ever written (and the only one it reads).
CHECKPOINT_VERSION = 0

#: The file names that hold offset checkpoints (-> which one), as :mod:`filenames` knows them.
OFFSET_CHECKPOINT_FILES = OFFSET_CHECKPOINTS

# Java's ``\s`` (without UNICODE_CHARACTER_CLASS) and ``Integer/Long.parseInt`` syntax.
_JAVA_WS = " \t\n\x0b\f\r"
_JAVA_WS_RUN = re.compile("[ \t\n\x0b\f\r]+")
_JAVA_INT = re.compile(r"[+-]?[0-9]+\Z")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_KAFKA_UUID = re.compile(r"[A-Za-z0-9_-]{22}(?:==)?\Z")


# ------------------------------------------------------------------------- helpers


class _Line(NamedTuple):
    number: int  # 1-based
    position: int  # byte offset of the line's first byte
    text: str


def _decode_utf8(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise FormatError(f"{what}: line {line}: bytes are not valid UTF-8",
                          position=e.start) from None


def _lines(text: str, latin1: bool = False) -> list[_Line]:
    """Split like Java's ``BufferedReader.readLine``: ``\\n``, ``\\r`` or ``\\r\\n`` end a
    line; a last line without a terminator still counts, an empty remainder does not.
    Positions count UTF-8 bytes, or characters for text decoded as ISO-8859-1."""
    out: list[_Line] = []
    start = 0
    pos = 0
    number = 1
    for m in _LINE_BREAK.finditer(text):
        chunk = text[start:m.start()]
        out.append(_Line(number, pos, chunk))
        size = len(chunk) if latin1 else len(chunk.encode("utf-8", "surrogatepass"))
        pos += size + (m.end() - m.start())
        start = m.end()
        number += 1
    if start < len(text):
        out.append(_Line(number, pos, text[start:]))
    return out


#: Most digits an int64 has (after leading zeros, which Java's parser accepts).
_MAX_DIGITS = len(str(INT64_MAX))


def _shown(text: str, limit: int = 40) -> str:
    """A value quoted for a message, cut short: a hostile line can be megabytes long."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text)} chars)"


def _java_int(text: str, lo: int, hi: int, what: str, line: _Line) -> int:
    if not _JAVA_INT.match(text):
        raise FormatError(f"{what}: line {line.number}: {_shown(text)} is not a number",
                          position=line.position)
    # Judge the length before int(): Python refuses to convert more than 4300 digits
    # (ValueError), and anything past 19 significant digits overflows any Java type.
    digits = text.lstrip("+-").lstrip("0")
    value = int(text) if len(digits) <= _MAX_DIGITS else None
    if value is None or not lo <= value <= hi:
        java = "Integer.parseInt" if hi == INT32_MAX else "Long.parseLong"
        kind = "int32" if hi == INT32_MAX else "int64"
        raise FormatError(f"{what}: line {line.number}: {_shown(text)} is out of range "
                          f"for an {kind} (Kafka's {java} fails with NumberFormatException)",
                          position=line.position)
    return value


def _java_split(line: str) -> list[str]:
    """Java's ``Pattern.compile("\\\\s+").split(line)``: a leading empty field is kept,
    trailing empty fields are dropped."""
    parts = _JAVA_WS_RUN.split(line)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _as_bytes(data: bytes | bytearray | memoryview) -> bytes:
    return data if isinstance(data, bytes) else bytes(data)


def _normalize_uuid(text: str) -> str | None:
    """Kafka's ``Uuid.fromString`` as a check; returns the canonical 22-character form."""
    if not isinstance(text, str) or not _KAFKA_UUID.match(text):
        return None
    try:
        raw = base64.urlsafe_b64decode(text[:22] + "==")
    except (binascii.Error, ValueError):
        return None
    if len(raw) != 16:
        return None
    return uuid_to_str(raw)


def _check_range(value: Any, lo: int, hi: int, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], not {value!r}")


# ---------------------------------------------------------------- checkpoint files


def _parse_checkpoint(data: bytes, what: str, fields: int,
                      decode_entry) -> tuple[int, int, list[Any]]:
    """Kafka's ``CheckpointReadBuffer.read``; returns (version, header_lines, entries)."""
    lines = _lines(_decode_utf8(data, what))
    if not lines:
        return CHECKPOINT_VERSION, 0, []
    version = _java_int(lines[0].text, INT32_MIN, INT32_MAX, f"{what} version", lines[0])
    if version != CHECKPOINT_VERSION:
        raise FormatError(f"{what}: line 1: unsupported version {version} "
                          f"(Kafka reads only version {CHECKPOINT_VERSION})",
                          position=lines[0].position)
    if len(lines) == 1:
        return version, 1, []
    count_line = lines[1]
    count = _java_int(count_line.text, INT32_MIN, INT32_MAX, f"{what} entry count", count_line)
    if count < 0:
        raise FormatError(f"{what}: line 2: negative entry count {count}",
                          position=count_line.position)
    entries = []
    for line in lines[2:]:
        parts = _java_split(line.text)
        if len(parts) != fields:
            raise FormatError(f"{what}: line {line.number}: expected {fields} fields, "
                              f"found {len(parts)}: {line.text!r}", position=line.position)
        entries.append(decode_entry(parts, line))
    if len(entries) != count:
        raise FormatError(f"{what}: line 2: count line says {count} entries but the file "
                          f"holds {len(entries)}", position=count_line.position)
    return version, 2, entries


def _render_checkpoint(version: int, header_lines: int, lines: Iterable[str]) -> bytes:
    out = []
    if header_lines >= 1:
        out.append(f"{version}\n")
    if header_lines >= 2:
        body = list(lines)
        out.append(f"{len(body)}\n")
        out.extend(f"{line}\n" for line in body)
    return "".join(out).encode("utf-8")


def _check_header(version: int, header_lines: int, entries: tuple) -> None:
    if version != CHECKPOINT_VERSION:
        raise ValueError(f"checkpoint files have version {CHECKPOINT_VERSION} only, not {version!r}")
    if header_lines not in (0, 1, 2):
        raise ValueError("header_lines must be 0 (empty file), 1 (version only) or 2")
    if header_lines < 2 and entries:
        raise ValueError("a checkpoint without its count line cannot hold entries")


class _CheckpointFile:
    """What the two checkpoint formats share: a version line, a count line, entries."""

    __slots__ = ()
    entries: tuple
    version: int
    header_lines: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "entries", tuple(self.entries))
        _check_header(self.version, self.header_lines, self.entries)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version if self.header_lines >= 1 else None,
            "count": len(self.entries) if self.header_lines >= 2 else None,
            "entries": [e.to_json() for e in self.entries],
        }


@dataclass(frozen=True, slots=True)
class EpochEntry:
    """One line of ``leader-epoch-checkpoint``: the first offset written in ``epoch``."""

    epoch: int
    start_offset: int

    def __post_init__(self) -> None:
        _check_range(self.epoch, INT32_MIN, INT32_MAX, "epoch")
        _check_range(self.start_offset, INT64_MIN, INT64_MAX, "start_offset")

    def to_json(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "start_offset": self.start_offset}


@dataclass(frozen=True, slots=True)
class LeaderEpochCheckpoint(_CheckpointFile):
    """``leader-epoch-checkpoint``.  ``header_lines`` is 2 for every file Kafka writes; 0
    for a zero-length file and 1 for a file cut after its version line (both of which Kafka
    reads as no entries)."""

    entries: tuple[EpochEntry, ...] = ()
    version: int = CHECKPOINT_VERSION
    header_lines: int = 2



def parse_leader_epoch_checkpoint(data: bytes | bytearray | memoryview) -> LeaderEpochCheckpoint:
    what = "leader-epoch-checkpoint"

    def entry(parts: list[str], line: _Line) -> EpochEntry:
        return EpochEntry(_java_int(parts[0], INT32_MIN, INT32_MAX, f"{what} epoch", line),
                          _java_int(parts[1], INT64_MIN, INT64_MAX, f"{what} start offset", line))

    version, header_lines, entries = _parse_checkpoint(_as_bytes(data), what, 2, entry)
    return LeaderEpochCheckpoint(tuple(entries), version, header_lines)


def build_leader_epoch_checkpoint(value: LeaderEpochCheckpoint) -> bytes:
    return _render_checkpoint(value.version, value.header_lines,
                              (f"{e.epoch} {e.start_offset}" for e in value.entries))


@dataclass(frozen=True, slots=True)
class TopicPartitionOffset:
    """One line of an offset checkpoint file."""

    topic: str
    partition: int
    offset: int

    def __post_init__(self) -> None:
        if (not isinstance(self.topic, str) or not self.topic
                or any(c in _JAVA_WS for c in self.topic)):
            raise ValueError(f"topic must be a non-empty name without whitespace: {self.topic!r}")
        if not _encodable(self.topic):
            raise ValueError(f"topic is not valid Unicode: {self.topic!r}")
        _check_range(self.partition, INT32_MIN, INT32_MAX, "partition")
        _check_range(self.offset, INT64_MIN, INT64_MAX, "offset")

    def to_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "partition": self.partition, "offset": self.offset}


@dataclass(frozen=True, slots=True)
class OffsetCheckpoint(_CheckpointFile):
    """``recovery-point-offset-checkpoint``, ``replication-offset-checkpoint``,
    ``log-start-offset-checkpoint`` or ``cleaner-offset-checkpoint`` (same format; the
    file name says which).  ``header_lines`` as in :class:`LeaderEpochCheckpoint`."""

    entries: tuple[TopicPartitionOffset, ...] = ()
    version: int = CHECKPOINT_VERSION
    header_lines: int = 2



def parse_offset_checkpoint(data: bytes | bytearray | memoryview) -> OffsetCheckpoint:
    what = "offset checkpoint"

    def entry(parts: list[str], line: _Line) -> TopicPartitionOffset:
        if parts[0] == "":
            raise FormatError(f"{what}: line {line.number}: line starts with whitespace",
                              position=line.position)
        return TopicPartitionOffset(
            parts[0],
            _java_int(parts[1], INT32_MIN, INT32_MAX, f"{what} partition", line),
            _java_int(parts[2], INT64_MIN, INT64_MAX, f"{what} offset", line))

    version, header_lines, entries = _parse_checkpoint(_as_bytes(data), what, 3, entry)
    return OffsetCheckpoint(tuple(entries), version, header_lines)


def build_offset_checkpoint(value: OffsetCheckpoint) -> bytes:
    return _render_checkpoint(value.version, value.header_lines,
                              (f"{e.topic} {e.partition} {e.offset}" for e in value.entries))


# ------------------------------------------------------------------- quorum-state

#: data_version -> the QuorumStateData fields of that version, in the order Kafka writes.
QUORUM_STATE_FIELDS: dict[int, tuple[str, ...]] = {
    0: ("clusterId", "leaderId", "leaderEpoch", "votedId", "appliedOffset", "currentVoters"),
    1: ("leaderId", "leaderEpoch", "votedId", "votedDirectoryId"),
}


@dataclass(frozen=True, slots=True)
class QuorumState:
    """``quorum-state``: the KRaft election state a voter persists.

    Fields that a ``data_version`` does not have are ``None``; ``current_voters`` is also
    ``None`` when a version-0 file holds ``"currentVoters":null``.
    """

    data_version: int
    leader_id: int = -1
    leader_epoch: int = -1
    voted_id: int = -1
    voted_directory_id: str | None = None  # version 1
    cluster_id: str | None = None  # version 0
    applied_offset: int | None = None  # version 0
    current_voters: tuple[int, ...] | None = None  # version 0 (nullable)

    def __post_init__(self) -> None:
        if self.data_version not in QUORUM_STATE_FIELDS:
            raise ValueError(f"unknown quorum-state data_version {self.data_version!r}")
        for name in ("leader_id", "leader_epoch", "voted_id"):
            _check_range(getattr(self, name), INT32_MIN, INT32_MAX, name)
        if self.current_voters is not None:
            object.__setattr__(self, "current_voters", tuple(self.current_voters))
            for v in self.current_voters:
                _check_range(v, INT32_MIN, INT32_MAX, "voter id")
        if self.data_version == 0:
            if (not isinstance(self.cluster_id, str) or not _encodable(self.cluster_id)
                    or self.applied_offset is None):
                raise ValueError("data_version 0 needs cluster_id and applied_offset")
            _check_range(self.applied_offset, INT64_MIN, INT64_MAX, "applied_offset")
            if self.voted_directory_id is not None:
                raise ValueError("data_version 0 has no voted_directory_id")
        else:
            if self.voted_directory_id is None or _normalize_uuid(self.voted_directory_id) is None:
                raise ValueError("data_version 1 needs voted_directory_id (a Kafka UUID)")
            object.__setattr__(self, "voted_directory_id",
                               _normalize_uuid(self.voted_directory_id))
            if (self.cluster_id is not None or self.applied_offset is not None
                    or self.current_voters is not None):
                raise ValueError("data_version 1 has no cluster_id, applied_offset or "
                                 "current_voters")

    def to_json(self) -> dict[str, Any]:
        """The JSON object as Kafka writes it: its key names, its key order."""
        values = {
            "clusterId": self.cluster_id,
            "leaderId": self.leader_id,
            "leaderEpoch": self.leader_epoch,
            "votedId": self.voted_id,
            "votedDirectoryId": self.voted_directory_id,
            "appliedOffset": self.applied_offset,
            "currentVoters": (None if self.current_voters is None
                              else [{"voterId": v} for v in self.current_voters]),
        }
        out = {k: values[k] for k in QUORUM_STATE_FIELDS[self.data_version]}
        out["data_version"] = self.data_version
        return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_int(obj: dict, key: str, lo: int, hi: int, pos: int) -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise FormatError(f"quorum-state: line 1: {key} must be an integer, not {v!r}",
                          position=pos)
    if not lo <= v <= hi:
        raise FormatError(f"quorum-state: line 1: {key} {v} is out of range", position=pos)
    return v


def _json_object(text: str, what: str) -> dict[str, Any]:
    """The one JSON object a file holds; FormatError (with its byte position) otherwise."""
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        pos = len(text[:e.pos].encode("utf-8", "surrogatepass"))
        raise FormatError(f"{what}: line {e.lineno}: not JSON: {e.msg}", position=pos) from None
    except (ValueError, RecursionError) as e:
        raise FormatError(f"{what}: line 1: not JSON: {e}", position=0) from None
    if not isinstance(obj, dict):
        raise FormatError(f"{what}: line 1: the JSON value is not an object", position=0)
    return obj


def parse_quorum_state(data: bytes | bytearray | memoryview) -> QuorumState:
    """Parse ``quorum-state``.  Stricter than Kafka in one way: Kafka reads only the first
    line and ignores anything after the JSON value; here the file must hold one JSON object
    and nothing but whitespace around it."""
    raw = _as_bytes(data)
    what = "quorum-state"
    text = _decode_utf8(raw, what)
    obj = _json_object(text, what)
    if "\n" in text.strip() or "\r" in text.strip():
        raise FormatError(f"{what}: the JSON object spans several lines; Kafka reads only "
                          "the first line", position=0)
    if "data_version" not in obj:
        raise FormatError(f"{what}: line 1: no data_version field", position=0)
    version = _json_int(obj, "data_version", INT32_MIN, INT32_MAX, 0)
    if version not in QUORUM_STATE_FIELDS:
        raise FormatError(f"{what}: line 1: unsupported data_version {version} (Kafka knows "
                          f"{min(QUORUM_STATE_FIELDS)}-{max(QUORUM_STATE_FIELDS)})", position=0)
    for key in QUORUM_STATE_FIELDS[version]:
        if key not in obj:
            raise FormatError(f"{what}: line 1: field {key!r} is mandatory in data_version "
                              f"{version}", position=0)
    kw: dict[str, Any] = {
        "data_version": version,
        "leader_id": _json_int(obj, "leaderId", INT32_MIN, INT32_MAX, 0),
        "leader_epoch": _json_int(obj, "leaderEpoch", INT32_MIN, INT32_MAX, 0),
        "voted_id": _json_int(obj, "votedId", INT32_MIN, INT32_MAX, 0),
    }
    if version == 0:
        cluster_id = obj["clusterId"]
        if not isinstance(cluster_id, str) or not _encodable(cluster_id):
            raise FormatError(f"{what}: line 1: clusterId must be a string", position=0)
        kw["cluster_id"] = cluster_id
        kw["applied_offset"] = _json_int(obj, "appliedOffset", INT64_MIN, INT64_MAX, 0)
        voters = obj["currentVoters"]
        if voters is not None:
            if not isinstance(voters, list):
                raise FormatError(f"{what}: line 1: currentVoters must be an array",
                                  position=0)
            ids = []
            for voter in voters:
                if not isinstance(voter, dict) or "voterId" not in voter:
                    raise FormatError(f"{what}: line 1: a currentVoters element has no "
                                      "voterId", position=0)
                ids.append(_json_int(voter, "voterId", INT32_MIN, INT32_MAX, 0))
            voters = tuple(ids)
        kw["current_voters"] = voters
    else:
        uuid = _normalize_uuid(obj["votedDirectoryId"])
        if uuid is None:
            raise FormatError(f"{what}: line 1: votedDirectoryId is not a Kafka UUID: "
                              f"{obj['votedDirectoryId']!r}", position=0)
        kw["voted_directory_id"] = uuid
    return QuorumState(**kw)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def build_quorum_state(value: QuorumState) -> bytes:
    """Jackson's compact ``ObjectNode.toString()``: no spaces, no final newline."""
    return json.dumps(value.to_json(), separators=(",", ":"), ensure_ascii=False).encode("utf-8")


# -------------------------------------------------------------- partition.metadata

#: Kafka's fixed topic id of ``__cluster_metadata`` (``Uuid.METADATA_TOPIC_ID``: 0, 1).
METADATA_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """``partition.metadata``: the topic id of the partition directory it sits in.
    ``topic_id`` is held in Kafka's canonical 22-character form."""

    topic_id: str
    version: int = 0

    def __post_init__(self) -> None:
        _check_range(self.version, 0, INT32_MAX, "version")
        uuid = _normalize_uuid(self.topic_id)
        if uuid is None or uuid == ZERO_UUID:
            raise ValueError(f"topic_id must be a non-zero Kafka UUID, not {self.topic_id!r}")
        object.__setattr__(self, "topic_id", uuid)

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "topic_id": self.topic_id}


def _colon_field(line: _Line, key: str, what: str) -> str:
    parts = re.split("[:][ \t\n\x0b\f\r]+", line.text)
    while parts and parts[-1] == "":
        parts.pop()
    if len(parts) != 2 or parts[0] != key:
        raise FormatError(f"{what}: line {line.number}: expected '{key}: <value>', found "
                          f"{line.text!r}", position=line.position)
    return parts[1]


def parse_partition_metadata(data: bytes | bytearray | memoryview) -> PartitionMetadata:
    """Parse ``partition.metadata``.  Like Kafka, any version >= 0 is accepted; unlike
    Kafka, the key names must be ``version`` and ``topic_id`` and nothing but whitespace may
    follow the second line."""
    what = "partition.metadata"
    text = _decode_utf8(_as_bytes(data), what)
    lines = _lines(text)
    if len(lines) < 2:
        pos = lines[0].position if lines else 0
        raise FormatError(f"{what}: line {len(lines) + 1}: file ends before the "
                          f"{'topic_id' if lines else 'version'} line", position=pos)
    version = _java_int(_colon_field(lines[0], "version", what), INT32_MIN, INT32_MAX,
                        f"{what} version", lines[0])
    if version < 0:
        raise FormatError(f"{what}: line 1: unsupported version {version}",
                          position=lines[0].position)
    raw_id = _colon_field(lines[1], "topic_id", what)
    topic_id = _normalize_uuid(raw_id)
    if topic_id is None:
        raise FormatError(f"{what}: line 2: topic_id is not a Kafka UUID: {raw_id!r}",
                          position=lines[1].position)
    if topic_id == ZERO_UUID:
        raise FormatError(f"{what}: line 2: topic_id is the zero UUID", position=lines[1].position)
    for line in lines[2:]:
        if line.text.strip(_JAVA_WS):
            raise FormatError(f"{what}: line {line.number}: unexpected content after "
                              "topic_id", position=line.position)
    return PartitionMetadata(topic_id, version)


def build_partition_metadata(value: PartitionMetadata) -> bytes:
    return f"version: {value.version}\ntopic_id: {value.topic_id}".encode()


# ------------------------------------------------------------------ meta.properties

META_VERSION, META_CLUSTER_ID, META_NODE_ID = "version", "cluster.id", "node.id"
META_BROKER_ID, META_DIRECTORY_ID = "broker.id", "directory.id"
_META_KNOWN = {META_VERSION, META_CLUSTER_ID, META_NODE_ID, META_BROKER_ID, META_DIRECTORY_ID}


def _java_string_hash(text: str) -> int:
    h = 0
    units = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & 0xFFFFFFFF
    return h


def java_properties_order(keys: Iterable[str]) -> tuple[str, ...]:
    """The order ``Properties.store`` writes ``keys`` (inserted in the given order) on Java 9+,
    where ``Properties`` is backed by a ``ConcurrentHashMap`` with a 16-bucket table: by
    bucket index of the spread hash, then by insertion order within a bucket.  Exact for
    the handful of keys Kafka writes (the table does not grow before 12 keys)."""
    keys = list(keys)
    size = 16
    while len(keys) > size * 3 // 4:
        size *= 2
    buckets: dict[int, list[str]] = {}
    for k in keys:
        h = _java_string_hash(k)
        spread = (h ^ (h >> 16)) & 0x7FFFFFFF
        buckets.setdefault(spread & (size - 1), []).append(k)
    return tuple(k for b in sorted(buckets) for k in buckets[b])


@dataclass(frozen=True, slots=True)
class MetaProperties:
    """``meta.properties`` of a log directory.

    ``node_id`` comes from ``node.id`` in version 1 and ``broker.id`` in version 0.
    ``comments`` are the comment lines (text after ``#``), written first, as Kafka does
    (an empty one, then the date).  ``extra`` keeps properties Kafka does not read, sorted
    by key.
    ``key_order`` is ``None`` when the keys are in the order Kafka writes them, else the
    order found in the file (which also says which keys are present, e.g. a version-0
    file without a ``version`` key).
    """

    version: int = 1
    cluster_id: str | None = None
    node_id: int | None = None
    directory_id: str | None = None
    comments: tuple[str, ...] = ()
    extra: tuple[tuple[str, str], ...] = ()
    key_order: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.version not in (0, 1):
            raise ValueError(f"meta.properties version must be 0 or 1, not {self.version!r}")
        if self.version == 1 and (self.cluster_id is None or self.node_id is None):
            raise ValueError("meta.properties version 1 needs cluster_id and node_id")
        if self.node_id is not None:
            _check_range(self.node_id, INT32_MIN, INT32_MAX, "node_id")
        if self.directory_id is not None:
            uuid = _normalize_uuid(self.directory_id)
            if uuid is None:
                raise ValueError(f"directory_id is not a Kafka UUID: {self.directory_id!r}")
            object.__setattr__(self, "directory_id", uuid)
        object.__setattr__(self, "comments", tuple(self.comments))
        for c in self.comments:
            if "\n" in c or "\r" in c or any(ord(ch) > 0xFF for ch in c):
                raise ValueError(f"a comment must be one line of Latin-1 text: {c!r}")
        object.__setattr__(self, "extra", tuple(sorted((k, v) for k, v in self.extra)))
        names = [k for k, _ in self.extra]
        if len(set(names)) != len(names) or set(names) & self._typed_keys():
            raise ValueError("extra holds a duplicate key or one of the typed keys")
        if self.key_order is not None:
            order = tuple(self.key_order)
            if len(set(order)) != len(order) or not set(order) <= self._available_keys():
                raise ValueError(f"key_order {order!r} names a key without a value")
            needed = self._available_keys() - ({META_VERSION} if self.version == 0 else set())
            if not needed <= set(order):
                raise ValueError(f"key_order {order!r} leaves out a key that has a value")
            if order == self.canonical_order():
                order = None
            object.__setattr__(self, "key_order", order)

    def _id_key(self) -> str:
        return META_NODE_ID if self.version == 1 else META_BROKER_ID

    def _typed_keys(self) -> set[str]:
        return {META_VERSION, META_CLUSTER_ID, self._id_key(), META_DIRECTORY_ID}

    def _values(self) -> dict[str, str]:
        values = {META_VERSION: str(self.version)}
        if self.cluster_id is not None:
            values[META_CLUSTER_ID] = self.cluster_id
        if self.node_id is not None:
            values[self._id_key()] = str(self.node_id)
        if self.directory_id is not None:
            values[META_DIRECTORY_ID] = self.directory_id
        values.update(self.extra)
        return values

    def _available_keys(self) -> set[str]:
        return set(self._values())

    def canonical_order(self) -> tuple[str, ...]:
        """The key order Kafka's ``toProperties()`` + ``store`` produce for these values."""
        inserted = [META_VERSION]
        if self.cluster_id is not None:
            inserted.append(META_CLUSTER_ID)
        if self.node_id is not None:
            inserted.append(self._id_key())
        if self.directory_id is not None:
            inserted.append(META_DIRECTORY_ID)
        inserted.extend(k for k, _ in self.extra)
        return java_properties_order(inserted)

    def items(self) -> list[tuple[str, str]]:
        """The properties in the order they are written."""
        values = self._values()
        order = self.key_order if self.key_order is not None else self.canonical_order()
        return [(k, values[k]) for k in order]

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "cluster_id": self.cluster_id,
            "node_id": self.node_id,
            "directory_id": self.directory_id,
            "extra": dict(self.extra),
            "comments": list(self.comments),
        }


class _Prop(NamedTuple):
    key: str
    value: str
    line: _Line


_PROP_WS = " \t\f"


def _properties_lines(text: str) -> tuple[list[_Line], list[tuple[_Line, str]]]:
    """Java ``Properties.load`` line reading: returns (comment lines, logical lines).

    Natural lines end at ``\\n``, ``\\r`` or ``\\r\\n``; leading blanks are skipped; a line
    whose first character is ``#`` or ``!`` is a comment; a line ending in an odd number of
    backslashes continues on the next (whose leading blanks are skipped).
    """
    comments: list[_Line] = []
    logical: list[tuple[_Line, str]] = []
    natural = _lines(text, latin1=True)
    i = 0
    while i < len(natural):
        line = natural[i]
        body = line.text.lstrip(_PROP_WS)
        i += 1
        if not body:
            continue
        if body[0] in "#!":
            comments.append(line)
            continue
        parts = []
        while True:
            trailing = len(body) - len(body.rstrip("\\"))
            if trailing % 2 == 1:
                parts.append(body[:-1])
                if i >= len(natural):
                    break
                body = natural[i].text.lstrip(_PROP_WS)
                i += 1
                continue
            parts.append(body)
            break
        logical.append((line, "".join(parts)))
    return comments, logical


def _unescape(text: str, line: _Line, what: str = "meta.properties") -> str:
    out = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        i += 1
        if c != "\\":
            out.append(c)
            continue
        if i >= n:
            break  # a lone trailing backslash (continuation into end of file) is dropped
        c = text[i]
        i += 1
        if c == "u":
            digits = text[i:i + 4]
            if len(digits) != 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise FormatError(f"{what}: line {line.number}: malformed \\uxxxx escape",
                                  position=line.position)
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append({"t": "\t", "r": "\r", "n": "\n", "f": "\f"}.get(c, c))
    return "".join(out)


def _split_property(logical: str, line: _Line, what: str = "meta.properties") -> _Prop:
    n = len(logical)
    i = 0
    key_end = n
    value_start = n
    has_sep = False
    while i < n:
        c = logical[i]
        if c == "\\":
            i += 2
            continue
        if c in "=:":
            key_end, value_start, has_sep = i, i + 1, True
            break
        if c in _PROP_WS:
            key_end, value_start = i, i + 1
            break
        i += 1
    j = value_start
    while j < n and logical[j] in _PROP_WS:
        j += 1
    if not has_sep and j < n and logical[j] in "=:":
        j += 1
    while j < n and logical[j] in _PROP_WS:
        j += 1
    return _Prop(_unescape(logical[:key_end], line, what), _unescape(logical[j:], line, what),
                 line)


def _join_surrogates(text: str) -> str:
    """``\\uD83D\\uDE00`` escapes decode to two halves; make them one code point (as Java's
    UTF-16 strings would behave) and refuse a lone half."""
    try:
        return text.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        raise ValueError("lone surrogate") from None


def parse_properties(data: bytes | bytearray | memoryview, what: str) -> dict[str, str]:
    """Any Java properties file (a broker's ``server.properties``) as ``Properties.load``
    reads it: keys to values, the last of a repeated key winning.  ``what`` names the file
    in a FormatError."""
    _, logical = _properties_lines(_as_bytes(data).decode("latin-1"))
    out: dict[str, str] = {}
    for line, body in logical:
        prop = _split_property(body, line, what)
        out[prop.key] = prop.value
    return out


def parse_meta_properties(data: bytes | bytearray | memoryview) -> MetaProperties:
    """Parse ``meta.properties`` as Kafka does: ``Properties.load`` from the raw bytes, which
    reads them as ISO-8859-1 (so byte offsets and character offsets coincide)."""
    what = "meta.properties"
    text = _as_bytes(data).decode("latin-1")
    comment_lines, logical = _properties_lines(text)
    props: dict[str, _Prop] = {}
    for line, body in logical:
        prop = _split_property(body, line)
        try:
            prop = _Prop(_join_surrogates(prop.key), _join_surrogates(prop.value), line)
        except ValueError:
            raise FormatError(f"{what}: line {line.number}: \\u escape makes a lone UTF-16 "
                              "surrogate", position=line.position) from None
        props.pop(prop.key, None)  # a repeated key: the last one wins, in the last place
        props[prop.key] = prop

    def required_int(key: str) -> int:
        prop = props[key]
        return _java_int(prop.value, INT32_MIN, INT32_MAX, f"{what} {key}", prop.line)

    if META_VERSION in props:
        v = props[META_VERSION]
        version = _java_int(_java_trim(v.value), INT32_MIN, INT32_MAX,
                            f"{what} version", v.line)
        if version not in (0, 1):
            raise FormatError(f"{what}: line {v.line.number}: unknown meta.properties version "
                              f"{version}", position=v.line.position)
    else:
        version = 0
    id_key = META_NODE_ID if version == 1 else META_BROKER_ID
    if version == 1:
        for key in (META_CLUSTER_ID, META_NODE_ID):
            if key not in props:
                raise FormatError(f"{what}: version 1 needs {key}", position=0)
    node_id = required_int(id_key) if id_key in props else None
    directory_id = None
    if META_DIRECTORY_ID in props:
        d = props[META_DIRECTORY_ID]
        directory_id = _normalize_uuid(d.value)
        if directory_id is None:
            raise FormatError(f"{what}: line {d.line.number}: directory.id is not a Kafka "
                              f"UUID: {d.value!r}", position=d.line.position)
    cluster = props.get(META_CLUSTER_ID)
    typed = {META_VERSION, META_CLUSTER_ID, id_key, META_DIRECTORY_ID}
    extra = tuple((k, p.value) for k, p in props.items() if k not in typed)
    comments = []
    for line in comment_lines:
        body = line.text.lstrip(_PROP_WS)
        comments.append(body[1:])
    return MetaProperties(
        version=version,
        cluster_id=cluster.value if cluster is not None else None,
        node_id=node_id,
        directory_id=directory_id,
        comments=tuple(comments),
        extra=extra,
        key_order=tuple(props),
    )


def _java_trim(text: str) -> str:
    """``String.trim()``: drop leading and trailing characters up to U+0020."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def _escape(text: str, is_key: bool) -> str:
    """``Properties.saveConvert`` for a ``Writer`` (no ``\\u`` escaping of Latin-1), plus
    ``\\uXXXX`` for characters beyond Latin-1 so the file stays readable as ISO-8859-1."""
    out = []
    for i, c in enumerate(text):
        if c == "\\":
            out.append("\\\\")
        elif c == " ":
            out.append("\\ " if i == 0 or is_key else " ")
        elif c in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[c])
        elif c in "=:#!":
            out.append("\\" + c)
        elif ord(c) > 0xFF:
            units = c.encode("utf-16-be", "surrogatepass")
            out.extend(f"\\u{units[k]:02X}{units[k + 1]:02X}" for k in range(0, len(units), 2))
        else:
            out.append(c)
    return "".join(out)


def build_meta_properties(value: MetaProperties) -> bytes:
    """Render as ``Properties.store`` does (``#comment`` lines, then ``key=value``)."""
    lines = [f"#{c}\n" for c in value.comments]
    lines.extend(f"{_escape(k, True)}={_escape(v, False)}\n" for k, v in value.items())
    return "".join(lines).encode("latin-1")


__all__ = [
    "CHECKPOINT_VERSION",
    "OFFSET_CHECKPOINT_FILES",
    "QUORUM_STATE_FIELDS",
    "EpochEntry",
    "LeaderEpochCheckpoint",
    "MetaProperties",
    "OffsetCheckpoint",
    "PartitionMetadata",
    "QuorumState",
    "TopicPartitionOffset",
    "build_leader_epoch_checkpoint",
    "build_meta_properties",
    "build_offset_checkpoint",
    "build_partition_metadata",
    "build_quorum_state",
    "java_properties_order",
    "parse_leader_epoch_checkpoint",
    "parse_meta_properties",
    "parse_offset_checkpoint",
    "parse_partition_metadata",
    "parse_properties",
    "parse_quorum_state",
]


@dataclass(frozen=True)
class CleanShutdown:
    """``.kafka_cleanshutdown``: the broker shut down cleanly, so its logs need no recovery.
    Before Kafka 3.7 the file is empty (``version`` and ``broker_epoch`` are None); since
    then it holds the broker epoch at shutdown."""

    version: int | None = None
    broker_epoch: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "brokerEpoch": self.broker_epoch}


def parse_clean_shutdown(data: bytes | bytearray | memoryview) -> CleanShutdown:
    """Parse ``.kafka_cleanshutdown``.  Like Kafka's reader, unknown keys are ignored."""
    what = ".kafka_cleanshutdown"
    text = _decode_utf8(_as_bytes(data), what)
    if not text.strip(_JAVA_WS):
        return CleanShutdown()
    obj = _json_object(text, what)
    fields = {}
    for key, lo, hi in (("version", INT32_MIN, INT32_MAX), ("brokerEpoch", INT64_MIN, INT64_MAX)):
        v = obj.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi):
            raise FormatError(f"{what}: {key} must be an integer, not {v!r}", position=0)
        fields[key] = v
    return CleanShutdown(fields["version"], fields["brokerEpoch"])
