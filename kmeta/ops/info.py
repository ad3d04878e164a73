"""``kmeta info``: the first screen an SRE wants about a broker's disk.

For each data directory: ``meta.properties``, the offset checkpoint files, every partition
found, and for the metadata log its segments, offsets, leader epochs, snapshots,
``quorum-state``, records per type and control records — plus every finding met on the way.

The metadata log is decoded whole.  A data topic's segments are read at their ends
(``kmeta.storage.ends``: the first batch header, the offset index's last entry and the
headers after it), which gives their offsets, times and sizes exactly, as a decode would,
in a second for 40,000 segments; one that does not read cleanly so is decoded whole.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kmeta.findings import Finding, finding_counts
from kmeta.formats.batch import LONE, Batch
from kmeta.formats.legacy import LegacyBatch
from kmeta.formats.payload import decode_control, decode_metadata
from kmeta.formats.runs import Expandable, Run, run_timestamps
from kmeta.ops.replica import missing_log_finding
from kmeta.storage.discover import DataDir, LogFile, PartitionDir, discover
from kmeta.storage.ends import segment_ends
from kmeta.storage.files import load_checked
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.regular import os_error_finding
from kmeta.storage.segments import batch_records, read_batches


@dataclass
class FileSummary:
    """What a scan of one batch-format file (segment or snapshot) found."""

    file: str
    kind: str
    size: int
    base_offset: int | None = None
    epoch: int | None = None
    suffix: str | None = None
    #: None where the segment was not decoded (``decoded`` False): its batches and
    #: records were not counted, nor their CRCs checked, epochs or control records met.
    batches: int | None = 0
    records: int | None = 0
    first_offset: int | None = None
    last_offset: int | None = None
    first_timestamp: int | None = None
    last_timestamp: int | None = None
    leader_epochs: list[int] | None = field(default_factory=list)
    control_records: Counter | None = field(default_factory=Counter)
    record_types: Counter = field(default_factory=Counter)
    bad_crc_batches: int | None = 0
    #: Every batch read (True), or only the first and the last batch's headers, found
    #: through the offset index (False: a data topic's segment that read cleanly so).
    decoded: bool = True

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "log_file"}
        for k, v in self.__dict__.items():
            if k not in ("control_records", "record_types"):
                # the file's kind and its epochs under the names every command uses
                out[{"kind": "file_kind", "leader_epochs": "epochs"}.get(k, k)] = v
        out["control_records_by_type"] = None if self.control_records is None else \
            dict(self.control_records)
        out["records_by_type"] = dict(sorted(self.record_types.items()))
        return out


@dataclass
class PartitionSummary:
    name: str
    topic: str
    partition: int
    path: str
    is_metadata: bool
    segments: list[FileSummary] = field(default_factory=list)
    snapshots: list[FileSummary] = field(default_factory=list)
    files: dict[str, Any] = field(default_factory=dict)  # small files, decoded
    other_files: list[str] = field(default_factory=list)

    #: Where the log starts when it holds no segment at all: the data dir's
    #: log-start-offset-checkpoint entry for it, else 0 (summarise_data_dir sets it).
    start_checkpoint: int = 0

    @property
    def log_start_offset(self) -> int:
        """The first batch's offset; for a log without a batch, its first segment's base
        offset, or without a segment where it is empty at (:attr:`empty_at`)."""
        firsts = [s.first_offset for s in self.segments if s.first_offset is not None]
        bases = [s.base_offset for s in self.segments if s.base_offset is not None]
        return min(firsts) if firsts else min(bases) if bases else self.empty_at

    @property
    def log_end_offset(self) -> int:
        """One past the last batch's last offset; for a log without a batch, where it is
        empty at (:attr:`empty_at`), as Kafka's log end offset of an empty log is its
        start."""
        lasts = [s.last_offset for s in self.segments if s.last_offset is not None]
        return max(lasts) + 1 if lasts else self.empty_at

    @property
    def empty_at(self) -> int:
        """The offset a log without a batch starts and ends at, as Kafka loads it: its
        last segment's base offset (LogSegment.readNextOffset of an empty segment);
        without a segment, the metadata log at its latest snapshot
        (KafkaMetadataLog.truncateToLatestSnapshot), another at its log start
        checkpoint, else 0 (LogLoader.recoverLog makes a segment there)."""
        bases = [s.base_offset for s in self.segments if s.base_offset is not None]
        if bases:
            return max(bases)
        if self.is_metadata:
            ends = [s.base_offset for s in self.snapshots if s.base_offset is not None]
            if ends:
                return max(ends)
        return self.start_checkpoint

    def record_types(self) -> Counter:
        total: Counter = Counter()
        for s in self.segments:
            total.update(s.record_types)
        return total

    def control_records(self) -> Counter | None:
        """None when a segment was not decoded: its control records are not known."""
        total: Counter = Counter()
        for s in self.segments:
            if s.control_records is None:
                return None
            total.update(s.control_records)
        return total

    @property
    def size(self) -> int:
        return sum(s.size for s in self.segments)

    @property
    def first_timestamp(self) -> int | None:
        """The oldest of its segments' first batch times (-1, Kafka's "no timestamp",
        left out)."""
        times = [t for s in self.segments if (t := s.first_timestamp) is not None and t >= 0]
        return min(times) if times else None

    @property
    def last_timestamp(self) -> int | None:
        """The newest of its segments' last batch times."""
        times = [t for s in self.segments if (t := s.last_timestamp) is not None and t >= 0]
        return max(times) if times else None

    def to_json(self, data_dir: str | None = None) -> dict[str, Any]:
        """One ``partition_dir`` line of ``info --json``; ``data_dir``: the data dir it is
        in, when info found it there."""
        control = self.control_records()
        return {
            "kind": "partition_dir", "path": self.path, "data_dir": data_dir,
            "name": self.name, "topic": self.topic, "partition": self.partition,
            "is_metadata": self.is_metadata,
            "log_start_offset": self.log_start_offset, "log_end_offset": self.log_end_offset,
            "segment_files": [s.to_json() for s in self.segments],
            "snapshot_files": [s.to_json() for s in self.snapshots],
            "records_by_type": dict(sorted(self.record_types().items())),
            "control_records_by_type": None if control is None else dict(control),
            "small_files": self.files,
            "other_files": self.other_files,
        }


