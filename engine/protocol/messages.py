"""Request and response schemas for every API and version pk's broker serves.

The version profile (docs/protocol.md) is a core set of APIs (plus DeleteRecords 0-1,
DeleteGroups 0-1, DescribeCluster 0-1, OffsetDelete 0, AlterConfigs 0-1 and
IncrementalAlterConfigs 0): ``SUPPORTED_VERSIONS``
is what ApiVersions advertises, and every schema below implements exactly that
range, no more. Field order, version ranges, nullability and defaults follow
Kafka's message JSON schemas (apache/kafka trunk 1eb76443), re-stated here by
hand; field names are the JSON names in snake_case.

Within this profile only ApiVersions v3 and DescribeCluster v0-1 are flexible;
``Message.is_flexible(v)`` answers per version. ``flexible=`` below records
Kafka's real first flexible version even when it lies above our range.

Lookup::

    REQUESTS[api_key]  -> Message      RESPONSES[api_key] -> Message
    SUPPORTED_VERSIONS[api_key] -> (min, max)
    API_NAMES[api_key] -> "Produce"    ApiKey.PRODUCE == 0
"""

from __future__ import annotations

from enum import IntEnum

from .schema import Field as F, Message, Struct
from .types import (
    Array, BOOL, BYTES, INT8, INT16, INT32, INT64, RECORDS, STRING,
)

__all__ = ["ApiKey", "API_NAMES", "SUPPORTED_VERSIONS", "REQUESTS", "RESPONSES"]

INT32_MIN = -2147483648


class ApiKey(IntEnum):
    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    CREATE_PARTITIONS = 37
    DELETE_GROUPS = 42
    INCREMENTAL_ALTER_CONFIGS = 44
    OFFSET_DELETE = 47
    DESCRIBE_CLUSTER = 60


# What the broker advertises in ApiVersions (sorted by key). Nothing else.
SUPPORTED_VERSIONS: dict[int, tuple[int, int]] = {int(k): v for k, v in {
    ApiKey.PRODUCE: (3, 7),
    ApiKey.FETCH: (4, 11),
    ApiKey.LIST_OFFSETS: (1, 3),
    ApiKey.METADATA: (0, 4),
    ApiKey.OFFSET_COMMIT: (2, 5),
    ApiKey.OFFSET_FETCH: (1, 5),
    ApiKey.FIND_COORDINATOR: (0, 2),
    ApiKey.JOIN_GROUP: (0, 5),
    ApiKey.HEARTBEAT: (0, 3),
    ApiKey.LEAVE_GROUP: (0, 1),
    ApiKey.SYNC_GROUP: (0, 3),
    ApiKey.DESCRIBE_GROUPS: (0, 4),
    ApiKey.LIST_GROUPS: (0, 2),
    ApiKey.API_VERSIONS: (0, 3),
    ApiKey.CREATE_TOPICS: (0, 4),
    ApiKey.DELETE_TOPICS: (0, 3),
    ApiKey.DELETE_RECORDS: (0, 1),
    ApiKey.INIT_PRODUCER_ID: (0, 1),
    ApiKey.DESCRIBE_CONFIGS: (0, 1),
    ApiKey.ALTER_CONFIGS: (0, 1),
    ApiKey.CREATE_PARTITIONS: (0, 1),
    ApiKey.DELETE_GROUPS: (0, 1),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: (0, 0),
    ApiKey.OFFSET_DELETE: (0, 0),
    ApiKey.DESCRIBE_CLUSTER: (0, 1),
}.items()}

API_NAMES: dict[int, str] = {
    0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit",
    9: "OffsetFetch", 10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat",
    13: "LeaveGroup", 14: "SyncGroup", 15: "DescribeGroups", 16: "ListGroups",
    18: "ApiVersions", 19: "CreateTopics", 20: "DeleteTopics", 21: "DeleteRecords",
    22: "InitProducerId", 32: "DescribeConfigs", 33: "AlterConfigs", 37: "CreatePartitions",
    42: "DeleteGroups", 44: "IncrementalAlterConfigs", 47: "OffsetDelete", 60: "DescribeCluster",
}


def _pair(key, flexible, request_fields, response_fields):
    key = int(key)
    lo, hi = SUPPORTED_VERSIONS[key]
    name = API_NAMES[key]
    return (Message(name + "Request", key, (lo, hi), request_fields, flexible=flexible),
            Message(name + "Response", key, (lo, hi), response_fields, flexible=flexible))


