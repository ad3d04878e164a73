"""``kmeta compact``: one round of Kafka's log cleaner on a partition dir, simulated
(:mod:`.simulate`) and, with ``--write``, written as the cleaner writes it (:mod:`.write`).
"""

from typing import TYPE_CHECKING

from kmeta.face import face

__getattr__, __dir__, __all__ = face(__name__)

if TYPE_CHECKING:  # what the rest of kmeta may use (kmeta.face: each loaded on first use)
    from kmeta.ops.compact.simulate import CompactOptions
    from kmeta.ops.compact.simulate import CompactResult
    from kmeta.ops.compact.simulate import StrategyReport
    from kmeta.ops.compact.simulate import compact
    from kmeta.ops.compact.simulate import show_key
    from kmeta.ops.compact.write import CompactWriter
