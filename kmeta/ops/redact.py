"""Redaction of secrets in decoded metadata records, and masking of their bytes.

Kafka's own tools print SCRAM salts, salted passwords and sensitive config values in the
clear; kmeta prints ``[redacted]`` unless the user asks with ``--show-secrets``.  What is
secret comes from two places: fields the schema tables mark ``sensitive`` and config values
whose names mark them sensitive.

A view that shows bytes (a batch or value in hex, a value as base64 or text) shows each
secret byte as ``*`` instead, and says which bytes (:class:`Masked`): the secret fields'
byte ranges are found by reading the record again with positions
(:mod:`kmeta.formats.field_bytes`).  A compressed records section holding a secret is
masked whole: its bytes do not show the secret, but they give it back once decompressed.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from functools import cache
from typing import Any

import construct as cs

from kmeta.errors import FormatError
from kmeta.formats.batch import COMPRESSION_MASK, HEADER_SIZE, Batch
from kmeta.formats.field_bytes import Masked, leaf_spans, record_values
from kmeta.formats.metadata_schemas import METADATA_MESSAGES, SENSITIVE_CONFIG
from kmeta.formats.payload import Payload, decode_metadata
from kmeta.formats.primitives import read_uvarint
from kmeta.formats.schema import sensitive_paths

REDACTED = "[redacted]"
#: What a masked byte shows as: in hex ``**``, in base64 and text ``*``.
MASK = "*"
#: Where the user is told how to see masked bytes.
SHOW_SECRETS = "--show-secrets shows them"

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
#: Their apiKeys: a value framed with another apiKey holds no secret.
SECRET_API_KEYS = frozenset(m.api_key for m in METADATA_MESSAGES.values()
                            if m.type_name in SECRET_TYPES)


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
    """A copy of ``data`` with secrets replaced; ``data`` itself is left untouched.  The
    hex of a record that did not decode (``{"apiKey", "version", "hex"}``) has its body
    masked when its apiKey is a secret type's."""
    if isinstance(data, dict) and isinstance(data.get("hex"), str) and \
            data.get("apiKey") in SECRET_API_KEYS:
        try:
            value = bytes.fromhex(data["hex"])
        except ValueError:
            return data
        return {**data, "hex": mask_hex(value, secret_spans(value, metadata=True))}
    if type_name == "CONFIG_RECORD" and isinstance(data, dict):
        if data.get("value") is not None and SENSITIVE_CONFIG.search(data.get("name") or ""):
            return {**data, "value": REDACTED}
        return data
    for path in _paths_by_type().get(type_name, ()):
        data = _redact_path(data, path)
    return data


# ---------------------------------------------------------------------------- bytes


def secret_spans(value: Any, metadata: bool) -> tuple[Masked, ...]:
    """Where secrets lie in a record value (positions from the value's start): the
    secret fields of a metadata record of a secret type; () for any other value.

    ``metadata``: the value comes from a metadata log or snapshot, where a record that
    does not decode (damaged, an unknown apiKey or version) has its body masked whole
    (all of it when even its frame does not read): kmeta cannot tell what it holds, and a
    damaged SCRAM record is still a SCRAM record.  From another log, only a value that
    decodes cleanly as a secret type is taken for a metadata record."""
    if value is None or not metadata and len(value) < 3:
        return ()
    try:
        frame, pos = read_uvarint(value, 0)
        api_key, pos = read_uvarint(value, pos)
        _, pos = read_uvarint(value, pos)
    except (IndexError, FormatError):
        frame, api_key, pos = None, None, 0
    if not metadata and (frame != 1 or api_key not in SECRET_API_KEYS):
        return ()
    value = bytes(value)
    whole = (Masked("body", pos, len(value) - pos),) if metadata and len(value) > pos else ()
    payload = decode_metadata(value)
    if payload.finding is not None:
        return whole
    return _field_spans(payload, value, pos, whole)


