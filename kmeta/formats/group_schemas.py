"""The records of ``__consumer_offsets``, in kmeta's schema language: the classic group
coordinator's offset commits and group metadata, and the new group coordinator's records
of consumer groups (KIP-848), share groups (KIP-932) and streams groups (KIP-1071).

A record's key starts with an int16 that says its type (Kafka's ``CoordinatorRecordType``
id, the "apiKey" of the ``coordinator-key`` schema files); its value starts with an int16
version of the value's schema.  Keys 0 and 1 are both offset commits (0 was written by
Kafka before 0.9 with value version 0), key 2 is group metadata.  Each key schema is
declared here at the version equal to its type id, so one table reads them all.

Facts from Kafka's schema files under ``group-coordinator/src/main/resources/common/
message/``: the classic records at apache/kafka 1eb7644 (Oct 2024), the new coordinator's
at its 4.1.0-SNAPSHOT of late December 2024 (the first with the streams group records),
updated with the later versions of four value schemas found in Kafka's history:
``ConsumerGroupMetadataValue`` (tagged ``MetadataHash``, 4.1), ``ShareGroupMetadataValue``
(``MetadataHash``), ``ShareGroupStatePartitionMetadataValue`` (``InitializingTopics``,
``CreateTimestamp``) and ``StreamsGroupMetadataValue`` (``MetadataHash``, tagged
``ValidatedTopologyEpoch``, ``AssignmentConfigs``).  Share and streams groups were previews
whose records Kafka changed in place at version 0: a record written by a preview release
that no longer matches is reported (F012) with its bytes, never guessed at.
"""

from __future__ import annotations

from kmeta.formats.schema import F, M, Message

__all__ = ["OFFSETS_KEYS"]

OFFSET_COMMIT_KEY = M(
    "OffsetCommitKey", None, "0-1", "none",
    F("Group", "string"),
    F("Topic", "string"),
    F("Partition", "int32"),
)

OFFSET_COMMIT_VALUE = M(
    "OffsetCommitValue", None, "0-4", "4+",
    F("Offset", "int64"),
    F("LeaderEpoch", "int32", "3+", default="-1"),
    F("Metadata", "string"),
    F("CommitTimestamp", "int64"),
    F("ExpireTimestamp", "int64", "1", default="-1"),
)

GROUP_METADATA_KEY = M(
    "GroupMetadataKey", None, "2", "none",
    F("Group", "string", "2"),
)

GROUP_METADATA_VALUE = M(
    "GroupMetadataValue", None, "0-4", "4+",
    F("ProtocolType", "string"),
    F("Generation", "int32"),
    F("Protocol", "string", nullable="0+"),
    F("Leader", "string", nullable="0+"),
    F("CurrentStateTimestamp", "int64", "2+", default="-1"),
    F("Members", "[]MemberMetadata", fields=(
        F("MemberId", "string"),
        F("GroupInstanceId", "string", "3+", default="null", nullable="3+"),
        F("ClientId", "string"),
        F("ClientHost", "string"),
        F("RebalanceTimeout", "int32", "1+", default="-1"),
        F("SessionTimeout", "int32"),
        F("Subscription", "bytes"),
        F("Assignment", "bytes"),
    )),
)


# ---------------------------------------------------------------- the new group coordinator

_TOPIC_PARTITIONS_INFO = (
    F("TopicId", "uuid"),
    F("TopicName", "string"),
    F("Partitions", "[]int32"),
    F("CreateTimestamp", "int64"),
)

CONSUMER_GROUP_METADATA_KEY = M(
    "ConsumerGroupMetadataKey", None, "3", "none",
    F("GroupId", "string", "3"),
)


CONSUMER_GROUP_METADATA_VALUE = M(
    "ConsumerGroupMetadataValue", None, "0", "0+",
    F("Epoch", "int32"),
    F("MetadataHash", "int64", tagged="0+", tag=0, default="0"),  # 4.1 (KIP-1101)
)


CONSUMER_GROUP_PARTITION_METADATA_KEY = M(
    "ConsumerGroupPartitionMetadataKey", None, "4", "none",
    F("GroupId", "string", "4"),
)


