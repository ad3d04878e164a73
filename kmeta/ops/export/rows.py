"""Rows of kmeta's tables — ``batches``, ``records``, ``findings``, ``epochs``, ``image`` —
for the Spark data source and ``kmeta export``.  Plain tuples: nothing here imports
pyspark, so the same code runs inside Spark executors and in tests.

Work is cut into *units* (small, picklable): one per segment or snapshot file for
``batches`` and ``records``, one per partition dir for ``findings`` and ``epochs``, one
per metadata partition for ``image``.  Bad or partial input never raises: what cannot be
read becomes a row of the ``findings`` table (and, for the other tables, no row).

What the ``records`` table holds is the :class:`Scope`: metadata-log records only unless
data topics are asked for, and their keys and values only when payloads are asked for too.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from kmeta.core.log_rules import epoch_spans
from kmeta.errors import KmetaError, UsageError
from kmeta.findings import Finding
from kmeta.formats.batch import (
    LEADER_EPOCH,
    POSITION,
    Batch,
)
from kmeta.formats.decoders import TOPIC_DECODERS, record_decoder
from kmeta.formats.payload import Payload, decode_control, decode_metadata, decode_opaque
from kmeta.ops.redact import hide_secrets, redact, secret_spans
from kmeta.output_schema import (
    BATCH,
    FINDING,
    IMAGE,
    NODE_EVENT,
    RECORD,
    REPLICA,
    RETENTION_SNAPSHOT,
    ObjectKind,
)
from kmeta.storage.discover import LogFile, PartitionDir, discover, meta_properties_at
from kmeta.storage.files import load_checked
from kmeta.storage.segments import batch_records, read_batches, read_records

__all__ = ["COMMON", "TABLES", "Column", "Scope", "Unit", "ddl", "expand_globs", "plan_units",
           "unit_rows"]


class Column(NamedTuple):
    name: str
    type: str  # Spark SQL type
    doc: str
    #: False: every row holds a value (``NOT NULL`` in the table's DDL).  Spark then
    #: copies the column's values without asking each row whether it is null, in both of
    #: the projections a Python data source's rows go through: a quarter of the JVM's
    #: time on the batches table.  The data source refuses a null there
    #: (kmeta.spark.source).
    nullable: bool = True


def _fact(kind: ObjectKind, key: str, doc: str | None = None, *,
          nullable: bool = True) -> Column:
    """The column holding the fact ``kmeta --json`` writes as ``key`` of ``kind`` objects:
    the key's name and type (one name and one type per fact, in JSON and in the tables),
    and its doc unless the table's rows need their own."""
    k = kind.key(key)
    return Column(k.name, k.type.ddl, doc or k.doc, nullable)


#: what every row of the batches and records tables holds
_SET = {"nullable": False}


#: Columns every table starts with: where the row comes from.
COMMON: tuple[Column, ...] = (
    Column("source", "STRING", "the input path the row was found under", False),
    _fact(REPLICA, "cluster_id", "cluster.id from the data dir's meta.properties, or null"),
    _fact(REPLICA, "node_id", "node.id (broker.id) from meta.properties, or null"),
    Column("partition_dir", "STRING", "the partition directory's name, e.g. "
           "__cluster_metadata-0"),
)

