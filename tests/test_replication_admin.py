"""The ZooKeeper-mode controller's commands on three pk-server-start brokers (engine/broker/
controller.py; docs/replication.md): ElectLeaders (preferred and unclean) and a partition
reassignment that adds and removes a replica, over raw frames to the controller, and the
NOT_CONTROLLER answer of the other brokers."""

from __future__ import annotations

import json

import pytest

from conftest import ProtocolClient
from replication_cluster import ReplicationCluster, wait_for
from test_replication import consume_all, create, produce, producer

from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E

pytest.importorskip("kazoo.client")


@pytest.fixture
def cluster(zookeeper, tmp_path):
    with ReplicationCluster(zookeeper, tmp_path, 3, {"auto.leader.rebalance.enable": "false"}) as c:
        c.start_all()
        yield c


def _controller(cluster) -> int:
    return json.loads(cluster.get("/controller"))["brokerid"]


def _elect(cluster, broker_id, election_type, topic, partitions):
    c = ProtocolClient(cluster.brokers[broker_id].bootstrap)
    answer = c.call(ApiKey.ELECT_LEADERS, 2, {"election_type": election_type, "timeout_ms": 5000,
                                              "topic_partitions": [{"topic": topic, "partitions": partitions}]})
    assert answer["error_code"] == E.NONE
    return {(r["topic"], p["partition_id"]): (p["error_code"], p["error_message"])
            for r in answer["replica_election_results"] for p in r["partition_result"]}


def test_preferred_election_moves_leadership_back(cluster):
    create(cluster, "pe", partitions=1)
    first = cluster.state("pe", 0)["leader"]
    controller = _controller(cluster)
    other = next(b for b in cluster.brokers if b != controller)
    assert _elect(cluster, other, 0, "pe", [0]) == {("pe", 0): (E.NOT_CONTROLLER, None)}
    assert _elect(cluster, controller, 0, "pe", [0, 7]) == {
        ("pe", 0): (E.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."),
        ("pe", 7): (E.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")}

    cluster.kill(first)
    moved = cluster.wait_state("pe", 0, lambda s: s["leader"] not in (first, -1) and first not in s["isr"])
    controller = _controller(cluster)
    assert _elect(cluster, controller, 0, "pe", [0]) == {("pe", 0): (
        E.PREFERRED_LEADER_NOT_AVAILABLE,
        "Failed to elect leader for partition pe-0 under strategy PreferredReplicaPartitionLeaderElectionStrategy")}
    assert _elect(cluster, controller, 1, "pe", [0]) == {
        ("pe", 0): (E.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.")}

    cluster.start(first)
    cluster.wait_state("pe", 0, lambda s: first in s["isr"])
    controller = _controller(cluster)
    assert _elect(cluster, controller, 0, "pe", [0]) == {("pe", 0): (E.NONE, None)}
    state = cluster.state("pe", 0)
    assert state["leader"] == first and state["leader_epoch"] == moved["leader_epoch"] + 1
    # every partition (null): listed, those that need no election included (Kafka 2.8)
    c = ProtocolClient(cluster.brokers[controller].bootstrap)
    answer = c.call(ApiKey.ELECT_LEADERS, 2, {"election_type": 0, "timeout_ms": 5000, "topic_partitions": None})
    assert [(r["topic"], [(p["partition_id"], p["error_code"]) for p in r["partition_result"]])
            for r in answer["replica_election_results"]] == [("pe", [(0, E.ELECTION_NOT_NEEDED)])]
    cluster.wait_applied("pe", 1)


def _reassign(cluster, broker_id, topic, partition, replicas):
    c = ProtocolClient(cluster.brokers[broker_id].bootstrap)
    answer = c.call(ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0, {"timeout_ms": 5000, "topics": [
        {"name": topic, "partitions": [{"partition_index": partition, "replicas": replicas}]}]})
    return [(p["error_code"], p["error_message"]) for t in answer["responses"] for p in t["partitions"]]


def test_reassignment_adds_a_replica_then_removes_one(cluster):
    create(cluster, "ra", partitions=1, rf=2)
    replicas = json.loads(cluster.get("/brokers/topics/ra"))["partitions"]["0"]
    values = [f"v{i}".encode() for i in range(50)]
    acked, failed = produce(producer(cluster), "ra", values)
    assert not failed
    spare = next(b for b in cluster.brokers if b not in replicas)
    target = [spare, replicas[1]]  # the spare joins, the first replica leaves
    controller = _controller(cluster)
    other = next(b for b in cluster.brokers if b != controller)
    assert _reassign(cluster, other, "ra", 0, target) == [(E.NOT_CONTROLLER, None)]
    assert _reassign(cluster, controller, "ra", 0, target) == [(E.NONE, None)]

    wait_for(lambda: json.loads(cluster.get("/brokers/topics/ra"))["partitions"]["0"] == target
             and not json.loads(cluster.get("/brokers/topics/ra")).get("adding_replicas"),
             timeout=60, what="the reassignment to complete")
    state = cluster.state("ra", 0)
    assert sorted(state["isr"]) == sorted(target) and state["leader"] in target
    c = ProtocolClient(cluster.brokers[controller].bootstrap)
    listed = c.call(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, {"timeout_ms": 5000, "topics": None})
    assert (listed["error_code"], listed["topics"]) == (E.NONE, [])
    cluster.wait_applied("ra", 1)
    assert consume_all(cluster, "ra", expected=len(values)) == acked
    # the new replica holds the data: it alone survives the other target's loss
    cluster.kill(replicas[1])
    cluster.wait_state("ra", 0, lambda s: s["leader"] == spare)
    assert consume_all(cluster, "ra", expected=len(values)) == acked


def test_pk_tools_through_a_broker_that_is_not_the_controller(pk, cluster, tmp_path):
    """pk-reassign-partitions and pk-leader-election given any broker reach the controller."""
    create(cluster, "tools", partitions=1)
    replicas = json.loads(cluster.get("/brokers/topics/tools"))["partitions"]["0"]
    other = next(b for b in cluster.brokers if b != _controller(cluster))
    bootstrap = cluster.brokers[other].bootstrap
    plan = tmp_path / "plan.json"
    target = list(reversed(replicas))
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "tools", "partition": 0, "replicas": target}]}))
    run = pk("pk-reassign-partitions", "--bootstrap-server", bootstrap, "--reassignment-json-file", str(plan),
             "--execute")
    assert run.out.endswith("Successfully started partition reassignment for tools-0\n"), run.err
    wait_for(lambda: json.loads(cluster.get("/brokers/topics/tools"))["partitions"]["0"] == target,
             what="the new replica order")
    run = pk("pk-reassign-partitions", "--bootstrap-server", bootstrap, "--reassignment-json-file", str(plan),
             "--verify")
    assert "Reassignment of partition tools-0 is completed." in run.out, run.out + run.err
    run = pk("pk-leader-election", "--bootstrap-server", bootstrap, "--election-type", "preferred",
             "--topic", "tools", "--partition", "0")
    assert run.out == "Successfully completed leader election (PREFERRED) for partitions tools-0\n", run.out + run.err
    cluster.wait_state("tools", 0, lambda s: s["leader"] == target[0])


