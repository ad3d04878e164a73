"""The metadata records that rebuild an image: what a KRaft controller writes in a snapshot.

Facts from Kafka (``metadata/.../image/MetadataImage.write`` and the ``write`` of each
``*Image``, ``BrokerRegistration.toRecord``, ``ControllerRegistration.toRecord``,
``PartitionRegistration.toRecord``, ``server-common/.../MetadataVersion``), read for
behaviour only:

* Sections come in this order: features (the ``metadata.version`` FeatureLevelRecord v0
  first, since it decides how the rest is read, then the other features), the ZK
  migration state, brokers, controllers, each topic followed by its partitions, configs,
  client quotas, producer ids, ACLs, SCRAM credentials, delegation tokens.
* Inside a section Kafka walks hash maps, so its order carries no meaning; kmeta sorts
  (by id, name or partition) so that one image always gives the same bytes.
* Record versions are the ones Kafka's ``MetadataVersion`` picks for the image's
  ``metadata.version`` (``registerBrokerRecordVersion``, ``partitionRecordVersion``).

Where Kafka would drop what its ``metadata.version`` cannot express (its ``handleLoss``:
ELR below 4.0-IV1, log dirs below 3.7-IV2, SCRAM below 3.5-IV2 …), kmeta keeps it: the
record version is raised to one that can carry the field, or the record is written
anyway.  Such an image can only come from a log that already held those records, and
the point of these records is that replaying them gives back the very same image
(equal :meth:`~kmeta.core.image.MetadataImage.digest`).  Callers that care can compare
:func:`kmeta.core.versions.required_level` of each record with the image's level.

Pure: an image in, records out.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kmeta.core.image import METADATA_VERSION, MIGRATING_DIR, MetadataImage
from kmeta.core.versions import MINIMUM_KRAFT_LEVEL, written_version
from kmeta.formats.metadata_schemas import PARTITION, REGISTER_BROKER, SENSITIVE_CONFIG

__all__ = [
    "ImageNotWritable",
    "ImageRecord",
    "image_records",
]

# The first version of a record that can carry a piece of state (schema facts).
_SHUTDOWN_SINCE = REGISTER_BROKER.since("inControlledShutdown")
_ZK_BROKER_SINCE = REGISTER_BROKER.since("isMigratingZkBroker")
_LOG_DIRS_SINCE = REGISTER_BROKER.since("logDirs")
_CORDONED_SINCE = REGISTER_BROKER.since("cordonedLogDirs")
_DIRECTORIES_SINCE = PARTITION.since("directories")
_ELR_SINCE = max(PARTITION.since("eligibleLeaderReplicas"), PARTITION.since("lastKnownElr"))


class ImageRecord(NamedTuple):
    """One metadata record: ``MetadataImage.apply(*record)`` replays it."""

    type: str
    version: int
    data: dict[str, Any]


class ImageNotWritable(ValueError):
    """The image cannot be written as records (mid-transaction, or a secret it no longer
    holds in the clear)."""


def image_records(image: MetadataImage) -> list[ImageRecord]:
    """The records that rebuild ``image`` from an empty one, in Kafka's snapshot order."""
    if image.in_transaction:
        raise ImageNotWritable("the image is inside a metadata transaction: its pending "
                               "records are neither applied nor dropped yet")
    level = image.metadata_version or MINIMUM_KRAFT_LEVEL
    out: list[ImageRecord] = []
    _features(image, out)
    _cluster(image, level, out)
    _topics(image, level, out)
    _configs(image, out)
    _client_quotas(image, out)
    _producer_ids(image, out)
    _acls(image, out)
    _scram(image, out)
    _delegation_tokens(image, out)
    return out


def _secret(image: MetadataImage, fingerprint: str, what: str) -> Any:
    try:
        return image.secrets[fingerprint]
    except KeyError:
        raise ImageNotWritable(f"{what} is known only by its fingerprint {fingerprint}; "
                               "the image was not built by replaying records") from None


