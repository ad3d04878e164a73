"""Kafka's log cleaner as ``kmeta.core.cleaner`` models it, on the cases of Kafka's own
``LogCleanerTest`` (core/src/test/scala/unit/kafka/log/, 4.1.0-SNAPSHOT): the same appends,
the same rolls, the same cleaning calls and clocks, and the results Kafka's assertions
expect.  A small model of the test harness builds the logs: one v2 batch per append,
key = value = the key's number, a marker per control batch, the aborted transactions in
the ``.txnindex`` of the marker's segment."""

from __future__ import annotations

import pytest

from kmeta.core.cleaner import (
    DAY_MS,
    CBatch,
    CleanerConfig,
    CRecord,
    CSegment,
    Strategy,
    TxnEntry,
    clean_round,
    producer_states,
)

NOW = 1_700_000_000_000
LARGE = 2**63 - 1 - DAY_MS - 1  # LogCleanerTest.largeTimestamp
LONG_MAX = 2**63 - 1


class Log:
    """What the test harness appends, as segments of CBatches."""

    def __init__(self, config: CleanerConfig | None = None) -> None:
        self.segments = [CSegment(0, [])]
        self.next = 0
        self.history: list[CBatch] = []
        self.open: dict[int, int] = {}  # pid -> first offset of its open transaction
        self.config = config or CleanerConfig()
        self.latest = -1  # the test map's last offset: FakeOffsetMap.clear() keeps it

    def _add(self, b: CBatch) -> None:
        self.segments[-1].batches.append(b)
        self.history.append(b)
        self.next = b.next_offset

    def append(self, *keys: int | None, pid: int = -1, txn: bool = False, epoch: int = 0,
               value: bool = True, ts: int = NOW, seq: int = -1) -> None:
        records = tuple(CRecord(self.next + i, ts, None if k is None else str(k).encode(),
                                str(k).encode() if value else None)
                        for i, k in enumerate(keys))
        if txn and pid not in self.open:
            self.open[pid] = self.next
        self._add(CBatch(self.next, self.next + len(keys) - 1, records, producer_id=pid,
                         producer_epoch=epoch if pid >= 0 else -1, base_sequence=seq,
                         transactional=txn, max_timestamp=ts))

    def tombstone(self, key: int, ts: int = NOW) -> None:
        self.append(key, value=False, ts=ts)

    def marker(self, pid: int, kind: str, epoch: int = 0) -> None:
        offset = self.next
        first = self.open.pop(pid, None)
        if kind == "ABORT" and first is not None:
            others = [f for p, f in self.open.items()]
            self.segments[-1].aborted.append(
                TxnEntry(pid, first, offset, min(others) if others else offset + 1))
        self._add(CBatch(offset, offset, (CRecord(offset, NOW, b"\x00\x00\x00\x00",
                                                  b"\x00\x00\x00\x00\x00\x00"),),
                         producer_id=pid, producer_epoch=epoch, transactional=True,
                         control=True, control_type=kind, max_timestamp=NOW))

    def roll(self) -> None:
        if self.segments[-1].batches:
            self.segments.append(CSegment(self.next, []))

    def clean(self, first_dirty: int, now: int = NOW, uncleanable: int | None = None) -> int:
        """``LogToClean(firstDirty, activeSegment.baseOffset)`` then ``doClean``."""
        bound = self.segments[-1].base_offset if uncleanable is None else uncleanable
        result = clean_round(self.segments, first_dirty, bound, now, self.config,
                             producer_states(self.history), latest_before=self.latest)
        self.segments = result.segments
        self.latest = result.map.latest_offset
        return result.end_offset

    def two_pass(self, first_dirty: int, now: int) -> int:
        self.clean(first_dirty, now)
        return self.clean(first_dirty, now + DAY_MS + 1)

    # LogCleanerTest's inspection helpers
    def batches(self) -> list[CBatch]:
        return [b for s in self.segments for b in s.batches]

    def keys(self) -> list[int]:
        return [int(r.key) for b in self.batches() if not b.control for r in b.records
                if r.value is not None]

    def offsets(self) -> list[int]:
        return [r.offset for b in self.batches() for r in b.records
                if r.key is not None and r.value is not None]

    def last_offsets(self) -> list[int]:
        return [b.last_offset for b in self.batches()]

    def aborted(self) -> list[TxnEntry]:
        return [e for s in self.segments for e in s.aborted]


