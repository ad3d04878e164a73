"""Tests of kmeta.core.epochs and kmeta.core.replica_log.

Data-driven scripts (``tests/core_scripts/*.txt``, after etcd-io/raft's datadriven):
each script drives ONE ``ReplicaLog`` (empty, starting at offset 0) through a list of
test cases. A case is a command line, a ``----`` line, the expected output, and a
blank line. Lines starting with ``#`` between cases are comments.

Commands (offsets and epochs are integers):

    append BASE LAST epoch=E [size=N] [roll]   append a batch (roll: new segment first)
    init-epoch E                               initialize_leader_epoch(E)
    truncate OFFSET                            truncate_to(OFFSET)
    truncate-to-latest-snapshot
    advance-lbo OFFSET                         advance_lbo(OFFSET)
    delete-before-snapshot OFFSET EPOCH
    add-snapshot OFFSET EPOCH [unchecked] [partial]
    freeze-snapshot OFFSET EPOCH
    delete-snapshot OFFSET EPOCH
    end-offset-for-epoch E                     ReplicaLog.end_offset_for_epoch
    cache-end-offset-for E                     EpochCache.end_offset_for (raw Kafka answer)
    validate OFFSET EPOCH                      validate_offset_and_epoch
    epoch-at OFFSET / epoch-for-offset OFFSET  batch epoch / EpochCache.epoch_for_offset
    latest-snapshot / earliest-snapshot
    state                                      print the whole state

A mutating command prints its result (``ok``, ``true``/``false``, or ``error: ...``)
followed by the full state, so an error case shows the state is unchanged. Queries
print only their answer.

Set ``KMETA_REWRITE=1`` to rewrite every expected block from the actual output
(then review the diff).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kmeta.core.epochs import EpochCache, EpochCacheError, EpochEndOffset, EpochEntry
from kmeta.core.log_rules import Layout, LogState, epoch_spans, judge
from kmeta.core.replica_log import (
    BatchMeta,
    OffsetAndEpoch,
    ReplicaLog,
    ReplicaLogError,
    Segment,
    SnapshotId,
    SnapshotState,
    ValidKind,
)

SCRIPTS = Path(__file__).parent / "core_scripts"
REWRITE = os.environ.get("KMETA_REWRITE") == "1"


# -- the script runner ----------------------------------------------------------------
def _kv(args: list[str]) -> tuple[list[int], dict[str, str], set[str]]:
    nums, kv, flags = [], {}, set()
    for a in args:
        if "=" in a:
            k, v = a.split("=", 1)
            kv[k] = v
        elif a.lstrip("-").isdigit():
            nums.append(int(a))
        else:
            flags.add(a)
    return nums, kv, flags


def _fmt(x: object) -> str:
    if x is None:
        return "none"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, EpochEndOffset):
        return f"epoch={x.epoch} end_offset={x.end_offset}"
    if isinstance(x, OffsetAndEpoch):
        return f"offset={x.offset} epoch={x.epoch}"
    return str(x)


def run_command(log: ReplicaLog, line: str) -> str:
    cmd, *args = line.split()
    nums, kv, flags = _kv(args)
    mutating = {
        "append": lambda: log.append(
            BatchMeta(nums[0], nums[1], int(kv["epoch"]), int(kv.get("size", 0))),
            roll="roll" in flags,
        ),
        "init-epoch": lambda: log.initialize_leader_epoch(nums[0]),
        "truncate": lambda: log.truncate_to(nums[0]),
        "truncate-to-latest-snapshot": log.truncate_to_latest_snapshot,
        "advance-lbo": lambda: log.advance_lbo(nums[0]),
        "delete-before-snapshot": lambda: log.delete_before_snapshot(SnapshotId(*nums)),
        "add-snapshot": lambda: log.add_snapshot(
            SnapshotId(*nums), checked="unchecked" not in flags, partial="partial" in flags
        ),
        "freeze-snapshot": lambda: log.freeze_snapshot(SnapshotId(*nums)),
        "delete-snapshot": lambda: log.delete_snapshot(SnapshotId(*nums)),
    }
    queries = {
        "end-offset-for-epoch": lambda: log.end_offset_for_epoch(nums[0]),
        "cache-end-offset-for": lambda: log.epoch_cache.end_offset_for(nums[0], log.log_end_offset),
        "validate": lambda: log.validate_offset_and_epoch(nums[0], nums[1]),
        "epoch-at": lambda: log.epoch_at(nums[0]),
        "epoch-for-offset": lambda: log.epoch_cache.epoch_for_offset(nums[0]),
        "latest-snapshot": lambda: log.latest_snapshot,
        "earliest-snapshot": lambda: log.earliest_snapshot,
        "state": lambda: "\n".join(log.state_lines()),
    }
    if cmd in mutating:
        before = log.state_lines()
        try:
            result = mutating[cmd]()
            head = "ok" if result is None else _fmt(result)
        except ReplicaLogError as e:
            assert log.state_lines() == before, "a failed operation changed the state"
            head = f"error: {e}"
        return "\n".join([head, *log.state_lines()])
    if cmd in queries:
        try:
            return _fmt(queries[cmd]())
        except ReplicaLogError as e:
            return f"error: {e}"
    raise ValueError(f"unknown command {cmd!r}")


def parse_script(text: str) -> list[tuple[list[str], str, str]]:
    """Return (preceding comment lines, command, expected output) per case."""
    lines = text.splitlines()
    cases, pre, i = [], [], 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.startswith("#"):
            if line.strip():
                pre.append(line)
            i += 1
            continue
        cmd = line.strip()
        i += 1
        if i >= len(lines) or lines[i].strip() != "----":
            raise ValueError(f"missing ---- after {cmd!r}")
        i += 1
        out = []
        while i < len(lines) and lines[i].strip():
            out.append(lines[i])
            i += 1
        cases.append((pre, cmd, "\n".join(out)))
        pre = []
    return cases


def render_script(cases: list[tuple[list[str], str, str]]) -> str:
    parts: list[str] = []
    for pre, cmd, out in cases:
        parts.extend(pre)
        parts.extend([cmd, "----", out, ""])
    return "\n".join(parts).rstrip("\n") + "\n"


SCRIPT_FILES = sorted(SCRIPTS.glob("*.txt"))


def test_enough_scripts():
    assert len(SCRIPT_FILES) >= 12


@pytest.mark.parametrize("path", SCRIPT_FILES, ids=lambda p: p.stem)
def test_script(path: Path):
    cases = parse_script(path.read_text())
    log = ReplicaLog()
    actual = []
    for pre, cmd, _expected in cases:
        actual.append((pre, cmd, run_command(log, cmd)))
    if REWRITE:
        path.write_text(render_script(actual))
        return
    for (_, cmd, expected), (_, _, got) in zip(cases, actual, strict=True):
        assert got == expected, f"{path.name}: {cmd}\n--- expected\n{expected}\n--- got\n{got}"


# -- EpochCache unit tests -------------------------------------------------------------
def test_assign_rules():
    c = EpochCache().assign(1, 0).assign(1, 5)  # same epoch, higher offset: no-op
    assert c.entries == (EpochEntry(1, 0),)
    c = c.assign(3, 10)
    assert c.assign(3, 12) is c
    # lower epoch: Kafka drops the conflicting later entries, it does not ignore
    assert c.assign(2, 11).entries == (EpochEntry(1, 0), EpochEntry(2, 11))
    # same epoch, lower offset: replaced
    assert c.assign(3, 8).entries == (EpochEntry(1, 0), EpochEntry(3, 8))
    with pytest.raises(EpochCacheError):
        c.assign(-1, 0)
    with pytest.raises(EpochCacheError):
        c.assign(4, -1)


def test_truncate_from_start_moves_first_entry():
    c = EpochCache.from_entries([(1, 0), (2, 10), (4, 20)])
    assert c.truncate_from_start(15).entries == (EpochEntry(2, 15), EpochEntry(4, 20))
    assert c.truncate_from_start(20).entries == (EpochEntry(4, 20),)
    assert c.truncate_from_start(0).entries == c.entries


def test_truncate_from_end():
    c = EpochCache.from_entries([(1, 0), (2, 10), (4, 20)])
    assert c.truncate_from_end(20).entries == (EpochEntry(1, 0), EpochEntry(2, 10))
    assert c.truncate_from_end(21) is c
    assert c.truncate_from_end(-1) is c
    assert c.truncate_from_end(0).entries == ()


def test_end_offset_for():
    c = EpochCache.from_entries([(2, 5), (4, 20)])
    assert c.end_offset_for(-1, 30) == EpochEndOffset(-1, -1)
    assert c.end_offset_for(4, 30) == EpochEndOffset(4, 30)
    assert c.end_offset_for(3, 30) == EpochEndOffset(2, 20)
    assert c.end_offset_for(1, 30) == EpochEndOffset(1, 5)
    assert c.end_offset_for(5, 30) == EpochEndOffset(-1, -1)
    assert EpochCache().end_offset_for(0, 7) == EpochEndOffset(-1, -1)


def test_epoch_for_offset():
    c = EpochCache.from_entries([(2, 5), (4, 20)])
    assert [c.epoch_for_offset(o) for o in (0, 5, 19, 20, 99)] == [None, 2, 2, 4, 4]


# -- ReplicaLog unit tests -------------------------------------------------------------
def _log(*batches: tuple[int, int, int]) -> ReplicaLog:
    log = ReplicaLog()
    for b, last, e in batches:
        log.append(BatchMeta(b, last, e, 10))
    return log


def test_snapshot_order_is_epoch_then_offset():
    assert SnapshotId(100, 1) < SnapshotId(5, 2)
    assert SnapshotId(5, 2).file_stem == "00000000000000000005-0000000002"


def test_delete_before_snapshot_returns_false_like_kafka():
    log = _log((0, 9, 1), (10, 19, 2))
    log.add_snapshot(SnapshotId(10, 1))
    assert log.delete_before_snapshot(SnapshotId(15, 2)) is False  # unknown snapshot
    assert log.delete_before_snapshot(SnapshotId(10, 1)) is True
    assert log.delete_before_snapshot(SnapshotId(10, 1)) is False  # not past the LBO
    assert log.log_start_offset == 10
    assert log.epoch_cache.entries == (EpochEntry(2, 10),)  # 1@0 and 2@10 go, 2 comes back


def test_validate_snapshot_and_diverging():
    log = _log((0, 9, 1), (10, 19, 2), (20, 29, 3))
    log.add_snapshot(SnapshotId(10, 1))
    log.advance_lbo(10)
    assert log.validate_offset_and_epoch(5, 1).kind is ValidKind.SNAPSHOT
    v = log.validate_offset_and_epoch(25, 2)
    assert v.kind is ValidKind.DIVERGING and v.offset_and_epoch == OffsetAndEpoch(20, 2)
    assert log.validate_offset_and_epoch(25, 3).kind is ValidKind.VALID


def test_from_observed_accepts_real_world_states():
    segs = [
        Segment(0, (BatchMeta(0, 9, 1), BatchMeta(10, 19, 2))),
        (20, [BatchMeta(20, 29, 2), BatchMeta(30, 39, 5)]),
    ]
    log, notes = ReplicaLog.from_observed(
        segs,
        log_start_offset=15,  # inside the first segment
        epoch_entries=[(2, 15), (5, 30)],  # first entry moved to the LBO
        snapshots=[(5, 1), (15, 2), (SnapshotId(40, 5), SnapshotState.PART)],
        quorum_leader_epoch=5,
    )
    assert log.log_start_offset == 15 and log.log_end_offset == 40
    assert log.epoch_cache.entries == (EpochEntry(2, 15), EpochEntry(5, 30))
    codes = {n.code for n in notes}
    assert codes == {"SNAPSHOT_BEFORE_LBO", "SNAPSHOT_PARTIAL"}
    assert log.validate_offset_and_epoch(20, 2).kind is ValidKind.VALID


def test_from_observed_notes_disagreement():
    log, notes = ReplicaLog.from_observed(
        [(0, [BatchMeta(0, 9, 1), BatchMeta(10, 19, 3), BatchMeta(25, 29, 2)])],
        epoch_entries=[(1, 0), (2, 10), (7, 30)],
        snapshots=[(40, 9)],
        log_start_offset=5,
        quorum_leader_epoch=1,
    )
    codes = [n.code for n in notes]
    # The gap (19 -> 25) and the epoch going back (3 -> 2) are rules of each batch, judged
    # as the batches are read, no longer by the model.
    state, broken = LogState(), []
    for i, b in enumerate((BatchMeta(0, 9, 1), BatchMeta(10, 19, 3), BatchMeta(25, 29, 2))):
        state, found = judge(state, b.base_offset, b.last_offset, b.epoch, 2, i == 0)
        broken += [f.code for f in found]
    assert broken == ["V005", "V003"]
    for code in (
        "EPOCH_CHECKPOINT_BEYOND_LEO",
        "EPOCH_CHECKPOINT_DISAGREES",
        "SNAPSHOT_AHEAD_OF_LOG",
        "NO_SNAPSHOT_AT_LBO",
        "QUORUM_EPOCH_BEHIND_LOG",
    ):
        assert code in codes, (code, codes)
    assert log.epoch_cache.entries == (EpochEntry(1, 5), EpochEntry(2, 10))
    # the model still works on it
    assert log.truncate_to_latest_snapshot() is True
    assert log.log_start_offset == log.log_end_offset == 40


def test_layout_and_epoch_spans_of_one_log():
    # Two segments; epoch 3 comes back after 2 (a V005 log): the layout keeps three runs in
    # the second segment, the spans one line per epoch.
    batches = [[(0, 4, 1), (5, 9, 1)], [(10, 14, 3), (15, 19, 2), (20, 24, 3)]]
    layout = Layout()
    for seg in batches:
        layout.segment(seg[0][0])
        for base, last, epoch in seg:
            layout.batch(base, last, epoch)
    assert layout.segments == [(0, [[0, 9, 1]]),
                               (10, [[10, 14, 3], [15, 19, 2], [20, 24, 3]])]
    assert [str(s.batches[0]) for s in layout.model_segments()] == ["0..9@1", "10..14@3"]
    flat = [b for seg in batches for b in seg]
    assert epoch_spans(flat) == [(1, 0, 9, 2), (2, 15, 19, 1), (3, 10, 24, 2)]
    assert epoch_spans([]) == []


def test_from_observed_empty_and_missing_checkpoint():
    log, notes = ReplicaLog.from_observed([], log_start_offset=7)
    assert {n.code for n in notes} == {
        "NO_SEGMENTS",
        "EPOCH_CHECKPOINT_MISSING",
        "NO_SNAPSHOT_FOR_LBO",
    }
    assert log.log_end_offset == 7


# -- property test ---------------------------------------------------------------------
OPS = st.lists(
    st.one_of(
        st.tuples(
            st.just("append"), st.integers(1, 5), st.integers(0, 2), st.booleans()
        ),  # length, epoch bump, roll
        st.tuples(st.just("truncate"), st.integers(0, 60)),
        st.tuples(st.just("snapshot"), st.integers(0, 60), st.integers(0, 6)),
        st.tuples(st.just("lbo"), st.integers(0, 60)),
        st.tuples(st.just("delete"), st.integers(0, 60), st.integers(0, 6)),
        st.tuples(st.just("init"), st.integers(0, 2)),
        st.tuples(st.just("full")),
    ),
    max_size=40,
)


def _check_invariants(log: ReplicaLog) -> None:
    batches = log.batches
    for a, b in zip(batches, batches[1:], strict=False):
        assert b.base_offset == a.next_offset
        assert b.epoch >= a.epoch
    for s, t in zip(log.segments, log.segments[1:], strict=False):
        assert s.next_offset == t.base_offset
    lbo, leo = log.log_start_offset, log.log_end_offset
    assert log.segments[0].base_offset <= lbo <= leo
    entries = log.epoch_cache.entries
    assert list(entries) == sorted(entries)
    for e, f in zip(entries, entries[1:], strict=False):
        assert e.epoch < f.epoch and e.start_offset < f.start_offset
    for e in entries:
        assert lbo <= e.start_offset <= leo
    latest = log.latest_snapshot
    if lbo > 0:
        assert latest is not None and latest.offset >= lbo


@settings(max_examples=300, deadline=None)
@given(OPS)
def test_random_operations_keep_invariants(ops):
    log = ReplicaLog()
    for op in ops:
        before = log.state_lines()
        try:
            if op[0] == "append":
                _, n, bump, roll = op
                epoch = (log.latest_epoch or 0) + bump
                leo = log.log_end_offset
                log.append(BatchMeta(leo, leo + n - 1, epoch, n * 10), roll=roll)
            elif op[0] == "truncate":
                log.truncate_to(op[1])
            elif op[0] == "snapshot":
                log.add_snapshot(SnapshotId(op[1], op[2]))
            elif op[0] == "lbo":
                log.advance_lbo(op[1])
            elif op[0] == "delete":
                log.delete_snapshot(SnapshotId(op[1], op[2]))
            elif op[0] == "init":
                log.initialize_leader_epoch((log.latest_epoch or 0) + op[1])
            else:
                log.truncate_to_latest_snapshot()
        except ReplicaLogError:
            assert log.state_lines() == before
        _check_invariants(log)
        # queries never raise on op-built logs
        for epoch in range(-1, 8):
            log.end_offset_for_epoch(epoch)
            log.validate_offset_and_epoch(log.log_end_offset, epoch)
