"""``kmeta diff``: where replicas of the metadata log diverged, and what Kafka would do.

Two questions, answered separately because they can disagree:

* **By epochs** — what a follower's fetch loop would do (``kmeta.core.divergence``):
  truncate to an offset, only append, or fetch a snapshot.  This is Kafka's own answer
  (KIP-320, KIP-595, KIP-630).
* **By content** — replicas store the leader's batches byte for byte, so the batches
  that both hold at the same offsets are compared by xxhash of their bytes.  This also
  catches replicas that differ under equal epochs (corruption, bugs), which Kafka never
  notices.

Reading is one pass per replica.  While every replica's next segment has the same name
and the same bytes, one replica's copy is scanned (for the epochs the model needs) and
the others are compared as whole files; from the first segment that differs on, all
replicas are read batch by batch, in step.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import xxhash

from kmeta.core.divergence import Outcome, Reconciliation, reconcile
from kmeta.core.image import diff_images
from kmeta.core.log_rules import Layout
from kmeta.core.replica_log import ReplicaLog, SnapshotState, ValidKind
from kmeta.errors import KmetaError, UsageError
from kmeta.findings import Finding
from kmeta.formats.payload import decode_control, decode_metadata
from kmeta.formats.runs import Run
from kmeta.ops.replay import build_image, no_metadata_log
from kmeta.ops.replica import LogStats, ReplicaDir, build_model, node_and_cluster, refuse_unrelated
from kmeta.storage.discover import (
    Discovery,
    LogFile,
    PartitionDir,
    discover,
    segments_from,
)
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.segments import read_batches, read_records, same_bytes

__all__ = ["DiffReport", "PairDiff", "Replica", "SideOnly", "diff_replicas", "open_replica",
           "read_replicas", "records_from"]

_hash = xxhash.xxh3_64_intdigest


@dataclass
class Replica:
    """One replica's metadata log as diff read it."""

    label: str  # the path the user gave
    part: PartitionDir
    node_id: int | None = None
    cluster_id: str | None = None
    stats: LogStats = field(default_factory=LogStats)
    findings: list[Finding] = field(default_factory=list)
    model: ReplicaLog | None = None
    notes: list[str] = field(default_factory=list)
    #: hears of the reads of this replica's files
    progress: Progress = field(default=QUIET, repr=False, compare=False)

    @property
    def path(self) -> str:
        return str(self.part.path)

    @property
    def log_start(self) -> int:
        return self.model.log_start_offset if self.model else 0

    @property
    def log_end(self) -> int:
        return self.model.log_end_offset if self.model else 0

    @property
    def latest_epoch(self) -> int | None:
        return self.model.latest_epoch if self.model else None

    def summary(self) -> dict[str, Any]:
        m = self.model
        return {"path": self.label, "partition_dir": self.path, "node_id": self.node_id,
                "cluster_id": self.cluster_id, "log_start_offset": self.log_start,
                "log_end_offset": self.log_end, "latest_epoch": self.latest_epoch,
                "batches": self.stats.batches, "records": self.stats.records,
                "snapshot_ids": [f"{s.file_stem}" for s, st in (m.snapshots if m else {}).items()
                              if st is SnapshotState.LIVE],
                "finding_count": len(self.findings), "notes": self.notes}


#: differing batches remembered per pair (all of them are counted)
KEEP_DIFFERING = 1000


@dataclass
class Split:
    """Where two replicas hold different bytes: the first offset, and every batch both
    hold at the same offsets that differs (counted; the first KEEP_DIFFERING kept)."""

    offset: int
    epochs: tuple[int | None, int | None]
    places: tuple[str, str]  # "file@position" on each side
    batches: int = 1
    ranges: list[tuple[int, int]] = field(default_factory=list)  # (base, last) per batch


@dataclass
class SideOnly:
    """The records one replica holds beyond the point where the other stops agreeing."""

    from_offset: int
    batches: int = 0
    records: int = 0
    by_type: Counter = field(default_factory=Counter)
    first: int | None = None
    last: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"from_offset": self.from_offset, "batches": self.batches,
                "records": self.records,
                "by_type": dict(sorted(self.by_type.items())), "first_offset": self.first,
                "last_offset": self.last}


