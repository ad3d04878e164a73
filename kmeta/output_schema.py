"""The JSON objects kmeta writes: every kind declared once, key by key.

Each object a ``--json`` command writes (dump's file, batch, record and finding objects,
info's, verify's summary, the objects of image, history, diff, truncate, repair, snapshot
and export, and every object nested in them) is an :class:`ObjectKind` here: its keys in
the order ``man/kmeta.1`` lists them, each with its type, whether it may be null or
absent, and a one-line doc.  This is the one home of that schema:

* the JSON OUTPUT section of ``man/kmeta.1`` is generated from it (``python -m
  tools.docs``);
* :mod:`kmeta.spark.json_schemas` derives the Spark schemas of ``dump`` and ``verify``
  --json from it;
* the export tables (:mod:`kmeta.ops.export.rows`) take from it the columns that hold the same
  facts, so a fact has one name and one type in JSON and in Parquet;
* ``tests/test_output_schema.py`` checks every object the commands write on the
  repository's fixtures against it (:func:`check`), so a renderer cannot drift from it.

Types are Spark SQL's, the language a script reading the JSON declares its schema in.
:data:`JSON` is a value whose shape the doc tells (a record's data, a file's content):
Spark keeps it as JSON text.  kmeta's own keys are snake_case; the image's sections and
entities keep the JSON names of Kafka's records (``kafka_names``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kmeta.formats.filenames import KINDS


@dataclass(frozen=True)
class Scalar:
    """A number, a string or a boolean."""

    ddl: str
    python: tuple[type, ...]
    bits: int | None = None  # the width of a signed integer

    def problems(self, value: Any, where: str) -> Iterator[str]:
        # bool is an int to Python, not to JSON
        if not isinstance(value, self.python) or isinstance(value, bool) != (bool in self.python):
            yield f"{where}: {type(value).__name__} {value!r}, not {self.ddl}"
        elif self.bits is not None and not -(1 << self.bits - 1) <= value < 1 << self.bits - 1:
            yield f"{where}: {value} does not fit {self.ddl}"


STRING = Scalar("STRING", (str,))
INT = Scalar("INT", (int,), 32)
BIGINT = Scalar("BIGINT", (int,), 64)
DOUBLE = Scalar("DOUBLE", (int, float))  # JSON writes 1.0 as 1.0, an integral value as 1
BOOLEAN = Scalar("BOOLEAN", (bool,))


@dataclass(frozen=True)
class Json:
    """Any JSON value: its shape depends on something else (a record's type, a file's
    kind), which the key's doc tells.  Spark reads it into a STRING as its JSON text."""

    ddl: str = "STRING"

    def problems(self, value: Any, where: str) -> Iterator[str]:
        return iter(())


JSON = Json()


@dataclass(frozen=True)
class Array:
    """A JSON array whose elements all have one type."""

    of: Type

    @property
    def ddl(self) -> str:
        return f"ARRAY<{self.of.ddl}>"

    def problems(self, value: Any, where: str) -> Iterator[str]:
        if not isinstance(value, list):
            yield f"{where}: {type(value).__name__}, not an array"
            return
        for i, v in enumerate(value):
            yield from _value_problems(self.of, v, f"{where}[{i}]", nullable=False)


@dataclass(frozen=True)
class Map:
    """A JSON object whose keys are names or ids (not declared) and whose values all have
    one type."""

    of: Type

    @property
    def ddl(self) -> str:
        return f"MAP<STRING, {self.of.ddl}>"

    def problems(self, value: Any, where: str) -> Iterator[str]:
        if not isinstance(value, dict):
            yield f"{where}: {type(value).__name__}, not an object"
            return
        for k, v in value.items():
            yield from _value_problems(self.of, v, f"{where}.{k}", nullable=False)


@dataclass(frozen=True)
class Key:
    """One key of an object kind.  ``nullable``: its value may be null; ``optional``: it
    is left out of objects it does not apply to (the man page says "(optional)")."""

    name: str
    type: Type
    doc: str
    nullable: bool = False
    optional: bool = False


@dataclass(frozen=True)
class ObjectKind:
    """A kind of JSON object: its keys, in order.  ``doc`` introduces them in the man page
    when the keys alone do not say where the objects are; a kind written at the top level
    names itself in its ``kind`` key (``name``, or one of ``also``)."""

    name: str
    keys: tuple[Key, ...]
    doc: str = ""
    also: tuple[str, ...] = ()
    kafka_names: bool = False

    @property
    def ddl(self) -> str:
        return "STRUCT<" + ", ".join(f"{k.name}: {k.type.ddl}" for k in self.keys) + ">"

    def key(self, name: str) -> Key:
        """The key called ``name``."""
        for k in self.keys:
            if k.name == name:
                return k
        raise KeyError(f"{self.name} objects have no key {name!r}")

    def problems(self, value: Any, where: str) -> Iterator[str]:
        if not isinstance(value, dict):
            yield f"{where}: {type(value).__name__}, not a {self.name} object"
            return
        declared = {k.name: k for k in self.keys}
        for name in value:
            if name not in declared:
                yield f"{where}: key {name!r} is not declared for {self.name} objects"
        for k in self.keys:
            if k.name in value:
                yield from _value_problems(k.type, value[k.name], f"{where}.{k.name}",
                                           k.nullable)
            elif not k.optional:
                yield f"{where}: lacks key {k.name!r} of {self.name} objects"


Type = Scalar | Json | Array | Map | ObjectKind


def _value_problems(t: Type, value: Any, where: str, nullable: bool) -> Iterator[str]:
    if value is None:
        if not nullable:
            yield f"{where}: null, not {t.ddl if not isinstance(t, ObjectKind) else t.name}"
        return
    yield from t.problems(value, where)


def check(command: str, obj: Any) -> list[str]:
    """What is wrong with ``obj``, one object ``kmeta <command> --json`` wrote, against
    its declaration: a key not declared, a key missing, a value of another type."""
    kind = _top_kind(command, obj)
    if kind is None:
        return [f"{command} --json wrote an object of no declared kind: {str(obj)[:200]}"]
    return list(kind.problems(obj, kind.name))


def objects(command: str, obj: Any) -> Iterator[tuple[ObjectKind, dict[str, Any]]]:
    """Every object in ``obj`` (one object ``kmeta <command> --json`` wrote) with its
    declared kind: ``obj`` itself and each object nested in it, null values skipped."""
    kind = _top_kind(command, obj)
    if kind is not None:
        yield from _nested(kind, obj)


def nested_kinds(t: Type) -> Iterator[ObjectKind]:
    """The kinds of object a value of type ``t`` holds: ``t`` itself when it is one, then
    the kinds of its keys, depth first (a kind met twice is yielded twice)."""
    if isinstance(t, ObjectKind):
        yield t
        for k in t.keys:
            yield from nested_kinds(k.type)
    elif isinstance(t, (Array, Map)):
        yield from nested_kinds(t.of)


def _top_kind(command: str, obj: Any) -> ObjectKind | None:
    tag = obj.get("kind") if isinstance(obj, dict) else None
    return next((k for k in WRITTEN_BY.get(command, ()) if tag in (k.name, *k.also)), None)


def _nested(t: Type, value: Any) -> Iterator[tuple[ObjectKind, dict[str, Any]]]:
    if isinstance(t, ObjectKind) and isinstance(value, dict):
        yield t, value
        for k in t.keys:
            yield from _nested(k.type, value.get(k.name))
    elif isinstance(t, Array) and isinstance(value, list):
        for v in value:
            yield from _nested(t.of, v)
    elif isinstance(t, Map) and isinstance(value, dict):
        for v in value.values():
            yield from _nested(t.of, v)


#: The kinds of file objects, as file_kind names them.
_FILE_KINDS = ", ".join(k for k in KINDS if k != "unknown")


FINDING = ObjectKind(
    "finding",
    keys=(
        Key("kind", STRING, "\"finding\": a problem, next to the bytes it concerns (see "
            "FINDINGS)."),
        Key("file", STRING, "The path of the file, or null.", nullable=True),
        Key("code", STRING, "The finding code, such as F001."),
        Key("severity", STRING, "error, warning or info."),
        Key("message", STRING, "What is wrong, for people."),
        Key("position", BIGINT, "Byte position in the file, when known.", optional=True),
        Key("offset", BIGINT, "The offset concerned, when known.", optional=True),
        Key("details", JSON, "Extra facts as an object, such as the byte counts of a torn "
            "tail.", optional=True),
    ),
)

FILE = ObjectKind(
    "file",
    keys=(
        Key("kind", STRING, "\"file\": one object before the batches of each file."),
        Key("file", STRING, "The path of the file."),
        Key("file_kind", STRING, f"What the file is, told from its name: {_FILE_KINDS}."),
        Key("size", BIGINT, "The file's size in bytes."),
        Key("decoder", STRING, "Files in record-batch format: the payload decoder used for their "
            "records (metadata, raw, utf8 or hex).", optional=True),
        Key("base_offset", BIGINT, "The offset in the file name: a segment's base offset, a KRaft "
            "snapshot's end offset.", optional=True),
        Key("epoch", INT, "KRaft snapshots: the leader epoch in the file name.", optional=True),
        Key("suffix", STRING, "A state suffix of the name: deleted, cleaned, swap or "
            "part.", optional=True),
        Key("content", JSON, "Small files (checkpoints, quorum-state, partition.metadata, "
            "meta.properties, indexes, producer-state snapshots): the decoded "
            "content.", optional=True),
    ),
)

MASKED = ObjectKind(
    "masked",
    doc="Bytes a view masks: in a batch object those of its hex, from the start of the "
        "batch; in a record object those of its value, from the start of the value:",
    keys=(
        Key("offset", BIGINT, "The offset of the record holding them; null for a batch's "
            "records section masked whole.", nullable=True),
        Key("field", STRING, "The field they hold, Kafka's JSON name (salt, storedKey, "
            "serverKey, tokenId, value of a sensitive config), body for a record of a "
            "metadata log that does not decode (it may be a damaged secret), compressed records "
            "(a batch's compressed records section holds a secret: its bytes give it back "
            "once decompressed) or unreadable records (in a metadata log, a batch's records "
            "from where they stop reading)."),
        Key("position", BIGINT, "The first byte masked."),
        Key("length", BIGINT, "How many bytes."),
    ),
)

BATCH = ObjectKind(
    "batch",
    keys=(
        Key("kind", STRING, "\"batch\": one record batch, or one legacy (magic 0/1) message with "
            "the same keys (fields it lacks are -1 or null)."),
        Key("file", STRING, "The path of the file holding the batch."),
        Key("position", BIGINT, "Byte position of the batch in the file."),
        Key("base_offset", BIGINT, "Offset of the first record (baseOffset)."),
        Key("last_offset", BIGINT, "Offset of the last record (baseOffset + lastOffsetDelta)."),
        Key("leader_epoch", INT, "partitionLeaderEpoch; -1 for legacy messages."),
        Key("magic", INT, "Format version: 2 for record batches, 0 or 1 for legacy messages."),
        Key("crc", BIGINT, "The stored CRC, unsigned (CRC-32C for magic 2, CRC-32 for legacy "
            "messages)."),
        Key("crc_valid", BOOLEAN, "Whether the stored CRC matches the bytes."),
        Key("attributes", INT, "The attributes field as a number."),
        Key("compression", STRING, "Codec from the attributes: none, gzip, snappy, lz4 or zstd."),
        Key("timestamp_type", STRING, "CreateTime or LogAppendTime."),
        Key("is_transactional", BOOLEAN, "The transactional attribute."),
        Key("is_control", BOOLEAN, "The control attribute (transaction markers, LeaderChange, "
            "snapshot header and footer)."),
        Key("delete_horizon_ms", BIGINT, "The delete horizon when its attribute is set "
            "(baseTimestamp then holds it), else null.", nullable=True),
        Key("max_timestamp", BIGINT, "maxTimestamp (a legacy message's own timestamp)."),
        Key("producer_id", BIGINT, "producerId (-1 when none)."),
        Key("producer_epoch", INT, "producerEpoch (-1 when none)."),
        Key("base_sequence", INT, "baseSequence (-1 when none)."),
        Key("last_sequence", INT, "The sequence of the last record, or -1."),
        Key("record_count", INT, "The recordsCount field (for legacy messages, the number of "
            "messages)."),
        Key("size", BIGINT, "Bytes the batch occupies in the file: its batchLength field + 12."),
        Key("hex", STRING, "With --hex: the batch's bytes in hex, each byte of a secret as "
            "** unless --show-secrets is given.", optional=True),
        Key("masked", Array(MASKED), "With --hex, when hex masks bytes: which, in "
            "order.", optional=True),
    ),
)

HEADER = ObjectKind(
    "header",
    keys=(
        Key("key", STRING, "The header's key."),
        Key("value", STRING, "The header's value in base64, or null.", nullable=True),
    ),
)

RECORD = ObjectKind(
    "record",
    keys=(
        Key("kind", STRING, "\"record\": one record, after the batch holding it."),
        Key("file", STRING, "The path of the file holding the record."),
        Key("offset", BIGINT, "The record's offset."),
        Key("timestamp", BIGINT, "The record's timestamp in milliseconds since the epoch."),
        Key("batch_position", BIGINT, "Byte position of the batch holding the record."),
        Key("type", STRING, "Kafka's name of the record type (PARTITION_RECORD, LEADER_CHANGE "
            "...), RAW for records decoded by the raw, utf8 or hex decoder, UNKNOWN when it cannot "
            "be told."),
        Key("version", INT, "The record type's version, or null.", nullable=True),
        Key("data", JSON, "The decoded fields, with Kafka's JSON field names. Bytes are base64, "
            "UUIDs Kafka's URL-safe base64. Raw decoders give {\"key\", \"value\"}; unknown types "
            "give apiKey, version and hex."),
        Key("headers", Array(HEADER), "Records with headers: a list of {\"key\", \"value\"} "
            "objects, values in base64.", optional=True),
        Key("key_hex", STRING, "With --hex: the record key in hex, or "
            "null.", nullable=True, optional=True),
        Key("value_hex", STRING, "With --hex: the record value in hex (each byte of a "
            "secret as ** unless --show-secrets is given), or null.", nullable=True,
            optional=True),
        Key("masked", Array(MASKED), "Without --show-secrets, for a record holding a "
            "secret: the bytes of its value masked in value_hex and in the value of raw, "
            "utf8 and hex decoders (base64 and text show * for them), whose decoded fields "
            "read [redacted].", optional=True),
    ),
)

