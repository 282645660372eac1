"""The admin APIs of pk-server-start at Kafka 4.4's versions, with real clients (confluent-kafka's
AdminClient, kafka-python's KafkaAdminClient) and, for the fields of particular versions, with
bare protocol requests (CreateTopics v7, DeleteTopics v6, DescribeConfigs v4, DescribeCluster
v2, DescribeLogDirs v4-5, DescribeProducers v0). One broker serves the module.
"""

from __future__ import annotations

import os
import time
import uuid

import pytest

from conftest import BrokerProcess, ProtocolClient
from pk.engine.engine import Engine
from pk.engine.metadata import uuid_of
from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import (  # noqa: E402
    AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType,
)

TIMEOUT = 10
ZERO = uuid.UUID(int=0)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    b = BrokerProcess(str(tmp_path_factory.mktemp("admin") / "data"), {"num.partitions": "2"}).start()
    try:
        yield b
    finally:
        b.stop()


@pytest.fixture(scope="module")
def admin(server):
    return AdminClient({"bootstrap.servers": server.bootstrap})


@pytest.fixture
def client(server):
    c = Client(server.port)
    yield c
    c.close()


class Client(ProtocolClient):
    """The shared bare protocol client, with this file's shortcut."""

    def create(self, version: int, *topics: dict, validate_only: bool = False) -> list[dict]:
        full = [{"num_partitions": -1, "replication_factor": -1, "assignments": [], "configs": [], **t}
                for t in topics]
        return self.call(ApiKey.CREATE_TOPICS, version, {"topics": full, "timeout_ms": 10000,
                                                          "validate_only": validate_only})["topics"]


def topics(admin) -> set[str]:
    return set(admin.list_topics(timeout=TIMEOUT).topics)


def topic_id(server, name: str) -> uuid.UUID:
    with Engine(server.data_dir) as engine:
        return uuid_of(engine.topic(name).topic_id)


