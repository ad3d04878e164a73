"""The offsets a partition's checkpoints name past the log Kafka loads: records the
broker will not have.

Kafka facts (apache/kafka trunk 2024-10; the same rules from 2.8, older noted):

* the recovery point (``recovery-point-offset-checkpoint``, written every
  ``log.flush.offset.checkpoint.interval.ms``) is how far the log was flushed to disk.  One past the log end is not noticed: ``LogLoader.recoverLog`` ends
  with ``min(checkpoint, log end)`` after an unclean shutdown and the log end after a
  clean one (2.3 to 2.7: always the log end), with no warning.  The offsets between were
  on this disk once: a cut tail or a stale copy.  Whether they were committed the
  recovery point does not say (a leader flushes records before followers have them), so
  this alone is a warning (V213), as Kafka treats it.
* the high watermark (``replication-offset-checkpoint``, ``ReplicaManager``'s
  ``HighWatermarkFilename``) is not read by ``LogManager``: ``Partition.createLog`` reads
  it once the broker runs and hands it to ``UnifiedLog.updateHighWatermark``, which
  caps it at the log end without a word (``Log.updateHighWatermark`` from 2.4; 2.3's
  ``Partition.getOrCreateReplica`` takes ``min(checkpoint, log end)``).  Offsets below it were committed: every in-sync
  replica had them and producers with acks=all were told so.  Where the log Kafka loads
  ends below it, those records are gone from this broker (V212, an error): as leader it
  serves the partition without them and its followers truncate to it.
* a log start checkpoint past the log end deletes every segment and starts the log
  empty there (``deleteSegmentsIfLogStartGreaterThanLogEnd``, V173, in the loader); a
  partition dir without a segment gets one empty segment at the log start checkpoint
  (``LogLoader.recoverLog``, 0 without one).  Offsets below the log start are not
  missing: retention or DeleteRecords removed them.  So the log end compared here is the
  one the load ends with, which is never below the log start.
* only current logs are judged: a ``-delete`` log is going, a ``-stray`` one (or one the
  image calls stray) is not served, and a ``-future`` log takes the current one's high
  watermark when the move completes (``Partition.maybeReplaceCurrentWithFutureReplica``).
"""

from __future__ import annotations

from kmeta.findings import Finding
from kmeta.ops.startup.model import PartitionStartup
from kmeta.storage.ends import log_end_now


def _span(r: range) -> str:
    return f"offset {r.start:,}" if len(r) == 1 else f"offsets {r.start:,}..{r.stop - 1:,}"


def _cause(part: PartitionStartup) -> str:
    cut = part.deleted_segments or any(w.truncated_at is not None for w in part.recover)
    return "cut off by recovery" if cut else "not on disk"


def _loaded(part: PartitionStartup) -> str:
    end, start = part.log_end_offset or 0, part.log_start_offset
    if part.segments == 0:
        return f"Kafka creates an empty segment at {start:,} (the dir holds none) and " \
               "starts the log there"
    if end <= start:
        return f"Kafka starts the log empty at {start:,}"
    return f"Kafka starts the log with what is there ({_span(range(start, end))})"


def judge_offsets(part: PartitionStartup, high_watermark: int | None,
                  live: bool = False) -> None:
    """Set ``part``'s high watermark and the offsets its checkpoints name past its loaded
    log end, and add V212 (committed offsets missing) or V213 (flushed offsets only).
    ``live``: a broker runs on the dir, checkpointing as it appends: offsets the log
    holds when looked at again were written since it was loaded (S015), not lost."""
    part.high_watermark = high_watermark
    end = part.log_end_offset
    stray = part.placement is not None and part.placement.stray
    if part.state is not None or stray or part.load_failure is not None or end is None:
        return
    hw, rp = high_watermark, part.recovery_point
    part.committed_missing = range(end, hw) if hw is not None and hw > end else range(0)
    part.flushed_missing = range(end, rp) if rp > end else range(0)
    if not part.committed_missing and not part.flushed_missing:
        return
    if live:
        named = max(hw or 0, rp)
        now = log_end_now(part.path)
        if now is not None and named <= now:
            part.committed_missing = part.flushed_missing = range(0)
            part.findings.append(Finding(
                "S015", f"the checkpoints name offsets up to {named - 1:,}, past the log "
                f"end {end:,} as loaded: the log holds them now (appended since)",
                str(part.path), offset=end,
                details={"read_log_end": end, "log_end_now": now}))
            return
    part.missing_cause = cause = _cause(part)
    where, loaded = str(part.path), _loaded(part)
    committed, flushed = part.committed_missing, part.flushed_missing
    if committed:
        more = ""
        if len(flushed) > len(committed):
            more = (f"; its recovery point {rp:,} names {_span(range(hw, rp))} flushed "
                    "too")
        part.findings.append(Finding(
            "V212", f"{_span(committed)}, below the high watermark {hw:,} that "
            "replication-offset-checkpoint names (committed: producers with acks=all were "
            f"told they are written), are {cause}: {loaded}; its high watermark drops to "
            f"{end:,}{more}", where, offset=end,
            details={"high_watermark": hw, "recovery_point": rp, "log_end_offset": end,
                     "missing_offsets": len(committed)}))
        return
    known = "no high watermark in replication-offset-checkpoint says whether any was " \
        "committed" if hw is None else f"none is below the high watermark {hw:,}"
    part.findings.append(Finding(
        "V213", f"{_span(flushed)}, below the recovery point {rp:,} that "
        f"recovery-point-offset-checkpoint names (flushed to this disk once), are {cause} "
        f"(a cut tail, a stale copy, or a truncation to a new leader the checkpoint had "
        f"not caught up with); {known}: {loaded}; the recovery point drops to "
        f"{end:,} without a word", where, offset=end,
        details={"high_watermark": hw, "recovery_point": rp, "log_end_offset": end,
                 "missing_offsets": len(flushed)}))
