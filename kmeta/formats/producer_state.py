"""Producer-state snapshot files (``<20-digit offset>.snapshot`` in a partition directory).

Spec (in ``apache/kafka``): ``storage/src/main/resources/message/ProducerSnapshot.json``
and ``ProducerStateManager.readSnapshot`` / ``writeSnapshot`` (before 3.5:
``core/.../log/ProducerStateManager.scala``, with the same layout since 0.11.0).  There is
one version, 1, and it is not a flexible version:

* ``version`` int16, ``crc`` uint32, then ``producerEntries``: an int32 count and that many
  46-byte entries (``producerId`` int64, ``epoch`` int16, ``lastSequence`` int32,
  ``lastOffset`` int64, ``offsetDelta`` int32, ``timestamp`` int64, ``coordinatorEpoch``
  int32, ``currentTxnFirstOffset`` int64), all big-endian.
* ``crc`` is CRC-32C of every byte from offset 6 (the entry count) to the end of the file.

A snapshot with no producers is the 10 bytes ``00 01 48 67 4b c7 00 00 00 00``.  A CRC
mismatch is reported in the result (:attr:`ProducerSnapshot.crc_valid`), not raised;
bytes that cannot be read as the schema raise :class:`~kmeta.errors.FormatError`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import construct as cs

from kmeta.errors import FormatError
from kmeta.formats.checksum import crc32c
from kmeta.formats.primitives import derive_struct

PRODUCER_ENTRY = cs.Struct(
    "producerId" / cs.Int64sb,
    "epoch" / cs.Int16sb,
    "lastSequence" / cs.Int32sb,
    "lastOffset" / cs.Int64sb,
    "offsetDelta" / cs.Int32sb,
    "timestamp" / cs.Int64sb,
    "coordinatorEpoch" / cs.Int32sb,
    "currentTxnFirstOffset" / cs.Int64sb,
)

#: version -> body after the version field.  Add a row when Kafka adds a version.
SNAPSHOT_BODIES: dict[int, cs.Construct] = {
    1: cs.Struct(
        "crc" / cs.Int32ub,
        "count" / cs.Rebuild(cs.Int32sb, cs.len_(cs.this.producerEntries)),
        "producerEntries" / cs.Array(cs.this.count, PRODUCER_ENTRY),
    ),
}

PRODUCER_SNAPSHOT = cs.Struct(
    "version" / cs.Int16sb,
    "body" / cs.Switch(cs.this.version, SNAPSHOT_BODIES),
)

VERSION_OFFSET = 0
CRC_OFFSET = 2
ENTRIES_OFFSET = 6  # where the CRC-covered bytes begin
CURRENT_VERSION = max(SNAPSHOT_BODIES)


def _derive_header(version: int) -> struct.Struct:
    """version, crc and entry count: the fixed fields in front of the entries."""
    body = SNAPSHOT_BODIES[version]
    fields = [PRODUCER_SNAPSHOT.subcons[0].subcon, body.subcons[0].subcon,
              body.subcons[1].subcon.subcon]
    return struct.Struct(">" + "".join(f.fmtstr[1:] for f in fields))


ENTRY_STRUCT = derive_struct(PRODUCER_ENTRY)
ENTRY_SIZE = ENTRY_STRUCT.size  # 46
_HEADER = _derive_header(CURRENT_VERSION)  # >hIi


@dataclass(frozen=True, slots=True)
class ProducerEntry:
    """One producer's state.  ``last_offset`` < 0 means no batch metadata;
    ``current_txn_first_offset`` < 0 means no open transaction."""

    producer_id: int
    epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int = -1

    def to_json(self) -> dict[str, Any]:
        return {
            "producer_id": self.producer_id,
            "epoch": self.epoch,
            "last_sequence": self.last_sequence,
            "last_offset": self.last_offset,
            "offset_delta": self.offset_delta,
            "timestamp": self.timestamp,
            "coordinator_epoch": self.coordinator_epoch,
            "current_txn_first_offset": self.current_txn_first_offset,
        }


@dataclass(frozen=True, slots=True)
class ProducerSnapshot:
    """A producer-state snapshot.

    ``bad_crc`` is ``None`` when the stored CRC matches the contents (and, when building,
    means "write the right CRC"); otherwise it is the stored, wrong, CRC.  ``trailing``
    holds bytes after the last entry (Kafka ignores them when decoding but they are
    covered by the CRC).
    """

    entries: tuple[ProducerEntry, ...] = ()
    version: int = CURRENT_VERSION
    bad_crc: int | None = None
    trailing: bytes = b""

    def __post_init__(self) -> None:
        object.__setattr__(self, "entries", tuple(self.entries))
        object.__setattr__(self, "trailing", bytes(self.trailing))
        if self.version not in SNAPSHOT_BODIES:
            raise ValueError(f"unknown producer snapshot version {self.version!r}")
        if self.bad_crc is not None and not 0 <= self.bad_crc <= 0xFFFFFFFF:
            raise ValueError("bad_crc must be an unsigned 32-bit value")

    @property
    def crc_valid(self) -> bool:
        return self.bad_crc is None

    @property
    def computed_crc(self) -> int:
        """The CRC-32C the contents call for."""
        return crc32c(_covered(self))

    @property
    def stored_crc(self) -> int:
        return self.computed_crc if self.bad_crc is None else self.bad_crc

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "crc": self.stored_crc,
            "computed_crc": self.computed_crc,
            "crc_valid": self.crc_valid,
            "trailing_bytes": len(self.trailing),
            "producer_entries": [e.to_json() for e in self.entries],
        }


def _covered(value: ProducerSnapshot) -> bytes:
    """The CRC-covered bytes: entry count, entries, trailing bytes."""
    return _build_body(value, 0)[ENTRIES_OFFSET:]


def _build_body(value: ProducerSnapshot, crc: int) -> bytes:
    items = [{
        "producerId": e.producer_id, "epoch": e.epoch, "lastSequence": e.last_sequence,
        "lastOffset": e.last_offset, "offsetDelta": e.offset_delta, "timestamp": e.timestamp,
        "coordinatorEpoch": e.coordinator_epoch,
        "currentTxnFirstOffset": e.current_txn_first_offset,
    } for e in value.entries]
    body = {"crc": crc, "producerEntries": items}
    try:
        data = PRODUCER_SNAPSHOT.build({"version": value.version, "body": body})
    except cs.ConstructError as e:
        raise ValueError(f"cannot build producer snapshot: {e}") from None
    return data + value.trailing


def build_producer_snapshot(value: ProducerSnapshot) -> bytes:
    """The file bytes, with the CRC computed (or ``bad_crc`` written, to reproduce damage)."""
    data = bytearray(_build_body(value, 0))
    crc = crc32c(bytes(data[ENTRIES_OFFSET:]))
    if value.bad_crc is not None:
        if value.bad_crc == crc:
            raise ValueError("bad_crc equals the correct CRC; use bad_crc=None")
        crc = value.bad_crc
    struct.pack_into(">I", data, CRC_OFFSET, crc)
    return bytes(data)


def parse_producer_snapshot(data: bytes | bytearray | memoryview) -> ProducerSnapshot:
    """Decode a producer snapshot (fast path derived from :data:`PRODUCER_ENTRY`)."""
    raw = bytes(data)
    if len(raw) < _HEADER.size:
        raise FormatError(f"producer snapshot: {len(raw)} bytes is shorter than the "
                          f"{_HEADER.size}-byte header", position=0)
    version, crc, count = _HEADER.unpack_from(raw, 0)
    if version not in SNAPSHOT_BODIES:
        raise FormatError(f"producer snapshot: unknown version {version} (Kafka knows "
                          f"{sorted(SNAPSHOT_BODIES)})", position=VERSION_OFFSET)
    if count < 0:
        raise FormatError(f"producer snapshot: negative producer entry count {count}",
                          position=ENTRIES_OFFSET)
    end = _HEADER.size + count * ENTRY_SIZE
    if end > len(raw):
        raise FormatError(f"producer snapshot: {count} entries need {end} bytes, the file "
                          f"has {len(raw)}", position=ENTRIES_OFFSET)
    entries = tuple(ProducerEntry(*f)
                    for f in ENTRY_STRUCT.iter_unpack(memoryview(raw)[_HEADER.size:end]))
    computed = crc32c(memoryview(raw)[ENTRIES_OFFSET:])
    return ProducerSnapshot(entries, version, None if crc == computed else crc, raw[end:])


def parse_producer_snapshot_construct(data: bytes | bytearray | memoryview) -> ProducerSnapshot:
    """The same decode straight from the construct definition (the reference for tests)."""
    raw = bytes(data)
    try:
        parsed = PRODUCER_SNAPSHOT.parse(raw)
    except cs.ConstructError as e:
        raise FormatError(f"producer snapshot: {e}", position=0) from None
    if parsed.body is None:
        raise FormatError(f"producer snapshot: unknown version {parsed.version}", position=0)
    fields = [sub.name for sub in PRODUCER_ENTRY.subcons]
    entries = tuple(ProducerEntry(*(e[name] for name in fields))
                    for e in parsed.body.producerEntries)
    end = _HEADER.size + len(entries) * ENTRY_SIZE
    computed = crc32c(raw[ENTRIES_OFFSET:])
    crc = parsed.body.crc
    return ProducerSnapshot(entries, parsed.version, None if crc == computed else crc, raw[end:])


__all__ = [
    "CURRENT_VERSION",
    "ENTRY_SIZE",
    "PRODUCER_ENTRY",
    "PRODUCER_SNAPSHOT",
    "SNAPSHOT_BODIES",
    "ProducerEntry",
    "ProducerSnapshot",
    "build_producer_snapshot",
    "parse_producer_snapshot",
    "parse_producer_snapshot_construct",
]