@dataclass
class PairDiff:
    """LOCAL against one PEER."""

    local: Replica
    peer: Replica
    content_split: Split | None
    #: the local replica following the peer, and the other way round
    local_follows: Reconciliation
    peer_follows: Reconciliation
    #: identical (same offsets, same bytes) | equivalent (the same log end and content
    #: where both hold it; one log starts later, a snapshot standing in for the rest) |
    #: lagging (one log is a strict prefix of the other) | diverged
    status: str = "identical"
    divergence_offset: int | None = None
    divergence_epoch: int | None = None
    lagging: str | None = None  # label of the replica whose log is a strict prefix
    lag_offsets: int = 0
    only_local: SideOnly | None = None
    only_peer: SideOnly | None = None
    image_diff: dict[str, list[str]] = field(default_factory=dict)
    kafka: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        s = self.content_split
        return {
            "local": self.local.label, "peer": self.peer.label, "status": self.status,
            "diverged": self.status == "diverged",
            "divergence_offset": self.divergence_offset,
            "divergence_epoch": self.divergence_epoch,
            "content_divergence": None if s is None else {
                "offset": s.offset, "local_epoch": s.epochs[0], "peer_epoch": s.epochs[1],
                "local_batch": s.places[0], "peer_batch": s.places[1]},
            "epoch_truncation": {
                "local_follows_peer": _reconciliation_json(self.local_follows),
                "peer_follows_local": _reconciliation_json(self.peer_follows)},
            "lagging": self.lagging, "lag_offsets": self.lag_offsets,
            "only_local": self.only_local.to_json() if self.only_local else None,
            "only_peer": self.only_peer.to_json() if self.only_peer else None,
            "image_diff": self.image_diff, "kafka": self.kafka, "notes": self.notes,
        }


def divergence_finding(p: PairDiff) -> Finding:
    """V160 for a diverged pair: where, and the command that shows what Kafka drops."""
    # where is the finding's place (LOCAL's partition, the offset); the message names PEER
    epoch = "" if p.divergence_epoch is None else f" (epoch {p.divergence_epoch})"
    return Finding("V160", f"the replica diverged from {p.peer.label}{epoch}",
                   p.local.path, offset=p.divergence_offset)


def _reconciliation_json(r: Reconciliation) -> dict[str, Any]:
    return {"outcome": r.outcome.value, "truncate_to": r.truncate_to,
            "snapshot": r.snapshot.file_stem if r.snapshot else None,
            "steps": [str(s) for s in r.steps], "reason": r.reason}


@dataclass
class DiffReport:
    replicas: list[Replica]
    pairs: list[PairDiff]
    majority: dict[str, Any] | None = None

    @property
    def diverged(self) -> bool:
        return any(p.status == "diverged" for p in self.pairs)

    @property
    def findings(self) -> list[Finding]:
        """What reading each replica met, then each divergence (V160): the answer is a
        finding like every other, so the exit code is the worst finding's."""
        read = [f for r in self.replicas for f in r.findings]
        return read + [divergence_finding(p) for p in self.pairs if p.status == "diverged"]

    def to_json(self) -> dict[str, Any]:
        # the earliest divergence over every pair (with 3+ replicas, not the first given)
        first = min((p for p in self.pairs if p.status == "diverged"),
                    key=lambda p: p.divergence_offset if p.divergence_offset is not None
                    else float("inf"), default=None)
        lagging = sorted({p.lagging for p in self.pairs if p.lagging})
        return {
            "kind": "diff",
            "diverged": self.diverged,
            "divergence_offset": first.divergence_offset if first else None,
            "divergence_epoch": first.divergence_epoch if first else None,
            "lagging_replicas": lagging or None,
            "replicas": [r.summary() for r in self.replicas],
            "pairs": [p.to_json() for p in self.pairs],
            "majority": self.majority,
        }


# ----------------------------------------------------------------------- reading


def open_replica(label: str, progress: Progress = QUIET) -> Replica:
    found: Discovery = discover([label], progress=progress)
    parts = [p for p in found.all_partitions() if p.is_metadata]
    if not parts:
        raise no_metadata_log(found)
    if len(parts) > 1:
        raise UsageError(f"{label}: {len(parts)} __cluster_metadata partitions found",
                         hint="give one data dir or __cluster_metadata-0 directory per "
                         "replica")
    rep = Replica(label, parts[0], progress=progress)
    rep.node_id, rep.cluster_id = node_and_cluster(found, parts[0].path)
    return rep


