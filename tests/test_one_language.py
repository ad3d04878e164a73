"""One language across commands (DESIGN.md, "One language"): the exit code of every
command, where its findings go, the names and meanings of its JSON keys, its usage line.
Each rule is checked on every command, so a new command or option cannot drift from it."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import click
import pytest
from clirun import run

from kmeta import output_schema as schema
from kmeta.cli import NO_INPUT, _click_app
from kmeta.render.text import shell_command
from tests.conftest import DIVERGENT, FIXTURES, HEALTHY, VERIFY
from tools.docs import samples

COMMANDS = sorted(_click_app().commands)  # type: ignore[attr-defined]
#: The commands that read Kafka input (``completions`` prints a script).
READERS = sorted(set(COMMANDS) - NO_INPUT)

#: The arguments each command needs besides its input path (``{missing}`` stands for a
#: path that does not exist, ``{out}`` for a new directory to write to).
ARGS: dict[str, list[str]] = {
    "dump": ["{missing}"], "info": ["{missing}"], "verify": ["{missing}"],
    "image": ["{missing}"], "history": ["{missing}", "--topic", "orders"],
    "brokers": ["{missing}"], "retention": ["{missing}"], "consumers": ["{missing}"],
    "tiering": ["{missing}"], "compact": ["{missing}"], "startup": ["{missing}"],
    "report": ["{missing}"], "shell": ["{missing}", "-c", "ls"],
    "diff": ["{missing}", str(HEALTHY)],
    "snapshot": ["{missing}", "--out", "{out}"],
    "truncate": ["{missing}", "--to", "1"],
    "repair": ["{missing}", "--out", "{out}"],
    "export": ["{missing}", "--to", "{out}"],
}

#: Integer keys of kmeta's own objects where -1 is a value Kafka itself gives the setting
#: ("off", "never"), not an unknown.
KAFKA_MINUS_ONE = {("retention_summary", "retention_bytes"),
                   ("retention_summary", "retention_ms"),
                   ("tiering_summary", "local_retention_ms")}


def _kinds() -> list[schema.ObjectKind]:
    return list(dict.fromkeys(k for tops in schema.WRITTEN_BY.values() for top in tops
                              for k in schema.nested_kinds(top) if not k.kafka_names))


def test_every_command_is_covered() -> None:
    assert sorted(ARGS) == READERS


# --------------------------------------------------------------------------- exit codes

@pytest.mark.parametrize("command", READERS)
def test_a_missing_path_is_unreadable_input(command: str, tmp_path: Path) -> None:
    missing = tmp_path / "no such dir"
    args = [a.format(missing=missing, out=tmp_path / "out") for a in ARGS[command]]
    proc = run(command, *args, env={})
    assert proc.returncode == 3, (proc.returncode, proc.stderr)
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("kmeta: error[KM001]: ") and str(missing) in line


@pytest.mark.parametrize("command", COMMANDS)
def test_a_wrong_option_is_a_usage_error(command: str, tmp_path: Path) -> None:
    proc = run(command, "--no-such-option", str(HEALTHY), env={})
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("kmeta: error[KM002]: no such option: --no-such-option"), line
    assert line.endswith(f"(kmeta {command} -h says what it takes)"), line


@pytest.mark.parametrize("command", ["dump", "info", "verify"])
def test_warnings_alone_exit_0(command: str) -> None:
    case = FIXTURES / "corrupt" / "zero-tail"  # S002, a warning: Kafka truncates it
    proc = run(command, "--json", case, env={})
    found = [json.loads(line) for line in proc.stdout.splitlines()]
    found = [o for o in found if o["kind"] == "finding"]
    assert "S002" in {o["code"] for o in found}
    assert {o["severity"] for o in found} <= {"warning", "info"}
    assert proc.returncode == 0, proc.stderr


def test_a_divergence_is_an_error_finding() -> None:
    a, b = DIVERGENT / "diverged" / "a", DIVERGENT / "diverged" / "b"
    proc = run("diff", "--json", a, b, env={})
    assert proc.returncode == 1
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[0]["kind"] == "diff" and lines[0]["diverged"]
    (v160,) = [o for o in lines if o.get("code") == "V160"]
    assert v160["severity"] == "error"
    assert v160["offset"] == lines[0]["divergence_offset"]
    lag = run("diff", DIVERGENT / "lag" / "a", DIVERGENT / "lag" / "b", env={})
    assert lag.returncode == 0 and "V160" not in lag.stdout


# ------------------------------------------------------------------------------ findings

#: Commands whose text is a report: their findings close it, on stdout.
REPORTS: dict[str, list[Any]] = {
    "history": ["history", VERIFY / "f003-record-undecodable", "--broker", "1"],
    "image": ["image", VERIFY / "v101-unknown-topic"],
    "retention": ["retention", VERIFY / "v026-no-snapshot-below-start"],
    "brokers": ["brokers", VERIFY / "f003-record-undecodable"],
    "diff": ["diff", DIVERGENT / "diverged" / "a", DIVERGENT / "diverged" / "b"],
    "consumers": ["consumers", FIXTURES / "consumers" / "node1", "--against",
                  FIXTURES / "consumers" / "node2"],
    "tiering": ["tiering", FIXTURES / "tiering" / "broker"],
    "startup": ["startup", FIXTURES / "startup" / "unclean"],
    "report": ["report", FIXTURES / "startup" / "unclean"],
}


@pytest.mark.parametrize("command", sorted(REPORTS))
def test_findings_close_the_report_on_stdout(command: str) -> None:
    proc = run(*REPORTS[command], env={"COLUMNS": "80"})
    assert proc.returncode in (0, 1), proc.stderr
    lines = proc.stdout.splitlines()
    assert re.fullmatch(r"kmeta: [\d,]+ finding\(s\): .*", lines[-1]), lines[-3:]
    first = next(i for i, line in enumerate(lines) if line.startswith("!! "))
    # the findings block is folded (a history's record lines are data, kept whole)
    assert all(len(line) <= 80 for line in lines[first:]), lines[first:]
    assert "!! " not in proc.stderr  # diagnostics only


@pytest.mark.parametrize("command", ["brokers", "retention", "history", "image"])
def test_findings_name_files_under_what_the_user_typed(command: str, tmp_path: Path) -> None:
    """A deep copy: a finding names its file relative to the path given, so the lines
    still fold to the width (a path is never broken)."""
    import shutil

    source = {"brokers": FIXTURES / "lifecycle" / "log-start",
              "retention": VERIFY / "v026-no-snapshot-below-start",
              "history": VERIFY / "f003-record-undecodable",
              "image": VERIFY / "v101-unknown-topic"}[command]
    deep = tmp_path / ("a-long-folder-name-" * 4) / ("and-another-one-" * 3) / source.name
    shutil.copytree(source, deep)
    extra = ["--broker", "1"] if command == "history" else []
    proc = run(command, deep, *extra, env={"COLUMNS": "80"})
    lines = proc.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if line.lstrip().startswith("!! "))
    assert str(tmp_path) not in "\n".join(lines[first:])
    assert all(len(line) <= 80 for line in lines[first:]), lines[first:]


def test_findings_beside_data_go_to_stderr() -> None:
    """``image --digest`` is read whole by scripts: the digest alone on stdout."""
    proc = run("image", "--digest", VERIFY / "v101-unknown-topic", env={})
    assert re.fullmatch(r"[0-9a-f]{32}\n", proc.stdout)
    assert "V101" in proc.stderr and proc.returncode == 1


@pytest.mark.parametrize("command", sorted(set(schema.WRITTEN_BY) - {"export"}))
def test_json_findings_are_finding_lines(command: str) -> None:
    assert schema.FINDING in schema.WRITTEN_BY[command]


def test_no_object_nests_findings() -> None:
    assert not [k.name for k in _kinds() for key in k.keys if key.name == "findings"]


# ------------------------------------------------------------------------------ JSON keys

def test_kmeta_keys_are_snake_case() -> None:
    bad = [(k.name, key.name) for k in _kinds() for key in k.keys
           if not re.fullmatch(r"[a-z][a-z0-9_]*", key.name)]
    assert bad == []


def test_a_key_has_one_type_everywhere() -> None:
    types: dict[str, set[str]] = {}
    for kind in _kinds():
        for key in kind.keys:
            t = key.type
            types.setdefault(key.name, set()).add(
                t.name if isinstance(t, schema.ObjectKind) else t.ddl)
    assert {n: t for n, t in types.items() if len(t) > 1} == {}


def test_offsets_and_times_are_named_alike() -> None:
    """An offset ends in offset (or is one), a duration in _ms, a time in timestamp."""
    names = {key.name for kind in _kinds() for key in kind.keys}
    assert not names & {"log_start", "log_end", "now", "partition_id", "delete_horizon",
                        "leader_epochs"}, "an old spelling came back"
    for name in names:
        if name.endswith("_time") or name.endswith("_at"):
            pytest.fail(f"{name}: a time is *_timestamp (ms since the epoch)")


def test_unknown_is_null_not_minus_one() -> None:
    found = []
    for command, top in samples.written():
        for kind, obj in schema.objects(command, top):
            if kind.kafka_names or kind.name in ("batch", "record", "header", "file"):
                continue  # Kafka's own fields keep Kafka's values
            for key, value in obj.items():
                if value == -1 and not isinstance(value, bool) and \
                        (kind.name, key) not in KAFKA_MINUS_ONE:
                    found.append((command, kind.name, key))
    assert found == []


# ------------------------------------------------------------------------- command lines

@pytest.mark.parametrize("command", COMMANDS)
def test_usage_shows_where_several_paths_work(command: str) -> None:
    cmd = _click_app().commands[command]  # type: ignore[attr-defined]
    ctx = click.Context(cmd, info_name=command)
    usage = cmd.collect_usage_pieces(ctx)
    for param in cmd.params:
        if isinstance(param, click.Argument) and param.nargs == -1:
            piece = param.make_metavar(ctx) if _takes_ctx(param) else param.make_metavar()
            assert piece.endswith("...") or "MORE..." in piece, (command, usage)


@pytest.mark.parametrize("command", COMMANDS)
def test_an_argument_help_does_not_repeat_its_name(command: str) -> None:
    # -h prints the metavar beside its help: "LOCAL PEER [MORE...]  LOCAL PEER [MORE...]:"
    cmd = _click_app().commands[command]  # type: ignore[attr-defined]
    for param in cmd.params:
        if isinstance(param, click.Argument):
            metavar = param.metavar or param.name.upper()
            assert not (getattr(param, "help", None) or "").startswith(metavar), \
                (command, param.help)


def test_the_man_page_adds_no_dots_to_a_metavar_that_has_them() -> None:
    man = (Path(__file__).resolve().parents[1] / "man" / "kmeta.1").read_text()
    assert "\\fILOCAL PEER [MORE...]\\fR..." not in man
    assert "\\fILOCAL PEER [MORE...]\\fR" in man


def _takes_ctx(param: click.Parameter) -> bool:
    import inspect

    return "ctx" in inspect.signature(param.make_metavar).parameters


@pytest.mark.parametrize("path", ["/data/plain", "/data/with space", "/d/it's", "/d/$HOME"])
def test_a_suggested_command_pastes_as_it_stands(path: str) -> None:
    line = shell_command("verify", path)
    assert shlex.split(line) == ["kmeta", "verify", path]


# ------------------------------------------------------------------------------ ranges

#: A range of offsets: its first and last offset, both included, written ``A..B`` by
#: every command (a hyphen reads as a minus, or as a snapshot's ``offset-epoch`` id).
HYPHEN_RANGE = re.compile(r"(?:offsets|log|local log) \d[\d,]*[-–]\d|^ *\d+-\d+: epochs")


def test_offset_ranges_are_first_dot_dot_last(real_data: Path) -> None:
    cases = {
        "retention": (["retention", real_data / "ldi-poc" / "__cluster_metadata-0"],
                      "log 0..4928 in 1 segment(s)"),
        "startup": (["startup", "--partitions", real_data / "kraft32-three" / "data" / "kafka1"],
                    "_schemas-0: 288 B in 1 segment, offsets 0..2"),
        "compact": (["compact", real_data / "cp51-connect-cleaned" / "kafka" / "data"
                     / "docker-connect-configs-0"], "docker-connect-configs-0: offsets 0..106,"),
        "tiering": (["tiering", FIXTURES / "tiering" / "broker"], "offsets 100..149 are in no"),
        "brokers": (["brokers", real_data / "ldi-poc"], "offsets 0..4928 ("),
        "report": (["report", real_data / "ldi-poc"], "metadata log offsets 0..4928 ("),
    }
    for command, (args, said) in cases.items():
        proc = run(*args, env={})
        assert proc.returncode in (0, 1), (command, proc.stderr)
        assert said in proc.stdout, (command, proc.stdout)
        hyphens = [line for line in proc.stdout.splitlines() if HYPHEN_RANGE.search(line)]
        assert not hyphens, (command, hyphens)


def test_counts_have_separators_offsets_do_not(real_data: Path) -> None:
    # a count or a size is read: 4,928; an offset is copied (to --to, to a file name) and
    # is said as verify, dump and the file names say it: 4928
    ldi = real_data / "ldi-poc"
    image = run("image", ldi, env={}).stdout.splitlines()[0]
    assert "(from offset 0, 4,928 log record(s) applied, log end offset 4929)" in image
    info = run("info", ldi, env={}).stdout
    assert "log start offset: 0  log end offset: 4929" in info
    (row,) = [line for line in info.splitlines() if line.startswith("00000000000000000000.log")]
    assert "4928" in row and "4,814" in row and "4,929" in row, row
    assert "offsets 0..4928" in run("verify", ldi / "__cluster_metadata-0", env={}).stdout
