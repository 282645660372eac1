"""The engine's log cleaner (compaction) against a straightforward reference, and the
crash safety of its segment swap."""

from __future__ import annotations

import os
import random
import time

import pytest
from kafka.record import MemoryRecords

from pk.engine import cleaner, records
from pk.engine.engine import Engine
from pk.engine.offsets import OffsetStore


def now_ms() -> int:
    return int(time.time() * 1000)


def read_all(log) -> list[tuple[int, bytes | None, bytes | None]]:
    out, offset = [], log.log_start_offset
    while True:
        data = log.read(offset, 1 << 20)
        if not data:
            return out
        for pos, header in records.iter_batches(data):
            out += [(r.offset, r.key, r.value) for r in records.decode_records(data, pos, header)]
            offset = header.next_offset


def compacted_topic(data_dir, **configs):
    engine = Engine(data_dir)
    engine.create_topic("c", 1, configs={"cleanup.policy": "compact", "segment.bytes": "3000", **configs})
    return engine, engine.partition("c", 0)


def produce(log, items, codec=0):
    ts = now_ms()
    for i in range(0, len(items), 7):  # several records per batch
        chunk = items[i:i + 7]
        log.append_batches([records.encode_batch([(k, v, (), ts) for k, v in chunk], compression_type=codec)])


def reference(written, active_base):
    """Latest record per key below the active segment, everything from it on; no keyless."""
    latest = {}
    for offset, (k, v) in enumerate(written):
        if offset < active_base and k is not None:
            latest[k] = offset
    out = []
    for offset, (k, v) in enumerate(written):
        if offset >= active_base or (k is not None and latest.get(k) == offset):
            out.append((offset, k, v))
    return out


@pytest.mark.parametrize("codec", [0, 1, 4])
def test_keeps_the_latest_record_per_key_with_offsets_and_gaps(tmp_path, codec):
    engine, log = compacted_topic(str(tmp_path / "d"))
    rng = random.Random(codec)
    written = [(b"key-%d" % rng.randrange(20), b"value-%d" % i) for i in range(400)]
    produce(log, written, codec)
    active_base = log.segments[-1].base_offset
    assert log.clean(force=True) > 0
    assert read_all(log) == reference(written, active_base)
    assert log.log_end_offset == len(written)  # offsets are never reused
    # An independent reader accepts every rewritten segment (CRCs, offsets, codecs).
    for seg in log.segments:
        with open(seg.log_path, "rb") as f:
            batches = MemoryRecords(f.read())
        while batches.has_next():
            batch = batches.next_batch()
            assert batch.validate_crc()
            list(batch)


def test_partitions_too_big_to_hold_are_cleaned_a_segment_at_a_time(tmp_path, monkeypatch):
    """Beyond the in-memory budget the pass reads segments one at a time: same bytes."""
    from pk.engine import log as log_module

    dirs, now = [], now_ms()

    def write(log, items):
        for i in range(0, len(items), 7):
            log.append_batches([records.encode_batch([(k, v, (), now) for k, v in items[i:i + 7]])], now_ms=now)

    for budget in (1 << 30, 0):
        monkeypatch.setattr(log_module, "_CLEAN_IN_MEMORY", budget)
        engine, log = compacted_topic(str(tmp_path / f"d{budget}"))
        rng = random.Random(5)
        write(log, [(b"key-%d" % rng.randrange(30), None if rng.random() < 0.1 else b"v%d" % i) for i in range(500)])
        assert log.clean(now_ms=now, force=True) > 0
        write(log, [(b"key-%d" % rng.randrange(30), b"w%d" % i) for i in range(200)])  # new dirt
        assert log.clean(now_ms=now, force=True) > 0
        dirs.append(log.dir)
        engine.close()
    names = sorted(n for n in os.listdir(dirs[0]) if n.endswith(".log"))
    assert names == sorted(n for n in os.listdir(dirs[1]) if n.endswith(".log"))
    for name in names:
        with open(os.path.join(dirs[0], name), "rb") as a, open(os.path.join(dirs[1], name), "rb") as b:
            assert a.read() == b.read()


def test_a_second_pass_cleans_only_new_dirt_and_is_stable(tmp_path):
    engine, log = compacted_topic(str(tmp_path / "d"))
    written = [(b"k%d" % (i % 5), b"v%d" % i) for i in range(300)]
    produce(log, written)
    log.clean(force=True)
    first = read_all(log)
    assert log.clean(force=True) is None or read_all(log) == first  # nothing new: same content
    written2 = [(b"k%d" % (i % 5), b"w%d" % i) for i in range(300)]
    produce(log, written2)
    active_base = log.segments[-1].base_offset
    log.clean(force=True)
    assert read_all(log) == reference(written + written2, active_base)