# --------------------------------------------------------------------------- advertised ranges
def test_api_versions_advertise_kafka_44_admin_ranges(client):
    answer = client.call(ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
    ranges = {k["api_key"]: (k["min_version"], k["max_version"]) for k in answer["api_keys"]}
    assert {name: ranges[key] for name, key in [
        ("CreateTopics", 19), ("DeleteTopics", 20), ("DeleteRecords", 21), ("DescribeConfigs", 32),
        ("AlterConfigs", 33), ("DescribeLogDirs", 35), ("CreatePartitions", 37),
        ("IncrementalAlterConfigs", 44), ("DescribeCluster", 60), ("DescribeProducers", 61)]} == {
        "CreateTopics": (2, 7), "DeleteTopics": (1, 6), "DeleteRecords": (0, 2), "DescribeConfigs": (1, 4),
        "AlterConfigs": (0, 2), "DescribeLogDirs": (1, 5), "CreatePartitions": (0, 3),
        "IncrementalAlterConfigs": (0, 1), "DescribeCluster": (0, 2), "DescribeProducers": (0, 0)}


# --------------------------------------------------------------------------- CreateTopics
def test_create_topics_v7_answers_id_partitions_and_configs(server, client):
    [result] = client.create(7, {"name": "c7", "num_partitions": 3,
                                 "configs": [{"name": "retention.ms", "value": "3600000"}]})
    assert result["error_code"] == E.NONE and result["error_message"] is None
    assert result["topic_id"] == topic_id(server, "c7") != ZERO
    assert (result["num_partitions"], result["replication_factor"]) == (3, 1)
    configs = {c["name"]: c for c in result["configs"]}
    assert [c["name"] for c in result["configs"]] == sorted(configs)
    assert configs["retention.ms"] == {"name": "retention.ms", "value": "3600000", "read_only": False,
                                       "config_source": 1, "is_sensitive": False}
    assert configs["cleanup.policy"]["value"] == "delete"
    assert configs["cleanup.policy"]["config_source"] in (4, 5)  # server.properties, else the default


def test_create_topics_minus_one_takes_the_broker_defaults(server, client):
    [result] = client.create(5, {"name": "cdefault"})
    assert result["error_code"] == E.NONE
    assert (result["num_partitions"], result["replication_factor"]) == (2, 1)  # num.partitions=2
    with Engine(server.data_dir) as engine:
        assert engine.topic("cdefault").partitions == 2


def test_create_topics_validate_only_creates_nothing_and_reports_the_same_errors(server, admin, client):
    [ok] = client.create(7, {"name": "cvalid", "num_partitions": 4}, validate_only=True)
    assert ok["error_code"] == E.NONE and ok["num_partitions"] == 4 and ok["configs"]
    assert "cvalid" not in topics(admin)
    for f in admin.create_topics([NewTopic("cvalid2", 1, 1)], validate_only=True).values():
        assert f.result(TIMEOUT) is None
    assert "cvalid2" not in topics(admin)
    client.create(7, {"name": "cexists"})
    for validate_only in (True, False):
        [dup] = client.create(7, {"name": "cexists"}, validate_only=validate_only)
        assert (dup["error_code"], dup["error_message"]) == (E.TOPIC_ALREADY_EXISTS, "Topic 'cexists' already exists.")
        assert (dup["topic_id"], dup["num_partitions"], dup["replication_factor"]) == (ZERO, -1, -1)
        [bad] = client.create(7, {"name": "cbad", "configs": [{"name": "retention.ms", "value": "soon"}]},
                              validate_only=validate_only)
        assert bad["error_code"] == E.INVALID_CONFIG
        assert bad["error_message"] == "Invalid value soon for configuration retention.ms: Not a number of type LONG"
        [rf] = client.create(7, {"name": "crf", "replication_factor": 3}, validate_only=validate_only)
        assert rf["error_code"] == E.INVALID_REPLICATION_FACTOR
        assert rf["error_message"].startswith("Unable to replicate the partition 3 time(s)")
    assert not {"cbad", "crf"} & topics(admin)


def test_create_topics_duplicates_in_one_request(client):
    results = client.create(7, {"name": "cdup"}, {"name": "cdup"})
    assert [r["error_code"] for r in results] == [E.INVALID_REQUEST] * 2
    assert "contains multiple entries for the following topics: cdup" in results[0]["error_message"]


def test_kafka_python_create_topics_with_defaults(server):
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, request_timeout_ms=10000)
    try:
        admin.create_topics({"kp-default": {}, "kp-three": {"num_partitions": 3,
                                                             "configs": {"cleanup.policy": "compact"}}})
        described = {t["name"]: t for t in admin.describe_topics(["kp-default", "kp-three"])}
        assert len(described["kp-default"]["partitions"]) == 2
        assert len(described["kp-three"]["partitions"]) == 3
        tid = topic_id(server, "kp-three")
        answer = admin.delete_topics([tid])  # by id (DeleteTopics v6)
        [(name, id_text, code)] = [(t["name"], t["topic_id"], t["error_code"]) for t in answer["topics"]]
        assert (name, uuid.UUID(str(id_text)), code) == ("kp-three", tid, 0)
        assert "kp-three" not in admin.list_topics()
    finally:
        admin.close()


