"""The console consumer's column-wise path (engine/consumer.py's RecordColumnsSet, the
formatter's format_set, records.columns.join_ranges) writes exactly what the record-by-record
path writes, for every formatter property, on logs mixing what real logs hold: null keys and
values, headers, sizes needing 1-, 2- and 3-byte varints, compressed batches, LogAppendTime
batches, transaction markers, compacted batches with offset gaps, and runs of fixed-size
records (the 2-D block copy) beside records of varying sizes."""

from __future__ import annotations

import io
import os
import random

import numpy as np
import pytest

from pk.commands import consumer as cmd
from pk.engine import consumer as engine_consumer
from pk.engine import records
from pk.engine.engine import Engine
from pk.engine.records import columns

TOPIC = "mixed"


def _random_record(rng: random.Random, ts: int) -> tuple:
    kind = rng.random()
    if kind < 0.5:  # runs of fixed-size unkeyed records
        return None, b"v" * 100, (), ts
    key = None if rng.random() < 0.3 else rng.randbytes(rng.choice([0, 3, 70, 70, 70, 9000 if rng.random() < .02 else 1]))
    value = None if rng.random() < 0.1 else rng.randbytes(9000 if rng.random() < .01 else rng.choice([0, 1, 50, 200]))
    headers = () if rng.random() < 0.8 else (("h", b"x"), ("n%", None))
    return key, value, headers, ts + rng.randrange(-5, 5000)


def _as_control(batch: bytes) -> bytes:
    """The batch with its control bit set (a transaction marker) and its CRC redone."""
    out = bytearray(batch)
    out[22] |= records.CONTROL_MASK
    out[17:21] = records.compute_crc(bytes(out), 0, records.read_header(bytes(out))).to_bytes(4, "big")
    return bytes(out)


def _fill(data_dir: str) -> int:
    """Batches of every shape in two partitions, written as segment files (markers and
    offset gaps are not something a producer may append); returns the records' count."""
    rng = random.Random(11)
    now = 1_700_000_000_000
    total = 0
    logs: list[list[bytes]] = [[], []]
    next_offset = [0, 0]
    for i in range(24):
        n = rng.choice([1, 40, 700, 2500])
        recs = [_random_record(rng, now + i) for _ in range(n)]
        if i % 6 == 1:  # a uniform batch: one long 2-D block
            recs = [(None, b"%09d" % j, (), now) for j in range(n)]
        kwargs = {}
        if i % 5 == 2:
            kwargs["compression_type"] = 1 + (i % 4)
        if i % 7 == 3:
            kwargs["timestamp_type"] = records.LOG_APPEND_TIME
            kwargs["max_timestamp"] = now + 999
        if i % 8 == 5:  # a compacted batch: offsets with gaps
            kwargs["offset_deltas"] = [2 * j for j in range(n)]
            kwargs["last_offset_delta"] = 2 * n - 1
        batch = records.encode_batch(recs, base_offset=next_offset[i % 2], **kwargs)
        logs[i % 2].append(batch)
        next_offset[i % 2] = records.read_header(batch).next_offset
        total += n
        if i % 9 == 4:  # a transaction marker between batches
            logs[i % 2].append(_as_control(records.encode_batch(
                [(b"\x00\x00\x00\x00", b"\x00" * 6, (), now)], base_offset=next_offset[i % 2], producer_id=7,
                producer_epoch=0, transactional=True)))
            next_offset[i % 2] += 1
    with Engine(data_dir) as engine:
        engine.create_topic(TOPIC, 2)
    for p, batches in enumerate(logs):
        folder = os.path.join(data_dir, f"{TOPIC}-{p}")
        for name in os.listdir(folder):
            if name.endswith((".index", ".timeindex")):
                os.remove(os.path.join(folder, name))
        with open(os.path.join(folder, "00000000000000000000.log"), "wb") as f:
            f.write(b"".join(batches))
    return total


def _consume(data_dir: str, props: list[str], columns_from: int, monkeypatch, **options) -> bytes:
    monkeypatch.setattr(engine_consumer, "COLUMNS_FROM", columns_from)
    opts = cmd.ConsumerOptions(topic=TOPIC, from_beginning=True, properties=props, timeout_ms=50, **options)
    plan = cmd.plan(opts)
    out = io.BytesIO()
    with Engine(data_dir) as engine:
        consumer = engine_consumer.EngineConsumer(engine, plan.config)
        try:
            cmd.position(consumer, opts, plan)
            cmd.consume(consumer, opts, plan, out, lambda line: None, cmd.Tally())
        finally:
            consumer.close()
    return out.getvalue()


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    data_dir = str(tmp_path_factory.mktemp("columns"))
    return data_dir, _fill(data_dir)


LAYOUTS = [
    [],
    ["print.key=true"],
    ["print.key=true", "print.offset=true", "print.timestamp=true"],
    ["print.timestamp=true", "print.partition=true", "print.offset=true", "print.headers=true",
     "print.key=true", "print.value=true"],
    ["print.value=false", "print.offset=true"],
    ["print.value=false"],
    ["print.key=true", "key.separator=%d|", "line.separator=%%\n", "null.literal=<nil>"],
    ["print.partition=true", "print.delivery=true", "print.epoch=true", "print.value=false", "print.key=true"],
    ["null.literal=", "line.separator="],
    ["print.headers=true", "headers.separator=;"],
    ["value.deserializer=org.apache.kafka.common.serialization.StringDeserializer"],
]


