"""Issue 15's leftovers against a real three-broker Apache Kafka 2.8 cluster on ZooKeeper (the
`kafka28_cluster` fixture): the same steps, driven by Kafka 2.8's own tools, on it and on three
pk-server-start brokers, with the same outputs.

- `kafka-reassign-partitions --zookeeper ... --execute/--verify`: the tool writes
  /admin/reassign_partitions, the controller carries the moves out and deletes the znode.
- Racks: brokers with `broker.rack` register it, list it in Metadata, and new topics are placed
  rack-aware (random start: compared by the rack property, each partition on both racks); a
  broker without a rack among racked ones makes CreateTopics fail as Kafka 2.8's does.
"""

from __future__ import annotations

import json
import os

import pytest

from replication_cluster import ReplicationCluster
import kafka_oracle
from conftest import ProtocolClient
from pk.engine.protocol import ApiKey
from test_oracle_replication import CLUSTER_SETTINGS, ClusterState, normalise_step, tool_errors, wait_for

pytest.importorskip("kazoo.client")

ZK_TOPIC = "zk-moved"
ZK_ASSIGNMENT = "0:1,1:2"
ZK_PLAN = {(ZK_TOPIC, 0): [2, 1], (ZK_TOPIC, 1): [1, 2]}  # partition 1: already there


def zk_reassign_steps(tools, connect: str, bootstrap: str, workdir: str) -> dict[str, str]:
    """Kafka 2.8's `--zookeeper` reassignment on a three-broker cluster; {step: output}."""
    from confluent_kafka import Producer

    state = ClusterState(connect)
    steps: dict[str, str] = {}

    def record(step: str, *args: str) -> None:
        result = tools(*args)
        steps[step] = normalise_step(result.out + "".join(f"[stderr] {line}\n" for line in tool_errors(result.err))
                                     + (f"[exit {result.returncode}]\n" if result.returncode else ""))

    def assigned(p: int):
        js = json.loads(state.zk.get(f"/brokers/topics/{ZK_TOPIC}")[0])
        return js["partitions"][str(p)], bool(js.get("adding_replicas") or js.get("removing_replicas"))

    try:
        wait_for(lambda: state.brokers() == {0, 1, 2}, what="three registered brokers")
        record("create", "kafka-topics", "--zookeeper", connect, "--create", "--topic", ZK_TOPIC,
               "--replica-assignment", ZK_ASSIGNMENT)
        wait_for(lambda: all(s and len(s["isr"]) == 2 for s in state.partitions(ZK_TOPIC, 2)),
                 what="both partitions led with their full ISR")
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "message.timeout.ms": 60000})
        for i in range(20):
            producer.produce(ZK_TOPIC, f"r{i}".encode(), partition=0)
        assert producer.flush(60) == 0

        plan = os.path.join(workdir, "zk-plan.json")
        with open(plan, "w") as f:
            json.dump({"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r}
                                                    for (t, p), r in ZK_PLAN.items()]}, f)
        record("execute", "kafka-reassign-partitions", "--zookeeper", connect, "--reassignment-json-file", plan,
               "--execute")
        wait_for(lambda: not state.reassigning() and all(assigned(p) == (r, False) for (_, p), r in ZK_PLAN.items()),
                 what="the controller to complete the moves and delete /admin/reassign_partitions")
        steps["znode after"] = str(state.reassigning())
        record("verify", "kafka-reassign-partitions", "--zookeeper", connect, "--reassignment-json-file", plan,
               "--verify")
        wait_for(lambda: all(len(s["isr"]) == 2 for s in state.partitions(ZK_TOPIC, 2)), what="full ISRs")
        record("describe", "kafka-topics", "--zookeeper", connect, "--describe", "--topic", ZK_TOPIC)
        # a plan naming a partition the topic does not have: the tool refuses it itself
        with open(plan, "w") as f:
            json.dump({"version": 1, "partitions": [{"topic": ZK_TOPIC, "partition": 7, "replicas": [0, 1]}]}, f)
        record("execute, unknown partition", "kafka-reassign-partitions", "--zookeeper", connect,
               "--reassignment-json-file", plan, "--execute")
    finally:
        state.close()
    return steps


@pytest.fixture(scope="module")
def kafka28_zk_reassign_steps(kafka28_cluster, kafka28_tools, tmp_path_factory):
    return zk_reassign_steps(kafka28_tools, kafka28_cluster.zookeeper, kafka28_cluster.bootstrap,
                             str(tmp_path_factory.mktemp("k28-zk-reassign")))


