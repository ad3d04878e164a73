"""What ``kmeta verify`` checks of a partition's index files: each ``.index`` and
``.timeindex`` against its segment (entries in order, pointing at the batches they name),
and index files without their segment (Kafka deletes those on load)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from operator import itemgetter, le
from typing import TYPE_CHECKING

from kmeta.errors import KmetaError
from kmeta.findings import Finding
from kmeta.formats.indexes import OFFSET_INDEX_ENTRY_SIZE, TIME_INDEX_ENTRY_SIZE
from kmeta.storage.discover import LogFile, PartitionDir
from kmeta.storage.ends import next_offset_now
from kmeta.storage.files import load_checked
from kmeta.storage.headers import batch_spans

if TYPE_CHECKING:  # verify.py imports this module: the type only, for the hints
    from kmeta.ops.replica import LogStats


def verify_indexes(part: PartitionDir, stats: LogStats | None = None,
                   found_beside: dict[str, tuple[list[Finding], int | None]] | None = None
                   ) -> Iterator[Finding]:
    """The indexes of one partition: each live index against its own segment.

    Kafka appends an offset-index entry (last offset of the appended batches, position of
    the first of them) every ``index.interval.bytes``, and a time-index entry with the
    largest timestamp so far: both only grow, and every position is a batch start.
    ``found_beside``: what :func:`indexes_beside` found, when it ran beside the pass.
    """
    segments = {f.kind.base_offset: f for f in part.segments}
    # the last offset of each segment, from the runs the verify pass recorded
    lasts = {base: runs[-1][1] for base, runs in stats.layout if runs} if stats else {}
    for f in part.files:
        k = f.kind
        if not k.live or k.kind not in ("offset-index", "time-index"):
            continue
        beside = None if found_beside is None else found_beside.get(str(f.path))
        if beside is not None:
            found, high = beside
            last = _last_offset(k.base_offset, stats, lasts)
            # a time index naming no offset past the segment's last: what the pass's
            # last offset adds to its checks (V032, S015) cannot be said of it
            if high is None or last is None or high <= last:
                yield from found
                continue
        yield from _index_findings(f, segments, stats, lasts)


def indexes_beside(part: PartitionDir) -> dict[str, tuple[list[Finding], int | None]]:
    """What :func:`verify_indexes` finds of each live index of ``part`` without the verify
    pass, by path, and the highest offset a time index names (None for an offset index):
    an offset index needs nothing of the pass, and a time index only the segment's last
    offset, where an entry names one past it; so both can be checked beside the pass."""
    segments = {f.kind.base_offset: f for f in part.segments}
    out: dict[str, tuple[list[Finding], int | None]] = {}
    for f in part.files:
        if f.kind.live and f.kind.kind in ("offset-index", "time-index"):
            high: list[int] = []
            found = list(_index_findings(f, segments, None, {}, high))
            out[str(f.path)] = (found, max(high, default=None))
    return out


def _last_offset(base: int | None, stats: LogStats | None, lasts: dict[int, int]
                 ) -> int | None:
    """The segment's last offset as the verify pass read it (None: no pass)."""
    if stats is None:
        return None
    last = lasts.get(base)  # type: ignore[arg-type]
    return (base or 0) - 1 if last is None else last  # an empty segment: no entry fits


def _index_findings(f: LogFile, segments: dict[int | None, LogFile],
                    stats: LogStats | None, lasts: dict[int, int],
                    high: list[int] | None = None) -> Iterator[Finding]:
    """``high``: given, gets the highest offset a time index's entries name."""
    k = f.kind
    path = str(f.path)
    seg = segments.get(k.base_offset)
    if seg is None:
        yield Finding("V030", f"{k.kind} for base offset {k.base_offset} has no "
                      "segment: Kafka deletes it on load", path)
        return
    index, problem = load_checked(f)
    if problem:
        yield problem
    if index is None:
        return
    if index.trailing_bytes:
        yield Finding("V031", f"{index.trailing_bytes:,} bytes after the last whole entry",
                      path, index.valid_bytes)
    if index.preallocated and not index.tail_zero:
        yield Finding("V031", "bytes after the last entry are not zero (damage in the "
                      "preallocated tail)", path)
    if k.kind == "offset-index":
        yield from _offset_index_against(index.entries, seg, path)
    else:
        if high is not None and index.entries:
            high.append(max(map(itemgetter(1), index.entries)))
        yield from _time_index_in_order(index.entries, path,
                                        _last_offset(k.base_offset, stats, lasts), seg)


