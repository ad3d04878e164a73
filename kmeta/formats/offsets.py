"""The records of ``__consumer_offsets``: the classic group coordinator's offset commits and
group metadata, in kmeta's schema language.

Facts from Kafka's schema files (``group-coordinator/src/main/resources/common/message/``
at apache/kafka 1eb7644): a record's key and value each start with an int16 version; the
key's version says the record type (0 and 1: ``OffsetCommitKey``, 2: ``GroupMetadataKey``);
the value's version is that of ``OffsetCommitValue`` or ``GroupMetadataValue`` (0-4, the
fourth flexible).  A null value is a tombstone: the offset or the group was deleted.  Keys
of version 3 and above belong to the new group coordinator (KIP-848, share groups); they
are shown raw here.
"""

from __future__ import annotations

import struct

from kmeta.formats.payload import Payload, read_body
from kmeta.formats.schema import F, M, Message

__all__ = ["OFFSETS_KEYS", "decode_offsets"]

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

#: key version -> (record type, key schema, value schema)
OFFSETS_KEYS: dict[int, tuple[str, Message, Message]] = {
    0: ("OFFSET_COMMIT", OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    1: ("OFFSET_COMMIT", OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    2: ("GROUP_METADATA", GROUP_METADATA_KEY, GROUP_METADATA_VALUE),
}


def _hex(b: bytes | None) -> str | None:
    return None if b is None else b.hex()


def _version(b: bytes) -> int:
    return struct.unpack_from(">h", b, 0)[0]


def decode_offsets(key: bytes | None, value: bytes | None) -> Payload:
    """One ``__consumer_offsets`` record: its type, the value's version, and ``{"key":
    ..., "value": ...}`` (``value`` null for a tombstone); F012 when it does not decode."""
    if key is None or len(key) < 2:
        return Payload("UNKNOWN", None, {"key": _hex(key), "value": _hex(value)},
                       ("F012", "__consumer_offsets key is shorter than its 2-byte version"))
    known = OFFSETS_KEYS.get(_version(key))
    if known is None:
        return Payload(f"UNKNOWN({_version(key)})", None,
                       {"key": key.hex(), "value": _hex(value)},
                       ("F013", f"__consumer_offsets key version {_version(key)} is not a "
                                "classic offset commit or group metadata record"))
    type_name, key_schema, value_schema = known
    key_data, err = read_body(key_schema, _version(key), key, 2)
    if err:
        return Payload(type_name, None, {"key": key.hex(), "value": _hex(value)},
                       ("F012", f"{key_schema.name}: {err}"))
    if value is None:
        return Payload(type_name, None, {"key": key_data, "value": None})
    if len(value) < 2:
        return Payload(type_name, None, {"key": key_data, "value": value.hex()},
                       ("F012", f"{value_schema.name} is shorter than its 2-byte version"))
    version = _version(value)
    if not value_schema.supports(version):
        return Payload(type_name, version, {"key": key_data, "value": value.hex()},
                       ("F013", f"{value_schema.name} version {version} is not in Kafka's "
                                f"schemas known to kmeta ({value_schema.valid_versions})"))
    data, err = read_body(value_schema, version, value, 2)
    if err:
        return Payload(type_name, version, {"key": key_data, "value": value.hex()},
                       ("F012", f"{value_schema.name} v{version}: {err}"))
    return Payload(type_name, version, {"key": key_data, "value": data})