LOG_FILE = ObjectKind(
    "log_file",
    doc="info --json: a segment or snapshot, alone or in a partition_dir's lists:",
    keys=(
        Key("kind", STRING, "\"log_file\"."),
        Key("file", STRING, "The path of the file."),
        Key("file_kind", STRING, f"What the file is, told from its name: {_FILE_KINDS}."),
        Key("size", BIGINT, "The file's size in bytes."),
        Key("base_offset", BIGINT, "The offset in the file name, or null.", nullable=True),
        Key("epoch", INT, "KRaft snapshots: the leader epoch in the file name, else null.",
            nullable=True),
        Key("suffix", STRING, "A state suffix of the name (deleted, cleaned, swap, part), or "
            "null.", nullable=True),
        Key("batches", BIGINT, "Record batches read, or null where the segment was not "
            "decoded (decoded false).", nullable=True),
        Key("records", BIGINT, "Records read, or null where the segment was not decoded.",
            nullable=True),
        Key("first_offset", BIGINT, "The first batch's base offset, or null.", nullable=True),
        Key("last_offset", BIGINT, "The last batch's last offset, or null.", nullable=True),
        Key("first_timestamp", BIGINT, "The oldest batch time (ms since the epoch), or null.",
            nullable=True),
        Key("last_timestamp", BIGINT, "The newest batch time (ms since the epoch), or null.",
            nullable=True),
        Key("epochs", Array(INT), "The leader epochs of its batches, in ascending order; "
            "null where the segment was not decoded.", nullable=True),
        Key("bad_crc_batches", BIGINT, "Batches whose CRC does not match; null where the "
            "segment was not decoded (kmeta verify checks every CRC).", nullable=True),
        Key("control_records_by_type", Map(BIGINT), "Control records by type; null where "
            "the segment was not decoded.", nullable=True),
        Key("records_by_type", Map(BIGINT), "Metadata records by type."),
        Key("decoded", BOOLEAN, "Whether every batch was read. False for a data topic's "
            "segment that read cleanly at its ends: its offsets, times and size are exact, "
            "from its first batch header and its last, found from the offset index's last "
            "entry and the batch headers after it; batches, records, epochs, "
            "bad_crc_batches and control_records_by_type are null. A segment that does not "
            "read cleanly so (a torn tail, an index entry that names no batch holding its "
            "offset, a legacy format) is decoded whole."),
    ),
)

DATA_DIR = ObjectKind(
    "data_dir",
    doc="info --json writes a data_dir object per broker data directory, then a "
        "partition_dir object per partition directory, a log_file or small_file object per "
        "file given alone, a finding object per finding, and the info summary last:",
    keys=(
        Key("kind", STRING, "\"data_dir\"."),
        Key("path", STRING, "The data directory."),
        Key("small_files", Map(JSON), "Its own files (meta.properties, the offset checkpoints, "
            "bootstrap.checkpoint ...) by name, decoded."),
        Key("partitions", INT, "How many partition directories it holds (each follows as a "
            "partition_dir object)."),
    ),
)

PARTITION_DIR = ObjectKind(
    "partition_dir",
    keys=(
        Key("kind", STRING, "\"partition_dir\"."),
        Key("path", STRING, "The partition directory."),
        Key("data_dir", STRING, "The data directory it is in, or null when it was given "
            "alone.", nullable=True),
        Key("name", STRING, "Its name (topic-partition)."),
        Key("topic", STRING, "The topic."),
        Key("partition", INT, "The partition."),
        Key("is_metadata", BOOLEAN, "Whether it is the __cluster_metadata partition."),
        Key("log_start_offset", BIGINT, "The first batch's offset; without a batch, the "
            "first segment's base offset, else where the log is empty at (see "
            "log_end_offset)."),
        Key("log_end_offset", BIGINT, "One past the last offset of its batches; without a "
            "batch, where Kafka loads the empty log at: its last segment's base offset, "
            "without a segment the metadata log's latest snapshot end offset, another "
            "log's log-start-offset-checkpoint entry, else 0."),
        Key("segment_files", Array(LOG_FILE), "Its segments."),
        Key("snapshot_files", Array(LOG_FILE), "Its KRaft snapshots."),
        Key("records_by_type", Map(BIGINT), "Metadata records by type, over its segments."),
        Key("control_records_by_type", Map(BIGINT), "Control records by type, over its "
            "segments; null when a segment was not decoded.", nullable=True),
        Key("small_files", Map(JSON), "Its small files by name, decoded."),
        Key("other_files", Array(STRING), "Files kmeta does not read (indexes are checked by "
            "verify)."),
    ),
)

SMALL_FILE = ObjectKind(
    "small_file",
    keys=(
        Key("kind", STRING, "\"small_file\": a small file given alone."),
        Key("file", STRING, "Its path."),
        Key("content", JSON, "Its decoded content."),
    ),
)

FINDING_COUNTS = ObjectKind(
    "finding counts",
    keys=(
        Key("error", BIGINT, "How many findings of severity error."),
        Key("warning", BIGINT, "How many findings of severity warning."),
        Key("info", BIGINT, "How many findings of severity info."),
    ),
)

INFO = ObjectKind(
    "info",
    keys=(
        Key("kind", STRING, "\"info\": the last line."),
        Key("data_dirs", INT, "How many data directories were found."),
        Key("partitions", INT, "How many partition directories were found."),
        Key("files", BIGINT, "How many files were given alone."),
        Key("finding_counts", FINDING_COUNTS, "The number of findings by severity."),
    ),
)

LOG_SUMMARY = ObjectKind(
    "log summary",
    doc="Each value of the summary's logs:",
    keys=(
        Key("segments", BIGINT, "How many log segments were read."),
        Key("batches", BIGINT, "How many record batches were read."),
        Key("records", BIGINT, "How many records were read."),
        Key("bytes", BIGINT, "How many bytes of segments were read."),
        Key("first_offset", BIGINT, "The base offset of the first batch; null when the log holds "
            "no batch.", nullable=True),
        Key("last_offset", BIGINT, "The last offset of the last batch; null when the log holds no "
            "batch.", nullable=True),
        Key("epochs", Array(INT), "The leader epochs of the batches, in ascending order."),
    ),
)

SUMMARY = ObjectKind(
    "summary",
    doc="The summary object:",
    keys=(
        Key("kind", STRING, "\"summary\": the last line, after every finding."),
        Key("files", BIGINT, "How many files were checked."),
        Key("segments", BIGINT, "How many log segments were read (metadata and other partitions, "
            "and segments given alone)."),
        Key("snapshots", BIGINT, "How many snapshots (.checkpoint, bootstrap.checkpoint included) "
            "were read."),
        Key("not_run", Array(STRING), "Checks that could not run, one sentence each (a segment "
            "outside its partition directory, an image that could not be replayed); [] when every "
            "check ran."),
        Key("finding_counts", FINDING_COUNTS, "The number of findings by severity: an object with "
            "the keys error, warning and info (each present, 0 when none)."),
        Key("logs", Map(LOG_SUMMARY), "One entry per metadata log (__cluster_metadata partition "
            "directory) read, keyed by the directory's path; {} when none. Each is an object with "
            "the keys below."),
    ),
)

ENDPOINT = ObjectKind(
    "endpoint",
    doc="Each element of a broker's or controller's endPoints:",
    kafka_names=True,
    keys=(
        Key("name", STRING, "The listener name."),
        Key("host", STRING, "The host name."),
        Key("port", INT, "The port."),
        Key("securityProtocol", INT, "Kafka's security protocol id: 0 PLAINTEXT, 1 SSL, 2 "
            "SASL_PLAINTEXT, 3 SASL_SSL."),
    ),
)

BROKER = ObjectKind(
    "broker",
    doc="Each value of image.brokers (from RegisterBrokerRecord, then Fence, Unfence and "
        "BrokerRegistrationChange records):",
    kafka_names=True,
    keys=(
        Key("id", INT, "brokerId."),
        Key("epoch", BIGINT, "brokerEpoch of the registration."),
        Key("incarnationId", STRING, "incarnationId (a base64 UUID)."),
        Key("endPoints", Array(ENDPOINT), "The listeners, sorted by name (keys below)."),
        Key("features", Map(Array(INT)), "An object: feature name -> [minSupportedVersion, "
            "maxSupportedVersion], what the broker supports."),
        Key("rack", STRING, "The rack, or null.", nullable=True),
        Key("fenced", BOOLEAN, "Whether the broker is fenced."),
        Key("inControlledShutdown", BOOLEAN, "Whether it is in controlled shutdown."),
        Key("isMigratingZkBroker", BOOLEAN, "isMigratingZkBroker of the registration."),
        Key("logDirs", Array(STRING), "The ids of its log directories (base64 UUIDs), sorted."),
        Key("cordonedLogDirs", Array(STRING), "The ids of its cordoned log directories, sorted."),
    ),
)

CONTROLLER = ObjectKind(
    "controller",
    doc="Each value of image.controllers (from RegisterControllerRecord):",
    kafka_names=True,
    keys=(
        Key("id", INT, "controllerId."),
        Key("incarnationId", STRING, "incarnationId (a base64 UUID)."),
        Key("zkMigrationReady", BOOLEAN, "zkMigrationReady of the registration."),
        Key("endPoints", Array(ENDPOINT), "The listeners, sorted by name (keys below)."),
        Key("features", Map(Array(INT)), "An object: feature name -> [minSupportedVersion, "
            "maxSupportedVersion]."),
    ),
)

PARTITION = ObjectKind(
    "partition",
    doc="Each partition (from PartitionRecord, then PartitionChangeRecords and ClearElrRecords):",
    kafka_names=True,
    keys=(
        Key("replicas", Array(INT), "The replica broker ids, in assignment order."),
        Key("isr", Array(INT), "The in-sync replicas."),
        Key("removingReplicas", Array(INT), "Replicas being removed by a reassignment."),
        Key("addingReplicas", Array(INT), "Replicas being added by a reassignment."),
        Key("leader", INT, "The leader's broker id; -1 when there is none."),
        Key("leaderRecoveryState", INT, "0 (recovered) or 1 (recovering, after an unclean "
            "election)."),
        Key("leaderEpoch", INT, "The leader epoch."),
        Key("partitionEpoch", INT, "The partition epoch."),
        Key("directories", Array(STRING), "The log directory id of each replica, in the order of "
            "replicas (AAAAAAAAAAAAAAAAAAAAAA, Kafka's MIGRATING, when not known)."),
        Key("eligibleLeaderReplicas", Array(INT), "The eligible leader replicas (KIP-966)."),
        Key("lastKnownElr", Array(INT), "The last known eligible leader replicas."),
    ),
)

TOPIC = ObjectKind(
    "topic",
    doc="Each value of image.topics (from TopicRecord):",
    kafka_names=True,
    keys=(
        Key("topicId", STRING, "The topic id (a base64 UUID)."),
        Key("partitions", Map(PARTITION), "An object: partition id (a string) -> the partition, in "
            "ascending order (keys below). kmeta image PATH cat /topics/NAME/N is short for "
            "/topics/NAME/partitions/N."),
    ),
)

PRODUCER_IDS = ObjectKind(
    "producer ids",
    doc="image.producerIds:",
    kafka_names=True,
    keys=(
        Key("nextProducerId", BIGINT, "nextProducerId of the last ProducerIdsRecord; null when "
            "there is none.", nullable=True),
    ),
)

ACL = ObjectKind(
    "acl",
    doc="Each value of image.acls (the fields of AccessControlEntryRecord, with Kafka's numeric "
        "codes):",
    kafka_names=True,
    keys=(
        Key("resourceType", INT, "The resource type: 2 TOPIC, 3 GROUP, 4 CLUSTER, 5 "
            "TRANSACTIONAL_ID, 6 DELEGATION_TOKEN, 7 USER."),
        Key("resourceName", STRING, "The resource name (* with patternType LITERAL: every "
            "resource)."),
        Key("patternType", INT, "3 LITERAL or 4 PREFIXED."),
        Key("principal", STRING, "The principal, such as User:alice."),
        Key("host", STRING, "The host (* for any)."),
        Key("operation", INT, "Kafka's AclOperation code: 2 ALL, 3 READ, 4 WRITE, 5 CREATE, 6 "
            "DELETE, 7 ALTER, 8 DESCRIBE ..."),
        Key("permissionType", INT, "2 DENY or 3 ALLOW."),
    ),
)

SCRAM_CREDENTIAL = ObjectKind(
    "scram credential",
    doc="Each credential of image.scram (from UserScramCredentialRecord):",
    kafka_names=True,
    keys=(
        Key("iterations", INT, "The iteration count."),
        Key("credential", STRING, "A fingerprint (xxh3:<hex>) of the salt, stored key and server "
            "key, which are never shown: it changes whenever they do."),
    ),
)

DELEGATION_TOKEN = ObjectKind(
    "delegation token",
    doc="Each value of image.delegationTokens (from DelegationTokenRecord):",
    kafka_names=True,
    keys=(
        Key("owner", STRING, "The owner's principal."),
        Key("requester", STRING, "The requester's principal."),
        Key("renewers", Array(STRING), "The principals that may renew the token."),
        Key("issueTimestamp", BIGINT, "When it was issued, in milliseconds since the epoch."),
        Key("maxTimestamp", BIGINT, "The latest time it can be renewed to, in milliseconds."),
        Key("expirationTimestamp", BIGINT, "When it expires, in milliseconds."),
    ),
)

METADATA_TRANSACTION = ObjectKind(
    "metadata transaction",
    doc="image.transaction, when not null:",
    kafka_names=True,
    keys=(
        Key("name", STRING, "The name of the BeginTransactionRecord (null when it has "
            "none).", nullable=True),
        Key("pendingRecords", BIGINT, "How many records the transaction holds so far."),
    ),
)

