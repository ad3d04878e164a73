"""Where each record batch of a metadata log is, when it was written and what kind it is:
the index under :mod:`kmeta.ops.replay.timeline`, built in one read of the log.

A KRaft log is mostly NoOp heartbeats, and the scan hands those over as runs
(``formats.runs.Run``: batches that repeat one batch but for offsets, timestamps and
CRC).  The index keeps one *entry* per lone batch and one per run, in columns of
``array`` (a 268 MB log of 3.6 M batches is about 53 k entries), so that it costs a few
MB however long the log; the maxTimestamp of each batch of a run is read back from the
file when a time lookup lands inside that run.

Each entry has a kind:

* ``DATA``: a batch of metadata records, at least one of them not a NoOp: a *step* of
  the timeline (what ``next``/``prev`` move by), since only such a batch can change the
  image;
* ``NOOP``: a batch of NoOp records only (the active controller's heartbeat, two a
  second): it changes nothing in the image, but it is a batch the image contains, so
  it moves the provenance;
* ``CONTROL``: a control batch (LeaderChange, KRaftVersion, Voters …): no metadata;
* ``BAD``: a batch whose CRC does not match, which the replay does not trust (Kafka
  would not replay it either) and which nothing here steps to.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from kmeta.findings import Finding
from kmeta.formats.batch import (
    BASE_OFFSET,
    CRC_VALID,
    FIELD_BYTES,
    LAST_OFFSET_DELTA,
    LEADER_EPOCH,
    LONE,
    MAX_TIMESTAMP,
    POSITION,
    Batch,
)
from kmeta.formats.payload import decode_metadata
from kmeta.formats.runs import Run, gather_int64
from kmeta.storage.discover import LogFile
from kmeta.storage.headers import read_at
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.segments import batch_records, read_batches

DATA, NOOP, CONTROL, BAD = 0, 1, 2, 3
KIND_NAMES = {DATA: "data", NOOP: "noop", CONTROL: "control", BAD: "bad_crc"}
NOOP_TYPE = "NO_OP_RECORD"
_AT_MAX_TS = FIELD_BYTES["maxTimestamp"]


class BatchInfo(NamedTuple):
    """One record batch of the log, as the index knows it."""

    base_offset: int
    last_offset: int
    leader_epoch: int
    max_timestamp: int
    file: str
    position: int
    kind: int

    @property
    def is_control(self) -> bool:
        return self.kind == CONTROL

    @property
    def is_step(self) -> bool:
        """A batch ``next``/``prev`` move by: one that can change the image."""
        return self.kind == DATA


def _kind(batch: Any, noop_values: dict[bytes, bool]) -> int:
    """What kind of batch this is (see the module docstring).  Decoding the values is
    what tells a NoOp; the verdict on a lone record's value is kept (the scan's memo
    hands the same few values over and over)."""
    if not batch[CRC_VALID]:
        return BAD
    if batch.is_control:
        return CONTROL
    lone = batch[LONE] if type(batch) is Batch else None
    if lone is not None:
        value = lone[3]
        hit = noop_values.get(value)
        if hit is None:
            hit = decode_metadata(value).type == NOOP_TYPE
            if len(noop_values) < 4096:
                noop_values[value] = hit
        return NOOP if hit else DATA
    records, _ = batch_records(batch)  # what cannot be read is the replay's finding
    for r in records:
        if decode_metadata(r.value).type != NOOP_TYPE:
            return DATA
    return NOOP


@dataclass
class BatchIndex:
    """Every batch of a log, entry by entry (a lone batch, or a run of repeats)."""

    files: list[str]
    # Offsets are unsigned 64-bit columns (Q): a damaged batch at base offset 2^63-1
    # holding more than one record, or with lastOffsetDelta 2^31-1, has offsets past
    # Java's Long.MAX_VALUE; the index keeps them as the file has them.
    base: array        # Q: base offset of the entry's first batch
    last: array        # Q: last offset of the entry's last batch
    count: array       # i: batches in the entry (1 for a lone batch)
    step: array        # q: offsets from one batch of the entry to the next (2^31 at most)
    size: array        # i: bytes of each batch of a run (0 for a lone batch)
    position: array    # q: byte position of the entry's first batch in its file
    file_index: array  # i: the file, an index into ``files``
    epoch: array       # i: leader epoch
    kind: array        # b: DATA, NOOP, CONTROL or BAD
    first_ts: array    # q: maxTimestamp of the entry's first batch
    most_ts: array     # q: the highest maxTimestamp up to and including this entry
    #: the data batches (one per batch, runs of data batches spread out): base, last
    data_base: array   # Q
    data_last: array   # Q
    #: the entries the image contains (NOOP or DATA), for the provenance: entry numbers
    applied: array
    applied_base: array  # Q
    #: the DATA entries: entry numbers, for a reader of records that skips heartbeats
    data_entries: array

    @classmethod
    def build(cls, segments: list[LogFile], findings: list[Finding],
              progress: Progress = QUIET) -> BatchIndex:
        """Read every segment once (with runs), keeping one entry per lone batch or run.
        What cannot be read goes into ``findings``."""
        index = cls([], array("Q"), array("Q"), array("i"), array("q"), array("i"),
                    array("q"), array("i"), array("i"), array("b"), array("q"), array("q"),
                    array("Q"), array("Q"), array("q"), array("Q"), array("q"))
        noop_values: dict[bytes, bool] = {}
        most = -(1 << 63)
        for seg in segments:
            file_no = len(index.files)
            index.files.append(str(seg.path))
            for item in read_batches(seg.path, findings, memo=True, runs=True,
                                     progress=progress):
                if type(item) is Run:
                    ref, count, size, raw = item
                    stamps = array("q", gather_int64(raw, _AT_MAX_TS, size, count))
                    kind = index.kind[-1] if index.kind and \
                        index.base[-1] == ref[BASE_OFFSET] else _kind(ref, noop_values)
                    top = max(stamps)
                    most = max(most, top)
                    index._add(item.first_base, item.last_offset, count, item.step, size,
                               item.first_position, file_no, ref[LEADER_EPOCH], kind,
                               stamps[0], most)
                    continue
                if type(item) is not Batch:
                    # a legacy message set cannot be in a metadata log: the replay skips
                    # it too, and says so
                    continue
                kind = _kind(item, noop_values)
                ts = item[MAX_TIMESTAMP]
                most = max(most, ts)
                index._add(item[BASE_OFFSET], item[BASE_OFFSET] + item[LAST_OFFSET_DELTA], 1,
                           item[LAST_OFFSET_DELTA] + 1, 0, item[POSITION], file_no,
                           item[LEADER_EPOCH], kind, ts, most)
        return index

    def _add(self, base: int, last: int, count: int, step: int, size: int, position: int,
             file_no: int, epoch: int, kind: int, first_ts: int, most: int) -> None:
        if self.base and base <= self.last[-1]:
            # offsets going back (a damaged log): the entry would break every bisect,
            # and the replay does not apply such a batch either
            return
        n = len(self.base)
        self.base.append(base)
        self.last.append(last)
        self.count.append(count)
        self.step.append(step)
        self.size.append(size)
        self.position.append(position)
        self.file_index.append(file_no)
        self.epoch.append(epoch)
        self.kind.append(kind)
        self.first_ts.append(first_ts)
        self.most_ts.append(most)
        if kind == DATA:
            self.data_entries.append(n)
            for k in range(count):
                self.data_base.append(base + k * step)
                self.data_last.append(base + k * step + step - 1)
        if kind in (DATA, NOOP):
            self.applied.append(n)
            self.applied_base.append(base)

    # ------------------------------------------------------------------ questions

    def __len__(self) -> int:
        return len(self.base)

    @property
    def batches(self) -> int:
        """How many batches the log holds."""
        return sum(self.count)

    def _stamps(self, i: int) -> array:
        """The maxTimestamp of each batch of entry ``i`` (read back from its file)."""
        n = self.count[i]
        if n == 1:
            return array("q", [self.first_ts[i]])
        size = self.size[i]
        raw = read_at(self.files[self.file_index[i]], self.position[i], n * size)
        if len(raw) < n * size:  # the file shrank since it was indexed
            return array("q", [self.first_ts[i]] * n)
        return array("q", gather_int64(raw, _AT_MAX_TS, size, n))

    def _batch(self, i: int, k: int, stamp: int | None = None) -> BatchInfo:
        step = self.step[i]
        base = self.base[i] + k * step
        if stamp is None:
            stamp = self.first_ts[i] if k == 0 else self._stamps(i)[k]
        return BatchInfo(base, base + step - 1, self.epoch[i], stamp,
                         self.files[self.file_index[i]],
                         self.position[i] + k * self.size[i], self.kind[i])

    def batch_at(self, offset: int) -> BatchInfo | None:
        """The batch that holds ``offset``, or None when no batch does."""
        i = bisect_right(self.base, offset) - 1
        if i < 0 or offset > self.last[i]:
            return None
        return self._batch(i, (offset - self.base[i]) // self.step[i])

    def batches_between(self, start: int, stop: int, data_only: bool = False
                        ) -> Iterator[BatchInfo]:
        """The batches that hold an offset in ``[start, stop)``, in order; with
        ``data_only``, the DATA batches only (the heartbeats are not even looked at)."""
        first = max(0, bisect_right(self.base, start) - 1)
        entries: Any = range(first, len(self.base))
        if data_only:
            entries = self.data_entries[bisect_left(self.data_entries, first):]
        for i in entries:
            if self.base[i] >= stop:
                break
            if self.last[i] < start:
                continue
            stamps = self._stamps(i) if self.count[i] > 1 else None
            step = self.step[i]
            for k in range(self.count[i]):
                b = self.base[i] + k * step
                if b + step - 1 < start:
                    continue
                if b >= stop:
                    break
                yield self._batch(i, k, None if stamps is None else stamps[k])

    def last_applied(self, offset: int) -> BatchInfo | None:
        """The last batch of metadata records (NoOps too) with records below ``offset``:
        the provenance of the image there."""
        j = bisect_left(self.applied_base, offset) - 1
        if j < 0:
            return None
        i = self.applied[j]
        k = min(self.count[i] - 1, (offset - 1 - self.base[i]) // self.step[i])
        return self._batch(i, k)

    def first_at_or_after(self, time_ms: int) -> int | None:
        """The base offset of the first batch whose maxTimestamp is ``time_ms`` or later,
        or None when there is none."""
        i = bisect_left(self.most_ts, time_ms)
        if i >= len(self.base):
            return None
        if self.count[i] == 1 or self.first_ts[i] >= time_ms:
            return self.base[i]
        for k, stamp in enumerate(self._stamps(i)):
            if stamp >= time_ms:
                return self.base[i] + k * self.step[i]
        return self.base[i]  # the file changed since: its first batch, the safe side

    def next_step(self, offset: int, n: int) -> int | None:
        """The offset after the ``n``-th data batch not wholly below ``offset``."""
        j = bisect_left(self.data_last, offset) + n - 1
        return self.data_last[j] + 1 if j < len(self.data_last) else None

    def prev_step(self, offset: int, n: int) -> int | None:
        """The offset after the data batch ``n`` steps back: counting the data batches
        with a record below ``offset`` (a batch applied in part counts as one), the end
        of the one ``n`` before the last; None when there are not that many."""
        j = bisect_left(self.data_base, offset) - 1 - n
        return self.data_last[j] + 1 if j >= 0 else None
