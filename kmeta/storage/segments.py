"""Reading log segments (and snapshot files, which share the format) batch by batch.

A segment is opened read-only and read into an anonymous memory map of its size as the
scan advances (:class:`SegmentMap`), so a 1 GiB log costs address space, not RSS.  The
file itself is never mapped: a live broker truncates segments (a follower's truncation,
recovery), and touching a mapped page past a file's new end kills the process with
SIGBUS; a read that comes up short instead tells kmeta that the file shrank, which it
reports (UnreadableInput, after every batch read before the new end).

:func:`scan_batches` yields every batch in file order, each with its file and byte
position, and turns every problem into a Finding instead of stopping the whole read
(:func:`scan_records` the same, record by record; :func:`read_batches` and
:func:`read_records` open the file for them):

* a batch whose CRC does not match is yielded with ``crc_valid`` False plus an F001;
* a damaged region (impossible header, garbage) is reported once as S003 with its byte
  range, and reading resumes at the next position where a well-formed batch with a valid
  CRC and a plausible offset begins;
* when nothing valid follows, the tail is reported once at its first byte: S002 if it is
  all zeros (preallocated space), S001 if a batch header claims more bytes than remain
  (torn write), S004 otherwise.  Kafka's recovery truncates a segment at that byte.
"""

from __future__ import annotations

import mmap
import os
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

from kmeta.errors import FormatError, KmetaError, UnreadableInput
from kmeta.findings import Finding
from kmeta.formats import runs as _runs
from kmeta.formats import spans as _spans
from kmeta.formats.batch import (
    COMPRESSION_MASK,
    CONTROL_FLAG,
    CRC,
    CRC_START,
    HEADER,
    HEADER_SIZE,
    LEADER_EPOCH,
    LOG_OVERHEAD,
    MAGIC_POSITION,
    SMALL_BATCH,
    SMALL_RECORDS,
    Batch,
    Record,
    RecordStream,
    remember_small_record,
)
from kmeta.formats.checksum import crc32c
from kmeta.formats.compression import CompressionError
from kmeta.formats.legacy import MIN_MESSAGE, LegacyBatch
from kmeta.formats.runs import MAX_RUN, Run, Walked
from kmeta.formats.spans import MOST_SECTION, MOST_VALUES, PlainSpan, Spans
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.regular import open_regular

_PREFIX = struct.Struct(">qi")
#: A v2 batch cannot be longer than this many bytes (Kafka caps batches far lower; the
#: bound only keeps a corrupt length from being believed).
MAX_BATCH = 1 << 30
_ZERO_CHUNK = bytes(1 << 16)
#: How often ``scan`` reports its progress, in bytes.
PROGRESS_EVERY = 4 << 20
RELEASE_EVERY = 32 << 20
#: How much of a file ``scan`` reads ahead at a time, in bytes.
FILL_EVERY = 4 << 20
#: How much of a file a walk (``scan_batches(walk=True)``) reads at a time, in bytes:
#: small enough that the CRC reads what was just copied from the cache, not from memory,
#: and above Kafka's default largest batch (message.max.bytes, 1 MiB + 12 bytes).  A
#: longer batch gets a buffer of its own length, up to WALK_MOST.
WALK_CHUNK = (1 << 20) + (64 << 10)
WALK_MOST = 256 << 20


#: The findings of :func:`scan_batches` at which Kafka's own recovery
#: (``LogSegment.recover``, every Kafka version kmeta knows) truncates a segment, and why:
#: the one table of that cut, for ``repair`` (which adds KRaft's rules) and ``startup``.
RECOVERY_CUTS: dict[str, str] = {
    "F001": "Kafka's recovery rejects a batch whose CRC does not match",
    "F009": "Kafka's recovery rejects a legacy message whose CRC does not match",
    "S001": "Kafka's recovery stops at a batch longer than the rest of the file",
    "S002": "Kafka's recovery rejects a zero batch length",
    "S003": "Kafka's recovery meets a bad batch at the first damaged byte",
    "S004": "Kafka's recovery rejects what follows the last valid batch",
    "S010": "Kafka's recovery finds no valid batch in the file and truncates it to nothing",
}


_ANONYMOUS = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_NORESERVE", 0)


