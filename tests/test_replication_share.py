"""Share groups follow their coordinators across three pk-server-start brokers in ZooKeeper
mode (docs/replication.md, "The share coordinator"): a share-partition's state lives on the
leader of its `__share_group_state` partition and moves with it, the share-partition on the
data partition's leader reads it from there, so that when either broker is SIGKILLed the
group consumes on through the others with no acknowledged record delivered again and the
delivery counts of released records kept.

One scenario, one cluster: the state topic and `__consumer_offsets` have one partition each
(their leaders known before the data topic is placed), the data topic's leader is another
broker, and the state topic's min ISR is 1 so that the last broker standing still writes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import pytest

from conftest import ProtocolClient
from replication_cluster import ReplicationCluster, wait_for

pytest.importorskip("kazoo.client")
ck = pytest.importorskip("confluent_kafka")

from pk.commands.backends.wire_share import ACCEPT, RELEASE, ShareConsumer  # noqa: E402
from pk.engine.share_state_log import coordinator_key, partition_for  # noqa: E402

STATE = "__share_group_state"
TOPIC, GROUP = "queue", "sharers"
OVERRIDES = {
    "offsets.topic.replication.factor": "3", "offsets.topic.num.partitions": "1",
    "share.coordinator.state.topic.replication.factor": "3", "share.coordinator.state.topic.num.partitions": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.share.heartbeat.interval.ms": "1000", "group.share.min.heartbeat.interval.ms": "1000",
}
FIND_COORDINATOR, SHARE_GROUP_DESCRIBE, READ_STATE_SUMMARY = 10, 77, 87
NOT_COORDINATOR = 16
SHARE_KEY_TYPE = 2
BIN = os.path.dirname(sys.executable)


@pytest.fixture
def cluster(zookeeper, tmp_path):
    with ReplicationCluster(zookeeper, tmp_path, 3, overrides=OVERRIDES) as c:
        c.start_all()
        yield c


def find_share_coordinator(cluster, broker: int, key: str) -> tuple[int, int]:
    """(error, node) FindCoordinator v6 answers for a share-partition key through `broker`."""
    with ProtocolClient(cluster.brokers[broker].port, timeout=10) as client:
        (answer,) = client.call(FIND_COORDINATOR, 6, {"key_type": SHARE_KEY_TYPE, "coordinator_keys": [key]})[
            "coordinators"]
    return answer["error_code"], answer["node_id"]


def wait_share_coordinator(cluster, key: str) -> int:
    """Until every running broker names the same live share coordinator for the key."""
    def agreed():
        answers = {find_share_coordinator(cluster, b, key) for b in cluster.running()}
        if len(answers) == 1:
            code, node = answers.pop()
            if code == 0 and node in cluster.running():
                return node + 1
        return None
    return wait_for(agreed, 60, what=f"the share coordinator of {key}") - 1


def state_summary(cluster, broker: int, topic_id: uuid.UUID) -> dict:
    with ProtocolClient(cluster.brokers[broker].port, timeout=10) as client:
        answer = client.call(READ_STATE_SUMMARY, 1, {"group_id": GROUP, "topics": [
            {"topic_id": topic_id, "partitions": [{"partition": 0, "leader_epoch": 0}]}]})
    (result,) = answer["results"]
    (part,) = result["partitions"]
    return part


def share_group_describe(cluster, broker: int) -> dict:
    with ProtocolClient(cluster.brokers[broker].port, timeout=10) as client:
        (described,) = client.call(SHARE_GROUP_DESCRIBE, 1, {"group_ids": [GROUP],
                                                             "include_authorized_operations": False})["groups"]
    return described


def pk(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([os.path.join(BIN, args[0]), *args[1:]], capture_output=True, text=True, timeout=60)


_last_described: dict[int, str] = {}


def described_start(cluster, broker: int) -> tuple[int, int] | None:
    """(START-OFFSET, LAG) `pk-share-groups --describe` prints for the partition, bootstrapped
    at one broker; None while it answers no row (a coordinator moving)."""
    r = pk("pk-share-groups", "--bootstrap-server", cluster.brokers[broker].bootstrap, "--describe",
           "--group", GROUP)
    _last_described[broker] = r.stdout + r.stderr
    lines = [line.split() for line in r.stdout.splitlines() if line.strip()]
    if r.returncode != 0 or not lines or "START-OFFSET" not in lines[0]:
        return None
    column = lines[0].index("START-OFFSET")
    rows = [row for row in lines[1:] if len(row) > column + 1 and row[1] == TOPIC]
    if not rows or not all(cell.lstrip("-").isdigit() for cell in rows[0][column:column + 2]):
        return None
    return int(rows[0][column]), int(rows[0][column + 1])


def wait_described(cluster, start: int, lag: int, member=None) -> None:
    """Until every running broker's bootstrap describes the group at `start` with `lag`: the
    start its share coordinator stored, which lags one write behind the share-partition's (as
    Kafka's SharePartition writes a change, then moves its start). The member
    heartbeats meanwhile: a group coordinator that took over knows the group only from its
    members' heartbeats (pk keeps no share-group records in __consumer_offsets)."""
    def described():
        if member is not None:
            member.consumer.heartbeat()
        return all([described_start(cluster, b) == (start, lag) for b in cluster.running()])
    try:
        wait_for(described, 60, what=f"every broker to describe start offset {start}, lag {lag}")
    except AssertionError as exc:
        for b in cluster.brokers:  # what the coordinators did, for the failure's reader
            lines = [line for line in cluster.brokers[b].log().splitlines() if "hare" in line or "oordinator" in line]
            print(f"==== broker {b}\n" + "\n".join(lines)[-6000:])
        raise AssertionError(f"{exc}; last printed: {_last_described}") from None


