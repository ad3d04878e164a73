"""``spark.read.format("kmeta")``: kmeta's tables as a PySpark Python data source.

Options: ``table`` (batches, records, findings, epochs, timeline, snapshots, image; default
records),
``data_topics`` and ``payloads`` ("true" or "false", default false: what the records table
holds, see ``kmeta.ops.export.rows.Scope``) and the paths given to ``load`` (data dirs, partition
dirs, files or globs, from many brokers).
Planning expands the paths into units (``kmeta.ops.export.rows``): one Spark input partition per
segment or snapshot file (per partition or data dir for the other tables), so reading
spreads over the executors; each executor parses with kmeta's own storage and formats
code.  Inputs that cannot be read become rows of the ``findings`` table, never a failed
job.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from kmeta.ops.export import (
    CHUNK_ROWS,
    COMMON,
    TABLES,
    Chunk,
    Scope,
    Spans,
    Stamps,
    Unit,
    ddl,
    expand_globs,
    plan_units,
    row_chunks,
    task_groups,
    unit_chunks,
)
from kmeta.spark.daemon import keep_archives

__all__ = ["KmetaDataSource", "input_paths"]


def input_paths(options: dict[str, str]) -> list[str]:
    """The paths given to ``load``: ``path`` (one) or ``paths`` (a JSON list), globs
    expanded (a glob that matches nothing stays, and is reported as unreadable)."""
    raw: list[str] = []
    if options.get("paths"):
        raw = json.loads(options["paths"])
    elif options.get("path"):
        raw = [options["path"]]
    return expand_globs(raw)


class _UnitsPartition(InputPartition):
    """One Spark task: several units (a task per partition dir would be hundreds of tasks
    of a few milliseconds each), or the problems met while planning them."""

    def __init__(self, units: list[Unit], problems: list[tuple] | None = None) -> None:
        super().__init__(len(units))
        self.units = units
        self.problems = problems or []


class KmetaReader(DataSourceReader):
    def __init__(self, table: str, paths: list[str], scope: Scope) -> None:
        self.table = table
        self.paths = paths
        self.scope = scope

    def partitions(self) -> Sequence[InputPartition]:
        keep_archives()  # here and below: each runs in a worker Spark forked
        units, problems = plan_units(self.paths, self.table, self.scope)
        parts: list[InputPartition] = [
            _UnitsPartition(g) for g in task_groups(units, os.cpu_count() or 1)]
        if problems and self.table == "findings":
            parts.append(_UnitsPartition([], problems))
        return parts or [_UnitsPartition([])]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        assert isinstance(partition, _UnitsPartition)
        keep_archives()
        # Arrow record batches built from columns, not rows: several times faster than
        # yielding a tuple per row for Spark to convert.
        schema = arrow_schema(self.table)
        required = [i for i, c in enumerate(COMMON + TABLES[self.table]) if not c.nullable]
        if partition.problems:
            for chunk in row_chunks(iter(partition.problems), CHUNK_ROWS):
                yield _checked(to_arrow(chunk, schema), required)
        for unit in partition.units:
            for chunk in unit_chunks(unit):
                yield _checked(to_arrow(chunk, schema), required)


def _checked(batch: Any, required: list[int]) -> Any:
    """``batch``, whose ``required`` columns hold no null: Spark reads a NOT NULL column's
    values without looking at its nulls, and would take a null for a value."""
    for i in required:
        if batch.column(i).null_count:
            raise ValueError(f"kmeta: a null in column {batch.schema.names[i]}, which is "
                             "declared NOT NULL")
    return batch


#: Spark SQL type -> pyarrow type, for the types kmeta's tables use
_ARROW = {"STRING": "string", "BIGINT": "int64", "INT": "int32", "BOOLEAN": "bool_"}


def arrow_schema(table: str) -> Any:
    import pyarrow as pa

    return pa.schema([(c.name, getattr(pa, _ARROW[c.type])()) for c in COMMON + TABLES[table]])


def to_arrow(chunk: Chunk, schema: Any, *, dictionaries: bool = False) -> Any:
    """One pyarrow RecordBatch of a chunk: constants repeated, columns converted once
    each, spans and timestamps made by Arrow's own kernels, repeated tails taken from
    their distinct values.  ``dictionaries``: the string columns that repeat (constants,
    tails) as dictionary arrays instead of ``schema``'s strings, each value stored once
    (what export's Parquet writer takes as it is, instead of hashing every row's)."""
    import pyarrow as pa

    arrays: list[Any] = [None] * len(schema)
    for k, v in chunk.constants.items():
        arrays[k] = _constant_dictionary(v, chunk.n) \
            if dictionaries and pa.types.is_string(schema[k].type) \
            else _repeat(v, schema[k].type, chunk.n)
    layouts: dict[int, Any] = {}  # see _layout
    for k, col in chunk.columns.items():
        if type(col) is Spans:
            arrays[k] = _spans_array(col, schema[k].type, layouts)
        elif type(col) is Stamps:
            arrays[k] = _stamps_array(col, chunk.n, layouts)
        else:
            arrays[k] = pa.array(col, type=schema[k].type)
    if chunk.shared is not None:
        keys, idx, tails = chunk.shared
        take = _spans_array(idx, pa.int32(), layouts) if type(idx) is Spans else \
            pa.array(idx, type=pa.int32())
        for j, k in enumerate(keys):
            distinct = pa.array([t[j] for t in tails], type=schema[k].type)
            if dictionaries and pa.types.is_string(schema[k].type):
                # nulls in the indices: the Parquet writer takes no null in a dictionary
                encoded = distinct.dictionary_encode()
                arrays[k] = pa.DictionaryArray.from_arrays(encoded.indices.take(take),
                                                           encoded.dictionary)
            else:
                arrays[k] = distinct.take(take)
    if dictionaries:
        return pa.RecordBatch.from_arrays(arrays, names=schema.names)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _constant_dictionary(value: str | None, n: int) -> Any:
    """``value`` ``n`` times as a dictionary array of one value (or none: null)."""
    import pyarrow as pa

    if value is None:
        return pa.DictionaryArray.from_arrays(pa.nulls(n, type=pa.int32()),
                                              pa.array([], type=pa.string()))
    return pa.DictionaryArray.from_arrays(_repeat(0, pa.int32(), n),
                                          pa.array([value], type=pa.string()))


def _repeat(value: Any, kind: Any, n: int) -> Any:
    """``value`` ``n`` times: a slice of one long array kept per value (a chunk's file
    name, its source and partition are the same as the chunk before's)."""
    import pyarrow as pa

    key = (value, str(kind))
    held = _REPEATED.get(key)
    if held is None or len(held) < n:
        if len(_REPEATED) >= 64:
            _REPEATED.clear()
        held = _REPEATED[key] = pa.repeat(pa.scalar(value, type=kind), n + (n >> 3))
    return held.slice(0, n)


_REPEATED: dict[tuple[Any, str], Any] = {}


def _spans_array(spans: Spans, kind: Any, layouts: dict[int, Any]) -> Any:
    """The Arrow column of ``spans``: each span's first value run-end decoded, plus, where
    the spans step, each row's place in its span times its span's step."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = _each_row(spans.ends, spans.first, kind, layouts)
    if spans.step is None or not any(spans.step):
        return column
    return pc.add(column, pc.multiply(_places(spans.ends, layouts),
                                      _each_row(spans.ends, spans.step, pa.int64(), layouts)))


def _each_row(ends: list[int], values: list[Any], kind: Any, layouts: dict[int, Any]) -> Any:
    """Each span's value repeated over its rows (one value for all: repeated)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if values.count(values[0]) == len(values):
        return _repeat(values[0], kind, ends[-1])
    return pc.run_end_decode(pa.RunEndEncodedArray.from_arrays(
        _layout(ends, layouts)[0], pa.array(values, type=kind)))


def _layout(ends: list[int], layouts: dict[int, Any]) -> list[Any]:
    """The span ends as an Arrow array, and (filled by _places) each row's place in its
    span: made once per layout, which a chunk's columns share."""
    import pyarrow as pa

    layout = layouts.get(id(ends))
    if layout is None:
        layout = layouts[id(ends)] = [pa.array(ends, type=pa.int64()), None]
    return layout


def _places(ends: list[int], layouts: dict[int, Any]) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    layout = _layout(ends, layouts)
    if layout[1] is None:
        starts = pc.run_end_decode(pa.RunEndEncodedArray.from_arrays(
            layout[0], pa.array([0, *ends[:-1]], type=pa.int64())))
        layout[1] = pc.subtract(_iota(ends[-1]), starts)
    return layout[1]


def _stamps_array(stamps: Stamps, n: int, layouts: dict[int, Any]) -> Any:
    """The Arrow column of ``stamps``: their int64s as they are, plus the spans' deltas
    (Arrow's add wraps as Kafka's longs do)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if stamps.nulls:  # a legacy message's, rare: row by row
        return pa.array(stamps.values(), type=pa.int64())
    if len(stamps.base) != 8 * n:  # Arrow would read past the buffer's end
        raise ValueError(f"{len(stamps.base)} bytes of timestamps for {n} rows")
    column = pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(stamps.base)])
    plus = stamps.plus
    if plus is None or not any(plus.first):
        return column
    return pc.add(column, _each_row(plus.ends, plus.first, pa.int64(), layouts))


_IOTA: list[Any] = []


def _iota(n: int) -> Any:
    """0, 1, .. n - 1 as an Arrow int64 array (a slice of one kept for every chunk)."""
    import pyarrow as pa

    if not _IOTA or len(_IOTA[0]) < n:
        _IOTA[:] = [pa.array(range(max(n, 1 << 18)), type=pa.int64())]
    return _IOTA[0].slice(0, n)


class KmetaDataSource(DataSource):
    """kmeta's tables of KRaft metadata logs; ``option("table", ...)`` picks one."""

    @classmethod
    def name(cls) -> str:
        return "kmeta"

    def _table(self) -> str:
        table = self.options.get("table", "records")
        if table not in TABLES:
            raise ValueError(f"kmeta: unknown table {table!r}; one of {', '.join(TABLES)}")
        return table

    def schema(self) -> str:
        keep_archives()
        Scope.from_options(self.options)  # a bad option fails here, before any work
        return ddl(self._table())

    def reader(self, schema: Any) -> DataSourceReader:
        keep_archives()
        return KmetaReader(self._table(), input_paths(dict(self.options)),
                           Scope.from_options(self.options))
