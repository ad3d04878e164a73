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

#: The names the rest of kmeta may use, each with the module that holds it.
PUBLIC = {
    "verify_indexes": "indexes",
    "Beside": "jobs",
    "LOG_TALLY": "metadata_log",
    "LogStats": "metadata_log",
    "REPLAY_WATCH": "metadata_log",
    "verify_log": "metadata_log",
    "verify_metadata_partition": "metadata_log",
    "verify": "paths",
    "VerifyReport": "run",
    "verify_discovery": "run",
}
__getattr__, __dir__ = face(__name__, PUBLIC)
__all__ = [
    "LOG_TALLY", "REPLAY_WATCH", "Beside", "LogStats", "VerifyReport", "verify",
    "verify_discovery", "verify_indexes", "verify_log", "verify_metadata_partition"
]

if TYPE_CHECKING:
    from kmeta.ops.verify.indexes import verify_indexes
    from kmeta.ops.verify.jobs import Beside
    from kmeta.ops.verify.metadata_log import (
        LOG_TALLY,
        REPLAY_WATCH,
        LogStats,
        verify_log,
        verify_metadata_partition,
    )
    from kmeta.ops.verify.paths import verify
    from kmeta.ops.verify.run import VerifyReport, verify_discovery
