"""The cluster image replayed from a snapshot and the log, with the problems met on the way:
the one replay ``verify``, ``image``, ``history``, ``diff``, ``snapshot`` and ``repair`` use.

* :class:`Replay` applies metadata records in offset order to an image that starts empty at
  offset 0 or from a snapshot, and turns what the image finds (a leader that is not a
  registered broker …) and records newer than the log's ``metadata.version`` allows into
  Findings.  Given the live snapshots that end inside the log, it compares the image with
  each as it reaches the snapshot's end offset (V040).
* :func:`snapshot_image` reads a snapshot (or ``bootstrap.checkpoint``) into an image.
* :func:`replay_log` applies a partition's log records between two offsets.
* :func:`plan_replay` picks where a replay of a partition's log starts.

Nothing here prints or exits.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from kmeta.core.image import (
    METADATA_VERSION,
    PROBLEM_CODES,
    ImageProblem,
    MetadataImage,
    diff_images,
)
from kmeta.core.image_quiet import apply_quiet
from kmeta.core.lifecycle import STATE_RECORDS, count_moves
from kmeta.core.versions import LEVEL_NAMES, RECORD_VERSIONS, required_level
from kmeta.findings import NOT_READ, Finding
from kmeta.formats import payload as payload_module
from kmeta.formats.batch import BASE_OFFSET, CRC_VALID, LEADER_EPOCH, LONE, MAX_TIMESTAMP, Batch
from kmeta.formats.compiled import CORE
from kmeta.formats.payload import decode_control, decode_metadata, metadata_message
from kmeta.formats.runs import Expandable, Run
from kmeta.ops.replica import SnapshotFindings
from kmeta.storage.discover import LogFile, PartitionDir, segments_from
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.segments import batch_records, read_batches, read_records

_NEEDS: dict[tuple[str, int | None], int | None] = {}
_UNKNOWN = object()


class Replay:
    """The cluster image as metadata records are applied in offset order.

    ``start`` is the image at ``start_offset`` (empty at 0, else loaded from a snapshot);
    ``checks`` are the live snapshots ending inside the log, each compared by digest when
    the replay reaches its end offset.  ``log``: the records come from a log, where each
    must not need a metadata.version above the one in force (V120); a snapshot's records
    are the image written at the versions its writer chose.
    """

    def __init__(self, start: MetadataImage, start_offset: int = 0,
                 checks: list[tuple[int, LogFile]] | None = None,
                 seen: SnapshotFindings | None = None, *, log: bool = True,
                 progress: Progress = QUIET):
        self.log = log
        #: told of the snapshots read to compare
        self.progress = progress
        #: what hears the replay besides the image (a :class:`ReplayWatch`), or None: the
        #: pass that drives the replay tells it of batches and control records too
        self.watch: Any = None
        self.seen: SnapshotFindings = seen if seen is not None else {}
        self.image = start
        self.start_offset = start_offset
        self.checks = sorted(checks or [], key=lambda c: c[0])
        self.next_check = self.checks[0][0] if self.checks else None

    def apply(self, payload: Any, offset: int, path: str, position: int,
              value: bytes | None = None, timestamp: int | None = None) -> list[Finding]:
        """Apply one decoded metadata record; the problems it raised, as Findings at
        ``path`` and ``position`` (see :meth:`problems`).  ``value``: the bytes
        ``payload`` was decoded from, for a replay that decodes them itself in another
        process (:class:`kmeta.ops.replay.process.ForkedReplay`); ``timestamp``: the
        record's, for the watch."""
        watch = self.watch
        if watch is not None and offset >= self.start_offset and not payload.finding:
            watch.before(payload.type, payload.data)
            found = self.problems(payload, offset)
            watch.after(payload.type, payload.data, offset, timestamp)
        else:
            found = self.problems(payload, offset)
        return [Finding(p[0], p[1], path, position, p[2]) for p in found] if found else found

    def batch(self, offset: int, last_offset: int, epoch: int, timestamp: int) -> None:
        """A batch begins whose records (or control records) follow: the watch hears of
        it.  Called only where there is a watch."""
        if last_offset >= self.start_offset:
            self.watch.batch(offset, epoch, timestamp)

    def control(self, offset: int, epoch: int, key: bytes | None, value: bytes | None
                ) -> None:
        """A control record of the batch begun: the watch hears of it."""
        if offset >= self.start_offset:
            self.watch.control(epoch, decode_control(key, value))

    def end(self, offset: int, timestamp: int) -> None:
        """The last batch the pass read: the watch hears where the log ends."""
        self.watch.end(offset, timestamp)

    def problems(self, payload: Any, offset: int) -> list[ImageProblem]:
        """Apply one decoded metadata record; the problems it raised, each with the offset
        it is about.  A record below the start, or one that did not decode (its finding
        is the reader's), is passed over."""
        if offset < self.start_offset or payload.finding:
            return []
        type_name, version, data = payload[:3]
        out = None
        if self.log:
            # once per record of a log: the level each (type, version) needs, memoised
            key = (type_name, version)
            need = _NEEDS.get(key, _UNKNOWN)
            if need is _UNKNOWN:
                need = _NEEDS[key] = required_level(type_name, version)
            if need is not None:
                level = self.image.metadata_version
                if level is not None and level < need:
                    out = [ImageProblem(
                        "V120", f"{type_name} v{version} needs metadata.version "
                        f"{LEVEL_NAMES.get(need, need)} (level {need}) but the log is at "
                        f"level {level}", offset)]
        problems = self.image.apply(type_name, version, data, offset)
        if problems:
            # apply is given the offset: a problem without one is about this record
            problems = [p if p.offset is not None else p._replace(offset=offset)
                        for p in problems]
            if out is not None:
                out += problems
                return out
        return problems if out is None else out

    def apply_quiet(self, values: list[bytes | None], offsets: list[int], i: int = 0,
                    skip_noops: bool = True, whole: bool = False) -> tuple[int, Any]:
        """Apply, from ``values[i]`` on, the records that raise no problem the quick way
        (see :func:`apply_changes_py`; NoOps passed over when ``skip_noops``); the index of
        the first other record and its payload, for :meth:`problems` (``len(values)`` and
        None when there is none).  Inside a metadata transaction, or with a watch that
        does not take the records applied in bulk (``applied``: see
        :func:`apply_changes_py`), every record is another; a watch that does hears them
        after the call; ``whole``: ``values`` are all of a batch's records, so that the
        moves of a batch that holds no state change need not be counted."""
        image = self.image
        watch = self.watch
        applied = None if watch is None else getattr(watch, "applied", None)
        if (watch is not None and applied is None) or image._txn is not None:
            return (i, decode_metadata(values[i])) if i < len(values) else (len(values), None)
        # image.metadata_version without the property's call: once per record a long log
        # sends that the quick way does not take
        level = image.features.get(METADATA_VERSION) if self.log else None
        blocked = _BLOCKED.get(level)
        if blocked is None:
            blocked = _BLOCKED[level] = frozenset(
                metadata_message(t).api_key * 256 + v
                for t in _QUIET for _, v in RECORD_VERSIONS[t]
                if level is not None and (need := required_level(t, v)) is not None
                and level < need)
        moves: list[Any] | None = None if applied is None else \
            [None, {}, _MOVES_MATTER if whole else -1]
        if _compiled_changes is not None:
            out = _compiled_changes(values, offsets, i, image, self.start_offset, blocked,
                                    skip_noops, payload_module._DECODED,
                                    payload_module.DECODER, moves)
        else:
            out = apply_changes_py(values, offsets, i, image, self.start_offset, blocked,
                                   skip_noops, moves)
        if moves is not None and moves[0] is not None:
            applied(moves)  # type: ignore[misc]
        return out

    def reach(self, offset: int) -> Iterator[Finding]:
        """Compare with every snapshot that ends at or before ``offset``."""
        while self.next_check is not None and self.next_check <= offset:
            end, snap = self.checks.pop(0)
            self.next_check = self.checks[0][0] if self.checks else None
            if end < self.start_offset:
                continue
            yield from _compare(self.image, end, snap, self.seen, self.progress)