class _Layout:
    """What diff reads of one replica's batches: the runs of the replica model (as verify
    lays them out) and the counts verify keeps."""

    def __init__(self, stats: LogStats) -> None:
        self.stats = stats
        self.runs = Layout(stats.layout)

    def segment(self, base: int) -> None:
        self.runs.segment(base)
        self.stats.segments += 1

    def batch(self, base: int, last: int, epoch: int, records: int, batches: int = 1) -> None:
        """``batches`` batches of one epoch, back to back, from ``base`` to ``last``."""
        self.runs.batch(base, last, epoch)
        st = self.stats
        st.batches += batches
        st.records += records
        if st.first_offset is None:
            st.first_offset = base
        st.last_offset = last


def _batches(seg: LogFile, layout: _Layout, findings: list[Finding], progress: Progress, *,
             hashed: bool = True) -> Iterator[tuple[int, int, int, int, int]]:
    """(base, last, epoch, hash, position) of every batch of a segment; without
    ``hashed`` only the layout is kept (a segment compared as a whole file needs no
    hashes), and the batches that repeat one before them are taken as one run."""
    layout.segment(seg.kind.base_offset)
    for b in read_batches(seg.path, findings, memo=not hashed, runs=not hashed,
                          progress=progress):
        if type(b) is Run:
            ref = b.ref
            layout.batch(b.first_base, b.last_offset, ref.leader_epoch,
                         b.count * ref.records_count, b.count)
            continue
        epoch = b.leader_epoch if b.magic == 2 else -1
        last = b.last_offset
        records = b.records_count if b.magic == 2 else b.message_count
        layout.batch(b.base_offset, last, epoch, records)
        yield b.base_offset, last, epoch, _hash(b.raw) if hashed else 0, b.position


def _read_all(reps: list[Replica]) -> dict[tuple[int, int], Split]:
    """Read every replica once; the first split of content for each pair."""
    layouts = [_Layout(r.stats) for r in reps]
    segs = [r.part.segments for r in reps]
    k = 0
    # Fast path: the k-th segment of every replica has one name and the same bytes.
    while all(len(s) > k for s in segs) and \
            len({s[k].path.name for s in segs}) == 1 and \
            same_bytes([s[k].path for s in segs]):
        lead_path = str(segs[0][k].path)
        before = len(reps[0].findings)
        for _ in _batches(segs[0][k], layouts[0], reps[0].findings, reps[0].progress,
                          hashed=False):
            pass
        runs = reps[0].stats.layout[-1][1]
        for r, s in zip(reps[1:], segs[1:], strict=True):
            # the same bytes: the same batches, runs and findings (under its own name)
            st, src = r.stats, reps[0].stats
            st.layout.append((s[k].kind.base_offset, [list(x) for x in runs]))
            st.segments += 1
            st.batches, st.records = src.batches, src.records
            st.first_offset, st.last_offset = src.first_offset, src.last_offset
            r.findings += [replace(f, file=str(s[k].path)) if f.file == lead_path else f
                           for f in reps[0].findings[before:]]
            with contextlib.suppress(OSError):  # read whole by the comparison
                r.progress.read(str(s[k].path), s[k].path.stat().st_size)
        k += 1
    return _in_step(reps, layouts, [s[k:] for s in segs])


def read_replicas(reps: list[Replica]) -> dict[tuple[int, int], Split]:
    """Read each replica once (building its model) and find where each pair's bytes
    first differ."""
    splits = _read_all(reps)
    for r in reps:
        r.model, observed, problems = build_model(r.part, r.stats)
        r.findings += problems
        if any(o.code == "NO_SEGMENTS" for o in observed):
            r.notes.append("no log segment: the log itself is missing (kmeta verify: V020)")
        end = r.model.log_end_offset
        # KafkaMetadataLog's start-up step: a latest snapshot ahead of the log (a
        # follower that crashed after fetching it, or a log that was lost) replaces it.
        if r.model.truncate_to_latest_snapshot():
            r.notes.append(f"as Kafka loads it, the log (end {end}) is dropped for the "
                           f"latest snapshot {r.model.latest_snapshot.file_stem}, which is "
                           "ahead of it")
    return {pair: split for pair, split in splits.items()
            if split.offset >= max(reps[pair[0]].log_start, reps[pair[1]].log_start)}


