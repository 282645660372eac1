"""kafka-configs against a cluster (--bootstrap-server): configs and client quotas through
pk's wire client (wire.py: DescribeConfigs with every synonym, broker loggers and quotas,
which librdkafka does not give), SCRAM credentials through confluent-kafka's AdminClient
(which salts and hashes the password as Kafka's Admin does)."""

from __future__ import annotations

from pk.engine import protocol as kp
from pk.engine.topic_config import java_hashmap_order

from ..configs import (BROKER_LOGGERS, BROKERS, CLIENT_METRICS, GROUPS, SOURCES, TOPICS, ConfigCommandError, Entry)
from .kafka_admin import AdminError, known_error
from .wire import WireClient, connection_security

# ConfigResource.Type ids
RESOURCE_IDS = {TOPICS: 2, BROKERS: 4, BROKER_LOGGERS: 8, CLIENT_METRICS: 16, GROUPS: 32}
SET, DELETE = 0, 1
_UNKNOWN_TOPIC = 3


def execution_error(error: AdminError) -> ConfigCommandError:
    """A failed future's get(): ExecutionException wrapping Kafka's exception."""
    return ConfigCommandError("java.util.concurrent.ExecutionException: " + error.execution_message())


def _raise_for(code: int, message: str | None) -> None:
    if code:
        raise execution_error(known_error(code, message or None))