def S(name, *fields):
    """Array of a named struct (the common case)."""
    return Array(Struct(name, list(fields)))


# --------------------------------------------------------------- Produce (0)
# v3-v7 requests are identical; v5 adds log_start_offset to the response.
# records are a memoryview slice of the request frame (never copied or parsed).
PRODUCE_REQUEST, PRODUCE_RESPONSE = _pair(ApiKey.PRODUCE, "9+", [
    F("transactional_id", STRING, nullable=True, default=None),
    F("acks", INT16),
    F("timeout_ms", INT32),
    F("topic_data", S("TopicProduceData",
        F("name", STRING),
        F("partition_data", S("PartitionProduceData",
            F("index", INT32),
            F("records", RECORDS, nullable=True),
        )),
    )),
], [
    F("responses", S("TopicProduceResponse",
        F("name", STRING),
        F("partition_responses", S("PartitionProduceResponse",
            F("index", INT32),
            F("error_code", INT16),
            F("base_offset", INT64),
            F("log_append_time_ms", INT64, default=-1),
            F("log_start_offset", INT64, "5+", default=-1),
        )),
    )),
    F("throttle_time_ms", INT32, default=0),
])

# ----------------------------------------------------------------- Fetch (1)
FETCH_REQUEST, FETCH_RESPONSE = _pair(ApiKey.FETCH, "12+", [
    F("replica_id", INT32, default=-1),
    F("max_wait_ms", INT32),
    F("min_bytes", INT32),
    F("max_bytes", INT32, default=0x7FFFFFFF),
    F("isolation_level", INT8, default=0),
    F("session_id", INT32, "7+", default=0),
    F("session_epoch", INT32, "7+", default=-1),
    F("topics", S("FetchTopic",
        F("topic", STRING),
        F("partitions", S("FetchPartition",
            F("partition", INT32),
            F("current_leader_epoch", INT32, "9+", default=-1),
            F("fetch_offset", INT64),
            F("log_start_offset", INT64, "5+", default=-1),
            F("partition_max_bytes", INT32),
        )),
    )),
    F("forgotten_topics_data", S("ForgottenTopic",
        F("topic", STRING),
        F("partitions", Array(INT32)),
    ), "7+"),
    F("rack_id", STRING, "11+", default=""),
], [
    F("throttle_time_ms", INT32),
    F("error_code", INT16, "7+"),
    F("session_id", INT32, "7+", default=0),
    F("responses", S("FetchableTopicResponse",
        F("topic", STRING),
        F("partitions", S("PartitionData",
            F("partition_index", INT32),
            F("error_code", INT16),
            F("high_watermark", INT64),
            F("last_stable_offset", INT64, default=-1),
            F("log_start_offset", INT64, "5+", default=-1),
            F("aborted_transactions", S("AbortedTransaction",
                F("producer_id", INT64),
                F("first_offset", INT64),
            ), nullable=True),
            F("preferred_read_replica", INT32, "11+", default=-1),
            F("records", RECORDS, nullable=True),
        )),
    )),
])

# ----------------------------------------------------------- ListOffsets (2)
LIST_OFFSETS_REQUEST, LIST_OFFSETS_RESPONSE = _pair(ApiKey.LIST_OFFSETS, "6+", [
    F("replica_id", INT32),
    F("isolation_level", INT8, "2+"),
    F("topics", S("ListOffsetsTopic",
        F("name", STRING),
        F("partitions", S("ListOffsetsPartition",
            F("partition_index", INT32),
            F("timestamp", INT64),
        )),
    )),
], [
    F("throttle_time_ms", INT32, "2+"),
    F("topics", S("ListOffsetsTopicResponse",
        F("name", STRING),
        F("partitions", S("ListOffsetsPartitionResponse",
            F("partition_index", INT32),
            F("error_code", INT16),
            F("timestamp", INT64, default=-1),
            F("offset", INT64, default=-1),
        )),
    )),
])

