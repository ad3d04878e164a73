"""Every command of kmeta typed at a prompt in an 80x24 xterm (colour and the progress bar
on), over every broker dir and metadata log of the real corpus, over a generated broker of
4,000 partitions and over the generated 268 MB metadata log.

tests/test_terminal.py follows a person through the everyday commands on the big log and
looks at what each shows; this file is the net under all of them: each command on each
input must end with a status kmeta(1) documents (0, 1, 2 or 3: never an internal error),
print no traceback, leave no bar behind and write no line wider than the terminal
(:func:`tests.terminal.problems`).  What each status should be for a given situation is
tests/test_exit_status.py's table; here a status outside the documented ones is what
fails.

Each command runs as a person at the corpus's root would type it, with a path relative to
where they stand: the paths kmeta prints are as long as they would be for them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DEFAULT_REAL_DATA, REPO, big_log_dir, made_once

pytest.importorskip("pyte")

from tests.terminal import (  # noqa: E402  (after the skip: pyte is a dev extra)
    TerminalRun,
    problems,
    run_in_terminal,
    run_interrupted,
)

pytestmark = pytest.mark.slow

#: The statuses kmeta(1) documents for a command that ran to its end: clean, findings of
#: severity error, usage, unreadable.
DOCUMENTED = (0, 1, 2, 3)

REAL = Path(os.environ.get("KMETA_REAL_DATA") or DEFAULT_REAL_DATA)

#: The generated broker: 4,000 partition dirs (one segment each) beside the cluster's
#: metadata log, as tests/bench/broker.py writes it; made once, then reused.
BROKER = REPO / "fixtures" / "big" / "broker-4000x1"

#: A shell session's worth of commands, for ``shell -c`` (the shell's interactive
#: session is tests/test_terminal.py's).
SHELL_LINES = "ls /image; at start; next 3; prev; at end; records 0 3; ls /image/topics"


def _is_partition(name: str) -> bool:
    return re.fullmatch(r".+-\d+", name) is not None


def _holds_a_log(files: list[str]) -> bool:
    """A partition dir's files (a dir named ``kafka-1`` may be a broker's data dir)."""
    return any(f.endswith((".log", ".index", ".checkpoint", ".snapshot"))
               or f in ("leader-epoch-checkpoint", "partition.metadata") for f in files)


def _real_inputs() -> list[str]:
    """Every broker data dir of the corpus (a dir holding meta.properties or partition
    dirs, a folder of such dirs too) and every metadata partition dir, relative to the
    corpus's root."""
    if not REAL.is_dir():
        return []
    found = set()
    for path, dirs, files in os.walk(REAL):
        here = Path(path)
        if "meta.properties" not in files and _is_partition(here.name) \
                and _holds_a_log(files):
            if here.name == "__cluster_metadata-0":
                found.add(here)
            dirs.clear()
            continue
        if "meta.properties" in files or any(_is_partition(d) for d in dirs):
            found.add(here)
    return sorted(str(p.relative_to(REAL)) for p in found)


def _largest_partition(data_dir: Path) -> Path | None:
    """The data partition (not the metadata log) holding the most bytes of segments."""
    sizes = {p: sum(f.stat().st_size for f in p.glob("*.log"))
             for p in data_dir.iterdir()
             if p.is_dir() and _is_partition(p.name) and p.name != "__cluster_metadata-0"}
    return max(sizes, key=lambda p: (sizes[p], p.name)) if sizes else None


def _peer(meta: Path, where: Path) -> Path:
    """A second replica of the metadata log ``meta``: the same files (hard links: the big
    log costs nothing to copy), as a follower that kept up holds them."""
    peer = where / meta.name
    if meta.is_dir() and not peer.exists():
        shutil.copytree(meta, peer, copy_function=_link_or_copy)
    return peer


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system, or fs.protected_hardlinks for another's file
        shutil.copy2(src, dst)


def commands(path: str, root: Path, out: Path) -> dict[str, list[str]]:
    """Each command of kmeta with ``path`` (relative to ``root``) where its input goes,
    as a person reading the man page would first type it; ``out`` a fresh dir for the
    commands that write."""
    whole = root / path
    meta = whole if whole.name == "__cluster_metadata-0" else whole / "__cluster_metadata-0"
    meta_arg = str(meta.relative_to(root)) if meta.is_dir() else path
    found = {
        "dump": ["dump", path],
        "dump-records": ["dump", "--records", path],
        "info": ["info", path],
        "verify": ["verify", path],
        "report": ["report", path],
        "startup": ["startup", path],
        "consumers": ["consumers", path],
        "tiering": ["tiering", path],
        "image": ["image", path],
        "history": ["history", path, "--broker", "1"],
        "brokers": ["brokers", path],
        "retention": ["retention", path],
        "shell": ["shell", path, "-c", SHELL_LINES],
        "diff": ["diff", path, str(_peer(meta, out.parent / "peer"))],
        "truncate": ["truncate", path, "--to", "1"],
        "repair": ["repair", "--dry-run", meta_arg],
        "snapshot": ["snapshot", meta_arg, "--out", str(out)],
        "compact": ["compact", path],
    }
    partition = _largest_partition(whole) if whole.is_dir() \
        and whole.name != "__cluster_metadata-0" else None
    if partition is not None:
        found["compact"] = ["compact", str(partition.relative_to(root))]
    return found


