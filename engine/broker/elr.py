"""Eligible leader replicas (KIP-966) in ZooKeeper mode: the rules Kafka 4.4's controller
applies to a partition's ISR, ELR, LastKnownELR and leader on every change, as its
PartitionChangeBuilder does (with `eligible.leader.replicas.version` 1, what a new Kafka 4.4
cluster finalizes, and its default "use the last known leader in a balanced recovery").

pk's controller (zookeeper.py, controller.py) and a partition's leader (replication.py, its
ISR shrinks and expansions) both write the state znode, so both call `change` for the new
state; there is no other place that decides an ELR.

In short (PartitionChangeBuilder.maybePopulateTargetElr, tryElection, maybeUpdateRecordElr,
maybeUpdateLastKnownLeader):
- an ISR at or above the topic's effective min.insync.replicas (min of the setting and the
  replication factor) has no ELR;
- below it, the ELR is the old ISR and ELR members that are not in the new ISR, without the
  brokers that came back from an unclean shutdown;
- when the ISR is empty, a member of the ELR may be elected (clean): it becomes the ISR alone
  and leaves the ELR; with neither ISR nor ELR, the last known leader is elected (unclean);
  an unclean election clears the ELR;
- the LastKnownELR holds the leader the partition had when its ISR became empty, and is
  cleared once the partition has a leader again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

NO_LEADER = -1
NO_CHANGE = -2  # PartitionChangeRecord's NO_LEADER_CHANGE

ONLINE, UNCLEAN, PREFERRED = "online", "unclean", "preferred"


@dataclass(frozen=True)
class Partition:
    """What the builder starts from (Kafka's PartitionRegistration, the fields ELR needs)."""
    replicas: tuple[int, ...]
    leader: int
    isr: tuple[int, ...]
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()


@dataclass(frozen=True)
class Change:
    leader: int
    isr: tuple[int, ...]
    elr: tuple[int, ...]
    last_known_elr: tuple[int, ...]
    unclean: bool  # an election outside the ISR and ELR (data may be lost)


def effective_min_isr(min_isr: int, replication_factor: int) -> int:
    """ReplicationControlManager.getTopicEffectiveMinIsr."""
    return min(min_isr, replication_factor) if replication_factor > 0 else min_isr


def change(p: Partition, target_isr, min_isr: int, acceptable: Callable[[int], bool], *,
           election: str = ONLINE, enabled: bool = True, unclean_shutdown=()) -> Change:
    """The partition after the ISR becomes `target_isr` and a leader is elected where needed
    (`acceptable`: a live broker that may lead). Disabled ELR: the ISR and leader rules alone."""
    target_isr = list(target_isr)
    elr = list(p.elr)
    # maybePopulateTargetElr (its LastKnownELR is not the one kept: maybeUpdateLastKnownLeader's is)
    if enabled:
        if len(target_isr) >= min_isr:
            elr = []
        else:
            candidates = sorted(set(elr) | set(p.isr))
            elr = [r for r in candidates if r not in target_isr and r not in unclean_shutdown]
    # tryElection
    leader, unclean = _elect(p, target_isr, elr, acceptable, election, enabled)
    record_leader = NO_CHANGE
    record_isr = None
    if leader != p.leader:
        if leader in elr:  # a clean election from the ELR: it is the whole ISR now
            target_isr = [leader]
            elr = [r for r in elr if r != leader]
        record_leader = leader
        if unclean:
            record_isr = [leader]
    # maybeUpdateRecordElr: an unclean election (or no ELR) leaves no ELR
    if record_isr is not None or not enabled:
        elr = []
    # the ISR (empty allowed only with ELR, as Kafka's build() does)
    if record_isr is None and (target_isr or enabled) and target_isr != list(p.isr):
        record_isr = target_isr
    isr = list(p.isr) if record_isr is None else record_isr
    # maybeUpdateLastKnownLeader: the LastKnownELR stores the last known leader
    lke = list(p.last_known_elr)
    if enabled:
        if record_isr is not None and not record_isr and p.leader >= 0 and lke != [p.leader]:
            lke = [p.leader]
        elif (record_leader >= 0 or (p.leader != NO_LEADER and record_leader != NO_LEADER)) and lke:
            lke = []
    else:
        lke = []
    new_leader = p.leader if record_leader == NO_CHANGE else record_leader
    return Change(new_leader, tuple(isr), tuple(sorted(elr)), tuple(lke), unclean)


def _elect(p: Partition, isr: list[int], elr: list[int], acceptable, election: str, enabled: bool):
    """PartitionChangeBuilder.electLeader: (leader, unclean)."""
    def valid(r: int) -> bool:  # in the ISR, or in the ELR when the ISR is empty
        return (r in isr or (not isr and r in elr)) and acceptable(r)

    if election == PREFERRED and p.replicas and valid(p.replicas[0]):
        return p.replicas[0], False
    if p.leader >= 0 and valid(p.leader):
        return p.leader, False
    for r in p.replicas[1:] if election == PREFERRED else p.replicas:
        if valid(r):
            return r, False
    if enabled and not elr and not isr and len(p.last_known_elr) == 1 and acceptable(p.last_known_elr[0]):
        # canElectLastKnownLeader. Kafka 4.4 does not ask whether it is alive (it runs on the
        # broker's return); pk's controller looks at every partition on every pass, so a dead
        # last known leader would be elected and dropped again and again.
        return p.last_known_elr[0], True
    if election == UNCLEAN:
        for r in p.replicas:
            if acceptable(r):
                return r, True
    return NO_LEADER, False