def _stream(rep: Replica, layout: _Layout, segs: list[LogFile]
            ) -> Iterator[tuple[int, int, int, int, str]]:
    for seg in segs:
        for base, last, epoch, h, pos in _batches(seg, layout, rep.findings, rep.progress):
            yield base, last, epoch, h, f"{seg.path.name}@{pos}"


def _in_step(reps: list[Replica], layouts: list[_Layout], segs: list[list[LogFile]]
             ) -> dict[tuple[int, int], Split]:
    n = len(reps)
    streams = [_stream(r, lay, s) for r, lay, s in zip(reps, layouts, segs, strict=True)]
    heads: list[Any] = [next(s, None) for s in streams]
    splits: dict[tuple[int, int], Split] = {}
    pairs = list(itertools.combinations(range(n), 2))
    if n == 2:
        # the common case, in a tight loop: equal offsets and equal hashes move on
        a, b = streams
        ha, hb = heads
        while ha is not None and hb is not None and ha[:4] == hb[:4]:
            ha, hb = next(a, None), next(b, None)
        heads = [ha, hb]
    while any(h is not None for h in heads):
        at = min(h[0] for h in heads if h is not None)
        here = [i for i, h in enumerate(heads) if h is not None and h[0] == at]
        reach = max(heads[i][1] for i in here)
        for i, j in pairs:
            hi, hj = heads[i], heads[j]
            if hi is None or hj is None:
                continue
            in_i, in_j = i in here, j in here
            if not (in_i and in_j and hi[1:4] != hj[1:4]) and \
                    not (in_i != in_j and (hj if in_i else hi)[0] <= reach):
                continue
            split = splits.get((i, j))
            if split is None:
                split = splits[(i, j)] = Split(
                    at, (hi[2] if in_i else None, hj[2] if in_j else None),
                    (hi[4] if in_i else "-", hj[4] if in_j else "-"), 0)
            split.batches += 1
            if len(split.ranges) < KEEP_DIFFERING:
                split.ranges.append((at, reach))
        for i in here:
            heads[i] = next(streams[i], None)
    for s in streams:  # drain (findings and layouts of the rest)
        for _ in s:
            pass
    return splits


# ----------------------------------------------------------------------- comparing


def _up_to_date_key(r: Replica) -> tuple[int, int]:
    """KRaft grants its vote to a candidate whose log is at least as up to date: a
    higher last epoch, or the same one and an end offset at least as high."""
    return (r.latest_epoch if r.latest_epoch is not None else -1, r.log_end)


def _follow(follower: Replica, leader: Replica) -> Reconciliation:
    """What Kafka would do to ``follower`` fetching from ``leader``; a simulation that
    cannot go on is an undetermined outcome (it says why), never a refusal to compare."""
    assert follower.model is not None and leader.model is not None
    return reconcile(follower.model, leader.model)


def records_from(rep: Replica, start: int,
                 ranges: list[tuple[int, int]] | None = None) -> SideOnly:
    """Records of ``rep`` at or after ``start`` (only inside ``ranges`` when given), by
    type (control records by theirs)."""
    out = SideOnly(start)
    wanted = sorted(ranges) if ranges is not None else None
    stop = wanted[-1][1] if wanted else None
    if start >= rep.log_end:
        return out
    for seg in segments_from(rep.part.segments, start):
        seen = -1
        # What cannot be read was reported by the reading pass already.
        for batch, r, payload in read_records(seg.path, decode_metadata, decode_control, []):
            if r.offset < start:
                continue
            if wanted is not None:
                if stop is None or r.offset > stop:
                    return out
                if not _inside(wanted, r.offset):
                    continue
            if batch.position != seen:
                seen = batch.position
                out.batches += 1
            out.records += 1
            out.by_type[payload.type] += 1
            out.first = r.offset if out.first is None else out.first
            out.last = r.offset
    return out


def _inside(ranges: list[tuple[int, int]], offset: int) -> bool:
    i = bisect.bisect_right(ranges, (offset, float("inf"))) - 1
    return i >= 0 and ranges[i][0] <= offset <= ranges[i][1]


def _image_diff(a: Replica, at_a: int, b: Replica, at_b: int) -> list[str] | None:
    """The difference between the image of ``a`` at ``at_a`` and ``b`` at ``at_b``, or
    None when one of them cannot be built (no snapshot covers it, say)."""
    try:
        ia = build_image(a.path, at=at_a).image
        ib = build_image(b.path, at=at_b).image
    except KmetaError:
        return None
    return diff_images(ia, ib)


