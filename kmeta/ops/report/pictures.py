"""What the report's pictures need beyond what each analysis returns: when each epoch and
segment of a metadata replica began and ended (batch timestamps), the stretches findings
say are damaged, where ``kmeta repair`` would cut, and the log start and end of every
partition a consumer group committed in.

Kept apart from :mod:`kmeta.ops.report.build`, which calls :func:`add_picture_data` once
the analyses ran: the text and JSON views need none of this."""

from __future__ import annotations

from pathlib import Path

from kmeta.errors import KmetaError
from kmeta.findings import Finding
from kmeta.ops.report.areas import area_of
from kmeta.ops.report.model import Damage, MetadataReplica, Report
from kmeta.storage.headers import sampled_headers
from kmeta.storage.segments import same_bytes

#: Consumer positions checked against partitions on the paths; past this many the bounds
#: of the rest are not read (the picture says so): a page stays small and quick to build.
MOST_CONSUMER_PARTITIONS = 2_000
#: Batches whose (offset, time) a replica keeps for the time axes: enough to place a mark
#: within a pixel of a picture a thousand pixels wide.
MOST_TIME_SAMPLES = 1_024
#: Batches sampled along each segment (more where an epoch begins, and at its end).
SAMPLES_PER_SEGMENT = 256
#: Bytes walked between two samples at least: below it, sampling costs more than reading.
LEAST_STEP = 1 << 16


def add_picture_data(report: Report) -> None:
    """Fill the timestamps, damage and repair cut of each metadata replica, and the
    bounds of the partitions consumer groups committed in."""
    findings = _all_findings(report)
    read: list[MetadataReplica] = []
    for m in report.metadata:
        twin = next((t for t in read if _same_log(t, m)), None)
        if twin is None:
            _times(m)
            read.append(m)
        else:  # copies of one log (a quorum's replicas in step): read it once
            m.epochs, m.times = list(twin.epochs), list(twin.times)
            for mine, theirs in zip(m.segments, twin.segments, strict=True):
                mine.first_timestamp = theirs.first_timestamp
                mine.max_timestamp = theirs.max_timestamp
        _newest(report, m)
        _damage(m, findings)
        _repair_cut(m)
    _consumer_bounds(report)


def _all_findings(report: Report) -> list[Finding]:
    out = list(report.findings)
    if report.verify is not None:
        out += report.verify.findings
    return out


def _same_log(a: MetadataReplica, b: MetadataReplica) -> bool:
    """Whether two replicas' segments and epochs are the same, byte for byte."""
    shape = [(s.path.name, s.size) for s in a.segments]
    if shape != [(s.path.name, s.size) for s in b.segments] or \
            [e[:2] for e in a.epochs] != [e[:2] for e in b.epochs]:
        return False
    try:
        return all(same_bytes([x.path, y.path]) for x, y in zip(a.segments, b.segments,
                                                                  strict=True))
    except (KmetaError, OSError):
        return False


def _times(m: MetadataReplica) -> None:
    """First timestamp of each epoch and first/newest timestamp of each segment, from the
    batch headers (an epoch's time is its first batch's base timestamp), and a sample of
    (offset, time) along the log."""
    first_of: dict[int, int] = {}
    samples: list[tuple[int, int]] = []
    stride, seen = 1, 0
    for seg in m.segments:
        first = newest = None
        for base, epoch, ts, top in sampled_headers(seg.path, SAMPLES_PER_SEGMENT,
                                                    LEAST_STEP):
            if ts >= 0:
                if first is None:
                    first = ts
                if epoch not in first_of:
                    first_of[epoch] = ts
                if seen % stride == 0:
                    samples.append((base, ts))
                    if len(samples) > MOST_TIME_SAMPLES:  # keep every other: bounded
                        samples, stride = samples[::2], stride * 2
                seen += 1
            if top >= 0 and (newest is None or top > newest):
                newest = top
        seg.first_timestamp, seg.max_timestamp = first, newest
    m.epochs = [(e, start, first_of.get(e, ts)) for e, start, ts in m.epochs]
    m.times = samples


def _newest(report: Report, m: MetadataReplica) -> None:
    """Each segment's newest time as retention tallied it from every batch (verify's
    pass): the samples may miss it, and a clock set back makes the last batch older than
    some before it."""
    rows = next((r.segments for r in report.retention if Path(r.partition) == m.path), [])
    exact = {row.base_offset: row.max_timestamp for row in rows}
    for seg in m.segments:
        top = exact.get(seg.base_offset)
        if top is not None and (seg.max_timestamp is None or top > seg.max_timestamp):
            seg.max_timestamp = top


def _damage(m: MetadataReplica, findings: list[Finding]) -> None:
    inside = str(m.path)
    seen = {(d.path, d.code, d.position, d.offset) for d in m.damage}
    for f in findings:
        if f.file is None or f.severity.value == "info" or area_of(f.code) == "startup":
            continue  # (what a start does to the log is no damage in it)
        if not (f.file == inside or f.file.startswith(inside + "/")):
            continue
        if f.position is None and f.offset is None:
            continue
        key = (Path(f.file), f.code, f.position, f.offset)
        if key in seen:
            continue
        seen.add(key)
        m.damage.append(Damage(Path(f.file), f.code, f.position, f.offset, f.severity.value))


def _repair_cut(m: MetadataReplica) -> None:
    from kmeta.ops.repair import CUT_CODES, plan_repair

    if m.repair_cut is not None or not any(d.code in CUT_CODES for d in m.damage):
        return
    try:
        plan = plan_repair(m.path)
    except KmetaError:
        return  # repair refuses this dir: nothing to draw, its own command says why
    if plan.cut is not None:
        m.repair_cut = plan.new_log_end_offset


def _consumer_bounds(report: Report) -> None:
    """Log start and end of each partition consumers committed in: of the replica their
    positions were checked against (KIP-320) when they were, else of the first of its
    copies on the paths."""
    if report.consumers is None:
        return
    for key, view in report.consumers.replicas.items():
        report.partition_bounds[key] = (view.log_start, view.log_end)
    from kmeta.ops.replica import read_partition
    from kmeta.storage.discover import discover

    wanted = sorted({(r.commit.topic, r.commit.partition) for r in report.consumers.rows
                     if (r.commit.topic, r.commit.partition) in report.partitions}
                    - set(report.partition_bounds))
    for key in wanted[MOST_CONSUMER_PARTITIONS:]:
        report.unbounded[key] = f"past the first {MOST_CONSUMER_PARTITIONS:,} read"
    for key in wanted[:MOST_CONSUMER_PARTITIONS]:
        found = discover([str(report.partitions[key][0])])
        parts = list(found.all_partitions())
        if not parts or not parts[0].segments:
            report.unbounded[key] = "its dir holds no segment"
            continue
        view = read_partition(parts[0])
        report.partition_bounds[key] = (view.log_start, view.log_end)