class SegmentMap(mmap.mmap):
    """An anonymous map as long as a file was when opened, holding the file's bytes only
    where :meth:`load` put them (zeros elsewhere).  ``scan`` loads ahead of its cursor."""

    fd: int
    path: str

    def load(self, start: int, stop: int) -> int:
        """Read the file's bytes ``start..stop`` into the map; returns the end reached,
        below ``stop`` only when the file has shrunk under it."""
        pos = start
        with memoryview(self) as view:
            while pos < stop:
                with view[pos:stop] as part:
                    try:
                        got = os.preadv(self.fd, [part], pos)
                    except OSError as e:
                        raise UnreadableInput(f"cannot read: {e.strerror}",
                                              context=self.path) from e
                if got == 0:
                    break
                pos += got
        return pos

    def bytes_at(self, start: int, stop: int) -> bytes:
        """The file's bytes ``start..stop`` as they are now (fewer past its end)."""
        try:
            return os.pread(self.fd, stop - start, start)
        except OSError as e:
            raise UnreadableInput(f"cannot read: {e.strerror}", context=self.path) from e

    def shrank(self, read_up_to: int) -> UnreadableInput:
        """The error for a file found shorter than when it was opened."""
        try:
            now = os.fstat(self.fd).st_size
        except OSError:
            now = read_up_to
        return UnreadableInput(
            f"the file shrank while it was read (from {len(self)} to {now} bytes); what was "
            f"read before byte {read_up_to} is reported, the rest is not",
            context=self.path, hint="a live broker truncated it; read a stable copy")


class FileMap(mmap.mmap):
    """The file itself mapped read-only: the fallback for a file too large for a
    SegmentMap.  All its bytes are there at once, but touching a page past the end of a
    file truncated meanwhile is SIGBUS."""

    def bytes_at(self, start: int, stop: int) -> bytes:
        return self[start:stop]

@contextmanager
def mapped(path: str | Path, progress: Progress = QUIET) -> Iterator[Any]:
    """A file's :class:`SegmentMap` (``b""`` for an empty file), ``progress`` told when it
    has been read whole.  Raises UnreadableInput."""
    fd = open_regular(path)  # a FIFO or a link to /dev/zero is refused, never read
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            yield b""
            return
        try:
            # Address space only: no swap is reserved for the pages never loaded.
            m: Any = SegmentMap(-1, size, flags=_ANONYMOUS)
            m.fd = fd
            m.path = str(path)
            # Huge pages where the system gives them on request: loading a long file
            # faults a 2 MiB page where it faulted 512 small ones (a fifth of a scan's
            # time went to the faults).
            with suppress(AttributeError, OSError):
                m.madvise(mmap.MADV_HUGEPAGE)
        except (OSError, ValueError, OverflowError):
            # Larger than the anonymous memory the system grants (here: more than its
            # RAM); file mappings are not bounded so.
            try:
                m = FileMap(fd, 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError) as e:
                raise UnreadableInput(f"cannot map: {e}", context=str(path)) from e
        try:
            try:
                yield m
            except GeneratorExit:
                # A reader that stops early (the batch it looked for is found) is done
                # with the file as much as one that read to the end.
                progress.read(str(path), size)
                raise
            progress.read(str(path), size)
        finally:
            # A caller may still hold a view; the map is then freed with it.
            with suppress(BufferError):
                m.close()
    finally:
        os.close(fd)


def unreadable(files: Iterable[Any]) -> list[Finding]:
    """One S008 for each of ``files`` (anything with a ``path``) that cannot be opened and
    mapped.

    A log with an unreadable segment has a hole no check can see past: every gap, epoch,
    index and replay finding after it would follow from the hole, not from the data.
    Callers ask first and run those checks only when this is empty."""
    out = []
    for f in files:
        try:
            with mapped(f.path):
                pass
        except KmetaError as e:
            out.append(e.finding(str(f.path)))
    return out


#: How much of two files ``same_bytes`` holds at once.
_COMPARE_CHUNK = 8 << 20


def same_bytes(paths: list[Path]) -> bool:
    """Whether the files hold the same bytes (each read once: a chunk of the first is
    compared with the same chunk of every other)."""
    sizes = {p.stat().st_size for p in paths}
    if len(sizes) != 1:
        return False
    with ExitStack() as stack:
        first, *others = (stack.enter_context(mapped(p)) for p in paths)
        for pos in range(0, len(first), _COMPARE_CHUNK):
            end = pos + _COMPARE_CHUNK
            chunk = first.bytes_at(pos, end)
            for buf in others:
                if buf.bytes_at(pos, end) != chunk:
                    return False
    return True


