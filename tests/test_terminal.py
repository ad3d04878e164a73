"""kmeta's everyday commands as a person runs them: typed at a prompt in an xterm of 80
columns by 24 rows, colour and the progress bar on, on a 268 MB metadata log.

The rest of the suite runs kmeta with its output in buffers and pipes, where there is no
bar, no colour and no width to fit.  What only a terminal shows went unseen there: a
crash in the bar's code (verify ended in "internal error" on every terminal while every
piped test passed), tables and lines wider than the screen, a bar left behind.  Each test
here runs one command through :mod:`tests.terminal` and :func:`~tests.terminal.check`\\ s
what a person would see: the documented exit status, no crash, no line wider than the
terminal, no bar left on the screen.

The commands run from the repository's root with the log's path as a person there types
it (``fixtures/big/256MiB/__cluster_metadata-0``): the paths kmeta prints are as long as
they would be for that person.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, big_log_dir

pytest.importorskip("pyte")

from tests.terminal import (  # noqa: E402  (after the skip: pyte is a dev extra)
    Terminal,
    TerminalRun,
    check,
    drawn_bars,
    problems,
    render,
    run_in_terminal,
    run_interrupted,
    run_piped,
)

pytestmark = pytest.mark.slow

#: The exit statuses of kmeta(1), EXIT STATUS.
OK, INTERRUPTED = 0, 130

#: The shell's prompt once drawn: ``[@3771531 2023-12-05 20:26:45] /> ``.
PROMPT = r"^\[@\d+ [^\]]*\] /\S*> ?$"


@pytest.fixture(scope="session")
def big_data_dir() -> Path:
    """A data dir holding a 268 MB (256 MiB) metadata log and a small topic, made once
    (tests/conftest.py's big_log_dir)."""
    return big_log_dir()


@pytest.fixture(scope="session")
def data_dir(big_data_dir: Path) -> str:
    """The data dir as typed from the repository's root."""
    return str(big_data_dir.relative_to(REPO))


@pytest.fixture(scope="session")
def log(data_dir: str) -> str:
    """The metadata log's partition dir as typed from the repository's root."""
    return f"{data_dir}/__cluster_metadata-0"


#: kmeta's bar as rich draws it at 80 columns (its colours left out), redrawn once, and
#: what rich writes when the command ends: the bar's line erased, the cursor back on it.
BAR = "".join(f"\r\x1b[2Kverify {'━' * n}╸{'━' * (38 - n)} {n * 6.7:.1f}/268.5 MB "
              "608.9 MB/s 0:00:01" for n in (10, 28))
ERASED = "\r\n\x1b[?25h\r\x1b[1A\x1b[2K"


def test_the_checks_see_what_a_person_would() -> None:
    """The checks on bytes whose faults are known (no kmeta run): a run that erased its
    bar and fits the screen passes; a bar left behind, a crash, a traceback, a line
    wider than the terminal and the exit status are each named."""
    erased = render(["verify", "LOG"], f"{BAR}{ERASED}clean: 0 error(s)\r\n".encode())
    assert erased.screen == ("clean: 0 error(s)",)
    assert problems(erased, exit_code=OK) == []
    assert len(drawn_bars(erased)) == 2
    # a line editor's redraw: back over the prompt (CUB), the prompt again, a space at
    # the last column
    prompt = "[@1000 2023-11-14 22:21:07] /> "
    redrawn = render(["shell", "LOG"], f"{prompt}\x1b[31D{prompt}{' ' * 49}\r\x1b[79C \r\r\n"
                     .encode())
    assert redrawn.screen == (prompt.rstrip(),)
    assert problems(redrawn, exit_code=OK) == []
    crash = (f"{BAR}\r\nkmeta: internal error: TypeError: {'x' * 80}\r\n"
             "Traceback (most recent call last):\r\n")
    found = "\n".join(problems(render(["verify", "LOG"], crash.encode(), exit_code=70),
                               exit_code=OK))
    for fault in ("exit status 70, expected 0", "'internal error' on the terminal",
                  "'Traceback' on the terminal", "is 114 columns wide, more than its 80",
                  "the progress bar was left on the screen: 'verify ━"):
        assert fault in found, found


def kmeta(*args: str) -> TerminalRun:
    """``kmeta ARGS`` typed at a prompt in the repository's root, in an 80x24 xterm."""
    return run_in_terminal(args, cwd=REPO)


# ---------------------------------------------------------------------- verify

@pytest.fixture(scope="module")
def verify_log(log: str) -> TerminalRun:
    """One verify of the log, for the test of what it shows and the test of its bar."""
    return kmeta("verify", log)


def test_verify_log(verify_log: TerminalRun) -> None:
    check(verify_log, exit_code=OK)


def test_verify_draws_its_bar_while_reading(verify_log: TerminalRun) -> None:
    """The bar reached the terminal while verify read: the run took the terminal's path
    (a test of the terminal that never drew the bar would prove nothing of it)."""
    assert drawn_bars(verify_log), verify_log.stream_text[-2000:]


def test_verify_data_dir(data_dir: str) -> None:
    check(kmeta("verify", data_dir), exit_code=OK)


# ---------------------------------------------------------------------- reading the log

def test_info_log(log: str) -> None:
    check(kmeta("info", log), exit_code=OK)


def test_info_tables_show_whole_numbers(log: str) -> None:
    """A table fitted to 80 columns drops or wraps what does not fit; it never shows a
    number with digits cut off ("922,36" for 922,361), which a person would read as the
    value.  Each number in a table cell on the terminal is one the table holds in full
    when nothing is fitted (stdout on a pipe)."""
    screen = kmeta("info", log)
    whole = run_piped(["info", log], cwd=REPO)
    assert whole.stdout is not None

    def numbers(lines: list[str] | tuple[str, ...]) -> set[str]:
        cells = (cell.strip() for line in lines if "│" in line
                 for cell in line.split("│"))
        return {cell for cell in cells if re.fullmatch(r"\d[\d,]*", cell)}

    full = numbers(whole.stdout.decode().splitlines())
    cut = sorted(numbers(screen.screen) - full)
    assert full and not cut, f"numbers cut short on the terminal: {cut}\n{screen.text}"


def test_image_log(log: str) -> None:
    check(kmeta("image", log), exit_code=OK)


def test_image_digest(log: str) -> None:
    run = kmeta("image", log, "--digest")
    check(run, exit_code=OK)
    assert re.fullmatch(r"[0-9a-f]{32}", run.screen[-1]), run.text


def test_history_of_broker_1(log: str) -> None:
    check(kmeta("history", log, "--broker", "1"), exit_code=OK)


def test_brokers(log: str) -> None:
    """Warnings only (brokers fenced long) on the generated log: exit 0."""
    check(kmeta("brokers", log), exit_code=OK)


def test_retention(log: str) -> None:
    check(kmeta("retention", log), exit_code=OK)


def test_report(log: str) -> None:
    check(kmeta("report", log), exit_code=OK)


def test_startup_of_the_data_dir(data_dir: str) -> None:
    """An unclean shutdown (no .kafka_cleanshutdown) is a warning: exit 0."""
    check(kmeta("startup", data_dir), exit_code=OK)


# ---------------------------------------------------------------------- dump

def test_dump_records_into_head(log: str) -> None:
    """``kmeta dump --records LOG | head -40``: the bar on the terminal while stdout
    fills the pipe, then head leaves and kmeta "stops quietly" (kmeta(1)): exit 0,
    nothing left on the terminal."""
    run = run_piped(["dump", "--records", log], head=40, cwd=REPO)
    check(run, exit_code=OK)
    assert run.stdout is not None
    lines = run.stdout.decode().splitlines()
    assert len(lines) == 40 and lines[0].startswith(f"Dumping {log}/"), lines[:3]
    assert not run.screen, run.text


def test_dump_stopped_with_ctrl_c(log: str) -> None:
    """``kmeta dump LOG`` on the terminal prints millions of lines; a person stops it
    with Ctrl-C once a screen has gone by: exit 130 (kmeta(1)), no traceback."""
    run = run_interrupted(["dump", log], cwd=REPO)
    check(run, exit_code=INTERRUPTED)
    assert any(line.startswith("baseOffset: ") for line in run.screen), run.text


# ---------------------------------------------------------------------- shell

@pytest.fixture
def shell(log: str, tmp_path: Path) -> Iterator[Terminal]:
    """``kmeta shell LOG`` at its first prompt (the history file in a home of its own)."""
    with Terminal(["shell", log], cwd=REPO, env={"HOME": str(tmp_path)}) as term:
        term.wait_for_line(PROMPT)
        yield term


@pytest.mark.parametrize("leave", ["exit\r", "\x04"], ids=["exit", "ctrl-d"])
def test_shell_session(shell: Terminal, leave: str) -> None:
    """A person's first minute in the shell: list the image, go back to offset 1000,
    leave; the reply to each line, then a fresh prompt where the shell now stands."""
    first = shell.cursor_row
    shell.send("ls /image\r")
    prompt = shell.wait_for_line(PROMPT, after=first + 1)
    names = " ".join(shell.lines[first + 1:prompt]).split()
    assert {"acls", "cluster", "features", "topics"} <= set(names), shell.shown()
    shell.send("at 1000\r")
    prompt = shell.wait_for_line(PROMPT, after=prompt + 1)
    assert shell.lines[prompt].startswith("[@1000 "), shell.shown()
    shell.send(leave)
    check(shell.finish(), exit_code=OK)
