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
from kmeta.formats.batch import (
    ATTRIBUTES,
    BASE_OFFSET,
    BASE_SEQUENCE,
    BASE_TIMESTAMP,
    BATCH_LENGTH,
    CRC,
    CRC_VALID,
    DELETE_HORIZON_FLAG,
    FILE,
    LAST_OFFSET_DELTA,
    LEADER_EPOCH,
    LONE,
    MAX_TIMESTAMP,
    POSITION,
    PRODUCER_EPOCH,
    PRODUCER_ID,
    RECORDS_COUNT,
    Batch,
)
from kmeta.formats.compiled import CORE
from kmeta.formats.legacy import LegacyBatch
from kmeta.formats.runs import RunText
from kmeta.ops.dump import BatchDump, BatchMore, FileEvent, OneRecord, RecordRun
from kmeta.ops.redact import mask_hex, masked_json


def _default(obj: Any) -> Any:
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(obj)).decode("ascii")
    if hasattr(obj, "to_json"):
        return obj.to_json()
    raise TypeError(f"cannot serialise {type(obj).__name__}")


_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=_default).encode

try:  # the encoder JSONEncoder.encode makes on each call, made once
    from json.encoder import c_make_encoder
except ImportError:  # a Python without the json accelerator
    c_make_encoder = None


def _data_encoder() -> Any:
    """``encode(obj)``: :data:`_encode`'s text of ``obj``, for the decoded payloads a dump
    encodes by the ten thousand: JSONEncoder.encode builds its C encoder again on every
    call, which costs as much as the encoding of a small record.  Without the check for
    circular references (a decoded payload holds none)."""
    if c_make_encoder is None:
        return _encode
    chunks = c_make_encoder(None, _default, json.encoder.encode_basestring, None, ":", ",",
                            False, False, True)
    return lambda obj: "".join(chunks(obj, 0))


_encode_data = _data_encoder()


def dumps(obj: Any) -> str:
    return _encode(obj)


# ---------------------------------------------------------------------------- definitions


def batch_object(b: Batch | LegacyBatch, show_hex: bool = False,
                 masked: tuple = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "batch", "file": b.file, "position": b.position}
    out.update(b.header_json())
    if show_hex:
        out["hex"] = mask_hex(b.raw, masked)
        if masked:
            out["masked"] = masked_json(masked)
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
        out["value_hex"] = None if r.value is None else mask_hex(r.value, p.redacted)
    if p.redacted:
        out["masked"] = masked_json(p.redacted, r.offset)
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

_INT64 = range(-(1 << 63), 1 << 63)


def record_lines_py(first: bytes | None, entries: list[Any], head: bytes, mid: bytes,
                    texts: dict[int, tuple[Any, str]], payload_text: Any) -> bytes | None:
    """The record lines of a v2 batch's ``entries`` as UTF-8, after ``first`` (the batch's
    own line, or None), joined by newlines: each ``head`` + offset + ``,"timestamp":`` +
    timestamp + ``mid`` + the payload's text + ``}``, as ``_entry_texts`` writes a plain
    record.  The payload's text is ``texts[id(p)]`` where it holds ``p``, else
    ``payload_text(p)``.  None where an entry is not a plain record (a finding, headers,
    masked bytes, an offset or timestamp that is not an int64) or a text is not UTF-8
    (surrogates, which the writer escapes): the caller writes those as text.

    The reference of the compiled core's ``record_lines`` (``kmeta/formats/_runs.c``),
    which makes the lines of a batch of many records in one call."""
    out = [] if first is None else [first]
    for e in entries:
        if type(e) is not tuple or len(e) != 2:
            return None
        r, p = e
        if not isinstance(r, tuple) or len(r) < 5 or not isinstance(p, tuple) or len(p) < 6:
            return None
        if r[4] or p[5]:
            return None
        offset, timestamp = r[0], r[1]
        if type(offset) is not int or offset not in _INT64 or type(timestamp) is not int \
                or timestamp not in _INT64:
            return None
        hit = texts.get(id(p))
        text = hit[1] if isinstance(hit, tuple) and len(hit) == 2 and hit[0] is p \
            else payload_text(p)
        if not isinstance(text, str):
            raise TypeError("a payload's text must be a str")
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            return None
        out.append(b"%s%d,\"timestamp\":%d%s%s}" % (head, offset, timestamp, mid, data))
    return b"\n".join(out)


#: The compiled twin where it is built (the tests swap in the reference).
record_lines = CORE.record_lines if CORE is not None else record_lines_py