IMAGE_SECTIONS = ObjectKind(
    "image sections",
    doc="image: every section is always present, and the entries of each come in a stable order "
        "(ids ascending, names and fingerprints sorted), so that equal images print the same.",
    kafka_names=True,
    keys=(
        Key("features", Map(INT), "An object: feature name (metadata.version, group.version ...) "
            "-> its finalized level, from FeatureLevelRecords; a feature set to level 0 is "
            "absent."),
        Key("zkMigrationState", STRING, "The state of the last ZkMigrationStateRecord: NONE, "
            "MIGRATION (1), PRE_MIGRATION (2), POST_MIGRATION or ZK; null when there is "
            "none.", nullable=True),
        Key("brokers", Map(BROKER), "An object: broker id (a string) -> the registered broker "
            "(keys below)."),
        Key("controllers", Map(CONTROLLER), "An object: controller id (a string) -> the registered "
            "controller (keys below)."),
        Key("topics", Map(TOPIC), "An object: topic name -> the live topic (keys below); should "
            "two topics have the same name, all but the first (by topic id) are keyed "
            "<name>#<topicId>."),
        Key("configs", Map(Map(Map(STRING))), "An object: resource type, in the order of Kafka's "
            "type ids (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP or UNKNOWN; another id "
            "as a number) -> resource name (\"\" for the cluster-wide default of BROKER) -> config "
            "name -> value, a string. Values of sensitive configs (*.password, sasl.jaas.config "
            "...) are [redacted]."),
        Key("clientQuotas", Map(Map(DOUBLE)), "An object: the quota entity, as compact JSON of its "
            "{entityType: entityName} pairs with sorted keys (a null name is the default entity), "
            "such as {\"client-id\":\"app\"} -> quota key (producer_byte_rate, consumer_byte_rate, "
            "request_percentage ...) -> value, a number."),
        Key("producerIds", PRODUCER_IDS, "The producer id block (keys below)."),
        Key("acls", Map(ACL), "An object: ACL id (Kafka's base64 UUID) -> the ACL (keys below)."),
        Key("scram", Map(Map(SCRAM_CREDENTIAL)), "An object: user name -> mechanism (SCRAM-SHA-256 "
            "or SCRAM-SHA-512) -> the credential (keys below)."),
        Key("delegationTokens", Map(DELEGATION_TOKEN), "An object: a fingerprint of the token id "
            "(xxh3:<hex>; the id is a secret) -> the token (keys below)."),
        Key("transaction", METADATA_TRANSACTION, "A metadata transaction left open at the target "
            "offset (a BeginTransactionRecord without its End or Abort; its records are not "
            "applied yet): keys below; null when none.", nullable=True),
    ),
)

IMAGE = ObjectKind(
    "image",
    keys=(
        Key("kind", STRING, "\"image\"."),
        Key("offset", BIGINT, "The offset the image stands at: the state after every record below "
            "it (--at, else the log end offset; with a lone snapshot file, its end offset)."),
        Key("digest", STRING, "The image digest: xxh3-128 (hex) of the image's canonical JSON "
            "(sorted keys; sensitive config values count as their fingerprints, not as "
            "[redacted]). kmeta image --digest prints the same, as does snapshot --json."),
        Key("image", IMAGE_SECTIONS, "The image: an object with one key per section (keys below)."),
        Key("from", STRING, "The snapshot file the replay started from (the latest live one ending "
            "at or below the target offset, --from-snapshot's, or the snapshot file given as "
            "PATH); null when it started from an empty image at offset 0.", nullable=True),
        Key("start_offset", BIGINT, "The offset the replay started at: the snapshot's end offset, "
            "or 0."),
        Key("records", BIGINT, "How many metadata records of the log were read from start_offset "
            "on (NoOpRecords and records of aborted transactions included; control records and "
            "batches with a bad CRC not)."),
        Key("log_end_offset", BIGINT, "The log end offset: one past the last offset of the log; "
            "null when there is no log (a lone snapshot file, a partition without "
            "batches).", nullable=True),
    ),
)

HISTORY = ObjectKind(
    "history",
    keys=(
        Key("kind", STRING, "\"history\"."),
        Key("offset", BIGINT, "The record's offset."),
        Key("leader_epoch", INT, "The leader epoch of the batch holding it "
            "(partitionLeaderEpoch)."),
        Key("timestamp", BIGINT, "The record's timestamp in milliseconds since the epoch."),
        Key("type", STRING, "Kafka's name of the record type, such as PARTITION_CHANGE_RECORD."),
        Key("version", INT, "The record type's version."),
        Key("data", JSON, "The decoded fields, as data of dump's record objects; values of "
            "sensitive configs and any field Kafka's schema marks sensitive are [redacted]."),
        Key("file", STRING, "The path of the segment (or the snapshot file given as PATH) holding "
            "the record."),
    ),
)

REPLICA = ObjectKind(
    "replica",
    doc="Each element of replicas:",
    keys=(
        Key("path", STRING, "The path as given on the command line."),
        Key("partition_dir", STRING, "The __cluster_metadata-0 directory read."),
        Key("node_id", INT, "node.id from the data directory's meta.properties; null when there is "
            "none or it cannot be read.", nullable=True),
        Key("cluster_id", STRING, "cluster.id from meta.properties, null likewise.", nullable=True),
        Key("log_start_offset", BIGINT, "The log start offset, as Kafka loads the log."),
        Key("log_end_offset", BIGINT, "The log end offset: one past the last offset of the log."),
        Key("latest_epoch", INT, "The latest leader epoch of its epoch cache; null when the cache "
            "is empty.", nullable=True),
        Key("batches", BIGINT, "How many record batches were read."),
        Key("records", BIGINT, "How many records were read."),
        Key("snapshot_ids", Array(STRING), "The live KRaft snapshots: their ids (<endOffset>-<epoch>, "
            "the file name without .checkpoint), in offset order."),
        Key("finding_count", BIGINT, "How many findings reading this replica met (a number; they "
            "follow the diff object as finding objects)."),
        Key("notes", Array(STRING), "What people should know about how the log was read, as "
            "sentences; [] when nothing."),
    ),
)

CONTENT_DIVERGENCE = ObjectKind(
    "content divergence",
    doc="pairs[].content_divergence, when not null:",
    keys=(
        Key("offset", BIGINT, "The base offset of the first differing batch."),
        Key("local_epoch", INT, "Its leader epoch on LOCAL."),
        Key("peer_epoch", INT, "Its leader epoch on PEER."),
        Key("local_batch", STRING, "Where it is on LOCAL: <segment file name>@<byte position>."),
        Key("peer_batch", STRING, "Where it is on PEER, the same way."),
    ),
)

FETCH_SIMULATION = ObjectKind(
    "fetch simulation",
    doc="pairs[].epoch_truncation.local and .peer: one replica fetching from the other as its "
        "leader, simulated until the leader accepts its position:",
    keys=(
        Key("outcome", STRING, "in-sync (the follower only appends), truncate (it truncates, then "
            "appends), snapshot (the leader sends it a snapshot, KIP-630) or below-high-watermark "
            "(it would have to truncate below its own latest snapshot: Kafka refuses, committed "
            "data differs) or undetermined (the simulation reached a state in which Kafka itself "
            "throws; see reason)."),
        Key("truncate_to", BIGINT, "The offset the follower truncates to (truncate) or would have "
            "to (below-high-watermark); null otherwise.", nullable=True),
        Key("snapshot", STRING, "With outcome snapshot: the id of the snapshot the leader sends "
            "(<endOffset>-<epoch>); else null.", nullable=True),
        Key("steps", Array(STRING), "Each fetch of the simulation and the leader's answer, as a "
            "sentence."),
        Key("reason", STRING, "With outcome undetermined: why the simulation stopped; else "
            "null.", nullable=True),
    ),
)

SIDE_ONLY = ObjectKind(
    "records on one side",
    doc="pairs[].only_local and .only_peer, when not null:",
    keys=(
        Key("from_offset", BIGINT, "The offset from which records are counted."),
        Key("batches", BIGINT, "How many batches hold the records counted."),
        Key("records", BIGINT, "How many records are counted (0 when none)."),
        Key("by_type", Map(BIGINT), "An object: record type (Kafka's name; control records by "
            "theirs, such as LEADER_CHANGE) -> how many of those records."),
        Key("first_offset", BIGINT, "The offset of the first record counted; null when there is "
            "none.", nullable=True),
        Key("last_offset", BIGINT, "The offset of the last record counted; null when there is "
            "none.", nullable=True),
    ),
)

IMAGE_DIFF = ObjectKind(
    "image differences",
    doc="pairs[].image_diff: each value is a list of differences from LOCAL's image to PEER's, one "
        "line per changed leaf (\"/topics/t/partitions/0/leader: 1 -> 2\", a side lacking it shown "
        "as (absent)); [] when the images are equal.",
    keys=(
        Key("at_ends", Array(STRING), "The images at each log's end; [\"(not available)\"] when "
            "one cannot be built.", optional=True),
        Key("at_divergence", Array(STRING), "The images at the divergence offset, when the pair "
            "diverged and both can be built there.", optional=True),
        Key("at_log_start", Array(STRING), "When the logs start at different offsets, or both "
            "above 0: the images where the later log starts (at its first snapshot there, if any), "
            "when the other log reaches that offset and both can be built.", optional=True),
    ),
)

EPOCH_TRUNCATION = ObjectKind(
    "epoch truncation",
    keys=(
        Key("local_follows_peer", FETCH_SIMULATION, "LOCAL following PEER as its leader."),
        Key("peer_follows_local", FETCH_SIMULATION, "PEER following LOCAL as its leader."),
    ),
)

PAIR = ObjectKind(
    "pair",
    doc="Each element of pairs:",
    keys=(
        Key("local", STRING, "LOCAL's path, as given."),
        Key("peer", STRING, "This PEER's path, as given."),
        Key("status", STRING, "identical (the same offsets and bytes), equivalent (the same log "
            "end and content where both hold it; one log starts later, a snapshot standing in for "
            "the rest), lagging (one log is a strict prefix of the other) or diverged."),
        Key("diverged", BOOLEAN, "Whether status is diverged."),
        Key("divergence_offset", BIGINT, "Where the logs stop agreeing: the lower of the offset "
            "Kafka's fetch would truncate the follower to and the first offset whose bytes differ; "
            "null unless diverged.", nullable=True),
        Key("divergence_epoch", INT, "The last leader epoch the two logs share there (the "
            "diverging epoch Kafka's leader answers); null unless diverged, or when it is not "
            "known.", nullable=True),
        Key("content_divergence", CONTENT_DIVERGENCE, "The first batch both replicas hold at the "
            "same offsets with different bytes (keys below); null when there is "
            "none.", nullable=True),
        Key("epoch_truncation", EPOCH_TRUNCATION, "What Kafka's fetch (KIP-595) would do, both "
            "ways: an object with the keys local (LOCAL following PEER) and peer (PEER following "
            "LOCAL), each with the keys below."),
        Key("lagging", STRING, "With status lagging: the path of the replica whose log is the "
            "shorter; else null.", nullable=True),
        Key("lag_offsets", BIGINT, "With status lagging: how many offsets that replica lacks; else "
            "0."),
        Key("only_local", SIDE_ONLY, "With status diverged: the records LOCAL holds from "
            "divergence_offset on (only those of the differing batches when the bytes differ under "
            "the same epochs); with status lagging and PEER the shorter: the records LOCAL holds "
            "past PEER's log end. Keys below; null otherwise.", nullable=True),
        Key("only_peer", SIDE_ONLY, "The same for PEER (with status lagging: when LOCAL is the "
            "shorter).", nullable=True),
        Key("image_diff", IMAGE_DIFF, "Differences between the two cluster images (keys below); {} "
            "when the logs are identical or with --no-images."),
        Key("kafka", Array(STRING), "What Kafka would do with the two replicas, as sentences."),
        Key("notes", Array(STRING), "What people should know about the comparison, as sentences; "
            "[] when nothing."),
    ),
)

MAJORITY = ObjectKind(
    "majority",
    doc="majority, when not null:",
    keys=(
        Key("prefix_end", BIGINT, "The end offset (exclusive) of the longest prefix of the log "
            "that a majority of the replicas hold byte for byte."),
        Key("held_by", Array(STRING), "The paths of the replicas holding that prefix."),
        Key("beyond", Map(BIGINT), "An object: path -> how many offsets past prefix_end that "
            "replica's log goes on, for each replica whose log does; {} when none."),
        Key("majority_of", INT, "How many replicas make a majority."),
    ),
)

DIFF = ObjectKind(
    "diff",
    keys=(
        Key("kind", STRING, "\"diff\"."),
        Key("diverged", BOOLEAN, "Whether LOCAL diverged from some PEER (the exit status is then "
            "1)."),
        Key("divergence_offset", BIGINT, "The divergence_offset of the first pair that diverged "
            "(PEERs in the order given); null when none did.", nullable=True),
        Key("divergence_epoch", INT, "The divergence_epoch of that pair; null when none diverged "
            "or the epoch is not known.", nullable=True),
        Key("lagging_replicas", Array(STRING), "The paths of the replicas whose log is a strict prefix of "
            "the other's in some pair, sorted; null (never []) when there is none.", nullable=True),
        Key("replicas", Array(REPLICA), "One object per replica, LOCAL first, in the order given "
            "(keys below)."),
        Key("pairs", Array(PAIR), "One object per PEER, in the order given: LOCAL compared with it "
            "(keys below)."),
        Key("majority", MAJORITY, "With three replicas or more: the longest prefix a majority "
            "holds (keys below); null with two.", nullable=True),
    ),
)

EPOCH_START = ObjectKind(
    "epoch_start",
    keys=(
        Key("epoch", INT, "A leader epoch."),
        Key("start_offset", BIGINT, "Its first offset."),
    ),
)

