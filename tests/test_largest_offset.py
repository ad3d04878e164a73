"""Batches at the largest offset Kafka has (2^63 - 1, a Java long), and past it: what the
fuzz campaign of issue 32 met there.

* a batch of 18 records at base offset 2^63 - 1 runs to offset 2^63 + 16, which no Kafka
  holds (its longs wrap to negative numbers): S011 wherever verify reads batches, in a data
  partition and in the metadata log, and repair ends a metadata log before it;
* ``report`` and ``tiering`` read such a batch in a data partition beside
  ``__remote_log_metadata`` (OverflowError in the partition view's offset arrays);
* ``verify`` and ``report`` of a metadata log of 32 MiB or more (its replay forked, its
  plain batches walked in spans) after a batch ending at 2^63 - 1 (OverflowError: the
  next offset, 2^63, passed to the compiled span walker).

Every input is built here with kmeta's writer from the fixtures.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kmeta.core.log_rules import MAX_OFFSET
from kmeta.formats import spans as spans_module
from kmeta.formats.batch import build_batch
from kmeta.formats.payload import encode_metadata
from kmeta.ops import processes
from kmeta.ops.replay import process as replay_process
from kmeta.ops.replica import read_partition
from kmeta.storage.discover import discover
from kmeta.storage.segments import read_batches
from tests.clirun import run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"
ENV = {"NO_COLOR": "1"}  # a pipe: no line is wrapped
NOOP = encode_metadata("NO_OP_RECORD", 0, {})
META = "__cluster_metadata-0"


def _clear(proc, code: int) -> str:  # noqa: ANN001
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "internal error" not in out, out[-3000:]
    assert proc.returncode == code, (proc.returncode, out[-3000:])
    return out


def _past_max(records: int = 18, epoch: int = 0, base: int = MAX_OFFSET) -> bytes:
    """A batch at ``base`` of ``records`` NoOp records: at 2^63 - 1, 17 offsets past the
    largest with 18."""
    return build_batch(base, [(None, NOOP)] * records,
                       leader_epoch=epoch, base_timestamp=1_700_000_000_000)


# ------------------------------------------------------------------ S011 in verify


def test_verify_of_a_data_partition_says_its_offsets_pass_the_largest(tmp_path: Path) -> None:
    """Kafka names a segment for its first offset: one at 2^63 - 1 holding 18 records is
    17 offsets past the largest, and within what its index addresses (verify called it
    clean)."""
    part = tmp_path / "orders-0"
    part.mkdir()
    (part / f"{MAX_OFFSET:020d}.log").write_bytes(_past_max())
    out = _clear(run("verify", part, env=ENV), 1)
    assert "S011 error" in out and f"runs to offset {MAX_OFFSET + 17}" in out
    assert "17 offsets past the largest Kafka has" in out
    # one record at 2^63 - 1 is the largest offset itself: Kafka holds it
    (part / f"{MAX_OFFSET:020d}.log").write_bytes(_past_max(records=1))
    assert "S011" not in _clear(run("verify", part, env=ENV), 0)


def test_verify_of_a_data_partition_with_the_batch_after_others(tmp_path: Path) -> None:
    """The batch at the end of a segment named 0 is also past what its index addresses
    (S005, as before) and past the largest offset (S011), with --jobs 2 too."""
    shutil.copytree(FIXTURES / "tiering" / "broker", tmp_path / "broker")
    seg = tmp_path / "broker" / "events-3" / "00000000000000000000.log"
    with open(seg, "ab") as f:
        f.write(_past_max())
    one = run("verify", "--json", "--jobs", "1", tmp_path / "broker", env=ENV)
    two = run("verify", "--json", "--jobs", "2", tmp_path / "broker", env=ENV)
    assert (one.returncode, one.stdout) == (two.returncode, two.stdout)
    out = _clear(one, 1)
    assert out.count('"code":"S011"') == 1 and '"code":"S005"' in out
    assert out.index('"code":"S005"') < out.index('"code":"S011"')  # file order


@pytest.mark.parametrize("contiguous", [False, True])
def test_verify_of_a_metadata_log_says_its_offsets_pass_the_largest(
        tmp_path: Path, contiguous: bool) -> None:
    """A metadata log whose batch runs past the largest offset: S011, found by the rules
    verify, repair and the replay share (kmeta.core.log_rules.judge), also where the batch
    follows the one before it (verify's path that skips the rules when they have nothing to
    say)."""
    part = tmp_path / META
    part.mkdir()
    first = MAX_OFFSET - 1 if contiguous else MAX_OFFSET
    batches = ([build_batch(first, [(None, NOOP)], base_timestamp=1_700_000_000_000)]
               if contiguous else []) + [_past_max()]
    (part / f"{first:020d}.log").write_bytes(b"".join(batches))
    out = _clear(run("verify", part, env=ENV), 1)
    assert out.count("S011 error") == 1, out
    assert f"offset {MAX_OFFSET}: batch at offset {MAX_OFFSET} runs to offset " \
        f"{MAX_OFFSET + 17}" in out
    # repair keeps what Kafka can hold and ends the log before the batch
    plan = _clear(run("repair", "--dry-run", part, env=ENV), 0)
    assert "S011" in plan and "wrap to negative numbers" in plan, plan


# ------------------------------------------------------------------ the partition view


@pytest.fixture
def tiered(tmp_path: Path) -> Path:
    """The tiering fixture's broker (data partitions beside __remote_log_metadata) with
    the batch appended to events-3's segment."""
    broker = tmp_path / "broker"
    shutil.copytree(FIXTURES / "tiering" / "broker", broker)
    with open(broker / "events-3" / "00000000000000000000.log", "ab") as f:
        f.write(_past_max())
    return broker


