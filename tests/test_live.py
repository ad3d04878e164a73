"""kmeta beside a live broker (issue 34): every reading command, run while
:mod:`tests.live.kafka_like` writes a copy of real broker data as Kafka's log layer does,
must answer as on a healthy dir: exit 0, no traceback, no hang, no error or warning
finding.  A corruption planted in a closed segment must still be found, and a dir left by a
writer killed mid-write must still be read.

Needs ``KMETA_REAL_DATA`` (the kraft41-offsets data dir is copied from it).  The fast tests
take under a minute on two CPUs (``kmeta export``, a Spark job, is ``-m spark``); ``python
-m tests.live.survey DIR --seconds 60`` runs every command for as long as one likes and
prints the verdicts as a table per command.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.live.kafka_like import SPARED, LiveBroker, copy_real, plant_corruption
from tests.live.survey import COMMANDS, SLOW, TEXT_ONLY, Where, judge, prepare, run_command

REAL = os.environ.get("KMETA_REAL_DATA")
pytestmark = pytest.mark.skipif(
    not REAL or not (Path(REAL) / "kraft41-offsets" / "kafka-data").is_dir(),
    reason="KMETA_REAL_DATA (with kraft41-offsets/) is not set")

#: runs of each variant (text, --json) per command in the fast test: more for the commands
#: that read every file (where a race is likeliest), one for those that read the metadata log
RUNS = {"verify": 3, "dump": 2, "info": 2, "report": 2, "startup": 2}
FAST = [c for c in COMMANDS if c not in SLOW]
#: per run: a hang is a failure, not a stuck test session
TIMEOUT = 30.0


def _variants(command: str) -> list[bool]:
    return [False] if command in TEXT_ONLY else [False, True]


def _failures(where: Where, command: str, runs: int) -> list[str]:
    out = []
    # a Spark job starts a JVM: a minute and more on a loaded CI machine
    timeout = 240.0 if command in SLOW else TIMEOUT
    for i in range(runs):
        for as_json in _variants(command):
            run = run_command(command, where, as_json, timeout=timeout)
            v = judge(run)
            bad = v.failures(warnings=True)
            if not v.lock_noticed:  # issue 34: every reading command says the dir is live
                bad.append("the running broker's .lock was not said (S012)")
            if bad:
                tail = run.stderr.strip().splitlines()[-1:] if v.traceback else []
                out.append(f"run {i + 1} {' '.join(run.argv)}: exit {run.rc}: "
                           + "; ".join(bad[:4]) + (f" (+{len(bad) - 4})" if len(bad) > 4
                                                   else "") + "".join(f" | {t}" for t in tail))
    return out


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Where:
    assert REAL
    where = prepare(REAL, tmp_path_factory.mktemp("live") / "broker")
    with LiveBroker(where.data, lock="posix", seed=1, rate=600):
        time.sleep(1.0)  # a roll or two, a snapshot and a retention round before the first read
        yield where


@pytest.mark.parametrize("command", FAST)
def test_reading_command_beside_a_live_broker(live: Where, command: str) -> None:
    failures = _failures(live, command, RUNS.get(command, 1))
    assert not failures, "\n".join(failures)


def test_every_reading_command_beside_a_busier_broker(tmp_path: Path) -> None:
    """The other lock Kafka's tools meet (``flock``), 1,500 batches a second, and a topic
    deleted while the commands run (its dir renamed ``-delete``, then removed): each
    command once, text and ``--json``.  ``python -m tests.live.survey`` runs them for as
    long as one likes."""
    assert REAL
    where = prepare(REAL, tmp_path / "broker")
    failures: list[str] = []
    with LiveBroker(where.data, lock="flock", seed=2, rate=1500,
                    delete_topic_after=2.0) as broker:
        for command in FAST:
            failures += _failures(where, command, 1)
    assert broker.stats.get("topics_deleted") == 1  # the deletion happened under the reads
    assert not failures, "\n".join(failures)


@pytest.mark.spark
@pytest.mark.slow
def test_export_beside_a_live_broker(tmp_path: Path) -> None:
    """``kmeta export`` (a Spark job over the same reads) beside the writer."""
    assert REAL
    where = prepare(REAL, tmp_path / "broker")
    with LiveBroker(where.data, lock="posix", seed=6, rate=600):
        failures = _failures(where, "export", 1)
    assert not failures, "\n".join(failures)


def test_corruption_in_a_closed_segment_is_still_found(tmp_path: Path) -> None:
    assert REAL
    data = copy_real(REAL, tmp_path / "broker")
    where = Where(data, data / "__cluster_metadata-0", tmp_path)
    with LiveBroker(data, lock="posix", seed=3, rate=600):
        planted = plant_corruption(data)
        runs = [run_command("verify", where, True, timeout=TIMEOUT) for _ in range(2)]
    damaged = planted.file
    assert damaged.parent.name == SPARED
    for run in runs:
        v = judge(run)
        assert not v.traceback and not v.timed_out, run.stderr
        assert run.rc == 1, (run.rc, v.failures())
        crc = [f for f in v.error_findings if f[1] == "F001" and f[2].startswith(f"{damaged}:")]
        assert crc, f"no F001 naming {damaged}: {v.failures()}"
        assert any(o["code"] == "F001" and o.get("file") == str(damaged)
                   and o.get("position") == planted.position for o in v.objects), v.objects
        others = [f for f in v.error_findings if f not in crc]
        assert not others, "\n".join(f"{s} {c}: {m}" for s, c, m in others)


def test_a_dir_left_by_a_killed_writer_is_read(tmp_path: Path) -> None:
    """SIGKILL mid-write leaves what a crashed broker leaves (preallocated indexes on the
    active segments, ``*.deleted`` files not yet unlinked, no ``.kafka_cleanshutdown``,
    maybe a ``*.tmp`` or ``.checkpoint.part``): kmeta reads it without a traceback; exit 1
    only for error findings it can name."""
    assert REAL
    where = prepare(REAL, tmp_path / "broker")
    broker = LiveBroker(where.data, lock="posix", seed=4, rate=1500)
    with broker:
        time.sleep(2.5)
        broker.kill()
    said = []
    for command in ("verify", "info", "startup", "dump", "report", "image"):
        run = run_command(command, where, True, timeout=TIMEOUT)
        v = judge(run)
        assert not v.traceback and not v.timed_out, run.stderr
        assert run.rc in (0, 1), (command, run.rc, v.failures())
        codes = Counter(f"{c} {s}" for s, c, _ in v.findings)
        said.append(f"{command}: exit {run.rc}: "
                    + ", ".join(f"{k} x{n}" for k, n in codes.most_common()))
    print("\n".join(said))  # what kmeta reports on a crashed broker's dir (pytest -s)


def test_the_writer_leaves_a_healthy_dir(tmp_path: Path) -> None:
    """The harness's own check: stopped cleanly (as a broker's controlled shutdown), the dir
    it wrote — rolls, retention, DeleteRecords, KRaft snapshots, a deleted topic — is one
    kmeta finds nothing wrong with, so what the tests above see comes from reading it live."""
    assert REAL
    where = prepare(REAL, tmp_path / "broker")
    with LiveBroker(where.data, lock="flock", seed=5, rate=1000,
                    delete_topic_after=2.0) as broker:
        time.sleep(4.0)
    stats = broker.stop()
    assert stats["rolls"] and stats["deleted_segments"] and stats["snapshots"] >= 2
    assert stats["deleted_snapshots"] and stats["topics_deleted"] == 1
    assert not list(where.data.glob("stock-prices-0*")), "the deleted topic's dir is gone"
    for command in ("verify", "startup", "report"):
        run = run_command(command, where, True, timeout=TIMEOUT)
        v = judge(run)
        assert run.rc == 0 and not v.failures(), (command, run.rc, v.failures())
