"""A declarative language for Kafka's versioned messages, and the codecs derived from it.

Kafka describes every metadata record and KRaft control message in a JSON schema: fields
with a type, the versions they exist in, nullable and tagged versions.  kmeta writes the
same facts once, as :class:`Message` objects (see ``metadata_schemas.py`` and
``control_schemas.py``), and derives from each (message, version):

* a construct ``Construct`` that parses *and* builds the body (the definition), and
* a fast decoder (Python source generated from the declaration: ``readergen.py``)
  used on hot paths; tests prove both agree.

Encoding rules (Kafka's ``MessageGenerator``): in flexible versions strings, bytes and
arrays carry an unsigned varint length + 1 (0 = null) and every struct ends with a tagged
field section; in older versions lengths are int16 (strings) or int32 (bytes, arrays), -1
for null.  Decoded values use Kafka's JSON field names (camelCase) so dumps can be
compared with ``kafka-dump-log.sh`` field by field.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any

import construct as cs

from kmeta.formats.primitives import (
    ZERO_UUID,
    KafkaUuid,
    UVarInt,
    encode_uvarint,
)

# ---------------------------------------------------------------------------- versions


@dataclass(frozen=True, slots=True)
class Versions:
    lo: int
    hi: int  # inclusive; 32767 for "N+"

    def __contains__(self, v: int) -> bool:
        return self.lo <= v <= self.hi

    @property
    def empty(self) -> bool:
        return self.lo > self.hi


NONE = Versions(1, 0)


@cache
def versions(spec: str | None) -> Versions:
    """Parse Kafka's version range syntax: ``"0+"``, ``"1-3"``, ``"2"`` or ``"none"``."""
    if spec is None or spec == "none":
        return NONE
    if spec.endswith("+"):
        return Versions(int(spec[:-1]), 32767)
    if "-" in spec:
        lo, hi = spec.split("-")
        return Versions(int(lo), int(hi))
    return Versions(int(spec), int(spec))


# ---------------------------------------------------------------------------- declarations

PRIMITIVES = ("bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64",
              "uuid", "string", "bytes", "records")


@dataclass(frozen=True)
class Field:
    """One field of a message, as Kafka's schema declares it.

    ``type`` is a primitive name, ``"[]T"`` for an array of primitive or struct ``T``, or a
    struct name.  ``fields`` holds the members when the type is a struct (or array of one).
    ``sensitive`` marks values kmeta redacts unless ``--show-secrets`` is given.
    """

    name: str
    type: str
    versions: str = "0+"
    nullable: str | None = None
    tagged: str | None = None
    tag: int | None = None
    default: Any = None
    fields: tuple[Field, ...] = ()
    sensitive: bool = False

    @property
    def json_name(self) -> str:
        return self.name[:1].lower() + self.name[1:]

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.element not in PRIMITIVES

    def default_value(self) -> Any:
        """The value Kafka assumes when a tagged field is absent (and omits from JSON)."""
        if self.default == "null":
            return None
        if self.is_array:
            return []
        t = self.type
        if self.default is not None:
            if t == "bool":
                return str(self.default).lower() == "true"
            if t == "float64":
                return float(self.default)
            if t in ("string",):
                return str(self.default)
            if t == "uuid":
                return ZERO_UUID
            return int(str(self.default), 0)
        return {"bool": False, "float64": 0.0, "string": "", "bytes": b"", "records": None,
                "uuid": ZERO_UUID}.get(t, 0 if t in PRIMITIVES else None)


def F(name: str, type: str, versions: str = "0+", **kw: Any) -> Field:  # noqa: A002
    """Shorthand used by the schema tables."""
    if "fields" in kw:
        kw["fields"] = tuple(kw["fields"])
    return Field(name, type, versions, **kw)


