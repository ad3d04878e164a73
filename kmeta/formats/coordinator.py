"""The records of the coordinators' logs, in kmeta's schema language:
``__consumer_offsets`` (the classic group coordinator's offset commits and group metadata)
and ``__transaction_state`` (the transaction coordinator's transactional ids).

Facts from Kafka's schema files (``group-coordinator/`` and ``transaction-coordinator/
src/main/resources/common/message/`` at apache/kafka 1eb7644): a record's key and value
each start with an int16 version, and the key's version says the record type.
- ``__consumer_offsets``: keys 0 and 1 are ``OffsetCommitKey``, key 2 ``GroupMetadataKey``;
  the value's version is that of ``OffsetCommitValue`` or ``GroupMetadataValue`` (0-4, the
  fourth flexible).  Keys of version 3 and above belong to the new group coordinator
  (KIP-848, share groups); they are shown raw here.
- ``__transaction_state``: key 0 is ``TransactionLogKey``; ``TransactionLogValue`` 0-1 (the
  first flexible, with tagged producer ids and the client's transaction version).
A null value is a tombstone: the offset, the group or the transactional id was deleted.
"""

from __future__ import annotations

import struct

from kmeta.formats.payload import Payload, read_body
from kmeta.formats.schema import F, M, Message

__all__ = ["OFFSETS_KEYS", "TRANSACTION_KEYS", "decode_offsets", "decode_transactions"]

OFFSET_COMMIT_KEY = M(
    "OffsetCommitKey", None, "0-1", "none",
    F("Group", "string"),
    F("Topic", "string"),
    F("Partition", "int32"),
)

OFFSET_COMMIT_VALUE = M(
    "OffsetCommitValue", None, "0-4", "4+",
    F("Offset", "int64"),
    F("LeaderEpoch", "int32", "3+", default="-1"),
    F("Metadata", "string"),
    F("CommitTimestamp", "int64"),
    F("ExpireTimestamp", "int64", "1", default="-1"),
)

GROUP_METADATA_KEY = M(
    "GroupMetadataKey", None, "2", "none",
    F("Group", "string", "2"),
)

GROUP_METADATA_VALUE = M(
    "GroupMetadataValue", None, "0-4", "4+",
    F("ProtocolType", "string"),
    F("Generation", "int32"),
    F("Protocol", "string", nullable="0+"),
    F("Leader", "string", nullable="0+"),
    F("CurrentStateTimestamp", "int64", "2+", default="-1"),
    F("Members", "[]MemberMetadata", fields=(
        F("MemberId", "string"),
        F("GroupInstanceId", "string", "3+", default="null", nullable="3+"),
        F("ClientId", "string"),
        F("ClientHost", "string"),
        F("RebalanceTimeout", "int32", "1+", default="-1"),
        F("SessionTimeout", "int32"),
        F("Subscription", "bytes"),
        F("Assignment", "bytes"),
    )),
)

#: Per topic, key version -> (record type, key schema, value schema).
OFFSETS_KEYS: dict[int, tuple[str, Message, Message]] = {
    0: ("OFFSET_COMMIT", OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    1: ("OFFSET_COMMIT", OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    2: ("GROUP_METADATA", GROUP_METADATA_KEY, GROUP_METADATA_VALUE),
}

TRANSACTION_LOG_KEY = M(
    "TransactionLogKey", None, "0", "none",
    F("TransactionalId", "string", "0"),
)

TRANSACTION_LOG_VALUE = M(
    "TransactionLogValue", None, "0-1", "1+",
    F("ProducerId", "int64"),
    F("PreviousProducerId", "int64", "1+", tagged="1+", tag=0, default="-1"),
    F("NextProducerId", "int64", "1+", tagged="1+", tag=1, default="-1"),
    F("ProducerEpoch", "int16"),
    F("TransactionTimeoutMs", "int32"),
    F("TransactionStatus", "int8"),
    F("TransactionPartitions", "[]PartitionsSchema", nullable="0+", fields=(
        F("Topic", "string"),
        F("PartitionIds", "[]int32"),
    )),
    F("TransactionLastUpdateTimestampMs", "int64"),
    F("TransactionStartTimestampMs", "int64"),
    F("ClientTransactionVersion", "int16", "1+", tagged="1+", tag=2, default="0"),
)

TRANSACTION_KEYS: dict[int, tuple[str, Message, Message]] = {
    0: ("TRANSACTION_LOG", TRANSACTION_LOG_KEY, TRANSACTION_LOG_VALUE),
}


def _hex(b: bytes | None) -> str | None:
    return None if b is None else b.hex()


def decode_offsets(key: bytes | None, value: bytes | None) -> Payload:
    """One ``__consumer_offsets`` record (see :func:`_decode`)."""
    return _decode(key, value, OFFSETS_KEYS, "__consumer_offsets",
                   "a classic offset commit or group metadata record")


def decode_transactions(key: bytes | None, value: bytes | None) -> Payload:
    """One ``__transaction_state`` record (see :func:`_decode`)."""
    return _decode(key, value, TRANSACTION_KEYS, "__transaction_state",
                   "a transaction log record")


def _decode(key: bytes | None, value: bytes | None,
            keys: dict[int, tuple[str, Message, Message]], topic: str, known: str) -> Payload:
    """A coordinator record: its type, the value's version, and ``{"key": ..., "value":
    ...}`` (``value`` null for a tombstone); F012 when it breaks its schema, F013 when its
    version is not one kmeta decodes."""
    if key is None or len(key) < 2:
        return Payload("UNKNOWN", None, {"key": _hex(key), "value": _hex(value)},
                       ("F012", f"{topic} key is shorter than its 2-byte version"))
    (key_version,) = struct.unpack_from(">h", key, 0)
    entry = keys.get(key_version)
    if entry is None:
        return Payload(f"UNKNOWN({key_version})", None, {"key": key.hex(), "value": _hex(value)},
                       ("F013", f"{topic} key version {key_version} is not {known}"))
    type_name, key_schema, value_schema = entry
    key_data, err = read_body(key_schema, key_version, key, 2)
    if err:
        return Payload(type_name, None, {"key": key.hex(), "value": _hex(value)},
                       ("F012", f"{key_schema.name}: {err}"))
    if value is None:
        return Payload(type_name, None, {"key": key_data, "value": None})
    if len(value) < 2:
        return Payload(type_name, None, {"key": key_data, "value": value.hex()},
                       ("F012", f"{value_schema.name} is shorter than its 2-byte version"))
    (version,) = struct.unpack_from(">h", value, 0)
    if not value_schema.supports(version):
        return Payload(type_name, version, {"key": key_data, "value": value.hex()},
                       ("F013", f"{value_schema.name} version {version} is not in Kafka's "
                                f"schemas known to kmeta ({value_schema.valid_versions})"))
    data, err = read_body(value_schema, version, value, 2)
    if err:
        return Payload(type_name, version, {"key": key_data, "value": value.hex()},
                       ("F012", f"{value_schema.name} v{version}: {err}"))
    return Payload(type_name, version, {"key": key_data, "value": data})
