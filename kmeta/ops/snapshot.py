"""``kmeta snapshot``: write a KRaft snapshot of the cluster image at an offset.

The image comes from :func:`kmeta.ops.replay.image.build_image` (latest snapshot at or below the
offset, then the log); :func:`kmeta.core.image_records.image_records` turns it into
records; :class:`kmeta.storage.writer.SnapshotWriter` writes the file.  Facts from Kafka
(``core/.../raft/KafkaMetadataLog.createNewSnapshot``, ``raft/.../RecordsIterator``,
``raft/.../snapshot/RecordsSnapshotWriter``), read for behaviour only:

* A snapshot id is (end offset, epoch): the epoch is that of the batch holding the last
  record the snapshot contains (offset ``end - 1``), so that it agrees with the log's
  epoch cache.  Its end offset lies above the log start offset.
* ``lastContainedLogTimestamp`` in the SnapshotHeader is the max timestamp of that batch;
  the snapshot's own batches carry the time they were written.
* With kraft.version 1 or more the header batch also holds the KRaftVersion and Voters
  records in force at the end offset: the latest ones in the log below it, else those of
  the snapshot the replay started from.

The written file is read back and its image digest compared with the replayed one before
the result is returned.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kmeta.core.image_records import ImageNotWritable, image_records
from kmeta.core.log_rules import MAX_OFFSET
from kmeta.core.replica_log import SnapshotId
from kmeta.core.versions import level_label, required_level
from kmeta.errors import KmetaError, UnreadableInput, UsageError
from kmeta.findings import Finding, Severity
from kmeta.formats.filenames import FileKind, classify, snapshot_file_name, snapshot_stem
from kmeta.formats.payload import decode_control, encode_metadata
from kmeta.formats.runs import Expandable, Run
from kmeta.ops.replay import build_image, find_metadata, snapshot_image
from kmeta.storage.discover import LogFile, PartitionDir
from kmeta.storage.progress import QUIET, Progress
from kmeta.storage.segments import batch_records, read_batches
from kmeta.storage.targets import INTO_PARTITION, Landing, Role, check_target
from kmeta.storage.writer import SnapshotWriter

__all__ = ["SnapshotWritten", "write_snapshot_at"]


@dataclass
class SnapshotWritten:
    """What :func:`write_snapshot_at` wrote."""

    path: Path
    end_offset: int
    epoch: int
    #: metadata records written, by type, in the order the types first appear
    records: dict[str, int]
    #: the image digest, equal for the replayed image and the written snapshot
    digest: str
    size: int
    last_contained_log_timestamp: int
    metadata_version: int | None
    kraft_version: int
    #: voter ids of the Voters record in the header (None: no Voters record)
    voters: list[int] | None
    #: where the replay started: a snapshot file, or None for an empty image at offset 0
    started_from: Path | None
    #: log records applied on top of it
    replayed_records: int
    notes: list[str] = field(default_factory=list)
    #: findings of the replay (warnings; errors only when ``allow_errors`` was given)
    findings: list[Finding] = field(default_factory=list)

    @property
    def snapshot_id(self) -> str:
        """Kafka's snapshot id (end offset, epoch), as the file name spells it."""
        return snapshot_stem(self.end_offset, self.epoch)

    @property
    def record_count(self) -> int:
        return sum(self.records.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "snapshot",
            "file": str(self.path),
            "snapshot_id": {"end_offset": self.end_offset, "epoch": self.epoch},
            "digest": self.digest,
            "size": self.size,
            "records": self.record_count,
            "records_by_type": dict(self.records),
            "last_contained_log_timestamp": self.last_contained_log_timestamp,
            "metadata_version": self.metadata_version,
            "kraft_version": self.kraft_version,
            "voters": self.voters,
            "from": None if self.started_from is None else str(self.started_from),
            "replayed_records": self.replayed_records,
            "notes": list(self.notes),
        }


@dataclass
class _LogFacts:
    """What the log says about the snapshot beyond the image."""

    epoch: int | None = None
    max_timestamp: int = -1
    batch_base: int = -1
    batch_last: int = -1
    kraft_version: int | None = None
    voters: dict[str, Any] | None = None


