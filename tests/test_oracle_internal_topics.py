"""The internal topics (__consumer_offsets, __transaction_state) after a client deletes them,
against a real Kafka 4.4 broker of their own (`kafka_tuned`: deleting the shared broker's internal
topics would disturb other tests). Kafka 4.4 accepts DeleteTopics and CreateTopics
of an internal topic; a Metadata request that may auto-create it creates it again as its
coordinator would (offsets.topic.num.partitions / transaction.state.log.num.partitions, not
num.partitions), and so does FindCoordinator. Both brokers run with the same small partition
counts, distinct from num.partitions (1), so that the counts tell which setting was used."""

from __future__ import annotations

import uuid

import pytest

from conftest import KAFKA_TUNED, BrokerProcess, ProtocolClient
from pk.engine import protocol as kp
from waits import wait_for

A = kp.ApiKey
E = kp.errors
ZERO = uuid.UUID(int=0)
SETTINGS = KAFKA_TUNED
COORDINATOR = {"__consumer_offsets": 0, "__transaction_state": 1}  # FindCoordinator key types


@pytest.fixture(scope="module")
def pk_server(tmp_path_factory):
    b = BrokerProcess(str(tmp_path_factory.mktemp("oracle-internal") / "data"), dict(SETTINGS)).start()
    yield b
    b.stop()


def metadata(client: ProtocolClient, name: str, auto: bool) -> tuple:
    answer = client.call(A.METADATA, 12, {"topics": [{"name": name, "topic_id": None}],
                                          "allow_auto_topic_creation": auto,
                                          "include_topic_authorized_operations": False})
    topic = answer["topics"][0]
    return E.error_name(topic["error_code"]), len(topic["partitions"]), topic["is_internal"]


def settled(client: ProtocolClient, name: str) -> tuple:
    """The topic's metadata once it exists with every partition led (creation is asynchronous
    on Kafka: LEADER_NOT_AVAILABLE and UNKNOWN_TOPIC_OR_PARTITION are "not yet")."""
    def ready():
        answer = client.call(A.METADATA, 12, {"topics": [{"name": name, "topic_id": None}],
                                              "allow_auto_topic_creation": False,
                                              "include_topic_authorized_operations": False})
        topic = answer["topics"][0]
        if topic["error_code"] != E.NONE or any(p["leader_id"] < 0 or p["error_code"] != E.NONE
                                                for p in topic["partitions"]):
            return None
        return E.error_name(topic["error_code"]), len(topic["partitions"]), topic["is_internal"]
    return wait_for(ready, 30, f"{name} created")


def find_coordinator(client: ProtocolClient, name: str) -> str:
    def found():
        c = client.call(A.FIND_COORDINATOR, 4, {"key_type": COORDINATOR[name], "coordinator_keys": ["k"]})[
            "coordinators"][0]
        return c["error_code"] != E.COORDINATOR_NOT_AVAILABLE and E.error_name(c["error_code"])
    return wait_for(found, 30, f"a coordinator on {name}")


def delete(client: ProtocolClient, name: str) -> tuple:
    answer = client.call(A.DELETE_TOPICS, 6, {"topics": [{"name": name, "topic_id": ZERO}], "timeout_ms": 10000})
    r = answer["responses"][0]
    wait_for(lambda: metadata(client, name, False)[0] == "UNKNOWN_TOPIC_OR_PARTITION", 30, f"{name} deleted")
    return E.error_name(r["error_code"]), r["error_message"]


def create(client: ProtocolClient, name: str, partitions: int) -> tuple:
    answer = client.call(A.CREATE_TOPICS, 7, {"topics": [{"name": name, "num_partitions": partitions,
                                                          "replication_factor": 1, "assignments": [], "configs": []}],
                                              "timeout_ms": 10000, "validate_only": False})
    t = answer["topics"][0]
    return E.error_name(t["error_code"]), t["error_message"], t["num_partitions"]


def life_of(client: ProtocolClient, name: str) -> list:
    """Created by its coordinator, deleted, created again by Metadata; deleted, created by
    CreateTopics with 3 partitions, CreateTopics again; deleted, created again by FindCoordinator."""
    seen = [find_coordinator(client, name), settled(client, name)]
    seen += [delete(client, name), metadata(client, name, True), settled(client, name), find_coordinator(client, name)]
    seen += [delete(client, name), create(client, name, 3), settled(client, name), create(client, name, 3)]
    seen += [delete(client, name), find_coordinator(client, name), settled(client, name)]
    return seen


@pytest.mark.parametrize("name", ["__consumer_offsets", "__transaction_state"])
def test_deleted_internal_topic_comes_back_with_its_own_partition_count(kafka_tuned, pk_server, name):
    with ProtocolClient(kafka_tuned.bootstrap) as k:
        on_kafka = life_of(k, name)
    with ProtocolClient(pk_server.bootstrap) as p:
        on_pk = life_of(p, name)
    assert on_pk == on_kafka
    count = int(SETTINGS["offsets.topic.num.partitions" if name == "__consumer_offsets"
                         else "transaction.state.log.num.partitions"])
    assert on_kafka[4] == ("NONE", count, True)  # re-created by Metadata with the coordinator's count
    # ... and pk keeps it across a restart
    pk_server.stop()
    pk_server.start()
    with ProtocolClient(pk_server.bootstrap) as p:
        assert settled(p, name) == ("NONE", count, True)
