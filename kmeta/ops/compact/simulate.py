"""``kmeta compact``: one round of Kafka's log cleaner (or a KIP-280 strategy) on a
partition dir, simulated from the disk without touching it (:mod:`kmeta.core.cleaner`).

Reading: a header pass over every batch (log end, each producer's last data offset and
epoch, open transactions for the last stable offset, each segment's newest timestamp),
then the cleaner's own two passes: the dirty range once to build the key map, the log up
to the map's end once to decide every batch and record.  Memory holds the map: one entry
per distinct key of the dirty range (per strategy compared), nothing per record.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kmeta.core.cleaner import (
    DAY_MS,
    BatchOutcome,
    CBatch,
    CleanerConfig,
    CSegment,
    ProducerState,
    Round,
    Strategy,
    TxnEntry,
    digest,
    header_long,
    note_producer,
    sort_key,
)
from kmeta.core.log_rules import batch_out_of_segment
from kmeta.errors import UnreadableInput, UsageError
from kmeta.findings import Finding, Severity
from kmeta.formats.legacy import build_message
from kmeta.formats.payload import decode_control
from kmeta.ops.compact.write import encode_batch
from kmeta.ops.replica import checkpoint_entry
from kmeta.storage.discover import LogFile, PartitionDir, discover
from kmeta.storage.files import load_checked
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.segments import batch_records, read_batches

__all__ = ["CompactOptions", "CompactResult", "StrategyReport", "compact"]

PRODUCER_EXPIRATION_MS = DAY_MS  # producer.id.expiration.ms
#: The coordinators' own topics: created compacted, 100 MiB segments by default
#: (offsets.topic.segment.bytes, transaction.state.log.segment.bytes), whatever the
#: broker's log defaults say.
INTERNAL_COMPACTED = ("__consumer_offsets", "__transaction_state")
INTERNAL_SEGMENT_BYTES = 100 * 1024 * 1024


@dataclass
class CompactOptions:
    #: none given: the topic's compaction.strategy (KIP-280's config), else offset
    strategies: list[Strategy] = field(default_factory=list)
    now: int | None = None
    first_dirty: int | None = None  # --from
    delete_retention_ms: int | None = None
    min_compaction_lag_ms: int | None = None
    key: bytes | None = None  # --key: what a consumer sees for it
    roll: bool = False  # as if the active segment had just rolled
    batches: bool = False  # keep every batch's outcome (--batches)
    write: Path | None = None  # --write NEWDIR: the compacted partition written there


@dataclass
class Layout:
    """What the header pass learned about the partition."""

    segments: list[LogFile]
    bases: list[int]
    ends: list[int]
    mtimes: list[int]
    largest_ts: list[int]
    aborted: list[list[TxnEntry]]
    log_start: int
    log_end: int
    high_watermark: int
    first_unstable: int | None
    producers: dict[int, ProducerState]
    newest_ts: int
    seg_records: list[int] = field(default_factory=list)
    seg_bytes: list[int] = field(default_factory=list)
    legacy: bool = False  # some batch is a magic 0/1 message set
    #: the first batch that cannot be trusted (an error finding of the read, or offsets
    #: outside its segment): where a round that reads it stops
    damage: Finding | None = None
    damage_base: int | None = None  # the base offset of the segment that holds it


@dataclass
class KeyView:
    """One record of ``--key`` and what each strategy does with it."""

    offset: int
    timestamp: int
    value: bytes | None
    header: int | None
    kept: dict[str, bool] = field(default_factory=dict)


@dataclass
class BatchFate:
    """What one round does to one batch (``--batches``)."""

    base_offset: int
    last_offset: int
    records: int
    kept: tuple[int, ...]  # the offsets of the records kept
    action: str  # kept, rewritten, emptied or deleted, with why
    control: str | None
    delete_horizon: int | None  # after the round


@dataclass
class StrategyReport:
    strategy: Strategy
    records_before: int = 0
    records_kept: int = 0
    bytes_before: int = 0
    bytes_kept: int = 0
    tombstones_kept: int = 0
    tombstones_removed: int = 0
    horizons_set: int = 0
    keyless_removed: int = 0
    aborted_removed: int = 0
    markers_removed: int = 0
    batches_emptied: int = 0
    batches_deleted: int = 0
    keys: int = 0
    map_full: bool = False
    end: int = 0  # the next first dirty offset
    batches: list[BatchFate] = field(default_factory=list)  # with --batches


@dataclass
class Disagreement:
    """A key whose winner depends on the strategy."""

    key: bytes
    winners: dict[str, tuple[int, int, int | None]]  # strategy -> offset, timestamp, header
    why: dict[str, str] = field(default_factory=dict)  # strategy -> why its winner won


@dataclass
class CompactResult:
    partition: str
    topic: str
    partition_id: int
    configs: dict[str, Any]
    config_source: str
    now: int
    now_from: str
    layout: Layout
    first_dirty: int
    first_dirty_from: str
    first_uncleanable: int
    uncleanable_why: str
    reports: list[StrategyReport] = field(default_factory=list)
    disagreements: list[Disagreement] = field(default_factory=list)
    out_of_order: int = 0  # a later offset of a key with an older timestamp
    # key, the newer timestamp written before, the offset and timestamp of the late record
    out_of_order_samples: list[tuple[bytes, int, int, int]] = field(default_factory=list)
    key_view: list[KeyView] = field(default_factory=list)
    written: Path | None = None
    refused: str | None = None  # with --write: why nothing was written
    notes: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def compact(path: str | os.PathLike[str], options: CompactOptions, *,
            progress: Progress = QUIET) -> CompactResult:
    """One round of the cleaner on the partition dir at ``path``, as ``options`` say;
    ``progress`` hears of the discovery and the first read of every segment."""
    found = discover([path], progress=progress)
    parts = [p for p in found.all_partitions() if not p.is_metadata]
    if not parts:  # none of what compact reads: exit 3, as for a folder of text files
        raise UnreadableInput(f"{path}: no partition dir of a topic here",
                              hint="kmeta compact DATA_DIR/orders-0")
    if len(parts) > 1:
        names = ", ".join(p.name for p in parts[:6])
        raise UsageError(f"{path}: give one partition dir (found {names})",
                         hint="kmeta compact DATA_DIR/orders-0")
    part = parts[0]
    if not part.segments:
        raise UnreadableInput(f"{part.path}: no log segment: there is no log to compact")
    findings = list(found.findings)
    configs, config_source = _topic_configs(part, findings)
    layout = _header_pass(part, findings, progress)
    if options.first_dirty is not None and not 0 <= options.first_dirty <= layout.log_end:
        raise UsageError(f"--from {options.first_dirty}: outside the log (its end offset is "
                         f"{layout.log_end})")
    if options.now is not None:
        now, now_from = options.now, "--now"
    elif layout.newest_ts >= 0:
        now, now_from = layout.newest_ts, "the newest record's timestamp"
    else:
        now, now_from = 0, "no record has a timestamp"
    retention = options.delete_retention_ms if options.delete_retention_ms is not None \
        else int(configs.get("delete.retention.ms", DAY_MS))
    lag = options.min_compaction_lag_ms if options.min_compaction_lag_ms is not None \
        else int(configs.get("min.compaction.lag.ms", 0))
    first_dirty, dirty_from = _first_dirty(part, layout, options.first_dirty, findings)
    bound, why = _first_uncleanable(layout, first_dirty, lag, now, options.roll)
    result = CompactResult(str(part.path), part.topic, part.partition,
                           {**configs, "delete.retention.ms": retention,
                            "min.compaction.lag.ms": lag}, config_source, now, now_from,
                           layout, first_dirty, dirty_from, bound, why, findings=findings)
    policy = configs.get("cleanup.policy")
    if policy is not None and "compact" not in policy.split(" ")[0]:
        result.notes.append(f"cleanup.policy is {policy}: Kafka's cleaner does not compact "
                            "this topic; this is what it would do if it did")
    damage = layout.damage
    if damage is not None:
        result.notes.append(_damage_note(damage, layout, first_dirty, bound))
        if options.write is not None:
            result.refused = (f"the batch at {_damage_where(damage, layout)} cannot be "
                              f"trusted ({damage.code}); repair the partition first")
    if options.write is not None and result.refused is None:
        result.refused = _unreadable_copies(part, findings)
    if result.refused is not None:
        result.notes.append(f"--write: nothing written: {result.refused}")
    if bound <= first_dirty:
        hint = "" if options.roll else \
            "; --roll shows the round after the active segment rolls"
        result.notes.append(f"nothing is cleanable: the dirty range starts at {first_dirty} "
                            f"and {why} at {bound}{hint}")
    producers = {pid: s for pid, s in layout.producers.items()
                 if now - s.last_timestamp < PRODUCER_EXPIRATION_MS}
    if not options.strategies:
        options.strategies = [_topic_strategy(configs, result)]
    if options.write is not None and len(options.strategies) != 1:
        raise UsageError("--write writes one strategy's result: give one --strategy")
    if options.write is not None and layout.legacy:
        raise UsageError("--write: this partition holds legacy (magic 0/1) messages, which "
                         "kmeta does not rewrite; run without --write for the report")
    for strategy in options.strategies:
        config = CleanerConfig(retention, lag, strategy)
        writer = None
        if options.write is not None and result.refused is None:
            from kmeta.ops.compact.write import CompactWriter

            writer = CompactWriter(Path(part.path), options.write,
                                   int(configs.get("segment.bytes", 1 << 30)),
                                   [(f.kind.base_offset or 0, Path(f.path))
                                    for f in part.of_kind("producer-snapshot")])
        result.reports.append(_simulate(part, layout, first_dirty, bound, now, config,
                                        producers, result, options.key, options.batches,
                                        writer))
        if writer is not None:
            result.written = writer.close(part.topic, part.partition, result.reports[-1].end)
    if len(options.strategies) > 1:
        _compare(part, layout, first_dirty, bound, options.strategies, result)
    if options.key is not None:
        _key_past_round(part, layout, result, options.key)
    return result


def _key_past_round(part: PartitionDir, layout: Layout, result: CompactResult,
                    key: bytes) -> None:
    """``--key`` always answers: its records past the round's end (which every strategy
    leaves as they are), or that the log has none."""
    end = min(r.end for r in result.reports)
    names = [str(r.strategy) for r in result.reports]
    # a round whose map filled may end inside a segment it cleans: those records it saw
    seen = {v.offset for v in result.key_view}
    past = 0
    for seg in _views(part, layout, result.findings):
        if seg.end is not None and seg.end <= end:
            continue
        for b in seg.batches:
            if b.control:
                continue
            for r in b.records:
                if r.key == key and r.offset >= end and r.offset not in seen:
                    past += 1
                    result.key_view.append(KeyView(r.offset, r.timestamp, r.value, None,
                                                   dict.fromkeys(names, True)))
    shown = show_key(key)
    if not result.key_view:
        result.notes.append(f"--key {shown}: no record of this key in the log")
    elif past == len(result.key_view):
        where = "the active segment" if end >= layout.bases[-1] else \
            "segments this round does not clean"
        result.notes.append(f"--key {shown}: its {past} record(s) are all past the round's "
                            f"end ({end}), in {where}: every strategy keeps them as they are")
    elif past:
        result.notes.append(f"--key {shown}: {past} of its records are past the round's end "
                            f"({end}) and stay as they are")


def show_key(key: bytes) -> str:
    """A key as text when it is printable UTF-8, else as hex."""
    try:
        text = key.decode("utf-8")
    except UnicodeDecodeError:
        return "0x" + key.hex()
    return repr(text) if text.isprintable() else "0x" + key.hex()


def _topic_strategy(configs: dict[str, Any], result: CompactResult) -> Strategy:
    """KIP-280's topic configs, where a fork of Kafka set them: ``compaction.strategy``
    (offset, timestamp, header) and ``compaction.strategy.header``."""
    kind = configs.get("compaction.strategy")
    if kind is None:
        return Strategy()
    header = configs.get("compaction.strategy.header")
    try:
        chosen = Strategy.parse(f"header:{header}" if kind == "header" else kind)
    except ValueError:
        result.notes.append(f"compaction.strategy {kind!r} (header {header!r}) is not one "
                            "KIP-280 defines: the offset strategy is used")
        return Strategy()
    result.notes.append(f"the topic's compaction.strategy is {chosen} (KIP-280)")
    return chosen


# ------------------------------------------------------------------------- reading


def _cbatch(b: Any) -> CBatch:
    records, _ = batch_records(b)
    control = bool(b.is_control)
    recs = tuple(records)  # Records carry the fields the cleaner reads
    kind = decode_control(recs[0].key, recs[0].value).type if control and recs else None
    if b.magic >= 2:
        return CBatch(b.base_offset, b.last_offset, recs, 2, b.producer_id, b.producer_epoch,
                      b.base_sequence, bool(b.is_transactional), control, kind,
                      b.delete_horizon_ms, bool(b.attributes & 0x08), b.max_timestamp,
                      b.attributes & 0x07, b.leader_epoch, b.size, bytes(b.raw))
    return CBatch(b.base_offset, b.last_offset, recs, b.magic,
                  log_append_time=bool(b.attributes & 0x08), max_timestamp=b.max_timestamp,
                  compression=b.attributes & 0x07, size=b.size)


def _where(f: Finding) -> tuple:
    return f.code, f.file, f.position, f.offset, f.message


def _views(part: PartitionDir, layout: Layout, findings: list[Finding]) -> list[CSegment]:
    """Fresh one-shot views of the segments, for one pass.  What the header pass reported
    already is not reported again (a file that changed since is)."""
    def batches(f: LogFile) -> Iterator[CBatch]:
        fresh: list[Finding] = []
        try:
            for b in read_batches(f.path, fresh):
                yield _cbatch(b)
        finally:
            seen = {_where(x) for x in findings}
            findings.extend(x for x in fresh if _where(x) not in seen)

    return [CSegment(base, batches(f), mtime, aborted, end) for f, base, end, mtime, aborted
            in zip(layout.segments, layout.bases, layout.ends, layout.mtimes, layout.aborted,
                   strict=True)]


def _header_pass(part: PartitionDir, findings: list[Finding], progress: Progress) -> Layout:
    segs = part.segments
    bases, ends, mtimes, largest, aborted = [], [], [], [], []
    producers: dict[int, ProducerState] = {}
    open_txn: dict[int, int] = {}
    end = newest = -1
    seg_records, seg_bytes = [], []
    legacy = False
    txn_files = {f.kind.base_offset: f for f in part.of_kind("txn-index")}
    damage: Finding | None = None
    damage_base: int | None = None
    names = [f.kind.base_offset or 0 for f in segs]
    for i, f in enumerate(segs):
        base = names[i]
        bases.append(base)
        top = -1
        records = size = 0
        seen = len(findings)
        for b in read_batches(f.path, findings, progress=progress):
            if damage is None:
                damage = batch_out_of_segment(str(f.path), b.position, b.base_offset,
                                              b.last_offset, base,
                                              names[i + 1] if i + 1 < len(names) else None)
                if damage is not None:
                    findings.append(damage)
            records += b.last_offset - b.base_offset + 1 if b.records_count is None \
                else b.records_count
            size += b.size
            end = b.last_offset + 1
            legacy = legacy or b.magic < 2
            top = max(top, b.max_timestamp)
            if b.producer_id >= 0:
                note_producer(producers, b.producer_id, b.producer_epoch, b.is_control,
                              b.last_offset, b.max_timestamp)
                if b.is_control:
                    open_txn.pop(b.producer_id, None)
                elif b.is_transactional:
                    open_txn.setdefault(b.producer_id, b.base_offset)
        if damage is None:
            damage = next((x for x in findings[seen:] if x.severity is Severity.ERROR), None)
        if damage is not None and damage_base is None:
            damage_base = base
        ends.append(max(end, base))
        seg_records.append(records)
        seg_bytes.append(size)
        largest.append(top)
        newest = max(newest, top)
        try:
            mtimes.append(int(os.stat(f.path).st_mtime * 1000))
        except OSError:
            mtimes.append(0)
        index, problem = load_checked(txn_files.get(base))
        if problem is not None:
            findings.append(problem)
        aborted.append([TxnEntry(e.producer_id, e.first_offset, e.last_offset,
                                 e.last_stable_offset) for e in (index.entries if index else ())])
    for i in range(len(ends) - 1):
        ends[i] = bases[i + 1]
    log_end = ends[-1]
    saved_start = checkpoint_entry(part, "log-start-offset-checkpoint", findings)
    log_start = max(bases[0], saved_start) if saved_start is not None else bases[0]
    hw = checkpoint_entry(part, "replication-offset-checkpoint", findings)
    return Layout(segs, bases, ends, mtimes, largest, aborted, log_start, log_end,
                  log_end if hw is None else min(hw, log_end),
                  min(open_txn.values()) if open_txn else None, producers, newest,
                  seg_records, seg_bytes, legacy, damage,
                  damage_base)


def _topic_configs(part: PartitionDir, findings: list[Finding]) -> tuple[dict[str, str], str]:
    """The topic's configs from the metadata log beside it, when the data dir has one;
    the coordinators' topics are compacted whatever it says."""
    internal = {"cleanup.policy": f"compact (Kafka creates {part.topic} compacted)",
                "segment.bytes": str(INTERNAL_SEGMENT_BYTES)} \
        if part.topic in INTERNAL_COMPACTED else {}
    meta = Path(part.path).parent / "__cluster_metadata-0"
    if not meta.is_dir():
        return internal, "defaults (no metadata log beside the partition)"
    from kmeta.errors import KmetaError
    from kmeta.ops.replay import build_image

    try:
        result = build_image(meta)
    except KmetaError as e:
        findings.append(e.finding(str(meta)))
        return internal, "defaults (the metadata log could not be replayed)"
    configs = {**internal, **result.image.configs.get((2, part.topic), {})}
    configs.setdefault("cleanup.policy", "delete (no topic override)")
    return configs, f"the metadata log (replayed to offset {result.offset})"


