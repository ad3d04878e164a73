"""``spark.read.format("kmeta")``: kmeta's tables as a PySpark Python data source.

Options: ``table`` (batches, records, findings, epochs, timeline, snapshots, image; default
records),
``data_topics`` and ``payloads`` ("true" or "false", default false: what the records table
holds, see ``kmeta.ops.rows.Scope``) and the paths given to ``load`` (data dirs, partition
dirs, files or globs, from many brokers).
Planning expands the paths into units (``kmeta.ops.rows``): one Spark input partition per
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

from kmeta.ops.rows import (
    CHUNK_ROWS,
    COMMON,
    TABLES,
    Chunk,
    Scope,
    Unit,
    ddl,
    expand_globs,
    plan_units,
    row_chunks,
    task_groups,
    unit_chunks,
)

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
        units, problems = plan_units(self.paths, self.table, self.scope)
        parts: list[InputPartition] = [
            _UnitsPartition(g) for g in task_groups(units, os.cpu_count() or 1)]
        if problems and self.table == "findings":
            parts.append(_UnitsPartition([], problems))
        return parts or [_UnitsPartition([])]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        assert isinstance(partition, _UnitsPartition)
        # Arrow record batches built from columns, not rows: several times faster than
        # yielding a tuple per row for Spark to convert.
        schema = arrow_schema(self.table)
        if partition.problems:
            for chunk in row_chunks(iter(partition.problems), CHUNK_ROWS):
                yield to_arrow(chunk, schema)
        for unit in partition.units:
            for chunk in unit_chunks(unit):
                yield to_arrow(chunk, schema)


#: Spark SQL type -> pyarrow type, for the types kmeta's tables use
_ARROW = {"STRING": "string", "BIGINT": "int64", "INT": "int32", "BOOLEAN": "bool_"}


def arrow_schema(table: str) -> Any:
    import pyarrow as pa

    return pa.schema([(c.name, getattr(pa, _ARROW[c.type])()) for c in COMMON + TABLES[table]])


def to_arrow(chunk: Chunk, schema: Any) -> Any:
    """One pyarrow RecordBatch of a chunk: constants repeated, columns converted once
    each, repeated tails taken from their distinct values."""
    import pyarrow as pa

    arrays: list[Any] = [None] * len(schema)
    for k, v in chunk.constants.items():
        arrays[k] = pa.repeat(pa.scalar(v, type=schema[k].type), chunk.n)
    for k, col in chunk.columns.items():
        arrays[k] = pa.array(col, type=schema[k].type)
    if chunk.shared is not None:
        keys, idx, tails = chunk.shared
        take = pa.array(idx, type=pa.int32())
        for j, k in enumerate(keys):
            distinct = pa.array([t[j] for t in tails], type=schema[k].type)
            arrays[k] = distinct.take(take)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


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
        Scope.from_options(self.options)  # a bad option fails here, before any work
        return ddl(self._table())

    def reader(self, schema: Any) -> DataSourceReader:
        return KmetaReader(self._table(), input_paths(dict(self.options)),
                           Scope.from_options(self.options))
