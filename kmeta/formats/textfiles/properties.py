"""``meta.properties`` and ``java.util.Properties`` files as Kafka reads and writes them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from kmeta.errors import FormatError
from kmeta.formats.primitives import (
    INT32_MAX,
    INT32_MIN,
)
from kmeta.formats.textfiles.javatext import (
    _as_bytes,
    _check_range,
    _java_int,
    _Line,
    _lines,
    _normalize_uuid,
)

META_VERSION, META_CLUSTER_ID, META_NODE_ID = "version", "cluster.id", "node.id"
META_BROKER_ID, META_DIRECTORY_ID = "broker.id", "directory.id"
_META_KNOWN = {META_VERSION, META_CLUSTER_ID, META_NODE_ID, META_BROKER_ID, META_DIRECTORY_ID}


def _java_string_hash(text: str) -> int:
    h = 0
    units = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & 0xFFFFFFFF
    return h


def java_properties_order(keys: Iterable[str]) -> tuple[str, ...]:
    """The order ``Properties.store`` writes ``keys`` (inserted in the given order) on Java 9+,
    where ``Properties`` is backed by a ``ConcurrentHashMap`` with a 16-bucket table: by
    bucket index of the spread hash, then by insertion order within a bucket.  Exact for
    the handful of keys Kafka writes (the table does not grow before 12 keys)."""
    keys = list(keys)
    size = 16
    while len(keys) > size * 3 // 4:
        size *= 2
    buckets: dict[int, list[str]] = {}
    for k in keys:
        h = _java_string_hash(k)
        spread = (h ^ (h >> 16)) & 0x7FFFFFFF
        buckets.setdefault(spread & (size - 1), []).append(k)
    return tuple(k for b in sorted(buckets) for k in buckets[b])


@dataclass(frozen=True, slots=True)
class MetaProperties:
    """``meta.properties`` of a log directory.

    ``node_id`` comes from ``node.id`` in version 1 and ``broker.id`` in version 0.
    ``comments`` are the comment lines (text after ``#``), written first, as Kafka does
    (an empty one, then the date).  ``extra`` keeps properties Kafka does not read, sorted
    by key.
    ``key_order`` is ``None`` when the keys are in the order Kafka writes them, else the
    order found in the file (which also says which keys are present, e.g. a version-0
    file without a ``version`` key).
    """

    version: int = 1
    cluster_id: str | None = None
    node_id: int | None = None
    directory_id: str | None = None
    comments: tuple[str, ...] = ()
    extra: tuple[tuple[str, str], ...] = ()
    key_order: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.version not in (0, 1):
            raise ValueError(f"meta.properties version must be 0 or 1, not {self.version!r}")
        if self.version == 1 and (self.cluster_id is None or self.node_id is None):
            raise ValueError("meta.properties version 1 needs cluster_id and node_id")
        if self.node_id is not None:
            _check_range(self.node_id, INT32_MIN, INT32_MAX, "node_id")
        if self.directory_id is not None:
            uuid = _normalize_uuid(self.directory_id)
            if uuid is None:
                raise ValueError(f"directory_id is not a Kafka UUID: {self.directory_id!r}")
            object.__setattr__(self, "directory_id", uuid)
        object.__setattr__(self, "comments", tuple(self.comments))
        for c in self.comments:
            if "\n" in c or "\r" in c or any(ord(ch) > 0xFF for ch in c):
                raise ValueError(f"a comment must be one line of Latin-1 text: {c!r}")
        object.__setattr__(self, "extra", tuple(sorted((k, v) for k, v in self.extra)))
        names = [k for k, _ in self.extra]
        if len(set(names)) != len(names) or set(names) & self._typed_keys():
            raise ValueError("extra holds a duplicate key or one of the typed keys")
        if self.key_order is not None:
            order = tuple(self.key_order)
            if len(set(order)) != len(order) or not set(order) <= self._available_keys():
                raise ValueError(f"key_order {order!r} names a key without a value")
            needed = self._available_keys() - ({META_VERSION} if self.version == 0 else set())
            if not needed <= set(order):
                raise ValueError(f"key_order {order!r} leaves out a key that has a value")
            if order == self.canonical_order():
                order = None
            object.__setattr__(self, "key_order", order)

    def _id_key(self) -> str:
        return META_NODE_ID if self.version == 1 else META_BROKER_ID

    def _typed_keys(self) -> set[str]:
        return {META_VERSION, META_CLUSTER_ID, self._id_key(), META_DIRECTORY_ID}

    def _values(self) -> dict[str, str]:
        values = {META_VERSION: str(self.version)}
        if self.cluster_id is not None:
            values[META_CLUSTER_ID] = self.cluster_id
        if self.node_id is not None:
            values[self._id_key()] = str(self.node_id)
        if self.directory_id is not None:
            values[META_DIRECTORY_ID] = self.directory_id
        values.update(self.extra)
        return values

    def _available_keys(self) -> set[str]:
        return set(self._values())

    def canonical_order(self) -> tuple[str, ...]:
        """The key order Kafka's ``toProperties()`` + ``store`` produce for these values."""
        inserted = [META_VERSION]
        if self.cluster_id is not None:
            inserted.append(META_CLUSTER_ID)
        if self.node_id is not None:
            inserted.append(self._id_key())
        if self.directory_id is not None:
            inserted.append(META_DIRECTORY_ID)
        inserted.extend(k for k, _ in self.extra)
        return java_properties_order(inserted)

    def items(self) -> list[tuple[str, str]]:
        """The properties in the order they are written."""
        values = self._values()
        order = self.key_order if self.key_order is not None else self.canonical_order()
        return [(k, values[k]) for k in order]

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "cluster_id": self.cluster_id,
            "node_id": self.node_id,
            "directory_id": self.directory_id,
            "extra": dict(self.extra),
            "comments": list(self.comments),
        }


