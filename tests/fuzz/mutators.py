"""Mutations of one file in a copied seed tree.

Each mutator takes the random generator, the file's bytes and a splice pool and returns
(new bytes, description) or None when it does not apply.  Batch-level mutators find
fields through kmeta's own declaration (``BATCH_HEADER``) and recompute the CRC32C, so
that the edit gets past the CRC check and reaches the decoders behind it.
"""

from __future__ import annotations

import copy
import json
import random
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import construct as cs
import lz4.frame
import zstandard
from crc32c import crc32c

from kmeta.formats.batch import (
    BATCH_HEADER,
    COMPRESSION_MASK,
    CRC_POSITION,
    CRC_START,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    build_batch,
    decode_records,
)
from kmeta.formats.compression import compress
from kmeta.formats.primitives import encode_uvarint, encode_varint, read_varint

from .oracle import BatchSpan, batches

Mutated = tuple[bytes, str] | None
Mutator = Callable[[random.Random, bytes, list[bytes]], Mutated]


def _field_offsets(definition: cs.Struct) -> dict[str, tuple[int, cs.Construct]]:
    """name -> (byte offset, construct) of a fixed-size struct's fields."""
    out, pos = {}, 0
    for sub in definition.subcons:
        out[sub.name] = (pos, sub.subcon)
        pos += sub.sizeof()
    return out


FIELDS = _field_offsets(BATCH_HEADER)

INTERESTING = (0, 1, -1, 2, 7, 8, 127, 128, 255, 256, 0x7FFF, -0x8000, 0xFFFF, 2**31 - 1,
               -2**31, 2**32 - 1, 2**63 - 1, -2**63, 10**6, 10**9)


def _fit(value: int, sub: cs.Construct) -> int:
    """Wrap ``value`` into the signed range of a FormatField."""
    bits = sub.sizeof() * 8
    value &= (1 << bits) - 1
    signed = sub.fmtstr[1] in "bhilq"
    return value - (1 << bits) if signed and value >> (bits - 1) else value


def _interesting(rng: random.Random, old: int) -> int:
    return rng.choice([*INTERESTING, old + 1, old - 1, old * 2, -old,
                       old + rng.randint(-1000, 1000), rng.getrandbits(64)])


def with_crc(raw: bytearray) -> bytes:
    """A batch with its CRC32C recomputed over [CRC_START, end)."""
    struct.pack_into(">I", raw, CRC_POSITION, crc32c(bytes(raw[CRC_START:])))
    return bytes(raw)


def _pick(rng: random.Random, data: bytes) -> BatchSpan | None:
    found = batches(data)
    return rng.choice(found) if found else None


def _replace(data: bytes, b: BatchSpan, new: bytes) -> bytes:
    return data[:b.position] + new + data[b.position + b.size:]


# -- byte level: any file ----------------------------------------------------------------

def bit_flip(rng: random.Random, data: bytes, pool: list[bytes]) -> Mutated:
    if not data:
        return None
    out = bytearray(data)
    where = []
    for _ in range(rng.choice([1, 1, 1, 2, 3, 8])):
        i = rng.randrange(len(out))
        out[i] ^= 1 << rng.randrange(8)
        where.append(i)
    return bytes(out), f"bit flip at {where}"


def truncate(rng: random.Random, data: bytes, pool: list[bytes]) -> Mutated:
    if not data:
        return None
    n = rng.choice([0, 1, rng.randrange(len(data)), len(data) - 1,
                    max(0, len(data) - rng.randint(1, 70))])
    return data[:n], f"truncated to {n} of {len(data)} bytes"


def splice(rng: random.Random, data: bytes, pool: list[bytes]) -> Mutated:
    donors = [p for p in pool if p]
    if not donors:
        return None
    donor = rng.choice(donors)
    a = rng.randrange(len(donor))
    piece = donor[a:a + rng.randint(1, 4096)]
    at = rng.randint(0, len(data))
    cut = rng.choice([0, len(piece)])
    return data[:at] + piece + data[at + cut:], \
        f"spliced {len(piece)} donor bytes at {at} ({'overwrite' if cut else 'insert'})"