#: The tables, declared once: their columns after COMMON, in order.
TABLES: dict[str, tuple[Column, ...]] = {
    "batches": (
        Column("file_name", "STRING", "the segment or snapshot file's name (in ``partition``, "
               "under ``source``)", False),
        _fact(BATCH, "position", **_SET),
        _fact(BATCH, "base_offset", **_SET),
        _fact(BATCH, "last_offset", **_SET),
        _fact(BATCH, "leader_epoch", **_SET),
        Column("base_timestamp", "BIGINT", "first timestamp (ms); null for legacy messages"),
        _fact(BATCH, "max_timestamp"),
        _fact(BATCH, "size", **_SET),
        _fact(BATCH, "record_count"),
        _fact(BATCH, "magic", **_SET),
        _fact(BATCH, "compression", **_SET),
        _fact(BATCH, "crc_valid", **_SET),
        _fact(BATCH, "is_control", **_SET),
        _fact(BATCH, "is_transactional", **_SET),
        _fact(BATCH, "producer_id", **_SET),
    ),
    "records": (
        Column("file_name", "STRING", "the segment or snapshot file's name", False),
        _fact(RECORD, "batch_position", **_SET),
        _fact(RECORD, "offset", **_SET),
        _fact(RECORD, "timestamp"),
        _fact(BATCH, "leader_epoch", "leader epoch of its batch (-1 for legacy messages)",
              **_SET),
        _fact(BATCH, "is_control", "a control record (its batch's control attribute)",
              **_SET),
        _fact(RECORD, "type", "Kafka's record type name (RAW for data topics)", **_SET),
        _fact(RECORD, "version"),
        Column("topic_id", "STRING", "topic id the record names, or null"),
        Column("topic_name", "STRING", "topic name the record names, or null"),
        Column("partition", "INT", "partition the record names, or null"),
        Column("broker_id", "INT", "broker (node) id the record names, or null"),
        Column("config_resource_type", "INT", "ConfigRecord resource type, or null"),
        Column("config_resource_name", "STRING", "ConfigRecord resource name, or null"),
        Column("config_name", "STRING", "ConfigRecord key, or null"),
        _fact(RECORD, "data", "the decoded record as JSON text, secrets redacted (a data "
              "topic's key and value only with payloads, else null)"),
    ),
    "findings": (
        _fact(FINDING, "code"),
        _fact(FINDING, "severity"),
        _fact(FINDING, "file"),
        _fact(FINDING, "position"),
        _fact(FINDING, "offset"),
        _fact(FINDING, "message"),
    ),
    "epochs": (
        Column("origin", "STRING", "checkpoint (leader-epoch-checkpoint) or batches"),
        Column("epoch", "INT", "leader epoch"),
        Column("start_offset", "BIGINT", "first offset of the epoch"),
        Column("end_offset", "BIGINT", "last offset seen in the epoch (batches), or null"),
        Column("batches", "BIGINT", "batches in the epoch (batches), or null"),
    ),
    "timeline": (
        _fact(NODE_EVENT, "role"),
        _fact(NODE_EVENT, "node"),
        _fact(NODE_EVENT, "event"),
        _fact(NODE_EVENT, "offset"),
        _fact(NODE_EVENT, "timestamp"),
        _fact(NODE_EVENT, "record"),
        _fact(NODE_EVENT, "state_before"),
        _fact(NODE_EVENT, "state"),
        _fact(NODE_EVENT, "in_state_ms"),
        _fact(NODE_EVENT, "broker_epoch"),
        _fact(NODE_EVENT, "incarnation_id"),
        _fact(NODE_EVENT, "left_isr"),
        _fact(NODE_EVENT, "lost_leadership"),
        _fact(NODE_EVENT, "gained_leadership"),
        _fact(NODE_EVENT, "fenced_ms"),
        _fact(NODE_EVENT, "controlled_shutdown_first"),
        Column("registration_json", "STRING", "on a registration: its listeners, rack, "
               "features and log dirs as JSON text (the registration of kmeta brokers "
               "--json), else null"),
    ),
    "snapshots": (
        _fact(RETENTION_SNAPSHOT, "end_offset"),
        _fact(RETENTION_SNAPSHOT, "epoch"),
        _fact(RETENTION_SNAPSHOT, "file"),
        _fact(RETENTION_SNAPSHOT, "state"),
        _fact(RETENTION_SNAPSHOT, "size"),
        _fact(RETENTION_SNAPSHOT, "records"),
        _fact(RETENTION_SNAPSHOT, "last_contained_log_timestamp"),
        _fact(RETENTION_SNAPSHOT, "log_bytes"),
        _fact(RETENTION_SNAPSHOT, "log_records"),
        _fact(RETENTION_SNAPSHOT, "since_previous_ms"),
        _fact(RETENTION_SNAPSHOT, "trigger"),
        _fact(RETENTION_SNAPSHOT, "fate", "what Kafka's startup and retention (its default "
              "limits, judged at the newest batch's time) do with it"),
    ),
    "image": (
        _fact(IMAGE, "digest"),
        _fact(IMAGE, "offset", "the offset the image stands at (the log end)"),
        Column("section", "STRING", "brokers, topics, configs, acls ..."),
        Column("key", "STRING", "the entity within the section"),
        Column("value", "STRING", "the entity as JSON, secrets redacted"),
    ),
}


