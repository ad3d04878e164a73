"""Java's rules for the text of Kafka's small files: whitespace, integers, UTF-8 and line breaks as Java reads them, and the helpers every text format shares."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, NamedTuple

from kmeta.errors import FormatError
from kmeta.formats.filenames import OFFSET_CHECKPOINTS
from kmeta.formats.primitives import (
    INT32_MAX,
    INT64_MAX,
    uuid_to_str,
)

#: The only checkpoint-file version Kafka has ever written (and the only one it reads).
CHECKPOINT_VERSION = 0

#: The file names that hold offset checkpoints (-> which one), as :mod:`filenames` knows them.
OFFSET_CHECKPOINT_FILES = OFFSET_CHECKPOINTS

# Java's ``\s`` (without UNICODE_CHARACTER_CLASS) and ``Integer/Long.parseInt`` syntax.
_JAVA_WS = " \t\n\x0b\f\r"
_JAVA_WS_RUN = re.compile("[ \t\n\x0b\f\r]+")
_JAVA_INT = re.compile(r"[+-]?[0-9]+\Z")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_KAFKA_UUID = re.compile(r"[A-Za-z0-9_-]{22}(?:==)?\Z")




class _Line(NamedTuple):
    number: int  # 1-based
    position: int  # byte offset of the line's first byte
    text: str


def _decode_utf8(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise FormatError(f"{what}: line {line}: bytes are not valid UTF-8",
                          position=e.start) from None


def _lines(text: str, latin1: bool = False) -> list[_Line]:
    """Split like Java's ``BufferedReader.readLine``: ``\\n``, ``\\r`` or ``\\r\\n`` end a
    line; a last line without a terminator still counts, an empty remainder does not.
    Positions count UTF-8 bytes, or characters for text decoded as ISO-8859-1."""
    out: list[_Line] = []
    start = 0
    pos = 0
    number = 1
    for m in _LINE_BREAK.finditer(text):
        chunk = text[start:m.start()]
        out.append(_Line(number, pos, chunk))
        size = len(chunk) if latin1 else len(chunk.encode("utf-8", "surrogatepass"))
        pos += size + (m.end() - m.start())
        start = m.end()
        number += 1
    if start < len(text):
        out.append(_Line(number, pos, text[start:]))
    return out


#: Most digits an int64 has (after leading zeros, which Java's parser accepts).
_MAX_DIGITS = len(str(INT64_MAX))


def _shown(text: str, limit: int = 40) -> str:
    """A value quoted for a message, cut short: a hostile line can be megabytes long."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text)} chars)"


def _java_int(text: str, lo: int, hi: int, what: str, line: _Line) -> int:
    if not _JAVA_INT.match(text):
        raise FormatError(f"{what}: line {line.number}: {_shown(text)} is not a number",
                          position=line.position)
    # Judge the length before int(): Python refuses to convert more than 4300 digits
    # (ValueError), and anything past 19 significant digits overflows any Java type.
    digits = text.lstrip("+-").lstrip("0")
    value = int(text) if len(digits) <= _MAX_DIGITS else None
    if value is None or not lo <= value <= hi:
        java = "Integer.parseInt" if hi == INT32_MAX else "Long.parseLong"
        kind = "int32" if hi == INT32_MAX else "int64"
        raise FormatError(f"{what}: line {line.number}: {_shown(text)} is out of range "
                          f"for an {kind} (Kafka's {java} fails with NumberFormatException)",
                          position=line.position)
    return value


def _java_split(line: str) -> list[str]:
    """Java's ``Pattern.compile("\\\\s+").split(line)``: a leading empty field is kept,
    trailing empty fields are dropped."""
    parts = _JAVA_WS_RUN.split(line)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _as_bytes(data: bytes | bytearray | memoryview) -> bytes:
    return data if isinstance(data, bytes) else bytes(data)


def _normalize_uuid(text: str) -> str | None:
    """Kafka's ``Uuid.fromString`` as a check; returns the canonical 22-character form."""
    if not isinstance(text, str) or not _KAFKA_UUID.match(text):
        return None
    try:
        raw = base64.urlsafe_b64decode(text[:22] + "==")
    except (binascii.Error, ValueError):
        return None
    if len(raw) != 16:
        return None
    return uuid_to_str(raw)


def _check_range(value: Any, lo: int, hi: int, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], not {value!r}")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
