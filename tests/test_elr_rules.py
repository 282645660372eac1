"""engine/broker/elr.py's rules on their own: the states Kafka 4.4.0's controller reached for
the same steps on a KRaft cluster (tests/test_replication_elr.py keeps its kafka-topics lines;
RF 3, replicas 0,1,2, min.insync.replicas=2; a grown ISR in pk's order of joining), and the
cases around them."""

from __future__ import annotations

from pk.engine.broker.elr import ONLINE, UNCLEAN, Partition, change


def _step(p: Partition, target_isr, live, min_isr=2, **kw) -> Partition:
    c = change(p, target_isr, min_isr, lambda r: r in live, **kw)
    return Partition(p.replicas, c.leader, c.isr, c.elr, c.last_known_elr)


def _view(p: Partition):
    return p.leader, list(p.isr), list(p.elr), list(p.last_known_elr)


def test_controlled_stops_and_returns_as_kafka_4_4():
    p = Partition((0, 1, 2), 0, (0, 1, 2))
    p = _step(p, [0, 2], {0, 2})  # broker 1 stops
    assert _view(p) == (0, [0, 2], [], [])
    p = _step(p, [0], {0})  # broker 2 stops: below min.insync.replicas
    assert _view(p) == (0, [0], [2], [])
    p = _step(p, [], set())  # broker 0 stops: no ISR left
    assert _view(p) == (-1, [], [0, 2], [0])
    p = _step(p, [], {2})  # broker 2 back: elected from the ELR, cleanly
    assert _view(p) == (2, [2], [0], [])
    p = _step(p, [2, 1], {1, 2})  # broker 1 joins the ISR: back at min.insync.replicas
    assert _view(p) == (2, [2, 1], [], [])


def test_unclean_shutdowns_as_kafka_4_4():
    p = Partition((0, 1, 2), 2, (2,), (1,), ())
    p = _step(p, [], set())  # broker 2 killed
    assert _view(p) == (-1, [], [1, 2], [2])
    p = _step(p, [], set(), unclean_shutdown=(1,))  # broker 1 back after an unclean shutdown
    assert _view(p) == (-1, [], [2], [2])
    p = _step(p, [], set(), unclean_shutdown=(2,))  # broker 2 too, before it is registered
    assert _view(p) == (-1, [], [], [2])
    c = change(p, [], 2, lambda r: r in {1, 2})  # registered: the last known leader, uncleanly
    assert (c.leader, c.isr, c.elr, c.last_known_elr, c.unclean) == (2, (2,), (), (), True)


def test_a_dead_last_known_leader_is_not_elected():
    p = Partition((0, 1, 2), -1, (), (), (2,))
    assert _view(_step(p, [], {0, 1})) == (-1, [], [], [2])


def test_no_elr_at_or_above_min_isr_and_an_unclean_election_clears_it():
    p = Partition((0, 1, 2), 0, (0, 1, 2))
    assert _view(_step(p, [0, 1], {0, 1})) == (0, [0, 1], [], [])
    p = Partition((0, 1, 2), -1, (), (0,), (0,))
    c = change(p, [], 2, lambda r: r == 1, election=UNCLEAN)
    assert (c.leader, c.isr, c.elr, c.last_known_elr, c.unclean) == (1, (1,), (), (), True)


def test_without_elr_the_isr_keeps_its_members():
    p = Partition((0, 1, 2), 0, (0,))
    c = change(p, [], 2, lambda r: False, election=ONLINE, enabled=False)
    assert (c.leader, c.isr, c.elr, c.last_known_elr) == (-1, (0,), (), ())