@pytest.mark.parametrize("command", [("report",), ("report", "--json"), ("tiering",),
                                     ("tiering", "--json")])
def test_report_and_tiering_read_a_partition_past_the_largest_offset(
        tiered: Path, command: tuple[str, ...]) -> None:
    out = _clear(run(*command, tiered, env=ENV), 1)
    assert "S011" in out


def test_the_partition_view_leaves_the_batch_out(tiered: Path) -> None:
    """Kafka has no offsets for its records: the view ends before it and says why."""
    part = next(p for p in discover([tiered]).all_partitions()
                if p.path.name == "events-3")
    view = read_partition(part)
    assert [f.code for f in view.findings] == ["S011"]
    assert view.log_end <= MAX_OFFSET and max(view.batch_lasts) < MAX_OFFSET
    assert view.records == sum(b - a + 1 for a, b in zip(view.batch_bases,
                                                         view.batch_lasts, strict=True))


# ------------------------------------------------------------------ a long metadata log


@pytest.fixture
def long_log(tmp_path: Path) -> Path:
    """The healthy verify fixture's metadata log, then a NoOp batch at 2^63 - 1 in the
    log's epoch (the log's end is then 2^63, no offset Kafka has) and 32 MiB of
    preallocated zeros after it (a sparse file): a log of 32 MiB or more, whose replay
    verify forks and whose plain batches it walks in spans."""
    root = tmp_path / "healthy"
    shutil.copytree(FIXTURES / "verify" / "healthy", root)
    seg = root / META / "00000000000000000000.log"
    epoch = [b.leader_epoch for b in read_batches(seg)][-1]
    with open(seg, "ab") as f:
        f.write(build_batch(MAX_OFFSET, [(None, NOOP)], leader_epoch=epoch,
                            base_timestamp=1_700_000_000_000))
        f.truncate(f.tell() + replay_process.FORK_ABOVE)
    assert os.path.getsize(seg) >= replay_process.FORK_ABOVE
    return root


@pytest.mark.parametrize("command", [("verify",), ("verify", "--json"), ("report",)])
def test_a_long_metadata_log_ending_at_the_largest_offset(
        long_log: Path, command: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """The path a log of 32 MiB or more takes on Linux with two CPUs, here on any machine
    (and beside pytest's threads): the replay in a child, plain spans walked."""
    monkeypatch.setattr(processes, "default_jobs", lambda: 2)
    monkeypatch.setattr(processes, "no_other_thread", lambda: True)
    monkeypatch.delenv("KMETA_ONE_PROCESS", raising=False)
    forks: list[int] = []
    real_fork = replay_process.ForkedReplay.__init__

    def counted(self, *args, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
        forks.append(1)
        real_fork(self, *args, **kwargs)

    monkeypatch.setattr(replay_process.ForkedReplay, "__init__", counted)
    walked: list[int] = []
    real_span = spans_module.plain_span

    def span(buf, pos, limit, stop, next_offset, *rest):  # noqa: ANN001, ANN002
        walked.append(next_offset)
        return real_span(buf, pos, limit, stop, next_offset, *rest)

    monkeypatch.setattr(spans_module, "plain_span", span)
    out = _clear(run(*command, long_log, env=ENV), 1)
    assert forks and walked  # the path of a long log was taken
    assert "S002" in out  # the zeros, read to their end


def test_the_span_walk_stops_where_no_offset_is_left(tmp_path: Path) -> None:
    """scan_batches with plain spans over a batch that ends at 2^63 - 1 and one after it
    (at the same offset: an overlap, S005): the walk is not asked past the largest
    offset, and every batch is read."""
    from kmeta.formats.spans import NO_OFFSET, Spans
    from kmeta.storage.segments import scan_batches

    def noop(base: int) -> bytes:
        return build_batch(base, [(None, NOOP)], leader_epoch=3,
                           base_timestamp=1_700_000_000_000)

    buf = build_batch(MAX_OFFSET - 2, [(None, b"x"), (None, b"y")], leader_epoch=3) + \
        noop(MAX_OFFSET) + noop(MAX_OFFSET)
    items = list(scan_batches(buf, "x.log", memo=True, runs=True,
                              plain=Spans(NOOP, lambda epoch: NO_OFFSET, False)))
    codes = [getattr(i, "code", None) for i in items]
    assert codes.count("S005") == 1
    assert sum(1 for i in items if hasattr(i, "base_offset")) == 3


def test_a_snapshot_cannot_end_past_the_largest_offset(tmp_path: Path) -> None:
    """The healthy log, then a batch at 2^63 - 1: the log ends at 2^63, which no snapshot
    name (nor Kafka's long) holds; the image before the damage is still written."""
    root = tmp_path / "healthy"
    shutil.copytree(FIXTURES / "verify" / "healthy", root)
    with open(root / META / "00000000000000000000.log", "ab") as f:
        f.write(_past_max(records=1, epoch=1))
    out = tmp_path / "out"
    out.mkdir()
    said = _clear(run("snapshot", root, "--out", out, env=ENV), 2)
    assert f"the log ends at offset {MAX_OFFSET + 1}, past the largest offset" in said
    assert not any(out.iterdir())
    _clear(run("snapshot", root, "--out", out, "--at", "9", env=ENV), 0)
    assert [p.name for p in out.iterdir()] == ["00000000000000000009-0000000001.checkpoint"]
