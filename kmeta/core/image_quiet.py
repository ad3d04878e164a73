"""The image's quiet way: the PartitionChangeRecords and PartitionRecords a long log is
mostly made of, applied where they raise no problem and left to
:meth:`~kmeta.core.image.MetadataImage.apply` (which says what is wrong) otherwise.

The reference of the loop verify's replay process runs compiled
(:func:`kmeta.ops.replay.engine.apply_changes_py`, ``apply_changes`` in kmeta/formats/_runs.c):
the same image, record for record, as the full handlers build.
"""

from __future__ import annotations

from typing import Any

from kmeta.core.image import (
    _SIMPLE_CHANGE,
    NO_LEADER,
    NO_LEADER_CHANGE,
    MetadataImage,
    _default_to_migrating,
    _ints,
)


def apply_quiet(image: MetadataImage, type_name: str, d: Any) -> bool:
    """Apply a PartitionChangeRecord that :meth:`MetadataImage._partition_change_fast` takes, or a
    PartitionRecord, when it raises no problem (the topic and the partition exist, the
    leader is in the ISR and registered where the record elects it, the ISR within the
    replicas, no epoch going back, directories that match): True.  False for any
    other, the image untouched: :meth:`MetadataImage.apply` says what is wrong with it.  The
    reference of the loop of verify's replay process that the compiled core runs
    (kmeta.ops.replay.engine.apply_changes_py); ``d``: the record's fields."""
    if type_name == "PARTITION_RECORD":
        return _quiet_partition(image, d)
    if type_name != "PARTITION_CHANGE_RECORD" or type(d) is not dict or len(d) > 4 \
            or not d.keys() <= _SIMPLE_CHANGE:
        return False
    try:
        t = image.topics.get(d["topicId"])
        parts = None if t is None else t["partitions"]
        pid = d["partitionId"]
        old = None if parts is None else parts.get(pid)
        if type(old) is not dict:
            return False
        isr = d.get("isr")
        changed_isr = isr is not None
        if not changed_isr:
            isr = old["isr"]
        leader = d.get("leader", NO_LEADER_CHANGE)
        elected = leader != NO_LEADER_CHANGE
        if not elected:
            leader = old["leader"]
        replicas = old["replicas"]
        if not (_int_list(isr) and _int_list(replicas) and type(leader) is int) or \
                leader >= 0 and leader not in isr or \
                any(r not in replicas for r in isr) or \
                elected and leader >= 0 and leader not in image.brokers:
            return False
        p = old.copy()
        if changed_isr:
            p["isr"] = list(isr)
        if elected:
            p["leader"] = leader
            p["leaderEpoch"] = old["leaderEpoch"] + 1
        p["partitionEpoch"] = old["partitionEpoch"] + 1
    except (KeyError, TypeError):  # the full path's V119
        return False
    image.changed_partition = (old, p)
    parts[pid] = p
    return True

def _quiet_partition(image: MetadataImage, d: Any) -> bool:
    """:func:`apply_quiet` for a PartitionRecord: ``MetadataImage._partition`` where it raises
    no problem."""
    if type(d) is not dict:
        return False
    try:
        t = image.topics.get(d["topicId"])
        pid = d["partitionId"]
        replicas, isr = d["replicas"], d["isr"]
        dirs = d.get("directories")
        lrs = d.get("leaderRecoveryState", 0)
        leader = d.get("leader", NO_LEADER)
        epoch, partition_epoch = d.get("leaderEpoch", -1), d.get("partitionEpoch", -1)
        lists = [d.get(k) for k in ("removingReplicas", "addingReplicas",
                                    "eligibleLeaderReplicas", "lastKnownElr")]
        if t is None or not (_int_list(replicas) and _int_list(isr)) or \
                any(v is not None and type(v) is not list for v in lists) or \
                dirs is not None and type(dirs) is not list or \
                dirs and len(dirs) != len(replicas) or \
                type(lrs) is not int or lrs not in (0, 1) or \
                not all(type(v) is int for v in (leader, epoch, partition_epoch)):
            return False
        old = t["partitions"].get(pid)
        if old is not None and (type(old) is not dict or epoch < old["leaderEpoch"] or
                                partition_epoch < old["partitionEpoch"]):
            return False
        if leader >= 0 and (leader not in isr or leader not in image.brokers) or \
                any(r not in replicas for r in isr):
            return False
    except (KeyError, TypeError):  # the full path's V119
        return False
    removing, adding, elr, last_elr = lists
    t["partitions"][pid] = {
        "replicas": list(replicas),
        "isr": list(isr),
        "removingReplicas": _ints(removing),
        "addingReplicas": _ints(adding),
        "leader": leader,
        "leaderRecoveryState": lrs,
        "leaderEpoch": epoch,
        "partitionEpoch": partition_epoch,
        "directories": _default_to_migrating(list(dirs or ()), len(replicas)),
        "eligibleLeaderReplicas": _ints(elr),
        "lastKnownElr": _ints(last_elr),
    }
    return True


def _int_list(v: Any) -> bool:
    """A list of ints (no bools): what :func:`apply_quiet` compares."""
    return type(v) is list and all(type(x) is int for x in v)
