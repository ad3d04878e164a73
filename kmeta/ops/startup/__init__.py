"""``kmeta startup``: what Kafka's LogManager does when it opens a broker's log dirs
(:mod:`.manager`), what its LogLoader does to each partition dir (:mod:`.loader`, the
leader-epoch cache through it in :mod:`.epoch_cache`, the topics' settings in
:mod:`.configs`), the result objects with the seam for the image's stray-log judgement
(:mod:`.model`), and that judgement from the broker's own image (:mod:`.image`).
"""

from typing import TYPE_CHECKING

from kmeta.face import face

__getattr__, __dir__, __all__ = face(__name__)

if TYPE_CHECKING:  # what the rest of kmeta may use (kmeta.face: each loaded on first use)
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
