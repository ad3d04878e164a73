"""``kmeta repair``: a repaired copy of a KRaft metadata partition directory.

:func:`plan_repair` (:mod:`.plan`) reads the partition directory and decides, without
writing anything, what the repaired copy holds; :func:`apply_repair` (:mod:`.apply`)
writes it to a new directory and :func:`apply_repair_in_place` swaps it in for the
original (after a backup).
"""

from typing import TYPE_CHECKING

from kmeta.face import face

#: The names the rest of kmeta may use, each with the module that holds it.
PUBLIC = {
    "RepairResult": "apply",
    "apply_repair": "apply",
    "apply_repair_in_place": "apply",
    "Action": "plan",
    "CUT_CODES": "plan",
    "Cut": "plan",
    "FileChange": "plan",
    "QUARANTINE": "plan",
    "Removed": "plan",
    "RepairPlan": "plan",
    "plan_repair": "plan",
}
__getattr__, __dir__ = face(__name__, PUBLIC)
__all__ = [
    "CUT_CODES", "QUARANTINE", "Action", "Cut", "FileChange", "Removed", "RepairPlan",
    "RepairResult", "apply_repair", "apply_repair_in_place", "plan_repair"
]

if TYPE_CHECKING:
    from kmeta.ops.repair.apply import RepairResult, apply_repair, apply_repair_in_place
    from kmeta.ops.repair.plan import (
        CUT_CODES,
        QUARANTINE,
        Action,
        Cut,
        FileChange,
        Removed,
        RepairPlan,
        plan_repair,
    )
