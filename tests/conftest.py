"""Shared pytest fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DEFAULT_REAL_DATA = "/work/shared/real"


@pytest.fixture(scope="session")
def real_data() -> Path:
    """The directory of real Kafka files (``KMETA_REAL_DATA``); skips only if it is absent."""
    path = Path(os.environ.get("KMETA_REAL_DATA") or DEFAULT_REAL_DATA)
    if not path.is_dir():
        pytest.skip(f"real Kafka data directory {path} is absent")
    return path
