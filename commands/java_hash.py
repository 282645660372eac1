"""Java's hash-based iteration orders, for tools whose output lists a java.util.HashSet or
HashMap as Kafka's tool iterates it (the order is part of what the user sees)."""

from __future__ import annotations

from typing import Callable, Iterable, TypeVar

T = TypeVar("T")


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def string_hash(text: str) -> int:
    """String.hashCode over UTF-16 code units."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return _int32(h)


def topic_partition_hash(topic: str, partition: int) -> int:
    """org.apache.kafka.common.TopicPartition.hashCode."""
    return _int32(31 * (31 + partition) + string_hash(topic))


def _table_size(n: int) -> int:
    size = 1
    while size < n:
        size <<= 1
    return size


def hash_order(items: Iterable[T], hash_of: Callable[[T], int], initial_capacity: int = 16) -> list[T]:
    """The iteration order of a HashSet/HashMap built by adding `items` in order (duplicates
    kept once): by bucket of the table's final size, then insertion order (a resize splits
    buckets without reordering them; buckets are too short here to become trees)."""
    unique = list(dict.fromkeys(items))
    capacity = _table_size(max(initial_capacity, 1))
    while len(unique) > capacity * 0.75:
        capacity <<= 1

    def bucket(item: T) -> int:
        h = hash_of(item) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return [item for _, item in sorted(enumerate(unique), key=lambda pair: (bucket(pair[1]), pair[0]))]