def test_basic_transaction_aware_cleaning() -> None:
    log = Log()
    log.append(1, 2, pid=1, txn=True)
    log.append(2, 3, pid=2, txn=True)
    log.append(3, 4, pid=1, txn=True)
    log.marker(1, "ABORT")
    log.marker(2, "COMMIT")
    log.append(2, pid=1, txn=True)
    log.marker(1, "COMMIT")
    log.roll()
    aborted = log.aborted()
    log.clean(0)
    assert log.keys() == [3, 2]
    assert log.offsets() == [3, 6, 7, 8, 9]
    assert log.aborted() == aborted


def test_clean_with_transactions_spanning_segments() -> None:
    log = Log()
    log.append(1, 2, pid=1, txn=True)
    log.append(2, 3, pid=3, txn=True)
    log.append(3, 4, pid=2, txn=True)
    log.roll()
    log.append(5, 6, pid=2, txn=True)
    log.append(6, 7, pid=3, txn=True)
    log.append(7, 8, pid=1, txn=True)
    log.marker(2, "ABORT")
    log.append(8, 9, pid=3, txn=True)
    log.marker(3, "COMMIT")
    log.append(9, 10, pid=1, txn=True)
    log.marker(1, "ABORT")
    assert log.clean(0, uncleanable=6) == 6
    assert log.keys() == [2, 3, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10]
    log.roll()
    log.append(11, pid=2, txn=True)
    log.append(12, pid=1, txn=True)
    log.clean(6, uncleanable=19)
    assert log.keys() == [2, 3, 6, 7, 8, 9, 11, 12]


def test_commit_marker_removal() -> None:
    log = Log()
    log.append(1, pid=1, txn=True)
    log.append(2, 3, pid=1, txn=True)
    log.marker(1, "COMMIT")
    log.append(2, pid=1, txn=True)
    log.marker(1, "COMMIT")
    log.roll()
    assert log.clean(0, LARGE) == 6
    assert (log.keys(), log.offsets()) == ([1, 3, 2], [0, 2, 3, 4, 5])
    log.append(1, 3, pid=1, txn=True)
    log.marker(1, "COMMIT")
    log.roll()
    log.clean(6, LARGE)
    assert (log.keys(), log.offsets()) == ([2, 1, 3], [3, 4, 5, 6, 7, 8])
    log.clean(9, LARGE)  # the marker may go now: it is given its delete horizon
    assert (log.keys(), log.offsets()) == ([2, 1, 3], [3, 4, 5, 6, 7, 8])
    log.clean(9, LONG_MAX)
    assert (log.keys(), log.offsets()) == ([2, 1, 3], [4, 5, 6, 7, 8])


def test_deleted_batches_with_no_messages_read() -> None:
    log = Log()
    log.append(1, pid=1, txn=True)
    log.marker(1, "ABORT")
    log.append(2, pid=1, txn=True)
    log.append(2, pid=1, txn=True)
    log.marker(1, "COMMIT")
    log.roll()
    log.clean(0, LARGE)
    assert (log.keys(), log.offsets()) == ([2], [1, 3, 4])
    log.two_pass(0, LARGE)
    assert (log.keys(), log.offsets()) == ([2], [3, 4])


def test_commit_marker_retention_with_empty_batch() -> None:
    log = Log()
    log.append(2, 3, pid=1, txn=True)
    log.roll()
    log.append(2, 3, pid=2, txn=True)
    log.marker(2, "COMMIT")
    log.roll()
    log.append(2)
    log.append(3)
    log.marker(1, "COMMIT")
    log.roll()
    log.clean(0, LARGE)
    state = ([2, 3], [4, 5, 6, 7], [1, 3, 4, 5, 6, 7])
    assert (log.keys(), log.offsets(), log.last_offsets()) == state
    log.clean(8, LARGE)
    assert (log.keys(), log.offsets(), log.last_offsets()) == state
    log.append(1, pid=2, txn=True)
    log.marker(2, "COMMIT")
    log.roll()
    log.clean(8, LARGE)
    assert (log.keys(), log.offsets(), log.last_offsets()) == \
        ([2, 3, 1], [4, 5, 6, 7, 8, 9], [1, 4, 5, 6, 7, 8, 9])
    log.two_pass(10, LARGE)
    assert (log.keys(), log.offsets(), log.last_offsets()) == \
        ([2, 3, 1], [5, 6, 7, 8, 9], [1, 5, 6, 7, 8, 9])


