"""The group coordinator follows the leadership of `__consumer_offsets` across three
pk-server-start brokers coordinated by a real ZooKeeper (docs/replication.md, "Coordinators"):
FindCoordinator creates the internal topics replicated, names the leader of the key's
partition through every broker, the other brokers answer NOT_COORDINATOR, and a consumer
group resumes from its committed offsets on the new coordinator after the old one's broker is
SIGKILLed."""

from __future__ import annotations

import time

import pytest

from replication_cluster import ReplicationCluster, wait_for
from conftest import ProtocolClient

pytest.importorskip("kazoo.client")
ck = pytest.importorskip("confluent_kafka")

OFFSETS = "__consumer_offsets"
TXN_STATE = "__transaction_state"
RF3 = {"offsets.topic.replication.factor": "3", "transaction.state.log.replication.factor": "3",
       "transaction.state.log.min.isr": "2"}
FIND_COORDINATOR, OFFSET_FETCH, DESCRIBE_GROUPS, LIST_GROUPS = 10, 9, 15, 16
NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE = 16, 15


@pytest.fixture
def cluster(zookeeper, tmp_path):
    with ReplicationCluster(zookeeper, tmp_path, 3, overrides=RF3) as c:
        c.start_all()
        yield c


def find_coordinator(cluster, broker: int, key: str, key_type: int = 0, version: int = 3) -> dict:
    with ProtocolClient(cluster.brokers[broker].port, timeout=10) as client:
        return client.call(FIND_COORDINATOR, version, {"key": key, "key_type": key_type})


def wait_coordinator(cluster, key: str, key_type: int = 0, brokers=None) -> int:
    """Until every running broker (or those given) names the same coordinator; its id."""
    def agreed():
        answers = [find_coordinator(cluster, b, key, key_type) for b in (brokers or cluster.running())]
        nodes = {(a["error_code"], a["node_id"], a["port"]) for a in answers}
        if len(nodes) == 1:
            code, node, port = nodes.pop()
            if code == 0 and port == cluster.brokers[node].port:
                return node + 1
        return None
    return wait_for(agreed, 60, what=f"the coordinator of {key}") - 1


def describe_internal(cluster, topic: str) -> dict:
    (t,) = cluster.metadata(cluster.running()[0], topic)["topics"]
    return {p["partition_index"]: p for p in t["partitions"]}


def test_internal_topics_are_replicated_and_every_broker_names_the_leader(cluster):
    for key_type, topic in ((0, OFFSETS), (1, TXN_STATE)):
        assert cluster.get(f"/brokers/topics/{topic}") is None  # not at start: on first need, as Kafka
        first = find_coordinator(cluster, 1, "some-key", key_type)
        assert first["error_code"] in (0, COORDINATOR_NOT_AVAILABLE)
        coordinator = wait_coordinator(cluster, "some-key", key_type)
        partitions = describe_internal(cluster, topic)
        assert len(partitions) == 3
        for p, part in partitions.items():
            assert len(part["replica_nodes"]) == 3
            state = cluster.wait_state(topic, p, lambda s: len(s["isr"]) == 3)
            assert part["leader_id"] == state["leader"]
        assert len({p["leader_id"] for p in partitions.values()}) == 3  # leaders spread over the brokers
        from pk.engine import consumer_offsets, transaction_log
        hashed = (consumer_offsets if key_type == 0 else transaction_log).partition_for("some-key", 3)
        assert coordinator == partitions[hashed]["leader_id"]
        config = cluster.get(f"/config/topics/{topic}").decode()
        assert '"cleanup.policy":"compact"' in config
        if topic == TXN_STATE:
            assert '"min.insync.replicas":"2"' in config
        # v4+ (batched keys) names the same broker
        with ProtocolClient(cluster.brokers[0].port, timeout=10) as client:
            (answer,) = client.call(FIND_COORDINATOR, 4, {"key_type": key_type,
                                                          "coordinator_keys": ["some-key"]})["coordinators"]
        assert (answer["error_code"], answer["node_id"]) == (0, coordinator)
