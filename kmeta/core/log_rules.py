"""The rules every batch of a KRaft metadata log keeps, judged one batch header at a time,
and the layout of runs the replica model is built from.

Facts (apache/kafka, read for behaviour only):

* the metadata log is never compacted and KRaft appends only at the log end offset, so
  batches are contiguous within and across segments: a gap means records are missing, an
  overlap that they repeat (``KafkaMetadataLog.appendAsLeader``/``appendAsFollower``);
* leader epochs never go back in a log (``LeaderEpochFileCache.assign`` ignores an
  epoch lower than the latest);
* KRaft reads record batch v2 only (``RecordsIterator``): a legacy (magic 0/1) message
  has no place in it.

:func:`judge` takes what the rules remember of the log so far (:class:`LogState`) and one
batch's header facts, and gives the state after that batch with every rule it breaks, as
Findings.  :class:`Layout` keeps, per segment, the runs of contiguous batches of one epoch
(``[base, last, epoch]``; a legacy message has epoch -1), and :func:`epoch_spans` sums
them up per epoch.  ``verify``, ``repair``, ``diff``, ``truncate`` and the export's epochs
table judge and lay out a log through these; ``ReplicaLog.from_observed`` judges only
what no pass over the batches can see.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from kmeta.core.replica_log import BatchMeta, Segment
from kmeta.findings import Finding

__all__ = ["MAX_OFFSET", "Layout", "LogState", "epoch_spans", "judge", "offsets_past_max"]


class LogState(NamedTuple):
    """What the rules remember of the batches judged so far."""

    #: the offset the next batch must start at; None before the first batch
    expected: int | None = None
    #: the highest leader epoch of a v2 batch so far
    last_epoch: int = -1


def judge(state: LogState, base: int, last: int, epoch: int, magic: int,
          segment_start: bool, file: str | None = None, position: int | None = None
          ) -> tuple[LogState, list[Finding]]:
    """The state after one batch, and the rules it breaks, in this order: records missing
    between two segments (V009, ``segment_start``: the batch is its segment's first), a
    leader epoch that goes back (V005), a legacy message (V010), a gap or an overlap
    (V003), offsets past the largest Kafka has (S011).  ``file`` and ``position`` say
    where the batch is, for the Findings."""
    broken: list[Finding] = []
    expected, last_epoch = state
    if segment_start and expected is not None and base > expected:
        broken.append(Finding("V009", f"offsets {expected}..{base - 1} are in no segment: a "
                              "segment is missing", file, position, base))
        expected = base
    if magic == 2:
        if epoch < last_epoch:
            broken.append(Finding("V005", f"leader epoch {epoch} after epoch {last_epoch}: "
                                  "epochs never go back in a log", file, position, base))
        else:
            last_epoch = epoch
    else:
        broken.append(Finding("V010", f"legacy message (magic {magic}) in a KRaft metadata "
                              "log", file, position, base))
    if expected is not None and base != expected:
        what = "gap" if base > expected else "overlap"
        broken.append(Finding("V003", f"{what}: batch starts at offset {base}, the previous "
                              f"one ended at {expected - 1}", file, position, base,
                              details={"expected": expected}))
    if last > MAX_OFFSET:
        broken.append(offsets_past_max(file, position, base, last))
    return LogState(last + 1, last_epoch), broken


#: The largest offset Kafka has: offsets are Java longs (Long.MAX_VALUE, 2^63 - 1).
MAX_OFFSET = (1 << 63) - 1


def offsets_past_max(file: str | None, position: int | None, base_offset: int,
                     last_offset: int) -> Finding:
    """The S011 Finding of a batch whose offsets run past :data:`MAX_OFFSET` (its base
    offset plus lastOffsetDelta).  Kafka adds them in Java longs, which wrap to negative
    numbers there: the batch's last offset (``DefaultRecordBatch.lastOffset``) and its
    records' offsets (``DefaultRecord.readFrom``).  A follower refuses such a batch (a
    last offset below the one before: ``UnifiedLog.analyzeAndValidateRecords``,
    OffsetsOutOfOrderException) and a leader gives offsets from its log end, so no Kafka
    wrote it, and one that loads it has no offsets for the records past the largest."""
    beyond = last_offset - MAX_OFFSET
    return Finding("S011", f"batch at offset {base_offset} runs to offset {last_offset}: "
                   f"{beyond:,} offset{'s' if beyond != 1 else ''} past the largest Kafka has "
                   f"({MAX_OFFSET}); no Kafka wrote it, and none can hold those records",
                   file, position, base_offset, details={"last_offset": last_offset})


class Layout:
    """Per segment, the runs of contiguous batches of one epoch: ``(base offset of the
    segment, [[base, last, epoch], ...])``, in the order laid out."""

    def __init__(self, segments: list[tuple[int, list[list[int]]]] | None = None) -> None:
        #: the layout so far (``segments``, when given, is filled in place)
        self.segments = segments if segments is not None else []
        self._runs: list[list[int]] = []
        self._run: list[int] | None = None

    def segment(self, base: int | None) -> None:
        """A new segment file starts (a run never spans two)."""
        self._runs = []
        self._run = None
        self.segments.append((base, self._runs))

    def batch(self, base: int, last: int, epoch: int) -> None:
        run = self._run
        if run is not None and run[2] == epoch and run[1] + 1 == base:
            run[1] = last
        else:
            self._run = [base, last, epoch]
            self._runs.append(self._run)

    def reach(self, last: int) -> None:
        """The current run goes on up to ``last``: batches a caller took in bulk, which
        continue it by construction."""
        if self._run is not None:
            self._run[1] = last

    def drop_segment(self) -> None:
        """Forget the segment laid out last (it is not part of the log after all)."""
        self.segments.pop()
        self._runs = []
        self._run = None

    def model_segments(self) -> list[Segment]:
        """The layout as the replica model's segments."""
        return [Segment(base, tuple(BatchMeta(b, last, epoch) for b, last, epoch in runs))
                for base, runs in self.segments]


