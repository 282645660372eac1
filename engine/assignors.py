"""Partition assignors a consumer group chooses from (`partition.assignment.strategy`).

In Kafka the group leader (a client) runs the assignor; on the bundled engine the member that
completes a rebalance runs it. Each takes the members' subscriptions and the partition count
of every topic, and returns {member_id: {topic: [partitions]}}.
"""

from __future__ import annotations

Subscriptions = dict[str, list[str]]  # member id -> subscribed topics
Assignment = dict[str, dict[str, list[int]]]


def _empty(members: Subscriptions) -> Assignment:
    return {m: {} for m in members}


def range_assign(members: Subscriptions, partitions: dict[str, int],
                 previous: Assignment | None = None) -> Assignment:
    """Per topic, contiguous runs: member i of c gets n/c partitions, the first n%c one more."""
    out = _empty(members)
    for topic in sorted(partitions):
        subscribed = sorted(m for m, topics in members.items() if topic in topics)
        if not subscribed:
            continue
        n, c = partitions[topic], len(subscribed)
        for i, member in enumerate(subscribed):
            start = i * (n // c) + min(i, n % c)
            length = n // c + (1 if i < n % c else 0)
            if length:
                out[member][topic] = list(range(start, start + length))
    return out


def roundrobin_assign(members: Subscriptions, partitions: dict[str, int],
                      previous: Assignment | None = None) -> Assignment:
    """All (topic, partition) pairs in order, dealt to the next member subscribed to the topic."""
    out = _empty(members)
    ordered = sorted(members)
    if not ordered:
        return out
    cursor = 0
    for topic in sorted(partitions):
        for p in range(partitions[topic]):
            for step in range(len(ordered)):
                member = ordered[(cursor + step) % len(ordered)]
                if topic in members[member]:
                    out[member].setdefault(topic, []).append(p)
                    cursor = (cursor + step + 1) % len(ordered)
                    break
    return out


def sticky_assign(members: Subscriptions, partitions: dict[str, int],
                  previous: Assignment | None = None) -> Assignment:
    """Balanced, and keeping each member's previous partitions where balance allows.

    Moving as few partitions as possible is what makes a cooperative rebalance cheap: members
    keep consuming everything that stays with them.
    """
    previous = previous or {}
    owned: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
    taken: set[tuple[str, int]] = set()
    for member in sorted(members):
        for topic, parts in sorted(previous.get(member, {}).items()):
            if topic not in members[member] or topic not in partitions:
                continue
            for p in parts:
                tp = (topic, p)
                if p < partitions[topic] and tp not in taken:
                    owned[member].append(tp)
                    taken.add(tp)
    all_tps = [(t, p) for t in sorted(partitions) for p in range(partitions[t])
               if any(t in topics for topics in members.values())]
    for tp in all_tps:
        if tp in taken:
            continue
        eligible = [m for m in members if tp[0] in members[m]]
        target = min(eligible, key=lambda m: (len(owned[m]), m))
        owned[target].append(tp)
        taken.add(tp)
    # Even out: move from the most to the least loaded member that can take the partition.
    for _ in range(len(all_tps) * max(len(members), 1)):
        heaviest = max(sorted(owned), key=lambda m: len(owned[m]))
        moved = False
        for tp in reversed(owned[heaviest]):
            candidates = [m for m in sorted(owned) if tp[0] in members[m]
                          and len(owned[m]) + 1 < len(owned[heaviest])]
            if candidates:
                target = min(candidates, key=lambda m: (len(owned[m]), m))
                owned[heaviest].remove(tp)
                owned[target].append(tp)
                moved = True
                break
        if not moved:
            break
    out = _empty(members)
    for member, tps in owned.items():
        for topic, p in sorted(tps):
            out[member].setdefault(topic, []).append(p)
    return out


ASSIGNORS = {
    "range": range_assign,
    "roundrobin": roundrobin_assign,
    "cooperative-sticky": sticky_assign,
    "sticky": sticky_assign,
}

# Java class names users put in partition.assignment.strategy, mapped to protocol names.
CLASS_NAMES = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
    "org.apache.kafka.clients.consumer.StickyAssignor": "sticky",
}


def strategy_names(value: str) -> list[str]:
    """partition.assignment.strategy (a comma list of class or protocol names) → protocol names."""
    names = []
    for item in value.split(","):
        item = item.strip()
        if not item:
            continue
        name = CLASS_NAMES.get(item, item)
        if name not in ASSIGNORS:
            raise ValueError(f"Invalid value {value} for configuration partition.assignment.strategy: "
                             f"Class {item} cannot be found")
        names.append(name)
    return names


def select_protocol(preferences: list[list[str]]) -> str | None:
    """Kafka's choice: among names every member supports, the one most members list first."""
    if not preferences:
        return None
    common = set(preferences[0]).intersection(*preferences[1:])
    if not common:
        return None
    votes: dict[str, int] = {}
    for prefs in preferences:
        vote = next(p for p in prefs if p in common)
        votes[vote] = votes.get(vote, 0) + 1
    return max(sorted(votes), key=lambda n: votes[n])
