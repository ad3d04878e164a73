"""Spark schemas of the JSON Lines that ``kmeta dump --json`` and ``kmeta verify --json``
print, so a script can pipe them into ``spark.read.json`` without the data source::

    kmeta dump --json /var/lib/kafka/data > dump.jsonl
    kmeta verify --json /var/lib/kafka/data > verify.jsonl

    from kmeta.spark.json_schemas import read_kmeta_json
    events = read_kmeta_json(spark, "dump.jsonl")                     # command="dump"
    checks = read_kmeta_json(spark, "verify.jsonl", command="verify")

Each command's schema is one *union*: a ``kind`` column plus every field of every kind of
object the command prints (dump: file, batch, record, finding; verify: finding, summary),
all nullable; a field a kind does not have is null in its rows.  The fields are declared
once, below, per kind (``man/kmeta.1``, JSON OUTPUT, says what each means); a name shared
by several kinds (``file``, ``position``, ``offset`` ...) has one type everywhere, which
importing this module checks.

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

__all__ = ["BATCH", "COMMANDS", "DUMP_DDL", "FILE", "FINDING", "RECORD", "SUMMARY",
           "VERIFY_DDL", "Field", "ddl", "fields", "json_text_fields", "read_kmeta_json"]


class Field(NamedTuple):
    name: str
    type: str  # Spark SQL DDL type
    doc: str
    json: bool = False  # a STRING that holds a JSON object's text


FILE: tuple[Field, ...] = (
    Field("kind", "STRING", '"file": one object before the batches or content of each file'),
    Field("file", "STRING", "the path of the file"),
    Field("file_kind", "STRING", "what the file is, told from its name: segment, "
          "kraft-snapshot, bootstrap-checkpoint, leader-epoch-checkpoint, quorum-state ..."),
    Field("size", "BIGINT", "the file's size in bytes"),
    Field("decoder", "STRING", "files in record-batch format: the payload decoder used "
          "(metadata, raw, utf8 or hex), else null"),
    Field("base_offset", "BIGINT", "the offset in the file name (a segment's base offset, "
          "a KRaft snapshot's end offset), or null"),
    Field("epoch", "INT", "KRaft snapshots: the leader epoch in the file name, or null"),
    Field("suffix", "STRING", "a state suffix of the name (deleted, cleaned, swap, part), "
          "or null"),
    Field("content", "STRING", "small files (checkpoints, quorum-state, meta.properties, "
          "indexes ...): the decoded content as JSON text, else null", json=True),
)
"""``kind = "file"`` (dump): what a file is, and the decoded content of small files."""

BATCH: tuple[Field, ...] = (
    Field("kind", "STRING", '"batch": one record batch, or one legacy (magic 0/1) message'),
    Field("file", "STRING", "the path of the file holding the batch"),
    Field("position", "BIGINT", "byte position of the batch in the file"),
    Field("base_offset", "BIGINT", "offset of the first record (baseOffset)"),
    Field("last_offset", "BIGINT", "offset of the last record (baseOffset + "
          "lastOffsetDelta)"),
    Field("leader_epoch", "INT", "partitionLeaderEpoch; -1 for legacy messages"),
    Field("crc", "BIGINT", "the stored CRC, unsigned 32 bits (so BIGINT)"),
    Field("crc_valid", "BOOLEAN", "whether the stored CRC matches the bytes"),
    Field("max_timestamp", "BIGINT", "maxTimestamp in ms (a legacy message's timestamp)"),
    Field("delete_horizon_ms", "BIGINT", "the delete horizon when its attribute is set, "
          "else null"),
    Field("size", "BIGINT", "bytes the batch occupies in the file: batchLength + 12"),
    Field("magic", "INT", "format version: 2, or 0/1 for legacy messages"),
    Field("attributes", "INT", "the attributes field as a number"),
    Field("compression", "STRING", "none, gzip, snappy, lz4 or zstd"),
    Field("timestamp_type", "STRING", "CreateTime or LogAppendTime"),
    Field("is_transactional", "BOOLEAN", "the transactional attribute"),
    Field("is_control", "BOOLEAN", "the control attribute (LeaderChange, snapshot header "
          "and footer, transaction markers)"),
    Field("producer_id", "BIGINT", "producerId (-1 when none)"),
    Field("producer_epoch", "INT", "producerEpoch (-1 when none)"),
    Field("base_sequence", "INT", "baseSequence (-1 when none)"),
    Field("last_sequence", "INT", "the sequence of the last record, or -1"),
    Field("record_count", "INT", "the recordsCount field (legacy: messages)"),
    Field("hex", "STRING", "with --hex: the batch's bytes in hex, else null"),
)
"""``kind = "batch"`` (dump): a batch header, before the records of the batch."""

RECORD: tuple[Field, ...] = (
    Field("kind", "STRING", '"record": one record, after the batch holding it'),
    Field("file", "STRING", "the path of the file holding the record"),
    Field("offset", "BIGINT", "the record's offset"),
    Field("timestamp", "BIGINT", "the record's timestamp, ms since the epoch"),
    Field("batch_position", "BIGINT", "byte position of the batch holding the record"),
    Field("type", "STRING", "Kafka's record type name (PARTITION_RECORD, LEADER_CHANGE ...), "
          "RAW for the raw/utf8/hex decoders, UNKNOWN when it cannot be told"),
    Field("version", "INT", "the record type's version, or null"),
    Field("data", "STRING", "the decoded fields with Kafka's JSON names, as JSON text: its "
          "shape depends on the type (bytes base64, UUIDs Kafka's base64)", json=True),
    Field("headers", "ARRAY<STRUCT<key: STRING, value: STRING>>", "records with headers: "
          "their keys and base64 values, else null"),
    Field("key_hex", "STRING", "with --hex: the record key in hex, else null"),
    Field("value_hex", "STRING", "with --hex: the record value in hex, else null"),
)
"""``kind = "record"`` (dump): one decoded record; ``data`` is JSON text."""

FINDING: tuple[Field, ...] = (
    Field("kind", "STRING", '"finding": a problem, next to the bytes it concerns'),
    Field("file", "STRING", "the path of the file, or null"),
    Field("code", "STRING", "the finding code, such as F001 (kmeta(1), FINDINGS)"),
    Field("severity", "STRING", "error, warning or info"),
    Field("message", "STRING", "what is wrong, for people"),
    Field("position", "BIGINT", "byte position in the file, or null"),
    Field("offset", "BIGINT", "the offset concerned, or null"),
    Field("details", "STRING", "extra facts as JSON text, or null", json=True),
)
"""``kind = "finding"`` (dump and verify): one problem, as ``Finding.to_json`` prints it."""

SUMMARY: tuple[Field, ...] = (
    Field("kind", "STRING", '"summary": the last line of a verify run'),
    Field("files", "BIGINT", "files checked"),
    Field("segments", "BIGINT", "log segments read"),
    Field("snapshots", "BIGINT", "snapshots read (bootstrap.checkpoint included)"),
    Field("not_run", "ARRAY<STRING>", "checks that could not run, one sentence each"),
    Field("findings", "STRUCT<error: BIGINT, warning: BIGINT, info: BIGINT>",
          "findings per severity"),
    Field("logs", "MAP<STRING, STRUCT<segments: BIGINT, batches: BIGINT, records: BIGINT, "
          "bytes: BIGINT, first_offset: BIGINT, last_offset: BIGINT, epochs: ARRAY<INT>>>",
          "per metadata partition dir read: its segments, batches, records, bytes, "
          "first and last offset and the leader epochs its batches carry"),
)
"""``kind = "summary"`` (verify): totals, after the findings (``VerifyReport.summary_json``)."""

#: The kinds of object each command prints, with their fields.
COMMANDS: dict[str, dict[str, tuple[Field, ...]]] = {
    "dump": {"file": FILE, "batch": BATCH, "record": RECORD, "finding": FINDING},
    "verify": {"finding": FINDING, "summary": SUMMARY},
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