#: The files of a partition dir that --write copies as they are (Kafka's cleaner leaves them).
_COPIED_KINDS = ("leader-epoch-checkpoint", "partition-metadata", "producer-snapshot")


def _unreadable_copies(part: PartitionDir, findings: list[Finding]) -> str | None:
    """Why --write must not copy the partition's small files, if one of them is broken:
    the copy would be a partition Kafka (and ``kmeta verify``) rejects."""
    why = None
    for f in (f for kind in _COPIED_KINDS for f in part.of_kind(kind)):
        _, problem = load_checked(f)
        if problem is not None:
            findings.append(problem)
            if why is None and problem.severity is Severity.ERROR:
                why = f"{Path(f.path).name} cannot be read ({problem.code}); repair it first"
    return why


def _damage_where(damage: Finding, layout: Layout) -> str:
    return f"offset {damage.offset}" if damage.offset is not None else \
        f"byte {damage.position} of segment {layout.damage_base}"


def _damage_note(damage: Finding, layout: Layout, first_dirty: int, bound: int) -> str:
    what = f"the batch at {_damage_where(damage, layout)} cannot be trusted ({damage.code})"
    if bound > first_dirty and layout.damage_base is not None and layout.damage_base < bound:
        return (f"{what}. Kafka's cleaner does not check CRCs, but a batch whose records "
                "it cannot parse, or whose offsets do not fit a cleaned segment, ends its "
                "round with an error: the partition is marked uncleanable "
                "(markPartitionUncleanable) and not cleaned again until the broker restarts. "
                "The figures below are the round over the batches kmeta could read")
    if bound <= first_dirty:
        return f"{what}; nothing is cleanable, so Kafka's cleaner does not read it yet"
    return (f"{what}; it lies past the round's end, which Kafka's cleaner does not read "
            "this round")