def test_kafka_2_8_reassigns_through_zookeeper(kafka28_zk_reassign_steps):
    steps = kafka28_zk_reassign_steps
    assert steps["znode after"] == "False"
    assert "Successfully started" in steps["execute"], steps["execute"]
    assert "Reassignment of partition zk-moved-0 is complete." in steps["verify"], steps["verify"]


def test_pk_reassigns_through_zookeeper_as_kafka_2_8(zookeeper, tmp_path, kafka28_tools, kafka28_zk_reassign_steps):
    with ReplicationCluster(zookeeper, tmp_path, 3, CLUSTER_SETTINGS) as cluster:
        cluster.start_all()
        steps = zk_reassign_steps(kafka28_tools, cluster.connect, cluster.bootstrap, str(tmp_path))
    assert list(steps) == list(kafka28_zk_reassign_steps)
    for step, expected in kafka28_zk_reassign_steps.items():
        assert steps[step] == expected, step


# --------------------------------------------------------------------------- racks
RACKS = {0: "r1", 1: "r1", 2: "r2"}


def rack_steps(tools, connect: str, brokers) -> dict[str, str]:
    """`brokers[i]` (.bootstrap, .port, .overrides, .stop(), .start()) run with RACKS."""
    from confluent_kafka.admin import AdminClient

    state = ClusterState(connect)
    steps: dict[str, str] = {}
    bootstrap = brokers[0].bootstrap
    try:
        wait_for(lambda: state.brokers() == {0, 1, 2}, what="three registered brokers")
        steps["registered racks"] = str({b: json.loads(state.zk.get(f"/brokers/ids/{b}")[0]).get("rack")
                                         for b in RACKS})
        admin = AdminClient({"bootstrap.servers": bootstrap})
        steps["DescribeCluster racks"] = str(sorted((n.id, n.rack) for n in admin.describe_cluster().result(30).nodes))
        result = tools("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", "racked",
                       "--partitions", "6", "--replication-factor", "2")
        steps["create"] = result.out + "".join(f"[stderr] {line}\n" for line in tool_errors(result.err))
        assignment = json.loads(state.zk.get("/brokers/topics/racked")[0])["partitions"]
        steps["one replica per rack"] = str(all(sorted(RACKS[r] for r in replicas) == ["r1", "r2"]
                                                for replicas in assignment.values()) and len(assignment) == 6)

        brokers[2].stop()
        wait_for(lambda: 2 not in state.brokers(), what="broker 2 gone")
        brokers[2].overrides = {k: v for k, v in brokers[2].overrides.items() if k != "broker.rack"}
        brokers[2].start()
        wait_for(lambda: state.brokers() == {0, 1, 2}, what="broker 2 back without a rack")
        wait_for(lambda: sorted((n.id, n.rack) for n in admin.describe_cluster().result(30).nodes)
                 == [(0, "r1"), (1, "r1"), (2, None)], what="the brokers to see broker 2 without a rack")
        # to the controller: a Kafka 2.8 broker that is not answers CreateTopics NOT_CONTROLLER
        controller = json.loads(state.zk.get("/controller")[0])["brokerid"]
        with ProtocolClient(brokers[controller].port, timeout=30) as c:
            answer = c.call(ApiKey.CREATE_TOPICS, 5, {"timeout_ms": 15000, "validate_only": False, "topics": [
                {"name": "mixed", "num_partitions": 1, "replication_factor": 2, "assignments": [], "configs": []}]})
        steps["CreateTopics, a broker without a rack"] = str(
            [(t["error_code"], t["error_message"]) for t in answer["topics"]])
    finally:
        state.close()
    return steps


@pytest.fixture(scope="module")
def kafka28_rack_steps(zookeeper, kafka28_tools, tmp_path_factory):
    from conftest import _dist

    cluster = kafka_oracle.KafkaCluster(_dist("2.8"), str(tmp_path_factory.mktemp("kafka28-racks")),
                                        f"{zookeeper}/kafka28-racks", overrides=CLUSTER_SETTINGS)
    for b, rack in RACKS.items():
        cluster.brokers[b].overrides = {**CLUSTER_SETTINGS, "broker.rack": rack}
    cluster.start()
    try:
        yield rack_steps(kafka28_tools, cluster.zookeeper, cluster.brokers)
    finally:
        cluster.stop()