def all_zero(buf: Any, start: int, end: int | None = None) -> bool:
    end = len(buf) if end is None else end
    pos = start
    while pos < end:
        step = min(len(_ZERO_CHUNK), end - pos)
        if buf[pos:pos + step] != _ZERO_CHUNK[:step]:
            return False
        pos += step
    return True


def _plausible_v2(buf: Any, p: int, n: int, min_offset: int | None, min_epoch: int) -> bool:
    """Does a well-formed v2 batch with a valid CRC and a sane offset begin at ``p``?"""
    if p + HEADER_SIZE > n or buf[p + MAGIC_POSITION] != 2:
        return False
    base, length = _PREFIX.unpack_from(buf, p)
    if length < HEADER_SIZE - LOG_OVERHEAD or p + LOG_OVERHEAD + length > n or base < 0:
        return False
    if min_offset is not None and base < min_offset:
        return False
    fields = HEADER.unpack_from(buf, p)
    if fields[LEADER_EPOCH] < min_epoch and fields[LEADER_EPOCH] != -1:
        return False
    return crc32c(buf[p + CRC_START:p + LOG_OVERHEAD + length]) == fields[CRC]


def _plausible_legacy(buf: Any, p: int, n: int) -> bool:
    """Does an intact magic 0/1 message (CRC-32 matching) begin at ``p``?"""
    if p + LOG_OVERHEAD + MIN_MESSAGE > n or buf[p + MAGIC_POSITION] not in (0, 1):
        return False
    _, length = _PREFIX.unpack_from(buf, p)
    end = p + LOG_OVERHEAD + length
    if length < MIN_MESSAGE or end > n:
        return False
    return zlib.crc32(buf[p + 16:end]) == struct.unpack_from(">I", buf, p + 12)[0]


def _resync(buf: Any, start: int, n: int, min_offset: int | None, min_epoch: int) -> int | None:
    """The first position after ``start`` where a plausible v2 batch begins, or None."""
    find = buf.find
    probe = start + 1 + MAGIC_POSITION
    while True:
        idx = find(b"\x02", probe)
        if idx < 0:
            return None
        p = idx - MAGIC_POSITION
        if _plausible_v2(buf, p, n, min_offset, min_epoch):
            return p
        probe = idx + 1


def _text_preview(buf: Any, n: int) -> str | None:
    """The file's first line if it begins like text, else None.  A segment's first
    bytes are its base offset, big-endian: 0x00 for any offset below 2^56, never text."""
    head = bytes(buf[:min(n, 80)])
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < min(n, 16):  # binary, not a character cut at the 80th byte
            return None
        text = head[:e.start].decode("utf-8")
    if not all(c.isprintable() or c in "\t\r\n" for c in text[:16]):
        return None
    return text.splitlines()[0][:40] if text.strip() else text[:40]


def _header_like(buf: Any, n: int) -> bool:
    """The first bytes could start a batch: a base offset >= 0 and a known magic."""
    if n <= MAGIC_POSITION:
        return False
    base, _ = _PREFIX.unpack_from(buf, 0)
    return base >= 0 and buf[MAGIC_POSITION] in (0, 1, 2)


def _not_a_segment(buf: Any, n: int, file: str, torn: bool) -> Finding | None:
    """S010 when a file holds no batch at all: text, or bytes that begin no batch header
    (a torn or damaged first batch stays S001/S004, which tell of a write cut short)."""
    preview = _text_preview(buf, n)
    if preview is not None:
        return Finding("S010", f"not a Kafka log segment: its {n} bytes are text "
                       f"(it begins {preview!r})", file, 0, details={"bytes": n})
    if torn or _header_like(buf, n):  # a segment damaged from its first byte
        return None
    return Finding("S010", f"not a Kafka log segment: no record batch in its {n} bytes "
                   f"(it begins {bytes(buf[:min(n, 8)]).hex()})", file, 0,
                   details={"bytes": n})


def alien_head(head: bytes) -> str | None:
    """What a file's first bytes are when no batch can begin there (``empty``, text, other
    bytes), else None: for a file whose name is no Kafka file's either."""
    n = len(head)
    if n == 0:
        return "it is empty"
    preview = _text_preview(head, n)
    if preview is not None:
        return f"its bytes are text beginning {preview!r}"
    if _header_like(head, n):
        return None
    return f"its bytes begin no record batch ({head[:8].hex()})"


