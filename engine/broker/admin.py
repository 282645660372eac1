"""Admin handlers: CreateTopics, DeleteTopics, CreatePartitions, DescribeConfigs, AlterConfigs,
IncrementalAlterConfigs, DescribeCluster, DeleteRecords, ElectLeaders. Client-metrics resources
(type 16) in the config APIs are client_metrics.py's, group resources (type 32) group_configs.py's.

Each is a thin layer over the engine's admin calls, which take the data directory's admin
lock, so the broker and pk-topics running beside it change topics one at a time. Errors are
reported per topic or per resource with the engine's Kafka error code and message.
"""

from __future__ import annotations

import logging
import uuid

from .. import acls, topic_config, topic_names, validation
from ..errors import (
    InvalidConfigurationError,
    InvalidRequestError,
    KafkaError,
    OffsetOutOfRangeError,
    TopicDeletionDisabledError,
    UnknownTopicOrPartitionError,
)
from ..metadata import uuid_of
from ..protocol import ApiKey
from ..protocol import errors as E
from ..protocol.messages import INT32_MIN
from . import config_docs
from .groups import INVALID_REQUEST_MESSAGE

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32  # ConfigResource.Type
# DescribeConfigs config sources (v1)
TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 2, 3, 4, 5
DYNAMIC_BROKER_LOGGER_CONFIG = 6
# DescribeConfigs config types (v3+), by the type names of topic_config and KNOWN_TYPES
CONFIG_TYPES = {"boolean": 1, "string": 2, "int": 3, "short": 4, "long": 5, "double": 6, "list": 7,
                "class": 8, "password": 9}
BROKERS_ENDPOINT = 1  # DescribeCluster endpoint_type: this is a broker, not a controller
ZERO_UUID = uuid.UUID(int=0)
_AUTHORIZATION_ERRORS = (E.TOPIC_AUTHORIZATION_FAILED, E.GROUP_AUTHORIZATION_FAILED, E.CLUSTER_AUTHORIZATION_FAILED)
# Without an authorizer everything is allowed: the bit field of the operations Kafka defines
# on the cluster (CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS,
# IDEMPOTENT_WRITE, as AclOperation codes).
CLUSTER_AUTHORIZED_OPERATIONS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))
# KafkaConfig's built-in defaults of the broker settings in multi-setting synonym chains (the
# first of each chain has none: it falls back to the next).
_MULTI_DEFAULTS = {"log.roll.hours": "168", "log.roll.jitter.hours": "0", "log.retention.hours": "168",
                   "log.flush.scheduler.interval.ms": str(2**63 - 1)}
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3  # IncrementalAlterConfigs operations
# Python's level names as log4j spells them (Kafka reports log4j levels)
_PYTHON_LEVELS = {"TRACE": 5, "DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING,
                  "ERROR": logging.ERROR, "FATAL": logging.CRITICAL}
_LOG4J_LEVELS = {**{v: k for k, v in _PYTHON_LEVELS.items()}, logging.NOTSET: "TRACE"}


def _error(result: dict, exc: KafkaError) -> dict:
    result["error_code"] = exc.code
    result["error_message"] = str(exc) or None
    return result


def _refusal(code: int, message: str) -> KafkaError:
    """An error the engine has no class for, answered with Kafka's code and text."""
    error = KafkaError(message)
    error.code = code
    return error