#: The record types :func:`kmeta.core.image_quiet.apply_quiet` takes.
_QUIET = ("PARTITION_CHANGE_RECORD", "PARTITION_RECORD")
#: Their versions newer than each metadata.version allows (V120), as
#: ``apiKey * 256 + version``.
_BLOCKED: dict[int | None, frozenset[int]] = {}


def apply_changes_py(values: list[bytes | None], offsets: list[int], i: int,
                     image: MetadataImage, start: int, blocked: frozenset[int],
                     skip_noops: bool, applied: list[Any] | None = None) -> tuple[int, Any]:
    """From ``values[i]`` on, each record decoded and, while it needs no word of
    :meth:`Replay.problems`, taken: a NoOp passed over (when ``skip_noops``), a
    PartitionChangeRecord or PartitionRecord at or after ``start``, not ``blocked``
    (``apiKey * 256 + version``), that :func:`~kmeta.core.image_quiet.apply_quiet` applies.  The
    index of the first other record and its payload, the image untouched by it;
    ``(len(values), None)`` when there is none.  ``applied``: given, [the offset of the
    last record taken, node -> moves, gate], each PartitionChangeRecord taken counted
    into the moves (:func:`~kmeta.core.lifecycle.count_moves`) for a watch, where
    :func:`_moves_matter` says ``values`` (a batch's) hold a record they count for.  The
    reference of the compiled core's ``apply_changes`` (tests/test_image_fast.py,
    tests/fuzz/test_properties.py)."""
    counting = applied is not None and _moves_matter(values, applied[2])
    for i in range(i, len(values)):  # noqa: B020 - from the given index on
        payload = decode_metadata(values[i])
        if payload.finding:
            return i, payload
        if payload.type == "NO_OP_RECORD":
            if skip_noops:
                continue
            return i, payload
        api_key, version = payload.api_key, payload.version
        if payload.type not in _QUIET or offsets[i] < start or type(api_key) is not int \
                or type(version) is not int or api_key * 256 + version in blocked \
                or not apply_quiet(image, payload.type, payload.data):
            return i, payload
        if applied is not None:
            applied[0] = offsets[i]
            if counting and payload.type == _QUIET[0]:
                count_moves(applied[1], *image.changed_partition)
    return len(values), None


