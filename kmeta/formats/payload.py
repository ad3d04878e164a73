"""Decoding a record's key and value into (type, version, data) for each decoder.

* ``metadata`` — KRaft metadata record values, framed as Kafka's ``AbstractApiMessageSerde``
  writes them: unsigned varint frame version (1), apiKey, version, then the message body.
* control records (any decoder) — key (version int16, type int16) and value: a transaction
  marker, or a KRaft control message whose first field is its own int16 ``Version``.
* ``raw`` / ``utf8`` / ``hex`` — opaque keys and values of ordinary topics.

Unknown apiKeys, versions or control types are never guessed: the payload is returned as
hex with a finding code (F004/F008), and malformed bodies as hex with F005/F007.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable
from typing import Any, NamedTuple

from kmeta.errors import FormatError
from kmeta.formats.compiled import CORE
from kmeta.formats.control_schemas import (
    CONTROL_KEY,
    CONTROL_MESSAGES,
    CONTROL_TYPE_NAMES,
    END_TXN_MARKER,
)
from kmeta.formats.field_bytes import Masked
from kmeta.formats.metadata_schemas import METADATA_MESSAGES
from kmeta.formats.primitives import derive_struct, read_uvarint
from kmeta.formats.readergen import body_program, message_reader
from kmeta.formats.schema import Message


class Payload(NamedTuple):
    """A decoded record: Kafka's type name, its version, the fields, and any problem."""

    type: str
    version: int | None
    data: Any
    finding: tuple[str, str] | None = None
    api_key: int | None = None
    #: Secrets in ``data`` were hidden (``kmeta.ops.redact.hide_secrets``): the bytes of
    #: the value each view shows masked.
    redacted: tuple[Masked, ...] = ()


#: Payloads of recent small metadata values, by their bytes: a busy cluster's log repeats
#: its records (the same ISR shrinking and expanding back), and a 4,096-entry memo spares
#: two thirds of the decoding of the generated benchmark log.  Emptied when full.
_DECODED: dict[bytes, Payload] = {}
_DECODED_LIMIT = 4096
_DECODED_VALUE = 512  # bytes: larger values are decoded each time


def decode_metadata(value: bytes | None) -> Payload:
    """Decode one metadata record value; never raises for bad bytes.  Equal values give
    the same Payload object: callers treat payload data as read-only."""
    if value == NOOP_VALUE:
        return _NOOP_PAYLOAD
    payload = _DECODED.get(value) if type(value) is bytes else None
    if payload is None:
        payload = decode_framed(value, METADATA_MESSAGES, "metadata")
        if type(value) is bytes and len(value) <= _DECODED_VALUE:
            if len(_DECODED) >= _DECODED_LIMIT:
                _DECODED.clear()
            _DECODED[value] = payload
    return payload


def decode_framed(value: bytes | None, messages: dict[int, Message], what: str,
                  unknown: str = "F004", broken: str = "F005") -> Payload:
    """A value framed as ``AbstractApiMessageSerde`` writes it (frame version 1, apiKey,
    version, body), read with the schema ``messages`` has for its apiKey.  ``unknown`` is
    the code of an apiKey or version kmeta does not know, ``broken`` that of a bad frame
    or body; ``what`` names the log in their messages."""
    if value is None:
        return Payload("UNKNOWN", None, None, (broken, f"{what} record has a null value"))
    if len(value) > 3 and value[0] < 0x80 and value[1] < 0x80 and value[2] < 0x80:
        # apiKey and version in a byte each, as in every record Kafka writes today
        frame, api_key, version, pos = value[0], value[1], value[2], 3
    else:
        try:
            frame, pos = read_uvarint(value, 0)
            api_key, pos = read_uvarint(value, pos)
            version, pos = read_uvarint(value, pos)
        except (IndexError, FormatError):
            return _raw_metadata(value, None, None, broken,
                                 f"{what} record frame is truncated")
    if frame != 1:
        return _raw_metadata(value, api_key, version, broken,
                             f"{what} frame version {frame} is not 1")
    message = messages.get(api_key)
    if message is None:
        return _raw_metadata(value, api_key, version, unknown,
                             f"unknown {what} record apiKey {api_key} (version {version})")
    if not message.supports(version):
        return _raw_metadata(value, api_key, version, unknown,
                             f"{message.type_name} version {version} is not in Kafka's "
                             f"schemas known to kmeta ({message.valid_versions})")
    data, err = read_body(message, version, value, pos)
    if err:
        return _raw_metadata(value, api_key, version, broken,
                             f"{message.type_name} v{version}: {err}", message.type_name)
    return Payload(message.type_name, version, data, None, api_key)


