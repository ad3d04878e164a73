"""A metadata batch's records against KRaft's record rules and against its header: what
verify's full path says of each record (V001, V002, V004)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from kmeta.findings import Finding
from kmeta.formats.batch import Batch, Record
from kmeta.formats.legacy import LegacyBatch


def record_rule_problem(batch: Batch | LegacyBatch, r: Record) -> str | None:
    """Why KRaft's record reader would reject this record, or None."""
    return _rule_problem(r, batch.base_timestamp if batch.delete_horizon_ms is None else None,
                         batch.is_control)


def _rule_problem(r: Record, base_timestamp: int | None, control: bool) -> str | None:
    """:func:`record_rule_problem` with what it needs of the batch: its base timestamp
    (None when it holds a delete horizon) and whether it is a control batch."""
    if base_timestamp is not None and r[1] != base_timestamp:
        return f"timestamp delta {r[1] - base_timestamp} is not 0"
    if r[4]:
        return f"{len(r[4])} header(s); KRaft records have none"
    if control:
        if not r[2]:
            return "control record without a key"
        if not r[3]:
            return "control record without a value"
    else:
        if r[2] is not None:
            return "metadata record with a key"
        if not r[3]:
            return "metadata record without a value"
    return None


def _check_records(batch: Batch | LegacyBatch, records: Iterable[Record], path: str
                   ) -> Iterator[Finding]:
    """The records of a batch against its header: offsets 0..n-1 up to lastOffsetDelta
    (V002), the newest timestamp as maxTimestamp (V004)."""
    pos, base = batch.position, batch.base_offset
    if not records:
        return
    # One pass, keeping nothing per record: a large batch's records come as a stream.
    first: list[int] = []
    in_order = True
    n = 0
    newest = last = None
    for r in records:
        delta = r.offset - base
        if len(first) < 5:
            first.append(delta)
        if delta != n:
            in_order = False
        n += 1
        last = r.offset
        if newest is None or r.timestamp > newest:
            newest = r.timestamp
    if not in_order or batch.last_offset != last:
        yield Finding("V002", f"record offsets {first}… do not run 0..{n - 1}"
                      f" up to lastOffsetDelta {batch.last_offset - base}", path, pos, base)
    if batch.magic == 2 and batch.timestamp_type == "CreateTime" and \
            newest != batch.max_timestamp:
        yield Finding("V004", f"maxTimestamp {batch.max_timestamp} but the newest record "
                      f"says {newest}", path, pos, base)
