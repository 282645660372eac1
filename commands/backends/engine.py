"""Backend over the bundled engine: a local data directory, broker id 0, no server."""

from __future__ import annotations

from pk.engine import topic_names
from pk.engine.engine import Engine
from pk.engine.errors import UnknownTopicOrPartitionError

from ..backend import PartitionInfo, TopicInfo


class EngineBackend:
    def __init__(self, data_dir: str | None = None, broker_config: dict[str, str] | None = None):
        self.engine = Engine(data_dir, broker_config)

    def list_topics(self, include_internal: bool = True) -> list[str]:
        names = self.engine.list_topics()
        if not include_internal:
            names = [n for n in names if not topic_names.is_internal(n)]
        return names

    def describe_topics(self, names: list[str]) -> list[TopicInfo]:
        from pk.engine import topic_config  # only describe needs the config table

        live = set(self.engine.live_brokers)
        out = []
        for name in names:
            try:
                meta = self.engine.topic(name)
            except UnknownTopicOrPartitionError:
                continue  # deleted between listing and describing
            partitions = []
            for p, replicas in sorted(meta.assignment.items()):
                isr = [r for r in replicas if r in live]
                leader = isr[0] if isr else None
                partitions.append(PartitionInfo(p, leader, list(replicas), isr))
            effective = topic_config.effective(meta.configs, self.engine.broker_config)
            # What a Kafka 4.4 cluster reports as not default: the topic's overrides and the
            # cluster-wide dynamic defaults, in the order kafka-topics prints them.
            shown = {**topic_config.cluster_defaults(self.engine.broker_config), **meta.configs}
            shown = {k: shown[k] for k in topic_config.describe_order(shown)}
            out.append(TopicInfo(name, meta.topic_id, partitions, shown, int(effective["min.insync.replicas"])))
        return out

    def live_brokers(self) -> set[int]:
        return set(self.engine.live_brokers)

    def create_topic(self, name, partitions, replication_factor, assignment, configs) -> None:
        self.engine.create_topic(name, partitions, replication_factor, assignment, configs)

    def create_partitions(self, name, total, assignment) -> None:
        self.engine.create_partitions(name, total, assignment)

    def delete_topics(self, names: list[str]) -> None:
        for name in names:
            self.engine.delete_topic(name)

    def alter_topic_configs(self, name, set_configs, delete_configs) -> None:
        self.engine.alter_topic_configs(name, set_configs, delete_configs)

    def consumer(self, config: dict[str, str], track_ends: bool = False):
        """track_ends (the console consumer's ranges) asks nothing more here: the engine's
        positions step over offset gaps already."""
        from pk.engine.consumer import EngineConsumer

        return EngineConsumer(self.engine, config)

    def close(self) -> None:
        self.engine.close()
