"""The compression codecs Kafka uses inside batches, through the codecs' own libraries.

Spec: Kafka's ``CompressionType`` ids (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd) and its
codec streams: gzip; snappy in xerial's framing (an 8-byte magic, two int32 versions,
then int32-length-prefixed raw snappy blocks); the LZ4 frame format; zstd frames.

Every decompressor is bounded: corrupt or hostile input can claim any output size, so
output beyond ``MAX_DECOMPRESSED`` is refused instead of allocated.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator

import cramjam
import lz4.frame
import xxhash
import zstandard

from kmeta.errors import FormatError

CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
CODEC_IDS = {v: k for k, v in CODEC_NAMES.items()}

#: Largest decompressed records section kmeta will decode.  Kafka's writers stay far
#: below it: the raft layer builds metadata batches of at most 8 MiB
#: (``KafkaRaftClient.MAX_BATCH_SIZE_BYTES``) of at most 10,000 records
#: (``QuorumController.MAX_RECORDS_PER_BATCH``), and a broker takes batches of at most
#: ``message.max.bytes`` (1 MiB by default) compressed.  A few kilobytes of zstd can hold
#: hundreds of megabytes of tiny records, each of which costs a Python object: a section
#: above this bound is a finding (F006), not minutes of work and gigabytes of memory.
MAX_DECOMPRESSED = 16 * 1024 * 1024

XERIAL_MAGIC = b"\x82SNAPPY\x00"


class CompressionError(FormatError):
    """A records section that its codec cannot decompress (or that expands too far)."""

_XERIAL_HEADER = struct.Struct(">8sii")


def decompress(codec: int, data: bytes, limit: int = MAX_DECOMPRESSED, *,
               lz4_any_header_checksum: bool = False) -> bytes:
    """Decompress a records section; raises FormatError on corrupt or oversized input.

    ``lz4_any_header_checksum``: Kafka's magic 0 writers computed the LZ4 frame header
    checksum (HC) wrongly and Kafka ignores it there; so does kmeta, by recomputing it.
    """
    if codec == 3 and lz4_any_header_checksum:
        data = _fix_lz4_header_checksum(data)
    try:
        if codec == 1:
            d = zlib.decompressobj(wbits=31)
            out = d.decompress(data, limit + 1)
            if len(out) > limit or d.unconsumed_tail:
                raise CompressionError(_too_far("gzip", limit))
            return out
        if codec == 2:
            return _snappy_decompress(data, limit)
        if codec == 3:
            out = lz4.frame.LZ4FrameDecompressor().decompress(data, max_length=limit + 1)
            if len(out) > limit:
                raise CompressionError(_too_far("lz4", limit))
            return out
        if codec == 4:
            reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True)
            out = reader.read(limit + 1)
            if len(out) > limit:
                raise CompressionError(_too_far("zstd", limit))
            return out
    except CompressionError:
        raise
    except Exception as e:  # each codec library raises its own error types
        name = CODEC_NAMES.get(codec, str(codec))
        raise CompressionError(f"{name} data is corrupt: {e}") from e
    raise CompressionError(f"unknown compression codec {codec}")


def decompress_chunks(codec: int, data: bytes, limit: int = MAX_DECOMPRESSED,
                      chunk: int = 1 << 18) -> Iterator[bytes]:
    """A records section decompressed piece by piece, through each codec's streaming API,
    so that a caller can decode it without holding it whole; the same bound as
    :func:`decompress`, and CompressionError for anything wrong."""
    name = CODEC_NAMES.get(codec, str(codec))
    total = 0
    try:
        for out in _pieces(codec, data, chunk, limit):
            total += len(out)
            if total > limit:
                raise CompressionError(_too_far(name, limit))
            yield out
    except CompressionError:
        raise
    except Exception as e:  # each codec library raises its own error types
        raise CompressionError(f"{name} data is corrupt: {e}") from e


def _pieces(codec: int, data: bytes, chunk: int, limit: int) -> Iterator[bytes]:
    if codec == 1:
        d = zlib.decompressobj(wbits=31)
        pending = data
        while True:
            out = d.decompress(pending, chunk)
            pending = d.unconsumed_tail
            if not out and not pending:
                return
            yield out
    elif codec == 2:
        if data.startswith(XERIAL_MAGIC):
            yield from _xerial_blocks(data, limit)
        else:
            yield _snappy_decompress(data, limit)
    elif codec == 3:
        d = lz4.frame.LZ4FrameDecompressor()
        out = d.decompress(data, max_length=chunk)
        while out:
            yield out
            out = b"" if d.eof else d.decompress(b"", max_length=chunk)
    elif codec == 4:
        reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True)
        while out := reader.read(chunk):
            yield out
    else:
        raise CompressionError(f"unknown compression codec {codec}")


def _too_far(codec: str, limit: int) -> str:
    return (f"{codec} data inflates beyond {limit} bytes, far past any batch Kafka writes "
            "(8 MiB for a metadata batch); its records are not decoded")


def _fix_lz4_header_checksum(data: bytes) -> bytes:
    """The frame with its HC byte recomputed: xxhash32 of the frame descriptor, byte 1."""
    if len(data) < 7 or data[:4] != b"\x04\x22\x4d\x18":
        return data
    end = 4 + 2 + (8 if data[4] & 0x08 else 0) + (4 if data[4] & 0x01 else 0)
    if end >= len(data):
        return data
    hc = (xxhash.xxh32_intdigest(data[4:end]) >> 8) & 0xFF
    return data[:end] + bytes([hc]) + data[end + 1:]


def _snappy_decompress(data: bytes, limit: int) -> bytes:
    if not data.startswith(XERIAL_MAGIC):
        if cramjam.snappy.decompress_raw_len(data) > limit:
            raise CompressionError(_too_far("snappy", limit))
        return bytes(cramjam.snappy.decompress_raw(data))
    out = bytearray()
    for block in _xerial_blocks(data, limit):
        out += block
    return bytes(out)


def _xerial_blocks(data: bytes, limit: int) -> Iterator[bytes]:
    """The raw snappy blocks of xerial framing, each decompressed; their sum is checked
    against ``limit`` before a block is."""
    pos = _XERIAL_HEADER.size
    total = 0
    while pos < len(data):
        if pos + 4 > len(data):
            raise CompressionError("snappy block length truncated", position=pos)
        (n,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if n < 0 or pos + n > len(data):
            raise CompressionError(f"snappy block of {n} bytes does not fit", position=pos)
        block = data[pos:pos + n]
        total += cramjam.snappy.decompress_raw_len(block)
        if total > limit:
            raise CompressionError(_too_far("snappy", limit))
        yield bytes(cramjam.snappy.decompress_raw(block))
        pos += n


#: A gzip member's header: deflate, no flags, no mtime, best compression (level 9), Unix.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03"


def compress(codec: int, data: bytes) -> bytes:
    """Compress a records section the way Kafka's producers frame it."""
    if codec == 1:
        # the header by hand: gzip.compress writes OS 255 from Python 3.13 on, 3 (Unix)
        # before, and kmeta writes the same bytes on every Python
        return _GZIP_HEADER + zlib.compress(data, 9, -15) + \
            struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)
    if codec == 2:
        out = bytearray(_XERIAL_HEADER.pack(XERIAL_MAGIC, 1, 1))
        for i in range(0, len(data), 32 * 1024):
            block = bytes(cramjam.snappy.compress_raw(data[i:i + 32 * 1024]))
            out += struct.pack(">i", len(block)) + block
        return bytes(out)
    if codec == 3:
        return lz4.frame.compress(data, content_checksum=False, store_size=False)
    if codec == 4:
        return zstandard.ZstdCompressor(write_content_size=False).compress(data)
    raise ValueError(f"unknown compression codec {codec}")
