"""Fast decoders generated from the message declarations in :mod:`kmeta.formats.schema`.

A generic decoder walks a message's fields one closure call at a time; a real metadata
log holds millions of records, so kmeta instead writes, once per (message, version), the
Python source of a function that reads exactly that layout — consecutive fixed-size
fields with a single ``struct`` unpack, int arrays with one unpack, one-byte compact
lengths inline — and compiles it.  The declaration stays the single source of truth:
nothing here knows a record type, and ``tests/test_schemas.py`` proves the generated
readers agree with the construct definitions for every message at every version.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from functools import cache
from typing import Any

from kmeta.errors import FormatError
from kmeta.formats.primitives import read_uvarint, uuid_to_str
from kmeta.formats.schema import Field, Message, versions

Reader = Callable[[bytes, int], tuple[Any, int]]

_CODES = {"bool": "?", "int8": "b", "int16": "h", "uint16": "H", "int32": "i",
          "uint32": "I", "int64": "q", "float64": "d"}


def _tagged(buf: bytes, pos: int, out: dict[str, Any],
            table: dict[int, tuple[str, Reader, Any]]) -> int:
    """Read a tagged-field section into ``out``; Kafka omits fields equal to default."""
    n, pos = read_uvarint(buf, pos)
    unknown = None
    for _ in range(n):
        tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        end = pos + size
        if end > len(buf):
            raise FormatError(f"tagged field {tag} runs past the end of the record",
                              position=pos)
        entry = table.get(tag)
        if entry is None:
            if unknown is None:
                unknown = []
            unknown.append({"tag": tag, "data": bytes(buf[pos:end])})
        else:
            name, read, default = entry
            value, used = read(buf, pos)
            if used != end:
                raise FormatError(f"tagged field {tag} has {end - used} stray bytes",
                                  position=pos)
            if value != default:
                out[name] = value
        pos = end
    if unknown:
        out["_unknownTaggedFields"] = unknown
    return pos


def _too_long(what: str, n: int, pos: int) -> FormatError:
    return FormatError(f"{what} of {n} runs past the end of the record", position=pos)


def _null(what: str, pos: int) -> FormatError:
    return FormatError(f"null {what} in a non-nullable field", position=pos)


class _Generator:
    """Writes the source of the reader functions of one message version."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ns: dict[str, Any] = {
            "_uv": read_uvarint, "_uuid": uuid_to_str, "_tagged": _tagged,
            "_unpack": struct.unpack_from, "_too_long": _too_long, "_null": _null,
            "_FE": FormatError,
        }
        self.count = 0

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, value: Any, prefix: str = "_k") -> str:
        name = self.fresh(prefix)
        self.ns[name] = value
        return name

    # -- one value into a local variable; code advances ``pos`` --------------------------

    def length(self, flexible: bool, width: int, ind: str, var: str) -> list[str]:
        if flexible:
            return [f"{ind}{var} = buf[pos]",
                    f"{ind}if {var} < 0x80:",
                    f"{ind}    pos += 1",
                    f"{ind}else:",
                    f"{ind}    {var}, pos = _uv(buf, pos)",
                    f"{ind}{var} -= 1"]
        s = self.const(struct.Struct(">h" if width == 2 else ">i"), "_L")
        return [f"{ind}{var}, = {s}.unpack_from(buf, pos)", f"{ind}pos += {width}"]

    def value(self, f: Field, version: int, flexible: bool, ind: str, var: str,
              element: bool = False) -> list[str]:
        nullable = not element and version in versions(f.nullable)
        t = f.element if element or not f.is_array else f.type
        if f.is_array and not element:
            return self.array(f, version, flexible, ind, var, nullable)
        if t in _CODES:
            s = self.const(struct.Struct(">" + _CODES[t]), "_S")
            return [f"{ind}{var}, = {s}.unpack_from(buf, pos)",
                    f"{ind}pos += {struct.calcsize('>' + _CODES[t])}"]
        if t == "uuid":
            return [f"{ind}if pos + 16 > blen:",
                    f"{ind}    raise _too_long('uuid', 16, pos)",
                    f"{ind}{var} = _uuid(buf[pos:pos + 16])",
                    f"{ind}pos += 16"]
        if t in ("string", "bytes", "records"):
            n = self.fresh("n")
            code = self.length(flexible, 2 if t == "string" else 4, ind, n)
            kind = "string" if t == "string" else "bytes"
            code += [f"{ind}if {n} < 0:"]
            code += [f"{ind}    {var} = None"] if nullable else \
                [f"{ind}    raise _null('{kind}', pos)"]
            take = f"buf[pos:pos + {n}]"
            code += [f"{ind}else:",
                     f"{ind}    if pos + {n} > blen:",
                     f"{ind}        raise _too_long('{kind}', {n}, pos)",
                     f"{ind}    {var} = {take}.decode()" if t == "string" else
                     f"{ind}    {var} = bytes({take})",
                     f"{ind}    pos += {n}"]
            return code
        # A struct: its own function, behind a null marker if nullable.
        fn = self.struct(f.fields, version, flexible)
        if not nullable:
            return [f"{ind}{var}, pos = {fn}(buf, pos)"]
        return [f"{ind}if buf[pos] >= 0x80:",
                f"{ind}    {var} = None",
                f"{ind}    pos += 1",
                f"{ind}else:",
                f"{ind}    {var}, pos = {fn}(buf, pos + 1)"]

    def array(self, f: Field, version: int, flexible: bool, ind: str, var: str,
              nullable: bool) -> list[str]:
        n = self.fresh("n")
        code = self.length(flexible, 4, ind, n)
        code += [f"{ind}if {n} < 0:"]
        code += [f"{ind}    {var} = None"] if nullable else [f"{ind}    raise _null('array', pos)"]
        code += [f"{ind}elif {n} > blen - pos:",
                 f"{ind}    raise _too_long('array', {n}, pos)",
                 f"{ind}else:"]
        if f.element in _CODES:
            code_char = _CODES[f.element]
            size = struct.calcsize(">" + code_char)
            fmt = self.const(">%d" + code_char, "_F")
            code += [f"{ind}    {var} = list(_unpack({fmt} % {n}, buf, pos))",
                     f"{ind}    pos += {n} * {size}"]
            return code
        item = self.fresh("v")
        code += [f"{ind}    {var} = []",
                 f"{ind}    for _ in range({n}):"]
        code += self.value(f, version, flexible, ind + "        ", item, element=True)
        code += [f"{ind}        {var}.append({item})"]
        return code

    # -- functions --------------------------------------------------------------------

    def struct(self, fields: tuple[Field, ...], version: int, flexible: bool) -> str:
        """Emit the reader of a struct's fields (and its tagged section); return its name."""
        name = self.fresh("_struct")
        body: list[str] = []
        names: list[tuple[str, str]] = []  # (json name, local)
        tagged: dict[int, tuple[str, Reader | str, Any]] = {}
        run: list[tuple[str, str]] = []  # fixed-size fields waiting for one unpack

        def flush() -> None:
            if not run:
                return
            fmt = ">" + "".join(_CODES[t] for _, t in run)
            s = self.const(struct.Struct(fmt), "_S")
            targets = ", ".join(local for local, _ in run)
            body.extend([f"    {targets}, = {s}.unpack_from(buf, pos)",
                         f"    pos += {struct.calcsize(fmt)}"])
            run.clear()

        for f in fields:
            if version not in versions(f.versions):
                continue
            if flexible and f.tagged and version in versions(f.tagged):
                tagged[f.tag] = (f.json_name, f, f.default_value())
                continue
            local = self.fresh("f")
            names.append((f.json_name, local))
            if not f.is_array and f.type in _CODES:
                run.append((local, f.type))
                continue
            flush()
            body.extend(self.value(f, version, flexible, "    ", local))
        flush()
        result = "{" + ", ".join(f"{k!r}: {v}" for k, v in names) + "}"
        lines = [f"def {name}(buf, pos):", "    blen = len(buf)", *body]
        if flexible and not tagged:
            # Only unknown tags can follow: the generic reader keeps them raw.
            lines += [f"    out = {result}",
                      "    if buf[pos] == 0:",
                      "        return out, pos + 1",
                      "    return out, _tagged(buf, pos, out, {})"]
        elif flexible:
            lines += [f"    out = {result}",
                      "    if buf[pos] == 0:",
                      "        return out, pos + 1",
                      *self.tagged_loop(tagged, version),
                      "    return out, pos"]
        else:
            lines += [f"    return {result}, pos"]
        self.lines.extend(lines + [""])
        return name

    def tagged_loop(self, tagged: dict[int, tuple[str, Field, Any]], version: int
                    ) -> list[str]:
        """The tagged section with each known tag's value read inline: in records such
        as PartitionChangeRecord nearly every field is tagged, so this is their hot path.
        Unknown tags are kept raw, as ``_tagged`` keeps them."""
        code = ["    n, pos = _uv(buf, pos)",
                "    unknown = None",
                "    for _ in range(n):",
                "        tag, pos = _uv(buf, pos)",
                "        size, pos = _uv(buf, pos)",
                "        end = pos + size",
                "        if end > blen:",
                "            raise _FE(f'tagged field {tag} runs past the end of the record', "
                "position=pos)"]
        for i, (tag, (name, f, default)) in enumerate(sorted(tagged.items())):
            d = self.const(default, "_D")
            code += [f"        {'if' if i == 0 else 'elif'} tag == {tag}:",
                     *self.value(f, version, True, "            ", "v"),
                     "            if pos != end:",
                     "                raise _FE(f'tagged field {tag} has {end - pos} stray "
                     "bytes', position=pos)",
                     f"            if v != {d}:",
                     f"                out[{name!r}] = v"]
        code += ["        else:",
                 "            if unknown is None:",
                 "                unknown = []",
                 "            unknown.append({'tag': tag, 'data': bytes(buf[pos:end])})",
                 "            pos = end",
                 "    if unknown:",
                 "        out['_unknownTaggedFields'] = unknown"]
        return code

    def compile(self, entry: str, label: str) -> Reader:
        source = "\n".join(self.lines)
        exec(compile(source, f"<kmeta reader {label}>", "exec"), self.ns)
        return self.ns[entry]