def produce(cluster, first: int, count: int) -> None:
    p = ck.Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 5})
    for i in range(first, first + count):
        p.produce(TOPIC, str(i).encode(), partition=0)
    assert p.flush(30) == 0


class Member:
    """pk's share consumer, with what it was handed (offset -> delivery counts) and the
    acknowledgements its brokers confirmed."""

    def __init__(self, bootstrap: str):
        self.consumer = ShareConsumer(bootstrap, GROUP, TOPIC, client_id="replication-share", max_wait_ms=200,
                                      max_records=15, timeout_s=10)
        self.deliveries: dict[int, list[int]] = {}
        self.confirmed: dict[int, str | None] = {}
        self.consumer.on_acknowledged = self._acknowledged

    def _acknowledged(self, topic, partition, offsets, error) -> None:
        for offset in offsets:
            self.confirmed[offset] = error

    def take(self, wanted, timeout: float = 60):
        """Poll until every offset in `wanted` was handed out (again); the records of the
        last polls, acknowledged by the caller."""
        wanted = set(wanted)
        got = []
        deadline = time.monotonic() + timeout
        while wanted - {r.offset for r in got}:
            assert time.monotonic() < deadline, f"not delivered: {sorted(wanted - {r.offset for r in got})}"
            for rec in self.consumer.poll(0.5):
                self.deliveries.setdefault(rec.offset, []).append(rec.delivery_count)
                got.append(rec)
        return got

    def acknowledge(self, records, kind: int, offsets) -> None:
        for rec in records:
            if rec.offset in offsets:
                self.consumer.acknowledge(rec, kind)

    def commit(self, offsets) -> None:
        """commitSync until the brokers confirmed these offsets' acknowledgements without an
        error (a share coordinator moving answers an error: the state is written later)."""
        for offset in offsets:
            self.confirmed.pop(offset, None)
        self.consumer.commit()
        assert all(self.confirmed.get(o, "unanswered") is None for o in offsets), self.confirmed

    def close(self) -> None:
        if self.consumer is not None:
            self.consumer.close()
            self.consumer = None


