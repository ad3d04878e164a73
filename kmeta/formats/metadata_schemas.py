"""Every KRaft metadata record type, at every version, in kmeta's schema language.

One :func:`~kmeta.formats.schema.M` per record type; ``METADATA_MESSAGES`` maps Kafka's
``apiKey`` (the record's type id in the metadata frame) to it.  The tables are written from
the facts (names, types, versions, tags, defaults) in Kafka's schema files under
``metadata/src/main/resources/common/metadata/``.  Unless a table says otherwise it
reflects apache/kafka trunk at commit 1eb7644349cb (2024-10-25, after the 3.9 branch);
newer record types and versions are marked with the source they were confirmed from.

Conventions kept exactly as Kafka declares them:

* ``name`` is Kafka's message name, so ``Message.type_name`` is the ``MetadataRecordType``
  enum constant the generator derives from it (e.g. ``ZkMigrationStateRecord`` ->
  ``ZK_MIGRATION_STATE_RECORD``; note the schema *file* is ``ZkMigrationRecord.json``).
* ``default=`` is Kafka's default string ("-1", "-2", "null", "true", ...).  A tagged field
  equal to its default is not written on the wire and is left out of parsed values.
* ``sensitive=True`` marks key material that kmeta redacts unless asked to show secrets.

apiKeys 6, 13 and 16 are unassigned in current Kafka (see ``UNASSIGNED_API_KEYS``).
"""

from __future__ import annotations

import re

from kmeta.formats.schema import F, M, Message

#: Config names whose values are secret: Kafka's PASSWORD-typed configs all match
#: (``*.password``, ``sasl.jaas.config``, ``ssl.keystore.key``, ``*.secret`` …).
SENSITIVE_CONFIG = re.compile(
    r"password|passwd|secret|jaas|credential|token|private|(^|[._])key($|[._])", re.I)

# Struct members shared by broker and controller registrations (same facts, two structs in
# Kafka: BrokerEndpoint/ControllerEndpoint and BrokerFeature/ControllerFeature).
_ENDPOINT = (
    F("Name", "string"),
    F("Host", "string"),
    F("Port", "uint16"),
    F("SecurityProtocol", "int16"),
)
_FEATURE = (
    F("Name", "string"),
    F("MinSupportedVersion", "int16"),
    F("MaxSupportedVersion", "int16"),
)

# -- apiKey 0 ----------------------------------------------------------------------------
# Source: RegisterBrokerRecord.json at 1eb7644 (v0-3).  v4 (CordonedLogDirs, KIP-1066,
# Kafka 4.3) from the same file in mimaison/kafka @36bd7eb (the KIP author's tree), which
# the KIP page corroborates.
REGISTER_BROKER = M(
    "RegisterBrokerRecord", 0, "0-4", "0+",
    F("BrokerId", "int32"),
    F("IsMigratingZkBroker", "bool", "2+", default="false"),
    F("IncarnationId", "uuid"),
    F("BrokerEpoch", "int64"),
    F("EndPoints", "[]BrokerEndpoint", fields=_ENDPOINT),
    F("Features", "[]BrokerFeature", fields=_FEATURE),
    F("Rack", "string", nullable="0+"),
    F("Fenced", "bool", default="true"),
    F("InControlledShutdown", "bool", "1+", default="false"),
    F("LogDirs", "[]uuid", "3+", tagged="3+", tag=0),
    F("CordonedLogDirs", "[]uuid", "4+", tagged="4+", tag=1),
)

# -- apiKey 1 ----------------------------------------------------------------------------
# Source: UnregisterBrokerRecord.json at 1eb7644.
UNREGISTER_BROKER = M(
    "UnregisterBrokerRecord", 1, "0", "0+",
    F("BrokerId", "int32"),
    F("BrokerEpoch", "int64"),
)

# -- apiKey 2 ----------------------------------------------------------------------------
# Source: TopicRecord.json at 1eb7644.
TOPIC = M(
    "TopicRecord", 2, "0", "0+",
    F("Name", "string"),
    F("TopicId", "uuid"),
)