#: The commands of kmeta(1), less ``export`` (a Spark job: tests/test_spark_export.py).
COMMAND_NAMES = tuple(commands("x", Path("/nonexistent"), Path("/nonexistent")))


def test_every_command_is_here() -> None:
    """The matrix runs every command ``kmeta --help`` lists that reads an input, but
    export (a Spark job)."""
    from kmeta.cli import NO_INPUT

    listed = subprocess.run([sys.executable, "-m", "kmeta", "--help"], capture_output=True,
                            text=True, check=True, env={**os.environ, "COLUMNS": "200"},
                            cwd=REPO).stdout
    names = set(re.findall(r"^  (\w+) ", listed.split("Commands:", 1)[1], re.M))
    assert names - {"export"} - NO_INPUT == {c.split("-")[0] for c in COMMAND_NAMES}, names


def check_documented(run: TerminalRun, *, interrupted: bool = False) -> None:
    """The run ended with a documented status (130 when a person typed Ctrl-C) and
    shows a person nothing wrong."""
    found = problems(run, exit_code=run.exit_code)
    if run.exit_code not in ((130,) if interrupted else DOCUMENTED):
        found.insert(0, f"exit status {run.exit_code}, not one kmeta(1) documents")
    if found:
        listed = "\n".join(f"  - {p}" for p in found)
        shown = "\n".join(f"   |{line}" for line in run.screen[-60:])
        raise AssertionError(f"{run.command} in a {run.columns}x{run.rows} terminal:\n"
                             f"{listed}\nthe terminal:\n{shown}")


def _person(args: list[str], cwd: Path, home: Path) -> TerminalRun:
    """``kmeta ARGS`` typed at a prompt in ``cwd``, its own HOME (the shell's history)."""
    return run_in_terminal(args, cwd=cwd, env={"HOME": str(home)}, timeout=300)


# ---------------------------------------------------------------------- the real corpus

#: The commands whose answer for a metadata partition dir is the one they give for its
#: data dir (they read its metadata log either way): run on the data dir only.
_SAME_FOR_THE_DATA_DIR = ("report", "startup", "consumers", "tiering", "history", "brokers",
                          "retention")


def _real_cases() -> list[tuple[str, str]]:
    return [(path, command) for path in _real_inputs() for command in COMMAND_NAMES
            if not (path.endswith("__cluster_metadata-0")
                    and command in _SAME_FOR_THE_DATA_DIR)]


@pytest.mark.parametrize(("path", "command"), _real_cases())
def test_real(path: str, command: str, tmp_path: Path) -> None:
    args = commands(path, REAL, tmp_path / "out")[command]
    check_documented(_person(args, REAL, tmp_path))


def test_the_corpus_is_all_here() -> None:
    """The real inputs were found: 14 data dirs (a folder of three among them) and 11
    metadata logs; fewer would make the matrix above quietly smaller."""
    if not REAL.is_dir():
        pytest.skip(f"no real data at {REAL}")
    inputs = _real_inputs()
    metas = [p for p in inputs if p.endswith("__cluster_metadata-0")]
    assert (len(inputs) - len(metas), len(metas)) == (14, 11), inputs


# ---------------------------------------------------------------------- a big broker

@pytest.fixture(scope="session")
def broker() -> Path:
    """A broker of 4,000 partitions (~280 MB, ~20 s to write)."""
    def make(out: Path) -> None:
        subprocess.run([sys.executable, str(REPO / "tests" / "bench" / "broker.py"),
                        "--partitions", "4000", "--segments", "1", "--out", str(out)],
                       check=True, cwd=REPO, stdout=subprocess.DEVNULL)
    return made_once(BROKER, "meta.properties", make)


@pytest.mark.parametrize("command", [c for c in COMMAND_NAMES if not c.startswith("dump")])
def test_broker_of_4000_partitions(broker: Path, command: str, tmp_path: Path) -> None:
    where = broker.relative_to(REPO)
    args = commands(str(where), REPO, tmp_path / "out")[command]
    if command == "history":
        args[args.index("1")] = "4"  # the broker's own node
    check_documented(_person(args, REPO, tmp_path))


@pytest.mark.parametrize("records", [False, True], ids=["batches", "records"])
def test_broker_dump_stopped_with_ctrl_c(broker: Path, records: bool) -> None:
    """``dump`` of 4,000 partitions prints for minutes; a person stops it once a screen
    has gone by: 130, and nothing wrong on the screen."""
    args = ["dump", *(["--records"] if records else []), str(broker.relative_to(REPO))]
    run = run_interrupted(args, cwd=REPO, timeout=300)
    check_documented(run, interrupted=True)


# ---------------------------------------------------------------------- the 268 MB log

@pytest.fixture(scope="module")
def big_log() -> str:
    """The 268 MB metadata log's data dir, as typed from the repository's root."""
    return str(big_log_dir().relative_to(REPO))


#: The commands tests/test_terminal.py runs on the big log already, with a look at what
#: each shows; the rest run here.
_SEEN_THERE = ("dump", "dump-records", "info", "verify", "report", "startup", "image",
               "history", "brokers", "retention", "shell")


@pytest.mark.parametrize("command", [c for c in COMMAND_NAMES if c not in _SEEN_THERE])
def test_big_log(big_log: str, command: str, tmp_path: Path) -> None:
    args = commands(big_log, REPO, tmp_path / "out")[command]
    check_documented(_person(args, REPO, tmp_path))
