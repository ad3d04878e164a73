"""Shared pytest fixtures."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

# With PYTHONDONTWRITEBYTECODE set, every run rewrote the asserts of every test module and
# compiled kmeta again (seconds per pytest process, and per kmeta subprocess): the suite
# keeps its bytecode in __pycache__ (ignored by git) whatever the variable says.
sys.dont_write_bytecode = False

# The paths every test file reads (``from conftest import HEALTHY``): one home for them.
REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures" / "data"
HEALTHY = FIXTURES / "healthy"
HEALTHY_META = HEALTHY / "__cluster_metadata-0"
CORRUPT = FIXTURES / "corrupt"
DIVERGENT = FIXTURES / "divergent"
REPAIR = FIXTURES / "repair"
VERIFY = FIXTURES / "verify"
DEFAULT_REAL_DATA = REPO.parent / "shared" / "real"


#: Variables that change what the command line writes; a test gives them where it means it.
_TERMINAL = ("COLUMNS", "LINES")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist, in the controlling process: hand each worker the COLUMNS and LINES
    this run was started with.  GNU readline, loaded by pytest, writes the terminal's into
    the C environment, which the workers would otherwise inherit."""
    node.workerinput["terminal"] = {k: os.environ.get(k) for k in _TERMINAL}


def pytest_configure(config: pytest.Config) -> None:
    """In a pytest-xdist worker: the COLUMNS and LINES of the run, not readline's."""
    terminal = getattr(config, "workerinput", {}).get("terminal")
    for name, value in (terminal or {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that needs the Spark session is marked ``spark``: ``-m "not spark"``
    leaves out the JVM and its start.  Under pytest-xdist they all go to one worker
    (``--dist loadgroup``): one JVM, not one per worker."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
            item.add_marker(pytest.mark.xdist_group("spark"))


@pytest.fixture(scope="session")
def real_data() -> Path:
    """The directory of real Kafka files (``KMETA_REAL_DATA``, else ``../shared/real``).

    Skips only when the directory is absent outside CI; in CI its absence is a failure.
    """
    path = Path(os.environ.get("KMETA_REAL_DATA") or DEFAULT_REAL_DATA)
    if not path.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"real Kafka data directory {path} is absent in CI")
        pytest.skip(f"real Kafka data directory {path} is absent")
    return path


@pytest.fixture(scope="session")
def nobody_python() -> list[str]:
    """The command line that starts this Python, with the kmeta under test, as user
    nobody: for a file that root could read (tests/nobody.py lays out what nobody needs,
    wherever this clone and this Python are).  Skips, saying why, only where no command
    can run as nobody (not root, no setpriv)."""
    from tests import nobody

    reason = nobody.unavailable()
    if reason:
        pytest.skip(reason)
    return nobody.python()


@pytest.fixture(scope="session")
def spark():
    """A real local SparkSession (``local[2]``) with kmeta's data source registered.

    The Python workers run this interpreter, so they import the kmeta under test."""
    import sys

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from kmeta.spark import register

    session = (SparkSession.builder.master("local[2]").appName("kmeta-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "4")
               # as an embedded export's: workers import the installed pyspark
               .config("spark.python.daemon.module", "kmeta.spark.daemon")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    session.stop()


def made_once(target: Path, ready: str, make: Any) -> Path:
    """``target`` (git ignores fixtures/big), made by ``make(dir)`` into a dir beside it
    that is then renamed, when ``target / ready`` is absent: an interrupted run leaves
    nothing to be taken for it, and a lock makes pytest-xdist's workers wait for the one
    that makes it."""
    import fcntl
    import shutil

    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / ready).exists():
            partial = target.parent / f".{target.name}.{os.getpid()}"
            shutil.rmtree(partial, ignore_errors=True)
            make(partial)
            shutil.rmtree(target, ignore_errors=True)
            partial.rename(target)
    return target


#: A data dir holding a 268 MB (256 MiB) generated metadata log and a small topic.
BIG_LOG_DIR = REPO / "fixtures" / "big" / "256MiB"


def big_log_dir() -> Path:
    """:data:`BIG_LOG_DIR`, generated with fixtures/generate.py when absent (~45 s)."""
    import subprocess

    return made_once(BIG_LOG_DIR, "__cluster_metadata-0", lambda out: subprocess.run(
        [sys.executable, str(REPO / "fixtures" / "generate.py"), "--size", BIG_LOG_DIR.name,
         "--out", str(out)], check=True, cwd=REPO, stdout=subprocess.DEVNULL))
