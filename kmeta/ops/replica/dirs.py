"""Which directories may be compared as replicas of one log: the rule ``diff``, ``retention
--replica`` and ``consumers --against`` share (the last only for clusters).

Two directories are replicas of one log only if they are two directories (one given twice
compares a log with itself: it always agrees) and belong to one cluster (logs of two
clusters share no history, so any lag or divergence found between them would be an
accident of offsets).  A directory's cluster is the ``cluster.id`` of its data dir's
``meta.properties``; a directory without one is not refused for it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from kmeta.errors import UsageError
from kmeta.storage.discover import Discovery, meta_properties_at
from kmeta.storage.files import load_checked

__all__ = ["ReplicaDir", "node_and_cluster", "refuse_two_clusters", "refuse_unrelated",
           "replica_labels"]


class ReplicaDir(NamedTuple):
    """A directory to compare: how the user named it, where it is, and its cluster."""

    label: str
    path: str | os.PathLike[str]
    cluster_id: str | None


def node_and_cluster(found: Discovery, part: Path | None = None) -> tuple[int | None, str | None]:
    """The node id and cluster id of the data dir ``found`` was given (or, for a partition
    dir ``part`` given alone, of the directory holding it); None where unknown."""
    meta = next((d.meta_properties for d in found.data_dirs if d.meta_properties), None)
    if meta is None and part is not None:
        meta = meta_properties_at(part.parent)
    if meta is None:
        return None, None
    loaded, _ = load_checked(meta)
    if loaded is None:
        return None, None
    return loaded.node_id, loaded.cluster_id


def refuse_unrelated(dirs: Sequence[ReplicaDir], hint: str) -> None:
    """Raise a :class:`UsageError` (exit 2) when two of ``dirs`` are one directory or hold
    logs of two clusters."""
    seen: dict[str, str] = {}
    for d in dirs:
        real = os.path.realpath(d.path)
        if real in seen:
            raise UsageError(f"{seen[real]} and {d.label} are the same replica ({real})",
                             hint=hint)
        seen[real] = d.label
    refuse_two_clusters(dirs, hint)


def refuse_two_clusters(dirs: Sequence[ReplicaDir], hint: str) -> None:
    """Raise a :class:`UsageError` (exit 2) when ``dirs`` hold logs of two clusters (a
    directory may be given twice: a broker's offsets checked against its own log)."""
    clusters: dict[str, str] = {}
    for d in dirs:
        if d.cluster_id:
            clusters.setdefault(d.cluster_id, d.label)
    if len(clusters) > 1:
        raise UsageError("not replicas of one cluster: " + ", ".join(
            f"{label} has cluster id {cid}" for cid, label in clusters.items()), hint=hint)


def replica_labels(homes: Sequence[Path]) -> list[str]:
    """A short name for each replica, from the data dir that holds it: the dir's name,
    with the folder above it where two share a name (diverged/a, quorum3/a), then
    numbered if still alike.  ``report`` and ``shell`` name replicas so."""
    def name(home: Path, depth: int) -> str:
        return "/".join(home.parts[-depth:]) or str(home)

    names = [name(h, 1) for h in homes]
    if len(set(names)) < len(names):
        names = [name(h, 2) for h in homes]
    taken: set[str] = set()
    out = []
    for base in names:
        label, k = base, 2
        while label in taken:
            label, k = f"{base}#{k}", k + 1
        taken.add(label)
        out.append(label)
    return out
