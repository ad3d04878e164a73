"""What ``kmeta report`` found: every analysis's own result, and the verdict per area.

The report keeps each command's result object as that command builds it (a
:class:`~kmeta.ops.brokers.BrokersResult`, a :class:`~kmeta.ops.diff.DiffReport`, …):
the text, the JSON and the pictures are views of those, so the report says what each
command says, in the same words."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kmeta.findings import Finding, Severity

if TYPE_CHECKING:
    from kmeta.ops.brokers import BrokersResult
    from kmeta.ops.consumers import ConsumersResult
    from kmeta.ops.diff import DiffReport
    from kmeta.ops.retention import RetentionResult
    from kmeta.ops.startup import StartupReport
    from kmeta.ops.tiering import TieringResult
    from kmeta.ops.verify import VerifyReport

#: The areas of a report, in the order a person reads them.
AREAS = ("logs", "snapshots", "replicas", "brokers", "consumers", "startup", "tiering")


@dataclass
class Segment:
    """A segment of a replica's log as the layout picture draws it."""

    path: Path
    base_offset: int
    #: exclusive; None when nothing in it could be read
    end_offset: int | None
    size: int
    first_timestamp: int | None = None
    max_timestamp: int | None = None


@dataclass
class Damage:
    """A stretch of a replica's log that a finding says is damaged."""

    path: Path
    code: str
    position: int | None
    offset: int | None
    severity: str


@dataclass
class MetadataReplica:
    """One copy of a cluster's metadata log (``__cluster_metadata-0``) among the paths."""

    label: str  # short and unique in this report: the data dir's name, or node-N
    path: Path  # the partition dir
    node_id: int | None
    cluster_id: str | None
    log_start_offset: int | None
    log_end_offset: int | None
    #: (epoch, start offset, timestamp of its first batch): the epochs the batches carry
    epochs: list[tuple[int, int, int | None]] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    #: (end offset, path, size, timestamp): the snapshots on disk
    snapshots: list[tuple[int, Path, int, int | None]] = field(default_factory=list)
    damage: list[Damage] = field(default_factory=list)
    #: where ``kmeta repair`` cuts this log (None: it keeps every byte)
    repair_cut: int | None = None
    #: (offset, timestamp) of some batches, in log order, at most a thousand or so: when
    #: an offset was written, for the pictures' time axes (kmeta.ops.report.pictures)
    times: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class Area:
    """One area's verdict: ok, warning, error, or none (nothing to judge on these paths)."""

    name: str
    verdict: str
    line: str  # what the area says, in one line
    findings: list[Finding] = field(default_factory=list)
    #: (why, the kmeta command that digs deeper)
    next_steps: list[tuple[str, list[str]]] = field(default_factory=list)

    @property
    def worst(self) -> Severity | None:
        order = (Severity.ERROR, Severity.WARNING, Severity.INFO)
        return next((s for s in order if any(f.severity is s for f in self.findings)), None)


@dataclass
class Report:
    paths: list[str]
    #: the data dirs found, by their path
    data_dirs: list[Path] = field(default_factory=list)
    #: the ordinary partitions found, by (topic, partition): their dirs
    partitions: dict[tuple[str, int], list[Path]] = field(default_factory=dict)
    metadata: list[MetadataReplica] = field(default_factory=list)
    #: every finding of every analysis, each once, in the order the areas give them
    findings: list[Finding] = field(default_factory=list)
    areas: list[Area] = field(default_factory=list)
    verify: VerifyReport | None = None
    brokers: BrokersResult | None = None
    diff: DiffReport | None = None
    retention: list[RetentionResult] = field(default_factory=list)
    consumers: ConsumersResult | None = None
    #: the data dir whose __consumer_offsets consumers read
    consumers_dir: Path | None = None
    startup: list[StartupReport] = field(default_factory=list)
    tiering: TieringResult | None = None
    #: bytes of every segment found (metadata and ordinary logs)
    segment_bytes: int = 0
    #: (topic, partition) -> (log start, log end) of the partitions consumers committed
    #: in, as read on the paths (the consumers picture: kmeta.ops.report.pictures)
    partition_bounds: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)
    #: of those on the paths whose bounds were not read: why ("no segment", …)
    unbounded: dict[tuple[str, int], str] = field(default_factory=dict)

    def label_of(self, path: str | Path) -> str:
        """A metadata replica's label, from the path an analysis names it by."""
        wanted = str(path)
        return next((m.label for m in self.metadata if str(m.path) == wanted), wanted)
