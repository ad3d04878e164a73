"""The Kafka releases whose broker-start rules ``kmeta startup`` knows, and the rules that
differ between them (kept here, below the command line, so ``--help`` lists the versions
without importing the ops).

Facts (``apache/kafka``, read for behaviour only):

* ``num.recovery.threads.per.data.dir`` defaults to 1 in 3.5 to 3.9
  (``ServerLogConfigs.NUM_RECOVERY_THREADS_PER_DATA_DIR_DEFAULT``) and to 2 from 4.0
  (KIP-1030, apache/kafka PR #18106);
* ``-stray`` partition dir names are parsed from 3.6.1 (KAFKA-15605); 3.5 and 3.6.0
  refuse them (``LocalLog.parseTopicPartitionName``).

The 4.0 and 4.1 rules are read from trunk at 2024-10-25 (the source kmeta read holds no
4.x tag) plus the PRs named.
"""

from __future__ import annotations

#: The Kafka versions whose rules kmeta knows, oldest first; rules read from trunk at
#: 2024-10-25 stand for 4.0 and 4.1 (their tags are not in the source kmeta read).
KAFKA_VERSIONS = ("3.5", "3.6", "3.6.1", "3.7", "3.7.1", "3.8", "3.9", "4.0", "4.1")
NEWEST = KAFKA_VERSIONS[-1]

#: Bytes per second one recovery thread re-reads: 125 MB/s, the baseline throughput of an
#: AWS EBS gp3 volume (AWS's EBS volume types page), a cold sequential read from a common
#: broker disk.  CRC-32C runs at GB/s on one core (tests/bench), so the disk sets the
#: pace.  An assumption: measure the broker's disk and pass --recovery-rate.
DEFAULT_RECOVERY_RATE = 125_000_000


def version_key(version: str) -> tuple[int, ...]:
    """``"3.7.1"`` as ``(3, 7, 1)``, for comparing versions."""
    return tuple(int(p) for p in version.split("."))


def default_recovery_threads(version: str) -> int:
    """``num.recovery.threads.per.data.dir``'s default in ``version``."""
    return 2 if version_key(version) >= (4, 0) else 1


def knows_stray_dirs(version: str) -> bool:
    """Whether ``version`` parses ``-stray`` partition dir names (3.6.1+)."""
    return version_key(version) >= (3, 6, 1)
