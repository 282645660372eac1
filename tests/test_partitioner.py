"""Kafka's Java client partitioning: murmur2 with the published test
vectors, toPositive, partitionForKey, and the sticky choice for null keys."""

from __future__ import annotations

import random
import time
from collections import Counter

import pytest

from pk.engine import records
from pk.engine.engine import Engine
from pk.engine.partitioner import (
    KeyPartitioner,
    StickyPartitioner,
    murmur2,
    murmur2_many,
    partition_for_key,
    partitions_for_hashes,
    partitions_for_keys,
    to_positive,
)
from pk.engine.producer import EngineProducer


def signed(n: int) -> int:
    return n - (1 << 32) if n & 0x80000000 else n


# Kafka's UtilsTest.testMurmur2 (clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java).
KAFKA_VECTORS = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}

# librdkafka's unittest_murmur2 (Java-compatible murmur2), as unsigned 32-bit values.
LIBRDKAFKA_VECTORS = {
    b"kafka": 0xD067CF64,
    b"giberish123456789": 0x8F552B0C,
    b"1234": 0x9FC97B14,
    b"234": 0xE7C009CA,
    b"34": 0x873930DA,
    b"4": 0x5A4B5CA1,
    b"": 0x106E08D9,
}


@pytest.mark.parametrize("data, expected", sorted(KAFKA_VECTORS.items()))
def test_murmur2_kafka_vectors(data, expected):
    assert murmur2(data) == expected


@pytest.mark.parametrize("data, expected", sorted(LIBRDKAFKA_VECTORS.items()))
def test_murmur2_librdkafka_vectors(data, expected):
    assert murmur2(data) == signed(expected)


def test_murmur2_result_is_a_signed_32_bit_int():
    for i in range(2000):
        h = murmur2(b"key-%d" % i)
        assert -2**31 <= h < 2**31
    # Every tail length (0-3 bytes after the 4-byte blocks) against librdkafka's vectors.
    assert {len(k) % 4 for k in LIBRDKAFKA_VECTORS} == {0, 1, 2, 3}


def test_to_positive_masks_the_sign_bit_it_is_not_abs():
    assert to_positive(-1) == 2147483647
    assert to_positive(-2**31) == 0
    assert to_positive(5) == 5
    assert to_positive(-973932308) == 1173551340


# Partitions observed with librdkafka murmur2_random and kafka-python.
PARTITION_EXAMPLES = [
    (b"kafka", 0, 4),
    (b"21", 0, 0),
    (b"foobar", 6, 6),
    (b"abc", 7, 3),
    (b"hejsan", 3, 1),
    (b"key-1", 0, 0),
    (b"user-42", 0, 4),
    (b"a-little-bit-long-string", 2, 8),
    (b"", 1, 9),
]


@pytest.mark.parametrize("key, p10, p12", PARTITION_EXAMPLES)
def test_partition_for_key(key, p10, p12):
    assert partition_for_key(key, 10) == p10
    assert partition_for_key(key, 12) == p12
    assert partition_for_key(key, 1) == 0


def test_librdkafka_masked_murmur2_values():
    # librdkafka tests/0048-partitioner.c, murmur2 masked with 0x7fffffff.
    assert to_positive(murmur2(b"23456")) == 0x058D780F
    assert to_positive(murmur2(b"this is another string with more length to it perhaps")) == 0x4F7703DA
    assert to_positive(murmur2(b"hejsan")) == 0x5EC19395


def test_key_partitioner_caches_and_agrees():
    kp = KeyPartitioner(7, max_keys=100)
    keys = [b"k%d" % i for i in range(250)]
    assert [kp[k] for k in keys] == [partition_for_key(k, 7) for k in keys]
    assert len(kp) <= 100  # the cache is bounded
    assert list(map(kp.__getitem__, keys)) == [partition_for_key(k, 7) for k in keys]
    assert kp.partition(b"kafka") == partition_for_key(b"kafka", 7)
    with pytest.raises(ValueError):
        KeyPartitioner(0)


def test_sticky_partitioner_sticks_until_its_batch_completes():
    sticky = StickyPartitioner(5, random.Random(3))
    first = sticky.current
    assert sticky.partition() == first
    other = (first + 1) % 5
    sticky.batch_completed(other)  # another partition's batch: no switch
    assert sticky.current == first
    seen = Counter()
    for _ in range(5000):
        seen[sticky.current] += 1
        sticky.batch_completed(sticky.current)
    # A uniform random choice among all partitions (it may pick the same one again).
    assert set(seen) == set(range(5))
    assert all(700 < count < 1300 for count in seen.values())


