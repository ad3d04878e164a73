"""What ``__consumer_offsets`` says on disk: every group's last committed offset (and its
leader epoch) per partition, and each group's last metadata, replayed in offset order as
the group coordinator loads them (``GroupMetadataManager`` / ``OffsetMetadataManager``).

Rules kept from Kafka's loading:
* the last record of a key wins; a null value (tombstone) deletes the offset or the group;
* offsets committed inside a transaction (``TxnOffsetCommit``: a transactional batch) are
  pending until the partition's COMMIT marker of that producer, and dropped on its ABORT;
* an OffsetCommitValue before version 3 has no leader epoch field; from version 3 on it
  has one, -1 when the client committed without an epoch (the coordinator stores the
  request's committedLeaderEpoch).  Either way a consumer that resumes from it cannot
  detect a truncated log (KIP-320).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kmeta.findings import Finding
from kmeta.formats.batch import Record
from kmeta.formats.coordinator import decode_offsets
from kmeta.formats.payload import decode_control

__all__ = ["Commit", "Group", "OffsetsLog", "PartitionBatches", "replay_offsets"]

#: One ``__consumer_offsets`` partition as the reader hands it over: its dir, and its
#: batches in offset order, each with its records and the file it is in.
PartitionBatches = tuple[str, Iterable[tuple[Any, list[Record], str]]]

#: the group record types of the new coordinator whose tombstone deletes the group, and the
#: kind of group each says it is
_GROUP_RECORDS = {"CONSUMER_GROUP_METADATA": "consumer", "SHARE_GROUP_METADATA": "share",
                  "STREAMS_GROUP_METADATA": "streams"}


@dataclass
class Commit:
    """A group's committed position in one partition, as its last record left it."""

    group: str
    topic: str
    partition: int
    offset: int | None  # None once deleted
    leader_epoch: int  # -1: none (value v0-2, or a client that did not send one)
    metadata: str | None
    commit_timestamp: int | None
    value_version: int | None
    source: str  # the __consumer_offsets partition dir
    source_offset: int  # the record's offset in it
    transactional: bool = False
    deleted: bool = False

    @property
    def has_epoch(self) -> bool:
        return self.leader_epoch >= 0

    @property
    def epoch_field(self) -> bool:
        """Whether its value version has the leaderEpoch field (v3 and later): then a -1
        is the client's (it sent none), not a broker's that could not store one."""
        return self.value_version is not None and self.value_version >= 3


@dataclass
class Group:
    """A group's last metadata record: its kind (classic groups carry a protocol type,
    usually ``consumer`` or ``connect``), generation or epoch, and members."""

    group: str
    protocol: str  # "classic" or the new coordinator's consumer, share, streams
    protocol_type: str | None = None
    generation: int | None = None
    members: int | None = None
    deleted: bool = False
    source_offset: int = -1


@dataclass
class OffsetsLog:
    """Every group and commit found, and what kept records from being read."""

    commits: dict[tuple[str, str, int], Commit] = field(default_factory=dict)
    groups: dict[str, Group] = field(default_factory=dict)
    partitions: list[str] = field(default_factory=list)
    records: int = 0
    aborted: int = 0  # transactional commits dropped by an ABORT marker
    pending: int = 0  # transactional commits with no marker yet (an open transaction)
    findings: list[Finding] = field(default_factory=list)


def replay_offsets(partitions: Iterable[PartitionBatches],
                   findings: list[Finding] | None = None) -> OffsetsLog:
    """Replay ``__consumer_offsets`` partitions, each in offset order; ``findings``: what
    kept the reader from some records, carried into the result."""
    out = OffsetsLog(findings=findings if findings is not None else [])
    for source, batches in partitions:
        out.partitions.append(source)
        _replay_partition(source, batches, out)
    return out


def _replay_partition(source: str, batches: Iterable[tuple[Any, list[Record], str]],
                      out: OffsetsLog) -> None:
    pending: dict[int, list[Commit]] = {}  # producer id -> its open transaction's commits
    for batch, records, file in batches:
        if batch.is_control:
            for r in records:
                marker = decode_control(r.key, r.value).type
                commits = pending.pop(batch.producer_id, [])
                if marker == "COMMIT":
                    for c in commits:
                        _apply(out, c)
                elif marker == "ABORT":
                    out.aborted += len(commits)
            continue
        txn = bool(getattr(batch, "is_transactional", False))
        for r in records:
            out.records += 1
            payload = decode_offsets(r.key, r.value)
            if payload.finding is not None:
                code, message = payload.finding
                out.findings.append(Finding(code, f"record at offset {r.offset}: {message}",
                                            file, batch.position, r.offset))
                continue
            key, value = payload.data["key"], payload.data["value"]
            if payload.type == "OFFSET_COMMIT":
                c = _commit(key, value, payload.version, source, r.offset, txn)
                if txn:
                    pending.setdefault(batch.producer_id, []).append(c)
                else:
                    _apply(out, c)
            elif payload.type == "GROUP_METADATA":
                out.groups[key["group"]] = _classic_group(key["group"], value, r.offset)
            elif payload.type in _GROUP_RECORDS:
                name = key["groupId"]
                out.groups[name] = Group(name, _GROUP_RECORDS[payload.type],
                                         generation=None if value is None
                                         else value.get("epoch"),
                                         deleted=value is None, source_offset=r.offset)
    out.pending += sum(len(c) for c in pending.values())


def _commit(key: dict[str, Any], value: dict[str, Any] | None, version: int | None,
            source: str, offset: int, txn: bool) -> Commit:
    if value is None:
        return Commit(key["group"], key["topic"], key["partition"], None, -1, None, None,
                      None, source, offset, txn, deleted=True)
    return Commit(key["group"], key["topic"], key["partition"], value["offset"],
                  value.get("leaderEpoch", -1), value.get("metadata"),
                  value.get("commitTimestamp"), version, source, offset, txn)


def _apply(out: OffsetsLog, c: Commit) -> None:
    out.commits[c.group, c.topic, c.partition] = c


def _classic_group(name: str, value: dict[str, Any] | None, offset: int) -> Group:
    if value is None:
        return Group(name, "classic", deleted=True, source_offset=offset)
    return Group(name, "classic", value.get("protocolType"), value.get("generation"),
                 len(value.get("members") or ()), source_offset=offset)