def ddl(table: str) -> str:
    """The table's schema as a Spark DDL string."""
    return ", ".join(f"{c.name} {c.type}{'' if c.nullable else ' NOT NULL'}"
                     for c in COMMON + TABLES[table])


_TRUTH = {"true": True, "false": False}


@dataclass(frozen=True)
class Scope:
    """Which records the ``records`` table holds: the one rule for ``kmeta export`` and the
    data source.

    By default the metadata log's records only (the ``__cluster_metadata`` partition, KRaft
    snapshots, ``bootstrap.checkpoint``): the other topics hold customer data.
    ``data_topics`` adds every other topic's records, their keys and values left out (null
    ``data``) unless ``payloads``; the records of the internal topics kmeta decodes
    (``__consumer_offsets``, ``__transaction_state``, ``__remote_log_metadata``,
    ``__share_group_state``) and every control record are Kafka's own and are decoded.  The ``batches`` table covers every topic whatever the scope: a batch header
    holds offsets, timestamps, sizes and producer ids, no record bytes.
    """

    data_topics: bool = False
    payloads: bool = False

    def __post_init__(self) -> None:
        if self.payloads and not self.data_topics:
            # metadata records always carry their payload: payloads alone would do nothing
            raise UsageError("payloads go with data topics: --data-topics --payloads "
                             "(option data_topics and payloads \"true\")")

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> Scope:
        """The scope of a data source read: ``option("data_topics", "true")``,
        ``option("payloads", "true")``."""
        flags = {}
        for name in ("data_topics", "payloads"):
            raw = options.get(name, "false")
            value = _TRUTH.get(str(raw).strip().lower())
            if value is None:
                raise UsageError(f"option {name}: true or false, not {raw!r}")
            flags[name] = value
        return cls(**flags)

    def to_options(self) -> dict[str, str]:
        return {"data_topics": str(self.data_topics).lower(),
                "payloads": str(self.payloads).lower()}

    def records_of(self, f: LogFile) -> bool:
        """The records table includes the records of ``f``."""
        return f.is_metadata or self.data_topics

    def payloads_of(self, f: LogFile) -> bool:
        """The records of ``f`` keep their keys and values."""
        return f.is_metadata or self.payloads


@dataclass(frozen=True)
class Unit:
    """One piece of work: a file (batches, records) or a partition dir (the others).

    A file's flags come from the :class:`Scope` it was planned with: ``metadata`` (holds
    KRaft metadata records), ``records`` (its records belong in the records table) and
    ``payloads`` (they keep their keys and values)."""

    table: str
    path: str
    source: str
    cluster_id: str | None
    node_id: int | None
    partition: str | None
    metadata: bool = False
    records: bool = True
    payloads: bool = True
    decoder: str | None = None  # an internal topic's decoder (``__consumer_offsets`` …)

    @property
    def context(self) -> tuple[Any, ...]:
        return (self.source, self.cluster_id, self.node_id, self.partition)

    @property
    def file(self) -> str:
        """The file's name: ``source`` and ``partition`` say where it is, and a short
        value repeated on millions of rows keeps the tables small."""
        return Path(self.path).name


def _identity(where: Path) -> tuple[str | None, int | None]:
    """cluster.id and node.id from ``where/meta.properties``, when it is there."""
    meta = meta_properties_at(where)
    if meta is None:
        return None, None
    loaded, _ = load_checked(meta)
    if loaded is None:
        return None, None
    # An empty cluster.id (``cluster.id=``) is no cluster id: null, as Spark stores an
    # empty partition value, so that every table gives the node the same identity.
    return loaded.cluster_id or None, loaded.node_id


def _empty(path: Path) -> bool:
    """An empty file has no batches: no unit (a Spark task costs far more than its nothing;
    a fleet's internal topics hold hundreds of empty segments)."""
    try:
        return path.stat().st_size == 0
    except OSError:
        return False  # its unit says nothing; the findings table says why


