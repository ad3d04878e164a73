"""The metadata image as a node tree: the names and ``cat`` text of Kafka 4.0's
``kafka-metadata-shell.sh`` (``metadata/.../image/node/*``, ``shell/.../node/*``).

One home for the tree that ``kmeta shell`` walks and ``kmeta image ls|cat`` prints.  Pure:
a :class:`~kmeta.core.image.MetadataImage` in, :class:`Node` objects out, no I/O.

* ``/`` holds ``image`` and ``local``; ``/local/version`` is **kmeta's** version (Kafka
  prints its own there; there is no ``commitId``).
* ``/image/...`` is named as Kafka 4.0 names it: ``acls/byId/<uuid>``,
  ``clientQuotas/<entity>/<key>``, ``cluster/brokers/<id>``, ``cluster/controllers/<id>``,
  ``configs/<TYPE>[:<name>]/<key>``, ``delegationToken/<token>``, ``features/...``,
  ``producerIds/nextProducerId``, ``provenance``, ``scram/<MECHANISM>/<user>``,
  ``topics/byName|byId/<topic>/{name,id,<partition>}``.  Names sort as Java's
  ``String.compareTo`` sorts them (UTF-16 code units: ``10`` before ``2``).
* A leaf's :attr:`Node.text` is Kafka's ``toString`` shape (``BrokerRegistration(...)``,
  ``PartitionRegistration(...)``, ``Optional[4.0-IV3]``, ``StandardAcl(...)``, a quota as
  Java's ``Double.toString``); :attr:`Node.json` is kmeta's own JSON for the node (a
  directory's is ``{child name: child json}``).

Where kmeta departs from Kafka 4.0, on purpose:

* **Secrets stay redacted** unless ``show_secrets``: a sensitive config value (by
  :data:`~kmeta.formats.metadata_schemas.SENSITIVE_CONFIG`) reads ``[redacted]``; a SCRAM
  credential reads ``salt=[redacted], storedKey=[redacted], serverKey=[redacted]`` (its
  iterations stay: kmeta's image shows them anyway, Kafka's redaction hides them too); a
  delegation token's node is named by kmeta's fingerprint (``xxh3:…``) and its text says
  ``tokenId=[redacted]`` (owner, renewers and times stay, as in kmeta's image).  Kafka's
  shell prints every one of them in the clear.  With ``show_secrets`` the raw values come
  from ``image.secrets``, and a token's node is named by its id, as in Kafka.
* ``features/zkMigrationState`` is a real leaf holding the state's name (``NONE`` before
  any ZkMigrationStateRecord, as Kafka 3.x's image defaulted): Kafka 4.0 lists it but
  cannot read it (``cat`` says no such file, ``find`` crashes).
* ``features/finalized_kraft.version`` is listed when the log set it (Kafka 4.0 keeps
  kraft.version out of the image since KAFKA-18979; 3.9 showed it): its records are in the
  log, and a shell that walks through time should show what they did.
  ``features/metadataVersion`` keeps 4.0's ``Optional[...]`` wrapping.
* A client-quota entity's default part (a null name) is written as its type without
  parentheses (``user``, ``clientId(app)_user``): Kafka leaves it out, which names the
  default user's node ``""`` and makes ``clientId(app)_user(<default>)`` collide with
  ``clientId(app)``.
* ``provenance`` is ``offset <last offset>, epoch <epoch>, time <UTC>`` from the
  :class:`Provenance` the caller gives (the real offset, also for a snapshot file, where
  Kafka shows the record's position in the file); without one, Kafka's empty provenance.
* ``/image/configs/BROKER`` (the cluster-wide default, resource name ``""``) is reachable,
  as in Kafka.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from kmeta import __version__
from kmeta.core.image import (
    CONFIG_RESOURCE_TYPES,
    METADATA_VERSION,
    SCRAM_MECHANISMS,
    ZK_MIGRATION_STATES,
    MetadataImage,
    _entity_key,
    _fingerprint,
)
from kmeta.core.nodes import (
    UNSET,
    Change,
    Node,
    change_dir,
    complete_path,
    diff_nodes,
    flatten,
    glob_escape,
    glob_regex,
    java_sorted,
    join,
    path_of,
    related,
    resolve,
    split_path,
    walk,
)
from kmeta.core.versions import LEVEL_NAMES
from kmeta.formats.metadata_schemas import SENSITIVE_CONFIG

# The tree's walks and paths live in kmeta.core.nodes; they are named here too, so that a
# caller of the image's tree needs this one module.
__all__ = ["EMPTY_PROVENANCE", "Change", "Node", "Provenance", "change_dir", "complete_path",
           "diff_nodes",
           "flatten", "glob_escape", "glob_regex", "image_tree", "is_legacy", "java_sorted",
           "join", "kafka_path", "path_of", "record_paths", "related", "resolve",
           "split_path", "walk"]

REDACTED = "[redacted]"
SECURITY_PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
RESOURCE_TYPES = {0: "UNKNOWN", 1: "ANY", 2: "TOPIC", 3: "GROUP", 4: "CLUSTER",
                  5: "TRANSACTIONAL_ID", 6: "DELEGATION_TOKEN", 7: "USER"}
PATTERN_TYPES = {0: "UNKNOWN", 1: "ANY", 2: "MATCH", 3: "LITERAL", 4: "PREFIXED"}
ACL_OPERATIONS = {0: "UNKNOWN", 1: "ANY", 2: "ALL", 3: "READ", 4: "WRITE", 5: "CREATE",
                  6: "DELETE", 7: "ALTER", 8: "DESCRIBE", 9: "CLUSTER_ACTION",
                  10: "DESCRIBE_CONFIGS", 11: "ALTER_CONFIGS", 12: "IDEMPOTENT_WRITE",
                  13: "CREATE_TOKENS", 14: "DESCRIBE_TOKENS"}
PERMISSION_TYPES = {0: "UNKNOWN", 1: "ANY", 2: "DENY", 3: "ALLOW"}
LEADER_RECOVERY = {0: "RECOVERED", 1: "RECOVERING"}
#: ClientQuotaEntity types in the order Kafka names them (clientId, ip, user)
QUOTA_PARTS = (("client-id", "clientId"), ("ip", "ip"), ("user", "user"))
VERSION_RANGE_MAX = 32767  # Short.MAX_VALUE: VersionRange prints "min+"


@dataclass(frozen=True)
class Provenance:
    """Where the image stands, as Kafka's MetadataProvenance: the last offset applied
    (the image's offset - 1), the leader epoch and the max timestamp (ms) of the last data
    batch applied."""

    offset: int
    epoch: int
    timestamp: int


EMPTY_PROVENANCE = Provenance(-1, -1, -1)


def _dir(name: str, entries: Callable[[], dict[str, Any]],
         make: Callable[[str, Any], Node], value: Any = None, json: Any = UNSET) -> Node:
    return Node(name, entries=entries, make=make, value=value, json=json)


def _leaf(name: str, text: str | Callable[[], str], json: Any = UNSET,
          value: Any = None) -> Node:
    return Node(name, text=text, json=json, value=value)


def _fixed(name: str, children: dict[str, Callable[[], Node]], value: Any = None) -> Node:
    """A directory whose children are known by name (each made when asked for)."""
    return _dir(name, lambda: children, lambda n, mk: mk(), value=value)


# ---------------------------------------------------------------------- Java's text

def java_double(v: float) -> str:
    """Java's Double.toString: shortest digits; plain from 10^-3 up to 10^7, else
    ``d.dddE<n>``; always a digit after the point."""
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "-0.0" if str(v).startswith("-") else "0.0"
    sign, digits, exp = Decimal(repr(v)).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    e = len(digits) + int(exp) - 1  # the decimal exponent of the first digit
    neg = "-" if sign else ""
    if 1e-3 <= abs(v) < 1e7:
        if e >= 0:
            whole = ds[:e + 1].ljust(e + 1, "0")
            frac = ds[e + 1:] or "0"
        else:
            whole, frac = "0", "0" * (-e - 1) + ds
        return f"{neg}{whole}.{frac}"
    return f"{neg}{ds[0]}.{ds[1:] or '0'}E{e}"


def _ints(v: Any) -> str:
    return "[" + ", ".join(str(x) for x in v or ()) + "]"


def _uuid_key(u: str) -> tuple[int, int]:
    """Kafka's Uuid.compareTo: the most then least significant longs, signed."""
    try:
        raw = base64.urlsafe_b64decode(u + "=" * (-len(u) % 4))
    except (ValueError, TypeError):
        return (0, 0)
    if len(raw) != 16:
        return (0, 0)
    return (int.from_bytes(raw[:8], "big", signed=True),
            int.from_bytes(raw[8:], "big", signed=True))


def _version_range(r: list[int]) -> str:
    lo, hi = r
    if lo == hi:
        return str(lo)
    return f"{lo}+" if hi == VERSION_RANGE_MAX else f"{lo}-{hi}"


def _endpoint(e: dict[str, Any]) -> str:
    proto = SECURITY_PROTOCOLS.get(e.get("securityProtocol"), "null")
    return (f"Endpoint(listenerName='{e['name']}', securityProtocol={proto}, "
            f"host='{e['host']}', port={e['port']})")


def _registration(r: dict[str, Any]) -> str:
    by_name = {e["name"]: e for e in r.get("endPoints") or ()}
    eps = [by_name[n] for n in java_sorted(by_name)]
    feats = r.get("features") or {}
    return ("listeners=[" + ", ".join(_endpoint(e) for e in eps) + "], supportedFeatures={"
            + ", ".join(f"{k}: {_version_range(feats[k])}" for k in java_sorted(feats))
            + "}")


def broker_text(b: dict[str, Any]) -> str:
    rack = "Optional.empty" if b.get("rack") is None else f"Optional[{b['rack']}]"
    dirs = sorted(b.get("logDirs") or (), key=_uuid_key)
    return (f"BrokerRegistration(id={b['id']}, epoch={b['epoch']}, "
            f"incarnationId={b['incarnationId']}, {_registration(b)}, rack={rack}, "
            f"fenced={_bool(b['fenced'])}, "
            f"inControlledShutdown={_bool(b['inControlledShutdown'])}, "
            f"isMigratingZkBroker={_bool(b['isMigratingZkBroker'])}, "
            f"directories=[{', '.join(dirs)}])")


def controller_text(c: dict[str, Any]) -> str:
    return (f"ControllerRegistration(id={c['id']}, incarnationId={c['incarnationId']}, "
            f"zkMigrationReady={_bool(c['zkMigrationReady'])}, {_registration(c)})")


def partition_text(p: dict[str, Any]) -> str:
    lrs = LEADER_RECOVERY.get(p["leaderRecoveryState"], str(p["leaderRecoveryState"]))
    return (f"PartitionRegistration(replicas={_ints(p['replicas'])}, "
            f"directories=[{', '.join(p['directories'])}], isr={_ints(p['isr'])}, "
            f"removingReplicas={_ints(p['removingReplicas'])}, "
            f"addingReplicas={_ints(p['addingReplicas'])}, "
            f"elr={_ints(p['eligibleLeaderReplicas'])}, "
            f"lastKnownElr={_ints(p['lastKnownElr'])}, leader={p['leader']}, "
            f"leaderRecoveryState={lrs}, leaderEpoch={p['leaderEpoch']}, "
            f"partitionEpoch={p['partitionEpoch']})")


def acl_text(a: dict[str, Any]) -> str:
    def name(table: dict[int, str], v: Any) -> str:
        return table.get(v, "UNKNOWN")

    return (f"StandardAcl(resourceType={name(RESOURCE_TYPES, a['resourceType'])}, "
            f"resourceName={a['resourceName']}, "
            f"patternType={name(PATTERN_TYPES, a['patternType'])}, "
            f"principal={a['principal']}, host={a['host']}, "
            f"operation={name(ACL_OPERATIONS, a['operation'])}, "
            f"permissionType={name(PERMISSION_TYPES, a['permissionType'])})")


def provenance_text(p: Provenance) -> str:
    """``offset N, epoch E, time <ISO_ZONED_DATE_TIME in UTC>`` (Kafka's ProvenanceNode)."""
    try:
        t = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=p.timestamp)
        frac = f"{t.microsecond // 1000:03d}".rstrip("0")
        when = t.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if frac else "") + "Z[UTC]"
    except OverflowError:
        when = str(p.timestamp)
    return f"offset {p.offset}, epoch {p.epoch}, time {when}"


