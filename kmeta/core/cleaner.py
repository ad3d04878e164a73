"""Kafka's log cleaner, one round at a time, on a model of a partition's log; and
KIP-280's compaction strategies in the same round.

The rules are Kafka's (``LogCleaner.scala``, ``LogCleanerManager.scala``,
``MemoryRecords.filterTo``, at 4.1.0-SNAPSHOT of December 2024, KAFKA-17076 included):

* **the round's range**: the offset map is built over the dirty range [first dirty offset,
  first uncleanable offset); the round then rewrites the whole log from its first segment
  up to the map's latest offset + 1 (already-clean segments too: that is how tombstones
  and markers leave in a later round);
* **the offset map**: per key (its MD5 digest), the last offset in the dirty range; control
  batches, aborted transactions' batches and keyless records stay out; a map that fills
  ends the range early;
* **per batch, first**: a batch of an aborted transaction (``.txnindex``) is deleted; a
  COMMIT marker may go once no transactional batch of its producer was read since the
  producer's previous marker in this round, an ABORT once no batch of its transaction
  was; markers then wait for their delete horizon.  A batch holding an active producer's
  last data, or ending at the round's upper bound (KAFKA-17076), stays as an empty batch
  when it loses all its records;
* **per record**: above the map's latest offset it stays; keyless it goes; else it stays
  when it is the latest of its key and has a value or its delete horizon has not passed
  (magic 0/1: the segment is younger than the last clean segment less
  ``delete.retention.ms``);
* **the delete horizon**: the first round that keeps a tombstone (or a marker that may go)
  in a v2 batch without one rewrites it with ``now + delete.retention.ms`` in its base
  timestamp and attribute bit 0x40: removal takes a second round.

KIP-280 (accepted, never merged) changes only which record of a key wins: ``timestamp``
(highest record timestamp, log-append time from the batch; ties by offset) or
``header:NAME`` (the last such header, an 8-byte big-endian long, highest wins; a record
with it beats one without; ties and neither by offset); and it always keeps the record at
the end of the cleaned range, so offsets are never reused.
"""

from __future__ import annotations

import hashlib
import heapq
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["CBatch", "CRecord", "CSegment", "CleanerConfig", "OffsetMap", "Round",
           "RoundResult", "Strategy", "TxnEntry", "build_offset_map",
           "clean_round", "producer_states"]

DAY_MS = 86_400_000


@dataclass(frozen=True)
class Strategy:
    """How the winner of a key is chosen: ``offset`` (Kafka's), ``timestamp`` or ``header``."""

    kind: str = "offset"
    header: str | None = None

    @classmethod
    def parse(cls, text: str) -> Strategy:
        if text in ("offset", "timestamp"):
            return cls(text)
        if text.startswith("header:") and len(text) > 7:
            return cls("header", text[7:])
        raise ValueError(f"{text!r}: offset, timestamp or header:NAME")

    def __str__(self) -> str:
        return self.kind if self.header is None else f"header:{self.header}"


@dataclass(frozen=True)
class CRecord:
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()



def header_long(r: Any, name: str) -> int | None:
    """A record's last header ``name`` as an 8-byte big-endian long; None when absent or
    not 8 bytes (KIP-280 reads those as missing).  ``r``: a CRecord or a read Record."""
    for k, v in reversed(r.headers):
        if k == name:
            return struct.unpack(">q", v)[0] if v is not None and len(v) == 8 else None
    return None


@dataclass(frozen=True)
class CBatch:
    base_offset: int
    last_offset: int
    records: tuple[Any, ...]  # CRecords, or the Records a reader gave (the same fields)
    magic: int = 2
    producer_id: int = -1
    producer_epoch: int = -1
    base_sequence: int = -1
    transactional: bool = False
    control: bool = False
    control_type: str | None = None  # COMMIT or ABORT for a marker
    delete_horizon: int | None = None
    log_append_time: bool = False
    max_timestamp: int = -1
    compression: int = 0
    leader_epoch: int = 0
    size: int = 0  # its bytes on disk, when read from a file
    raw: bytes | None = None  # its bytes, when read from a file (a kept batch is copied)

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id >= 0


@dataclass(frozen=True)
class TxnEntry:
    """A ``.txnindex`` entry: an aborted transaction, its ABORT marker at ``last_offset``."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


@dataclass
class CSegment:
    """A segment: its batches (a list, or a one-shot iterator from a reader, then with
    ``end`` given), the file's modification time, its ``.txnindex`` entries."""

    base_offset: int
    batches: Iterable[CBatch]
    last_modified: int = 0
    aborted: list[TxnEntry] = field(default_factory=list)
    end: int | None = None  # the offset after its last batch

    @property
    def next_offset(self) -> int:
        if self.end is not None:
            return self.end
        batches = list(self.batches)
        return batches[-1].next_offset if batches else self.base_offset


