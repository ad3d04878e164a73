"""The cluster metadata image: what replaying KRaft metadata records builds.

Replay semantics follow Kafka's image deltas (``metadata/.../image/*Delta.java``,
``PartitionRegistration.merge``, ``BrokerRegistration.cloneWith``) and the metadata
transaction rules of ``MetadataBatchLoader``; the code is kmeta's own.

Pure: records (type name, version, decoded field dict) in, problems out.  No I/O.

* :meth:`MetadataImage.apply` changes the image **in place** and returns the
  :class:`ImageProblem` list met while applying that one record.  Take a :meth:`copy`
  first to keep the state before.  A record that Kafka would refuse to replay (it names a
  topic, partition or broker that does not exist, a broker epoch that does not match, a
  value outside its enum) leaves the image unchanged; a record that Kafka replays but that
  breaks an invariant its controller keeps (leader outside the ISR, ISR outside the
  replicas, epochs going backwards) is applied and reported.
* Between BEGIN_TRANSACTION_RECORD and END_TRANSACTION_RECORD records are buffered and
  applied together at the end (their problems are returned by the End call, with their own
  offsets); ABORT_TRANSACTION_RECORD drops them.
* :meth:`MetadataImage.to_json` is the canonical form (JSON-ready, secrets replaced by
  fingerprints), :meth:`MetadataImage.digest` its xxh3-128, stable across runs and
  machines, and :func:`diff_images` lists the differences between two images by path.
"""

from __future__ import annotations

import copy as _copy
import json
from typing import Any, NamedTuple

import xxhash

from kmeta.core.versions import MINIMUM_KRAFT_LEVEL
from kmeta.findings import CODES
from kmeta.formats.metadata_schemas import SENSITIVE_CONFIG
from kmeta.formats.primitives import ZERO_UUID

__all__ = [
    "CONFIG_RESOURCE_TYPES",
    "PROBLEM_CODES",
    "ImageProblem",
    "MetadataImage",
    "canonical_bytes",
    "diff_images",
]

PROBLEM_CODES: dict[str, tuple[str, str]] = {
    code: (c.severity.value, c.meaning) for code, c in CODES.items() if c.replay
}
"""Every problem code :meth:`MetadataImage.apply` reports: code -> (severity, meaning)."""

CONFIG_RESOURCE_TYPES = {0: "UNKNOWN", 2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER",
                         16: "CLIENT_METRICS", 32: "GROUP"}
"""Kafka's ``ConfigResource.Type`` ids, as the ConfigRecord's ResourceType holds them."""

#: Kafka's ZkMigrationState ids (ZkMigrationState.java): MIGRATION is 1 and PRE_MIGRATION 2,
#: because 3.4 wrote PRE_MIGRATION as 1 before MIGRATION existed; ZK (4) is never written.
ZK_MIGRATION_STATES = {0: "NONE", 1: "MIGRATION", 2: "PRE_MIGRATION", 3: "POST_MIGRATION",
                       4: "ZK"}
SCRAM_MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}

NO_LEADER_CHANGE = -2
NO_LEADER = -1
MIGRATING_DIR = ZERO_UUID  # Kafka's DirectoryId.MIGRATING: a replica placed before log dirs
METADATA_VERSION = "metadata.version"
TRANSACTION_TYPES = ("BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD",
                     "ABORT_TRANSACTION_RECORD")


class ImageProblem(NamedTuple):
    """A semantic problem met while applying a record to the image (a NamedTuple: a
    log with tens of thousands of them makes one each, and a frozen dataclass costs
    three times as much to make)."""

    code: str
    message: str
    offset: int | None = None

    @property
    def severity(self) -> str:
        return PROBLEM_CODES[self.code][0]


class _Skip(Exception):
    """Raised inside a handler: the record is refused, the image stays as it was."""


def _fingerprint(*parts: Any) -> str:
    h = xxhash.xxh3_64()
    for p in parts:
        if p is None:
            b = b"\x00"
        elif isinstance(p, (bytes, bytearray, memoryview)):
            b = bytes(p)
        else:
            b = str(p).encode("utf-8")
        h.update(len(b).to_bytes(4, "big"))
        h.update(b)
    return "xxh3:" + h.hexdigest()


def _endpoints(items: list[dict] | None) -> list[dict]:
    out = [{"name": e["name"], "host": e["host"], "port": e["port"],
            "securityProtocol": e["securityProtocol"]} for e in items or ()]
    return sorted(out, key=lambda e: e["name"])


