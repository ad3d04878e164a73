"""Where bytes lie: the fields of an encoded message, the values of a records section.

A hex dump that must hide a secret needs its byte range, which a decoder that returns only
values does not give.  These walkers read the same encodings as the decoders (``schema``'s
constructs, the v2 record layout of ``batch``) and return positions instead.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any, NamedTuple

import construct as cs

from kmeta.errors import FormatError
from kmeta.formats.primitives import UVarInt, read_varint
from kmeta.formats.schema import Message, StructBody, message_construct

Path = tuple[str, ...]


class Masked(NamedTuple):
    """Bytes left out of a view: ``length`` bytes at ``position`` (from the start of the
    record value, or of the batch for a batch's masks), which hold ``field`` (Kafka's JSON
    name, ``body`` for a record body that cannot be read field by field, ``compressed
    records`` or ``unreadable records`` for a batch's records section from ``position``
    on) of the record at ``offset`` (a batch's masks; None for a records section)."""

    field: str
    position: int
    length: int
    offset: int | None = None


def leaf_spans(message: Message, version: int, buf: bytes, pos: int,
               wanted: frozenset[Path]) -> list[tuple[Path, int, int]]:
    """``(path, position, length)`` of each field of ``wanted`` (paths of JSON names)
    in the body of ``message`` at ``buf[pos:]``: a string's or bytes' content without its
    length prefix, any other field whole.  Raises FormatError or a construct error when
    the body does not read."""
    stream = io.BytesIO(buf)
    stream.seek(pos)
    out: list[tuple[Path, int, int]] = []
    _struct(message_construct(message, version), stream, (), wanted, out)
    if stream.tell() != len(buf):
        raise FormatError(f"{len(buf) - stream.tell()} bytes after the end of the body")
    return out


def _below(path: Path, wanted: frozenset[Path]) -> bool:
    return any(len(w) > len(path) and w[:len(path)] == path for w in wanted)


def _struct(body: StructBody, stream: io.BytesIO, prefix: Path, wanted: frozenset[Path],
            out: list[tuple[Path, int, int]]) -> None:
    ctx = cs.Container()
    for f, con in body.plain:
        path = prefix + (f.json_name,)
        start = stream.tell()
        if path in wanted:
            value = con._parsereport(stream, ctx, f.json_name)
            end = stream.tell()
            if isinstance(value, (bytes, str)):
                n = len(value) if isinstance(value, bytes) else len(value.encode("utf-8"))
                out.append((path, end - n, n))
            elif value is not None:
                out.append((path, start, end - start))
        elif f.is_struct and _below(path, wanted):
            if f.is_array:
                n = con.length._parse(stream, ctx, f.json_name)
                for _ in range(max(n, 0)):
                    _struct(con.item(0), stream, path, wanted, out)
            elif isinstance(con, StructBody):
                _struct(con, stream, path, wanted, out)
            elif cs.Int8sb._parse(stream, ctx, f.json_name) >= 0:  # a nullable struct
                _struct(con.body, stream, path, wanted, out)
        else:
            con._parsereport(stream, ctx, f.json_name)
    if body.flexible:
        uvarint = UVarInt(5)._parse
        for _ in range(uvarint(stream, ctx, "tags")):
            tag = uvarint(stream, ctx, "tag")
            size = uvarint(stream, ctx, "size")
            start = stream.tell()
            if len(stream.read(size)) != size:
                raise FormatError("tagged field ends early")
            if tag in body.tagged:
                path = prefix + (body.tagged[tag][0].json_name,)
                if path in wanted or _below(path, wanted):
                    out.append((path, start, size))  # the tagged field's bytes, whole


class ValueAt(NamedTuple):
    """A record's value in a records section: its offset delta and where its bytes lie."""

    offset_delta: int
    position: int
    length: int


def record_values(section: Any, start: int) -> Iterator[ValueAt]:
    """The value of each v2 record of ``section[start:]``, to the section's end whatever
    a header's count says (a null value is not yielded).  Raises FormatError
    (``position``: the start of the record that does not read) where a record's fields
    do not fill its length exactly, as ``batch._decode_records`` requires."""
    pos, n = start, len(section)
    while pos < n:
        try:
            length, p = read_varint(section, pos)
            end = p + length
            if length < 6 or end > n:
                raise FormatError(f"impossible record length {length}", position=pos)
            p += 1  # attributes
            _, p = read_varint(section, p, 10)  # timestampDelta
            delta, p = read_varint(section, p)
            klen, p = read_varint(section, p)
            p += max(klen, 0)
            vlen, p = read_varint(section, p)
            at = p
            p += max(vlen, 0)
            headers, p = read_varint(section, p)
            for _ in range(headers if 0 <= headers <= end - p else 0):
                hkey, p = read_varint(section, p)
                p += max(hkey, 0)
                hvalue, p = read_varint(section, p)
                p += max(hvalue, 0)
        except IndexError as e:
            raise FormatError("records section ends inside a record", position=pos) from e
        if p != end or klen < -1 or vlen < -1 or not 0 <= headers <= length:
            raise FormatError("a record's fields do not fill its length", position=pos)
        if vlen >= 0:
            yield ValueAt(delta, at, vlen)
        pos = end
