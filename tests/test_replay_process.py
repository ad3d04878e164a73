"""The replay in a second process (kmeta/ops/replay/process.py) writes the report one
process writes: the same findings in the same places, the same image, the same snapshots
counted; and a child that fails or a pass that fails leaves no process behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kmeta.formats.batch import Header, build_batch
from kmeta.formats.payload import encode_metadata
from kmeta.ops import processes
from kmeta.ops.replay import Replay
from kmeta.ops.replay import process as replay_process
from tests.clirun import run
from tests.test_runs import FIXTURES, _dirs, disturbed_log

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2,
                                reason="the replay forks only on a machine with two CPUs")

COMMANDS = [("verify", "--json"), ("verify",), ("verify", "--all")]


def _fork_here(m: pytest.MonkeyPatch) -> None:
    """verify forks its replay whatever the log's size, in this process, which runs
    threads kmeta's command line never has (pytest-xdist's, a Spark session's): the fork
    is what these tests compare (tests/test_replay_fork_threads.py tests the threads)."""
    m.setattr(replay_process, "FORK_ABOVE", 0)
    m.setattr(processes, "no_other_thread", lambda: True)
    m.delenv("KMETA_ONE_PROCESS", raising=False)


def _outputs(path: Path, monkeypatch: pytest.MonkeyPatch, forked: bool) -> list[tuple]:
    with monkeypatch.context() as m:
        if forked:
            _fork_here(m)
        else:
            m.setenv("KMETA_ONE_PROCESS", "1")
        out = []
        for args in COMMANDS:
            done = run(*args, str(path))
            out.append((args, done.returncode, done.stdout, done.stderr))
        return out


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many replays went to a child."""
    made: list[int] = []
    real = replay_process.ForkedReplay.__init__

    def counted(self, *args, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
        made.append(1)
        real(self, *args, **kwargs)

    monkeypatch.setattr(replay_process.ForkedReplay, "__init__", counted)
    return made


@pytest.mark.slow
@pytest.mark.parametrize("root", ["fixtures", "real"])
def test_every_directory_gives_the_one_process_report(root: str, real_data: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      forks: list[int]) -> None:
    dirs = _dirs(FIXTURES if root == "fixtures" else real_data)
    assert len(dirs) > 5
    for d in dirs:
        assert _outputs(d, monkeypatch, True) == _outputs(d, monkeypatch, False), d
    assert len(forks) > 5  # the comparison is not one process against itself


def test_a_disturbed_log_gives_the_one_process_report(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      forks: list[int]) -> None:
    part = disturbed_log(tmp_path)
    assert _outputs(part, monkeypatch, True) == _outputs(part, monkeypatch, False)
    assert forks


def test_records_the_child_decodes_report_in_place(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   forks: list[int]) -> None:
    """Records of a multi-record batch go to the child undecoded: its replay findings
    come before the record's V001, its decoding finding (F005) after it, as in one
    process."""
    change = encode_metadata("PARTITION_CHANGE_RECORD", 0, {
        "partitionId": 0, "topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "leader": 1})
    broken = encode_metadata("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version",
                                                         "featureLevel": 19})[:-3]
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    batches = [build_batch(0, [(None, encode_metadata("NO_OP_RECORD", 0, {}))],
                           leader_epoch=1)]
    for i in range(1, 40, 4):
        batches.append(build_batch(i, [(None, change), (None, broken, [Header("h", b"v")]),
                                       (None, change, [Header("h", b"v")]),
                                       (None, broken)], leader_epoch=1))
    (part / "00000000000000000000.log").write_bytes(b"".join(batches))
    forked, alone = _outputs(part, monkeypatch, True), _outputs(part, monkeypatch, False)
    assert forked == alone and forks
    report = forked[0][2]
    for code in ("V001", "F005", "V101"):
        assert f'"code":"{code}"' in report


def test_snapshots_are_compared_and_counted_in_the_child(monkeypatch: pytest.MonkeyPatch,
                                                         forks: list[int]) -> None:
    """A log with snapshots inside it: the child compares them (V040) and reads them; the
    report counts them as one process does."""
    d = next(p for p in _dirs(FIXTURES)
             if any(f.name != "bootstrap.checkpoint" for f in p.rglob("*.checkpoint")))
    forked, alone = _outputs(d, monkeypatch, True), _outputs(d, monkeypatch, False)
    assert forked == alone
    assert forks
    assert '"snapshots":' in forked[0][2]


def test_a_failing_child_is_the_commands_error(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """What the replay raises in the child, the command raises: an internal error, not
    a hang or a report without the replay."""
    part = disturbed_log(tmp_path)
    _fork_here(monkeypatch)

    def broken(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        raise ValueError("replay broke")

    monkeypatch.setattr(Replay, "problems", broken)
    done = run("verify", str(part))
    assert done.returncode == 70, done.stderr
    assert "ValueError: replay broke" in done.stderr


def test_a_failing_pass_leaves_no_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    part = disturbed_log(tmp_path)
    _fork_here(monkeypatch)
    children: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            children.append(pid)
        return pid

    monkeypatch.setattr(replay_process.os, "fork", fork)
    from kmeta.ops.verify import metadata_log as verify_module

    def failing(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("the pass broke")

    monkeypatch.setattr(verify_module, "_verify_batch", failing)
    done = run("verify", str(part))
    assert done.returncode != 0
    assert children
    for pid in children:  # reaped: waitpid has nothing left to wait for
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_short_logs_and_one_cpu_keep_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    replay = Replay.__new__(Replay)
    assert replay_process.forked_replay(replay, [], replay_process.FORK_ABOVE - 1,
                                        _no_report) is replay
    monkeypatch.setattr(replay_process.os, "sched_getaffinity", lambda pid: {0})
    assert replay_process.forked_replay(replay, [], 1 << 40, _no_report) is replay
    monkeypatch.undo()
    monkeypatch.setenv("KMETA_ONE_PROCESS", "1")
    assert replay_process.forked_replay(replay, [], 1 << 40, _no_report) is replay
    assert replay_process.forked_replay(None, [], 1 << 40, _no_report) is None


def _no_report(*args: object) -> tuple[()]:
    return ()


def test_a_finding_made_by_its_slots_is_the_one_init_makes() -> None:
    from kmeta.findings import SLOT_SETTERS, Finding

    fields = ("V101", "PartitionRecord for unknown topic id x", "a.log", 7, 9, {"k": 1})
    made = object.__new__(Finding)
    for setter, value in zip(SLOT_SETTERS, fields, strict=True):
        setter(made, value)
    assert made == Finding(*fields) and repr(made) == repr(Finding(*fields))
    assert made.to_json() == Finding(*fields).to_json()


def test_a_fork_that_fails_keeps_one_process(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """No process to spare (a container's limit): verify replays in its own process and
    reports the same, with no descriptor left open."""
    part = disturbed_log(tmp_path)
    alone = _outputs(part, monkeypatch, False)
    _fork_here(monkeypatch)

    def refuse() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(replay_process.os, "fork", refuse)
    open_before = len(os.listdir("/proc/self/fd"))
    assert _outputs(part, monkeypatch, True) == alone
    assert len(os.listdir("/proc/self/fd")) == open_before


def _batches_log(tmp_path: Path) -> Path:
    """A metadata log of multi-record batches, ending the child's one-item-per-batch path
    in each way it can end: a clean batch, out-of-order offsets (V002), a maxTimestamp
    that is not the newest (V004), a timestamp delta, a header and a key (V001), a delete
    horizon, LogAppendTime, compression, a bad CRC, a record that does not decode; with
    image problems (a leader outside the ISR, an unknown partition, an unregistered
    leader) between them."""
    from kmeta.formats.payload import encode_metadata
    from tests.test_runs import FEATURE

    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    tid = "dG9waWMtb25lLWlkLTAwMQ"

    def change(pid: int, **kw: object) -> tuple[None, bytes]:
        return None, encode_metadata("PARTITION_CHANGE_RECORD", 0,
                                     {"partitionId": pid, "topicId": tid, **kw})

    setup = [(None, FEATURE),
             (None, encode_metadata("TOPIC_RECORD", 0, {"name": "orders", "topicId": tid}))]
    setup += [(None, encode_metadata("PARTITION_RECORD", 0, {
        "partitionId": p, "topicId": tid, "replicas": [1, 2], "isr": [1, 2],
        "removingReplicas": [], "addingReplicas": [], "leader": 1, "leaderEpoch": 0,
        "partitionEpoch": 0})) for p in range(3)]
    changes = [change(0, isr=[1]), change(1, leader=2, isr=[1]), change(9, isr=[1]),
               change(2, isr=[2, 1])]
    broken = b"\x01\x05\x00\xff\xff"  # a PartitionChangeRecord body cut short
    parts, off = [], 0

    def add(records: list, **kw: object) -> None:
        nonlocal off
        parts.append(build_batch(off, records, leader_epoch=1,
                                 base_timestamp=1_700_000_000_000, **kw))
        off += kw.get("last_offset_delta", len(records) - 1) + 1  # type: ignore[operator]

    add(setup)
    add(changes)
    add(changes, offset_deltas=[0, 2, 1, 3])                         # V002
    add(changes, max_timestamp=1_700_000_000_009)                    # V004
    add(changes, timestamps=[1_700_000_000_000] * 3 + [1_700_000_000_004])  # V001
    add(changes[:2] + [(None, changes[2][1], [Header("h", b"v")])])  # V001: a header
    add([changes[0], (b"k", changes[1][1])])                         # V001: a key
    add(changes, delete_horizon_ms=1_700_000_000_000)
    add(changes, log_append_time=True)
    add(changes, compression=1)
    add(changes, crc=12345)                                          # S: bad CRC
    add([changes[0], (None, broken), changes[3]])                    # F005
    add(changes)
    (part / "00000000000000000000.log").write_bytes(b"".join(parts))
    return part


def test_batches_of_records_give_the_one_process_report(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        forks: list[int]) -> None:
    part = _batches_log(tmp_path)
    forked = _outputs(part, monkeypatch, True)
    assert forked == _outputs(part, monkeypatch, False)
    assert forks
    text = forked[1][2]
    for code in ("V001", "V002", "V004", "V102", "V103", "V114"):
        assert code in text, code
