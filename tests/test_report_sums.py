"""``kmeta report`` and ``kmeta brokers``: the sentences that sum the findings up say what
the findings under them say (issue 32, point 6), in one vocabulary (point 5), and the
fuzz campaign's report crashes stay fixed; each input built here with kmeta's writer."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from clirun import run

from kmeta.formats.checksum import crc32c
from kmeta.formats.payload import encode_metadata
from kmeta.storage import writer as W

T0 = 1_700_000_000_000


def _feature_level(level: int = 21) -> bytes:
    return encode_metadata("FEATURE_LEVEL_RECORD", 0,
                           {"name": "metadata.version", "featureLevel": level})


def test_a_lone_bootstrap_checkpoint_with_a_corrupt_zstd_batch_is_reported(
        tmp_path: Path) -> None:
    """Fuzz: its SnapshotHeader batch claims zstd (CRC still good): the snapshots area has
    a finding and no metadata replica to point retention at (max() of nothing)."""
    path = W.write_bootstrap_checkpoint(tmp_path, [_feature_level()], timestamp=T0)
    data = bytearray(path.read_bytes())
    attributes = struct.unpack_from(">h", data, 21)[0]
    struct.pack_into(">h", data, 21, attributes | 4)  # zstd
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:83])))
    path.write_bytes(bytes(data))
    proc = run("report", tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "internal error" not in proc.stderr
    lines = proc.stdout.splitlines()
    snapshots = next(line for line in lines if line.startswith("snapshots "))
    assert "ERROR" in snapshots and snapshots.split("ERROR", 1)[1].strip(" [1]")
    # the command it points to reads what it names
    assert f"kmeta verify {tmp_path}" in proc.stdout
    objs = [json.loads(line) for line in run("report", "--json", tmp_path).stdout.splitlines()]
    assert any(o.get("code") == "V021" for o in objs)
