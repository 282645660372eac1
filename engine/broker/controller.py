"""The ZooKeeper-mode controller's commands: leader elections asked for through ElectLeaders and
partition reassignments asked for through AlterPartitionReassignments, as Kafka 2.8's
KafkaController carries them out.

As in Kafka 2.8, these requests are the controller's: the admin client sends them to the broker
Metadata names as controller, and any other broker answers NOT_CONTROLLER. The controller acts
on ZooKeeper directly (the state znode, `/brokers/topics/<t>`), every write conditional on the
version read; the brokers learn the outcome by their usual watches (zookeeper.py, replication.py).

Everything here blocks on ZooKeeper: callers run it in the executor.
"""

from __future__ import annotations

import logging

from kazoo.exceptions import BadVersionError, NoNodeError

from ..protocol import errors as E
from ..zk_formats import (
    BROKER_IDS,
    REASSIGN_PARTITIONS,
    ReplicaAssignment,
    decode_partition_state,
    decode_reassignment,
    decode_topic_assignment,
    encode_reassignment,
    encode_partition_state,
    encode_topic_assignment,
    partition_state_path,
    topic_path,
)

log = logging.getLogger("kafka.controller.KafkaController")

NOT_NEEDED = (E.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.")
NO_PARTITION = (E.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
RETRIES = 5  # conditional writes lost to a leader's ISR change are re-read and retried


def live_brokers(zk) -> set[int]:
    try:
        return {int(c) for c in zk.get_children(BROKER_IDS)}
    except NoNodeError:
        return set()


def _read_state(zk, topic: str, partition: int):
    """(leader, leader_epoch, isr, controller_epoch, version, znode) of a state znode, or None;
    `isr` is Kafka 4.4's (empty when the ELR holds the partition's last members), `znode` the
    decoded PartitionStateZNode, whose ELR fields the writes here carry on."""
    try:
        data, stat = zk.get(partition_state_path(topic, partition))
    except NoNodeError:
        return None
    state = decode_partition_state(data)
    if state is None:
        return None
    return state.leader, state.leader_epoch, list(state.isr), state.controller_epoch, stat.version, state


def _encode(state, leader: int, leader_epoch: int, isr: list[int], controller_epoch: int,
            clear_elr: bool = False) -> bytes:
    """A state write that keeps the znode's ELR fields (without members now in the ISR), or
    clears them (an unclean election, as Kafka's PartitionChangeBuilder does)."""
    elr = () if clear_elr else tuple(r for r in state.elr if r not in isr)
    lke = () if clear_elr or leader >= 0 else state.last_known_elr
    return encode_partition_state(leader, leader_epoch, isr, controller_epoch, elr, lke, kept_isr=state.zk_isr)


def _read_topic(zk, topic: str):
    """(TopicAssignment, znode version), or None when the topic has no znode."""
    try:
        data, stat = zk.get(topic_path(topic))
        return decode_topic_assignment(data), stat.version
    except (NoNodeError, ValueError):
        return None


# --------------------------------------------------------------------------- ElectLeaders
def elect_leaders(zk, partitions: list[tuple[str, int]], unclean: bool, controller_epoch: int
                  ) -> dict[tuple[str, int], tuple[int, str | None]]:
    """KafkaController.processReplicaLeaderElection: {partition: (error code, message)}.
    Preferred: the first assigned replica leads if it is alive and in the ISR. Unclean: a
    partition without a live leader gets the first live ISR member, else the first live replica."""
    live = live_brokers(zk)
    return {(t, p): _elect_one(zk, t, p, unclean, live, controller_epoch) for t, p in partitions}


def _elect_one(zk, topic: str, partition: int, unclean: bool, live: set[int], controller_epoch: int):
    found = _read_topic(zk, topic)
    if found is None or partition not in found[0].partitions:
        return NO_PARTITION
    replicas = found[0].partitions[partition].replicas
    strategy = ("OfflinePartitionLeaderElectionStrategy(true)" if unclean
                else "PreferredReplicaPartitionLeaderElectionStrategy")
    failed = (E.ELIGIBLE_LEADERS_NOT_AVAILABLE if unclean else E.PREFERRED_LEADER_NOT_AVAILABLE,
              f"Failed to elect leader for partition {topic}-{partition} under strategy {strategy}")
    for _ in range(RETRIES):
        state = _read_state(zk, topic, partition)
        if state is None:
            return failed
        leader, leader_epoch, isr, _, version, znode = state
        if unclean:
            if leader >= 0 and leader in live:
                return NOT_NEEDED
            in_sync = [r for r in replicas if r in live and r in isr]
            alive = [r for r in replicas if r in live]
            dirty = False
            if in_sync:
                new_leader, new_isr = in_sync[0], [r for r in isr if r in live]
            elif alive:
                new_leader, new_isr, dirty = alive[0], [alive[0]], True
            else:
                return failed
        else:
            preferred = replicas[0] if replicas else -1
            if leader == preferred:
                return NOT_NEEDED
            if preferred not in live or preferred not in isr:
                return failed
            new_leader, new_isr, dirty = preferred, isr, False
        data = _encode(znode, new_leader, leader_epoch + 1, new_isr, controller_epoch, clear_elr=dirty)
        try:
            zk.set(partition_state_path(topic, partition), data, version=version)
            return E.NONE, None
        except BadVersionError:
            continue
        except NoNodeError:
            return NO_PARTITION
    return failed


# --------------------------------------------------------------------------- reassignments
def start_reassignment(zk, topic: str, partition: int, target: list[int] | None) -> tuple[int, str | None]:
    """KafkaController.onPartitionReassignment's first step: the topic znode gets the moving
    replica set (the targets, then the current ones not among them, as Kafka 2.8 orders it)
    with adding/removing replicas, leader epoch + 1; the
    controller's passes (`advance_reassignments`) finish it. `target` None cancels: the
    original replicas (the moving set without the adding ones) come back."""
    for _ in range(RETRIES):
        found = _read_topic(zk, topic)
        if found is None:
            return E.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {topic}."
        parsed, version = found
        if partition not in parsed.partitions:
            return E.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {topic}:{partition}."
        now = parsed.partitions[partition]
        original = [r for r in now.replicas if r not in now.adding]
        if target is None:
            if not now.adding and not now.removing:
                return E.NO_REASSIGNMENT_IN_PROGRESS, "No reassignment in progress for partition."
            new = ReplicaAssignment(original)
        else:
            adding = [r for r in target if r not in original]
            removing = [r for r in original if r not in target]
            moving = list(dict.fromkeys(list(target) + original))  # 2.8: (new ++ old).distinct
            new = ReplicaAssignment(moving, adding, removing) if adding or removing \
                else ReplicaAssignment(list(target))
        parsed.partitions[partition] = new
        try:
            zk.set(topic_path(topic), encode_topic_assignment(parsed.topic_id, parsed.partitions), version=version)
        except BadVersionError:
            continue
        except NoNodeError:
            return E.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {topic}."
        if target is None:
            _shrink_isr(zk, topic, partition, new.replicas)
        elif new.adding or new.removing:
            _bump_epoch(zk, topic, partition)
        return E.NONE, None
    return E.REQUEST_TIMED_OUT, "The reassignment raced with other changes of the topic; retry."


def ongoing_reassignments(zk, topics: list[str]) -> dict[tuple[str, int], ReplicaAssignment]:
    """The partitions whose topic znode lists adding or removing replicas."""
    ongoing = {}
    for topic in topics:
        found = _read_topic(zk, topic)
        if found is None:
            continue
        for p, a in found[0].partitions.items():
            if a.adding or a.removing:
                ongoing[(topic, p)] = a
    return ongoing


def advance_reassignments(zk, topics: list[str], live: set[int], controller_epoch: int) -> list[tuple[str, int]]:
    """A controller pass over the ongoing reassignments: one whose target replicas are all in
    the ISR completes (a leader outside the target, or not alive, hands over to the first live
    in-sync target replica, leader epoch + 1; the ISR keeps only target replicas; the topic
    znode gets the target replicas and no adding/removing). Returns the completed partitions."""
    done = []
    for (topic, p), a in ongoing_reassignments(zk, topics).items():
        target = [r for r in a.replicas if r not in a.removing]
        state = _read_state(zk, topic, p)
        if state is None:
            continue
        leader, leader_epoch, isr, _, version, znode = state
        if any(r not in isr for r in target):
            continue  # the adding replicas are still catching up
        new_leader = leader
        if leader not in target or leader not in live:
            candidates = [r for r in target if r in live and r in isr]
            if not candidates:
                continue
            new_leader = candidates[0]
        new_isr = [r for r in isr if r in target]
        try:
            zk.set(partition_state_path(topic, p), _encode(znode, new_leader, leader_epoch + 1, new_isr,
                                                           controller_epoch), version=version)
        except (BadVersionError, NoNodeError):
            continue
        found = _read_topic(zk, topic)
        if found is None:
            continue
        parsed, tversion = found
        parsed.partitions[p] = ReplicaAssignment(target)
        try:
            zk.set(topic_path(topic), encode_topic_assignment(parsed.topic_id, parsed.partitions), version=tversion)
        except (BadVersionError, NoNodeError):
            continue
        done.append((topic, p))
    return done


def write_topic_id(zk, topic: str, topic_id: str, version: int) -> None:
    """The topic znode read at `version` had no topic id (kafka-topics --zookeeper writes
    none): it gets the one every broker derived (KafkaController.setTopicIds in 2.8)."""
    found = _read_topic(zk, topic)
    if found is None or found[0].topic_id is not None or found[1] != version:
        return
    try:
        zk.set(topic_path(topic), encode_topic_assignment(topic_id, found[0].partitions), version=version)
    except (BadVersionError, NoNodeError):
        pass


# --------------------------------------------------------------------------- /admin/reassign_partitions
def process_zk_reassignment(zk, seen_czxid: int | None) -> int | None:
    """Kafka 2.8's `kafka-reassign-partitions --zookeeper` path, on a controller pass: a new
    /admin/reassign_partitions znode (one this controller has not started: its creation
    transaction id differs from `seen_czxid`; a new controller starts it again, as Kafka's
    does on failover) starts each listed partition's reassignment as AlterPartitionReassignments
    would; a partition that cannot be started (unknown, no replicas) leaves the znode at once.
    On every pass, a partition whose topic znode now has the target replicas and no move in
    progress leaves the znode, which goes once empty (KafkaController.maybeRemoveFromZkReassignment).
    Returns the czxid of the znode handled, None when there is none."""
    try:
        data, stat = zk.get(REASSIGN_PARTITIONS)
    except NoNodeError:
        return None
    try:
        plan = decode_reassignment(data)
    except ValueError:
        log.warning("Ignoring %s: %r is not a reassignment; deleting it", REASSIGN_PARTITIONS, data)
        _rewrite_zk_reassignment(zk, {}, stat.version)
        return stat.czxid
    failed = set()
    if stat.czxid != seen_czxid:
        for (topic, partition), replicas in plan.items():
            code, message = (E.INVALID_REPLICA_ASSIGNMENT, "Empty replica list") if not replicas \
                else start_reassignment(zk, topic, partition, replicas)
            if code != E.NONE:
                failed.add((topic, partition))
                log.warning("Failed reassignment through zk of %s-%d: %s (%s)", topic, partition,
                            E.error_name(code), message)
    done = {key for key, target in plan.items()
            if key not in failed and _assigned(zk, *key) == (target, False)}
    if failed or done:
        remaining = {k: r for k, r in plan.items() if k not in failed and k not in done}
        _rewrite_zk_reassignment(zk, remaining, stat.version)
    return stat.czxid


def drop_from_zk_reassignment(zk, key: tuple[str, int]) -> None:
    """A reassignment asked for through the Admin API replaces the znode's for that partition."""
    try:
        data, stat = zk.get(REASSIGN_PARTITIONS)
        plan = decode_reassignment(data)
    except (NoNodeError, ValueError):
        return
    if key in plan:
        del plan[key]
        _rewrite_zk_reassignment(zk, plan, stat.version)


def _assigned(zk, topic: str, partition: int):
    """(replicas, moving) of a partition as its topic znode has them, or None."""
    found = _read_topic(zk, topic)
    if found is None or partition not in found[0].partitions:
        return None
    a = found[0].partitions[partition]
    return list(a.replicas), bool(a.adding or a.removing)


def _rewrite_zk_reassignment(zk, plan: dict, version: int) -> None:
    try:
        if plan:
            zk.set(REASSIGN_PARTITIONS, encode_reassignment(plan), version=version)
        else:
            zk.delete(REASSIGN_PARTITIONS, version=version)
    except (BadVersionError, NoNodeError):
        pass  # changed meanwhile: the next pass reads it again


def _bump_epoch(zk, topic: str, partition: int) -> None:
    """The replica set changed: leader epoch + 1, as Kafka 2.8's controller does, so the leader
    takes the new replicas as followers and they start fetching."""
    for _ in range(RETRIES):
        state = _read_state(zk, topic, partition)
        if state is None:
            return
        leader, leader_epoch, isr, controller_epoch, version, znode = state
        try:
            zk.set(partition_state_path(topic, partition),
                   _encode(znode, leader, leader_epoch + 1, isr, controller_epoch), version=version)
            return
        except BadVersionError:
            continue
        except NoNodeError:
            return


def _shrink_isr(zk, topic: str, partition: int, replicas: list[int]) -> None:
    """After a cancellation: replicas no longer assigned leave the ISR (leader epoch + 1)."""
    state = _read_state(zk, topic, partition)
    if state is None:
        return
    leader, leader_epoch, isr, controller_epoch, version, znode = state
    if all(r in replicas for r in isr) and leader in replicas:
        return
    new_isr = [r for r in isr if r in replicas] or replicas[:1]
    new_leader = leader if leader in replicas else new_isr[0]
    try:
        zk.set(partition_state_path(topic, partition),
               _encode(znode, new_leader, leader_epoch + 1, new_isr, controller_epoch), version=version)
    except (BadVersionError, NoNodeError):
        pass


# --------------------------------------------------------------------------- auto.leader.rebalance.enable
def rebalance_leaders(zk, assignments: dict[str, dict[int, list[int]]], live: set[int], percentage: float,
                      controller_epoch: int) -> list[tuple[str, int]]:
    """KafkaController.checkAndTriggerAutoLeaderRebalance: for each live broker whose share of
    the partitions it is the preferred leader of, but does not lead, exceeds
    leader.imbalance.per.broker.percentage, the preferred election of those partitions (where
    the preferred replica is in the ISR). Returns the partitions moved."""
    not_led: dict[int, list[tuple[str, int]]] = {}
    preferred_of: dict[int, int] = {}
    for topic, partitions in assignments.items():
        for p, replicas in partitions.items():
            if not replicas:
                continue
            preferred = replicas[0]
            preferred_of[preferred] = preferred_of.get(preferred, 0) + 1
            state = _read_state(zk, topic, p)
            if state is not None and state[0] != preferred:
                not_led.setdefault(preferred, []).append((topic, p))
    moved = []
    for broker, partitions in sorted(not_led.items()):
        if broker not in live or 100.0 * len(partitions) / preferred_of[broker] <= percentage:
            continue
        for key, (code, _) in elect_leaders(zk, partitions, False, controller_epoch).items():
            if code == E.NONE:
                moved.append(key)
    return moved
