"""The offsets a metadata log once held past its end, as its own small files tell:
``leader-epoch-checkpoint`` entries that begin past the log end, with ``quorum-state``'s
epoch beside them.

Kafka facts (apache/kafka trunk 2024-10; the same since 2.8):

* when a node becomes leader, ``KafkaRaftClient.onBecomeLeader`` calls
  ``KafkaMetadataLog.initializeLeaderEpoch``, which assigns the new epoch at the log end
  the node has then (``UnifiedLog.maybeAssignEpochStartOffset(epoch, logEndOffset)``),
  before it appends the epoch's first batch; a follower's entries come from the batches
  it appends (``UnifiedLog.append`` assigns each batch's epoch at its base offset).  So an
  entry ``(epoch, start)`` says the node's log reached ``start``: offsets below it were
  on this node.  An entry exactly at the log end is what a leader that has not written
  yet leaves (nothing is missing); one past the end is not.
* on load, ``LogLoader`` truncates the epoch cache from the end at the log end it
  recovered (``truncateFromEnd``): the entries go quietly, and the node comes back with
  the log it has.
* a snapshot that ends past the log end holds the state of every offset below its end
  (and ``KafkaMetadataLog.truncateToLatestSnapshot`` starts the log there when its epoch
  is the log's latest or later): the offsets it covers are not missing.
* ``quorum-state``'s epoch past the log's last epoch, with no entry past the end, is an
  election the node voted in or learnt of without writing: normal.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kmeta.errors import KmetaError
from kmeta.formats.filenames import classify
from kmeta.formats.textfiles import parse_leader_epoch_checkpoint, parse_quorum_state
from kmeta.storage.ends import segment_ends
from kmeta.storage.headers import next_offset_from
from kmeta.storage.regular import read_regular

__all__ = ["EpochsPastEnd", "epochs_past_end", "past_end"]

_SMALL = 16 << 20


@dataclass(frozen=True)
class EpochsPastEnd:
    """What a metadata log's own checkpoint and quorum-state name past its end."""

    log_end_offset: int
    #: the epoch the log ends in (its checkpoint's entry below the end), None if unknown
    end_epoch: int | None
    #: (epoch, start offset) of every checkpoint entry at or past the log end
    named: tuple[tuple[int, int], ...]
    #: quorum-state's leader epoch, None without the file
    quorum_epoch: int | None = None
    #: the end offset of the newest live snapshot, None without one
    snapshot_end: int | None = None

    @property
    def covered_to(self) -> int:
        """Where what the node keeps ends: the log end, or a later snapshot's."""
        return max(self.log_end_offset, self.snapshot_end or 0)

    @property
    def missing(self) -> range:
        """The offsets the node held that neither its log nor a snapshot keeps: from the
        end to the last entry's start (empty when nothing is missing)."""
        last = max((s for _, s in self.named), default=self.covered_to)
        return range(self.covered_to, max(self.covered_to, last))

    @property
    def lost(self) -> bool:
        return len(self.missing) > 0

    @property
    def epochs(self) -> tuple[int, ...]:
        """The epochs named past the end (each begun at or past it)."""
        return tuple(e for e, _ in self.named)

    def describe(self) -> str:
        """One sentence: the epochs, where they begin, and the offsets missing."""
        (first_epoch, first_start), (last_epoch, last_start) = self.named[0], self.named[-1]
        which = f"epoch {first_epoch} beginning at offset {first_start:,}" \
            if len(self.named) == 1 else \
            f"epochs {first_epoch} to {last_epoch} beginning at offsets {first_start:,} " \
            f"to {last_start:,}"
        end = f"the log end {self.log_end_offset:,}"
        if self.end_epoch is not None:
            end += f" (in epoch {self.end_epoch})"
        if self.snapshot_end is not None and self.snapshot_end > self.log_end_offset:
            end += f" and the newest snapshot's end {self.snapshot_end:,}"
        quorum = "" if self.quorum_epoch is None else \
            f"; quorum-state says epoch {self.quorum_epoch}"
        gap = self.missing
        return (f"leader-epoch-checkpoint names {which}, past {end}{quorum}: at least "
                f"{len(gap):,} offsets this node held, {gap.start:,}..{gap.stop - 1:,}, "
                "are missing")


def past_end(entries: Iterable[tuple[int, int]], log_end: int, *,
             quorum_epoch: int | None = None,
             snapshot_end: int | None = None) -> EpochsPastEnd:
    """The checkpoint ``entries`` (epoch, start offset) against ``log_end``."""
    valid = [(e, s) for e, s in entries if e >= 0 and s >= 0]
    below = [e for e, s in valid if s < log_end]
    return EpochsPastEnd(log_end, below[-1] if below else None,
                         tuple((e, s) for e, s in valid if s >= log_end), quorum_epoch,
                         snapshot_end)


def _log_end(path: Path, names: list[str]) -> int | None:
    """The offset after the last batch of the last segment holding one (headers only),
    or the last segment's base when none does; None without a segment."""
    segments = sorted((k.base_offset, n) for n in names
                      if (k := classify(n)).kind == "segment" and k.suffix is None
                      and k.base_offset is not None)
    for base, name in reversed(segments):
        file = str(path / name)
        got = segment_ends(file, base)
        if got is not None and got[1] is not None:
            return got[1].last_offset + 1
        following, _ = next_offset_from(file)
        if following is not None:
            return following
    return segments[0][0] if segments else None


def epochs_past_end(path: str | os.PathLike[str], log_end: int | None = None
                    ) -> EpochsPastEnd | None:
    """What the metadata partition dir ``path``'s own leader-epoch-checkpoint and
    quorum-state name past its log end: ``log_end`` when given (the end Kafka recovers,
    after its cut), else the end its last segment's headers give.  None when there is no
    segment (and no ``log_end``) or no readable checkpoint: nothing to judge."""
    path = Path(path)
    names = os.listdir(path)
    if log_end is None:
        log_end = _log_end(path, names)
        if log_end is None:
            return None
    try:
        checkpoint = parse_leader_epoch_checkpoint(
            read_regular(path / "leader-epoch-checkpoint", _SMALL, "leader-epoch-checkpoint"))
    except (KmetaError, OSError, ValueError):
        return None
    quorum = None
    if "quorum-state" in names:
        try:
            quorum = parse_quorum_state(read_regular(path / "quorum-state", _SMALL,
                                                     "quorum-state")).leader_epoch
        except (KmetaError, OSError, ValueError):
            quorum = None
    snaps = [k.base_offset for n in names
             if (k := classify(n)).kind == "kraft-snapshot" and k.suffix is None]
    return past_end(((e.epoch, e.start_offset) for e in checkpoint.entries), log_end,
                    quorum_epoch=quorum, snapshot_end=max(snaps) if snaps else None)
