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
    from kmeta.ops.startup.brokers import group_brokers
    from kmeta.ops.startup.image import image_judge
    from kmeta.ops.startup.image import with_broker_findings
    from kmeta.ops.startup.manager import ahead_afresh
    from kmeta.ops.startup.manager import load_one_ahead
    from kmeta.ops.startup.manager import plan_startup
    from kmeta.ops.startup.metadata_log import load_metadata_log
    from kmeta.ops.startup.manager import server_threads
    from kmeta.ops.startup.model import DEFAULT_RECOVERY_RATE
    from kmeta.ops.startup.model import KAFKA_VERSIONS
    from kmeta.ops.startup.model import NEWEST
    from kmeta.ops.startup.model import LoadedAhead
    from kmeta.ops.startup.model import LogDirStartup
    from kmeta.ops.startup.model import LogView
    from kmeta.ops.startup.model import PartitionStartup
    from kmeta.ops.startup.model import Placement
    from kmeta.ops.startup.model import PlacementJudge
    from kmeta.ops.startup.model import StartupReport