def test_tombstones_survive_until_their_delete_horizon(tmp_path):
    engine, log = compacted_topic(str(tmp_path / "d"), **{"delete.retention.ms": "1000"})
    written = [(b"a", b"1"), (b"b", b"2"), (b"a", None)] + [(b"filler%d" % i, b"x" * 50) for i in range(100)]
    produce(log, written)
    t0 = now_ms()
    log.clean(now_ms=t0, force=True)
    keys = {k: v for _, k, v in read_all(log)}
    assert keys[b"a"] is None and keys[b"b"] == b"2"  # the tombstone is kept for now
    tomb = [h for seg in log.segments[:-1] for _, h in seg.batch_positions() if h.has_delete_horizon]
    assert tomb and tomb[0].base_timestamp == t0 + 1000
    log.clean(now_ms=t0 + 500, force=True)
    assert b"a" in {k for _, k, _ in read_all(log)}
    log.clean(now_ms=t0 + 1001, force=True)
    assert b"a" not in {k for _, k, _ in read_all(log)}


def test_active_segment_and_young_records_are_left_alone(tmp_path):
    engine, log = compacted_topic(str(tmp_path / "d"), **{"min.compaction.lag.ms": "3600000"})
    written = [(b"k", b"v%d" % i) for i in range(200)]
    produce(log, written)
    assert log.clean(force=True) is None  # every closed segment is younger than the lag
    assert read_all(log) == [(i, k, v) for i, (k, v) in enumerate(written)]


def test_keyless_records_are_refused_on_compacted_topics(tmp_path):
    engine, log = compacted_topic(str(tmp_path / "d"))
    from pk.engine.errors import InvalidRecordError

    with pytest.raises(InvalidRecordError):
        log.append_records([(None, b"v", (), now_ms())])


@pytest.mark.parametrize("stage", ["cleaned", "swap", "half-deleted", "deleted"])
def test_a_crash_during_the_swap_leaves_old_or_new_segments(tmp_path, stage, monkeypatch):
    data_dir = str(tmp_path / "d")
    engine, log = compacted_topic(data_dir)
    written = [(b"k%d" % (i % 7), b"v%d" % i) for i in range(300)]
    produce(log, written)
    before = read_all(log)
    active_base = log.segments[-1].base_offset
    after = reference(written, active_base)

    class Crash(Exception):
        pass

    real_rename = os.rename
    renames = {"n": 0}

    def crashing_rename(src, dst):
        if stage == "cleaned" and dst.endswith(cleaner.SWAP):
            raise Crash()
        if stage == "swap" and dst.endswith(cleaner.DELETED):
            raise Crash()
        if stage == "half-deleted" and dst.endswith(cleaner.DELETED):
            renames["n"] += 1
            if renames["n"] == 4:
                raise Crash()
        if stage == "deleted" and src.endswith(cleaner.SWAP):
            raise Crash()
        return real_rename(src, dst)

    monkeypatch.setattr(os, "rename", crashing_rename)
    with pytest.raises(Crash):
        log.clean(force=True)
    monkeypatch.setattr(os, "rename", real_rename)
    # A new process (fresh engine) sees either the old or the new content, whole.
    fresh = Engine(data_dir).partition("c", 0)
    got = read_all(fresh)
    assert got in (before, after), stage
    assert got == (before if stage == "cleaned" else after)
    fresh.append_records([(b"k0", b"more", (), now_ms())])
    assert read_all(fresh)[-1] == (len(written), b"k0", b"more")
    assert not [n for n in os.listdir(fresh.dir) if n.endswith((".cleaned", ".swap", ".deleted"))]


def test_consumer_offsets_are_compacted_and_still_resolve(tmp_path):
    data_dir = str(tmp_path / "d")
    engine = Engine(data_dir, {"offsets.topic.segment.bytes": "2000"})
    engine.create_topic("t", 2)
    store = OffsetStore(engine)
    for i in range(300):
        store.commit("g", {("t", 0): i, ("t", 1): 2 * i})
    part = engine.partition("__consumer_offsets", store.partition_for("g"))
    size_before = part.size_in_bytes()
    assert engine.clean(force=True) > 0
    assert part.size_in_bytes() < size_before / 3
    assert OffsetStore(Engine(data_dir)).committed("g") == {("t", 0): 299, ("t", 1): 598}


def test_cleaning_runs_on_its_own_when_writers_write(tmp_path):
    data_dir = str(tmp_path / "d")
    engine = Engine(data_dir, {"log.retention.check.interval.ms": "0"})
    engine.create_topic("c", 1, configs={"cleanup.policy": "compact", "segment.bytes": "2000",
                                         "min.cleanable.dirty.ratio": "0.1"})
    log = engine.partition("c", 0)
    produce(log, [(b"same", b"v%d" % i) for i in range(500)])
    assert len(read_all(log)) < 100  # most superseded records are gone already


