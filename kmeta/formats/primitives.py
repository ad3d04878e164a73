"""Kafka's primitive encodings as construct types, plus fast readers derived from them.

Spec: Kafka's ``ByteUtils`` (unsigned and zigzag varints/varlongs) and ``Uuid`` (16 bytes
printed as URL-safe base64 without padding).  The construct classes are the definitions;
the ``read_*`` functions are the hot-path twins, proved equal by ``tests/test_primitives.py``.
"""

from __future__ import annotations

import base64
import struct
from typing import Any

import construct as cs

from kmeta.errors import FormatError

#: Java's int and long ranges, which bound every Kafka integer.
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class UVarInt(cs.Construct):
    """Unsigned LEB128 varint, at most ``max_bytes`` long (5 for int32, 10 for int64)."""

    def __init__(self, max_bytes: int = 5):
        super().__init__()
        self.max_bytes = max_bytes

    def _parse(self, stream, context, path):
        value = 0
        shift = 0
        for _ in range(self.max_bytes):
            b = cs.stream_read(stream, 1, path)[0]
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value
            shift += 7
        raise cs.ExplicitError(f"varint longer than {self.max_bytes} bytes", path=path)

    def _build(self, obj, stream, context, path):
        if obj < 0:
            raise cs.ExplicitError(f"unsigned varint cannot hold {obj}", path=path)
        data = encode_uvarint(obj)
        cs.stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context, path):
        raise cs.SizeofError("varint has no fixed size", path=path)


class ZigZagVarInt(cs.Construct):
    """Signed zigzag varint (``max_bytes`` 5) or varlong (``max_bytes`` 10)."""

    def __init__(self, max_bytes: int = 5):
        super().__init__()
        self.raw = UVarInt(max_bytes)

    def _parse(self, stream, context, path):
        v = self.raw._parse(stream, context, path)
        return (v >> 1) ^ -(v & 1)

    def _build(self, obj, stream, context, path):
        self.raw._build(zigzag(obj, 64), stream, context, path)
        return obj

    def _sizeof(self, context, path):
        raise cs.SizeofError("varint has no fixed size", path=path)


VarInt = ZigZagVarInt(5)
VarLong = ZigZagVarInt(10)


def zigzag(value: int, bits: int = 64) -> int:
    return (value << 1) ^ (value >> (bits - 1))


def encode_uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_varint(value: int) -> bytes:
    return encode_uvarint(zigzag(value, 64))


def read_uvarint(buf: Any, pos: int, limit: int = 5) -> tuple[int, int]:
    """Read an unsigned varint of at most ``limit`` bytes at ``pos``; return (value, next pos)."""
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    value = b & 0x7F
    shift = 7
    end = pos + limit
    pos += 1
    while pos < end:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
    raise FormatError(f"varint longer than {limit} bytes", position=pos)


def read_varint(buf: Any, pos: int, limit: int = 5) -> tuple[int, int]:
    """Read a zigzag varint (``limit`` 5) or varlong (``limit`` 10)."""
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    v, pos = read_uvarint(buf, pos, limit)
    return (v >> 1) ^ -(v & 1), pos


_UUIDS: dict[bytes, str] = {}


def uuid_to_str(raw: bytes) -> str:
    """Kafka's ``Uuid.toString``: URL-safe base64 of the 16 bytes, no padding.

    A log names the same few topic and directory ids over and over: they are encoded
    once (the memo stops growing at 65,536 ids)."""
    text = _UUIDS.get(raw)
    if text is None:
        text = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
        if len(_UUIDS) < 65536:
            _UUIDS[bytes(raw)] = text
    return text


def uuid_from_str(text: str) -> bytes:
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"not a Kafka UUID: {text!r}")
    return raw


class KafkaUuid(cs.Adapter):
    """16 raw bytes shown as Kafka's base64 UUID string."""

    def __init__(self):
        super().__init__(cs.Bytes(16))

    def _decode(self, obj, context, path):
        return uuid_to_str(obj)

    def _encode(self, obj, context, path):
        return uuid_from_str(obj)


ZERO_UUID = uuid_to_str(bytes(16))


def derive_struct(definition: cs.Struct, only: tuple[str, ...] | None = None
                  ) -> struct.Struct:
    """A ``struct.Struct`` with the layout of a construct Struct of fixed big-endian fields.

    This is how hot paths read a format without writing its layout a second time.
    ``only``: these fields are unpacked, the others skipped as padding (the layout
    ends with the last field named).
    """
    codes = []
    for sub in definition.subcons:
        fmt = sub.subcon.fmtstr
        if fmt[0] != ">":
            raise TypeError(f"{sub.name} is not a big-endian fixed-size field")
        codes.append(fmt[1:] if only is None or sub.name in only
                     else f"{struct.calcsize(fmt)}x")
    if only is not None:
        last = max(i for i, sub in enumerate(definition.subcons) if sub.name in only)
        codes = codes[:last + 1]
    return struct.Struct(">" + "".join(codes))
