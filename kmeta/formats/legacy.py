"""Legacy message sets, magic 0 and 1 (Kafka before 0.11).

Spec: Kafka's ``LegacyRecord`` and ``AbstractLegacyRecordBatch``.  Each entry is
offset int64, size int32, then the message: crc uint32 (CRC-32 of everything after it),
magic int8, attributes int8 (bits 0-2 codec, bit 3 LogAppendTime), timestamp int64 (magic 1
only), key and value as int32-length bytes (-1 null).  A compressed message is a wrapper
whose value is a compressed inner message set; with magic 1 the inner offsets are relative
and the wrapper carries the absolute offset of the last inner message.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import construct as cs

from kmeta.errors import FormatError
from kmeta.formats.batch import LOG_OVERHEAD, Record
from kmeta.formats.compression import CODEC_NAMES, compress, decompress
from kmeta.formats.primitives import derive_struct

LEGACY_PREFIX = cs.Struct(
    "offset" / cs.Int64sb,
    "messageSize" / cs.Int32sb,
    "crc" / cs.Int32ub,
    "magic" / cs.Int8sb,
    "attributes" / cs.Int8sb,
)
PREFIX = derive_struct(LEGACY_PREFIX)  # 18 bytes


def _nullable_bytes32() -> cs.Construct:
    return cs.FocusedSeq(
        "data",
        "length" / cs.Rebuild(cs.Int32sb, lambda c: -1 if c.data is None else len(c.data)),
        "data" / cs.If(cs.this.length >= 0, cs.Bytes(cs.this.length)),
    )


#: The whole legacy entry; ``crc`` must be computed by the caller (see build_message).
LEGACY_MESSAGE = cs.Struct(
    "offset" / cs.Int64sb,
    "messageSize" / cs.Int32sb,
    "crc" / cs.Int32ub,
    "magic" / cs.Int8sb,
    "attributes" / cs.Int8sb,
    "timestamp" / cs.If(cs.this.magic >= 1, cs.Int64sb),
    "key" / _nullable_bytes32(),
    "value" / _nullable_bytes32(),
)

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
MIN_MESSAGE = 4 + 1 + 1 + 4 + 4  # crc, magic, attributes, key length, value length


class LegacyBatch:
    """One top-level legacy message (plain or a compressed wrapper) as found in a file.

    It offers the same reading interface as :class:`~kmeta.formats.batch.Batch`.
    """

    __slots__ = ("file", "position", "offset", "message_size", "crc", "magic", "attributes",
                 "timestamp", "key", "value", "crc_valid", "raw", "_records")

    leader_epoch = -1
    producer_id = -1
    producer_epoch = -1
    base_sequence = -1
    last_sequence = -1
    is_transactional = False
    is_control = False
    delete_horizon_ms = None

    def __init__(self, buf: Any, position: int, file: str | None):
        offset, size, crc, magic, attributes = PREFIX.unpack_from(buf, position)
        end = position + LOG_OVERHEAD + size
        if size < MIN_MESSAGE + (8 if magic == 1 else 0) or end > len(buf):
            raise FormatError(f"legacy message size {size} does not fit", position=position)
        self.file, self.position, self.offset, self.message_size = file, position, offset, size
        self.crc, self.magic, self.attributes = crc, magic, attributes
        self.raw = buf[position:end]
        self.crc_valid = zlib.crc32(self.raw[16:]) == crc
        p = PREFIX.size
        if magic == 1:
            self.timestamp = _I64.unpack_from(self.raw, p)[0]
            p += 8
        else:
            self.timestamp = -1
        self.key, p = _read_bytes(self.raw, p)
        self.value, p = _read_bytes(self.raw, p)
        if p != len(self.raw):
            raise FormatError(f"legacy message has {len(self.raw) - p} stray bytes",
                              position=position + p)
        self._records: list[Record] | None = None

    @property
    def size(self) -> int:
        return self.message_size + LOG_OVERHEAD

    @property
    def codec(self) -> int:
        return self.attributes & 0x07

    @property
    def compression(self) -> str:
        return CODEC_NAMES.get(self.codec, "unknown")

    @property
    def timestamp_type(self) -> str:
        if self.magic == 0:
            return "NoTimestampType"
        return "LogAppendTime" if self.attributes & 0x08 else "CreateTime"

    @property
    def max_timestamp(self) -> int:
        return self.timestamp

    @property
    def base_offset(self) -> int:
        if not self.codec:
            return self.offset
        try:
            return self.records()[0].offset
        except FormatError:
            # Kafka's recovery checks only the wrapper's CRC and offset, so the entry stays;
            # its inner messages are reported where records are decoded (F003/F006).
            return self.offset

    @property
    def last_offset(self) -> int:
        return self.offset

    @property
    def records_count(self) -> int | None:
        return None  # Kafka prints null: a legacy entry has no count field

    @property
    def message_count(self) -> int:
        """How many messages the entry holds: 1, or a compressed wrapper's inner messages
        (0 when they cannot be decoded; that is reported where records are decoded)."""
        if not self.codec:
            return 1
        try:
            return len(self.records())
        except FormatError:
            return 0

    def records(self) -> list[Record]:
        if self._records is None:
            self._records = self._decode()
        return self._records

    def _decode(self) -> list[Record]:
        if not self.codec:
            return [Record(self.offset, self.timestamp, self.key, self.value, ())]
        if self.value is None:
            raise FormatError("compressed wrapper message has no value", position=0)
        inner = decompress(self.codec, bytes(self.value), lz4_any_header_checksum=self.magic == 0)
        out: list[Record] = []
        pos = 0
        while pos < len(inner):
            if len(inner) - pos < PREFIX.size:
                raise FormatError("inner message header truncated", position=0)
            msg = LegacyBatch(inner, pos, self.file)
            if msg.codec:
                raise FormatError("nested compressed message", position=0)
            out.append(Record(msg.offset, msg.timestamp, msg.key, msg.value, ()))
            pos += msg.size
        if not out:
            raise FormatError("compressed wrapper holds no messages", position=0)
        if self.magic >= 1:
            # Inner offsets are relative; the wrapper holds the last absolute offset.
            shift = self.offset - out[-1].offset
            ts = self.timestamp if self.attributes & 0x08 else None
            out = [r._replace(offset=r.offset + shift,
                              timestamp=ts if ts is not None else r.timestamp) for r in out]
        return out

    def header_json(self) -> dict[str, Any]:
        """Same keys as a v2 batch's; fields a legacy message lacks are -1 or null."""
        return {
            "base_offset": self.base_offset,
            "last_offset": self.last_offset,
            "leader_epoch": -1,
            "crc": self.crc,
            "crc_valid": self.crc_valid,
            "max_timestamp": self.timestamp,
            "delete_horizon_ms": None,
            "size": self.size,
            "magic": self.magic,
            "attributes": self.attributes,
            "compression": self.compression,
            "timestamp_type": self.timestamp_type,
            "is_transactional": False,
            "is_control": False,
            "producer_id": -1,
            "producer_epoch": -1,
            "base_sequence": -1,
            "last_sequence": -1,
            "record_count": self.message_count,
        }


