"""Record batch v2 (magic 2): the 61-byte header, records, and building whole batches.

Spec: Kafka's ``DefaultRecordBatch`` and ``DefaultRecord``.  Header fields are big-endian;
``crc`` is CRC-32C over everything from ``attributes`` to the end of the batch.
Attributes: bits 0-2 compression codec, bit 3 timestamp type (LogAppendTime), bit 4
transactional, bit 5 control, bit 6 delete horizon set (then ``baseTimestamp`` holds the
delete horizon).  A record is: length varint, attributes int8, timestampDelta varlong,
offsetDelta varint, key (varint length, -1 null), value (likewise), header count varint,
headers (key varint length + utf-8, value varint length, -1 null).

``BATCH_HEADER`` is the definition.  ``HEADER`` is a ``struct.Struct`` derived from it
for the hot path, and :func:`decode_records` is the hot-path twin of ``RECORD``.
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Iterator, Sequence
from operator import itemgetter
from typing import Any, NamedTuple

import construct as cs

from kmeta.errors import FormatError
from kmeta.formats.checksum import crc32c
from kmeta.formats.compiled import CORE
from kmeta.formats.compression import (
    CODEC_NAMES,
    CompressionError,
    compress,
    decompress,
    decompress_chunks,
)
from kmeta.formats.primitives import (
    VarInt,
    VarLong,
    derive_struct,
    encode_uvarint,
    read_varint,
    zigzag,
)

BATCH_HEADER = cs.Struct(
    "baseOffset" / cs.Int64sb,
    "batchLength" / cs.Int32sb,
    "partitionLeaderEpoch" / cs.Int32sb,
    "magic" / cs.Int8sb,
    "crc" / cs.Int32ub,
    "attributes" / cs.Int16sb,
    "lastOffsetDelta" / cs.Int32sb,
    "baseTimestamp" / cs.Int64sb,
    "maxTimestamp" / cs.Int64sb,
    "producerId" / cs.Int64sb,
    "producerEpoch" / cs.Int16sb,
    "baseSequence" / cs.Int32sb,
    "recordsCount" / cs.Int32sb,
)




HEADER = derive_struct(BATCH_HEADER)
HEADER_SIZE = HEADER.size  # 61


def _byte_offsets(definition: cs.Struct) -> dict[str, int]:
    out, pos = {}, 0
    for sub in definition.subcons:
        out[sub.name] = pos
        pos += sub.sizeof()
    return out


#: Where each header field starts, in bytes from the start of the batch.
FIELD_BYTES = _byte_offsets(BATCH_HEADER)
#: baseOffset and batchLength: the bytes batchLength does not count.
LOG_OVERHEAD = FIELD_BYTES["partitionLeaderEpoch"]
MAGIC_POSITION = FIELD_BYTES["magic"]
CRC_POSITION = FIELD_BYTES["crc"]
#: The CRC covers the batch from attributes to its end.
CRC_START = FIELD_BYTES["attributes"]

# Where each field sits in an unpacked header, and so in a Batch (a tuple that starts
# with them): the hot loops index batches by these, bound to locals.
_FIELDS = {sub.name: i for i, sub in enumerate(BATCH_HEADER.subcons)}
BASE_OFFSET = _FIELDS["baseOffset"]
BATCH_LENGTH = _FIELDS["batchLength"]
LEADER_EPOCH = _FIELDS["partitionLeaderEpoch"]
MAGIC = _FIELDS["magic"]
CRC = _FIELDS["crc"]
ATTRIBUTES = _FIELDS["attributes"]
LAST_OFFSET_DELTA = _FIELDS["lastOffsetDelta"]
BASE_TIMESTAMP = _FIELDS["baseTimestamp"]
MAX_TIMESTAMP = _FIELDS["maxTimestamp"]
PRODUCER_ID = _FIELDS["producerId"]
PRODUCER_EPOCH = _FIELDS["producerEpoch"]
BASE_SEQUENCE = _FIELDS["baseSequence"]
RECORDS_COUNT = _FIELDS["recordsCount"]
# The slots a Batch adds after the header fields.  LONE: for a batch of one small record
# taken from the memo (see remember_small_record), that memo entry, else None.
CRC_VALID, POSITION, RAW, FILE, LONE = range(len(_FIELDS), len(_FIELDS) + 5)

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_FLAG = 0x08
TRANSACTIONAL_FLAG = 0x10
CONTROL_FLAG = 0x20
DELETE_HORIZON_FLAG = 0x40
#: A batch whose records' timestamps are not plain CreateTime deltas from baseTimestamp,
#: or that holds control records: the flags the fast paths must not see.
NOT_PLAIN_FLAGS = CONTROL_FLAG | DELETE_HORIZON_FLAG | TIMESTAMP_TYPE_FLAG

NO_PRODUCER_ID = -1
NO_SEQUENCE = -1


class Header(NamedTuple):
    key: str
    value: bytes | None


class Record(NamedTuple):
    """One record of a batch, with its absolute offset and timestamp."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    attributes: int = 0
    sequence: int = -1