def _field_spans(payload: Payload, value: bytes, pos: int, whole: tuple[Masked, ...]
                 ) -> tuple[Masked, ...]:
    wanted = _wanted(payload)
    if not wanted:
        return ()
    assert payload.api_key is not None and payload.version is not None
    message = METADATA_MESSAGES[payload.api_key]
    try:
        spans = leaf_spans(message, payload.version, value, pos, wanted)
    except (FormatError, cs.ConstructError, UnicodeDecodeError, ValueError, IndexError):
        return whole
    return tuple(Masked(".".join(path), at, n) for path, at, n in spans if n > 0)


def holds_secrets(payload: Payload) -> bool:
    """Whether a decoded metadata record holds a secret field with a value (a SCRAM
    credential, a delegation token, a sensitive config's value): most ConfigRecords do
    not, and need neither their bytes searched nor their data copied."""
    return bool(_wanted(payload))


def _wanted(payload: Payload) -> frozenset[tuple[str, ...]]:
    if payload.type == "CONFIG_RECORD":
        d = payload.data
        secret = d.get("value") is not None and SENSITIVE_CONFIG.search(d.get("name") or "")
        return frozenset({("value",)}) if secret else frozenset()
    return frozenset(_paths_by_type().get(payload.type, ()))


def batch_masks(batch: Any, metadata: bool) -> tuple[Masked, ...]:
    """The bytes of a batch (positions from its start) a hex dump must mask: each secret
    of its records, or its whole records section where that is compressed and holds a
    secret.  In a metadata log, records that cannot be read are masked too (from where
    reading stopped): they may hold a secret."""
    control = batch.is_control
    if control and not metadata:
        return ()
    raw = batch.raw
    if type(batch) is not Batch:  # a legacy message: its value is the last of its bytes
        value = batch.value
        if value is None:
            return ()
        at = len(raw) - len(value)
        if batch.attributes & COMPRESSION_MASK:
            try:
                inner = batch.records()
            except FormatError:
                inner = None
            hold = inner is None and metadata or inner is not None and any(
                secret_spans(r.value, metadata) for r in inner)
            return (Masked("compressed records", at, len(value)),) if hold else ()
        return tuple(m._replace(position=m.position + at, offset=batch.offset)
                     for m in secret_spans(value, metadata))
    if batch.attributes & COMPRESSION_MASK:
        try:
            section = batch.records_section()
            hold = any(_value_masks(section, 0, batch.base_offset, metadata, control))
        except _Stopped as e:
            hold = metadata or bool(e.masks)
        except FormatError:  # it does not decompress
            hold = metadata
        return (Masked("compressed records", HEADER_SIZE, len(raw) - HEADER_SIZE),) \
            if hold else ()
    try:
        # a control batch's records hold no secret, but a damaged one may run on over
        # other batches' bytes: only where its records stop reading is masked
        return tuple(_value_masks(raw, HEADER_SIZE, batch.base_offset, metadata, control))
    except _Stopped as e:
        return e.masks + ((Masked("unreadable records", e.position, len(raw) - e.position),)
                          if metadata else ())


class _Stopped(Exception):
    def __init__(self, masks: tuple[Masked, ...], position: int) -> None:
        super().__init__(position)
        self.masks, self.position = masks, position


def _value_masks(section: Any, start: int, base_offset: int, metadata: bool,
                 framing_only: bool = False) -> list[Masked]:
    """Each secret of the records of ``section[start:]``; the walk goes to the section's
    end whatever the header's count says.  Raises :class:`_Stopped` with what it found
    where a record does not read.  ``framing_only``: the values are not looked at."""
    out: list[Masked] = []
    try:
        for v in record_values(section, start):
            if framing_only:
                continue
            p = v.position
            if not metadata and (v.length < 3 or section[p] == 1 and section[p + 1] < 0x80
                                 and section[p + 1] not in SECRET_API_KEYS):
                continue  # framed as a record of a type without secrets (most of them)
            value = section[p:p + v.length]
            out += [m._replace(position=m.position + v.position,
                               offset=base_offset + v.offset_delta)
                    for m in secret_spans(value, metadata)]
    except FormatError as e:
        raise _Stopped(tuple(out), start if e.position is None else e.position) from e
    return out