@pytest.mark.parametrize("props", LAYOUTS, ids=lambda p: ",".join(p) or "default")
def test_column_path_writes_what_the_record_path_writes(mixed, props, monkeypatch):
    data_dir, total = mixed
    expected = _consume(data_dir, props, 1 << 60, monkeypatch)
    got = _consume(data_dir, props, 0, monkeypatch)
    assert got == expected
    if not props:
        assert expected.count(b"\n") >= total


@pytest.mark.parametrize("limit", [1, 999, 2500, 6000])
def test_max_messages_cuts_a_column_set_where_the_record_path_does(mixed, limit, monkeypatch):
    data_dir, _ = mixed
    props = ["print.offset=true", "print.partition=true", "print.value=false"]
    expected = _consume(data_dir, props, 1 << 60, monkeypatch, max_messages=limit)
    got = _consume(data_dir, props, 0, monkeypatch, max_messages=limit)
    assert got == expected
    assert got.count(b"\n") == limit


def test_column_records_equal_decoded_records(mixed):
    data_dir, _ = mixed
    with Engine(data_dir) as engine:
        data = engine.partition(TOPIC, 0).read(0, 1 << 30)
    batches = [(p, h) for p, h in records.iter_batches(data) if not h.is_control]
    cols = columns.scan(data, batches)
    got = engine_consumer.RecordColumnsSet(TOPIC, 0, cols, 0, len(cols)).records()
    expected = []
    for pos, header in batches:
        expected += [engine_consumer.ConsumerRecord(TOPIC, 0, header.timestamp_type, *r,
                                                    header.partition_leader_epoch)
                     for r in records.decode_records(data, pos, header)]
    assert got == expected


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("block_rows", [1, columns._BLOCK_ROWS])
def test_join_rows_matches_a_row_at_a_time(seed, block_rows, monkeypatch):
    monkeypatch.setattr(columns, "_BLOCK_ROWS", block_rows)
    rng = np.random.default_rng(seed)
    buf = rng.integers(0, 256, 40000, dtype=np.uint8).tobytes()
    n = 1200
    if seed % 2:  # fixed size and stride: 2-D blocks
        start = np.arange(n, dtype=np.int64) * 31 + 5
        length = np.full(n, 30, dtype=np.int64)
        length[100:150] = -1
        numbers = np.arange(n, dtype=np.int64) * 7 - 20
    else:
        start = np.sort(rng.integers(0, 39000, n)).astype(np.int64)
        length = rng.integers(-1, 40, n).astype(np.int64)
        numbers = rng.integers(-10**15, 10**15, n).astype(np.int64)
    end, null = [b"\n", b"", b"\r\n", b"%"][seed % 4], [b"null", b""][seed % 2]
    key = columns.Span(start[::-1].copy(), length, null)
    value = columns.Span(start, length, null)
    fields = [b"T:", numbers, b"\t", key, b"|", value, end]
    got = columns.join_rows(buf, fields, n)

    def piece(span, i):
        s, ln = int(span.start[i]), int(span.length[i])
        return span.null if ln < 0 else buf[s:s + ln]

    expected = b"".join(b"T:%d\t%b|%b%b" % (numbers[i], piece(key, i), piece(value, i), end) for i in range(n))
    assert bytes(got) == expected
    plain = columns.join_rows(buf, [value, end], n)
    assert bytes(plain) == b"".join(piece(value, i) + end for i in range(n))
    # numbers of varying widths, none negative: the padded blocks of _join_padded, a window
    # reaching the buffer's very end included
    counts = np.abs(numbers) // (1 + seed)
    last = columns.Span(np.append(start[:-1], len(buf) - 3), np.append(length[:-1], 3), null)
    mixed = columns.join_rows(buf, [counts, b"=", key, last, end], n)
    assert bytes(mixed) == b"".join(b"%d=%b%b%b" % (counts[i], piece(key, i), piece(last, i), end) for i in range(n))


def test_sets_measure_and_split_as_their_records(mixed):
    """ConsumerPerformance counts column sets by payload_bytes and split(): the same figures
    as the records they stand for."""
    data_dir, _ = mixed
    with Engine(data_dir) as engine:
        data = engine.partition(TOPIC, 1).read(0, 1 << 30)
    cols = columns.scan(data, [(p, h) for p, h in records.iter_batches(data) if not h.is_control])
    whole = engine_consumer.RecordColumnsSet(TOPIC, 1, cols, 0, len(cols))
    listed = engine_consumer.RecordList(TOPIC, 1, whole.records())
    assert whole.payload_bytes() == listed.payload_bytes() > 0
    for cut in (0, 1, 777, len(cols)):
        head, tail = whole.split(cut)
        list_head, list_tail = listed.split(cut)
        assert (len(head), len(tail)) == (len(list_head), len(list_tail))
        assert head.payload_bytes() == list_head.payload_bytes()
        assert tail.records() == list_tail.records()
        assert tail.first_offsets() == list_tail.first_offsets()
