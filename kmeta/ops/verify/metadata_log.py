"""``kmeta verify``'s pass over one metadata log: its batches and records, its leader
epochs, snapshots and indexes, and the image replayed beside it.  Each check yields
Findings; nothing here prints or exits.  What storage and the format layer already
report (bad CRCs, torn tails, undecodable records …) is passed through unchanged.

Kafka facts behind the rules:
* the metadata log is never compacted, so batches are contiguous within and across
  segments, and a batch's records carry offset deltas 0..n-1;
* KRaft's ``RecordsIterator`` rejects a record whose timestamp delta is not 0, that has
  headers, or whose key/value do not fit its kind (data records: no key and a non-empty
  value; control records: a non-empty key and value);
* a leader writes a LeaderChange control record in each epoch it leads, and the
  ``leader-epoch-checkpoint`` holds the first offset of every epoch in the log.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from kmeta.core.log_rules import MAX_OFFSET, Layout, LogState, judge
from kmeta.core.log_tally import LogTally
from kmeta.errors import KmetaError
from kmeta.findings import Finding
from kmeta.formats.batch import (
    ATTRIBUTES,
    BASE_OFFSET,
    BASE_TIMESTAMP,
    BATCH_LENGTH,
    COMPRESSION_MASK,
    HEADER_SIZE,
    LAST_OFFSET_DELTA,
    LEADER_EPOCH,
    LOG_OVERHEAD,
    LONE,
    MAX_TIMESTAMP,
    NOT_PLAIN_FLAGS,
    POSITION,
    RAW,
    RECORDS_COUNT,
    STREAM_ABOVE,
    Batch,
    plain_values,
)
from kmeta.formats.legacy import LegacyBatch
from kmeta.formats.payload import NOOP_VALUE, decode_control, decode_metadata
from kmeta.formats.runs import Expandable, Run, run_newest, run_timestamps
from kmeta.formats.spans import NO_OFFSET, PlainSpan, Spans
from kmeta.ops.replay import ForkedReplay, Replay, forked_replay, plan_replay
from kmeta.ops.replica import LogStats
from kmeta.ops.verify.indexes import indexes_beside, verify_indexes
from kmeta.ops.verify.jobs import Beside
from kmeta.ops.verify.model import verify_model
from kmeta.ops.verify.records import _check_records, _rule_problem, record_rule_problem
from kmeta.storage.discover import LogFile, PartitionDir
from kmeta.storage.headers import first_base_offset
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.segments import batch_records, read_batches, segment_name_finding


@dataclass(frozen=True)
class Listeners:
    """Who hears the pass over each metadata log besides its findings, passed in by the
    caller (``kmeta report`` hears the other analyses in verify's one read):

    ``watch`` makes a watch for the log's replay (given its partition dir and the Replay,
    before the first record; None from it: no watch): the brokers' lifecycles heard in
    verify's own replay, not in a second one; ``tally`` makes a LogTally the pass drives:
    retention's reading of the batch headers, not a second read."""

    watch: Callable[[PartitionDir, Replay], Any] | None = None
    tally: Callable[[PartitionDir], Any] | None = None
    #: hears each ordinary partition dir of a data dir where verify checks it, in the
    #: process that checks it (a module-level function, given the dir's path and what
    #: the check read of it, a :class:`~.partitions.Seen`): what it returns is the
    #: partition's ``checked.heard`` (kmeta report: startup's load of it)
    partition: Callable[[str, Any], Any] | None = None


#: Nobody listens: a verify run of its own.
NOBODY = Listeners()


def _newest_each(run: Run) -> tuple[int, ...]:
    return run_timestamps(run)[1]


def tally_batch(tally: Any, batch: Batch | LegacyBatch) -> None:
    """A batch of the full path into a LogTally, as retention counts it (a legacy
    message: its size and message count)."""
    if type(batch) is Batch:
        tally.batch(batch[BASE_OFFSET], batch[BASE_OFFSET] + batch[LAST_OFFSET_DELTA],
                    batch[MAX_TIMESTAMP], batch[BATCH_LENGTH] + LOG_OVERHEAD,
                    batch[RECORDS_COUNT])
    else:
        tally.batch(batch.base_offset, batch.last_offset, batch.max_timestamp, batch.size,
                    batch.records_count or 0)