def test_clean_empty_control_batch() -> None:
    log = Log()
    log.marker(1, "COMMIT")
    log.append(2)
    log.append(3)
    log.roll()
    log.two_pass(0, LARGE)
    state = ([2, 3], [1, 2], [0, 1, 2])
    assert (log.keys(), log.offsets(), log.last_offsets()) == state
    log.clean(3, LONG_MAX)
    assert (log.keys(), log.offsets(), log.last_offsets()) == state


def test_committed_and_aborted_transactions_spanning_segments() -> None:
    log = Log()
    log.append(1, pid=1, txn=True)
    log.roll()
    log.marker(1, "COMMIT")
    log.roll()
    log.two_pass(0, LARGE)
    assert (log.offsets(), log.last_offsets()) == ([0, 1], [0, 1])

    log = Log()
    log.append(1, pid=1, txn=True)
    log.roll()
    log.marker(1, "ABORT")
    log.roll()
    log.clean(0, LARGE)
    assert (log.offsets(), log.last_offsets()) == ([1], [0, 1])
    log.clean(0, LONG_MAX)
    assert (log.offsets(), log.last_offsets()) == ([1], [0, 1])


def test_abort_marker_removal() -> None:
    log = Log()
    log.append(1, pid=1, txn=True)
    log.append(2, 3, pid=1, txn=True)
    log.marker(1, "ABORT")
    log.append(3, pid=1, txn=True)
    log.marker(1, "COMMIT")
    log.roll()
    log.clean(0, LARGE)
    assert (log.keys(), log.offsets()) == ([3], [3, 4, 5])
    log.two_pass(6, LARGE)
    assert (log.keys(), log.offsets()) == ([3], [4, 5])


def test_empty_batch_removal_with_sequence_reuse() -> None:
    log = Log()
    log.append(1, pid=1, txn=True, seq=0)
    log.marker(1, "COMMIT")
    log.append(2, pid=1, txn=True, seq=0)
    log.marker(1, "COMMIT")
    log.append(1)
    log.append(2)
    log.roll()
    log.clean(0, LARGE)
    assert (log.offsets(), log.last_offsets()) == ([1, 3, 4, 5], [1, 2, 3, 4, 5])
    log.two_pass(0, LARGE)
    assert (log.offsets(), log.last_offsets()) == ([3, 4, 5], [2, 3, 4, 5])


def test_abort_marker_retention_with_empty_batch() -> None:
    log = Log()
    log.append(2, 3, pid=1, txn=True)
    log.marker(1, "ABORT")
    log.roll()
    log.clean(0, LARGE)
    state = ([], [2], [1, 2])
    assert (log.keys(), log.offsets(), log.last_offsets()) == state
    assert len(log.aborted()) == 1
    log.two_pass(3, LARGE)
    assert (log.keys(), log.offsets(), log.last_offsets()) == state
    log.append(1, pid=1, txn=True)  # a new transaction, left open
    log.roll()
    log.clean(3, LARGE)
    assert (log.keys(), log.offsets(), log.last_offsets()) == ([1], [2, 3], [2, 3])
    assert len(log.aborted()) == 1
    log.two_pass(4, LARGE)
    assert (log.keys(), log.offsets(), log.last_offsets()) == ([1], [3], [3])
    assert log.aborted() == []


def test_producers_keep_their_last_sequence() -> None:
    # testDuplicateCheckAfterCleaning
    log = Log()
    log.append(1, 2, 3, pid=1, seq=0)
    log.append(3, 1, 4, pid=2, seq=0)
    log.append(1, 4, pid=3, seq=0)
    log.roll()
    log.clean(0)
    assert (log.last_offsets(), log.keys(), log.offsets()) == ([2, 5, 7], [2, 3, 1, 4],
                                                               [1, 3, 6, 7])
    log.append(2, pid=4, seq=0)
    log.roll()
    log.clean(0)
    assert (log.last_offsets(), log.keys(), log.offsets()) == ([2, 5, 7, 8], [3, 1, 4, 2],
                                                               [3, 6, 7, 8])
    # testLogCleanerRetainsProducerLastSequence
    log = Log()
    log.append(0)
    log.append(0, pid=1, seq=0)
    log.append(0, pid=2, seq=0)
    log.append(0, pid=3, seq=0)
    log.append(1, pid=2, seq=1)
    log.roll()
    log.clean(0)
    assert (log.last_offsets(), log.keys(), log.offsets()) == ([1, 3, 4], [0, 1], [3, 4])


