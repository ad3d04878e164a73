"""``kmeta shell`` as a person meets it: the real program at a prompt in a
pseudo-terminal 80 columns wide (pexpect): completion, columns, history across sessions,
Ctrl-C at the prompt and during a long find, the pager, Ctrl-D."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from kmeta.formats.batch import build_batch
from kmeta.formats.payload import encode_metadata
from kmeta.storage.writer import write_segments
from tests.conftest import HEALTHY
from tests.test_image import broker, partition, topic

pexpect = pytest.importorskip("pexpect")

#: a prompt freshly drawn ("[@12704 2023-…] /image>", the cursor moved after it): not the
#: old prompt redrawn with the line typed when Enter is pressed (keys sent before the
#: next prompt reach a terminal in cooked mode, where Ctrl-D is not a key)
PROMPT = r"\] [^\r\n]*>\x1b\["


def _spawn(path: Path, home: Path, **env: str) -> object:
    environ = {k: v for k, v in os.environ.items() if k not in ("XDG_STATE_HOME", "PAGER")}
    environ.update({"HOME": str(home), "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1",
                    "LINES": "24", "COLUMNS": "80", **env})
    child = pexpect.spawn(sys.executable, ["-m", "kmeta", "shell", str(path)], env=environ,
                          dimensions=(24, 80), encoding="utf-8", timeout=30)
    child.expect(PROMPT)
    return child


def _leave(child: object) -> int:
    """Ctrl-D at the prompt (which the caller has seen): the shell's exit status."""
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def test_completion_columns_and_ctrl_d(tmp_path: Path) -> None:
    child = _spawn(HEALTHY, tmp_path)
    child.send("ls /im\t")
    child.expect("ls /image/")
    child.send("\r")
    # Kafka's columns at 80: every name on two lines
    child.expect(r"acls +cluster +delegationToken +producerIds +scram\s+clientQuotas +configs")
    child.expect(PROMPT)
    child.send("hist\t")
    child.expect("history")
    child.sendcontrol("u")
    child.send("cd /image/topics/byName/ord\t")
    child.expect("orders/")
    child.send("\r")
    child.expect(r"/image/topics/byName/orders>")
    child.send("bogus\r")
    child.expect("bogus: unknown command")
    child.expect(PROMPT)
    assert _leave(child) == 2  # the status of the last command


def test_history_is_kept_across_sessions(tmp_path: Path) -> None:
    child = _spawn(HEALTHY, tmp_path)
    child.send("cd /image/features\r")
    child.expect(PROMPT)
    assert _leave(child) == 0
    assert "cd /image/features" in (tmp_path / ".kmeta_history").read_text()
    again = _spawn(HEALTHY, tmp_path)
    again.send("\x1b[A")  # up: the line typed in the session before
    again.expect("cd /image/features")
    again.send("\r")
    again.expect(r"/image/features>")
    _leave(again)
    state = tmp_path / "state"
    third = _spawn(HEALTHY, tmp_path, XDG_STATE_HOME=str(state))
    third.send("pwd\r")
    third.expect(PROMPT)
    _leave(third)
    assert "pwd" in (state / "kmeta" / "history").read_text()


def test_ctrl_c_at_the_prompt_clears_the_line(tmp_path: Path) -> None:
    child = _spawn(HEALTHY, tmp_path)
    child.send("cat /image/nothing-at-all")
    child.sendintr()
    child.expect(PROMPT)
    child.send("cd /image/features; pwd\r")
    child.expect(r"/image/features\r\n")
    child.expect(PROMPT)
    assert _leave(child) == 0


def _big_log(root: Path, partitions: int = 20_000) -> Path:
    """A metadata log of one topic with ``partitions`` partitions: a find over it prints
    tens of thousands of lines."""
    tid = "dG9waWMtb25lLWlkLTAwMQ"
    records = [("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version", "featureLevel": 19}),
               broker(1), broker(2), topic("big", tid),
               *(partition(tid, p) for p in range(partitions))]
    values = [encode_metadata(*r) for r in records]
    batches = [build_batch(i, [(None, v) for v in values[i:i + 500]], leader_epoch=1)
               for i in range(0, len(values), 500)]
    part = root / "data" / "__cluster_metadata-0"
    write_segments(part, batches)
    return part.parent


def test_ctrl_c_stops_a_long_find_and_the_shell_goes_on(tmp_path: Path) -> None:
    big = _big_log(tmp_path)
    child = _spawn(big, tmp_path, PAGER="cat")
    child.send("find /\r")
    child.expect("/image/topics/byId/")
    time.sleep(0.5)  # the find blocks on the full terminal: it is still running
    child.sendintr()
    child.expect(r"\^C \(stopped\)")
    child.expect(PROMPT)
    child.send("cd /image/features; pwd\r")
    child.expect(r"/image/features\r\n")
    child.expect(PROMPT)
    assert _leave(child) == 0


def test_a_long_reply_goes_through_the_pager(tmp_path: Path) -> None:
    child = _spawn(HEALTHY, tmp_path, PAGER="sed s/^/PAGED:/")
    child.send("ls /image/topics/byName/orders\r")  # short: straight to the screen
    child.expect(r"0 +id +name\r\n")
    child.expect(PROMPT)
    child.send("tree /image/topics/byName/events\r")
    child.expect("PAGED:0:")
    child.expect(PROMPT)
    assert _leave(child) == 0


def test_the_pager_counts_the_rows_a_long_line_wraps_to(tmp_path: Path) -> None:
    """Twelve lines of ~300 characters take 48 rows of an 80-column screen: taller than
    its 24 (the lines were counted, not the rows, and the reply ran off the screen)."""
    child = _spawn(HEALTHY, tmp_path, PAGER="sed s/^/PAGED:/")
    child.send("records 5 10\r")
    child.expect("PAGED:baseOffset: 5 ")
    child.expect(PROMPT)
    assert _leave(child) == 0


def test_screen_rows() -> None:
    from kmeta.shell.repl import screen_rows

    assert [screen_rows(t, 80) for t in ("", "x" * 80, "x" * 81, "界" * 41)] == [1, 1, 2, 2]


def test_the_opening_screen_tells_what_opening_found(tmp_path: Path) -> None:
    """A torn tail was hidden: the opening screen said where the shell stood and nothing
    of the S001 verify, image and brokers report; Ctrl-D then exited 0."""
    from tests.test_shell import _torn

    child = _spawn(_torn(tmp_path), tmp_path)
    opening = child.before
    assert "S001" in opening and "torn tail" in opening, opening
    assert "kmeta: 1 finding(s): 1 error(s)" in opening, opening
    assert "kmeta verify" in opening
    child.send("pwd\r")
    child.expect(PROMPT)
    assert _leave(child) == 1  # the log has an error finding, as every command says it


def test_replies_fold_to_the_screen(tmp_path: Path) -> None:
    """The lines the shell keeps whole for a pipe fold on an 80-column screen, each
    continuation indented (kmeta.environment.fold), none wider than the screen."""
    from tests.terminal import check, run_in_terminal

    run = run_in_terminal(["shell", "-c", "at 12000; next; changes "
                           "/image/topics/byName/orders; replica", str(HEALTHY)])
    check(run)  # among its checks: no line wider than the terminal
    lines = run.text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith(">> offsets 12000.."))
    assert lines[head + 1].startswith("    PARTITION_RECORD"), run.text  # the step's line
    # a record of changes: its fields continue on rows of their own, indented
    assert any(line.startswith("         topicId=") for line in lines), run.text