RECORD = cs.Prefixed(
    VarInt,
    cs.Struct(
        "attributes" / cs.Int8sb,
        "timestampDelta" / VarLong,
        "offsetDelta" / VarInt,
        "keyLength" / cs.Rebuild(VarInt, lambda c: -1 if c.key is None else len(c.key)),
        "key" / cs.If(cs.this.keyLength >= 0, cs.Bytes(cs.this.keyLength)),
        "valueLength" / cs.Rebuild(VarInt, lambda c: -1 if c.value is None else len(c.value)),
        "value" / cs.If(cs.this.valueLength >= 0, cs.Bytes(cs.this.valueLength)),
        "headers" / cs.PrefixedArray(
            VarInt,
            cs.Struct(
                "key" / cs.PascalString(VarInt, "utf8"),
                "valueLength" / cs.Rebuild(VarInt,
                                           lambda c: -1 if c.value is None else len(c.value)),
                "value" / cs.If(cs.this.valueLength >= 0, cs.Bytes(cs.this.valueLength)),
            ),
        ),
    ),
)


def encode_record(offset_delta: int, timestamp_delta: int, key: bytes | None,
                  value: bytes | None, headers: Sequence[Header] = ()) -> bytes:
    """Build one record (used by the writer); equals ``RECORD.build`` byte for byte."""
    body = bytearray(b"\x00")
    body += encode_uvarint(zigzag(timestamp_delta))
    body += encode_uvarint(zigzag(offset_delta))
    for blob in (key, value):
        if blob is None:
            body += b"\x01"
        else:
            body += encode_uvarint(zigzag(len(blob))) + blob
    body += encode_uvarint(zigzag(len(headers)))
    for h in headers:
        k = h.key.encode("utf-8")
        body += encode_uvarint(zigzag(len(k))) + k
        if h.value is None:
            body += b"\x01"
        else:
            body += encode_uvarint(zigzag(len(h.value))) + h.value
    return encode_uvarint(zigzag(len(body))) + bytes(body)


def decode_records(data: bytes, count: int, base_offset: int, base_timestamp: int,
                   base_sequence: int = -1) -> list[Record]:
    """Decode ``count`` records from an uncompressed records section.

    Raises FormatError (position relative to ``data``) when a record does not fit.
    """
    try:
        return _decode_records(data, count, base_offset, base_timestamp, base_sequence)
    except IndexError as e:  # a varint or field ran off the end of ``data``
        raise FormatError("records section ends inside a record", position=len(data)) from e