TRUNCATE = ObjectKind(
    "truncate",
    keys=(
        Key("kind", STRING, "\"truncate\"."),
        Key("path", STRING, "PATH, as given."),
        Key("requested", BIGINT, "The offset asked for: --to, or with --to-divergence-with the "
            "offset where PATH diverged from PEER (its log end offset when it did not)."),
        Key("truncate_to", BIGINT, "Where the log would end: requested, or the base offset of the "
            "batch holding it (Kafka truncates whole batches)."),
        Key("old_log_end_offset", BIGINT, "The log end offset now."),
        Key("new_log_end_offset", BIGINT, "The log end offset after the truncation: the lower of "
            "truncate_to and old_log_end_offset."),
        Key("removed_records", SIDE_ONLY, "The records at or after truncate_to, which the truncation "
            "removes: an object with the keys of diff's pairs[].only_local."),
        Key("epoch_cache_before", Array(EPOCH_START), "The leader-epoch cache now: one object "
            "per epoch with its start offset."),
        Key("epoch_cache_after", Array(EPOCH_START), "The leader-epoch cache after the "
            "truncation (Kafka truncates it from the end), the same way."),
        Key("invalid_snapshots", Array(STRING), "The KRaft snapshot files (.checkpoint) whose end "
            "offset is past truncate_to."),
        Key("image_changes", Array(STRING), "The differences from the cluster image at the log end to "
            "the image at truncate_to, one line per changed leaf; null when nothing is removed, "
            "with --no-images, or when an image cannot be built (a note says why).", nullable=True),
        Key("reason", STRING, "With --to-divergence-with: why this offset, as a sentence; else "
            "null.", nullable=True),
        Key("notes", Array(STRING), "What people should know, as sentences (a target inside a "
            "batch, a cut below the latest snapshot); [] when nothing."),
        Key("applied", BOOLEAN, "Always false: this object describes a simulation."),
    ),
)

CUT = ObjectKind(
    "cut",
    doc="cut, when not null:",
    keys=(
        Key("file", STRING, "The name of the file where the log ends."),
        Key("position", BIGINT, "The byte position in it: the bytes before it are kept."),
        Key("offset", BIGINT, "The first offset removed, when the bytes there name one; else "
            "null.", nullable=True),
        Key("cause", STRING, "damage, truncate_to (--truncate-to) or snapshot "
            "(--follow-snapshot)."),
        Key("code", STRING, "With cause damage: the code of the finding that ends the log; else "
            "null.", nullable=True),
        Key("message", STRING, "What is there, as a sentence."),
        Key("reason", STRING, "Why the log ends there, as a sentence."),
    ),
)

REMOVED = ObjectKind(
    "removed",
    doc="removed:",
    keys=(
        Key("batches", BIGINT, "How many batches are removed (a torn batch counts)."),
        Key("records", BIGINT, "How many records of intact batches are removed."),
        Key("bytes", BIGINT, "Bytes of segments left out: cut tails and dropped segments."),
        Key("first_offset", BIGINT, "The first offset removed; null when nothing "
            "is.", nullable=True),
        Key("last_offset", BIGINT, "The last offset of the last intact batch removed; null when "
            "not known.", nullable=True),
        Key("batches_by_type", Map(BIGINT), "An object: data, control, legacy, damaged (a bad CRC: "
            "its records are not trusted) or torn -> how many batches removed."),
        Key("records_by_type", Map(BIGINT), "An object: record type (Kafka's name) -> how many "
            "records removed."),
        Key("damage", Array(FINDING), "Every other damage met in what is removed, as finding "
            "objects (what ends the log is cut)."),
    ),
)

CHANGE = ObjectKind(
    "change",
    doc="Each element of changes:",
    keys=(
        Key("file", STRING, "The name of the file or directory in PARTITION_DIR."),
        Key("file_kind", STRING, "What it is, told from its name (as file_kind of file objects)."),
        Key("action", STRING, "copied (byte for byte), cut (a prefix of it is kept), dropped (a "
            "segment after the cut), quarantined (moved under quarantine/), rebuilt (written anew "
            "from the kept batches) or omitted (left out: Kafka rebuilds or deletes it)."),
        Key("reason", STRING, "Why, as a sentence."),
        Key("target", STRING, "Where it goes, relative to the output directory; null when it is "
            "not written.", nullable=True),
        Key("bytes_in", BIGINT, "Its size in the input; null when the input does not have "
            "it.", nullable=True),
        Key("bytes_out", BIGINT, "Bytes written for it (0 when it is not written)."),
        Key("first_offset", BIGINT, "A segment copied or cut that keeps batches: the first offset "
            "kept; a KRaft snapshot: its end offset.", optional=True),
        Key("last_offset", BIGINT, "A segment copied or cut that keeps batches: the last offset "
            "kept; a KRaft snapshot: its end offset.", optional=True),
        Key("details", JSON, "More facts as an object, by kind of file: for example a cut "
            "segment's position, removed_bytes, code and cause, a KRaft snapshot's epoch and live, "
            "the entries of a rebuilt leader-epoch-checkpoint and whether they are "
            "unchanged.", optional=True),
    ),
)

COMMITTED_LOST = ObjectKind(
    "committed records lost",
    keys=(
        Key("records", BIGINT, "How many committed records the repaired log no longer holds."),
        Key("first_offset", BIGINT, "The first of them: the repaired log's end offset."),
        Key("last_offset", BIGINT, "The last of them: the snapshot's end offset - 1."),
        Key("snapshot", STRING, "The latest intact snapshot past the cut: "
            "<endOffset>-<epoch>."),
    ),
)

REPAIR = ObjectKind(
    "repair",
    also=("repair-plan",),
    keys=(
        Key("kind", STRING, "\"repair\" or \"repair-plan\"."),
        Key("file", STRING, "The input partition directory."),
        Key("output", STRING, "The directory written (PARTITION_DIR itself with --in-place); null "
            "for a plan.", nullable=True),
        Key("in_place", BOOLEAN, "Whether --in-place was given and done."),
        Key("backup", STRING, "With --in-place: where the original was moved; else "
            "null.", nullable=True),
        Key("truncate_to", BIGINT, "--truncate-to (truncate --apply: its cut); null when not "
            "given.", nullable=True),
        Key("log_start_offset", BIGINT, "The repaired log's start offset."),
        Key("input_log_end_offset", BIGINT, "One past the last offset of the last intact batch "
            "anywhere in the input; null when there is none.", nullable=True),
        Key("log_end_offset", BIGINT, "The repaired log's end offset."),
        Key("cut", CUT, "Where the repaired log ends and why (keys below); null when every batch "
            "is kept.", nullable=True),
        Key("removed", REMOVED, "What the repaired log no longer holds (keys below)."),
        Key("committed_lost", COMMITTED_LOST, "Committed records the repaired log no longer holds: "
            "the offsets from its end up to the latest intact snapshot past it (Kafka writes "
            "snapshots only at or below the high watermark), as an object with records, "
            "first_offset, last_offset and snapshot (its <endOffset>-<epoch>); null when none. The "
            "replica must fetch them again from the leader; --follow-snapshot keeps the state up "
            "to the snapshot.", nullable=True),
        Key("epoch_cache", Array(EPOCH_START), "The leader-epoch cache rebuilt from the kept "
            "batches (what leader-epoch-checkpoint holds): one object per epoch with its start "
            "offset."),
        Key("changed", BOOLEAN, "Whether the output differs from the input in anything but files "
            "copied byte for byte (or rebuilt unchanged)."),
        Key("changes", Array(CHANGE), "One object per file or directory of the input, by name "
            "(keys below)."),
        Key("notes", Array(STRING), "What people should know: problems repair leaves, choices it "
            "made, as sentences; [] when nothing."),
    ),
)

SNAPSHOT_ID = ObjectKind(
    "snapshot id",
    doc="snapshot_id:",
    keys=(
        Key("end_offset", BIGINT, "One past the last offset the snapshot contains."),
        Key("epoch", INT, "The leader epoch of the last offset it contains."),
    ),
)

SNAPSHOT = ObjectKind(
    "snapshot",
    keys=(
        Key("kind", STRING, "\"snapshot\"."),
        Key("file", STRING, "The path of the file written."),
        Key("snapshot_id", SNAPSHOT_ID, "The snapshot id, as its file name spells it (keys "
            "below)."),
        Key("digest", STRING, "The image digest (xxh3-128, hex), the same for the replayed image "
            "and the file (kmeta image --digest)."),
        Key("size", BIGINT, "The file's size in bytes."),
        Key("records", BIGINT, "How many metadata records it holds (the header and footer control "
            "records not counted)."),
        Key("records_by_type", Map(BIGINT), "An object: record type -> how many, in the order the "
            "types first appear."),
        Key("last_contained_log_timestamp", BIGINT, "The header's timestamp: maxTimestamp of the "
            "log batch holding the last offset contained."),
        Key("metadata_version", INT, "The metadata.version feature level of the image; null when "
            "it has none.", nullable=True),
        Key("kraft_version", INT, "The kraft.version written in the header (0 when the log has "
            "none)."),
        Key("voters", Array(INT), "The voter ids of the header's Voters record; null when there is "
            "none (kraft_version 0).", nullable=True),
        Key("from", STRING, "The snapshot file the replay started from; null when it started from "
            "an empty image at offset 0.", nullable=True),
        Key("replayed_records", BIGINT, "How many log records were applied on top of it."),
        Key("notes", Array(STRING), "What people should know, as sentences; [] when nothing."),
    ),
)

EXPORT = ObjectKind(
    "export",
    keys=(
        Key("kind", STRING, "\"export\"."),
        Key("out", STRING, "The output directory (--to)."),
        Key("format", STRING, "parquet or json."),
        Key("master", STRING, "The Spark master the job ran on."),
        Key("rows", Map(BIGINT), "An object: table name -> rows written."),
        Key("finding_counts", FINDING_COUNTS, "With the findings table: the number of its "
            "findings by severity (each present, 0 when none); null without it.",
            nullable=True),
        Key("input_partitions", Map(BIGINT), "An object: table name -> Spark input partitions "
            "read."),
        Key("seconds", DOUBLE, "How long the export took, in seconds (three decimals)."),
        Key("live_log_dirs", Array(STRING), "The log dirs a running process (a broker) held "
            "when the export listed them (S012, among the findings table's rows): their "
            "tables are of files Kafka was writing; empty when none."),
    ),
)

REGISTRATION = ObjectKind(
    "registration",
    doc="The registration of a node_event that registers a node:",
    keys=(
        Key("listeners", Array(ENDPOINT), "Its listeners (keys as the image's endPoints)."),
        Key("features", Map(Array(INT)), "An object: feature name -> [minSupportedVersion, "
            "maxSupportedVersion]."),
        Key("rack", STRING, "Brokers: the rack, or null.", nullable=True, optional=True),
        Key("log_dirs", Array(STRING), "Brokers: the ids of its log directories.",
            optional=True),
    ),
)

NODE_EVENT = ObjectKind(
    "node_event",
    keys=(
        Key("kind", STRING, "\"node_event\"."),
        Key("role", STRING, "broker or controller."),
        Key("node", INT, "The broker or controller id."),
        Key("event", STRING, "registered (a first incarnation), re_registered (a new "
            "incarnation), amended (the same incarnation again), fenced, unfenced, "
            "controlled_shutdown, unregistered, or log_dirs (only its log dirs changed)."),
        Key("offset", BIGINT, "The offset of the record that made the change."),
        Key("timestamp", BIGINT, "Its batch's time, in milliseconds since the epoch."),
        Key("record", STRING, "Kafka's name of that record's type."),
        Key("state_before", STRING, "The node's state before: unregistered, fenced, "
            "unfenced, controlled_shutdown, shut_down (fenced after a controlled shutdown), "
            "or unknown (its first record in a log whose start no snapshot covers); a "
            "controller's: unregistered or registered."),
        Key("state", STRING, "Its state after."),
        Key("in_state_ms", BIGINT, "How long it had been in state_before; null when it "
            "entered it before the replay began.", nullable=True),
        Key("silent_ms", BIGINT, "How much of in_state_ms the log holds no record of "
            "(no record for ten minutes or more: the cluster was off or the log not kept): "
            "no time the node was seen in state_before."),
        Key("broker_epoch", BIGINT, "Brokers: the registration's broker epoch.", nullable=True),
        Key("incarnation_id", STRING, "The registration's incarnation id.", nullable=True),
        Key("left_isr", INT, "ISRs the node left in the change's batch "
            "(PartitionChangeRecords); null before the first exact state (state_known_from).",
            nullable=True),
        Key("lost_leadership", INT, "Partitions whose leadership it lost in that batch; null "
            "as left_isr.", nullable=True),
        Key("gained_leadership", INT, "Partitions whose leader it became in that batch; null "
            "as left_isr.", nullable=True),
        Key("fenced_ms", BIGINT, "On an unfence or an unregistration: how long the broker had "
            "been fenced, across new incarnations in between; null when not known.",
            nullable=True),
        Key("fenced_silent_ms", BIGINT, "How much of fenced_ms the log holds no record of "
            "(see silent_ms)."),
        Key("controlled_shutdown_first", BOOLEAN, "On a new incarnation: whether the one "
            "before shut down cleanly: true after a controlled shutdown; false when it was "
            "never fenced or its fence took leaderships away (a crash or a lost session, "
            "V131); null when the log cannot tell (see fence_kind).", nullable=True),
        Key("fence_kind", STRING, "On a fence of an unfenced broker, what it tells of how "
            "the broker stopped: controlled_shutdown (after its controlled shutdown), "
            "uncontrolled (it took leaderships away: no clean shutdown), own_controller (its "
            "own controller wrote it in the term the broker registered in: a combined node "
            "whose process was alive), cannot_tell (it led nothing and no controlled shutdown "
            "is on disk: a clean shutdown and a lost session write the same records), "
            "quorum_restarted (it took leaderships away within a minute after every "
            "controller registered anew: the new controller's session expiry after a "
            "whole-cluster restart, which a clean stop and a crash write alike). On a "
            "new incarnation: the kind of the fence that stopped the one before. Else null.",
            nullable=True),
        Key("registration", REGISTRATION, "On registered, re_registered and amended: the "
            "registration (keys below); else null.", nullable=True),
    ),
)

