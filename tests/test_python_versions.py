"""What kmeta writes is the same bytes on every Python it runs on (3.11 to 3.13): a
fixture generated on one is the fixture of all, and a file kmeta writes does not change
with the interpreter."""

from __future__ import annotations

import gzip

from kmeta.formats.compression import CODEC_IDS, compress


def test_a_gzip_batch_has_the_same_header_on_every_python() -> None:
    """Python 3.13's gzip.compress writes OS 255 where 3.11 and 3.12 write 3 (Unix)."""
    data = b"kmeta " * 1000
    packed = compress(CODEC_IDS["gzip"], data)
    assert packed[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03"
    assert gzip.decompress(packed) == data