def zero_range(rng: random.Random, data: bytes, pool: list[bytes]) -> Mutated:
    if not data:
        return None
    a = rng.randrange(len(data))
    n = rng.randint(1, 4096)
    fill = rng.choice([b"\x00", b"\xff"])
    return data[:a] + fill * min(n, len(data) - a) + data[a + n:], \
        f"{fill.hex()}-filled {n} bytes at {a}"


def duplicate_range(rng: random.Random, data: bytes, pool: list[bytes]) -> Mutated:
    if not data:
        return None
    a = rng.randrange(len(data))
    piece = data[a:a + rng.randint(1, 2048)]
    at = rng.randint(0, len(data))
    return data[:at] + piece + data[at:], f"duplicated {len(piece)} bytes from {a} at {at}"


BYTE_MUTATORS: tuple[Mutator, ...] = (bit_flip, truncate, splice, zero_range, duplicate_range)


# -- batch level: segments and snapshots -------------------------------------------------

def header_field(rng: random.Random, data: bytes, pool: list[bytes]) -> Mutated:
    """Set one header field to an interesting value; the CRC is recomputed (fields before
    the CRC are not covered by it: baseOffset, batchLength, partitionLeaderEpoch, magic)."""
    b = _pick(rng, data)
    if b is None:
        return None
    name = rng.choice([n for n in FIELDS if n != "crc"])
    at, sub = FIELDS[name]
    raw = bytearray(b.raw)
    (old,) = struct.unpack_from(sub.fmtstr, raw, at)
    new = _fit(_interesting(rng, old), sub)
    struct.pack_into(sub.fmtstr, raw, at, new)
    return _replace(data, b, with_crc(raw)), \
        f"batch at {b.position} (offset {b.base_offset}): {name} {old} -> {new}, CRC fixed"


def attributes(rng: random.Random, data: bytes, pool: list[bytes]) -> Mutated:
    """Toggle attribute bits (codec, timestamp type, transactional, control, delete
    horizon, unused high bits) with the CRC recomputed."""
    b = _pick(rng, data)
    if b is None:
        return None
    at, sub = FIELDS["attributes"]
    raw = bytearray(b.raw)
    (old,) = struct.unpack_from(sub.fmtstr, raw, at)
    new = _fit(old ^ (1 << rng.randrange(16)) if rng.random() < 0.7
               else (old & ~COMPRESSION_MASK) | rng.randrange(8), sub)
    struct.pack_into(sub.fmtstr, raw, at, new)
    return _replace(data, b, with_crc(raw)), \
        f"batch at {b.position}: attributes {old:#x} -> {new:#x}, CRC fixed"


def _varint_positions(section: bytes, count: int) -> list[tuple[int, str]]:
    """(position, what) of every varint of an uncompressed records section."""
    out: list[tuple[int, str]] = []
    pos = 0
    try:
        for i in range(count):
            out.append((pos, f"record {i} length"))
            length, p = read_varint(section, pos)
            end = p + length
            p += 1  # attributes
            for what in ("timestampDelta", "offsetDelta"):
                out.append((p, f"record {i} {what}"))
                _, p = read_varint(section, p, 10)
            for what in ("keyLength", "valueLength"):
                out.append((p, f"record {i} {what}"))
                n, p = read_varint(section, p)
                p += max(n, 0)
            out.append((p, f"record {i} headerCount"))
            pos = end
    except Exception:  # a damaged section (any reader error): the spots found so far
        pass
    return [(p, w) for p, w in out if p < len(section)]


