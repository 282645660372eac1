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

from conftest import Runner
from replication_cluster import ReplicationCluster, wait_for

pytest.importorskip("kazoo.client")

TOPIC = "elr"

# Kafka 4.4.0's kafka-topics --describe for the issue's scenario (issue 23: a 3-broker Kafka
# 4.4 KRaft cluster, the topic created with --replica-assignment 0:1:2 and
# --config min.insync.replicas=2, brokers 1 and then 2 stopped; measured once by hand, as
# the oracle fixtures start no multi-node KRaft cluster). The engine/broker/elr.py rules give
# the same from PartitionChangeBuilder's.
KAFKA_4_4_AFTER_TWO_STOPS = ("\tTopic: elr\tPartition: 0\tLeader: 0\tReplicas: 0,1,2\tIsr: 0"
                             "\tElr: 2\tLastKnownElr: ")


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("elr")
    with ReplicationCluster(zookeeper, tmp, 4, {"auto.leader.rebalance.enable": "false"}) as c:
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
        _elr_view(s)) == want, timeout=40)


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
    _wait_described(cluster, 0, "\tTopic: elr\tPartition: 0\tLeader: 0\tReplicas: 0,1,2\tIsr: 0,1,2"
                                "\tElr: \tLastKnownElr: ")

    cluster.stop(1)  # ISR 0,2: still min.insync.replicas, no ELR
    _wait_view(cluster, 0, [0, 2], [], [])
    cluster.stop(2)  # ISR 0, below min.insync.replicas: 2 left it, so 2 is eligible
    state = _wait_view(cluster, 0, [0], [2], [])
    assert state["isr"] == [0]  # what Kafka 2.8 reads is the same ISR
    assert _wait_described(cluster, 0, KAFKA_4_4_AFTER_TWO_STOPS) == KAFKA_4_4_AFTER_TWO_STOPS


def test_a_replica_of_the_elr_is_elected_when_the_isr_is_empty(cluster):
    cluster.stop(0)  # the last ISR member: the ISR empties, 0 joins the ELR and is the last known leader
    state = _wait_view(cluster, -1, [], [0, 2], [0])
    # Kafka 2.8's "isr" keeps its last member, so 2.8's tools print what they printed before
    assert state["isr"] == [0] and state["elr_state"]["isr"] == []
    _wait_described(cluster, 3, "\tTopic: elr\tPartition: 0\tLeader: none\tReplicas: 0,1,2\tIsr: "
                                "\tElr: 0,2\tLastKnownElr: 0")

    cluster.start(2)  # an ELR member back: it leads, clean, with the ISR to itself
    _wait_view(cluster, 2, [2], [0], [])
    _wait_described(cluster, 2, "\tTopic: elr\tPartition: 0\tLeader: 2\tReplicas: 0,1,2\tIsr: 2"
                                "\tElr: 0\tLastKnownElr: ")


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


def test_replicas_rejoining_the_isr_clear_the_elr(cluster):
    cluster.start(1)  # not in the ELR (it left while the ISR was at min.insync.replicas): it catches up
    state = _wait_view(cluster, 2, [1, 2], [], [])
    assert "elr_state" not in state  # back to Kafka 2.8's znode, byte for byte
    cluster.start(0)
    _wait_view(cluster, 2, [0, 1, 2], [], [])
    for broker in (0, 1, 2, 3):
        _wait_described(cluster, broker, "\tTopic: elr\tPartition: 0\tLeader: 2\tReplicas: 0,1,2\tIsr: 2,1,0"
                                         "\tElr: \tLastKnownElr: ")


def test_a_broker_back_from_an_unclean_shutdown_leaves_the_elr(cluster):
    # SIGKILL: no clean-shutdown marker, so each broker, back, leaves the ISRs and ELRs before it
    # registers, as Kafka 4.4's controller takes a broker registering after an unclean shutdown
    cluster.kill(0)
    _wait_view(cluster, 2, [1, 2], [], [])  # ZooKeeper's session timeout, then the controller
    cluster.kill(1)
    _wait_view(cluster, 2, [2], [1], [])
    cluster.kill(2)
    _wait_view(cluster, -1, [], [1, 2], [2])

    cluster.start(1)  # out of the ELR, and not elected
    _wait_view(cluster, -1, [], [2], [2])
    _wait_described(cluster, 1, "\tTopic: elr\tPartition: 0\tLeader: none\tReplicas: 0,1,2\tIsr: "
                                "\tElr: 2\tLastKnownElr: 2")
    # the last known leader, back with no ELR left: elected, uncleanly (Kafka's balanced recovery)
    cluster.start(2)
    _wait_view(cluster, 2, [1, 2], [], [])
    cluster.start(0)
    _wait_view(cluster, 2, [0, 1, 2], [], [])
