"""What pk accepts as a name or a number, checked in one place at every boundary.

The engine's admin calls, the broker's handlers and the command-line tools all ask here, so a
rule (and its Kafka text) lives once. Each check either answers a bool (handlers turn False into
the error code Kafka answers for that request) or raises the engine error whose `code` and text
are Kafka's. Texts were observed on a Kafka 4.4 broker.

- Topic names: Kafka's Topic.validate (topic_names holds the rule and the internal names).
- Group ids: Kafka's group coordinator refuses an empty (or null) group id with
  INVALID_GROUP_ID in JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetDelete and
  ConsumerGroupDescribe; DescribeGroups, DeleteGroups, OffsetCommit and OffsetFetch accept it.
- Transactional ids: the transaction coordinator answers INVALID_REQUEST for an empty one.
- Client ids: any string, or none, is accepted (as Kafka does); pk never derives a path from one.
- Partition counts and replication factors: the controller's CreateTopics/CreatePartitions rules.
- Topic configs: topic_config.validate (LogConfig's validators, with Kafka's texts).
"""

from __future__ import annotations

from . import topic_config, topic_names
from .errors import InvalidPartitionsError, InvalidReplicationFactorError

# Re-exported: the one entry for names and configs.
topic_name_problem = topic_names.invalid_reason   # a reason, or None when the name is legal
validate_topic_name = topic_names.validate         # raises InvalidTopicError (INVALID_TOPIC_EXCEPTION)
validate_topic_configs = topic_config.validate     # raises InvalidConfigurationError (INVALID_CONFIG)


def is_group_id(group_id: str | None) -> bool:
    """GroupCoordinatorService.isGroupIdNotEmpty."""
    return bool(group_id)


def is_transactional_id(transactional_id: str | None) -> bool:
    """A transactional id the coordinator accepts (null means 'not transactional')."""
    return bool(transactional_id)


def validate_partition_count(count: int) -> None:
    """CreateTopics' num_partitions: -1 (the broker's num.partitions) or positive."""
    if count < -1 or count == 0:
        raise InvalidPartitionsError("Number of partitions was set to an invalid non-positive value.")


def validate_replication_factor(factor: int) -> None:
    """CreateTopics' replication_factor: -1 (default.replication.factor) or positive."""
    if factor < -1 or factor == 0:
        raise InvalidReplicationFactorError("Replication factor must be larger than 0, or -1 to use the default value.")


def validate_replicas_available(factor: int, brokers: int) -> None:
    """A replication factor the registered brokers can host."""
    if factor > brokers:
        raise InvalidReplicationFactorError(
            f"Unable to replicate the partition {factor} time(s): The target replication factor of {factor} "
            f"cannot be reached because only {brokers} broker(s) are registered or some brokers have all "
            f"their log directories cordoned.")


def validate_partition_increase(topic: str, current: int, total: int) -> None:
    """CreatePartitions' count: strictly more than the topic has."""
    if total == current:
        raise InvalidPartitionsError(f"Topic already has {current} partition(s).")
    if total < current:
        raise InvalidPartitionsError(
            f"The topic {topic} currently has {current} partition(s); {total} would not be an increase.")