def _moves_matter(values: list[bytes | None], gate: int) -> bool:
    """Whether a batch's values hold a record whose api key is in ``gate`` (a bit per
    key below 64), or one the gate cannot judge: only a state change in its batch
    takes a partition change's moves (Lifecycles drops them at the next batch)."""
    for value in values:
        if type(value) is not bytes or len(value) < 2:
            return True
        key = value[1]
        if key >= 64 or (gate >> key) & 1:
            return True
    return False


#: The api keys of the records whose batches' partition moves a watch takes: a broker's
#: or a controller's registration, fence or unfence (kmeta.core.lifecycle.STATE_RECORDS).
_MOVES_MATTER = sum(1 << metadata_message(t).api_key for t in STATE_RECORDS)

#: The compiled twin of apply_changes_py (formats.compiled), or None.
_compiled_changes = CORE.apply_changes if CORE is not None else None


def _compare(image: MetadataImage, end: int, snap: LogFile,
             seen: SnapshotFindings, progress: Progress) -> Iterator[Finding]:
    snapshot, findings = read_snapshot(snap, seen, progress)
    if not usable(findings):
        return  # the snapshot's own findings are reported by the snapshot checks
    if image.in_transaction:
        yield Finding("V040", f"the log is inside a metadata transaction at offset {end}, "
                      "where this snapshot ends", str(snap.path), offset=end)
        return
    if snapshot.digest() != image.digest():
        diff = diff_images(image, snapshot)
        yield Finding("V040", f"the image replayed from the log up to offset {end} differs "
                      f"from this snapshot in {len(diff)} place(s), first: {diff[0]}",
                      str(snap.path), offset=end, details={"diff": diff[:50]})