def metadata_version_text(level: int | None) -> str:
    if level is None:
        return "Optional.empty"
    return f"Optional[{LEVEL_NAMES.get(level, level)}]"


def _bool(v: Any) -> str:
    return "true" if v else "false"


# ---------------------------------------------------------------------- names

def config_resource_name(rtype: int, rname: str) -> str:
    """``TOPIC:orders``; the default resource (an empty name) is the type alone."""
    t = CONFIG_RESOURCE_TYPES.get(rtype, "UNKNOWN")
    return t if rname == "" else f"{t}:{rname}"


def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def quota_entity_name(entity: tuple[tuple[str, str | None], ...]) -> str:
    """Kafka's ClientQuotasImageNode name: ``clientId(a)_ip(b)_user(c)`` in that order,
    ``\\``, ``(`` and ``)`` escaped; a default part (null name) is its type alone."""
    parts = dict(entity)
    out = []
    for etype, label in QUOTA_PARTS:
        if etype in parts:
            n = parts[etype]
            out.append(label if n is None else f"{label}({_escape(n)})")
    out += [f"{t}({_escape(n)})" if n is not None else t
            for t, n in entity if t not in dict(QUOTA_PARTS)]
    return "_".join(out)


def _token_name(image: MetadataImage, fp: str, show_secrets: bool) -> str:
    if show_secrets and isinstance(image.secrets.get(fp), str):
        return image.secrets[fp]
    return fp