# ------------------------------------------------------------------ batches too large to scan
def _segment(codec: int, seed: int, offset: int) -> tuple[bytes, int]:
    """Six batches of random keyed, keyless and tombstone records (one stamped LogAppendTime,
    half idempotent), from `offset`; returns (bytes, next offset)."""
    rng = random.Random(seed)
    out = []
    for b in range(6):
        recs = [(None if rng.random() < 0.05 else b"key%d" % rng.randint(0, 15),
                 None if rng.random() < 0.2 else rng.randbytes(rng.randint(0, 3000)),
                 (("h", b"x"),) if rng.random() < 0.2 else (), 1000 + rng.randint(0, 500))
                for _ in range(rng.randint(1, 40))]
        out.append(records.encode_batch(
            recs, base_offset=offset, compression_type=codec,
            timestamp_type=records.LOG_APPEND_TIME if b == 3 else records.CREATE_TIME,
            producer_id=7 if b % 2 else -1, producer_epoch=0, base_sequence=offset if b % 2 else -1))
        offset += len(recs)
    return b"".join(out), offset


def _contents(segments) -> list:
    return [(h.base_offset, h.last_offset_delta, h.base_timestamp, h.max_timestamp, h.records_count,
             h.attributes, h.producer_id, h.base_sequence, records.decode_records(data, pos, h))
            for _, data in segments for pos, h in records.iter_batches(data)]


@pytest.mark.parametrize("codec", [1, 2, 3, 4], ids=["gzip", "snappy", "lz4", "zstd"])
def test_batches_walked_past_the_scan_limit_clean_as_scanned_ones(codec, monkeypatch):
    """Every batch walked (SCAN_LIMIT 0) keeps exactly the records, offsets, timestamps
    (delete horizons stamped or expired) and producer fields the column scan keeps."""
    from pk.engine import compaction

    for seed in range(4):
        first, middle = _segment(codec, seed, 0)
        second, end = _segment(codec, seed + 100, middle)
        segments = [(0, first), (middle, second)]
        now = 10**13 if seed % 2 else 0  # odd seeds: every delete horizon has passed
        seen = []
        for limit in (1 << 30, 0):
            monkeypatch.setattr(compaction, "SCAN_LIMIT", limit)
            offset_map = compaction.build_offset_map([second], middle, end)
            cleaned = compaction.clean_segments(segments, offset_map, now, 1000, 1 << 30)
            seen.append((offset_map.latest, _contents(cleaned)))
        assert seen[0] == seen[1]
        assert seen[0][1] != _contents(segments)  # something was cleaned


_BOMB_CLEANING = r"""
import sys, threading, time
import pyarrow, pyarrow.compute  # what a cleaning pass imports, loaded before measuring
sys.path.insert(0, sys.argv[2])
from bombs import bomb
from pk.engine import compaction, records
from pk.engine.engine import Engine

engine = Engine(sys.argv[1])
engine.create_topic("c", 1, configs={"cleanup.policy": "compact", "segment.bytes": "10000"})
log = engine.partition("c", 0)
ts = int(time.time() * 1000)
zstd = 4
log.append_batches([bomb(zstd, 1 << 30, 1, b"gone")])  # superseded below: dropped
log.append_batches([bomb(zstd, 1 << 30, 4, b"kept")])  # 4 records of one key: the last stays
log.append_batches([records.encode_batch([(b"gone", b"new", (), ts)])])
log.append_batches([records.encode_batch([(b"tail", bytes(12000), (), ts)])])  # rolls: the active segment
def rss_kb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
before = peak = rss_kb()
done = threading.Event()
def sample():
    global peak
    while not done.is_set():
        peak = max(peak, rss_kb())
        time.sleep(0.005)
sampler = threading.Thread(target=sample)
sampler.start()
assert log.clean(force=True) > 0
done.set()
sampler.join()
print(max(peak, rss_kb()) - before)
"""


def test_a_bomb_in_a_compacted_log_is_cleaned_in_bounded_memory(tmp_path):
    """Two 1 GB-inflated zstd batches (32 KB each on disk) are cleaned: the superseded record
    dropped, the kept one of four re-packed from the stream, with the cleaner growing by less
    than 64 MB."""
    import subprocess
    import sys

    ran = subprocess.run([sys.executable, "-c", _BOMB_CLEANING, str(tmp_path / "data"), os.path.dirname(__file__)],
                         capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert int(ran.stdout.split()[-1]) < 64 * 1024, ran.stdout
    engine = Engine(str(tmp_path / "data"))
    log = engine.partition("c", 0)
    kept = []
    offset = log.log_start_offset
    while data := log.read(offset, 1 << 20):
        for pos, header in records.iter_batches(data):
            from pk.engine.records import walk

            kept += [(header.base_offset + r.offset_delta, r.key, r.value_len)
                     for r in walk.walk(data, pos, header, keys=True)]
            offset = header.next_offset
    assert [(offset, k, n > 200 << 20) for offset, k, n in kept] == [
        (4, b"kept", True), (5, b"gone", False), (6, b"tail", False)]  # the last of the four "kept" stays
