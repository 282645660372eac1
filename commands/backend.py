"""The small interface every command is written against.

Three implementations, in commands/backends/: the bundled engine (engine.py), a remote
cluster through confluent-kafka (kafka_admin.py), and legacy ZooKeeper admin through kazoo
(zookeeper.py). A command never knows which one it talks to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass
class PartitionInfo:
    partition: int
    leader: int | None  # None: no leader ("Leader: none")
    replicas: list[int]
    isr: list[int]
    elr: list[int] | None = None  # KIP-966's lists, where the cluster answered DescribeTopicPartitions
    last_known_elr: list[int] | None = None


@dataclass
class TopicInfo:
    name: str
    topic_id: str | None  # None or all-zero: the cluster has no topic ids
    partitions: list[PartitionInfo]
    overrides: dict[str, str] = field(default_factory=dict)  # configs not at their default, in print order
    min_insync_replicas: int = 1
    elr_known: bool = True  # Kafka 4.4 prints "Elr: N/A" where the cluster cannot say (no DescribeTopicPartitions)


class Backend(Protocol):
    def list_topics(self, include_internal: bool = True) -> list[str]: ...

    def describe_topics(self, names: list[str]) -> list[TopicInfo]: ...

    def live_brokers(self) -> set[int]: ...

    def create_topic(self, name: str, partitions: int, replication_factor: int,
                     assignment: dict[int, list[int]] | None, configs: dict[str, str]) -> None: ...

    def create_partitions(self, name: str, total: int, assignment: list[list[int]] | None) -> None: ...

    def delete_topics(self, names: list[str]) -> None: ...

    def alter_topic_configs(self, name: str, set_configs: dict[str, str], delete_configs: list[str]) -> None: ...

    def close(self) -> None: ...
