"""The command line at its edges: what a person at 3 a.m. reads, and what a script parses.

Wrong input gets one clear line and a documented exit code; text output holds no Python
values; JSON keys are snake_case and the output is valid UTF-8; filters that match
nothing say so.  Run as a user runs kmeta: in-process through ``tests/clirun.py`` (answered
as a finished subprocess), as a real subprocess on a terminal, with stdout closed, and for
shell completion.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import clirun
import pytest
from conftest import FIXTURES, HEALTHY

from kmeta.formats.batch import build_batch
from kmeta.formats.payload import encode_control, encode_metadata

KMETA = [sys.executable, "-m", "kmeta"]
META = "__cluster_metadata-0"
SEGMENT = "00000000000000000000.log"


def _environ(**env: str) -> dict[str, str]:
    full = {k: v for k, v in os.environ.items()
            if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "_KMETA_COMPLETE")}
    full.update(env)
    return full


def run(*args: Any, **env: str) -> subprocess.CompletedProcess[bytes]:
    return clirun.run(*map(os.fsencode, map(str, args)), env=_environ(**env), timeout=60,
                      text=False)


def run_process(*args: Any, **env: str) -> subprocess.CompletedProcess[bytes]:
    """A real subprocess: shell completion reads its variables from the process."""
    return subprocess.run([*KMETA, *map(os.fsencode, map(str, args))],
                          capture_output=True, env=_environ(**env), timeout=60)


def text(b: bytes) -> str:
    return b.decode("utf-8", "replace")


@pytest.fixture
def meta_dir(tmp_path: Path) -> Path:
    """A small healthy metadata partition: a LeaderChange, a topic and a partition."""
    d = tmp_path / META
    d.mkdir()
    key, value = encode_control("LEADER_CHANGE", {"version": 0, "leaderId": 1,
                                                  "voters": [{"voterId": 1}],
                                                  "grantingVoters": [{"voterId": 1}]})
    topic = encode_metadata("TOPIC_RECORD", 0, {"name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"})
    (d / SEGMENT).write_bytes(
        build_batch(0, [(key, value)], control=True, leader_epoch=1, base_timestamp=1000)
        + build_batch(1, [(None, topic)], leader_epoch=1, base_timestamp=1001))
    (d / "leader-epoch-checkpoint").write_text("0\n1\n1 0\n")
    return d


# ------------------------------------------------------------------ process edges

def test_traceback_after_the_command(meta_dir: Path) -> None:
    proc = run("dump", meta_dir / SEGMENT, "--traceback")
    assert proc.returncode == 0, text(proc.stderr)
    assert b"no such option" not in proc.stderr.lower()


@pytest.mark.parametrize("where", ["before", "after"])
def test_traceback_shows_the_traceback(meta_dir: Path, where: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import kmeta.ops.verify as verify_paths  # the command's entry
    from kmeta import cli

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("stand-in bug")

    monkeypatch.setattr(verify_paths, "verify", broken)
    args = ["verify", str(meta_dir)]
    with pytest.raises(RuntimeError, match="stand-in bug"):
        cli.main(["--traceback", *args] if where == "before" else [*args, "--traceback"])
    with pytest.raises(SystemExit) as exited:  # and only when asked for
        cli.main(args)
    assert exited.value.code == 70


def test_closed_stdout_is_one_line_not_a_crash(meta_dir: Path) -> None:
    proc = subprocess.run(f'"{sys.executable}" -m kmeta dump -r "{meta_dir}" >&-', shell=True,
                          capture_output=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = text(proc.stderr).splitlines()
    assert len(lines) == 1 and "standard output is closed" in lines[0], lines


def test_json_of_a_non_utf8_path_is_valid_utf8(meta_dir: Path) -> None:
    bad = meta_dir.parent / os.fsdecode(b"bad\xff")
    bad.mkdir()
    (bad / "leader-epoch-checkpoint").write_text("0\n1\n1 0\n")
    proc = run("dump", "--json", bad)
    assert proc.returncode == 0, text(proc.stderr)
    objects = [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]
    assert objects[0]["file"].startswith(str(meta_dir.parent / "bad"))


# ------------------------------------------------------------------ filters

def test_misspelt_type_is_a_usage_error_with_close_matches(meta_dir: Path) -> None:
    proc = run("dump", "-t", "PARTITON_CHANGE_RECORD", meta_dir)
    assert proc.returncode == 2
    err = text(proc.stderr)
    assert err.count("\n") == 1 and "PARTITION_CHANGE_RECORD" in err, err
    assert proc.stdout == b""


@pytest.mark.parametrize("name", ["TOPIC_RECORD", "TopicRecord", "topic", "LEADER_CHANGE",
                                  "RAW", "partition-change"])
def test_known_type_spellings_are_accepted(meta_dir: Path, name: str) -> None:
    assert run("dump", "-t", name, meta_dir).returncode == 0


def test_type_filter_prints_only_matching_files(meta_dir: Path) -> None:
    proc = run("dump", "-r", "-t", "TOPIC_RECORD", meta_dir)
    out = text(proc.stdout)
    assert "leader-epoch-checkpoint" not in out, out
    assert "TOPIC_RECORD" in out and "LeaderChange" not in out


def test_type_filter_json_has_only_records(meta_dir: Path) -> None:
    """``dump --json --type … | jq .data`` (the README's query) gets records only."""
    proc = run("dump", "--json", "-t", "TOPIC_RECORD", meta_dir)
    objects = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["kind"] for o in objects] == ["record"]
    assert objects[0]["data"]["name"] == "t"