def _duplicates(names: list) -> set:
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
        broker.register(ApiKey.ELECT_LEADERS, self.elect_leaders)
        broker.register(ApiKey.DESCRIBE_CLUSTER, self.describe_cluster)
        broker.register(ApiKey.DELETE_RECORDS, self.delete_records)

    # ------------------------------------------------------------------ topics
    async def create_topics(self, request) -> dict:
        body = request.body
        dups = _duplicates([t["name"] for t in body["topics"]])
        guard = self.broker.guard
        # cluster CREATE covers every topic; else each topic needs its own CREATE
        per_topic = guard.enabled and not guard.allows(request, acls.CREATE, acls.CLUSTER, acls.CLUSTER_NAME)
        results = []
        for t in body["topics"]:
            result = {"name": t["name"], "topic_id": ZERO_UUID, "error_code": E.NONE,
                      "error_message": None, "num_partitions": -1, "replication_factor": -1,
                      "configs": []}
            try:
                if t["name"] in dups:
                    raise InvalidRequestError(
                        f"Create topics request from client `{request.client_id}` contains multiple "
                        f"entries for the following topics: {', '.join(sorted(dups))}")
                if per_topic:
                    guard.check(request, acls.CREATE, acls.TOPIC, t["name"])
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
                # validate_only checks everything and creates nothing; the answer is the same
                meta = self.engine.create_topic(t["name"], t["num_partitions"], t["replication_factor"],
                                                assignment, configs, validate_only=body["validate_only"])
                self._describe_created(result, meta)
            except KafkaError as exc:
                _error(result, exc)
            results.append(result)
        if not body["validate_only"]:
            await self._await_leaders([r for r in results if r["error_code"] == E.NONE], body["timeout_ms"])
        return {"throttle_time_ms": 0, "topics": results}

    async def _await_leaders(self, results: list[dict], timeout_ms: int) -> None:
        """In ZooKeeper mode, answer a creation once every new partition has a leader in this
        broker's view (the controller elects them through ZooKeeper), as Kafka 2.8's delayed
        CreateTopics/CreatePartitions do, so that a describe or a produce right after the tool
        returns finds the topic led; at the request's timeout a topic still waiting gets
        REQUEST_TIMED_OUT (it exists: the leaders come later). timeout_ms <= 0: no wait."""
        replication, zookeeper = self.broker.replication, self.broker.zookeeper
        if replication is None or zookeeper is None or timeout_ms <= 0 or not results:
            return
        import asyncio

        def waiting() -> list[dict]:
            out = []
            for r in results:
                try:
                    partitions = self.engine.topic(r["name"]).assignment
                except UnknownTopicOrPartitionError:
                    continue
                if any((s := replication.state(r["name"], p)) is None or s.leader < 0 for p in partitions):
                    out.append(r)
            return out

        zookeeper.wake()  # publish the topic now rather than at the next periodic pass
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_ms / 1000
        while (pending := waiting()) and loop.time() < deadline:
            await asyncio.sleep(0.02)
        for r in pending:
            r["error_code"], r["error_message"] = E.REQUEST_TIMED_OUT, None

    def _describe_created(self, result: dict, meta) -> None:
        """A created topic's id (v7), partitions, replication factor and configs (v5+), the
        configs sorted by name as Kafka's controller lists them."""
        result["topic_id"] = uuid_of(meta.topic_id)
        result["num_partitions"] = meta.partitions
        result["replication_factor"] = meta.replication_factor
        entries = sorted(self._topic_config_entries(meta.configs, False), key=lambda e: e["name"])
        result["configs"] = [{k: e[k] for k in ("name", "value", "read_only", "config_source", "is_sensitive")}
                             for e in entries]

    async def delete_topics(self, request) -> dict:
        """By name (v1-5: topic_names), or by name or by topic id (v6: topics)."""
        version = request.api_version
        if version >= 6:
            wanted = [(t["name"], t["topic_id"]) for t in request.body["topics"]]
        else:
            wanted = [(name, ZERO_UUID) for name in request.body["topic_names"]]
        dup_names = _duplicates([n for n, i in wanted if n is not None and i == ZERO_UUID])
        dup_ids = _duplicates([i for n, i in wanted if n is None and i != ZERO_UUID])
        answered, deleted_ids = set(), set()
        results = []
        for name, topic_id in wanted:
            if (name, topic_id) in answered:
                continue  # one answer per duplicated entry, as Kafka gives
            answered.add((name, topic_id))
            result = {"name": name, "topic_id": topic_id, "error_code": E.NONE, "error_message": None}
            try:
                self._delete_topic(request, result, dup_names, dup_ids, deleted_ids)
            except TopicDeletionDisabledError as exc:
                if version < 3:
                    exc = InvalidRequestError(str(exc))
                _error(result, exc)
            except KafkaError as exc:
                _error(result, exc)
            results.append(result)
        return {"throttle_time_ms": 0, "responses": results}

    def _delete_topic(self, request, result: dict, dup_names: set, dup_ids: set, deleted_ids: set) -> None:
        """Delete the topic `result` names (by name or by id), filling in the other."""
        name, topic_id = result["name"], result["topic_id"]
        if name is None and topic_id == ZERO_UUID:
            raise InvalidRequestError("Neither topic name nor id were specified.")
        if name is not None and topic_id != ZERO_UUID:
            raise InvalidRequestError("You may not specify both topic name and topic id.")
        if name in dup_names:
            raise InvalidRequestError("Duplicate topic name.")
        if topic_id in dup_ids:
            raise InvalidRequestError("Duplicate topic id.")
        guard = self.broker.guard
        if name is None:
            name = self._topic_name(topic_id)
            guard.check(request, acls.DESCRIBE, acls.TOPIC, name)  # ids are no secret; names are
            result["name"] = name  # (a caller who may DESCRIBE it learns the name, refused or not)
        if guard.enabled and not guard.allows(request, acls.DELETE, acls.CLUSTER, acls.CLUSTER_NAME):
            guard.check(request, acls.DELETE, acls.TOPIC, name)
        try:
            meta = self.engine.topic(name)
        except UnknownTopicOrPartitionError:
            raise UnknownTopicOrPartitionError("This server does not host this topic-partition.") from None
        result["topic_id"] = uuid_of(meta.topic_id)
        if result["topic_id"] in deleted_ids:
            raise InvalidRequestError("The provided topic name maps to an ID that was already supplied.")
        self.engine.delete_topic(name)
        self.broker.data.forget_topic(name)
        self.broker.groups.topic_deleted(name)
        result["name"] = name
        deleted_ids.add(result["topic_id"])

    def _topic_name(self, topic_id: uuid.UUID) -> str:
        for name in self.engine.list_topics():
            try:
                if uuid_of(self.engine.topic(name).topic_id) == topic_id:
                    return name
            except UnknownTopicOrPartitionError:
                continue  # deleted meanwhile
        raise _refusal(E.UNKNOWN_TOPIC_ID, "This server does not host this topic ID.")

    async def create_partitions(self, request) -> dict:
        body = request.body
        dups = _duplicates([t["name"] for t in body["topics"]])
        results = []
        for t in body["topics"]:
            result = {"name": t["name"], "error_code": E.NONE, "error_message": None}
            try:
                if t["name"] in dups:
                    raise InvalidRequestError("Duplicate topic name.")
                self.broker.guard.check(request, acls.ALTER, acls.TOPIC, t["name"])
                assignment = None
                if t["assignments"] is not None:
                    assignment = [list(a["broker_ids"]) for a in t["assignments"]]
                self.engine.create_partitions(t["name"], t["count"], assignment,
                                              validate_only=body["validate_only"])
            except UnknownTopicOrPartitionError:
                result["error_code"] = E.UNKNOWN_TOPIC_OR_PARTITION  # (Kafka answers no message)
            except KafkaError as exc:
                _error(result, exc)
            results.append(result)
        if not body["validate_only"]:
            await self._await_leaders([r for r in results if r["error_code"] == E.NONE], body["timeout_ms"])
        return {"throttle_time_ms": 0, "results": results}

    # ------------------------------------------------------------------ configs
    async def describe_configs(self, request) -> dict:
        body = request.body
        synonyms = body["include_synonyms"]
        results = []
        for res in body["resources"]:
            # Kafka answers an empty message where there is none, an unknown topic included
            result = {"error_code": E.NONE, "error_message": "", "resource_type": res["resource_type"],
                      "resource_name": res["resource_name"], "configs": []}
            keys = res["configuration_keys"]
            try:
                self._check_config_access(request, acls.DESCRIBE_CONFIGS, res)
                if res["resource_type"] == TOPIC:
                    validation.validate_topic_name(res["resource_name"])  # INVALID_TOPIC_EXCEPTION
                    try:
                        overrides = self.engine.topic(res["resource_name"]).configs
                    except UnknownTopicOrPartitionError:
                        result["error_code"] = E.UNKNOWN_TOPIC_OR_PARTITION
                        results.append(result)
                        continue
                    entries = self._topic_config_entries(overrides, synonyms)
                elif res["resource_type"] == BROKER:
                    entries = self._broker_config_entries(res["resource_name"], synonyms)
                elif res["resource_type"] == BROKER_LOGGER:
                    entries = self._logger_config_entries(res["resource_name"])
                elif res["resource_type"] == CLIENT_METRICS:
                    entries = self.broker.client_metrics.config_entries(res["resource_name"], synonyms,
                                                                        body["include_documentation"])
                    result["configs"] = [e for e in entries if keys is None or e["name"] in keys]
                    results.append(result)
                    continue
                elif res["resource_type"] == GROUP:
                    entries = self.broker.group_configs.config_entries(res["resource_name"], synonyms,
                                                                       body["include_documentation"])
                    result["configs"] = [e for e in entries if keys is None or e["name"] in keys]
                    results.append(result)
                    continue
                else:
                    raise InvalidRequestError(INVALID_REQUEST_MESSAGE)  # Kafka's text for an unknown type
                result["configs"] = [e for e in entries if keys is None or e["name"] in keys]
                if body["include_documentation"]:
                    for e in result["configs"]:
                        e["documentation"] = config_docs.describe(e["name"], res["resource_type"])
                        if res["resource_type"] == BROKER_LOGGER:
                            e["documentation"] = ""  # Kafka has none for loggers
            except KafkaError as exc:
                _error(result, exc)
            results.append(result)
        # KafkaApis.handleDescribeConfigsRequest answers the authorized resources first, then the refused
        results.sort(key=lambda r: r["error_code"] in _AUTHORIZATION_ERRORS)
        return {"throttle_time_ms": 0, "results": results}

    def _topic_config_entries(self, overrides: dict[str, str], with_synonyms: bool) -> list[dict]:
        dynamic = self.broker.dynamic_config
        return topic_config_entries(overrides, self.engine.broker_config, with_synonyms,
                                    static=self.engine.static_broker_config,
                                    dynamic=(dynamic.per_broker(), dynamic.defaults()))

    def _broker_config_entries(self, name: str, with_synonyms: bool) -> list[dict]:
        """The broker's settings (pk's and Kafka's dynamic ones), each with its synonyms: a
        dynamic value, then the dynamic default, then server.properties, then the built-in
        default (dynamic_config.py); the empty name: the cluster-wide dynamic defaults."""
        if name and not name.lstrip("-").isdigit():
            raise InvalidRequestError(f"Broker id must be an integer, but it is: {name}")
        if name not in ("", str(self.broker.node_id)):
            raise InvalidRequestError(
                f"Unexpected broker id, expected {self.broker.node_id} or empty string, but received {name}")
        dynamic = self.broker.dynamic_config
        if name == "":
            floor = topic_config.cluster_defaults(self.engine.static_broker_config)["min.insync.replicas"]
            return dynamic.default_entries(floor, with_synonyms)
        return dynamic.broker_entries(with_synonyms)

    def _logger_config_entries(self, name: str) -> list[dict]:
        """The broker's loggers and their levels, as Kafka lists its log4j loggers: the root
        logger, then every named logger of this process, sorted."""
        if not name:
            raise InvalidRequestError("Broker id must not be empty")
        if name != str(self.broker.node_id):
            raise InvalidRequestError(
                f"Unexpected broker id, expected {self.broker.node_id} but received {name}")
        loggers = {"root": logging.getLogger().level}
        for logger_name, logger in sorted(logging.root.manager.loggerDict.items()):
            if isinstance(logger, logging.Logger):  # not a placeholder of a dotted parent
                loggers[logger_name] = logger.getEffectiveLevel()
        return [{"name": n, "value": _LOG4J_LEVELS.get(level, logging.getLevelName(level)),
                 "read_only": False, "config_source": DYNAMIC_BROKER_LOGGER_CONFIG, "is_sensitive": False,
                 "synonyms": [], "config_type": 0, "documentation": None}
                for n, level in loggers.items()]

    async def alter_configs(self, request) -> dict:
        """AlterConfigs: each resource's configs (a topic's overrides, a broker's dynamic configs,
        ...) become exactly the configs given."""
        body = request.body
        results = []
        for res in body["resources"]:
            result = {"error_code": E.NONE, "error_message": None, "resource_type": res["resource_type"],
                      "resource_name": res["resource_name"]}
            try:
                self._check_config_access(request, acls.ALTER_CONFIGS, res)
                if res["resource_type"] == CLIENT_METRICS:
                    self.broker.client_metrics.replace(res["resource_name"], res["configs"], body["validate_only"])
                    results.append(result)
                    continue
                if res["resource_type"] == GROUP:
                    self.broker.group_configs.replace(res["resource_name"], res["configs"], body["validate_only"])
                    results.append(result)
                    continue
                if res["resource_type"] == BROKER:
                    await self.broker.dynamic_config.replace(res["resource_name"], res["configs"],
                                                             body["validate_only"])
                    results.append(result)
                    continue
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
        """IncrementalAlterConfigs: SET, DELETE, APPEND and SUBTRACT on each resource's configs."""
        body = request.body
        results = []
        for res in body["resources"]:
            result = {"error_code": E.NONE, "error_message": None, "resource_type": res["resource_type"],
                      "resource_name": res["resource_name"]}
            try:
                self._check_config_access(request, acls.ALTER_CONFIGS, res)
                if res["resource_type"] == BROKER_LOGGER:
                    self._alter_loggers(res, body["validate_only"])
                    results.append(result)
                    continue
                if res["resource_type"] not in (CLIENT_METRICS, GROUP, BROKER):
                    self._check_topic_resource(res)
                if _duplicates([c["name"] for c in res["configs"]]):
                    raise InvalidRequestError("Error due to duplicate config keys")
                if res["resource_type"] == CLIENT_METRICS:
                    self.broker.client_metrics.incremental_alter(res["resource_name"], res["configs"],
                                                                 body["validate_only"])
                    results.append(result)
                    continue
                if res["resource_type"] == GROUP:
                    self.broker.group_configs.incremental_alter(res["resource_name"], res["configs"],
                                                                body["validate_only"])
                    results.append(result)
                    continue
                if res["resource_type"] == BROKER:
                    await self.broker.dynamic_config.incremental_alter(res["resource_name"], res["configs"],
                                                                       body["validate_only"])
                    results.append(result)
                    continue
                new = dict(self._existing_topic(res["resource_name"]).configs)
                for c in res["configs"]:
                    self._apply_operation(new, c["name"], c["config_operation"], c["value"])
                self._replace_topic_configs(res["resource_name"], new, body["validate_only"])
            except KafkaError as exc:
                _error(result, exc)
            results.append(result)
        return {"throttle_time_ms": 0, "responses": results}

    def _alter_loggers(self, res: dict, validate_only: bool) -> None:
        """Log levels of the broker's loggers (SET a log4j level, DELETE: inherit the parent's),
        all checked before any is changed."""
        try:
            node = int(res["resource_name"])
        except ValueError:
            raise InvalidRequestError(f"Node id must be an integer, but it is: {res['resource_name']}") from None
        if node != self.broker.node_id:
            raise InvalidRequestError(f"Unexpected node id. Expected {self.broker.node_id}, but received {node}")
        known = {n for n, lg in logging.root.manager.loggerDict.items() if isinstance(lg, logging.Logger)}
        for c in res["configs"]:
            name, op = c["name"], c["config_operation"]
            if op in (APPEND, SUBTRACT):
                verb = "APPEND" if op == APPEND else "SUBTRACT"
                raise InvalidRequestError(f"{verb} operation is not allowed for the BROKER_LOGGER resource")
            if op not in (SET, DELETE):
                raise InvalidRequestError(f"Unknown operation type {op} is not allowed for the BROKER_LOGGER resource")
            if name != "root" and name not in known:
                raise InvalidConfigurationError(f"Logger {name} does not exist!")
            if op == SET and c["value"] not in _PYTHON_LEVELS:
                raise InvalidConfigurationError(
                    f"Cannot set the log level of {name} to {c['value']} as it is not a supported log "
                    f"level. Valid log levels are {', '.join(sorted(_PYTHON_LEVELS))}")
            if op == DELETE and name == "root":
                raise InvalidRequestError("Removing the log level of the root logger is not allowed")
        if validate_only:
            return
        for c in res["configs"]:
            logger = logging.getLogger() if c["name"] == "root" else logging.getLogger(c["name"])
            logger.setLevel(_PYTHON_LEVELS[c["value"]] if c["config_operation"] == SET else logging.NOTSET)

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
        if res["resource_type"] != TOPIC:
            raise InvalidRequestError(f"Unsupported resource type {res['resource_type']}")

    def _existing_topic(self, name: str):
        """The topic's metadata; the controller's error when it does not exist."""
        if not name:  # (an empty name would mean "every topic's default": Kafka has none)
            raise InvalidRequestError("Default topic resources are not allowed.")
        validation.validate_topic_name(name)  # INVALID_TOPIC_EXCEPTION
        try:
            return self.engine.topic(name)
        except UnknownTopicOrPartitionError:
            raise UnknownTopicOrPartitionError(f"The topic '{name}' does not exist.") from None

    def _check_config_access(self, request, operation: int, res: dict) -> None:
        """DESCRIBE_CONFIGS/ALTER_CONFIGS on the topic, or on the cluster for broker settings."""
        if res["resource_type"] == TOPIC:
            self.broker.guard.check(request, operation, acls.TOPIC, res["resource_name"])
        elif res["resource_type"] in (BROKER, BROKER_LOGGER, CLIENT_METRICS):
            self.broker.guard.check(request, operation, acls.CLUSTER, acls.CLUSTER_NAME)
        elif res["resource_type"] == GROUP:
            self.broker.guard.check(request, operation, acls.GROUP, res["resource_name"])

    def _replace_topic_configs(self, name: str, configs: dict[str, str], validate_only: bool) -> None:
        old = self.engine.topic(name).configs  # UnknownTopicOrPartitionError when it does not exist
        topic_config.validate(configs)
        if not validate_only:
            self.engine.alter_topic_configs(name, set_configs=configs,
                                            delete_configs=[k for k in old if k not in configs])

    # ------------------------------------------------------------------ cluster, records
    async def describe_cluster(self, request) -> dict:
        """The brokers (one, or ZooKeeper mode's registered ones); v1: asked of a broker, a controllers' listing is a mismatch; v2: fenced
        brokers on request (a live broker is never fenced)."""
        body = request.body
        endpoint = body["endpoint_type"]
        answer = {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None,
                  "endpoint_type": BROKERS_ENDPOINT, "cluster_id": self.engine.cluster_id,
                  "controller_id": -1, "brokers": [], "cluster_authorized_operations": INT32_MIN}
        if endpoint not in (1, 2):
            answer["error_code"] = E.INVALID_REQUEST if request.api_version == 0 else E.UNSUPPORTED_ENDPOINT_TYPE
            answer["error_message"] = f"Unsupported endpoint type {endpoint}"
            return answer
        if endpoint != BROKERS_ENDPOINT:
            answer["error_code"] = E.INVALID_REQUEST if request.api_version == 0 else E.MISMATCHED_ENDPOINT_TYPE
            answer["error_message"] = ("The request was sent to an endpoint of type BROKER, but we wanted "
                                       "an endpoint of type CONTROLLER")
            return answer
        # The brokers and controller Metadata reports (in ZooKeeper mode, every registered broker).
        metadata = self.broker.data.metadata
        answer["controller_id"] = metadata.controller_id()
        answer["brokers"] = [{"broker_id": b["node_id"], "host": b["host"], "port": b["port"], "rack": b["rack"],
                              "is_fenced": False} for b in metadata.brokers(request)]
        guard = self.broker.guard
        if body["include_cluster_authorized_operations"]:
            if not guard.enabled:
                answer["cluster_authorized_operations"] = CLUSTER_AUTHORIZED_OPERATIONS
            elif guard.allows(request, acls.DESCRIBE, acls.CLUSTER, acls.CLUSTER_NAME):
                answer["cluster_authorized_operations"] = guard.operations(request, acls.CLUSTER, acls.CLUSTER_NAME)
            else:  # KafkaApis.handleDescribeCluster: asked but not allowed is no operation, not "not asked"
                answer["cluster_authorized_operations"] = 0
        return answer

    async def delete_records(self, request) -> dict:
        topics = []
        waits = []  # replicated partitions: answered once the followers' log starts moved too
        for t in request.body["topics"]:
            parts = []
            for p in t["partitions"]:
                result = {"partition_index": p["partition_index"], "low_watermark": -1,
                          "error_code": E.NONE}
                try:
                    self.broker.guard.check(request, acls.DELETE, acls.TOPIC, t["name"])
                    plog = self.broker.data.log(t["name"], p["partition_index"])
                    state = self.broker.data.replica_state(t["name"], p["partition_index"])
                    if state is None:
                        result["low_watermark"] = plog.delete_records_before(p["offset"])
                    elif state.leader != self.broker.node_id:
                        result["error_code"] = E.NOT_LEADER_OR_FOLLOWER
                    else:
                        waits.append(self._delete_replicated(plog, p["offset"], result))
                except KafkaError as exc:
                    result["error_code"] = exc.code
                parts.append(result)
            topics.append({"name": t["name"], "partitions": parts})
        if waits:
            await self.broker.replication.wait_for_log_start(waits, request.body["timeout_ms"])
        return {"throttle_time_ms": 0, "topics": topics}

    def _delete_replicated(self, plog, offset: int, result: dict):
        """ReplicaManager.deleteRecords on the leader: up to the high watermark (-1: the high
        watermark), then wait for the replicas (replication.wait_for_log_start)."""
        replication = self.broker.replication
        key = (plog.topic, plog.partition)
        hw = replication.high_watermark(key, plog.log_end_offset)
        wanted = hw if offset == -1 else offset
        if wanted < 0 or wanted > hw:
            raise OffsetOutOfRangeError(f"Cannot increment the log start offset to {wanted} of partition "
                                        f"{plog.topic}-{plog.partition} since it is larger than the high "
                                        f"watermark {hw}")
        plog.delete_records_before(wanted)
        return key, wanted, plog, result

    async def elect_leaders(self, request) -> dict:
        """One broker leads every partition and is its only (so preferred) replica: no election
        is ever needed. As Kafka's controller: asked for every partition (null), the answer lists
        each topic but leaves out the partitions that need none; a refusal (cluster ALTER, an
        unknown election type) is the top-level error, repeated for each asked partition."""
        body = request.body
        asked = body["topic_partitions"]
        error, message = E.NONE, None
        if not self.broker.guard.allows(request, acls.ALTER, acls.CLUSTER, acls.CLUSTER_NAME):
            error, message = E.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed."
        elif body.get("election_type", 0) not in (0, 1):  # PREFERRED, UNCLEAN (v0 means PREFERRED)
            error, message = E.INVALID_REQUEST, f"Unknown election type {body['election_type']}"
        if error != E.NONE:
            results = [{"topic": t["topic"], "partition_result": [
                {"partition_id": p, "error_code": error, "error_message": message} for p in t["partitions"]]}
                for t in asked or []]
            return {"throttle_time_ms": 0, "error_code": error, "replica_election_results": results}
        if self.broker.zookeeper is not None:
            return await self._cluster_election(asked, body.get("election_type", 0) == 1)
        if asked is None:
            results = [{"topic": name, "partition_result": []} for name in self.engine.list_topics()]
        else:
            results = [{"topic": t["topic"], "partition_result": [self._election(t["topic"], p) for p in t["partitions"]]}
                       for t in asked]
        return {"throttle_time_ms": 0, "error_code": E.NONE, "replica_election_results": results}

    async def _cluster_election(self, asked, unclean: bool) -> dict:
        """ZooKeeper mode: the controller elects (controller.py), as Kafka 2.8's does; another
        broker answers NOT_CONTROLLER for each partition. Asked for every partition (null), the
        answer lists them all, the ones that need no election included (Kafka 2.8)."""
        zk = self.broker.zookeeper
        if asked is None:
            wanted = []
            for name in self.engine.list_topics():
                try:
                    if not topic_names.is_internal(name):
                        wanted += [(name, p) for p in sorted(self.engine.topic(name).assignment)]
                except UnknownTopicOrPartitionError:
                    continue  # deleted meanwhile
        else:
            wanted = [(t["topic"], p) for t in asked for p in t["partitions"]]
        if zk.is_controller:
            outcome = await zk.elect_leaders(wanted, unclean)
        else:
            outcome = {key: (E.NOT_CONTROLLER, None) for key in wanted}
        by_topic: dict[str, list[dict]] = {}
        for (topic, p) in wanted:
            code, message = outcome[(topic, p)]
            by_topic.setdefault(topic, []).append({"partition_id": p, "error_code": code, "error_message": message})
        return {"throttle_time_ms": 0, "error_code": E.NONE,
                "replica_election_results": [{"topic": t, "partition_result": ps} for t, ps in by_topic.items()]}

    def _election(self, topic: str, partition: int) -> dict:
        result = {"partition_id": partition, "error_code": E.ELECTION_NOT_NEEDED, "error_message": None}
        try:
            meta = self.engine.topic(topic)
        except UnknownTopicOrPartitionError:
            meta = None
        if meta is None:
            result.update(error_code=E.UNKNOWN_TOPIC_OR_PARTITION, error_message=f"No such topic as {topic}")
        elif partition not in meta.assignment:
            result.update(error_code=E.UNKNOWN_TOPIC_OR_PARTITION,
                          error_message=f"No such partition as {topic}-{partition}")
        return result