def test_last_sequence_kept_even_if_the_transaction_aborted() -> None:
    log = Log()
    log.append(1, pid=1, txn=True)
    log.append(2, 3, pid=1, txn=True)
    log.marker(1, "ABORT")
    log.roll()
    log.clean(0)
    assert (log.last_offsets(), log.keys(), log.offsets()) == ([2, 3], [], [3])
    log.append(1, 5, pid=1, txn=True)
    log.roll()
    log.clean(0)
    assert (log.last_offsets(), log.keys(), log.offsets()) == ([3, 5], [1, 5], [3, 4, 5])


def test_partial_segment_clean() -> None:
    log = Log(CleanerConfig(map_capacity=1))
    for k in (0, 1, 0, 1, 0):
        log.append(k)
    log.roll()
    assert log.clean(2) == 3
    assert (log.keys(), log.offsets()) == ([1, 0, 1, 0], [1, 2, 3, 4])
    assert log.clean(3) == 4
    assert (log.keys(), log.offsets()) == ([0, 1, 0], [2, 3, 4])
    assert log.clean(4) == 5
    assert (log.keys(), log.offsets()) == ([1, 0], [3, 4])


def test_multi_pass_cleaning_with_aborted_transactions() -> None:
    log = Log(CleanerConfig(delete_retention_ms=50_000, map_capacity=3))
    log.append(1, 2, pid=1, txn=True)
    log.append(2, 3, pid=2, txn=True)
    log.append(3, 4, pid=1, txn=True)
    log.marker(1, "COMMIT")
    log.marker(2, "COMMIT")
    log.append(2, 3, pid=1, txn=True)
    log.marker(1, "ABORT")
    log.append(4, 5, pid=2, txn=True)
    log.append(5, 6, pid=1, txn=True)
    log.marker(1, "COMMIT")
    log.marker(2, "ABORT")
    log.append(6, 7, pid=2, txn=True)
    log.marker(2, "COMMIT")
    assert log.clean(0, uncleanable=20) == 4
    assert [b.base_offset for b in log.batches()] == [0, 2, 4, 6, 7, 10, 13, 15, 16, 17, 19]
    assert log.offsets() == [0, 2, 3, 4, 5, 6, 7, 10, 13, 14, 15, 16, 17, 18, 19]
    assert log.clean(4, uncleanable=20) == 14
    assert log.offsets() == [0, 2, 4, 5, 6, 7, 10, 13, 14, 15, 16, 17, 18, 19]
    assert log.aborted() == []
    assert log.clean(14, NOW + 50_000, uncleanable=20) == 20
    assert [b.base_offset for b in log.batches()] == [0, 2, 4, 6, 7, 13, 15, 17, 19]
    assert log.offsets() == [0, 2, 4, 5, 6, 7, 13, 15, 17, 18, 19]


def test_keys_equal_to_marker_keys_do_not_remove_markers() -> None:
    log = Log()
    log.append(1, pid=1, txn=True)
    log.marker(1, "COMMIT")
    log.segments[-1].batches.append(CBatch(2, 2, (CRecord(2, NOW, b"\x00\x00\x00\x00",
                                                          b"foo"),), producer_id=2,
                                           producer_epoch=0, transactional=True))
    log.next = 3
    log.open[2] = 2
    log.marker(2, "COMMIT")
    log.roll()
    log.clean(0)
    assert log.last_offsets() == [0, 1, 2, 3]


def test_tombstones_take_two_rounds() -> None:
    # testCleanTombstone: the horizon is now + delete.retention.ms, whatever the
    # tombstone's own timestamp
    log = Log()
    log.append(0, ts=NOW + DAY_MS + 10_000)
    log.roll()
    log.clean(0)
    log.tombstone(0, ts=NOW - DAY_MS - 10_000)
    log.roll()
    log.clean(1)
    assert log.batches()[0].last_offset == 1 and log.batches()[0].delete_horizon == NOW + DAY_MS
    log.append(1)
    log.roll()
    log.clean(2)
    assert log.batches()[0].last_offset == 1
    log.clean(3, NOW + DAY_MS)  # at the horizon: gone (kept only while now < horizon)
    assert [r.offset for b in log.batches() for r in b.records] == [2]


