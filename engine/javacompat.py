"""Java's hashing and HashMap iteration order, which decide the order in which Kafka's tools
print many of their lists (topics, configs, reset rows) and which partition of
`__consumer_offsets` a group belongs to. One home for them, used by the engine and the tools."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

DEFAULT_CAPACITY = 16  # new HashMap<>()


def string_hash(text: str) -> int:
    """java.lang.String.hashCode() over UTF-16 code units, as an unsigned 32-bit int."""
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h


def signed32(h: int) -> int:
    """An unsigned 32-bit hash as the Java int it is."""
    return h - (1 << 32) if h & 0x80000000 else h


def topic_partition_hash(topic: str, partition: int) -> int:
    """org.apache.kafka.common.TopicPartition.hashCode(), unsigned."""
    return (31 * (31 + partition) + string_hash(topic)) & 0xFFFFFFFF


def _default_hash(key) -> int:
    if isinstance(key, tuple):  # (topic, partition)
        return topic_partition_hash(*key)
    return string_hash(key)


def hashmap_order(keys: Iterable[Hashable], *, sized_for: int | None = None,
                  hash_of: Callable[[Hashable], int] | None = None) -> list:
    """The iteration order of a java.util.HashMap after putting `keys` in this order (a key put
    twice keeps its first place): by bucket, `spread(hash) & (capacity - 1)`, and by insertion
    within a bucket (resizing keeps that order). The table starts at 16 buckets, or at
    tableSizeFor(n) for `new HashMap<>(n)` (sized_for=n), and doubles while the size exceeds
    three quarters of it. String keys hash as Java strings, (topic, partition) tuples as
    TopicPartitions."""
    keys = list(dict.fromkeys(keys))
    hash_of = hash_of or _default_hash
    capacity = DEFAULT_CAPACITY
    if sized_for is not None:
        capacity = 1
        while capacity < sized_for:
            capacity *= 2
    while len(keys) > capacity * 3 // 4:  # the resize threshold, (int) (capacity * 0.75)
        capacity *= 2

    def bucket(key) -> int:
        h = hash_of(key)
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(keys, key=bucket)  # stable: a bucket keeps the insertion order