# -- apiKey 3 ----------------------------------------------------------------------------
# Source: PartitionRecord.json at 1eb7644 (v1 adds Directories, KIP-858; v2 adds the
# KIP-966 ELR fields).  No newer version found through Kafka 4.3.
PARTITION = M(
    "PartitionRecord", 3, "0-2", "0+",
    F("PartitionId", "int32", default="-1"),
    F("TopicId", "uuid"),
    F("Replicas", "[]int32"),
    F("Isr", "[]int32"),
    F("RemovingReplicas", "[]int32"),
    F("AddingReplicas", "[]int32"),
    F("Leader", "int32", default="-1"),
    F("LeaderRecoveryState", "int8", default="0", tagged="0+", tag=0),
    F("LeaderEpoch", "int32", default="-1"),
    F("PartitionEpoch", "int32", default="-1"),
    F("Directories", "[]uuid", "1+"),
    F("EligibleLeaderReplicas", "[]int32", "2+", default="null", nullable="2+",
      tagged="2+", tag=1),
    F("LastKnownElr", "[]int32", "2+", default="null", nullable="2+", tagged="2+", tag=2),
)

# -- apiKey 4 ----------------------------------------------------------------------------
# Source: ConfigRecord.json at 1eb7644.  A null Value deletes the config.  (Values of
# password-type configs are not marked here: which ones are secret depends on the config
# name, not on the record schema.)
CONFIG = M(
    "ConfigRecord", 4, "0", "0+",
    F("ResourceType", "int8"),
    F("ResourceName", "string"),
    F("Name", "string"),
    F("Value", "string", nullable="0+"),
)

# -- apiKey 5 ----------------------------------------------------------------------------
# Source: PartitionChangeRecord.json at 1eb7644 (v1 Directories, v2 ELR).  Every change is
# tagged; null / -2 mean "unchanged".  No newer version found through Kafka 4.3.
PARTITION_CHANGE = M(
    "PartitionChangeRecord", 5, "0-2", "0+",
    F("PartitionId", "int32", default="-1"),
    F("TopicId", "uuid"),
    F("Isr", "[]int32", default="null", nullable="0+", tagged="0+", tag=0),
    F("Leader", "int32", default="-2", tagged="0+", tag=1),
    F("Replicas", "[]int32", default="null", nullable="0+", tagged="0+", tag=2),
    F("RemovingReplicas", "[]int32", default="null", nullable="0+", tagged="0+", tag=3),
    F("AddingReplicas", "[]int32", default="null", nullable="0+", tagged="0+", tag=4),
    F("LeaderRecoveryState", "int8", default="-1", tagged="0+", tag=5),
    F("Directories", "[]uuid", "1+", default="null", nullable="1+", tagged="1+", tag=8),
    F("EligibleLeaderReplicas", "[]int32", "2+", default="null", nullable="2+",
      tagged="2+", tag=6),
    F("LastKnownElr", "[]int32", "2+", default="null", nullable="2+", tagged="2+", tag=7),
)

# -- apiKey 7 ----------------------------------------------------------------------------
# Source: FenceBrokerRecord.json at 1eb7644.
FENCE_BROKER = M(
    "FenceBrokerRecord", 7, "0", "0+",
    F("Id", "int32"),
    F("Epoch", "int64"),
)

# -- apiKey 8 ----------------------------------------------------------------------------
# Source: UnfenceBrokerRecord.json at 1eb7644.
UNFENCE_BROKER = M(
    "UnfenceBrokerRecord", 8, "0", "0+",
    F("Id", "int32"),
    F("Epoch", "int64"),
)

# -- apiKey 9 ----------------------------------------------------------------------------
# Source: RemoveTopicRecord.json at 1eb7644.
REMOVE_TOPIC = M(
    "RemoveTopicRecord", 9, "0", "0+",
    F("TopicId", "uuid"),
)

# -- apiKey 10 ---------------------------------------------------------------------------
# Source: DelegationTokenRecord.json at 1eb7644.  The record carries no HMAC: brokers
# recompute it from the token id and the cluster's delegation-token secret key.  The token
# id is therefore the one authenticating value in the record (with the owner it is what a
# client presents), so it is marked sensitive.
DELEGATION_TOKEN = M(
    "DelegationTokenRecord", 10, "0", "0+",
    F("Owner", "string"),
    F("Requester", "string"),
    F("Renewers", "[]string"),
    F("IssueTimestamp", "int64"),
    F("MaxTimestamp", "int64"),
    F("ExpirationTimestamp", "int64"),
    F("TokenId", "string", sensitive=True),
)