# ------------------------------------------------------------------------- KIP-280


def _two_producers(strategy: str) -> Log:
    """The KIP's motivating case: <K1,V1> then <K1,V2> written by two producers, arriving
    reversed (V2 at offset 0 with the later timestamp, V1 at offset 1)."""
    log = Log(CleanerConfig(strategy=Strategy.parse(strategy)))
    log.append(1, ts=NOW + 2000)
    log.append(1, ts=NOW + 1000)
    log.append(9, ts=NOW + 3000)
    log.roll()
    return log


@pytest.mark.parametrize(("strategy", "kept"), [("offset", [1, 2]), ("timestamp", [0, 2])])
def test_kip280_timestamp_undoes_the_reversal(strategy: str, kept: list[int]) -> None:
    log = _two_producers(strategy)
    log.clean(0)
    assert log.offsets() == kept


def _headers(log: Log, *values: int | None | bytes) -> None:
    for v in values:
        headers = () if v is None else (("version", v if isinstance(v, bytes)
                                         else v.to_bytes(8, "big", signed=True)),)
        log._add(CBatch(log.next, log.next, (CRecord(log.next, NOW, b"k", b"v", headers),)))


@pytest.mark.parametrize(("values", "kept"), [
    ((5, 3), 0),  # highest header wins
    ((3, 3), 1),  # a tie: the higher offset
    ((None, 3), 1),  # with the header beats without
    ((3, None), 0),
    ((None, None), 1),  # neither: the offset
    ((b"\x01", 2), 1),  # not 8 bytes: as if missing
    ((-1, None), 0),  # a negative value still beats a missing one
])
def test_kip280_header_strategy(values: tuple, kept: int) -> None:
    log = Log(CleanerConfig(strategy=Strategy.parse("header:version")))
    _headers(log, *values)
    log.append(9)  # the log end: KIP-280 keeps it whatever
    log.roll()
    log.clean(0)
    assert log.offsets() == [kept, 2]


def test_kip280_keeps_the_record_at_the_end() -> None:
    log = Log(CleanerConfig(strategy=Strategy.parse("timestamp")))
    log.append(1, ts=NOW + 5000)
    log.append(1, ts=NOW)  # older, but at the end of the cleaned range
    log.roll()
    log.clean(0)
    assert log.offsets() == [0, 1]


def test_kip280_timestamp_ties_go_to_the_offset() -> None:
    log = Log(CleanerConfig(strategy=Strategy.parse("timestamp")))
    log.append(1, ts=NOW + 7000)
    log.append(1, ts=NOW + 7000)  # the same time: the higher offset wins
    log.append(1, ts=NOW + 1000)  # older, but the log-end record: kept (KIP-280)
    log.append(2, ts=NOW)
    log.roll()
    log.clean(0)
    assert log.offsets() == [1, 3]
    log = Log(CleanerConfig(strategy=Strategy.parse("timestamp")))
    log.append(1, ts=NOW + 7000)
    log.append(1, ts=NOW + 7000)
    log.append(1, ts=NOW + 1000)
    log.roll()
    log.clean(0)
    assert log.offsets() == [1, 2]


@pytest.mark.parametrize(("base", "last", "segment", "following", "bad"), [
    (5, 9, 0, 10, False),
    (0, (1 << 31) - 1, 0, None, False),  # the last offset an index addresses
    (0, 1 << 31, 0, None, True),
    (2**63 - 1, 2**63 - 1, 3, None, True),
    (8, 10, 0, 10, True),  # overlaps the next segment
    (7, 6, 0, None, True),  # a last offset below the base (an overflowed delta)
])
def test_batch_out_of_segment(base: int, last: int, segment: int, following: int | None,
                              bad: bool) -> None:
    from kmeta.core.log_rules import batch_out_of_segment

    got = batch_out_of_segment("x.log", 0, base, last, segment, following)
    assert (got is not None) is bad
    if bad:
        assert got.code == "S005" and got.offset == base
