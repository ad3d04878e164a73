"""Shared pytest fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REAL_DATA = REPO.parent / "shared" / "real"


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
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    session.stop()