# -- apiKey 11 ---------------------------------------------------------------------------
# Source: UserScramCredentialRecord.json at 1eb7644.  The record holds no salted password;
# it holds the salt and the two keys derived from it (RFC 5802 StoredKey and ServerKey).
# Kafka's own RecordRedactor hides all three, and so does kmeta.
USER_SCRAM_CREDENTIAL = M(
    "UserScramCredentialRecord", 11, "0", "0+",
    F("Name", "string"),
    F("Mechanism", "int8"),
    F("Salt", "bytes", sensitive=True),
    F("StoredKey", "bytes", sensitive=True),
    F("ServerKey", "bytes", sensitive=True),
    F("Iterations", "int32"),
)

# -- apiKey 12 ---------------------------------------------------------------------------
# Source: FeatureLevelRecord.json at 1eb7644.  Its version can never advance past 0 (new
# logs begin with it, to say which metadata.version is needed to read them).
FEATURE_LEVEL = M(
    "FeatureLevelRecord", 12, "0", "0+",
    F("Name", "string"),
    F("FeatureLevel", "int16"),
)

# -- apiKey 14 ---------------------------------------------------------------------------
# Source: ClientQuotaRecord.json at 1eb7644.
CLIENT_QUOTA = M(
    "ClientQuotaRecord", 14, "0", "0+",
    F("Entity", "[]EntityData", fields=[
        F("EntityType", "string"),
        F("EntityName", "string", nullable="0+"),
    ]),
    F("Key", "string"),
    F("Value", "float64"),
    F("Remove", "bool"),
)

# -- apiKey 15 ---------------------------------------------------------------------------
# Source: ProducerIdsRecord.json at 1eb7644.
PRODUCER_IDS = M(
    "ProducerIdsRecord", 15, "0", "0+",
    F("BrokerId", "int32"),
    F("BrokerEpoch", "int64", default="-1"),
    F("NextProducerId", "int64"),
)

# -- apiKey 17 ---------------------------------------------------------------------------
# Source: BrokerRegistrationChangeRecord.json at 1eb7644 (v0-2).  v3 (CordonedLogDirs,
# KIP-1066, Kafka 4.3) from the same file in mimaison/kafka @36bd7eb; the KIP states
# "BrokerRegistrationChangeRecord v3 adds the CordonedLogDirs field".
BROKER_REGISTRATION_CHANGE = M(
    "BrokerRegistrationChangeRecord", 17, "0-3", "0+",
    F("BrokerId", "int32"),
    F("BrokerEpoch", "int64"),
    F("Fenced", "int8", tagged="0+", tag=0),
    F("InControlledShutdown", "int8", "1+", tagged="1+", tag=1),
    F("LogDirs", "[]uuid", "2+", tagged="2+", tag=2),
    F("CordonedLogDirs", "[]uuid", "3+", tagged="3+", tag=3),
)

# -- apiKey 18 ---------------------------------------------------------------------------
# Source: AccessControlEntryRecord.json at 1eb7644.
ACCESS_CONTROL_ENTRY = M(
    "AccessControlEntryRecord", 18, "0", "0+",
    F("Id", "uuid"),
    F("ResourceType", "int8"),
    F("ResourceName", "string"),
    F("PatternType", "int8"),
    F("Principal", "string"),
    F("Host", "string"),
    F("Operation", "int8"),
    F("PermissionType", "int8"),
)

# -- apiKey 19 ---------------------------------------------------------------------------
# Source: RemoveAccessControlEntryRecord.json at 1eb7644.
REMOVE_ACCESS_CONTROL_ENTRY = M(
    "RemoveAccessControlEntryRecord", 19, "0", "0+",
    F("Id", "uuid"),
)

# -- apiKey 20 ---------------------------------------------------------------------------
# Source: NoOpRecord.json at 1eb7644.  Empty body: just the (empty) tagged-field section.
NO_OP = M("NoOpRecord", 20, "0", "0+")

# -- apiKey 21 ---------------------------------------------------------------------------
# Source: ZkMigrationRecord.json at 1eb7644 (message name ZkMigrationStateRecord); kept
# unchanged in Kafka 4.x (apache/kafka @de929d3) so 3.x migrated logs stay readable.
ZK_MIGRATION_STATE = M(
    "ZkMigrationStateRecord", 21, "0", "0+",
    F("ZkMigrationState", "int8"),
)

# -- apiKey 22 ---------------------------------------------------------------------------
# Source: RemoveUserScramCredentialRecord.json at 1eb7644.
REMOVE_USER_SCRAM_CREDENTIAL = M(
    "RemoveUserScramCredentialRecord", 22, "0", "0+",
    F("Name", "string"),
    F("Mechanism", "int8"),
)