def test_share_group_moves_with_its_state_and_data_leaders(cluster, request):
    # The state topic is made (replicated, Kafka's settings) at the first FindCoordinator SHARE.
    probe = coordinator_key(GROUP, uuid.uuid4(), 0)
    state_leader = wait_share_coordinator(cluster, probe)
    config = cluster.get(f"/config/topics/{STATE}").decode()
    assert '"min.insync.replicas":"1"' in config and '"cleanup.policy":"compact"' in config
    assert len(cluster.state(STATE, 0)["isr"]) == 3
    # The data partition led by another broker; the last one standing is the third.
    data_leader = (state_leader + 1) % 3
    survivor = (state_leader + 2) % 3
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, replica_assignment=[[data_leader, survivor, state_leader]])])[
        TOPIC].result(15)
    cluster.wait_state(TOPIC, 0, lambda s: len(s["isr"]) == 3 and s["leader"] == data_leader)
    cluster.wait_applied(TOPIC, 1)
    (t,) = cluster.metadata(survivor, TOPIC)["topics"]
    topic_id = t["topic_id"]
    key = coordinator_key(GROUP, topic_id, 0)
    assert partition_for(GROUP, topic_id, 0, 1) == 0
    produce(cluster, 0, 40)

    # An empty group's offsets reset at its coordinator: the share coordinator initializes the state.
    r = pk("pk-share-groups", "--bootstrap-server", cluster.bootstrap, "--reset-offsets", "--to-earliest",
           "--execute", "--group", GROUP, "--topic", TOPIC)
    assert r.returncode == 0, r.stderr
    wait_described(cluster, 0, 40)

    member = Member(cluster.bootstrap)
    request.addfinalizer(member.close)
    got = member.take(range(15))
    member.acknowledge(got, ACCEPT, range(10))
    member.acknowledge(got, RELEASE, range(10, 15))
    member.commit(range(15))
    wait_described(cluster, 0, 30, member)  # (one write: it stored the start it had, 0)

    # Only the leader of the state partition answers the state APIs.
    assert wait_share_coordinator(cluster, key) == state_leader
    for b in cluster.running():
        summary = state_summary(cluster, b, topic_id)
        if b == state_leader:
            assert (summary["error_code"], summary["start_offset"]) == (0, 0)
        else:
            assert summary["error_code"] == NOT_COORDINATOR

    # Only the group coordinator answers for the share group.
    group_coordinator = cluster.state("__consumer_offsets", 0)["leader"]
    for b in cluster.running():
        assert share_group_describe(cluster, b)["error_code"] == (0 if b == group_coordinator else NOT_COORDINATOR)

    # 1. The share coordinator's broker dies: the state moves with the partition's leadership.
    cluster.kill(state_leader)
    cluster.wait_state(STATE, 0, lambda s: s["leader"] not in (state_leader, -1))
    new_coordinator = wait_share_coordinator(cluster, key)
    assert new_coordinator != state_leader
    assert state_summary(cluster, new_coordinator, topic_id)["start_offset"] == 0
    other = next(b for b in cluster.running() if b != new_coordinator)
    assert state_summary(cluster, other, topic_id)["error_code"] == NOT_COORDINATOR

    got = member.take(range(10, 40))
    assert [member.deliveries[o] for o in range(10)] == [[1]] * 10  # accepted: never delivered again
    assert [member.deliveries[o] for o in range(10, 15)] == [[1, 2]] * 5  # released: counted on
    assert [member.deliveries[o] for o in range(15, 40)] == [[1]] * 25
    member.acknowledge(got, ACCEPT, range(10, 40))
    member.commit(range(10, 40))
    wait_described(cluster, 10, 0, member)

    # 2. The data partition's leader dies holding acquired records: the new leader reads the
    # state from the share coordinator; what was acquired there is delivered again.
    produce(cluster, 40, 20)
    got = member.take(range(40, 55))
    member.acknowledge(got, ACCEPT, range(40, 45))
    member.acknowledge(got, RELEASE, range(45, 50))
    member.commit(range(40, 50))  # 50..54 stay acquired, unacknowledged
    wait_described(cluster, 40, 15, member)
    cluster.kill(data_leader)
    cluster.wait_state(TOPIC, 0, lambda s: s["leader"] == survivor)
    got = member.take(range(45, 60))
    assert [member.deliveries[o] for o in range(40, 45)] == [[1]] * 5
    assert [member.deliveries[o] for o in range(45, 50)] == [[1, 2]] * 5
    # acquisitions are not written (as in Kafka): the new leader hands them out anew
    assert [member.deliveries[o][-1] for o in range(50, 55)] == [1] * 5
    assert [member.deliveries[o] for o in range(55, 60)] == [[1]] * 5
    assert [o for o in range(45) if len(member.deliveries[o]) > 1] == list(range(10, 15))
    member.acknowledge(got, ACCEPT, range(45, 60))
    member.commit(range(45, 60))
    wait_described(cluster, 45, 0, member)
    # The member is in the group at whichever broker coordinates it now (a new coordinator
    # answered its heartbeat UNKNOWN_MEMBER_ID, and it rejoined with its member id).
    (survivor,) = cluster.running()

    def rejoined():
        member.consumer.heartbeat()
        described = share_group_describe(cluster, survivor)
        return described["error_code"] == 0 and described["group_state"] == "Stable" and \
            [m["member_id"] for m in described["members"]] == [member.consumer.member_id]
    wait_for(rejoined, 30, what="the member in the group at its new coordinator")

    # The empty group's offsets deleted at its coordinator: the share coordinator drops the state.
    member.close()
    r = pk("pk-share-groups", "--bootstrap-server", cluster.bootstrap, "--delete-offsets", "--group", GROUP,
           "--topic", TOPIC)
    assert r.returncode == 0, r.stderr
    summary = state_summary(cluster, survivor, topic_id)
    assert (summary["error_code"], summary["start_offset"]) == (0, -1)
