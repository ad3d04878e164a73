"""CRC-32C (Castagnoli), the checksum of record batches and producer snapshots.

It comes from the ``crc32c`` package's compiled module, loaded by its file: the package's
``__init__`` asks ``importlib.metadata`` for its own version, which reads the metadata of
every installed distribution and costs about a fifth of kmeta's start-up.  When the module
cannot be found that way (another layout, another version of the package), the package is
imported as usual: the same function either way.
"""

from __future__ import annotations

import glob
import importlib.machinery
import importlib.util
import os
from collections.abc import Callable
from typing import Any

__all__ = ["crc32c"]


def _load() -> Callable[..., int]:
    try:
        spec = importlib.util.find_spec("crc32c")  # finds the package, does not run it
        for folder in (spec.submodule_search_locations or []) if spec else []:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                for path in glob.glob(os.path.join(folder, "_crc32c" + suffix)):
                    loader = importlib.machinery.ExtensionFileLoader("crc32c._crc32c", path)
                    module_spec = importlib.util.spec_from_loader("crc32c._crc32c", loader)
                    if module_spec is None:
                        continue
                    module: Any = importlib.util.module_from_spec(module_spec)
                    loader.exec_module(module)
                    return module.crc32c
    except (ImportError, OSError, AttributeError, ValueError):
        pass
    from crc32c import crc32c as package_crc32c

    return package_crc32c


crc32c = _load()