class _Texts:
    """JSON text that repeats across a dump."""

    def __init__(self) -> None:
        self.tails: dict[tuple, str] = {}
        # by the payload's id, with the payload itself (an id is only unique while its
        # object lives): decode_metadata gives equal values the same Payload object
        self.payloads: dict[int, tuple[Any, str]] = {}

    def payload(self, p: Any) -> str:
        """``"type":…,"version":…,"data":…`` of a payload."""
        hit = self.payloads.get(id(p))
        if hit is not None and hit[0] is p:
            return hit[1]
        version = "null" if p.version is None else p.version
        text = f'"type":"{p.type}","version":{version},"data":{_encode_data(p.data)}'
        if len(self.payloads) >= 4096:
            self.payloads.clear()
        self.payloads[id(p)] = (p, text)
        return text

    def tail(self, b: Batch, key: tuple) -> str:
        """The keys from ``size`` on, which are the same for most batches of a log.

        ``key`` holds every header field they depend on (attributes, lastOffsetDelta,
        producer id/epoch, base sequence, record count, length); magic is always 2 here.
        """
        fields = b.header_json()
        keys = list(fields)
        text = _encode({k: fields[k] for k in keys[keys.index("size"):]})[1:-1]
        if len(self.tails) > 10_000:
            self.tails.clear()
        self.tails[key] = text
        return text


def render(events: Iterable[Any], show_hex: bool = False, records_only: bool = False,
           utf8: bool = False) -> Iterator[str | bytes]:
    """JSON text for each event: one line per object (a batch yields several lines).

    ``records_only`` (dump --type): record and finding objects only, no file or batch
    objects, so that ``jq .data`` prints records and nothing else.

    ``utf8``: a run of batches (``RecordRun``) and a batch of many records may come as
    the UTF-8 bytes of their lines, made so by the compiled core (``RunText``,
    ``record_lines``), for ``Environment.write_lines``, which writes them as they are;
    else every item is text.

    v2 batches and their plain records are written with f-strings (the fastest way
    CPython builds text); their keys and order are those of ``batch_object`` and
    ``record_object``, which ``tests/test_render.py`` checks line by line.
    """
    if records_only:
        return _records_only(events, show_hex)
    return _all_objects(events, show_hex, utf8)


def _records_only(events: Iterable[Any], show_hex: bool) -> Iterator[str]:
    for ev in events:
        if type(ev) is OneRecord or type(ev) is BatchDump or type(ev) is BatchMore:
            b = ev.batch
            for e in ev.entries:
                yield _encode(record_object(b.file, b, e[0], e[1], show_hex)
                              if type(e) is tuple else e.to_json())
        elif type(ev) is Finding:
            yield _encode(ev.to_json())