# ---------------------------------------------------------------------- the tree

ProvenanceArg = Provenance | Callable[[], Provenance] | None


def image_tree(image: MetadataImage, *, show_secrets: bool = False,
               provenance: ProvenanceArg = None) -> Node:
    """The root ``/`` of the node tree of ``image`` (children built as they are asked
    for; the image must not change while the tree is used).  ``provenance`` may be a
    function, called only when ``/image/provenance`` is read."""
    return _fixed("/", {
        "image": lambda: image_node(image, show_secrets=show_secrets, provenance=provenance),
        "local": lambda: _fixed("local", {
            "version": lambda: _leaf("version", __version__, value=__version__)}),
    })


def image_node(image: MetadataImage, *, show_secrets: bool = False,
               provenance: ProvenanceArg = None) -> Node:
    """``/image``."""
    im, ss = image, show_secrets
    return _fixed("image", {
        "acls": lambda: _fixed("acls", {"byId": lambda: _acls(im)}),
        "clientQuotas": lambda: _quotas(im),
        "cluster": lambda: _fixed("cluster", {
            "brokers": lambda: _registrations("brokers", im.brokers, broker_text),
            "controllers": lambda: _registrations("controllers", im.controllers,
                                                  controller_text)}),
        "configs": lambda: _configs(im, ss),
        "delegationToken": lambda: _tokens(im, ss),
        "features": lambda: _features(im),
        "producerIds": lambda: _fixed("producerIds", {
            "nextProducerId": lambda: _leaf(
                "nextProducerId",
                str(-1 if im.next_producer_id is None else im.next_producer_id),
                json=im.next_producer_id, value=im.next_producer_id)},
            value=im.next_producer_id),
        "provenance": lambda: _provenance(provenance),
        "scram": lambda: _scram(im, ss),
        "topics": lambda: _fixed("topics", {
            "byId": lambda: _topics("byId", im, by_id=True),
            "byName": lambda: _topics("byName", im, by_id=False)}),
    })