CONSUMER_GROUP_PARTITION_METADATA_VALUE = M(
    "ConsumerGroupPartitionMetadataValue", None, "0", "0+",
    F("Topics", "[]TopicMetadata", fields=(
        F("TopicId", "uuid"),
        F("TopicName", "string"),
        F("NumPartitions", "int32"),
        F("PartitionMetadata", "[]PartitionMetadata", fields=(
            F("Partition", "int32"),
            F("Racks", "[]string"),
        )),
    )),
)


CONSUMER_GROUP_MEMBER_METADATA_KEY = M(
    "ConsumerGroupMemberMetadataKey", None, "5", "none",
    F("GroupId", "string", "5"),
    F("MemberId", "string", "5"),
)


CONSUMER_GROUP_MEMBER_METADATA_VALUE = M(
    "ConsumerGroupMemberMetadataValue", None, "0", "0+",
    F("InstanceId", "string", nullable="0+"),
    F("RackId", "string", nullable="0+"),
    F("ClientId", "string"),
    F("ClientHost", "string"),
    F("SubscribedTopicNames", "[]string"),
    F("SubscribedTopicRegex", "string", nullable="0+"),
    F("RebalanceTimeoutMs", "int32", default="-1"),
    F("ServerAssignor", "string", nullable="0+"),
    F("ClassicMemberMetadata", "ClassicMemberMetadata", nullable="0+", tagged="0+", tag=0,
      default="null", fields=(
        F("SessionTimeoutMs", "int32"),
        F("SupportedProtocols", "[]ClassicProtocol", fields=(
            F("Name", "string"),
            F("Metadata", "bytes"),
        )),
    )),
)


CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = M(
    "ConsumerGroupTargetAssignmentMetadataKey", None, "6", "none",
    F("GroupId", "string", "6"),
)


CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = M(
    "ConsumerGroupTargetAssignmentMetadataValue", None, "0", "0+",
    F("AssignmentEpoch", "int32"),
)


CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = M(
    "ConsumerGroupTargetAssignmentMemberKey", None, "7", "none",
    F("GroupId", "string", "7"),
    F("MemberId", "string", "7"),
)


CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = M(
    "ConsumerGroupTargetAssignmentMemberValue", None, "0", "0+",
    F("TopicPartitions", "[]TopicPartition", fields=(
        F("TopicId", "uuid"),
        F("Partitions", "[]int32"),
    )),
)


CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = M(
    "ConsumerGroupCurrentMemberAssignmentKey", None, "8", "none",
    F("GroupId", "string", "8"),
    F("MemberId", "string", "8"),
)


CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = M(
    "ConsumerGroupCurrentMemberAssignmentValue", None, "0", "0+",
    F("MemberEpoch", "int32"),
    F("PreviousMemberEpoch", "int32"),
    F("State", "int8"),
    F("AssignedPartitions", "[]TopicPartitions", fields=(
        F("TopicId", "uuid"),
        F("Partitions", "[]int32"),
    )),
    F("PartitionsPendingRevocation", "[]TopicPartitions", fields=(
        F("TopicId", "uuid"),
        F("Partitions", "[]int32"),
    )),
)


SHARE_GROUP_PARTITION_METADATA_KEY = M(
    "ShareGroupPartitionMetadataKey", None, "9", "none",
    F("GroupId", "string", "9"),
)


SHARE_GROUP_PARTITION_METADATA_VALUE = M(
    "ShareGroupPartitionMetadataValue", None, "0", "0+",
    F("Topics", "[]TopicMetadata", fields=(
        F("TopicId", "uuid"),
        F("TopicName", "string"),
        F("NumPartitions", "int32"),
        F("PartitionMetadata", "[]PartitionMetadata", fields=(
            F("Partition", "int32"),
            F("Racks", "[]string"),
        )),
    )),
)


SHARE_GROUP_MEMBER_METADATA_KEY = M(
    "ShareGroupMemberMetadataKey", None, "10", "none",
    F("GroupId", "string", "10"),
    F("MemberId", "string", "10"),
)


