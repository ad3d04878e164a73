"""``kmeta startup``: what Kafka's LogManager does when it opens a broker's log dirs
(:mod:`.manager`), what its LogLoader does to each partition dir (:mod:`.loader`), and
the result objects with the seam for the image's stray-log judgement (:mod:`.model`)."""

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

__all__ = ["DEFAULT_RECOVERY_RATE", "KAFKA_VERSIONS", "NEWEST", "LogDirStartup", "LogView",
           "PartitionStartup", "Placement", "PlacementJudge", "StartupReport",
           "plan_startup", "server_threads"]