class RemoteConfigs:
    def __init__(self, bootstrap: str, command_config: str | None, timeout_s: float = 30.0):
        from ..properties import load_properties

        props = load_properties(command_config) if command_config is not None else {}
        security = connection_security(props)
        self.bootstrap, self.command_config = bootstrap, command_config
        self.wire = WireClient(bootstrap, timeout_s, "describeConfigs", security=security)
        self._admin = None

    # ------------------------------------------------------------------ configs
    def _node(self, entity_type: str, name: str) -> int | None:
        return int(name) if entity_type in (BROKERS, BROKER_LOGGERS) and name else None

    def entries(self, entity_type: str, name: str, describe_all: bool) -> list[Entry] | None:
        if entity_type == CLIENT_METRICS and not describe_all and name not in self.names(CLIENT_METRICS):
            return None  # Kafka describes a client-metrics resource only if the cluster lists it
        if entity_type == GROUPS and not describe_all and name not in self.names(GROUPS):
            return None  # ... and a group only if it exists or has configs
        body = {"resources": [{"resource_type": RESOURCE_IDS[entity_type], "resource_name": name,
                               "configuration_keys": None}],
                "include_synonyms": True, "include_documentation": False}
        result = self.wire.call(kp.ApiKey.DESCRIBE_CONFIGS, 4, body, self._node(entity_type, name))["results"][0]
        if result["error_code"] == _UNKNOWN_TOPIC and entity_type == TOPICS:
            return None
        _raise_for(result["error_code"], result["error_message"])
        return [Entry(c["name"], c["value"], c["is_sensitive"], c["config_source"],
                      [(SOURCES.get(s["source"], "UNKNOWN"), s["name"], s["value"]) for s in c["synonyms"]])
                for c in result["configs"]]

    def names(self, entity_type: str) -> list[str]:
        if entity_type == TOPICS:
            md = self.wire.call(kp.ApiKey.METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                                                          "include_topic_authorized_operations": False})
            return java_hashmap_order([t["name"] for t in md["topics"]], default_capacity=True)
        if entity_type in (BROKERS, BROKER_LOGGERS):
            return [str(b.node_id) for b in self.wire.brokers()]
        if entity_type == GROUPS:
            out = []
            for broker in self.wire.brokers():
                answer = self.wire.call(kp.ApiKey.LIST_GROUPS, 5, {"states_filter": [], "types_filter": []},
                                        broker.node_id)
                _raise_for(answer["error_code"], None)
                out += [g["group_id"] for g in answer["groups"]]
            # then the groups that only have configs (ConfigCommand's LinkedHashSet of both)
            answer = self.wire.call(kp.ApiKey.LIST_CONFIG_RESOURCES, 1, {"resource_types": [RESOURCE_IDS[GROUPS]]})
            if answer["error_code"] == 0:  # (Kafka lists groups alone where the API is refused)
                out += [r["resource_name"] for r in answer["config_resources"] if r["resource_name"] not in out]
            return out
        if entity_type == CLIENT_METRICS:
            answer = self.wire.call(kp.ApiKey.LIST_CONFIG_RESOURCES, 1,
                                    {"resource_types": [RESOURCE_IDS[CLIENT_METRICS]]})
            _raise_for(answer["error_code"], None)
            return [r["resource_name"] for r in answer["config_resources"]]
        raise ConfigCommandError(f"java.lang.IllegalArgumentException: Invalid entity type: {entity_type}")

    def alter(self, entity_type: str, name: str, add: dict[str, str], delete: list[str]) -> None:
        configs = [{"name": k, "config_operation": SET, "value": v} for k, v in add.items()]
        configs += [{"name": k, "config_operation": DELETE, "value": ""} for k in delete]
        body = {"resources": [{"resource_type": RESOURCE_IDS[entity_type], "resource_name": name,
                               "configs": configs}], "validate_only": False}
        answer = self.wire.call(kp.ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, body, self._node(entity_type, name))
        result = answer["responses"][0]
        _raise_for(result["error_code"], result["error_message"])

    # ------------------------------------------------------------------ quotas
    def quotas(self, components) -> list[tuple[dict, list[tuple[str, float]]]]:
        body = {"components": [{"entity_type": t, "match_type": 1 if default else (0 if name is not None else 2),
                                "match": name} for t, name, default in components], "strict": True}
        answer = self.wire.call(kp.ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, body)
        _raise_for(answer["error_code"], answer["error_message"])
        return [({e["entity_type"]: e["entity_name"] for e in entry["entity"]},
                 [(v["key"], v["value"]) for v in entry["values"]]) for entry in answer["entries"] or []]

    def alter_quotas(self, entity: dict, ops: list) -> None:
        body = {"entries": [{"entity": [{"entity_type": t, "entity_name": n} for t, n in entity.items()],
                             "ops": [{"key": k, "value": v or 0.0, "remove": v is None} for k, v in ops]}],
                "validate_only": False}
        answer = self.wire.call(kp.ApiKey.ALTER_CLIENT_QUOTAS, 1, body)
        for entry in answer["entries"]:
            _raise_for(entry["error_code"], entry["error_message"])

    # ------------------------------------------------------------------ SCRAM
    def _client(self):
        if self._admin is None:
            from .kafka_admin import open_admin

            self._admin = open_admin(self.bootstrap, self.command_config, None, timeout_ms=30000)
        return self._admin

    def scram(self, users: list[str]) -> list[tuple[str, list[tuple[str, int]]]]:
        import confluent_kafka

        admin = self._client()
        futures = admin.client.describe_user_scram_credentials(users or None, request_timeout=admin.timeout_s)
        if not users:
            descriptions = admin.result(futures, "describeUserScramCredentials")
        else:
            descriptions = {}
            admin.wait(futures.values(), "describeUserScramCredentials")
            for user, future in futures.items():
                try:
                    descriptions[user] = future.result()
                except confluent_kafka.KafkaException:
                    continue  # Kafka lists only the users that have credentials
        return [(user, [(_mechanism(i.mechanism), i.iterations) for i in d.scram_credential_infos])
                for user, d in descriptions.items()]

    def alter_scram(self, user: str, upserts: dict[str, tuple[int, str]], deletes: list[str]) -> None:
        from confluent_kafka.admin import (ScramCredentialInfo, ScramMechanism, UserScramCredentialDeletion,
                                           UserScramCredentialUpsertion)

        def mech(name: str):
            return getattr(ScramMechanism, name.replace("-", "_"))

        alterations = [UserScramCredentialDeletion(user, mech(m)) for m in deletes]
        alterations += [UserScramCredentialUpsertion(user, ScramCredentialInfo(mech(m), iterations), password.encode())
                        for m, (iterations, password) in upserts.items()]
        admin = self._client()
        futures = admin.client.alter_user_scram_credentials(alterations, request_timeout=admin.timeout_s)
        try:
            for future in futures.values():
                admin.result(future, "alterUserScramCredentials")
        except AdminError as exc:
            raise execution_error(exc) from None

    def close(self) -> None:
        self.wire.close()
        if self._admin is not None:
            self._admin.close()


def _mechanism(mechanism) -> str:
    return mechanism.name.replace("_", "-")
