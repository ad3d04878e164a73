"""``kmeta report``: the whole story of a cluster's disks, every analysis over one read
(:mod:`.build`), its result (:mod:`.model`), one verdict per area (:mod:`.areas`), the
commands it suggests (:mod:`.lines`) and the facts only its pictures need
(:mod:`.pictures`).
"""

from typing import TYPE_CHECKING

from kmeta.face import face

__getattr__, __dir__, __all__ = face(__name__)

if TYPE_CHECKING:  # what the rest of kmeta may use (kmeta.face: each loaded on first use)
    from kmeta.ops.report.build import build_report
    from kmeta.ops.report.lines import size
    from kmeta.ops.report.model import AREAS
    from kmeta.ops.report.model import Area
    from kmeta.ops.report.model import MetadataReplica
    from kmeta.ops.report.model import Report
