"""``partition.metadata``: ``version: 0`` and ``topic_id: <uuid>`` (``storage/.../checkpoint/PartitionMetadataFile.java``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kmeta.errors import FormatError
from kmeta.formats.primitives import (
    INT32_MAX,
    INT32_MIN,
    ZERO_UUID,
)
from kmeta.formats.textfiles.javatext import (
    _JAVA_WS,
    _as_bytes,
    _check_range,
    _decode_utf8,
    _java_int,
    _Line,
    _lines,
    _normalize_uuid,
)

#: Kafka's fixed topic id of ``__cluster_metadata`` (``Uuid.METADATA_TOPIC_ID``: 0, 1).
METADATA_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"

#: partition.metadata exactly as Kafka writes it, with a canonical non-zero id (the last of
#: 22 base64 characters carries 2 bits: A, Q, g or w): a broker has thousands, and the
#: full parser, which any other content goes to, costs several times the read.
_AS_WRITTEN = re.compile(rb"version: 0\ntopic_id: ([A-Za-z0-9_-]{21}[AQgw])\n?")


def topic_id_in(data: bytes, loaded: Callable[[], Any]) -> str | None:
    """The topic id of a partition.metadata of ``data``: read off the bytes Kafka writes,
    else from its parsed content (``loaded()``: a :class:`PartitionMetadata`, or None
    where unreadable)."""
    m = _AS_WRITTEN.fullmatch(data)
    if m is not None and m.group(1) != b"AAAAAAAAAAAAAAAAAAAAAA":
        return m.group(1).decode()
    content = loaded()
    return None if content is None else content.topic_id


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
