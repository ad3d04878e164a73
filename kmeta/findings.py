"""Findings: what kmeta says about bad or surprising data.

Every problem kmeta sees in its input becomes a :class:`Finding` with a stable ``code``
(documented in ``man/kmeta.1`` under FINDINGS), never an exception.  Codes are grouped by
the layer that raises them: ``F`` format, ``S`` storage, ``V`` verify.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, NamedTuple


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


#: More findings of one code than this are listed as one group: how many, the first and
#: the last (``--all`` lists each).
GROUP_OVER = 3


#: Every finding code kmeta can emit, with its severity and a one-line meaning.
class Code(NamedTuple):
    """A finding code: its severity, what it means, whether the image replay
    (:meth:`kmeta.core.image.MetadataImage.apply`) reports it, and whether it says a file
    could not be read at all (then a command's verdict would be about part of its input:
    exit 3, :meth:`kmeta.errors.Verdict.exit_code`)."""

    severity: Severity
    meaning: str
    replay: bool = False
    unreadable: bool = False


CODES: dict[str, Code] = {
    "F001": Code(Severity.ERROR, "batch CRC does not match its contents"),
    "F003": Code(Severity.ERROR, "records inside a batch cannot be decoded"),
    "F004": Code(Severity.WARNING, "metadata record of unknown apiKey or version; shown as raw hex"),
    "F005": Code(Severity.ERROR, "metadata record body does not match its schema"),
    "F006": Code(Severity.ERROR, "compressed batch cannot be decompressed"),
    "F007": Code(Severity.ERROR, "control record cannot be decoded"),
    "F008": Code(Severity.WARNING, "control record of unknown type or version; shown as raw hex"),
    "F009": Code(Severity.ERROR, "legacy message CRC does not match its contents"),
    "F010": Code(Severity.ERROR, "file content does not follow its format"),
    "F011": Code(Severity.WARNING, "record count in batch header differs from records decoded"),
    "F012": Code(Severity.ERROR, "internal topic record (__consumer_offsets, "
                 "__transaction_state, __remote_log_metadata, __share_group_state) does not "
                 "match its schema"),
    "F013": Code(Severity.WARNING, "internal topic record of a type or version kmeta does "
                 "not decode; shown as hex"),
    "S001": Code(Severity.ERROR, "torn or truncated tail: the segment ends inside a batch"),
    "S002": Code(Severity.WARNING, "zero-filled tail (preallocated space never written)"),
    "S003": Code(Severity.ERROR, "damaged byte range skipped; reading resumed at the next valid batch"),
    "S004": Code(Severity.ERROR, "garbage after the last valid batch"),
    "S005": Code(Severity.ERROR, "batch offsets go backwards or overlap the previous batch"),
    "S006": Code(Severity.INFO, "empty file"),
    "S007": Code(Severity.WARNING, "file name not recognised as a Kafka file; skipped in "
                 "a directory, read as its first batch says when given alone (a KRaft "
                 "snapshot, a metadata log's or another segment)"),
    "S008": Code(Severity.ERROR, "file cannot be read", unreadable=True),
    "S009": Code(Severity.WARNING, "segment base offset in its name differs from its first batch"),
    "S010": Code(Severity.ERROR, "not a Kafka log segment: text, or no record batch anywhere in "
             "the file"),
    "S011": Code(Severity.ERROR, "batch offsets run past the largest offset Kafka has "
                 "(2^63-1): no Kafka wrote it"),
    "S012": Code(Severity.INFO, "the log dir is live: another process (a running broker) "
                 "holds its .lock; the answer is of the files as kmeta read them while "
                 "Kafka wrote"),
    "S013": Code(Severity.INFO, "a file Kafka removed or renamed (retention, a roll, a "
                 "cleaner swap, a replaced checkpoint) between kmeta's listing and its read: "
                 "not read, not damage"),
    "S014": Code(Severity.INFO, "Kafka's own temporary file (a checkpoint's .tmp, a "
                 "snapshot's .checkpoint.part): being written, or left by a crash; Kafka "
                 "never loads it"),
    "S015": Code(Severity.INFO, "written since kmeta read the segment: an index entry, an "
                 "epoch or a checkpoint names offsets Kafka appended after kmeta read the "
                 "log, found there on a second look"),
    "V001": Code(Severity.ERROR, "record breaks KRaft's record rules (timestamp delta, headers, "
             "key or value); Kafka's reader rejects it"),
    "V002": Code(Severity.ERROR, "record offset deltas do not run 0..n-1 up to lastOffsetDelta"),
    "V003": Code(Severity.ERROR, "batches are not contiguous: a gap or an overlap in offsets"),
    "V004": Code(Severity.WARNING, "batch maxTimestamp differs from its newest record"),
    "V005": Code(Severity.ERROR, "batch leader epoch decreases"),
    "V006": Code(Severity.ERROR, "leader-epoch-checkpoint disagrees with the batches"),
    "V007": Code(Severity.WARNING, "quorum-state leader epoch is behind the log"),
    "V008": Code(Severity.WARNING, "a leader epoch holds no LeaderChange control record"),
    "V009": Code(Severity.ERROR, "offsets between two segments are in no segment"),
    "V010": Code(Severity.ERROR, "legacy message (magic 0/1) in a KRaft metadata log"),
    "V011": Code(Severity.WARNING, "leader-epoch-checkpoint names an epoch at the log end "
             "offset (a leader that has not written yet) or past it under a snapshot's end: "
             "Kafka drops it on load, nothing is missing"),
    "V012": Code(Severity.ERROR, "a metadata log's leader-epoch-checkpoint names epochs "
             "that begin past its end: offsets the node held are missing (a stale copy or "
             "a cut tail); Kafka drops the entries on load"),
    "V020": Code(Severity.ERROR, "metadata partition directory without any log segment"),
    "V021": Code(Severity.ERROR, "snapshot does not open with a SnapshotHeader and close with a "
             "SnapshotFooter"),
    "V022": Code(Severity.ERROR, "snapshot ends past the log end offset"),
    "V023": Code(Severity.ERROR, "snapshot epoch differs from the log's epoch at its last offset"),
    "V024": Code(Severity.WARNING, "unfinished snapshot (.checkpoint.part) left behind"),
    "V025": Code(Severity.INFO, "snapshot deleted or deletable (older than the log start offset)"),
    "V026": Code(Severity.ERROR, "log starts above 0 and no snapshot covers the offsets below it"),
    "V028": Code(Severity.WARNING, "partition directories without any log segment (an "
             "incomplete copy): their log end offsets are unknown"),
    "V030": Code(Severity.WARNING, "index file without its segment (Kafka deletes it on load)"),
    "V031": Code(Severity.ERROR, "index entries out of order, or damage after the last entry"),
    "V032": Code(Severity.ERROR, "index entry does not point at the batch it names, or names "
             "an offset past its segment"),
    "V033": Code(Severity.ERROR, "partition.metadata of __cluster_metadata has the wrong topic id"),
    "V034": Code(Severity.WARNING, "data dirs checked together name different cluster ids"),
    "V035": Code(Severity.ERROR, "an offset checkpoint points beyond a partition's log end"),
    "V036": Code(Severity.WARNING, "offset checkpoints of one data dir disagree with each other"),
    "V037": Code(Severity.INFO, "offset checkpoints and partition directories do not name the same "
             "partitions"),
    "V038": Code(Severity.WARNING, "one topic has different topic ids in the data dirs checked"),
    "V039": Code(Severity.WARNING, "data dirs checked together share a directory.id"),
    "V040": Code(Severity.ERROR, "image replayed from the log differs from the snapshot at its "
             "end offset"),
    # Problems met while replaying records into the cluster image (kmeta.core.image).
    "V100": Code(Severity.WARNING, "record type the image does not know (accepted, not applied)",
             replay=True),
    "V101": Code(Severity.ERROR, "record refers to a topic id or name that does not exist",
             replay=True),
    "V102": Code(Severity.ERROR, "PartitionChangeRecord for a partition that does not exist",
             replay=True),
    "V103": Code(Severity.ERROR, "partition leader is not in its ISR", replay=True),
    "V104": Code(Severity.ERROR, "partition ISR is not a subset of its replicas", replay=True),
    "V105": Code(Severity.ERROR, "partition leader epoch goes backwards", replay=True),
    "V106": Code(Severity.ERROR, "partition epoch goes backwards", replay=True),
    "V107": Code(Severity.ERROR, "record refers to a topic that was removed", replay=True),
    "V108": Code(Severity.ERROR, "record refers to a broker that is not registered", replay=True),
    "V109": Code(Severity.ERROR, "broker epoch in the record does not match the registration",
             replay=True),
    "V110": Code(Severity.ERROR, "TopicRecord reuses the name of another live topic", replay=True),
    "V111": Code(Severity.WARNING, "TopicRecord for a topic id that already exists (partitions "
             "reset)", replay=True),
    "V112": Code(Severity.ERROR, "BeginTransactionRecord inside an open metadata transaction",
             replay=True),
    "V113": Code(Severity.ERROR, "End/AbortTransactionRecord with no open metadata transaction",
             replay=True),
    "V114": Code(Severity.WARNING, "partition leader is not a registered broker", replay=True),
    "V115": Code(Severity.ERROR, "partition directories do not match its replicas in number",
             replay=True),
    "V116": Code(Severity.ERROR, "field value outside the values Kafka defines", replay=True),
    "V117": Code(Severity.WARNING, "removal of an ACL, SCRAM credential, token or controller "
             "that does not exist", replay=True),
    "V118": Code(Severity.WARNING, "next producer id goes backwards", replay=True),
    "V119": Code(Severity.ERROR, "record data is malformed (a required field is missing)",
             replay=True),
    "V120": Code(Severity.ERROR, "record needs a metadata.version the log has not reached"),
    "V130": Code(Severity.INFO, "a broker registered again as the same incarnation with a new "
                 "broker epoch: controllers before Kafka 3.9 do, later ones keep the epoch"),
    "V131": Code(Severity.WARNING, "a broker registered a new incarnation though the one "
                 "before was never fenced or was fenced while it led partitions, outside "
                 "controlled shutdown: a crash or a lost session (never said of a fence of a "
                 "broker that led nothing, which a clean shutdown writes too)"),
    "V132": Code(Severity.WARNING, "a broker stayed fenced longer than the threshold of kmeta "
                 "brokers --fenced-longer-than (default 5min)"),
    "V133": Code(Severity.WARNING, "several brokers fenced within seconds of each other, each "
                 "while it led partitions and none in controlled shutdown: a controller or "
                 "network event"),
    "V140": Code(Severity.ERROR, "a consumer's committed offset is past the end of its leader "
                 "epoch on the replica: the log was truncated under it (KIP-320)"),
    "V141": Code(Severity.ERROR, "a consumer's committed leader epoch is newer than every "
                 "epoch the replica knows: it resets by auto.offset.reset"),
    "V142": Code(Severity.ERROR, "a consumer's committed offset is outside the replica's log: "
                 "it resets by auto.offset.reset"),
    "V143": Code(Severity.INFO, "an offset committed without a leader epoch: a truncation "
                 "under that consumer cannot be detected"),
    "V150": Code(Severity.WARNING, "a local segment already tiered is still on disk past "
                 "local.retention.ms"),
    "V151": Code(Severity.WARNING, "remote segments overlap, or offsets above the log start are "
                 "in no remote segment"),
    "V152": Code(Severity.WARNING, "a remote segment holds a leader epoch the partition's "
                 "leader-epoch-checkpoint does not have"),
    "V153": Code(Severity.WARNING, "a remote log metadata event Kafka drops (an invalid segment "
                 "state transition, or an update of an unknown segment)"),
    "V154": Code(Severity.INFO, "a partition's remote log metadata is not in the "
                 "__remote_log_metadata partition Kafka's partitioner chooses"),
    "V160": Code(Severity.ERROR, "replicas of the metadata log diverged: they hold different "
                 "records at the same offsets"),
    # The image against the disk (kmeta.core.placement, kmeta.ops.placement): what Kafka
    # does with a broker's partition dirs given its own metadata image.
    "V180": Code(Severity.ERROR, "stray log Kafka deletes: the image does not give this node "
                 "the partition (topic deleted, re-created, or replica moved away) and the "
                 "broker may run Kafka 3.5/3.6, which delete strays after startup"),
    "V181": Code(Severity.WARNING, "stray log: Kafka 3.7+ renames it -stray and keeps it (the "
                 "image does not give this node the partition, or it has no topic id)"),
    "V182": Code(Severity.ERROR, "partition dir without a topic id: Kafka 3.7.0 refuses to "
                 "start on it (3.7.1+ rename it -stray and keep it)"),
    "V184": Code(Severity.INFO, "-stray dir from an earlier start: Kafka keeps it and never "
                 "deletes it (3.5.x/3.6.0 refuse to start on the name)"),
    "V185": Code(Severity.INFO, "-delete dir: Kafka deletes it file.delete.delay.ms after "
                 "loading"),
    "V186": Code(Severity.WARNING, "abandoned -future log: the image assigns the replica to its "
                 "log dir, so Kafka 3.7.1+ promotes it and deletes the current log"),
    "V187": Code(Severity.INFO, "-future log of a replica move in progress: Kafka keeps it "
                 "and the move resumes"),
    "V188": Code(Severity.ERROR, "-future log without a topic id: Kafka 3.7.1+ refuses to "
                 "start"),
    "V189": Code(Severity.WARNING, "replica the image assigns to this node is missing on disk "
                 "(its dir gone, or set aside as a stray): Kafka creates it empty and "
                 "fetches it from the leader, or leads it empty if no other replica is in "
                 "sync"),
    "V190": Code(Severity.ERROR, "replica the image assigns to this node is missing on disk, "
                 "its offset checkpoints name records in it, and no other in-sync replica "
                 "holds them: they are lost"),
    "V191": Code(Severity.WARNING, "replica in a log dir other than the one the image assigns "
                 "(another dir of this broker); Kafka uses it where it is (KIP-858)"),
    "V192": Code(Severity.WARNING, "replica assigned to a directory id no log dir of this "
                 "broker has (KIP-858)"),
    "V193": Code(Severity.INFO, "replica assigned to a reserved directory id (UNASSIGNED or "
                 "LOST): the broker reports where it is"),
    "V194": Code(Severity.ERROR, "log dirs of one broker whose meta.properties name "
                 "different cluster ids: Kafka refuses to start"),
    "V195": Code(Severity.ERROR, "log dirs of one broker whose meta.properties name "
                 "different node ids: Kafka refuses to start"),
    "V196": Code(Severity.ERROR, "a log dir's directory.id is reserved or is also another "
                 "log dir's of the same broker: Kafka refuses to start"),
    "V197": Code(Severity.ERROR, "one partition's log is in two log dirs of a broker: Kafka "
                 "refuses to start"),
    "V198": Code(Severity.INFO, "replica the image assigns to this node is missing on disk, "
                 "with no other in-sync replica, but this broker's offset checkpoints say "
                 "it held no record: Kafka creates it empty, nothing is lost"),
    "V199": Code(Severity.INFO, "replica the image assigns to this node that neither its "
                 "disk nor its offset checkpoints know (never held here, or a copy without "
                 "it): Kafka creates it, and fetches it where another replica is in sync"),
    # kmeta startup: what Kafka's LogManager and LogLoader do when they open a broker's
    # log dirs (kmeta.ops.startup names the Kafka class and version of each rule)
    "V170": Code(Severity.ERROR, "recovery truncates a segment at a torn or corrupt batch: "
                 "the records after it are lost"),
    "V171": Code(Severity.WARNING, "recovery truncates a zero-filled tail (space never "
                 "written): nothing is lost, Kafka repairs it"),
    "V172": Code(Severity.ERROR, "recovery deletes the segments after a truncated one"),
    "V173": Code(Severity.ERROR, "the log end is below the log start checkpoint: Kafka "
                 "deletes every segment of the partition"),
    "V174": Code(Severity.ERROR, "a directory in a log dir whose name Kafka cannot parse: "
                 "the broker refuses to start"),
    "V175": Code(Severity.ERROR, "recovery empties a segment whose offsets go backwards where "
                 "Kafka rebuilds an index entry (InvalidOffsetException): its records, and "
                 "the later segments recovery deletes, are lost"),
    "V176": Code(Severity.ERROR, "an offset checkpoint Kafka cannot read: it recovers from "
                 "0 and the log dir goes offline"),
    "V177": Code(Severity.WARNING, "no clean shutdown marker: Kafka recovers the log dir's "
                 "unflushed segments on start"),
    "V178": Code(Severity.WARNING, "an index Kafka rebuilds on load (a missing offset index "
                 "or a transaction index it rejects)"),
    "V179": Code(Severity.WARNING, "a .swap, .cleaned or .deleted file, or an index without "
                 "its segment: Kafka completes or deletes it on load"),
    "V200": Code(Severity.ERROR, "Kafka cannot load a log (an exception other than an "
                 "IOException escapes LogLoader: a batch header it cannot read outside "
                 "recovery, a file name without an offset, a bad leader-epoch-checkpoint or "
                 "partition.metadata, a legacy segment it cannot split...): the broker "
                 "refuses to start"),
    "V201": Code(Severity.WARNING, "offsets go backwards in a segment Kafka recovers, where no "
                 "index entry lands: Kafka keeps the batches as they are"),
    "V202": Code(Severity.WARNING, "a legacy segment holds offsets beyond base + Int.MaxValue "
                 "(KAFKA-6264): Kafka splits it into segments on load"),
    "V203": Code(Severity.WARNING, "an offset checkpoint is missing: Kafka creates it empty "
                 "and every partition starts from 0"),
    "V205": Code(Severity.INFO, "remote storage is on for the topic: the log start stays at "
                 "the checkpoint, below the first local segment (Kafka 3.6+)"),
    "V206": Code(Severity.WARNING, "the leader-epoch cache changes on load: entries at or past "
                 "the log end or below the log start go, epochs of recovered batches are "
                 "added, or the whole file is deleted (a message format before v2)"),
    "V210": Code(Severity.ERROR, "a partition file Kafka cannot read as it loads the log "
                 "(a malformed leader-epoch-checkpoint or partition.metadata): the "
                 "IOException takes the whole log dir offline"),
    "V211": Code(Severity.WARNING, "a corrupt producer snapshot (empty, truncated, an "
                 "unknown version, a CRC that does not match): Kafka deletes it and rebuilds "
                 "the producer state from an older snapshot or the log start"),
    "V235": Code(Severity.ERROR, "the metadata log's own leader-epoch-checkpoint names "
                 "epochs begun past everything on disk: the node comes back without those "
                 "offsets (a stale copy or a cut tail)"),
    "V236": Code(Severity.ERROR, "the KRaft node does not start: opening its metadata log "
                 "throws (an unparsable snapshot name, no snapshot at or past a log start "
                 "above 0, a foreign topic id, a damaged latest snapshot or quorum-state "
                 "from 3.8)"),
    "V237": Code(Severity.ERROR, "the metadata log, recovered whole on every start, is cut: "
                 "this node's copy loses the records after the cut (fetched again from the "
                 "leader where another voter holds them)"),
    "V238": Code(Severity.INFO, "the latest snapshot is ahead of the metadata log: Kafka "
                 "drops every segment and starts the log at the snapshot's end"),
    "V239": Code(Severity.WARNING, "quorum-state cannot be read: Kafka 3.3 to 3.7 clear it "
                 "and start at epoch 0"),
    "V212": Code(Severity.ERROR, "committed offsets (below the high watermark "
                 "replication-offset-checkpoint names) are not in the log Kafka loads: not "
                 "on disk, or cut off by recovery; it starts the log from what is there"),
    "V213": Code(Severity.WARNING, "offsets below the recovery point (flushed once) and "
                 "above the high watermark are not in the log Kafka loads: Kafka lowers "
                 "the recovery point without a word"),
    "V230": Code(Severity.ERROR, "a KRaft node's log dir without meta.properties (or a "
                 "meta.properties without node.id or cluster.id): Kafka refuses to start "
                 "(\"have you run kafka-storage.sh\")"),
    "V231": Code(Severity.ERROR, "a meta.properties Kafka cannot read (unknown version, a "
                 "bad id, an I/O error): the log dir goes offline at start, or the node "
                 "refuses to start if it is the metadata log dir or Kafka is 3.5/3.6 and "
                 "cannot use what it read"),
    "V232": Code(Severity.ERROR, "a meta.properties of the wrong mode: a ZooKeeper-mode "
                 "broker judged by Kafka 4.x (KRaft only), or a version 1 file in a "
                 "ZooKeeper-mode broker: Kafka refuses to start"),
    "V233": Code(Severity.ERROR, "log dirs of one ZooKeeper-mode broker whose meta.properties "
                 "differ in other properties: Kafka 3.5/3.6 compare the files whole and "
                 "refuse to start"),
}


#: Codes whose hint has the user change files (delete, restore, move, rewrite, repair):
#: on a running broker's dir that is harmful, so there the hint says to stop it first.
CHANGES_FILES = frozenset({
    "S011", "V012", "V031", "V032", "V170", "V174", "V175", "V176", "V181", "V182",
    "V184", "V188", "V190", "V194", "V195", "V196", "V197", "V200", "V210", "V212",
    "V230", "V231", "V233", "V235", "V236", "V237"})

#: What a hint that changes files says first on a live dir.
STOP_FIRST = "a broker runs on this dir: stop it before changing any file; then: "


def is_live(findings: Iterable[Finding]) -> bool:
    """Whether the findings are of a dir a running broker holds (S012 among them)."""
    return any(f.code == "S012" for f in findings)


def hint_for(code: str, live: bool = False) -> str | None:
    """The hint of ``code`` (None: none), told to stop the broker first where it changes
    files and ``live``."""
    hint = HINTS.get(code)
    if hint is not None and live and code in CHANGES_FILES:
        return STOP_FIRST + hint
    return hint


#: Codes that say a file was not read at all: its reader stops there.
NOT_READ = frozenset({"S008", "S013"})


#: Codes a command says on stderr when it meets them, before its answer (a live log dir),
#: and so leaves out of the findings its text lists after the answer; ``--json`` has them
#: among its findings.
SAID_FIRST = frozenset({"S012"})


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
    "S011": "the batch's offsets were damaged or written by another tool: compare with "
            "another replica (repair ends a metadata log before it)",
    "V020": "the directory is incomplete: copy the whole partition directory",
    "V022": "the snapshot claims data this replica does not have; check the copy",
    "V026": "the state before the log start is lost unless another replica has a snapshot",
    "V011": "harmless: Kafka truncates the epoch cache at the log end offset on load",
    "V012": "restore the metadata log from another voter or a backup before starting the "
            "node; started as it is, it fetches the missing offsets from the leader where "
            "another voter has them, and they are gone where none has",
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
    "V140": "the consumer re-reads from the offset the replica answers (or resets); the "
            "records it committed past it are gone from that replica",
    "V160": "kmeta truncate LOCAL --to-divergence-with PEER shows what the follower drops",
    "V180": "copy what you need out of the dir before the broker starts, or start it with "
            "Kafka 3.7.1+, which keeps strays as -stray dirs",
    "V181": "nothing is lost: once sure the data is not needed, delete the -stray dir",
    "V182": "restore partition.metadata from another replica of the partition, or run "
            "Kafka 3.7.1+, which keeps the dir as a stray",
    "V184": "once sure the data is not needed, delete the dir (Kafka never does)",
    "V186": "the move finished on the controller's side; nothing to do",
    "V188": "restore partition.metadata from the current log of the partition, or delete "
            "the -future dir (the move starts again)",
    "V189": "the replica comes back by replication from its leader; where no other "
            "replica is in sync, put its dir back (or the stray's) before the broker starts",
    "V190": "copy the partition's dir from a backup or an out-of-sync replica before "
            "starting the broker, or the partition starts empty",
    "V192": "the log dir the controller expects is not among the dirs given: check "
            "log.dirs lists every disk of the broker",
    "V194": "each log dir of a broker must come from the same cluster: remove the foreign "
            "dir from log.dirs",
    "V195": "each log dir of a broker must carry its node.id: remove the foreign dir from "
            "log.dirs",
    "V196": "a copied log dir keeps its source's id: delete directory.id from its "
            "meta.properties and Kafka writes a new one",
    "V197": "delete one of the two dirs (the one not in the assigned log dir)",
    "V230": "format the dir for this node (kafka-storage.sh format with the cluster's id "
            "and --ignore-formatted), or restore its meta.properties from a backup",
    "V231": "restore the file from a backup or another log dir of the same node (then "
            "delete its directory.id line: Kafka writes a new one)",
    "V232": "give the --kafka-version the broker runs: a ZooKeeper-mode broker runs 3.9 at "
            "most; a ZooKeeper broker's dirs hold version 0 files",
    "V233": "make the files alike (copy one over the other, keeping each directory.id) or "
            "remove the foreign dir from log.dirs",
    "V170": "copy the partition from another replica before starting the broker, or let "
            "it truncate and fetch the lost records from the leader",
    "V174": "move the directory out of the log dir (Kafka's log dirs hold only topic data)",
    "V176": "the dir goes offline once the broker runs: fix or remove the checkpoint file",
    "V175": "copy the partition from another replica before starting the broker: Kafka "
            "empties the segment and deletes the ones after it",
    "V212": "restore the partition dir from a backup or another replica before starting "
            "the broker: as leader it serves the partition without these records and its "
            "followers drop them too; as follower it fetches them back from a leader that "
            "has them",
    "V213": "check the copy is whole (a cut tail or a stale copy of the dir; a follower's "
            "truncation just before a crash leaves this too); where this broker led the "
            "partition, records acknowledged with acks=1 may be among them",
    "V200": "move the partition dir out of the log dir (or restore it from another "
            "replica) before starting the broker",
    "V210": "restore the file from another replica of the partition (or delete it: Kafka "
            "writes it again) before starting the broker",
    "V235": "the copy is stale or its tail was cut: take __cluster_metadata-0 from a "
            "healthy voter, or start the node where another voter holds those offsets",
    "V236": "copy __cluster_metadata-0 from a healthy voter (or fix the file named) before "
            "starting the node",
    "V237": "with another voter holding the records, start the node: it fetches them; "
            "otherwise copy __cluster_metadata-0 from a healthy voter first (kmeta repair "
            "--dry-run shows the cut)",
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


#: The setters of a Finding's slots, in its fields' order: for code that makes tens of
#: thousands at once from tuples (the replay process's findings), setting the slots
#: directly costs half of what the frozen dataclass's ``__init__`` does.  A Finding made
#: so equals the one ``Finding(...)`` makes (tests/test_replay_process.py).
SLOT_SETTERS = tuple(getattr(Finding, f.name).__set__ for f in fields(Finding))


def each_once(findings: Iterable[Finding]) -> list[Finding]:
    """``findings`` in their order, a repeat left out: two reads of one segment (an
    index and a replay, two replays) meet its damage twice, and it is one finding."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for f in findings:
        key = (f.code, f.message, f.file, f.position, f.offset)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def finding_counts(findings: Iterable[Finding]) -> dict[str, int]:
    """How many findings of each severity: the ``finding_counts`` object of every
    command's JSON summary (each severity present, 0 when none)."""
    out = {s.value: 0 for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)}
    for f in findings:
        out[f.severity.value] += 1
    return out