QUORUM_LEADER = ObjectKind(
    "quorum_leader",
    keys=(
        Key("kind", STRING, "\"quorum_leader\"."),
        Key("epoch", INT, "The Raft leader epoch."),
        Key("leader", INT, "The controller that led it (its LeaderChange record); null when "
            "none was read.", nullable=True),
        Key("offset", BIGINT, "The first offset of the epoch read."),
        Key("timestamp", BIGINT, "That batch's time, in milliseconds since the epoch."),
        Key("voters", Array(INT), "The voters the LeaderChange names, or null.", nullable=True),
        Key("duration_ms", BIGINT, "Until the next epoch began (for the last, until the last "
            "batch read)."),
    ),
)

NODE_SUMMARY = ObjectKind(
    "node_summary",
    doc="Each element of brokers_summary.nodes:",
    keys=(
        Key("role", STRING, "broker or controller."),
        Key("node", INT, "Its id."),
        Key("state", STRING, "Its state at the end of the replay (as state in node_event)."),
        Key("broker_epoch", BIGINT, "Brokers: the broker epoch at the end.", nullable=True),
        Key("incarnation_id", STRING, "The incarnation id at the end.", nullable=True),
        Key("registrations", INT, "Registrations shown (new incarnations and amends); null "
            "for a snapshot without a log.", nullable=True),
        Key("incarnations", INT, "New incarnations shown; null as registrations.",
            nullable=True),
        Key("fences", INT, "Fences shown; null as registrations.", nullable=True),
        Key("controlled_shutdowns", INT, "Controlled shutdowns shown; null when a record "
            "shown was written below metadata.version 3.3-IV3 (or at an unknown one), which "
            "records none.", nullable=True),
        Key("crashes", INT, "New incarnations the log says did not shut down cleanly first "
            "(V131); null when a restart shown cannot be told apart, or when its last fence "
            "shown cannot tell a crash (fence_kind uncontrolled, cannot_tell or "
            "quorum_restarted) and it neither came back unfenced nor registered anew.",
            nullable=True),
        Key("fenced_ms", BIGINT, "Time fenced, summed over the fences shown: those that "
            "ended (unfenced or unregistered) and, when what is shown reaches the end of "
            "the log, one still open there; stretches with no record in the log are not "
            "counted (fenced_silent_ms); null when one began before the replay.",
            nullable=True),
        Key("longest_fenced_ms", BIGINT, "The longest of those; null as fenced_ms.",
            nullable=True),
        Key("last_offset", BIGINT, "The offset of its last change shown, or null.",
            nullable=True),
        Key("last_timestamp", BIGINT, "That change's time, or null.", nullable=True),
    ),
)

BROKERS_SUMMARY = ObjectKind(
    "brokers_summary",
    keys=(
        Key("kind", STRING, "\"brokers_summary\"."),
        Key("snapshot", STRING, "The snapshot the replay started from, or null (offset 0).",
            nullable=True),
        Key("snapshot_only", BOOLEAN, "True when there is no log: the nodes' states at the "
            "snapshot, no history."),
        Key("start_offset", BIGINT, "The offset the replay started at."),
        Key("log_end_offset", BIGINT, "The log end offset: the offset after the last one "
            "read; in a metadata partition dir with no segment left, the latest snapshot's "
            "end offset (Kafka makes the log anew there, empty, as info's partition_dir "
            "says); null for a snapshot file given alone.", nullable=True),
        Key("first_timestamp", BIGINT, "The first batch's time read, or null.", nullable=True),
        Key("last_timestamp", BIGINT, "The newest batch time read (a clock set back leaves "
            "the last batch older than some before it), or null.", nullable=True),
        Key("records", BIGINT, "Records read: metadata_records + control_records, as verify "
            "and info count them."),
        Key("metadata_records", BIGINT, "Metadata records replayed (NoOps included)."),
        Key("control_records", BIGINT, "Control records read (LeaderChange ...)."),
        Key("state_known_from", BIGINT, "The offset from which every node's state is exact: "
            "start_offset, unless the log starts where no snapshot covers it (the snapshot "
            "was deleted); then the end offset of the first usable snapshot, or null when "
            "there is none.", nullable=True),
        Key("exact_snapshot", STRING, "That snapshot, when the replay did not start from "
            "it; else null.", nullable=True),
        Key("voters", Array(INT), "The quorum's voter ids, as the log last names them (a "
            "VotersRecord or a LeaderChange) or else as quorum-state holds them; null when "
            "neither says.", nullable=True),
        Key("voters_from", STRING, "What named the voters: \"the VotersRecord at offset "
            "N\", \"the LeaderChange of epoch N\" or \"quorum-state\"; null with voters.",
            nullable=True),
        Key("nodes", Array(NODE_SUMMARY), "One object per node shown (keys above)."),
        Key("not_on_disk", Array(STRING), "What the metadata log does not hold (heartbeats, "
            "the cause of a fence), in words."),
    ),
)

RETENTION_SNAPSHOT = ObjectKind(
    "retention_snapshot",
    keys=(
        Key("kind", STRING, "\"retention_snapshot\"."),
        Key("end_offset", BIGINT, "The snapshot id's end offset (exclusive: the last offset it "
            "holds + 1)."),
        Key("epoch", INT, "The snapshot id's epoch."),
        Key("file", STRING, "The path of the snapshot file."),
        Key("state", STRING, "live (.checkpoint), part (.checkpoint.part) or deleted "
            "(.checkpoint.deleted)."),
        Key("size", BIGINT, "Its bytes, or null when it cannot be read.", nullable=True),
        Key("records", BIGINT, "Records in it, its SnapshotHeader and SnapshotFooter included "
            "(live snapshots), or null.", nullable=True),
        Key("last_contained_log_timestamp", BIGINT, "Its SnapshotHeader's "
            "lastContainedLogTimestamp (live snapshots), or null.", nullable=True),
        Key("log_bytes", BIGINT, "Bytes of log batches between the previous live snapshot's end "
            "(the first: offset 0) and its end; null when the log does not hold all of them.",
            nullable=True),
        Key("log_records", BIGINT, "Records of those batches, or null.", nullable=True),
        Key("since_previous_ms", BIGINT, "Its last-contained timestamp minus the previous live "
            "snapshot's, or null.", nullable=True),
        Key("trigger", STRING, "bytes (log_bytes reached --max-bytes-between-snapshots), time "
            "(since_previous_ms reached --snapshot-interval), unknown (neither: a restart "
            "resets Kafka's counters), or null when log_bytes is.", nullable=True),
        Key("fate", STRING, "kept, \"deleted (size)\" or \"deleted (time)\" by retention, or "
            "removed or deleted at startup."),
    ),
)

RETENTION_SEGMENT = ObjectKind(
    "retention_segment",
    keys=(
        Key("kind", STRING, "\"retention_segment\"."),
        Key("base_offset", BIGINT, "The segment's base offset (its name)."),
        Key("file", STRING, "The path of the segment file."),
        Key("size", BIGINT, "Its bytes."),
        Key("last_offset", BIGINT, "The last offset of its last batch, or null when it is "
            "empty.", nullable=True),
        Key("max_timestamp", BIGINT, "The newest batch time in it, or null.", nullable=True),
        Key("fate", STRING, "kept or deleted (by retention)."),
    ),
)

FOLLOWER = ObjectKind(
    "follower",
    keys=(
        Key("kind", STRING, "\"follower\"."),
        Key("replica", STRING, "The NODE of --replica: the follower's name as given."),
        Key("offset", BIGINT, "Its log end offset: where it fetches from."),
        Key("epoch", INT, "Its last fetched epoch (given, or this log's epoch there)."),
        Key("epoch_given", BOOLEAN, "Whether --replica gave the epoch."),
        Key("answer", STRING, "valid (it fetches on), diverging (it truncates to truncate_to) "
            "or snapshot (it fetches the snapshot answer_offset-answer_epoch)."),
        Key("answer_offset", BIGINT, "The offset of the answer."),
        Key("answer_epoch", INT, "The epoch of the answer."),
        Key("truncate_to", BIGINT, "Diverging: where the follower's log ends once the leader "
            "accepts its fetch (Kafka's truncateToEndOffset, round after round): never past "
            "its own end; null otherwise.", nullable=True),
        Key("truncate_exact", BOOLEAN, "Whether truncate_to is exact (the follower's dir was "
            "read, or the answer's epoch is 0 or its own) or only the most it can be: the "
            "lower of its end and answer_offset (its earlier epochs are not known from "
            "END_OFFSET:EPOCH)."),
        Key("refused_below_offset", BIGINT, "Diverging, its dir read: the end offset of "
            "its latest snapshot when truncate_to is below it (Kafka refuses: committed data "
            "differs, as kmeta diff says); null otherwise.", nullable=True),
    ),
)

RETENTION_SUMMARY = ObjectKind(
    "retention_summary",
    keys=(
        Key("kind", STRING, "\"retention_summary\"."),
        Key("path", STRING, "The metadata partition directory."),
        Key("log_start_offset", BIGINT, "The log start offset (the first segment's base "
            "offset), or null without a segment.", nullable=True),
        Key("log_end_offset", BIGINT, "The log end offset, or null.", nullable=True),
        Key("now_timestamp", BIGINT, "The time ages are judged at (ms since the epoch), or "
            "null.", nullable=True),
        Key("now_from", STRING, "Where now came from: --now, the newest batch or the newest "
            "snapshot."),
        Key("retention_bytes", BIGINT, "metadata.max.retention.bytes used (-1: off)."),
        Key("retention_ms", BIGINT, "metadata.max.retention.ms used (-1: off)."),
        Key("bytes_between_snapshots", BIGINT, "metadata.log.max.record.bytes.between."
            "snapshots used."),
        Key("snapshot_interval_ms", BIGINT, "metadata.log.max.snapshot.interval.ms used (0: "
            "off)."),
        Key("bytes", BIGINT, "Bytes of log and live snapshots now."),
        Key("startup", Array(STRING), "What Kafka does when it opens the directory, in words, "
            "in order."),
        Key("refusal", STRING, "Why Kafka refuses to start (Inconsistent snapshot state), or "
            "null.", nullable=True),
        Key("log_start_offset_after", BIGINT, "The log start offset after retention, or null when "
            "Kafka would not start.", nullable=True),
        Key("bytes_after", BIGINT, "Bytes of log and snapshots after retention, or null.",
            nullable=True),
        Key("stopped", Map(STRING), "An object: rule (size, time) -> why it stopped, in words."),
    ),
)

CONSUMER_GROUP = ObjectKind(
    "consumer_group",
    keys=(
        Key("kind", STRING, "\"consumer_group\"."),
        Key("group", STRING, "The group id."),
        Key("protocol", STRING, "classic (GroupMetadata records) or the new coordinator's "
            "consumer, share or streams group."),
        Key("protocol_type", STRING, "A classic group's protocol type (consumer, connect, "
            "...), or null.", nullable=True),
        Key("generation", INT, "A classic group's generation, a new group's epoch, or null.",
            nullable=True),
        Key("members", INT, "A classic group's members in its last record, or null.",
            nullable=True),
        Key("deleted", BOOLEAN, "The group's last record is a tombstone."),
        Key("source_offset", BIGINT, "The offset of that record in its __consumer_offsets "
            "partition, or null when no record made the group.", nullable=True),
    ),
)

CONSUMER_OFFSET = ObjectKind(
    "consumer_offset",
    keys=(
        Key("kind", STRING, "\"consumer_offset\"."),
        Key("group", STRING, "The group id (\"(--position)\" for a position given by hand)."),
        Key("topic", STRING, "The topic."),
        Key("partition", INT, "The partition."),
        Key("offset", BIGINT, "The committed offset: the next record the group reads; null "
            "once deleted.", nullable=True),
        Key("leader_epoch", INT, "The committed leader epoch; null when the commit carries none "
            "(OffsetCommitValue before v3, or -1 on disk: a client that sent none).",
            nullable=True),
        Key("commit_timestamp", BIGINT, "When it was committed (ms since the epoch), or null.",
            nullable=True),
        Key("metadata", STRING, "The commit's metadata string, or null.", nullable=True),
        Key("deleted", BOOLEAN, "The last record of this key is a tombstone."),
        Key("group_protocol", STRING, "The protocol of the group's metadata record, or null "
            "without one.", nullable=True),
        Key("group_deleted", BOOLEAN, "Whether the group's metadata record is a tombstone, or "
            "null without one.", nullable=True),
        Key("transactional", BOOLEAN, "Committed in a transaction (applied at its COMMIT)."),
        Key("value_version", INT, "The OffsetCommitValue version, or null.", nullable=True),
        Key("source", STRING, "The __consumer_offsets partition dir (\"--position\" by "
            "hand)."),
        Key("source_offset", BIGINT, "The record's offset there (null by hand).", nullable=True),
        Key("verdict", STRING, "With --against: fine, truncated, epoch_unknown, out_of_range "
            "or no_epoch.", optional=True),
        Key("end_epoch", INT, "With --against: the epoch of the replica's answer to "
            "OffsetsForLeaderEpoch, or null.", optional=True, nullable=True),
        Key("end_offset", BIGINT, "With --against: the end offset of that answer, or null.",
            optional=True, nullable=True),
        Key("reset_to", BIGINT, "With --against: the offset the consumer seeks to when "
            "truncated (\"the first offset known to diverge\"), else null.", optional=True,
            nullable=True),
        Key("reset_epoch", INT, "With --against: the epoch it seeks with, or null.",
            optional=True, nullable=True),
        Key("why", STRING, "With --against: the verdict in words.", optional=True),
        Key("against", STRING, "With --against: the replica's partition dir.", optional=True),
    ),
)