@dataclass(frozen=True)
class CleanerConfig:
    delete_retention_ms: int = DAY_MS
    min_compaction_lag_ms: int = 0
    strategy: Strategy = Strategy()
    map_capacity: int | None = None  # keys the map holds before it is full; None: no limit


# ------------------------------------------------------------------------- the offset map


def sort_key(strategy: Strategy, batch: CBatch, r: CRecord) -> tuple[int, ...]:
    """The order in which records of one key win (the greatest wins)."""
    if strategy.kind == "offset":
        return (r.offset,)
    if strategy.kind == "timestamp":
        ts = batch.max_timestamp if batch.log_append_time else r.timestamp
        return (ts, r.offset)
    value = header_long(r, strategy.header or "")
    return (0, 0, r.offset) if value is None else (1, value, r.offset)


def digest(key: bytes) -> bytes:
    """The map's key.  Kafka's SkimpyOffsetMap stores the key's MD5 (16 bytes); a key
    shorter than that is kept as it is (smaller and faster, and never equal to a
    digest, whose length differs)."""
    if len(key) < 16:
        return key
    return hashlib.md5(key, usedforsecurity=False).digest()


class OffsetMap:
    """Key digest -> the winning record's order (its offset last); ``latest_offset``: the
    last offset the map covers."""

    __slots__ = ("entries", "latest_offset", "capacity", "full")

    def __init__(self, capacity: int | None = None) -> None:
        # the offset strategy keeps the offset alone (less memory per key), the others
        # their order tuple, the offset last
        self.entries: dict[bytes, Any] = {}
        self.latest_offset = -1
        self.capacity = capacity
        self.full = False

    def __len__(self) -> int:
        return len(self.entries)

    def offset(self, key: bytes) -> int:
        found = self.entries.get(digest(key))
        if found is None:
            return -1
        return found if type(found) is int else found[-1]


class _Txns:
    """Kafka's CleanedTransactionMetadata: which batches and markers a round may drop."""

    def __init__(self) -> None:
        self.pending: list[tuple[int, int, TxnEntry]] = []  # heap by first offset
        self.ongoing_aborted: dict[int, list] = {}  # pid -> [entry, last observed or None]
        self.ongoing_committed: set[int] = set()
        self.kept_index: list[TxnEntry] = []
        self._n = 0

    def add(self, entries: Iterable[TxnEntry]) -> None:
        for e in entries:
            self._n += 1
            heapq.heappush(self.pending, (e.first_offset, self._n, e))

    def _consume_up_to(self, offset: int) -> None:
        while self.pending and self.pending[0][0] <= offset:
            e = heapq.heappop(self.pending)[2]
            self.ongoing_aborted.setdefault(e.producer_id, [e, None])

    def on_batch(self, b: CBatch) -> bool:
        """True: the batch belongs to an aborted transaction."""
        self._consume_up_to(b.last_offset)
        if not b.transactional:
            return False
        state = self.ongoing_aborted.get(b.producer_id)
        if state is not None:
            state[1] = b.last_offset
            return True
        self.ongoing_committed.add(b.producer_id)
        return False

    def on_marker(self, b: CBatch) -> bool:
        """True: the marker may be discarded (once its delete horizon passes)."""
        self._consume_up_to(b.last_offset)
        if not b.records:
            return True
        if b.control_type == "ABORT":
            state = self.ongoing_aborted.pop(b.producer_id, None)
            if state is not None and state[1] is not None:
                self.kept_index.append(state[0])
                return False
            return True
        if b.control_type == "COMMIT":
            if b.producer_id in self.ongoing_committed:
                self.ongoing_committed.discard(b.producer_id)
                return False
            return True
        return False


def _aborted_between(segments: list[CSegment], start: int, upper: int,
                     log_start: int) -> list[TxnEntry]:
    """``collectAbortedTransactions``: the ``.txnindex`` entries from the segment holding
    ``start`` on (an entry sits with its ABORT marker, maybe segments after its first
    batch), until one whose last stable offset reaches ``upper``."""
    out = []
    first = max((i for i, s in enumerate(segments) if s.base_offset <= start), default=0)
    for s in segments[first:]:
        for e in s.aborted:
            if e.last_offset >= log_start and e.first_offset < upper:
                out.append(e)
            if e.last_stable_offset >= upper:
                return out
    return out


