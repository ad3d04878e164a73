"""``kmeta startup`` for people (a verdict first, then per log dir, per topic, the
largest costs, and with ``--partitions`` every partition) and for scripts (JSON Lines: a
``startup_dir`` per log dir, a ``startup_partition`` per partition dir, the findings, then
the ``startup_summary``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from kmeta.findings import Severity, finding_counts
from kmeta.ops.startup import LogDirStartup, PartitionStartup, StartupReport
from kmeta.render.jsonl import dumps
from kmeta.render.retention import size
from kmeta.render.text import Paths

#: Topics, and logs among the largest costs, the default text lists (``--all``: every
#: one): with the verdict and the log dirs, a broker of thousands of logs in two screens.
SHOWN = 10
SHOWN_COSTS = 4


def _ms(seconds: float) -> int:
    return int(round(seconds * 1000))


def _duration(seconds: float) -> str:
    if seconds < 1:
        return "under 1 s" if seconds > 0 else "no time"
    if seconds < 120:
        return f"about {seconds:.0f} s"
    if seconds < 7200:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.1f} h"


def _rate(bps: float) -> str:
    """A rate in decimal units, as disks are sold and --recovery-rate is given."""
    for unit, scale in (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if bps >= scale:
            return f"{bps / scale:g} {unit}"
    return f"{bps:g} B/s"


def _fate(f: Any) -> dict[str, Any]:
    return {"file": f.file, "fate": f.fate, "why": f.why}


def _checkpoint(c: Any) -> dict[str, Any]:
    return {"name": c.name, "state": c.state, "entries": c.entries, "problem": c.problem}


def dir_object(d: LogDirStartup, rate: float) -> dict[str, Any]:
    return {"kind": "startup_dir", "path": str(d.path), "clean_shutdown": d.clean_shutdown,
            "broker_epoch": d.broker_epoch,
            "recovery_checkpoint": _checkpoint(d.recovery_checkpoint),
            "log_start_checkpoint": _checkpoint(d.log_start_checkpoint),
            "recovery_threads": d.threads, "partitions": len(d.partitions),
            "refused_dirs": list(d.refused), "metadata_log": d.metadata_log,
            "offline": d.offline, "bytes_to_read": d.cost_bytes,
            "estimate_ms": _ms(d.seconds(rate))}


def _entries(entries: list[tuple[int, int]]) -> list[dict[str, int]]:
    return [{"epoch": e, "start_offset": o} for e, o in entries]


def _epoch_cache(p: PartitionStartup) -> dict[str, Any] | None:
    ec = p.epoch_cache
    if ec is None:
        return None
    return {"source": ec.source, "cleared": ec.cleared, "before": _entries(ec.before),
            "after": _entries(ec.after), "removed_entries": _entries(ec.removed),
            "added_entries": _entries(ec.added)}


def _backwards(w: Any) -> dict[str, int] | None:
    if w.backwards is None:
        return None
    pos, offset, expected = w.backwards
    return {"position": pos, "offset": offset, "expected_offset": expected}


def partition_object(p: PartitionStartup, before_loading: bool = False) -> dict[str, Any]:
    """One partition dir; ``before_loading``: the broker refuses to start before it loads
    any log, so its fate is what happens once it starts."""
    fate = p.fate if not before_loading else \
        f"not loaded: Kafka refuses to start before loading logs (once it starts: {p.fate})"
    return {
        "kind": "startup_partition", "path": str(p.path), "log_dir": str(p.log_dir),
        "topic": p.topic, "partition": p.partition, "state": p.state,
        "topic_id": p.topic_id, "segments": p.segments, "bytes": p.bytes,
        "recovery_point_offset": p.recovery_point,
        "log_start_checkpoint_offset": p.log_start_checkpoint,
        "recover": [{"file": w.file, "base_offset": w.base_offset, "bytes": w.bytes,
                     "batches": w.batches, "why": w.why,
                     "truncate_position": w.truncated_at, "cut_code": w.cut_code,
                     "removed_bytes": w.removed_bytes, "backwards": _backwards(w)}
                    for w in p.recover],
        "deleted_segment_files": list(p.deleted_segments),
        "index_rebuilds": [_fate(f) for f in p.index_rebuilds],
        "leftovers": [_fate(f) for f in p.leftovers],
        "producer_state": p.producer_state, "producer_bytes": p.producer_bytes,
        "all_deleted": p.all_deleted, "log_start_offset": p.log_start_offset,
        "log_end_offset": p.log_end_offset, "fate": fate,
        "bytes_to_read": p.cost_bytes, "lost_bytes": p.lost_bytes,
        "splits": [{"file": sp.file, "base_offset": sp.base_offset, "bytes": sp.bytes,
                    "overflow_offset": sp.overflow_offset,
                    "pieces": [{"file": f, "base_offset": b, "bytes": n, "batches": k}
                               for f, b, n, k in sp.pieces],
                    "failure": sp.failure} for sp in p.splits],
        "load_failure": p.load_failure, "load_offline": p.offline,
        "remote_storage": p.remote_storage,
        "log_start_rule": p.log_start_rule, "first_local_offset": p.first_local_offset,
        "epoch_cache_load": _epoch_cache(p),
        "high_watermark_checkpoint_offset": p.high_watermark,
        "offsets_not_loaded": _not_loaded(p),
    }


def _not_loaded(p: PartitionStartup) -> dict[str, Any] | None:
    """The offsets the checkpoints name past the loaded log end (V212, V213)."""
    committed, flushed = p.committed_missing, p.flushed_missing
    if not committed and not flushed:
        return None
    return {"from_offset": (committed or flushed).start,
            "committed_to_offset": committed.stop - 1 if committed else None,
            "flushed_to_offset": flushed.stop - 1 if flushed else None,
            "committed_offsets": len(committed), "flushed_offsets": len(flushed),
            "cause": p.missing_cause}


def summary_object(r: StartupReport) -> dict[str, Any]:
    parts = r.partitions
    return {
        "kind": "startup_summary", "kafka_version": r.kafka_version,
        "kafka_version_from": r.kafka_version_from, "node_id": r.node_id,
        "log_dirs": [str(d.path) for d in r.dirs], "data_dirs": len(r.dirs), "partitions": len(parts),
        "segments": sum(p.segments for p in parts), "bytes": sum(p.bytes for p in parts),
        "partitions_to_recover": sum(1 for p in parts if p.recover),
        "bytes_to_read": r.cost_bytes, "recovery_threads": r.threads,
        "recovery_threads_from": r.threads_from, "recovery_rate": r.recovery_rate,
        "recovery_rate_from": r.recovery_rate_from, "estimate_ms": _ms(r.seconds),
        "refuses": bool(r.refusals), "refusals": list(r.refusals),
        "refuses_before_loading": r.refuses_before_loading,
        "loses_data": r.loses_data, "lost_bytes": sum(p.lost_bytes for p in parts),
        "logs_missing_committed": sum(1 for p in parts if p.committed_missing),
        "committed_offsets_missing": sum(len(p.committed_missing) for p in parts),
        "logs_missing_flushed": sum(1 for p in parts
                                    if p.flushed_missing and not p.committed_missing),
        "segments_split": sum(len(p.splits) for p in parts if p.load_failure is None),
        "epoch_cache_changes": sum(1 for p in parts
                                   if p.epoch_cache is not None and p.epoch_cache.changes),
        "broker_epoch": r.broker_epoch, "stray_judged": r.placement_judged,
        "notes": list(r.notes), "finding_counts": finding_counts(r.findings),
        "metadata_log_startup": metadata_log_object(r),
    }


def metadata_log_object(r: StartupReport) -> dict[str, Any] | None:
    m = r.metadata_log
    if m is None:
        return None
    load = m.load
    cut = next((w for w in load.recover if w.truncated_at is not None), None)
    first, last = m.lost_offsets or (None, None)
    return {
        "path": str(m.path), "segments": load.segments, "bytes": load.bytes,
        "bytes_to_read": m.bytes_to_read, "estimate_ms": _ms(r.metadata_seconds),
        "log_start_offset": m.log_start_offset, "log_end_offset": m.log_end_offset,
        "latest_epoch": m.latest_epoch,
        "recovery_cut": None if cut is None else {
            "file": cut.file, "position": cut.truncated_at, "code": cut.cut_code,
            "reason": cut.cut_reason, "removed_bytes": cut.removed_bytes},
        "deleted_segment_files": list(load.deleted_segments),
        "truncated_to_snapshot": m.truncated_to_snapshot,
        "records_dropped": m.records_dropped, "records_lost": m.records_lost,
        "lost_first_offset": first, "lost_last_offset": last,
        "snapshot_fates": [{"file": s.file, "end_offset": s.end_offset, "epoch": s.epoch,
                       "fate": s.fate, "why": s.why} for s in m.snapshots],
        "refusal": m.refusal,
    }


def startup_json(r: StartupReport) -> Iterator[str]:
    """Every object, findings before the summary (DESIGN.md, "One language")."""
    for d in r.dirs:
        yield dumps(dir_object(d, r.recovery_rate))
    for p in r.partitions:
        yield dumps(partition_object(p, r.refuses_before_loading))
    for o in r.placement_objects:
        yield dumps(o)
    for f in r.findings:
        yield dumps(f.to_json())
    yield dumps(summary_object(r))


# ---------------------------------------------------------------------------- text

def _n(k: int, one: str, many: str | None = None) -> str:
    return f"{k:,} {one if k == 1 else many or one + 's'}"


def _refusal(line: str, paths: Paths) -> str:
    """A refusal ("PATH: why") with its path relative to what the user typed: a long
    absolute path is a line no terminal width folds."""
    where, sep, why = line.partition(": ")
    return f"{paths.show(where)}{sep}{why}" if sep and where.startswith("/") else line


def _verdict(r: StartupReport, paths: Paths) -> Iterator[str]:
    parts = r.partitions
    later = r.refuses_before_loading
    if r.refusals:
        yield (f"Kafka {r.kafka_version} REFUSES TO START on these log dirs"
               + (", before it loads any log:" if later else ":"))
        for line in r.refusals[:SHOWN]:
            yield f"  {_refusal(line, paths)}"
        if len(r.refusals) > SHOWN:
            yield f"  ... and {len(r.refusals) - SHOWN} more (the findings list them)"
    lost = [p for p in parts if p.lost_bytes or p.all_deleted]
    if later:
        # nothing loads: what follows is what loading costs once the cause is fixed
        yield ("Nothing loads: no log is recovered or changed on this start. Once the "
               "broker starts, it loads what follows.")
    if lost:
        yield (("Once it starts, Kafka LOSES DATA: recovery would remove " if later else
                "Kafka LOSES DATA: recovery removes ")
               + f"{size(sum(p.lost_bytes for p in lost))} of records in "
               f"{_n(len(lost), 'log')} (largest first below).")
    m = r.metadata_log
    if m is not None and m.missing is not None:
        gap = m.missing.missing
        yield (("Once it starts, the" if later else "The")
               + f" node comes back WITHOUT METADATA OFFSETS {gap.start}..{gap.stop - 1} "
               f"its own leader-epoch-checkpoint names (epochs "
               f"{', '.join(map(str, m.missing.epochs))}: a stale copy or a cut tail, V235).")
    if m is not None and m.records_lost:
        yield (("Once it starts, the" if later else "The")
               + " node LOSES METADATA RECORDS: its metadata log comes back without "
               f"{_n(m.records_lost, 'record')}{_span(m.lost_offsets)} (V237).")
    elif m is not None and m.lost_bytes and m.missing is None:
        yield (("Once it starts, recovery" if later else "Recovery")
               + f" cuts {size(m.lost_bytes)} from the metadata log: a torn or "
               "damaged batch, no intact record.")
    missing = [f for f in r.findings if f.code == "V190"]
    if missing:  # the image's side: replicas it leads empty, whose records are not here
        yield (f"Kafka LOSES DATA the image expects here: {_n(len(missing), 'replica')} "
               "missing on disk with records and no other in-sync replica (V190).")
    committed = [p for p in parts if p.committed_missing]
    if committed:
        n = sum(len(p.committed_missing) for p in committed)
        yield (f"Kafka LOSES COMMITTED RECORDS: {_n(n, 'offset')} below the high watermarks "
               f"of {_n(len(committed), 'log')} are not in the logs it loads; it starts "
               "them from what is there (V212).")
    flushed = [p for p in parts if p.flushed_missing and not p.committed_missing]
    gone = lost or (m is not None and (m.loses_records or m.lost_bytes))
    who = "broker" if parts else "node"
    if not gone and not missing and not committed and not r.refusals:
        if flushed:
            n = sum(len(p.flushed_missing) for p in flushed)
            yield (f"The {who} comes back with every committed record, but not with "
                   f"{_n(n, 'offset')} flushed once in {_n(len(flushed), 'log')} (V213); "
                   "recovery removes nothing.")
        else:
            yield f"The {who} comes back with every record: recovery removes nothing."
    elif not gone and not r.refusals:
        yield "Recovery itself removes nothing."
    for d in r.dirs:
        if d.offline:
            yield (f"A LOG DIR GOES OFFLINE once the broker runs, its "
                   f"{_n(len(d.partitions), 'log')} not served: {d.path} (see the "
                   "findings).")
    recovering = [p for p in parts if p.recover]
    meta = f" (the metadata log's {size(r.metadata_bytes)} first)" if r.metadata_bytes else ""
    yield (("Re-read once it starts: " if later else "Re-read on start: ")
           + f"{size(r.cost_bytes)}{meta}, {_n(len(recovering), 'log')} to "
           f"recover: {_duration(r.seconds)}.")
    yield f"  {_n(r.threads, 'thread')} per log dir: {r.threads_from}"
    yield f"  {_rate(r.recovery_rate)} per thread: {r.recovery_rate_from}"


def _span(offsets: tuple[int, int] | None) -> str:
    return "" if offsets is None else f" (offsets {offsets[0]}..{offsets[1]})"


def _metadata_lines(r: StartupReport, paths: Paths) -> Iterator[str]:
    """__cluster_metadata-0 as the node opens it: what it reads, cuts and keeps."""
    m = r.metadata_log
    if m is None:
        return
    load = m.load
    yield "Metadata log (recovered whole on every start, one thread, before the data logs)"
    span = f"empty at {m.log_start_offset}" if m.log_end_offset <= m.log_start_offset \
        else f"at offsets {m.log_start_offset}..{m.log_end_offset - 1}"
    opens = "" if m.refusal is not None else f"; opens {span}, epoch {m.latest_epoch}"
    yield (f"  {paths.show(str(m.path))}: {_n(load.segments, 'segment')}, "
           f"{size(load.bytes)}{opens}; re-reads {size(m.bytes_to_read)}: "
           f"{_duration(r.metadata_seconds)}")
    if m.refusal is not None:
        yield f"    DOES NOT OPEN (the node refuses to start): {m.refusal}"
        return
    yield from _cuts(load, "    ")
    if m.truncated_to is not None:
        yield (f"    the latest snapshot {m.truncated_to_snapshot} is ahead of the log: "
               f"it starts empty at {m.truncated_to}")
    if m.records_lost:
        yield (f"    this node's copy loses {_n(m.records_lost, 'record')}"
               f"{_span(m.lost_offsets)}")
    kept = [s for s in m.snapshots if s.fate == "kept"]
    gone = [s for s in m.snapshots if s.fate != "kept"]
    if not m.snapshots:
        return
    said = f"{len(kept):,} kept (latest {kept[-1].end_offset}-{kept[-1].epoch})" if kept \
        else "none kept"
    if gone:
        said += f", {len(gone):,} deleted" + (f" ({gone[0].why})" if len(gone) == 1 else "")
    yield f"    snapshots: {said}"


def _dir_lines(d: LogDirStartup, paths: Paths, rate: float, shown_metadata: bool = False
               ) -> Iterator[str]:
    state = "clean shutdown" if d.clean_shutdown else "UNCLEAN SHUTDOWN (no " \
        ".kafka_cleanshutdown)"
    if d.clean_shutdown and d.broker_epoch is not None:
        state += f", broker epoch {d.broker_epoch}"
    if d.live:
        state = ("LIVE: a broker runs on it; what follows is a start on its files as they "
                 "are now" + (", as after the broker is killed" if not d.clean_shutdown
                              else f" ({state})"))
    yield f"  {paths.show(str(d.path))}: {state}"
    recovering = sum(1 for p in d.partitions if p.recover)
    yield (f"    {_n(len(d.partitions), 'log')}, {_n(recovering, 'log')} to recover, "
           f"{size(d.cost_bytes)} to re-read, {_duration(d.seconds(rate))}")
    for c, use in (("recovery points", d.recovery_checkpoint),
                   ("log starts", d.log_start_checkpoint)):
        if use.state == "read":
            what = _n(use.entries, "entry", "entries")
        elif use.state == "missing":
            what = "missing: created empty, every partition at 0"
        else:
            what = f"CORRUPT ({use.problem}): every partition at 0, the dir goes offline"
        yield f"    {c}: {use.name}, {what}"
    if d.metadata_log and not shown_metadata:
        yield "    __cluster_metadata-0: not LogManager's (the raft layer opens it first)"
    states = {s: sum(1 for p in d.partitions if p.state == s)
              for s in ("future", "delete", "stray")}
    extra = ", ".join(f"{n} -{s}" for s, n in states.items() if n)
    if extra:
        yield f"    renamed logs: {extra}"
    for name in d.refused:
        yield f"    {name}/: a name Kafka cannot parse: it refuses to start"


def _worst(p: PartitionStartup) -> int:
    order = {Severity.ERROR: 3, Severity.WARNING: 2, Severity.INFO: 1}
    return max((order[f.severity] for f in p.findings), default=0)


def _topic_lines(r: StartupReport, every: bool) -> Iterator[str]:
    topics: dict[str, list[PartitionStartup]] = {}
    for p in r.partitions:
        topics.setdefault(p.topic, []).append(p)

    def key(item: tuple[str, list[PartitionStartup]]) -> tuple:
        name, ps = item
        return (-max(_worst(p) for p in ps), -sum(p.lost_bytes for p in ps),
                -sum(p.cost_bytes for p in ps), -sum(p.bytes for p in ps), name)

    ranked = sorted(topics.items(), key=key)
    shown = ranked if every else ranked[:SHOWN]
    yield (f"Topics: {len(ranked):,} (anomalies, then the largest costs first"
           + ("" if every or len(ranked) <= SHOWN else "; --all lists every one") + ")")
    yield f"  {'TOPIC':<26} {'LOGS':>5} {'SEGMENTS':>8} {'SIZE':>10} {'RE-READ':>10} " \
          f"{'LOST':>9}"
    for name, ps in shown:
        shown_name = name if len(name) <= 26 else name[:25] + "~"
        yield (f"  {shown_name:<26} {len(ps):>5,} {sum(p.segments for p in ps):>8,} "
               f"{size(sum(p.bytes for p in ps)):>10} "
               f"{size(sum(p.cost_bytes for p in ps)):>10} "
               f"{size(sum(p.lost_bytes for p in ps)):>9}")
    if len(ranked) > len(shown):
        rest = ranked[len(shown):]
        yield (f"  ... {len(rest):,} more topics, {_n(sum(len(ps) for _, ps in rest), 'log')}"
               f", {size(sum(p.cost_bytes for _, ps in rest for p in ps))} to re-read")


def _cuts(p: PartitionStartup, indent: str) -> Iterator[str]:
    """What recovery removes from a log: the segment it empties or truncates, the later
    ones it deletes."""
    for w in p.recover:
        if w.cut_code == "V175":
            yield (f"{indent}EMPTIES {w.file} ({size(w.removed_bytes)} removed, V175): "
                   f"{w.cut_reason}")
        elif w.truncated_at is not None:
            yield (f"{indent}truncates {w.file} at byte {w.truncated_at} "
                   f"({size(w.removed_bytes)} removed, {w.cut_code})")
    if p.deleted_segments:
        yield (f"{indent}deletes {_n(len(p.deleted_segments), 'later segment')}: "
               f"{', '.join(p.deleted_segments[:3])}"
               + (" ..." if len(p.deleted_segments) > 3 else ""))


def _partition_detail(p: PartitionStartup, full: bool) -> Iterator[str]:
    """What Kafka does to one log: the recovery and what it removes; ``full``: the
    indexes, leftovers and producer state too."""
    if p.recover:
        first = p.recover[0]
        batches = sum(w.batches for w in p.recover)
        # a -delete dir is not recovered (recoverLog is skipped): only missing indexes
        verb = "rebuilds the indexes of" if p.state == "delete" else "recovers"
        yield (f"      {verb} {_n(len(p.recover), 'segment')} from offset "
               f"{first.base_offset} ({size(p.recover_bytes)}, {batches:,} batches kept)")
        if full:
            yield f"        first: {first.why}"
    if p.load_failure is not None:
        yield f"      DOES NOT LOAD (the broker refuses to start): {p.load_failure}"
    if p.offline is not None:
        yield f"      TAKES ITS LOG DIR OFFLINE: {p.offline}"
    for sp in p.splits:
        if sp.failure is None:
            yield (f"      splits {sp.file} (offset {sp.overflow_offset} overruns it) into "
                   f"{_n(len(sp.pieces), 'segment')} at offsets "
                   + ", ".join(str(b) for _, b, _, _ in sp.pieces))
    yield from _cuts(p, "      ")
    if p.all_deleted:
        yield (f"      DELETES EVERY SEGMENT: the log end is below the log start "
               f"checkpoint {p.log_start_checkpoint}")
    if p.committed_missing:
        yield (f"      LACKS COMMITTED {_offsets(p.committed_missing)} (high watermark "
               f"{p.high_watermark:,}): {p.missing_cause}")
    if p.flushed_missing and not p.committed_missing:
        yield (f"      lacks {_offsets(p.flushed_missing)} flushed once (recovery point "
               f"{p.recovery_point:,}): {p.missing_cause}")
    if p.segments == 0 and p.log_end_offset is not None and full:
        yield f"      no segment: Kafka creates an empty one at {p.log_start_offset:,}"
    if p.producer_bytes and not full:
        yield f"      producer state: {size(p.producer_bytes)} read to rebuild it"
    if not full:
        return
    for f in p.index_rebuilds:
        yield f"      {f.file}: {f.fate} ({f.why})"
    groups: dict[tuple[str, str], list[str]] = {}
    for f in p.leftovers:
        groups.setdefault((f.fate, f.why), []).append(f.file)
    for (fate, why), files in groups.items():
        named = files[0] if len(files) == 1 else f"{len(files)} files ({files[0]} ...)"
        yield f"      {named}: {fate} ({why})"
    if p.producer_bytes or p.recover:
        yield f"      producer state: {p.producer_state}"
    for w in p.recover:
        if w.backwards is not None and w.truncated_at is None:
            pos, offset, expected = w.backwards
            yield (f"      {w.file}: offsets go backwards at byte {pos} (offset {offset}, "
                   f"{expected} due): no index entry there, Kafka keeps them")
    if p.remote_storage or p.remote_storage is None and p.log_start_checkpoint != \
            p.log_start_offset:
        yield f"      log start {p.log_start_offset}: {p.log_start_rule}"
    ec = p.epoch_cache
    if ec is not None and ec.changes:
        if ec.cleared is not None:
            yield f"      epoch cache: leader-epoch-checkpoint deleted ({ec.cleared})"
        else:
            said = [f"removes {_epochs(ec.removed)}"] if ec.removed else []
            said += [f"adds {_epochs(ec.added)}"] if ec.added else []
            yield f"      epoch cache: {'; '.join(said)}"
    if p.placement is not None:
        yield f"      image: {p.placement.why}; {p.placement.kafka_does}"


def _offsets(r: range) -> str:
    return f"offset {r.start:,}" if len(r) == 1 else f"offsets {r.start:,}..{r.stop - 1:,}"


def _epochs(entries: list[tuple[int, int]]) -> str:
    shown = ", ".join(f"{e}@{o}" for e, o in entries[:6])
    return shown + (f" +{len(entries) - 6}" if len(entries) > 6 else "")


def _partition_line(p: PartitionStartup, paths: Paths) -> str:
    end = p.log_end_offset
    span = "offsets ?" if end is None else "empty" if end <= p.log_start_offset else \
        f"offsets {p.log_start_offset}..{end - 1}"
    head = f"    {p.name}: {size(p.bytes)} in {_n(p.segments, 'segment')}, {span}"
    if p.cost_bytes:
        head += f", re-reads {size(p.cost_bytes)}"
    if p.fate != "loaded":
        head += f"; {p.fate}"
    return head


def _costs(r: StartupReport, paths: Paths, every: bool) -> Iterator[str]:
    notable = [p for p in r.partitions if p.cost_bytes or p.findings]
    if not notable:
        return
    notable.sort(key=lambda p: (-_worst(p), -p.lost_bytes, -p.cost_bytes, str(p.path)))
    shown = notable if every else notable[:SHOWN_COSTS]
    yield ("Largest costs and anomalies" + (" once the broker starts" if
                                             r.refuses_before_loading else "")
           + " (--partitions: every partition, in full)")
    for p in shown:
        yield _partition_line(p, paths)
        yield from _partition_detail(p, every)
    if len(notable) > len(shown):
        yield f"    ... {len(notable) - len(shown):,} more logs to recover or with findings"


def startup_lines(r: StartupReport, given: Iterable[str], *, partitions: bool = False,
                  every: bool = False) -> Iterator[str]:
    """The text report: the verdict, the log dirs, the topics, the largest costs (with
    ``partitions``: every partition, each dir's in name order; ``every``: no list cut
    short)."""
    paths = Paths(list(given))
    parts = r.partitions
    why = f" ({r.kafka_version_from})" if r.kafka_version_from else ""
    yield (f"Kafka {r.kafka_version}{why} opening {_n(len(r.dirs), 'log dir')}: "
           f"{_n(len(parts), 'log')}, {_n(sum(p.segments for p in parts), 'segment')}, "
           f"{size(sum(p.bytes for p in parts))}")
    yield from _verdict(r, paths)
    if r.metadata_log is not None:
        yield ""
        yield from _metadata_lines(r, paths)
    yield ""
    yield "Log dirs"
    for d in r.dirs:
        shown = r.metadata_log is not None and r.metadata_log.log_dir == d.path
        yield from _dir_lines(d, paths, r.recovery_rate, shown)
    if parts:
        yield ""
        yield from _topic_lines(r, every)
    costs = list(_costs(r, paths, every or partitions))
    if costs and not partitions:
        yield ""
        yield from costs
    if partitions:
        yield ""
        yield "Partitions" + (" once the broker starts" if r.refuses_before_loading else "")
        for d in r.dirs:
            yield f"  {paths.show(str(d.path))}"
            for p in sorted(d.partitions, key=lambda p: (p.topic, p.partition, p.name)):
                yield _partition_line(p, paths)
                yield from _partition_detail(p, True)
    for note in r.notes:
        yield ""
        yield f"Note: {note}."
    yield ""


# ------------------------------------------------------------------- several brokers

def _broker_name(r: StartupReport) -> str:
    return "node unknown" if r.node_id is None else f"node {r.node_id}"


def _broker_verdict(r: StartupReport) -> str:
    if r.refusals:
        return (f"Kafka {r.kafka_version} REFUSES TO START"
                + (" (before loading)" if r.refuses_before_loading else ""))
    if r.loses_data or any(f.code == "V190" for f in r.findings):
        return f"Kafka {r.kafka_version} LOSES DATA"
    return f"Kafka {r.kafka_version}: comes back with every record"


def brokers_lines(reports: list[StartupReport], given: Iterable[str], *,
                  partitions: bool = False, every: bool = False) -> Iterator[str]:
    """Several brokers: which dirs each is and its verdict, then each broker's report."""
    paths = Paths(list(given))
    yield (f"{len(reports)} brokers, told apart by the node.id (and cluster.id) of their "
           "meta.properties (each starts on its own; --config makes them one broker's):")
    names = [paths.show(str(d.path)) for r in reports for d in r.dirs]

    def shown(d: LogDirStartup) -> str:  # as typed where two dirs share a name
        name = paths.show(str(d.path))
        return str(d.path) if names.count(name) > 1 else name

    named = [f"{_broker_name(r)} ({', '.join(shown(d) for d in r.dirs)})" for r in reports]
    for name, r in zip(named, reports, strict=True):
        yield f"  {name}: {_broker_verdict(r)}"
    yield ""  # each broker's report ends with a blank line
    for name, r in zip(named, reports, strict=True):
        yield f"== {name} =="
        yield from startup_lines(r, given, partitions=partitions, every=every)


def brokers_object(reports: list[StartupReport]) -> dict[str, Any]:
    findings = [f for r in reports for f in r.findings]
    return {"kind": "startup_brokers", "brokers": len(reports),
            "node_ids": [r.node_id for r in reports if r.node_id is not None],
            "refuses": any(r.refusals for r in reports),
            "loses_data": any(r.loses_data for r in reports),
            "finding_counts": finding_counts(findings)}
