"""Shared pytest fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that needs the Spark session is marked ``spark``: ``-m "not spark"``
    leaves out the JVM and its start."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


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