def _first_dirty(part: PartitionDir, layout: Layout, given: int | None,
                 findings: list[Finding]) -> tuple[int, str]:
    if given is not None:
        return given, "--from"
    saved = checkpoint_entry(part, "cleaner-offset-checkpoint", findings)
    if saved is None:
        return layout.log_start, "the log start (no cleaner-offset-checkpoint entry)"
    if saved < layout.log_start or saved > layout.log_end:
        return layout.log_start, (f"the log start (cleaner-offset-checkpoint's {saved} is "
                                  "outside the log: Kafka resets it)")
    return saved, "cleaner-offset-checkpoint"


def _first_uncleanable(layout: Layout, first_dirty: int, lag_ms: int, now: int,
                       roll: bool = False) -> tuple[int, str]:
    """``cleanableOffsets`` then the rounding down to a segment base (``LogToClean``).
    ``roll``: the active segment counts as rolled (a new empty one at the log end)."""
    bases = layout.bases + [layout.log_end] if roll else layout.bases
    ends = layout.ends + [layout.log_end] if roll else layout.ends
    largest = layout.largest_ts + [-1] if roll else layout.largest_ts
    lso = layout.high_watermark if layout.first_unstable is None else \
        min(layout.first_unstable, layout.high_watermark)
    candidates = [(lso, "the last stable offset"), (bases[-1], "the active segment")]
    if lag_ms > 0:
        for base, end, ts in zip(bases[:-1], ends[:-1], largest[:-1], strict=True):
            if end > first_dirty and ts > now - lag_ms:
                candidates.append((base, "min.compaction.lag.ms"))
                break
    raw, why = min(candidates)
    raw = max(raw, first_dirty)
    floor = max((b for b in bases[:-1] if b <= raw), default=None)
    bound = bases[-1] if floor is None or raw >= bases[-1] else floor
    return bound, why


