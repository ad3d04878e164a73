"""JSON OUTPUT of the man page, from the declaration of every JSON object kind
(:mod:`kmeta.output_schema`): the keys, their docs and which are optional come from it;
only the arrangement (which kinds each command's subsection lists, its introduction and
closing notes) is written here."""

from __future__ import annotations

from dataclasses import dataclass

from kmeta.output_schema import (
    ACL,
    BATCH,
    BOOTSTRAP,
    BROKER,
    BROKERS_SUMMARY,
    CHANGE,
    CHECKPOINT_USE,
    COMMITTED_LOST,
    COMPACT_BATCH,
    COMPACT_DISAGREEMENT,
    COMPACT_KEY_RECORD,
    COMPACT_STRATEGY,
    COMPACT_SUMMARY,
    CONSUMER_GROUP,
    CONSUMER_OFFSET,
    CONSUMERS_SUMMARY,
    CONTENT_DIVERGENCE,
    CONTROLLER,
    CUT,
    DATA_DIR,
    DELEGATION_TOKEN,
    DIFF,
    ENDPOINT,
    EPOCH_CACHE_PLAN,
    EPOCH_START,
    EPOCH_TRUNCATION,
    EXPORT,
    FETCH_SIMULATION,
    FILE,
    FILE_FATE,
    FINDING,
    FINDING_COUNTS,
    FOLLOWER,
    HEADER,
    HISTORY,
    IMAGE,
    IMAGE_DIFF,
    IMAGE_SECTIONS,
    INFO,
    LOG_FILE,
    LOG_SUMMARY,
    MAJORITY,
    MASKED,
    METADATA_TRANSACTION,
    MISSING_REPLICA,
    NEXT_STEP,
    NODE_EVENT,
    NODE_SUMMARY,
    OFFSETS_BACKWARDS,
    OFFSETS_NOT_LOADED,
    PAIR,
    PARTITION,
    PARTITION_DIR,
    PLACEMENT,
    PRODUCER_IDS,
    QUORUM_LEADER,
    RECORD,
    RECOVERY_CUT,
    REGISTRATION,
    REMOTE_SEGMENT,
    REMOVED,
    REPAIR,
    REPLICA,
    REPORT_AREA,
    REPORT_REPLICA,
    REPORT_SUMMARY,
    RETENTION_SEGMENT,
    RETENTION_SNAPSHOT,
    RETENTION_SUMMARY,
    SCRAM_CREDENTIAL,
    SEGMENT_SPLIT,
    SEGMENT_WORK,
    SHELL_AT,
    SHELL_CD,
    SHELL_CHANGE,
    SHELL_COMMAND,
    SHELL_DIFF,
    SHELL_ERROR,
    SHELL_HELP,
    SHELL_MATCH,
    SHELL_NODE,
    SHELL_RECORD,
    SHELL_REPLICA,
    SHELL_STEP,
    SIDE_ONLY,
    SMALL_FILE,
    SNAPSHOT,
    SNAPSHOT_FATE,
    SNAPSHOT_ID,
    SPLIT_PIECE,
    STARTUP_BROKERS,
    STARTUP_DIR,
    STARTUP_METADATA_LOG,
    STARTUP_PARTITION,
    STARTUP_SUMMARY,
    SUMMARY,
    TIERED_PARTITION,
    TIERING_SUMMARY,
    TOPIC,
    TRUNCATE,
    WINNER,
    WRITTEN_BY,
    ObjectKind,
    nested_kinds,
)
from tools.docs import DocsError
from tools.docs.roff import bold, esc


@dataclass(frozen=True)
class CommandJson:
    """The --json output of one command after dump and info: an introduction, the kinds
    whose keys its subsection lists (each after its own introduction, ``doc``), in order,
    and paragraphs shown after them."""

    command: str
    intro: str
    kinds: tuple[ObjectKind, ...]
    notes: tuple[str, ...] = ()


#: The objects of dump --json, each in a subsection of its own.
DUMP_KINDS = (FILE, BATCH, RECORD, MASKED, FINDING)

#: The objects of info --json, in the order it writes them.
INFO_KINDS = (DATA_DIR, PARTITION_DIR, LOG_FILE, SMALL_FILE, INFO)

#: Kinds the man page lists in no table: the doc of the key holding them says what they
#: hold.
DESCRIBED_INLINE = (HEADER, FINDING_COUNTS, EPOCH_TRUNCATION, COMMITTED_LOST)

