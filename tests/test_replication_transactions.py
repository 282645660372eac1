"""Transactions on a replicated cluster (engine/broker/transactions.py, docs/replication.md):
three pk-server-start brokers on a real ZooKeeper, topics with replication factor 3 whose
partitions are led by different brokers. The transaction coordinator writes each COMMIT/ABORT
marker at the partition's leader (itself, or WriteTxnMarkers to the leader), the followers copy
the markers and index the aborts, offsets sent with a transaction become the group's when its
marker reaches the group coordinator, and a coordinator killed with SIGKILL loses nothing
committed and shows nothing aborted once it is back."""

from __future__ import annotations

import glob
import os
import time

import pytest

from conftest import ProtocolClient
from replication_cluster import ReplicationCluster, wait_for

pytest.importorskip("kazoo.client")
ck = pytest.importorskip("confluent_kafka")

(OFFSET_FETCH, FIND_COORDINATOR, INIT_PRODUCER_ID, ADD_OFFSETS_TO_TXN, END_TXN, WRITE_TXN_MARKERS,
 TXN_OFFSET_COMMIT, DESCRIBE_TRANSACTIONS) = 9, 10, 22, 25, 26, 27, 28, 65
NONE, NOT_LEADER_OR_FOLLOWER, UNSTABLE_OFFSET_COMMIT = 0, 6, 88


@pytest.fixture
def cluster(zookeeper, tmp_path):
    # the coordinators' internal topics replicated as in a production cluster; abandoned
    # transactions aborted within seconds (the tests kill their coordinator)
    with ReplicationCluster(zookeeper, tmp_path, 3, {
            "transaction.state.log.replication.factor": "3", "transaction.state.log.min.isr": "2",
            "offsets.topic.replication.factor": "3",
            "transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000"}) as c:
        c.start_all()
        yield c


def create(cluster, name, partitions=3, rf=3):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": cluster.brokers[0].bootstrap})
    admin.create_topics([NewTopic(name, partitions, rf)])[name].result(15)
    for p in range(partitions):
        cluster.wait_state(name, p, lambda s: len(s["isr"]) == rf)
    cluster.wait_applied(name, partitions)
    return {p: cluster.state(name, p)["leader"] for p in range(partitions)}


def txn_producer(bootstrap, tid, **extra):
    p = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "linger.ms": 5,
                     "topic.metadata.refresh.interval.ms": 1000, "retry.backoff.ms": 100,
                     "message.timeout.ms": 60000, **extra})
    p.init_transactions(60)
    return p


def send(p, topic, values_by_partition):
    for partition, values in values_by_partition.items():
        for v in values:
            p.produce(topic, v, partition=partition)
    assert p.flush(60) == 0


def read_committed(bootstrap, topic, partitions, expected, timeout=60.0) -> list[bytes]:
    """The read_committed view of `partitions` from offset 0 through `bootstrap`: waits for
    `expected` records, then polls a little longer for any that should not be there."""
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": f"rc-{time.monotonic_ns()}",
                     "isolation.level": "read_committed", "enable.auto.commit": False,
                     "topic.metadata.refresh.interval.ms": 1000})
    c.assign([ck.TopicPartition(topic, p, 0) for p in partitions])
    out = []
    deadline = time.monotonic() + timeout
    extra_until = None
    try:
        while time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and not m.error():
                out.append(m.value())
            if len(out) >= expected:
                extra_until = extra_until or time.monotonic() + 1.0
                if time.monotonic() > extra_until:
                    break
    finally:
        c.close()
    return out


def coordinator_of(cluster, tid) -> int:
    """The broker that coordinates `tid` (DescribeTransactions answers it without error)."""
    for b in cluster.running():
        with ProtocolClient(cluster.brokers[b].port, timeout=10) as client:
            (state,) = client.call(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [tid]})["transaction_states"]
        if state["error_code"] == NONE:
            return b
    raise AssertionError(f"no broker coordinates {tid}")


def replica_files(cluster, broker, topic, partition, suffix):
    return sorted(glob.glob(os.path.join(cluster.brokers[broker].data_dir, f"{topic}-{partition}", f"*{suffix}")))


