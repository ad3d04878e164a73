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
from conftest import HEALTHY

from kmeta.cli import main
from kmeta.environment import Environment
from kmeta.ops import replay_process

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2,
                                reason="the replay forks only on a machine with two CPUs")


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal: the progress bar shows on it."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The threads alive at each fork of this process (verify's replay forked always)."""
    seen: list[list[str]] = []
    real = os.fork

    def fork() -> int:
        seen.append([t.name for t in threading.enumerate()])
        return real()

    monkeypatch.setattr(os, "fork", fork)
    monkeypatch.setattr(replay_process, "FORK_ABOVE", 0)
    monkeypatch.delenv("KMETA_ONE_PROCESS", raising=False)
    return seen


def _verify(stderr: io.StringIO) -> tuple[int, str]:
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    env = Environment(stdout=stdout, stderr=stderr,
                      environ={"TERM": "xterm", "COLUMNS": "100"})
    with pytest.raises(SystemExit) as done:
        main(["verify", str(HEALTHY)], env)
    stdout.flush()
    return int(done.value.code or 0), stdout.buffer.getvalue().decode()  # type: ignore


def test_verify_with_its_bar_on_a_terminal_forks_with_no_other_thread(
        forks: list[list[str]]) -> None:
    stderr = _Terminal()
    code, out = _verify(stderr)
    assert code == 0 and out.strip().splitlines()[-1].startswith("clean"), out
    assert "verify" in stderr.getvalue()  # the bar was there
    assert forks, "verify did not fork its replay"
    assert all(names == [threading.main_thread().name] for names in forks), forks


def test_a_replay_beside_another_thread_stays_in_this_process(
        forks: list[list[str]]) -> None:
    """A program that calls kmeta from a threaded process: no fork, the same report."""
    one = _verify(io.StringIO())
    assert len(forks) == 1
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, name="the caller's")
    other.start()
    try:
        beside = _verify(io.StringIO())
    finally:
        stop.set()
        other.join()
    assert len(forks) == 1, forks
    assert beside == one


@pytest.mark.skipif(sys.version_info < (3, 12),
                    reason="Python warns of a fork beside threads from 3.12 on")
def test_verify_on_a_terminal_does_not_warn_of_fork_with_threads(tmp_path: Path) -> None:
    """The run a person makes (stderr on a terminal), in a fresh interpreter that shows
    every warning each time (the fork's, an error under ``-W error``, is swallowed);
    only the size that forks is lowered."""
    import pty

    counted = tmp_path / "forks"
    script = f"""if True:
        import os, sys
        from kmeta.ops import replay_process
        replay_process.FORK_ABOVE = 0
        real = os.fork
        def fork():
            with open({str(counted)!r}, "a") as f:
                f.write("fork\\n")
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
    seen = []
    while True:
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # the other end closed
            break
        if not data:
            break
        seen.append(data)
    out = proc.communicate(timeout=60)[0].decode()
    os.close(master)
    terminal = b"".join(seen).decode("utf-8", "replace")
    assert proc.returncode == 0, terminal[-2000:]
    assert "fork" not in terminal, terminal[-2000:]
    assert "verify" in terminal  # the bar was there
    assert counted.read_text() == "fork\n"  # and the replay's child
    assert out.strip().splitlines()[-1].startswith("clean"), out
