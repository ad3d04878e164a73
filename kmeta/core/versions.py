"""Which metadata.version a record needs: Kafka's ``MetadataVersion`` rules, as a table.

Source: ``server-common/.../MetadataVersion.java`` (feature levels, ``is…Supported``,
``registerBrokerRecordVersion``, ``partitionRecordVersion``,
``partitionChangeRecordVersion``).  A controller never writes a record (or a record
version) before the cluster's ``metadata.version`` feature level allows it, so one that
appears earlier means the log was not written by a well-behaved controller.
"""

from __future__ import annotations

from functools import cache

#: metadata.version feature level -> its Kafka name.
LEVEL_NAMES = {
    1: "3.0-IV1", 2: "3.1-IV0", 3: "3.2-IV0", 4: "3.3-IV0", 5: "3.3-IV1", 6: "3.3-IV2",
    7: "3.3-IV3", 8: "3.4-IV0", 9: "3.5-IV0", 10: "3.5-IV1", 11: "3.5-IV2", 12: "3.6-IV0",
    13: "3.6-IV1", 14: "3.6-IV2", 15: "3.7-IV0", 16: "3.7-IV1", 17: "3.7-IV2",
    18: "3.7-IV3", 19: "3.7-IV4", 20: "3.8-IV0", 21: "3.9-IV0", 22: "4.0-IV0",
    23: "4.0-IV1", 24: "4.0-IV2", 25: "4.0-IV3",
}

# (record type, lowest version with this need) -> the feature level it needs.  A version
# not listed needs what the nearest lower listed version of the same type needs.
_NEEDS: dict[tuple[str, int], int] = {
    ("NO_OP_RECORD", 0): 5,                          # isNoOpRecordSupported
    ("BROKER_REGISTRATION_CHANGE_RECORD", 0): 6,     # isBrokerRegistrationChangeRecordSupported
    ("REGISTER_BROKER_RECORD", 1): 7,                # isInControlledShutdownStateSupported
    ("REGISTER_BROKER_RECORD", 2): 8,                # isMigrationSupported
    ("REGISTER_BROKER_RECORD", 3): 17,               # isDirectoryAssignmentSupported
    ("ZK_MIGRATION_STATE_RECORD", 0): 8,             # isMigrationSupported
    ("USER_SCRAM_CREDENTIAL_RECORD", 0): 11,         # isScramSupported
    ("REMOVE_USER_SCRAM_CREDENTIAL_RECORD", 0): 11,
    ("BEGIN_TRANSACTION_RECORD", 0): 13,             # isMetadataTransactionSupported
    ("END_TRANSACTION_RECORD", 0): 13,
    ("ABORT_TRANSACTION_RECORD", 0): 13,
    ("DELEGATION_TOKEN_RECORD", 0): 14,              # isDelegationTokenSupported
    ("REMOVE_DELEGATION_TOKEN_RECORD", 0): 14,
    ("REGISTER_CONTROLLER_RECORD", 0): 15,           # isControllerRegistrationSupported
    ("PARTITION_RECORD", 1): 17,                     # isDirectoryAssignmentSupported
    ("PARTITION_RECORD", 2): 23,                     # isElrSupported
    ("PARTITION_CHANGE_RECORD", 1): 17,
    ("PARTITION_CHANGE_RECORD", 2): 23,
    ("CLEAR_ELR_RECORD", 0): 23,
}


@cache
def required_level(type_name: str, version: int | None) -> int | None:
    """The lowest metadata.version feature level at which Kafka writes this record."""
    best = None
    for (t, v), level in _NEEDS.items():
        if t == type_name and version is not None and v <= version and \
                (best is None or v >= best[0]):
            best = (v, level)
    return best[1] if best else None