# --------------------------------------------------------------------------- DeleteTopics
def test_delete_topics_v6_by_name_and_by_id(server, admin, client):
    client.create(7, {"name": "dname"}, {"name": "did"})
    did = topic_id(server, "did")
    dname = topic_id(server, "dname")
    answer = client.call(ApiKey.DELETE_TOPICS, 6, {"topics": [{"name": "dname", "topic_id": ZERO},
                                                              {"name": None, "topic_id": did}],
                                                   "timeout_ms": 10000})
    assert sorted(((r["name"], r["topic_id"], r["error_code"], r["error_message"]) for r in answer["responses"]),
                  key=str) == sorted([("dname", dname, 0, None), ("did", did, 0, None)], key=str)
    assert not {"dname", "did"} & topics(admin)
    gone = uuid.uuid4()
    answer = client.call(ApiKey.DELETE_TOPICS, 6, {"topics": [
        {"name": None, "topic_id": gone}, {"name": "nosuch", "topic_id": ZERO},
        {"name": None, "topic_id": ZERO}, {"name": "both", "topic_id": gone}], "timeout_ms": 1000})
    assert [(r["name"], r["topic_id"], r["error_code"], r["error_message"]) for r in answer["responses"]] == [
        (None, gone, E.UNKNOWN_TOPIC_ID, "This server does not host this topic ID."),
        ("nosuch", ZERO, E.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition."),
        (None, ZERO, E.INVALID_REQUEST, "Neither topic name nor id were specified."),
        ("both", gone, E.INVALID_REQUEST, "You may not specify both topic name and topic id.")]


def test_delete_topics_old_versions_by_name(server, admin, client):
    client.create(7, {"name": "dold"})
    answer = client.call(ApiKey.DELETE_TOPICS, 1, {"topic_names": ["dold", "dold2"], "timeout_ms": 1000})
    assert [(r["name"], r["error_code"]) for r in answer["responses"]] == [
        ("dold", E.NONE), ("dold2", E.UNKNOWN_TOPIC_OR_PARTITION)]
    client.create(7, {"name": "dconf"})
    for f in admin.delete_topics(["dconf"]).values():
        assert f.result(TIMEOUT) is None
    assert not {"dold", "dconf"} & topics(admin)


# --------------------------------------------------------------------------- configs
def test_describe_configs_v4_types_documentation_and_synonyms(client):
    client.create(7, {"name": "dc", "configs": [{"name": "retention.ms", "value": "3600000"}]})
    body = {"resources": [{"resource_type": 2, "resource_name": "dc", "configuration_keys": None}],
            "include_synonyms": True, "include_documentation": True}
    [result] = client.call(ApiKey.DESCRIBE_CONFIGS, 4, body)["results"]
    assert result["error_code"] == E.NONE
    configs = {c["name"]: c for c in result["configs"]}
    retention = configs["retention.ms"]
    assert (retention["value"], retention["config_source"], retention["config_type"]) == ("3600000", 1, 5)
    assert retention["synonyms"][0] == {"name": "retention.ms", "value": "3600000", "source": 1}
    assert "retention" in retention["documentation"]
    assert configs["cleanup.policy"]["config_type"] == 7  # LIST
    assert configs["preallocate"]["config_type"] == 1  # BOOLEAN
    assert configs["min.cleanable.dirty.ratio"]["config_type"] == 6  # DOUBLE
    body["include_documentation"] = False
    [plain] = client.call(ApiKey.DESCRIBE_CONFIGS, 3, body)["results"]
    assert all(c["documentation"] is None for c in plain["configs"])


def test_describe_configs_broker_and_broker_logger(server, client):
    body = {"resources": [{"resource_type": 4, "resource_name": "0", "configuration_keys": ["num.partitions"]},
                          {"resource_type": 8, "resource_name": "0", "configuration_keys": None},
                          {"resource_type": 8, "resource_name": "", "configuration_keys": None},
                          {"resource_type": 8, "resource_name": "7", "configuration_keys": None}],
            "include_synonyms": False, "include_documentation": False}
    broker, logger, empty, other = client.call(ApiKey.DESCRIBE_CONFIGS, 4, body)["results"]
    assert [(c["name"], c["value"], c["config_source"], c["config_type"]) for c in broker["configs"]] == [
        ("num.partitions", "2", 4, 3)]
    levels = {c["name"]: c for c in logger["configs"]}
    assert levels["root"]["config_source"] == 6 and levels["root"]["value"] in ("INFO", "WARN", "DEBUG", "ERROR")
    assert (empty["error_code"], empty["error_message"]) == (E.INVALID_REQUEST, "Broker id must not be empty")
    assert (other["error_code"], other["error_message"]) == (
        E.INVALID_REQUEST, "Unexpected broker id, expected 0 but received 7")


def test_incremental_alter_configs_on_list_configs(admin, client):
    client.create(7, {"name": "inc"})
    resource = ConfigResource(ResourceType.TOPIC, "inc")

    def alter(*entries):
        for f in admin.incremental_alter_configs([ConfigResource(
                ResourceType.TOPIC, "inc", incremental_configs=list(entries))]).values():
            f.result(TIMEOUT)
        return list(admin.describe_configs([resource]).values())[0].result(TIMEOUT)

    configs = alter(ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND))
    assert configs["cleanup.policy"].value == "delete,compact"
    configs = alter(ConfigEntry("cleanup.policy", "delete", incremental_operation=AlterConfigOpType.SUBTRACT),
                    ConfigEntry("retention.ms", "1000", incremental_operation=AlterConfigOpType.SET))
    assert (configs["cleanup.policy"].value, configs["retention.ms"].value) == ("compact", "1000")
    configs = alter(ConfigEntry("cleanup.policy", None, incremental_operation=AlterConfigOpType.DELETE))
    assert configs["cleanup.policy"].value == "delete" and configs["retention.ms"].value == "1000"
    with pytest.raises(confluent_kafka.KafkaException, match="not allowed for config key: retention.ms"):
        alter(ConfigEntry("retention.ms", "5", incremental_operation=AlterConfigOpType.APPEND))
    # v1 (flexible) through the codec
    answer = client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
        {"resource_type": 2, "resource_name": "inc", "configs": [
            {"name": "retention.ms", "config_operation": 1, "value": None}]}]})
    assert answer["responses"][0]["error_code"] == E.NONE


