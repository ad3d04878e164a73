"""A capability package's public face: the names the rest of kmeta may use, each loaded
from its module the first time it is asked for (PEP 562's module ``__getattr__``).

A face that imported its modules at once would load a whole capability for one name:
``kmeta verify`` starts its workers from :mod:`kmeta.ops.verify.paths` before the metadata
log's checks are imported, and ``kmeta --help`` imports no op at all.  So each package's
``__init__.py`` declares its names here, as a table, and repeats the imports under
``TYPE_CHECKING`` for type checkers and readers; ``tests/test_house.py`` holds the two to
each other and to ``__all__``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def face(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], Any],
                                                           Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose public ``names`` each live in
    the submodule the table gives (``{"verify": "paths"}``: ``package.paths.verify``)."""

    def __getattr__(name: str) -> Any:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{where}"), name)
        # kept on the package: the next lookup is an attribute like any other
        importlib.import_module(package).__dict__[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__