def _compare(local: Replica, peer: Replica, split: Split | None, images: bool) -> PairDiff:
    local_follows, peer_follows = _follow(local, peer), _follow(peer, local)
    pd = PairDiff(local, peer, split, local_follows, peer_follows)
    # Ties go to LOCAL, the user's reference: neither replica would truncate then.
    leader, follower = (peer, local) if _up_to_date_key(peer) > _up_to_date_key(local) \
        else (local, peer)
    rec = local_follows if follower is local else peer_follows
    by_epoch = rec.truncate_to if rec.outcome in (Outcome.TRUNCATE,
                                                 Outcome.BELOW_HIGH_WATERMARK) else None
    candidates = [x for x in (by_epoch, split.offset if split else None) if x is not None]
    if candidates:
        pd.status = "diverged"
        at = pd.divergence_offset = min(candidates)
        if by_epoch == at:
            # the epochs explain it: the diverging epoch the leader answered last, the
            # last one the replicas share; everything after it differs
            pd.divergence_epoch = next(s.answer_offset_and_epoch.epoch
                                       for s in reversed(rec.steps)
                                       if s.answer is ValidKind.DIVERGING)
            pd.only_local, pd.only_peer = records_from(local, at), records_from(peer, at)
        else:
            # the bytes differ under the same epochs: only the differing batches
            assert split is not None
            pd.divergence_epoch = split.epochs[0] if split.epochs[0] == split.epochs[1] \
                else follower.model.epoch_cache.epoch_for_offset(at - 1) \
                if follower.model is not None and at > 0 else None
            pd.only_local = records_from(local, at, split.ranges)
            pd.only_peer = records_from(peer, at, split.ranges)
    elif local.log_end != peer.log_end:
        shorter, longer = (local, peer) if local.log_end < peer.log_end else (peer, local)
        pd.status = "lagging"
        pd.lagging = shorter.label
        pd.lag_offsets = longer.log_end - shorter.log_end
        only = records_from(longer, max(shorter.log_end, longer.log_start))
        if longer is local:
            pd.only_local = only
        else:
            pd.only_peer = only
    elif local.log_start != peer.log_start:
        pd.status = "equivalent"
    if local.log_start != peer.log_start or local.log_start > 0:
        _compare_log_starts(pd, local, peer)
    pd.kafka = _kafka_says(pd, leader, follower, rec)
    if images and pd.status != "identical":
        ends = _image_diff(local, local.log_end, peer, peer.log_end)
        if ends is None:
            pd.notes.append("no image of both log ends could be built")
        else:
            pd.image_diff["at_ends"] = ends
        if pd.divergence_offset is not None:
            common = _image_diff(local, pd.divergence_offset, peer, pd.divergence_offset)
            if common is not None:
                pd.image_diff["at_divergence"] = common
    return pd


def _compare_log_starts(pd: PairDiff, local: Replica, peer: Replica) -> None:
    """Where one replica holds only a snapshot for a range the other holds as log, the
    snapshot's image stands in for the batches: it must equal the other's replay."""
    later = local if local.log_start > peer.log_start else peer
    other = peer if later is local else local
    # The image of the later replica can be built at its snapshots (its log may start
    # below its first one: Kafka reopens the log at the first segment's base offset).
    snaps = sorted(s.offset for s in (later.model.snapshots if later.model else {})
                   if later.log_start <= s.offset <= other.log_end)
    at = snaps[0] if snaps else later.log_start
    if later.log_start != other.log_start:
        pd.notes.append(f"{later.label} starts its log at {later.log_start}, {other.label} "
                        f"at {other.log_start}: compared by image at offset {at}, by bytes "
                        "where both hold batches")
    if at > other.log_end:
        pd.notes.append(f"{other.label} ends at {other.log_end}, before {at}: nothing "
                        "to compare there")
        return
    found = _image_diff(later, at, other, at)
    if found is None:
        pd.notes.append(f"no image of both replicas at offset {at} could be built")
        return
    pd.image_diff["at_log_start"] = found
    if found and pd.status != "diverged":
        pd.status = "diverged"
        pd.divergence_offset = at
        pd.notes.append(f"the images at offset {at} differ: the replicas diverged at or "
                        f"before {at} (the batches below it are only on {other.label})")


