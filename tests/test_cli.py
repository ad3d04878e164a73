"""End-to-end tests of the ``kmeta`` command line.

Most tests run the command line the way a user or a script runs it, and look at exit
codes, what goes to stdout and stderr, no tracebacks, no hangs: in-process through
``tests/clirun.py``, which answers as a finished subprocess would, or as a real
``python -m kmeta`` subprocess where the process itself is under test (imports, pipes,
terminals, another user).  A few call ``kmeta.cli.main([...])`` directly.  Inputs are
small files built here with ``build_batch`` and the real broker files under
``KMETA_REAL_DATA`` (the ``real_data`` fixture); the ldi-poc metadata segment has 4,814
batches and 4,929 records, and its first batch is a LeaderChange control batch at
offset 0.
"""

from __future__ import annotations

import base64
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import clirun
import pytest

from kmeta.cli import main
from kmeta.errors import ExitCode
from kmeta.formats.batch import build_batch
from kmeta.formats.payload import encode_control, encode_metadata

KMETA = [sys.executable, "-m", "kmeta"]
TIMEOUT = 20
ANSI = re.compile(r"\x1b[\[\]()#;?0-9]")
FINDING_OR_ERROR = re.compile(r"\b[FSV]\d{3}\b|kmeta: error")

LDI_BATCHES = 4814
LDI_RECORDS = 4929
LDI_CLUSTER_ID = "q1w2e3r4t5y6u7i8o9p0"
LDI_NODE_ID = 1
META = "__cluster_metadata-0"
SEGMENT = "00000000000000000000.log"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "FORCE_COLOR", "_KMETA_COMPLETE")}
    env.update(extra)
    return env


