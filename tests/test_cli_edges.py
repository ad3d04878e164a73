"""The command line at its edges: what a person at 3 a.m. reads, and what a script parses.

Wrong input gets one clear line and a documented exit code; text output holds no Python
values; JSON keys are snake_case and the output is valid UTF-8; filters that match
nothing say so.  Subprocess runs, as a user runs kmeta.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kmeta.formats.batch import build_batch
from kmeta.formats.payload import encode_control, encode_metadata

KMETA = [sys.executable, "-m", "kmeta"]
META = "__cluster_metadata-0"
SEGMENT = "00000000000000000000.log"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"


def run(*args: Any, stdout: Any = subprocess.PIPE, **env: str
        ) -> subprocess.CompletedProcess[bytes]:
    full = {k: v for k, v in os.environ.items()
            if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "_KMETA_COMPLETE")}
    full.update(env)
    return subprocess.run([*KMETA, *map(os.fsencode, map(str, args))], stdout=stdout,
                          stderr=subprocess.PIPE, env=full, timeout=60)


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
    assert b"No such option" not in proc.stderr


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