@dataclass
class DataDirSummary:
    path: str
    files: dict[str, Any] = field(default_factory=dict)
    partitions: list[PartitionSummary] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The ``data_dir`` line of ``info --json``: its own files; its partitions follow
        as ``partition_dir`` lines."""
        return {"kind": "data_dir", "path": self.path, "small_files": self.files,
                "partitions": len(self.partitions)}


@dataclass
class InfoReport:
    data_dirs: list[DataDirSummary] = field(default_factory=list)
    partitions: list[PartitionSummary] = field(default_factory=list)
    files: list[FileSummary] = field(default_factory=list)
    small_files: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    def json_objects(self) -> Iterator[dict[str, Any]]:
        """``info --json``, one object a line as every command writes: each data dir and
        partition dir, each file given alone, each finding, then the ``info`` summary (a
        broker of thousands of partitions is thousands of lines, not one)."""
        for d in self.data_dirs:
            yield d.to_json()
            for p in d.partitions:
                yield p.to_json(d.path)
        for p in self.partitions:
            yield p.to_json()
        for f in self.files:
            yield f.to_json()
        for path, content in self.small_files.items():
            yield {"kind": "small_file", "file": path, "content": content}
        for finding in self.findings:
            yield finding.to_json()
        yield {"kind": "info", "data_dirs": len(self.data_dirs),
               "partitions": len(self.partitions) + sum(len(d.partitions)
                                                        for d in self.data_dirs),
               "files": len(self.files) + len(self.small_files),
               "finding_counts": finding_counts(self.findings)}


@dataclass
class TopicSummary:
    """A data topic's partitions on the disk read, summed: what ``info`` shows per topic."""

    topic: str
    partitions: list[PartitionSummary] = field(default_factory=list)
    #: Its partitions with a finding, by name: the count of findings in each.
    troubled: Counter = field(default_factory=Counter)

    @property
    def segments(self) -> int:
        return sum(len(p.segments) for p in self.partitions)

    @property
    def size(self) -> int:
        return sum(p.size for p in self.partitions)

    @property
    def first_timestamp(self) -> int | None:
        times = [t for p in self.partitions if (t := p.first_timestamp) is not None]
        return min(times) if times else None

    @property
    def last_timestamp(self) -> int | None:
        times = [t for p in self.partitions if (t := p.last_timestamp) is not None]
        return max(times) if times else None