CONSUMERS_SUMMARY = ObjectKind(
    "consumers_summary",
    keys=(
        Key("kind", STRING, "\"consumers_summary\"."),
        Key("partitions", INT, "__consumer_offsets partitions read (null with --position).",
            nullable=True),
        Key("records", BIGINT, "Records read from them, or null.", nullable=True),
        Key("groups", INT, "Groups with a metadata record, or null.", nullable=True),
        Key("groups_deleted", INT, "Of them, deleted, or null.", nullable=True),
        Key("offsets", INT, "Committed offsets listed (not deleted)."),
        Key("offsets_deleted", INT, "Deleted offsets listed."),
        Key("offsets_without_epoch", INT, "Committed offsets without a leader epoch."),
        Key("aborted", INT, "Transactional commits dropped by an ABORT marker, or null.",
            nullable=True),
        Key("pending", INT, "Transactional commits with no marker yet, or null.",
            nullable=True),
        Key("against", STRING, "--against, or null.", nullable=True),
        Key("verdicts", Map(INT), "An object: verdict -> how many offsets got it."),
        Key("unmatched", INT, "Offsets of partitions the replica does not hold."),
        Key("consumers_moved", INT, "Offsets whose consumer would be truncated, reset or out "
            "of range."),
    ),
)

REMOTE_SEGMENT = ObjectKind(
    "remote_segment",
    keys=(
        Key("kind", STRING, "\"remote_segment\"."),
        Key("topic", STRING, "The user partition's topic."),
        Key("partition", INT, "Its partition."),
        Key("segment_id", STRING, "The remote segment's id (Kafka's base64 uuid)."),
        Key("start_offset", BIGINT, "Its first offset."),
        Key("last_offset", BIGINT, "Its last offset (inclusive, as Kafka's endOffset)."),
        Key("segment_epochs", Array(EPOCH_START), "Its leader epochs, each with its first "
            "offset in the segment (segmentLeaderEpochs)."),
        Key("size", BIGINT, "SegmentSizeInBytes."),
        Key("state", STRING, "Its state after the replay: COPY_SEGMENT_STARTED, "
            "COPY_SEGMENT_FINISHED or DELETE_SEGMENT_STARTED."),
        Key("broker", INT, "The broker of its last event."),
        Key("event_timestamp", BIGINT, "The time of its last event (ms since the epoch)."),
        Key("max_timestamp", BIGINT, "The newest record time in it."),
        Key("source_offset", BIGINT, "The offset of the record that added it in its "
            "__remote_log_metadata partition."),
    ),
)

BOOTSTRAP = ObjectKind(
    "bootstrap",
    keys=(
        Key("fetch_from", BIGINT, "Where the empty follower fetches from, or null when "
            "unknown (it waits and retries).", nullable=True),
        Key("records", BIGINT, "Records it replicates from the leader's local log, or null.",
            nullable=True),
        Key("bytes", BIGINT, "Bytes it replicates (batches whole), or null.", nullable=True),
        Key("epoch_cache", Array(EPOCH_START), "The epoch cache it rebuilds from remote "
            "storage first."),
        Key("why", STRING, "The path in words."),
    ),
)

TIERED_PARTITION = ObjectKind(
    "tiered_partition",
    keys=(
        Key("kind", STRING, "\"tiered_partition\"."),
        Key("topic", STRING, "The topic."),
        Key("partition", INT, "The partition."),
        Key("path", STRING, "Its partition dir."),
        Key("topic_id", STRING, "Its topic id (partition.metadata), or null.", nullable=True),
        Key("metadata_partition", INT, "The __remote_log_metadata partition Kafka's "
            "partitioner chooses for it, or null without a topic id.", nullable=True),
        Key("found_in", Array(STRING), "The __remote_log_metadata partition dirs that hold its "
            "records."),
        Key("log_start_offset", BIGINT, "The log start offset (log-start-offset-checkpoint, "
            "else the local log start)."),
        Key("local_log_start_offset", BIGINT, "The first local segment's base offset."),
        Key("log_end_offset", BIGINT, "The log end offset."),
        Key("epoch_cache", Array(EPOCH_START), "Its epoch cache (leader-epoch-checkpoint, else "
            "the batches)."),
        Key("remote_segments", INT, "Remote segments known after the replay."),
        Key("remote_segments_deleted", INT, "Remote segments whose deletion finished."),
        Key("last_tiered_offset", BIGINT, "RemoteLogManager.findHighestRemoteOffset; null when "
            "nothing is tiered (Kafka's -1).", nullable=True),
        Key("earliest_pending_upload", BIGINT, "The KIP-1023 offset, or null when unknown.",
            nullable=True),
        Key("classic", BOOTSTRAP, "The classic bootstrap."),
        Key("kip1023", BOOTSTRAP, "The KIP-1023 bootstrap."),
        Key("ratio", DOUBLE, "KIP-1023's bytes over the classic's, or null.", nullable=True),
        Key("tiered_local_segments", INT, "Local segments whose offsets are all tiered."),
        Key("notes", Array(STRING), "Edge cases, in words."),
    ),
)

TIERING_SUMMARY = ObjectKind(
    "tiering_summary",
    keys=(
        Key("kind", STRING, "\"tiering_summary\"."),
        Key("metadata_dirs", Array(STRING), "The __remote_log_metadata partition dirs read; "
            "[] when the data dir holds none (nothing tiered here: no partition is reported, "
            "exit 0)."),
        Key("metadata_partitions", INT, "--metadata-partitions."),
        Key("records", BIGINT, "Records read from them."),
        Key("partitions", INT, "User partitions reported (0 when nothing is tiered here)."),
        Key("now_timestamp", BIGINT, "The time ages are judged at (ms since the epoch), or "
            "null.", nullable=True),
        Key("local_retention_ms", BIGINT, "--local-retention (-1: never)."),
    ),
)

COMPACT_STRATEGY = ObjectKind(
    "compact_strategy",
    keys=(
        Key("kind", STRING, "\"compact_strategy\"."),
        Key("strategy", STRING, "offset (Kafka's cleaner), timestamp or header:NAME."),
        Key("records_before", BIGINT, "Records in the log."),
        Key("records_kept", BIGINT, "Records left after the round."),
        Key("bytes_before", BIGINT, "Bytes of the log's batches."),
        Key("bytes_kept", BIGINT, "Bytes after the round (a rewritten compressed batch: its "
            "kept share of the compressed bytes)."),
        Key("tombstones_kept", BIGINT, "Tombstones left."),
        Key("tombstones_removed", BIGINT, "Tombstones removed (superseded, or past their "
            "delete horizon)."),
        Key("horizons_set", BIGINT, "Batches given a delete horizon by the round."),
        Key("keyless_removed", BIGINT, "Records without a key removed."),
        Key("aborted_removed", BIGINT, "Records of aborted transactions removed."),
        Key("markers_removed", BIGINT, "Transaction markers removed."),
        Key("batches_emptied", BIGINT, "Batches kept empty (a producer's last sequence, or "
            "the round's last batch)."),
        Key("batches_deleted", BIGINT, "Batches removed whole."),
        Key("keys", BIGINT, "Keys in the round's map."),
        Key("map_full", BOOLEAN, "The map filled up before the dirty range's end."),
        Key("next_dirty_offset", BIGINT, "The map's latest offset + 1: the checkpoint the "
            "round writes."),
    ),
)

COMPACT_BATCH = ObjectKind(
    "compact_batch",
    keys=(
        Key("kind", STRING, "\"compact_batch\" (with --batches)."),
        Key("strategy", STRING, "The strategy."),
        Key("base_offset", BIGINT, "The batch's base offset."),
        Key("last_offset", BIGINT, "Its last offset."),
        Key("records", BIGINT, "Its records before the round."),
        Key("kept_offsets", Array(BIGINT), "The offsets of its records kept."),
        Key("action", STRING, "kept, rewritten, emptied or deleted, with why."),
        Key("control", STRING, "COMMIT or ABORT for a marker, else null.", nullable=True),
        Key("delete_horizon_ms", BIGINT, "Its delete horizon after the round (a time in ms "
            "since the epoch, as the batch's deleteHorizonMs), or null.",
            nullable=True),
    ),
)

WINNER = ObjectKind(
    "winner",
    keys=(
        Key("offset", BIGINT, "The winning record's offset."),
        Key("timestamp", BIGINT, "Its timestamp."),
        Key("header", BIGINT, "Its header value (with a header strategy), or null.",
            nullable=True),
        Key("why", STRING, "Why it beats the latest record of the key, in words."),
    ),
)

COMPACT_DISAGREEMENT = ObjectKind(
    "compact_disagreement",
    keys=(
        Key("kind", STRING, "\"compact_disagreement\"."),
        Key("key", STRING, "The key, as hex."),
        Key("key_text", STRING, "The key as text when printable, else 0x-hex."),
        Key("winners", Map(WINNER), "An object: strategy -> the record it keeps."),
    ),
)

COMPACT_KEY_RECORD = ObjectKind(
    "compact_key_record",
    keys=(
        Key("kind", STRING, "\"compact_key_record\" (with --key)."),
        Key("offset", BIGINT, "A record of the key."),
        Key("timestamp", BIGINT, "Its timestamp."),
        Key("tombstone", BOOLEAN, "It has no value."),
        Key("kept_by", Map(BOOLEAN), "An object: strategy -> whether the round keeps it."),
    ),
)

COMPACT_SUMMARY = ObjectKind(
    "compact_summary",
    keys=(
        Key("kind", STRING, "\"compact_summary\"."),
        Key("path", STRING, "The partition dir."),
        Key("topic", STRING, "Its topic."),
        Key("partition", INT, "Its partition number."),
        Key("log_start_offset", BIGINT, "The log start offset."),
        Key("log_end_offset", BIGINT, "The log end offset."),
        Key("records", BIGINT, "Records in the log."),
        Key("bytes", BIGINT, "Bytes of its segments."),
        Key("segments", BIGINT, "Segments."),
        Key("first_dirty", BIGINT, "Where the dirty range starts."),
        Key("first_dirty_from", STRING, "Where that came from, in words."),
        Key("first_uncleanable", BIGINT, "The round's bound (a segment base)."),
        Key("uncleanable_why", STRING, "What set it: the last stable offset, the active "
            "segment or min.compaction.lag.ms."),
        Key("now_timestamp", BIGINT, "The cleaner's clock (ms since the epoch)."),
        Key("now_from", STRING, "Where the clock came from."),
        Key("config_source", STRING, "Where the topic's configs came from."),
        Key("configs", Map(STRING), "The configs used."),
        Key("out_of_order", BIGINT, "Records written after a record of the same key with a "
            "newer timestamp."),
        Key("disagreements", INT, "Keys whose winner differs between the strategies."),
        Key("written", STRING, "With --write: the partition dir written, else null.",
            nullable=True),
        Key("notes", Array(STRING), "Edge cases, in words."),
    ),
)

PLACEMENT = ObjectKind(
    "placement",
    doc="A broker's partition dir against its own metadata image (kmeta.ops.placement: "
        "written by startup), one for each dir that is not plainly fine:",
    keys=(
        Key("kind", STRING, "\"placement\"."),
        Key("node_id", INT, "The broker's node.id (meta.properties)."),
        Key("partition_dir", STRING, "The partition directory."),
        Key("topic", STRING, "The topic its name says."),
        Key("partition", INT, "The partition number its name says."),
        Key("topic_id", STRING, "The topic id in its partition.metadata; null without one.",
            nullable=True),
        Key("verdict", STRING, "fine, stray, stray_dir (renamed -stray before), delete_dir, "
            "future_promoted, future_kept, future_no_topic_id, duplicate, or replaced (the "
            "current log a promoted -future log deletes)."),
        Key("reason", STRING, "Why a stray is one (LogManager.isStrayKraftReplica asks "
            "whether the image has the partition; kmeta tells why not from the replay): "
            "no_topic_id; partition_not_in_topic (the topic of that id is in the image, "
            "without that partition number); topic_id_differs (the name's id in the image "
            "is another: the topic was re-created); topic_deleted (the metadata log removed "
            "the topic: a RemoveTopicRecord); topic_id_not_in_image (an id the log's history "
            "never held: another cluster's, or removed before its oldest snapshot); or "
            "not_a_replica; else null.",
            nullable=True),
        Key("image_topic_id", STRING, "With topic_id_differs: the image's id for the name.",
            nullable=True),
        Key("directory_id", STRING, "directory.id of the log dir holding it (KIP-858); null "
            "before Kafka 3.7.", nullable=True),
        Key("assigned_directory_id", STRING, "The directory the image assigns the replica "
            "to; null when the image assigns the node none.", nullable=True),
        Key("directory_verdict", STRING, "matches, other_dir (another log dir of the broker), "
            "unknown_dir (no log dir of the broker has the id) or reserved (UNASSIGNED, "
            "LOST); null when not judged (MIGRATING, or not a live log).", nullable=True),
        Key("other_partition_dir", STRING, "The current log a promoted -future log "
            "replaces, the twin of a duplicate, or the future log of a replaced one.",
            nullable=True),
        Key("kafka_by_version", Map(STRING), "Kafka version range -> what that Kafka does with the dir."),
    ),
)

MISSING_REPLICA = ObjectKind(
    "missing_replica",
    doc="A replica the image assigns to the broker with no log on its disks (written by "
        "startup):",
    keys=(
        Key("kind", STRING, "\"missing_replica\"."),
        Key("node_id", INT, "The broker's node.id."),
        Key("topic", STRING, "The topic."),
        Key("topic_id", STRING, "Its id in the image."),
        Key("partition", INT, "The partition number."),
        Key("leader", INT, "The partition's leader in the image (-1: none, as Kafka writes "
            "it)."),
        Key("replica_nodes", Array(INT), "Its replicas in the image (node ids)."),
        Key("isr", Array(INT), "Its in-sync replicas in the image."),
        Key("assigned_directory_id", STRING, "The directory the image assigns it to.",
            nullable=True),
        Key("directory_verdict", STRING, "matches (a log dir of the broker), unknown_dir or "
            "reserved; null when not judged.", nullable=True),
        Key("peer_partition_dir", STRING, "A peer's dir of the partition (--peer), null "
            "when none holds it.", nullable=True),
        Key("peer_bytes", BIGINT, "The bytes of that dir's segments: what the broker "
            "fetches.", nullable=True),
        Key("checkpoint_offset", BIGINT, "The highest offset the broker's own offset "
            "checkpoints name for it (0: it held no record); null when none names it, or "
            "when what they name is the stray below.", nullable=True),
        Key("stray_partition_dir", STRING, "The broker's dir of that name Kafka sets aside "
            "as a stray (an old topic id, or none); null when there is none.",
            nullable=True),
    ),
)