def test_auto_leader_rebalance_moves_the_preferred_leader_back(zookeeper, tmp_path):
    with ReplicationCluster(zookeeper, tmp_path, 3, {"leader.imbalance.check.interval.seconds": "1"}) as cluster:
        cluster.start_all()
        create(cluster, "auto", partitions=1)
        first = cluster.state("auto", 0)["leader"]
        cluster.kill(first)
        cluster.wait_state("auto", 0, lambda s: s["leader"] not in (first, -1))
        cluster.start(first)
        cluster.wait_state("auto", 0, lambda s: s["leader"] == first, timeout=60)


def test_pk_topics_describes_at_once_after_the_controller_is_killed(pk, zookeeper, tmp_path):
    """librdkafka sends DescribeTopics/DescribeCluster/DescribeConfigs to the controller, which a
    SIGKILLed broker stays until ZooKeeper expires its session; pk-topics (and pk-cluster
    cluster-id) ask their bootstrap broker instead, so they answer at once, pk-topics with the
    dead controller still leading and in the ISRs (the brokers' view until the session expires)."""
    import time

    # A session long enough for the describes to run before it expires on a loaded machine (and
    # no ISR shrink by the leaders meanwhile: they drop a replica that stopped fetching after
    # replica.lag.time.max.ms, whether or not its session has expired).
    with ReplicationCluster(zookeeper, tmp_path, 3, {"zookeeper.session.timeout.ms": "30000",
                                                     "replica.lag.time.max.ms": "30000"}) as cluster:
        cluster.start_all()
        _describe_after_kill(pk, cluster)


def _describe_after_kill(pk, cluster):
    import time

    create(cluster, "frozen-view", partitions=3)
    controller = _controller(cluster)
    other = next(b for b in cluster.brokers if b != controller)
    args = ("pk-topics", "--bootstrap-server", cluster.brokers[other].bootstrap, "--describe", "--topic", "frozen-view")
    before = pk(*args)
    assert before.returncode == 0 and f"Leader: {controller}\t" in before.out, before.out + before.err
    cluster.kill(controller)
    started = time.monotonic()
    after = pk(*args)
    under = pk(*args, "--under-replicated-partitions")
    cluster_id = pk("pk-cluster", "cluster-id", "--bootstrap-server", cluster.brokers[other].bootstrap)
    took = time.monotonic() - started
    assert json.loads(cluster.get("/controller"))["brokerid"] == controller, "the session expired meanwhile"
    assert (after.returncode, after.out, after.err) == (0, before.out, "")
    assert (under.returncode, under.out, under.err) == (0, "", "")
    assert cluster_id.returncode == 0 and cluster_id.out.startswith("Cluster ID: "), cluster_id.err
    assert took < 15, took  # librdkafka's requests to the dead controller waited out the 60 s timeout