def markers_in(cluster, broker, topic, partition) -> list[str]:
    """The COMMIT/ABORT markers in one replica's segment files, in log order."""
    from pk.engine import records

    kinds = []
    for path in replica_files(cluster, broker, topic, partition, ".log"):
        with open(path, "rb") as f:
            data = f.read()
        for pos, header in records.iter_batches(data):
            if header.is_control:
                kinds.append("COMMIT" if records.control_type(data, pos, header) == records.CONTROL_COMMIT
                             else "ABORT")
    return kinds


def aborted_in_index(cluster, broker, topic, partition) -> int:
    """Entries in one replica's .txnindex files (one per aborted transaction)."""
    return sum(os.path.getsize(p) // 34 for p in replica_files(cluster, broker, topic, partition, ".txnindex"))


def test_markers_reach_every_leader_and_every_replica(cluster):
    leaders = create(cluster, "tx")
    assert len(set(leaders.values())) > 1, leaders  # the markers cannot all be local
    p = txn_producer(cluster.bootstrap, "tx-1")
    for label, commit in (("c1", True), ("a1", False), ("c2", True)):
        p.begin_transaction()
        send(p, "tx", {q: [f"{label}-{q}".encode()] for q in range(3)})
        if commit:
            p.commit_transaction(60)
        else:
            p.abort_transaction(60)
    committed = sorted(f"{label}-{q}".encode() for label in ("c1", "c2") for q in range(3))
    for b in cluster.running():  # each broker's view of who leads what
        assert sorted(read_committed(cluster.brokers[b].bootstrap, "tx", range(3), 6)) == committed
    for q in range(3):
        for b in cluster.running():  # the followers copied the markers and indexed the abort
            wait_for(lambda: markers_in(cluster, b, "tx", q) == ["COMMIT", "ABORT", "COMMIT"],
                     what=f"the markers of tx-{q} on broker {b}")
            assert aborted_in_index(cluster, b, "tx", q) == 1


def test_write_txn_markers_only_at_the_leader(cluster):
    leaders = create(cluster, "wm", partitions=1)
    follower = next(b for b in cluster.running() if b != leaders[0])
    body = {"markers": [{"producer_id": 4242, "producer_epoch": 0, "transaction_result": False,
                         "topics": [{"name": "wm", "partition_indexes": [0]}], "coordinator_epoch": 0}]}
    answers = {}
    for b in (follower, leaders[0]):
        with ProtocolClient(cluster.brokers[b].port, timeout=30) as client:
            (marker,) = client.call(WRITE_TXN_MARKERS, 1, body)["markers"]
        answers[b] = marker["topics"][0]["partitions"][0]["error_code"]
    assert answers == {follower: NOT_LEADER_OR_FOLLOWER, leaders[0]: NONE}
    for b in cluster.running():  # answered once the ISR had it (acks=all)
        assert markers_in(cluster, b, "wm", 0) == ["ABORT"]


def find_coordinator(cluster, broker, key, key_type) -> int:
    """The coordinator `broker` names for the key (the first ask creates the internal topic:
    COORDINATOR_NOT_AVAILABLE until its leaders are elected)."""
    def ask():
        with ProtocolClient(cluster.brokers[broker].port, timeout=10) as client:
            answer = client.call(FIND_COORDINATOR, 3, {"key": key, "key_type": key_type})
        return answer["node_id"] + 1 if answer["error_code"] == NONE else None
    return wait_for(ask, what=f"a coordinator for {key}") - 1


def offset_fetch(client, group, topic, require_stable=True) -> dict:
    """The answer for `topic`-0; a group-level error (NOT_COORDINATOR,
    COORDINATOR_LOAD_IN_PROGRESS while a new leader loads the partition) comes with no topics,
    and is returned as the partition's error so that waits retry it."""
    (g,) = client.call(OFFSET_FETCH, 8, {"groups": [{"group_id": group, "topics": [
        {"name": topic, "partition_indexes": [0]}]}], "require_stable": require_stable})["groups"]
    if g["error_code"] != NONE or not g["topics"] or not g["topics"][0]["partitions"]:
        return {"error_code": g["error_code"], "committed_offset": None}
    return g["topics"][0]["partitions"][0]


def begin_offsets_transaction(cluster, tid, topic, offset):
    """A transaction whose offsets (`offset` for `topic`-0) go to a group coordinated by
    another broker than the transaction: (transaction coordinator, group, its coordinator,
    the producer's ids), the TxnOffsetCommit done."""
    txn_coordinator = find_coordinator(cluster, 0, tid, 1)
    other = next(b for b in cluster.running() if b != txn_coordinator)
    group, group_broker = next((g, b) for g in (f"{tid}-group-{i}" for i in range(100))
                               for b in [find_coordinator(cluster, other, g, 0)] if b != txn_coordinator)
    with ProtocolClient(cluster.brokers[txn_coordinator].port, timeout=30) as coord, \
            ProtocolClient(cluster.brokers[group_broker].port, timeout=30) as groups:
        init = coord.call(INIT_PRODUCER_ID, 4, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                                "producer_id": -1, "producer_epoch": -1})
        assert init["error_code"] == NONE
        ids = {"transactional_id": tid, "producer_id": init["producer_id"], "producer_epoch": init["producer_epoch"]}
        assert coord.call(ADD_OFFSETS_TO_TXN, 3, {**ids, "group_id": group})["error_code"] == NONE
        answer = groups.call(TXN_OFFSET_COMMIT, 3, {**ids, "group_id": group, "generation_id_or_member_epoch": -1,
                                                     "member_id": "", "group_instance_id": None, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "committed_offset": offset,
                                            "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
        assert answer["topics"][0]["partitions"][0]["error_code"] == NONE
        # held until the marker: OffsetFetch require_stable says so, a plain one shows nothing
        assert offset_fetch(groups, group, topic)["error_code"] == UNSTABLE_OFFSET_COMMIT
        assert offset_fetch(groups, group, topic, require_stable=False)["committed_offset"] == -1
    return txn_coordinator, group, group_broker, ids


def end_transaction(cluster, coordinator, ids, commit):
    with ProtocolClient(cluster.brokers[coordinator].port, timeout=30) as coord:
        assert coord.call(END_TXN, 3, {**ids, "committed": commit})["error_code"] == NONE


def committed_at_coordinator(cluster, group, topic):
    """The group's committed offset for `topic`-0, asked of its current coordinator (None
    while pending or while no coordinator answers)."""
    asked = next(iter(cluster.running()))
    try:
        broker = find_coordinator(cluster, asked, group, 0)
        with ProtocolClient(cluster.brokers[broker].port, timeout=10) as client:
            part = offset_fetch(client, group, topic)
    except (OSError, ConnectionError, AssertionError):
        return None
    return part["committed_offset"] if part["error_code"] == NONE else None


def test_offsets_sent_to_another_broker_than_the_transaction_coordinator(cluster):
    """TxnOffsetCommit at the group's coordinator, another broker than the transaction's: the
    offsets are a transactional batch in __consumer_offsets until the marker of the commit
    (or of the abort) reaches that partition's leader."""
    create(cluster, "src", partitions=1)
    coordinator, group, _, ids = begin_offsets_transaction(cluster, "ctp-1", "src", 7)
    end_transaction(cluster, coordinator, ids, True)
    wait_for(lambda: committed_at_coordinator(cluster, group, "src") == 7, what="the offset to be committed")
    coordinator, group, _, ids = begin_offsets_transaction(cluster, "ctp-2", "src", 9)
    end_transaction(cluster, coordinator, ids, False)
    wait_for(lambda: committed_at_coordinator(cluster, group, "src") == -1, what="the aborted offset to be dropped")


def test_transactional_offsets_survive_the_group_coordinator(cluster):
    """The group's coordinator is killed between TxnOffsetCommit and EndTxn: the new leader of
    the __consumer_offsets partition has the transactional batch and takes the marker."""
    create(cluster, "src2", partitions=1)
    coordinator, group, group_broker, ids = begin_offsets_transaction(cluster, "gk-1", "src2", 11)
    cluster.kill(group_broker)
    end_transaction(cluster, coordinator, ids, True)  # the markers wait for the new leader
    wait_for(lambda: committed_at_coordinator(cluster, group, "src2") == 11, timeout=60,
             what="the offset to be committed by the new group coordinator")


def test_consume_transform_produce(cluster):
    create(cluster, "in", partitions=1)
    create(cluster, "out2", partitions=2)
    plain = ck.Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(10):
        plain.produce("in", f"v{i}".encode(), partition=0)
    assert plain.flush(30) == 0
    consumer = ck.Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "ctp", "enable.auto.commit": False,
                            "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    consumer.subscribe(["in"])
    p = txn_producer(cluster.bootstrap, "ctp-2")
    seen = []
    deadline = time.monotonic() + 60
    while len(seen) < 10 and time.monotonic() < deadline:
        msgs = [m for m in consumer.consume(10, 1.0) if not m.error()]
        if not msgs:
            continue
        p.begin_transaction()
        for m in msgs:
            p.produce("out2", m.value().upper(), partition=len(seen) % 2)
            seen.append(m.value())
        p.send_offsets_to_transaction(consumer.position(consumer.assignment()), consumer.consumer_group_metadata(),
                                      30)
        p.commit_transaction(60)
    assert len(seen) == 10
    committed = consumer.committed([ck.TopicPartition("in", 0)], 30)
    consumer.close()
    assert committed[0].offset == 10
    assert sorted(read_committed(cluster.bootstrap, "out2", range(2), 10)) == sorted(v.upper() for v in seen)


def restart(cluster, broker):
    """Start a killed broker again once ZooKeeper ended its session (a registration still
    there makes a broker refuse to start, as Kafka's does)."""
    wait_for(lambda: not cluster.zk.exists(f"/brokers/ids/{broker}"), what=f"broker {broker}'s session to end")
    cluster.start(broker)


def test_coordinator_killed_mid_transaction_and_after_end(cluster):
    leaders = create(cluster, "kt")
    assert len(set(leaders.values())) > 1, leaders
    # its abandoned transaction times out quickly
    p = txn_producer(cluster.bootstrap, "kill-1", **{"transaction.timeout.ms": 8000, "message.timeout.ms": 8000})
    p.begin_transaction()
    send(p, "kt", {q: [f"done-{q}".encode()] for q in range(3)})
    p.commit_transaction(60)
    p.begin_transaction()
    send(p, "kt", {q: [f"open-{q}".encode()] for q in range(3)})  # never committed
    victim = coordinator_of(cluster, "kill-1")
    cluster.kill(victim)
    others = ",".join(cluster.brokers[b].bootstrap for b in cluster.running())
    # The producer starts over through the brokers left: a new coordinator, a new producer id.
    p2 = txn_producer(others, "kill-1")
    p2.begin_transaction()
    send(p2, "kt", {q: [f"after-{q}".encode()] for q in range(3)})
    p2.commit_transaction(90)
    second = coordinator_of(cluster, "kill-1")
    # The killed coordinator comes back, finds the transaction it had open and aborts it (its
    # timeout): the partitions' last stable offsets move past it.
    restart(cluster, victim)
    expected = sorted(f"{label}-{q}".encode() for label in ("done", "after") for q in range(3))
    got = read_committed(cluster.bootstrap, "kt", range(3), 6, timeout=90)
    assert sorted(got) == expected
    # Killed right after EndTxn: the commit is kept.
    p2.begin_transaction()
    send(p2, "kt", {q: [f"end-{q}".encode()] for q in range(3)})
    p2.commit_transaction(90)
    cluster.kill(second)
    restart(cluster, second)
    expected += [f"end-{q}".encode() for q in range(3)]
    got = read_committed(cluster.bootstrap, "kt", range(3), 9, timeout=90)
    assert sorted(got) == sorted(expected)
    for b in cluster.running():
        for q in range(3):
            wait_for(lambda: "ABORT" in markers_in(cluster, b, "kt", q), what=f"the abort marker of kt-{q} on {b}")


def test_java_transactional_producer(cluster, kafka_tools):
    """Kafka 4.4's Java producer in transactions over partitions led by three brokers: the
    cluster reports no transaction version 2 (as a ZooKeeper-mode Kafka), so the client adds
    its partitions through the coordinator and every committed record is read back."""
    leaders = create(cluster, "java-txn")
    assert len(set(leaders.values())) > 1
    bootstrap = ",".join(b.bootstrap for b in cluster.brokers.values())
    result = kafka_tools("kafka-producer-perf-test", "--topic", "java-txn", "--num-records", "3000",
                         "--record-size", "50", "--throughput", "-1", "--transactional-id", "java-tid",
                         "--transaction-duration-ms", "200", "--command-property",
                         f"bootstrap.servers={bootstrap}", "acks=all", timeout=120)
    assert result.returncode == 0, result.err
    assert "3000 records sent" in result.out
    assert len(read_committed(bootstrap, "java-txn", range(3), 3000)) == 3000
