"""kafka-leader-election (Kafka 4.4's LeaderElectionCommand): ask the cluster to elect the
preferred (or, where a partition has none, any) leader of some partitions, or of all.

Kafka prints each outcome group as one line over a java.util.HashSet of TopicPartitions, so
the order of the partitions in a line is that set's iteration order: `java_set_order`
reproduces it (buckets of TopicPartition.hashCode(), HashMap's default sizing)."""

from __future__ import annotations

import json

from .errors import UsageError

ELECTION_TYPES = ("PREFERRED", "UNCLEAN")  # ElectionType, by value 0 and 1


def parse_election_file(text: str) -> list[tuple[str, int]]:
    """The partitions of a --path-to-json-file, in Kafka's set order; UsageError with Kafka's text."""
    try:
        js = json.loads(text)
    except ValueError:
        js = None
    if js is None:
        raise UsageError("Replica election data is empty")
    if not isinstance(js, dict) or "partitions" not in js:
        raise UsageError('Replica election data is missing "partitions" field')
    partitions = []
    for p in js["partitions"] or []:
        for name in ("topic", "partition"):
            if not isinstance(p, dict) or name not in p:
                raise UsageError(f"No such field exists: `{name}`")
        partitions.append((str(p["topic"]), int(p["partition"])))
    duplicates = java_set_order({tp for tp in partitions if partitions.count(tp) > 1})
    if duplicates:
        raise UsageError("Replica election data contains duplicate partitions: ["
                         + ", ".join(f"{t}-{p}" for t, p in duplicates) + "]")
    return java_set_order(partitions)


def _int32(n: int) -> int:
    n &= 0xFFFFFFFF
    return n - (1 << 32) if n & 0x80000000 else n


def _java_string_hash(s: str) -> int:
    h = 0
    for unit in s.encode("utf-16-be").hex(" ", 2).split():  # UTF-16 code units, as Java's chars
        h = _int32(31 * h + int(unit, 16))
    return h


def _topic_partition_hash(topic: str, partition: int) -> int:
    return _int32(31 * (31 + partition) + _java_string_hash(topic))


def java_set_order(partitions) -> list[tuple[str, int]]:
    """(topic, partition)s in the order a java.util.HashSet<TopicPartition> of them iterates."""
    partitions = list(dict.fromkeys(partitions))
    capacity = 16
    while len(partitions) > capacity * 3 // 4:
        capacity *= 2

    def bucket(tp):
        h = _topic_partition_hash(*tp) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(partitions, key=bucket)  # stable: colliding entries keep their order


def run(admin, election_type: str, partitions: list[tuple[str, int]] | None, out) -> list[str]:
    """Elect; print Kafka's lines; the failures' lines are returned (the caller fails with
    `<n> replica(s) could not be elected` when there are any)."""
    results = admin.elect_leaders(election_type, partitions)
    succeeded, noop, failed = [], [], []
    for tp, error in results.items():
        if error is None:
            succeeded.append(tp)
        elif error.name == "ELECTION_NOT_NEEDED":
            noop.append(tp)
        else:
            failed.append((tp, error))
    if succeeded:
        out(f"Successfully completed leader election ({election_type}) for partitions "
            + ", ".join(f"{t}-{p}" for t, p in java_set_order(succeeded)))
    if noop:
        out("Valid replica already elected for partitions " + ", ".join(f"{t}-{p}" for t, p in java_set_order(noop)))
    errors = dict(failed)
    for tp in java_set_order(errors):
        out(f"Error completing leader election ({election_type}) for partition: {tp[0]}-{tp[1]}: "
            f"{errors[tp].execution_message()}")
    return [f"{t}-{p}" for t, p in errors]