def _placed(f: LogFile) -> tuple[Path, str | None]:
    """The data dir whose meta.properties names ``f``'s node, and ``f``'s partition dir:
    the directory above its partition dir, even when the file was given alone (a file of
    no partition, such as ``bootstrap.checkpoint``: its own directory, and none)."""
    if f.topic is not None:
        return f.path.parent.parent, f.path.parent.name
    return f.path.parent, None


class _Identities(dict):
    """_identity per data dir, read once per plan (not once per file of a big log)."""

    def __missing__(self, where: Path) -> tuple[str | None, int | None]:
        self[where] = found = _identity(where)
        return found


def _file_unit(table: str, f: LogFile, source: str, scope: Scope, ids: _Identities) -> Unit:
    where, partition = _placed(f)
    return Unit(table, str(f.path), source, *ids[where], partition,
                metadata=f.is_metadata, records=scope.records_of(f),
                payloads=scope.payloads_of(f),
                decoder=None if f.is_metadata else TOPIC_DECODERS.get(f.topic or ""))


def expand_globs(paths: Iterable[str]) -> list[str]:
    """Paths with their globs expanded, in order; a glob that matches nothing stays as
    it is (and is then reported as unreadable)."""
    out: list[str] = []
    for p in paths:
        matched = sorted(glob.glob(p)) if glob.has_magic(p) else []
        out += matched or [p]
    return out


def plan_units(paths: Iterable[str], table: str, scope: Scope | None = None
               ) -> tuple[list[Unit], list[tuple]]:
    """The units of ``table`` under ``paths`` (globs already expanded), and findings rows
    for inputs that could not be read at all.  ``scope`` (default: metadata records only)
    says which files' records the records table holds."""
    scope = scope or Scope()
    ids = _Identities()
    if table not in TABLES:
        raise KeyError(f"unknown table {table!r}; one of {', '.join(TABLES)}")
    units: list[Unit] = []
    problems: list[tuple] = []
    for source in paths:
        try:
            # a unit's path from the root: an executor of a cluster runs in a directory
            # of its own, where a relative path names nothing (the rows keep ``source``)
            found = discover([source if "://" in source else os.path.abspath(source)])
        except KmetaError as e:
            problems.append(_finding_row((source, None, None, None), e.finding(source)))
            continue
        if table == "findings":
            # verify per data dir: its checkpoints and small files are checked with it
            for d in found.data_dirs:
                units.append(Unit(table, str(d.path), source, *ids[d.path], None))
            for p in found.partitions:
                units.append(Unit(table, str(p.path), source, *ids[p.path.parent], p.name))
            units += [Unit(table, str(f.path), source, *ids[where], partition)
                      for f in found.files for where, partition in [_placed(f)]]
            # verify finds again what finding the files found inside its units: only
            # the rest (outside every data dir, partition dir and file) is a row here
            verified = [d.path for d in found.data_dirs] + [p.path for p in found.partitions] \
                + [f.path for f in found.files]
            problems += [_finding_row((source, None, None, None), f) for f in found.findings
                         if not _inside(f.file, verified)]
            continue
        for f in found.findings:
            problems.append(_finding_row((source, None, None, None), f))
        if table in ("batches", "records"):
            units += [u for f in found.all_files() if f.is_batches and not _empty(f.path)
                      for u in [_file_unit(table, f, source, scope, ids)]
                      if table == "batches" or u.records]
            continue
        for part in found.all_partitions():
            cid, nid = ids[part.path.parent]
            if table in ("image", "timeline", "snapshots"):
                if part.is_metadata:
                    units.append(Unit(table, str(part.path), source, cid, nid, part.name))
            else:
                units.append(Unit(table, str(part.path), source, cid, nid, part.name))
    return units, problems


def _inside(file: str | None, dirs: list[Path]) -> bool:
    """Whether ``file`` is one of ``dirs`` or under one."""
    if file is None:
        return False
    path = Path(file)
    return any(path == d or d in path.parents for d in dirs)


