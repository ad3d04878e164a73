"""The image's fast paths (kmeta/core/image.py ``_FAST_HANDLERS``) against its full
handlers: on every metadata log and snapshot of the fixtures and of the real data, and on
records made to take every branch, both give the same problems record by record and the
same image."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_image import T1, base, broker, change, partition, topic

from kmeta.core import image as image_module
from kmeta.core.image import MetadataImage
from kmeta.findings import Finding
from kmeta.formats.payload import decode_control, decode_metadata
from kmeta.storage.segments import read_records

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"


def straightforward(image: MetadataImage) -> MetadataImage:
    """``image`` made to apply every record with the full handlers only."""
    image._handlers = image_module._HANDLERS
    return image


def test_the_fast_handlers_are_the_ones_apply_uses() -> None:
    fast = image_module._FAST_HANDLERS
    assert MetadataImage.empty()._handlers is fast
    assert fast["PARTITION_CHANGE_RECORD"] is not image_module._HANDLERS[
        "PARTITION_CHANGE_RECORD"]
    assert set(fast) == set(image_module._HANDLERS)


def _metadata_files(root: Path) -> list[list[Path]]:
    """Each metadata log (its segments in order) and each snapshot, under ``root``."""
    out: list[list[Path]] = []
    for d in sorted(p for p in root.rglob("__cluster_metadata-*") if p.is_dir()):
        segments = sorted(d.glob("*.log"))
        if segments:
            out.append(segments)
        out += [[s] for s in sorted(d.glob("*.checkpoint"))]
    out += [[s] for s in sorted(root.rglob("bootstrap.checkpoint"))]
    return out


def _both_ways(files: list[Path]) -> tuple[int, set[str]]:
    """Replay ``files`` with the fast and the full handlers side by side; the records
    applied and their types."""
    fast, full = MetadataImage.empty(), straightforward(MetadataImage.empty())
    applied, types = 0, set()
    for f in files:
        for item in read_records(f, decode_metadata, decode_control):
            if type(item) is Finding:
                continue
            batch, record, payload = item
            if batch.is_control or not batch.crc_valid or payload.finding:
                continue
            args = (payload.type, payload.version, payload.data, record.offset)
            assert fast.apply(*args) == full.apply(*args), (f, record.offset)
            applied += 1
            types.add(payload.type)
    assert fast.to_json() == full.to_json(), files
    assert fast.digest() == full.digest()
    return applied, types


@pytest.mark.parametrize("root", ["fixtures", "real"])
def test_fast_and_full_handlers_agree_on_every_log(root: str, real_data: Path) -> None:
    logs = _metadata_files(FIXTURES if root == "fixtures" else real_data)
    assert logs
    applied, types = 0, set()
    for files in logs:
        n, seen = _both_ways(files)
        applied += n
        types |= seen
    assert applied > 1000
    assert "PARTITION_CHANGE_RECORD" in types and "PARTITION_RECORD" in types


def _changes() -> list[tuple]:
    """PartitionChangeRecords that take each branch of the fast path, and some that
    leave it for the full one."""
    gone = "AAAAAAAAAAAAAAAAAAAAAQ"
    return [
        change(T1, isr=[1]),
        change(T1, isr=[2, 1]),
        change(T1, leader=2),
        change(T1, leader=-1, isr=[]),
        change(T1, leader=2, isr=[2]),
        change(T1, leader=3, isr=[1, 2]),        # leader not in the ISR
        change(T1, isr=[1, 2, 7]),               # ISR outside the replicas
        change(T1, leader=7, isr=[7]),           # leader not a registered broker
        change(T1, leader=-2, isr=[1]),          # -2: no leader change
        change(T1, pid=5, isr=[1]),              # no such partition
        change(gone, isr=[1]),                   # no such topic
        change(T1),                              # nothing but the name
        ("PARTITION_CHANGE_RECORD", 0, {"partitionId": 0, "isr": [1]}),  # no topic id
        ("PARTITION_CHANGE_RECORD", 0, {"topicId": T1, "isr": [1]}),     # no partition id
        change(T1, isr=None, leader=1),
        change(T1, replicas=[1, 2, 3], isr=[1]),                  # the full path
        change(T1, isr=[1], leaderRecoveryState=1),
        change(T1, directories=["AAAAAAAAAAAAAAAAAAAAAA"] * 2),
        change(T1, eligibleLeaderReplicas=[2], lastKnownElr=[]),
    ]


@pytest.mark.parametrize("record", _changes(), ids=lambda r: repr(r[2])[:60])
def test_fast_and_full_partition_change_agree(record: tuple[Any, ...]) -> None:
    fast, full = base(), straightforward(base())
    for image in (fast, full):
        image.apply(*broker(3))
        image.apply(*topic("gone", "AAAAAAAAAAAAAAAAAAAAAQ"))
        image.apply("REMOVE_TOPIC_RECORD", 0, {"topicId": "AAAAAAAAAAAAAAAAAAAAAQ"})
        image.apply(*partition(T1, pid=1, replicas=[1, 2, 3], isr=[3], leader=3))
    for pid in (0, 1):  # each record against two partitions, twice in a row
        rec = (record[0], record[1], {**record[2], "partitionId": pid}
               if "partitionId" in record[2] else record[2])
        for _ in range(2):
            assert fast.apply(*rec, offset=9) == full.apply(*rec, offset=9)
            assert fast.to_json() == full.to_json()
