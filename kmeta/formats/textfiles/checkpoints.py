"""The checkpoint files: ``leader-epoch-checkpoint`` and the four offset checkpoints (``server-common/.../CheckpointFile.java``)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kmeta.errors import FormatError
from kmeta.formats.primitives import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
)
from kmeta.formats.textfiles.javatext import (
    _JAVA_WS,
    CHECKPOINT_VERSION,
    _as_bytes,
    _check_range,
    _decode_utf8,
    _encodable,
    _java_int,
    _java_split,
    _Line,
    _lines,
)


def _parse_checkpoint(data: bytes, what: str, fields: int,
                      decode_entry) -> tuple[int, int, list[Any]]:
    """Kafka's ``CheckpointReadBuffer.read``; returns (version, header_lines, entries)."""
    lines = _lines(_decode_utf8(data, what))
    if not lines:
        return CHECKPOINT_VERSION, 0, []
    version = _java_int(lines[0].text, INT32_MIN, INT32_MAX, f"{what} version", lines[0])
    if version != CHECKPOINT_VERSION:
        raise FormatError(f"{what}: line 1: unsupported version {version} "
                          f"(Kafka reads only version {CHECKPOINT_VERSION})",
                          position=lines[0].position)
    if len(lines) == 1:
        return version, 1, []
    count_line = lines[1]
    count = _java_int(count_line.text, INT32_MIN, INT32_MAX, f"{what} entry count", count_line)
    if count < 0:
        raise FormatError(f"{what}: line 2: negative entry count {count}",
                          position=count_line.position)
    entries = []
    for line in lines[2:]:
        parts = _java_split(line.text)
        if len(parts) != fields:
            raise FormatError(f"{what}: line {line.number}: expected {fields} fields, "
                              f"found {len(parts)}: {line.text!r}", position=line.position)
        entries.append(decode_entry(parts, line))
    if len(entries) != count:
        raise FormatError(f"{what}: line 2: count line says {count} entries but the file "
                          f"holds {len(entries)}", position=count_line.position)
    return version, 2, entries


def _render_checkpoint(version: int, header_lines: int, lines: Iterable[str]) -> bytes:
    out = []
    if header_lines >= 1:
        out.append(f"{version}\n")
    if header_lines >= 2:
        body = list(lines)
        out.append(f"{len(body)}\n")
        out.extend(f"{line}\n" for line in body)
    return "".join(out).encode("utf-8")


def _check_header(version: int, header_lines: int, entries: tuple) -> None:
    if version != CHECKPOINT_VERSION:
        raise ValueError(f"checkpoint files have version {CHECKPOINT_VERSION} only, not {version!r}")
    if header_lines not in (0, 1, 2):
        raise ValueError("header_lines must be 0 (empty file), 1 (version only) or 2")
    if header_lines < 2 and entries:
        raise ValueError("a checkpoint without its count line cannot hold entries")


class _CheckpointFile:
    """What the two checkpoint formats share: a version line, a count line, entries."""

    __slots__ = ()
    entries: tuple
    version: int
    header_lines: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "entries", tuple(self.entries))
        _check_header(self.version, self.header_lines, self.entries)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version if self.header_lines >= 1 else None,
            "count": len(self.entries) if self.header_lines >= 2 else None,
            "entries": [e.to_json() for e in self.entries],
        }


@dataclass(frozen=True, slots=True)
class EpochEntry:
    """One line of ``leader-epoch-checkpoint``: the first offset written in ``epoch``."""

    epoch: int
    start_offset: int

    def __post_init__(self) -> None:
        _check_range(self.epoch, INT32_MIN, INT32_MAX, "epoch")
        _check_range(self.start_offset, INT64_MIN, INT64_MAX, "start_offset")

    def to_json(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "start_offset": self.start_offset}


@dataclass(frozen=True, slots=True)
class LeaderEpochCheckpoint(_CheckpointFile):
    """``leader-epoch-checkpoint``.  ``header_lines`` is 2 for every file Kafka writes; 0
    for a zero-length file and 1 for a file cut after its version line (both of which Kafka
    reads as no entries)."""

    entries: tuple[EpochEntry, ...] = ()
    version: int = CHECKPOINT_VERSION
    header_lines: int = 2



def parse_leader_epoch_checkpoint(data: bytes | bytearray | memoryview) -> LeaderEpochCheckpoint:
    what = "leader-epoch-checkpoint"

    def entry(parts: list[str], line: _Line) -> EpochEntry:
        return EpochEntry(_java_int(parts[0], INT32_MIN, INT32_MAX, f"{what} epoch", line),
                          _java_int(parts[1], INT64_MIN, INT64_MAX, f"{what} start offset", line))

    version, header_lines, entries = _parse_checkpoint(_as_bytes(data), what, 2, entry)
    return LeaderEpochCheckpoint(tuple(entries), version, header_lines)