def _offset_index_against(entries: tuple, seg: LogFile, path: str) -> Iterator[Finding]:
    previous = None
    try:
        spans = batch_spans(seg.path, (e.position for e in entries))
        for i, (e, span) in enumerate(zip(entries, spans, strict=True)):
            where = OFFSET_INDEX_ENTRY_SIZE * i
            if previous is not None and (e.offset <= previous.offset
                                         or e.position <= previous.position):
                yield Finding("V031", f"entry {i} ({e.offset} @ {e.position}) does not "
                              f"come after ({previous.offset} @ {previous.position})",
                              path, where, e.offset)
            previous = e
            if span is None:
                yield Finding("V032", f"entry {i} points at byte {e.position} of the "
                              "segment, where no batch starts", path, where, e.offset)
            elif not span[0] <= e.offset:
                yield Finding("V032", f"entry {i} says offset {e.offset} but the batch "
                              f"at byte {e.position} starts at {span[0]}", path,
                              where, e.offset)
    except KmetaError as err:
        yield err.finding(str(seg.path))


def _written_since(entries: tuple, path: str, last: int, seg: LogFile
                   ) -> tuple[int, Finding | None]:
    """Of time-index entries past ``last`` (the segment's last offset as the verify pass
    read it), those the segment holds now: Kafka appends the batch, then its index entry
    (LogSegment.append), so on a live segment the index read later names batches the
    pass never saw.  The offset up to which entries are so excused (``last`` when none),
    and the S015 that says it."""
    now = next_offset_now(str(seg.path), seg.kind.base_offset or 0)
    if now is None or now <= last + 1:
        return last, None
    since = [e for e in entries if last < e.offset < now]
    if not since:
        return last, None
    return now - 1, Finding(
        "S015", f"{len(since):,} time-index entr{'y' if len(since) == 1 else 'ies'} name "
        f"offsets {since[0].offset}..{since[-1].offset}, past the segment's last offset "
        f"{last} as read: the segment holds them now (appended since)", path,
        TIME_INDEX_ENTRY_SIZE * entries.index(since[0]), since[0].offset,
        details={"read_last_offset": last, "next_offset_now": now})


def _time_index_in_order(entries: tuple, path: str, last: int | None = None,
                         seg: LogFile | None = None) -> Iterator[Finding]:
    """Entries only grow, and name offsets the segment holds (``last``: its last
    offset as the verify pass read it, when known; ``seg``: the segment, looked at again
    for entries past it)."""
    if entries and last is not None and seg is not None and entries[-1].offset > last:
        last, since = _written_since(entries, path, last, seg)
        if since is not None:
            yield since
    if entries:
        # the common answer, nothing to say, over whole columns (a metadata log's time
        # indexes hold tens of thousands of entries); the loop below says what is wrong
        stamps = list(map(itemgetter(0), entries))
        offsets = list(map(itemgetter(1), entries))
        if all(map(le, stamps, islice(stamps, 1, None))) and \
                all(map(le, offsets, islice(offsets, 1, None))) and \
                (last is None or offsets[-1] <= last):
            return
    previous = None
    for i, e in enumerate(entries):
        if last is not None and e.offset > last:
            yield Finding("V032", f"time-index entry {i} names offset {e.offset}, past the "
                          f"segment's last offset {last}", path, TIME_INDEX_ENTRY_SIZE * i,
                          e.offset)
        if previous is not None and (e.timestamp < previous.timestamp
                                     or e.offset < previous.offset):
            yield Finding("V031", f"entry {i} ({e.timestamp}, offset {e.offset}) goes back "
                          f"from ({previous.timestamp}, offset {previous.offset})", path,
                          TIME_INDEX_ENTRY_SIZE * i, e.offset)
        previous = e