def topic_summaries(partitions: Iterable[PartitionSummary],
                    findings: Iterable[Finding]) -> list[TopicSummary]:
    """The data topics of ``partitions`` (the metadata log is not one), those with a
    finding in a partition first, then the largest first."""
    topics: dict[str, TopicSummary] = {}
    by_path: dict[str, PartitionSummary] = {}
    for p in partitions:
        if not p.is_metadata:
            topics.setdefault(p.topic, TopicSummary(p.topic)).partitions.append(p)
            by_path[os.path.normpath(p.path)] = p
    for f in findings:
        if f.file is None:
            continue
        path = os.path.normpath(f.file)
        p = by_path.get(path) or by_path.get(os.path.dirname(path))
        if p is not None:
            topics[p.topic].troubled[p.name] += 1
    for t in topics.values():
        t.partitions.sort(key=lambda p: p.partition)
    return sorted(topics.values(), key=lambda t: (not t.troubled, -t.size, t.topic))


def summarise_file(f: LogFile, findings: list[Finding], progress: Progress = QUIET
                   ) -> FileSummary:
    """Scan one segment or snapshot: counts, offsets, times, epochs, record types."""
    path = str(f.path)
    k = f.kind
    try:
        size = f.path.stat().st_size
    except OSError as e:
        findings.append(os_error_finding(path, e))
        return FileSummary(path, k.kind, 0, k.base_offset, k.epoch, k.suffix)
    s = FileSummary(path, k.kind, size, k.base_offset, k.epoch, k.suffix)
    if size == 0:
        return s
    epochs: set[int] = set()
    stream = Expandable(read_batches(f.path, findings, memo=True, runs=True,
                                     progress=progress))
    for batch in stream:
        if type(batch) is Run:
            if not _count_run(s, batch, f.is_metadata):
                stream.expand(batch)
            continue
        _count_batch(s, batch, f.is_metadata, epochs, findings)
    s.leader_epochs = sorted(epochs)
    return s


def summarise_ends(f: LogFile, findings: list[Finding], progress: Progress = QUIET
                   ) -> FileSummary:
    """A data topic's segment from its first and last batch headers (the last found
    through its offset index), as ``summarise_file`` would give its offsets, times and
    size; the segment decoded whole where it does not read cleanly so."""
    k = f.kind
    path = str(f.path)
    read = segment_ends(path, k.base_offset) if k.base_offset is not None else None
    if read is None or read[1] is None:  # decoded whole: it says what it meets
        return summarise_file(f, findings, progress)
    size, ends = read
    progress.read(path, size)  # what info reads of it
    return FileSummary(path, k.kind, size, k.base_offset, k.epoch, k.suffix,
                       batches=None, records=None, first_offset=ends.first_offset,
                       last_offset=ends.last_offset, first_timestamp=ends.first_timestamp,
                       last_timestamp=ends.last_timestamp, leader_epochs=None,
                       control_records=None, bad_crc_batches=None, decoded=False)


def _count_run(s: FileSummary, run: Run, metadata: bool) -> bool:
    """Count the batches of a run as ``_count_batch`` would one by one; False when they
    must be counted so (a control record, or a record that does not decode: its finding
    names each offset).  The run's epoch is its first batch's, counted already."""
    ref, n = run[0], run[1]
    if ref.is_control:
        return False
    payload = decode_metadata(ref[LONE][3]) if metadata else None
    if payload is not None and payload.finding:
        return False
    s.batches += n
    s.last_offset = run.last_offset
    s.last_timestamp = run_timestamps(run)[1][-1]
    if payload is None:
        s.records += n * ref.records_count
    else:
        s.records += n
        s.record_types[payload.type] += n
    return True