def test_pk_places_by_rack_as_kafka_2_8(zookeeper, tmp_path, kafka28_tools, kafka28_rack_steps):
    assert kafka28_rack_steps["one replica per rack"] == "True"
    with ReplicationCluster(zookeeper, tmp_path, 3, CLUSTER_SETTINGS) as cluster:
        for b, rack in RACKS.items():
            cluster.brokers[b].overrides = {**cluster.brokers[b].overrides, "broker.rack": rack}
        cluster.start_all()
        steps = rack_steps(kafka28_tools, cluster.connect, cluster.brokers)
    assert steps == kafka28_rack_steps


# --------------------------------------------------------------------------- DeleteRecords
TRIM_TOPIC = "trimmed-replicated"


def delete_records_steps(tools, connect: str, brokers, workdir: str) -> dict[str, str]:
    """kafka-delete-records on a partition replicated on all three brokers, then the leader
    SIGKILLed: the new leader's log starts where the records were deleted."""
    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

    state = ClusterState(connect)
    steps: dict[str, str] = {}
    bootstrap = ",".join(b.bootstrap for b in brokers)

    def record(step: str, *args: str) -> None:
        result = tools(*args)
        steps[step] = normalise_step(result.out + "".join(f"[stderr] {line}\n" for line in tool_errors(result.err))
                                     + (f"[exit {result.returncode}]\n" if result.returncode else ""))

    def watermarks():
        """(low, high) from the partition's leader; None while the client cannot tell."""
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "topic.metadata.refresh.interval.ms": 500})
        try:
            return c.get_watermark_offsets(TopicPartition(TRIM_TOPIC, 0), timeout=10)
        except KafkaException:  # the killed broker's connection, a leader not known yet
            return None
        finally:
            c.close()

    plan = os.path.join(workdir, "delete.json")
    try:
        wait_for(lambda: state.brokers() == {0, 1, 2}, what="three registered brokers")
        record("create", "kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", TRIM_TOPIC,
               "--replica-assignment", "0:1:2")
        wait_for(lambda: (state.partition(TRIM_TOPIC, 0) or {}).get("isr", []).__len__() == 3, what="full ISR")
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "message.timeout.ms": 60000})
        for i in range(50):
            producer.produce(TRIM_TOPIC, f"t{i}".encode(), partition=0)
        assert producer.flush(60) == 0
        for offset in (20, 60):
            with open(plan, "w") as f:
                json.dump({"version": 1, "partitions": [{"topic": TRIM_TOPIC, "partition": 0, "offset": offset}]}, f)
            record(f"delete-records to {offset}", "kafka-delete-records", "--bootstrap-server", bootstrap,
                   "--offset-json-file", plan)
        leader = state.partition(TRIM_TOPIC, 0)["leader"]
        brokers[leader].kill()
        wait_for(lambda: state.partition(TRIM_TOPIC, 0)["leader"] not in (leader, -1), what="a new leader")
        steps["watermarks on the new leader"] = str(wait_for(
            lambda: (lambda w: w if w and w[0] >= 0 else None)(watermarks()), what="the new leader's watermarks"))
        brokers[leader].start()
        wait_for(lambda: leader in state.partition(TRIM_TOPIC, 0)["isr"], what="the old leader back in the ISR")
    finally:
        state.close()
    return steps


@pytest.fixture(scope="module")
def kafka28_delete_records_steps(kafka28_cluster, kafka28_tools, tmp_path_factory):
    return delete_records_steps(kafka28_tools, kafka28_cluster.zookeeper, kafka28_cluster.brokers,
                                str(tmp_path_factory.mktemp("k28-delete-records")))


def test_pk_deletes_replicated_records_as_kafka_2_8(zookeeper, tmp_path, kafka28_tools, kafka28_delete_records_steps):
    assert kafka28_delete_records_steps["watermarks on the new leader"] == "(20, 50)"
    with ReplicationCluster(zookeeper, tmp_path, 3, CLUSTER_SETTINGS) as cluster:
        cluster.start_all()
        brokers = [cluster.brokers[i] for i in range(3)]
        steps = delete_records_steps(kafka28_tools, cluster.connect, brokers, str(tmp_path))
    assert steps == kafka28_delete_records_steps
