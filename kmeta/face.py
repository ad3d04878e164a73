"""A capability package's public face: the names the rest of kmeta may use, each loaded
from its module the first time it is asked for (PEP 562's module ``__getattr__``).

A face that imported its modules at once would load a whole capability for one name:
``kmeta verify`` starts its workers from :mod:`kmeta.ops.verify.paths` before the metadata
log's checks are imported, and ``kmeta --help`` imports no op at all.  So a package's
``__init__.py`` names its public names once, as the imports of an ``if TYPE_CHECKING:``
block (what type checkers and readers see), and hands itself to :func:`face`, which
reads that block to know where each name lives::

    from typing import TYPE_CHECKING

    from kmeta.face import face

    __getattr__, __dir__, __all__ = face(__name__)

    if TYPE_CHECKING:
        from kmeta.ops.verify.paths import verify
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from typing import Any


def declared(source: str) -> dict[str, str]:
    """The names a face's source imports under ``if TYPE_CHECKING:``, each with the
    module it comes from."""
    names: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
                and node.test.id == "TYPE_CHECKING":
            for imported in node.body:
                if isinstance(imported, ast.ImportFrom) and imported.module:
                    for alias in imported.names:
                        names[alias.asname or alias.name] = imported.module
    return names


def face(package: str) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` of ``package``, whose ``__init__.py``
    declares its public names as :func:`declared` reads them."""
    module = sys.modules[package]
    # through the loader: a package imported from a zip (spark-submit --py-files) too
    loader = getattr(module.__spec__, "loader", None)
    source = loader.get_source(package) if loader is not None else None
    if source is None:
        raise ImportError(f"{package}: its face needs its source to know its names")
    names = declared(source)

    def __getattr__(name: str) -> Any:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where), name)
        module.__dict__[name] = value  # the next lookup is an attribute like any other
        return value

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__, sorted(names)