# -------------------------------------------------------------- Metadata (3)
# v0: an empty topics array means "all topics"; v1+: null means all topics.
METADATA_REQUEST, METADATA_RESPONSE = _pair(ApiKey.METADATA, "9+", [
    F("topics", S("MetadataRequestTopic",
        F("name", STRING),
    ), nullable="1+"),
    F("allow_auto_topic_creation", BOOL, "4+", default=True),
], [
    F("throttle_time_ms", INT32, "3+"),
    F("brokers", S("MetadataResponseBroker",
        F("node_id", INT32),
        F("host", STRING),
        F("port", INT32),
        F("rack", STRING, "1+", nullable="1+", default=None),
    )),
    F("cluster_id", STRING, "2+", nullable="2+", default=None),
    F("controller_id", INT32, "1+", default=-1),
    F("topics", S("MetadataResponseTopic",
        F("error_code", INT16),
        F("name", STRING),
        F("is_internal", BOOL, "1+", default=False),
        F("partitions", S("MetadataResponsePartition",
            F("error_code", INT16),
            F("partition_index", INT32),
            F("leader_id", INT32),
            F("replica_nodes", Array(INT32)),
            F("isr_nodes", Array(INT32)),
        )),
    )),
])

# ---------------------------------------------------------- OffsetCommit (8)
OFFSET_COMMIT_REQUEST, OFFSET_COMMIT_RESPONSE = _pair(ApiKey.OFFSET_COMMIT, "8+", [
    F("group_id", STRING),
    F("generation_id_or_member_epoch", INT32, default=-1),
    F("member_id", STRING),
    F("retention_time_ms", INT64, "2-4", default=-1),
    F("topics", S("OffsetCommitRequestTopic",
        F("name", STRING),
        F("partitions", S("OffsetCommitRequestPartition",
            F("partition_index", INT32),
            F("committed_offset", INT64),
            F("committed_metadata", STRING, nullable=True),
        )),
    )),
], [
    F("throttle_time_ms", INT32, "3+"),
    F("topics", S("OffsetCommitResponseTopic",
        F("name", STRING),
        F("partitions", S("OffsetCommitResponsePartition",
            F("partition_index", INT32),
            F("error_code", INT16),
        )),
    )),
])

# ----------------------------------------------------------- OffsetFetch (9)
# topics null (v2+) means "every partition with a committed offset".
OFFSET_FETCH_REQUEST, OFFSET_FETCH_RESPONSE = _pair(ApiKey.OFFSET_FETCH, "6+", [
    F("group_id", STRING),
    F("topics", S("OffsetFetchRequestTopic",
        F("name", STRING),
        F("partition_indexes", Array(INT32)),
    ), nullable="2+"),
], [
    F("throttle_time_ms", INT32, "3+"),
    F("topics", S("OffsetFetchResponseTopic",
        F("name", STRING),
        F("partitions", S("OffsetFetchResponsePartition",
            F("partition_index", INT32),
            F("committed_offset", INT64),
            F("committed_leader_epoch", INT32, "5+", default=-1),
            F("metadata", STRING, nullable=True),
            F("error_code", INT16),
        )),
    )),
    F("error_code", INT16, "2+", default=0),
])

# ------------------------------------------------------- FindCoordinator (10)
FIND_COORDINATOR_REQUEST, FIND_COORDINATOR_RESPONSE = _pair(ApiKey.FIND_COORDINATOR, "3+", [
    F("key", STRING),
    F("key_type", INT8, "1+", default=0),
], [
    F("throttle_time_ms", INT32, "1+"),
    F("error_code", INT16),
    F("error_message", STRING, "1+", nullable="1+"),
    F("node_id", INT32),
    F("host", STRING),
    F("port", INT32),
])

# ------------------------------------------------------------- JoinGroup (11)
JOIN_GROUP_REQUEST, JOIN_GROUP_RESPONSE = _pair(ApiKey.JOIN_GROUP, "6+", [
    F("group_id", STRING),
    F("session_timeout_ms", INT32),
    F("rebalance_timeout_ms", INT32, "1+", default=-1),
    F("member_id", STRING),
    F("group_instance_id", STRING, "5+", nullable="5+", default=None),
    F("protocol_type", STRING),
    F("protocols", S("JoinGroupRequestProtocol",
        F("name", STRING),
        F("metadata", BYTES),
    )),
], [
    F("throttle_time_ms", INT32, "2+"),
    F("error_code", INT16),
    F("generation_id", INT32, default=-1),
    F("protocol_name", STRING),
    F("leader", STRING),
    F("member_id", STRING),
    F("members", S("JoinGroupResponseMember",
        F("member_id", STRING),
        F("group_instance_id", STRING, "5+", nullable="5+", default=None),
        F("metadata", BYTES),
    )),
])