def _provenance(provenance: ProvenanceArg) -> Node:
    prov = provenance() if callable(provenance) else provenance or EMPTY_PROVENANCE
    return _leaf("provenance", provenance_text(prov),
                 json={"offset": prov.offset, "epoch": prov.epoch,
                       "timestamp": prov.timestamp}, value=prov)


def _acls(image: MetadataImage) -> Node:
    acls = image.acls
    return _dir("byId", lambda: acls, lambda n, a: _leaf(
        n, lambda: acl_text(a), json=a, value=a), value=acls)


def _quotas(image: MetadataImage) -> Node:
    quotas = image.client_quotas

    def entries() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for e in sorted(quotas, key=_entity_key):
            out.setdefault(quota_entity_name(e), quotas[e])
        return out

    def entity(name: str, q: dict[str, float]) -> Node:
        return _dir(name, lambda: q, lambda k, v: _leaf(k, lambda: java_double(v), json=v,
                                                        value=v), value=q)

    return _dir("clientQuotas", entries, entity, value=quotas)


def _registrations(name: str, regs: dict[int, dict[str, Any]],
                   text: Callable[[dict[str, Any]], str]) -> Node:
    return _dir(name, lambda: {str(i): r for i, r in regs.items()},
                lambda n, r: _leaf(n, lambda: text(r), json=r, value=r), value=regs)