def test_type_filter_that_matches_nothing_says_so(meta_dir: Path) -> None:
    proc = run("dump", "-t", "PARTITION_RECORD", meta_dir)
    assert proc.returncode == 0 and proc.stdout == b""
    assert "no record of type PARTITION_RECORD" in text(proc.stderr)


def test_history_of_an_absent_topic_says_so(meta_dir: Path) -> None:
    proc = run("history", "--topic", "nope", meta_dir)
    assert proc.stdout == b""
    assert "no record" in text(proc.stderr) and "'nope'" in text(proc.stderr)
    assert b"no record" not in run("history", "--topic", "t", meta_dir).stderr


@pytest.mark.parametrize(("words", "cword", "expected"), [
    ("kmeta dump -t PARTITION_C", "3", {"PARTITION_CHANGE_RECORD", "PARTITION_CHANGE"}),
    ("kmeta image DIR ", "3", {"ls", "cat"}),
])
def test_completion_offers_types_and_image_actions(words: str, cword: str,
                                                   expected: set[str]) -> None:
    proc = run_process(_KMETA_COMPLETE="complete_bash", COMP_WORDS=words,
                       COMP_CWORD=cword)
    assert set(text(proc.stdout).split()) == expected


# ------------------------------------------------------------------ what a file is

@pytest.mark.parametrize("content", [b"hello world\n", b"# notes\n" * 200,
                                     bytes(range(255, 0, -1)) * 4])
def test_a_file_that_is_no_segment_says_so(tmp_path: Path, content: bytes) -> None:
    f = tmp_path / SEGMENT
    f.write_bytes(content)
    proc = run("dump", f)
    out = text(proc.stdout)
    assert proc.returncode == 1
    assert "S010 error" in out and "not a Kafka log segment" in out, out
    assert "torn" not in out and "S004" not in out and "S001" not in out


def test_a_torn_first_batch_is_still_torn(tmp_path: Path, meta_dir: Path) -> None:
    f = tmp_path / SEGMENT
    f.write_bytes((meta_dir / SEGMENT).read_bytes()[:40])
    assert "S001" in text(run("dump", f).stdout)


def test_an_empty_segment_says_what_it_is(tmp_path: Path) -> None:
    f = tmp_path / SEGMENT
    f.write_bytes(b"")
    proc = run("dump", f)
    assert proc.returncode == 0
    assert "empty segment" in text(proc.stdout)


def test_text_shows_no_python_none(tmp_path: Path) -> None:
    f = tmp_path / SEGMENT  # text under a segment's name: read, and S010
    f.write_bytes(b"hello world\n")
    out = text(run("dump", f).stdout)
    assert "None" not in out, out


# ------------------------------------------------------------------ JSON naming

#: Keys whose values hold Kafka's own field names (decoded records, the image built from
#: them, small files' content): camelCase there is Kafka's, not kmeta's.
KAFKA_SHAPED = {"data", "image", "content", "small_files"}


def _kmeta_keys(obj: Any, inside: bool = False) -> Iterator[tuple[str, Any]]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if not inside:
                yield k, v
            yield from _kmeta_keys(v, inside or k in KAFKA_SHAPED)
    elif isinstance(obj, list):
        for x in obj:
            yield from _kmeta_keys(x, inside)


UNCLEAN = FIXTURES / "divergent" / "unclean"


@pytest.mark.parametrize("args", [
    ["verify", HEALTHY], ["info", HEALTHY], ["history", "--topic", "orders", HEALTHY],
    ["image", HEALTHY], ["diff", UNCLEAN / "a", UNCLEAN / "b"],
    ["truncate", UNCLEAN / "a", "--to", "5"],
    ["repair", "--dry-run", FIXTURES / "corrupt" / "torn-tail" / META],
], ids=lambda a: a[0] if isinstance(a, list) else None)
def test_json_keys_are_snake_case_and_findings_are_lines(args: list[Any]) -> None:
    proc = run(*args[:1], "--json", *args[1:])
    assert proc.returncode in (0, 1), text(proc.stderr)
    for line in proc.stdout.splitlines():
        for key, _value in _kmeta_keys(json.loads(line)):
            # map keys (record type names, paths) are data, not names kmeta chose
            assert "/" in key or not re.search("[a-z][A-Z]", key), \
                f"{key} in {args[0]} --json"
            # findings are finding objects on their own lines, never nested
            assert key != "findings", f"findings nested in {args[0]} --json"