def _features(items: list[dict] | None) -> dict[str, list[int]]:
    return {f["name"]: [f["minSupportedVersion"], f["maxSupportedVersion"]]
            for f in items or ()}


def _ints(v: Any) -> list[int]:
    return [] if v is None else list(v)


def _malformed(type_name: str, version: int | None, e: Exception, offset: int | None
               ) -> ImageProblem:
    """V119: a handler met a field that is missing or of the wrong type."""
    return ImageProblem("V119", f"{type_name} v{version}: field {e} is missing or has the "
                                "wrong type", offset)


class MetadataImage:
    """The cluster image.  Build with :meth:`empty`, change with :meth:`apply`."""

    #: record type -> handler (set below the class: _FAST_HANDLERS)
    _handlers: dict[str, Any]
    #: (the partition before, the partition after) of the last PartitionChangeRecord
    #: applied: what a watch of the replay (kmeta.core.lifecycle) compares, without
    #: looking the partition up and copying it before each record.  Not state.
    changed_partition: tuple[dict[str, Any], dict[str, Any]] | None = None

    def __init__(self) -> None:
        self.features: dict[str, int] = {}
        self.zk_migration_state: int | None = None
        self.brokers: dict[int, dict[str, Any]] = {}
        self.controllers: dict[int, dict[str, Any]] = {}
        # topic id -> {"name": str, "topicId": str, "partitions": {id: partition dict}}
        self.topics: dict[str, dict[str, Any]] = {}
        self.configs: dict[tuple[int, str], dict[str, str]] = {}
        # entity as sorted ((entityType, entityName), ...) -> key -> value
        self.client_quotas: dict[tuple[tuple[str, str | None], ...], dict[str, float]] = {}
        self.next_producer_id: int | None = None
        self.acls: dict[str, dict[str, Any]] = {}
        self.scram: dict[tuple[str, int], dict[str, Any]] = {}
        self.delegation_tokens: dict[str, dict[str, Any]] = {}
        # fingerprint -> the raw value(s) it was made from, so that the image can be
        # written back as records (kmeta.core.image_records).  Never part of to_json or the
        # digest; entries of values no longer in the image may linger (they are only looked
        # up by a fingerprint the image still holds).
        self.secrets: dict[str, Any] = {}
        # Bookkeeping for problems only (not part of the image's state or digest).
        self.removed_topic_ids: set[str] = set()
        self._txn: list[tuple[str, int, Any, int | None]] | None = None
        self._txn_name: str | None = None

    # ------------------------------------------------------------------ construction

    @classmethod
    def empty(cls) -> MetadataImage:
        return cls()

    def copy(self) -> MetadataImage:
        """An independent deep copy (apply changes the image in place)."""
        return _copy.deepcopy(self)

    @property
    def in_transaction(self) -> bool:
        return self._txn is not None

    @property
    def metadata_version(self) -> int | None:
        return self.features.get(METADATA_VERSION)

    def topic_id(self, name: str) -> str | None:
        for tid, t in self.topics.items():
            if t["name"] == name:
                return tid
        return None

    # ------------------------------------------------------------------ replay

    def apply(self, type_name: str, version: int | None, data: Any,
              offset: int | None = None) -> list[ImageProblem]:
        """Apply one metadata record in place; return the problems it raised."""
        if type_name in TRANSACTION_TYPES:
            return self._transaction(type_name, data, offset)
        if self._txn is not None and type_name in _HANDLERS:
            self._txn.append((type_name, version or 0, data, offset))
            return []
        return self._apply_now(type_name, version, data, offset)

    def apply_all(self, records: Any) -> list[ImageProblem]:
        """Apply ``(type_name, version, data[, offset])`` tuples in order."""
        problems: list[ImageProblem] = []
        for rec in records:
            problems.extend(self.apply(*rec))
        return problems

    def _apply_now(self, type_name: str, version: int | None, data: Any,
                   offset: int | None) -> list[ImageProblem]:
        handler = self._handlers.get(type_name)
        if handler is None:
            return [ImageProblem("V100", f"record type {type_name} (version {version}) is "
                                         "not modelled by the image", offset)]
        problems: list[ImageProblem] = []
        try:
            handler(self, data, problems, offset)
        except _Skip:
            pass
        except (KeyError, TypeError) as e:
            problems.append(_malformed(type_name, version, e, offset))
        return problems

    def _transaction(self, type_name: str, data: Any, offset: int | None
                     ) -> list[ImageProblem]:
        if type_name == "BEGIN_TRANSACTION_RECORD":
            if self._txn is not None:
                return [ImageProblem("V112", "BeginTransactionRecord while transaction "
                                     f"{self._txn_name!r} is open (ignored)", offset)]
            self._txn = []
            self._txn_name = (data or {}).get("name")
            return []
        if self._txn is None:
            what = "End" if type_name == "END_TRANSACTION_RECORD" else "Abort"
            return [ImageProblem("V113", f"{what}TransactionRecord with no open "
                                         "transaction (ignored)", offset)]
        pending, self._txn, self._txn_name = self._txn, None, None
        problems: list[ImageProblem] = []
        if type_name == "END_TRANSACTION_RECORD":
            for rec in pending:
                problems.extend(self._apply_now(*rec))
        return problems

    # ------------------------------------------------------------------ handlers

    def _features(self, d: dict, out: list, off: int | None) -> None:
        name, level = d["name"], d["featureLevel"]
        if name == METADATA_VERSION:
            if level < MINIMUM_KRAFT_LEVEL:
                out.append(ImageProblem("V116", f"metadata.version level {level}", off))
                raise _Skip
            self.features[name] = level
        elif level == 0:
            self.features.pop(name, None)
        else:
            self.features[name] = level

    def _zk_migration(self, d: dict, out: list, off: int | None) -> None:
        state = d["zkMigrationState"]
        if state not in ZK_MIGRATION_STATES:
            out.append(ImageProblem("V116", f"ZkMigrationState {state}", off))
            raise _Skip
        self.zk_migration_state = state

    def _register_broker(self, d: dict, out: list, off: int | None) -> None:
        self.brokers[d["brokerId"]] = {
            "id": d["brokerId"],
            "epoch": d["brokerEpoch"],
            "incarnationId": d["incarnationId"],
            "endPoints": _endpoints(d["endPoints"]),
            "features": _features(d["features"]),
            "rack": d.get("rack"),
            "fenced": bool(d.get("fenced", True)),
            "inControlledShutdown": bool(d.get("inControlledShutdown", False)),
            "isMigratingZkBroker": bool(d.get("isMigratingZkBroker", False)),
            "logDirs": sorted(d.get("logDirs") or ()),
            "cordonedLogDirs": sorted(d.get("cordonedLogDirs") or ()),
        }

    def _broker(self, broker_id: int, epoch: int | None, what: str, out: list,
                off: int | None) -> dict:
        b = self.brokers.get(broker_id)
        if b is None:
            out.append(ImageProblem("V108", f"{what} broker {broker_id}, which is not "
                                            "registered", off))
            raise _Skip
        if epoch is not None and b["epoch"] != epoch:
            out.append(ImageProblem("V109", f"{what} broker {broker_id} at epoch {epoch}, "
                                            f"but its registration has epoch {b['epoch']}",
                                    off))
            raise _Skip
        return b

    def _unregister_broker(self, d: dict, out: list, off: int | None) -> None:
        # Kafka's replay checks the epoch here too (ClusterControlManager.replay)
        self._broker(d["brokerId"], d["brokerEpoch"], "unregister", out, off)
        del self.brokers[d["brokerId"]]

    def _fence(self, d: dict, out: list, off: int | None) -> None:
        self._broker(d["id"], d["epoch"], "fence", out, off)["fenced"] = True

    def _unfence(self, d: dict, out: list, off: int | None) -> None:
        self._broker(d["id"], d["epoch"], "unfence", out, off)["fenced"] = False

    def _broker_change(self, d: dict, out: list, off: int | None) -> None:
        b = self._broker(d["brokerId"], d["brokerEpoch"], "change", out, off)
        fenced = d.get("fenced", 0)
        ics = d.get("inControlledShutdown", 0)
        if fenced not in (-1, 0, 1) or ics not in (0, 1):
            out.append(ImageProblem("V116", f"BrokerRegistrationChange fenced={fenced} "
                                            f"inControlledShutdown={ics}", off))
            raise _Skip
        if fenced:
            b["fenced"] = fenced == 1
        if ics:
            b["inControlledShutdown"] = True
        if d.get("logDirs"):
            b["logDirs"] = sorted(d["logDirs"])
        if d.get("cordonedLogDirs"):
            b["cordonedLogDirs"] = sorted(d["cordonedLogDirs"])

    def _register_controller(self, d: dict, out: list, off: int | None) -> None:
        self.controllers[d["controllerId"]] = {
            "id": d["controllerId"],
            "incarnationId": d["incarnationId"],
            "zkMigrationReady": bool(d.get("zkMigrationReady", False)),
            "endPoints": _endpoints(d["endPoints"]),
            "features": _features(d["features"]),
        }

    def _unregister_controller(self, d: dict, out: list, off: int | None) -> None:
        if self.controllers.pop(d["controllerId"], None) is None:
            out.append(ImageProblem("V117", f"unregister controller {d['controllerId']}, "
                                            "which is not registered", off))

    def _topic(self, d: dict, out: list, off: int | None) -> None:
        tid, name = d["topicId"], d["name"]
        if tid in self.removed_topic_ids:
            out.append(ImageProblem("V107", f"TopicRecord {name!r} reuses the id {tid} of "
                                            "a removed topic", off))
        other = self.topic_id(name)
        if other is not None and other != tid:
            out.append(ImageProblem("V110", f"topic {name!r} ({tid}) has the name of live "
                                            f"topic {other}", off))
            raise _Skip
        if tid in self.topics:
            out.append(ImageProblem("V111", f"TopicRecord {name!r} for existing topic id "
                                            f"{tid}: its partitions are dropped", off))
        self.topics[tid] = {"name": name, "topicId": tid, "partitions": {}}

    def _live_topic(self, tid: str, what: str, out: list, off: int | None) -> dict:
        t = self.topics.get(tid)
        if t is None:
            if tid in self.removed_topic_ids:
                out.append(ImageProblem("V107", f"{what} for removed topic {tid}", off))
            else:
                out.append(ImageProblem("V101", f"{what} for unknown topic id {tid}", off))
            raise _Skip
        return t

    def _partition(self, d: dict, out: list, off: int | None) -> None:
        t = self._live_topic(d["topicId"], "PartitionRecord", out, off)
        pid = d.get("partitionId", -1)
        replicas = _ints(d["replicas"])
        dirs = list(d.get("directories") or ())
        if dirs and len(dirs) != len(replicas):
            out.append(ImageProblem("V115", f"{_where(t, pid)}: {len(dirs)} directories for "
                                            f"{len(replicas)} replicas", off))
            raise _Skip
        p = {
            "replicas": replicas,
            "isr": _ints(d["isr"]),
            "removingReplicas": _ints(d.get("removingReplicas")),
            "addingReplicas": _ints(d.get("addingReplicas")),
            "leader": d.get("leader", NO_LEADER),
            "leaderRecoveryState": d.get("leaderRecoveryState", 0),
            "leaderEpoch": d.get("leaderEpoch", -1),
            "partitionEpoch": d.get("partitionEpoch", -1),
            "directories": _default_to_migrating(dirs, len(replicas)),
            "eligibleLeaderReplicas": _ints(d.get("eligibleLeaderReplicas")),
            "lastKnownElr": _ints(d.get("lastKnownElr")),
        }
        if p["leaderRecoveryState"] not in (0, 1):
            out.append(ImageProblem("V116", f"{_where(t, pid)}: leaderRecoveryState "
                                            f"{p['leaderRecoveryState']}", off))
            raise _Skip
        old = t["partitions"].get(pid)
        if old is not None:
            if p["leaderEpoch"] < old["leaderEpoch"]:
                out.append(ImageProblem("V105", f"{_where(t, pid)}: leader epoch "
                                                f"{old['leaderEpoch']} -> {p['leaderEpoch']}",
                                        off))
            if p["partitionEpoch"] < old["partitionEpoch"]:
                out.append(ImageProblem("V106", f"{_where(t, pid)}: partition epoch "
                                                f"{old['partitionEpoch']} -> "
                                                f"{p['partitionEpoch']}", off))
        self._check_partition(t, pid, p, None, out, off)
        t["partitions"][pid] = p

    def _partition_change_fast(self, d: dict, out: list, off: int | None) -> None:
        """:meth:`_partition_change` for the records a busy cluster writes most (an ISR
        that shrinks or grows back, a new leader): only ``isr`` and ``leader`` besides the
        partition's name.  The same checks in the same order, without the loops over
        fields such a record does not carry; any other record takes the full path.
        tests/test_image_fast.py replays every fixture and real log both ways."""
        if len(d) > 4 or not d.keys() <= _SIMPLE_CHANGE:
            return self._partition_change(d, out, off)
        t = self.topics.get(d["topicId"])
        if t is None:
            t = self._live_topic(d["topicId"], "PartitionChangeRecord", out, off)
        pid = d.get("partitionId", -1)
        parts = t["partitions"]
        old = parts.get(pid)
        if old is None:
            out.append(ImageProblem("V102", f"PartitionChangeRecord for {_where(t, pid)}, "
                                            "which does not exist", off))
            raise _Skip
        p = old.copy()
        isr = d.get("isr")
        if isr is not None:
            p["isr"] = isr = list(isr)
        else:
            isr = p["isr"]
        leader = d.get("leader", NO_LEADER_CHANGE)
        if leader != NO_LEADER_CHANGE:
            p["leader"] = leader
            p["leaderEpoch"] = old["leaderEpoch"] + 1
            elected = True
        else:
            leader = p["leader"]
            elected = False
        p["partitionEpoch"] = old["partitionEpoch"] + 1
        # _check_partition, inlined
        if leader >= 0 and leader not in isr:
            out.append(ImageProblem("V103", f"{_where(t, pid)}: leader {leader} is not in "
                                            f"ISR {isr}", off))
        replicas = p["replicas"]
        if isr != replicas:
            # set(isr) <= set(replicas), without making two sets: lists of a few ints
            for r in isr:
                if r not in replicas:
                    break
            else:
                r = None
            if r is not None:
                    out.append(ImageProblem("V104", f"{_where(t, pid)}: ISR {isr} is not a "
                                                f"subset of replicas {replicas}", off))
        if elected and leader >= 0 and leader not in self.brokers:
            out.append(ImageProblem("V114", f"{_where(t, pid)}: leader {leader} is not a "
                                            "registered broker", off))
        self.changed_partition = (old, p)
        parts[pid] = p

    def _partition_change(self, d: dict, out: list, off: int | None) -> None:
        t = self.topics.get(d["topicId"])  # the common case, without a call
        if t is None:
            t = self._live_topic(d["topicId"], "PartitionChangeRecord", out, off)
        pid = d.get("partitionId", -1)
        old = t["partitions"].get(pid)
        if old is None:
            out.append(ImageProblem("V102", f"PartitionChangeRecord for {_where(t, pid)}, "
                                            "which does not exist", off))
            raise _Skip
        p = dict(old)
        for key in _CHANGED_LISTS:
            v = d.get(key)
            if v is not None:
                p[key] = list(v)
        dirs = d.get("directories")
        if dirs is not None:
            if dirs and d.get("replicas") is not None and len(dirs) != len(d["replicas"]):
                out.append(ImageProblem("V115", f"{_where(t, pid)}: {len(dirs)} directories "
                                                f"for {len(d['replicas'])} replicas", off))
                raise _Skip
            p["directories"] = list(dirs)
        # The old partition's directories already follow the rule and match its replicas:
        # they are judged again only when the record changes either.
        if dirs is not None or d.get("replicas") is not None:
            p["directories"] = _default_to_migrating(p["directories"], len(p["replicas"]))
            if len(p["directories"]) != len(p["replicas"]):
                out.append(ImageProblem("V115", f"{_where(t, pid)}: {len(p['directories'])} "
                                                f"directories for {len(p['replicas'])} "
                                                "replicas", off))
                raise _Skip
        leader = d.get("leader", NO_LEADER_CHANGE)
        if leader != NO_LEADER_CHANGE:
            p["leader"] = leader
            p["leaderEpoch"] = old["leaderEpoch"] + 1
        lrs = d.get("leaderRecoveryState", -1)
        if lrs != -1:
            if lrs not in (0, 1):
                out.append(ImageProblem("V116", f"{_where(t, pid)}: leaderRecoveryState "
                                                f"{lrs}", off))
                raise _Skip
            p["leaderRecoveryState"] = lrs
        p["partitionEpoch"] = old["partitionEpoch"] + 1
        self._check_partition(t, pid, p, d, out, off)
        self.changed_partition = (old, p)
        t["partitions"][pid] = p

    def _check_partition(self, t: dict, pid: int, p: dict, change: dict | None, out: list,
                         off: int | None) -> None:
        leader, isr, replicas = p["leader"], p["isr"], p["replicas"]
        if leader >= 0 and leader not in isr:
            out.append(ImageProblem("V103", f"{_where(t, pid)}: leader {leader} is not in "
                                            f"ISR {isr}", off))
        if isr != replicas and not set(isr) <= set(replicas):  # most often the same list
            out.append(ImageProblem("V104", f"{_where(t, pid)}: ISR {isr} is not a subset of "
                                            f"replicas {replicas}", off))
        # A leader must be a registered broker where this record elects it.  Replicas may
        # name unregistered brokers (a broker can be unregistered while it still hosts
        # replicas), so they are not checked.
        if leader >= 0 and (change is None or change.get("leader", NO_LEADER_CHANGE)
                            != NO_LEADER_CHANGE) and leader not in self.brokers:
            out.append(ImageProblem("V114", f"{_where(t, pid)}: leader {leader} is not a "
                                            "registered broker", off))

    def _remove_topic(self, d: dict, out: list, off: int | None) -> None:
        tid = d["topicId"]
        t = self._live_topic(tid, "RemoveTopicRecord", out, off)
        del self.topics[tid]
        self.removed_topic_ids.add(tid)
        self.configs.pop((2, t["name"]), None)

    def _clear_elr(self, d: dict, out: list, off: int | None) -> None:
        name = d["topicName"]
        if name:
            tid = self.topic_id(name)
            if tid is None:
                out.append(ImageProblem("V101", f"ClearElrRecord for unknown topic {name!r}",
                                        off))
                raise _Skip
            targets = [self.topics[tid]]
        else:
            targets = list(self.topics.values())
        # As Kafka: a PartitionChange with empty ELR and last known ELR for each partition
        # that has either, so the partition epoch advances.
        for t in targets:
            for p in t["partitions"].values():
                if p["eligibleLeaderReplicas"] or p["lastKnownElr"]:
                    p["eligibleLeaderReplicas"] = []
                    p["lastKnownElr"] = []
                    p["partitionEpoch"] += 1

    def _config(self, d: dict, out: list, off: int | None) -> None:
        key = (d["resourceType"], d["resourceName"])
        value = d["value"]
        if value is None:
            cfg = self.configs.get(key)
            if cfg is not None:
                cfg.pop(d["name"], None)
                if not cfg:
                    del self.configs[key]
        else:
            if SENSITIVE_CONFIG.search(d["name"]):
                raw, value = value, _fingerprint(value)  # a secret: shown as its fingerprint
                self.secrets[value] = raw
            self.configs.setdefault(key, {})[d["name"]] = value

    def _client_quota(self, d: dict, out: list, off: int | None) -> None:
        entity = tuple(sorted((e["entityType"], e["entityName"]) for e in d["entity"]))
        if d["remove"]:
            q = self.client_quotas.get(entity)
            if q is not None:
                q.pop(d["key"], None)
                if not q:
                    del self.client_quotas[entity]
        else:
            self.client_quotas.setdefault(entity, {})[d["key"]] = float(d["value"])

    def _producer_ids(self, d: dict, out: list, off: int | None) -> None:
        nxt = d["nextProducerId"]
        if self.next_producer_id is not None and nxt < self.next_producer_id:
            out.append(ImageProblem("V118", f"next producer id {self.next_producer_id} -> "
                                            f"{nxt}", off))
        self.next_producer_id = nxt

    def _acl(self, d: dict, out: list, off: int | None) -> None:
        self.acls[d["id"]] = {k: d[k] for k in (
            "resourceType", "resourceName", "patternType", "principal", "host",
            "operation", "permissionType")}

    def _remove_acl(self, d: dict, out: list, off: int | None) -> None:
        if self.acls.pop(d["id"], None) is None:
            out.append(ImageProblem("V117", f"remove ACL {d['id']}, which does not exist",
                                    off))

    def _scram(self, d: dict, out: list, off: int | None) -> None:
        credential = _fingerprint(d["salt"], d["storedKey"], d["serverKey"])
        self.scram[(d["name"], d["mechanism"])] = {
            "iterations": d["iterations"],
            "credential": credential,
        }
        self.secrets[credential] = (bytes(d["salt"]), bytes(d["storedKey"]),
                                    bytes(d["serverKey"]))

    def _remove_scram(self, d: dict, out: list, off: int | None) -> None:
        if self.scram.pop((d["name"], d["mechanism"]), None) is None:
            out.append(ImageProblem("V117", f"remove SCRAM credential {d['name']!r} "
                                            f"mechanism {d['mechanism']}, which does not "
                                            "exist", off))

    def _token(self, d: dict, out: list, off: int | None) -> None:
        token = _fingerprint(d["tokenId"])
        self.secrets[token] = d["tokenId"]
        self.delegation_tokens[token] = {
            "owner": d["owner"],
            "requester": d["requester"],
            "renewers": list(d["renewers"]),
            "issueTimestamp": d["issueTimestamp"],
            "maxTimestamp": d["maxTimestamp"],
            "expirationTimestamp": d["expirationTimestamp"],
        }

    def _remove_token(self, d: dict, out: list, off: int | None) -> None:
        if self.delegation_tokens.pop(_fingerprint(d["tokenId"]), None) is None:
            out.append(ImageProblem("V117", "remove a delegation token that does not exist",
                                    off))

    def _noop(self, d: Any, out: list, off: int | None) -> None:
        return None

    # ------------------------------------------------------------------ canonical form

    def to_json(self) -> dict[str, Any]:
        """The image as canonical JSON-ready data (keys are strings, lists ordered).

        Key material (SCRAM salts and keys, delegation token ids) appears only as
        fingerprints (``xxh3:<hex>``), so the output is safe to print and still changes
        whenever the secrets do.
        """
        topics: dict[str, Any] = {}
        for tid in sorted(self.topics, key=lambda i: (self.topics[i]["name"], i)):
            t = self.topics[tid]
            key = t["name"] if t["name"] not in topics else f"{t['name']}#{tid}"
            topics[key] = {
                "topicId": tid,
                "partitions": {str(pid): dict(t["partitions"][pid])
                               for pid in sorted(t["partitions"])},
            }
        configs: dict[str, dict[str, dict[str, str]]] = {}
        for (rtype, rname) in sorted(self.configs):
            section = configs.setdefault(CONFIG_RESOURCE_TYPES.get(rtype, str(rtype)), {})
            section[rname] = dict(sorted(self.configs[(rtype, rname)].items()))
        scram: dict[str, dict[str, Any]] = {}
        for (user, mech) in sorted(self.scram):
            scram.setdefault(user, {})[SCRAM_MECHANISMS.get(mech, str(mech))] = \
                dict(self.scram[(user, mech)])
        txn = None
        if self._txn is not None:
            txn = {"name": self._txn_name, "pendingRecords": len(self._txn)}
        zk = self.zk_migration_state
        return {
            "features": dict(sorted(self.features.items())),
            "zkMigrationState": None if zk is None else ZK_MIGRATION_STATES.get(zk, str(zk)),
            "brokers": {str(i): _copy.deepcopy(self.brokers[i]) for i in sorted(self.brokers)},
            "controllers": {str(i): _copy.deepcopy(self.controllers[i])
                            for i in sorted(self.controllers)},
            "topics": topics,
            "configs": configs,
            "clientQuotas": {_entity_key(e): dict(sorted(self.client_quotas[e].items()))
                             for e in sorted(self.client_quotas, key=_entity_key)},
            "producerIds": {"nextProducerId": self.next_producer_id},
            "acls": {i: dict(self.acls[i]) for i in sorted(self.acls)},
            "scram": scram,
            "delegationTokens": {i: _copy.deepcopy(self.delegation_tokens[i])
                                 for i in sorted(self.delegation_tokens)},
            "transaction": txn,
        }

    def digest(self) -> str:
        """xxh3-128 hex digest of :meth:`to_json` in canonical JSON: stable everywhere."""
        return xxhash.xxh3_128_hexdigest(canonical_bytes(self.to_json()))

    def section_digests(self) -> dict[str, str]:
        """A digest per top-level section of :meth:`to_json` (features, brokers, ...)."""
        return {k: xxhash.xxh3_128_hexdigest(canonical_bytes(v))
                for k, v in self.to_json().items()}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MetadataImage):
            return NotImplemented
        return self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return (f"MetadataImage(brokers={len(self.brokers)}, topics={len(self.topics)}, "
                f"metadata.version={self.metadata_version}, digest={self.digest()[:12]})")


