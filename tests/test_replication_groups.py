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


def test_too_few_brokers_for_the_offsets_topic(zookeeper, tmp_path):
    """One live broker, replication factor 3: nothing is created, COORDINATOR_NOT_AVAILABLE, and
    the broker logs why (Kafka 2.8's ZkAdminManager line); with the others up it is created."""
    with ReplicationCluster(zookeeper, tmp_path, 3, overrides=RF3) as cluster:
        cluster.start(0)
        for version in (3, 4):
            with ProtocolClient(cluster.brokers[0].port, timeout=10) as client:
                body = {"key": "lonely", "key_type": 0} if version < 4 else {"key_type": 0,
                                                                             "coordinator_keys": ["lonely"]}
                answer = client.call(FIND_COORDINATOR, version, body)
            if version >= 4:
                (answer,) = answer["coordinators"]
            assert (answer["error_code"], answer["node_id"]) == (COORDINATOR_NOT_AVAILABLE, -1)
        assert cluster.get(f"/brokers/topics/{OFFSETS}") is None
        assert ("InvalidReplicationFactorException: Replication factor: 3 larger than available brokers: 1."
                in cluster.brokers[0].log())
        cluster.start(1)
        cluster.start(2)
        assert wait_coordinator(cluster, "lonely") in (0, 1, 2)


def create_topic(cluster, name: str, partitions: int = 1, rf: int = 3) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(name, partitions, rf)])[name].result(15)
    for p in range(partitions):
        cluster.wait_state(name, p, lambda s: len(s["isr"]) == rf)
    cluster.wait_applied(name, partitions)


def produce(cluster, topic: str, count: int) -> None:
    p = ck.Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 5})
    for i in range(count):
        p.produce(topic, str(i).encode(), partition=0)
    assert p.flush(30) == 0


def consumer(cluster, group: str) -> "ck.Consumer":
    return ck.Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group, "enable.auto.commit": False,
                        "auto.offset.reset": "earliest", "session.timeout.ms": 10000,
                        "heartbeat.interval.ms": 500, "topic.metadata.refresh.interval.ms": 1000,
                        "reconnect.backoff.max.ms": 1000})


def committed_offset(answer: dict) -> int | None:
    """An OffsetFetch v8 group answer's offset for the one partition asked, None while the
    group answers an error (a coordinator moving or loading) and so has no topics."""
    if answer["error_code"] or not answer["topics"] or not answer["topics"][0]["partitions"]:
        return None
    part = answer["topics"][0]["partitions"][0]
    return None if part["error_code"] else part["committed_offset"]