def _all_objects(events: Iterable[Any], show_hex: bool, utf8: bool) -> Iterator[str | bytes]:
    texts = _Texts()
    tails = texts.tails
    payload_text = texts.payload
    payloads = texts.payloads
    # read per render (the tests swap in the reference); None: every line made as text
    lines_of = record_lines if utf8 else None
    last_payload: Any = None
    last_text = ""
    file = None
    f = '""'  # the current file name, JSON-quoted
    # what starts a record line of the file, as UTF-8 (None: the name is not UTF-8)
    record_head: bytes | None = None
    encode = _encode
    # The batch slots and flags as locals: this loop runs once per batch.
    at_base, at_length, at_epoch, at_crc, at_attrs = (BASE_OFFSET, BATCH_LENGTH, LEADER_EPOCH,
                                                      CRC, ATTRIBUTES)
    at_delta, at_base_ts, at_max_ts = LAST_OFFSET_DELTA, BASE_TIMESTAMP, MAX_TIMESTAMP
    at_pid, at_pepoch, at_seq, at_count = PRODUCER_ID, PRODUCER_EPOCH, BASE_SEQUENCE, \
        RECORDS_COUNT
    at_crc_valid, at_pos, at_file, at_lone = CRC_VALID, POSITION, FILE, LONE
    horizon_flag = DELETE_HORIZON_FLAG
    # A run's template is made from the definitions (batch_object, record_object).
    runs = RunText(lambda b, p: "\n".join(_general(OneRecord(b, p), False)))
    for ev in events:
        t = type(ev)
        if t is RecordRun:
            text = runs.text(ev[0], ev[1])
            yield text if utf8 or type(text) is str else text.decode()
            continue
        if t is BatchMore:  # more records of the batch just written
            b = ev[0]
            if show_hex:
                yield "\n".join(_general_entries(ev, show_hex))
                continue
            if b[at_file] != file:
                file = b[at_file]
                f = encode(file)
                record_head = _record_head(f)
            if lines_of is not None and record_head is not None:
                text = lines_of(None, ev.entries, record_head,
                                f',"batch_position":{b[at_pos]},'.encode(), payloads,
                                payload_text)
                if text is not None:
                    yield text
                    continue
            yield "\n".join(_entry_texts(ev.entries, file, f, b, b[at_pos], payload_text))
            continue
        if t is OneRecord or t is BatchDump:
            b = ev[0]
            if type(b) is not Batch or show_hex:
                yield "\n".join(_general(ev, show_hex))
                continue
            if b[at_file] != file:
                file = b[at_file]
                f = encode(file)
                record_head = _record_head(f)
            if b[at_pid] == -1 and b[at_pepoch] == -1 and b[at_seq] == -1:
                # No producer: the usual case.
                key = (b[at_length], b[at_attrs], b[at_count])
            else:
                key = b[at_attrs:at_delta + 1] + b[at_pid:at_count + 1] + (b[at_length],)
            tail = tails.get(key) or texts.tail(b, key)
            position = b[at_pos]
            base = b[at_base]
            head = (f'{{"kind":"batch","file":{f},"position":{position},"base_offset":{base},'
                    f'"last_offset":{base + b[at_delta]},"leader_epoch":{b[at_epoch]},'
                    f'"crc":{b[at_crc]},"crc_valid":{"true" if b[at_crc_valid] else "false"},'
                    f'"max_timestamp":{b[at_max_ts]},"delete_horizon_ms":'
                    f'{b[at_base_ts] if b[at_attrs] & horizon_flag else "null"},{tail}}}')
            lone = b[at_lone]
            if t is OneRecord and lone is not None and not lone[4]:
                # The scan's memo entry of the lone record: offset and timestamp deltas.
                p = ev[1]
                if p is not last_payload:  # runs of NoOps share one payload object
                    last_payload = p
                    last_text = payload_text(p)
                yield (f'{head}\n{{"kind":"record","file":{f},"offset":{base + lone[0]},'
                       f'"timestamp":{b[at_base_ts] + lone[1]},"batch_position":{position},'
                       f'{last_text}}}')
                continue
            entries = ev.entries
            if lines_of is not None and record_head is not None and len(entries) > 1:
                # many records: their lines made in one call, as the bytes written
                text = lines_of(head.encode(), entries, record_head,
                                f',"batch_position":{position},'.encode(), payloads,
                                payload_text)
                if text is not None:
                    yield text
                    continue
            yield "\n".join(_entry_texts(entries, file, f, b, position, payload_text,
                                         [head]))
        elif type(ev) is Finding:
            yield encode(ev.to_json())
        elif isinstance(ev, FileEvent):
            yield encode(file_object(ev))
        else:
            yield encode(ev)


def _record_head(f: str) -> bytes | None:
    """What starts a record line of the file JSON-quoted as ``f``, as UTF-8; None for a
    name that is not UTF-8 (its surrogates are escaped by the writer)."""
    try:
        return f'{{"kind":"record","file":{f},"offset":'.encode()
    except UnicodeEncodeError:
        return None


def _entry_texts(entries: Iterable[Any], file: str, f: str, b: Batch, position: int,
                 payload_text: Any, lines: list[str] | None = None) -> list[str]:
    """The record and finding lines of a v2 batch's entries (after ``lines``)."""
    lines = [] if lines is None else lines
    encode = _encode
    for e in entries:
        if type(e) is not tuple:
            lines.append(encode(e.to_json()))
            continue
        r, p = e
        if r[4] or p.redacted:  # headers, masked bytes: the general form
            lines.append(encode(record_object(file, b, r, p)))
        else:
            lines.append(f'{{"kind":"record","file":{f},"offset":{r[0]},'
                         f'"timestamp":{r[1]},"batch_position":{position},'
                         f'{payload_text(p)}}}')
    return lines


def _general(ev: BatchDump | OneRecord, show_hex: bool) -> Iterator[str]:
    yield _encode(batch_object(ev.batch, show_hex, ev.masked))
    yield from _general_entries(ev, show_hex)


def _general_entries(ev: BatchDump | BatchMore | OneRecord, show_hex: bool) -> Iterator[str]:
    b = ev.batch
    for e in ev.entries:
        if type(e) is tuple:
            yield _encode(record_object(b.file, b, e[0], e[1], show_hex))
        else:
            yield _encode(e.to_json())