# ---------------------------------------------------------------- config entries
def topic_config_entries(overrides: dict[str, str], broker: dict[str, str], with_synonyms: bool, *,
                         static: dict[str, str] | None = None,
                         dynamic: tuple[dict, dict] = ({}, {})) -> list[dict]:
    """A topic's DescribeConfigs entries, given its overrides and the broker's settings, in the
    order Kafka lists them (the broker's handler, and kafka-configs on the bundled engine).
    `broker`: the settings in force; `static`: those of server.properties (default: the same);
    `dynamic`: the broker's dynamic configs and the cluster-wide dynamic defaults."""
    values = topic_config.effective(overrides, broker)
    static = broker if static is None else static
    per_broker, defaults = dynamic
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
        if key == "min.insync.replicas" and key not in per_broker and key not in defaults:
            # Kafka 4.x's controller records the cluster-wide min.insync.replicas as a
            # dynamic default broker config (ELR), so every topic reports it as set.
            found.append({"name": key, "value": topic_config.cluster_defaults(broker)[key],
                          "source": DYNAMIC_DEFAULT_BROKER_CONFIG})
        for settings, source in ((per_broker, DYNAMIC_BROKER_CONFIG), (defaults, DYNAMIC_DEFAULT_BROKER_CONFIG),
                                 (static, STATIC_BROKER_CONFIG)):
            found += [{"name": b, "value": settings[b], "source": source} for b in chain if b in settings]
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
                        "synonyms": synonyms if with_synonyms else [],
                        "config_type": CONFIG_TYPES.get(topic_config.CONFIGS[key].type, 0),
                        "documentation": None})
    return entries


def cluster_default_entries(broker: dict[str, str], with_synonyms: bool) -> list[dict]:
    """The cluster-wide dynamic broker defaults (the empty broker name): only the
    min.insync.replicas that Kafka 4's controller records for ELR."""
    value = topic_config.cluster_defaults(broker)["min.insync.replicas"]
    synonym = {"name": "min.insync.replicas", "value": value, "source": DYNAMIC_DEFAULT_BROKER_CONFIG}
    return [{"name": "min.insync.replicas", "value": value, "read_only": False,
             "config_source": DYNAMIC_DEFAULT_BROKER_CONFIG, "is_sensitive": False,
             "synonyms": [synonym] if with_synonyms else [], "config_type": CONFIG_TYPES["int"],
             "documentation": None}]