def offset_fetch(cluster, broker: int, group: str, topic: str, version: int = 8) -> dict:
    with ProtocolClient(cluster.brokers[broker].port, timeout=10) as client:
        if version >= 8:
            (answer,) = client.call(OFFSET_FETCH, version, {"groups": [
                {"group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}]}],
                "require_stable": False})["groups"]
            return answer
        return client.call(OFFSET_FETCH, version, {"group_id": group,
                                                   "topics": [{"name": topic, "partition_indexes": [0]}]})


def describe_group(cluster, broker: int, group: str) -> dict:
    with ProtocolClient(cluster.brokers[broker].port, timeout=10) as client:
        (answer,) = client.call(DESCRIBE_GROUPS, 5, {"groups": [group],
                                                     "include_authorized_operations": False})["groups"]
    return answer


def list_groups(cluster, broker: int) -> list[str]:
    with ProtocolClient(cluster.brokers[broker].port, timeout=10) as client:
        answer = client.call(LIST_GROUPS, 4, {"states_filter": []})
    assert answer["error_code"] == 0
    return sorted(g["group_id"] for g in answer["groups"])


def same_partition_group(group: str) -> str:
    """Another group id in the same __consumer_offsets partition (of 3): the same coordinator."""
    from pk.engine.consumer_offsets import partition_for

    return next(g for g in (f"stayers-{i}" for i in range(100)) if partition_for(g, 3) == partition_for(group, 3))


def test_group_moves_with_its_offsets_partition_when_the_coordinator_is_killed(cluster, request):
    """Two groups of one coordinator: "movers" commits 50 of the 60 records it read and leaves;
    a member of the other stays through the kill of the coordinator's broker. Afterwards a new
    member of "movers" resumes at 50 on the new coordinator, and the member that stayed rejoins
    there and commits."""
    create_topic(cluster, "moving")
    produce(cluster, "moving", 100)
    stayers = same_partition_group("movers")
    assignments = []
    stayer = consumer(cluster, stayers)
    request.addfinalizer(stayer.close)
    stayer.subscribe(["moving"], on_assign=lambda c, parts: assignments.append(len(parts)))
    read = 0
    deadline = time.monotonic() + 60
    while read < 100 and time.monotonic() < deadline:
        msg = stayer.poll(1)
        read += msg is not None and msg.error() is None
    assert read == 100
    stayer.commit(offsets=[ck.TopicPartition("moving", 0, 100)], asynchronous=False)
    first = consumer(cluster, "movers")
    first.subscribe(["moving"])
    seen: list[int] = []
    try:
        while len(seen) < 60:
            msg = first.poll(1)
            if msg is not None and msg.error() is None:
                seen.append(msg.offset())
                if len(seen) == 50:  # committed: 50; read on to 59 without committing
                    first.commit(offsets=[ck.TopicPartition("moving", 0, 50)], asynchronous=False)
        assert seen == list(range(60))
        coordinator = wait_coordinator(cluster, "movers")
        others = [b for b in cluster.running() if b != coordinator]

        # Only the coordinator answers for the group (raw frames through the other brokers).
        for b in others:
            assert offset_fetch(cluster, b, "movers", "moving")["error_code"] == NOT_COORDINATOR
            old = offset_fetch(cluster, b, "movers", "moving", version=1)
            assert old["topics"][0]["partitions"][0]["error_code"] == NOT_COORDINATOR
            assert offset_fetch(cluster, b, "movers", "moving", version=3)["error_code"] == NOT_COORDINATOR
            assert describe_group(cluster, b, "movers")["error_code"] == NOT_COORDINATOR
            assert "movers" not in list_groups(cluster, b)
        fetched = offset_fetch(cluster, coordinator, "movers", "moving")
        assert fetched["error_code"] == 0
        assert fetched["topics"][0]["partitions"][0]["committed_offset"] == 50
        described = describe_group(cluster, coordinator, "movers")
        assert (described["error_code"], described["group_state"]) == (0, "Stable")
        assert list_groups(cluster, coordinator) == sorted(["movers", stayers])
    finally:
        first.close()  # leaves the group; 50..59 stay uncommitted

    cluster.kill(coordinator)
    second = consumer(cluster, "movers")
    second.subscribe(["moving"])
    after: list[int] = []
    try:
        deadline = time.monotonic() + 90
        while (not after or after[-1] < 99) and time.monotonic() < deadline:
            msg = second.poll(1)
            if msg is not None and msg.error() is None:
                after.append(msg.offset())
        # Resumed from the committed offset on the new coordinator: the uncommitted 50..59
        # read again, nothing skipped.
        assert after == list(range(50, 100)), after[:20]
        second.commit(offsets=[ck.TopicPartition("moving", 0, 100)], asynchronous=False)
        new = wait_coordinator(cluster, "movers")
        assert new != coordinator
        fetched = offset_fetch(cluster, new, "movers", "moving")
        assert (fetched["error_code"], fetched["topics"][0]["partitions"][0]["committed_offset"]) == (0, 100)
        assert describe_group(cluster, new, "movers")["group_state"] == "Stable"

        # The member that stayed rejoined on the new coordinator (its old membership is
        # unknown there), and its commits go there.
        wait_for(lambda: stayer.poll(0.2) is None and len(assignments) >= 2, 60, what="the stayer to rejoin")
        produce(cluster, "moving", 10)
        more = []
        deadline = time.monotonic() + 60
        while len(more) < 10 and time.monotonic() < deadline:
            msg = stayer.poll(1)
            if msg is not None and msg.error() is None:
                more.append(msg.offset())
        assert more == list(range(100, 110))
        stayer.commit(offsets=[ck.TopicPartition("moving", 0, 110)], asynchronous=False)
        fetched = offset_fetch(cluster, new, stayers, "moving")
        assert (fetched["error_code"], fetched["topics"][0]["partitions"][0]["committed_offset"]) == (0, 110)
    finally:
        second.close()

    # A deleted topic's offsets go from the group (tombstoned by its coordinator).
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": cluster.brokers[new].bootstrap})
    admin.delete_topics(["moving"])["moving"].result(15)
    wait_for(lambda: committed_offset(offset_fetch(cluster, new, "movers", "moving")) == -1,
             what="the deleted topic's offsets to go")