CHECKPOINT_USE = ObjectKind(
    "checkpoint_use",
    keys=(
        Key("name", STRING, "The file: recovery-point-offset-checkpoint or "
            "log-start-offset-checkpoint."),
        Key("state", STRING, "read; missing (Kafka creates it empty: every offset 0); "
            "corrupt (Kafka uses 0 and queues the log dir offline)."),
        Key("entries", BIGINT, "Partitions it holds (0 unless read)."),
        Key("problem", STRING, "Why it cannot be read, or null.", nullable=True),
    ),
)

STARTUP_DIR = ObjectKind(
    "startup_dir",
    keys=(
        Key("kind", STRING, "\"startup_dir\": one per log dir, first."),
        Key("path", STRING, "The log dir."),
        Key("clean_shutdown", BOOLEAN, "It holds .kafka_cleanshutdown: nothing is recovered "
            "but what loading itself rebuilds."),
        Key("broker_epoch", BIGINT, "The broker epoch in .kafka_cleanshutdown (3.7+), or null.",
            nullable=True),
        Key("recovery_checkpoint", CHECKPOINT_USE, "recovery-point-offset-checkpoint."),
        Key("log_start_checkpoint", CHECKPOINT_USE, "log-start-offset-checkpoint."),
        Key("recovery_threads", INT, "Threads of its recovery pool."),
        Key("partitions", INT, "Partition dirs Kafka loads from it."),
        Key("refused_dirs", Array(STRING), "Directory names Kafka cannot parse (it refuses "
            "to start)."),
        Key("metadata_log", BOOLEAN, "It holds __cluster_metadata-0 (loaded by the raft "
            "layer, not LogManager)."),
        Key("offline", BOOLEAN, "Kafka queues it offline (a checkpoint it cannot read)."),
        Key("bytes_to_read", BIGINT, "Bytes its logs re-read on load."),
        Key("estimate_ms", BIGINT, "Its pool's time at the recovery rate."),
    ),
)

OFFSETS_BACKWARDS = ObjectKind(
    "offsets_backwards",
    keys=(
        Key("position", BIGINT, "The byte of the batch."),
        Key("offset", BIGINT, "Its base offset."),
        Key("expected_offset", BIGINT, "The least offset it should have had."),
    ),
)

SEGMENT_WORK = ObjectKind(
    "segment_work",
    keys=(
        Key("file", STRING, "The segment's .log file name."),
        Key("base_offset", BIGINT, "Its base offset."),
        Key("bytes", BIGINT, "Its size: what recovery re-reads."),
        Key("batches", BIGINT, "Batches recovery keeps."),
        Key("why", STRING, "Why Kafka recovers it."),
        Key("truncate_position", BIGINT, "The byte recovery truncates it at, or null.",
            nullable=True),
        Key("cut_code", STRING, "The finding code of what it rejects there, or null.",
            nullable=True),
        Key("removed_bytes", BIGINT, "Bytes the truncation removes."),
        Key("backwards", OFFSETS_BACKWARDS, "Where offsets go backwards and recovery keeps "
            "the batches (no index entry lands there), or null.", nullable=True),
    ),
)

SPLIT_PIECE = ObjectKind(
    "split_piece",
    keys=(
        Key("file", STRING, "The new segment's .log file name."),
        Key("base_offset", BIGINT, "Its base offset (its first batch's)."),
        Key("bytes", BIGINT, "Its bytes."),
        Key("batches", BIGINT, "Its batches."),
    ),
)

SEGMENT_SPLIT = ObjectKind(
    "segment_split",
    keys=(
        Key("file", STRING, "The legacy segment whose offsets overrun base + Int.MaxValue "
            "(KAFKA-6264)."),
        Key("base_offset", BIGINT, "Its base offset."),
        Key("bytes", BIGINT, "Its size."),
        Key("overflow_offset", BIGINT, "The first batch's last offset it cannot index."),
        Key("pieces", Array(SPLIT_PIECE), "The segments LocalLog.splitOverflowedSegment "
            "makes of it (none when it fails)."),
        Key("failure", STRING, "Why the split fails (the log does not load), or null.",
            nullable=True),
    ),
)

EPOCH_CACHE_PLAN = ObjectKind(
    "epoch_cache_plan",
    keys=(
        Key("source", STRING, "leader-epoch-checkpoint read, missing (an empty cache) or "
            "unreadable (not followed)."),
        Key("cleared", STRING, "Why Kafka deletes the file (a message format before v2), "
            "or null.", nullable=True),
        Key("before", Array(EPOCH_START), "The entries the file holds."),
        Key("after", Array(EPOCH_START), "The cache once the log is loaded: epochs of "
            "recovered batches added, entries at or past the log end removed, those below "
            "the log start checkpoint removed and the last moved up to it."),
        Key("removed_entries", Array(EPOCH_START), "Entries of before not in after."),
        Key("added_entries", Array(EPOCH_START), "Entries of after not in before."),
    ),
)

FILE_FATE = ObjectKind(
    "file_fate",
    keys=(
        Key("file", STRING, "The file name."),
        Key("fate", STRING, "What Kafka does to it on load."),
        Key("why", STRING, "Why."),
    ),
)

OFFSETS_NOT_LOADED = ObjectKind(
    "offsets_not_loaded",
    keys=(
        Key("from_offset", BIGINT, "The first: the log end the load ends with."),
        Key("committed_to_offset", BIGINT, "The last below the high watermark "
            "(replication-offset-checkpoint): committed records; null when none.",
            nullable=True),
        Key("flushed_to_offset", BIGINT, "The last below the recovery point "
            "(recovery-point-offset-checkpoint): flushed to this disk once; null when "
            "none.", nullable=True),
        Key("committed_offsets", BIGINT, "How many committed offsets are missing."),
        Key("flushed_offsets", BIGINT, "How many flushed offsets are missing."),
        Key("cause", STRING, "not on disk, or cut off by recovery."),
    ),
)

STARTUP_PARTITION = ObjectKind(
    "startup_partition",
    keys=(
        Key("kind", STRING, "\"startup_partition\": one per partition dir, after the log "
            "dirs."),
        Key("path", STRING, "The partition dir."),
        Key("log_dir", STRING, "Its log dir."),
        Key("topic", STRING, "The topic."),
        Key("partition", INT, "The partition."),
        Key("state", STRING, "null for a current log, else delete, future or stray (its "
            "name's suffix).", nullable=True),
        Key("topic_id", STRING, "From partition.metadata when stray logs are judged, else "
            "null.", nullable=True),
        Key("segments", BIGINT, "Segments after the load's renames and deletions of "
            "leftovers."),
        Key("bytes", BIGINT, "Their bytes."),
        Key("recovery_point_offset", BIGINT, "Its recovery-point-offset-checkpoint entry "
            "(0 when absent)."),
        Key("log_start_checkpoint_offset", BIGINT, "Its log-start-offset-checkpoint entry "
            "(0 when absent)."),
        Key("recover", Array(SEGMENT_WORK), "Segments Kafka recovers, in offset order."),
        Key("deleted_segment_files", Array(STRING), "Segments recovery deletes after a "
            "truncated one."),
        Key("index_rebuilds", Array(FILE_FATE), "Indexes rebuilt or created on load."),
        Key("leftovers", Array(FILE_FATE), ".swap, .cleaned, .deleted files, orphaned "
            "indexes and stray producer snapshots, and what Kafka does to each."),
        Key("producer_state", STRING, "How the producer state is rebuilt."),
        Key("producer_bytes", BIGINT, "Bytes the producer-state rebuilds read beyond the "
            "recovered segments (the one before each segment recovered and the last, to the "
            "log end; from the segment's start or the index entry before the offset)."),
        Key("all_deleted", BOOLEAN, "The log end is below the log start checkpoint: every "
            "segment is deleted."),
        Key("log_start_offset", BIGINT, "The log start the load ends with."),
        Key("log_end_offset", BIGINT, "The log end the load ends with, or null.",
            nullable=True),
        Key("fate", STRING, "What LogManager does with the loaded log."),
        Key("bytes_to_read", BIGINT, "Bytes Kafka re-reads to open it (a split's read and "
            "the recovery it restarts included)."),
        Key("lost_bytes", BIGINT, "Bytes of records recovery removes."),
        Key("splits", Array(SEGMENT_SPLIT), "Legacy segments split on load."),
        Key("load_failure", STRING, "Why Kafka cannot load the log (the broker does not "
            "start), or null.", nullable=True),
        Key("load_offline", STRING, "Why loading the log takes its log dir offline (an "
            "IOException LogManager catches), or null.", nullable=True),
        Key("remote_storage", BOOLEAN, "Remote storage is on for the topic (3.6+: the log "
            "start is the checkpoint's); null when no image says.", nullable=True),
        Key("log_start_rule", STRING, "How the log start was chosen."),
        Key("first_local_offset", BIGINT, "The base offset of the first segment kept, or "
            "null.", nullable=True),
        Key("epoch_cache_load", EPOCH_CACHE_PLAN, "The leader-epoch cache through loading, or "
            "null when the log does not load.", nullable=True),
        Key("high_watermark_checkpoint_offset", BIGINT, "Its replication-offset-checkpoint "
            "entry (the high watermark the broker starts it with, capped at its log end), or "
            "null when absent.", nullable=True),
        Key("offsets_not_loaded", OFFSETS_NOT_LOADED, "Offsets its checkpoints name past "
            "the log end the load ends with (V212, V213), or null when none.",
            nullable=True),
    ),
)

SNAPSHOT_FATE = ObjectKind(
    "snapshot_fate",
    keys=(
        Key("file", STRING, "The snapshot file name."),
        Key("end_offset", BIGINT, "Its end offset, as its name says."),
        Key("epoch", INT, "Its epoch, as its name says."),
        Key("fate", STRING, "kept; deleted (KafkaMetadataLog.recoverSnapshots: a .part or "
            ".deleted file, or one ending below the log start); marked for deletion (older "
            "than the snapshot a full truncation follows)."),
        Key("why", STRING, "Why."),
    ),
)

RECOVERY_CUT = ObjectKind(
    "recovery_cut",
    keys=(
        Key("file", STRING, "The segment recovery truncates."),
        Key("position", BIGINT, "The byte it keeps up to."),
        Key("code", STRING, "The finding code of what is there (the cut kmeta repair "
            "makes)."),
        Key("reason", STRING, "What is there."),
        Key("removed_bytes", BIGINT, "Bytes removed from that segment."),
    ),
)

STARTUP_METADATA_LOG = ObjectKind(
    "startup_metadata_log",
    doc="__cluster_metadata-0 as a KRaft node opens it on every start: recovered whole "
        "from offset 0 whatever .kafka_cleanshutdown says, its snapshots recovered, the log "
        "truncated to the latest snapshot where that is ahead of it.",
    keys=(
        Key("path", STRING, "The __cluster_metadata-0 directory."),
        Key("segments", BIGINT, "Its segments on disk."),
        Key("bytes", BIGINT, "Their bytes."),
        Key("bytes_to_read", BIGINT, "Bytes its recovery re-reads (every segment up to the "
            "cut)."),
        Key("estimate_ms", BIGINT, "The time that takes at the recovery rate: one thread, "
            "before the data logs."),
        Key("log_start_offset", BIGINT, "Its log start once open."),
        Key("log_end_offset", BIGINT, "Its log end once open."),
        Key("latest_epoch", INT, "The leader epoch it opens in (0 with an empty cache)."),
        Key("recovery_cut", RECOVERY_CUT, "Where recovery truncates it, or null.",
            nullable=True),
        Key("deleted_segment_files", Array(STRING), "Segments recovery deletes after the "
            "cut."),
        Key("truncated_to_snapshot", STRING, "The snapshot (end offset-epoch) the log "
            "restarts at, every segment dropped (truncateToLatestSnapshot), or null.",
            nullable=True),
        Key("records_dropped", BIGINT, "Records the log no longer holds once open."),
        Key("records_lost", BIGINT, "Those past the state the node comes back with (the "
            "snapshot it restarts at holds the rest)."),
        Key("lost_first_offset", BIGINT, "The first offset lost, or null.", nullable=True),
        Key("lost_last_offset", BIGINT, "The last offset lost, or null.", nullable=True),
        Key("snapshot_fates", Array(SNAPSHOT_FATE), "Each snapshot file and its fate."),
        Key("refusal", STRING, "Why the node does not start while it opens the log, or "
            "null.", nullable=True),
    ),
)

