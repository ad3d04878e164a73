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


# ------------------------------------------------------------------- time axes


def test_an_axis_ticks_as_few_as_fit_however_long_its_domain() -> None:
    from kmeta.render.report.svg import Scale

    for lo, hi in ((T0, 72_000_000_000_000_000), (0, 2**63 - 1), (-2**63, 2**63 - 1),
                   (T0, T0 + 5_000)):
        for time in (True, False):
            ticks = Scale(lo, hi, 100, 1000).ticks(time=time)
            assert 1 <= len(ticks) <= 12, (lo, hi, time, len(ticks))


def _metadata_log(root: Path, stamps: list[int], epoch: int = 1) -> Path:
    part = root / "__cluster_metadata-0"
    W.write_segments(part, [W.noop_batch(i, epoch, ts) for i, ts in enumerate(stamps)])
    return part


def test_a_corrupt_timestamp_of_year_two_million_is_left_off_the_time_axes(
        tmp_path: Path) -> None:
    """Fuzz: one batch stamped in year ~2.28 million put a tick per year on the axis
    (a 275 MB page); now it is left off every time axis, and the page says so."""
    stamps = [T0 + i * 1000 for i in range(50)]
    stamps[25] = 72_000_000_000_000_000
    _metadata_log(tmp_path / "node", stamps)
    page = tmp_path / "report.html"
    proc = run("report", "--html", page, tmp_path / "node")
    assert proc.returncode in (0, 1), proc.stderr
    html = page.read_text()
    assert len(html) < 1_000_000
    assert "1 implausible time(s) left off the axis: year 2,283,559 (72000000000000000 ms)" in html
    import re

    years = {int(y) for y in re.findall(r'class="tick"[^>]*>(\d{4})-', html)}
    assert years <= {2023}, years