def build_offset_map(segments: list[CSegment], start: int, end: int, config: CleanerConfig,
                     log_start: int, latest_before: int = -1) -> OffsetMap:
    """The map over the dirty range [start, end).  ``latest_before``: the latest offset of
    a map that is reused without reset (Kafka's tests' FakeOffsetMap keeps it across
    rounds, so a round over an empty dirty range still rewrites the log below it)."""
    m = OffsetMap(config.map_capacity)
    m.latest_offset = latest_before
    txns = _Txns()
    txns.add(_aborted_between(segments, start, end, log_start))
    strategy = config.strategy
    offset_only = strategy.kind == "offset"
    entries = m.entries
    dirty = [s for i, s in enumerate(segments) if s.base_offset < end and
             (i + 1 == len(segments) or segments[i + 1].base_offset > start)]
    for i, seg in enumerate(dirty):
        for b in seg.batches:
            if b.last_offset < start:
                continue
            if b.control:
                txns.on_marker(b)
            elif not txns.on_batch(b):
                for r in b.records:
                    if r.key is None or r.offset < start:
                        continue
                    if m.capacity is not None and len(entries) >= m.capacity:
                        m.full = True
                        return m
                    d = digest(r.key)
                    if offset_only:
                        entries[d] = r.offset
                    else:
                        k = sort_key(strategy, b, r)
                        old = entries.get(d)
                        if old is None or k > old:
                            entries[d] = k
                    m.latest_offset = r.offset
            if b.last_offset >= start:
                m.latest_offset = b.last_offset
        bound = dirty[i + 1].base_offset if i + 1 < len(dirty) else end
        m.latest_offset = max(m.latest_offset, bound - 1)
    return m


# ------------------------------------------------------------------------- producers


@dataclass(frozen=True)
class ProducerState:
    last_data_offset: int | None
    epoch: int
    last_timestamp: int


def producer_states(batches: Iterable[CBatch]) -> dict[int, ProducerState]:
    """Each producer's last data offset and epoch, as the producer state manager keeps them
    while the log is appended (see :func:`note_producer`)."""
    out: dict[int, ProducerState] = {}
    for b in batches:
        if b.has_producer_id:
            note_producer(out, b.producer_id, b.producer_epoch, b.control, b.last_offset,
                          b.max_timestamp)
    return out


def note_producer(states: dict[int, ProducerState], producer_id: int, epoch: int,
                  control: bool, last_offset: int, timestamp: int) -> None:
    """One batch of a producer appended: a data batch sets its last data offset, a marker
    of a newer epoch clears it."""
    old = states.get(producer_id)
    ts = max(timestamp, old.last_timestamp if old else -1)
    if control:
        data = old.last_data_offset if old and epoch == old.epoch else None
        states[producer_id] = ProducerState(data, epoch, ts)
    else:
        states[producer_id] = ProducerState(last_offset, epoch, ts)


# ------------------------------------------------------------------------- one round


@dataclass
class BatchOutcome:
    """What the round did to one batch."""

    before: CBatch
    after: CBatch | None  # None: deleted
    why: str  # kept, rewritten, emptied, deleted (aborted / marker / empty)
    dropped: tuple[CRecord, ...] = ()


@dataclass
class RoundResult:
    segments: list[CSegment]
    end_offset: int  # the next first dirty offset (the new checkpoint)
    map: OffsetMap
    outcomes: list[BatchOutcome]
    upper_bound: int


class Round:
    """One cleaning round (``Cleaner.doClean``) over segments whose batches may be one-shot
    iterators from a reader: the map is built on creation (the pass over the dirty range),
    :meth:`clean` then streams every batch's outcome (the pass over the log up to the
    map's end).  The segments given to each pass may be fresh views of the same log."""

    def __init__(self, segments: list[CSegment], first_dirty: int, first_uncleanable: int,
                 config: CleanerConfig, log_start: int | None = None,
                 latest_before: int = -1) -> None:
        if log_start is None:
            log_start = segments[0].base_offset if segments else 0
        self.log_start = log_start
        self.first_dirty = first_dirty
        self.upper_bound = first_uncleanable
        self.config = config
        clean_before = [s for s in segments if s.base_offset < first_dirty]
        self.legacy_horizon = clean_before[-1].last_modified - config.delete_retention_ms \
            if clean_before else 0
        self.map = build_offset_map(segments, first_dirty, first_uncleanable, config,
                                    log_start, latest_before)
        self.end = self.map.latest_offset + 1  # the next first dirty offset
        self.kept_index: dict[int, list[TxnEntry]] = {}  # segment base -> its .txnindex

    def clean(self, segments: list[CSegment], now: int, producers: dict[int, ProducerState]
              ) -> Iterator[tuple[CSegment, BatchOutcome]]:
        """Every batch of the segments below the round's end, with what becomes of it."""
        txns = _Txns()
        for i, seg in enumerate(segments):
            if seg.base_offset >= self.end:
                return
            upper = segments[i + 1].base_offset if i + 1 < len(segments) else seg.next_offset
            txns.add(_aborted_between(segments, seg.base_offset, upper, self.log_start))
            retain_legacy = seg.last_modified > self.legacy_horizon
            txns.kept_index = self.kept_index.setdefault(seg.base_offset, [])
            for b in seg.batches:
                yield seg, _clean_batch(b, self.map, txns, self.config, now, producers,
                                        self.upper_bound, retain_legacy, self.end)