# ------------------------------------------------------------------------- a round


def _simulate(part: PartitionDir, layout: Layout, first_dirty: int, bound: int, now: int,
              config: CleanerConfig, producers: dict[int, ProducerState],
              result: CompactResult, key: bytes | None, fates: bool,
              writer: Any = None) -> StrategyReport:
    findings = result.findings
    round_ = Round(_views(part, layout, findings), first_dirty, bound, config,
                   layout.log_start)
    report = StrategyReport(config.strategy, keys=len(round_.map),
                            map_full=round_.map.full, end=round_.end)
    track_order = not result.reports  # once: in the first strategy's pass
    last_ts: dict[bytes, int] = {}  # key -> the timestamp of its latest record so far
    sizes = dict(zip(layout.bases, layout.seg_bytes, strict=True))
    current = None
    for seg, o in round_.clean(_views(part, layout, findings), now, producers):
        if writer is not None:
            if seg is not current:
                current = seg
                writer.segment(seg, sizes[seg.base_offset],
                               round_.kept_index.setdefault(seg.base_offset, []))
            writer.outcome(o)
        _count(report, o)
        if fates:
            b, a = o.before, o.after
            report.batches.append(BatchFate(
                b.base_offset, b.last_offset, len(b.records),
                tuple(r.offset for r in a.records) if a is not None else (), o.why,
                b.control_type if b.control else None,
                None if a is None else a.delete_horizon))
        if key is not None:
            _key_view(result, str(config.strategy), key, o)
        if track_order:
            _watch_order(result, o.before, last_ts)
    # the segments past the round's end are left as they are
    for view in _views(part, layout, findings) if writer is not None else ():
        if view.base_offset >= round_.end:
            writer.segment(view, sizes[view.base_offset], view.aborted, cleaned=False)
            for b in view.batches:
                writer.append(b, kept_whole=True)
    for base, records, size in zip(layout.bases, layout.seg_records, layout.seg_bytes,
                                   strict=True):
        if base >= round_.end:
            report.records_before += records
            report.records_kept += records
            report.bytes_before += size
            report.bytes_kept += size
    return report