def _kafka_says(pd: PairDiff, leader: Replica, follower: Replica,
                rec: Reconciliation) -> list[str]:
    epoch = "no epoch" if leader.latest_epoch is None else f"epoch {leader.latest_epoch}"
    lead = f"{leader.label} has the more up-to-date log ({epoch}, " \
        f"end {leader.log_end}): it wins an election between the two"
    if pd.status == "identical":
        return ["nothing: the logs are the same"]
    if pd.status == "equivalent":
        return ["nothing: the logs end alike and agree where both hold records"]
    out = [lead]
    if rec.outcome is Outcome.SNAPSHOT:
        out.append(f"{follower.label} {_why_snapshot(rec, leader)}: it fetches "
                   f"snapshot {rec.snapshot.file_stem if rec.snapshot else '?'} "
                   "(KIP-630), then the log after it")
    elif rec.outcome is Outcome.UNDETERMINED:
        out.append(f"kmeta cannot tell what {follower.label} does when it fetches from "
                   f"{leader.label}: {rec.reason}")
    elif rec.outcome is Outcome.BELOW_HIGH_WATERMARK:
        out.append(f"{follower.label} would have to truncate to {rec.truncate_to}, below "
                   f"its own snapshot at {rec.high_watermark_floor}: Kafka refuses "
                   "(committed data differs); restore it from a good replica")
    elif rec.outcome is Outcome.TRUNCATE:
        out.append(f"{follower.label} truncates to offset {rec.truncate_to}, then fetches "
                   f"from {rec.truncate_to}")
    else:
        out.append(f"{follower.label} appends from offset {follower.log_end}; nothing "
                   "is truncated")
    if pd.content_split is not None and (rec.truncate_to is None
                                         or pd.content_split.offset < rec.truncate_to):
        out.append(f"but the bytes already differ at offset {pd.content_split.offset}, "
                   "under the same epochs: Kafka will not notice this; one replica is "
                   "damaged")
    return out


def _why_snapshot(rec: Reconciliation, leader: Replica) -> str:
    """Why the leader answered the last fetch with a snapshot (validateOffsetAndEpoch):
    the fetch offset is below its log start, or the fetch's last epoch is older than its
    earliest snapshot."""
    step = rec.steps[-1]
    if step.fetch_offset < leader.log_start:
        return f"ends at {step.fetch_offset}, below the leader's log start {leader.log_start}"
    earliest = leader.model.earliest_snapshot if leader.model is not None else None
    epoch = "?" if earliest is None else earliest.epoch
    return (f"ends at {step.fetch_offset} in epoch {step.last_fetched_epoch}, older than the "
            f"epoch of the leader's earliest snapshot ({epoch})")


def _majority(reps: list[Replica], splits: dict[tuple[int, int], Split]) -> dict[str, Any]:
    """The longest prefix a majority holds byte for byte, and who holds more."""
    n = len(reps)
    need = n // 2 + 1

    def agree(i: int, j: int) -> int:
        if i == j:
            return reps[i].log_end
        s = splits.get((min(i, j), max(i, j)))
        end = min(reps[i].log_end, reps[j].log_end)
        return end if s is None else min(end, s.offset)

    best, members = 0, []
    for i in range(n):
        ends = sorted((agree(i, j) for j in range(n)), reverse=True)
        if ends[need - 1] > best:
            best = ends[need - 1]
            members = [reps[j].label for j in range(n) if agree(i, j) >= best]
    beyond = {r.label: r.log_end - best for r in reps if r.log_end > best}
    return {"prefix_end": best, "held_by": members, "beyond": beyond,
            "majority_of": need}


def diff_replicas(paths: list[str], *, images: bool = True,
                  progress: Progress = QUIET) -> DiffReport:
    """Compare the first replica (LOCAL) with each of the others; ``progress`` hears of
    the reading."""
    if len(paths) < 2:
        raise UsageError("diff needs two replicas or more", hint="kmeta diff LOCAL PEER")
    reps = [open_replica(p, progress) for p in paths]
    refuse_unrelated([ReplicaDir(r.label, r.path, r.cluster_id) for r in reps],
                     hint="diff compares replicas of one metadata log")
    splits = read_replicas(reps)
    pairs = [_compare(reps[0], reps[j], splits.get((0, j)), images)
             for j in range(1, len(reps))]
    report = DiffReport(reps, pairs)
    if len(reps) >= 3:
        report.majority = _majority(reps, splits)
    return report