# ------------------------------------------------------------------ text for people

PYTHON_VALUES = re.compile(r"\bNone\b|\bTrue\b|\bFalse\b|\[\{'|\{'\w+': ")


def _real(real_data: Path, *parts: str) -> Path:
    path = real_data.joinpath(*parts)
    if not path.is_dir():
        pytest.skip(f"{path} is absent")
    return path


@pytest.mark.parametrize("command", [["info"], ["verify"], ["image"]])
@pytest.mark.parametrize("where", [("ldi-poc",), ("data-store", "kafka-data"),
                                   ("quorum3-boaz", "data", "kafka-1")])
def test_no_python_values_in_text(real_data: Path, command: list[str],
                                  where: tuple[str, ...]) -> None:
    proc = run(*command, _real(real_data, *where))
    out = text(proc.stdout)
    assert not PYTHON_VALUES.search(out), PYTHON_VALUES.search(out)


def test_no_python_values_in_diff_of_logless_replicas(real_data: Path) -> None:
    proc = run("diff", _real(real_data, "data-store", "kafka-data"),
               _real(real_data, "kraft-ksql-txn", "kafka-data"))
    out = text(proc.stdout)
    assert not PYTHON_VALUES.search(out), out


def test_lists_read_as_a_person_writes_them() -> None:
    from kmeta.render.text import human, summarise

    assert human([{"voterId": 1}, {"voterId": 2}]) == "1,2"
    assert human(None) == "-" and human(True) == "true" and human([]) == "-"
    assert summarise(list(range(1, 301)), "epochs") == "1,2,3,4,…,297,298,299,300 (300 epochs)"


# ------------------------------------------------------------------ readability

def test_verify_groups_repeated_findings_and_all_expands(tmp_path: Path) -> None:
    import shutil

    where = tmp_path / "healthy"
    shutil.copytree(FIXTURES / "healthy", where)
    part = next(where.rglob("__cluster_metadata-0"))
    for i in range(24):
        (part / f"notes-{i:02d}.txt").write_text("left by an operator\n")
    short = text(run("verify", where).stdout)
    lines = [line for line in short.splitlines() if "S007" in line and "hint" not in line]
    assert len(lines) == 1 and "S007 warning x24" in lines[0], lines
    assert "first: " in lines[0] and "notes-00.txt" in lines[0] and "notes-23.txt" in lines[0]
    assert str(where) not in short  # paths relative to the argument
    full = text(run("verify", "--all", where).stdout)
    assert sum("S007" in line and "hint" not in line for line in full.splitlines()) == 24


def test_verify_in_a_pipe_is_one_finding_per_line() -> None:
    case = FIXTURES / "verify" / "s010-text-segment"
    out = text(run("verify", case).stdout).splitlines()
    line = next(x for x in out if "S010" in x)
    assert "__cluster_metadata-0/00000000000000000010.log" in line
    assert line.endswith("(it begins 'copied from the broker on Tuesday')")


def test_columns_is_respected_in_a_pipe(real_data: Path) -> None:
    out = text(run("info", _real(real_data, "ldi-poc"), COLUMNS="80").stdout)
    rows = [line for line in out.splitlines() if "│" in line or "┃" in line]
    assert rows and max(map(len, rows)) <= 80, rows
    assert "00000000000000000000.log" in out  # the file name is never cut


def _with_tty_stderr(*args: Any) -> str:
    return _on_a_terminal(args, "stderr", {})


def _on_a_terminal(args: tuple[Any, ...], stream: str, env: dict[str, str]) -> str:
    """Run kmeta with ``stream`` on a pseudo-terminal (the other one discarded); what
    the terminal got.  Read while kmeta runs: a full terminal buffer would block it."""
    import pty

    master, slave = pty.openpty()
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    streams = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, stream: slave}
    proc = subprocess.Popen([*KMETA, *map(str, args)], **streams,
                            env={**base, "TERM": "xterm", **env})
    os.close(slave)
    out = clirun.read_until_closed(master)
    proc.wait(timeout=60)
    os.close(master)
    return out.decode("utf-8", "replace")


@pytest.mark.parametrize("command", [["dump"], ["info"], ["image"],
                                     ["history", "--broker", "1"], ["verify"]])
