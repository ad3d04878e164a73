"""The few log configs that change how Kafka loads a log, resolved per topic as Kafka
resolves them: the topic's own config (ConfigRecords of resource TOPIC in the metadata
image), then the broker's dynamic config (resource BROKER: this node's, then the cluster
default), then server.properties (``--config``), then Kafka's default.

Kafka facts (``apache/kafka``, read for behaviour only):

* ``UnifiedLog.isRemoteLogEnabled`` (3.6.0 to trunk 2024-10): remote storage is on for a
  log when the broker's ``remote.log.storage.system.enable`` is true, the topic's
  ``remote.storage.enable`` is true, its ``cleanup.policy`` does not hold ``compact``, and
  it is not an internal topic (``__consumer_offsets``, ``__transaction_state``,
  ``__share_group_state``), ``__remote_log_metadata`` or ``__cluster_metadata``.  Then
  ``LogLoader.load`` takes the log start checkpoint as it is (3.6+); 3.5 has no branch.
* ``index.interval.bytes`` (broker ``log.index.interval.bytes``, default 4096): the bytes
  between offset index entries ``LogSegment.recover`` rebuilds.
* ``message.format.version`` below 0.11.0 (record format v0/v1) makes
  ``UnifiedLog.maybeCreateLeaderEpochCache`` delete ``leader-epoch-checkpoint``, but only
  while ``inter.broker.protocol.version`` is below 3.0-IV1 (``LogConfig.
  shouldIgnoreMessageFormatVersion``): a ZooKeeper-mode broker of 3.5 to 3.9 in a rolling
  upgrade.  KRaft brokers (metadata version 3.0-IV1 and later) and Kafka 4.0 (KIP-724)
  always keep the cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kmeta.core.kafka_releases import version_key

__all__ = ["LogConfigs", "TopicLoadConfig", "log_configs"]

DEFAULT_INDEX_INTERVAL = 4096
_NOT_REMOTE = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state",
                         "__remote_log_metadata", "__cluster_metadata"})


@dataclass(frozen=True)
class TopicLoadConfig:
    """What one topic's log config says of loading."""

    #: remote storage on (the log start is the checkpoint's); None when it cannot be told
    remote_storage: bool | None
    #: why, in words
    remote_why: str
    index_interval: int
    #: why the leader-epoch cache is deleted on load (a format without epochs), else None
    epochs_cleared: str | None = None


def _bool(text: str | None) -> bool | None:
    if text is None:
        return None
    low = text.strip().lower()
    return True if low == "true" else False if low == "false" else None


def _int(text: str | None) -> int | None:
    try:
        return None if text is None else int(text.strip())
    except ValueError:
        return None


def _version(text: str | None) -> tuple[int, ...] | None:
    """``0.10.2-IV0`` or ``2.8`` as ``(0, 10, 2)``, ``(2, 8)``; None when unparsable."""
    if not text:
        return None
    head = text.strip().split("-", 1)[0]
    try:
        return tuple(int(p) for p in head.split("."))
    except ValueError:
        return None


class LogConfigs:
    """The configs of every topic of one broker (``topics``: the image's TOPIC configs,
    None without an image; ``broker``: its dynamic BROKER configs, this node's over the
    cluster default; ``server``: server.properties, None without ``--config``)."""

    def __init__(self, version: str, *, topics: Mapping[str, Mapping[str, str]] | None,
                 broker: Mapping[str, str] | None = None,
                 server: Mapping[str, str] | None = None) -> None:
        self.version = version
        self.topics = topics
        self.broker = dict(broker or {})
        self.server = server

    def _broker_value(self, key: str) -> str | None:
        if key in self.broker:
            return self.broker[key]
        return None if self.server is None else self.server.get(key)

    def _value(self, topic: str, key: str, broker_key: str | None) -> str | None:
        own = (self.topics or {}).get(topic, {})
        if key in own:
            return own[key]
        return None if broker_key is None else self._broker_value(broker_key)

    def for_topic(self, topic: str) -> TopicLoadConfig:
        interval = _int(self._value(topic, "index.interval.bytes", "log.index.interval.bytes"))
        return TopicLoadConfig(*self._remote(topic),
                               interval if interval is not None and interval >= 0
                               else DEFAULT_INDEX_INTERVAL, self._cleared(topic))

    def _remote(self, topic: str) -> tuple[bool | None, str]:
        if version_key(self.version) < (3, 6):
            return False, f"Kafka {self.version}: the log start is max(checkpoint, first " \
                "segment base)"
        if topic in _NOT_REMOTE:
            return False, f"{topic} never uses remote storage"
        if self.topics is None:
            return None, "remote storage not judged (no metadata image): max(checkpoint, " \
                "first segment base) assumed"
        if not _bool(self._value(topic, "remote.storage.enable", None)):
            return False, "remote.storage.enable is off"
        policy = self._value(topic, "cleanup.policy", "log.cleanup.policy") or "delete"
        if "compact" in [p.strip().lower() for p in policy.split(",")]:
            return False, "remote.storage.enable is on, but the topic is compacted"
        system = None if self.server is None else _bool(
            self.server.get("remote.log.storage.system.enable"))
        if self.server is not None and not system:
            return False, "remote.storage.enable is on, but the broker's " \
                "remote.log.storage.system.enable is off"
        how = "" if self.server is not None else \
            " (remote.log.storage.system.enable assumed on: no --config)"
        return True, "remote storage on: the log start is the checkpoint's" + how

    def _cleared(self, topic: str) -> str | None:
        if version_key(self.version) >= (4, 0):
            return None
        ibp = _version(self._broker_value("inter.broker.protocol.version"))
        if ibp is None or ibp >= (3, 0):
            return None
        fmt = _version(self._value(topic, "message.format.version",
                                   "log.message.format.version"))
        if fmt is None or fmt >= (0, 11):
            return None
        shown = ".".join(map(str, fmt))
        return (f"message format {shown} (inter.broker.protocol.version "
                f"{'.'.join(map(str, ibp))}): record format before v2 has no leader epochs")


def log_configs(version: str, *, image: object | None, node_id: int | None,
                server: Mapping[str, str] | None) -> LogConfigs:
    """The broker's :class:`LogConfigs` from its metadata image (None: none) and its
    server.properties (None: not given)."""
    if image is None:
        return LogConfigs(version, topics=None, server=server)
    configs: Mapping[tuple[int, str], Mapping[str, str]] = getattr(image, "configs", {})
    topics = {name: dict(v) for (rtype, name), v in configs.items() if rtype == 2}
    broker = dict(configs.get((4, ""), {}))
    if node_id is not None:
        broker.update(configs.get((4, str(node_id)), {}))
    return LogConfigs(version, topics=topics, broker=broker, server=server)
