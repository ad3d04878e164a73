"""Reading the small files of a log dir (checkpoints, quorum-state, indexes …) into objects.

Segments and snapshots are streamed by :mod:`kmeta.storage.segments`; everything else is
small enough to read whole and hand to its parser in :mod:`kmeta.formats`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kmeta.errors import KmetaError, UnreadableInput
from kmeta.findings import Finding
from kmeta.storage.discover import LogFile
from kmeta.storage.regular import read_regular

#: Small files larger than this are not read whole (an index of a huge segment is still
#: far below it); they are reported instead of exhausting memory.
MAX_SMALL_FILE = 256 * 1024 * 1024
#: The text files are far smaller still: an offset checkpoint of 200,000 partitions is
#: about 12 MB; a quorum-state, meta.properties or partition.metadata a few hundred bytes.
TEXT_FILE_CAPS = {kind: 64 * 1024 * 1024 for kind in (
    "leader-epoch-checkpoint", "offset-checkpoint", "quorum-state", "partition-metadata",
    "meta-properties")}


def _parsers() -> dict[str, Callable[[bytes, LogFile], Any]]:
    # Imported on first use: dumping a segment alone should not pay for these modules.
    from kmeta.formats import indexes, producer_state, remote_log_metadata, textfiles

    return {
        "leader-epoch-checkpoint": lambda d, f: textfiles.parse_leader_epoch_checkpoint(d),
        "offset-checkpoint": lambda d, f: textfiles.parse_offset_checkpoint(d),
        "quorum-state": lambda d, f: textfiles.parse_quorum_state(d),
        "partition-metadata": lambda d, f: textfiles.parse_partition_metadata(d),
        "meta-properties": lambda d, f: textfiles.parse_meta_properties(d),
        "offset-index": lambda d, f: indexes.parse_offset_index(d, f.kind.base_offset or 0),
        "time-index": lambda d, f: indexes.parse_time_index(d, f.kind.base_offset or 0),
        "txn-index": lambda d, f: indexes.parse_txn_index(d, f.kind.base_offset or 0),
        "producer-snapshot": lambda d, f: producer_state.parse_producer_snapshot(d),
        "clean-shutdown": lambda d, f: textfiles.parse_clean_shutdown(d),
        # Kafka locks the file and never writes into it: any content is left unread.
        "lock": lambda d, f: {},
        "remote-log-snapshot": lambda d, f: remote_log_metadata.parse_remote_log_snapshot(d),
    }


def read_small(f: LogFile) -> bytes:
    """The whole file: a regular one only (a FIFO would block, /dev/zero never ends),
    and never more than its kind's cap."""
    return read_regular(f.path, TEXT_FILE_CAPS.get(f.kind.kind, MAX_SMALL_FILE), f.kind.kind)


#: Kinds whose parsed value is a frozen dataclass: one parse serves every file of the
#: same bytes (a broker's 4,000 partition.metadata files name a few dozen topic ids, and
#: verify, placement and startup read each offset checkpoint several times).
_SHARED_KINDS = frozenset({"offset-checkpoint", "leader-epoch-checkpoint",
                           "partition-metadata", "meta-properties", "quorum-state",
                           "clean-shutdown"})
_PARSED: dict[tuple[str, bytes], Any] = {}
_PARSED_MAX = 4096


def load_content(f: LogFile, data: bytes | None = None) -> Any:
    """Parse a small file by its kind (``data``: its bytes, read by :func:`read_small`
    already); raises FormatError (bad content) or UnreadableInput."""
    kind = f.kind.kind
    parser = _parsers().get(kind)
    if parser is None:
        raise UnreadableInput(f"kmeta has no reader for {kind} files",
                              context=str(f.path))
    if data is None:
        data = read_small(f)  # read every time: the cache is keyed by the bytes, never stale
    if kind not in _SHARED_KINDS:
        return parser(data, f)
    key = (kind, data)
    value = _PARSED.get(key)
    if value is None:
        value = parser(data, f)  # a FormatError is raised each time, as the bytes say
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[key] = value
    return value


def load_checked(f: LogFile | None, data: bytes | None = None
                 ) -> tuple[Any, Finding | None]:
    """``load_content``, with a problem turned into its Finding: F010 for content that
    breaks its format, S008 for a file that cannot be read.  No file has no content."""
    if f is None:
        return None, None
    try:
        return load_content(f, data), None
    except KmetaError as e:
        return None, e.finding(str(f.path))