def _count(report: StrategyReport, o: BatchOutcome) -> None:
    b = o.before
    n = len(b.records)
    report.records_before += n
    kept = o.after.records if o.after is not None else ()
    report.records_kept += len(kept)
    size = b.size or _uncompressed_size(b)
    report.bytes_before += size
    if o.after is not None:
        report.bytes_kept += size if o.after is b else _rewritten_size(b, o.after)
        report.tombstones_kept += sum(1 for r in kept if r.value is None and not b.control)
        if o.why.endswith("horizon set"):
            report.horizons_set += 1
        if o.why.startswith("emptied"):
            report.batches_emptied += 1
            if o.why.startswith("emptied: aborted"):
                report.aborted_removed += n
    else:
        report.batches_deleted += 1
        if b.control:
            report.markers_removed += 1
        elif o.why == "deleted: aborted transaction":
            report.aborted_removed += n
    if not b.control and "aborted transaction" not in o.why:
        report.tombstones_removed += sum(1 for r in o.dropped if r.value is None)
        report.keyless_removed += sum(1 for r in o.dropped if r.key is None)


def _uncompressed_size(b: CBatch) -> int:
    """A batch's bytes without compression, as the writers build them."""
    if b.magic >= 2:
        return len(encode_batch(b, compression=0))
    return sum(len(build_message(r.offset, r.key, r.value, magic=b.magic,
                                 timestamp=r.timestamp)) for r in b.records)