SHARE_GROUP_MEMBER_METADATA_VALUE = M(
    "ShareGroupMemberMetadataValue", None, "0", "0+",
    F("RackId", "string", nullable="0+"),
    F("ClientId", "string"),
    F("ClientHost", "string"),
    F("SubscribedTopicNames", "[]string"),
)


SHARE_GROUP_METADATA_KEY = M(
    "ShareGroupMetadataKey", None, "11", "none",
    F("GroupId", "string", "11"),
)


SHARE_GROUP_METADATA_VALUE = M(
    "ShareGroupMetadataValue", None, "0", "0+",
    F("Epoch", "int32"),
    F("MetadataHash", "int64"),  # 4.1, in place (share groups were a preview in 4.0)
)


SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = M(
    "ShareGroupTargetAssignmentMetadataKey", None, "12", "none",
    F("GroupId", "string", "12"),
)


SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = M(
    "ShareGroupTargetAssignmentMetadataValue", None, "0", "0+",
    F("AssignmentEpoch", "int32"),
)


SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = M(
    "ShareGroupTargetAssignmentMemberKey", None, "13", "none",
    F("GroupId", "string", "13"),
    F("MemberId", "string", "13"),
)


SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = M(
    "ShareGroupTargetAssignmentMemberValue", None, "0", "0+",
    F("TopicPartitions", "[]TopicPartition", fields=(
        F("TopicId", "uuid"),
        F("Partitions", "[]int32"),
    )),
)


SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = M(
    "ShareGroupCurrentMemberAssignmentKey", None, "14", "none",
    F("GroupId", "string", "14"),
    F("MemberId", "string", "14"),
)


SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = M(
    "ShareGroupCurrentMemberAssignmentValue", None, "0", "0+",
    F("MemberEpoch", "int32"),
    F("PreviousMemberEpoch", "int32"),
    F("State", "int8"),
    F("AssignedPartitions", "[]TopicPartitions", fields=(
        F("TopicId", "uuid"),
        F("Partitions", "[]int32"),
    )),
)


SHARE_GROUP_STATE_PARTITION_METADATA_KEY = M(
    "ShareGroupStatePartitionMetadataKey", None, "15", "none",
    F("GroupId", "string", "15"),
)


SHARE_GROUP_STATE_PARTITION_METADATA_VALUE = M(
    "ShareGroupStatePartitionMetadataValue", None, "0", "0+",
    F("InitializingTopics", "[]TopicPartitionsInfo", fields=_TOPIC_PARTITIONS_INFO),
    F("InitializedTopics", "[]TopicPartitionsInfo", fields=_TOPIC_PARTITIONS_INFO),
    F("DeletingTopics", "[]TopicInfo", fields=(
        F("TopicId", "uuid"),
        F("TopicName", "string"),
    )),
)


CONSUMER_GROUP_REGULAR_EXPRESSION_KEY = M(
    "ConsumerGroupRegularExpressionKey", None, "16", "none",
    F("GroupId", "string", "16"),
    F("RegularExpression", "string", "16"),
)


CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE = M(
    "ConsumerGroupRegularExpressionValue", None, "0", "0+",
    F("Topics", "[]string"),
    F("Version", "int64"),
    F("Timestamp", "int64"),
)


STREAMS_GROUP_METADATA_KEY = M(
    "StreamsGroupMetadataKey", None, "17", "none",
    F("GroupId", "string", "17"),
)


STREAMS_GROUP_METADATA_VALUE = M(
    "StreamsGroupMetadataValue", None, "0", "0+",
    F("Epoch", "int32"),
    F("MetadataHash", "int64"),
    F("ValidatedTopologyEpoch", "int32", tagged="0+", tag=0, default="-1"),
    F("AssignmentConfigs", "[]AssignmentConfig", fields=(
        F("Key", "string"),
        F("Value", "string"),
    )),
)


STREAMS_GROUP_PARTITION_METADATA_KEY = M(
    "StreamsGroupPartitionMetadataKey", None, "18", "none",
    F("GroupId", "string", "18"),
)


