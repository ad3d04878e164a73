"""verify forks its replay child only where no other thread runs: a thread that holds a
lock when the process forks leaves it held for ever in the child (a hang), and Python
3.12 and later warn "This process is multi-threaded, use of fork() may lead to deadlocks
in the child".  The progress bar on a terminal was such a thread (rich draws from one of
its own)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from clirun import read_until_closed
from conftest import HEALTHY

from kmeta.cli import main
from kmeta.environment import Environment
from kmeta.ops.replay import process as replay_process

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2,
                                reason="the replay forks only on a machine with two CPUs")


def _verify() -> tuple[int, str]:
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    env = Environment(stdout=stdout, stderr=io.StringIO(), environ={"COLUMNS": "100"})
    with pytest.raises(SystemExit) as done:
        main(["verify", str(HEALTHY)], env)
    stdout.flush()
    return int(done.value.code or 0), stdout.buffer.getvalue().decode()  # type: ignore


def test_verify_on_a_terminal_forks_with_no_other_thread(tmp_path: Path) -> None:
    """The run a person makes (its progress bar on a terminal), in a fresh interpreter (a
    test process may run threads of its own: a Spark session's) that shows every warning
    each time; only the size that forks is lowered.  Python 3.12 and later would warn
    (the fork's warning turned into an error is swallowed, hence ``always``)."""
    import pty

    threads = tmp_path / "threads"
    script = f"""if True:
        import os, sys, threading
        from kmeta.ops.replay import process as replay_process
        replay_process.FORK_ABOVE = 0
        real = os.fork
        def fork():
            with open({str(threads)!r}, "a") as f:
                f.write(",".join(t.name for t in threading.enumerate()) + "\\n")
            return real()
        os.fork = fork
        from kmeta.cli import main
        main(sys.argv[1:])"""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "KMETA_ONE_PROCESS", "PYTHONWARNINGS")}
    proc = subprocess.Popen([sys.executable, "-W", "always", "-c", script, "verify",
                             str(HEALTHY)], stdout=subprocess.PIPE, stderr=slave,
                            env={**env, "TERM": "xterm"})
    os.close(slave)
    seen = read_until_closed(master)
    out = proc.communicate(timeout=60)[0].decode()
    os.close(master)
    terminal = seen.decode("utf-8", "replace")
    assert proc.returncode == 0, terminal[-2000:]
    assert out.strip().splitlines()[-1].startswith("clean"), out
    assert "verify" in terminal  # the bar was there
    assert threads.exists(), "verify did not fork its replay"
    assert threads.read_text() == "MainThread\n"  # one fork, beside no other thread
    assert "fork" not in terminal, terminal[-2000:]


def test_a_replay_beside_another_thread_stays_in_this_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A program that calls kmeta from a threaded process: no fork, the same report."""
    monkeypatch.setenv("KMETA_ONE_PROCESS", "1")
    one = _verify()
    monkeypatch.delenv("KMETA_ONE_PROCESS")
    monkeypatch.setattr(replay_process, "FORK_ABOVE", 0)
    forks: list[int] = []
    real = os.fork

    def fork() -> int:
        forks.append(1)
        return real()

    monkeypatch.setattr(os, "fork", fork)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, name="the caller's")
    other.start()
    try:
        beside = _verify()
    finally:
        stop.set()
        other.join()
    assert not forks
    assert beside == one
