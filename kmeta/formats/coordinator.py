"""The logs the coordinators write, decoded: ``__consumer_offsets`` (the group coordinator;
its schemas are in :mod:`kmeta.formats.group_schemas`), ``__transaction_state`` (the
transaction coordinator) and ``__share_group_state`` (the share coordinator, KIP-932).

All three frame a record alike: the key and the value each start with an int16 version,
and the key's version says the record type.
- ``__transaction_state``: key 0 is ``TransactionLogKey``; ``TransactionLogValue`` 0-1 (the
  first flexible, with tagged producer ids and the client's transaction version), from
  ``transaction-coordinator/src/main/resources/common/message/`` at apache/kafka 1eb7644.
- ``__share_group_state``: key 0 is ``ShareSnapshotKey``, key 1 ``ShareUpdateKey``; their
  values are version 0 as Kafka declares them once share groups left preview (int32
  ``SnapshotEpoch``, the snapshot's create and write timestamps, the tagged
  ``DeliveryCompleteCount`` of 4.2); the preview's layout (uint16 epoch) is reported, not
  guessed at.
A null value is a tombstone: the offset, the group, the transactional id or the share
partition's state was deleted.
"""

from __future__ import annotations

import struct
from typing import Any

from kmeta.formats.group_schemas import OFFSETS_KEYS
from kmeta.formats.payload import Payload, read_body
from kmeta.formats.schema import F, M, Message, message_construct

__all__ = ["OFFSETS_KEYS", "SHARE_STATE_KEYS", "TRANSACTION_KEYS", "decode_offsets",
           "decode_share_group_state", "decode_transactions", "encode_coordinator"]

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


_STATE_BATCHES = F("StateBatches", "[]StateBatch", fields=(
    F("FirstOffset", "int64"),
    F("LastOffset", "int64"),
    F("DeliveryState", "int8"),
    F("DeliveryCount", "int16"),
))

_DELIVERY_COMPLETE_COUNT = F("DeliveryCompleteCount", "int32", tagged="0+", tag=0, default="-1")

SHARE_SNAPSHOT_KEY = M(
    "ShareSnapshotKey", None, "0", "none",
    F("GroupId", "string", "0"),
    F("TopicId", "uuid", "0"),
    F("Partition", "int32", "0"),
)

SHARE_SNAPSHOT_VALUE = M(
    "ShareSnapshotValue", None, "0", "0+",
    F("SnapshotEpoch", "int32"),
    F("StateEpoch", "int32"),
    F("LeaderEpoch", "int32"),
    F("StartOffset", "int64"),
    _DELIVERY_COMPLETE_COUNT,
    F("CreateTimestamp", "int64"),
    F("WriteTimestamp", "int64"),
    _STATE_BATCHES,
)

SHARE_UPDATE_KEY = M(
    "ShareUpdateKey", None, "1", "none",
    F("GroupId", "string", "1"),
    F("TopicId", "uuid", "1"),
    F("Partition", "int32", "1"),
)

SHARE_UPDATE_VALUE = M(
    "ShareUpdateValue", None, "0", "0+",
    F("SnapshotEpoch", "int32"),
    F("LeaderEpoch", "int32"),
    F("StartOffset", "int64"),
    _DELIVERY_COMPLETE_COUNT,
    _STATE_BATCHES,
)

SHARE_STATE_KEYS: dict[int, tuple[str, Message, Message]] = {
    0: ("SHARE_SNAPSHOT", SHARE_SNAPSHOT_KEY, SHARE_SNAPSHOT_VALUE),
    1: ("SHARE_UPDATE", SHARE_UPDATE_KEY, SHARE_UPDATE_VALUE),
}


def encode_coordinator(keys: dict[int, tuple[str, Message, Message]], key_type: int,
                       key: dict[str, Any], version: int | None = None,
                       value: dict[str, Any] | None = None) -> tuple[bytes, bytes | None]:
    """A coordinator record's key and value (``value`` None: a tombstone), the inverse of
    :func:`_decode` for the table ``keys``."""
    _, key_schema, value_schema = keys[key_type]
    k = struct.pack(">h", key_type) + message_construct(key_schema, key_type).build(key)
    if value is None:
        return k, None
    if version is None or not value_schema.supports(version):
        raise ValueError(f"{value_schema.name} has no version {version}")
    return k, struct.pack(">h", version) + message_construct(value_schema, version).build(value)


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


def decode_share_group_state(key: bytes | None, value: bytes | None) -> Payload:
    """One ``__share_group_state`` record (see :func:`_decode`)."""
    return _decode(key, value, SHARE_STATE_KEYS, "__share_group_state",
                   "a share snapshot or share update record")


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