STREAMS_GROUP_PARTITION_METADATA_VALUE = M(
    "StreamsGroupPartitionMetadataValue", None, "0", "0+",
    F("Topics", "[]TopicMetadata", fields=(
        F("TopicId", "uuid"),
        F("TopicName", "string"),
        F("NumPartitions", "int32"),
        F("PartitionMetadata", "[]PartitionMetadata", fields=(
            F("Partition", "int32"),
            F("Racks", "[]string"),
        )),
    )),
)


STREAMS_GROUP_MEMBER_METADATA_KEY = M(
    "StreamsGroupMemberMetadataKey", None, "19", "none",
    F("GroupId", "string", "19"),
    F("MemberId", "string", "19"),
)


STREAMS_GROUP_MEMBER_METADATA_VALUE = M(
    "StreamsGroupMemberMetadataValue", None, "0", "0+",
    F("InstanceId", "string", nullable="0+"),
    F("RackId", "string", nullable="0+"),
    F("ClientId", "string"),
    F("ClientHost", "string"),
    F("RebalanceTimeoutMs", "int32", default="-1"),
    F("TopologyEpoch", "int32"),
    F("ProcessId", "string"),
    F("UserEndpoint", "Endpoint", nullable="0+", default="null", fields=(
        F("Host", "string"),
        F("Port", "uint16"),
    )),
    F("ClientTags", "[]KeyValue", fields=(
        F("Key", "string"),
        F("Value", "string"),
    )),
)


STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = M(
    "StreamsGroupTargetAssignmentMetadataKey", None, "20", "none",
    F("GroupId", "string", "20"),
)


STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = M(
    "StreamsGroupTargetAssignmentMetadataValue", None, "0", "0+",
    F("AssignmentEpoch", "int32"),
)


STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = M(
    "StreamsGroupTargetAssignmentMemberKey", None, "21", "none",
    F("GroupId", "string", "21"),
    F("MemberId", "string", "21"),
)


STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = M(
    "StreamsGroupTargetAssignmentMemberValue", None, "0", "0+",
    F("ActiveTasks", "[]TaskIds", fields=(
        F("SubtopologyId", "string"),
        F("Partitions", "[]int32"),
    )),
    F("StandbyTasks", "[]TaskIds", fields=(
        F("SubtopologyId", "string"),
        F("Partitions", "[]int32"),
    )),
    F("WarmupTasks", "[]TaskIds", fields=(
        F("SubtopologyId", "string"),
        F("Partitions", "[]int32"),
    )),
)


STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = M(
    "StreamsGroupCurrentMemberAssignmentKey", None, "22", "none",
    F("GroupId", "string", "22"),
    F("MemberId", "string", "22"),
)


STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = M(
    "StreamsGroupCurrentMemberAssignmentValue", None, "0", "0+",
    F("MemberEpoch", "int32"),
    F("PreviousMemberEpoch", "int32"),
    F("State", "int8"),
    F("ActiveTasks", "[]TaskIds", fields=(
        F("SubtopologyId", "string"),
        F("Partitions", "[]int32"),
    )),
    F("StandbyTasks", "[]TaskIds", fields=(
        F("SubtopologyId", "string"),
        F("Partitions", "[]int32"),
    )),
    F("WarmupTasks", "[]TaskIds", fields=(
        F("SubtopologyId", "string"),
        F("Partitions", "[]int32"),
    )),
    F("ActiveTasksPendingRevocation", "[]TaskIds", fields=(
        F("SubtopologyId", "string"),
        F("Partitions", "[]int32"),
    )),
    F("StandbyTasksPendingRevocation", "[]TaskIds", fields=(
        F("SubtopologyId", "string"),
        F("Partitions", "[]int32"),
    )),
    F("WarmupTasksPendingRevocation", "[]TaskIds", fields=(
        F("SubtopologyId", "string"),
        F("Partitions", "[]int32"),
    )),
)


STREAMS_GROUP_TOPOLOGY_KEY = M(
    "StreamsGroupTopologyKey", None, "23", "none",
    F("GroupId", "string", "23"),
)


