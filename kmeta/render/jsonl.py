"""JSON Lines: one object per event, the stable schema documented in ``man/kmeta.1``.

Every object has ``kind`` and ``file``.  Bytes inside decoded data are base64 (Kafka's
JSON convention); UUIDs are already Kafka's URL-safe base64 strings.

``batch_object``/``record_object`` define each object as a dict.  A full dump writes
millions of them, so :func:`render` formats v2 batches and plain records through string
templates with the same keys in the same order; ``tests/test_render.py`` proves the two
agree.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from typing import Any

from kmeta.findings import Finding
from kmeta.formats.batch import Batch
from kmeta.formats.legacy import LegacyBatch
from kmeta.ops.dump import BatchDump, FileEvent

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


# ---------------------------------------------------------------------------- definitions


def batch_object(b: Batch | LegacyBatch, show_hex: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "batch", "file": b.file, "position": b.position}
    out.update(b.header_json())
    if show_hex:
        out["hex"] = bytes(b.raw).hex()
    return out


def record_object(file: str, batch: Batch | LegacyBatch, r: Any, p: Any,
                  show_hex: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": "record",
        "file": file,
        "offset": r.offset,
        "timestamp": r.timestamp,
        "batch_position": batch.position,
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


# ---------------------------------------------------------------------------- fast path

_BATCH = ('{"kind":"batch","file":%s,"position":%d,"base_offset":%d,"last_offset":%d,'
          '"leader_epoch":%d,"crc":%d,"crc_valid":%s,"max_timestamp":%s,'
          '"delete_horizon_ms":%s,%s}')
_RECORD = ('{"kind":"record","file":%s,"offset":%d,"timestamp":%s,"batch_position":%d,'
           '"type":"%s","version":%s,"data":%s}')


class _Texts:
    """Caches of JSON text that repeats across a dump."""

    def __init__(self) -> None:
        self.tails: dict[tuple, str] = {}
        self.data: dict[int, tuple[Any, str]] = {}  # id(data) -> (data kept alive, text)

    def data_text(self, data: Any) -> str:
        hit = self.data.get(id(data))
        if hit is not None and hit[0] is data:
            return hit[1]
        text = _encode(data)
        if len(self.data) > 50_000:
            self.data.clear()
        self.data[id(data)] = (data, text)
        return text

    def tail(self, b: Batch) -> str:
        """The keys after ``delete_horizon_ms``: the same for most batches of a log."""
        key = (b[1], b[3], b[5], b[6], b[9], b[10], b[11], b[12])
        text = self.tails.get(key)
        if text is None:
            fields = b.header_json()
            keys = list(fields)
            tail = {k: fields[k] for k in keys[keys.index("size"):]}
            text = _encode(tail)[1:-1]
            if len(self.tails) > 10_000:
                self.tails.clear()
            self.tails[key] = text
        return text


def _batch_line(b: Batch, file_text: str, texts: _Texts, max_ts: str) -> str:
    return _BATCH % (file_text, b[14], b[0], b[0] + b[6], b[2], b[4],
                     "true" if b[13] else "false", max_ts,
                     b[7] if b[5] & 0x40 else "null", texts.tail(b))


def render(events: Iterable[Any], show_hex: bool = False) -> Iterator[str]:
    """JSON text for each event: one line per object (a batch yields several lines)."""
    texts = _Texts()
    file_texts: dict[str, str] = {}
    encode = _encode
    for ev in events:
        if type(ev) is BatchDump:
            b = ev.batch
            file = b.file
            file_text = file_texts.get(file)
            if file_text is None:
                file_text = file_texts[file] = encode(file)
            fast = type(b) is Batch and not show_hex
            max_ts_value = b.max_timestamp
            max_ts = str(max_ts_value)
            lines = [_batch_line(b, file_text, texts, max_ts) if fast
                     else encode(batch_object(b, show_hex))]
            position = b.position
            for e in ev.entries:
                if type(e) is not tuple:
                    lines.append(encode(e.to_json()))
                    continue
                r, p = e
                if r[4] or show_hex:  # headers or hex: the general form
                    lines.append(encode(record_object(file, b, r, p, show_hex)))
                else:
                    version = "null" if p.version is None else p.version
                    ts = max_ts if r[1] == max_ts_value else r[1]
                    lines.append(_RECORD % (file_text, r[0], ts, position, p.type, version,
                                            texts.data_text(p.data)))
            yield "\n".join(lines)
        elif type(ev) is Finding:
            yield encode(ev.to_json())
        elif isinstance(ev, FileEvent):
            yield encode(file_object(ev))
        else:
            yield encode(ev)
