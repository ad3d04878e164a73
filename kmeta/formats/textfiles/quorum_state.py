"""``quorum-state``: one line of compact JSON, QuorumStateData v0 or v1 (``raft/.../FileQuorumStateStore.java``)."""

from __future__ import annotations

import json
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
    _as_bytes,
    _check_range,
    _decode_utf8,
    _encodable,
    _normalize_uuid,
)

#: data_version -> the QuorumStateData fields of that version, in the order Kafka writes.
QUORUM_STATE_FIELDS: dict[int, tuple[str, ...]] = {
    0: ("clusterId", "leaderId", "leaderEpoch", "votedId", "appliedOffset", "currentVoters"),
    1: ("leaderId", "leaderEpoch", "votedId", "votedDirectoryId"),
}


@dataclass(frozen=True, slots=True)
class QuorumState:
    """``quorum-state``: the KRaft election state a voter persists.

    Fields that a ``data_version`` does not have are ``None``; ``current_voters`` is also
    ``None`` when a version-0 file holds ``"currentVoters":null``.
    """

    data_version: int
    leader_id: int = -1
    leader_epoch: int = -1
    voted_id: int = -1
    voted_directory_id: str | None = None  # version 1
    cluster_id: str | None = None  # version 0
    applied_offset: int | None = None  # version 0
    current_voters: tuple[int, ...] | None = None  # version 0 (nullable)

    def __post_init__(self) -> None:
        if self.data_version not in QUORUM_STATE_FIELDS:
            raise ValueError(f"unknown quorum-state data_version {self.data_version!r}")
        for name in ("leader_id", "leader_epoch", "voted_id"):
            _check_range(getattr(self, name), INT32_MIN, INT32_MAX, name)
        if self.current_voters is not None:
            object.__setattr__(self, "current_voters", tuple(self.current_voters))
            for v in self.current_voters:
                _check_range(v, INT32_MIN, INT32_MAX, "voter id")
        if self.data_version == 0:
            if (not isinstance(self.cluster_id, str) or not _encodable(self.cluster_id)
                    or self.applied_offset is None):
                raise ValueError("data_version 0 needs cluster_id and applied_offset")
            _check_range(self.applied_offset, INT64_MIN, INT64_MAX, "applied_offset")
            if self.voted_directory_id is not None:
                raise ValueError("data_version 0 has no voted_directory_id")
        else:
            if self.voted_directory_id is None or _normalize_uuid(self.voted_directory_id) is None:
                raise ValueError("data_version 1 needs voted_directory_id (a Kafka UUID)")
            object.__setattr__(self, "voted_directory_id",
                               _normalize_uuid(self.voted_directory_id))
            if (self.cluster_id is not None or self.applied_offset is not None
                    or self.current_voters is not None):
                raise ValueError("data_version 1 has no cluster_id, applied_offset or "
                                 "current_voters")

    def to_json(self) -> dict[str, Any]:
        """The JSON object as Kafka writes it: its key names, its key order."""
        values = {
            "clusterId": self.cluster_id,
            "leaderId": self.leader_id,
            "leaderEpoch": self.leader_epoch,
            "votedId": self.voted_id,
            "votedDirectoryId": self.voted_directory_id,
            "appliedOffset": self.applied_offset,
            "currentVoters": (None if self.current_voters is None
                              else [{"voterId": v} for v in self.current_voters]),
        }
        out = {k: values[k] for k in QUORUM_STATE_FIELDS[self.data_version]}
        out["data_version"] = self.data_version
        return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_int(obj: dict, key: str, lo: int, hi: int, pos: int) -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise FormatError(f"quorum-state: line 1: {key} must be an integer, not {v!r}",
                          position=pos)
    if not lo <= v <= hi:
        raise FormatError(f"quorum-state: line 1: {key} {v} is out of range", position=pos)
    return v


def _json_object(text: str, what: str) -> dict[str, Any]:
    """The one JSON object a file holds; FormatError (with its byte position) otherwise."""
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        pos = len(text[:e.pos].encode("utf-8", "surrogatepass"))
        raise FormatError(f"{what}: line {e.lineno}: not JSON: {e.msg}", position=pos) from None
    except (ValueError, RecursionError) as e:
        raise FormatError(f"{what}: line 1: not JSON: {e}", position=0) from None
    if not isinstance(obj, dict):
        raise FormatError(f"{what}: line 1: the JSON value is not an object", position=0)
    return obj


def parse_quorum_state(data: bytes | bytearray | memoryview) -> QuorumState:
    """Parse ``quorum-state``.  Stricter than Kafka in one way: Kafka reads only the first
    line and ignores anything after the JSON value; here the file must hold one JSON object
    and nothing but whitespace around it."""
    raw = _as_bytes(data)
    what = "quorum-state"
    text = _decode_utf8(raw, what)
    obj = _json_object(text, what)
    if "\n" in text.strip() or "\r" in text.strip():
        raise FormatError(f"{what}: the JSON object spans several lines; Kafka reads only "
                          "the first line", position=0)
    if "data_version" not in obj:
        raise FormatError(f"{what}: line 1: no data_version field", position=0)
    version = _json_int(obj, "data_version", INT32_MIN, INT32_MAX, 0)
    if version not in QUORUM_STATE_FIELDS:
        raise FormatError(f"{what}: line 1: unsupported data_version {version} (Kafka knows "
                          f"{min(QUORUM_STATE_FIELDS)}-{max(QUORUM_STATE_FIELDS)})", position=0)
    for key in QUORUM_STATE_FIELDS[version]:
        if key not in obj:
            raise FormatError(f"{what}: line 1: field {key!r} is mandatory in data_version "
                              f"{version}", position=0)
    kw: dict[str, Any] = {
        "data_version": version,
        "leader_id": _json_int(obj, "leaderId", INT32_MIN, INT32_MAX, 0),
        "leader_epoch": _json_int(obj, "leaderEpoch", INT32_MIN, INT32_MAX, 0),
        "voted_id": _json_int(obj, "votedId", INT32_MIN, INT32_MAX, 0),
    }
    if version == 0:
        cluster_id = obj["clusterId"]
        if not isinstance(cluster_id, str) or not _encodable(cluster_id):
            raise FormatError(f"{what}: line 1: clusterId must be a string", position=0)
        kw["cluster_id"] = cluster_id
        kw["applied_offset"] = _json_int(obj, "appliedOffset", INT64_MIN, INT64_MAX, 0)
        voters = obj["currentVoters"]
        if voters is not None:
            if not isinstance(voters, list):
                raise FormatError(f"{what}: line 1: currentVoters must be an array",
                                  position=0)
            ids = []
            for voter in voters:
                if not isinstance(voter, dict) or "voterId" not in voter:
                    raise FormatError(f"{what}: line 1: a currentVoters element has no "
                                      "voterId", position=0)
                ids.append(_json_int(voter, "voterId", INT32_MIN, INT32_MAX, 0))
            voters = tuple(ids)
        kw["current_voters"] = voters
    else:
        uuid = _normalize_uuid(obj["votedDirectoryId"])
        if uuid is None:
            raise FormatError(f"{what}: line 1: votedDirectoryId is not a Kafka UUID: "
                              f"{obj['votedDirectoryId']!r}", position=0)
        kw["voted_directory_id"] = uuid
    return QuorumState(**kw)


def build_quorum_state(value: QuorumState) -> bytes:
    """Jackson's compact ``ObjectNode.toString()``: no spaces, no final newline."""
    return json.dumps(value.to_json(), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