#: The compiled twin of the generated body readers (formats.compiled), or None.
_compiled_body = CORE.decode_body if CORE is not None else None


def read_body(message: Message, version: int, buf: bytes, pos: int) -> tuple[Any, str | None]:
    """The fields of ``message`` at ``version`` from ``buf[pos:]``, or the problem."""
    if _compiled_body is not None:
        data = _compiled_body(body_program(message, version), buf, pos)
        if data is not None:
            return data, None
    try:
        data, end = message_reader(message, version)(buf, pos)
    except FormatError as e:
        return None, f"{e.message} at byte {e.position}"
    except (IndexError, struct.error):
        return None, "body ends early"
    if end != len(buf):
        return None, f"{len(buf) - end} bytes after the end of the body"
    return data, None


def _raw_metadata(value: bytes, api_key: int | None, version: int | None, code: str,
                  message: str, type_name: str = "UNKNOWN") -> Payload:
    data = {"apiKey": api_key, "version": version, "hex": value.hex()}
    return Payload(type_name, version, data, (code, message), api_key)


# The two fixed layouts a control record starts with, derived from their declarations:
# construct's own parse cost 20 µs a record (a LeaderChange in every epoch of a log).
_CONTROL_KEY = derive_struct(CONTROL_KEY)
_END_TXN_MARKER = derive_struct(END_TXN_MARKER)


def decode_control(key: bytes | None, value: bytes | None) -> Payload:
    """Decode a record of a control batch."""
    if key is None or len(key) < 4:
        return Payload("UNKNOWN", None, {"key": _hex(key), "value": _hex(value)},
                       ("F007", "control record key is shorter than 4 bytes"))
    key_version, ctype = _CONTROL_KEY.unpack_from(key)
    name = CONTROL_TYPE_NAMES.get(ctype)
    if name is None or key_version < 0:
        return Payload(f"UNKNOWN({ctype})", None, {"key": _hex(key), "value": _hex(value)},
                       ("F008", f"unknown control record type {ctype} "
                                f"(key version {key_version})"))
    if value is None:
        return Payload(name, None, None, ("F007", f"{name} control record has a null value"))
    if ctype in (0, 1):
        if len(value) < 6:
            return Payload(name, None, {"hex": value.hex()},
                           ("F007", f"{name} marker value is shorter than 6 bytes"))
        version, epoch = _END_TXN_MARKER.unpack_from(value)
        return Payload(name, version, {"version": version, "coordinatorEpoch": epoch})
    message = CONTROL_MESSAGES.get(ctype)
    if message is None or len(value) < 2:
        return Payload(name, None, {"hex": value.hex()},
                       ("F007", f"{name} control record value is too short"))
    (version,) = struct.unpack_from(">h", value, 0)
    if not message.supports(version):
        return Payload(name, version, {"hex": value.hex()},
                       ("F008", f"{name} control record version {version} is not in Kafka's "
                                f"schemas known to kmeta ({message.valid_versions})"))
    data, err = read_body(message, version, value, 0)
    if err:
        return Payload(name, version, {"hex": value.hex()}, ("F007", f"{name}: {err}"))
    return Payload(name, version, data)


def _hex(b: bytes | None) -> str | None:
    return None if b is None else b.hex()


def decode_opaque(key: bytes | None, value: bytes | None, decoder: str) -> Payload:
    """Keys and values of ordinary topics, shown as base64 (raw), text (utf8) or hex."""
    if decoder == "utf8":
        conv = _utf8
    elif decoder == "hex":
        conv = _hex
    else:
        conv = _b64
    return Payload("RAW", None, {"key": conv(key), "value": conv(value)})


def _b64(b: bytes | None) -> str | None:
    return None if b is None else base64.b64encode(b).decode("ascii")


def _utf8(b: bytes | None) -> str | None:
    return None if b is None else bytes(b).decode("utf-8", "replace")


# ---------------------------------------------------------------------------- building

_BY_TYPE = {m.type_name: m for m in METADATA_MESSAGES.values()}
_CONTROL_IDS = {name: ctype for ctype, name in CONTROL_TYPE_NAMES.items()}


def metadata_message(type_name: str) -> Message:
    """The schema of a metadata record type by Kafka's enum name (``PARTITION_RECORD``)."""
    try:
        return _BY_TYPE[type_name]
    except KeyError:
        raise ValueError(f"unknown metadata record type {type_name!r}") from None