def epoch_spans(batches: Iterable[tuple[int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Per leader epoch, lowest first: ``(epoch, start, end, batches)``, where ``start`` is
    the base offset of the first of ``batches`` (``(base, last, epoch)``, in log order)
    with that epoch and ``end`` the last offset of the last one: what the batches say of
    each epoch, to set beside the leader-epoch checkpoint."""
    spans: dict[int, list[int]] = {}
    for base, last, epoch in batches:
        span = spans.get(epoch)
        if span is None:
            spans[epoch] = [base, last, 1]
        else:
            span[1] = last
            span[2] += 1
    return [(epoch, start, end, n) for epoch, (start, end, n) in sorted(spans.items())]


#: The largest offset a segment's indexes hold relative to its base (a 4-byte int):
#: Kafka's LogSegment refuses a batch past it (LogSegmentOffsetOverflowException), and
#: the cleaner groups segments so that no cleaned one spans more (groupSegmentsBySize).
MAX_RELATIVE_OFFSET = (1 << 31) - 1


def batch_out_of_segment(file: str, position: int, base_offset: int, last_offset: int,
                         segment_base: int, next_base: int | None) -> Finding | None:
    """An S005 Finding when a batch's offsets cannot belong to its segment: past what its
    index can address from the segment's base, or at or past the next segment's base (the
    next segment's batches then go backwards).  A round that reads such a batch cannot
    place it in a cleaned segment."""
    if last_offset - segment_base > MAX_RELATIVE_OFFSET or last_offset < base_offset:
        why = (f"batch at offset {base_offset} is {last_offset - segment_base:,} offsets past "
               f"its segment's base {segment_base}: more than a segment's index can address")
    elif next_base is not None and last_offset >= next_base:
        why = (f"batch at offset {base_offset} ends at {last_offset}, at or past the next "
               f"segment's base {next_base}")
    else:
        return None
    return Finding("S005", why, file, position, base_offset)
