"""Findings: what kmeta says about bad or surprising data.

Every problem kmeta sees in its input becomes a :class:`Finding` with a stable ``code``
(documented in ``man/kmeta.1`` under FINDINGS), never an exception.  Codes are grouped by
the layer that raises them: ``F`` format, ``S`` storage, ``V`` verify.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


#: Every finding code kmeta can emit, with its severity and a one-line meaning.
CODES: dict[str, tuple[Severity, str]] = {
    "F001": (Severity.ERROR, "batch CRC does not match its contents"),
    "F003": (Severity.ERROR, "records inside a batch cannot be decoded"),
    "F004": (Severity.WARNING, "metadata record of unknown apiKey or version; shown as raw hex"),
    "F005": (Severity.ERROR, "metadata record body does not match its schema"),
    "F006": (Severity.ERROR, "compressed batch cannot be decompressed"),
    "F007": (Severity.ERROR, "control record cannot be decoded"),
    "F008": (Severity.WARNING, "control record of unknown type or version; shown as raw hex"),
    "F009": (Severity.ERROR, "legacy message CRC does not match its contents"),
    "F010": (Severity.ERROR, "file content does not follow its format"),
    "F011": (Severity.WARNING, "record count in batch header differs from records decoded"),
    "S001": (Severity.ERROR, "torn or truncated tail: the segment ends inside a batch"),
    "S002": (Severity.WARNING, "zero-filled tail (preallocated space never written)"),
    "S003": (Severity.ERROR, "damaged byte range skipped; reading resumed at the next valid batch"),
    "S004": (Severity.ERROR, "garbage after the last valid batch"),
    "S005": (Severity.ERROR, "batch offsets go backwards or overlap the previous batch"),
    "S006": (Severity.INFO, "empty file"),
    "S007": (Severity.WARNING, "file name not recognised as a Kafka file; skipped"),
    "S008": (Severity.ERROR, "file cannot be read"),
    "S009": (Severity.WARNING, "segment base offset in its name differs from its first batch"),
    "S010": (Severity.ERROR, "not a Kafka log segment: text, or no record batch anywhere in "
             "the file"),
    "V001": (Severity.ERROR, "record breaks KRaft's record rules (timestamp delta, headers, "
             "key or value); Kafka's reader rejects it"),
    "V002": (Severity.ERROR, "record offset deltas do not run 0..n-1 up to lastOffsetDelta"),
    "V003": (Severity.ERROR, "batches are not contiguous: a gap or an overlap in offsets"),
    "V004": (Severity.WARNING, "batch maxTimestamp differs from its newest record"),
    "V005": (Severity.ERROR, "batch leader epoch decreases"),
    "V006": (Severity.ERROR, "leader-epoch-checkpoint disagrees with the batches"),
    "V007": (Severity.WARNING, "quorum-state leader epoch is behind the log"),
    "V008": (Severity.WARNING, "a leader epoch holds no LeaderChange control record"),
    "V009": (Severity.ERROR, "offsets between two segments are in no segment"),
    "V010": (Severity.ERROR, "legacy message (magic 0/1) in a KRaft metadata log"),
    "V011": (Severity.WARNING, "leader-epoch-checkpoint names an epoch at or past the log "
             "end offset (Kafka drops it on load)"),
    "V020": (Severity.ERROR, "metadata partition directory without any log segment"),
    "V021": (Severity.ERROR, "snapshot does not open with a SnapshotHeader and close with a "
             "SnapshotFooter"),
    "V022": (Severity.ERROR, "snapshot ends past the log end offset"),
    "V023": (Severity.ERROR, "snapshot epoch differs from the log's epoch at its last offset"),
    "V024": (Severity.WARNING, "unfinished snapshot (.checkpoint.part) left behind"),
    "V025": (Severity.INFO, "snapshot deleted or deletable (older than the log start offset)"),
    "V026": (Severity.ERROR, "log starts above 0 and no snapshot covers the offsets below it"),
    "V028": (Severity.WARNING, "partition directories without any log segment (an "
             "incomplete copy): their log end offsets are unknown"),
    "V030": (Severity.WARNING, "index file without its segment (Kafka deletes it on load)"),
    "V031": (Severity.ERROR, "index entries out of order, or damage after the last entry"),
    "V032": (Severity.ERROR, "index entry does not point at the batch it names, or names "
             "an offset past its segment"),
    "V033": (Severity.ERROR, "partition.metadata of __cluster_metadata has the wrong topic id"),
    "V034": (Severity.WARNING, "data dirs checked together name different cluster ids"),
    "V035": (Severity.ERROR, "an offset checkpoint points beyond a partition's log end"),
    "V036": (Severity.WARNING, "offset checkpoints of one data dir disagree with each other"),
    "V037": (Severity.INFO, "offset checkpoints and partition directories do not name the same "
             "partitions"),
    "V038": (Severity.WARNING, "one topic has different topic ids in the data dirs checked"),
    "V039": (Severity.WARNING, "data dirs checked together share a directory.id"),
    "V040": (Severity.ERROR, "image replayed from the log differs from the snapshot at its "
             "end offset"),
    # Problems met while replaying records into the cluster image (kmeta.core.image).
    "V100": (Severity.WARNING, "record type the image does not know (accepted, not applied)"),
    "V101": (Severity.ERROR, "record refers to a topic id or name that does not exist"),
    "V102": (Severity.ERROR, "PartitionChangeRecord for a partition that does not exist"),
    "V103": (Severity.ERROR, "partition leader is not in its ISR"),
    "V104": (Severity.ERROR, "partition ISR is not a subset of its replicas"),
    "V105": (Severity.ERROR, "partition leader epoch goes backwards"),
    "V106": (Severity.ERROR, "partition epoch goes backwards"),
    "V107": (Severity.ERROR, "record refers to a topic that was removed"),
    "V108": (Severity.ERROR, "record refers to a broker that is not registered"),
    "V109": (Severity.ERROR, "broker epoch in the record does not match the registration"),
    "V110": (Severity.ERROR, "TopicRecord reuses the name of another live topic"),
    "V111": (Severity.WARNING, "TopicRecord for a topic id that already exists (partitions "
             "reset)"),
    "V112": (Severity.ERROR, "BeginTransactionRecord inside an open metadata transaction"),
    "V113": (Severity.ERROR, "End/AbortTransactionRecord with no open metadata transaction"),
    "V114": (Severity.WARNING, "partition leader is not a registered broker"),
    "V115": (Severity.ERROR, "partition directories do not match its replicas in number"),
    "V116": (Severity.ERROR, "field value outside the values Kafka defines"),
    "V117": (Severity.WARNING, "removal of an ACL, SCRAM credential, token or controller "
             "that does not exist"),
    "V118": (Severity.WARNING, "next producer id goes backwards"),
    "V119": (Severity.ERROR, "record data is malformed (a required field is missing)"),
    "V120": (Severity.ERROR, "record needs a metadata.version the log has not reached"),
}


#: What a user can do about a finding, where there is something to say.
HINTS: dict[str, str] = {
    "F001": "the batch was damaged after it was written; compare with another replica "
            "(its offsets are in the finding)",
    "S001": "a write was cut short (crash, full disk); Kafka truncates here on restart",
    "S002": "preallocated space never written; harmless, Kafka truncates it on restart",
    "S003": "everything between the two positions is lost; the replica needs the range "
            "from another replica",
    "S004": "bytes after the last valid batch; Kafka truncates them on restart",
    "S010": "the file is not what its name says (another file copied over it, or the "
            "wrong path given); Kafka's recovery would truncate it to nothing",
    "V020": "the directory is incomplete: copy the whole partition directory",
    "V022": "the snapshot claims data this replica does not have; check the copy",
    "V026": "the state before the log start is lost unless another replica has a snapshot",
    "V011": "harmless: Kafka truncates the epoch cache at the log end offset on load",
    "V028": "copy the whole partition directories (segments included) to check them",
    "V030": "harmless: Kafka deletes an index file whose segment is gone on load",
    "V031": "delete the segment's index files: Kafka rebuilds missing indexes on start "
            "(it rebuilds a torn one itself, but not one whose entries are out of order)",
    "V032": "Kafka does not check index entries on a clean start and would serve reads "
            "from the wrong place; delete the segment's index files and Kafka rebuilds them",
    "V036": "the files were written at different times (an unclean shutdown?); Kafka "
            "raises the recovery point and high watermark to the log start on load",
    "V037": "a partial copy of the data dir, or a partition deleted since the checkpoint",
    "V038": "a topic deleted and re-created under the same name; one copy is stale",
    "V039": "one directory was copied to make another; Kafka refuses duplicate directory ids",
    "V040": "the snapshot and the log disagree: one of them is wrong; compare replicas",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem in the input, located as precisely as kmeta can."""

    code: str
    message: str
    file: str | None = None
    position: int | None = None
    offset: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def severity(self) -> Severity:
        return CODES[self.code][0]

    def where(self) -> str:
        parts = [self.file or "-"]
        if self.position is not None:
            parts.append(f"byte {self.position}")
        if self.offset is not None:
            parts.append(f"offset {self.offset}")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "finding",
            "file": self.file,
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
        }
        if self.position is not None:
            out["position"] = self.position
        if self.offset is not None:
            out["offset"] = self.offset
        if self.details:
            out["details"] = self.details
        return out
