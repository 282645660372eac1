"""compaction.py (the cleaner's record work, on NumPy columns) against a straightforward
reference that decodes every record and re-encodes kept ones with records.encode_batch,
following Kafka's MemoryRecords.filterTo and MemoryRecordsBuilder; and record_scan against
the record decoder, including corrupt input."""

from __future__ import annotations

import random

import pytest
from kafka.record import MemoryRecords

from pk.engine import compaction, records
from pk.engine.records import columns as record_scan
from pk.engine.errors import CorruptRecordError

NOW = 1_700_000_000_000
RETENTION = 86_400_000


# --------------------------------------------------------------------------- reference
def ref_offset_map(segments, start, end):
    latest = {}
    for data in segments:
        for pos, h in records.iter_batches(data):
            if h.is_control:
                continue
            for r in records.decode_records(data, pos, h):
                if start <= r.offset < end and r.key is not None:
                    latest[r.key] = max(r.offset, latest.get(r.key, -1))
    return latest


def ref_batch(data, pos, h, latest, now_ms):
    """(bytes or None, left empty) for one batch, as filterTo writes it."""
    original = data[pos:pos + h.size]
    if h.is_control:
        return original, False
    recs = records.decode_records(data, pos, h)
    horizon = h.base_timestamp if h.has_delete_horizon else None
    kept = [r for r in recs if r.key is not None and r.offset >= latest.get(r.key, -1)
            and not (r.value is None and horizon is not None and now_ms >= horizon)]
    tombstones = any(r.value is None for r in kept)
    if not kept:
        if h.records_count == 0:
            return original, True
        empty = records.encode_batch(
            [], base_offset=h.base_offset, producer_id=h.producer_id, producer_epoch=h.producer_epoch,
            base_sequence=h.base_sequence, partition_leader_epoch=h.partition_leader_epoch,
            transactional=h.is_transactional, timestamp_type=h.timestamp_type,
            last_offset_delta=h.last_offset_delta, base_timestamp=-1, max_timestamp=h.max_timestamp)
        return empty, True
    if len(kept) == len(recs) and not (tombstones and horizon is None):
        return original, False
    if tombstones and horizon is None:
        horizon = now_ms + RETENTION
    log_append = h.timestamp_type == records.LOG_APPEND_TIME
    return records.encode_batch(
        [(r.key, r.value, r.headers, r.timestamp) for r in kept],
        base_offset=h.base_offset, compression_type=h.compression, producer_id=h.producer_id,
        producer_epoch=h.producer_epoch, base_sequence=h.base_sequence,
        partition_leader_epoch=h.partition_leader_epoch, transactional=h.is_transactional,
        timestamp_type=h.timestamp_type, offset_deltas=[r.offset - h.base_offset for r in kept],
        last_offset_delta=h.last_offset_delta, base_timestamp=horizon,
        max_timestamp=h.max_timestamp if log_append else max(r.timestamp for r in kept),
        delete_horizon=horizon is not None), False


def ref_clean(segments, latest, now_ms):
    """Cleaned segment bytes (before grouping), empty batches kept for producers' last only."""
    per, last = [], {}
    for index, data in enumerate(segments):
        out = []
        for pos, h in records.iter_batches(data):
            batch, empty = ref_batch(data, pos, h, latest, now_ms)
            if h.producer_id >= 0:
                last[h.producer_id] = (index, len(out) if empty else -1)
            out.append((batch, empty))
        per.append(out)
    keep = {v for v in last.values() if v[1] >= 0}
    return [b"".join(b for i, (b, e) in enumerate(out) if not e or (index, i) in keep)
            for index, out in enumerate(per)]


# --------------------------------------------------------------------------- random logs
def random_segments(rng, n_segments=3, keys=40, batches=(1, 25), per_batch=(1, 60)):
    segments, bases, offset = [], [], 0
    for _ in range(n_segments):
        bases.append(offset)
        data = b""
        for _ in range(rng.randrange(*batches)):
            n = rng.randrange(*per_batch)
            items = []
            for _ in range(n):
                key = None if rng.random() < 0.03 else b"k%d" % rng.randrange(keys)
                value = None if rng.random() < 0.1 else rng.randbytes(rng.choice([0, 3, 50, 200]))
                headers = (("h", b"x"),) if rng.random() < 0.05 else ()
                items.append((key, value, headers, NOW - rng.randrange(0, 10**7)))
            gaps = rng.random() < 0.3  # offsets left sparse by an earlier cleaning
            deltas = sorted(rng.sample(range(n * 3), n)) if gaps else list(range(n))
            producer = rng.random() < 0.4
            horizon = rng.choice([None, None, NOW - 1000, NOW + 1000]) if any(v is None for _, v, _, _ in items) \
                else None
            batch = records.encode_batch(
                items, base_offset=offset, compression_type=rng.choice([0, 0, 1, 2, 3, 4]),
                producer_id=rng.choice([7, 8]) if producer else -1, producer_epoch=0 if producer else -1,
                base_sequence=offset if producer else -1, partition_leader_epoch=rng.randrange(3),
                timestamp_type=records.LOG_APPEND_TIME if rng.random() < 0.15 else records.CREATE_TIME,
                offset_deltas=deltas, last_offset_delta=deltas[-1] + rng.choice([0, 0, 2]),
                base_timestamp=horizon, delete_horizon=horizon is not None)
            if rng.random() < 0.1:  # an empty batch an earlier cleaning kept for its producer
                batch = records.encode_batch(
                    [], base_offset=offset, producer_id=9, producer_epoch=0, base_sequence=offset,
                    last_offset_delta=n - 1, base_timestamp=-1, max_timestamp=NOW)
            h = records.read_header(batch)
            data += batch
            offset = h.next_offset
        segments.append(data)
    return segments, bases, offset


