"""KRaft control records: their key, their type ids, and every value schema at every version.

A control record (a record in a batch whose attributes have the control bit set) has a
4-byte key, ``CONTROL_KEY`` (version int16, type int16), whose type is one of Kafka's
``ControlRecordType`` ids.  Its value is a transaction marker (``END_TXN_MARKER``) for
ABORT/COMMIT, or one of the KRaft messages below, written in kmeta's schema language.

Sources: ``clients/src/main/java/org/apache/kafka/common/record/ControlRecordType.java`` and
``EndTransactionMarker.java``, and ``clients/src/main/resources/common/message/*.json`` at
apache/kafka trunk commit 1eb7644349cb (2024-10-25).  The stored copies of newer trunk
files (VotersRecord @d802eba, KRaftVersionRecord @de929d3, and the generated-message
forms ControlRecordType.json / EndTxnMarker.json that later Kafka uses for the key and
the marker) declare the same fields and versions.
"""

from __future__ import annotations

import construct as cs

from kmeta.formats.schema import F, M, Message

# ---------------------------------------------------------------------------- key and types

CONTROL_TYPE_NAMES: dict[int, str] = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}
"""Every ControlRecordType Kafka writes, by id."""

UNKNOWN_CONTROL_TYPE = "UNKNOWN"
"""What Kafka's ``ControlRecordType.fromTypeId`` returns for any other id (its enum value is
-1, which is never written)."""


def control_type_name(type_id: int) -> str:
    return CONTROL_TYPE_NAMES.get(type_id, UNKNOWN_CONTROL_TYPE)


CONTROL_KEY = cs.Struct(
    "version" / cs.Int16sb,
    "type" / cs.Int16sb,
)
"""The control record key (schema version 0).  Kafka reads the type from bytes 2-3 whatever
the version (it only rejects a negative one) and ignores any trailing bytes."""

END_TXN_MARKER = cs.Struct(
    "version" / cs.Int16sb,
    "coordinatorEpoch" / cs.Int32sb,
)
"""The value of an ABORT or COMMIT marker (version 0).  Kafka reads newer versions as
version 0 and ignores trailing bytes, so this does not require the value to end here."""

# ---------------------------------------------------------------------------- KRaft messages

# Source: LeaderChangeMessage.json at 1eb7644 (v1 adds VoterDirectoryId, KAFKA-16915).
# Kafka's "Voter" is a common struct used by both arrays.
_LEADER_CHANGE_VOTER = (
    F("VoterId", "int32"),
    F("VoterDirectoryId", "uuid", "1+"),
)
LEADER_CHANGE = M(
    "LeaderChangeMessage", None, "0-1", "0+",
    F("Version", "int16"),
    F("LeaderId", "int32"),
    F("Voters", "[]Voter", fields=_LEADER_CHANGE_VOTER),
    F("GrantingVoters", "[]Voter", fields=_LEADER_CHANGE_VOTER),
)

# Source: SnapshotHeaderRecord.json at 1eb7644.
SNAPSHOT_HEADER = M(
    "SnapshotHeaderRecord", None, "0", "0+",
    F("Version", "int16"),
    F("LastContainedLogTimestamp", "int64"),
)

# Source: SnapshotFooterRecord.json at 1eb7644.
SNAPSHOT_FOOTER = M(
    "SnapshotFooterRecord", None, "0", "0+",
    F("Version", "int16"),
)

# Source: KRaftVersionRecord.json at 1eb7644 (KIP-853).
KRAFT_VERSION = M(
    "KRaftVersionRecord", None, "0", "0+",
    F("Version", "int16"),
    F("KRaftVersion", "int16"),
)

# Source: VotersRecord.json at 1eb7644 (KIP-853).
KRAFT_VOTERS = M(
    "VotersRecord", None, "0", "0+",
    F("Version", "int16"),
    F("Voters", "[]Voter", fields=[
        F("VoterId", "int32"),
        F("VoterDirectoryId", "uuid"),
        F("Endpoints", "[]Endpoint", fields=[
            F("Name", "string"),
            F("Host", "string"),
            F("Port", "uint16"),
        ]),
        F("KRaftVersionFeature", "KRaftVersionFeature", fields=[
            F("MinSupportedVersion", "int16"),
            F("MaxSupportedVersion", "int16"),
        ]),
    ]),
)

CONTROL_MESSAGES: dict[int, Message] = {
    2: LEADER_CHANGE,
    3: SNAPSHOT_HEADER,
    4: SNAPSHOT_FOOTER,
    5: KRAFT_VERSION,
    6: KRAFT_VOTERS,
}
"""The KRaft control messages, keyed by ControlRecordType id (ABORT and COMMIT carry an
``END_TXN_MARKER`` instead)."""