def unit_rows(unit: Unit) -> Iterator[tuple]:
    """The rows of one unit; never raises for bad input.

    The batches, records and epochs tables hold what could be read; what could not is
    the findings table's, which reads it through verify: their readers pass Findings over
    (the ``[]`` they give ``read_batches``/``read_records``)."""
    if unit.table == "batches":
        return _batches(unit)
    if unit.table == "records":
        return _records(unit)
    if unit.table == "findings":
        return _findings(unit)
    if unit.table == "epochs":
        return _epochs(unit)
    if unit.table == "timeline":
        return _timeline(unit)
    if unit.table == "snapshots":
        return _snapshots(unit)
    return _image(unit)


def _batches(unit: Unit) -> Iterator[tuple]:
    ctx = unit.context
    for b in read_batches(unit.path, []):
        v2 = b.magic == 2
        yield ctx + (unit.file, b.position, b.base_offset, b.last_offset,
                     b.leader_epoch if v2 else -1, b.base_timestamp if v2 else None,
                     b.max_timestamp, b.size, b.records_count, b.magic, b.compression,
                     b.crc_valid, b.is_control, b.is_transactional if v2 else False,
                     b.producer_id if v2 else -1)


#: where the entity keys of a metadata record's fields are (field -> column)
_KEYS = {"topicId": "topic_id", "name": "topic_name", "topicName": "topic_name",
         "partitionId": "partition", "brokerId": "broker_id"}


def _entity(type_name: str, data: Any) -> list[Any]:
    """topic_id, topic_name, partition, broker_id, config type, config name, key."""
    out: list[Any] = [None] * 7
    if not isinstance(data, dict):
        return out
    key = data.get("key")
    if isinstance(key, dict):  # an internal topic's record: the partition its key names
        out[1], out[2] = key.get("topic"), key.get("partition")
        return out
    if type_name == "CONFIG_RECORD":
        out[4], out[5], out[6] = data.get("resourceType"), data.get("resourceName"), \
            data.get("name")
        return out
    out[0] = data.get("topicId")
    if type_name in ("TOPIC_RECORD", "REMOVE_TOPIC_RECORD"):
        out[1] = data.get("name")
    out[2] = data.get("partitionId")
    broker = data.get("brokerId", data.get("controllerId"))
    if broker is None and type_name in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD"):
        broker = data.get("leader")
    out[3] = broker if isinstance(broker, int) and broker >= 0 else None
    if not isinstance(out[2], int):
        out[2] = None
    return out


def _default(obj: Any) -> Any:
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return bytes(obj).hex()
    return str(obj)


# one encoder: json.dumps with options makes one per call, a fifth of its time here
_json = json.JSONEncoder(separators=(",", ":"), sort_keys=True, default=_default).encode


def _records(unit: Unit) -> Iterator[tuple]:
    ctx = unit.context
    if unit.metadata:
        path = unit.file
        last: Any = None
        tail: tuple = ()
        position_at, epoch_at = POSITION, LEADER_EPOCH
        for b, r, p in read_records(unit.path, decode_metadata, decode_control, []):
            if type(b) is not Batch:  # a legacy message: no tuple layout to index
                yield ctx + _record_row(unit, b, r, p)
                continue
            if p is not last:
                # scan shares the payload of equal values in a row (NoOps above all):
                # its columns and JSON are made once
                last = p
                tail = _payload_columns(b.is_control, p)
            yield ctx + (path, b[position_at], r[0], r[1], b[epoch_at], b.is_control) + tail
        return
    decode = record_decoder(unit.decoder) if unit.decoder else None
    for b in read_batches(unit.path, []):
        records, _ = batch_records(b)
        for r in records:
            if b.is_control:
                p = decode_control(r.key, r.value)
            elif decode is not None:  # Kafka's own records: decoded like metadata's
                p = decode(r.key, r.value)
            elif unit.payloads:
                p = decode_opaque(r.key, r.value, "raw")
                masks = secret_spans(r.value, metadata=False)
                if masks:  # a metadata record's value in another log: its secrets masked
                    p = hide_secrets(p, r.value, masks, "raw")
            else:
                p = WITHHELD  # a customer's key and value, not asked for
            yield ctx + _record_row(unit, b, r, p)


