"""``kmeta verify``: every check kmeta knows, over data dirs, partition dirs or files.

- :mod:`.paths`: a run over paths, its workers started before the rest is imported;
- :mod:`.run`: a run over what discovery found, gathered in a :class:`VerifyReport`;
- :mod:`.metadata_log`: the pass over one metadata log (batches, records, epochs, the
  replay beside it), :mod:`.records` its record rules, :mod:`.model` what it says of the
  replica model, :mod:`.indexes` of the indexes;
- :mod:`.partitions`: the ordinary topics' partitions, each checked where it is claimed,
  on the processes of :mod:`.jobs`;
- :mod:`.dirs`: the data dirs as a whole and their small files.
"""

from typing import TYPE_CHECKING

from kmeta.face import face

__getattr__, __dir__, __all__ = face(__name__)

if TYPE_CHECKING:  # what the rest of kmeta may use (kmeta.face: each loaded on first use)
    from kmeta.ops.verify.indexes import verify_indexes
    from kmeta.ops.verify.jobs import Beside
    from kmeta.ops.verify.metadata_log import Listeners
    from kmeta.ops.verify.metadata_log import LogStats
    from kmeta.ops.verify.metadata_log import verify_log
    from kmeta.ops.verify.metadata_log import verify_metadata_partition
    from kmeta.ops.verify.partitions import Relist
    from kmeta.ops.verify.paths import verify
    from kmeta.ops.verify.run import VerifyReport
    from kmeta.ops.verify.run import verify_discovery
