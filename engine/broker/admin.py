"""Admin handlers: CreateTopics, DeleteTopics, CreatePartitions, DescribeConfigs, AlterConfigs,
IncrementalAlterConfigs, DescribeCluster, DeleteRecords.

Each is a thin layer over the engine's admin calls, which take the data directory's admin
lock, so the broker and pk-topics running beside it change topics one at a time. Errors are
reported per topic or per resource with the engine's Kafka error code and message.
"""

from __future__ import annotations

from .. import topic_config
from ..errors import (
    InvalidConfigurationError,
    InvalidRequestError,
    KafkaError,
    UnknownTopicOrPartitionError,
)
from ..protocol import ApiKey
from ..protocol import errors as E
from ..protocol.messages import INT32_MIN

TOPIC, BROKER = 2, 4  # ConfigResource.Type
# DescribeConfigs config sources (v1)
TOPIC_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 3, 4, 5
# KafkaConfig's built-in defaults of the broker settings in multi-setting synonym chains (the
# first of each chain has none: it falls back to the next).
_MULTI_DEFAULTS = {"log.roll.hours": "168", "log.roll.jitter.hours": "0", "log.retention.hours": "168",
                   "log.flush.scheduler.interval.ms": str(2**63 - 1)}
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3  # IncrementalAlterConfigs operations


def _error(result: dict, exc: KafkaError) -> dict:
    result["error_code"] = exc.code
    result["error_message"] = str(exc) or None
    return result


def _duplicates(names: list[str]) -> set[str]:
    seen: set[str] = set()
    return {n for n in names if n in seen or seen.add(n)}


