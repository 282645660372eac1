"""Where a producer puts a record: Kafka's Java client partitioning.

- keyed records: `to_positive(murmur2(key)) % partitions` (Utils.murmur2 and
  BuiltInPartitioner.partitionForKey, identical in every Java client version);
- null keys: the uniform sticky partitioner of Kafka 3.3+ (KIP-794), simplified: the producer
  sticks to one randomly chosen partition and picks another (at random, possibly the same)
  whenever a null-key record completes the batch it was filling there. Java switches after
  batch.size bytes of null-key records, at a batch boundary, which for batches of null-key
  records alone is the same; on the bundled engine there is no broker queue to weigh
  partitions by, so the adaptive weighting is left out.
"""

from __future__ import annotations

import random
import struct

_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF
_BLOCKS = [struct.Struct(f"<{n}I") for n in range(64)]


def murmur2(data: bytes) -> int:
    """Java's Utils.murmur2: MurmurHash2, 32-bit, seed 0x9747b28c, as a signed int."""
    length = len(data)
    m = _M
    mask = _MASK
    h = (_SEED ^ length) & mask
    nblocks = length >> 2
    if nblocks:
        unpack = (_BLOCKS[nblocks] if nblocks < 64 else struct.Struct(f"<{nblocks}I")).unpack_from
        for k in unpack(data):
            k = (k * m) & mask
            k = ((k ^ (k >> 24)) * m) & mask
            h = ((h * m) & mask) ^ k
    tail = length & 3
    if tail:
        i = length - tail
        if tail == 3:
            h ^= data[i + 2] << 16
        if tail >= 2:
            h ^= data[i + 1] << 8
        h = ((h ^ data[i]) * m) & mask
    h ^= h >> 13
    h = (h * m) & mask
    h ^= h >> 15
    return h - 0x100000000 if h & 0x80000000 else h


def murmur2_many(buf, starts, lengths):
    """murmur2() of many keys at once; key i is buf[starts[i]:starts[i] + lengths[i]].

    buf: bytes or a uint8 array; starts, lengths: integer arrays. Returns an int32 array.

    Column-wise: the keys of similar length are copied as the rows of one matrix, wide
    enough for the longest one's blocks and tail, and read as little-endian uint32 words;
    block j of every key is then column j, mixed in with a few uint32 array operations
    (NumPy's uint32 arithmetic wraps as Java's int does), the shorter keys keeping their
    hash once they have no block j. Keys are bucketed by block count (up to 4, 16, 64, …
    blocks) so that a row is never more than about four times its key."""
    import numpy as np

    data = buf if isinstance(buf, np.ndarray) else np.frombuffer(buf, np.uint8)
    starts = np.asarray(starts, np.int64)
    lengths = np.asarray(lengths, np.int64)
    count = len(starts)
    if not count:
        return np.empty(0, np.int32)
    nblocks = lengths >> 2
    most = int(nblocks.max())
    # Rows are read through a sliding window over the buffer: pad it when the widest row
    # of the last key would run past its end.
    if int(starts.max()) + 4 * (most + 1) > len(data):
        padded = np.zeros(len(data) + 4 * (most + 1), np.uint8)
        padded[:len(data)] = data
        data = padded
    if most <= 4:
        return _mix(data, starts, lengths, nblocks, most).view(np.int32)
    out = np.empty(count, np.uint32)
    low = -1
    high = 4
    while low < most:
        chosen = np.flatnonzero((nblocks > low) & (nblocks <= high))
        if len(chosen):
            out[chosen] = _mix(data, starts[chosen], lengths[chosen], nblocks[chosen],
                               int(nblocks[chosen].max()))
        low, high = high, high * 4
    return out.view(np.int32)