def test_alter_configs_v2_and_create_partitions_v3_and_delete_records_v2(server, client):
    client.create(7, {"name": "flex", "num_partitions": 1})
    answer = client.call(ApiKey.ALTER_CONFIGS, 2, {"validate_only": False, "resources": [
        {"resource_type": 2, "resource_name": "flex", "configs": [{"name": "segment.ms", "value": "100000"}]}]})
    assert answer["responses"][0]["error_code"] == E.NONE
    answer = client.call(ApiKey.CREATE_PARTITIONS, 3, {"topics": [{"name": "flex", "count": 3, "assignments": None},
                                                                  {"name": "nope", "count": 3, "assignments": None}],
                                                       "timeout_ms": 1000, "validate_only": False})
    assert [(r["name"], r["error_code"]) for r in answer["results"]] == [
        ("flex", E.NONE), ("nope", E.UNKNOWN_TOPIC_OR_PARTITION)]
    producer = Producer({"bootstrap.servers": server.bootstrap})
    for i in range(5):
        producer.produce("flex", b"v%d" % i, partition=0)
    producer.flush(TIMEOUT)
    answer = client.call(ApiKey.DELETE_RECORDS, 2, {"timeout_ms": 1000, "topics": [
        {"name": "flex", "partitions": [{"partition_index": 0, "offset": 3}, {"partition_index": 9, "offset": 1}]}]})
    assert [(p["partition_index"], p["low_watermark"], p["error_code"]) for p in answer["topics"][0]["partitions"]] == [
        (0, 3, E.NONE), (9, -1, E.UNKNOWN_TOPIC_OR_PARTITION)]
    with Engine(server.data_dir) as engine:
        assert engine.topic("flex").configs == {"segment.ms": "100000"}
        assert engine.topic("flex").partitions == 3