def encode_metadata(type_name: str, version: int, data: dict[str, Any]) -> bytes:
    """A metadata record value: frame version 1, apiKey, version, body."""

    return encode_framed(metadata_message(type_name), version, data)


def encode_framed(message: Message, version: int, data: dict[str, Any]) -> bytes:
    """A value framed as ``AbstractApiMessageSerde`` writes it (see :func:`decode_framed`)."""
    from kmeta.formats.primitives import encode_uvarint
    from kmeta.formats.schema import message_construct

    if message.api_key is None or not message.supports(version):
        raise ValueError(f"{message.type_name} has no version {version}")
    return (encode_uvarint(1) + encode_uvarint(message.api_key) + encode_uvarint(version)
            + message_construct(message, version).build(data))


#: The value of a NoOpRecord, the controller's heartbeat and most of a quiet log: decoded
#: and written without going through the codec.
NOOP_VALUE = encode_metadata("NO_OP_RECORD", 0, {})
_NOOP_PAYLOAD = Payload("NO_OP_RECORD", 0, {}, None, metadata_message("NO_OP_RECORD").api_key)


def _metadata_program(api_key: int, version: int) -> tuple[str, Any] | None:
    """The type name and body program of a metadata value at ``api_key`` and ``version``
    (None: not one kmeta knows), remembered in _PROGRAMS for the compiled decoding."""
    message = METADATA_MESSAGES.get(api_key)
    entry = None
    if message is not None and message.supports(version):
        entry = (message.type_name, body_program(message, version))
    _PROGRAMS[api_key * 256 + version] = entry
    return entry


def _plain_change_versions() -> int:
    """A bit for each PartitionChangeRecord version whose body is partitionId (int32),
    topicId (uuid), then tagged fields among which isr (tag 0, a nullable array of int32,
    default null) and leader (tag 1, int32, default -2): the values the compiled replay
    reads straight from their bytes when they carry no other (see ``change_fields`` in
    _runs.c).  Read from the body programs, so that a schema that differs reads none."""
    from kmeta.formats.readergen import OP_ARRAY, OP_FIXED, OP_UUID

    message = metadata_message("PARTITION_CHANGE_RECORD")
    int32 = (OP_FIXED, ord("i"))
    bits = 0
    for version in range(64):
        if not message.supports(version):
            continue
        fields, tags, flexible = body_program(message, version)
        if flexible and fields == (("partitionId", int32), ("topicId", (OP_UUID,))) and \
                (tags or {}).get(0) == ("isr", (OP_ARRAY, True, True, int32), None) and \
                (tags or {}).get(1) == ("leader", int32, -2):
            bits |= 1 << version
    return bits


#: What :func:`_metadata_program` has found, by ``apiKey * 256 + version``.
_PROGRAMS: dict[int, tuple[str, Any] | None] = {}
#: How the compiled core decodes metadata values as :func:`decode_metadata` does, into
#: the same memo (``_DECODED``, given with each call: the tests replace it): the function
#: itself (for the values it leaves to it), the NoOp's value and payload, the programs and
#: what finds one, the payload's class, the memo's limit and its longest value; then the
#: PartitionChangeRecord's apiKey and the versions it reads from their bytes.
DECODER = (decode_metadata, NOOP_VALUE, _NOOP_PAYLOAD, _PROGRAMS, _metadata_program,
           Payload, _DECODED_LIMIT, _DECODED_VALUE,
           metadata_message("PARTITION_CHANGE_RECORD").api_key, _plain_change_versions())


def metadata_payload() -> Callable[[Any, dict[bytes, Payload], tuple], Payload] | None:
    """:func:`decode_metadata` in the compiled core, called as ``f(value, _DECODED,
    DECODER)``: the same payload, into the same memo, without a Python call for a value
    it has met (tests/test_image_fast.py proves them one).  None where bodies are read by
    the Python reference (``_compiled_body``: no core, or the tests' pure mode)."""
    return CORE.metadata_payload if CORE is not None and _compiled_body is not None \
        else None


def encode_control(type_name: str, data: dict[str, Any]) -> tuple[bytes, bytes]:
    """Key and value of a control record; ``data`` holds the message's own fields."""
    from kmeta.formats.schema import message_construct

    ctype = _CONTROL_IDS[type_name]
    key = CONTROL_KEY.build({"version": 0, "type": ctype})
    if ctype in (0, 1):
        return key, END_TXN_MARKER.build({"version": data.get("version", 0),
                                          "coordinatorEpoch": data["coordinatorEpoch"]})
    message = CONTROL_MESSAGES[ctype]
    version = data.get("version", 0)
    return key, message_construct(message, version).build(data)