# ------------------------------------------------------------- Heartbeat (12)
HEARTBEAT_REQUEST, HEARTBEAT_RESPONSE = _pair(ApiKey.HEARTBEAT, "4+", [
    F("group_id", STRING),
    F("generation_id", INT32),
    F("member_id", STRING),
    F("group_instance_id", STRING, "3+", nullable="3+", default=None),
], [
    F("throttle_time_ms", INT32, "1+"),
    F("error_code", INT16),
])

# ------------------------------------------------------------ LeaveGroup (13)
LEAVE_GROUP_REQUEST, LEAVE_GROUP_RESPONSE = _pair(ApiKey.LEAVE_GROUP, "4+", [
    F("group_id", STRING),
    F("member_id", STRING),
], [
    F("throttle_time_ms", INT32, "1+"),
    F("error_code", INT16),
])

# ------------------------------------------------------------- SyncGroup (14)
SYNC_GROUP_REQUEST, SYNC_GROUP_RESPONSE = _pair(ApiKey.SYNC_GROUP, "4+", [
    F("group_id", STRING),
    F("generation_id", INT32),
    F("member_id", STRING),
    F("group_instance_id", STRING, "3+", nullable="3+", default=None),
    F("assignments", S("SyncGroupRequestAssignment",
        F("member_id", STRING),
        F("assignment", BYTES),
    )),
], [
    F("throttle_time_ms", INT32, "1+"),
    F("error_code", INT16),
    F("assignment", BYTES),
])

# -------------------------------------------------------- DescribeGroups (15)
DESCRIBE_GROUPS_REQUEST, DESCRIBE_GROUPS_RESPONSE = _pair(ApiKey.DESCRIBE_GROUPS, "5+", [
    F("groups", Array(STRING)),
    F("include_authorized_operations", BOOL, "3+"),
], [
    F("throttle_time_ms", INT32, "1+"),
    F("groups", S("DescribedGroup",
        F("error_code", INT16),
        F("group_id", STRING),
        F("group_state", STRING),
        F("protocol_type", STRING),
        F("protocol_data", STRING),
        F("members", S("DescribedGroupMember",
            F("member_id", STRING),
            F("group_instance_id", STRING, "4+", nullable="4+", default=None),
            F("client_id", STRING),
            F("client_host", STRING),
            F("member_metadata", BYTES),
            F("member_assignment", BYTES),
        )),
        F("authorized_operations", INT32, "3+", default=INT32_MIN),
    )),
])

# ------------------------------------------------------------ ListGroups (16)
LIST_GROUPS_REQUEST, LIST_GROUPS_RESPONSE = _pair(ApiKey.LIST_GROUPS, "3+", [
], [
    F("throttle_time_ms", INT32, "1+"),
    F("error_code", INT16),
    F("groups", S("ListedGroup",
        F("group_id", STRING),
        F("protocol_type", STRING),
    )),
])

# ----------------------------------------------------------- ApiVersions (18)
# v3 is flexible, but its *response header* is always v0 (see frames.py).
API_VERSIONS_REQUEST, API_VERSIONS_RESPONSE = _pair(ApiKey.API_VERSIONS, "3+", [
    F("client_software_name", STRING, "3+"),
    F("client_software_version", STRING, "3+"),
], [
    F("error_code", INT16),
    F("api_keys", S("ApiVersion",
        F("api_key", INT16),
        F("min_version", INT16),
        F("max_version", INT16),
    )),
    F("throttle_time_ms", INT32, "1+"),
    F("supported_features", S("SupportedFeatureKey",
        F("name", STRING),
        F("min_version", INT16),
        F("max_version", INT16),
    ), "3+", tag=0),
    F("finalized_features_epoch", INT64, "3+", default=-1, tag=1),
    F("finalized_features", S("FinalizedFeatureKey",
        F("name", STRING),
        F("max_version_level", INT16),
        F("min_version_level", INT16),
    ), "3+", tag=2),
    F("zk_migration_ready", BOOL, "3+", default=False, tag=3),
])