def record_varint(rng: random.Random, data: bytes, pool: list[bytes]) -> Mutated:
    """Replace one varint of a record (length, deltas, key/value length, header count)
    with another value; batchLength follows the section's new size and the CRC is fixed."""
    b = _pick(rng, data)
    if b is None:
        return None
    f = HEADER.unpack_from(b.raw)
    if f[5] & COMPRESSION_MASK:
        return None
    section = b.raw[HEADER_SIZE:]
    spots = _varint_positions(section, f[12])
    if not spots:
        return None
    pos, what = rng.choice(spots)
    try:
        old, end = read_varint(section, pos, 10)
    except Exception:
        return None
    new = rng.choice([old + 1, old - 1, -1, -2, 0, 2**31 - 1, -2**31, old * 2, 10**6,
                      rng.randint(-300, 300)])
    enc = encode_varint(new) if -2**31 <= new < 2**31 else encode_uvarint(rng.getrandbits(70))
    new_section = section[:pos] + enc + section[end:]
    raw = bytearray(b.raw[:HEADER_SIZE] + new_section)
    struct.pack_into(">i", raw, FIELDS["batchLength"][0], len(raw) - LOG_OVERHEAD)
    return _replace(data, b, with_crc(raw)), \
        f"batch at {b.position}: {what} {old} -> {new}, length and CRC fixed"


def _records_of(b: BatchSpan) -> list | None:
    f = HEADER.unpack_from(b.raw)
    if f[5] & COMPRESSION_MASK:
        return None
    try:
        return decode_records(b.raw[HEADER_SIZE:], f[12], f[0], f[7], f[11])
    except Exception:
        return None


def _rebuild(b: BatchSpan, recs: list, compression: int | None = None) -> bytes:
    f = HEADER.unpack_from(b.raw)
    a = f[5]
    return build_batch(
        f[0], [(r.key, r.value, r.headers) for r in recs], leader_epoch=f[2],
        timestamps=[r.timestamp for r in recs], base_timestamp=f[7],
        compression=(a & COMPRESSION_MASK) if compression is None else compression,
        control=bool(a & 0x20), transactional=bool(a & 0x10), log_append_time=bool(a & 0x08),
        producer_id=f[9], producer_epoch=f[10], base_sequence=f[11],
        offset_deltas=[r.offset - f[0] for r in recs])


def crafted_record(rng: random.Random, data: bytes, pool: list[bytes]) -> Mutated:
    """Rewrite one record's value (a metadata record: frame, apiKey, version, body) or key
    and rebuild the batch with kmeta's writer, so that every frame and CRC is valid."""
    b = _pick(rng, data)
    recs = _records_of(b) if b else None
    if not recs:
        return None
    i = rng.randrange(len(recs))
    r = recs[i]
    value = r.value or b""
    choice = rng.randrange(9)
    if choice == 0:
        new, what = value[:rng.randint(0, len(value))], "value truncated"
    elif choice == 1 and len(value) > 3:
        body = bytearray(value)
        for _ in range(rng.randint(1, 4)):
            body[rng.randrange(3, len(body))] = rng.randrange(256)
        new, what = bytes(body), "value body bytes changed"
    elif choice == 2:
        # Same frame and apiKey, another version: a body of one version read as another.
        # frame, apiKey and version are one byte each for every record type below 128
        new = value[:2] + encode_uvarint(rng.randrange(0, 20)) + value[3:]
        what = "value version changed"
    elif choice == 3:
        new = encode_uvarint(1) + encode_uvarint(rng.randrange(0, 40)) + \
            encode_uvarint(rng.randrange(0, 8)) + value[3:]
        what = "value apiKey changed"
    elif choice == 4:
        new = value + bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 64)))
        what = "junk appended to value"
    elif choice == 5:
        # A tagged-field section claiming many fields or a huge size.
        new = value + encode_uvarint(rng.choice([1, 2, 2**31 - 1, 2**32])) + \
            encode_uvarint(rng.randrange(0, 4)) + encode_uvarint(rng.choice([0, 5, 2**30]))
        what = "tagged fields appended"
    elif choice == 6:
        new, what = None, "null value"
    elif choice == 7:
        r = r._replace(key=bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 8))))
        new, what = r.value, "key set"
    else:
        pool_values = [v for v in (x.value for x in recs) if v]
        new, what = (rng.choice(pool_values) if pool_values else value), "value swapped"
    recs[i] = r._replace(value=new)
    return _replace(data, b, _rebuild(b, recs)), \
        f"batch at {b.position}: record {i} {what}, batch rebuilt"