#: The --json output of verify, image, history, diff, truncate, repair, snapshot and
#: export.  A kind met again (the finding objects of verify, truncate's removed) is listed
#: where it is first described only.
COMMAND_JSON: tuple[CommandJson, ...] = (
    CommandJson(
        "verify",
        "kmeta verify --json writes JSON Lines: one finding object per finding (the same objects "
        "as dump --json writes, see finding objects), then a summary object, always the last line.",
        (SUMMARY, LOG_SUMMARY),
    ),
    CommandJson(
        "image",
        "kmeta image --json writes one object (then its findings), kind \"image\": the cluster metadata image replayed "
        "up to the target offset (--at, else the log end), and where the replay started. The image "
        "itself is kmeta's canonical form of the state Kafka's metadata records build: its "
        "sections and, in them, the fields kmeta keeps of each entity, with Kafka's JSON field "
        "names. Top-level keys:",
        (IMAGE, IMAGE_SECTIONS, BROKER, CONTROLLER, ENDPOINT, TOPIC, PARTITION, PRODUCER_IDS, ACL,
         SCRAM_CREDENTIAL, DELEGATION_TOKEN, METADATA_TRANSACTION),
        (
            "With an ACTION, --json writes no image object and no findings (those go to standard "
            "error): kmeta image PATH ls NODE --json writes one JSON array, the names under NODE "
            "(for / the sections above, for a list its indexes 0, 1 ..., [] for a value), and "
            "kmeta image PATH cat NODE --json the JSON value at NODE on one line, as it is in "
            "image (without --json, cat indents it). --digest prints the digest alone, as a line "
            "of text, with or without --json.",
        ),
    ),
    CommandJson(
        "history",
        "kmeta history --json writes JSON Lines: one object, kind \"history\", per metadata record "
        "that touched the topic or the node, in offset order; nothing when no record did. With "
        "--topic NAME: its TopicRecord, the PartitionRecords and PartitionChangeRecords of its "
        "topic ids (with --partition, of that partition only), RemoveTopicRecord, its "
        "ConfigRecords and ClearElrRecords naming it or every topic. With --broker ID: the records "
        "that register, unregister, fence, unfence or change broker or controller ID, and the "
        "PartitionRecords and PartitionChangeRecords with ID as leader or in a replica list "
        "(replicas, isr, addingReplicas, removingReplicas, eligibleLeaderReplicas, lastKnownElr). "
        "Control records, NoOpRecords and records that cannot be decoded are left out, and "
        "findings are not reported (kmeta verify reports them). Keys, all always present:",
        (HISTORY,),
    ),
    CommandJson(
        "brokers",
        "kmeta brokers --json writes JSON Lines: one object, kind \"node_event\", per change of a "
        "broker's or controller's registration in offset order; one, kind \"quorum_leader\", per "
        "Raft epoch read; a finding object per finding (the lifecycle anomalies V130-V133 "
        "and the log's own); then a brokers_summary object, always the last line. "
        "With --broker, --since or --until, only what they keep. A snapshot without a log writes "
        "no event: the summary holds each node's state at the snapshot, and its counts are "
        "null. A count or a value the log cannot know is null, never 0. node_event keys:",
        (NODE_EVENT, REGISTRATION, QUORUM_LEADER, BROKERS_SUMMARY, NODE_SUMMARY),
    ),
    CommandJson(
        "retention",
        "kmeta retention --json writes JSON Lines: one object, kind \"retention_snapshot\", per "
        "snapshot file in offset order; one, kind \"retention_segment\", per segment; one, kind "
        "\"follower\", per --replica; a finding object per finding; then a retention_summary "
        "object, always the last line. retention_snapshot keys:",
        (RETENTION_SNAPSHOT, RETENTION_SEGMENT, FOLLOWER, RETENTION_SUMMARY),
    ),
    CommandJson(
        "consumers",
        "kmeta consumers --json writes JSON Lines: one object, kind \"consumer_group\", per "
        "group with a metadata record (classic, consumer, share or streams; deleted ones too); "
        "one, kind \"consumer_offset\", per group and partition with a committed offset (or the "
        "tombstone that deleted it), in group, topic, partition order; then a consumers_summary "
        "object, always the last line. With --position, one consumer_offset object for the "
        "position and the summary. A finding object per finding comes before the summary. "
        "consumer_group keys:",
        (CONSUMER_GROUP, CONSUMER_OFFSET, CONSUMERS_SUMMARY),
    ),
    CommandJson(
        "tiering",
        "kmeta tiering --json writes JSON Lines: per user partition, one object, kind "
        "\"remote_segment\", per remote segment known after the replay, in offset order, then "
        "one, kind \"tiered_partition\"; a finding object per finding; then a tiering_summary "
        "object, always the last line. remote_segment keys:",
        (REMOTE_SEGMENT, EPOCH_START, TIERED_PARTITION, BOOTSTRAP, TIERING_SUMMARY),
    ),
    CommandJson(
        "report",
        "kmeta report --json writes JSON Lines: one object, kind \"report_replica\", per "
        "metadata log replica found; one, kind \"report_area\", per area (logs, snapshots, "
        "replicas, brokers, consumers, startup, tiering); a finding object per finding of "
        "every analysis, each once; then a report_summary object, always the last line. "
        "report_replica keys:",
        (REPORT_REPLICA, EPOCH_START, REPORT_AREA, NEXT_STEP, REPORT_SUMMARY),
    ),
    CommandJson(
        "shell",
        "kmeta shell --json (with -c or commands on standard input) writes JSON Lines, the "
        "objects of each command in turn: ls, cat, tree and find a \"shell_node\" per node; "
        "at and replica NAME a \"shell_at\"; cd and pwd a \"shell_cd\"; next and prev a "
        "\"shell_step\" per step; diff a \"shell_diff\"; changes PATH a \"shell_record\" "
        "per record, history N a \"shell_command\" per line typed; grep a \"shell_match\" per "
        "leaf; records dump's record objects; replica a \"shell_replica\" per replica; help "
        "a \"shell_help\" per command; and a command that cannot run a \"shell_error\"; "
        "then a \"finding\" per finding opening the log met (a torn tail, a log that is "
        "gone: V020). shell_node keys:",
        (SHELL_NODE, SHELL_AT, SHELL_CD, SHELL_STEP, SHELL_CHANGE, SHELL_DIFF, SHELL_RECORD,
         SHELL_COMMAND, SHELL_MATCH, SHELL_REPLICA, SHELL_HELP, SHELL_ERROR),
    ),
    CommandJson(
        "startup",
        "kmeta startup --json writes JSON Lines: one object, kind \"startup_dir\", per log "
        "dir given; one, kind \"startup_partition\", per partition dir Kafka loads, in log "
        "dir then name order; where the broker's metadata image is known, one, kind "
        "\"placement\", per partition dir that is not plainly in its place and one, kind "
        "\"missing_replica\", per replica the image assigns that is not on disk (as verify "
        "judges them); a finding object per finding; then a startup_summary object, the "
        "last line. Log dirs of different node.ids (broker.ids), or of one node.id in "
        "different clusters each with its own metadata log, are different brokers "
        "(--config makes them one): each broker's objects in turn, each ending with its "
        "startup_summary, then one startup_brokers object, the last line. startup_dir "
        "keys:",
        (STARTUP_DIR, CHECKPOINT_USE, STARTUP_PARTITION, SEGMENT_WORK, OFFSETS_BACKWARDS,
         FILE_FATE, SEGMENT_SPLIT, SPLIT_PIECE, EPOCH_CACHE_PLAN, EPOCH_START,
         OFFSETS_NOT_LOADED, PLACEMENT, MISSING_REPLICA, STARTUP_SUMMARY,
         STARTUP_METADATA_LOG, RECOVERY_CUT, SNAPSHOT_FATE, STARTUP_BROKERS),
    ),
    CommandJson(
        "compact",
        "kmeta compact --json writes JSON Lines: per strategy, one object, kind "
        "\"compact_strategy\", then with --batches one, kind \"compact_batch\", per batch up to "
        "the round's end; one, kind \"compact_disagreement\", per key whose winner differs "
        "between the strategies (with several); one, kind \"compact_key_record\", per record "
        "of --key; a finding object per finding; then a compact_summary object, always the "
        "last line. compact_strategy keys:",
        (COMPACT_STRATEGY, COMPACT_BATCH, COMPACT_DISAGREEMENT, WINNER, COMPACT_KEY_RECORD,
         COMPACT_SUMMARY),
    ),
    CommandJson(
        "diff",
        "kmeta diff --json writes one object (then its findings), kind \"diff\". LOCAL is the first replica given and "
        "each PEER one of the others; replicas are named by the path given on the command line. "
        "The findings met while reading follow it as finding objects (each replica counts "
        "them), with a V160 finding per diverged pair. Top-level keys:",
        (DIFF, REPLICA, PAIR, CONTENT_DIVERGENCE, FETCH_SIMULATION, SIDE_ONLY, IMAGE_DIFF,
         MAJORITY),
    ),
    CommandJson(
        "truncate",
        "kmeta truncate --json writes one object (then its findings), kind \"truncate\": what truncating the log would "
        "remove and change, computed without writing. With --apply, the object written is instead "
        "the one of repair --json (kind \"repair\") for the truncated copy. Keys:",
        (TRUNCATE,),
    ),
    CommandJson(
        "repair",
        "kmeta repair --json writes one object (then its findings): kind \"repair\" for a repaired copy that was "
        "written (and for truncate --apply --json), \"repair-plan\" with --dry-run, where nothing "
        "is written. Both have the same keys:",
        (REPAIR, CUT, REMOVED, CHANGE),
    ),
    CommandJson(
        "snapshot",
        "kmeta snapshot --json writes one object (then its findings), kind \"snapshot\", once the file is written and "
        "read back:",
        (SNAPSHOT, SNAPSHOT_ID),
    ),
    CommandJson(
        "export",
        "kmeta export --json writes one object, kind \"export\", when the Spark job is done:",
        (EXPORT,),
    ),

)


