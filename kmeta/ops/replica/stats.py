"""What one pass over a metadata log read: the shape verify's pass fills, and the one
diff, retention and the report build the replica model from (:mod:`.model`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kmeta.findings import Finding

#: What reading each snapshot file found, by path: a run that needs a snapshot's image
#: and its findings at different times reads it once.
SnapshotFindings = dict[str, list[Finding]]


@dataclass
class LogStats:
    """What a pass over one metadata log read (verify's, or diff's and retention's own)."""

    segments: int = 0
    batches: int = 0
    records: int = 0
    bytes: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    #: leader epoch -> (first offset, last offset) seen in the batches
    epochs: dict[int, list[int]] = field(default_factory=dict)
    #: leader epochs that hold a LeaderChange control record
    leader_changes: set[int] = field(default_factory=set)
    #: the cluster image at the log end, when the log was replayed
    image: Any = None
    #: per segment file: its base offset and the runs of batches of one epoch it holds,
    #: as [base offset, last offset, epoch] (legacy messages: epoch -1)
    layout: list[tuple[int, list[list[int]]]] = field(default_factory=list)
    #: the core model of the replica built from all of it (kmeta.core.replica_log)
    model: Any = None
    #: what reading each snapshot file found, by path (each is read once)
    snapshot_findings: SnapshotFindings = field(default_factory=dict)
    #: the replay's watch after the log, when one was attached (verify's ``Listeners``)
    watch: Any = None
    #: a :class:`~kmeta.core.log_tally.LogTally` the pass drives (verify's ``Listeners``)
    tally: Any = None
    _digest: str | None = field(default=None, repr=False)

    def image_digest(self) -> str | None:
        """The image's digest (None: not replayed), computed once."""
        if self._digest is None and self.image is not None:
            self._digest = self.image.digest()
        return self._digest


