"""One exit status per situation, for every command (kmeta(1), EXIT STATUS).

A table of every command of ``kmeta --help`` against the inputs a user gets wrong (a
path that does not exist, /etc, a text file, a folder of text files, a file that cannot
be opened, a metadata partition without its log, a data dir or a data partition where
the metadata log is read) and the options that contradict each other or hold a bad
value.  Where a command stops, stderr is one ``kmeta: error[KMxxx]`` line.

The rules the table follows: 3 when a path holds none of the Kafka files the command
reads (it does not exist, cannot be read, holds only other files, or lacks the
metadata log a metadata command reads); 2 for options (contradictory, a bad value) and
for a path at the wrong level, whose message names the right one; else the findings'
status, 1 or 0.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clirun import run
from conftest import FIXTURES, HEALTHY, VERIFY

from kmeta.cli import FAMILIES, NO_INPUT, app

SEGMENT = "00000000000000000000.log"

#: Each situation's input, built in ``tmp`` (or a fixture as it is).
SITUATIONS = {
    "missing": lambda tmp: tmp / "nope",
    "typo": lambda tmp: FIXTURES / "helthy",
    "etc": lambda tmp: Path("/etc"),
    "text": lambda tmp: _write(tmp / "notes.txt", "copied from the broker on Tuesday\n"),
    "textdir": lambda tmp: _text_folder(tmp / "notes"),
    "empty": lambda tmp: _mkdir(tmp / "empty"),
    "unreadable": lambda tmp: _copy(HEALTHY / "__cluster_metadata-0" / SEGMENT, tmp / SEGMENT),
    # a metadata partition whose log is gone, snapshots kept (V020)
    "no-log": lambda tmp: VERIFY / "v020-no-segment",
    # a data dir without __cluster_metadata-0 (its metadata.log.dir is elsewhere)
    "no-metadata": lambda tmp: FIXTURES / "consumers" / "node1",
    # a data partition where the metadata log is read
    "data-partition": lambda tmp: FIXTURES / "consumers" / "node1" / "orders-0",
}

# Status per command (rows, in kmeta --help's order) and situation (columns, in
# SITUATIONS' order).  The columns after "unreadable" are inputs that hold Kafka files:
# a command that reads what they hold answers (its findings' status); one that reads
# the metadata log (or its log, or __consumer_offsets) refuses with 3.  - : not run here
# (export answers with a Spark job: tests/test_spark_export.py).
TABLE = """
            missing typo etc text textdir empty unreadable no-log no-metadata data-partition