def _tail_finding(buf: Any, pos: int, n: int, file: str) -> Finding:
    remaining = n - pos
    if all_zero(buf, pos, n):
        return Finding("S002", f"zero-filled tail of {remaining} bytes (never written)",
                       file, pos, details={"bytes": remaining})
    torn = _torn_tail(buf, pos, n, file)
    if torn is not None:
        grown = _grown(buf, n)
        if grown is not None:
            # A batch Kafka was appending as the file was opened (a live broker's active
            # segment; LogSegment.append writes a batch whole, then the next): the file
            # has more bytes now, so it is in the writing, not torn.
            return Finding("S015", f"the batch at byte {pos} was being written when kmeta "
                           f"read the segment ({n:,} bytes then, {grown:,} now): written "
                           "since, not read", file, pos, torn.offset,
                           details={"read_bytes": n, "bytes_now": grown})
    if pos == 0:  # nothing in the file was a batch
        alien = _not_a_segment(buf, n, file, torn is not None)
        if alien is not None:
            return alien
    return torn or Finding(
        "S004", f"{remaining} bytes of garbage after the last valid batch; Kafka's "
        "recovery truncates here", file, pos, details={"bytes": remaining})


def _grown(buf: Any, n: int) -> int | None:
    """The size of the file mapped into ``buf`` now, when it is larger than the ``n``
    bytes read (someone appended since); None otherwise or when it cannot be told."""
    fd = getattr(buf, "fd", None)
    if fd is None:
        return None
    try:
        now = os.fstat(fd).st_size
    except OSError:
        return None
    return now if now > n else None


def _torn_tail(buf: Any, pos: int, n: int, file: str) -> Finding | None:
    """S001 when the bytes at ``pos`` begin a batch longer than what remains."""
    remaining = n - pos
    if remaining >= LOG_OVERHEAD:
        base, length = _PREFIX.unpack_from(buf, pos)
        magic = buf[pos + MAGIC_POSITION] if remaining > MAGIC_POSITION else None
        if magic in (0, 1, 2, None) and 0 < length <= MAX_BATCH and base >= 0 \
                and length + LOG_OVERHEAD > remaining:
            return Finding("S001", f"torn tail: batch at offset {base} claims {length + 12} "
                           f"bytes but only {remaining} remain; Kafka's recovery truncates "
                           "here", file, pos, base,
                           details={"claimed": length + LOG_OVERHEAD, "remaining": remaining})
    elif remaining > 0:
        return Finding("S001", f"torn tail: {remaining} bytes, too few for a batch header; "
                       "Kafka's recovery truncates here", file, pos,
                       details={"remaining": remaining})
    return None


def batch_records(batch: Batch | LegacyBatch
                  ) -> tuple[list[Record] | RecordStream, list[Finding]]:
    """A batch's records, and Findings for what kept some of them from being read.  A
    large records section comes as a RecordStream: iterate it, do not index it.

    A records section that cannot be decoded gives F003 (F006 if it cannot be
    decompressed) and no records; whole records in a number other than the header's
    count are returned with an F011.
    """
    file = batch.file
    try:
        records = batch.records_or_stream() if type(batch) is Batch else batch.records()
    except FormatError as e:
        salvaged = None if isinstance(e, CompressionError) or type(batch) is not Batch \
            else batch.salvage_records()
        if salvaged is None:
            code = "F006" if isinstance(e, CompressionError) else "F003"
            pos = batch.position + e.position if e.position is not None else batch.position
            return [], [Finding(code, f"batch at offset {batch.base_offset}: {e.message}",
                                file, pos, batch.base_offset)]
        records = salvaged
    if batch.records_count is not None and len(records) != batch.records_count:
        return records, [Finding("F011", f"batch header says {batch.records_count} "
                                 f"records, {len(records)} decoded", file, batch.position,
                                 batch.base_offset)]
    return records, []


def segment_name_finding(named_base: int | None, first: Batch | LegacyBatch,
                         compacted: bool = False) -> Finding | None:
    """S009 when a segment's name and its first batch disagree on the base offset.

    In a log the cleaner may have compacted (``compacted``: any topic but the metadata
    log), a first batch above the name is normal: a cleaned segment keeps the name of the
    first segment of its group while the records at its start were removed."""
    if named_base is None or first.base_offset == named_base:
        return None
    if compacted and first.base_offset > named_base:
        return None
    return Finding("S009", f"segment is named for offset {named_base} but its first batch "
                   f"starts at {first.base_offset}", first.file, first.position,
                   first.base_offset)


