"""The peer: kafka-python's record reader over one segment, as a script.

Reads the whole file (kafka-python's MemoryRecords needs bytes), validates the CRC of
every batch and touches every field of every record.  It decodes no payloads.
"""

from __future__ import annotations

import sys

from kafka.record.memory_records import MemoryRecords


def iterate(data: bytes) -> int:
    records = MemoryRecords(data)
    n = 0
    while True:
        batch = records.next_batch()
        if batch is None:
            return n
        if not batch.validate_crc():
            raise SystemExit(f"bad CRC in batch at offset {batch.base_offset}")
        for r in batch:
            r.offset, r.timestamp, r.key, r.value, r.headers  # noqa: B018
            n += 1


if __name__ == "__main__":
    total = 0
    for path in sys.argv[1:]:
        with open(path, "rb") as f:
            total += iterate(f.read())
    print(total)