def write_snapshot_at(path: str | Path, out: str | Path, *, at: int | None = None,
                      timestamp_ms: int | None = None, allow_errors: bool = False,
                      durable: bool = True, into_partition: bool = False,
                      progress: Progress = QUIET) -> SnapshotWritten:
    """Write the image of the metadata partition at ``path``, replayed up to offset ``at``
    (default: the log end), as a KRaft snapshot.

    ``out`` is a directory (the file gets Kafka's name ``<end>-<epoch>.checkpoint``) or a
    file path that does not exist yet, outside ``path`` and Kafka's directories; directly
    in a metadata partition directory only with ``into_partition`` (Kafka loads it at its
    next start: a note says how).  ``timestamp_ms`` stamps the batches (default: now).
    A replay that met error findings (damaged batches, records Kafka would refuse) is
    refused unless ``allow_errors``: the snapshot would make the damage permanent.
    ``progress`` hears of the reading.
    """
    out = Path(out)
    source = find_metadata(path, progress)
    if not isinstance(source, PartitionDir):
        raise UsageError("a snapshot is written from a metadata log: give a data dir or "
                         "its __cluster_metadata-0 directory, not a snapshot file",
                         context=str(source.path))
    part = source
    if not part.segments:
        raise UnreadableInput("no log segment: there is no log to take a snapshot of",
                              context=str(part.path))
    log_start = part.segments[0].kind.base_offset or 0
    if at is not None and at <= log_start:
        raise UsageError(f"--at {at}: a snapshot must end after the log start offset "
                         f"{log_start}", context=str(part.path))
    where = _check_out(out, path, into_partition)

    result = build_image(path, at=at, progress=progress)  # checks --at against the log end
    target = result.offset
    if result.log_end is None or target <= log_start:
        raise UsageError(f"the log holds no record after its start offset {log_start}",
                         context=str(part.path))
    if target > MAX_OFFSET:  # a snapshot's end offset is a Java long, as every offset
        raise UsageError(f"the log ends at offset {target}, past the largest offset Kafka "
                         f"has ({MAX_OFFSET}): no snapshot can end there",
                         context=str(part.path),
                         hint=f"give --at {MAX_OFFSET} or lower; kmeta verify says what "
                              "the log holds there")
    image = result.image
    if image.in_transaction:
        txn = image.to_json()["transaction"]
        name = "(unnamed)" if txn["name"] is None else repr(txn["name"])
        raise UsageError(f"offset {target} is inside metadata transaction {name} "
                         f"({txn['pendingRecords']} record(s) pending): a "
                         "snapshot cannot hold half of one", context=str(part.path),
                         hint="choose an offset before its BeginTransactionRecord or after "
                              "its End/AbortTransactionRecord")
    used = {str(s.path) for s in part.segments} | {str(result.snapshot)}
    # A record newer than the log's metadata.version (V120) is no damage: Kafka's loader
    # applies it, and the snapshot keeps its state with a note (_version_notes).
    errors = [f for f in result.findings
              if f.severity is Severity.ERROR and f.file in used and f.code != "V120"]
    if errors and not allow_errors:
        first = errors[0]
        raise UsageError(f"the replay up to offset {target} met {len(errors)} error "
                         f"finding(s), first {first.code} at {first.where()}: "
                         f"{first.message}", context=str(part.path),
                         hint="run kmeta verify; a snapshot would make the damage permanent")

    facts = _log_facts(part, result.start_offset, target)
    if facts.epoch is None:
        raise UsageError(f"no intact batch of the log holds offset {target - 1}, the last "
                         "one the snapshot would contain", context=str(part.path))
    if facts.kraft_version is None or facts.voters is None:
        start = _snapshot_kraft(result.snapshot) if result.snapshot else _LogFacts()
        if facts.kraft_version is None:
            facts.kraft_version = start.kraft_version
        if facts.voters is None:
            facts.voters = start.voters
    kraft_version = facts.kraft_version or 0
    voters = facts.voters if kraft_version >= 1 else None

    notes: list[str] = []
    if facts.batch_last != target - 1:
        notes.append(f"offset {target} is inside the batch of offsets {facts.batch_base}.."
                     f"{facts.batch_last}; Kafka's controller only snapshots whole batches")
    final = _final_path(out, target, facts.epoch, notes)

    try:
        records = image_records(image)
    except ImageNotWritable as e:
        raise KmetaError(f"the image at offset {target} cannot be written: {e}",
                         context=str(part.path)) from e
    notes += _version_notes(image.metadata_version, records)

    stamp = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
    written = _write(final, target, facts, voters, stamp, durable,
                     [encode_metadata(t, v, d) for t, v, d in records])

    digest = image.digest()
    _check_written(written, target, facts.epoch, digest, result.findings)
    if where.role is Role.METADATA_PARTITION:
        notes.append(_placed_note(written, SnapshotId(target, facts.epoch)))
    counts: Counter[str] = Counter()
    for r in records:
        counts[r.type] += 1
    return SnapshotWritten(
        path=written, end_offset=target, epoch=facts.epoch, records=dict(counts),
        digest=digest, size=written.stat().st_size,
        last_contained_log_timestamp=facts.max_timestamp,
        metadata_version=image.metadata_version, kraft_version=kraft_version,
        voters=None if voters is None else [v["voterId"] for v in voters.get("voters", ())],
        started_from=result.snapshot, replayed_records=result.records, notes=notes,
        findings=list(result.findings))