STARTUP_SUMMARY = ObjectKind(
    "startup_summary",
    keys=(
        Key("kind", STRING, "\"startup_summary\": the last line of a broker's objects, "
            "after its findings (with several brokers a startup_brokers line follows the "
            "last)."),
        Key("kafka_version", STRING, "The Kafka version whose rules were applied."),
        Key("kafka_version_from", STRING, "Why that version's, in words: --kafka-version, "
            "the metadata.version of the node's own metadata log (the release that "
            "introduced it), 3.9 for a ZooKeeper-mode broker (the last release that runs "
            "one), else the newest kmeta knows."),
        Key("node_id", INT, "The broker's node.id (broker.id in ZooKeeper mode) from its "
            "meta.properties, or null when none says it.", nullable=True),
        Key("log_dirs", Array(STRING), "The broker's log dirs, as given: its startup_dir "
            "objects."),
        Key("data_dirs", INT, "Log dirs given."),
        Key("partitions", INT, "Partition dirs Kafka loads."),
        Key("segments", BIGINT, "Their segments."),
        Key("bytes", BIGINT, "Their bytes."),
        Key("partitions_to_recover", INT, "Partition dirs with a segment to recover."),
        Key("bytes_to_read", BIGINT, "Bytes Kafka re-reads on start, the metadata log's "
            "included."),
        Key("recovery_threads", INT, "num.recovery.threads.per.data.dir used."),
        Key("recovery_threads_from", STRING, "Where that came from."),
        Key("recovery_rate", DOUBLE, "Bytes per second one recovery thread re-reads."),
        Key("recovery_rate_from", STRING, "Where that came from (kmeta's default is an "
            "assumption: see --recovery-rate)."),
        Key("estimate_ms", BIGINT, "The estimated time to open the logs: the metadata "
            "log's recovery, then the slowest log dir's pool."),
        Key("refuses", BOOLEAN, "Kafka refuses to start."),
        Key("refusals", Array(STRING), "Why, one line each: the path, then the exception "
            "and message Kafka throws where it throws one."),
        Key("refuses_before_loading", BOOLEAN, "A refusal comes before Kafka loads any log "
            "(meta.properties, a partition dir name it cannot parse, a held .lock): nothing "
            "loads or changes on disk, and the costs, losses and fates said are those of "
            "the load once the broker starts."),
        Key("loses_data", BOOLEAN, "Recovery truncates records or deletes segments, or "
            "the metadata log comes back without records, or committed records are not in "
            "the logs it loads (V212)."),
        Key("lost_bytes", BIGINT, "Bytes of records removed."),
        Key("logs_missing_committed", INT, "Logs whose loaded log ends below their high "
            "watermark (V212)."),
        Key("committed_offsets_missing", BIGINT, "Their committed offsets not loaded."),
        Key("logs_missing_flushed", INT, "Logs that lack only offsets below their recovery "
            "point, none committed (V213)."),
        Key("segments_split", INT, "Legacy segments split on load."),
        Key("epoch_cache_changes", INT, "Partition dirs whose leader-epoch cache loading "
            "changes."),
        Key("broker_epoch", BIGINT, "The broker epoch every clean shutdown marker holds "
            "(3.7+), or null.", nullable=True),
        Key("stray_judged", BOOLEAN, "Stray logs were judged against a metadata image."),
        Key("notes", Array(STRING), "What could not be said, in words."),
        Key("finding_counts", FINDING_COUNTS, "The number of findings by severity."),
        Key("metadata_log_startup", STARTUP_METADATA_LOG, "__cluster_metadata-0 as the node "
            "opens it, or null where no log dir given holds one (a ZooKeeper-mode broker, "
            "a broker whose metadata.log.dir is not given).", nullable=True),
    ),
)

STARTUP_BROKERS = ObjectKind(
    "startup_brokers",
    keys=(
        Key("kind", STRING, "\"startup_brokers\": the last line when the log dirs given "
            "are several brokers' (each broker's objects come first, ending with its "
            "startup_summary); not written for one broker."),
        Key("brokers", INT, "Brokers: the log dirs grouped by the node.id (broker.id) of "
            "their meta.properties, and by cluster.id where each cluster's dirs hold their "
            "own metadata log; dirs without one join the broker when there is one other, "
            "else form one of their own."),
        Key("node_ids", Array(INT), "Their node ids, in the order of their summaries (a "
            "broker whose dirs say none is left out)."),
        Key("refuses", BOOLEAN, "Kafka refuses to start at least one of them."),
        Key("loses_data", BOOLEAN, "Recovery truncates records or deletes segments on at "
            "least one of them."),
        Key("finding_counts", FINDING_COUNTS, "The number of findings of all of them by "
            "severity."),
    ),
)

REPORT_REPLICA = ObjectKind(
    "report_replica",
    keys=(
        Key("kind", STRING, "\"report_replica\": one per metadata log replica found."),
        Key("label", STRING, "Its short name in the report: its data dir's name."),
        Key("partition_dir", STRING, "The __cluster_metadata-0 directory."),
        Key("node_id", INT, "node.id of its data dir's meta.properties, or null.",
            nullable=True),
        Key("cluster_id", STRING, "cluster.id of its data dir's meta.properties, or null.",
            nullable=True),
        Key("log_start_offset", BIGINT, "Its log start offset; where no segment is left "
            "(V020), the latest snapshot's end offset, as info's partition_dir says: Kafka "
            "makes the log anew there, empty (KafkaMetadataLog.truncateToLatestSnapshot), "
            "though no segment is on disk yet; null when not known (neither a segment nor "
            "a snapshot).", nullable=True),
        Key("log_end_offset", BIGINT, "Its log end offset; where no segment is left, the "
            "latest snapshot's end offset (the log starts and ends there, see "
            "log_start_offset); null when not known.", nullable=True),
        Key("epoch_cache", Array(EPOCH_START), "The leader epochs its batches hold, each "
            "from its first offset; where no segment is left, the leader-epoch-checkpoint's "
            "entries as the file holds them."),
        Key("segments", BIGINT, "Its segment files."),
        Key("bytes", BIGINT, "Their bytes."),
        Key("snapshot_ids", Array(STRING), "Its snapshot files' ids (end offset and epoch)."),
    ),
)

NEXT_STEP = ObjectKind(
    "next_step",
    keys=(
        Key("why", STRING, "Why: the hint of the area's first finding with one."),
        Key("command", STRING, "The kmeta command that shows more, quoted for a POSIX "
            "shell."),
    ),
)

REPORT_AREA = ObjectKind(
    "report_area",
    keys=(
        Key("kind", STRING, "\"report_area\": one per area, in the report's order."),
        Key("area", STRING, "logs, snapshots, replicas, brokers, consumers, startup or "
            "tiering."),
        Key("verdict", STRING, "ok, warning, error (its worst finding's), or none (nothing "
            "on these paths for the area to judge)."),
        Key("line", STRING, "What the area's analysis found, in one line, or null.",
            nullable=True),
        Key("finding_counts", FINDING_COUNTS, "Its findings by severity."),
        Key("next_steps", Array(NEXT_STEP), "What to do next."),
    ),
)

REPORT_SUMMARY = ObjectKind(
    "report_summary",
    keys=(
        Key("kind", STRING, "\"report_summary\": the last line, after every finding."),
        Key("paths", Array(STRING), "The paths given."),
        Key("data_dirs", INT, "Data dirs found under them."),
        Key("data_dir_paths", Array(STRING), "Their paths."),
        Key("partitions", INT, "Ordinary partitions found (a partition held by several "
            "dirs counts once)."),
        Key("metadata_replicas", INT, "Metadata log replicas found."),
        Key("segment_bytes", BIGINT, "Bytes of every segment found."),
        Key("verdict", STRING, "ok, warning or error: the worst area's."),
        Key("finding_counts", FINDING_COUNTS, "Every finding by severity, each counted "
            "once."),
    ),
)

#: a replica's extent in the shell: its log (the segments on disk) and where it has images
_SHELL_EXTENT = (
    Key("log_start_offset", BIGINT, "The base offset of the replica's first segment; null "
        "when it has no log (snapshots only).", nullable=True),
    Key("log_end_offset", BIGINT, "The log end offset (the offset after its last "
        "record); null when it has no log.", nullable=True),
    Key("first_image_offset", BIGINT, "The least offset the shell can stand at: the log "
        "start offset, or the end of the first snapshot inside a log that does not start "
        "at 0, or of the first snapshot where there is no log."),
    Key("last_image_offset", BIGINT, "The greatest: the log end offset, or the last "
        "snapshot's end where there is no log."),
)

SHELL_AT = ObjectKind(
    "shell_at",
    keys=(
        Key("kind", STRING, "\"shell_at\": where the shell stands (at, replica, and at "
            "alone)."),
        Key("replica", STRING, "The replica's name."),
        Key("offset", BIGINT, "The image is the state after every record below it."),
        Key("last_offset", BIGINT, "The last offset applied (the provenance's); null "
            "before any record.", nullable=True),
        Key("leader_epoch", INT, "The leader epoch of the last batch applied; null "
            "before any record.", nullable=True),
        Key("timestamp", BIGINT, "Its maxTimestamp (ms); null before any record.",
            nullable=True),
        *_SHELL_EXTENT,
    ),
)

SHELL_CD = ObjectKind(
    "shell_cd",
    keys=(Key("kind", STRING, "\"shell_cd\": cd and pwd."),
          Key("path", STRING, "The working directory.")),
)

SHELL_ERROR = ObjectKind(
    "shell_error",
    keys=(Key("kind", STRING, "\"shell_error\": a command that could not run as typed "
              "(the status is then 2)."),
          Key("message", STRING, "The one line a person would read."),
          Key("hint", STRING, "What to type instead; null when there is nothing to add.",
              nullable=True)),
)

SHELL_HELP = ObjectKind(
    "shell_help",
    keys=(Key("kind", STRING, "\"shell_help\": help, one per command."),
          Key("command", STRING, "Its name."),
          Key("usage", STRING, "How it is typed."),
          Key("summary", STRING, "What it does, in a line.")),
)

SHELL_COMMAND = ObjectKind(
    "shell_command",
    keys=(Key("kind", STRING, "\"shell_command\": history [N], one per line typed."),
          Key("number", INT, "Its number in the session."),
          Key("line", STRING, "The line as typed.")),
)

SHELL_CHANGE = ObjectKind(
    "shell_change",
    doc="Each element of node_changes:",
    keys=(Key("path", STRING, "The node."),
          Key("change", STRING, "added, removed or changed."),
          Key("old_text", STRING, "Its text before; null when added.", nullable=True),
          Key("new_text", STRING, "Its text after; null when removed.", nullable=True)),
)

SHELL_STEP = ObjectKind(
    "shell_step",
    keys=(Key("kind", STRING, "\"shell_step\": one step of next or prev."),
          Key("replica", STRING, "The replica."),
          Key("from_offset", BIGINT, "Where the step started."),
          Key("to_offset", BIGINT, "Where it ended."),
          Key("node_changes", Array(SHELL_CHANGE), "The nodes it changed, in path order "
              "(partitions by their topic's name; /image/provenance left out).")),
)

SHELL_DIFF = ObjectKind(
    "shell_diff",
    keys=(Key("kind", STRING, "\"shell_diff\": diff."),
          Key("path", STRING, "The node compared under."),
          Key("from_replica", STRING, "The first point's replica."),
          Key("from_offset", BIGINT, "The first point's offset."),
          Key("to_replica", STRING, "The second point's replica."),
          Key("to_offset", BIGINT, "The second point's offset."),
          Key("node_changes", Array(SHELL_CHANGE), "As shell_step's.")),
)

SHELL_RECORD = ObjectKind(
    "shell_record",
    keys=(Key("kind", STRING, "\"shell_record\": changes [PATH], one per record that "
              "touched the node."),
          Key("offset", BIGINT, "The record's offset."),
          Key("timestamp", BIGINT, "Its batch's maxTimestamp (ms)."),
          Key("leader_epoch", INT, "Its batch's leader epoch."),
          Key("type", STRING, "Kafka's name of its type."),
          Key("version", INT, "Its version.", nullable=True),
          Key("data", JSON, "Its fields, secrets redacted.", nullable=True)),
)

SHELL_MATCH = ObjectKind(
    "shell_match",
    keys=(Key("kind", STRING, "\"shell_match\": grep, one per leaf that matched."),
          Key("path", STRING, "The leaf."),
          Key("text", STRING, "Its text.")),
)

SHELL_REPLICA = ObjectKind(
    "shell_replica",
    keys=(Key("kind", STRING, "\"shell_replica\": replica, one per replica."),
          Key("name", STRING, "Its name in the shell."),
          Key("path", STRING, "The path given."),
          *_SHELL_EXTENT,
          Key("snapshot_names", Array(STRING), "Its snapshots' names."),
          Key("current", BOOLEAN, "Whether the shell stands on it.")),
)

SHELL_NODE = ObjectKind(
    "shell_node",
    keys=(Key("kind", STRING, "\"shell_node\": ls, cat, tree and find, one per node "
              "(find: per node under each path too)."),
          Key("path", STRING, "The node's absolute path."),
          Key("directory", BOOLEAN, "Whether it has children."),
          Key("names", Array(STRING), "ls: the names under it (null for a leaf).",
              nullable=True, optional=True),
          Key("text", STRING, "cat and tree: a leaf's text as Kafka's shell prints it "
              "(null for a directory).", nullable=True, optional=True),
          Key("value", JSON, "cat and tree: the node as kmeta's JSON (a directory's: its "
              "children's by name).", nullable=True, optional=True)),
)


#: The kinds of object each command writes at the top level, one per line of its output
#: (truncate --apply writes repair's).
WRITTEN_BY: dict[str, tuple[ObjectKind, ...]] = {
    "dump": (FILE, BATCH, RECORD, FINDING),
    "info": (DATA_DIR, PARTITION_DIR, LOG_FILE, SMALL_FILE, FINDING, INFO),
    "verify": (FINDING, SUMMARY),
    "image": (IMAGE, FINDING),
    "history": (HISTORY, FINDING),
    "brokers": (NODE_EVENT, QUORUM_LEADER, FINDING, BROKERS_SUMMARY),
    "retention": (RETENTION_SNAPSHOT, RETENTION_SEGMENT, FOLLOWER, RETENTION_SUMMARY, FINDING),
    "consumers": (CONSUMER_GROUP, CONSUMER_OFFSET, CONSUMERS_SUMMARY, FINDING),
    "tiering": (REMOTE_SEGMENT, TIERED_PARTITION, TIERING_SUMMARY, FINDING),
    "startup": (STARTUP_DIR, STARTUP_PARTITION, PLACEMENT, MISSING_REPLICA, FINDING,
                STARTUP_SUMMARY, STARTUP_BROKERS),
    "report": (REPORT_REPLICA, REPORT_AREA, FINDING, REPORT_SUMMARY),
    "shell": (SHELL_AT, SHELL_CD, SHELL_ERROR, SHELL_HELP, SHELL_COMMAND, SHELL_STEP,
              SHELL_DIFF, SHELL_RECORD, SHELL_MATCH, SHELL_REPLICA, SHELL_NODE, RECORD,
              FINDING),
    "compact": (COMPACT_STRATEGY, COMPACT_BATCH, COMPACT_DISAGREEMENT, COMPACT_KEY_RECORD,
                COMPACT_SUMMARY, FINDING),
    "diff": (DIFF, FINDING),
    "truncate": (TRUNCATE, REPAIR, FINDING),
    "repair": (REPAIR, FINDING),
    "snapshot": (SNAPSHOT, FINDING),
    # export's findings are rows of its findings table, not lines on stdout
    "export": (EXPORT,),
}
