"""One replica, below every command that reads one: the model of a metadata replica
and what builds it, which directories are replicas of one log, and one user partition as
its leader would answer from it.

- :mod:`.stats`: what a pass over a metadata log read (:class:`LogStats`);
- :mod:`.model`: the replica model built from it and the small files, and V020;
- :mod:`.dirs`: which directories may be compared as replicas, and their labels;
- :mod:`.partition`: a user partition's epochs, log start and log end;
- :mod:`.epoch_tail`: the offsets a metadata log's own epoch checkpoint names past its end.
"""

from typing import TYPE_CHECKING

from kmeta.face import face

__getattr__, __dir__, __all__ = face(__name__)

if TYPE_CHECKING:  # what the rest of kmeta may use (kmeta.face: each loaded on first use)
    from kmeta.ops.replica.dirs import ReplicaDir
    from kmeta.ops.replica.dirs import node_and_cluster
    from kmeta.ops.replica.dirs import refuse_two_clusters
    from kmeta.ops.replica.dirs import refuse_unrelated
    from kmeta.ops.replica.dirs import replica_labels
    from kmeta.ops.replica.model import SNAPSHOT_STATES
    from kmeta.ops.replica.model import build_model
    from kmeta.ops.replica.model import missing_log_finding
    from kmeta.ops.replica.model import small_file
    from kmeta.ops.replica.partition import PartitionView
    from kmeta.ops.replica.partition import checkpoint_entry
    from kmeta.ops.replica.partition import read_partition
    from kmeta.ops.replica.epoch_tail import EpochsPastEnd
    from kmeta.ops.replica.epoch_tail import epochs_past_end
    from kmeta.ops.replica.epoch_tail import past_end
    from kmeta.ops.replica.stats import LogStats
    from kmeta.ops.replica.stats import SnapshotFindings