class _Prop(NamedTuple):
    key: str
    value: str
    line: _Line


_PROP_WS = " \t\f"


def _properties_lines(text: str) -> tuple[list[_Line], list[tuple[_Line, str]]]:
    """Java ``Properties.load`` line reading: returns (comment lines, logical lines).

    Natural lines end at ``\\n``, ``\\r`` or ``\\r\\n``; leading blanks are skipped; a line
    whose first character is ``#`` or ``!`` is a comment; a line ending in an odd number of
    backslashes continues on the next (whose leading blanks are skipped).
    """
    comments: list[_Line] = []
    logical: list[tuple[_Line, str]] = []
    natural = _lines(text, latin1=True)
    i = 0
    while i < len(natural):
        line = natural[i]
        body = line.text.lstrip(_PROP_WS)
        i += 1
        if not body:
            continue
        if body[0] in "#!":
            comments.append(line)
            continue
        parts = []
        while True:
            trailing = len(body) - len(body.rstrip("\\"))
            if trailing % 2 == 1:
                parts.append(body[:-1])
                if i >= len(natural):
                    break
                body = natural[i].text.lstrip(_PROP_WS)
                i += 1
                continue
            parts.append(body)
            break
        logical.append((line, "".join(parts)))
    return comments, logical


def _unescape(text: str, line: _Line, what: str = "meta.properties") -> str:
    out = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        i += 1
        if c != "\\":
            out.append(c)
            continue
        if i >= n:
            break  # a lone trailing backslash (continuation into end of file) is dropped
        c = text[i]
        i += 1
        if c == "u":
            digits = text[i:i + 4]
            if len(digits) != 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise FormatError(f"{what}: line {line.number}: malformed \\uxxxx escape",
                                  position=line.position)
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append({"t": "\t", "r": "\r", "n": "\n", "f": "\f"}.get(c, c))
    return "".join(out)


def _split_property(logical: str, line: _Line, what: str = "meta.properties") -> _Prop:
    n = len(logical)
    i = 0
    key_end = n
    value_start = n
    has_sep = False
    while i < n:
        c = logical[i]
        if c == "\\":
            i += 2
            continue
        if c in "=:":
            key_end, value_start, has_sep = i, i + 1, True
            break
        if c in _PROP_WS:
            key_end, value_start = i, i + 1
            break
        i += 1
    j = value_start
    while j < n and logical[j] in _PROP_WS:
        j += 1
    if not has_sep and j < n and logical[j] in "=:":
        j += 1
    while j < n and logical[j] in _PROP_WS:
        j += 1
    return _Prop(_unescape(logical[:key_end], line, what), _unescape(logical[j:], line, what),
                 line)


def _join_surrogates(text: str) -> str:
    """``\\uD83D\\uDE00`` escapes decode to two halves; make them one code point (as Java's
    UTF-16 strings would behave) and refuse a lone half."""
    try:
        return text.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        raise ValueError("lone surrogate") from None