INTRO = (
    "With --json, kmeta dump writes JSON Lines: one object per line, in file order. Every "
    "object has a kind (file, batch, record or finding) and the file it concerns. A file "
    "object comes first for each file, each batch object is followed by its record "
    "objects, and a finding comes where it was met. With --type, only record and finding "
    "objects are written (so that jq .data prints records and nothing else). Keys marked "
    "(optional) appear only when they apply; all others are in every object of their kind. "
    "New keys may be added; existing keys keep their meaning. Bytes are base64 (Kafka's "
    "JSON convention) unless named *_hex. kmeta's own keys are snake_case in every "
    "command's output; the fields of Kafka's records (data "
    "and the image) keep Kafka's JSON names, such as leaderEpoch. The content of a small "
    "file uses snake_case too, except where the file is Kafka's own JSON (quorum-state, "
    ".kafka_cleanshutdown), whose keys are kept as Kafka writes them.",
    "The --json output of the other commands follows the dump and info objects, one "
    "subsection per command, under the same rules. Each of their objects has a kind too "
    "(what kmeta image ls and cat write aside). Every command but export writes its findings "
    "the same way: a finding object per line (as dump --json writes them), after its own "
    "objects, never nested in them; export puts them in its findings table. Across commands "
    "a key has one name and one meaning: offsets named *_offset, a log end offset and a "
    "snapshot's end_offset exclusive, last_offset inclusive; durations end in _ms, times "
    "(ms since the epoch) in timestamp; partition is a partition number, path a "
    "directory; a fact kmeta cannot know is null, never -1 (-1 appears only where Kafka "
    "itself writes it, in a batch's fields, or as a setting's \"off\"). A key said to be "
    "null in some case is then "
    "present with the value null.",
)