@dataclass(frozen=True, eq=False)
class Message:
    """A versioned message: a metadata record type or a KRaft control message.

    Compared and hashed by identity (``eq=False``): each message is declared once, and
    the codec caches keyed by it must not hash its whole field tree on every lookup.
    """

    name: str
    api_key: int | None
    valid_versions: str
    flexible_versions: str
    fields: tuple[Field, ...] = field(default_factory=tuple)

    @cached_property
    def type_name(self) -> str:
        """Kafka's enum spelling, e.g. ``PartitionChangeRecord`` -> ``PARTITION_CHANGE_RECORD``."""
        return to_upper_snake(self.name)

    @cached_property
    def _valid(self) -> range:
        v = versions(self.valid_versions)
        return range(v.lo, v.hi + 1)

    def supports(self, version: int) -> bool:
        return version in self._valid

    def flexible(self, version: int) -> bool:
        return version in versions(self.flexible_versions)

    def since(self, json_name: str) -> int:
        """The first version that carries the top-level field ``json_name``."""
        for f in self.fields:
            if f.json_name == json_name:
                return versions(f.versions).lo
        raise KeyError(f"{self.name} has no field {json_name!r}")


def to_upper_snake(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0 and not name[i - 1].isupper():
            out.append("_")
        out.append(ch.upper())
    return "".join(out)


def M(name: str, api_key: int | None, valid: str, flexible: str, *fields: Field) -> Message:
    return Message(name, api_key, valid, flexible, tuple(fields))


# ---------------------------------------------------------------------------- construct


def _fixed(t: str) -> cs.Construct:
    return {
        "bool": cs.Flag,
        "int8": cs.Int8sb,
        "int16": cs.Int16sb,
        "uint16": cs.Int16ub,
        "int32": cs.Int32sb,
        "uint32": cs.Int32ub,
        "int64": cs.Int64sb,
        "float64": cs.Float64b,
        "uuid": KafkaUuid(),
    }[t]


class _Length(cs.Construct):
    """A length prefix: int16/int32 (-1 null) or, when flexible, uvarint length+1 (0 null)."""

    def __init__(self, flexible: bool, width: int):
        super().__init__()
        self.flexible = flexible
        self.fixed = cs.Int16sb if width == 2 else cs.Int32sb

    def _parse(self, stream, context, path):
        if self.flexible:
            return UVarInt(5)._parse(stream, context, path) - 1
        return self.fixed._parse(stream, context, path)

    def _build(self, obj, stream, context, path):
        if self.flexible:
            return UVarInt(5)._build(obj + 1, stream, context, path)
        return self.fixed._build(obj, stream, context, path)


class _Nullable(cs.Construct):
    """A length-prefixed value (string, bytes, array) that may be null (length -1)."""

    def __init__(self, length: _Length, item: Callable[[int], cs.Construct] | None,
                 kind: str, nullable: bool):
        super().__init__()
        self.length = length
        self.item = item  # element construct for arrays; None for strings/bytes
        self.kind = kind
        self.nullable = nullable

    def _parse(self, stream, context, path):
        n = self.length._parse(stream, context, path)
        if n < 0:
            if not self.nullable:
                raise cs.ExplicitError(f"null {self.kind} in a non-nullable field", path=path)
            return None
        if self.kind == "array":
            item = self.item(0)
            return [item._parsereport(stream, context, path) for _ in range(n)]
        data = cs.stream_read(stream, n, path)
        return data.decode("utf-8") if self.kind == "string" else data

    def _build(self, obj, stream, context, path):
        if obj is None:
            if not self.nullable:
                raise cs.ExplicitError(f"null {self.kind} in a non-nullable field", path=path)
            self.length._build(-1, stream, context, path)
            return obj
        if self.kind == "array":
            self.length._build(len(obj), stream, context, path)
            item = self.item(0)
            for x in obj:
                item._build(x, stream, context, path)
            return obj
        data = obj.encode("utf-8") if self.kind == "string" else bytes(obj)
        self.length._build(len(data), stream, context, path)
        cs.stream_write(stream, data, len(data), path)
        return obj


class StructBody(cs.Construct):
    """The fields of one struct at one version, in order, then (flexible) its tagged fields.

    Parses into a dict keyed by Kafka's JSON names.  Unknown tags are kept raw under
    ``"_unknownTaggedFields"`` as ``[{"tag": n, "data": bytes}]`` and rebuilt unchanged.
    """

    def __init__(self, fields: tuple[Field, ...], version: int, flexible: bool):
        super().__init__()
        self.flexible = flexible
        self.plain: list[tuple[Field, cs.Construct]] = []
        self.tagged: dict[int, tuple[Field, cs.Construct]] = {}
        for f in fields:
            if version not in versions(f.versions):
                continue
            if flexible and f.tagged and version in versions(f.tagged):
                # Tagged values are always encoded with flexible rules.
                self.tagged[f.tag] = (f, field_construct(f, version, True))
            else:
                self.plain.append((f, field_construct(f, version, flexible)))

    def _parse(self, stream, context, path):
        out: dict[str, Any] = {}
        for f, con in self.plain:
            out[f.json_name] = con._parsereport(stream, context, f"{path} -> {f.json_name}")
        if self.flexible:
            n = UVarInt(5)._parse(stream, context, path)
            unknown = []
            for _ in range(n):
                tag = UVarInt(5)._parse(stream, context, path)
                size = UVarInt(5)._parse(stream, context, path)
                data = cs.stream_read(stream, size, path)
                if tag in self.tagged:
                    f, con = self.tagged[tag]
                    inner = io.BytesIO(data)
                    value = con._parsereport(inner, context, path)
                    if inner.tell() != len(data):
                        raise cs.ExplicitError(f"tagged field {tag} has "
                                               f"{len(data) - inner.tell()} stray bytes",
                                               path=path)
                    if value != f.default_value():
                        out[f.json_name] = value
                else:
                    unknown.append({"tag": tag, "data": data})
            if unknown:
                out["_unknownTaggedFields"] = unknown
        return out

    def _build(self, obj, stream, context, path):
        for f, con in self.plain:
            value = obj.get(f.json_name, f.default_value()) if f.default is not None or \
                f.is_array else obj[f.json_name]
            con._build(value, stream, context, f"{path} -> {f.json_name}")
        if self.flexible:
            items: list[tuple[int, bytes]] = []
            for tag, (f, con) in self.tagged.items():
                if f.json_name in obj and obj[f.json_name] != f.default_value():
                    items.append((tag, con.build(obj[f.json_name])))
            for u in obj.get("_unknownTaggedFields", ()):
                items.append((u["tag"], bytes(u["data"])))
            items.sort(key=lambda kv: kv[0])
            out = bytearray(encode_uvarint(len(items)))
            for tag, data in items:
                out += encode_uvarint(tag) + encode_uvarint(len(data)) + data
            cs.stream_write(stream, bytes(out), len(out), path)
        return obj


def field_construct(f: Field, version: int, flexible: bool) -> cs.Construct:
    nullable = version in versions(f.nullable)
    if f.is_array:
        if f.is_struct:
            elem = StructBody(f.fields, version, flexible)
        else:
            elem = _fixed(f.element) if f.element not in ("string", "bytes") else \
                _Nullable(_Length(flexible, 2 if f.element == "string" else 4), None,
                          f.element, False)
        return _Nullable(_Length(flexible, 4), lambda _v: elem, "array", nullable)
    if f.type == "string":
        return _Nullable(_Length(flexible, 2), None, "string", nullable)
    if f.type in ("bytes", "records"):
        return _Nullable(_Length(flexible, 4), None, "bytes", nullable)
    if f.is_struct:
        body = StructBody(f.fields, version, flexible)
        return _NullableStruct(body) if nullable else body
    return _fixed(f.type)


class _NullableStruct(cs.Construct):
    """A struct that may be null: an int8 marker (-1 null, 1 present), then the body."""

    def __init__(self, body: cs.Construct):
        super().__init__()
        self.body = body

    def _parse(self, stream, context, path):
        if cs.Int8sb._parse(stream, context, path) < 0:
            return None
        return self.body._parsereport(stream, context, path)

    def _build(self, obj, stream, context, path):
        if obj is None:
            cs.Int8sb._build(-1, stream, context, path)
            return obj
        cs.Int8sb._build(1, stream, context, path)
        self.body._build(obj, stream, context, path)
        return obj


@cache
def message_construct(message: Message, version: int) -> cs.Construct:
    """The construct that parses and builds ``message`` at ``version`` (body only)."""
    return StructBody(message.fields, version, message.flexible(version))


def sensitive_paths(message: Message) -> tuple[tuple[str, ...], ...]:
    """JSON-name paths of fields marked sensitive (for redaction)."""
    out: list[tuple[str, ...]] = []

    def walk(fields: tuple[Field, ...], prefix: tuple[str, ...]) -> None:
        for f in fields:
            p = prefix + (f.json_name,)
            if f.sensitive:
                out.append(p)
            if f.fields:
                walk(f.fields, p)
    walk(message.fields, ())
    return tuple(out)