def build_leader_epoch_checkpoint(value: LeaderEpochCheckpoint) -> bytes:
    return _render_checkpoint(value.version, value.header_lines,
                              (f"{e.epoch} {e.start_offset}" for e in value.entries))


@dataclass(frozen=True, slots=True)
class TopicPartitionOffset:
    """One line of an offset checkpoint file."""

    topic: str
    partition: int
    offset: int

    def __post_init__(self) -> None:
        if (not isinstance(self.topic, str) or not self.topic
                or any(c in _JAVA_WS for c in self.topic)):
            raise ValueError(f"topic must be a non-empty name without whitespace: {self.topic!r}")
        if not _encodable(self.topic):
            raise ValueError(f"topic is not valid Unicode: {self.topic!r}")
        _check_range(self.partition, INT32_MIN, INT32_MAX, "partition")
        _check_range(self.offset, INT64_MIN, INT64_MAX, "offset")

    def to_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "partition": self.partition, "offset": self.offset}


@dataclass(frozen=True, slots=True)
class OffsetCheckpoint(_CheckpointFile):
    """``recovery-point-offset-checkpoint``, ``replication-offset-checkpoint``,
    ``log-start-offset-checkpoint`` or ``cleaner-offset-checkpoint`` (same format; the
    file name says which).  ``header_lines`` as in :class:`LeaderEpochCheckpoint`."""

    entries: tuple[TopicPartitionOffset, ...] = ()
    version: int = CHECKPOINT_VERSION
    header_lines: int = 2



#: An offset checkpoint as Kafka writes it: version 0, the count, then one line per
#: partition of a legal topic name and plain digits, each ended by a newline.
_PLAIN_CHECKPOINT = re.compile(rb"0\n([0-9]{1,10})\n((?:[A-Za-z0-9._-]+ [0-9]{1,10} [0-9]{1,19}\n)*)\Z")
_PLAIN_ENTRY = re.compile(rb"([A-Za-z0-9._-]+) ([0-9]+) ([0-9]+)\n")
_set = object.__setattr__


@functools.lru_cache(maxsize=16)  # verify, placement and startup read each one
def _plain_offset_checkpoint(data: bytes) -> OffsetCheckpoint | None:
    """The file read as :func:`parse_offset_checkpoint` reads it where it is in the form
    Kafka writes (a broker's holds thousands of lines: each taken apart by one regular
    expression, its values in range by construction or checked here); None for any other
    form, which the line-by-line reading judges."""
    m = _PLAIN_CHECKPOINT.match(data)
    if m is None:
        return None
    entries = []
    for topic, partition, offset in _PLAIN_ENTRY.findall(m.group(2)):
        p, o = int(partition), int(offset)
        if p > INT32_MAX or o > INT64_MAX:
            return None
        e = object.__new__(TopicPartitionOffset)  # what __post_init__ checks holds
        _set(e, "topic", topic.decode("ascii"))
        _set(e, "partition", p)
        _set(e, "offset", o)
        entries.append(e)
    if len(entries) != int(m.group(1)):
        return None
    return OffsetCheckpoint(tuple(entries), CHECKPOINT_VERSION, 2)


def parse_offset_checkpoint(data: bytes | bytearray | memoryview) -> OffsetCheckpoint:
    what = "offset checkpoint"
    plain = _plain_offset_checkpoint(_as_bytes(data))
    if plain is not None:
        return plain

    def entry(parts: list[str], line: _Line) -> TopicPartitionOffset:
        if parts[0] == "":
            raise FormatError(f"{what}: line {line.number}: line starts with whitespace",
                              position=line.position)
        return TopicPartitionOffset(
            parts[0],
            _java_int(parts[1], INT32_MIN, INT32_MAX, f"{what} partition", line),
            _java_int(parts[2], INT64_MIN, INT64_MAX, f"{what} offset", line))

    version, header_lines, entries = _parse_checkpoint(_as_bytes(data), what, 3, entry)
    return OffsetCheckpoint(tuple(entries), version, header_lines)


def build_offset_checkpoint(value: OffsetCheckpoint) -> bytes:
    return _render_checkpoint(value.version, value.header_lines,
                              (f"{e.topic} {e.partition} {e.offset}" for e in value.entries))