def _configs(image: MetadataImage, show_secrets: bool) -> Node:
    configs, secrets = image.configs, image.secrets

    def entries() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in sorted(configs, key=lambda k: (k[0], str(k[1]))):
            out.setdefault(config_resource_name(*key), configs[key])
        return out

    def value(k: str, v: str) -> tuple[str, str]:
        """(text, json): a secret is [redacted], or with show_secrets its raw value
        (text) and fingerprint (json, as kmeta's image JSON has it)."""
        if not SENSITIVE_CONFIG.search(k):
            return v, v
        if not show_secrets:
            return REDACTED, REDACTED
        raw = secrets.get(v, v)
        return (raw if isinstance(raw, str) else v), v

    def resource(name: str, cfg: dict[str, str]) -> Node:
        def leaf(k: str, v: str) -> Node:
            text, j = value(k, v)
            return _leaf(k, text, json=j, value=v)
        return _dir(name, lambda: cfg, leaf, value=cfg)

    return _dir("configs", entries, resource, value=configs)


def _tokens(image: MetadataImage, show_secrets: bool) -> Node:
    tokens = image.delegation_tokens

    def entries() -> dict[str, Any]:
        return {_token_name(image, fp, show_secrets): t for fp, t in tokens.items()}

    def leaf(name: str, t: dict[str, Any]) -> Node:
        token_id = name if show_secrets else REDACTED
        text = (f"DelegationTokenDatatokenId={token_id}(owner={t['owner']}"
                f"(tokenRequester={t['requester']}(renewers={' '.join(t['renewers'])}, "
                f"issueTimestamp={t['issueTimestamp']}, maxTimestamp={t['maxTimestamp']}), "
                f"expiryTimestamp={t['expirationTimestamp']}")
        return _leaf(name, text, json=t, value=t)

    return _dir("delegationToken", entries, leaf, value=tokens)


def _features(image: MetadataImage) -> Node:
    feats, zk = image.features, image.zk_migration_state

    def entries() -> dict[str, Any]:
        out: dict[str, Any] = {"metadataVersion": feats.get(METADATA_VERSION),
                               "zkMigrationState": zk}
        for f, level in feats.items():
            if f != METADATA_VERSION:
                out[f"finalized_{f}"] = level
        return out

    def leaf(name: str, v: Any) -> Node:
        if name == "metadataVersion":
            return _leaf(name, metadata_version_text(v), json=v, value=v)
        if name == "zkMigrationState":
            state = "NONE" if v is None else ZK_MIGRATION_STATES.get(v, str(v))
            return _leaf(name, state, json=None if v is None else state, value=v)
        return _leaf(name, str(v), json=v, value=v)

    return _dir("features", entries, leaf, value=(feats, zk))


def _scram(image: MetadataImage, show_secrets: bool) -> Node:
    scram, secrets = image.scram, image.secrets

    def entries() -> dict[str, Any]:
        out: dict[str, dict[str, Any]] = {m: {} for m in SCRAM_MECHANISMS.values()}
        for (user, mech), cred in scram.items():
            out.setdefault(SCRAM_MECHANISMS.get(mech, str(mech)), {})[user] = cred
        return out

    def text(cred: dict[str, Any]) -> str:
        raw = secrets.get(cred["credential"]) if show_secrets else None
        if isinstance(raw, tuple) and len(raw) == 3:
            salt, stored, server = (bytes(x).hex() for x in raw)
        else:
            salt = stored = server = REDACTED
        return (f"ScramCredentialData(salt={salt}, storedKey={stored}, serverKey={server}, "
                f"iterations={cred['iterations']})")

    def mechanism(name: str, users: dict[str, Any]) -> Node:
        return _dir(name, lambda: users, lambda u, c: _leaf(
            u, lambda: text(c), json=c, value=c), value=users)

    return _dir("scram", entries, mechanism, value=scram)


def _topics(name: str, image: MetadataImage, *, by_id: bool) -> Node:
    topics = image.topics

    def entries() -> dict[str, Any]:
        if by_id:
            return dict(topics)
        out: dict[str, Any] = {}
        for tid in sorted(topics):
            out.setdefault(topics[tid]["name"], topics[tid])
        return out

    return _dir(name, entries, topic_node, value=topics)