# -- apiKey 23 ---------------------------------------------------------------------------
# Source: BeginTransactionRecord.json at 1eb7644 (metadata transactions, KIP-868).
BEGIN_TRANSACTION = M(
    "BeginTransactionRecord", 23, "0", "0+",
    F("Name", "string", default="null", nullable="0+", tagged="0+", tag=0),
)

# -- apiKey 24 ---------------------------------------------------------------------------
# Source: EndTransactionRecord.json at 1eb7644 (unchanged at apache/kafka @5c1644f).
END_TRANSACTION = M("EndTransactionRecord", 24, "0", "0+")

# -- apiKey 25 ---------------------------------------------------------------------------
# Source: AbortTransactionRecord.json at 1eb7644.
ABORT_TRANSACTION = M(
    "AbortTransactionRecord", 25, "0", "0+",
    F("Reason", "string", default="null", nullable="0+", tagged="0+", tag=0),
)

# -- apiKey 26 ---------------------------------------------------------------------------
# Source: RemoveDelegationTokenRecord.json at 1eb7644.  The token id is redacted here too,
# so that it cannot be read off the removal of a token that is still being renewed.
REMOVE_DELEGATION_TOKEN = M(
    "RemoveDelegationTokenRecord", 26, "0", "0+",
    F("TokenId", "string", sensitive=True),
)

# -- apiKey 27 ---------------------------------------------------------------------------
# Source: RegisterControllerRecord.json at 1eb7644 (unchanged at apache/kafka @2be4c8f).
REGISTER_CONTROLLER = M(
    "RegisterControllerRecord", 27, "0", "0+",
    F("ControllerId", "int32"),
    F("IncarnationId", "uuid"),
    F("ZkMigrationReady", "bool"),
    F("EndPoints", "[]ControllerEndpoint", fields=_ENDPOINT),
    F("Features", "[]ControllerFeature", fields=_FEATURE),
)

# -- apiKey 28 ---------------------------------------------------------------------------
# Source: ClearElrRecord.json, apache/kafka @9e1f0bb (newer than the 2024-10 snapshot;
# Kafka 4.0+).  An empty TopicName clears the ELRs of every topic.
CLEAR_ELR = M(
    "ClearElrRecord", 28, "0", "0+",
    F("TopicName", "string"),
)

# -- apiKey 29 ---------------------------------------------------------------------------
# Source: UnregisterControllerRecord.json, apache/kafka @4425e970 (KIP-1312, Kafka trunk
# after 4.3; not in a release as of that commit).
UNREGISTER_CONTROLLER = M(
    "UnregisterControllerRecord", 29, "0", "0+",
    F("ControllerId", "int32"),
)


METADATA_MESSAGES: dict[int, Message] = {
    m.api_key: m
    for m in (
        REGISTER_BROKER, UNREGISTER_BROKER, TOPIC, PARTITION, CONFIG, PARTITION_CHANGE,
        FENCE_BROKER, UNFENCE_BROKER, REMOVE_TOPIC, DELEGATION_TOKEN, USER_SCRAM_CREDENTIAL,
        FEATURE_LEVEL, CLIENT_QUOTA, PRODUCER_IDS, BROKER_REGISTRATION_CHANGE,
        ACCESS_CONTROL_ENTRY, REMOVE_ACCESS_CONTROL_ENTRY, NO_OP, ZK_MIGRATION_STATE,
        REMOVE_USER_SCRAM_CREDENTIAL, BEGIN_TRANSACTION, END_TRANSACTION, ABORT_TRANSACTION,
        REMOVE_DELEGATION_TOKEN, REGISTER_CONTROLLER, CLEAR_ELR, UNREGISTER_CONTROLLER,
    )
}
"""Every metadata record type, keyed by Kafka's apiKey (the frame's record type id)."""

UNASSIGNED_API_KEYS = frozenset({6, 13, 16})
"""apiKeys below the highest one that current Kafka's MetadataRecordType does not define.

13 was never used by a schema in any release branch.  6 and 16 were declared by early KRaft
releases but no controller ever wrote them, and Kafka itself no longer reads them: see
``RETIRED_RECORD_NAMES``.
"""

RETIRED_RECORD_NAMES: dict[int, str] = {
    6: "AccessControlRecord",  # declared in 2.8-3.4 release branches, never written
    16: "RemoveFeatureLevelRecord",  # declared in 3.0-3.2 release branches, never written
}
"""Names once declared for the unassigned apiKeys, for diagnostics only (not decodable)."""
