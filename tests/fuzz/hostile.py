"""The hostile-environment pass: files that are not what their names say, and an output
that cannot be written.  Each case is a copied seed with one thing made hostile, run in
a limited subprocess (a FIFO or /dev/zero can block or grow a process without bound).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from tests import nobody

from .seeds import FIXTURES, METADATA_DIR, Seed, copy_tree, make_writable

#: Commands each hostile case runs (a subset: each is a process start of its own).
HOSTILE_COMMANDS = ("dump", "verify", "info", "repair-dry-run")
SEGMENT = "00000000000000000000.log"


def _fifo(meta: Path) -> str:
    (meta / SEGMENT).unlink()
    os.mkfifo(meta / SEGMENT)
    return "FIFO named like the first segment"


def _dev_zero(meta: Path) -> str:
    (meta / SEGMENT).unlink()
    os.symlink("/dev/zero", meta / SEGMENT)
    return "first segment a symlink to /dev/zero"


def _dev_zero_small(meta: Path) -> str:
    target = meta / "leader-epoch-checkpoint"
    target.unlink()
    os.symlink("/dev/zero", target)
    return "leader-epoch-checkpoint a symlink to /dev/zero"


def _loop(meta: Path) -> str:
    os.symlink("00000000000000099999.log", meta / "00000000000000099998.log")
    os.symlink("00000000000000099998.log", meta / "00000000000000099999.log")
    return "two segment names that are symlinks to each other"


def _dir_loop(meta: Path) -> str:
    os.symlink(".", meta.parent / "loop-0")
    return "a partition-named symlink to its own data dir"


def _unreadable(meta: Path) -> str:
    (meta / SEGMENT).chmod(0)
    return "first segment mode 000 (run as nobody)"


def _dir_as_segment(meta: Path) -> str:
    (meta / "00000000000000099999.log").mkdir()
    return "a directory named like a segment"


def _non_utf8(meta: Path) -> str:
    shutil.copyfile(meta / SEGMENT, os.fsencode(meta) + b"/0000000000000000\xff\xfe.log")
    os.mkdir(os.fsencode(meta.parent) + b"/t\xff-0")
    return "non-UTF-8 file and partition dir names"


def _empty_files(meta: Path) -> str:
    for p in meta.iterdir():
        if p.is_file():
            p.write_bytes(b"")
    return "every file of the metadata partition empty"


HOSTILE: dict[str, Callable[[Path], str]] = {
    "fifo": _fifo, "dev-zero-segment": _dev_zero, "dev-zero-small-file": _dev_zero_small,
    "symlink-loop": _loop, "dir-symlink-loop": _dir_loop, "unreadable": _unreadable,
    "dir-as-segment": _dir_as_segment, "non-utf8-names": _non_utf8, "empty": _empty_files,
}
#: Output cases: (name, stdout spec) run on the healthy fixture.
OUTPUTS = (("closed-stdout", "closed"), ("stdout-dev-full", "/dev/full"))


def run_hostile(camp, names: tuple[str, ...] | None = None, *, subprocess: bool = True,
                commands: tuple[str, ...] = HOSTILE_COMMANDS) -> None:
    """Run every hostile case through ``camp`` (a Campaign): its classifier, its stats
    and its failure records.  ``subprocess=False`` runs the file cases in-process (the
    alarm still ends a blocked open); the mode-000 file (run as nobody) and the stdout
    cases always need a process of their own.  Root runs the mode-000 case as user nobody
    (tests/nobody.py), or not at all where it cannot: root would read the file."""
    from .campaign import Case

    saved, camp.timeout = camp.timeout, min(camp.timeout, 8.0)  # a blocked read: no wait
    try:
        _run(camp, names, Case, subprocess, commands)
    finally:
        camp.timeout = saved


def _run(camp, names: tuple[str, ...] | None, Case: type, sub: bool,  # noqa: N803
         commands: tuple[str, ...]) -> None:
    seed = Seed("fixtures/healthy", FIXTURES / "healthy")
    for i, (name, make) in enumerate(HOSTILE.items()):
        if names is not None and name not in names:
            continue
        root = camp.work / f"hostile-{name}"
        copy_tree(seed.path, root)
        meta = root / METADATA_DIR
        what = make(meta)
        as_nobody = name == "unreadable"
        python: list[str] = []
        if as_nobody and os.geteuid() == 0:
            if nobody.unavailable():
                continue
            python = nobody.python()
        if as_nobody:
            _open_up(camp.work, root)
        case = Case(-1 - i, seed, f"{METADATA_DIR}", [f"hostile: {what}"], list(commands))
        camp.stats.cases += 1
        try:
            for n, command in enumerate(case.commands):
                if as_nobody:
                    f = camp.run_command(case, root, command, n, True, python=python)
                else:
                    f = camp.run_command(case, root, command, n, sub)
                if f is not None:
                    camp.record(f, root)
        finally:
            make_writable(root)
            shutil.rmtree(root, ignore_errors=True)
    for j, (name, stdout) in enumerate(OUTPUTS):
        if names is not None and name not in names:
            continue
        root = camp.work / f"hostile-{name}"
        copy_tree(seed.path, root)
        case = Case(-100 - j, seed, "", [f"hostile: stdout {stdout}"], ["dump", "verify"])
        camp.stats.cases += 1
        try:
            for n, command in enumerate(case.commands):
                f = camp.run_command(case, root, command, n, True, stdout=stdout)
                if f is not None:
                    camp.record(f, root)
        finally:
            shutil.rmtree(root, ignore_errors=True)


def _open_up(work: Path, root: Path) -> None:
    """World-readable dirs and files from the work dir down (the unreadable one aside)."""
    for p in [work, *work.parents]:
        if p == Path("/") or p == Path("/tmp"):
            break
        p.chmod(p.stat().st_mode | 0o755)
    for dirpath, _dirs, filenames in os.walk(root):
        os.chmod(dirpath, 0o755)
        for f in filenames:
            fp = os.path.join(dirpath, f)
            if os.stat(fp).st_mode & 0o777:
                os.chmod(fp, 0o644)
