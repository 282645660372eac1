"""Eligible leader replicas (KIP-966) on pk-server-start brokers (engine/broker/elr.py,
docs/replication.md): a partition with RF 3 and min.insync.replicas=2 whose brokers stop one
by one keeps, in its state znode, the replicas that left an ISR already below min.insync.replicas
(the ELR) and the leader it had when its ISR emptied (LastKnownElr); `pk-topics --describe
--bootstrap-server` prints them as Kafka 4.4's kafka-topics does; when every replica is down, the
first ELR member back is elected (a Kafka 2.8 controller would leave the partition offline),
and ISR members rejoining clear the ELR.

One cluster for the module; the steps run in order (each test starts from the previous one's
state). The partition's replicas are brokers 0, 1 and 2, which stop with SIGTERM (a controlled
shutdown, so Kafka keeps them in the ELR). Broker 3 holds no replica and stays up, as Kafka
4.4's KRaft controller does while its brokers stop: with every replica down, a pk controller
must still be running to write the partition's state (with none, the first broker back does it,
to the same end)."""

from __future__ import annotations

import pytest

from conftest import ProtocolClient, Runner
from replication_cluster import ReplicationCluster, wait_for

from pk.engine.protocol import ApiKey

pytest.importorskip("kazoo.client")

TOPIC = "elr"

# Kafka 4.4.0's kafka-topics --describe after each step, measured once (2026-11-29) on a KRaft
# cluster of the same shape: a controller-only node and brokers 0-3 (broker.session.timeout.ms
# 6000), the topic created with --replica-assignment 0:1:2 --config min.insync.replicas=2, the
# brokers stopped with SIGTERM and killed with SIGKILL in this module's order, each line read
# through a running broker. The oracle fixtures start no multi-node KRaft cluster (five JVMs
# on the test machine's two cores took minutes), so the lines are kept here.
LINE = "\tTopic: elr\tPartition: 0\tLeader: {}\tReplicas: 0,1,2\tIsr: {}\tElr: {}\tLastKnownElr: {}"
KAFKA_4_4 = {
    "created": LINE.format(0, "0,1,2", "", ""),
    "stopped 1": LINE.format(0, "0,2", "", ""),
    "stopped 2": LINE.format(0, "0", "2", ""),  # issue 23's `Isr: 0  Elr: 2  LastKnownElr: `
    "stopped 0": LINE.format("none", "", "0,2", "0"),
    "started 2": LINE.format(2, "2", "0", ""),
    "min.insync.replicas=1": LINE.format(2, "2", "", ""),
    "min.insync.replicas=2": LINE.format(2, "2", "", ""),
    "started 1": LINE.format(2, "1,2", "", ""),
    "started 0": LINE.format(2, "0,1,2", "", ""),
    "killed 0": LINE.format(2, "1,2", "", ""),
    "killed 1": LINE.format(2, "2", "1", ""),
    "killed 2": LINE.format("none", "", "1,2", "2"),
    "started 1 after kill": LINE.format("none", "", "2", "2"),
    "started 2 after kill": LINE.format(2, "2", "", ""),
    "started 0 after kill": LINE.format(2, "0,1,2", "", ""),
}


def _pk_order(line: str, isr_in_joining_order: str) -> str:
    """Kafka 4.4's line with pk's ISR order: Kafka 4.4 lists a grown ISR sorted, pk keeps Kafka
    2.8's order of joining (what the Kafka 2.8 oracle tests compare), a difference outside ELR."""
    isr = line.split("\tIsr: ")[1].split("\t")[0]
    assert sorted(isr.split(",")) == sorted(isr_in_joining_order.split(","))
    return line.replace(f"\tIsr: {isr}\t", f"\tIsr: {isr_in_joining_order}\t")


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("elr")
    # the shortest session the shared ZooKeeper grants (2 ticks): SIGKILLs are noticed sooner
    with ReplicationCluster(zookeeper, tmp, 4, {"auto.leader.rebalance.enable": "false",
                                                "zookeeper.session.timeout.ms": "4000"}) as c:
        c.start_all()
        c.tools = Runner(str(tmp / "tools"))
        yield c


