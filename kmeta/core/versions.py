"""Which metadata record version Kafka writes at which metadata.version: one table.

Source: ``server-common/.../MetadataVersion.java`` (feature levels, the ``is…Supported``
predicates, ``registerBrokerRecordVersion``, ``partitionRecordVersion``,
``partitionChangeRecordVersion``), levels 7-33 as of apache/kafka 4425e970, whose enum
starts at 3.3-IV3; levels 1-6 as Kafka 3.x declared them.  A controller never writes a
record (or a record version) before the cluster's ``metadata.version`` feature level
allows it, so one that appears earlier means the log was not written by a well-behaved
controller.  Everything else derives from :data:`RECORD_VERSIONS`: :func:`required_level`
(verify's V120, snapshot's notes) and :func:`written_version` (the records ``kmeta
snapshot`` writes, and the fixture generator).
"""

from __future__ import annotations

from functools import cache

#: metadata.version feature level -> its Kafka name.
LEVEL_NAMES = {
    1: "3.0-IV1", 2: "3.1-IV0", 3: "3.2-IV0", 4: "3.3-IV0", 5: "3.3-IV1", 6: "3.3-IV2",
    7: "3.3-IV3", 8: "3.4-IV0", 9: "3.5-IV0", 10: "3.5-IV1", 11: "3.5-IV2", 12: "3.6-IV0",
    13: "3.6-IV1", 14: "3.6-IV2", 15: "3.7-IV0", 16: "3.7-IV1", 17: "3.7-IV2",
    18: "3.7-IV3", 19: "3.7-IV4", 20: "3.8-IV0", 21: "3.9-IV0", 22: "4.0-IV0",
    23: "4.0-IV1", 24: "4.0-IV2", 25: "4.0-IV3", 26: "4.1-IV0", 27: "4.1-IV1",
    28: "4.2-IV0", 29: "4.2-IV1", 30: "4.3-IV0", 31: "4.4-IV0", 32: "4.4-IV1",
    33: "4.4-IV2",
}

#: A log without a metadata.version record is read as 3.0-IV1, the oldest KRaft version
#: (Kafka 3.x's ``MetadataVersion.MINIMUM_KRAFT_VERSION``).
MINIMUM_KRAFT_LEVEL = 1
#: The newest level kmeta knows.
LATEST_LEVEL = max(LEVEL_NAMES)

# The levels at which MetadataVersion's predicates turn on.  (4.4-IV1, isCidrAclSupported,
# changes what an ACL's host may hold, not a record version.)
_KRAFT = MINIMUM_KRAFT_LEVEL
_NO_OP = 5                      # 3.3-IV1 isNoOpRecordSupported
_BROKER_REGISTRATION_CHANGE = 6  # 3.3-IV2 isBrokerRegistrationChangeRecordSupported
_IN_CONTROLLED_SHUTDOWN = 7     # 3.3-IV3 isInControlledShutdownStateSupported
_MIGRATION = 8                  # 3.4-IV0 isMigrationSupported
_SCRAM = 11                     # 3.5-IV2 isScramSupported
_METADATA_TRANSACTIONS = 13     # 3.6-IV1 isMetadataTransactionSupported
_DELEGATION_TOKENS = 14         # 3.6-IV2 isDelegationTokenSupported
_CONTROLLER_REGISTRATION = 15   # 3.7-IV0 isControllerRegistrationSupported
_DIRECTORY_ASSIGNMENT = 17      # 3.7-IV2 isDirectoryAssignmentSupported
_ELR = 23                       # 4.0-IV1 isElrSupported
_CORDONED_LOG_DIRS = 30         # 4.3-IV0 isCordonedLogDirsSupported (KIP-1066)
_CONTROLLER_UNREGISTRATION = 33  # 4.4-IV2 isControllerUnregistrationSupported (KIP-1312)