@pytest.mark.parametrize("seed", range(60))
def test_cleaning_matches_the_reference_byte_for_byte(seed):
    rng = random.Random(seed)
    segments, bases, end = random_segments(rng)
    start = rng.choice([0, bases[-1], bases[1], end])  # all dirty, part clean, nothing dirty
    ref_map = ref_offset_map(segments, start, end)
    scans: dict = {}
    offset_map = compaction.build_offset_map(segments, start, end, scans if seed % 2 else None)
    assert offset_map.latest == ref_map
    expected = ref_clean(segments, ref_map, NOW)
    got = compaction.clean_segments(list(zip(bases, segments)), offset_map, NOW, RETENTION, 1 << 30,
                                    scans if seed % 2 else None)
    assert got == [(bases[0], b"".join(expected))]
    # kafka-python reads the result, CRCs included
    recs = MemoryRecords(got[0][1])
    while recs.has_next():
        batch = recs.next_batch()
        assert batch.validate_crc()
        list(batch)


@pytest.mark.parametrize("seed", range(6))
def test_cleaning_segments_of_many_small_batches_matches_the_reference(seed, monkeypatch):
    """Hundreds of batches of a few records: the scan steps through all batches at once."""
    steps = []
    lockstep = record_scan._lockstep_starts
    monkeypatch.setattr(record_scan, "_lockstep_starts", lambda *a: steps.append(1) or lockstep(*a))
    rng = random.Random(100 + seed)
    segments, bases, end = random_segments(rng, n_segments=2, batches=(250, 400), per_batch=(1, 8))
    ref_map = ref_offset_map(segments, 0, end)
    offset_map = compaction.build_offset_map(segments, 0, end)
    assert offset_map.latest == ref_map
    got = compaction.clean_segments(list(zip(bases, segments)), offset_map, NOW, RETENTION, 1 << 30)
    assert got == [(bases[0], b"".join(ref_clean(segments, ref_map, NOW)))]
    assert steps


def test_segments_are_grouped_by_their_sizes_before_cleaning():
    """As Kafka's groupSegmentsBySize: neighbours merge while their original sizes fit
    segment.bytes."""
    rng = random.Random(3)
    segments, bases, end = random_segments(rng, n_segments=6)
    offset_map = compaction.build_offset_map(segments, 0, end)
    whole = compaction.clean_segments(list(zip(bases, segments)), offset_map, NOW, RETENTION, 1 << 30)
    assert [b for b, _ in whole] == [0]
    single = compaction.clean_segments(list(zip(bases, segments)), offset_map, NOW, RETENTION, 1)
    assert [b for b, _ in single] == bases
    sizes = [len(s) for s in segments]
    limit = sizes[0] + sizes[1]
    grouped = compaction.clean_segments(list(zip(bases, segments)), offset_map, NOW, RETENTION, limit)
    expected_bases, size = [0], sizes[0]
    for base, n in zip(bases[1:], sizes[1:]):
        if size + n > limit:
            expected_bases.append(base)
            size = 0
        size += n
    assert [b for b, _ in grouped] == expected_bases and len(grouped) > 1
    assert b"".join(d for _, d in grouped) == whole[0][1]


# --------------------------------------------------------------------------- record_scan
def test_scan_gives_every_field_the_decoder_gives():
    rng = random.Random(5)
    segments, _, _ = random_segments(rng, n_segments=1, keys=10_000)
    data = segments[0]
    batches = [b for b in records.iter_batches(data) if not b[1].is_control]
    cols = record_scan.scan(data, batches)
    decoded = [r for pos, h in batches for r in records.decode_records(data, pos, h)]
    assert cols.offset.tolist() == [r.offset for r in decoded]
    keys = [None if kl < 0 else cols.buf[ks:ks + kl] for ks, kl in zip(cols.key_start.tolist(), cols.key_len.tolist())]
    assert keys == [r.key for r in decoded]
    assert [(vl < 0) for vl in cols.value_len.tolist()] == [r.value is None for r in decoded]
    assert [vl for vl in cols.value_len.tolist() if vl >= 0] == [len(r.value) for r in decoded if r.value is not None]