#: The fields of a PartitionChangeRecord that :meth:`MetadataImage._partition_change_fast`
#: takes itself.
_SIMPLE_CHANGE = frozenset(("topicId", "partitionId", "isr", "leader"))

#: The lists a PartitionChangeRecord replaces when it carries them.
_CHANGED_LISTS = ("replicas", "isr", "removingReplicas", "addingReplicas",
                  "eligibleLeaderReplicas", "lastKnownElr")


def _where(topic: dict, pid: int) -> str:
    """A partition's name in a problem (made only for one: a log replays millions)."""
    return f"{topic['name']}-{pid}"


def _default_to_migrating(dirs: list[str], n: int) -> list[str]:
    """Kafka's rule: no directories (or only MIGRATING ones) means MIGRATING per replica."""
    if not dirs or dirs.count(MIGRATING_DIR) == len(dirs):
        return [MIGRATING_DIR] * n
    return dirs


def _entity_key(entity: tuple[tuple[str, str | None], ...]) -> str:
    """A client-quota entity as a stable string: JSON of its sorted (type, name) pairs."""
    return json.dumps({t: n for t, n in entity}, sort_keys=True, separators=(",", ":"))


def canonical_bytes(obj: Any) -> bytes:
    """Canonical JSON: sorted keys, no spaces, ASCII only, no NaN."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=True).encode("ascii")


_HANDLERS = {
    "FEATURE_LEVEL_RECORD": MetadataImage._features,
    "ZK_MIGRATION_STATE_RECORD": MetadataImage._zk_migration,
    "REGISTER_BROKER_RECORD": MetadataImage._register_broker,
    "UNREGISTER_BROKER_RECORD": MetadataImage._unregister_broker,
    "FENCE_BROKER_RECORD": MetadataImage._fence,
    "UNFENCE_BROKER_RECORD": MetadataImage._unfence,
    "BROKER_REGISTRATION_CHANGE_RECORD": MetadataImage._broker_change,
    "REGISTER_CONTROLLER_RECORD": MetadataImage._register_controller,
    "UNREGISTER_CONTROLLER_RECORD": MetadataImage._unregister_controller,
    "TOPIC_RECORD": MetadataImage._topic,
    "PARTITION_RECORD": MetadataImage._partition,
    "PARTITION_CHANGE_RECORD": MetadataImage._partition_change,
    "REMOVE_TOPIC_RECORD": MetadataImage._remove_topic,
    "CLEAR_ELR_RECORD": MetadataImage._clear_elr,
    "CONFIG_RECORD": MetadataImage._config,
    "CLIENT_QUOTA_RECORD": MetadataImage._client_quota,
    "PRODUCER_IDS_RECORD": MetadataImage._producer_ids,
    "ACCESS_CONTROL_ENTRY_RECORD": MetadataImage._acl,
    "REMOVE_ACCESS_CONTROL_ENTRY_RECORD": MetadataImage._remove_acl,
    "USER_SCRAM_CREDENTIAL_RECORD": MetadataImage._scram,
    "REMOVE_USER_SCRAM_CREDENTIAL_RECORD": MetadataImage._remove_scram,
    "DELEGATION_TOKEN_RECORD": MetadataImage._token,
    "REMOVE_DELEGATION_TOKEN_RECORD": MetadataImage._remove_token,
    "NO_OP_RECORD": MetadataImage._noop,
}
#: What :meth:`MetadataImage.apply` calls: :data:`_HANDLERS` with the fast paths of the
#: records a log holds most of (each falls back to its full handler where it must).
_FAST_HANDLERS = {**_HANDLERS,
                  "PARTITION_CHANGE_RECORD": MetadataImage._partition_change_fast}
MetadataImage._handlers = _FAST_HANDLERS


def _fmt(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def diff_images(a: MetadataImage | dict, b: MetadataImage | dict) -> list[str]:
    """Human-readable differences from ``a`` to ``b``, one line per changed leaf.

    Lines look like ``/topics/orders/partitions/0/leader: 1 -> 2``; a side that lacks
    the path shows as ``(absent)``.  Path segments are dict keys (``/`` and ``~`` in a
    key are escaped as in JSON Pointer).
    """
    ja = a.to_json() if isinstance(a, MetadataImage) else a
    jb = b.to_json() if isinstance(b, MetadataImage) else b
    out: list[str] = []
    _diff(ja, jb, "", out)
    return out


def _diff(x: Any, y: Any, path: str, out: list[str]) -> None:
    if isinstance(x, dict) and isinstance(y, dict):
        for k in sorted(set(x) | set(y), key=str):
            seg = f"{path}/{str(k).replace('~', '~0').replace('/', '~1')}"
            if k not in x:
                out.append(f"{seg}: (absent) -> {_fmt(y[k])}")
            elif k not in y:
                out.append(f"{seg}: {_fmt(x[k])} -> (absent)")
            else:
                _diff(x[k], y[k], seg, out)
    elif x != y or type(x) is not type(y):
        out.append(f"{path or '/'}: {_fmt(x)} -> {_fmt(y)}")