def test_progress_bar_on_a_terminal(command: list[str]) -> None:
    from rich.filesize import decimal

    # The total is what the command reads: image and history read the metadata log and
    # snapshots only, not orders-0's segment.
    read = [*(HEALTHY / META).glob("*.log"), *(HEALTHY / META).glob("*.checkpoint"),
            HEALTHY / "bootstrap.checkpoint"]
    if command[0] in ("dump", "info", "verify"):
        read += list((HEALTHY / "orders-0").glob("*.log"))
    total = decimal(sum(p.stat().st_size for p in read))
    seen = _with_tty_stderr(*command, HEALTHY)
    assert f"{command[0]} " in seen and f"/{total}" in seen, (total, seen[-500:])


def test_storage_tells_the_bar_of_every_file_read(meta_dir: Path) -> None:
    from heard import Heard

    from kmeta.ops.dump import DumpOptions, dump

    heard = Heard()
    for _ in dump([str(meta_dir)], DumpOptions(progress=heard)):
        pass
    segment = meta_dir / SEGMENT
    assert heard.furthest() == {str(segment): segment.stat().st_size}
    assert str(segment) in heard.found_files


def test_diverged_is_coloured_on_a_terminal_only() -> None:
    unclean = FIXTURES / "divergent" / "unclean"
    piped = text(run("diff", unclean / "a", unclean / "b").stdout)
    assert "DIVERGED" in piped and "\x1b[" not in piped
    seen = _stdout_on_a_terminal("diff", unclean / "a", unclean / "b")
    assert "\x1b[1;31mDIVERGED" in seen


def test_long_epoch_lists_are_summarised() -> None:
    from kmeta.render.truncate import _pairs

    line = _pairs([(e, e * 10) for e in range(300)])
    assert line.endswith("(300 epochs)") and len(line) < 100
    assert _pairs([(1, 0), (2, 30)]) == "1@0, 2@30"


def _stdout_on_a_terminal(*args: Any, **env: str) -> str:
    return _on_a_terminal(args, "stdout", env)


def test_errors_are_coloured_on_a_terminal_unless_no_color() -> None:
    torn = FIXTURES / "corrupt" / "torn-tail"
    assert "\x1b[1;31mS001 error" in _stdout_on_a_terminal("dump", torn)
    assert "\x1b[" not in _stdout_on_a_terminal("dump", torn, NO_COLOR="1")
    assert "\x1b[" not in text(run("dump", torn).stdout)
    assert "\x1b[1;31mbroken" in _stdout_on_a_terminal("verify", torn)


def test_type_with_batches_only_is_a_usage_error(meta_dir: Path) -> None:
    proc = run("dump", "--batches-only", "-t", "TOPIC_RECORD", meta_dir)
    assert proc.returncode == 2 and "--batches-only" in text(proc.stderr)


def test_info_snapshot_table_fits_80_columns(real_data: Path) -> None:
    out = text(run("info", _real(real_data, "data-store"), COLUMNS="80").stdout)
    rows = [line for line in out.splitlines() if ".checkpoint" in line and "│" in line]
    assert len(rows) == 7 and max(map(len, rows)) <= 80, rows
    assert all(re.match(r"\d{20}-\d{10}\.checkpoint │", row) for row in rows), rows
    assert all(row.endswith("4,552") for row in rows), rows  # bytes whole, not "4,55"


@pytest.mark.parametrize("command", ["verify", "info", "image"])
def test_prose_folds_at_80_columns(command: str, real_data: Path) -> None:
    # COLUMNS=80: every line fits, folded at spaces; only a single word longer than the
    # width (a path) may stand alone on a longer line.  A pipe without COLUMNS keeps
    # lines whole, for grep.
    # the dir named from where it is (as a user at its prompt types it): how long the
    # clone's path is must not decide what a line holds
    name = "ldi-poc" if command != "verify" else "kraft-ksql-txn"
    out = text(clirun.run(command, name, env=_environ(COLUMNS="80"), timeout=60,
                          text=False, cwd=real_data).stdout).splitlines()
    assert out and all(len(line) <= 80 or len(line.split()) == 1 for line in out), \
        [line for line in out if len(line) > 80]
    whole = text(run(command, real_data / name).stdout).splitlines()
    assert max(map(len, whole)) > 80


@pytest.mark.parametrize("args", [["truncate", "--to", "4000", "--no-images"],
                                  ["repair", "--dry-run", "--truncate-to", "4000"]])
def test_report_lines_fold_at_80_columns(args: list[str], real_data: Path) -> None:
    part = real_data / "ldi-poc" / META
    out = text(run(args[0], part, *args[1:], COLUMNS="80").stdout).splitlines()
    assert out and all(len(line) <= 80 or len(line.split()) == 1 for line in out), out
    assert max(map(len, text(run(args[0], part, *args[1:]).stdout).splitlines())) > 80
