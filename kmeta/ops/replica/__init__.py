"""One replica, below every command that reads one: the model of a metadata replica
and what builds it, which directories are replicas of one log, and one user partition as
its leader would answer from it.

- :mod:`.stats`: what a pass over a metadata log read (:class:`LogStats`);
- :mod:`.model`: the replica model built from it and the small files, and V020;
- :mod:`.dirs`: which directories may be compared as replicas, and their labels;
- :mod:`.partition`: a user partition's epochs, log start and log end.
"""

from typing import TYPE_CHECKING

from kmeta.face import face

__getattr__, __dir__, __all__ = face(__name__)

if TYPE_CHECKING:  # what the rest of kmeta may use (kmeta.face: each loaded on first use)
    from kmeta.ops.replica.dirs import (
        ReplicaDir,
        node_and_cluster,
        refuse_two_clusters,
        refuse_unrelated,
        replica_labels,
    )
    from kmeta.ops.replica.model import (
        SNAPSHOT_STATES,
        build_model,
        missing_log_finding,
        small_file,
    )
    from kmeta.ops.replica.partition import PartitionView, checkpoint_entry, read_partition
    from kmeta.ops.replica.stats import LogStats, SnapshotFindings