def _decode_records(data: bytes, count: int, base_offset: int, base_timestamp: int,
                    base_sequence: int, sink: Any = None) -> list[Record]:
    """``sink``: a callable that takes each record instead of the list returned (which is
    then empty): ``_DISCARD`` checks a section without keeping a record."""
    out: list[Record] = []
    append = out.append if sink is None else sink
    new = tuple.__new__  # NamedTuple's own __new__ is a slow Python function
    pos = 0
    n = len(data)
    for i in range(count):
        if pos >= n:
            raise FormatError(f"record {i} of {count} missing: records section ends early",
                              position=pos)
        b = data[pos]
        if b < 0x80:
            length = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            length, pos = read_varint(data, pos)
        end = pos + length
        if length < 6 or end > n:
            raise FormatError(f"record {i} has impossible length {length}", position=pos)
        attributes = data[pos]
        # timestampDelta, offsetDelta, keyLength, valueLength: one-byte varints on the
        # common path; read_varint handles the rest.
        p = pos + 1
        b = data[p]
        if b < 0x80:
            ts_delta = (b >> 1) ^ -(b & 1)
            p += 1
        else:
            ts_delta, p = read_varint(data, p, 10)
        b = data[p]
        if b < 0x80:
            off_delta = (b >> 1) ^ -(b & 1)
            p += 1
        else:
            off_delta, p = read_varint(data, p)
        b = data[p]
        if b == 1:
            key = None
            p += 1
        else:
            klen, p = read_varint(data, p)
            if klen < 0 or p + klen > end:
                raise FormatError(f"record {i} key length {klen} is impossible", position=p)
            key = data[p:p + klen]
            p += klen
        b = data[p]
        if b == 1:
            value = None
            p += 1
        else:
            vlen, p = read_varint(data, p)
            if vlen < 0 or p + vlen > end:
                raise FormatError(f"record {i} value length {vlen} is impossible", position=p)
            value = data[p:p + vlen]
            p += vlen
        if data[p] == 0:
            headers: tuple[Header, ...] = ()
            p += 1
        else:
            headers, p = _decode_headers(data, p, end, i)
        if p != end:
            raise FormatError(f"record {i} has {end - p} bytes beyond its fields", position=p)
        append(new(Record, (base_offset + off_delta, base_timestamp + ts_delta, key, value,
                            headers, attributes,
                            base_sequence + off_delta if base_sequence >= 0 else -1)))
        pos = end
    if pos != n:
        raise FormatError(f"{n - pos} bytes after the last of {count} records", position=pos)
    return out


def _decode_headers(data: bytes, p: int, end: int, i: int) -> tuple[tuple[Header, ...], int]:
    hcount, p = read_varint(data, p)
    if hcount < 0 or hcount > end - p:
        raise FormatError(f"record {i} header count {hcount} is impossible", position=p)
    headers = []
    for _ in range(hcount):
        klen, p = read_varint(data, p)
        if klen < 0 or p + klen > end:
            raise FormatError(f"record {i} header key length {klen} is impossible", position=p)
        try:
            hkey = bytes(data[p:p + klen]).decode("utf-8")
        except UnicodeDecodeError as e:
            raise FormatError(f"record {i} header key is not UTF-8", position=p) from e
        p += klen
        vlen, p = read_varint(data, p)
        if vlen < -1 or p + vlen > end:
            raise FormatError(f"record {i} header value length {vlen} is impossible",
                              position=p)
        if vlen < 0:
            hval = None
        else:
            hval = bytes(data[p:p + vlen])
            p += vlen
        headers.append(Header(hkey, hval))
    return tuple(headers), p


_DISCARD = deque(maxlen=0).append
#: The compiled twin of _decode_records for plain sections (formats.compiled), or None.
_compiled_records = CORE.decode_records if CORE is not None else None


def plain_values_py(buf: Any, start: int, count: int, base_offset: int) -> list[bytes] | None:
    """The values of the records section ``buf[start:]`` when it is exactly ``count``
    plain metadata records: offsets ``base_offset`` + 0, 1, … in order, each at the
    batch's base timestamp (delta 0), with a null key, a value that is not empty and no
    header, as :func:`_decode_records` reads them.  Otherwise None: the caller reads the
    batch record by record and says what is amiss.  The compiled twin
    (:data:`plain_values`) answers the same or None."""
    if count < 1:
        return None
    try:
        records = _decode_records(bytes(buf[start:]), count, base_offset, 0, -1)
    except (FormatError, IndexError, ValueError):
        return None
    values = []
    for i, r in enumerate(records):
        if r[0] != base_offset + i or r[1] != 0 or r[2] is not None or not r[3] or r[4]:
            return None
        values.append(r[3])
    return values


#: :func:`plain_values_py`, compiled where it is built.
plain_values = CORE.plain_values if CORE is not None else plain_values_py

