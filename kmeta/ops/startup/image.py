"""The image's side of ``kmeta startup``: the placement of a broker's logs against its own
metadata image (:mod:`kmeta.ops.placement`, the one home of the stray rule, which
``verify`` runs too) as the :data:`~kmeta.ops.startup.model.PlacementJudge` the loader
asks about each log, and the broker-wide rest (missing replicas, log dirs that disagree)
as findings and objects of the report."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from kmeta.core import placement as P
from kmeta.core.kafka_releases import version_key
from kmeta.findings import Finding
from kmeta.ops.placement import BrokerPlacement, broker_placement
from kmeta.ops.startup.model import LogView, Placement, PlacementJudge, StartupReport
from kmeta.storage.discover import DataDir
from kmeta.storage.progress import QUIET, Progress

__all__ = ["image_judge", "with_broker_findings"]

#: Codes the loader says itself, from the dir's name (-stray, -delete, -future), from
#: the dirs it loads (one partition in two) or from their meta.properties (the refusals
#: of kmeta.core.meta_ensemble): the placement's own would say them twice.
_LOADER_SAYS = frozenset({"V184", "V185", "V187", "V194", "V195", "V196", "V197"})

#: Verdicts that set the log aside (the loader then reports their fate, not a load).
_SET_ASIDE = frozenset({P.STRAY, P.REPLACED})

#: The reason of a stray verdict, in words.
_WHY = {
    P.NO_TOPIC_ID: "no topic id (partition.metadata missing or unreadable)",
    P.TOPIC_DELETED: "its topic id is not in the image (the metadata log removed the topic)",
    P.NO_SUCH_PARTITION: "the image's topic of this id has no partition of this number",
    P.NOT_IN_IMAGE: "its topic id is in neither the image nor its metadata log's history",
    P.TOPIC_ID_DIFFERS: "the image's topic of this name has another id (re-created)",
    P.NOT_A_REPLICA: "the image's replicas of the partition leave this node out",
}


def _bound(text: str, upper: bool) -> tuple[int, int, int]:
    """A release named in a range: ``3.6`` is every 3.6.x (its upper bound the last)."""
    parts = [int(p) for p in text.split(".")]
    if len(parts) == 2:
        parts.append(99 if upper else 0)
    return parts[0], parts[1], parts[2]


def kafka_does(kafka: Mapping[str, str], version: str) -> str | None:
    """What release ``version`` (``3.7`` meaning its newest patch) does, from a verdict's
    ``{"3.5-3.6": …, "3.7.0": …, "3.7.1+": …}``; None when no range holds it."""
    key = version_key(version)
    v = (key[0], key[1], key[2] if len(key) > 2 else 99)
    for span, does in kafka.items():
        if span.endswith("+"):
            if v >= _bound(span[:-1], upper=False):
                return does
        elif "-" in span:
            lo, hi = span.split("-", 1)
            if _bound(lo, upper=False) <= v <= _bound(hi, upper=True):
                return does
        elif _bound(span, upper=False) <= v <= _bound(span, upper=True):
            return does
    return None


class _Real:
    """os.path.realpath, its parent dirs resolved once: a broker's thousands of partition
    dirs share one log dir, and a realpath is a stat per part of the path."""

    def __init__(self) -> None:
        #: a parent dir as given -> its real path and the names of the links in it (one
        #: listing: a partition dir's own lstat, thousands of times, cost more), None
        #: where it cannot be listed
        self._dirs: dict[str, tuple[str, frozenset[str]] | None] = {}
        self._seen: dict[str | os.PathLike[str], str] = {}

    def __call__(self, path: str | os.PathLike[str]) -> str:
        real = self._seen.get(path)
        if real is None:
            real = self._seen[path] = self._resolve(path)
        return real

    def _resolve(self, path: str | os.PathLike[str]) -> str:
        text = os.fspath(path)
        parent, name = os.path.split(text)
        if name not in ("", ".", ".."):
            if parent not in self._dirs:
                self._dirs[parent] = self._parent(parent)
            known = self._dirs[parent]
            if known is not None and name not in known[1]:
                return os.path.join(known[0], name)
        return os.path.realpath(os.path.abspath(text))

    @staticmethod
    def _parent(parent: str) -> tuple[str, frozenset[str]] | None:
        """A dir's real path and the names of the links in it; None where it cannot be
        listed (each path in it is then resolved whole)."""
        where = os.path.abspath(parent or os.curdir)
        try:
            with os.scandir(where) as it:
                links = frozenset(e.name for e in it if e.is_symlink())
        except OSError:
            return None
        return os.path.realpath(where), links


def image_judge(log_dirs: Sequence[str | os.PathLike[str]], *,
                metadata: str | os.PathLike[str] | None = None,
                peers: Sequence[str | os.PathLike[str]] = (), image: Any = None,
                data_dirs: Sequence[DataDir] | None = None, progress: Progress = QUIET
                ) -> tuple[PlacementJudge | None, BrokerPlacement | None]:
    """The judge of each log of the broker whose log dirs are ``log_dirs`` (its image
    from its own metadata log, or ``metadata``), and the whole placement; (None, None)
    for a ZooKeeper-mode broker, which has no image.  ``image``: that image, and
    ``data_dirs``: those log dirs as discovered, where the caller already replayed and
    discovered them (kmeta report: verify's)."""
    placed = broker_placement(log_dirs, metadata=metadata, peers=peers, image=image,
                              data_dirs=data_dirs, progress=progress)
    if placed is None or placed.placement is None:
        return None, placed
    real = _Real()
    verdicts = {real(v.log.path): v for v in placed.placement.verdicts}
    by_file: dict[str, list[Finding]] = {}
    for f in placed.findings:
        if f.file is not None and f.code not in _LOADER_SAYS:
            by_file.setdefault(real(f.file), []).append(f)

    def judge(view: LogView) -> Placement | None:
        where = real(view.path)
        v = verdicts.get(where)
        if v is None:
            return None
        does = kafka_does(v.kafka, view.kafka_version) or "loaded as it is"
        why = _WHY.get(v.reason or "", v.verdict.replace("_", " "))
        return Placement(v.verdict in _SET_ASIDE, why, does, tuple(by_file.get(where, ())))

    return judge, placed


def with_broker_findings(report: StartupReport, placed: BrokerPlacement | None) -> list[
        dict[str, Any]]:
    """Add to ``report`` what the placement says of the broker as a whole (replicas missing
    on disk, log dirs that disagree, checks not run) and return its JSON objects."""
    if placed is None:
        return []
    named = {str(p.path) for p in report.partitions}
    real = _Real()
    judged: set[str] | None = None  # by real path: made only for a file named otherwise
    for f in placed.findings:
        if f.code in _LOADER_SAYS or f.file in named:
            continue
        if f.file is not None:
            if judged is None:
                judged = {real(p.path) for p in report.partitions}
            if real(f.file) in judged:
                continue
        report.findings.append(f)
    report.notes.extend(placed.not_run)
    return placed.json_objects()
