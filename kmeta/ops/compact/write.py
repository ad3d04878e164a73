"""``kmeta compact --write NEWDIR``: the partition as the simulated round leaves it, written
as Kafka's cleaner writes it (:mod:`.simulate` decides, this writes).

A batch the round keeps whole is copied byte for byte; a rewritten one is built again
with its base offset, last offset (``overrideLastOffset``), producer id, epoch and base
sequence, flags, leader epoch and codec, and its delete horizon; an emptied one is the
61-byte header Kafka writes (no records, no compression, base timestamp -1).  Cleaned
segments are regrouped by size the way ``groupSegmentsBySize`` does (segment.bytes), and
each output segment gets new ``.index``, ``.timeindex`` and ``.txnindex`` files.  The
segments past the round's end are written as they are.  The producer-state snapshots
(``.snapshot``) are copied as they are, but for the one named after a source segment that
was merged into an earlier one: Kafka deletes the snapshots of the segments a cleaned
segment replaces without reusing their base offset (``replaceSegments``); the round
changes no producer's state.  The input is only read.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from kmeta.core.cleaner import BatchOutcome, CBatch, CSegment, TxnEntry
from kmeta.core.log_rules import MAX_RELATIVE_OFFSET
from kmeta.errors import UsageError
from kmeta.formats.batch import build_batch
from kmeta.formats.indexes import AbortedTxn
from kmeta.formats.textfiles import TopicPartitionOffset
from kmeta.storage import writer as W

__all__ = ["CompactWriter", "encode_batch"]

#: Files of the partition dir copied unchanged into the written one.
_COPIED = ("leader-epoch-checkpoint", "partition.metadata")


class CompactWriter:
    """Receives the round's outcomes in log order and writes the new partition dir."""

    def __init__(self, source: Path, out: Path, segment_bytes: int,
                 snapshots: Sequence[tuple[int, Path]] = ()) -> None:
        """``snapshots``: the partition's producer-state snapshots, by base offset."""
        target = out / source.name
        if target.exists():
            raise UsageError(f"--write {out}: {target} exists already; give an empty place")
        target.mkdir(parents=True)
        self.source, self.target = source, target
        self.snapshots = list(snapshots)
        self.segment_bytes = segment_bytes
        self.w = W.SegmentWriter(target, segment_bytes=1 << 62)
        self.group_bytes = 0
        self.group_base = 0  # the base offset of the output segment being written
        self.merged: set[int] = set()  # source segments written into an earlier one
        self.current: int | None = None  # the source segment being written
        self.index: list[TxnEntry] = []  # the source segment's kept .txnindex (filled live)
        self.written: set[int] = set()
        self.batches = 0

    def segment(self, seg: CSegment, size: int, index: list[TxnEntry],
                cleaned: bool = True) -> None:
        """A new source segment starts: regroup by size (a new output segment when the
        group would pass segment.bytes).  ``index``: its ``.txnindex`` entries as the round
        keeps them, a list the round may still be filling."""
        last = (seg.end if seg.end is not None else seg.next_offset) - 1
        if self.current is None or not cleaned or \
                self.group_bytes + size > self.segment_bytes or \
                last - self.group_base > MAX_RELATIVE_OFFSET:
            # a new output segment, named after its first source segment; a segment past
            # the round is never grouped with others, and no group spans more offsets
            # than its index addresses
            self.w.open_segment(seg.base_offset)
            self.group_bytes = 0
            self.group_base = seg.base_offset
        else:
            self.merged.add(seg.base_offset)
        self.current = seg.base_offset
        self.group_bytes += size
        self.index = index

    def outcome(self, o: BatchOutcome) -> None:
        b = o.after
        if b is None:
            return
        self.append(b, kept_whole=o.after is o.before)

    def append(self, b: CBatch, kept_whole: bool) -> None:
        data = b.raw if kept_whole and b.raw is not None else encode_batch(b)
        self.w.append(data)
        self.batches += 1
        for e in self.index:  # an ABORT marker the round keeps: its entry follows it
            if e.last_offset == b.last_offset and id(e) not in self.written:
                self.written.add(id(e))
                self.w.add_aborted_txn(AbortedTxn(e.producer_id, e.first_offset,
                                                  e.last_offset, e.last_stable_offset))

    def close(self, topic: str, partition: int, next_dirty: int) -> Path:
        """Finish the segments, copy the partition's small files, and write the data
        dir's ``cleaner-offset-checkpoint`` with the round's end, as Kafka does after a
        round (the next round starts there)."""
        self.w.close()
        for name in _COPIED:
            if (self.source / name).is_file():
                shutil.copyfile(self.source / name, self.target / name)
        for base, snapshot in self.snapshots:
            if base not in self.merged:
                shutil.copyfile(snapshot, self.target / snapshot.name)
        checkpoint = self.target.parent / "cleaner-offset-checkpoint"
        if not checkpoint.exists():
            W.write_offset_checkpoint(checkpoint, [TopicPartitionOffset(topic, partition,
                                                                        next_dirty)])
        return self.target


def encode_batch(b: CBatch, compression: int | None = None) -> bytes:
    """A v2 batch's bytes as the cleaner writes it; ``compression`` overrides its codec
    (0: its uncompressed size, without compressing)."""
    records = [(r.key, r.value, tuple(_header(h) for h in r.headers)) for r in b.records]
    deltas = [r.offset - b.base_offset for r in b.records]
    common = dict(leader_epoch=b.leader_epoch, producer_id=b.producer_id,
                  producer_epoch=b.producer_epoch, base_sequence=b.base_sequence,
                  transactional=b.transactional, control=b.control,
                  log_append_time=b.log_append_time,
                  last_offset_delta=b.last_offset - b.base_offset,
                  max_timestamp=b.max_timestamp, offset_deltas=deltas)
    if not records:
        return build_batch(b.base_offset, [], base_timestamp=-1, **common)
    return build_batch(b.base_offset, records, timestamps=[r.timestamp for r in b.records],
                       compression=b.compression if compression is None else compression,
                       delete_horizon_ms=b.delete_horizon,
                       **common)


def _header(h: tuple[str, bytes | None]):
    from kmeta.formats.batch import Header

    return Header(h[0], h[1])
