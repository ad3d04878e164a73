"""What Kafka throws when it reads the small files of a partition dir at load, and whether
that stops the broker or takes the log dir offline (``LogManager.loadLogs`` catches an
``IOException``, and from 3.3 a ``KafkaStorageException`` caused by one: the dir goes
offline; anything else escapes and the broker does not start).  Read in apache/kafka
trunk 2024-10 (the same from 3.5, the oldest version kmeta knows):

* ``leader-epoch-checkpoint`` (``CheckpointFile.CheckpointReadBuffer.read`` through
  ``LeaderEpochCheckpointFile.Formatter``), read in ``UnifiedLog.apply`` before the
  segments load: a version or count line that is not an int, a version other than 0, a
  line without exactly two fields, or a count other than the lines' is an IOException
  (offline); an entry whose fields are not numbers is ``Integer/Long.parseInt``'s
  NumberFormatException and a negative count line ``new ArrayList(count)``'s
  IllegalArgumentException (both stop);
* ``partition.metadata`` (``PartitionMetadataReadBuffer.read``), read by
  ``UnifiedLog.initializeTopicId`` once the log has loaded: a line without two fields, a
  version that is not an int or below 0, or the zero topic id is an IOException
  (offline); an empty file, or a missing second line, splits a null line (a
  NullPointerException) and a topic id ``Uuid.fromString`` cannot decode is an
  IllegalArgumentException (both stop);
* file names (``LogFileUtils.offsetFromFileName``: ``Long.parseLong`` of what precedes
  the first dot): a ``.snapshot`` (``ProducerStateManager.listSnapshotFiles``, when the
  manager is built), a ``.cleaned`` or ``.swap`` (``removeTempFilesAndCollectSwapFiles``),
  an index or a ``.log`` (``loadSegmentFiles``) whose name does not begin with a number
  throws NumberFormatException (stops).

Each verdict is ``(kind, text)``: ``kind`` "stop" or "offline", ``text`` the exception and
why.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re

#: (kind, text): "stop" (the exception escapes loadLogs) or "offline" (an IOException)
Verdict = tuple[str, str]

_WS = re.compile("[ \t\n\x0b\f\r]+")  # Java's \s
_BREAK = re.compile(r"\r\n|\r|\n")
_NUMBER = re.compile(r"[+-]?[0-9]+\Z")  # Integer/Long.parseInt's syntax (ASCII digits)
_UUID = re.compile(r"[A-Za-z0-9_-]*={0,2}\Z")
INT32 = (-(1 << 31), (1 << 31) - 1)
INT64 = (-(1 << 63), (1 << 63) - 1)


def _read_lines(text: str) -> list[str]:
    """BufferedReader.readLine until null: an empty remainder is no line."""
    lines = _BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _split(line: str) -> list[str]:
    """Pattern.split: a leading empty field kept, trailing ones dropped."""
    parts = _WS.split(line)
    while parts and parts[-1] == "":
        parts.pop()
    return parts or [""]


def java_number(text: str, bounds: tuple[int, int]) -> int | None:
    """Integer/Long.parseInt, None where it throws NumberFormatException."""
    if not _NUMBER.match(text) or len(text.lstrip("+-").lstrip("0")) > 19:
        return None
    n = int(text)
    return n if bounds[0] <= n <= bounds[1] else None


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(text[:40]) + "..."


def _decode(data: bytes, name: str) -> str | Verdict:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:  # the reader's MalformedInputException
        return ("offline", f"{name} is not UTF-8: an IOException (MalformedInputException) "
                           "while Kafka reads it")


#: (a broker's thousands of partitions hold a few distinct files of each kind: each
#: judged once)
@functools.lru_cache(maxsize=1024)
def epoch_checkpoint_verdict(data: bytes) -> Verdict | None:
    """Kafka's verdict on a leader-epoch-checkpoint holding ``data``; None when it reads."""
    name = "leader-epoch-checkpoint"
    text = _decode(data, name)
    if isinstance(text, tuple):
        return text
    lines = _read_lines(text)
    if not lines:
        return None

    def malformed(line: str) -> Verdict:
        return ("offline", f"{name} has a malformed line {_shown(line)}: an IOException "
                           "while Kafka reads it")
    version = java_number(lines[0], INT32)
    if version is None:
        return malformed(lines[0])
    if version != 0:
        return ("offline", f"{name} has version {version} (Kafka reads 0): an IOException")
    if len(lines) == 1:
        return None
    count = java_number(lines[1], INT32)
    if count is None:
        return malformed(lines[1])
    if count < 0:
        return ("stop", f"{name} counts {count} entries: new ArrayList({count}) throws "
                        "IllegalArgumentException (not an IOException)")
    for line in lines[2:]:
        fields = _split(line)
        if len(fields) != 2:
            return malformed(line)
        if java_number(fields[0], INT32) is None or java_number(fields[1], INT64) is None:
            return ("stop", f"{name} has the entry {_shown(line)}: Integer/Long.parseInt "
                            "throws NumberFormatException (not an IOException)")
    if len(lines) - 2 != count:
        return ("offline", f"{name} counts {count} entries but holds {len(lines) - 2}: an "
                           "IOException while Kafka reads it")
    return None


