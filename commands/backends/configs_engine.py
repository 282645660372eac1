"""kafka-configs on the bundled engine: topic configs (the topics' overrides, with the
synonyms a pk-server-start broker reports for them), the cluster's broker defaults, and group
configs (`.pk/group-configs.json`, what pk-server-start keeps and the engine's share groups
read), checked against Kafka's default broker bounds (the engine has no server.properties).
The engine has no broker process, so broker 0 has no dynamic configs, and users, clients,
IPs, client-metrics and broker loggers need a broker (--bootstrap-server)."""

from __future__ import annotations

from pk.engine import topic_config
from pk.engine.broker.admin import cluster_default_entries, topic_config_entries
from pk.engine.engine import Engine
from pk.engine.errors import KafkaError, UnknownTopicOrPartitionError

from ..configs import BROKERS, GROUPS, SOURCES, TOPICS, ConfigCommandError, Entry
from .configs_remote import execution_error
from .kafka_admin import known_error

ENGINE_BROKER = "0"


def _needs_broker(what: str) -> ConfigCommandError:
    return ConfigCommandError(f"org.apache.kafka.common.errors.UnsupportedVersionException: {what} need a broker: "
                              "run pk-server-start and use --bootstrap-server")


def _entry(e: dict) -> Entry:
    return Entry(e["name"], e["value"], e["is_sensitive"], e["config_source"],
                 [(SOURCES[s["source"]], s["name"], s["value"]) for s in e["synonyms"]])


class _EngineAsBroker:
    """What engine/broker/group_configs.py asks of a broker: its engine and its settings."""

    def __init__(self, engine: Engine):
        self.engine, self.config = engine, engine.broker_config


class EngineConfigs:
    def __init__(self, data_dir: str | None):
        self.engine = Engine(data_dir)
        self._groups = None

    @property
    def groups(self):
        if self._groups is None:
            from pk.engine.broker.group_configs import GroupConfigs

            self._groups = GroupConfigs(_EngineAsBroker(self.engine))
        return self._groups

    def entries(self, entity_type: str, name: str, describe_all: bool) -> list[Entry] | None:
        if entity_type == TOPICS:
            try:
                overrides = self.engine.topic(name).configs
            except UnknownTopicOrPartitionError:
                return None
            return [_entry(e) for e in topic_config_entries(overrides, self.engine.broker_config, True)]
        if entity_type == BROKERS:
            if name == "":
                return [_entry(e) for e in cluster_default_entries(self.engine.broker_config, True)]
            return []  # no broker process, no dynamic broker configs
        if entity_type == GROUPS:
            return [_entry(e) for e in self.groups.config_entries(name, True, False)]
        raise _needs_broker(f"{entity_type} configs")

    def names(self, entity_type: str) -> list[str]:
        if entity_type == TOPICS:
            return topic_config.java_hashmap_order(self.engine.list_topics(), default_capacity=True)
        if entity_type == BROKERS:
            return [ENGINE_BROKER]
        if entity_type == GROUPS:
            return self.groups.names()
        raise _needs_broker(f"{entity_type} configs")

    def alter(self, entity_type: str, name: str, add: dict[str, str], delete: list[str]) -> None:
        if entity_type == GROUPS:
            from pk.engine.broker.group_configs import DELETE, SET

            ops = [{"name": k, "config_operation": SET, "value": v} for k, v in add.items()]
            ops += [{"name": k, "config_operation": DELETE, "value": None} for k in delete]
            try:
                self.groups.incremental_alter(name, ops, False)
            except KafkaError as exc:
                raise execution_error(known_error(exc.code, str(exc))) from None
            return
        if entity_type != TOPICS:
            raise _needs_broker(f"{entity_type} configs")
        try:
            self.engine.topic(name)
        except UnknownTopicOrPartitionError:
            raise ConfigCommandError("java.util.concurrent.ExecutionException: org.apache.kafka.common.errors."
                                     f"UnknownTopicOrPartitionException: The topic '{name}' does not exist.") from None
        for key in add:
            if key not in topic_config.CONFIGS:
                raise ConfigCommandError("java.util.concurrent.ExecutionException: org.apache.kafka.common.errors."
                                         f"InvalidConfigurationException: Unknown topic config name: {key}")
        try:
            # Kafka deletes a name that is not a topic config without a word
            self.engine.alter_topic_configs(name, add, [k for k in delete if k in topic_config.CONFIGS])
        except KafkaError as exc:  # what the broker would answer, as the admin client raises it
            raise execution_error(known_error(exc.code, str(exc))) from None

    def quotas(self, components):
        raise _needs_broker("client quotas")

    def alter_quotas(self, entity, ops) -> None:
        raise _needs_broker("client quotas")

    def scram(self, users):
        raise _needs_broker("SCRAM credentials")

    def alter_scram(self, user, upserts, deletes) -> None:
        raise _needs_broker("SCRAM credentials")

    def close(self) -> None:
        self.engine.close()