def _rewritten_size(before: CBatch, after: CBatch) -> int:
    """The rewritten batch's bytes: exact for an uncompressed one, the kept share of the
    compressed bytes otherwise (the codec's output is not predicted)."""
    if not after.records:
        return 61
    estimate = _uncompressed_size(after)
    if before.compression and before.size:
        return max(61, round(before.size * estimate / max(_uncompressed_size(before), 1)))
    return estimate


def _key_view(result: CompactResult, strategy: str, key: bytes, o: BatchOutcome) -> None:
    if o.before.control:
        return
    dropped = set(id(r) for r in o.dropped)
    for r in o.before.records:
        if r.key != key:
            continue
        view = next((v for v in result.key_view if v.offset == r.offset), None)
        if view is None:
            view = KeyView(r.offset, r.timestamp, r.value, None)
            result.key_view.append(view)
        view.kept[strategy] = o.after is not None and id(r) not in dropped


def _watch_order(result: CompactResult, b: CBatch, last: dict[bytes, int]) -> None:
    """The KIP's two-producer case: a key written later (higher offset) with an older
    timestamp than its previous record.  One int per key: the memory is the map's."""
    if b.control:
        return
    for r in b.records:
        if r.key is None:
            continue
        d = digest(r.key)
        prev = last.get(d)
        if prev is not None and r.timestamp < prev:
            result.out_of_order += 1
            if len(result.out_of_order_samples) < 20:
                result.out_of_order_samples.append((r.key, prev, r.offset, r.timestamp))
        last[d] = r.timestamp