class AdminHandlers:
    def __init__(self, broker):
        self.broker = broker
        self.engine = broker.engine
        broker.register(ApiKey.CREATE_TOPICS, self.create_topics)
        broker.register(ApiKey.DELETE_TOPICS, self.delete_topics)
        broker.register(ApiKey.CREATE_PARTITIONS, self.create_partitions)
        broker.register(ApiKey.DESCRIBE_CONFIGS, self.describe_configs)
        broker.register(ApiKey.ALTER_CONFIGS, self.alter_configs)
        broker.register(ApiKey.INCREMENTAL_ALTER_CONFIGS, self.incremental_alter_configs)
        broker.register(ApiKey.DESCRIBE_CLUSTER, self.describe_cluster)
        broker.register(ApiKey.DELETE_RECORDS, self.delete_records)

    # ------------------------------------------------------------------ topics
    async def create_topics(self, request) -> dict:
        body = request.body
        dups = _duplicates([t["name"] for t in body["topics"]])
        results = []
        for t in body["topics"]:
            result = {"name": t["name"], "error_code": E.NONE, "error_message": None}
            try:
                if t["name"] in dups:
                    raise InvalidRequestError(
                        f"Create topics request from client `{request.client_id}` contains multiple "
                        f"entries for the following topics: {', '.join(sorted(dups))}")
                configs = {}
                for c in t["configs"]:
                    if c["value"] is None:
                        raise InvalidConfigurationError(f"Null value not supported for topic configs: {c['name']}")
                    configs[c["name"]] = c["value"]
                assignment = None
                if t["assignments"]:
                    if t["num_partitions"] != -1 or t["replication_factor"] != -1:
                        raise InvalidRequestError(
                            "Both numPartitions or replicationFactor and replicasAssignments were set. "
                            "Both cannot be used at the same time.")
                    assignment = {a["partition_index"]: list(a["broker_ids"]) for a in t["assignments"]}
                self.engine.create_topic(t["name"], t["num_partitions"], t["replication_factor"],
                                         assignment, configs, validate_only=body["validate_only"])
            except KafkaError as exc:
                _error(result, exc)
            results.append(result)
        return {"throttle_time_ms": 0, "topics": results}

    async def delete_topics(self, request) -> dict:
        names = request.body["topic_names"]
        dups = _duplicates(names)
        results = []
        for name in names:
            result = {"name": name, "error_code": E.NONE}
            try:
                if name in dups:
                    raise InvalidRequestError("Duplicate topic name.")
                self.engine.delete_topic(name)
                self.broker.data.forget_topic(name)
            except KafkaError as exc:
                result["error_code"] = exc.code
            results.append(result)
        return {"throttle_time_ms": 0, "responses": results}

    async def create_partitions(self, request) -> dict:
        body = request.body
        dups = _duplicates([t["name"] for t in body["topics"]])
        results = []
        for t in body["topics"]:
            result = {"name": t["name"], "error_code": E.NONE, "error_message": None}
            try:
                if t["name"] in dups:
                    raise InvalidRequestError("Duplicate topic name.")
                assignment = None
                if t["assignments"] is not None:
                    assignment = [list(a["broker_ids"]) for a in t["assignments"]]
                self.engine.create_partitions(t["name"], t["count"], assignment,
                                              validate_only=body["validate_only"])
            except KafkaError as exc:
                _error(result, exc)
            results.append(result)
        return {"throttle_time_ms": 0, "results": results}

    # ------------------------------------------------------------------ configs
    async def describe_configs(self, request) -> dict:
        body = request.body
        synonyms = body["include_synonyms"]
        results = []
        for res in body["resources"]:
            result = {"error_code": E.NONE, "error_message": None, "resource_type": res["resource_type"],
                      "resource_name": res["resource_name"], "configs": []}
            keys = res["configuration_keys"]
            try:
                if res["resource_type"] == TOPIC:
                    entries = self._topic_config_entries(res["resource_name"], synonyms)
                elif res["resource_type"] == BROKER:
                    entries = self._broker_config_entries(res["resource_name"], synonyms)
                else:
                    raise InvalidRequestError(f"Unsupported resource type {res['resource_type']}")
                result["configs"] = [e for e in entries if keys is None or e["name"] in keys]
            except KafkaError as exc:
                _error(result, exc)
            results.append(result)
        return {"throttle_time_ms": 0, "results": results}

    def _topic_config_entries(self, name: str, with_synonyms: bool) -> list[dict]:
        overrides = self.engine.topic(name).configs
        values = topic_config.effective(overrides, self.engine.broker_config)
        broker = self.engine.broker_config
        entries = []
        # in the order a Kafka 4.4 (KRaft) broker lists a topic's configs
        order = [n for n in topic_config.DESCRIBE_ORDER if n in topic_config.CONFIGS]
        for key in order + [n for n in topic_config.CONFIG_NAMES if n not in order]:
            multi = topic_config._SYNONYM_CHAINS.get(key)
            chain = [b for b, _ in multi or ()] or \
                [s for s in (topic_config.CONFIGS[key].broker_synonym,) if s]
            # Kafka's ConfigHelper.configSynonyms: the chain's dynamic, then static, then
            # built-in default broker values, then everything before the first synonym itself
            # is dropped. The first of a multi-setting chain (log.retention.ms, log.roll.ms, ...)
            # has no built-in default, so only a static setting of it keeps the chain.
            found = []
            if key == "min.insync.replicas":
                # Kafka 4.x's controller records the cluster-wide min.insync.replicas as a
                # dynamic default broker config (ELR), so every topic reports it as set.
                found.append({"name": key, "value": topic_config.cluster_defaults(broker)[key],
                              "source": DYNAMIC_DEFAULT_BROKER_CONFIG})
            found += [{"name": b, "value": broker[b], "source": STATIC_BROKER_CONFIG}
                      for b in chain if b in broker]
            for b in chain:
                default = _MULTI_DEFAULTS.get(b) if multi else \
                    topic_config.to_kafka_string(key, topic_config.CONFIGS[key].default)
                if default is not None:
                    found.append({"name": b, "value": default, "source": DEFAULT_CONFIG})
            while found and found[0]["name"] != chain[0]:
                found.pop(0)
            synonyms = []
            if key in overrides:
                synonyms.append({"name": key, "value": overrides[key], "source": TOPIC_CONFIG})
            synonyms += found
            source = synonyms[0]["source"] if synonyms else DEFAULT_CONFIG
            entries.append({"name": key, "value": topic_config.to_kafka_string(key, values[key]),
                            "read_only": False, "config_source": source, "is_sensitive": False,
                            "synonyms": synonyms if with_synonyms else []})
        return entries

    def _broker_config_entries(self, name: str, with_synonyms: bool) -> list[dict]:
        from .config import KNOWN

        if name not in ("", str(self.broker.node_id)):
            raise InvalidRequestError(
                f"Unexpected broker id, expected {self.broker.node_id} or empty string, but received {name}")
        config = self.broker.config
        entries = []
        for key in sorted(KNOWN):
            value = config.get(key)
            source = STATIC_BROKER_CONFIG if config.values.get(key) is not None else DEFAULT_CONFIG
            entries.append({"name": key, "value": value, "read_only": True, "config_source": source,
                            "is_sensitive": False,
                            "synonyms": [{"name": key, "value": value, "source": source}]
                            if with_synonyms else []})
        return entries

    async def alter_configs(self, request) -> dict:
        """AlterConfigs: each topic's overrides become exactly the configs given."""
        body = request.body
        results = []
        for res in body["resources"]:
            result = {"error_code": E.NONE, "error_message": None, "resource_type": res["resource_type"],
                      "resource_name": res["resource_name"]}
            try:
                self._check_topic_resource(res)
                self._existing_topic(res["resource_name"])
                new = {}
                for c in res["configs"]:
                    if c["value"] is None:
                        raise InvalidRequestError(f"Null value not supported for : {c['name']}")
                    new[c["name"]] = c["value"]
                self._replace_topic_configs(res["resource_name"], new, body["validate_only"])
            except KafkaError as exc:
                _error(result, exc)
            results.append(result)
        return {"throttle_time_ms": 0, "responses": results}

    async def incremental_alter_configs(self, request) -> dict:
        """IncrementalAlterConfigs: SET, DELETE, APPEND and SUBTRACT on each topic's overrides."""
        body = request.body
        results = []
        for res in body["resources"]:
            result = {"error_code": E.NONE, "error_message": None, "resource_type": res["resource_type"],
                      "resource_name": res["resource_name"]}
            try:
                self._check_topic_resource(res)
                if _duplicates([c["name"] for c in res["configs"]]):
                    raise InvalidRequestError("Error due to duplicate config keys")
                new = dict(self._existing_topic(res["resource_name"]).configs)
                for c in res["configs"]:
                    self._apply_operation(new, c["name"], c["config_operation"], c["value"])
                self._replace_topic_configs(res["resource_name"], new, body["validate_only"])
            except KafkaError as exc:
                _error(result, exc)
            results.append(result)
        return {"throttle_time_ms": 0, "responses": results}

    @staticmethod
    def _apply_operation(configs: dict[str, str], name: str, op: int, value: str | None) -> None:
        key = topic_config.CONFIGS.get(name)
        if key is None and op == DELETE:
            configs.pop(name, None)  # Kafka deletes an unknown name without a word
            return
        if key is None:
            raise InvalidConfigurationError(f"Unknown topic config name: {name}")
        if op == SET:
            if value is None:
                raise InvalidRequestError(f"Null value not supported for : {name}")
            configs[name] = value
        elif op == DELETE:
            configs.pop(name, None)
        elif op in (APPEND, SUBTRACT):
            if key.type != "list":
                verb = "append" if op == APPEND else "subtract"
                raise InvalidConfigurationError(f"Config value {verb} is not allowed for config key: {name}")
            current = configs.get(name, topic_config.to_kafka_string(name, key.default))
            items = [v for v in current.split(",") if v]
            changes = [v.strip() for v in (value or "").split(",") if v.strip()]
            if op == APPEND:
                items += [v for v in changes if v not in items]
            else:
                items = [v for v in items if v not in changes]
            configs[name] = ",".join(items)
        else:
            raise InvalidRequestError(f"Unknown alter config operation {op} for {name}")

    def _check_topic_resource(self, res: dict) -> None:
        if res["resource_type"] == BROKER:
            raise InvalidRequestError("pk's broker has no dynamic broker configs: set them in "
                                      "server.properties and restart it")
        if res["resource_type"] != TOPIC:
            raise InvalidRequestError(f"Unsupported resource type {res['resource_type']}")

    def _existing_topic(self, name: str):
        """The topic's metadata; the controller's error when it does not exist."""
        try:
            return self.engine.topic(name)
        except UnknownTopicOrPartitionError:
            raise UnknownTopicOrPartitionError(f"The topic '{name}' does not exist.") from None

    def _replace_topic_configs(self, name: str, configs: dict[str, str], validate_only: bool) -> None:
        old = self.engine.topic(name).configs  # UnknownTopicOrPartitionError when it does not exist
        topic_config.validate(configs)
        if not validate_only:
            self.engine.alter_topic_configs(name, set_configs=configs,
                                            delete_configs=[k for k in old if k not in configs])

    # ------------------------------------------------------------------ cluster, records
    async def describe_cluster(self, request) -> dict:
        return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None,
                "cluster_id": self.engine.cluster_id, "controller_id": self.broker.node_id,
                "brokers": [{"broker_id": self.broker.node_id, "host": self.broker.host,
                             "port": self.broker.port, "rack": None}],
                "cluster_authorized_operations": INT32_MIN}

    async def delete_records(self, request) -> dict:
        topics = []
        for t in request.body["topics"]:
            parts = []
            for p in t["partitions"]:
                result = {"partition_index": p["partition_index"], "low_watermark": -1,
                          "error_code": E.NONE}
                try:
                    plog = self.broker.data.log(t["name"], p["partition_index"])
                    result["low_watermark"] = plog.delete_records_before(p["offset"])
                except KafkaError as exc:
                    result["error_code"] = exc.code
                parts.append(result)
            topics.append({"name": t["name"], "partitions": parts})
        return {"throttle_time_ms": 0, "topics": topics}