# --------------------------------------------------------------------------- DescribeCluster
def test_describe_cluster_v2(server, client, admin):
    for version in (0, 1, 2):
        answer = client.call(ApiKey.DESCRIBE_CLUSTER, version, {
            "include_cluster_authorized_operations": True, "endpoint_type": 1, "include_fenced_brokers": True})
        assert answer["error_code"] == E.NONE and answer["controller_id"] == 0
        assert [(b["broker_id"], b["port"], b["is_fenced"]) for b in answer["brokers"]] == [(0, server.port, False)]
        assert answer["cluster_authorized_operations"] == 0b1111110100000
    answer = client.call(ApiKey.DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": False,
                                                      "endpoint_type": 2})
    assert answer["error_code"] == E.MISMATCHED_ENDPOINT_TYPE
    answer = client.call(ApiKey.DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": False,
                                                      "endpoint_type": 9})
    assert (answer["error_code"], answer["error_message"]) == (E.UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 9")
    cluster = admin.describe_cluster(include_authorized_operations=True).result(TIMEOUT)
    assert [n.id for n in cluster.nodes] == [0] and cluster.controller.id == 0


# --------------------------------------------------------------------------- DescribeLogDirs
def test_describe_log_dirs(server, client):
    client.create(7, {"name": "ld", "num_partitions": 2})
    producer = Producer({"bootstrap.servers": server.bootstrap})
    for i in range(20):
        producer.produce("ld", b"x" * 100, partition=1)
    producer.flush(TIMEOUT)
    answer = client.call(ApiKey.DESCRIBE_LOG_DIRS, 4, {"topics": [{"topic": "ld", "partitions": [0, 1, 7]},
                                                                  {"topic": "nosuch", "partitions": [0]}]})
    assert answer["error_code"] == E.NONE
    [result] = answer["results"]
    assert result["error_code"] == E.NONE and result["log_dir"] == os.path.abspath(server.data_dir)
    assert 0 < result["usable_bytes"] <= result["total_bytes"]
    [topic] = result["topics"]
    sizes = {p["partition_index"]: p["partition_size"] for p in topic["partitions"]}
    assert topic["name"] == "ld" and sizes[0] == 0
    assert sizes[1] == os.path.getsize(os.path.join(server.data_dir, "ld-1", "00000000000000000000.log")) > 2000
    assert all(p["offset_lag"] == 0 and not p["is_future_key"] for p in topic["partitions"])
    everything = client.call(ApiKey.DESCRIBE_LOG_DIRS, 5, {"topics": None})["results"][0]
    assert {"ld", "__consumer_offsets"} <= {t["name"] for t in everything["topics"]}
    assert everything["is_cordoned"] is False
    old = client.call(ApiKey.DESCRIBE_LOG_DIRS, 1, {"topics": [{"topic": "ld", "partitions": [1]}]})
    assert old["results"][0]["topics"][0]["partitions"][0]["partition_size"] == sizes[1]


def test_kafka_python_describe_log_dirs(server, client):
    from kafka.admin import KafkaAdminClient

    client.create(7, {"name": "kld", "num_partitions": 1})
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, request_timeout_ms=10000)
    try:
        answer = admin.describe_log_dirs({"kld": [0]})
        text = repr(answer)
        assert "kld" in text and os.path.abspath(server.data_dir) in text
    finally:
        admin.close()