def snapshot_image(f: LogFile, progress: Progress = QUIET
                   ) -> tuple[MetadataImage, list[Finding]]:
    """The image a snapshot (or bootstrap.checkpoint) holds, and every problem met in one
    read: damaged batches, records that do not decode, a first record that is not a
    SnapshotHeader or a last that is not a SnapshotFooter (V021), and image problems."""
    replay = Replay(MetadataImage.empty(), log=False)
    findings: list[Finding] = []
    path = str(f.path)
    first: tuple[Any, Any, str] | None = None
    last: tuple[Any, Any, str] | None = None
    for item in read_records(f.path, decode_metadata, decode_control, progress=progress):
        if type(item) is Finding:
            findings.append(item)
            if item.code in NOT_READ:
                return replay.image, findings
            continue
        batch, r, payload = item
        last = (batch, r, payload.type)
        if first is None:
            first = last
        if batch.is_control:
            continue
        if payload.finding:
            findings.append(Finding(payload.finding[0], payload.finding[1], path,
                                    batch.position, r.offset))
            continue
        findings += replay.apply(payload, r.offset, path, batch.position)
    if first is None and not findings and _size(f) == 0:
        return replay.image, [Finding("V021", "empty snapshot file", path, 0)]
    for end, want, where in ((first, "SNAPSHOT_HEADER", "first"),
                             (last, "SNAPSHOT_FOOTER", "last")):
        if end is None:
            findings.append(Finding("V021", f"snapshot holds no records (no {want})", path, 0))
            break
        batch, record, got = end
        if got != want:
            findings.append(Finding("V021", f"the {where} record is {got}, not {want}", path,
                                    batch.position, record.offset))
    return replay.image, findings


def _size(f: LogFile) -> int | None:
    try:
        return f.path.stat().st_size
    except OSError:
        return None


def usable(findings: list[Finding]) -> bool:
    """Whether a snapshot read with these findings holds a trustworthy image: problems of
    the image itself (a leader outside the ISR …) are the cluster's, not the file's."""
    return all(f.code in PROBLEM_CODES for f in findings)


def read_snapshot(f: LogFile, seen: SnapshotFindings, progress: Progress = QUIET
                  ) -> tuple[MetadataImage, list[Finding]]:
    """``snapshot_image``, remembering the findings in ``seen``."""
    image, findings = snapshot_image(f, progress)
    seen[str(f.path)] = findings
    return image, findings


def snapshot_findings(f: LogFile, seen: SnapshotFindings, progress: Progress = QUIET
                      ) -> list[Finding]:
    """What reading ``f`` finds, read now unless ``seen`` holds it already."""
    found = seen.get(str(f.path))
    return read_snapshot(f, seen, progress)[1] if found is None else found


def plan_replay(part: PartitionDir, first_offset: int | None,
                seen: SnapshotFindings, progress: Progress = QUIET) -> Replay | None:
    """Where the replay of a partition's log that starts at ``first_offset`` starts, and
    the snapshots it will be compared with; None when nothing can start it."""
    # by end offset, then epoch: two snapshots may end at one offset (different epochs)
    snaps = sorted(((f.kind.base_offset, f) for f in part.snapshots),
                   key=lambda s: (s[0], s[1].kind.epoch or 0))
    if first_offset is None:
        return None
    if first_offset == 0:
        return Replay(MetadataImage.empty(), 0, [s for s in snaps if s[0] > 0], seen,
                      progress=progress)
    starts = [s for s in snaps if s[0] >= first_offset]
    if not starts:
        return None  # nothing to start from: V026 says so
    end, snap = starts[0]
    image, findings = read_snapshot(snap, seen, progress)
    if not usable(findings):
        return None
    return Replay(image, end, starts[1:], seen, progress=progress)


class ReplayWatch(Protocol):
    """What a caller of :func:`replay_log` hears besides the image: the batches (all but
    the NoOp heartbeats that repeat the one before in its epoch), every control record,
    each metadata record around its application to the image, and where the log ends."""

    def batch(self, offset: int, epoch: int, timestamp: int) -> None: ...

    def end(self, offset: int, timestamp: int) -> None: ...

    def control(self, epoch: int, payload: Any) -> None: ...

    def before(self, type_name: str, data: Any) -> None: ...

    def after(self, type_name: str, data: Any, offset: int, timestamp: int) -> None: ...