# ---------------------------------------------------------- CreateTopics (19)
CREATE_TOPICS_REQUEST, CREATE_TOPICS_RESPONSE = _pair(ApiKey.CREATE_TOPICS, "5+", [
    F("topics", S("CreatableTopic",
        F("name", STRING),
        F("num_partitions", INT32),
        F("replication_factor", INT16),
        F("assignments", S("CreatableReplicaAssignment",
            F("partition_index", INT32),
            F("broker_ids", Array(INT32)),
        )),
        F("configs", S("CreatableTopicConfig",
            F("name", STRING),
            F("value", STRING, nullable=True),
        )),
    )),
    F("timeout_ms", INT32, default=60000),
    F("validate_only", BOOL, "1+", default=False),
], [
    F("throttle_time_ms", INT32, "2+"),
    F("topics", S("CreatableTopicResult",
        F("name", STRING),
        F("error_code", INT16),
        F("error_message", STRING, "1+", nullable=True),
    )),
])

# ---------------------------------------------------------- DeleteTopics (20)
DELETE_TOPICS_REQUEST, DELETE_TOPICS_RESPONSE = _pair(ApiKey.DELETE_TOPICS, "4+", [
    F("topic_names", Array(STRING)),
    F("timeout_ms", INT32),
], [
    F("throttle_time_ms", INT32, "1+"),
    F("responses", S("DeletableTopicResult",
        F("name", STRING),
        F("error_code", INT16),
    )),
])

# --------------------------------------------------------- DeleteRecords (21)
# v0 and v1 have the same layout; v2 (flexible) is not served.
DELETE_RECORDS_REQUEST, DELETE_RECORDS_RESPONSE = _pair(ApiKey.DELETE_RECORDS, "2+", [
    F("topics", S("DeleteRecordsTopic",
        F("name", STRING),
        F("partitions", S("DeleteRecordsPartition",
            F("partition_index", INT32),
            F("offset", INT64),
        )),
    )),
    F("timeout_ms", INT32),
], [
    F("throttle_time_ms", INT32),
    F("topics", S("DeleteRecordsTopicResult",
        F("name", STRING),
        F("partitions", S("DeleteRecordsPartitionResult",
            F("partition_index", INT32),
            F("low_watermark", INT64),
            F("error_code", INT16),
        )),
    )),
])

# -------------------------------------------------------- InitProducerId (22)
INIT_PRODUCER_ID_REQUEST, INIT_PRODUCER_ID_RESPONSE = _pair(ApiKey.INIT_PRODUCER_ID, "2+", [
    F("transactional_id", STRING, nullable=True),
    F("transaction_timeout_ms", INT32),
], [
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("producer_id", INT64, default=-1),
    F("producer_epoch", INT16),
])

# ------------------------------------------------------- DescribeConfigs (32)
DESCRIBE_CONFIGS_REQUEST, DESCRIBE_CONFIGS_RESPONSE = _pair(ApiKey.DESCRIBE_CONFIGS, "4+", [
    F("resources", S("DescribeConfigsResource",
        F("resource_type", INT8),
        F("resource_name", STRING),
        F("configuration_keys", Array(STRING), nullable=True),
    )),
    F("include_synonyms", BOOL, "1+", default=False),
], [
    F("throttle_time_ms", INT32),
    F("results", S("DescribeConfigsResult",
        F("error_code", INT16),
        F("error_message", STRING, nullable=True),
        F("resource_type", INT8),
        F("resource_name", STRING),
        F("configs", S("DescribeConfigsResourceResult",
            F("name", STRING),
            F("value", STRING, nullable=True),
            F("read_only", BOOL),
            F("is_default", BOOL, "0"),
            F("config_source", INT8, "1+", default=-1),
            F("is_sensitive", BOOL),
            F("synonyms", S("DescribeConfigsSynonym",
                F("name", STRING),
                F("value", STRING, nullable=True),
                F("source", INT8),
            ), "1+"),
        )),
    )),
])

# ---------------------------------------------------------- AlterConfigs (33)
# Replaces every override of each resource; v0 and v1 have the same layout (v2 is flexible).
def _alter_configs_results():
    return S("AlterConfigsResourceResponse",
        F("error_code", INT16),
        F("error_message", STRING, nullable=True),
        F("resource_type", INT8),
        F("resource_name", STRING),
    )


ALTER_CONFIGS_REQUEST, ALTER_CONFIGS_RESPONSE = _pair(ApiKey.ALTER_CONFIGS, "2+", [
    F("resources", S("AlterConfigsResource",
        F("resource_type", INT8),
        F("resource_name", STRING),
        F("configs", S("AlterableConfig",
            F("name", STRING),
            F("value", STRING, nullable=True),
        )),
    )),
    F("validate_only", BOOL),
], [
    F("throttle_time_ms", INT32),
    F("responses", _alter_configs_results()),
])

