"""``kmeta repair``: a repaired copy of a KRaft metadata partition directory.

:func:`plan_repair` (:mod:`.plan`) reads the partition directory and decides, without
writing anything, what the repaired copy holds; :func:`apply_repair` (:mod:`.apply`)
writes it to a new directory and :func:`apply_repair_in_place` swaps it in for the
original (after a backup).
"""

from typing import TYPE_CHECKING

from kmeta.face import face

__getattr__, __dir__, __all__ = face(__name__)

if TYPE_CHECKING:  # what the rest of kmeta may use (kmeta.face: each loaded on first use)
    from kmeta.ops.repair.apply import RepairResult
    from kmeta.ops.repair.apply import apply_repair
    from kmeta.ops.repair.apply import apply_repair_in_place
    from kmeta.ops.repair.plan import CUT_CODES
    from kmeta.ops.repair.plan import QUARANTINE
    from kmeta.ops.repair.plan import Action
    from kmeta.ops.repair.plan import Cut
    from kmeta.ops.repair.plan import FileChange
    from kmeta.ops.repair.plan import Removed
    from kmeta.ops.repair.plan import RepairPlan
    from kmeta.ops.repair.plan import plan_repair
