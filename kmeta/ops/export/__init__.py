"""kmeta's tables (``batches``, ``records``, ``findings``, ``epochs``, ``image``) for
``kmeta export`` and the Spark data source: their rows (:mod:`.rows`, the reference) and
the same rows as columnar chunks (:mod:`.chunks`).
"""

from typing import TYPE_CHECKING

from kmeta.face import face

#: The names the rest of kmeta may use, each with the module that holds it.
PUBLIC = {
    "CHUNK_ROWS": "chunks",
    "Chunk": "chunks",
    "Spans": "chunks",
    "Stamps": "chunks",
    "file_chunks": "chunks",
    "row_chunks": "chunks",
    "task_groups": "chunks",
    "unit_chunks": "chunks",
    "COMMON": "rows",
    "Scope": "rows",
    "TABLES": "rows",
    "Unit": "rows",
    "ddl": "rows",
    "expand_globs": "rows",
    "plan_units": "rows",
    "unit_rows": "rows",
}
__getattr__, __dir__ = face(__name__, PUBLIC)
__all__ = [
    "CHUNK_ROWS", "COMMON", "TABLES", "Chunk", "Scope", "Spans", "Stamps", "Unit", "ddl",
    "expand_globs", "file_chunks", "plan_units", "row_chunks", "task_groups", "unit_chunks",
    "unit_rows"
]

if TYPE_CHECKING:
    from kmeta.ops.export.chunks import (
        CHUNK_ROWS,
        Chunk,
        Spans,
        Stamps,
        file_chunks,
        row_chunks,
        task_groups,
        unit_chunks,
    )
    from kmeta.ops.export.rows import (
        COMMON,
        TABLES,
        Scope,
        Unit,
        ddl,
        expand_globs,
        plan_units,
        unit_rows,
    )
