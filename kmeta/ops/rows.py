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
import heapq
import itertools
import json
import os
import struct
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from kmeta.core.log_rules import epoch_spans
from kmeta.errors import KmetaError, UsageError
from kmeta.findings import Finding
from kmeta.formats.batch import (
    ATTRIBUTES,
    BASE_OFFSET,
    BASE_TIMESTAMP,
    BATCH_LENGTH,
    COMPRESSION_MASK,
    CONTROL_FLAG,
    CRC_VALID,
    LAST_OFFSET_DELTA,
    LEADER_EPOCH,
    LOG_OVERHEAD,
    LONE,
    MAX_TIMESTAMP,
    POSITION,
    PRODUCER_ID,
    RECORDS_COUNT,
    TRANSACTIONAL_FLAG,
    Batch,
)
from kmeta.formats.compression import CODEC_NAMES
from kmeta.formats.decoders import TOPIC_DECODERS, record_decoder
from kmeta.formats.payload import Payload, decode_control, decode_metadata, decode_opaque
from kmeta.formats.runs import Expandable, Run, run_stamps, wrap64
from kmeta.ops.redact import redact
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

__all__ = ["COMMON", "TABLES", "Chunk", "Column", "Scope", "Spans", "Stamps", "Unit", "ddl",
           "expand_globs", "plan_units", "unit_chunks", "unit_rows"]


class Column(NamedTuple):
    name: str
    type: str  # Spark SQL type
    doc: str


def _fact(kind: ObjectKind, key: str, doc: str | None = None) -> Column:
    """The column holding the fact ``kmeta --json`` writes as ``key`` of ``kind`` objects:
    the key's name and type (one name and one type per fact, in JSON and in the tables),
    and its doc unless the table's rows need their own."""
    k = kind.key(key)
    return Column(k.name, k.type.ddl, doc or k.doc)


#: Columns every table starts with: where the row comes from.
COMMON: tuple[Column, ...] = (
    Column("source", "STRING", "the input path the row was found under"),
    _fact(REPLICA, "cluster_id", "cluster.id from the data dir's meta.properties, or null"),
    _fact(REPLICA, "node_id", "node.id (broker.id) from meta.properties, or null"),
    Column("partition_dir", "STRING", "the partition directory's name, e.g. "
           "__cluster_metadata-0"),
)