def _noop_alone(items: list) -> bool:
    """Whether a batch's records are one NoOp (its decoding is memoised)."""
    return len(items) == 1 and decode_metadata(items[0].value).type == "NO_OP_RECORD"


def replay_log(part: PartitionDir, replay: Replay, stop: int, findings: list[Finding],
               watch: ReplayWatch | None = None, progress: Progress = QUIET) -> int:
    """Apply the records of ``part``'s log from the replay's start up to, not including,
    ``stop``; what could not be read and what the records raised go into ``findings``.
    The number of metadata records read (NoOps included, control records not).  A batch
    with a bad CRC is not trusted: Kafka would not replay it either."""
    start = replay.start_offset
    records = 0
    # The memo entry of a lone NoOp read before: a batch holding the same entry holds
    # the same bytes, so the NoOp heartbeats that fill a log are decoded once, and a
    # watch hears of the first of a run only (and of a new epoch).
    noop = noop_epoch = last = None
    for seg in segments_from(part.segments, start):
        if (seg.kind.base_offset or 0) >= stop:
            break
        path = str(seg.path)
        stream = Expandable(read_batches(seg.path, findings, memo=True, runs=True,
                                         progress=progress))
        for batch in stream:
            if type(batch) is Run:
                if batch.last_offset < start:
                    # wholly below the start (a replay from a snapshot or a checkpoint
                    # inside the segment): intact repeats, nothing to apply or report
                    continue
                # NoOps that repeat the one just read, all inside [start, stop) and in
                # the epoch a watch has heard of: counted at once.
                if batch[0][LONE] is noop and batch.first_base >= start and \
                        batch.last_offset < stop and \
                        (watch is None or batch[0][LEADER_EPOCH] == noop_epoch):
                    records += batch[1]
                    last = batch.last_batch()
                else:
                    stream.expand(batch)
                continue
            lone = batch[LONE] if type(batch) is Batch else None
            if lone is not None and lone is noop:
                if batch[BASE_OFFSET] >= stop:
                    break
                if batch[BASE_OFFSET] >= start and batch[CRC_VALID]:
                    records += 1
                    last = batch
                    if batch[LEADER_EPOCH] != noop_epoch and watch is not None:
                        noop_epoch = batch[LEADER_EPOCH]
                        watch.batch(batch[BASE_OFFSET], noop_epoch, batch[MAX_TIMESTAMP])
                continue
            if batch.base_offset >= stop:
                break
            items, problems = batch_records(batch)
            findings += problems
            valid = batch.crc_valid and batch.last_offset >= start
            if valid:
                last = batch
                # a NoOp in the epoch heard is not news (as in verify's pass, whose watch
                # tells kmeta report the same story), the first one read here included
                if watch is not None and not (
                        lone is not None and batch.leader_epoch == noop_epoch
                        and _noop_alone(items)):
                    noop_epoch = batch.leader_epoch
                    watch.batch(batch.base_offset, noop_epoch, batch.max_timestamp)
            if batch.is_control:
                if valid and watch is not None:
                    for r in items:
                        if start <= r.offset < stop:
                            watch.control(batch.leader_epoch, decode_control(r.key, r.value))
                continue
            for r in items:
                offset = r.offset
                if offset < start or not valid:
                    continue
                if offset >= stop:
                    break
                records += 1
                payload = decode_metadata(r.value)
                if payload.finding:
                    findings.append(Finding(payload.finding[0], payload.finding[1], path,
                                            batch.position, offset))
                elif payload.type == "NO_OP_RECORD":
                    if lone is not None:
                        noop = lone
                elif watch is None:
                    findings += replay.apply(payload, offset, path, batch.position)
                else:
                    watch.before(payload.type, payload.data)
                    findings += replay.apply(payload, offset, path, batch.position)
                    watch.after(payload.type, payload.data, offset, r.timestamp)
            else:
                continue
            break  # a record at ``stop``: the rest of the log is past it
        else:
            continue
        break
    if watch is not None and last is not None:
        watch.end(min(last.last_offset, stop - 1), last.max_timestamp)
    return records
