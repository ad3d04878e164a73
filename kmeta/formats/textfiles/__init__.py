"""The small text files of a Kafka log directory: parse them, and render them back.

Spec (read for facts, in ``apache/kafka``):

* ``server-common/.../CheckpointFile.java`` with ``storage/.../checkpoint/
  LeaderEpochCheckpointFile.java`` and ``OffsetCheckpointFile.java``: a version line
  (always ``0``), an entry-count line, then one entry a line — ``epoch startOffset`` for
  ``leader-epoch-checkpoint``; ``topic partition offset`` for
  ``recovery-point-offset-checkpoint``, ``replication-offset-checkpoint``,
  ``log-start-offset-checkpoint`` and ``cleaner-offset-checkpoint``.  Fields are split on
  runs of Java whitespace.  A zero-length file (Kafka creates the file before it first
  writes it) and a file holding only the version line both read as "no entries".
* ``raft/.../FileQuorumStateStore.java`` and ``raft/src/main/resources/common/message/
  QuorumStateData.json``: ``quorum-state`` is one line of compact JSON, the
  ``QuorumStateData`` fields of ``data_version`` 0 (``clusterId``, ``leaderId``,
  ``leaderEpoch``, ``votedId``, ``appliedOffset``, ``currentVoters``) or 1 (``leaderId``,
  ``leaderEpoch``, ``votedId``, ``votedDirectoryId``), then ``data_version``.
* ``storage/.../checkpoint/PartitionMetadataFile.java``: ``partition.metadata`` is
  ``version: 0`` and ``topic_id: <uuid>``, with no final newline.
* ``metadata/.../properties/MetaProperties*.java`` and ``PropertiesUtils.java``:
  ``meta.properties`` is a ``java.util.Properties`` file.  Version 0 (the default when
  ``version`` is missing) may carry ``broker.id``; version 1 must carry ``cluster.id`` and
  ``node.id``; either may carry ``directory.id``.  Kafka writes it with
  ``Properties.store``: an empty comment line, a date comment, then ``key=value`` lines in
  the iteration order of the JDK's hash table, which this module reproduces.  Kafka
  writes the file as UTF-8 but ``Properties.load(InputStream)`` reads it as ISO-8859-1;
  kmeta reads it the way Kafka does (so every byte survives a round trip) and writes a
  character beyond Latin-1 as a ``\\uXXXX`` escape.

Every ``parse_*`` takes bytes and returns a frozen dataclass with ``to_json()``; every
``build_*`` renders that dataclass to the bytes Kafka itself would write, so
``build_x(parse_x(data)) == data`` for any file Kafka wrote and
``parse_x(build_x(value)) == value`` for any value.  Malformed content raises
:class:`~kmeta.errors.FormatError` with the byte position (and the line number in the
message); no other exception escapes a parser.
"""

from __future__ import annotations

from kmeta.formats.textfiles.checkpoints import (
    EpochEntry,
    LeaderEpochCheckpoint,
    OffsetCheckpoint,
    TopicPartitionOffset,
    build_leader_epoch_checkpoint,
    build_offset_checkpoint,
    parse_leader_epoch_checkpoint,
    parse_offset_checkpoint,
)
from kmeta.formats.textfiles.clean_shutdown import (
    CleanShutdown,
    parse_clean_shutdown,
)
from kmeta.formats.textfiles.javatext import (
    CHECKPOINT_VERSION,
    OFFSET_CHECKPOINT_FILES,
)
from kmeta.formats.textfiles.partition_metadata import (
    METADATA_TOPIC_ID,
    PartitionMetadata,
    build_partition_metadata,
    parse_partition_metadata,
)
from kmeta.formats.textfiles.properties import (
    MetaProperties,
    build_meta_properties,
    java_properties_order,
    parse_meta_properties,
    parse_properties,
)
from kmeta.formats.textfiles.quorum_state import (
    QUORUM_STATE_FIELDS,
    QuorumState,
    build_quorum_state,
    parse_quorum_state,
)

__all__ = [
    "CHECKPOINT_VERSION",
    "CleanShutdown",
    "EpochEntry",
    "LeaderEpochCheckpoint",
    "METADATA_TOPIC_ID",
    "MetaProperties",
    "OFFSET_CHECKPOINT_FILES",
    "OffsetCheckpoint",
    "PartitionMetadata",
    "QUORUM_STATE_FIELDS",
    "QuorumState",
    "TopicPartitionOffset",
    "build_leader_epoch_checkpoint",
    "build_meta_properties",
    "build_offset_checkpoint",
    "build_partition_metadata",
    "build_quorum_state",
    "java_properties_order",
    "parse_clean_shutdown",
    "parse_leader_epoch_checkpoint",
    "parse_meta_properties",
    "parse_offset_checkpoint",
    "parse_partition_metadata",
    "parse_properties",
    "parse_quorum_state",
]