STREAMS_GROUP_TOPOLOGY_VALUE = M(
    "StreamsGroupTopologyValue", None, "0", "0+",
    F("Epoch", "int32"),
    F("Subtopologies", "[]Subtopology", fields=(
        F("SubtopologyId", "string"),
        F("SourceTopics", "[]string"),
        F("SourceTopicRegex", "[]string"),
        F("StateChangelogTopics", "[]TopicInfo", fields=(
            F("Name", "string"),
            F("Partitions", "int32"),
            F("ReplicationFactor", "int16"),
            F("TopicConfigs", "[]TopicConfig", fields=(
                F("key", "string"),
                F("value", "string"),
            )),
        )),
        F("RepartitionSinkTopics", "[]string"),
        F("RepartitionSourceTopics", "[]TopicInfo", fields=(
            F("Name", "string"),
            F("Partitions", "int32"),
            F("ReplicationFactor", "int16"),
            F("TopicConfigs", "[]TopicConfig", fields=(
                F("key", "string"),
                F("value", "string"),
            )),
        )),
        F("CopartitionGroups", "[]CopartitionGroup", fields=(
            F("SourceTopics", "[]int16"),
            F("SourceTopicRegex", "[]int16"),
            F("RepartitionSourceTopics", "[]int16"),
        )),
    )),
)


#: Key type id -> (record type, key schema, value schema).
OFFSETS_KEYS: dict[int, tuple[str, Message, Message]] = {
    0: ("OFFSET_COMMIT", OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    1: ("OFFSET_COMMIT", OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    2: ("GROUP_METADATA", GROUP_METADATA_KEY, GROUP_METADATA_VALUE),
    3: ("CONSUMER_GROUP_METADATA", CONSUMER_GROUP_METADATA_KEY, CONSUMER_GROUP_METADATA_VALUE),
    4: ("CONSUMER_GROUP_PARTITION_METADATA", CONSUMER_GROUP_PARTITION_METADATA_KEY,
        CONSUMER_GROUP_PARTITION_METADATA_VALUE),
    5: ("CONSUMER_GROUP_MEMBER_METADATA", CONSUMER_GROUP_MEMBER_METADATA_KEY,
        CONSUMER_GROUP_MEMBER_METADATA_VALUE),
    6: ("CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA", CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
        CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
    7: ("CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER", CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
        CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
    8: ("CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT", CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
        CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    9: ("SHARE_GROUP_PARTITION_METADATA", SHARE_GROUP_PARTITION_METADATA_KEY,
        SHARE_GROUP_PARTITION_METADATA_VALUE),
    10: ("SHARE_GROUP_MEMBER_METADATA", SHARE_GROUP_MEMBER_METADATA_KEY,
         SHARE_GROUP_MEMBER_METADATA_VALUE),
    11: ("SHARE_GROUP_METADATA", SHARE_GROUP_METADATA_KEY, SHARE_GROUP_METADATA_VALUE),
    12: ("SHARE_GROUP_TARGET_ASSIGNMENT_METADATA", SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
         SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
    13: ("SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER", SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
         SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
    14: ("SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT", SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
         SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    15: ("SHARE_GROUP_STATE_PARTITION_METADATA", SHARE_GROUP_STATE_PARTITION_METADATA_KEY,
         SHARE_GROUP_STATE_PARTITION_METADATA_VALUE),
    16: ("CONSUMER_GROUP_REGULAR_EXPRESSION", CONSUMER_GROUP_REGULAR_EXPRESSION_KEY,
         CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE),
    17: ("STREAMS_GROUP_METADATA", STREAMS_GROUP_METADATA_KEY, STREAMS_GROUP_METADATA_VALUE),
    18: ("STREAMS_GROUP_PARTITION_METADATA", STREAMS_GROUP_PARTITION_METADATA_KEY,
         STREAMS_GROUP_PARTITION_METADATA_VALUE),
    19: ("STREAMS_GROUP_MEMBER_METADATA", STREAMS_GROUP_MEMBER_METADATA_KEY,
         STREAMS_GROUP_MEMBER_METADATA_VALUE),
    20: ("STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA", STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
         STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
    21: ("STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER", STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
         STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
    22: ("STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT", STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
         STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    23: ("STREAMS_GROUP_TOPOLOGY", STREAMS_GROUP_TOPOLOGY_KEY, STREAMS_GROUP_TOPOLOGY_VALUE),
}
