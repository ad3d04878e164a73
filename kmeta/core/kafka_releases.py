"""The Kafka releases whose broker-start rules ``kmeta startup`` knows, the rules that
differ between them, and which release's rules a broker's own dirs call for (kept here,
below the command line, so ``--help`` lists the versions without importing the ops).

Facts (``apache/kafka``, read for behaviour only):

* ``num.recovery.threads.per.data.dir`` defaults to 1 in 3.5 to 3.9
  (``ServerLogConfigs.NUM_RECOVERY_THREADS_PER_DATA_DIR_DEFAULT``) and to 2 from 4.0
  (KIP-1030, apache/kafka PR #18106);
* ``-stray`` partition dir names are parsed from 3.6.1 (KAFKA-15605); 3.5 and 3.6.0
  refuse them (``LocalLog.parseTopicPartitionName``);
* 4.0 removed ZooKeeper mode (KIP-500): 3.9 is the last release that starts a
  ZooKeeper-mode broker (``meta.properties`` version 0), 4.x starts only KRaft nodes.

The 4.0 and 4.1 rules are read from trunk at 2024-10-25 plus the PRs named.  4.2 and 4.3
were read from the release branches ``4.2`` (d26e852) and ``4.3`` (0157ac7) of
``confluentinc/kafka`` against ``4.1`` (dc25583), file by file: ``LogLoader.java``
(4.2: ``RecoveryOffsets`` became a record; 4.3: unchanged), ``LogManager.scala`` (a
cleaner factory, metrics, and in 4.3 cordoned log dirs, KIP-1066, which only steer where
new partitions go), ``LocalLog``/``LogSegment``/``ProducerStateManager``/``UnifiedLog``
(records for classes; ``parseTopicPartitionName`` drops a redundant empty-name test),
``ProducerAppendInfo`` (transaction version 2 checks marker epochs strictly, but the
rebuild on load appends as REPLICATION with version 0, the 4.1 rule),
``MetaPropertiesEnsemble`` (identical), ``KafkaRaftServer.initializeLogDirs``
(unchanged), the checkpoint files (messages only), ``BrokerMetadataPublisher`` (4.3
moves the missing-topic-id test of ``isStrayKraftReplica`` to its caller, same verdict),
and ``ServerLogConfigs`` (the thread default stays 2).  No rule ``kmeta startup`` follows
differs from 4.1's: 4.2 and 4.3 are listed so a dir that says it runs them is judged by
its own name.

A metadata.version feature level names the release that introduced it
(``MetadataVersion``: 26-27 are 4.1-IV0/IV1, 28-29 4.2-IV0/IV1, 30 4.3-IV0; read in the
same branches); a node whose log has finalized a level runs that release or a later one.
"""

from __future__ import annotations

import functools

from kmeta.core.versions import LEVEL_NAMES

#: The Kafka versions whose rules kmeta knows, oldest first; rules read from trunk at
#: 2024-10-25 stand for 4.0 and 4.1 (their tags are not in the source kmeta read); 4.2 and
#: 4.3 follow 4.1's (the module's docstring says what was compared).
KAFKA_VERSIONS = ("3.5", "3.6", "3.6.1", "3.7", "3.7.1", "3.8", "3.9", "4.0", "4.1", "4.2",
                  "4.3")
NEWEST = KAFKA_VERSIONS[-1]
#: The last release that runs a ZooKeeper-mode broker (4.0 removed ZooKeeper, KIP-500).
LAST_ZOOKEEPER = "3.9"

#: Bytes per second one recovery thread re-reads: 125 MB/s, the baseline throughput of an
#: AWS EBS gp3 volume (AWS's EBS volume types page), a cold sequential read from a common
#: broker disk.  CRC-32C runs at GB/s on one core (tests/bench), so the disk sets the
#: pace.  An assumption: measure the broker's disk and pass --recovery-rate.
DEFAULT_RECOVERY_RATE = 125_000_000


@functools.lru_cache(maxsize=256)
def version_key(version: str) -> tuple[int, ...]:
    """``"3.7.1"`` as ``(3, 7, 1)``, for comparing versions."""
    return tuple(int(p) for p in version.split("."))


def default_recovery_threads(version: str) -> int:
    """``num.recovery.threads.per.data.dir``'s default in ``version``."""
    return 2 if version_key(version) >= (4, 0) else 1


def knows_stray_dirs(version: str) -> bool:
    """Whether ``version`` parses ``-stray`` partition dir names (3.6.1+)."""
    return version_key(version) >= (3, 6, 1)


def runs_zookeeper(version: str) -> bool:
    """Whether ``version`` can start a ZooKeeper-mode broker (up to 3.9)."""
    return version_key(version) < (4, 0)


def release_of_level(level: int | None) -> tuple[str, str]:
    """The release whose rules apply to a node whose metadata log finalized ``level``
    (None: no FeatureLevelRecord), and why, in words: the newest patch kmeta knows of the
    release that introduced the level (operators run patch releases: 3.7 is 3.7.1's
    rules), the oldest kmeta knows for a level older than it, the newest for one newer."""
    oldest = KAFKA_VERSIONS[0]
    if level is None:
        return oldest, ("no metadata.version in its log (before 3.3): the oldest kmeta "
                        "knows")
    name = LEVEL_NAMES.get(level)
    said = f"the log's metadata.version {level}" + (f", {name}" if name else "")
    release = None if name is None else version_key(name.split("-", 1)[0])
    same = [v for v in KAFKA_VERSIONS if version_key(v)[:2] == release]
    if same:
        return same[-1], said
    if level > max(LEVEL_NAMES) or release is not None and release > version_key(NEWEST):
        return NEWEST, f"{said}: newer than any kmeta knows"
    return oldest, f"{said}: the oldest kmeta knows"