def decoded_records(batch: Batch | LegacyBatch, decode: Callable[[Any], Any],
                    decode_control: Callable[[Any, Any], Any]) -> Iterator[Any]:
    """A batch's ``(batch, record, payload)`` triples, after the Findings that kept some
    of its records from being read: what :func:`scan_records` yields for one batch."""
    records, findings = batch_records(batch)
    yield from findings
    if batch.is_control:
        for r in records:
            yield batch, r, decode_control(r[2], r[3])
    else:
        for r in records:
            yield batch, r, decode(r[3])


_NOTHING_YET = object()
#: The largest base offset a batch can have (a signed 64-bit number).
_LAST_BASE = (1 << 63) - 1


def scan_batches(buf: Any, file: str, *, max_bytes: int | None = None,
                 first_offset: int | None = None, memo: bool = False, runs: bool = False,
                 progress: Progress = QUIET, walk: bool = False, plain: Spans | None = None,
                 ) -> Iterator[Batch | LegacyBatch | Run | Walked | PlainSpan | Finding]:
    """Every batch of a segment-format buffer, and a Finding for every problem, in file
    order.

    With ``memo``, a small single-record batch comes with its record's memo entry (slot
    ``LONE``, see ``formats.batch.remember_small_record``): most records of a KRaft log
    repeat, and a reader that knows this can skip building Record objects.  With
    ``runs`` too, the batches that repeat such a batch come after it as one
    ``formats.runs.Run`` (up to MAX_RUN of them): a reader that has judged the batch has
    judged them all.
    ``max_bytes`` stops reading early (a batch it cuts is no finding); ``first_offset`` is
    the least base offset the first batch may have; ``progress`` hears how far the
    buffer has been read, every :data:`PROGRESS_EVERY` bytes.
    With ``walk`` (and neither ``memo`` nor ``runs``), the intact batches that a scan
    reports nothing of come as ``formats.runs.Walked`` spans instead, walked by header
    and CRC in the compiled core: for a reader that wants only the findings and where
    the log ends.
    With ``plain`` (``formats.spans.Spans``), the stretches of plain batches that
    follow a batch read by the fast path in its epoch come as ``formats.spans.PlainSpan``
    items, walked in one call: for verify's pass over a metadata log, which has nothing
    to say of them but their values.
    """
    return _scan(buf, file, max_bytes, first_offset, memo, None, None, progress,
                 memo and runs, walk and not memo, plain)


def scan_records(buf: Any, file: str, decode: Callable[[Any], Any],
                 decode_control: Callable[[Any, Any], Any], *,
                 max_bytes: int | None = None, first_offset: int | None = None,
                 progress: Progress = QUIET,
                 ) -> Iterator[tuple[Batch | LegacyBatch, Record, Any] | Finding]:
    """A ``(batch, record, payload)`` triple per record of a segment-format buffer, and a
    Finding for every problem: the fastest way to read every record of a log, as one loop.

    ``decode`` turns a data record's value into a payload, ``decode_control`` a control
    record's key and value.  Equal record values in a row are decoded once (the payload
    is shared: treat it as read-only).
    """
    return _scan(buf, file, max_bytes, first_offset, True, decode, decode_control, progress,
                 False)


def read_batches(path: str | Path, findings: list[Finding] | None = None, **options: Any
                 ) -> Iterator[Batch | LegacyBatch | Finding]:
    """:func:`scan_batches` of the file at ``path``; a file that cannot be opened or that
    changes while it is read ends the stream with its S008 Finding.  Given a
    ``findings`` list, the Findings go there and the stream holds batches only."""
    return _read(path, scan_batches, (), options, findings)


def read_records(path: str | Path, decode: Callable[[Any], Any],
                 decode_control: Callable[[Any, Any], Any],
                 findings: list[Finding] | None = None, **options: Any
                 ) -> Iterator[tuple[Batch | LegacyBatch, Record, Any] | Finding]:
    """:func:`scan_records` of the file at ``path``, unreadable files and ``findings`` as
    in :func:`read_batches`."""
    return _read(path, scan_records, (decode, decode_control), options, findings)