def _compare(part: PartitionDir, layout: Layout, first_dirty: int, bound: int,
             strategies: list[Strategy], result: CompactResult) -> None:
    """Keys whose winning record differs between strategies (over the dirty range)."""
    winners: dict[str, dict[bytes, tuple]] = {}
    # every winner's header value, when a strategy reads one: the report says why
    header_name = next((s.header for s in strategies if s.header), None)
    for strategy in strategies:
        best: dict[bytes, tuple] = {}
        for seg in _views(part, layout, result.findings):
            if seg.end is not None and seg.end <= first_dirty:
                continue
            if seg.base_offset >= bound:
                break
            for b in seg.batches:
                if b.control:
                    continue
                for r in b.records:
                    if r.key is None or r.offset < first_dirty or r.offset >= bound:
                        continue
                    order = sort_key(strategy, b, r)
                    old = best.get(r.key)
                    if old is None or order > old[0]:
                        header = header_long(r, header_name) if header_name else None
                        best[r.key] = (order, r.offset, r.timestamp, header)
        winners[str(strategy)] = best
    names = list(winners)
    first = winners[names[0]]
    for k in first:
        picks = {n: winners[n][k][1:] for n in names if k in winners[n]}
        if len({p[0] for p in picks.values()}) > 1:
            result.disagreements.append(Disagreement(k, picks, _why(picks)))


def _why(picks: dict[str, tuple[int, int, int | None]]) -> dict[str, str]:
    """Why each strategy's winner beats the latest record of its key, in words."""
    latest = max(p[0] for p in picks.values())
    last = next(p for p in picks.values() if p[0] == latest)
    out = {}
    for name, (offset, ts, header) in picks.items():
        if offset == latest:
            out[name] = "the latest record"
        elif name == "timestamp":
            out[name] = f"its timestamp is {ts - last[1]:,} ms newer than the latest record's"
        elif header is not None and last[2] is None:
            out[name] = "it has the header, the latest record has none"
        elif header is not None:
            out[name] = f"its header {header} is higher than the latest record's {last[2]}"
        else:
            out[name] = "an earlier record wins"
    return out

