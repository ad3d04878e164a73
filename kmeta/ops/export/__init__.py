"""kmeta's tables (``batches``, ``records``, ``findings``, ``epochs``, ``image``) for
``kmeta export`` and the Spark data source: their rows (:mod:`.rows`, the reference) and
the same rows as columnar chunks (:mod:`.chunks`).
"""

from typing import TYPE_CHECKING

from kmeta.face import face

__getattr__, __dir__, __all__ = face(__name__)

if TYPE_CHECKING:  # what the rest of kmeta may use (kmeta.face: each loaded on first use)
    from kmeta.ops.export.chunks import CHUNK_ROWS
    from kmeta.ops.export.chunks import Chunk
    from kmeta.ops.export.chunks import Spans
    from kmeta.ops.export.chunks import Stamps
    from kmeta.ops.export.chunks import file_chunks
    from kmeta.ops.export.chunks import row_chunks
    from kmeta.ops.export.chunks import task_groups
    from kmeta.ops.export.chunks import unit_chunks
    from kmeta.ops.export.rows import COMMON
    from kmeta.ops.export.rows import TABLES
    from kmeta.ops.export.rows import Scope
    from kmeta.ops.export.rows import Unit
    from kmeta.ops.export.rows import ddl
    from kmeta.ops.export.rows import expand_globs
    from kmeta.ops.export.rows import plan_units
    from kmeta.ops.export.rows import unit_rows