def _read(path: str | Path, scanner: Callable[..., Iterator[Any]], args: tuple,
          options: dict[str, Any], findings: list[Finding] | None) -> Iterator[Any]:
    file = str(path)
    try:
        with mapped(path, options.get("progress", QUIET)) as buf:
            items = scanner(buf, file, *args, **options)
            if findings is None:
                yield from items
            else:
                for item in items:
                    if type(item) is Finding:
                        findings.append(item)
                    else:
                        yield item
    except KmetaError as e:
        if findings is None:
            yield e.finding(file)
        else:
            findings.append(e.finding(file))


def _scan(buf: Any, file: str, max_bytes: int | None, first_offset: int | None,
          records: bool, decode: Callable[[Any], Any] | None,
          decode_control: Callable[[Any, Any], Any] | None,
          progress: Progress, runs: bool, walk: bool = False,
          plain: Spans | None = None,
          ) -> Iterator[Batch | LegacyBatch | Run | Walked | PlainSpan | Finding
                        | tuple[Any, Record, Any]]:
    """The one loop behind :func:`scan_batches` and :func:`scan_records`."""
    tell = progress.read
    n = len(buf) if max_bytes is None else min(len(buf), max_bytes)
    cut = n < len(buf)  # --max-bytes stops reading early: a cut batch is not a finding
    pos = 0
    # The lowest base offset the next batch may have (0 when nothing is known yet).
    next_offset = first_offset or 0
    last_epoch = -1
    unpack = HEADER.unpack_from
    new = tuple.__new__
    # The layout's numbers as locals: a global costs a lookup each in the hottest loop.
    overhead, crc_start, header_size = LOG_OVERHEAD, CRC_START, HEADER_SIZE
    least_length = HEADER_SIZE - LOG_OVERHEAD
    codec_mask, control_flag = COMPRESSION_MASK, CONTROL_FLAG
    memo_get = SMALL_RECORDS.get
    run_length = _runs.run_length  # read per scan: the tests swap in the reference
    walker = _runs.walk if walk else None
    spanner = _spans.plain_span if plain is not None else None
    # The epoch of the batch the fast path read last, where a plain span may follow it
    # (None: no such batch just before).
    span_epoch = None
    remember_small = remember_small_record
    small_length = SMALL_BATCH - 12
    last_header = n - HEADER_SIZE
    # Not None: a record's value may be null, and must still be decoded once.
    last_value: Any = _NOTHING_YET
    last_payload: Any = None
    # Pages of a mapped file stay resident (and count in RSS) once read; hand back those
    # behind the cursor every RELEASE_EVERY bytes so a 1 GiB dump stays small.
    release = getattr(buf, "madvise", None)
    released = 0
    release_at = RELEASE_EVERY if release is not None else n + 1
    # ``progress`` hears how far the scan has read every PROGRESS_EVERY, at the same one
    # check per batch as the page release.
    tell_at = PROGRESS_EVERY
    # A SegmentMap holds the file's bytes only up to ``hi``: the next FILL_EVERY bytes are
    # loaded when a header would reach past it (the same one check per batch), a longer
    # batch before its bytes are sliced.  A load that comes up short means the file
    # shrank: ``n`` drops to what was read and the scan ends there with the error.
    load = getattr(buf, "load", None)
    hi = n if load is None else 0
    shrunk = False
    fill_at = n + 1 if hi >= n else hi - HEADER_SIZE + 1
    event_at = min(release_at, tell_at, fill_at)
    # A walk over a SegmentMap reads the file itself, not into the map, while its batches
    # are intact; the map is loaded from the first batch that is not (see below).
    fd = getattr(buf, "fd", None) if walker is not None and load is not None else None
    walk_file = _runs.walk_file
    scratch = bytearray(max(HEADER_SIZE, min(n, WALK_CHUNK))) if fd is not None else None
    while pos < n:
        if fd is not None and pos >= hi and pos <= last_header:
            to, count, after, epoch, high = walk_file(fd, scratch, pos, n, tell_at,
                                                      next_offset, last_epoch)
            if count:
                yield Walked(count, pos, to, high, epoch)
                pos, next_offset, last_epoch = to, after, epoch
                if pos >= tell_at:
                    tell(file, pos)
                    tell_at = pos + PROGRESS_EVERY
                continue
            claimed = _batch_size_at(fd, pos)
            if len(scratch) < claimed <= min(n - pos, WALK_MOST):
                scratch = bytearray(claimed)  # a batch longer than the buffer: read it whole
                continue
            # The batch here needs the scan's own reading: the map is loaded from it on
            # (nothing before ``pos`` is read again).
            hi, released = pos, pos // mmap.PAGESIZE * mmap.PAGESIZE
            release_at = released + RELEASE_EVERY if release is not None else n + 1
            fill_at = hi - HEADER_SIZE + 1
            event_at = min(release_at, tell_at, fill_at)
            fd = None  # one batch read by the map: the rest of the file too
        if pos >= event_at:
            if pos >= fill_at:
                want = min(n, hi + FILL_EVERY)
                hi = load(hi, want)
                if hi < want:
                    shrunk, n, last_header = True, hi, hi - HEADER_SIZE
                fill_at = n + 1 if hi >= n else hi - HEADER_SIZE + 1
            if pos >= release_at:
                chunk = (pos - released) // mmap.PAGESIZE * mmap.PAGESIZE
                release(mmap.MADV_DONTNEED, released, chunk)
                released += chunk
                release_at = released + RELEASE_EVERY
            if pos >= tell_at:
                tell(file, pos)
                tell_at = pos + PROGRESS_EVERY
            event_at = min(release_at, tell_at, fill_at)
            if pos >= n:
                break
        if walker is not None and pos <= last_header:
            # The batches the fast path below would take, a stretch at a time: up to the
            # next event (load, release, progress), which the loop then serves as before.
            to, count, after, epoch, high = walker(buf, pos, hi, event_at, next_offset,
                                                   last_epoch)
            if count:
                yield Walked(count, pos, to, high, epoch)
                pos, next_offset, last_epoch = to, after, epoch
                continue
        # After a batch that ends at the largest offset (or past it: S011) no batch can
        # follow in order, and the spanner's offsets are 64-bit: the full path reads on.
        if span_epoch is not None and pos <= last_header and next_offset <= _LAST_BASE:
            (to, count, records_in, after, values, offsets, positions, newest, last_ts,
             sent) = spanner(buf, pos, hi, event_at, next_offset, span_epoch,
                             plain[1](span_epoch), plain[0], MOST_SECTION, MOST_VALUES,
                             plain[2])
            if count:
                yield PlainSpan(pos, to, count, records_in, next_offset, after, span_epoch,
                                values, offsets, positions, buf, file, newest, last_ts, sent)
                pos, next_offset = to, after
                continue
        if pos <= last_header:
            # Fast path: an intact v2 batch where one is expected.
            fields = unpack(buf, pos)
            (base, length, epoch, magic, crc, attributes, last_delta, base_ts, _,
             _, _, base_seq, count) = fields
            end = pos + overhead + length
            if end > hi and hi < n:  # a batch longer than what is loaded ahead
                want = min(n, end + FILL_EVERY)
                hi = load(hi, want)
                if hi < want:
                    shrunk, n, last_header = True, hi, hi - HEADER_SIZE
                fill_at = n + 1 if hi >= n else hi - HEADER_SIZE + 1
                event_at = min(release_at, tell_at, fill_at)
            if end <= n and length >= least_length and magic == 2 and base >= next_offset:
                raw = buf[pos:end]
                if crc32c(raw[crc_start:]) == crc:
                    decoded = None
                    if records and count == 1 and not attributes & codec_mask and \
                            length <= small_length:
                        # One small record, most often a NoOp heartbeat seen before:
                        # take it from the memo.
                        hit = memo_get(raw[header_size:])
                        if hit is None:
                            hit = remember_small(raw[header_size:])
                        if hit is not False:
                            if decode is not None and not attributes & control_flag:
                                # formats.batch.record_from_memo, inlined: the hottest loop.
                                record = new(Record, (
                                    base + hit[0], base_ts + hit[1], hit[2], hit[3], hit[4],
                                    hit[5], -1 if base_seq < 0 else base_seq + hit[0]))
                                if hit[3] is not last_value:
                                    last_value = hit[3]
                                    last_payload = decode(last_value)
                                yield new(Batch, fields + (True, pos, raw, file, hit)), \
                                    record, last_payload
                                next_offset = base + last_delta + 1
                                if epoch > last_epoch:
                                    last_epoch = epoch
                                pos = end
                                continue
                            decoded = hit
                    batch = new(Batch, fields + (True, pos, raw, file, decoded))
                    if decode is None:
                        yield batch
                    else:
                        yield from decoded_records(batch, decode, decode_control)
                    if spanner is not None:
                        span_epoch = epoch
                    next_offset = base + last_delta + 1
                    if epoch > last_epoch:
                        last_epoch = epoch
                    if runs and decoded is not None:
                        k = run_length(buf, pos, hi if hi < n else n, MAX_RUN)
                        if k:
                            size = end - pos
                            pos = end + k * size
                            yield new(Run, (batch, k, size, buf[end:pos]))
                            next_offset += k * (last_delta + 1)
                            continue
                    pos = end
                    continue
        span_epoch = None  # what follows a batch read here is read here too
        if hi < n:  # damage and tails are judged on all the bytes that remain
            hi = load(hi, n)
            if hi < n:
                shrunk, n, last_header = True, hi, hi - HEADER_SIZE
            fill_at = n + 1
            event_at = min(release_at, tell_at, fill_at)
        if shrunk:  # what looks damaged here may be the cut the shrinking made
            raise buf.shrank(n)
        if n - pos < LOG_OVERHEAD + 5:
            if not cut:
                yield _tail_finding(buf, pos, n, file)
            return
        base, length = _PREFIX.unpack_from(buf, pos)
        magic = buf[pos + MAGIC_POSITION]
        end = pos + LOG_OVERHEAD + length
        batch: Batch | LegacyBatch | None = None
        problem = "impossible batch header"
        if end > n and cut:
            return
        if magic == 2 and length >= HEADER_SIZE - LOG_OVERHEAD and end <= n and base >= 0:
            fields = HEADER.unpack_from(buf, pos)
            raw = buf[pos:end]
            batch = Batch(fields, raw, file, pos, crc32c(raw[CRC_START:]) == fields[CRC])
        elif magic in (0, 1) and length >= MIN_MESSAGE and end <= n and base >= 0:
            try:
                batch = LegacyBatch(buf, pos, file)
            except FormatError as e:
                problem = e.message
        elif end > n and magic in (0, 1, 2) and 0 < length <= MAX_BATCH and base >= 0:
            problem = "torn batch"

        if batch is None:
            resume = _resync(buf, pos, n, next_offset, last_epoch)
            if resume is None:
                yield _tail_finding(buf, pos, n, file)
                return
            if problem == "impossible batch header":
                problem += f" (magic {magic}, length {length})"
            yield _damage(file, pos, resume, problem)
            pos = resume
            continue

        expected = next_offset
        if not batch.crc_valid:
            what = "batch" if batch.magic == 2 else f"legacy message (magic {batch.magic})"
            yield Finding("F001" if batch.magic == 2 else "F009",
                          f"{what} at offset {batch.base_offset} has a bad CRC "
                          f"(stored {batch.crc}); its contents cannot be trusted",
                          file, pos, batch.base_offset, details={"size": batch.size})
        if batch.base_offset < expected:
            yield Finding("S005", f"batch at offset {batch.base_offset} starts before the "
                          f"expected offset {expected}", file, pos, batch.base_offset)
        if decode is None:
            yield batch
        else:
            yield from decoded_records(batch, decode, decode_control)
        next_offset = batch.last_offset + 1
        if batch.magic == 2 and batch.leader_epoch > last_epoch:
            last_epoch = batch.leader_epoch
        if batch.crc_valid or end >= n or _plausible_v2(buf, end, n, None, -1) or \
                _plausible_legacy(buf, end, n):
            pos = end
            continue
        # A bad CRC and nothing valid where its length points: the length itself may be
        # corrupt, so look for the next intact batch from just after this one's start.
        resume = _resync(buf, pos, n, expected, last_epoch)
        if resume is None:
            yield _tail_finding(buf, end, n, file)
            return
        start = end if resume > end else pos
        yield _damage(file, start, resume, "batch with a bad CRC and an untrustworthy length")
        pos = resume
    if shrunk:
        raise buf.shrank(n)


def _batch_size_at(fd: int, pos: int) -> int:
    """The bytes the batch header at ``pos`` of the file claims (0 if none can be read)."""
    try:
        head = os.pread(fd, LOG_OVERHEAD, pos)
    except OSError:
        return 0
    return _PREFIX.unpack(head)[1] + LOG_OVERHEAD if len(head) == LOG_OVERHEAD else 0


def _damage(file: str, start: int, resume: int, reason: str) -> Finding:
    return Finding("S003", f"damaged bytes {start}..{resume - 1} ({resume - start} bytes: "
                   f"{reason}); resumed at the next valid batch. Kafka's recovery would "
                   f"truncate the segment at byte {start}", file, start,
                   details={"start": start, "end": resume, "bytes": resume - start})