def verify_log(segments: Iterable[LogFile], stats: LogStats | None = None,
               replay: Replay | ForkedReplay | None = None, progress: Progress = QUIET
               ) -> Iterator[Finding]:
    """Checks of one metadata log's segments, in offset order: batches, records, epochs;
    with ``replay``, every record also goes into the image and the snapshots are checked."""
    stats = stats if stats is not None else LogStats()
    expected: int | None = None
    last_epoch = -1
    # The epoch of the batches being read and the last offset seen in it: written into
    # stats.epochs when the epoch changes, not per batch.
    span_epoch: int | None = None
    span_end = -1
    last_lone: Any = None
    problem: str | None = None
    payload: Any = None
    apply = False
    flagged = False
    # The next offset at which the replay has a snapshot to compare (never, without one).
    check_at = _next_check(replay)
    inline = 0  # batches (each of one record) taken by the inline path
    # Plain spans (formats.spans): asked for where the replay runs beside the pass; their
    # batches and records.  A watch hears of each batch of a span that holds records to
    # replay (as of an inline one), the tally of each span as of one batch.
    gate = _SpanGate(replay, stats.tally) if type(replay) is ForkedReplay else None
    plain = Spans(NOOP_VALUE, gate, replay.watch is not None) if gate is not None else None
    span_batches = span_records = 0
    last_span: tuple[int, int] | None = None  # (last offset, its batch's timestamp)
    # The batch slots the inline path reads, as locals: it runs once per batch.
    lone_at, base_at, position_at = LONE, BASE_OFFSET, POSITION
    # A replay with a watch (kmeta report's lifecycles) hears of batches and control
    # records too, and of the last intact batch: the last one of each path is kept.
    watching = replay is not None and replay.watch is not None
    # retention's reading of the headers (kmeta report), tallied by this pass
    tally = stats.tally
    last_inline: Any = None
    last_run: Any = None
    last_full: Any = None
    layout = Layout(stats.layout)
    for seg in segments:
        path = str(seg.path)
        stats.segments += 1
        first = True
        if expected is not None:
            layout.reach(expected - 1)
        layout.segment(seg.kind.base_offset)
        # A new segment opens a new run: its first batch goes through the full path.
        inline_epoch = None
        size = 0
        with contextlib.suppress(OSError):  # an unreadable file says so as it is read
            size = seg.path.stat().st_size
        stats.bytes += size
        if tally is not None:
            tally.segment(seg.kind.base_offset or 0, seg.path, size)
        items = Expandable(read_batches(seg.path, memo=True, runs=True, progress=progress,
                                        plain=plain))
        for item in items:
            if type(item) is Finding:
                yield item
                continue
            if type(item) is PlainSpan:
                # Batches right after the one before, in its epoch, each of which the
                # inline or the full path would pass: taken at once (they end before the
                # next snapshot comparison, and come only in the log's epoch: _SpanGate).
                if item[4] == expected and item[6] == inline_epoch and check_at >= item[5]:
                    span_batches += item[2]
                    span_records += item[3]
                    expected = item[5]
                    if tally is not None:  # as one batch: it ends before a snapshot's end
                        tally.batch(item[4], item[5] - 1, item[12], item[1] - item[0],
                                    item[3])
                    if item[7]:
                        replay.section(item[7], item[8], item[9], path, item[14], item[6])
                    last_span = (item[5] - 1, item[13])
                    continue
                items.expand(item)
                continue
            if type(item) is Run:
                # Batches that repeat the one just read (NoOp heartbeats, mostly): each
                # would take the inline path below with its outcome, so they are counted
                # at once unless one of them has something to say or to replay.
                ref = item[0]
                lone = ref[lone_at]
                first_base = ref[base_at] + 1  # _inline: lastOffsetDelta 0
                if first_base == expected and _inline(ref, lone, inline_epoch):
                    if lone is not last_lone:
                        last_lone = lone
                        problem, payload, apply, flagged = _judge_lone(ref, lone, replay)
                    if not flagged and not apply:
                        last_base = first_base + item[1] - 1
                        while check_at <= last_base:
                            yield from replay.reach(max(check_at, first_base))
                            check_at = _next_check(replay)
                        inline += item[1]
                        expected = last_base + 1
                        last_run = item
                        if tally is not None:
                            tally.run(first_base, item[1], 0, item[2], ref[RECORDS_COUNT],
                                      partial(run_newest, item),
                                      partial(_newest_each, item))
                        continue
                items.expand(item)
                continue
            batch = item
            segment_start = first
            if first:
                first = False
                misnamed = segment_name_finding(seg.kind.base_offset, batch)
                if misnamed is not None:
                    yield misnamed
            lone = batch[lone_at] if type(batch) is Batch else None
            if lone is not None and (base := batch[base_at]) == expected \
                    and _inline(batch, lone, inline_epoch):
                # The common case, checked inline, right after the previous batch.
                inline += 1
                expected = base + 1
                if lone is not last_lone:
                    last_lone = lone
                    problem, payload, apply, flagged = _judge_lone(batch, lone, replay)
                if flagged:
                    yield from _record_findings(batch[position_at], base + lone[0],
                                                problem, payload, path)
                if base >= check_at:
                    yield from replay.reach(base)
                    check_at = _next_check(replay)
                last_inline = batch
                if tally is not None:
                    tally.batch(base, base, batch[MAX_TIMESTAMP],
                                batch[BATCH_LENGTH] + LOG_OVERHEAD, batch[RECORDS_COUNT])
                if watching and (apply or flagged):  # a NoOp in its epoch is not news
                    replay.batch(base, base, batch[LEADER_EPOCH], batch[MAX_TIMESTAMP])
                if apply:
                    yield from replay.apply(payload, base, path, batch[position_at], lone[3],
                                            batch[MAX_TIMESTAMP])
                continue
            if expected is not None:
                span_end = expected - 1
            if span_epoch is not None:
                stats.epochs[span_epoch][1] = span_end
            if batch.base_offset >= check_at:
                yield from replay.reach(batch.base_offset)
                check_at = _next_check(replay)
            epoch = batch.leader_epoch if batch.magic == 2 else -1
            last = batch.last_offset
            if batch.base_offset == expected and batch.magic == 2 and epoch >= last_epoch \
                    and last <= MAX_OFFSET:
                # judge's outcome where it has nothing to say (the batch right after the
                # one before, in its epoch or a later one, its offsets within Kafka's),
                # without its tuples
                state = (last + 1, epoch)
            else:
                state, broken = judge(LogState(expected, last_epoch), batch.base_offset,
                                      batch.last_offset, epoch, batch.magic, segment_start,
                                      path, batch.position)
                yield from broken
            if tally is not None:
                tally_batch(tally, batch)
            if watching and batch.crc_valid:
                last_full = batch
                replay.batch(batch.base_offset, batch.last_offset, batch.leader_epoch,
                             batch.max_timestamp)
            yield from _verify_batch(batch, path, stats, replay)
            if expected is not None:
                layout.reach(expected - 1)
            layout.batch(batch.base_offset, batch.last_offset, epoch)
            expected, last_epoch = state
            if gate is not None:
                gate.last_epoch = last_epoch
            if batch.magic == 2:
                span_epoch, span_end = batch.leader_epoch, batch.last_offset
            inline_epoch = span_epoch if batch.magic == 2 else None
            stats.last_offset = batch.last_offset
    if expected is not None:
        layout.reach(expected - 1)
    stats.batches += inline + span_batches
    stats.records += inline + span_records
    if span_epoch is not None:
        # Inline batches advance only ``expected``: the epoch's last offset is before it.
        stats.epochs[span_epoch][1] = span_end = expected - 1
        stats.last_offset = max(stats.last_offset or -1, span_end)
    if replay is not None and stats.last_offset is not None:
        yield from replay.reach(stats.last_offset + 1)
    if watching:
        ends = [(b.last_offset, b.max_timestamp) for b in (
            last_inline, last_full, None if last_run is None else last_run.last_batch())
            if b is not None] + ([last_span] if last_span is not None else [])
        if ends:
            replay.end(*max(ends, key=lambda e: e[0]))


