"""``kmeta compact`` for people (the round's range, a line per strategy, disagreements,
out-of-order writes, one key's fate) and for scripts (JSON Lines: an object per strategy,
per disagreeing key, per record of ``--key``, then a summary)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kmeta.core.lifecycle import duration
from kmeta.ops.compact import CompactResult, StrategyReport
from kmeta.ops.compact import show_key as ops_show_key
from kmeta.render.brokers import utc
from kmeta.render.jsonl import dumps
from kmeta.render.retention import size


def show_key(key: bytes | None) -> str:
    """A key as text when it is printable UTF-8, else as hex."""
    return "(none)" if key is None else ops_show_key(key)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def compact_lines(result: CompactResult) -> Iterator[str]:
    lay = result.layout
    total = sum(lay.seg_records)
    span = f"offsets {lay.log_start}..{lay.log_end - 1}" if lay.log_end > lay.log_start \
        else f"empty (log end {lay.log_end})"
    yield (f"{result.topic}-{result.partition_id}: {span}, {total:,} records, "
           f"{size(sum(lay.seg_bytes))} in {len(lay.bases)} segment(s)")
    c = result.configs
    lag = int(c["min.compaction.lag.ms"])
    policy = c.get("cleanup.policy")
    yield (f"configs from {result.config_source}: cleanup.policy "
           f"{policy if policy is not None else 'not known here'}, delete.retention.ms "
           f"{duration(int(c['delete.retention.ms']))}, min.compaction.lag.ms "
           f"{duration(lag) if lag else 0}")
    yield (f"the round: dirty from {result.first_dirty} ({result.first_dirty_from}) to "
           f"{result.first_uncleanable} ({result.uncleanable_why}); judged at "
           f"{utc(result.now)} UTC ({result.now_from})")
    for note in result.notes:
        yield f"note: {note}"
    yield ""
    yield (f"{'strategy':<15} {'records kept':>15} {'%':>4} {'bytes kept':>10} {'%':>4} "
           f"{'tombstones':>10} {'keys':>9}")
    for r in result.reports:
        yield report_line(r)
    yield "  (tombstones: kept/removed; keys: distinct keys of the dirty range)"
    for r in result.reports:
        yield from _after(r, result)
        if r.batches:
            yield ""
            yield f"{r.strategy}: every batch up to the round's end ({r.end}):"
            for f in r.batches:
                span = f"{f.base_offset}" if f.base_offset == f.last_offset else \
                    f"{f.base_offset}..{f.last_offset}"
                what = f" {f.control}" if f.control else f" {f.records:,} record(s)"
                kept = f", keeps {','.join(map(str, f.kept))}" if f.kept and \
                    f.action != "kept" else ""
                yield f"  {span}{what}: {f.action}{kept}"
    if result.out_of_order:
        yield ""
        yield (f"{result.out_of_order:,} record(s) written after a record of the same key with "
               "a newer timestamp (KIP-280's two-producer case: the offset strategy keeps the "
               "older value), e.g.:")
        for key, t1, o2, t2 in result.out_of_order_samples[:5]:
            yield (f"  key {show_key(key)}: offset {o2} at {utc(t2)} came after a record of "
                   f"it at {utc(t1)}")
    if result.disagreements:
        yield ""
        yield f"the strategies disagree on {len(result.disagreements):,} key(s), e.g.:"
        for d in result.disagreements[:10]:
            yield f"  key {show_key(d.key)}:"
            for name, (o, ts, h) in d.winners.items():
                header = f", header {h}" if h is not None else ""
                yield (f"    {name}: offset {o} ({utc(ts)}{header}): "
                       f"{d.why.get(name, '')}")
    if result.key_view:
        yield ""
        yield "the key's records and whether each strategy keeps them:"
        for v in sorted(result.key_view, key=lambda v: v.offset):
            fate = ", ".join(f"{s} {'kept' if k else 'removed'}" for s, k in v.kept.items())
            value = "tombstone" if v.value is None else f"{len(v.value)} B value"
            yield f"  offset {v.offset} at {utc(v.timestamp)}, {value}: {fate}"


def report_line(r: StrategyReport) -> str:
    kept = f"{r.records_kept:,}/{r.records_before:,}"
    tombs = f"{r.tombstones_kept:,}/{r.tombstones_removed:,}"
    return (f"{str(r.strategy):<15} {kept:>15} {_pct(r.records_kept, r.records_before):>4} "
            f"{size(r.bytes_kept):>10} {_pct(r.bytes_kept, r.bytes_before):>4} {tombs:>10} "
            f"{r.keys:>9,}")


def _after(r: StrategyReport, result: CompactResult) -> Iterator[str]:
    lines = []
    if r.aborted_removed:
        lines.append(f"{r.aborted_removed:,} record(s) of aborted transactions removed "
                     "(.txnindex)")
    if r.markers_removed:
        lines.append(f"{r.markers_removed:,} transaction marker(s) removed")
    if r.batches_emptied:
        lines.append(f"{r.batches_emptied:,} batch(es) kept empty (a producer's last "
                     "sequence, or the round's last batch)")
    if r.map_full:
        lines.append(f"the key map filled up: the round ends at {r.end}")
    if r.horizons_set:
        lines.append(f"{r.horizons_set} batch(es) get a delete horizon "
                     f"(now + {duration(int(result.configs['delete.retention.ms']))}): their "
                     "tombstones and markers go in a later round")
    if r.keyless_removed:
        lines.append(f"{r.keyless_removed:,} record(s) without a key removed")
    if lines:
        yield ""
        yield f"{r.strategy}:"
        for line in lines:
            yield f"  {line}"


def compact_json(result: CompactResult) -> Iterator[str]:
    for r in result.reports:
        yield dumps(strategy_object(r))
        for f in r.batches:
            yield dumps({"kind": "compact_batch", "strategy": str(r.strategy),
                         "base_offset": f.base_offset, "last_offset": f.last_offset,
                         "records": f.records, "kept_offsets": list(f.kept), "action": f.action,
                         "control": f.control, "delete_horizon_ms": f.delete_horizon})
    for d in result.disagreements:
        yield dumps({"kind": "compact_disagreement", "key": d.key.hex(),
                     "key_text": show_key(d.key),
                     "winners": {name: {"offset": o, "timestamp": ts, "header": h,
                                        "why": d.why.get(name, "")}
                                 for name, (o, ts, h) in d.winners.items()}})
    for v in sorted(result.key_view, key=lambda v: v.offset):
        yield dumps({"kind": "compact_key_record", "offset": v.offset,
                     "timestamp": v.timestamp, "tombstone": v.value is None,
                     "kept_by": v.kept})
    for f in result.findings:  # before the summary, which is the last line
        yield dumps(f.to_json())
    yield dumps(summary_object(result))


def strategy_object(r: StrategyReport) -> dict[str, Any]:
    return {"kind": "compact_strategy", "strategy": str(r.strategy),
            "records_before": r.records_before, "records_kept": r.records_kept,
            "bytes_before": r.bytes_before, "bytes_kept": r.bytes_kept,
            "tombstones_kept": r.tombstones_kept, "tombstones_removed": r.tombstones_removed,
            "horizons_set": r.horizons_set, "keyless_removed": r.keyless_removed,
            "aborted_removed": r.aborted_removed, "markers_removed": r.markers_removed,
            "batches_emptied": r.batches_emptied, "batches_deleted": r.batches_deleted,
            "keys": r.keys, "map_full": r.map_full, "next_dirty_offset": r.end}


def summary_object(result: CompactResult) -> dict[str, Any]:
    lay = result.layout
    return {"kind": "compact_summary", "path": result.partition,
            "topic": result.topic, "partition": result.partition_id,
            "log_start_offset": lay.log_start, "log_end_offset": lay.log_end,
            "records": sum(lay.seg_records), "bytes": sum(lay.seg_bytes),
            "segments": len(lay.bases),
            "first_dirty": result.first_dirty, "first_dirty_from": result.first_dirty_from,
            "first_uncleanable": result.first_uncleanable,
            "uncleanable_why": result.uncleanable_why, "now_timestamp": result.now,
            "now_from": result.now_from, "config_source": result.config_source,
            "configs": {k: str(v) for k, v in sorted(result.configs.items())},
            "out_of_order": result.out_of_order, "disagreements": len(result.disagreements),
            "written": None if result.written is None else str(result.written),
            "notes": result.notes}
