"""pk-spark compact: the Spark job against a straightforward reference, byte for byte against
the engine's own cleaner, with a consumer and a producer running meanwhile, a crash during
the swap, a plan made stale by the engine's cleaner, and the snapshot mode. The jobs run
in-process on the shared local[2] session; one run of the installed tool."""

from __future__ import annotations

import filecmp
import json
import glob
import os
import random
import shutil
import threading
import time

import pytest

from test_cleaner import read_all  # the same reader of a whole partition
from test_spark_datasource import spark  # noqa: F401  (the shared session fixture)

pytest.importorskip("pyspark")

from pk.engine import cleaner, records  # noqa: E402
from pk.engine.engine import Engine  # noqa: E402
from pk.spark_ops import compact as job  # noqa: E402


def now_ms() -> int:
    return int(time.time() * 1000)


def produce(log, items, ts=None, codec=0, per_batch=7):
    ts = ts if ts is not None else now_ms()
    for i in range(0, len(items), per_batch):
        chunk = items[i:i + per_batch]
        log.append_batches([records.encode_batch([(k, v, (), ts) for k, v in chunk], compression_type=codec)])


def reference(written, first_uncleanable, drop_tombstones=False):
    """Latest keyed record per key below first_uncleanable (tombstones too, unless dropped),
    everything from it on unchanged."""
    latest = {}
    for offset, (k, v) in enumerate(written):
        if offset < first_uncleanable and k is not None:
            latest[k] = offset
    out = []
    for offset, (k, v) in enumerate(written):
        if offset >= first_uncleanable:
            out.append((offset, k, v))
        elif k is not None and latest.get(k) == offset and not (drop_tombstones and v is None):
            out.append((offset, k, v))
    return out


def compact(data_dir, topic="c", now=None, force=True, spark_session=None):
    plan = job.prepare(job.CompactRequest(topic=topic, data_dir=data_dir, force=force, now_ms=now))
    return {(r.topic, r.partition): r for r in job.run(spark_session, plan)}


def random_items(seed, n, keys=20, tombstones=0.1, keyless=0.0):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        r = rng.random()
        key = None if r < keyless else b"key-%d" % rng.randrange(keys)
        out.append((key, None if key is not None and rng.random() < tombstones else b"value-%d" % i))
    return out


# --------------------------------------------------------------------------- semantics
def test_keeps_latest_per_key_offsets_gaps_tombstones_until_horizon(spark, tmp_path):  # noqa: F811
    data_dir = str(tmp_path / "d")
    written = {}
    with Engine(data_dir) as engine:
        # Keyless records get in while the topic is not compacted yet: the cleaner drops them.
        engine.create_topic("c", 2, configs={"segment.bytes": "3000", "delete.retention.ms": "1000"})
        for p in range(2):
            written[p] = [(b"gone", b"1"), (b"gone", None)] + random_items(p, 400, keyless=0.05)
            produce(engine.partition("c", p), written[p], codec=p * 4)  # none and zstd
        engine.alter_topic_configs("c", set_configs={"cleanup.policy": "compact"})
        actives = {p: engine.partition("c", p).segments[-1] for p in range(2)}
        active_bytes = {p: open(seg.log_path, "rb").read() for p, seg in actives.items()}
        active_base = {p: seg.base_offset for p, seg in actives.items()}
    t0 = now_ms()
    results = compact(data_dir, now=t0, spark_session=spark)
    assert {r.status for r in results.values()} == {"cleaned"}
    with Engine(data_dir) as engine:
        for p in range(2):
            log = engine.partition("c", p)
            assert read_all(log) == reference(written[p], active_base[p])
            assert log.log_end_offset == len(written[p])  # offsets never reused
            assert open(log.segments[-1].log_path, "rb").read() == active_bytes[p]  # active untouched
            stamped = [h for seg in log.segments[:-1] for _, h in seg.batch_positions(0, seg.file_size())
                       if h.has_delete_horizon]
            assert stamped and all(h.base_timestamp == t0 + 1000 for h in stamped)
    # Before the horizon the tombstones stay; past it they go.
    compact(data_dir, now=t0 + 500, spark_session=spark)
    with Engine(data_dir) as engine:
        assert read_all(engine.partition("c", 0)) == reference(written[0], active_base[0])
    compact(data_dir, now=t0 + 1001, spark_session=spark)
    with Engine(data_dir) as engine:
        for p in range(2):
            assert read_all(engine.partition("c", p)) == reference(written[p], active_base[p], drop_tombstones=True)


