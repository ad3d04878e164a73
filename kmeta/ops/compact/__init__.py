"""``kmeta compact``: one round of Kafka's log cleaner on a partition dir, simulated
(:mod:`.simulate`) and, with ``--write``, written as the cleaner writes it (:mod:`.write`).
"""

from typing import TYPE_CHECKING

from kmeta.face import face

#: The names the rest of kmeta may use, each with the module that holds it.
PUBLIC = {
    "CompactOptions": "simulate",
    "CompactResult": "simulate",
    "StrategyReport": "simulate",
    "compact": "simulate",
    "show_key": "simulate",
    "CompactWriter": "write",
}
__getattr__, __dir__ = face(__name__, PUBLIC)
__all__ = [
    "CompactOptions", "CompactResult", "CompactWriter", "StrategyReport", "compact", "show_key"
]

if TYPE_CHECKING:
    from kmeta.ops.compact.simulate import (
        CompactOptions,
        CompactResult,
        StrategyReport,
        compact,
        show_key,
    )
    from kmeta.ops.compact.write import CompactWriter
