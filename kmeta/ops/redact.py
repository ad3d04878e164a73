"""Redaction of secrets in decoded metadata records.

Kafka's own tools print SCRAM salts, salted passwords and sensitive config values in the
clear; kmeta prints ``[redacted]`` unless the user asks with ``--show-secrets``.  What is
secret comes from two places: fields the schema tables mark ``sensitive`` and config values
whose names mark them sensitive.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from kmeta.formats.metadata_schemas import METADATA_MESSAGES, SENSITIVE_CONFIG
from kmeta.formats.schema import sensitive_paths

REDACTED = "[redacted]"




@cache
def _paths_by_type() -> dict[str, tuple[tuple[str, ...], ...]]:
    out = {}
    for m in METADATA_MESSAGES.values():
        paths = sensitive_paths(m)
        if paths:
            out[m.type_name] = paths
    return out


#: Record types that can hold a secret; everything else passes through untouched.
SECRET_TYPES = frozenset({"CONFIG_RECORD", *_paths_by_type()})


def _redact_path(data: Any, path: tuple[str, ...]) -> Any:
    if isinstance(data, list):
        return [_redact_path(x, path) for x in data]
    if not isinstance(data, dict) or path[0] not in data:
        return data
    out = dict(data)
    if len(path) == 1:
        if out[path[0]] is not None:
            out[path[0]] = REDACTED
    else:
        out[path[0]] = _redact_path(out[path[0]], path[1:])
    return out


def redact(type_name: str, data: Any) -> Any:
    """A copy of ``data`` with secrets replaced; ``data`` itself is left untouched."""
    if type_name == "CONFIG_RECORD" and isinstance(data, dict):
        if data.get("value") is not None and SENSITIVE_CONFIG.search(data.get("name") or ""):
            return {**data, "value": REDACTED}
        return data
    for path in _paths_by_type().get(type_name, ()):
        data = _redact_path(data, path)
    return data