#: record type -> ``(level, version)`` steps: from ``level`` on, Kafka writes ``version``.
#: Every version of every metadata record kmeta's schemas know has a step (a test holds
#: this table to the schema table).
RECORD_VERSIONS: dict[str, tuple[tuple[int, int], ...]] = {
    "REGISTER_BROKER_RECORD": ((_KRAFT, 0), (_IN_CONTROLLED_SHUTDOWN, 1), (_MIGRATION, 2),
                               (_DIRECTORY_ASSIGNMENT, 3), (_CORDONED_LOG_DIRS, 4)),
    "BROKER_REGISTRATION_CHANGE_RECORD": (
        (_BROKER_REGISTRATION_CHANGE, 0), (_IN_CONTROLLED_SHUTDOWN, 1),
        (_DIRECTORY_ASSIGNMENT, 2), (_CORDONED_LOG_DIRS, 3)),
    "PARTITION_RECORD": ((_KRAFT, 0), (_DIRECTORY_ASSIGNMENT, 1), (_ELR, 2)),
    "PARTITION_CHANGE_RECORD": ((_KRAFT, 0), (_DIRECTORY_ASSIGNMENT, 1), (_ELR, 2)),
    "NO_OP_RECORD": ((_NO_OP, 0),),
    "ZK_MIGRATION_STATE_RECORD": ((_MIGRATION, 0),),
    "USER_SCRAM_CREDENTIAL_RECORD": ((_SCRAM, 0),),
    "REMOVE_USER_SCRAM_CREDENTIAL_RECORD": ((_SCRAM, 0),),
    "BEGIN_TRANSACTION_RECORD": ((_METADATA_TRANSACTIONS, 0),),
    "END_TRANSACTION_RECORD": ((_METADATA_TRANSACTIONS, 0),),
    "ABORT_TRANSACTION_RECORD": ((_METADATA_TRANSACTIONS, 0),),
    "DELEGATION_TOKEN_RECORD": ((_DELEGATION_TOKENS, 0),),
    "REMOVE_DELEGATION_TOKEN_RECORD": ((_DELEGATION_TOKENS, 0),),
    "REGISTER_CONTROLLER_RECORD": ((_CONTROLLER_REGISTRATION, 0),),
    "CLEAR_ELR_RECORD": ((_ELR, 0),),
    "UNREGISTER_CONTROLLER_RECORD": ((_CONTROLLER_UNREGISTRATION, 0),),
    # written since the first KRaft version
    **{t: ((_KRAFT, 0),) for t in (
        "UNREGISTER_BROKER_RECORD", "TOPIC_RECORD", "CONFIG_RECORD", "FENCE_BROKER_RECORD",
        "UNFENCE_BROKER_RECORD", "REMOVE_TOPIC_RECORD", "FEATURE_LEVEL_RECORD",
        "CLIENT_QUOTA_RECORD", "PRODUCER_IDS_RECORD", "ACCESS_CONTROL_ENTRY_RECORD",
        "REMOVE_ACCESS_CONTROL_ENTRY_RECORD")},
}


@cache
def required_level(type_name: str, version: int | None) -> int | None:
    """The lowest metadata.version feature level at which Kafka writes this record
    version; None when every KRaft log may hold it, or for a type or version the table
    does not know."""
    for level, v in RECORD_VERSIONS.get(type_name, ()):
        if v == version:
            return level if level > MINIMUM_KRAFT_LEVEL else None
    return None


def written_version(type_name: str, level: int) -> int | None:
    """The version of ``type_name`` Kafka writes at ``level``; None before it exists."""
    version = None
    for step, v in RECORD_VERSIONS[type_name]:
        if step <= level:
            version = v
    return version


def level_label(level: int | None) -> str:
    """A level for people: ``30 (4.3-IV0)``, a bare number kmeta cannot name, or ``none``."""
    if level is None:
        return "none"
    return f"{level} ({LEVEL_NAMES[level]})" if level in LEVEL_NAMES else str(level)
