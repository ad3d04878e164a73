"""``kmeta repair``: a repaired copy of a KRaft metadata partition directory.

:func:`plan_repair` (``plan.py``) reads the partition directory and decides, without
writing anything, what the repaired copy holds; :func:`apply_repair` (``apply.py``) writes
it to a new directory and :func:`apply_repair_in_place` swaps it in for the original
(after a backup).
"""

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

__all__ = [
    "CUT_CODES",
    "QUARANTINE",
    "Action",
    "Cut",
    "FileChange",
    "RepairPlan",
    "RepairResult",
    "Removed",
    "apply_repair",
    "apply_repair_in_place",
    "plan_repair",
]