#: a data topic's record whose key and value are left out (no ``payloads`` in the Scope)
WITHHELD = Payload("RAW", None, None)


def _payload_columns(control: bool, p: Any) -> tuple:
    """type, version, the entity key columns and the payload JSON of a decoded record."""
    data = redact(p.type, p.data) if p.data is not None else None
    keys = _entity(p.type, data) if not control else [None] * 7
    return (p.type, p.version, *keys, None if data is None else _json(data))


def _record_row(unit: Unit, b: Any, r: Any, p: Any) -> tuple:
    return (unit.file, b.position, r.offset, r.timestamp,
            b.leader_epoch if b.magic == 2 else -1, b.is_control) + \
        _payload_columns(b.is_control, p)


def _finding_row(ctx: tuple, f: Finding) -> tuple:
    return ctx + (f.code, f.severity.value, f.file, f.position, f.offset, f.message)


def _partition(unit: Unit) -> PartitionDir | None:
    try:
        found = discover([unit.path])
    except KmetaError:
        return None
    return next(iter(found.all_partitions()), None)


def _findings(unit: Unit) -> Iterator[tuple]:
    from kmeta.ops.verify import verify

    ctx = unit.context
    try:
        report = verify([unit.path])
    except KmetaError as e:
        yield _finding_row(ctx, e.finding(unit.path))
        return
    for f in report.findings:
        part = _partition_of(f.file) if unit.partition is None else unit.partition
        yield _finding_row((ctx[0], ctx[1], ctx[2], part), f)


def _partition_of(file: str | None) -> str | None:
    """The partition dir a finding's file is in, from its path (``topic-N``)."""
    if file is None:
        return None
    from kmeta.formats.filenames import parse_partition_dir

    for parent in (Path(file), *Path(file).parents):
        if parse_partition_dir(parent.name):
            return parent.name
    return None


def _epochs(unit: Unit) -> Iterator[tuple]:
    ctx = unit.context
    part = _partition(unit)
    if part is None:
        return
    cache = part.live_file("leader-epoch-checkpoint")
    if cache is not None:
        loaded, _ = load_checked(cache)
        if loaded is not None:
            for e in loaded.entries:
                yield ctx + ("checkpoint", e.epoch, e.start_offset, None, None)
    v2 = ((b.base_offset, b.last_offset, b.leader_epoch)
          for seg in part.segments for b in read_batches(seg.path, []) if b.magic == 2)
    for span in epoch_spans(v2):
        yield ctx + ("batches", *span)


def _timeline(unit: Unit) -> Iterator[tuple]:
    from kmeta.ops.brokers import brokers

    try:
        result = brokers(unit.path)
    except KmetaError:
        return  # the findings table says why (no log, no usable snapshot ...)
    for e in result.events:
        yield unit.context + (
            e.role, e.node, e.event, e.offset, e.timestamp, e.record, e.state_before, e.state,
            e.in_state_ms, e.broker_epoch, e.incarnation_id, e.left_isr, e.lost_leadership,
            e.gained_leadership, e.fenced_ms, e.controlled_shutdown_first,
            None if e.registration is None else _json(e.registration))


def _snapshots(unit: Unit) -> Iterator[tuple]:
    from kmeta.ops.retention import retention

    try:
        result = retention(unit.path)
    except KmetaError:
        return  # the findings table says why
    for s in result.snapshots:
        yield unit.context + (
            s.id.offset, s.id.epoch, str(s.path), s.state, s.size, s.records, s.timestamp,
            s.log_bytes, s.log_records, s.since_previous_ms, s.trigger, s.fate)


def _image(unit: Unit) -> Iterator[tuple]:
    from kmeta.ops.replay import build_image, public_json

    ctx = unit.context
    try:
        result = build_image(unit.path)
    except KmetaError:
        return  # the findings table says why (no log, no usable snapshot ...)
    digest = result.image.digest()
    for section, entities in public_json(result.image).items():
        if isinstance(entities, dict):
            for key, value in sorted(entities.items()):
                yield ctx + (digest, result.offset, section, str(key), _json(value))
        else:
            yield ctx + (digest, result.offset, section, None, _json(entities))