def _inline(batch: Batch, lone: tuple, epoch: int | None) -> bool:
    """Whether a batch holding one memoised record (``lone``) takes verify's inline
    path: a data record (no control, LogAppendTime or delete-horizon flag) in the epoch
    being read, offset and timestamp deltas 0, and a CreateTime maxTimestamp that is its
    record's.  Batches that repeat such a batch (a Run) take it too, all at once."""
    return batch[LEADER_EPOCH] == epoch and not batch[ATTRIBUTES] & NOT_PLAIN_FLAGS \
        and batch[LAST_OFFSET_DELTA] == 0 and lone[0] == 0 \
        and batch[MAX_TIMESTAMP] == batch[BASE_TIMESTAMP] + lone[1]


def _judge_lone(batch: Batch, lone: tuple, replay: Replay | None
                ) -> tuple[str | None, Any, bool, bool]:
    """The KRaft rule problem, payload, whether to replay it and whether it raises a
    finding, of the record a memo entry stands for (judged once per entry in a row)."""
    problem = record_rule_problem(batch, batch.records()[0])
    payload = decode_metadata(lone[3])
    apply = replay is not None and payload.type != "NO_OP_RECORD"
    return problem, payload, apply, bool(problem or payload.finding)


class _SpanGate:
    """Where a plain span of ``epoch`` must end: before the batch at which the next
    snapshot is compared, and before the next snapshot end the tally counts to (it
    takes a span whole only inside one stretch); and before its first batch when the log
    has been in a later epoch (the full path judges such a batch again, V005: a span is
    taken only where the paths it stands for say nothing)."""

    __slots__ = ("last_epoch", "replay", "tally")

    def __init__(self, replay: ForkedReplay, tally: LogTally | None) -> None:
        self.replay = replay
        self.tally = tally
        self.last_epoch = -1

    def __call__(self, epoch: int) -> int:
        if epoch < self.last_epoch:
            return -1
        check = self.replay.next_check
        before = NO_OFFSET if check is None else check
        end = self.tally.end if self.tally is not None else None
        return before if end is None else min(before, end)