#: The tables, declared once: their columns after COMMON, in order.
TABLES: dict[str, tuple[Column, ...]] = {
    "batches": (
        Column("file_name", "STRING", "the segment or snapshot file's name (in ``partition``, "
               "under ``source``)"),
        _fact(BATCH, "position"),
        _fact(BATCH, "base_offset"),
        _fact(BATCH, "last_offset"),
        _fact(BATCH, "leader_epoch"),
        Column("base_timestamp", "BIGINT", "first timestamp (ms); null for legacy messages"),
        _fact(BATCH, "max_timestamp"),
        _fact(BATCH, "size"),
        _fact(BATCH, "record_count"),
        _fact(BATCH, "magic"),
        _fact(BATCH, "compression"),
        _fact(BATCH, "crc_valid"),
        _fact(BATCH, "is_control"),
        _fact(BATCH, "is_transactional"),
        _fact(BATCH, "producer_id"),
    ),
    "records": (
        Column("file_name", "STRING", "the segment or snapshot file's name"),
        _fact(RECORD, "batch_position"),
        _fact(RECORD, "offset"),
        _fact(RECORD, "timestamp"),
        _fact(BATCH, "leader_epoch", "leader epoch of its batch (-1 for legacy messages)"),
        _fact(BATCH, "is_control", "a control record (its batch's control attribute)"),
        _fact(RECORD, "type", "Kafka's record type name (RAW for data topics)"),
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
    return ", ".join(f"{c.name} {c.type}" for c in COMMON + TABLES[table])


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
            found = discover([source])
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
    from kmeta.ops.image import build_image, public_json

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


# ------------------------------------------------------------------ columnar chunks
#
# The batches and records tables of a big log are millions of rows; building a tuple per
# row and letting a consumer convert it cell by cell is most of the cost.  The chunks
# below hand the same rows over as columns: the unit's context as constants, the values
# that change per row as lists, and, for records, the columns that repeat (a NoOp's type,
# version, keys and payload) as an index into the distinct tuples of a chunk.


class Spans(NamedTuple):
    """A column given span by span: span i holds the rows from ``ends[i - 1]`` (0 for the
    first) up to ``ends[i]``; its first row holds ``first[i]`` and each row after it
    ``step[i]`` more (without steps, every row of a span holds ``first[i]``).  A run of
    alike batches is one span: a big log's batches cost an entry per run, not per batch,
    and their Arrow columns are made at once (``to_arrow``)."""

    ends: list[int]
    first: list[Any]
    step: list[int] | None = None

    def values(self) -> list[Any]:
        """The column row by row: the reference ``to_arrow``'s columns are tested against."""
        out: list[Any] = []
        start = 0
        steps = self.step if self.step is not None else [0] * len(self.ends)
        for end, first, step in zip(self.ends, self.first, steps, strict=True):
            out.extend([first + i * step for i in range(end - start)] if step
                       else [first] * (end - start))
            start = end
        return out


class Stamps(NamedTuple):
    """A column of timestamps: row i holds the int64 at ``base[8 * i:]`` (this machine's
    byte order) plus its span's ``plus`` (none: 0), in Kafka's int64 arithmetic, which
    wraps; or null, for the rows listed in ``nulls``.  The batches of a run keep the gap
    between their two timestamps, and their records the same delta: the base timestamps
    of a run are read once (``run_stamps``), for all three columns."""

    base: bytearray
    plus: Spans | None
    nulls: list[int]

    def values(self) -> list[int | None]:
        base = array("q")
        base.frombytes(self.base)
        out: list[int | None] = list(base) if self.plus is None else \
            [wrap64(b + p) for b, p in zip(base, self.plus.values(), strict=True)]
        for i in self.nulls:
            out[i] = None
        return out


def column_values(column: list[Any] | Spans | Stamps) -> list[Any]:
    """A chunk's column row by row, whichever way the chunk holds it."""
    return column if type(column) is list else column.values()


@dataclass
class Chunk:
    """``n`` rows of a table as columns (indexes into COMMON + TABLES[table]): constants,
    columns (a list of the rows' values, :class:`Spans` or :class:`Stamps`) and, for
    records, the columns that repeat with the payload (their keys, each row's index into
    the distinct tails, and the tails)."""

    n: int
    constants: dict[int, Any]
    columns: dict[int, list | Spans | Stamps]
    shared: tuple[tuple[int, ...], list[int] | Spans, list[tuple]] | None = None

    def rows(self) -> Iterator[tuple]:
        """The same rows as tuples (what ``unit_rows`` yields)."""
        width = len(self.constants) + len(self.columns) + \
            (len(self.shared[0]) if self.shared else 0)
        columns = {k: column_values(c) for k, c in self.columns.items()}
        if self.shared:
            keys, idx, tails = self.shared
            idx = column_values(idx)
        for i in range(self.n):
            row: list[Any] = [None] * width
            for k, v in self.constants.items():
                row[k] = v
            for k, col in columns.items():
                row[k] = col[i]
            if self.shared:
                for k, v in zip(keys, tails[idx[i]], strict=True):
                    row[k] = v
            yield tuple(row)


CHUNK_ROWS = 1 << 16


def unit_chunks(unit: Unit, size: int = CHUNK_ROWS) -> Iterator[Chunk]:
    """The rows of a unit as columnar chunks of about ``size`` rows (every table; the
    batches and records of a metadata log without a tuple per row, its records as
    export's single read gives them)."""
    if unit.metadata and unit.table in ("batches", "records"):
        # export's single read, without the records' work for the batches table
        wanted = unit.table
        return (chunk for table, chunk in file_chunks(replace(
            unit, records=unit.records and wanted == "records"), size) if table == wanted)
    if unit.table == "batches":
        return _batch_chunks(unit, size)
    return row_chunks(unit_rows(unit), size)


def row_chunks(rows: Iterator[tuple], size: int) -> Iterator[Chunk]:
    while True:
        chunk = list(itertools.islice(rows, size))
        if not chunk:
            return
        yield Chunk(len(chunk), {}, dict(enumerate(map(list, zip(*chunk, strict=True)))))


def _constants(unit: Unit) -> dict[int, Any]:
    return dict(enumerate((*unit.context, unit.file)))


def _batch_chunks(unit: Unit, size: int) -> Iterator[Chunk]:
    cols: list[list] = [[] for _ in range(14)]
    (pos, base, last, epoch, base_ts, max_ts, nbytes, count, magic, codec, crc, control,
     txn, pid) = cols
    for b in read_batches(unit.path, []):
        if type(b) is Batch:
            pos.append(b[POSITION])
            base.append(b[BASE_OFFSET])
            last.append(b[BASE_OFFSET] + b[LAST_OFFSET_DELTA])
            epoch.append(b[LEADER_EPOCH])
            base_ts.append(b[BASE_TIMESTAMP])
            max_ts.append(b[MAX_TIMESTAMP])
            nbytes.append(b[BATCH_LENGTH] + LOG_OVERHEAD)
            count.append(b[RECORDS_COUNT])
            magic.append(2)
            codec.append(b.compression)
            crc.append(b[CRC_VALID])
            control.append(b[ATTRIBUTES] & CONTROL_FLAG != 0)
            txn.append(b[ATTRIBUTES] & TRANSACTIONAL_FLAG != 0)
            pid.append(b[PRODUCER_ID])
        else:
            for col, v in zip(cols, (b.position, b.base_offset, b.last_offset, -1, None,
                                     b.max_timestamp, b.size, b.records_count, b.magic,
                                     b.compression, b.crc_valid, b.is_control, False, -1),
                              strict=True):
                col.append(v)
        if len(pos) >= size:
            yield Chunk(len(pos), _constants(unit), dict(enumerate(cols, start=5)))
            cols = [[] for _ in range(14)]
            (pos, base, last, epoch, base_ts, max_ts, nbytes, count, magic, codec, crc,
             control, txn, pid) = cols
    if pos:
        yield Chunk(len(pos), _constants(unit), dict(enumerate(cols, start=5)))


#: records columns that repeat with the payload: type .. payload
_TAIL = tuple(range(10, 20))


def file_chunks(unit: Unit, size: int = CHUNK_ROWS) -> Iterator[tuple[str, Chunk]]:
    """The batches and the records of one segment or snapshot file from a single read:
    ``("batches", chunk)`` and ``("records", chunk)`` pairs (records only when the unit's
    scope puts them in the records table), the same rows as ``unit_chunks`` gives for
    each table.  What ``kmeta export`` writes.

    The loop is the hottest of an export (once per batch of every log of a fleet): it
    gives a run of alike batches as one span of rows (:class:`Spans`, :class:`Stamps`),
    appends through bound methods and takes a memoised lone record without building
    Record objects."""
    batch_unit = replace(unit, table="batches")
    record_unit = replace(unit, table="records")
    if not unit.metadata:
        yield from (("batches", c) for c in _batch_chunks(batch_unit, size))
        if unit.records:
            yield from (("records", c) for c in unit_chunks(record_unit, size))
        return
    with_records = unit.records
    codecs = CODEC_NAMES
    # Each table's rows as spans (a run of batches is one) and its timestamps as int64s
    # (those of a run in one read): see Spans and Stamps.

    def fresh_batches() -> tuple:
        ends: list[int] = []
        stamps, bts_nulls, mts_nulls = bytearray(), [], []
        pos, pos_step, base, off_step, last, gap = [], [], [], [], [], []
        epoch, nbytes, count, magic, codec, crc, ctl, txn, pid = \
            [], [], [], [], [], [], [], [], []
        columns = {5: Spans(ends, pos, pos_step), 6: Spans(ends, base, off_step),
                   7: Spans(ends, last, off_step), 8: Spans(ends, epoch),
                   9: Stamps(stamps, None, bts_nulls),
                   10: Stamps(stamps, Spans(ends, gap), mts_nulls),
                   11: Spans(ends, nbytes), 12: Spans(ends, count), 13: Spans(ends, magic),
                   14: Spans(ends, codec), 15: Spans(ends, crc), 16: Spans(ends, ctl),
                   17: Spans(ends, txn), 18: Spans(ends, pid)}
        return (columns, [c.append for c in (
            ends, pos, pos_step, base, off_step, last, gap, epoch, nbytes, count, magic,
            codec, crc, ctl, txn, pid)], stamps, bts_nulls, mts_nulls)

    def fresh_records() -> tuple:
        ends: list[int] = []
        stamps, nulls = bytearray(), []
        pos, pos_step, off, off_step, shift, epoch, ctl, idx = [], [], [], [], [], [], [], []
        columns = {5: Spans(ends, pos, pos_step), 6: Spans(ends, off, off_step),
                   7: Stamps(stamps, Spans(ends, shift), nulls), 8: Spans(ends, epoch),
                   9: Spans(ends, ctl)}
        return (columns, Spans(ends, idx), [c.append for c in (
            ends, pos, pos_step, off, off_step, shift, epoch, ctl, idx)], stamps, nulls)

    b_cols, b_add, b_stamps, b_bts_nulls, b_mts_nulls = fresh_batches()
    (b_end, b_pos, b_pos_step, b_base, b_off_step, b_last, b_gap, b_epoch, b_size, b_count,
     b_magic, b_codec, b_crc, b_ctl, b_txn, b_pid) = b_add
    r_cols, r_idx, r_add, r_stamps, r_nulls = fresh_records()
    r_end, r_pos, r_pos_step, r_off, r_off_step, r_shift, r_epoch, r_ctl, r_tail = r_add
    b_n = r_n = 0  # rows so far in each chunk
    tails: list[tuple] = []  # this records chunk's distinct payload columns
    seen: dict[Any, int] = {}  # their places in tails, by record value
    last_value: Any = None
    last_tail = -1
    stamp = _STAMP.pack

    def tail_of(control: bool, key: Any, value: Any) -> int:
        k = (_hashable(key), _hashable(value)) if control else _hashable(value)
        tail_id = seen.get(k, -1)
        if tail_id < 0:
            tail_id = seen[k] = len(tails)
            tails.append(payload_columns(control, key, value))
        return tail_id

    def record(pos: int, offset: int, timestamp: int | None, epoch: int, control: bool,
               tail: int) -> None:
        nonlocal r_n
        if timestamp is None:
            r_nulls.append(r_n)
            timestamp = 0
        r_stamps.extend(stamp(wrap64(timestamp)))
        r_n += 1
        r_end(r_n), r_pos(pos), r_pos_step(0), r_off(offset), r_off_step(0), r_shift(0)
        r_epoch(epoch), r_ctl(control), r_tail(tail)

    # The batch slots and flags as locals: this loop runs once per batch.
    at_pos, at_base, at_attrs, at_epoch = POSITION, BASE_OFFSET, ATTRIBUTES, LEADER_EPOCH
    at_base_ts, at_max_ts, at_delta = BASE_TIMESTAMP, MAX_TIMESTAMP, LAST_OFFSET_DELTA
    at_length, at_count, at_crc_valid = BATCH_LENGTH, RECORDS_COUNT, CRC_VALID
    at_pid, at_lone, overhead = PRODUCER_ID, LONE, LOG_OVERHEAD
    codec_mask, control_flag, txn_flag = COMPRESSION_MASK, CONTROL_FLAG, TRANSACTIONAL_FLAG
    items = Expandable(read_batches(unit.path, [], memo=True, runs=True))
    for b in items:
        if type(b) is Run:
            ref, k, length, _ = b  # (not ``size``: that is the chunk's row count)
            lone = ref[at_lone]
            attrs = ref[at_attrs]
            if attrs & control_flag:
                items.expand(b)
                continue
            # Batches that repeat ``ref``: their rows differ only in offsets and
            # positions, a span each, and timestamps, read at once.
            step, epoch = ref[at_delta] + 1, ref[at_epoch]
            first, pos = ref[at_base] + step, ref[at_pos] + length
            stamps = run_stamps(b)
            b_stamps.extend(stamps)
            b_n += k
            b_end(b_n), b_pos(pos), b_pos_step(length), b_base(first), b_off_step(step)
            b_last(first + ref[at_delta]), b_gap(wrap64(ref[at_max_ts] - ref[at_base_ts]))
            b_epoch(epoch), b_size(length), b_count(ref[at_count]), b_magic(2)
            b_codec(codecs.get(attrs & codec_mask, "unknown")), b_crc(True), b_ctl(False)
            b_txn(attrs & txn_flag != 0), b_pid(ref[at_pid])
            if with_records:
                value = lone[3]
                if value is not last_value:
                    last_value = value
                    last_tail = tail_of(False, None, value)
                r_stamps.extend(stamps)
                r_n += k
                r_end(r_n), r_pos(pos), r_pos_step(length), r_off(first + lone[0])
                r_off_step(step), r_shift(lone[1]), r_epoch(epoch), r_ctl(False)
                r_tail(last_tail)
        elif type(b) is not Batch:  # a legacy message, by attribute
            if b.max_timestamp is None:
                b_mts_nulls.append(b_n)
            b_bts_nulls.append(b_n)  # no baseTimestamp: the maxTimestamp stands in
            b_stamps.extend(stamp(b.max_timestamp or 0))
            b_n += 1
            for add, v in zip(b_add, (b_n, b.position, 0, b.base_offset, 0, b.last_offset,
                                      0, -1, b.size, b.records_count, b.magic,
                                      b.compression, b.crc_valid, b.is_control, False, -1),
                              strict=True):
                add(v)
            found, _ = batch_records(b) if with_records else ([], None)
            for r in found:
                record(b.position, r.offset, r.timestamp, -1, b.is_control,
                       tail_of(b.is_control, r.key, r.value))
        else:
            pos, base, attrs, epoch, base_ts = b[at_pos], b[at_base], b[at_attrs], \
                b[at_epoch], b[at_base_ts]
            control = attrs & control_flag != 0
            b_stamps.extend(stamp(base_ts))
            b_n += 1
            b_end(b_n), b_pos(pos), b_pos_step(0), b_base(base), b_off_step(0)
            b_last(base + b[at_delta]), b_gap(wrap64(b[at_max_ts] - base_ts))
            b_epoch(epoch), b_size(b[at_length] + overhead), b_count(b[at_count])
            b_magic(2), b_codec(codecs.get(attrs & codec_mask, "unknown"))
            b_crc(b[at_crc_valid]), b_ctl(control), b_txn(attrs & txn_flag != 0)
            b_pid(b[at_pid])
            lone = b[at_lone]
            if with_records and lone is not None and not control:
                value = lone[3]
                if value is not last_value:
                    last_value = value
                    last_tail = tail_of(False, None, value)
                r_stamps.extend(stamp(base_ts))
                r_n += 1
                r_end(r_n), r_pos(pos), r_pos_step(0), r_off(base + lone[0]), r_off_step(0)
                r_shift(lone[1]), r_epoch(epoch), r_ctl(False), r_tail(last_tail)
            elif with_records:
                found, _ = batch_records(b)
                for r in found:
                    record(pos, r[0], r[1], epoch, control, tail_of(control, r[2], r[3]))
        if b_n >= size:
            yield "batches", Chunk(b_n, _constants(batch_unit), b_cols)
            b_cols, b_add, b_stamps, b_bts_nulls, b_mts_nulls = fresh_batches()
            (b_end, b_pos, b_pos_step, b_base, b_off_step, b_last, b_gap, b_epoch, b_size,
             b_count, b_magic, b_codec, b_crc, b_ctl, b_txn, b_pid) = b_add
            b_n = 0
        if r_n >= size:
            yield "records", Chunk(r_n, _constants(record_unit), r_cols,
                                   (_TAIL, r_idx, tails))
            r_cols, r_idx, r_add, r_stamps, r_nulls = fresh_records()
            (r_end, r_pos, r_pos_step, r_off, r_off_step, r_shift, r_epoch, r_ctl,
             r_tail) = r_add
            r_n = 0
            tails, seen = [], {}
            last_value, last_tail = None, -1
    if b_n:
        yield "batches", Chunk(b_n, _constants(batch_unit), b_cols)
    if r_n:
        yield "records", Chunk(r_n, _constants(record_unit), r_cols, (_TAIL, r_idx, tails))


#: int64 timestamps in this machine's byte order, as Stamps hold them
_STAMP = struct.Struct("=q")


def payload_columns(control: bool, key: bytes | None, value: bytes | None) -> tuple:
    """The payload columns of a metadata record (``control``: a control record) of
    ``key`` and ``value``, kept by those bytes for the process: the replicas of a
    cluster's metadata log in a fleet hold the same records, and one log repeats many
    (a broker's registrations, its fences and unfences)."""
    k = (_hashable(key), _hashable(value)) if control else _hashable(value)
    columns = _COLUMNS.get(k)
    if columns is None:
        columns = _payload_columns(control, decode_control(key, value) if control
                                   else decode_metadata(value))
        if len(_COLUMNS) >= _COLUMNS_KEPT:
            _COLUMNS.clear()
        _COLUMNS[k] = columns
    return columns


def _hashable(raw: Any) -> bytes | None:
    return raw if raw is None or type(raw) is bytes else bytes(raw)


#: payload columns by record key and value (a value alone for a metadata record)
_COLUMNS: dict[Any, tuple] = {}
_COLUMNS_KEPT = 1 << 15


#: bytes of segment and snapshot files one export task reads, when there are many
TASK_BYTES = 32 << 20


def _unit_bytes(u: Unit) -> int:
    """What a unit reads: its file, or the files of its partition directory."""
    try:
        if not os.path.isdir(u.path):
            return os.stat(u.path).st_size
        with os.scandir(u.path) as entries:
            return sum(e.stat().st_size for e in entries if e.is_file())
    except OSError:
        return 0


def task_groups(units: Sequence[Unit], parallelism: int) -> list[list[Unit]]:
    """The units cut into Spark tasks of similar size: a task per file or partition
    directory costs as much as parsing a megabyte or two (Python worker set-up), and a
    fleet holds thousands of them.  Enough tasks to keep every core busy (four per core)
    or to read about TASK_BYTES each, never more than one per unit; each unit goes to the
    task with the fewest bytes so far, biggest first."""
    sized = sorted(((_unit_bytes(u), u) for u in units), key=lambda su: su[0], reverse=True)
    total = sum(s for s, _ in sized)
    n = min(len(sized), max(4 * max(parallelism, 1), -(-total // TASK_BYTES)))
    groups: list[list[Unit]] = [[] for _ in range(n)]
    lightest = [(0, i) for i in range(n)]  # a heap of (bytes so far, group)
    for s, u in sized:
        load, i = heapq.heappop(lightest)
        groups[i].append(u)
        heapq.heappush(lightest, (load + s, i))
    return groups