def _leaves(obj: object, path: tuple = ()) -> list[tuple]:
    """Paths to every leaf (and every list) of a decoded record."""
    out: list[tuple] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _leaves(v, (*path, k))
    elif isinstance(obj, list):
        out.append(path)
        for i, v in enumerate(obj):
            out += _leaves(v, (*path, i))
    else:
        out.append(path)
    return out


def _set(obj: dict, path: tuple, value: object) -> None:
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value


def _get(obj: object, path: tuple) -> object:
    for k in path:
        obj = obj[k]  # type: ignore[index]
    return obj


def _odd_value(rng: random.Random, old: object) -> object:
    if isinstance(old, bool):
        return not old
    if isinstance(old, int):
        return rng.choice([0, -1, 1, -2, old + 1, old - 1, 2**31 - 1, -2**31, 2**15 - 1,
                           2**63 - 1, 255, 1000])
    if isinstance(old, str):
        return rng.choice(["", "x" * 300, "\u0000", "é", "..", old + old, "a" * 249,
                           "AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAQ", old[::-1]])
    if isinstance(old, bytes):
        return rng.choice([b"", old + old, bytes(300), old[::-1], b"\xff" * 32])
    if isinstance(old, list):
        if old and rng.random() < 0.5:
            return old + [old[0]] * rng.choice([1, 50])
        return [] if old else old
    return old


def semantic_record(rng: random.Random, data: bytes, pool: list[bytes]) -> Mutated:
    """Decode a metadata record, change one field to an odd but encodable value (or put
    a record of another batch in its place) and rebuild: well-formed records with
    surprising content reach the image replay."""
    from kmeta.formats.payload import decode_metadata, encode_metadata

    found = [b for b in batches(data) if not HEADER.unpack_from(b.raw)[5] & 0x27]
    if not found:
        return None
    # most batches of a KRaft log are lone NoOps: look for one with a record to change
    rng.shuffle(found)
    for b in found[:300]:
        recs = _records_of(b)
        if recs and any(r.value and len(r.value) > 4 for r in recs):
            break
    else:
        return None
    i = rng.choice([k for k, r in enumerate(recs) if r.value and len(r.value) > 4])
    if rng.random() < 0.25:
        other = _records_of(rng.choice(found)) or []
        if not other:
            return None
        j = rng.randrange(len(other))
        recs[i] = recs[i]._replace(value=other[j].value)
        return _replace(data, b, _rebuild(b, recs)), \
            f"batch at {b.position}: record {i} replaced by a record of another batch"
    p = decode_metadata(recs[i].value)
    if p.finding or not isinstance(p.data, dict) or not p.data:
        return None
    for _ in range(6):
        body = copy.deepcopy(p.data)  # may hold bytes (salts, HMACs): not a JSON copy
        path = rng.choice(_leaves(body))
        new = _odd_value(rng, _get(body, path))
        _set(body, path, new)
        try:
            value = encode_metadata(p.type, p.version, body)
        except Exception:  # not encodable at this version (range, uuid text …): again
            continue
        recs[i] = recs[i]._replace(value=value)
        shown = repr(new)[:40]
        return _replace(data, b, _rebuild(b, recs)), \
            f"batch at {b.position}: {p.type} v{p.version} {'.'.join(map(str, path))} = " \
            f"{shown}, batch rebuilt"
    return None


def recompress(rng: random.Random, data: bytes, pool: list[bytes]) -> Mutated:
    """Re-encode a batch with a codec, or give it a corrupt or truncated compressed section
    (valid CRC), or a compression bomb."""
    b = _pick(rng, data)
    recs = _records_of(b) if b else None
    if b is None:
        return None
    f = HEADER.unpack_from(b.raw)
    codec = rng.randint(1, 4)
    choice = rng.randrange(5)
    if choice == 0 and recs:
        return _replace(data, b, _rebuild(b, recs, codec)), \
            f"batch at {b.position} recompressed with codec {codec}"
    if choice == 4:
        size = rng.choice([16 << 20, 300 << 20])
        section = _bomb(codec, size)
        what = f"compression bomb of {size >> 20} MiB, codec {codec}"
    else:
        section = compress(codec, b.raw[HEADER_SIZE:])
        if choice == 1:
            section = section[:rng.randrange(max(1, len(section)))]
            what = f"truncated codec {codec} section"
        elif choice == 2:
            s = bytearray(section)
            for _ in range(rng.randint(1, 6)):
                s[rng.randrange(len(s))] ^= 1 << rng.randrange(8)
            section = bytes(s)
            what = f"bit-flipped codec {codec} section"
        else:
            section = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 200)))
            what = f"random bytes as codec {codec} section"
    raw = bytearray(b.raw[:HEADER_SIZE] + section)
    struct.pack_into(">i", raw, FIELDS["batchLength"][0], len(raw) - LOG_OVERHEAD)
    struct.pack_into(">h", raw, FIELDS["attributes"][0], (f[5] & ~COMPRESSION_MASK) | codec)
    return _replace(data, b, with_crc(raw)), f"batch at {b.position}: {what}, CRC fixed"