def _next_check(replay: Replay | None) -> float:
    if replay is None or replay.next_check is None:
        return float("inf")
    return replay.next_check


def _record_findings(position: int, offset: int, problem: str | None, payload: Any,
                     path: str) -> Iterator[Finding]:
    """A record's KRaft-rule break (V001) and decoding problem, if any (``payload``
    None: not decoded here)."""
    if problem:
        yield Finding("V001", f"record at offset {offset}: {problem} (KRaft's reader "
                      "rejects it)", path, position, offset)
    if payload is not None and payload.finding:
        code, message = payload.finding
        yield Finding(code, f"record at offset {offset}: {message}", path, position, offset)


def _verify_batch(batch: Batch | LegacyBatch, path: str, stats: LogStats,
                  replay: Replay | ForkedReplay | None = None) -> Iterator[Finding]:
    """A batch's records: read, checked against the header and the KRaft rules, decoded,
    and given to the replay."""
    stats.batches += 1
    if stats.first_offset is None:
        stats.first_offset = batch.base_offset
    stats.last_offset = batch.last_offset
    epoch = batch.leader_epoch
    if batch.magic == 2:
        span = stats.epochs.setdefault(epoch, [batch.base_offset, batch.last_offset])
        span[1] = batch.last_offset
    # What the loop needs of the batch, read once: it runs for every record of a
    # multi-record batch (the partition changes of a busy cluster).
    checked = batch.magic == 2  # a legacy message is V010 already
    base_ts = batch.base_timestamp if checked and batch.delete_horizon_ms is None else None
    control, position = batch.is_control, batch.position
    # A batch with a bad CRC is not trusted: Kafka would not replay it either.
    apply = replay.apply if replay is not None and batch.crc_valid else None
    # A replay in another process decodes the records it is given: they go to it as bytes,
    # and it reports their decoding problems too (decoding each twice cost a fifth).
    forked = replay if apply is not None and type(replay) is ForkedReplay else None
    if forked is not None and base_ts is not None and not control and type(batch) is Batch \
            and batch[LONE] is None and not batch[ATTRIBUTES] & COMPRESSION_MASK \
            and len(batch[RAW]) - HEADER_SIZE <= STREAM_ABOVE:
        # The fast path below without making the records: the values of a section of
        # plain records (formats.batch.plain_values), read in one call.
        values = plain_values(batch[RAW], HEADER_SIZE, batch[RECORDS_COUNT], batch[BASE_OFFSET])
        base = batch[BASE_OFFSET]
        if values is not None and base + len(values) - 1 == batch.last_offset and \
                (base_ts == batch.max_timestamp or batch.timestamp_type != "CreateTime"):
            stats.records += len(values)
            forked.records(values, list(range(base, base + len(values))), path, position,
                           base_ts)
            return
    records, findings = batch_records(batch)
    yield from findings
    stats.records += len(records)
    if forked is not None and base_ts is not None and not control and records and \
            type(records) is list:
        # The common case, a batch of plain metadata records: their bytes go to the child
        # as one item.  Every record at the base timestamp, none that breaks a KRaft rule
        # (_rule_problem's cases), offsets base..lastOffset in order and the newest
        # timestamp (the base) as maxTimestamp: then neither _check_records nor the loop
        # below has anything to say.  Any other batch takes them.
        values, offsets = [], []
        for r in records:
            if r[1] != base_ts or r[4] or r[2] is not None or not r[3]:
                break
            values.append(r[3])
            offsets.append(r[0])
        else:
            base = batch.base_offset
            if offsets[-1] == batch.last_offset and \
                    offsets == list(range(base, base + len(offsets))) and \
                    (base_ts == batch.max_timestamp or batch.timestamp_type != "CreateTime"):
                forked.records(values, offsets, path, position, base_ts)
                return
    yield from _check_records(batch, records, path)
    for r in records:
        problem = _rule_problem(r, base_ts, control) if checked else None
        if control:
            p = decode_control(r[2], r[3])
            if p.type == "LEADER_CHANGE":
                stats.leader_changes.add(epoch)
            if apply is not None and replay.watch is not None:
                replay.control(r[0], epoch, r[2], r[3])
        elif forked is not None:
            forked.record(r[3], r[0], path, position, bool(problem), r[1])
            if problem:
                yield from _record_findings(position, r[0], problem, None, path)
            continue
        else:
            p = decode_metadata(r[3])
            if apply is not None and p.type != "NO_OP_RECORD":
                found = apply(p, r[0], path, position, r[3], r[1])
                if found:
                    yield from found
        if problem or p.finding:
            yield from _record_findings(position, r[0], problem, p, path)