# ------------------------------------------------------ CreatePartitions (37)
CREATE_PARTITIONS_REQUEST, CREATE_PARTITIONS_RESPONSE = _pair(ApiKey.CREATE_PARTITIONS, "2+", [
    F("topics", S("CreatePartitionsTopic",
        F("name", STRING),
        F("count", INT32),
        F("assignments", S("CreatePartitionsAssignment",
            F("broker_ids", Array(INT32)),
        ), nullable=True),
    )),
    F("timeout_ms", INT32),
    F("validate_only", BOOL),
], [
    F("throttle_time_ms", INT32),
    F("results", S("CreatePartitionsTopicResult",
        F("name", STRING),
        F("error_code", INT16),
        F("error_message", STRING, nullable=True, default=None),
    )),
])

# ---------------------------------------------------------- DeleteGroups (42)
DELETE_GROUPS_REQUEST, DELETE_GROUPS_RESPONSE = _pair(ApiKey.DELETE_GROUPS, "2+", [
    F("groups_names", Array(STRING)),
], [
    F("throttle_time_ms", INT32),
    F("results", S("DeletableGroupResult",
        F("group_id", STRING),
        F("error_code", INT16),
    )),
])

# ----------------------------------------------- IncrementalAlterConfigs (44)
# v0 only: v1 is flexible. config_operation: 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT.
INCREMENTAL_ALTER_CONFIGS_REQUEST, INCREMENTAL_ALTER_CONFIGS_RESPONSE = _pair(
    ApiKey.INCREMENTAL_ALTER_CONFIGS, "1+", [
        F("resources", S("AlterConfigsResource",
            F("resource_type", INT8),
            F("resource_name", STRING),
            F("configs", S("AlterableConfig",
                F("name", STRING),
                F("config_operation", INT8),
                F("value", STRING, nullable=True),
            )),
        )),
        F("validate_only", BOOL),
    ], [
        F("throttle_time_ms", INT32),
        F("responses", _alter_configs_results()),
    ])

# ---------------------------------------------------------- OffsetDelete (47)
OFFSET_DELETE_REQUEST, OFFSET_DELETE_RESPONSE = _pair(ApiKey.OFFSET_DELETE, None, [
    F("group_id", STRING),
    F("topics", S("OffsetDeleteRequestTopic",
        F("name", STRING),
        F("partitions", S("OffsetDeleteRequestPartition",
            F("partition_index", INT32),
        )),
    )),
], [
    F("error_code", INT16),
    F("throttle_time_ms", INT32),
    F("topics", S("OffsetDeleteResponseTopic",
        F("name", STRING),
        F("partitions", S("OffsetDeleteResponsePartition",
            F("partition_index", INT32),
            F("error_code", INT16),
        )),
    )),
])

# ------------------------------------------------------- DescribeCluster (60)
# Always flexible: request header v2, response header v1, compact everything.
# v1 (Kafka 3.7) adds EndpointType; kafka-python 3.0's admin describe_cluster() needs it
# (it reads endpoint_type from any answer).
DESCRIBE_CLUSTER_REQUEST, DESCRIBE_CLUSTER_RESPONSE = _pair(ApiKey.DESCRIBE_CLUSTER, "0+", [
    F("include_cluster_authorized_operations", BOOL),
    F("endpoint_type", INT8, "1+", default=1),
], [
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("error_message", STRING, nullable=True, default=None),
    F("endpoint_type", INT8, "1+", default=1),
    F("cluster_id", STRING),
    F("controller_id", INT32, default=-1),
    F("brokers", S("DescribeClusterBroker",
        F("broker_id", INT32),
        F("host", STRING),
        F("port", INT32),
        F("rack", STRING, nullable=True, default=None),
    )),
    F("cluster_authorized_operations", INT32, default=INT32_MIN),
])


REQUESTS: dict[int, Message] = {}
RESPONSES: dict[int, Message] = {}
for _name, _obj in list(globals().items()):
    if isinstance(_obj, Message):
        (REQUESTS if _name.endswith("_REQUEST") else RESPONSES)[_obj.api_key] = _obj
REQUESTS = dict(sorted(REQUESTS.items()))
RESPONSES = dict(sorted(RESPONSES.items()))
assert REQUESTS.keys() == RESPONSES.keys() == SUPPORTED_VERSIONS.keys() == API_NAMES.keys()
del _name, _obj