def mask_hex(data: Any, masks: Iterable[Masked]) -> str:
    """``data`` in hex, each masked byte as ``**``."""
    raw = bytes(data)
    out, at = [], 0
    for m in sorted(masks, key=lambda m: m.position):  # in pieces: a batch may hold many
        out += [raw[at:m.position].hex(), MASK * (2 * m.length)]
        at = m.position + m.length
    out.append(raw[at:].hex())
    return "".join(out)


def mask_base64(data: Any, masks: Iterable[Masked]) -> str:
    """``data`` in base64, each character that holds a bit of a masked byte as ``*``."""
    text = list(base64.b64encode(bytes(data)).decode("ascii"))
    for m in masks:
        # character i holds bits 6i .. 6i+5
        first, last = m.position * 8 // 6, ((m.position + m.length) * 8 - 1) // 6
        for i in range(first, min(last + 1, len(text))):
            if text[i] != "=":
                text[i] = MASK
    return "".join(text)


def mask_utf8(data: Any, masks: Iterable[Masked]) -> str:
    """``data`` as UTF-8 text (bad bytes replaced), each masked byte as ``*``."""
    raw = bytes(data)
    out, at = [], 0
    for m in sorted(masks, key=lambda m: m.position):
        out.append(raw[at:m.position].decode("utf-8", "replace"))
        out.append(MASK * m.length)
        at = m.position + m.length
    out.append(raw[at:].decode("utf-8", "replace"))
    return "".join(out)


#: an opaque decoder's name -> how it shows a value with masked bytes
MASKED_ENCODINGS = {"raw": mask_base64, "utf8": mask_utf8, "hex": mask_hex}


def hide_secrets(payload: Payload, value: Any, masks: tuple[Masked, ...],
                 decoder: str) -> Payload:
    """``payload`` with its secrets hidden: decoded fields ``[redacted]``, a value shown
    as bytes (the raw, utf8 and hex decoders; a record that did not decode) masked; its
    ``redacted`` says which bytes of the value were masked."""
    data = payload.data
    if payload.type == "RAW" and isinstance(data, dict):
        if masks:
            encode = MASKED_ENCODINGS.get(decoder, mask_base64)
            data = {**data, "value": encode(value, masks)}
    else:
        if masks and isinstance(data, dict):
            # a record a decoder could not read shows its value in hex ("hex" of metadata,
            # "value" of the coordinator decoders)
            whole = bytes(value).hex()
            data = {k: mask_hex(value, masks) if v == whole else v for k, v in data.items()}
        data = redact(payload.type, data)
    return payload._replace(data=data, redacted=masks)


def masked_text(masks: Iterable[Masked]) -> str:
    """Which bytes were masked, for a text line: ``salt (16 bytes at 12), storedKey (32
    bytes at 30)``; a batch's grouped by record, ``offset 2: salt (…), …; offset 3: …``."""
    groups: list[tuple[int | None, list[str]]] = []
    for m in masks:
        what = f"the {m.field}" if m.offset is None and m.field.endswith("records") \
            else m.field
        if not groups or groups[-1][0] != m.offset:
            groups.append((m.offset, []))
        groups[-1][1].append(f"{what} ({m.length} bytes at {m.position})")
    return "; ".join((f"offset {offset}: " if offset is not None else "") + ", ".join(parts)
                     for offset, parts in groups)


def masked_json(masks: Iterable[Masked], offset: int | None = None
                ) -> list[dict[str, Any]]:
    """The ``masked`` list of a batch object, or of a record object (``offset``: the
    record's)."""
    return [{"offset": m.offset if offset is None else offset, "field": m.field,
             "position": m.position, "length": m.length} for m in masks]
