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
