"""``kmeta startup``: what Kafka's LogManager does when it opens a broker's log dirs
(:mod:`.manager`), what its LogLoader does to each partition dir (:mod:`.loader`, the
leader-epoch cache through it in :mod:`.epoch_cache`, the topics' settings in
:mod:`.configs`), the result objects with the seam for the image's stray-log judgement
(:mod:`.model`), and that judgement from the broker's own image (:mod:`.image`).
"""

from typing import TYPE_CHECKING

from kmeta.face import face

#: The names the rest of kmeta may use, each with the module that holds it.
PUBLIC = {
    "image_judge": "image",
    "with_broker_findings": "image",
    "plan_startup": "manager",
    "server_threads": "manager",
    "DEFAULT_RECOVERY_RATE": "model",
    "KAFKA_VERSIONS": "model",
    "LogDirStartup": "model",
    "LogView": "model",
    "NEWEST": "model",
    "PartitionStartup": "model",
    "Placement": "model",
    "PlacementJudge": "model",
    "StartupReport": "model",
}
__getattr__, __dir__ = face(__name__, PUBLIC)
__all__ = [
    "DEFAULT_RECOVERY_RATE", "KAFKA_VERSIONS", "NEWEST", "LogDirStartup", "LogView",
    "PartitionStartup", "Placement", "PlacementJudge", "StartupReport", "image_judge",
    "plan_startup", "server_threads", "with_broker_findings"
]

if TYPE_CHECKING:
    from kmeta.ops.startup.image import image_judge, with_broker_findings
    from kmeta.ops.startup.manager import plan_startup, server_threads
    from kmeta.ops.startup.model import (
        DEFAULT_RECOVERY_RATE,
        KAFKA_VERSIONS,
        NEWEST,
        LogDirStartup,
        LogView,
        PartitionStartup,
        Placement,
        PlacementJudge,
        StartupReport,
    )