_BOMBS: dict[tuple[int, int], bytes] = {}


def _bomb(codec: int, size: int) -> bytes:
    """``size`` zero bytes compressed; cached (the big ones take a moment)."""
    key = (codec, size)
    if key not in _BOMBS:
        zeros = bytes(1 << 20)
        if codec == 1:
            c = zlib.compressobj(9, zlib.DEFLATED, 31)
            out = b"".join(c.compress(zeros) for _ in range(size >> 20)) + c.flush()
        elif codec == 3:
            c = lz4.frame.LZ4FrameCompressor()
            out = c.begin() + b"".join(c.compress(zeros) for _ in range(size >> 20)) + c.flush()
        elif codec == 4:
            c = zstandard.ZstdCompressor(level=3).compressobj()
            out = b"".join(c.compress(zeros) for _ in range(size >> 20)) + c.flush()
        else:
            out = compress(2, zeros) * (size >> 20)  # xerial blocks: each 1 MiB of zeros
        _BOMBS[key] = out
    return _BOMBS[key]


def batch_order(rng: random.Random, data: bytes, pool: list[bytes]) -> Mutated:
    """Drop, duplicate or swap whole (intact) batches: offsets gap, overlap, go back."""
    found = batches(data)
    if len(found) < 2:
        return None
    i = rng.randrange(len(found) - 1)
    a, b = found[i], found[i + 1]
    choice = rng.randrange(3)
    if choice == 0:
        return data[:a.position] + data[b.position:], f"batch at {a.position} dropped"
    if choice == 1:
        return data[:b.position] + a.raw + data[b.position:], \
            f"batch at {a.position} duplicated"
    return data[:a.position] + b.raw + a.raw + data[b.position + b.size:], \
        f"batches at {a.position} and {b.position} swapped"


BATCH_MUTATORS: tuple[Mutator, ...] = (header_field, header_field, attributes, record_varint,
                                       record_varint, crafted_record, crafted_record,
                                       semantic_record, semantic_record, semantic_record,
                                       recompress, batch_order)


# -- small files --------------------------------------------------------------------------

def text_lines(rng: random.Random, data: bytes, pool: list[bytes]) -> Mutated:
    """Line-level edits of a text file: numbers made huge or negative, lines dropped,
    repeated or swapped, encodings and line ends changed."""
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    choice = rng.randrange(10)
    line = lines[i]
    if choice == 0:
        lines[i] = b"9" * rng.choice([19, 20, 40, 5000])
        what = f"line {i} replaced by a long number"
    elif choice == 1:
        lines[i] = b"-" + line
        what = f"line {i} negated"
    elif choice == 2:
        del lines[i]
        what = f"line {i} removed"
    elif choice == 3:
        lines.insert(i, line)
        what = f"line {i} repeated"
    elif choice == 4:
        lines[i] = line.replace(b" ", rng.choice([b"\t", b"  ", b"", b" x "]))
        what = f"line {i} separators changed"
    elif choice == 5:
        return data.replace(b"\n", b"\r\n"), "CRLF line ends"
    elif choice == 6:
        return rng.choice([b"\xef\xbb\xbf", b"\xff\xfe", b"\x00"]) + data, "prefix bytes"
    elif choice == 7:
        lines[i] = line + bytes([rng.choice([0x80, 0xC3, 0xFF, 0x00, 0x5C])])
        what = f"line {i} gets a stray byte"
    elif choice == 8:
        digits = [j for j, c in enumerate(line) if 48 <= c <= 57]
        if not digits:
            return None
        j = rng.choice(digits)
        lines[i] = line[:j] + str(rng.choice([0, 9, 99999999999])).encode() + line[j + 1:]
        what = f"line {i} digit changed"
    else:
        lines = lines + [lines[-1]] * rng.randint(1, 3)
        what = "last line repeated"
    return b"\n".join(lines), what