def _describe_line(cluster, broker: int) -> str:
    """pk-topics --describe through one broker: the partition's line (retried while the
    broker is still taking in a change: a tool error is "not yet")."""
    def line():
        proc = cluster.tools("pk-topics", "--describe", "--topic", TOPIC,
                             "--bootstrap-server", cluster.brokers[broker].bootstrap)
        if proc.returncode != 0:
            return None
        lines = [x for x in proc.out.splitlines() if x.startswith("\tTopic: ")]
        return lines[0] if len(lines) == 1 else None
    return wait_for(line, what="pk-topics --describe")


def _elr_view(state: dict) -> tuple[int, list[int], list[int], list[int]]:
    """(leader, ISR, ELR, LastKnownElr) of a state znode as Kafka 4.4 has them."""
    extra = state.get("elr_state") or {}
    return (state["leader"], extra.get("isr", state["isr"]), extra.get("eligible_leader_replicas", []),
            extra.get("last_known_elr", []))


def _wait_view(cluster, leader, isr, elr, last_known):
    want = (leader, sorted(isr), sorted(elr), list(last_known))
    return cluster.wait_state(TOPIC, 0, lambda s: (lambda v: (v[0], sorted(v[1]), sorted(v[2]), v[3]))(
        _elr_view(s)) == want, timeout=120)  # a state's wait (sessions, passes on a loaded machine)


def _wait_described(cluster, broker: int, expected: str) -> str:
    """Until the broker's answer is `expected` (it applies the znode on its next read)."""
    def described():
        got = _describe_line(cluster, broker)
        return got if got == expected else None
    try:
        return wait_for(described, what=f"describe through broker {broker}")
    except Exception:
        raise AssertionError(f"broker {broker} describes {_describe_line(cluster, broker)!r}, "
                             f"expected {expected!r}") from None


def test_stopping_two_brokers_leaves_an_elr_as_kafka_4_4_prints_it(cluster):
    created = cluster.tools("pk-topics", "--create", "--topic", TOPIC, "--replica-assignment", "0:1:2",
                            "--config", "min.insync.replicas=2", "--bootstrap-server", cluster.brokers[0].bootstrap)
    assert created.returncode == 0, created.err
    _wait_view(cluster, 0, [0, 1, 2], [], [])
    _wait_described(cluster, 0, KAFKA_4_4["created"])

    cluster.stop(1)  # ISR 0,2: still min.insync.replicas, no ELR
    _wait_view(cluster, 0, [0, 2], [], [])
    _wait_described(cluster, 0, KAFKA_4_4["stopped 1"])
    cluster.stop(2)  # ISR 0, below min.insync.replicas: 2 left it, so 2 is eligible
    state = _wait_view(cluster, 0, [0], [2], [])
    assert state["isr"] == [0]  # what Kafka 2.8 reads is the same ISR
    _wait_described(cluster, 0, KAFKA_4_4["stopped 2"])


def test_a_replica_of_the_elr_is_elected_when_the_isr_is_empty(cluster):
    cluster.stop(0)  # the last ISR member: the ISR empties, 0 joins the ELR and is the last known leader
    state = _wait_view(cluster, -1, [], [0, 2], [0])
    # Kafka 2.8's "isr" keeps its last member, so 2.8's tools print what they printed before
    assert state["isr"] == [0] and state["elr_state"]["isr"] == []
    _wait_described(cluster, 3, KAFKA_4_4["stopped 0"])

    cluster.start(2)  # an ELR member back: it leads, clean, with the ISR to itself
    _wait_view(cluster, 2, [2], [0], [])
    _wait_described(cluster, 2, KAFKA_4_4["started 2"])