def test_records_younger_than_the_compaction_lag_are_left_alone(spark, tmp_path):  # noqa: F811
    data_dir = str(tmp_path / "d")
    old = [(b"k%d" % (i % 5), b"old-%d" % i) for i in range(200)]
    young = [(b"k%d" % (i % 5), b"young-%d" % i) for i in range(200)]
    with Engine(data_dir) as engine:
        engine.create_topic("c", 1, configs={"cleanup.policy": "compact", "segment.bytes": "3000",
                                             "min.compaction.lag.ms": "3600000"})
        log = engine.partition("c", 0)
        produce(log, old, ts=now_ms() - 7_200_000)
        produce(log, young)
        first_young = max(seg.base_offset for seg in log.segments if seg.base_offset <= len(old))
    results = compact(data_dir, spark_session=spark)
    assert results[("c", 0)].status == "cleaned"
    with Engine(data_dir) as engine:
        assert read_all(engine.partition("c", 0)) == reference(old + young, first_young)


# --------------------------------------------------------------------------- vs the engine
def partition_files(data_dir):
    out = {}
    for path in sorted(glob.glob(os.path.join(data_dir, "c-*", "*"))):
        if not path.endswith(".pk-lock"):
            with open(path, "rb") as f:
                out[os.path.relpath(path, data_dir)] = f.read()
    return out


def test_installed_tool_writes_the_same_bytes_as_the_engine_cleaner(tmp_path, pk):
    a, b = str(tmp_path / "engine"), str(tmp_path / "spark")
    with Engine(a) as engine:
        engine.create_topic("c", 2, configs={"cleanup.policy": "compact", "segment.bytes": "4000",
                                             "delete.retention.ms": "1000"})
        for p in range(2):
            log = engine.partition("c", p)
            produce(log, random_items(10 + p, 300), codec=p)  # none and gzip
            produce(log, random_items(20 + p, 200, keys=40), codec=4, per_batch=11)
    shutil.copytree(a, b)
    t0 = now_ms()
    with Engine(a) as engine:
        assert engine.clean(now_ms=t0, force=True) > 0
    proc = pk("pk-spark", "compact", "--data-dir", b, "--topic", "c", "--force", "--now-ms", str(t0),
              "--master", "local[2]", "--no-progress", timeout=180)
    assert proc.returncode == 0, proc.err
    assert proc.out.count(": cleaned") == 2, proc.out
    files_a, files_b = partition_files(a), partition_files(b)
    assert list(files_a) == list(files_b)
    assert [n for n in files_a if files_a[n] != files_b[n]] == []
    assert filecmp.cmp(os.path.join(a, "cleaner-offset-checkpoint"), os.path.join(b, "cleaner-offset-checkpoint"),
                       shallow=False)
    assert not os.path.exists(os.path.join(b, ".pk", "compact"))  # staging cleaned up


# --------------------------------------------------------------------------- concurrency
def test_consumer_and_producer_running_during_the_job(spark, tmp_path):  # noqa: F811
    data_dir = str(tmp_path / "d")
    written = [(b"k%d" % (i % 50), b"v%d" % i) for i in range(3000)]
    # One engine for the setup and the producer thread: only its first append runs the
    # engine's own cleaner (log.retention.check.interval.ms), before the job starts.
    writer = Engine(data_dir)
    writer.create_topic("c", 1, configs={"cleanup.policy": "compact", "segment.bytes": "8000"})
    wlog = writer.partition("c", 0)
    wlog.append_records([(b"first", b"x", (), now_ms())])
    written.insert(0, (b"first", b"x"))
    produce(wlog, written[1:])
    original = {i: kv for i, kv in enumerate(written)}
    latest = {k: v for k, v in written}
    stop = threading.Event()
    problems, reads, appended = [], [0], []

    def consumer():
        with Engine(data_dir) as engine:
            while not stop.is_set():
                seen = read_all(engine.partition("c", 0))
                offsets = [o for o, _, _ in seen]
                if offsets != sorted(set(offsets)):
                    problems.append("offsets out of order")
                last = {}
                for o, k, v in seen:
                    if o < len(written) and original[o] != (k, v):
                        problems.append(f"record {o} changed")
                    last[k] = v
                if any(last.get(k) != v for k, v in latest.items()):
                    problems.append("a key lost its latest value")
                reads[0] += 1

    def producer():
        while not stop.is_set():
            wlog.append_records([(b"new", b"n%d" % len(appended), (), now_ms())])
            appended.append(1)
            time.sleep(0.01)

    threads = [threading.Thread(target=consumer), threading.Thread(target=producer)]
    for t in threads:
        t.start()
    try:
        results = compact(data_dir, spark_session=spark)
        time.sleep(0.3)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
        writer.close()
    assert results[("c", 0)].status == "cleaned"
    assert problems == [] and reads[0] > 1 and appended
    with Engine(data_dir) as engine:
        got = read_all(engine.partition("c", 0))
        assert {k: v for _, k, v in got if k != b"new"} == latest
        assert len([1 for _, k, _ in got if k == b"new"]) >= 1
        assert engine.partition("c", 0).log_end_offset == len(written) + len(appended)


