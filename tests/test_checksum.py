"""``kmeta.formats.checksum``: the crc32c package's compiled function, loaded without the
package's start-up cost, and the same function the package gives."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from kmeta.formats.checksum import crc32c


def test_the_standard_check_value() -> None:
    assert crc32c(b"123456789") == 0xE3069283  # CRC-32C's check value
    assert crc32c(b"") == 0


@given(st.binary(max_size=300), st.integers(0, 2**32 - 1))
def test_equal_to_the_packages(data: bytes, start: int) -> None:
    import crc32c as package

    assert crc32c(data) == package.crc32c(data)
    assert crc32c(data, start) == package.crc32c(data, start)


def test_reading_batches_does_not_import_the_package() -> None:
    # the package's __init__ reads every distribution's metadata: kmeta's start skips it
    code = ("import sys, kmeta.formats.batch, kmeta.storage.segments; "
            "print('crc32c' in sys.modules, 'importlib.metadata' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["False", "False"]