def parse_properties(data: bytes | bytearray | memoryview, what: str) -> dict[str, str]:
    """Any Java properties file (a broker's ``server.properties``) as ``Properties.load``
    reads it: keys to values, the last of a repeated key winning.  ``what`` names the file
    in a FormatError."""
    _, logical = _properties_lines(_as_bytes(data).decode("latin-1"))
    out: dict[str, str] = {}
    for line, body in logical:
        prop = _split_property(body, line, what)
        out[prop.key] = prop.value
    return out


def parse_meta_properties(data: bytes | bytearray | memoryview) -> MetaProperties:
    """Parse ``meta.properties`` as Kafka does: ``Properties.load`` from the raw bytes, which
    reads them as ISO-8859-1 (so byte offsets and character offsets coincide)."""
    what = "meta.properties"
    text = _as_bytes(data).decode("latin-1")
    comment_lines, logical = _properties_lines(text)
    props: dict[str, _Prop] = {}
    for line, body in logical:
        prop = _split_property(body, line)
        try:
            prop = _Prop(_join_surrogates(prop.key), _join_surrogates(prop.value), line)
        except ValueError:
            raise FormatError(f"{what}: line {line.number}: \\u escape makes a lone UTF-16 "
                              "surrogate", position=line.position) from None
        props.pop(prop.key, None)  # a repeated key: the last one wins, in the last place
        props[prop.key] = prop

    def required_int(key: str) -> int:
        prop = props[key]
        return _java_int(prop.value, INT32_MIN, INT32_MAX, f"{what} {key}", prop.line)

    if META_VERSION in props:
        v = props[META_VERSION]
        version = _java_int(_java_trim(v.value), INT32_MIN, INT32_MAX,
                            f"{what} version", v.line)
        if version not in (0, 1):
            raise FormatError(f"{what}: line {v.line.number}: unknown meta.properties version "
                              f"{version}", position=v.line.position)
    else:
        version = 0
    id_key = META_NODE_ID if version == 1 else META_BROKER_ID
    if version == 1:
        for key in (META_CLUSTER_ID, META_NODE_ID):
            if key not in props:
                raise FormatError(f"{what}: version 1 needs {key}", position=0)
    node_id = required_int(id_key) if id_key in props else None
    directory_id = None
    if META_DIRECTORY_ID in props:
        d = props[META_DIRECTORY_ID]
        directory_id = _normalize_uuid(d.value)
        if directory_id is None:
            raise FormatError(f"{what}: line {d.line.number}: directory.id is not a Kafka "
                              f"UUID: {d.value!r}", position=d.line.position)
    cluster = props.get(META_CLUSTER_ID)
    typed = {META_VERSION, META_CLUSTER_ID, id_key, META_DIRECTORY_ID}
    extra = tuple((k, p.value) for k, p in props.items() if k not in typed)
    comments = []
    for line in comment_lines:
        body = line.text.lstrip(_PROP_WS)
        comments.append(body[1:])
    return MetaProperties(
        version=version,
        cluster_id=cluster.value if cluster is not None else None,
        node_id=node_id,
        directory_id=directory_id,
        comments=tuple(comments),
        extra=extra,
        key_order=tuple(props),
    )


def _java_trim(text: str) -> str:
    """``String.trim()``: drop leading and trailing characters up to U+0020."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def _escape(text: str, is_key: bool) -> str:
    """``Properties.saveConvert`` for a ``Writer`` (no ``\\u`` escaping of Latin-1), plus
    ``\\uXXXX`` for characters beyond Latin-1 so the file stays readable as ISO-8859-1."""
    out = []
    for i, c in enumerate(text):
        if c == "\\":
            out.append("\\\\")
        elif c == " ":
            out.append("\\ " if i == 0 or is_key else " ")
        elif c in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[c])
        elif c in "=:#!":
            out.append("\\" + c)
        elif ord(c) > 0xFF:
            units = c.encode("utf-16-be", "surrogatepass")
            out.extend(f"\\u{units[k]:02X}{units[k + 1]:02X}" for k in range(0, len(units), 2))
        else:
            out.append(c)
    return "".join(out)


def build_meta_properties(value: MetaProperties) -> bytes:
    """Render as ``Properties.store`` does (``#comment`` lines, then ``key=value``)."""
    lines = [f"#{c}\n" for c in value.comments]
    lines.extend(f"{_escape(k, True)}={_escape(v, False)}\n" for k, v in value.items())
    return "".join(lines).encode("latin-1")


__all__ = ["MetaProperties", "build_meta_properties", "java_properties_order",
           "parse_meta_properties", "parse_properties"]