@pytest.mark.parametrize("stage", ["before-swap", "after-delete"])
def test_a_driver_crash_during_the_swap_leaves_old_or_new_segments(spark, tmp_path, monkeypatch, stage):  # noqa: F811
    data_dir = str(tmp_path / "d")
    written = [(b"k%d" % (i % 7), b"v%d" % i) for i in range(300)]
    with Engine(data_dir) as engine:
        engine.create_topic("c", 1, configs={"cleanup.policy": "compact", "segment.bytes": "3000"})
        log = engine.partition("c", 0)
        produce(log, written)
        before = read_all(log)
        after = reference(written, log.segments[-1].base_offset)

    class Crash(Exception):
        pass

    real_rename = os.rename

    def crashing_rename(src, dst):
        if stage == "before-swap" and dst.endswith(cleaner.SWAP):
            raise Crash()
        if stage == "after-delete" and src.endswith(cleaner.SWAP):
            raise Crash()
        return real_rename(src, dst)

    monkeypatch.setattr(os, "rename", crashing_rename)
    with pytest.raises(Crash):
        compact(data_dir, spark_session=spark)
    monkeypatch.setattr(os, "rename", real_rename)
    with Engine(data_dir) as engine:  # a new process's view
        fresh = engine.partition("c", 0)
        assert read_all(fresh) == (before if stage == "before-swap" else after)
        fresh.append_records([(b"k0", b"more", (), now_ms())])
        assert read_all(fresh)[-1] == (len(written), b"k0", b"more")
        assert not [n for n in os.listdir(fresh.dir) if n.endswith((".cleaned", ".swap", ".deleted"))]
    if stage == "before-swap":  # the next run finishes the job
        assert compact(data_dir, spark_session=spark)[("c", 0)].status == "cleaned"
        with Engine(data_dir) as engine:
            assert read_all(engine.partition("c", 0))[:-1] == after


def test_a_plan_made_stale_by_the_engine_cleaner_is_not_swapped(spark, tmp_path):  # noqa: F811
    data_dir = str(tmp_path / "d")
    written = [(b"k%d" % (i % 7), b"v%d" % i) for i in range(300)]
    with Engine(data_dir) as engine:
        engine.create_topic("c", 1, configs={"cleanup.policy": "compact", "segment.bytes": "3000"})
        produce(engine.partition("c", 0), written)
    plan = job.prepare(job.CompactRequest(topic="c", data_dir=data_dir, force=True))
    with Engine(data_dir) as engine:  # the engine cleans meanwhile
        engine.clean(force=True)
        cleaned = read_all(engine.partition("c", 0))
    results = job.run(spark, plan)
    assert results[0].status == "skipped (changed meanwhile)"
    with Engine(data_dir) as engine:
        assert read_all(engine.partition("c", 0)) == cleaned


# --------------------------------------------------------------------------- snapshot
def test_snapshot_to_json_lines(spark, tmp_path):  # noqa: F811
    data_dir = str(tmp_path / "d")
    with Engine(data_dir) as engine:
        engine.create_topic("c", 1, configs={"cleanup.policy": "compact", "segment.bytes": "3000"})
        written = random_items(3, 300)
        produce(engine.partition("c", 0), written)
    out = str(tmp_path / "snap.jsonl")
    plan = job.prepare(job.CompactRequest(topic="c", data_dir=data_dir, output=out))
    job.run(spark, plan)
    rows = [json.loads(line) for path in sorted(glob.glob(os.path.join(out, "part-*")))
            for line in open(path, encoding="utf-8")]
    expected = [(o, k.decode(), v.decode()) for o, k, v in reference(written, len(written), drop_tombstones=True)]
    assert sorted((r["offset"], r["key"], r["value"]) for r in rows) == expected
    with pytest.raises(job.PkLogError):
        job.prepare(job.CompactRequest(topic="c", data_dir=data_dir, output_topic="x"))
