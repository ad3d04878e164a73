"""``kmeta report``: the whole story of a cluster's disks, every analysis over one read
(:mod:`.build`), its result (:mod:`.model`), one verdict per area (:mod:`.areas`), the
commands it suggests (:mod:`.lines`) and the facts only its pictures need
(:mod:`.pictures`).
"""

from typing import TYPE_CHECKING

from kmeta.face import face

#: The names the rest of kmeta may use, each with the module that holds it.
PUBLIC = {
    "build_report": "build",
    "size": "lines",
    "AREAS": "model",
    "Area": "model",
    "MetadataReplica": "model",
    "Report": "model",
}
__getattr__, __dir__ = face(__name__, PUBLIC)
__all__ = ["AREAS", "Area", "MetadataReplica", "Report", "build_report", "size"]

if TYPE_CHECKING:
    from kmeta.ops.report.build import build_report
    from kmeta.ops.report.lines import size
    from kmeta.ops.report.model import AREAS, Area, MetadataReplica, Report