def clean_round(segments: list[CSegment], first_dirty: int, first_uncleanable: int, now: int,
                config: CleanerConfig, producers: dict[int, ProducerState],
                log_start: int | None = None, latest_before: int = -1) -> RoundResult:
    """One round on segments held in memory, returning the new segments.
    ``first_uncleanable`` is the rounded bound (a segment base); ``producers`` the active
    producers (expired ones left out by the caller)."""
    r = Round(segments, first_dirty, first_uncleanable, config, log_start, latest_before)
    kept: dict[int, list[CBatch]] = {}
    outcomes: list[BatchOutcome] = []
    for seg, o in r.clean(segments, now, producers):
        outcomes.append(o)
        if o.after is not None:
            kept.setdefault(seg.base_offset, []).append(o.after)
    out = [CSegment(s.base_offset, kept.get(s.base_offset, []), s.last_modified,
                    r.kept_index.get(s.base_offset, []))
           if s.base_offset < r.end else s for s in segments]
    return RoundResult(out, r.end, r.map, outcomes, first_uncleanable)


def _clean_batch(b: CBatch, m: OffsetMap, txns: _Txns, config: CleanerConfig, now: int,
                 producers: dict[int, ProducerState], upper_bound: int, retain_legacy: bool,
                 end: int) -> BatchOutcome:
    can_discard = txns.on_marker(b) if b.control else txns.on_batch(b)
    if b.control:
        discard_records = can_discard and b.delete_horizon is not None and \
            b.delete_horizon <= now
    else:
        discard_records = can_discard
    # an empty batch keeps an active producer's last sequence, and the round's last batch
    # keeps the offset before the bound (KAFKA-17076)
    if b.has_producer_id and _last_of_producer(b, producers):
        retention, holder = "retain_empty", "the producer's last sequence"
    elif b.next_offset == upper_bound:
        retention, holder = "retain_empty", "the round's last batch"
    elif discard_records:
        return BatchOutcome(b, None, "deleted: aborted transaction" if not b.control
                            else "deleted: marker past its delete horizon", b.records)
    else:
        retention, holder = "delete_empty", ""
    marker_for_empty_txn = can_discard and b.control
    kept: list[CRecord] = []
    dropped: list[CRecord] = []
    for r in b.records:
        if discard_records:
            keep = False
        elif b.control:
            keep = True
        else:
            keep = _retain(b, r, m, config, now, retain_legacy, end)
        (kept if keep else dropped).append(r)
    if kept:
        need_horizon = b.magic >= 2 and b.delete_horizon is None and (
            marker_for_empty_txn or any(r.value is None for r in kept))
        if not dropped and not need_horizon:
            return BatchOutcome(b, b, "kept")
        horizon = now + config.delete_retention_ms if need_horizon else b.delete_horizon
        base = b.base_offset if b.magic >= 2 else kept[0].offset
        last = b.last_offset if b.magic >= 2 else kept[-1].offset
        after = replace(b, base_offset=base, last_offset=last, records=tuple(kept),
                        delete_horizon=horizon)
        return BatchOutcome(b, after, "rewritten" + (", delete horizon set" if need_horizon
                                                     else ""), tuple(dropped))
    if retention == "retain_empty" and b.magic >= 2:
        after = replace(b, records=(), delete_horizon=None, compression=0)
        cause = "aborted transaction" if discard_records and not b.control else \
            "marker past its delete horizon" if discard_records else "no record left"
        return BatchOutcome(b, after, f"emptied: {cause}, kept empty for {holder}",
                            tuple(dropped))
    return BatchOutcome(b, None, "deleted: no record left", tuple(dropped))


def _last_of_producer(b: CBatch, producers: dict[int, ProducerState]) -> bool:
    state = producers.get(b.producer_id)
    if state is None:
        return False
    if state.last_data_offset is not None:
        return b.last_offset == state.last_data_offset
    return b.control and b.producer_epoch == state.epoch


def _retain(b: CBatch, r: CRecord, m: OffsetMap, config: CleanerConfig, now: int,
            retain_legacy: bool, end: int) -> bool:
    if r.offset > m.latest_offset:
        return True
    if r.key is None:
        return False
    strategy = config.strategy
    if strategy.kind == "offset":
        latest = r.offset >= m.offset(r.key)
    else:
        if r.offset == end - 1:  # KIP-280: the record at the end is always kept
            return True
        found = m.entries.get(digest(r.key))
        latest = found is None or sort_key(strategy, b, r) >= found
    if not latest:
        return False
    if r.value is not None:
        return True
    if b.magic >= 2:
        return b.delete_horizon is None or now < b.delete_horizon
    return retain_legacy