def _read_bytes(buf: Any, p: int) -> tuple[bytes | None, int]:
    if p + 4 > len(buf):
        raise FormatError("legacy message field length truncated", position=p)
    (n,) = _I32.unpack_from(buf, p)
    p += 4
    if n < 0:
        return None, p
    if p + n > len(buf):
        raise FormatError(f"legacy message field of {n} bytes does not fit", position=p)
    return bytes(buf[p:p + n]), p + n


def build_message(offset: int, key: bytes | None, value: bytes | None, *, magic: int = 1,
                  timestamp: int = 0, attributes: int = 0, crc: int | None = None) -> bytes:
    """Build one legacy message entry (offset, size, crc, body)."""
    body = bytearray(struct.pack(">bb", magic, attributes))
    if magic == 1:
        body += _I64.pack(timestamp)
    for blob in (key, value):
        body += _I32.pack(-1) if blob is None else _I32.pack(len(blob)) + blob
    value_crc = zlib.crc32(body) if crc is None else crc
    msg = struct.pack(">I", value_crc) + body
    return _I64.pack(offset) + _I32.pack(len(msg)) + msg


def build_compressed(offsets: list[int], items: list[tuple[bytes | None, bytes | None]], *,
                     codec: int, magic: int = 1, timestamp: int = 0) -> bytes:
    """Build a compressed wrapper holding ``items`` at absolute ``offsets``."""
    inner = bytearray()
    for i, (off, (k, v)) in enumerate(zip(offsets, items, strict=True)):
        inner_offset = i if magic >= 1 else off
        inner += build_message(inner_offset, k, v, magic=magic, timestamp=timestamp)
    return build_message(offsets[-1], None, compress(codec, bytes(inner)), magic=magic,
                         timestamp=timestamp, attributes=codec)