def topic_node(name: str, t: dict[str, Any]) -> Node:
    """One topic: ``name``, ``id`` and a leaf per partition."""
    parts = t["partitions"]

    def entries() -> dict[str, Any]:
        out: dict[str, Any] = {str(pid): p for pid, p in parts.items()}
        out["name"] = _NAME
        out["id"] = _ID
        return out

    def child(n: str, v: Any) -> Node:
        if v is _NAME:
            return _leaf("name", t["name"], value=t["name"])
        if v is _ID:
            return _leaf("id", t["topicId"], value=t["topicId"])
        return _leaf(n, lambda: partition_text(v), json=v, value=v)

    return _dir(name, entries, child, value=t)


_NAME, _ID = object(), object()


# ---------------------------------------------------------------------- old paths

#: The top-level names of kmeta's image JSON, which ``kmeta image ls|cat`` took as paths
#: before the node tree (``/topics/NAME/0``, ``/brokers/1``, ``/configs/TOPIC/NAME`` …).
LEGACY_SECTIONS = ("features", "zkMigrationState", "brokers", "controllers", "topics",
                   "configs", "clientQuotas", "producerIds", "acls", "scram",
                   "delegationTokens", "transaction")


def legacy_components(path: str) -> list[str]:
    """An old path's components as kmeta read them: empty ones dropped, JSON Pointer
    escapes (``~1`` for ``/``) undone."""
    return [c.replace("~1", "/").replace("~0", "~") for c in path.strip().split("/") if c]


def is_legacy(path: str) -> bool:
    """Whether ``path`` is one of kmeta's old image paths (its first component names a
    section of the image JSON, where the node tree has only ``image`` and ``local``)."""
    comps = legacy_components(path)
    return bool(comps) and path.strip().startswith("/") and comps[0] in LEGACY_SECTIONS


def kafka_path(path: str, image: MetadataImage | None = None) -> str | None:
    """The node an old kmeta image path stands for (``/topics/orders/0`` ->
    ``/image/topics/byName/orders/0``, ``/scram/alice/SCRAM-SHA-256`` ->
    ``/image/scram/SCRAM-SHA-256/alice``); a path into a leaf's JSON gives the leaf;
    None for a path with no node (``/transaction``) or not an old one.  Given the image,
    ``/configs/TYPE/KEY`` reads the type's default resource when no resource is named KEY,
    as the old paths do."""
    if not is_legacy(path):
        return None
    c = legacy_components(path)
    head, rest = c[0], c[1:]
    try:
        out = _kafka_components(head, rest, image)
    except (ValueError, TypeError, AttributeError, KeyError):
        return None
    return None if out is None else path_of(out)


def _kafka_components(head: str, rest: list[str], image: MetadataImage | None
                      ) -> list[str] | None:
    if head == "features":
        if not rest:
            return ["image", "features"]
        f = rest[0]
        return ["image", "features",
                "metadataVersion" if f == METADATA_VERSION else f"finalized_{f}"]
    if head == "zkMigrationState":
        return ["image", "features", "zkMigrationState"]
    if head in ("brokers", "controllers"):
        return ["image", "cluster", head] + rest[:1]
    if head == "producerIds":
        return ["image", "producerIds"] + rest[:1]
    if head == "acls":
        return ["image", "acls", "byId"] + rest[:1]
    if head == "delegationTokens":
        return ["image", "delegationToken"] + rest[:1]
    if head == "scram":
        return ["image", "scram"] + ([rest[1], rest[0]] if len(rest) >= 2 else [])
    if head == "configs":
        if len(rest) < 2:
            return ["image", "configs"]
        rtype = {v: k for k, v in CONFIG_RESOURCE_TYPES.items()}.get(rest[0], 0)
        if image is not None and (rtype, rest[1]) not in image.configs \
                and rest[1] in image.configs.get((rtype, ""), {}):
            return ["image", "configs", config_resource_name(rtype, ""), rest[1]]
        return ["image", "configs", config_resource_name(rtype, rest[1])] + rest[2:3]
    if head == "clientQuotas":
        if not rest:
            return ["image", "clientQuotas"]
        pairs = json.loads(rest[0])
        entity = tuple(sorted((str(k), v) for k, v in pairs.items()))
        return ["image", "clientQuotas", quota_entity_name(entity)] + rest[1:2]
    if head == "topics":
        if not rest:
            return ["image", "topics", "byName"]
        name, _, tid = rest[0].partition("#")
        out = ["image", "topics", "byId", tid] if tid else ["image", "topics", "byName", name]
        tail = rest[1:]
        if tail[:1] == ["partitions"]:
            tail = tail[1:]
        elif tail[:1] == ["topicId"]:
            return out + ["id"]
        return out + tail[:1]
    return None