dump        3       3    3   3    3       3     3          0      0           0
info        3       3    3   3    3       3     3          1      0           0
verify      3       3    3   3    3       3     3          1      0           0
report      3       3    3   3    3       3     3          1      0           0
startup     3       3    3   3    3       3     3          1      0           2
image       3       3    3   3    3       3     3          1      3           3
history     3       3    3   3    3       3     3          3      3           3
brokers     3       3    3   3    3       3     3          1      3           3
retention   3       3    3   3    3       3     3          1      3           3
shell       3       3    3   3    3       3     3          1      3           3
consumers   3       3    3   3    3       3     3          3      0           3
tiering     3       3    3   3    3       3     3          0      0           0
compact     3       3    3   3    3       3     3          3      2           0
diff        3       3    3   3    3       3     3          0      3           3
snapshot    3       3    3   3    3       3     3          3      3           3
truncate    3       3    3   3    3       3     3          3      3           3
repair      3       3    3   3    3       3     3          2      3           3
export      3       3    3   3    3       3     -          -      -           -
"""


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _mkdir(path: Path) -> Path:
    path.mkdir()
    return path


def _copy(src: Path, dst: Path) -> Path:
    shutil.copyfile(src, dst)
    return dst


def _text_folder(path: Path) -> Path:
    path.mkdir()
    (path / "README.txt").write_text("notes\n")
    (path / "server.conf").write_text("log.dirs=/var/lib/kafka\n")
    return path


def _table() -> dict[tuple[str, str], int | None]:
    header, *rows = TABLE.strip().splitlines()
    columns = header.split()
    cells = {}
    for row in rows:
        command, *values = row.split()
        assert len(values) == len(columns), row
        for column, value in zip(columns, values, strict=True):
            cells[command, column] = None if value == "-" else int(value)
    return cells


CELLS = _table()


def _commands() -> list[str]:
    from kmeta.cli.app import _name

    return [_name(c) for c in app.registered_commands]


def test_the_table_covers_every_command_and_situation() -> None:
    assert FAMILIES  # every family registered its commands
    assert sorted({c for c, _ in CELLS}) == sorted(set(_commands()) - NO_INPUT)
    assert sorted({s for _, s in CELLS}) == sorted(SITUATIONS)


def _argv(command: str, path: Path, tmp: Path, situation: str) -> list[Any]:
    """The command line of ``command`` given ``path``, with the options it needs."""
    extra: dict[str, list[Any]] = {
        "history": ["--topic", "orders"],
        "shell": ["-c", "ls"],
        "snapshot": ["--out", tmp / "out"],
        "truncate": ["--to", "0"],
        "repair": ["--dry-run"],
        "export": ["--to", tmp / "out"],
    }
    if command == "diff":  # a second replica: of the same cluster where one is needed
        peer = HEALTHY if situation != "no-log" else _copy_tree(path, tmp / "peer")
        return [command, path, peer]
    return [command, path, *extra.get(command, [])]


def _copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


@pytest.fixture
def denied(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """os.open refuses files named SEGMENT, as for a user without read permission (the
    suite may run as root, who reads a chmod 000 file; tests/test_cli.py runs one case as
    user nobody)."""
    real_open = os.open

    def fake_open(path: Any, flags: int, *args: Any, **kw: Any) -> int:
        if Path(path).name == SEGMENT and "unreadable" in str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kw)

    monkeypatch.setattr(os, "open", fake_open)
    yield SEGMENT


def _assert_one_error_line(proc: Any, status: int) -> None:
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    assert "internal error" not in proc.stderr, proc.stderr
    if status in (2, 3):
        lines = proc.stderr.strip().splitlines()
        if "S008" in proc.stdout:  # a file that cannot be opened among those read is a
            return  # finding (the others are still read), told with the findings
        assert len(lines) == 1 and lines[0].startswith("kmeta: error["), proc.stderr


@pytest.mark.parametrize(("command", "situation"),
                         [k for k, v in CELLS.items() if v is not None])
def test_one_status_per_situation(command: str, situation: str, tmp_path: Path,
                                  denied: str) -> None:
    where = tmp_path / situation
    where.mkdir()
    path = SITUATIONS[situation](where)
    proc = run(*_argv(command, path, tmp_path, situation), timeout=120)
    expected = CELLS[command, situation]
    assert proc.returncode == expected, (
        f"kmeta {command} {situation}: {proc.returncode}, not {expected}\n{proc.stderr}")
    _assert_one_error_line(proc, proc.returncode)


#: Options that contradict each other, and option values that are no value of theirs.
OPTIONS = {
    "from after to": ["dump", HEALTHY, "--from-offset", "10", "--to-offset", "5"],
    "since after until (offsets)": ["brokers", HEALTHY, "--since", "10", "--until", "5"],
    "since after until (times)": ["brokers", HEALTHY, "--since", "2024-05-02",
                                  "--until", "2024-05-01"],
    "to and to-divergence-with": ["truncate", HEALTHY, "--to", "0",
                                  "--to-divergence-with", HEALTHY],
    "in-place and out": ["repair", HEALTHY / "__cluster_metadata-0", "--in-place",
                         "--out", "/nonexistent/out"],
    "payloads without data-topics": ["export", HEALTHY, "--to", "/nonexistent/out",
                                     "--payloads"],
    "position without against": ["consumers", FIXTURES / "consumers" / "node1",
                                 "--position", "5:1"],
    "an offset below 0": ["image", HEALTHY, "--at", "-1"],
    "a from-offset below 0": ["dump", HEALTHY, "--from-offset", "-5"],
    "a to-offset below 0": ["dump", HEALTHY, "--to-offset", "-1"],
    "a negative from": ["brokers", HEALTHY, "--from", "-1"],
    "not a number": ["dump", HEALTHY, "--from-offset", "ten"],
    "not a time": ["brokers", HEALTHY, "--since", "yesterday"],
    "not a duration": ["brokers", HEALTHY, "--fenced-longer-than", "5 parsecs"],
    "not a size": ["retention", HEALTHY, "--retention-bytes", "lots"],
    "an unknown Kafka version": ["startup", HEALTHY, "--kafka-version", "9.9"],
    "an unknown strategy": ["compact", FIXTURES / "compaction" / "headers",
                            "--strategy", "newest"],
    "an unknown format": ["export", HEALTHY, "--to", "/nonexistent/out", "--format", "xml"],
    "an unknown option": ["verify", HEALTHY, "--fast"],
    "a command's typo": ["verfy", HEALTHY],
}


@pytest.mark.parametrize("case", OPTIONS)
def test_options_that_cannot_hold_exit_2(case: str) -> None:
    proc = run(*OPTIONS[case], timeout=120)
    assert proc.returncode == 2, f"{case}: {proc.returncode}\n{proc.stderr}"
    # one style, whether click or kmeta refused it (DESIGN.md, "One language")
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("kmeta: error[KM002]: "), line


#: A path named by an option is an input as a PATH is: the same 3 when it is none.
OPTION_PATHS = {
    "image --from-snapshot": ["image", HEALTHY, "--from-snapshot", "/nonexistent.checkpoint"],
    "startup --metadata": ["startup", HEALTHY, "--metadata", "/nonexistent"],
    "verify --metadata": ["verify", HEALTHY, "--metadata", "/nonexistent"],
    "tiering --metadata-dir": ["tiering", FIXTURES / "tiering" / "broker",
                               "--metadata-dir", "/nonexistent"],
    "retention --replica": ["retention", HEALTHY, "--replica", "/nonexistent/kafka"],
    "consumers --against": ["consumers", FIXTURES / "consumers" / "node1",
                            "--against", "/nonexistent"],
    "truncate --to-divergence-with": ["truncate", HEALTHY, "--to-divergence-with",
                                      "/nonexistent"],
    "startup --config": ["startup", HEALTHY, "--config", "/nonexistent.properties"],
}


@pytest.mark.parametrize("case", OPTION_PATHS)
def test_a_path_an_option_names_that_is_none_exits_3(case: str) -> None:
    proc = run(*OPTION_PATHS[case], timeout=120)
    assert proc.returncode == 3, f"{case}: {proc.returncode}\n{proc.stderr}"
    _assert_one_error_line(proc, 3)


@pytest.mark.slow
def test_a_file_that_cannot_be_opened_as_user_nobody(nobody_python: list[str]) -> None:
    """The "unreadable" column with a real chmod 000 file, run as user nobody (root reads
    it): the same status from every command as the table's."""
    import subprocess
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="kmeta-exit-"))
    try:
        tmp.chmod(0o755)
        where = tmp / "unreadable"
        where.mkdir(mode=0o755)
        path = SITUATIONS["unreadable"](where)
        path.chmod(0)
        env = {k: v for k, v in os.environ.items() if not k.endswith("_COMPLETE")}
        for command in sorted({c for c, s in CELLS if s == "unreadable"
                               and CELLS[c, s] is not None}):
            argv = [str(a) for a in _argv(command, path, tmp, "unreadable")]
            proc = subprocess.run([*nobody_python, "-m", "kmeta", *argv], capture_output=True,
                                  text=True, timeout=120, env=env, cwd="/")
            assert proc.returncode == CELLS[command, "unreadable"], (command, proc.stderr)
            _assert_one_error_line(proc, proc.returncode)
    finally:
        shutil.rmtree(tmp)


@pytest.mark.parametrize(("content", "says"), [
    (b"copied from the broker on Tuesday\n", "text beginning 'copied from the broker"),
    (b"", "it is empty"),
    (bytes(range(255, 155, -1)), "begin no record batch (fffefdfc"),
])
def test_a_file_of_no_kafka_name_or_bytes_is_refused_in_one_line(
        tmp_path: Path, content: bytes, says: str) -> None:
    path = tmp_path / "notes.bin"
    path.write_bytes(content)
    proc = run("dump", path)
    assert proc.returncode == 3 and says in proc.stderr, proc.stderr
    _assert_one_error_line(proc, 3)


def test_a_renamed_segment_is_still_read(tmp_path: Path) -> None:
    """Only a file whose bytes begin no batch is refused: a segment copied under another
    name is read as one (S007, a warning)."""
    path = _copy(HEALTHY / "__cluster_metadata-0" / SEGMENT, tmp_path / "copy.bin")
    proc = run("dump", path)
    assert proc.returncode == 0, proc.stderr
    assert "S007" in proc.stdout and "baseOffset: 0" in proc.stdout