#: A records section longer than this many bytes (decompressed) is decoded as a stream
#: (:class:`RecordStream`): 1.5 million tiny records in one batch were 300 MB of Record
#: objects.  Kafka's own metadata batches (at most 10,000 records) mostly stay below it.
STREAM_ABOVE = 1 << 20
#: Bytes of an uncompressed section handed to the record decoder at a time.
STREAM_PIECE = 1 << 18


def _whole_records(buf: bytearray) -> tuple[int, int, int]:
    """How far the whole records at the start of ``buf`` reach: (their end, their number,
    the length ``buf`` needs before another record can be whole)."""
    pos, k, n = 0, 0, len(buf)
    while pos < n:
        try:
            length, start = read_varint(buf, pos)
        except IndexError:  # the length itself is cut: one more byte may complete it
            return pos, k, n + 1
        if length < 6:
            raise FormatError(f"record {k} has impossible length {length}")
        end = start + length
        if end > n:
            return pos, k, end
        pos, k = end, k + 1
    return pos, k, n


class RecordStream:
    """The records of a batch with a large records section, decoded again on each pass,
    a piece at a time, so memory does not grow with the record count.  Made only for a
    section that is known to decode whole (``Batch.records_or_stream``); ``len`` is its
    number of records."""

    __slots__ = ("batch", "count")

    def __init__(self, batch: Batch, count: int) -> None:
        self.batch = batch
        self.count = count

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Record]:
        for part in self.batch.record_pieces():
            yield from part


_SMALL_RECORD = 48  # bytes: single records up to this size are memoised
SMALL_BATCH = 61 + _SMALL_RECORD
_SMALL_CACHE_LIMIT = 4096
SMALL_RECORDS: dict[bytes, tuple | bool] = {}


def remember_small_record(section: bytes) -> tuple | bool:
    """Decode a lone small record relative to offset 0 / time 0, and memoise it."""
    try:
        (r,) = _decode_records(section, 1, 0, 0, -1)
        # A Record's first six fields, relative to offset 0 and time 0.
        hit: tuple | bool = (r.offset, r.timestamp, r.key, r.value, r.headers, r.attributes)
    except (FormatError, IndexError, ValueError):
        hit = False  # let the general path report the problem with its position
    if len(SMALL_RECORDS) < _SMALL_CACHE_LIMIT:
        SMALL_RECORDS[section] = hit
    return hit


def memo_entry(raw: Any, fields: tuple) -> tuple | None:
    """The memo entry a memoising scan gives the intact batch ``raw`` (its header
    ``fields``): one small uncompressed record's, else None (the scan's fast path
    inlines this test: its hottest loop)."""
    if fields[RECORDS_COUNT] != 1 or fields[ATTRIBUTES] & COMPRESSION_MASK or \
            fields[BATCH_LENGTH] > SMALL_BATCH - 12:
        return None
    section = bytes(raw[HEADER_SIZE:])
    hit = SMALL_RECORDS.get(section)
    if hit is None:
        hit = remember_small_record(section)
    return None if hit is False else hit  # type: ignore[return-value]


def record_from_memo(header: tuple, hit: tuple) -> Record:
    """The record a memo entry stands for, in the batch whose header fields are given."""
    seq = header[BASE_SEQUENCE]
    return tuple.__new__(Record, (header[BASE_OFFSET] + hit[0], header[BASE_TIMESTAMP] + hit[1],
                                  hit[2], hit[3], hit[4], hit[5], -1 if seq < 0 else seq + hit[0]))


def small_record(fields: tuple, raw: bytes) -> list[Record] | None:
    """The lone record of a small uncompressed batch, from the memo; None if not such."""
    if fields[RECORDS_COUNT] != 1 or fields[ATTRIBUTES] & COMPRESSION_MASK \
            or len(raw) > SMALL_BATCH:
        return None
    hit = SMALL_RECORDS.get(raw[61:])
    if hit is None:
        hit = remember_small_record(raw[61:])
    return None if hit is False else [record_from_memo(fields, hit)]


