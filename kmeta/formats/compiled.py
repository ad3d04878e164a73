"""The compiled scan core (``kmeta/formats/_runs.c``), or None.

``pip install`` builds it when the machine has a C compiler and Python's headers; without
them the install goes on and kmeta runs the pure-Python reference of each function
(``formats.runs``, ``formats.batch``).  ``KMETA_PURE_PYTHON`` (non-empty) chooses the
reference even where the core is built.  The tests run both and compare.
"""

from __future__ import annotations

import os
from types import ModuleType


def _load() -> ModuleType | None:
    if os.environ.get("KMETA_PURE_PYTHON"):
        return None
    try:
        from kmeta.formats import _runs  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _runs


CORE = _load()
#: Which implementation runs: ``"compiled (…)"`` or ``"pure Python"``.
IMPLEMENTATION = f"compiled (CRC-32C: {CORE.CRC})" if CORE is not None else "pure Python"