def _features(image: MetadataImage, out: list[ImageRecord]) -> None:
    mv = image.metadata_version
    if mv is not None:
        # Version 0 always (Kafka's rule): any reader must be able to read this one.
        out.append(ImageRecord("FEATURE_LEVEL_RECORD", 0,
                               {"name": METADATA_VERSION, "featureLevel": mv}))
    for name in sorted(image.features):
        if name != METADATA_VERSION:
            out.append(ImageRecord("FEATURE_LEVEL_RECORD", 0,
                                   {"name": name, "featureLevel": image.features[name]}))
    # Kafka writes the state (NONE when no record ever set it) from 3.4-IV0 on.  kmeta's
    # image tells "never set" (None) from NONE, and a NONE record would change its digest,
    # so the record is written only when the image holds a state.  Kafka reads its absence
    # as NONE.
    if image.zk_migration_state is not None:
        out.append(ImageRecord("ZK_MIGRATION_STATE_RECORD", 0,
                               {"zkMigrationState": image.zk_migration_state}))


def _endpoints(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [dict(e) for e in items]


def _supported(features: dict[str, list[int]]) -> list[dict[str, Any]]:
    return [{"name": name, "minSupportedVersion": lo, "maxSupportedVersion": hi}
            for name, (lo, hi) in sorted(features.items())]


def _cluster(image: MetadataImage, level: int, out: list[ImageRecord]) -> None:
    base = written_version("REGISTER_BROKER_RECORD", level) or 0
    for bid in sorted(image.brokers):
        b = image.brokers[bid]
        # Raised past the metadata.version's own choice only for state that a lower
        # version cannot carry (see the module docstring).
        version = base
        if b["inControlledShutdown"]:
            version = max(version, _SHUTDOWN_SINCE)
        if b["isMigratingZkBroker"]:
            version = max(version, _ZK_BROKER_SINCE)
        if b["logDirs"]:
            version = max(version, _LOG_DIRS_SINCE)
        if b["cordonedLogDirs"]:
            version = max(version, _CORDONED_SINCE)
        out.append(ImageRecord("REGISTER_BROKER_RECORD", version, {
            "brokerId": bid,
            "isMigratingZkBroker": b["isMigratingZkBroker"],
            "incarnationId": b["incarnationId"],
            "brokerEpoch": b["epoch"],
            "endPoints": _endpoints(b["endPoints"]),
            "features": _supported(b["features"]),
            "rack": b["rack"],
            "fenced": b["fenced"],
            "inControlledShutdown": b["inControlledShutdown"],
            "logDirs": list(b["logDirs"]),
            "cordonedLogDirs": list(b["cordonedLogDirs"]),
        }))
    # Kafka writes controllers only from 3.7-IV0 on; a kmeta image holds some only when
    # the log registered them.  RegisterControllerRecord has one version.
    for cid in sorted(image.controllers):
        c = image.controllers[cid]
        out.append(ImageRecord("REGISTER_CONTROLLER_RECORD", 0, {
            "controllerId": cid,
            "incarnationId": c["incarnationId"],
            "zkMigrationReady": c["zkMigrationReady"],
            "endPoints": _endpoints(c["endPoints"]),
            "features": _supported(c["features"]),
        }))


def _topics(image: MetadataImage, level: int, out: list[ImageRecord]) -> None:
    base = written_version("PARTITION_RECORD", level) or 0
    topics = image.topics
    for tid in sorted(topics, key=lambda i: (topics[i]["name"], i)):
        t = topics[tid]
        out.append(ImageRecord("TOPIC_RECORD", 0, {"name": t["name"], "topicId": tid}))
        for pid in sorted(t["partitions"]):
            p = t["partitions"][pid]
            version = base
            if any(d != MIGRATING_DIR for d in p["directories"]):
                version = max(version, _DIRECTORIES_SINCE)
            if p["eligibleLeaderReplicas"] or p["lastKnownElr"]:
                version = max(version, _ELR_SINCE)
            data: dict[str, Any] = {
                "partitionId": pid,
                "topicId": tid,
                "replicas": list(p["replicas"]),
                "isr": list(p["isr"]),
                "removingReplicas": list(p["removingReplicas"]),
                "addingReplicas": list(p["addingReplicas"]),
                "leader": p["leader"],
                "leaderRecoveryState": p["leaderRecoveryState"],
                "leaderEpoch": p["leaderEpoch"],
                "partitionEpoch": p["partitionEpoch"],
                # Below v1 there is no field: replay gives MIGRATING per replica, which is
                # all such an image can hold (checked above).
                "directories": list(p["directories"]),
            }
            # Tagged and null by default: like Kafka, set only when not empty.
            if p["eligibleLeaderReplicas"]:
                data["eligibleLeaderReplicas"] = list(p["eligibleLeaderReplicas"])
            if p["lastKnownElr"]:
                data["lastKnownElr"] = list(p["lastKnownElr"])
            out.append(ImageRecord("PARTITION_RECORD", version, data))


def _configs(image: MetadataImage, out: list[ImageRecord]) -> None:
    for rtype, rname in sorted(image.configs):
        entries = image.configs[(rtype, rname)]
        for name in sorted(entries):
            value = entries[name]
            if SENSITIVE_CONFIG.search(name):
                value = _secret(image, value, f"config {name!r} of {rname!r}")
            out.append(ImageRecord("CONFIG_RECORD", 0, {
                "resourceType": rtype, "resourceName": rname, "name": name, "value": value}))


def _client_quotas(image: MetadataImage, out: list[ImageRecord]) -> None:
    def key(entity: tuple[tuple[str, str | None], ...]) -> tuple:
        return tuple((t, n is not None, n or "") for t, n in entity)

    for entity in sorted(image.client_quotas, key=key):
        quotas = image.client_quotas[entity]
        for name in sorted(quotas):
            out.append(ImageRecord("CLIENT_QUOTA_RECORD", 0, {
                "entity": [{"entityType": t, "entityName": n} for t, n in entity],
                "key": name, "value": quotas[name], "remove": False}))


def _producer_ids(image: MetadataImage, out: list[ImageRecord]) -> None:
    # Kafka skips a negative next id (its empty image holds -1); kmeta's empty image holds
    # None, so any id it holds is written back.  Broker id and epoch are not kept by the
    # image: -1 and -1, as Kafka's own snapshots write them.
    if image.next_producer_id is not None:
        out.append(ImageRecord("PRODUCER_IDS_RECORD", 0, {
            "brokerId": -1, "brokerEpoch": -1, "nextProducerId": image.next_producer_id}))


def _acls(image: MetadataImage, out: list[ImageRecord]) -> None:
    for acl_id in sorted(image.acls):
        out.append(ImageRecord("ACCESS_CONTROL_ENTRY_RECORD", 0,
                               {"id": acl_id, **image.acls[acl_id]}))


def _scram(image: MetadataImage, out: list[ImageRecord]) -> None:
    # Kafka's order: by mechanism, then by user.
    for name, mechanism in sorted(image.scram, key=lambda k: (k[1], k[0])):
        cred = image.scram[(name, mechanism)]
        salt, stored_key, server_key = _secret(
            image, cred["credential"], f"the SCRAM credential of {name!r}")
        out.append(ImageRecord("USER_SCRAM_CREDENTIAL_RECORD", 0, {
            "name": name, "mechanism": mechanism, "salt": salt, "storedKey": stored_key,
            "serverKey": server_key, "iterations": cred["iterations"]}))


def _delegation_tokens(image: MetadataImage, out: list[ImageRecord]) -> None:
    tokens = [(_secret(image, fp, "a delegation token id"), image.delegation_tokens[fp])
              for fp in image.delegation_tokens]
    for token_id, t in sorted(tokens, key=lambda x: x[0]):
        out.append(ImageRecord("DELEGATION_TOKEN_RECORD", 0, {
            "owner": t["owner"], "requester": t["requester"], "renewers": list(t["renewers"]),
            "issueTimestamp": t["issueTimestamp"], "maxTimestamp": t["maxTimestamp"],
            "expirationTimestamp": t["expirationTimestamp"], "tokenId": token_id}))