def _mix(data, starts, lengths, nblocks, most: int):
    """murmur2 (as uint32) of keys of at most `most` blocks; data is long enough to read
    4 * (most + 1) bytes from every start."""
    import numpy as np

    width = 4 * (most + 1)
    # Each key's bytes (and what follows, up to the width) as one item: a row of words.
    items = np.ndarray((len(data) - width + 1,), np.dtype((np.void, width)), buffer=data, strides=(1,))
    words = items[starts].view("<u4").reshape(len(starts), most + 1)  # the blocks, then the tail's word
    m = np.uint32(_M)
    h = np.uint32(_SEED) ^ lengths.astype(np.uint32)
    fewest = int(nblocks.min())
    for j in range(most):
        k = words[:, j] * m
        k ^= k >> np.uint32(24)
        k *= m
        mixed = h * m
        mixed ^= k
        h = mixed if j < fewest else np.where(nblocks > j, mixed, h)
    tail = (lengths & 3).astype(np.uint32)
    if tail.any():
        value = np.take_along_axis(words, nblocks[:, None], axis=1)[:, 0]
        value &= (np.uint32(1) << (np.uint32(8) * tail)) - np.uint32(1)  # only the tail's bytes
        h = np.where(tail > 0, (h ^ value) * m, h)
    h ^= h >> np.uint32(13)
    h *= m
    h ^= h >> np.uint32(15)
    return h


def partitions_for_keys(buf, starts, lengths, num_partitions: int):
    """partition_for_key() of many keys at once (given as for murmur2_many): int64 array."""
    import numpy as np

    return partitions_for_hashes(murmur2_many(buf, starts, lengths), num_partitions)


def partitions_for_hashes(hashes, num_partitions: int):
    """partition_for_key() of keys whose murmur2 is known (any integer array holding the
    32 bits): int64 array."""
    import numpy as np

    if hashes.dtype.itemsize == 4:
        bits = hashes.view(np.uint32)
    else:  # wider integers holding the 32 bits: their low word
        bits = hashes.astype(np.uint32)
    return ((bits & np.uint32(0x7FFFFFFF)) % np.uint32(num_partitions)).astype(np.int64)


def to_positive(number: int) -> int:
    """Utils.toPositive: clears the sign bit (not abs: -1 gives 2147483647)."""
    return number & 0x7FFFFFFF


def partition_for_key(key: bytes, num_partitions: int) -> int:
    """BuiltInPartitioner.partitionForKey: the partition a non-null key always goes to."""
    return (murmur2(key) & 0x7FFFFFFF) % num_partitions


class KeyPartitioner(dict):
    """partition_for_key for one partition count, remembering the answer for each key.

    It is a dict (key bytes -> partition) so that a producer can look up many keys at C
    speed with `map(kp.__getitem__, keys)`; a key seen for the first time is hashed by
    __missing__. The cache is emptied when it reaches `max_keys`, which bounds its memory
    when keys never repeat.
    """

    def __init__(self, num_partitions: int, max_keys: int = 1 << 20):
        super().__init__()
        if num_partitions < 1:
            raise ValueError("a topic has at least one partition")
        self.num_partitions = num_partitions
        self.max_keys = max_keys

    def __missing__(self, key: bytes) -> int:
        if len(self) >= self.max_keys:
            self.clear()
        partition = self[key] = (murmur2(key) & 0x7FFFFFFF) % self.num_partitions
        return partition

    def partition(self, key: bytes) -> int:
        return self[key]


class StickyPartitioner:
    """The partition for null-key records: one random partition until its batch completes.

    `current` is the partition to use now; the producer calls batch_completed(p) when a
    null-key record closes the batch of partition p (the batch is full, or it would not fit
    the record), and the partitioner then moves on to a random partition, as
    BuiltInPartitioner.nextPartition does (`toPositive(random) % partitions`, which may pick
    the same partition again). Batches closed by keyed records or by linger.ms do not move it
    (in Java only null-key bytes count towards a switch).
    """

    def __init__(self, num_partitions: int, rng: random.Random | None = None):
        if num_partitions < 1:
            raise ValueError("a topic has at least one partition")
        self.num_partitions = num_partitions
        self._rng = rng or random.Random()
        self.current = self._next()

    def _next(self) -> int:
        return (self._rng.getrandbits(32) & 0x7FFFFFFF) % self.num_partitions

    def partition(self) -> int:
        return self.current

    def batch_completed(self, partition: int) -> None:
        if partition == self.current:
            self.current = self._next()