# ---------------------------------------------------------------------- output path

def _check_out(out: Path, path: str | Path, into_partition: bool) -> Landing:
    """Refuse an unusable ``--out`` before the (possibly long) replay; where it lands."""
    if not out.is_dir():
        if out.exists() or out.is_symlink():
            raise UsageError("--out names an existing file; kmeta never overwrites one",
                             context=str(out), hint="give a new file name or a directory")
        if not out.parent.is_dir():
            raise UsageError("--out: no such directory", context=str(out.parent))
    return check_target(out, [path], what="--out", permit=INTO_PARTITION,
                        permitted=into_partition, into=out.is_dir())


def _placed_note(written: Path, sid: SnapshotId) -> str:
    """What Kafka does at its next start with the snapshot kmeta put into a metadata
    partition dir: ``kmeta retention``'s account of its start-up, told of this file."""
    from kmeta.ops.retention import retention

    head = f"written into the metadata partition directory {written.parent}: at its next " \
           "start Kafka "
    try:
        seen = retention(written.parent)
    except KmetaError as e:  # the snapshot is written: say what is known, not fail
        return head + "loads the cluster image from the newest snapshot there (ordered by " \
               f"epoch, then end offset); kmeta retention could not tell more: {e.message}"
    if seen.refusal is not None:
        return head + f"refuses to start ({seen.refusal})"
    mine = next((s for s in seen.snapshots if s.path.name == written.name), None)
    if mine is None:
        return head + "passes this file over: it finds snapshots by their name only"
    if "startup" in mine.fate:
        return head + f"deletes it ({'; '.join(seen.startup)})"
    newest = max(s.id for s in seen.snapshots  # ids order by epoch, then end offset
                 if s.state == "live" and "startup" not in s.fate)
    steps = [s for s in seen.startup if not s.startswith("nothing to clean up")]
    told = head + ("; ".join(steps) + "; then it " if steps else "")
    if newest == sid:
        return told + "loads the cluster image from this snapshot, the newest, and " \
                      f"replays the log from offset {sid.offset}"
    return told + f"loads the cluster image from the newer snapshot {newest.file_stem}, " \
                  "not from this one"


def _final_path(out: Path, end: int, epoch: int, notes: list[str]) -> Path:
    name = snapshot_file_name(end, epoch)
    if out.is_dir():
        final = out / name
        if final.exists():
            raise UsageError("a snapshot with this id exists; kmeta never overwrites one",
                             context=str(final))
        return final
    kind = classify(out.name)
    if kind.kind == "kraft-snapshot" and (kind.base_offset, kind.epoch, kind.suffix) != \
            (end, epoch, None):
        raise UsageError(f"--out is named like another snapshot; this one is {name}",
                         context=str(out), hint="give a directory to get Kafka's name")
    if out.name != name:
        notes.append(f"the file is not named {name}: Kafka finds snapshots by that name "
                     "only")
    return out


def _write(final: Path, end: int, facts: _LogFacts, voters: dict[str, Any] | None,
           stamp: int, durable: bool, values: list[bytes]) -> Path:
    assert facts.epoch is not None
    canonical = final.name == snapshot_file_name(end, facts.epoch)
    try:
        # Kafka's own name gets Kafka's temporary name (<id>-<n>.checkpoint.part).
        writer = SnapshotWriter(final.parent, end, facts.epoch,
                                last_contained_log_timestamp=facts.max_timestamp,
                                timestamp=stamp, kraft_version=facts.kraft_version or None,
                                voters=voters, durable=durable,
                                name=None if canonical else final.name)
    except FileExistsError:
        raise UsageError("the output file exists; kmeta never overwrites one",
                         context=str(final)) from None
    except OSError as e:
        raise KmetaError(f"cannot write the snapshot: {e.strerror}",
                         context=str(final)) from e
    try:
        writer.extend(values)
        return writer.close()
    except FileExistsError:
        writer.abort()
        raise UsageError("the output file appeared while it was written; it was left as "
                         "it is", context=str(final)) from None
    except OSError as e:
        writer.abort()
        raise KmetaError(f"cannot write the snapshot: {e.strerror}",
                         context=str(final)) from e
    except BaseException:
        writer.abort()
        raise