def _keys(kind: ObjectKind) -> list[str]:
    out = []
    for k in kind.keys:
        out += [".TP", bold(k.name) + (" (optional)" if k.optional else ""), esc(k.doc)]
    return out


def unlisted() -> list[str]:
    """Kinds some command writes that the man page neither lists nor says are described
    inline (generation fails on them)."""
    listed = {*DUMP_KINDS, *INFO_KINDS, *DESCRIBED_INLINE} | \
        {k for c in COMMAND_JSON for k in c.kinds}
    written = {k for kinds in WRITTEN_BY.values() for top in kinds
               for k in nested_kinds(top)}
    return sorted(k.name for k in written - listed)


def section_json() -> list[str]:
    """The JSON OUTPUT section of the man page."""
    missing = unlisted()
    if missing:
        raise DocsError(f"JSON OUTPUT lists no table of {', '.join(missing)} objects: add "
                        "them to tools/docs/reference.py")
    out = [".SH JSON OUTPUT", esc(INTRO[0]), ".PP", esc(INTRO[1])]
    for kind in DUMP_KINDS:
        out += [f'.SS "{kind.name} objects"', *_keys(kind)]
    out += ['.SS "info objects"']
    for kind in INFO_KINDS:
        out += [".PP", esc(kind.doc or f"{kind.name} objects:"), *_keys(kind)]
    for c in COMMAND_JSON:
        out += [f'.SS "{esc(c.command + " --json")}"', esc(c.intro)]
        for kind in c.kinds:
            if kind.doc:
                out += [".PP", esc(kind.doc)]
            out += _keys(kind)
        for note in c.notes:
            out += [".PP", esc(note)]
    return out
