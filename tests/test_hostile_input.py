"""Hostile input never crashes, hangs or blows up memory (the "Trust at the edges" issue).

Each class a mutation fuzzer found keeps a minimal repro in ``tests/fuzz/corpus/<class>/``,
made here by a builder from the small healthy verify fixture (written by kmeta's own
writer, see fixtures/README.md) and checked in; ``test_corpus_is_current`` fails when a
builder and its checked-in copy drift apart (rebuild with ``KMETA_REBUILD_CORPUS=1``).
Special files (FIFOs, links to devices) cannot live in git: their tests add them to a
copy of the corpus at run time.

Every test runs the real command as a subprocess, as an SRE does, with a timeout (a hang
is a failure), and checks the exit code, one clear line and no traceback.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fuzz" / "corpus"
HEALTHY = ROOT / "fixtures" / "data" / "verify" / "healthy" / "__cluster_metadata-0"
META = "__cluster_metadata-0"
SEGMENT = "00000000000000000000.log"
INDEX = "00000000000000000000.index"
TIMEOUT = 30


def run(*args: object, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["NO_COLOR"] = "1"
    return subprocess.run([sys.executable, "-m", "kmeta", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=timeout)


def assert_clear(proc: subprocess.CompletedProcess[str], code: int) -> None:
    """Exit ``code``, no traceback, no internal error."""
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out
    assert "internal error" not in out, out
    assert proc.returncode == code, (proc.returncode, out[-2000:])


# ------------------------------------------------------------------ corpus builders


def _healthy(dest: Path) -> Path:
    part = dest / META
    shutil.copytree(HEALTHY, part)
    return part


def build_index_negative_position(dest: Path) -> None:
    """An .index whose one entry names offset 6 at byte -5 (os.pread refused it)."""
    part = _healthy(dest)
    (part / INDEX).write_bytes(struct.pack(">ii", 6, -5))


BUILDERS: dict[str, Callable[[Path], None]] = {
    "index-negative-position": build_index_negative_position,
}


def corpus_copy(name: str, tmp_path: Path) -> Path:
    """A writable copy of one corpus case; returns its metadata partition dir."""
    dest = tmp_path / name
    shutil.copytree(CORPUS / name, dest, symlinks=True)
    return dest / META


def _same_tree(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    return not mismatch and not errors and all(
        _same_tree(a / d, b / d) for d in cmp.common_dirs)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_corpus_is_current(name: str, tmp_path: Path) -> None:
    built = tmp_path / name
    built.mkdir()
    BUILDERS[name](built)
    if os.environ.get("KMETA_REBUILD_CORPUS"):
        shutil.rmtree(CORPUS / name, ignore_errors=True)
        shutil.copytree(built, CORPUS / name, symlinks=True)
    assert _same_tree(built, CORPUS / name), f"rebuild tests/fuzz/corpus/{name}"


# ------------------------------------------------------------------ 6. index values


def test_negative_index_position_is_a_finding(tmp_path: Path) -> None:
    part = corpus_copy("index-negative-position", tmp_path)
    proc = run("verify", part)
    assert_clear(proc, 1)
    assert "V032" in proc.stdout and "byte -5" in proc.stdout
    proc = run("repair", "--dry-run", part)
    assert_clear(proc, 0)
    assert "omitted" in proc.stdout and INDEX in proc.stdout