# ---------------------------------------------------------------------- records

_BROKER_ID = {"REGISTER_BROKER_RECORD": "brokerId", "UNREGISTER_BROKER_RECORD": "brokerId",
              "BROKER_REGISTRATION_CHANGE_RECORD": "brokerId",
              "FENCE_BROKER_RECORD": "id", "UNFENCE_BROKER_RECORD": "id"}
_CONTROLLER_ID = {"REGISTER_CONTROLLER_RECORD": "controllerId",
                  "UNREGISTER_CONTROLLER_RECORD": "controllerId"}


def record_paths(type_name: str, data: Any, image: MetadataImage, *,
                 show_secrets: bool = False) -> list[str]:
    """The node paths a metadata record touches, for the shell's ``changes PATH``.
    ``image`` is the image just before the record (a removal names what it removed) or
    after it (names that only the record carries are taken from the record).  Records that change no
    node (NoOp, transaction markers) touch none."""
    if not isinstance(data, dict):
        return []
    try:
        return _record_paths(type_name, data, image, show_secrets)
    except (KeyError, TypeError, ValueError, AttributeError):
        return []  # a malformed record: the image refused it, it touched nothing


def _topic_paths(image: MetadataImage, tid: str, name: str | None, tail: str = ""
                 ) -> list[str]:
    if name is None:
        t = image.topics.get(tid)
        name = t["name"] if t is not None else None
    out = [f"/image/topics/byId/{tid}{tail}"]
    if name is not None:
        out.append(f"/image/topics/byName/{name}{tail}")
    return out


def _record_paths(t: str, d: dict[str, Any], image: MetadataImage,
                  show_secrets: bool) -> list[str]:
    if t in _BROKER_ID:
        return [f"/image/cluster/brokers/{d[_BROKER_ID[t]]}"]
    if t in _CONTROLLER_ID:
        return [f"/image/cluster/controllers/{d[_CONTROLLER_ID[t]]}"]
    if t == "FEATURE_LEVEL_RECORD":
        name = d["name"]
        return ["/image/features/metadataVersion" if name == METADATA_VERSION
                else f"/image/features/finalized_{name}"]
    if t == "ZK_MIGRATION_STATE_RECORD":
        return ["/image/features/zkMigrationState"]
    if t == "TOPIC_RECORD":
        return _topic_paths(image, d["topicId"], d["name"])
    if t in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD"):
        return _topic_paths(image, d["topicId"], None, f"/{d.get('partitionId', -1)}")
    if t == "REMOVE_TOPIC_RECORD":
        out = _topic_paths(image, d["topicId"], None)
        topic = image.topics.get(d["topicId"])
        if topic is not None and (2, topic["name"]) in image.configs:
            out.append(f"/image/configs/{config_resource_name(2, topic['name'])}")
        return out
    if t == "CLEAR_ELR_RECORD":
        name = d.get("topicName")
        if not name:
            return ["/image/topics"]
        tid = image.topic_id(name)
        return _topic_paths(image, tid, name) if tid is not None else \
            [f"/image/topics/byName/{name}"]
    if t == "CONFIG_RECORD":
        return [f"/image/configs/{config_resource_name(d['resourceType'], d['resourceName'])}"
                f"/{d['name']}"]
    if t == "CLIENT_QUOTA_RECORD":
        entity = tuple(sorted((e["entityType"], e["entityName"]) for e in d["entity"]))
        return [f"/image/clientQuotas/{quota_entity_name(entity)}/{d['key']}"]
    if t == "PRODUCER_IDS_RECORD":
        return ["/image/producerIds/nextProducerId"]
    if t in ("ACCESS_CONTROL_ENTRY_RECORD", "REMOVE_ACCESS_CONTROL_ENTRY_RECORD"):
        return [f"/image/acls/byId/{d['id']}"]
    if t in ("USER_SCRAM_CREDENTIAL_RECORD", "REMOVE_USER_SCRAM_CREDENTIAL_RECORD"):
        mech = SCRAM_MECHANISMS.get(d["mechanism"], str(d["mechanism"]))
        return [f"/image/scram/{mech}/{d['name']}"]
    if t in ("DELEGATION_TOKEN_RECORD", "REMOVE_DELEGATION_TOKEN_RECORD"):
        name = d["tokenId"] if show_secrets else _fingerprint(d["tokenId"])
        return [f"/image/delegationToken/{name}"]
    return []
