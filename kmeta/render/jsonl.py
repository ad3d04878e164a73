"""JSON Lines: one object per event, the stable schema documented in ``man/kmeta.1``.

Every object has ``kind`` and ``file``.  Bytes inside decoded data are base64 (Kafka's
JSON convention); UUIDs are already Kafka's URL-safe base64 strings.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from typing import Any

from kmeta.findings import Finding
from kmeta.formats.batch import Batch
from kmeta.formats.legacy import LegacyBatch
from kmeta.ops.dump import FileEvent, RecordEvent

SCHEMA_VERSION = 1


def _default(obj: Any) -> Any:
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(obj)).decode("ascii")
    if hasattr(obj, "to_json"):
        return obj.to_json()
    raise TypeError(f"cannot serialise {type(obj).__name__}")


_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=_default).encode


def dumps(obj: Any) -> str:
    return _encode(obj)


def batch_object(b: Batch | LegacyBatch, show_hex: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "batch", "file": b.file, "position": b.position}
    out.update(b.header_json())
    if show_hex:
        out["hex"] = bytes(b.raw).hex()
    return out


def record_object(ev: RecordEvent, show_hex: bool = False) -> dict[str, Any]:
    r = ev.record
    p = ev.payload
    out: dict[str, Any] = {
        "kind": "record",
        "file": ev.file,
        "offset": r.offset,
        "timestamp": r.timestamp,
        "batch_position": ev.batch.position,
        "type": p.type,
        "version": p.version,
        "data": p.data,
    }
    if r.headers:
        out["headers"] = [{"key": h.key, "value": h.value} for h in r.headers]
    if show_hex:
        out["key_hex"] = None if r.key is None else bytes(r.key).hex()
        out["value_hex"] = None if r.value is None else bytes(r.value).hex()
    return out


def file_object(ev: FileEvent) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "file", "file": ev.file, "file_kind": ev.file_kind,
                           "size": ev.size}
    if ev.decoder:
        out["decoder"] = ev.decoder
    out.update(ev.info)
    if ev.content is not None:
        out["content"] = ev.content
    return out


def render(events: Iterable[Any], show_hex: bool = False) -> Iterator[str]:
    """One JSON line per event."""
    encode = _encode
    for ev in events:
        if type(ev) is RecordEvent:
            yield encode(record_object(ev, show_hex))
        elif isinstance(ev, (Batch, LegacyBatch)):
            yield encode(batch_object(ev, show_hex))
        elif isinstance(ev, Finding):
            yield encode(ev.to_json())
        elif isinstance(ev, FileEvent):
            yield encode(file_object(ev))
        else:
            yield encode(ev)