def test_setting_min_insync_replicas_clears_the_elr(cluster):
    # Kafka 4.4's controller clears a topic's ELRs whenever its min.insync.replicas is set
    for value, view in (("1", (2, [2], [], [])), ("2", (2, [2], [], []))):
        altered = cluster.tools("pk-configs", "--bootstrap-server", cluster.brokers[3].bootstrap, "--alter",
                                "--entity-type", "topics", "--entity-name", TOPIC,
                                "--add-config", f"min.insync.replicas={value}")
        assert altered.returncode == 0, altered.err
        wait_for(lambda: f'"min.insync.replicas":"{value}"' in (cluster.get(f"/config/topics/{TOPIC}") or b"").decode(),
                 what="the config in ZooKeeper")
        _wait_view(cluster, *view)
        _wait_described(cluster, 3, KAFKA_4_4[f"min.insync.replicas={value}"])


def test_replicas_rejoining_the_isr_clear_the_elr(cluster):
    cluster.start(1)  # not in the ELR (it left while the ISR was at min.insync.replicas): it catches up
    state = _wait_view(cluster, 2, [1, 2], [], [])
    assert "elr_state" not in state  # back to Kafka 2.8's znode, byte for byte
    _wait_described(cluster, 3, _pk_order(KAFKA_4_4["started 1"], "2,1"))
    cluster.start(0)
    _wait_view(cluster, 2, [0, 1, 2], [], [])
    _wait_described(cluster, 3, _pk_order(KAFKA_4_4["started 0"], "2,1,0"))
    # every broker serves the lists of the znode (DescribeTopicPartitions, raw frames)
    for broker in (0, 1, 2):
        wait_for(lambda: _served(cluster, broker) == ([2, 1, 0], [], []), what=f"broker {broker}'s answer")


def _served(cluster, broker: int):
    """(ISR, ELR, LastKnownElr) in the broker's DescribeTopicPartitions answer; None: not yet."""
    try:
        with ProtocolClient(cluster.brokers[broker].port, timeout=10) as client:
            answer = client.call(ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, {
                "topics": [{"name": TOPIC}], "response_partition_limit": 10, "cursor": None})
    except OSError:
        return None
    (topic,) = answer["topics"]
    if topic["error_code"] or len(topic["partitions"]) != 1:
        return None
    (p,) = topic["partitions"]
    return p["isr_nodes"], p["eligible_leader_replicas"], p["last_known_elr"]


def test_a_broker_back_from_an_unclean_shutdown_leaves_the_elr(cluster):
    # SIGKILL: no clean-shutdown marker, so each broker, back, leaves the ISRs and ELRs before it
    # registers, as Kafka 4.4's controller takes a broker registering after an unclean shutdown
    cluster.kill(0)
    _wait_view(cluster, 2, [1, 2], [], [])  # ZooKeeper's session timeout, then the controller
    _wait_described(cluster, 3, _pk_order(KAFKA_4_4["killed 0"], "2,1"))
    cluster.kill(1)
    _wait_view(cluster, 2, [2], [1], [])
    _wait_described(cluster, 3, KAFKA_4_4["killed 1"])
    cluster.kill(2)
    _wait_view(cluster, -1, [], [1, 2], [2])
    _wait_described(cluster, 3, KAFKA_4_4["killed 2"])

    cluster.start(1)  # out of the ELR, and not elected
    _wait_view(cluster, -1, [], [2], [2])
    _wait_described(cluster, 1, KAFKA_4_4["started 1 after kill"])
    # the last known leader, back with no ELR left: elected, uncleanly (Kafka's balanced
    # recovery: Isr: 2, then 1 catches up and joins)
    cluster.start(2)
    _wait_view(cluster, 2, [1, 2], [], [])
    cluster.start(0)
    _wait_view(cluster, 2, [0, 1, 2], [], [])
    _wait_described(cluster, 3, _pk_order(KAFKA_4_4["started 0 after kill"], "2,1,0"))