def run(*args: Any, env: dict[str, str] | None = None,
        timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    return clirun.run(*args, env=env or _env(), timeout=timeout)


def assert_no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def of_kind(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


# -------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="session")
def ldi(real_data: Path) -> Path:
    path = real_data / "ldi-poc"
    if not path.is_dir():
        pytest.skip(f"{path} is absent")
    return path


@pytest.fixture(scope="session")
def ldi_segment(ldi: Path) -> Path:
    return ldi / META / SEGMENT


@pytest.fixture(scope="session")
def ldi_data_segment(ldi: Path) -> Path:
    return ldi / "TestTopicPatient-0" / SEGMENT


@pytest.fixture(scope="session")
def ldi_dump(ldi_segment: Path) -> list[dict[str, Any]]:
    """``dump --json`` of the ldi-poc metadata segment, without options."""
    proc = run("dump", "--json", ldi_segment, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json_lines(proc.stdout)


def _topic_value(name: str = "t") -> bytes:
    return encode_metadata("TOPIC_RECORD", 0, {"name": name,
                                               "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"})


def metadata_segment(tmp_path: Path, data: bytes) -> Path:
    """Write ``data`` as the first segment of a __cluster_metadata-0 partition dir."""
    part = tmp_path / META
    part.mkdir(parents=True, exist_ok=True)
    path = part / SEGMENT
    path.write_bytes(data)
    return path


@pytest.fixture
def clean_segment(tmp_path: Path) -> Path:
    return metadata_segment(tmp_path, build_batch(0, [(None, _topic_value())])
                            + build_batch(1, [(None, _topic_value("u"))]))


@pytest.fixture
def bad_crc_segment(tmp_path: Path) -> Path:
    return metadata_segment(tmp_path, build_batch(0, [(None, _topic_value())])
                            + build_batch(1, [(None, _topic_value("u"))], crc=1234))


# ------------------------------------------------------------------------------ help

def test_help() -> None:
    proc = run("--help")
    assert proc.returncode == 0, proc.stderr
    assert "Usage:" in proc.stdout
    for command in ("dump", "info"):
        assert command in proc.stdout
    assert proc.stderr == ""


def test_dump_help() -> None:
    proc = run("dump", "--help")
    assert proc.returncode == 0, proc.stderr
    for option in ("--json", "--records", "--decoder", "--from-offset", "--to-offset",
                   "--type", "--batches-only", "--skip-control", "--max-bytes", "--hex",
                   "--show-secrets"):
        assert option in proc.stdout, option


def test_every_command_has_help_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    from tools.docs.introspect import all_commands, describe

    for command in all_commands(describe()):
        with pytest.raises(SystemExit) as exit_info:
            main([*command.path[1:], "--help"])
        assert exit_info.value.code in (0, None)
        out = capsys.readouterr().out
        assert "Usage:" in out and command.path[-1] in out


def test_no_arguments_shows_usage() -> None:
    proc = run()
    assert_no_traceback(proc)
    assert proc.returncode in (ExitCode.OK, ExitCode.USAGE)
    assert "Usage:" in proc.stdout + proc.stderr


def test_version() -> None:
    from kmeta import __version__

    proc = run("--version")
    assert proc.returncode == 0
    from kmeta.formats.compiled import IMPLEMENTATION

    assert proc.stdout.strip() == f"kmeta {__version__} (scan core: {IMPLEMENTATION})"


HEAVY = ("pyspark", "pyarrow", "kmeta.ops", "kmeta.render", "kmeta.spark")
_IMPORT_PROBE = """
import json, sys
from kmeta.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = sorted(m for m in sys.modules
               if any(m == h or m.startswith(h + ".") for h in {heavy!r}))
print("\\nIMPORTED=" + json.dumps(heavy))
"""


@pytest.mark.parametrize("args", [["--help"], ["dump", "--help"], ["info", "--help"]])
def test_help_imports_no_heavy_modules(args: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-c", _IMPORT_PROBE.format(heavy=HEAVY), *args],
                          capture_output=True, text=True, timeout=TIMEOUT, env=_env())
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.strip().splitlines()[-1]
    assert line.startswith("IMPORTED=")
    assert json.loads(line.removeprefix("IMPORTED=")) == []


# ------------------------------------------------------------------------ exit codes

def test_exit_0_on_a_clean_real_file(ldi_segment: Path) -> None:
    proc = run("dump", ldi_segment, timeout=120)
    assert_no_traceback(proc)
    assert proc.returncode == ExitCode.OK, proc.stderr


def test_exit_0_on_a_clean_built_file(clean_segment: Path) -> None:
    proc = run("dump", clean_segment)
    assert proc.returncode == ExitCode.OK, proc.stderr
    assert proc.stderr == ""


def test_exit_1_on_a_bad_crc(bad_crc_segment: Path) -> None:
    proc = run("dump", bad_crc_segment)
    assert_no_traceback(proc)
    assert proc.returncode == ExitCode.FINDINGS
    assert "F001" in proc.stdout


@pytest.mark.parametrize("args", [
    ["dump", "--no-such-option", "{seg}"],
    ["no-such-command", "{seg}"],
    ["dump", "--from-offset", "10", "--to-offset", "5", "{seg}"],
    ["dump", "--max-bytes", "0", "{seg}"],
    ["dump", "--decoder", "nonsense", "{seg}"],
    ["dump", "--from-offset", "ten", "{seg}"],
    ["dump"],
], ids=["unknown-option", "unknown-command", "from-after-to", "max-bytes-0", "bad-decoder",
        "non-numeric-offset", "missing-path"])
def test_exit_2_on_usage_errors(args: list[str], clean_segment: Path) -> None:
    proc = run(*[a.format(seg=clean_segment) for a in args])
    assert_no_traceback(proc)
    assert proc.returncode == ExitCode.USAGE, proc.stderr
    assert proc.stdout == ""
    assert 0 < len(proc.stderr.strip().splitlines()) <= 5


def test_exit_3_on_a_nonexistent_path(tmp_path: Path) -> None:
    proc = run("dump", tmp_path / "nope")
    assert_no_traceback(proc)
    assert proc.returncode == ExitCode.UNREADABLE
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "nope" in proc.stderr


def test_exit_3_on_a_directory_without_kafka_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not kafka\n")
    (tmp_path / "sub").mkdir()
    proc = run("dump", tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == ExitCode.UNREADABLE
    assert len(proc.stderr.strip().splitlines()) == 1


def test_exit_3_on_an_unreadable_file(tmp_path: Path) -> None:
    path = metadata_segment(tmp_path, build_batch(0, [(None, _topic_value())]))
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("running as root: a chmod 000 file is still readable")
        proc = run("dump", path)
    finally:
        path.chmod(0o644)
    assert_no_traceback(proc)
    assert proc.returncode == ExitCode.UNREADABLE, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_exit_3_on_an_unreadable_file_as_nobody(nobody_python: list[str]) -> None:
    """The same as root, by running kmeta as user nobody."""
    tmp = Path(tempfile.mkdtemp(prefix="kmeta-cli-"))
    try:
        tmp.chmod(0o755)
        path = metadata_segment(tmp, build_batch(0, [(None, _topic_value())]))
        path.parent.chmod(0o755)
        path.chmod(0)
        proc = subprocess.run([*nobody_python, "-m", "kmeta", "dump", str(path)],
                              capture_output=True, text=True, timeout=TIMEOUT, env=_env())
    finally:
        shutil.rmtree(tmp)
    assert_no_traceback(proc)
    assert proc.returncode == ExitCode.UNREADABLE, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------------- bad input matrix

def _bad_inputs() -> dict[str, bytes]:
    good = build_batch(0, [(None, _topic_value())])
    absurd = bytearray(1024)
    struct.pack_into(">qi", absurd, 0, 0, 2_000_000_000)  # a 2 GB batch in 1 KB
    absurd[16] = 2
    negative = bytearray(good + build_batch(1, [(None, _topic_value("u"))]))
    struct.pack_into(">i", negative, 8, -5)
    return {
        "empty": b"",
        "truncated": good[:-7],
        "header-only": good[:40],
        "random": random.Random(20240611).randbytes(4096),
        "absurd-length": bytes(absurd),
        "negative-length": bytes(negative),
        "zeros": bytes(4096),
    }


BAD_INPUTS = _bad_inputs()


@pytest.mark.parametrize("name", list(BAD_INPUTS))
@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
def test_bad_input_gives_findings_not_tracebacks(name: str, json_out: bool,
                                                 tmp_path: Path) -> None:
    path = metadata_segment(tmp_path, BAD_INPUTS[name])
    args = ["dump", "--json", path] if json_out else ["dump", "--records", path]
    proc = run(*args)  # subprocess.TimeoutExpired fails the test: a hang
    assert_no_traceback(proc)
    assert proc.returncode in (ExitCode.OK, ExitCode.FINDINGS), proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 2, proc.stderr
    assert FINDING_OR_ERROR.search(proc.stdout + proc.stderr), "no finding reported"
    if json_out:
        objs = json_lines(proc.stdout)
        assert of_kind(objs, "finding")
    if name == "empty":
        assert "S006" in proc.stdout


def test_malformed_small_file_is_a_format_finding(tmp_path: Path) -> None:
    """A readable file with bad content is F010 (exit 1), not S008 "cannot be read"."""
    part = tmp_path / "orders-0"
    part.mkdir()
    (part / "leader-epoch-checkpoint").write_text("garbage\nnot\nnumbers\n")
    proc = run("dump", "--json", part)
    assert_no_traceback(proc)
    codes = [f["code"] for f in of_kind(json_lines(proc.stdout), "finding")]
    assert codes == ["F010"], proc.stdout
    assert proc.returncode == ExitCode.FINDINGS


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_bad_input_info(name: str, tmp_path: Path) -> None:
    metadata_segment(tmp_path, BAD_INPUTS[name])
    proc = run("info", tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode in (ExitCode.OK, ExitCode.FINDINGS), proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 2, proc.stderr


# ---------------------------------------------------------------------------- pipes

@pytest.mark.parametrize("fmt", [["--json"], ["--records"]], ids=["json", "text"])
def test_pipe_into_head_is_quiet(fmt: list[str], ldi: Path) -> None:
    script = '"$0" -m kmeta dump "$@" | head -1; echo "status=${PIPESTATUS[0]}"'
    proc = subprocess.run(["bash", "-c", script, sys.executable, *fmt, str(ldi)],
                          capture_output=True, text=True, timeout=60, env=_env())
    lines = proc.stdout.splitlines()
    assert len(lines) == 2, proc.stdout[:500]
    if fmt == ["--json"]:
        assert json.loads(lines[0])["kind"] == "file"
    assert "Traceback" not in proc.stderr
    assert "BrokenPipe" not in proc.stderr and "Broken pipe" not in proc.stderr
    assert "Exception ignored" not in proc.stderr
    assert proc.stderr == "", proc.stderr


def test_pipe_into_head_exits_0(ldi: Path) -> None:
    """A reader that stops early is not a finding: kmeta ends with status 0."""
    script = '"$0" -m kmeta dump --json "$@" | head -1 >/dev/null; echo "${PIPESTATUS[0]}"'
    proc = subprocess.run(["bash", "-c", script, sys.executable, str(ldi)],
                          capture_output=True, text=True, timeout=60, env=_env())
    assert proc.stdout.strip() == "0", proc.stderr


# ------------------------------------------------------------------ streams and colour

def test_data_on_stdout_summary_on_stderr(bad_crc_segment: Path) -> None:
    proc = run("dump", "--json", bad_crc_segment)
    assert proc.returncode == ExitCode.FINDINGS
    objs = json_lines(proc.stdout)  # nothing but JSON on stdout
    assert [o["code"] for o in of_kind(objs, "finding")] == ["F001"]
    assert "finding" in proc.stderr and "1 error" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "kmeta:" not in proc.stdout


def test_text_data_on_stdout_summary_on_stderr(bad_crc_segment: Path) -> None:
    proc = run("dump", bad_crc_segment)
    assert proc.returncode == ExitCode.FINDINGS
    assert "baseOffset: 0" in proc.stdout and "baseOffset: 1" in proc.stdout
    assert "!! F001 error" in proc.stdout  # findings inline, next to their batch
    assert "baseOffset" not in proc.stderr and "F001" not in proc.stderr
    summary = proc.stderr.strip().splitlines()
    assert len(summary) == 1 and summary[0].startswith("kmeta: 1 finding(s)")
    assert "finding(s)" not in proc.stdout


def test_no_color_through_a_pipe(ldi: Path) -> None:
    proc = run("info", ldi, env=_env(NO_COLOR="1"))
    assert proc.returncode == 0, proc.stderr
    assert "data dir" in proc.stdout
    assert not ANSI.search(proc.stdout) and not ANSI.search(proc.stderr)


def test_no_color_on_a_terminal(ldi: Path) -> None:
    """On a terminal too, NO_COLOR=1 means no escape codes at all."""
    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    try:
        env = _env(NO_COLOR="1", TERM="xterm-256color", COLUMNS="160")
        proc = subprocess.Popen([*KMETA, "info", str(ldi)], stdout=slave,
                                stderr=subprocess.PIPE, env=env)
        os.close(slave)
        out = b""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        proc.wait(timeout=TIMEOUT)
        err = proc.stderr.read() if proc.stderr else b""
    finally:
        os.close(master)
    assert proc.returncode == 0, err
    text = out.decode("utf-8", "replace")
    assert "data dir" in text
    assert not ANSI.search(text), repr(ANSI.search(text).string[:200])


# ------------------------------------------------------- dump options on real data

def test_ldi_segment_counts(ldi_dump: list[dict[str, Any]]) -> None:
    batches = of_kind(ldi_dump, "batch")
    records = of_kind(ldi_dump, "record")
    assert len(batches) == LDI_BATCHES
    assert len(records) == LDI_RECORDS
    assert of_kind(ldi_dump, "finding") == []
    first = batches[0]
    assert first["base_offset"] == 0 and first["is_control"] is True
    assert records[0]["type"] == "LEADER_CHANGE" and records[0]["offset"] == 0
    assert [r["offset"] for r in records] == list(range(LDI_RECORDS))


def test_type_filter(ldi_segment: Path, ldi_dump: list[dict[str, Any]]) -> None:
    proc = run("dump", "--json", "--type", "PARTITION_RECORD", ldi_segment)
    assert proc.returncode == 0, proc.stderr
    objs = json_lines(proc.stdout)
    records = of_kind(objs, "record")
    expected = [r for r in of_kind(ldi_dump, "record") if r["type"] == "PARTITION_RECORD"]
    assert records == expected and len(records) == 54
    # Records only: no file or batch objects, whose missing data would print as null
    # in the README's `jq .data`.
    assert objs == records


def test_type_filter_repeatable_and_short(ldi_segment: Path) -> None:
    proc = run("dump", "--json", "-t", "LEADER_CHANGE", "-t", "TopicRecord", ldi_segment)
    assert proc.returncode == 0, proc.stderr
    types = {r["type"] for r in of_kind(json_lines(proc.stdout), "record")}
    assert types == {"LEADER_CHANGE", "TOPIC_RECORD"}


def test_offset_range(ldi_segment: Path) -> None:
    proc = run("dump", "--json", "--from-offset", 100, "--to-offset", 200, ldi_segment)
    assert proc.returncode == 0, proc.stderr
    objs = json_lines(proc.stdout)
    records = of_kind(objs, "record")
    assert [r["offset"] for r in records] == list(range(100, 201))
    for b in of_kind(objs, "batch"):
        assert b["last_offset"] >= 100 and b["base_offset"] <= 200


def test_from_offset_equal_to_offset(ldi_segment: Path) -> None:
    proc = run("dump", "--json", "--from-offset", 7, "--to-offset", 7, ldi_segment)
    assert proc.returncode == 0, proc.stderr
    assert [r["offset"] for r in of_kind(json_lines(proc.stdout), "record")] == [7]


def test_batches_only(ldi_segment: Path, ldi_dump: list[dict[str, Any]]) -> None:
    proc = run("dump", "--json", "--batches-only", ldi_segment)
    assert proc.returncode == 0, proc.stderr
    objs = json_lines(proc.stdout)
    assert of_kind(objs, "record") == []
    assert of_kind(objs, "batch") == of_kind(ldi_dump, "batch")


def test_skip_control(ldi_segment: Path, ldi_dump: list[dict[str, Any]]) -> None:
    proc = run("dump", "--json", "--skip-control", ldi_segment)
    assert proc.returncode == 0, proc.stderr
    objs = json_lines(proc.stdout)
    batches = of_kind(objs, "batch")
    assert len(batches) == LDI_BATCHES - 1
    assert not any(b["is_control"] for b in batches)
    records = of_kind(objs, "record")
    assert len(records) == LDI_RECORDS - 1
    assert "LEADER_CHANGE" not in {r["type"] for r in records}


def test_max_bytes(ldi_segment: Path) -> None:
    proc = run("dump", "--json", "--max-bytes", 1000, ldi_segment)
    assert proc.returncode == 0, proc.stderr
    objs = json_lines(proc.stdout)
    batches = of_kind(objs, "batch")
    assert batches and len(batches) < LDI_BATCHES
    assert all(b["position"] + b["size"] <= 1000 for b in batches)
    assert of_kind(objs, "finding") == []  # stopping early is not damage
    # The batch after the last one shown would have crossed the limit.
    full = json_lines(run("dump", "--json", "--batches-only", ldi_segment).stdout)
    nxt = of_kind(full, "batch")[len(batches)]
    assert nxt["position"] + nxt["size"] > 1000


def test_hex(ldi_segment: Path) -> None:
    proc = run("dump", "--json", "--hex", "--to-offset", 10, ldi_segment)
    assert proc.returncode == 0, proc.stderr
    objs = json_lines(proc.stdout)
    data = ldi_segment.read_bytes()
    batches = of_kind(objs, "batch")
    assert batches
    for b in batches:
        raw = bytes.fromhex(b["hex"])
        assert raw == data[b["position"]:b["position"] + b["size"]]
    for r in of_kind(objs, "record"):
        assert "key_hex" in r and "value_hex" in r
        if r["value_hex"] is not None:
            assert bytes.fromhex(r["value_hex"]) in data
    text = run("dump", "--records", "--hex", "--to-offset", 0, ldi_segment)
    first = ldi_segment.read_bytes()[:batches[0]["size"]].hex()
    assert first in text.stdout


def test_records_text(ldi_segment: Path) -> None:
    without = run("dump", "--to-offset", 4, ldi_segment).stdout
    with_records = run("dump", "-r", "--to-offset", 4, ldi_segment).stdout
    assert "| offset: 0" not in without
    assert "| offset: 0" in with_records and "LeaderChange" in with_records
    assert "| offset: 4" in with_records and "| offset: 5" not in with_records


def _values(proc: subprocess.CompletedProcess[str]) -> list[Any]:
    assert proc.returncode == 0, proc.stderr
    return [r["data"]["value"] for r in of_kind(json_lines(proc.stdout), "record")]


def test_decoders(ldi_data_segment: Path) -> None:
    default = json_lines(run("dump", "--json", ldi_data_segment).stdout)
    assert of_kind(default, "file")[0]["decoder"] == "raw"
    raw = _values(run("dump", "--json", "--decoder", "raw", ldi_data_segment))
    hexed = _values(run("dump", "--json", "--decoder", "hex", ldi_data_segment))
    utf8 = _values(run("dump", "--json", "--decoder", "utf8", ldi_data_segment))
    shown = json_lines(run("dump", "--json", "--hex", ldi_data_segment).stdout)
    truth = [bytes.fromhex(r["value_hex"]) for r in of_kind(shown, "record")]
    assert len(truth) == 3
    assert [base64.b64decode(v) for v in raw] == truth
    assert [bytes.fromhex(v) for v in hexed] == truth
    assert utf8 == [t.decode("utf-8") for t in truth]
    assert [r["data"]["value"] for r in of_kind(default, "record")] == raw
    assert {r["type"] for r in of_kind(shown, "record")} == {"RAW"}


def test_decoder_raw_on_metadata(ldi_segment: Path) -> None:
    proc = run("dump", "--json", "--decoder", "raw", "--to-offset", 4, ldi_segment)
    records = of_kind(json_lines(proc.stdout), "record")
    # Control records are still decoded as such; the rest are opaque.
    assert [r["type"] for r in records] == ["LEADER_CHANGE", "RAW", "RAW", "RAW", "RAW"]


# ----------------------------------------------------------------------------- secrets

JAAS_NAME = "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config"
JAAS_VALUE = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
              'username="admin" password="hunter2-secret";')
SALT = b"pepper-salt-secret"
STORED_KEY = b"stored-key-secret-bytes"
SERVER_KEY = b"server-key-secret-bytes"


@pytest.fixture
def secrets_dir(tmp_path: Path) -> Path:
    records = [
        encode_metadata("USER_SCRAM_CREDENTIAL_RECORD", 0, {
            "name": "alice", "mechanism": 1, "salt": SALT, "storedKey": STORED_KEY,
            "serverKey": SERVER_KEY, "iterations": 4096}),
        encode_metadata("CONFIG_RECORD", 0, {"resourceType": 4, "resourceName": "0",
                                             "name": JAAS_NAME, "value": JAAS_VALUE}),
        encode_metadata("CONFIG_RECORD", 0, {"resourceType": 2, "resourceName": "t",
                                             "name": "retention.ms", "value": "86400000"}),
    ]
    key, value = encode_control("LEADER_CHANGE", {"version": 0, "leaderId": 1,
                                                  "voters": [{"voterId": 1}],
                                                  "grantingVoters": [{"voterId": 1}]})
    metadata_segment(tmp_path, build_batch(0, [(key, value)], control=True)
                     + build_batch(1, [(None, v) for v in records]))
    return tmp_path


def _secret_texts() -> list[str]:
    out = ["hunter2-secret"]
    for blob in (SALT, STORED_KEY, SERVER_KEY):
        out += [base64.b64encode(blob).decode(), blob.decode()]
    return out


def test_secrets_redacted_by_default(secrets_dir: Path) -> None:
    proc = run("dump", "--json", secrets_dir)
    assert proc.returncode == 0, proc.stderr
    records = {(r["type"], r["data"].get("name")): r["data"]
               for r in of_kind(json_lines(proc.stdout), "record")}
    scram = records[("USER_SCRAM_CREDENTIAL_RECORD", "alice")]
    assert scram["salt"] == scram["storedKey"] == scram["serverKey"] == "[redacted]"
    assert scram["iterations"] == 4096 and scram["mechanism"] == 1
    assert records[("CONFIG_RECORD", JAAS_NAME)]["value"] == "[redacted]"
    assert records[("CONFIG_RECORD", "retention.ms")]["value"] == "86400000"
    text = run("dump", "--records", secrets_dir)
    for out in (proc.stdout, text.stdout):
        for secret in _secret_texts():
            assert secret not in out, secret
    assert "[redacted]" in text.stdout


def test_show_secrets(secrets_dir: Path) -> None:
    proc = run("dump", "--json", "--show-secrets", secrets_dir)
    assert proc.returncode == 0, proc.stderr
    records = {(r["type"], r["data"].get("name")): r["data"]
               for r in of_kind(json_lines(proc.stdout), "record")}
    scram = records[("USER_SCRAM_CREDENTIAL_RECORD", "alice")]
    assert base64.b64decode(scram["salt"]) == SALT
    assert base64.b64decode(scram["storedKey"]) == STORED_KEY
    assert base64.b64decode(scram["serverKey"]) == SERVER_KEY
    assert records[("CONFIG_RECORD", JAAS_NAME)]["value"] == JAAS_VALUE
    assert "[redacted]" not in proc.stdout
    text = run("dump", "-r", "--show-secrets", secrets_dir)
    assert "hunter2-secret" in text.stdout and "[redacted]" not in text.stdout


# --------------------------------------------------------------------------------- info

def _find_key(obj: Any, key: str) -> list[Any]:
    found = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == key:
                found.append(v)
            found += _find_key(v, key)
    elif isinstance(obj, list):
        for v in obj:
            found += _find_key(v, key)
    return found


def test_info_json_on_real_data(ldi: Path) -> None:
    proc = run("info", "--json", ldi, timeout=120)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    report = [json.loads(line) for line in proc.stdout.strip().splitlines()]
    kinds = [o["kind"] for o in report]
    # JSON Lines: the data dir, then each of its partitions, then the summary last
    assert kinds[0] == "data_dir" and kinds[-1] == "info"
    assert kinds.count("partition_dir") == report[0]["partitions"] == report[-1]["partitions"]
    assert LDI_CLUSTER_ID in _find_key(report, "cluster_id")
    assert LDI_NODE_ID in _find_key(report, "node_id")


def test_info_text_on_real_data(ldi: Path) -> None:
    proc = run("info", ldi, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert LDI_CLUSTER_ID in proc.stdout
    assert "4,929" in proc.stdout  # log end offset of the metadata log


# ----------------------------------------------------------------------- in-process

def test_in_process_dump(capsys: pytest.CaptureFixture[str], ldi_segment: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["dump", "--json", "--to-offset", "0", str(ldi_segment)])
    assert exit_info.value.code == 0
    captured = capsys.readouterr()
    objs = json_lines(captured.out)
    assert [o["kind"] for o in objs] == ["file", "batch", "record"]
    assert objs[2]["type"] == "LEADER_CHANGE"
    assert captured.err == ""


def test_in_process_errors_are_one_line(capsys: pytest.CaptureFixture[str],
                                        tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["dump", str(tmp_path / "missing")])
    assert exit_info.value.code == ExitCode.UNREADABLE
    err = capsys.readouterr().err
    assert err.startswith("kmeta: error[") and len(err.strip().splitlines()) == 1


def test_in_process_usage_error(capsys: pytest.CaptureFixture[str],
                                clean_segment: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["dump", "--no-such-option", str(clean_segment)])
    assert exit_info.value.code == ExitCode.USAGE
    assert "--no-such-option" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["verify", "fixtures/data/healthy"],
                                  ["diff", "fixtures/data/divergent/lag/a",
                                   "fixtures/data/divergent/lag/b"],
                                  ["dump", "--json", "fixtures/data/healthy/meta.properties"],
                                  ["export", "--help"]])
def test_commands_other_than_export_never_import_pyspark(args: list[str]) -> None:
    probe = _IMPORT_PROBE.format(heavy=("pyspark", "pyarrow", "kmeta.spark"))
    proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True,
                          text=True, timeout=TIMEOUT, env=_env(),
                          cwd=Path(__file__).resolve().parents[1])
    line = proc.stdout.strip().splitlines()[-1]
    assert json.loads(line.removeprefix("IMPORTED=")) == [], args