def quorum_json(rng: random.Random, data: bytes, pool: list[bytes]) -> Mutated:
    """Edit one value of quorum-state's JSON: other types, huge numbers, nesting."""
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):  # an earlier step nested it past Python's limit
        return None
    if not isinstance(obj, dict) or not obj:
        return None
    key = rng.choice(sorted(obj))
    value = rng.choice([None, -1, 2**63, 10**30, "1", [], {}, [1, 2], 1.5, True, "x" * 300,
                        {"voterId": 1}, [{"voterId": "a"}], float("nan")])
    if rng.random() < 0.2:
        obj.pop(key)
        return json.dumps(obj).encode(), f"quorum-state key {key} removed"
    obj[key] = value
    if rng.random() < 0.1:
        return (b"[" * 5000) + b"]" * 5000, "deeply nested JSON"
    return json.dumps(obj).encode(), f"quorum-state {key} = {value!r}"


def index_entry(rng: random.Random, data: bytes, pool: list[bytes], width: int = 8
                ) -> Mutated:
    """Set one field of an index entry (int32 relative offset/position, or int64
    timestamp) to an interesting value."""
    if len(data) < width:
        return None
    i = rng.randrange(len(data) // width)
    fmt, at = rng.choice([(">i", 0), (">i", 4)] if width == 8 else [(">q", 0), (">i", 8)])
    out = bytearray(data)
    (old,) = struct.unpack_from(fmt, out, i * width + at)
    new = _fit(_interesting(rng, old), cs.Int32sb if fmt == ">i" else cs.Int64sb)
    struct.pack_into(fmt, out, i * width + at, new)
    return bytes(out), f"index entry {i} field at +{at}: {old} -> {new}"


def producer_entry(rng: random.Random, data: bytes, pool: list[bytes]) -> Mutated:
    """Edit bytes of a producer-state snapshot (count, entries) with its CRC32C fixed."""
    if len(data) < 10:
        return None
    out = bytearray(data)
    if rng.random() < 0.4:
        struct.pack_into(">i", out, 6, _fit(_interesting(rng, 0), cs.Int32sb))
        what = "entry count changed"
    else:
        i = rng.randrange(6, len(out))
        out[i] = rng.randrange(256)
        what = f"byte {i} changed"
    struct.pack_into(">I", out, 2, crc32c(bytes(out[6:])))
    return bytes(out), f"{what}, CRC fixed"


def mutators_for(path: Path) -> tuple[Mutator, ...]:
    """The mutators that make sense for a file, by its name (byte-level ones always)."""
    name = path.name
    if name.endswith((".log", ".checkpoint")) and name != "bootstrap.checkpoint" or \
            name == "bootstrap.checkpoint":
        return BYTE_MUTATORS + BATCH_MUTATORS * 2
    if name == "quorum-state":
        return BYTE_MUTATORS + (quorum_json,) * 3
    if name.endswith(".index"):
        return BYTE_MUTATORS + (index_entry,) * 3
    if name.endswith(".timeindex"):
        return BYTE_MUTATORS + (lambda r, d, p: index_entry(r, d, p, 12),) * 3
    if name.endswith(".snapshot"):
        return BYTE_MUTATORS + (producer_entry,) * 3
    if name.endswith(".txnindex"):
        return BYTE_MUTATORS
    return BYTE_MUTATORS + (text_lines,) * 3


def name_of(m: Mutator) -> str:
    return getattr(m, "__name__", "mutator").replace("<lambda>", "time_index_entry")