def _count_batch(s: FileSummary, b: Batch | LegacyBatch, metadata: bool, epochs: set[int],
                 findings: list[Finding]) -> None:
    s.batches += 1
    if not b.crc_valid:
        s.bad_crc_batches += 1
    if s.first_offset is None:
        s.first_offset = b.base_offset
        s.first_timestamp = b.max_timestamp
    s.last_offset = b.last_offset
    s.last_timestamp = b.max_timestamp
    if b.magic == 2:
        epochs.add(b.leader_epoch)
    if not metadata and not b.is_control:
        s.records += b.records_count if b.records_count is not None else b.message_count
        return
    records, problems = batch_records(b)  # the same F003/F006/F011 as dump and verify
    findings += problems
    s.records += len(records)
    for r in records:
        if b.is_control:
            p = decode_control(r.key, r.value)
            s.control_records[p.type] += 1
        else:
            p = decode_metadata(r.value)
            s.record_types[p.type] += 1
        if p.finding:
            findings.append(Finding(p.finding[0], f"record at offset {r.offset}: "
                                    f"{p.finding[1]}", s.file, b.position, r.offset))


def _small(f: LogFile, findings: list[Finding]) -> Any:
    content, problem = load_checked(f)
    if problem is not None:
        findings.append(problem)
        return {"error": problem.message}
    return content.to_json() if hasattr(content, "to_json") else content


def summarise_partition(p: PartitionDir, findings: list[Finding],
                        decode: bool = False, progress: Progress = QUIET) -> PartitionSummary:
    """``decode``: read every batch of a data topic's segments too (the metadata log's
    always are: its record types are what info shows of it)."""
    ps = PartitionSummary(p.name, p.topic, p.partition, str(p.path), p.is_metadata)
    whole = decode or p.is_metadata
    for f in p.files:
        kind = f.kind.kind
        if kind == "segment" and f.kind.live:
            ps.segments.append(summarise_file(f, findings, progress) if whole
                               else summarise_ends(f, findings, progress))
        elif kind == "kraft-snapshot":
            ps.snapshots.append(summarise_file(f, findings, progress))
        elif kind in ("leader-epoch-checkpoint", "quorum-state", "partition-metadata"):
            ps.files[kind] = _small(f, findings)
        else:
            ps.other_files.append(f.path.name)
    missing = missing_log_finding(p)  # verify's V020: snapshots alone are not a log
    if missing is not None:
        findings.append(missing)
    return ps


def summarise_data_dir(d: DataDir, findings: list[Finding], decode: bool = False,
                       progress: Progress = QUIET) -> DataDirSummary:
    ds = DataDirSummary(str(d.path))
    for f in d.files:
        if f.is_batches:
            ds.files[f.path.name] = summarise_file(f, findings, progress).to_json()
        else:
            ds.files[f.path.name] = _small(f, findings)
    # The metadata log first: it is what an SRE came for.
    ordered = sorted(d.partitions, key=lambda p: (not p.is_metadata, p.name))
    ds.partitions = [summarise_partition(p, findings, decode, progress) for p in ordered]
    starts = _log_starts(ds.files.get("log-start-offset-checkpoint"))
    for ps in ds.partitions:
        ps.start_checkpoint = starts.get((ps.topic, ps.partition), 0)
    return ds


def _log_starts(checkpoint: Any) -> dict[tuple[str, int], int]:
    """The log-start-offset-checkpoint's offsets by (topic, partition); none when it is
    absent or unreadable."""
    entries = checkpoint.get("entries") if isinstance(checkpoint, dict) else None
    return {(e["topic"], e["partition"]): e["offset"] for e in entries or ()
            if isinstance(e, dict) and {"topic", "partition", "offset"} <= e.keys()}


def info(paths: Iterable[str | os.PathLike[str]], decode: bool = False, *,
         progress: Progress = QUIET) -> InfoReport:
    """What the files under ``paths`` hold, and every finding met reading them.
    ``decode``: every batch of every segment read, data topics' too (by default their
    segments are read at their ends: see ``summarise_ends``).  ``progress`` hears of the
    reading."""
    discovery = discover(paths, progress=progress)
    report = InfoReport(findings=list(discovery.findings))
    for d in discovery.data_dirs:
        report.data_dirs.append(summarise_data_dir(d, report.findings, decode, progress))
    for p in discovery.partitions:
        report.partitions.append(summarise_partition(p, report.findings, decode, progress))
    for f in discovery.files:
        if f.is_batches:
            report.files.append(summarise_file(f, report.findings, progress))
        else:
            report.small_files[str(f.path)] = _small(f, report.findings)
    return report