@pytest.mark.parametrize("codec", [0, 3])
def test_scan_of_many_small_batches_gives_what_the_decoder_gives(codec, monkeypatch):
    steps = []
    lockstep = record_scan._lockstep_starts
    monkeypatch.setattr(record_scan, "_lockstep_starts", lambda *a: steps.append(1) or lockstep(*a))
    rng = random.Random(codec)
    data, offset = b"", 0
    for _ in range(300):
        n = rng.randrange(1, 6)
        items = [(rng.randbytes(rng.randrange(0, 12)), rng.randbytes(rng.choice([0, 10, 70, 9000])), (), NOW)
                 for _ in range(n)]
        data += records.encode_batch(items, base_offset=offset, compression_type=codec)
        offset += n
    batches = list(records.iter_batches(data))
    cols = record_scan.scan(data, batches)
    decoded = [r for pos, h in batches for r in records.decode_records(data, pos, h)]
    assert cols.offset.tolist() == [r.offset for r in decoded]
    assert cols.keys() == [r.key for r in decoded]
    assert cols.value_len.tolist() == [len(r.value) for r in decoded]
    assert steps  # the batches were stepped through together
    # a record claiming one byte more than it has, in the middle of the segment
    pos, h = batches[150]
    broken = bytearray(data)
    broken[pos + records.HEADER_SIZE] += 2  # zig-zag: length + 1
    with pytest.raises(CorruptRecordError):
        record_scan.scan(bytes(broken), list(records.iter_batches(bytes(broken))))


def test_scan_handles_long_varints():
    big = b"v" * 20_000  # three-byte lengths
    items = [(b"a", big, (), NOW), (b"b", None, (), NOW - 10**12), (b"c" * 300, b"x", (), NOW + 10**12)]
    data = records.encode_batch(items, base_offset=5, offset_deltas=[0, 70_000, 2**31 - 5])
    cols = record_scan.scan(data, list(records.iter_batches(data)))
    assert cols.offset.tolist() == [5, 70_005, 2**31]
    assert cols.ts_delta.tolist() == [0, -10**12, 10**12]
    assert cols.key_len.tolist() == [1, 1, 300] and cols.value_len.tolist() == [20_000, -1, 1]


@pytest.mark.parametrize("cut", ["length", "key", "value", "count"])
def test_scan_refuses_records_that_do_not_fit(cut):
    data = bytearray(records.encode_batch([(b"key", b"value", (), NOW), (b"k2", b"v2", (), NOW)]))
    first = records.HEADER_SIZE
    if cut == "length":
        data[first] = 0x7E  # record length 63: runs past the batch
    elif cut == "key":
        data[first + 4] = 0x7E  # key length 63
    elif cut == "value":
        data[first + 8] = 0x7E  # value length 63
    else:
        data[57:61] = (3).to_bytes(4, "big")  # three records claimed, two present
    with pytest.raises(CorruptRecordError):
        record_scan.scan(bytes(data), list(records.iter_batches(bytes(data))))


def test_the_offset_map_tells_apart_keys_of_every_length():
    """Keys that differ only in length, in trailing zero bytes or past byte 8, and keys long
    enough to take the bytes path; the last record's key near the end of the segment."""
    rng = random.Random(11)
    pool = [b"", b"\x00", b"\x00\x00", b"a", b"a\x00", b"abcdefgh", b"abcdefgh\x00", b"abcdefghi",
            b"abcdefghj", bytes(16), bytes(17), b"x" * 127, b"x" * 128, b"x" * 129, b"y" * 300]
    items = [(rng.choice(pool), b"v" if rng.random() < 0.8 else None, (), NOW) for _ in range(400)]
    items.append((b"z", None, (), NOW))  # ends 2 bytes before the end of the buffer
    for short_keys in (True, False):
        chosen = [it for it in items if not short_keys or len(it[0]) <= 128]
        data = b"".join(records.encode_batch(chosen[i:i + 50], base_offset=i) for i in range(0, len(chosen), 50))
        offset_map = compaction.build_offset_map([data], 0, len(chosen))
        assert offset_map.latest == ref_offset_map([data], 0, len(chosen))
        assert offset_map.lookup([b"abcdefghi", b"nope", b"z"]).tolist() == [
            max(i for i, it in enumerate(chosen) if it[0] == b"abcdefghi"), -1, len(chosen) - 1]
