"""The leader-epoch cache through a partition's loading, as Kafka's
``LeaderEpochFileCache`` goes: read from ``leader-epoch-checkpoint`` through ``assign``,
the recovered batches' epochs assigned, then truncated at both ends
(:mod:`kmeta.ops.startup.loader` drives it)."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from kmeta.errors import FormatError, KmetaError
from kmeta.formats.textfiles import parse_leader_epoch_checkpoint
from kmeta.ops.startup.kafka_files import epoch_checkpoint_verdict
from kmeta.ops.startup.model import EpochCachePlan, PartitionStartup, Recovery
from kmeta.storage.regular import read_regular

#: The most bytes of a leader-epoch-checkpoint read (Kafka's hold a line per epoch).
CHECKPOINT_MOST = 16 << 20


@functools.lru_cache(maxsize=1024)
def _epoch_entries(data: bytes) -> tuple[tuple[int, int], ...] | None:
    """leader-epoch-checkpoint's entries, None when Kafka's format does not hold; most
    partitions of a broker hold the same few files, each parsed once."""
    try:
        value = parse_leader_epoch_checkpoint(data)
    except (KmetaError, FormatError):
        return None
    return tuple((e.epoch, e.start_offset) for e in value.entries)


class EpochCache:
    """The leader-epoch cache through loading (LeaderEpochFileCache: read from its file
    through ``assign``, the recovered batches' epochs assigned, then truncated)."""

    def __init__(self, path: Path, cleared: str | None, part: PartitionStartup) -> None:
        self.entries: list[tuple[int, int]] = []
        self.cleared = cleared
        self.source = "missing"
        self.before: list[tuple[int, int]] = []
        f = os.path.join(path, "leader-epoch-checkpoint")
        try:
            data = read_regular(f, CHECKPOINT_MOST, "leader-epoch-checkpoint")
        except KmetaError as e:
            if os.path.lexists(f):
                self.source = "unreadable"
                if cleared is None:  # an IOException through the failure handler (3.3+)
                    part.offline = f"leader-epoch-checkpoint cannot be read ({e.message})"
            return
        if cleared is None:  # read through CheckpointFile (a format before v2 deletes it)
            verdict = epoch_checkpoint_verdict(data)
            if verdict is not None:
                self.source = "unreadable"
                if verdict[0] == "stop":
                    part.load_failure = verdict[1]
                else:
                    part.offline = verdict[1]
                return
        entries = _epoch_entries(data)
        if entries is None:
            self.source = "unreadable"
            return
        self.source = "read"
        self.before = list(entries)
        if cleared is not None:
            return  # the file is deleted before it is read
        for epoch, start in entries:
            if epoch < 0 or start < 0:
                part.load_failure = (
                    f"leader-epoch-checkpoint holds epoch {epoch} at offset {start}: "
                    "LeaderEpochFileCache refuses a negative entry (IllegalArgumentException)")
                return
            self.assign(epoch, start)

    @property
    def live(self) -> bool:
        return self.cleared is None and self.source != "unreadable"

    def assign(self, epoch: int, start: int) -> None:
        """LeaderEpochFileCache.assign: nothing when the latest entry has this epoch and
        starts no later; else the entries it contradicts go from the end first."""
        if self.entries:
            le, ls = self.entries[-1]
            if epoch == le and start >= ls:
                return
        while self.entries and (self.entries[-1][0] >= epoch or self.entries[-1][1] >= start):
            self.entries.pop()
        self.entries.append((epoch, start))

    def recovered(self, r: Recovery) -> None:
        """The epochs of a segment's recovered batches, assigned as Kafka assigns them."""
        if not self.live:
            return
        for epoch, start in r.assigns:
            if not self.entries or epoch > self.entries[-1][0]:
                self.assign(epoch, start)

    def finish(self, part: PartitionStartup) -> None:
        if self.source == "unreadable":
            part.epoch_cache = EpochCachePlan([], [], "unreadable")
            return
        if self.cleared is not None:
            part.epoch_cache = EpochCachePlan(self.before, [], self.source, self.cleared)
            return
        if part.all_deleted:  # clearAndFlush
            self.entries = []
        end = part.log_end_offset if part.log_end_offset is not None else 0
        if part.state == "delete":
            end = 0  # LogLoader: a -delete dir's next offset is 0
        if self.entries and self.entries[-1][1] >= end:  # truncateFromEnd
            self.entries = [e for e in self.entries if e[1] < end]
        ckpt = part.log_start_checkpoint  # truncateFromStart: the checkpoint, not the max
        below = [e for e in self.entries if e[1] <= ckpt]
        if below:
            self.entries = [(below[-1][0], ckpt)] + [e for e in self.entries if e[1] > ckpt]
        part.epoch_cache = EpochCachePlan(self.before, list(self.entries), self.source)
