"""``kmeta dump``: every batch and record of every file, decoded, as a stream of events.

The op yields events in file order; renderers turn them into text or JSON Lines.  It
never prints and never raises for bad data: problems are yielded as Findings where they
are met, so the reader sees them next to the bytes they concern.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, NamedTuple

from kmeta.errors import UsageError
from kmeta.findings import Finding
from kmeta.formats import payload as payload_module
from kmeta.formats.batch import ATTRIBUTES, CONTROL_FLAG, LONE, Batch, Record, RecordStream
from kmeta.formats.decoders import default_decoder, record_decoder
from kmeta.formats.legacy import LegacyBatch
from kmeta.formats.payload import Payload, decode_control, decode_metadata, metadata_payload
from kmeta.formats.runs import Expandable, Run
from kmeta.ops.redact import (
    SECRET_API_KEYS,
    SECRET_TYPES,
    Masked,
    batch_masks,
    hide_secrets,
    holds_secrets,
    secret_spans,
)
from kmeta.storage.discover import METADATA_TOPIC, LogFile, discover
from kmeta.storage.files import load_checked
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.regular import os_error_finding
from kmeta.storage.segments import batch_records, read_batches, segment_name_finding


@dataclass
class DumpOptions:
    decoder: str | None = None  # None: chosen per file
    from_offset: int | None = None
    to_offset: int | None = None
    types: frozenset[str] = frozenset()
    batches_only: bool = False
    skip_control: bool = False
    max_bytes: int | None = None
    show_hex: bool = False
    show_secrets: bool = False
    #: Called with every Finding the dump yields (also those inside a BatchDump), so a
    #: caller can count them without inspecting the whole stream.
    on_finding: Callable[[Finding], None] | None = None
    #: With ``types``: how many records matched (a filter that matched nothing is said).
    matched: int = 0
    #: Batches that repeat a OneRecord's batch come as one RecordRun (the renderers write
    #: them from one template); else each is its own OneRecord.
    runs: bool = False
    #: hears of the dump's discovery and reads
    progress: Progress = QUIET

    def note(self, finding: Finding) -> Finding:
        if self.on_finding is not None:
            self.on_finding(finding)
        return finding


@dataclass
class FileEvent:
    """The start of one file: what it is and, for small files, its decoded content."""

    file: str
    file_kind: str
    size: int
    decoder: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    content: Any = None


class BatchDump(NamedTuple):
    """One batch and what was decoded from it, in order.

    ``entries`` holds ``(record, payload)`` pairs and, just before the record they concern,
    the Findings met while decoding; ``findings`` lists those Findings again so callers
    that only count them need not walk the entries.  Payload data is shared between
    identical records: treat it as read-only.
    """

    batch: Batch | LegacyBatch
    entries: list[tuple[Record, Payload] | Finding]
    findings: tuple[Finding, ...] = ()
    #: With --hex and without --show-secrets: the bytes of the batch its hex masks.
    masked: tuple[Masked, ...] = ()

    def records(self) -> Iterator[tuple[Record, Payload]]:
        for e in self.entries:
            if type(e) is tuple:
                yield e


class OneRecord(NamedTuple):
    """A batch of exactly one record, decoded cleanly, nothing to redact: most batches of a
    KRaft log.  Same reading interface as :class:`BatchDump`, built with less work."""

    batch: Batch
    payload: Payload

    @property
    def entries(self) -> list[tuple[Record, Payload]]:
        return [(self.batch.records()[0], self.payload)]

    @property
    def findings(self) -> tuple[Finding, ...]:
        return ()

    @property
    def masked(self) -> tuple[Masked, ...]:
        return ()

    def records(self) -> Iterator[tuple[Record, Payload]]:
        yield self.batch.records()[0], self.payload


class RecordRun(NamedTuple):
    """Batches that repeat the batch of the OneRecord just before them (a
    ``formats.runs.Run``): each holds the same one record, whose payload is ``payload``."""

    run: Run
    payload: Payload

    def one_records(self) -> Iterator[OneRecord]:
        """The run as the OneRecords it stands for."""
        payload = self.payload
        for b in self.run.batches():
            yield OneRecord(b, payload)


class BatchMore(NamedTuple):
    """More entries of the batch of the BatchDump before it: a batch with a large records
    section is dumped a piece at a time, so that its records are never all in memory."""

    batch: Batch
    entries: list[tuple[Record, Payload] | Finding]
    findings: tuple[Finding, ...] = ()


#: Records per BatchDump or BatchMore of a large batch.
PIECE_RECORDS = 4096

Event = FileEvent | BatchDump | BatchMore | OneRecord | RecordRun | Finding


def normalise_type(name: str) -> str:
    """Accept ``PARTITION_RECORD``, ``PartitionRecord`` or ``partition`` for --type."""
    from kmeta.formats.schema import to_upper_snake

    n = name.strip()
    if any(c.islower() for c in n) and any(c.isupper() for c in n):
        n = to_upper_snake(n)
    n = n.upper().replace("-", "_")
    return n


def type_names() -> list[str]:
    """Every name ``--type`` accepts, in Kafka's spelling: metadata record types (also
    without ``_RECORD``), control record types, RAW (other topics) and UNKNOWN."""
    from kmeta.formats.control_schemas import CONTROL_TYPE_NAMES, UNKNOWN_CONTROL_TYPE
    from kmeta.formats.metadata_schemas import METADATA_MESSAGES

    names = [m.type_name for m in sorted(METADATA_MESSAGES.values(), key=lambda m: m.api_key)]
    return [*names, *(n.removesuffix("_RECORD") for n in names),
            *CONTROL_TYPE_NAMES.values(), "RAW", UNKNOWN_CONTROL_TYPE]


def parse_types(names: list[str]) -> frozenset[str]:
    """The ``--type`` values, normalised; a name no record can have is a usage error that
    lists the close matches (a typo would otherwise filter out everything, silently)."""
    import difflib

    known = type_names()
    wanted = set()
    for name in names:
        n = normalise_type(name)
        if n not in known:
            close = difflib.get_close_matches(n, known, n=3, cutoff=0.6)
            raise UsageError(f"unknown record type {name!r}",
                             hint=f"did you mean {' or '.join(close)}?" if close else
                             "e.g. PARTITION_RECORD, PARTITION_CHANGE, LEADER_CHANGE; "
                             "the shell completion lists them all")
        wanted.add(n)
    return frozenset(wanted)


def _type_matches(wanted: frozenset[str], type_name: str) -> bool:
    return type_name in wanted or type_name.removesuffix("_RECORD") in wanted


def decoder_for(f: LogFile, forced: str | None) -> str:
    return forced or default_decoder(f.topic, f.is_metadata)


def dump(paths: Iterable[str | os.PathLike[str]], opts: DumpOptions) -> Iterator[Event]:
    """All events for every file under ``paths``, in discovery order (segments by offset).

    Built from ``itertools.chain`` rather than nested generators: every event of a
    multi-gigabyte dump would otherwise pass through two more Python frames.
    """
    discovery = discover(paths, progress=opts.progress)
    return chain(map(opts.note, discovery.findings),
                 chain.from_iterable(dump_file(f, opts) for f in discovery.all_files()))


def dump_file(f: LogFile, opts: DumpOptions) -> Iterator[Event]:
    """The events of one file: a FileEvent, then its batches or content and findings."""
    path = str(f.path)
    try:
        size = f.path.stat().st_size
    except OSError as e:
        return iter([opts.note(os_error_finding(path, e))])
    kind = f.kind
    info = kind.named()
    if not f.is_batches:
        if opts.types:  # only records are asked for: small files hold none
            return iter(())
        content, problem = load_checked(f)
        if problem is not None:
            return iter([FileEvent(path, kind.kind, size, None, info), opts.note(problem)])
        return iter([FileEvent(path, kind.kind, size, None, info, content)])
    decoder = decoder_for(f, opts.decoder)
    head = FileEvent(path, kind.kind, size, decoder, info)
    if size == 0:
        what = "empty segment: no batches (as a segment is right after a roll)" \
            if kind.kind == "segment" else "empty file: no batches"
        return iter([head, opts.note(Finding("S006", what, path, 0))])
    segment_base = kind.base_offset if kind.kind == "segment" else None
    compacted = f.topic is not None and f.topic != METADATA_TOPIC
    metadata = f.is_metadata or decoder == "metadata"
    runs = opts.runs and decoder == "metadata" and opts.from_offset is None and \
        opts.to_offset is None and not (opts.types or opts.skip_control or opts.batches_only
                                        or opts.show_hex)
    items: Any = read_batches(f.path, max_bytes=opts.max_bytes, memo=not opts.batches_only,
                              runs=runs, progress=opts.progress)
    if runs:
        items = Expandable(items)
    return chain((head,), _dump_batches(items, path, decoder, opts, segment_base, compacted,
                                        metadata))


def dump_batches(items: Iterable[Batch | LegacyBatch | Finding], f: LogFile,
                 opts: DumpOptions) -> Iterator[Event]:
    """The events of batches a caller read from ``f`` itself, as :func:`dump_file` makes
    them (no FileEvent, no check of the segment's name): for a reader that knows which
    batches it wants (``kmeta.ops.replay.timeline``'s records of an offset range)."""
    decoder = decoder_for(f, opts.decoder)
    return _dump_batches(iter(items), str(f.path), decoder, opts, None, False,
                         f.is_metadata or decoder == "metadata")


def _dump_batches(items: Iterator[Batch | LegacyBatch | Finding], path: str, decoder: str,
                  opts: DumpOptions, segment_base: int | None, compacted: bool,
                  metadata: bool) -> Iterator[Event]:
    """``metadata``: the file holds metadata records (a value that does not decode is then
    masked whole: see ``redact.secret_spans``)."""
    lo, hi = opts.from_offset, opts.to_offset
    decode = decode_metadata if decoder == "metadata" else None
    # No filter, metadata decoder: the common case gets a lean path below.
    plain = decode is not None and lo is None and hi is None and not opts.types \
        and not opts.skip_control and not opts.batches_only
    secret_types = frozenset() if opts.show_secrets else SECRET_TYPES
    new = tuple.__new__
    lone_at, attributes_at, control_flag = LONE, ATTRIBUTES, CONTROL_FLAG
    last_value: Any = None
    last_payload: Any = None
    plain_payload = False
    first = segment_base is not None
    for item in items:
        if type(item) is Finding:
            yield opts.note(item)
            continue
        if type(item) is Run:
            # Only asked for in the plain case: one record repeated, which the OneRecord
            # just before (its batch being the run's ref) showed to be plain.
            ref = item[0]
            if ref[lone_at][3] is last_value and plain_payload and \
                    not ref[attributes_at] & control_flag:
                yield new(RecordRun, (item, last_payload))
            else:
                items.expand(item)
            continue
        if first:
            first = False
            misnamed = segment_name_finding(segment_base, item, compacted)
            if misnamed is not None:
                yield opts.note(misnamed)
        if plain and type(item) is Batch and item[lone_at] is not None \
                and not item[attributes_at] & control_flag:
            # A lone record the scan took from its memo (most often a NoOp heartbeat,
            # whose value is then the very bytes object of the last one).
            value = item[lone_at][3]
            if value is not last_value:
                last_value = value
                last_payload = decode(last_value)
                plain_payload = last_payload.finding is None and \
                    last_payload.type not in secret_types
            if plain_payload:
                yield new(OneRecord, (item, last_payload))
                continue
        if (hi is not None and item.base_offset > hi) or \
                (lo is not None and item.last_offset < lo) or \
                (opts.skip_control and item.is_control):
            continue
        if opts.batches_only:
            yield BatchDump(item, [], (), _masks(item, opts, metadata))
            continue
        for dumped in _batch_dumps(item, path, decoder, opts, metadata):
            for finding in dumped.findings:
                opts.note(finding)
            yield dumped


def _masks(batch: Batch | LegacyBatch, opts: DumpOptions, metadata: bool
           ) -> tuple[Masked, ...]:
    """What the batch's hex must mask (only asked when its hex is shown)."""
    if not opts.show_hex or opts.show_secrets:
        return ()
    return batch_masks(batch, metadata)


def _batch_dumps(batch: Batch | LegacyBatch, path: str, decoder: str,
                 opts: DumpOptions, metadata: bool) -> Iterator[BatchDump | BatchMore]:
    """One batch's records decoded into entries: one BatchDump, or none if filters leave
    nothing of it; a large records section as a BatchDump and BatchMores after it."""
    records, findings = batch_records(batch)
    if type(records) is not RecordStream:
        dumped = _batch_dump(batch, records, findings, path, decoder, opts, metadata)
        if dumped is not None:
            masked = _masks(batch, opts, metadata)
            # most batches mask nothing: the BatchDump as made (a _replace is a Python call)
            yield dumped._replace(masked=masked) if masked else dumped
        return
    first = True
    for piece in _pieces(records):
        dumped = _batch_dump(batch, piece, findings if first else [], path, decoder, opts,
                             metadata)
        if dumped is None or (not first and not dumped.entries):
            continue  # (a piece the offsets filter empties says nothing: no empty line)
        yield dumped._replace(masked=_masks(batch, opts, metadata)) if first \
            else BatchMore(*dumped[:3])
        first = False


def _pieces(records: Iterable[Record]) -> Iterator[list[Record]]:
    piece: list[Record] = []
    for r in records:
        piece.append(r)
        if len(piece) == PIECE_RECORDS:
            yield piece
            piece = []
    if piece:
        yield piece


def _batch_dump(batch: Batch | LegacyBatch, records: Iterable[Record],
                findings: list[Finding], path: str, decoder: str,
                opts: DumpOptions, metadata: bool) -> BatchDump | None:
    """Decode records of one batch into entries; None if filters leave nothing of it."""
    lo, hi = opts.from_offset, opts.to_offset
    decode = record_decoder(decoder)
    findings = list(findings)
    entries: list[tuple[Record, Payload] | Finding] = list(findings)
    append = entries.append
    control = batch.is_control
    secret_keys = SECRET_API_KEYS
    opaque = decoder != "metadata"  # a metadata value's payload does not say if it decodes
    # The metadata decoder in the compiled core (decode_metadata's payloads, its memo).
    fast = metadata_payload() if not (opaque or control) else None
    memo, spec = payload_module._DECODED, payload_module.DECODER
    # Most records of a metadata log: no filter, decoded cleanly, of a type framed as
    # one without secrets; each is its (record, payload) entry as it stands.
    quick = not (opaque or control or opts.types or opts.show_secrets)
    for r in records:
        if (lo is not None and r.offset < lo) or (hi is not None and r.offset > hi):
            continue
        v = r[3]
        if fast is not None:
            payload = fast(v, memo, spec)
        else:
            payload = decode_control(r[2], v) if control else decode(r[2], v)
        if quick and payload[3] is None and v is not None and len(v) >= 3 and v[0] == 1 \
                and v[1] < 0x80 and v[1] not in secret_keys:
            append((r, payload))
            continue
        if opts.types and not _type_matches(opts.types, payload.type):
            continue
        if payload.finding:
            code, message = payload.finding
            findings.append(Finding(code, f"record at offset {r.offset}: {message}", path,
                                    batch.position, r.offset))
            entries.append(findings[-1])
        if not opts.show_secrets and not control:
            v = r.value
            # Most values are framed as a type without secrets, told by two bytes; in a
            # metadata log a record that does not decode is masked too (secret_spans).
            if v is None or (len(v) >= 3 and v[0] == 1 and v[1] < 0x80
                             and v[1] not in secret_keys
                             and not (metadata and (payload.finding or opaque))):
                masks: tuple[Masked, ...] = ()
            # decoded here: a secret type without a secret value (most ConfigRecords)
            elif not opaque and payload.finding is None and not holds_secrets(payload):
                masks = ()
            else:
                masks = secret_spans(v, metadata)
            if masks or payload.type in SECRET_TYPES and holds_secrets(payload):
                payload = hide_secrets(payload, v, masks, decoder)
        entries.append((r, payload))
    if opts.types:
        if not entries:
            return None
        opts.matched += sum(1 for e in entries if type(e) is tuple)
    return BatchDump(batch, entries, tuple(findings))