class Batch(tuple):
    """A v2 record batch as found in a file: header fields plus where it sits.

    A tuple of the unpacked ``HEADER`` fields followed by ``crc_valid``, ``position``,
    ``raw`` (the batch's bytes), ``file`` and ``lone``: for a batch of one small record
    that a reader took from the memo (see :func:`remember_small_record`), that memo entry
    (the positions are BASE_OFFSET … RECORDS_COUNT, CRC_VALID … LONE), with named
    properties over it: a full scan builds one per batch, and a tuple is the
    cheapest object Python can build.
    """

    __slots__ = ()

    def __new__(cls, fields: tuple, raw: Any, file: str | None, position: int,
                crc_valid: bool, lone: tuple | None = None) -> Batch:
        return tuple.__new__(cls, fields + (crc_valid, position, raw, file, lone))

    base_offset = property(itemgetter(BASE_OFFSET))
    length = property(itemgetter(BATCH_LENGTH))
    leader_epoch = property(itemgetter(LEADER_EPOCH))
    magic = property(itemgetter(MAGIC))
    crc = property(itemgetter(CRC))
    attributes = property(itemgetter(ATTRIBUTES))
    last_offset_delta = property(itemgetter(LAST_OFFSET_DELTA))
    base_timestamp = property(itemgetter(BASE_TIMESTAMP))
    max_timestamp = property(itemgetter(MAX_TIMESTAMP))
    producer_id = property(itemgetter(PRODUCER_ID))
    producer_epoch = property(itemgetter(PRODUCER_EPOCH))
    base_sequence = property(itemgetter(BASE_SEQUENCE))
    records_count = property(itemgetter(RECORDS_COUNT))
    crc_valid = property(itemgetter(CRC_VALID))
    position = property(itemgetter(POSITION))
    raw = property(itemgetter(RAW))
    file = property(itemgetter(FILE))
    lone = property(itemgetter(LONE))

    @property
    def size(self) -> int:
        return self.length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def compression(self) -> str:
        return CODEC_NAMES.get(self.attributes & COMPRESSION_MASK, "unknown")

    @property
    def timestamp_type(self) -> str:
        return "LogAppendTime" if self.attributes & TIMESTAMP_TYPE_FLAG else "CreateTime"

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG)

    @property
    def is_control(self) -> bool:
        return self[ATTRIBUTES] & CONTROL_FLAG != 0

    @property
    def delete_horizon_ms(self) -> int | None:
        return self.base_timestamp if self.attributes & DELETE_HORIZON_FLAG else None

    @property
    def last_sequence(self) -> int:
        if self.base_sequence < 0:
            return -1
        return (self.base_sequence + self.last_offset_delta) & 0x7FFFFFFF

    def records_section(self) -> bytes:
        """The records bytes, decompressed."""
        body = self.raw[HEADER_SIZE:]
        codec = self.attributes & COMPRESSION_MASK
        if codec == 0:
            return body
        return decompress(codec, bytes(body))

    def records(self, section: bytes | None = None, sink: Any = None) -> list[Record]:
        """Decode every record; raises FormatError (position relative to the batch).
        ``section``: the records section, already decompressed; ``sink``: see
        ``_decode_records``."""
        h = self
        if h[LONE] is not None:
            return [record_from_memo(h, h[LONE])]
        raw = h[RAW]
        compressed = h[ATTRIBUTES] & COMPRESSION_MASK
        if not compressed:
            # Most KRaft batches hold one small, repeated record (NoOp heartbeats).
            small = small_record(h, raw)
            if small is not None:
                return small
        if section is not None:
            data = section
        else:
            data = self.records_section() if compressed else raw[HEADER_SIZE:]
        # Record timestamps are deltas from baseTimestamp, which holds the delete
        # horizon when that flag is set: the writer computed the deltas from it.
        if _compiled_records is not None and sink is None:
            # The compiled twin reads plain sections (no headers, nothing amiss); None
            # leaves the rest, and every error, to the reader below.
            fast = _compiled_records(data, h[RECORDS_COUNT], h[BASE_OFFSET], h[BASE_TIMESTAMP],
                                     h[BASE_SEQUENCE], Record, ())
            if fast is not None:
                return fast
        try:
            return _decode_records(data, h[RECORDS_COUNT], h[BASE_OFFSET], h[BASE_TIMESTAMP], h[BASE_SEQUENCE], sink)
        except IndexError as e:
            raise FormatError("records section ends inside a record",
                              position=HEADER_SIZE + len(data) if not compressed else None
                              ) from e
        except FormatError as e:
            if not compressed and e.position is not None:
                e.position += HEADER_SIZE
            raise

    def records_or_stream(self) -> list[Record] | RecordStream:
        """``records()``, or for a section above STREAM_ABOVE bytes that decodes whole a
        RecordStream of the same records; a damaged large section raises the error
        ``records()`` would, found without keeping a record."""
        h = self
        codec = h[ATTRIBUTES] & COMPRESSION_MASK
        if h[LONE] is not None or (not codec and len(h[RAW]) - HEADER_SIZE <= STREAM_ABOVE):
            return self.records()
        if codec:
            # Decompressed through once, keeping only a small section: a bomb is refused
            # here, before any record is decoded.
            head: list[bytes] = []
            total = 0
            try:
                for piece in decompress_chunks(codec, bytes(h[RAW][HEADER_SIZE:])):
                    total += len(piece)
                    if total <= STREAM_ABOVE:
                        head.append(piece)
                    elif head:
                        head.clear()
            except CompressionError:
                return self.records()  # raises it, worded as the whole path words it
            if total <= STREAM_ABOVE:
                return self.records(b"".join(head))
        try:
            count = sum(len(part) for part in self.record_pieces(keep=False))
        except (FormatError, IndexError):
            count = None
        if count is not None:
            return RecordStream(self, count)
        self.records(sink=_DISCARD)  # raises the whole path's error, keeping no record
        return self.records()

    def record_pieces(self, keep: bool = True) -> Iterator[list[Record]]:
        """The records, decoded from the section a piece at a time (whole records
        only); without ``keep``, lists of the right length holding nothing."""
        h = self
        raw, codec = h[RAW], h[ATTRIBUTES] & COMPRESSION_MASK
        if codec:
            pieces: Any = decompress_chunks(codec, bytes(raw[HEADER_SIZE:]))
        else:
            pieces = (raw[i:i + STREAM_PIECE] for i in range(HEADER_SIZE, len(raw),
                                                              STREAM_PIECE))
        pending = bytearray()
        need = 0
        for piece in pieces:
            pending += piece
            if len(pending) < need:
                continue
            cut, k, need = _whole_records(pending)
            if k:
                data = bytes(pending[:cut])
                del pending[:cut]
                need -= cut
                if keep:
                    yield _decode_records(data, k, h[BASE_OFFSET], h[BASE_TIMESTAMP], h[BASE_SEQUENCE])
                else:
                    _decode_records(data, k, h[BASE_OFFSET], h[BASE_TIMESTAMP], h[BASE_SEQUENCE], _DISCARD)
                    yield [None] * k
        if pending:
            raise FormatError("records section ends inside a record")

    def salvage_records(self) -> list[Record] | None:
        """The records, when the section holds whole records but not as many as the header
        says (``records()`` then fails); None when the section itself is damaged."""
        try:
            data = self.records_section()
            pos, count = 0, 0
            while pos < len(data):
                length, pos = read_varint(data, pos)
                if length < 6:
                    return None
                pos += length
                count += 1
            if pos != len(data):
                return None
            if len(data) > STREAM_ABOVE:  # see that they decode before keeping them
                _decode_records(data, count, self[BASE_OFFSET], self[BASE_TIMESTAMP], self[BASE_SEQUENCE], _DISCARD)
            return _decode_records(data, count, self[BASE_OFFSET], self[BASE_TIMESTAMP], self[BASE_SEQUENCE])
        except (FormatError, IndexError):
            return None

    def header_json(self) -> dict[str, Any]:
        """The header as JSON fields: what varies batch to batch first, then the rest."""
        return {
            "base_offset": self.base_offset,
            "last_offset": self.last_offset,
            "leader_epoch": self.leader_epoch,
            "crc": self.crc,
            "crc_valid": self.crc_valid,
            "max_timestamp": self.max_timestamp,
            "delete_horizon_ms": self.delete_horizon_ms,
            "size": self.size,
            "magic": self.magic,
            "attributes": self.attributes,
            "compression": self.compression,
            "timestamp_type": self.timestamp_type,
            "is_transactional": self.is_transactional,
            "is_control": self.is_control,
            "producer_id": self.producer_id,
            "producer_epoch": self.producer_epoch,
            "base_sequence": self.base_sequence,
            "last_sequence": self.last_sequence,
            "record_count": self.records_count,
        }