def _first_offset(part: PartitionDir) -> int | None:
    """The base offset of the log's first batch (read from its header only)."""
    for seg in part.segments:
        try:
            first = first_base_offset(seg.path)
        except KmetaError:
            return None
        if first is not None:
            return first
    return None


#: A metadata log at least this long has its indexes checked in a process beside the pass
#: (with more than one job): below it, the process costs more than it saves.
INDEXES_BESIDE_FROM = 32 << 20


def verify_metadata_partition(part: PartitionDir, progress: Progress = QUIET,
                              jobs: int = 1, listeners: Listeners = NOBODY
                              ) -> tuple[list[Finding], LogStats]:
    """Batches, records, leader epochs, snapshots and indexes of one ``__cluster_metadata``
    directory (see :func:`unreadable` first); with ``jobs`` > 1, the indexes are checked by
    another process meanwhile (the findings are the same)."""
    stats = LogStats()
    size = _size(part.segments)
    # started first: the replay's fork below must not be copied into it
    indexes = Beside(indexes_beside, (part,),
                     jobs if size >= INDEXES_BESIDE_FROM else 1)
    replay = plan_replay(part, _first_offset(part), stats.snapshot_findings, progress)
    if listeners.tally is not None:
        stats.tally = listeners.tally(part)
    if listeners.watch is not None and replay is not None:
        replay.watch = listeners.watch(part, replay)
    findings: list[Finding] = []
    # a long log's replay runs beside the pass, in a second process where one pays
    feed = forked_replay(replay, findings, size, _record_findings)
    try:
        for finding in verify_log(part.segments, stats, feed, progress):
            findings.append(finding)  # one at a time: the forked replay counts them
        # the indexes need the pass's layout, not the image: checked while the replay
        # may still run
        index_findings = list(verify_indexes(part, stats, indexes.result()))
        if type(feed) is ForkedReplay:
            stats.image = feed.finish(stats.snapshot_findings)
            stats.watch = feed.watch
        else:
            stats.image = replay.image if replay is not None else None
            stats.watch = None if replay is None else replay.watch
        if stats.tally is not None:
            stats.tally.finish()
        findings += verify_model(part, stats, progress)
        findings += index_findings
    finally:
        if type(feed) is ForkedReplay:
            feed.close()
        indexes.close()
    return findings, stats


def _size(files: list[LogFile]) -> int:
    size = 0
    for f in files:
        with contextlib.suppress(OSError):
            size += f.path.stat().st_size
    return size
