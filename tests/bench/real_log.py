"""A large metadata log built from the real segments of ../shared/real, for the benchmarks.

Every real ``__cluster_metadata`` segment (ldi-poc, quorum3-boaz's kafka-3, kraft41-offsets,
kraft32-three's kafka1) is copied batch for batch, over and over, until the log is as large
as asked: each batch keeps its bytes (records, timestamps, CRC) but gets the next offset
and a leader epoch that only grows (one new epoch wherever a source's epoch changes).
Neither field is covered by the CRC, so every batch stays intact.  The records are real
ones, so a replay of the whole repeats registrations and topic creations: verify reports
what it finds, and the benchmark times it all the same.

    python tests/bench/real_log.py [--size 128MiB]   # -> fixtures/big/real-128MiB/
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from kmeta.formats.batch import Batch  # noqa: E402
from kmeta.storage.segments import read_batches  # noqa: E402

SOURCES = ("ldi-poc/__cluster_metadata-0", "quorum3-boaz/data/kafka-3/__cluster_metadata-0",
           "kraft41-offsets/kafka-data/__cluster_metadata-0",
           "kraft32-three/data/kafka1/__cluster_metadata-0")
SEGMENT_BYTES = 64 << 20
_SIZES = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def parse_size(text: str) -> int:
    for unit, factor in _SIZES.items():
        if text.endswith(unit):
            return int(text[:-len(unit)]) * factor
    return int(text)


def real_root() -> Path:
    return Path(os.environ.get("KMETA_REAL_DATA") or REPO.parent / "shared" / "real")


def source_batches() -> list[tuple[int, bytes]]:
    """(leader epoch, bytes) of every batch of the real segments, in order."""
    out = []
    for source in SOURCES:
        for seg in sorted((real_root() / source).glob("*.log")):
            for b in read_batches(seg):
                if type(b) is not Batch or not b.crc_valid:
                    raise SystemExit(f"{seg}: not an intact v2 batch: {b}")
                out.append((b.leader_epoch, bytes(b.raw)))
    return out


def real_log(size: str) -> Path:
    """The log dir (built once into fixtures/big/real-SIZE/)."""
    log_dir = REPO / "fixtures" / "big" / f"real-{size}" / "__cluster_metadata-0"
    if log_dir.is_dir():
        return log_dir
    target = parse_size(size)
    batches = source_batches()
    tmp = log_dir.with_name(log_dir.name + ".part")
    tmp.mkdir(parents=True, exist_ok=True)
    offset, epoch, written, seg_written = 0, 0, 0, SEGMENT_BYTES
    previous_source_epoch = None
    out = None
    while written < target:
        for source_epoch, raw in batches:
            if source_epoch != previous_source_epoch:
                epoch += 1
                previous_source_epoch = source_epoch
            if seg_written >= SEGMENT_BYTES:
                if out is not None:
                    out.close()
                out = open(tmp / f"{offset:020d}.log", "wb")  # noqa: SIM115
                seg_written = 0
            last_delta = struct.unpack_from(">i", raw, 23)[0]
            head = struct.pack(">qii", offset, len(raw) - 12, epoch)
            out.write(head + raw[16:])
            offset += last_delta + 1
            seg_written += len(raw)
            written += len(raw)
        previous_source_epoch = None  # a new round opens a new epoch
    if out is not None:
        out.close()
    tmp.rename(log_dir)
    return log_dir


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="128MiB")
    print(real_log(ap.parse_args().size))