# --------------------------------------------------------------------------- DescribeProducers
def test_describe_producers(server, client):
    client.create(7, {"name": "dp", "num_partitions": 2})
    producer = Producer({"bootstrap.servers": server.bootstrap, "enable.idempotence": True})
    before = int(time.time() * 1000)
    for i in range(7):
        producer.produce("dp", b"v%d" % i, partition=0)
        producer.flush(TIMEOUT)  # one batch each: sequences 0..6
    answer = client.call(ApiKey.DESCRIBE_PRODUCERS, 0, {"topics": [
        {"name": "dp", "partition_indexes": [0, 1, 5]}, {"name": "nosuch", "partition_indexes": [0]}]})
    dp, nosuch = answer["topics"]
    p0, p1, p5 = dp["partitions"]
    assert p0["error_code"] == E.NONE
    [state] = p0["active_producers"]
    assert state["producer_id"] >= 0 and state["producer_epoch"] == 0
    assert state["last_sequence"] == 6
    assert before - 1000 <= state["last_timestamp"] <= int(time.time() * 1000) + 1000
    assert (state["coordinator_epoch"], state["current_txn_start_offset"]) == (-1, -1)
    assert (p1["error_code"], p1["active_producers"]) == (E.NONE, [])
    assert p5["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
    assert nosuch["partitions"][0]["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION


def test_kafka_python_describe_producers(server, client):
    from kafka import TopicPartition as KTopicPartition
    from kafka.admin import KafkaAdminClient

    client.create(7, {"name": "kdp", "num_partitions": 1})
    producer = Producer({"bootstrap.servers": server.bootstrap, "enable.idempotence": True})
    producer.produce("kdp", b"v", partition=0)
    producer.flush(TIMEOUT)
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, request_timeout_ms=10000)
    try:
        states = admin.describe_producers([KTopicPartition("kdp", 0)])
        [state] = list(states.values())
        text = repr(state)
        assert "last_sequence=0" in text.replace(" ", "") or "'last_sequence': 0" in text, text
    finally:
        admin.close()


def test_incremental_alter_configs_of_broker_loggers(client):
    def alter(*configs, name="0"):
        answer = client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
            {"resource_type": 8, "resource_name": name, "configs": [
                {"name": n, "config_operation": op, "value": v} for n, op, v in configs]}]})
        return answer["responses"][0]["error_code"], answer["responses"][0]["error_message"]

    def levels():
        body = {"resources": [{"resource_type": 8, "resource_name": "0", "configuration_keys": None}],
                "include_synonyms": False, "include_documentation": False}
        return {c["name"]: c["value"] for c in client.call(ApiKey.DESCRIBE_CONFIGS, 4, body)["results"][0]["configs"]}

    assert "pk.broker" in levels()
    assert alter(("pk.broker", 0, "DEBUG")) == (E.NONE, None)
    assert levels()["pk.broker"] == "DEBUG"
    assert alter(("pk.broker", 1, None)) == (E.NONE, None)  # back to the parent's level
    now = levels()
    assert now["pk.broker"] == now.get("pk", now["root"])
    assert alter(("pk.broker", 0, "LOUD")) == (
        E.INVALID_CONFIG, "Cannot set the log level of pk.broker to LOUD as it is not a supported log level. "
                          "Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN")
    assert alter(("no.such.logger", 0, "INFO")) == (E.INVALID_CONFIG, "Logger no.such.logger does not exist!")
    assert alter(("root", 1, None)) == (E.INVALID_REQUEST, "Removing the log level of the root logger is not allowed")
    assert alter(("pk.broker", 2, "INFO")) == (
        E.INVALID_REQUEST, "APPEND operation is not allowed for the BROKER_LOGGER resource")
    assert alter(("pk.broker", 0, "INFO"), name="3") == (
        E.INVALID_REQUEST, "Unexpected node id. Expected 0, but received 3")


def test_describe_configs_messages_and_broker_synonyms_as_kafka_answers(client):
    body = {"resources": [{"resource_type": 2, "resource_name": "nosuch-topic", "configuration_keys": None},
                          {"resource_type": 4, "resource_name": "0",
                           "configuration_keys": ["num.partitions", "log.retention.ms", "log.dirs"]},
                          {"resource_type": 4, "resource_name": "", "configuration_keys": None}],
            "include_synonyms": True, "include_documentation": False}
    missing, broker, defaults = client.call(ApiKey.DESCRIBE_CONFIGS, 4, body)["results"]
    assert (missing["error_code"], missing["error_message"], missing["configs"]) == (E.UNKNOWN_TOPIC_OR_PARTITION, "", [])
    assert broker["error_code"] == E.NONE and broker["error_message"] == ""
    entries = {c["name"]: c for c in broker["configs"]}
    assert entries["num.partitions"]["synonyms"] == [{"name": "num.partitions", "value": "2", "source": 4},
                                                     {"name": "num.partitions", "value": "1", "source": 5}]
    assert (entries["log.retention.ms"]["value"], entries["log.retention.ms"]["synonyms"]) == (None, [])
    assert entries["log.dirs"]["config_type"] == 7  # LIST
    assert [(c["name"], c["value"], c["config_source"]) for c in defaults["configs"]] == [
        ("min.insync.replicas", "1", 3)]