def read_partition(engine, topic, partition):
    log = engine.partition(topic, partition)
    out = []
    offset = log.log_start_offset
    while True:
        data = log.read(offset)
        if not data:
            return out
        for pos, header in records.iter_batches(data):
            records.check_batch(data, pos)
            out.append((header, records.decode_records(data, pos, header)))
            offset = header.last_offset + 1


def test_null_keys_fill_one_batch_per_partition_then_move_on(tmp_path):
    engine = Engine(str(tmp_path))
    engine.create_topic("t", num_partitions=4)
    producer = EngineProducer(engine, "t", batch_size=1000, rng=random.Random(11))
    values = [b"value-%04d" % i + b"x" * 50 for i in range(2000)]
    now = int(time.time() * 1000)
    for value in values[:1000]:
        producer.send(None, value, timestamp=now)
    producer.send_values(values[1000:], timestamp=now)
    producer.close()
    batches = []
    for p in range(4):
        for header, recs in read_partition(engine, "t", p):
            assert header.size <= 1000
            batches.append((recs[0].value, p, [r.value for r in recs]))
    engine.close()
    # Reassembled in the order they were sent, the batches hold every value once, in order:
    # each batch is a run of consecutive records on one partition.
    batches.sort()
    assert [v for _, _, vs in batches for v in vs] == values
    used = Counter(p for _, p, _ in batches)
    assert set(used) == set(range(4))  # spread over every partition
    assert all(len(vs) > 5 for _, _, vs in batches[:-1])  # sticky: full batches, not one record each


# ---------------------------------------------------------------- many keys at once
def _as_buffer(keys):
    """keys laid end to end in one buffer, with their starts and lengths."""
    import numpy as np

    lengths = np.array([len(k) for k in keys], np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return b"".join(keys), starts, lengths


def test_murmur2_many_matches_java_vectors():
    vectors = {**KAFKA_VECTORS, **{k: signed(v) for k, v in LIBRDKAFKA_VECTORS.items()}}
    keys = sorted(vectors)
    buf, starts, lengths = _as_buffer(keys)
    assert murmur2_many(buf, starts, lengths).tolist() == [vectors[k] for k in keys]


def test_murmur2_many_matches_scalar_for_every_length_and_byte():
    rng = random.Random(5)
    keys = [b"", b"a", b"ab", b"abc", b"abcd", b"abcde", b"abcdef", b"abcdefg", "é€😀ü".encode(),
            bytes(range(256)), b"\xff" * 7, b"\x80\x00\x7f"]
    # 1-7 byte keys, every block count bucket (up to 4, 16, 64 and more blocks), random bytes.
    keys += [bytes(rng.randrange(256) for _ in range(n)) for n in range(0, 300) for _ in range(3)]
    rng.shuffle(keys)
    buf, starts, lengths = _as_buffer(keys)
    assert murmur2_many(buf, starts, lengths).tolist() == [murmur2(k) for k in keys]
    assert partitions_for_keys(buf, starts, lengths, 7).tolist() == [partition_for_key(k, 7) for k in keys]
    # The hashes as the console producer's parse-ahead process hands them over: int64 columns.
    import numpy as np

    wide = murmur2_many(buf, starts, lengths).view(np.uint32).astype(np.int64)
    assert partitions_for_hashes(wide, 7).tolist() == [partition_for_key(k, 7) for k in keys]


def test_murmur2_many_keys_in_place_and_at_the_buffer_end():
    # Keys inside lines (as the console producer finds them), the last one ending the buffer.
    import numpy as np

    lines = [b"user-%d\tvalue %d" % (i, i) for i in range(1000)] + [b"x\tlast-key-ends-here"]
    buf = b"\n".join(lines)
    starts = np.array([buf.index(line) for line in lines[:-1]] + [len(buf) - 3], np.int64)
    keys = [line.split(b"\t")[0] for line in lines[:-1]] + [b"ere"]
    lengths = np.array([len(k) for k in keys], np.int64)
    assert murmur2_many(buf, starts, lengths).tolist() == [murmur2(k) for k in keys]
    assert murmur2_many(b"", np.zeros(0, np.int64), np.zeros(0, np.int64)).tolist() == []