@cache
def message_reader(message: Message, version: int) -> Reader:
    """The fast decoder of ``message`` at ``version``, compiled once from its declaration:
    (buf, pos) -> (fields, end position)."""
    gen = _Generator()
    entry = gen.struct(message.fields, version, message.flexible(version))
    read = gen.compile(entry, f"{message.name} v{version}")

    def read_message(buf: bytes, pos: int) -> tuple[Any, int]:
        try:
            return read(buf, pos)
        except UnicodeDecodeError as e:
            raise FormatError("string is not valid UTF-8", position=pos) from e

    read_message.source = "\n".join(gen.lines)  # type: ignore[attr-defined]
    return read_message


# -- the compiled core's form of the same readers ----------------------------------------

#: Op kinds of a body program; the C reader (``_runs.c``, "bodies") has the same numbers.
OP_FIXED, OP_UUID, OP_STRING, OP_BYTES, OP_ARRAY, OP_STRUCT = range(6)

Program = tuple[tuple[tuple[str, tuple], ...], dict[int, tuple[str, tuple, Any]] | None, bool]


@cache
def body_program(message: Message, version: int) -> Program:
    """What the compiled core reads for ``message`` at ``version``: the layout the
    generated reader has, as data: ``(fields, tags, flexible)`` with ``fields`` a tuple of
    ``(json name, op)``, ``tags`` each tagged field's ``(json name, op, default)``.  An op
    is ``(OP_FIXED, struct code)``, ``(OP_UUID,)``, ``(OP_STRING|OP_BYTES, flexible,
    nullable)``, ``(OP_ARRAY, flexible, nullable, element op)`` or ``(OP_STRUCT,
    nullable, program)``.  The generated reader stays the reference: the core gives up
    (returns None) wherever that reader would raise, and the tests compare the two."""
    return _program(message.fields, version, message.flexible(version))


def _program(fields: tuple[Field, ...], version: int, flexible: bool) -> Program:
    plain: list[tuple[str, tuple]] = []
    tags: dict[int, tuple[str, tuple, Any]] = {}
    for f in fields:
        if version not in versions(f.versions):
            continue
        if flexible and f.tagged and version in versions(f.tagged):
            tags[f.tag] = (f.json_name, _op(f, version, flexible), f.default_value())
        else:
            plain.append((f.json_name, _op(f, version, flexible)))
    return tuple(plain), tags, flexible


def _op(f: Field, version: int, flexible: bool, element: bool = False) -> tuple:
    # the choices of _Generator.value and _Generator.array, in the same order
    nullable = not element and version in versions(f.nullable)
    t = f.element if element or not f.is_array else f.type
    if f.is_array and not element:
        return (OP_ARRAY, flexible, nullable, _op(f, version, flexible, element=True))
    if t in _CODES:
        return (OP_FIXED, ord(_CODES[t]))
    if t == "uuid":
        return (OP_UUID,)
    if t in ("string", "bytes", "records"):
        return (OP_STRING if t == "string" else OP_BYTES, flexible, nullable)
    return (OP_STRUCT, nullable, _program(f.fields, version, flexible))