def parse_batch(buf: Any, position: int = 0, file: str | None = None) -> Batch:
    """Parse the v2 batch at ``position`` of ``buf``; raises FormatError if it cannot fit."""
    if len(buf) - position < HEADER_SIZE:
        raise FormatError("batch header truncated", position=position)
    fields = HEADER.unpack_from(buf, position)
    length = fields[BATCH_LENGTH]
    end = position + LOG_OVERHEAD + length
    if length < HEADER_SIZE - LOG_OVERHEAD or end > len(buf):
        raise FormatError(f"batch length {length} does not fit", position=position)
    raw = buf[position:end]
    return Batch(fields, raw, file, position, crc32c(raw[CRC_START:]) == fields[CRC])


def build_batch(
    base_offset: int,
    records: Sequence[tuple[bytes | None, bytes | None] | tuple[bytes | None, bytes | None,
                                                                 Sequence[Header]]],
    *,
    leader_epoch: int = 0,
    base_timestamp: int = 0,
    timestamps: Sequence[int] | None = None,
    compression: int = 0,
    control: bool = False,
    transactional: bool = False,
    log_append_time: bool = False,
    delete_horizon_ms: int | None = None,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = -1,
    base_sequence: int = NO_SEQUENCE,
    offset_deltas: Sequence[int] | None = None,
    crc: int | None = None,
    last_offset_delta: int | None = None,
    max_timestamp: int | None = None,
) -> bytes:
    """Build a complete v2 batch (header, records, CRC) ready to append to a segment.

    ``records`` holds (key, value) or (key, value, headers).  ``offset_deltas`` lets a
    caller write compacted batches with gaps; ``crc`` forces a (wrong) CRC for fixtures.
    ``last_offset_delta`` and ``max_timestamp`` keep a cleaned batch's span and newest
    time as Kafka's cleaner does (``overrideLastOffset``), empty batches included.
    """
    if not records and offset_deltas is None:
        raise ValueError("a batch needs at least one record")
    ts = list(timestamps) if timestamps is not None else [base_timestamp] * len(records)
    deltas = list(offset_deltas) if offset_deltas is not None else list(range(len(records)))
    first_ts = ts[0] if ts else base_timestamp
    # With a delete horizon, Kafka stores the horizon as the base and the record
    # timestamps as deltas from it.
    base_ts = delete_horizon_ms if delete_horizon_ms is not None else first_ts
    body = bytearray()
    for (rec, t, d) in zip(records, ts, deltas, strict=True):
        key, value = rec[0], rec[1]
        headers = rec[2] if len(rec) > 2 else ()
        body += encode_record(d, t - base_ts, key, value, headers)
    if compression:
        body = bytearray(compress(compression, bytes(body)))
    attributes = compression
    if log_append_time:
        attributes |= TIMESTAMP_TYPE_FLAG
    if transactional:
        attributes |= TRANSACTIONAL_FLAG
    if control:
        attributes |= CONTROL_FLAG
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_FLAG
    # HEADER is derived from BATCH_HEADER (test_batch proves both build the same bytes).
    head = bytearray(HEADER.pack(
        base_offset, HEADER_SIZE - LOG_OVERHEAD + len(body), leader_epoch, 2, 0, attributes,
        last_offset_delta if last_offset_delta is not None else (deltas[-1] if deltas else 0),
        base_ts, max_timestamp if max_timestamp is not None else (max(ts) if ts else first_ts),
        producer_id,
        producer_epoch, base_sequence, len(records)))
    value = crc32c(bytes(body), crc32c(bytes(head[CRC_START:]))) if crc is None else crc
    struct.pack_into(">I", head, CRC_POSITION, value)
    return bytes(head) + bytes(body)
