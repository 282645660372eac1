"""The column-wise record encoder (engine/records/build.py) against the per-record one
(records.encode_batch), and its batch sizing against a plain running sum."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

from pk.engine import records
from pk.engine.records import build


def _random_records(rng: random.Random, keyed: bool):
    n = rng.randrange(1, 300)
    size = rng.choice([0, 1, 5, 60, 64, 120, 3000, 8191, 9000, 20000])
    values = []
    for _ in range(n):
        length = rng.randrange(size + 1) if rng.random() < 0.7 else size
        values.append(rng.randbytes(length))
    keys = [rng.randbytes(rng.randrange(rng.choice([1, 12, 200]))) for _ in range(n)] if keyed else None
    return values, keys


@pytest.mark.parametrize("keyed", [False, True])
def test_columns_encode_like_encode_batch(keyed):
    rng = random.Random(5 + keyed)
    for _ in range(150):
        values, keys = _random_records(rng, keyed)
        timestamp = 1_700_000_000_000
        base = timestamp - rng.choice([0, 0, 1, 63, 64, 100_000, -5])
        expected = records.encode_batch([(None if keys is None else keys[i], v, (), timestamp)
                                         for i, v in enumerate(values)], base_timestamp=base)
        columns = build.Columns(values, keys)
        payload = columns.encode(0, len(values), 0, timestamp - base)
        assert payload == expected[records.HEADER_SIZE:]
        # Any run of the records, from any offset delta, is the same bytes as those
        # records inside a whole batch.
        start = rng.randrange(len(values))
        stop = rng.randrange(start + 1, len(values) + 1)
        first = rng.randrange(0, 9000)
        run = columns.encode(start, stop, first, timestamp - base)
        whole = records.encode_batch([(None if keys is None else keys[i], values[i], (), timestamp)
                                      for i in range(start, stop)], base_timestamp=base,
                                     offset_deltas=range(first, first + stop - start),
                                     last_offset_delta=first + stop - start - 1)
        assert run == whole[records.HEADER_SIZE:]
        fixed = 2 + len(records.encode_varint(timestamp - base))
        assert sum(columns.sizes(start, stop, first, fixed)) == len(run)


def test_producer_batch_frames_like_encode_batch():
    values = [b"a" * 10, b"", b"b" * 9000]
    payload = build.encode_records(values, None, 3)
    batch = build.producer_batch(payload, 3, 1000, 1003)
    expected = records.encode_batch([(None, v, (), 1003) for v in values], base_timestamp=1000,
                                    partition_leader_epoch=-1)
    assert batch == expected
    header = records.check_batch(batch)
    assert (header.records_count, header.base_timestamp, header.max_timestamp) == (3, 1000, 1003)
    assert [r.value for r in records.decode_records(batch)] == values


def test_columns_refuse_what_they_cannot_encode():
    with pytest.raises(TypeError):
        build.Columns([b"x", None])
    with pytest.raises(TypeError):
        build.Columns([b"x", b"y"], [b"k", None])
    with pytest.raises(ValueError):
        build.Columns([])
    with pytest.raises(ValueError):
        build.Columns([b"x"] * 3).encode(0, 3, build.MAX_DELTA - 1, 0)  # offset deltas past the tables


@pytest.mark.parametrize("sizes", [(100, 100), (95, 105), (0, 70), (50, 80), (8100, 8200), (0, 20000)])
def test_fit_is_the_longest_prefix_that_fits(sizes):
    rng = random.Random(sizes[0] * 7 + sizes[1])
    for _ in range(400):
        n = rng.randrange(1, 300)
        values = [b"v" * rng.randrange(sizes[0], sizes[1] + 1) for _ in range(n)]
        keys = None if rng.random() < 0.5 else [b"k" * rng.randrange(0, 20) for _ in range(n)]
        columns = build.Columns(values, keys)
        start = rng.randrange(n)
        first = rng.choice([0, rng.randrange(0, 70), rng.randrange(0, 9000)])
        fixed = rng.choice([3, 4, 5])
        room = rng.randrange(0, 40_000)
        cap = rng.randrange(0, n - start + 1)
        expected_k = expected_size = 0
        for size in columns.sizes(start, start + cap, first, fixed):
            if expected_size + size > room:
                break
            expected_k += 1
            expected_size += size
        assert columns.fit(start, first, room, cap, fixed) == (expected_k, expected_size)


@pytest.mark.parametrize("partitions", [2, 3, 7, 300])
def test_send_values_puts_each_key_where_murmur2_says(tmp_path, partitions):
    from pk.engine.engine import Engine
    from pk.engine.partitioner import partition_for_key
    from pk.engine.producer import EngineProducer

    rng = random.Random(partitions)
    keys = [rng.randbytes(rng.randrange(0, 20)) for _ in range(200)] + [b"user-%d" % i for i in range(50)]
    sent = [(rng.choice(keys), b"v%d" % i) for i in range(3000)]
    engine = Engine(str(tmp_path))
    engine.create_topic("t", num_partitions=partitions)
    producer = EngineProducer(engine, "t", batch_size=2000)
    for start in range(0, len(sent), 700):
        chunk = sent[start:start + 700]
        producer.send_values([v for _, v in chunk], [k for k, _ in chunk])
    producer.close()
    for p in range(partitions):
        data = engine.partition("t", p).read(0, 1 << 30)
        stored = [(r.key, r.value) for pos, h in records.iter_batches(data) for r in records.decode_records(data, pos, h)]
        assert stored == [(k, v) for k, v in sent if partition_for_key(k, partitions) == p]
    engine.close()


def test_key_fields_built_or_looked_up_are_the_same():
    rng = random.Random(4)
    keys = [rng.randbytes(rng.randrange(0, 300)) for _ in range(500)]
    fields = build.key_fields(keys)
    assert fields == build.key_fields(keys, repeating=False)
    assert fields == [records.encode_varint(len(k)) + k for k in keys]
    assert [build.key_of_field(f) for f in fields] == keys
    with pytest.raises(TypeError):
        build.key_fields([b"k", None], repeating=False)


def test_unique_then_repeating_keys_go_where_murmur2_says(tmp_path):
    from pk.engine.engine import Engine
    from pk.engine.partitioner import partition_for_key
    from pk.engine.producer import EngineProducer

    engine = Engine(str(tmp_path))
    engine.create_topic("t", num_partitions=5)
    producer = EngineProducer(engine, "t")
    sent = []
    for chunk in range(6):  # unique keys, then a few keys over and over, then unique again
        keys = [b"u%d-%d" % (chunk, i) for i in range(500)] if chunk in (0, 1, 4) else [b"r%d" % (i % 7) for i in range(500)]
        values = [b"v%d" % i for i in range(500)]
        producer.send_values(values, keys)
        sent += zip(keys, values)
    producer.close()
    for p in range(5):
        data = engine.partition("t", p).read(0, 1 << 30)
        stored = [(r.key, r.value) for pos, h in records.iter_batches(data) for r in records.decode_records(data, pos, h)]
        assert stored == [(k, v) for k, v in sent if partition_for_key(k, 5) == p]
    engine.close()


@pytest.mark.parametrize("batch_size", [1, 200, 16384, 100_000])
def test_send_values_batches_like_send_with_long_and_empty_values(tmp_path, batch_size):
    from pk.engine.engine import Engine
    from pk.engine.producer import EngineProducer

    rng = random.Random(batch_size)
    now = int(time.time() * 1000)  # recent: retention keeps the segments
    chunks = []
    for c in range(12):
        n = rng.randrange(1, 120)
        size = rng.choice([0, 1, 63, 64, 70, 8185, 8192, 17_000])
        values = [b"v" * rng.randrange(max(0, size - 3), size + 1) for _ in range(n)]
        keys = [b"k%d" % rng.randrange(9) for _ in range(n)] if c % 2 else None
        chunks.append((now + c * rng.choice([0, 1, 5000]), keys, values))
    stores = []
    for bulk in (False, True):
        engine = Engine(str(tmp_path / str(bulk)))
        engine.create_topic("t", num_partitions=3)
        producer = EngineProducer(engine, "t", batch_size=batch_size, rng=random.Random(3))
        for ts, keys, values in chunks:
            if bulk:
                producer.send_values(values, keys, timestamp=ts)
            else:
                for i, value in enumerate(values):
                    producer.send(None if keys is None else keys[i], value, timestamp=ts)
        producer.close()
        stores.append([engine.partition("t", p).read(0, 1 << 30) for p in range(3)])
        engine.close()
    assert stores[0] == stores[1]


# ---------------------------------------------------------------- records as spans of one buffer
def _spans_of_lines(rng: random.Random, n: int, sep: bytes, uniform: bool):
    """A block of `key SEP value` lines, as records.spans.Spans, with its keys and values."""
    import numpy as np

    from pk.engine.records.spans import Spans

    width = rng.choice([3, 20, 100, 200])
    parts = []
    for _ in range(n):
        key_length = rng.randrange(0, min(width, 70))
        value_length = width - key_length if uniform else rng.randrange(0, rng.choice([10, 100, 9000]))
        parts.append((rng.randbytes(key_length), rng.randbytes(value_length)))
    buf = b"".join(k + sep + v + b"\n" for k, v in parts)
    key_starts = np.cumsum([0] + [len(k) + len(sep) + len(v) + 1 for k, v in parts[:-1]]).astype(np.int64)
    key_lengths = np.array([len(k) for k, _ in parts], np.int64)
    value_lengths = np.array([len(v) for _, v in parts], np.int64)
    spans = Spans(buf, key_starts, key_lengths, key_starts + key_lengths + len(sep), value_lengths)
    return spans, [k for k, _ in parts], [v for _, v in parts]


@pytest.mark.parametrize("uniform", [True, False])
def test_spans_encode_batches_like_encode_batch(uniform):
    rng = random.Random(11 + uniform)
    for _ in range(120):
        n = rng.randrange(1, 400)
        spans, keys, values = _spans_of_lines(rng, n, rng.choice([b"\t", b"::", b""]), uniform)
        assert spans.keys() == keys and spans.values() == values
        plans = []
        start = 0
        while start < n:  # consecutive batches, from any offset delta and timestamp delta
            stop = min(n, start + rng.randrange(1, 300))
            plans.append((start, stop, rng.choice([0, 0, 5, 60, 8000, 9000]), rng.choice([0, 0, 7, 100_000])))
            start = stop
        _check_encoded(spans, keys, values, plans)


def _check_encoded(spans, keys, values, plans):
    """Each plan's payload from spans.encode_batches is what records.encode_batch makes of
    its records, and as long as Spans.size says."""
    timestamp = 1_700_000_000_000
    for (start, stop, first, tsd), payload in zip(plans, spans.encode_batches(plans)):
        whole = records.encode_batch([(keys[j], values[j], (), timestamp) for j in range(start, stop)],
                                     base_timestamp=timestamp - tsd,
                                     offset_deltas=range(first, first + stop - start),
                                     last_offset_delta=first + stop - start - 1)
        assert payload == whole[records.HEADER_SIZE:]
        fixed = 2 + len(records.encode_varint(tsd))
        assert sum(spans.size(j, first + j - start, fixed) for j in range(start, stop)) == len(payload)


@pytest.mark.parametrize("case", ["tiny buffer", "long head", "long keys", "short values"])
def test_spans_blocks_at_their_edges(case):
    """The 2-D block path where it takes other turns: a buffer too small to gather rows
    from (its padded copy), a head longer than one 8-byte word (a big timestamp delta and
    offset deltas, records over 16 KB), keys of many 8-byte words and of every length
    under them, a last key whose second word runs past the buffer; the first line's row
    starts before the buffer."""
    from pk.engine.records.spans import Spans

    rng = random.Random(case)
    if case == "tiny buffer":
        parts = [(rng.randbytes(k), rng.randbytes(3 - k)) for k in (rng.randrange(3) for _ in range(12))]
        sep, plans = b"\t", [(0, 12, 0, 0)]
    elif case == "long head":
        parts = [(rng.randbytes(5), rng.randbytes(17000)) for _ in range(300)]
        sep, plans = b"::", [(0, 200, 9000, 100_000), (200, 300, 0, 3)]
    elif case == "long keys":
        parts = [(rng.randbytes(k), rng.randbytes(200 - k)) for k in (rng.randrange(17, 40) for _ in range(300))]
        sep, plans = b"\t", [(0, 150, 0, 0), (150, 300, 0, 0)]
    else:
        parts = [(rng.randbytes(k), rng.randbytes(13 - k)) for k in (rng.randrange(9, 13) for _ in range(300))]
        sep, plans = b"", [(0, 200, 0, 0), (200, 300, 0, 0)]
    buf = b"".join(k + sep + v + b"\n" for k, v in parts)
    key_starts = np.cumsum([0] + [len(k) + len(sep) + len(v) + 1 for k, v in parts[:-1]]).astype(np.int64)
    key_lengths = np.array([len(k) for k, _ in parts], np.int64)
    value_lengths = np.array([len(v) for _, v in parts], np.int64)
    spans = Spans(buf, key_starts, key_lengths, key_starts + key_lengths + len(sep), value_lengths)
    assert spans._encode_parts(plans) is not None  # the block path, not the lists one
    _check_encoded(spans, [k for k, _ in parts], [v for _, v in parts], plans)


def test_spans_encode_framed_leaves_room_for_each_header():
    """encode_framed: encode_batches' payloads in one buffer, each after the room asked for;
    records.frame_into there makes the batch build.producer_batch makes of the payload."""
    rng = random.Random(13)
    for _ in range(80):
        n = rng.randrange(1, 400)
        spans, _, _ = _spans_of_lines(rng, n, rng.choice([b"\t", b"::", b""]), rng.random() < 0.7)
        plans = []
        start = 0
        while start < n:
            stop = min(n, start + rng.randrange(1, 300))
            plans.append((start, stop, rng.choice([0, 0, 60, 8000]), rng.choice([0, 0, 7])))
            start = stop
        heads = [rng.choice([0, records.HEADER_SIZE]) for _ in plans]
        buf, offsets = spans.encode_framed(plans, heads)
        assert offsets[0] == 0 and offsets[-1] == len(buf) and len(offsets) == len(plans) + 1
        for i, payload in enumerate(spans.encode_batches(plans)):
            region = memoryview(buf)[offsets[i]:offsets[i + 1]]
            assert bytes(region[heads[i]:]) == payload
            if heads[i]:
                count = plans[i][1] - plans[i][0]
                records.frame_into(region, 0, -1, 0, count - 1, 1_700_000_000_000, 1_700_000_000_005,
                                   -1, -1, -1, count)
                assert bytes(region) == build.producer_batch(payload, count, 1_700_000_000_000,
                                                             1_700_000_000_005)


def test_spans_fit_is_the_longest_prefix_that_fits():
    rng = random.Random(12)
    for _ in range(200):
        n = rng.randrange(1, 300)
        spans, _, _ = _spans_of_lines(rng, n, b"\t", rng.random() < 0.5)
        start = rng.randrange(n)
        first = rng.choice([0, 30, 63, 64, 8190])
        room = rng.randrange(0, 50_000)
        cap = rng.randrange(0, n - start + 1)
        fixed = rng.choice([3, 4])
        k = used = 0
        while k < cap and used + spans.size(start + k, first + k, fixed) <= room:
            used += spans.size(start + k, first + k, fixed)
            k += 1
        assert spans.fit(start, first, room, cap, fixed) == (k, used)


@pytest.mark.parametrize("partitions, batch_size, codec", [(1, 16384, "none"), (3, 16384, "none"), (3, 1, "none"),
                                                           (7, 100_000, "none"), (300, 2000, "none"),
                                                           (3, 4000, "zstd"), (3, 16384, "gzip")])
def test_send_spans_batches_like_send(tmp_path, partitions, batch_size, codec):
    """send_spans stores the same bytes as send() record by record: each key in murmur2's
    partition, in order, in the same batches. Compressed, a batch's limit follows the
    compression ratio estimate, which depends on the order batches of all partitions
    complete in (send_values has the same property): the same records, in order, in each
    partition."""
    from pk.engine.engine import Engine
    from pk.engine.producer import EngineProducer

    rng = random.Random(partitions * batch_size)
    now = int(time.time() * 1000)  # recent: retention keeps the segments
    blocks = [(now + c * rng.choice([0, 1, 5000]),) + _spans_of_lines(rng, rng.randrange(1, 2000), b"\t", c % 3 != 2)
              for c in range(8)]
    stores = []
    for columns in (False, True):
        engine = Engine(str(tmp_path / str(columns)))
        engine.create_topic("t", num_partitions=partitions)
        producer = EngineProducer(engine, "t", batch_size=batch_size, compression_type=codec, rng=random.Random(3))
        for ts, spans, keys, values in blocks:
            if columns:
                producer.send_spans(spans, timestamp=ts)
            else:
                for key, value in zip(keys, values):
                    producer.send(key, value, timestamp=ts)
        producer.close()
        stores.append([engine.partition("t", p).read(0, 1 << 30) for p in range(partitions)])
        engine.close()
    if codec == "none":
        assert stores[0] == stores[1]
    else:
        def stored(store):
            return [[(r.key, r.value) for pos, h in records.iter_batches(data)
                     for r in records.decode_records(data, pos, h)] for data in store]

        assert stored(stores[0]) == stored(stores[1])
    # kafka-python's reader (an independent implementation) finds each key in murmur2's
    # partition, in order.
    from kafka.record.memory_records import MemoryRecords

    from pk.engine.partitioner import partition_for_key

    sent = [(k, v) for _, _, keys, values in blocks for k, v in zip(keys, values)]
    for p, data in enumerate(stores[1]):
        read = [(r.key, r.value) for batch in MemoryRecords(data) for r in batch]
        assert read == [(k, v) for k, v in sent if partition_for_key(k, partitions) == p]
