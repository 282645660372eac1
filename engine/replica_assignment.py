"""Kafka's replica assignment (AdminUtils.assignReplicasToBrokers, Kafka 2.8): which brokers
hold the replicas of each partition of a new topic, rack-unaware or rack-aware, with Java's
Random for the start index and the shift (JavaRandom(seed) pins them). Pure: used by
`pk-topics --zookeeper` and by a ZooKeeper-mode broker creating a replicated topic."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InvalidPartitionsError, InvalidReplicationFactorError, KafkaError
from .javacompat import JavaRandom


class AdminOperationError(KafkaError):
    """Kafka's AdminOperationException: not an API error (a broker answers UNKNOWN_SERVER_ERROR
    without its text)."""


@dataclass(frozen=True)
class BrokerMetadata:
    id: int
    rack: str | None = None


def rack_alternated_broker_list(rack_of: dict[int, str]) -> list[int]:
    """AdminUtils.getRackAlternatedBrokerList: racks sorted, each rack's brokers sorted, then
    one broker from each rack in turn (rack1: 0,1; rack2: 2 -> 0,2,1)."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in rack_of.items():
        by_rack.setdefault(rack, []).append(broker)
    queues = {rack: sorted(ids) for rack, ids in by_rack.items()}
    racks = sorted(queues)
    result: list[int] = []
    i = 0
    while len(result) < len(rack_of):
        queue = queues[racks[i]]
        if queue:
            result.append(queue.pop(0))
        i = (i + 1) % len(racks)
    return result


def _replica_index(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n


def assign_replicas_to_brokers(brokers: list[BrokerMetadata], n_partitions: int, replication_factor: int,
                               fixed_start_index: int = -1, start_partition_id: int = -1,
                               rng: JavaRandom | None = None) -> dict[int, list[int]]:
    """AdminUtils.assignReplicasToBrokers (Kafka 2.8): `brokers` sorted by id (the rack error is
    Kafka's AdminOperationException, a plain KafkaError here). Without a fixed
    start index, the start index and then the first replica shift are rng.next_int(n)."""
    if n_partitions <= 0:
        raise InvalidPartitionsError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorError("Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise InvalidReplicationFactorError(f"Replication factor: {replication_factor} larger than available brokers: "
                                f"{len(brokers)}.")
    rng = rng or JavaRandom()
    racked = [b for b in brokers if b.rack is not None]
    if not racked:
        arranged = [b.id for b in brokers]
        rack_of = None
    elif len(racked) < len(brokers):
        raise AdminOperationError("Not all brokers have rack information for replica rack aware assignment.")
    else:
        rack_of = {b.id: b.rack for b in brokers}
        arranged = rack_alternated_broker_list(rack_of)
    n = len(arranged)
    start = fixed_start_index if fixed_start_index >= 0 else rng.next_int(n)
    shift = fixed_start_index if fixed_start_index >= 0 else rng.next_int(n)
    partition = max(0, start_partition_id)
    result: dict[int, list[int]] = {}
    for _ in range(n_partitions):
        if partition > 0 and partition % n == 0:
            shift += 1
        first = (partition + start) % n
        replicas = [arranged[first]]
        if rack_of is None:
            replicas += [arranged[_replica_index(first, shift, j, n)] for j in range(replication_factor - 1)]
        else:
            num_racks = len(set(rack_of.values()))
            racks_with = {rack_of[replicas[0]]}
            k = 0
            for _ in range(replication_factor - 1):
                while True:
                    broker = arranged[_replica_index(first, shift * num_racks, k, n)]
                    rack = rack_of[broker]
                    k += 1
                    # Skip a broker whose rack already has a replica while some rack has none,
                    # and a broker that already has one while some broker has none.
                    if ((rack not in racks_with or len(racks_with) == num_racks)
                            and (broker not in replicas or len(replicas) == n)):
                        replicas.append(broker)
                        racks_with.add(rack)
                        break
        result[partition] = replicas
        partition += 1
    return result
