"""kmeta's tables (``batches``, ``records``, ``findings``, ``epochs``, ``image``) for
``kmeta export`` and the Spark data source: their rows (:mod:`.rows`, the reference) and
the same rows as columnar chunks (:mod:`.chunks`).
"""

from typing import TYPE_CHECKING

from kmeta.face import face

__getattr__, __dir__, __all__ = face(__name__)

if TYPE_CHECKING:  # what the rest of kmeta may use (kmeta.face: each loaded on first use)
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