@functools.lru_cache(maxsize=1024)
def partition_metadata_verdict(data: bytes) -> Verdict | None:
    """Kafka's verdict on a partition.metadata holding ``data``; None when it reads."""
    name = "partition.metadata"
    text = _decode(data, name)
    if isinstance(text, tuple):
        return text
    lines = _read_lines(text)
    npe = ("stop", f"{name} {'is empty' if not lines else 'has no topic_id line'}: Kafka "
                   "splits a null line (NullPointerException, not an IOException)")
    if not lines:
        return npe
    version = _split(lines[0])
    if len(version) != 2:
        return ("offline", f"{name} has a malformed line {_shown(lines[0])}: an IOException")
    n = java_number(version[1], INT32)
    if n is None or n < 0:
        return ("offline", f"{name} has the version {_shown(version[1])}: an IOException")
    if len(lines) == 1:
        return npe
    topic = _split(lines[1])
    if len(topic) != 2:
        return ("offline", f"{name} has a malformed line {_shown(lines[1])}: an IOException")
    raw = _uuid(topic[1])
    if raw is None:
        return ("stop", f"{name} has the topic id {_shown(topic[1])}, which Uuid.fromString "
                        "cannot decode (IllegalArgumentException, not an IOException)")
    if raw == bytes(16):
        return ("offline", f"{name} holds the zero topic id: an IOException")
    return None


def _uuid(text: str) -> bytes | None:
    """Uuid.fromString's bytes (Base64.getUrlDecoder, 16 bytes, at most 24 characters)."""
    if len(text) > 24 or not _UUID.match(text) or len(text.rstrip("=")) % 4 == 1:
        return None
    try:
        raw = base64.urlsafe_b64decode(text.rstrip("=") + "=" * (-len(text.rstrip("=")) % 4))
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 16 else None


#: The suffixes whose files' names Kafka parses for an offset at load, and where.
_NAMED = ((".snapshot", "ProducerStateManager lists the producer snapshots"),
          (".cleaned", "removeTempFilesAndCollectSwapFiles"),
          (".swap", "removeTempFilesAndCollectSwapFiles"),
          (".index", "loadSegmentFiles"), (".timeindex", "loadSegmentFiles"),
          (".txnindex", "loadSegmentFiles"), (".log", "loadSegmentFiles"))


def file_name_verdict(names: list[str]) -> Verdict | None:
    """The first of ``names`` (the regular files of a partition dir) whose offset
    ``LogFileUtils.offsetFromFileName`` cannot parse, in the order Kafka meets them."""
    for suffix, where in _NAMED:
        for name in sorted(names):
            if not name.endswith(suffix):
                continue
            head = name[:name.index(".")]
            if java_number(head, INT64) is None:
                return ("stop", f"{name}: {where} reads an offset from its name, and "
                                f"Long.parseLong({head!r}) throws NumberFormatException")
    return None
