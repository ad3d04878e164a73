"""Spark schemas of the JSON Lines that ``kmeta dump --json`` and ``kmeta verify --json``
print, so a script can pipe them into ``spark.read.json`` without the data source::

    kmeta dump --json /var/lib/kafka/data > dump.jsonl
    kmeta verify --json /var/lib/kafka/data > verify.jsonl

    from kmeta.spark.json_schemas import read_kmeta_json
    events = read_kmeta_json(spark, "dump.jsonl")                     # command="dump"
    checks = read_kmeta_json(spark, "verify.jsonl", command="verify")

Each command's schema is one *union*: a ``kind`` column plus every field of every kind of
object the command prints (dump: file, batch, record, finding; verify: finding, summary),
all nullable; a field a kind does not have is null in its rows.  The fields are those of
the declaration of every JSON object kind, :mod:`kmeta.output_schema` (``man/kmeta.1``,
JSON OUTPUT, says what each means, from the same declaration); a name shared by several
kinds (``file``, ``position``, ``offset`` ...) has one type everywhere, which importing
this module checks.

How Spark's JSON reader treats these (checked by ``tests/test_spark_json.py``):

* A field declared STRING whose value is a JSON object or array keeps that value's JSON
  text: Spark copies the token (compact, numbers as written), so ``json.loads``,
  ``from_json`` or ``get_json_object`` give the object back.  The fields that are JSON text
  this way (record ``data``, file ``content``, finding ``details``) are marked ``json``;
  their shape depends on the record type or file kind.  Beware: a JSON *string* value
  read into a STRING field comes back as the string itself, without quotes, and a number
  or boolean as its text; kmeta prints objects in these three fields.
* Keys missing from the schema are dropped silently, even in FAILFAST mode; the test
  compares the schema with every key kmeta prints, so the schema cannot go stale
  unnoticed.
* With ``mode`` FAILFAST (what :func:`read_kmeta_json` sets) a value that does not fit
  its declared type, or a line that is not JSON, fails the job instead of becoming null.

Importing this module does not import pyspark: the DDL strings are plain text.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kmeta import output_schema
from kmeta.output_schema import JSON, WRITTEN_BY, ObjectKind

__all__ = ["BATCH", "COMMANDS", "DUMP_DDL", "FILE", "FINDING", "RECORD", "SUMMARY",
           "VERIFY_DDL", "Field", "ddl", "fields", "json_text_fields", "read_kmeta_json"]


class Field(NamedTuple):
    name: str
    type: str  # Spark SQL DDL type
    doc: str
    json: bool = False  # a STRING that holds a JSON object's text


def _fields(kind: ObjectKind) -> tuple[Field, ...]:
    return tuple(Field(k.name, k.type.ddl, k.doc, k.type is JSON) for k in kind.keys)


FILE = _fields(output_schema.FILE)
"""``kind = "file"`` (dump): what a file is, and the decoded content of small files."""
BATCH = _fields(output_schema.BATCH)
"""``kind = "batch"`` (dump): a batch header, before the records of the batch."""
RECORD = _fields(output_schema.RECORD)
"""``kind = "record"`` (dump): one decoded record; ``data`` is JSON text."""
FINDING = _fields(output_schema.FINDING)
"""``kind = "finding"`` (dump and verify): one problem, as ``Finding.to_json`` prints it."""
SUMMARY = _fields(output_schema.SUMMARY)
"""``kind = "summary"`` (verify): totals, after the findings (``VerifyReport.summary_json``)."""

#: The kinds of object each command prints, with their fields.
COMMANDS: dict[str, dict[str, tuple[Field, ...]]] = {
    command: {kind.name: _fields(kind) for kind in WRITTEN_BY[command]}
    for command in ("dump", "verify")
}


def _union(kinds: dict[str, tuple[Field, ...]]) -> tuple[Field, ...]:
    """Every field of every kind once, in first-seen order; a name must keep its type."""
    out: dict[str, Field] = {}
    for kind, group in kinds.items():
        for f in group:
            seen = out.get(f.name)
            if seen is None:
                out[f.name] = f
            elif (seen.type, seen.json) != (f.type, f.json):
                raise TypeError(f"JSON field {f.name!r} of kind {kind!r} is {f.type}, "
                                f"elsewhere {seen.type}")
    return tuple(out.values())


_FIELDS: dict[str, tuple[Field, ...]] = {c: _union(k) for c, k in COMMANDS.items()}


def fields(command: str = "dump") -> tuple[Field, ...]:
    """The union of the fields of ``command``'s JSON objects (``kind`` first)."""
    try:
        return _FIELDS[command]
    except KeyError:
        raise ValueError(f"no JSON schema for command {command!r}; one of "
                         f"{', '.join(_FIELDS)}") from None


def ddl(command: str = "dump") -> str:
    """``command``'s schema as a Spark DDL string (names quoted: ``offset``, ``timestamp``
    and ``type`` are SQL keywords)."""
    return ", ".join(f"`{f.name}` {f.type}" for f in fields(command))


def json_text_fields(command: str = "dump") -> frozenset[str]:
    """The STRING fields of ``command`` that hold JSON text (parse with from_json)."""
    return frozenset(f.name for f in fields(command) if f.json)


#: ``kmeta dump --json``: kinds file, batch, record, finding.
DUMP_DDL = ddl("dump")
#: ``kmeta verify --json``: kinds finding and summary.
VERIFY_DDL = ddl("verify")


def read_kmeta_json(spark: Any, path: Any, command: str = "dump") -> Any:
    """A DataFrame of the JSON Lines ``kmeta <command> --json`` printed into ``path`` (a
    path, a glob or a list of them): the documented schema, mode FAILFAST."""
    return spark.read.schema(ddl(command)).option("mode", "FAILFAST").json(path)