def _check_written(path: Path, end: int, epoch: int, digest: str,
                   known: list[Finding]) -> None:
    """Read the snapshot back; a different image is a bug in kmeta, not in the input.

    ``known``: what the replay already found; an image problem it carried (a partition
    led by an unregistered broker, say) is found again in the snapshot, and is no news."""
    image, findings = snapshot_image(LogFile(path, FileKind("kraft-snapshot", end, epoch)))
    seen = {(f.code, f.message) for f in known}
    findings = [f for f in findings if (f.code, f.message) not in seen]
    if findings or image.digest() != digest:
        path.unlink(missing_ok=True)
        what = findings[0].message if findings else \
            f"digest {image.digest()} instead of {digest}"
        raise RuntimeError(f"the snapshot written to {path} does not read back as the "
                           f"image ({what}); it was removed")


# ---------------------------------------------------------------------- log facts

def _log_facts(part: PartitionDir, start: int, target: int) -> _LogFacts:
    """The batch that holds ``target - 1`` and the KRaft control records in force at
    ``target`` that the log holds from ``start`` on (below ``start`` they are in the
    snapshot the replay started from)."""
    facts = _LogFacts()
    lo = min(start, target - 1)
    segments = part.segments
    for i, seg in enumerate(segments):
        nxt = segments[i + 1].kind.base_offset if i + 1 < len(segments) else None
        if nxt is not None and nxt <= lo:
            continue
        if (seg.kind.base_offset or 0) >= target:
            break
        # What cannot be read is passed over: the replay reported it already.
        stream = Expandable(read_batches(seg.path, [], memo=True, runs=True))
        for b in stream:
            if type(b) is Run:
                # Repeated data batches say nothing here, unless one holds target - 1.
                if b.first_base >= target:
                    break
                if b[0].is_control or b.last_offset >= target - 1:
                    stream.expand(b)
                continue
            if b.magic < 2 or not b.crc_valid:
                continue
            if b.base_offset >= target:
                break
            if b.base_offset <= target - 1 <= b.last_offset:
                facts.epoch = b.leader_epoch
                facts.max_timestamp = b.max_timestamp
                facts.batch_base, facts.batch_last = b.base_offset, b.last_offset
            if b.is_control and b.last_offset >= start:
                _control(b, start, target, facts)
    return facts


def _control(batch: Any, start: int, target: int, facts: _LogFacts) -> None:
    records, _ = batch_records(batch)
    for r in records:
        if not start <= r.offset < target:
            continue
        p = decode_control(r.key, r.value)
        if p.finding:
            continue
        if p.type == "KRAFT_VERSION":
            facts.kraft_version = p.data["kRaftVersion"]
        elif p.type == "KRAFT_VOTERS":
            facts.voters = p.data


def _snapshot_kraft(path: Path) -> _LogFacts:
    """The KRaftVersion and Voters records of a snapshot's header batch."""
    facts = _LogFacts()
    for b in read_batches(path, []):  # the replay of the snapshot reports its damage
        if b.is_control and b.crc_valid:
            _control(b, 0, b.last_offset + 1, facts)
        break  # only the first batch is the header
    return facts


# ---------------------------------------------------------------------- notes

def _version_notes(level: int | None, records: list[Any]) -> list[str]:
    """Records the image's metadata.version does not allow: the log held them anyway."""
    seen: dict[tuple[str, int], int] = {}
    for r in records:
        need = required_level(r.type, r.version)
        if need is not None and (level is None or need > level):
            seen[(r.type, r.version)] = need
    return [f"{t} v{v} needs metadata.version {level_label(need)} but the image is at "
            f"{level_label(level)}: Kafka would not write it at that level; kmeta does, so that "
            "the image is unchanged" for (t, v), need in sorted(seen.items())]
