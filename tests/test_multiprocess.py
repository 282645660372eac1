"""Several real processes on one data directory (multiprocessing, 'spawn' start method):
concurrent appends, readers beside writers, a writer killed with SIGKILL, concurrent topic
creation and deletion under a reader."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
import traceback

import pytest

from pk.engine import records
from pk.engine.engine import Engine
from pk.engine.errors import TopicExistsError, UnknownTopicOrPartitionError

from test_segment_log import (check_segment_indexes, log_batches, parse_index, parse_time_index,
                              part_dir, seg_files)

CTX = multiprocessing.get_context("spawn")
BROKER = {"offsets.topic.num.partitions": "1"}  # keeps each Engine start cheap
NOW = int(time.time() * 1000)
TIMEOUT = 60


def _run(target, *args):
    p = CTX.Process(target=target, args=args)
    p.start()
    return p


def _join_all(procs, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    for p in procs:
        p.join(max(0.1, deadline - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join()
            pytest.fail("a worker process hung")
    assert [p.exitcode for p in procs] == [0] * len(procs)


def _check_indexes_valid(data_dir, topic):
    """Weaker than Kafka's exact rule (a writer killed between its .log write and its index
    write leaves one entry out, as in Kafka until its recovery rebuilds the indexes): every
    entry names a real batch, in order."""
    d = part_dir(data_dir, topic)
    for name in seg_files(data_dir, topic=topic):
        base = int(name[:20])
        batches = log_batches(os.path.join(d, name))
        by_pos = {pos: h for pos, h in batches}
        by_last = {h.last_offset: h for _, h in batches}
        entries = parse_index(os.path.join(d, name[:20] + ".index"))
        assert entries == sorted(set(entries))
        for rel, pos in entries:
            assert pos > 0 and by_pos[pos].last_offset == base + rel
        tim = parse_time_index(os.path.join(d, name[:20] + ".timeindex"))
        assert all(a[0] < b[0] and a[1] <= b[1] for a, b in zip(tim, tim[1:]))
        for ts, rel in tim:
            assert by_last[base + rel].max_timestamp == ts


def _verify_partition(data_dir, topic, interval, exact_indexes=True):
    """Read the whole partition back: offsets 0..LEO-1 exactly once, every batch valid, the
    files parse to their end with kafka-python and the indexes follow Kafka's rule."""
    eng = Engine(data_dir, BROKER)
    log = eng.partition(topic, 0)
    leo = log.log_end_offset
    offset, out = 0, []
    while offset < leo:
        data = log.read(offset, 1 << 16)
        assert data
        for pos, header in records.iter_batches(data):
            assert records.check_batch(data, pos).base_offset == offset
            recs = records.decode_records(data, pos, header)
            assert [r.offset for r in recs] == list(range(offset, header.next_offset))
            out += recs
            offset = header.next_offset
    eng.close()
    for name in seg_files(data_dir, topic=topic):
        log_batches(os.path.join(part_dir(data_dir, topic), name))
    if exact_indexes:
        check_segment_indexes(data_dir, interval, topic=topic)
    else:
        _check_indexes_valid(data_dir, topic)
    return leo, out


# --------------------------------------------------------------------------- workers
def _appender(data_dir, topic, wid, count, start_event):
    eng = Engine(data_dir, BROKER)
    log = eng.partition(topic, 0)
    start_event.wait()
    for i in range(count):
        n = 1 + (i + wid) % 3
        rows = [(f"w{wid}-{i}".encode(), (f"{wid}:{i}:{j};" * (1 + (i * 7 + j) % 20)).encode(), (),
                 NOW + i) for j in range(n)]
        log.append_records(rows, compression_type=(i + wid) % 5 if i % 4 == 0 else 0)
    eng.close()


def _endless_appender(data_dir, topic, ready_event):
    eng = Engine(data_dir, BROKER)
    log = eng.partition(topic, 0)
    i = 0
    big = b"x" * 150_000  # a large write widens the window for a kill in the middle of it
    while True:
        log.append_records([(f"kill-{i}".encode(), big if i % 2 else b"small", (), NOW + i)])
        i += 1
        if i == 20:
            ready_event.set()


def _poller(data_dir, topic, expected_total, result_queue):
    """Poll the partition while writers write: every batch seen is whole and valid and the
    offsets are contiguous; stop once everything was seen."""
    try:
        eng = Engine(data_dir, BROKER)
        log = eng.partition(topic, 0)
        offset = 0
        polls = 0
        deadline = time.monotonic() + TIMEOUT
        while offset < expected_total:
            if time.monotonic() > deadline:
                raise AssertionError(f"only saw up to offset {offset}")
            data = log.read(offset, 4096)
            polls += 1
            end = 0
            for pos, header in records.iter_batches(data):
                records.check_batch(data, pos)
                assert header.base_offset == offset, (header.base_offset, offset)
                recs = records.decode_records(data, pos, header)
                assert len(recs) == header.records_count
                offset = header.next_offset
                end = pos + header.size
            assert end == len(data), "read returned a partial batch"
            assert log.log_end_offset >= offset
        result_queue.put(("ok", offset, polls))
    except BaseException:  # noqa: BLE001 - report everything to the parent
        result_queue.put(("error", traceback.format_exc(), 0))


def _creator(data_dir, name, barrier, result_queue):
    try:
        eng = Engine(data_dir, BROKER)
        barrier.wait()
        meta = eng.create_topic(name, 3)
        result_queue.put(("created", meta.topic_id))
    except TopicExistsError as exc:
        result_queue.put(("exists", str(exc)))
    except BaseException:  # noqa: BLE001
        result_queue.put(("error", traceback.format_exc()))


def _starter(data_dir, barrier, result_queue):
    try:
        barrier.wait()
        eng = Engine(data_dir, BROKER)
        result_queue.put(("ok", eng.cluster_id))
    except BaseException:  # noqa: BLE001
        result_queue.put(("error", traceback.format_exc()))


def _doomed_reader(data_dir, topics, reading_event, result_queue):
    """Keep reading each topic (opened before it is deleted) until the engine says it is gone."""
    try:
        eng = Engine(data_dir, BROKER)
        logs = {t: eng.partition(t, 0) for t in topics}
        reading_event.set()
        outcome = {}
        deadline = time.monotonic() + TIMEOUT
        while len(outcome) < len(topics) and time.monotonic() < deadline:
            for t, log in logs.items():
                if t in outcome:
                    continue
                try:
                    leo = log.log_end_offset
                    offset = 0
                    while offset < leo:
                        data = log.read(offset, 2000)
                        for pos, header in records.iter_batches(data):
                            records.check_batch(data, pos)
                            for r in records.decode_records(data, pos, header):
                                # never a record of the re-created topic
                                assert r.key.startswith(b"gen1-"), r.key
                            offset = header.next_offset
                except UnknownTopicOrPartitionError:
                    outcome[t] = "gone"
        result_queue.put(("ok", outcome))
    except BaseException:  # noqa: BLE001
        result_queue.put(("error", traceback.format_exc()))


# --------------------------------------------------------------------------- tests
def test_concurrent_appenders(tmp_path):
    data = str(tmp_path)
    eng = Engine(data, BROKER)
    eng.create_topic("c", configs={"segment.bytes": "30000", "index.interval.bytes": "300", "retention.ms": "-1"})
    start = CTX.Event()
    writers, per_writer = 4, 500
    procs = [_run(_appender, data, "c", w, per_writer, start) for w in range(writers)]
    start.set()
    _join_all(procs)
    leo, recs = _verify_partition(data, "c", 300)
    expected = sum(1 + (i + w) % 3 for w in range(writers) for i in range(per_writer))
    assert leo == expected
    assert [r.offset for r in recs] == list(range(expected))
    # every batch of every writer is there exactly once, whole, in that writer's order
    seen = {}
    for r in recs:
        seen.setdefault(r.key, []).append(r)
    assert len(seen) == writers * per_writer
    for w in range(writers):
        positions = []
        for i in range(per_writer):
            group = seen[f"w{w}-{i}".encode()]
            n = 1 + (i + w) % 3
            assert [r.value for r in group] == [(f"{w}:{i}:{j};" * (1 + (i * 7 + j) % 20)).encode()
                                                 for j in range(n)]
            assert [r.offset for r in group] == list(range(group[0].offset, group[0].offset + n))
            positions.append(group[0].offset)
        assert positions == sorted(positions)
    assert len(seg_files(data, topic="c")) > 3  # rolls happened under contention


def test_reader_polls_while_writers_write(tmp_path):
    data = str(tmp_path)
    eng = Engine(data, BROKER)
    eng.create_topic("r", configs={"segment.bytes": "20000", "index.interval.bytes": "500", "retention.ms": "-1"})
    start = CTX.Event()
    per_writer = 300
    total = sum(1 + (i + w) % 3 for w in range(2) for i in range(per_writer))
    q = CTX.Queue()
    reader = _run(_poller, data, "r", total, q)
    writers = [_run(_appender, data, "r", w, per_writer, start) for w in range(2)]
    start.set()
    status, detail, polls = q.get(timeout=TIMEOUT)
    assert status == "ok", detail
    assert detail == total
    _join_all(writers + [reader])
    assert polls > 1
    leo, _ = _verify_partition(data, "r", 500)
    assert leo == total


def test_writer_killed_mid_stream_then_another_continues(tmp_path):
    data = str(tmp_path)
    eng = Engine(data, BROKER)
    eng.create_topic("k", configs={"segment.bytes": "1000000", "index.interval.bytes": "1000", "retention.ms": "-1"})
    for round_ in range(3):
        ready = CTX.Event()
        victim = _run(_endless_appender, data, "k", ready)
        assert ready.wait(TIMEOUT)
        time.sleep(0.05 * round_)
        os.kill(victim.pid, signal.SIGKILL)
        victim.join()
        assert victim.exitcode == -signal.SIGKILL
        # a new writer process continues
        start = CTX.Event()
        start.set()
        w = _run(_appender, data, "k", round_, 50, start)
        _join_all([w])
        leo, recs = _verify_partition(data, "k", 1000, exact_indexes=False)
        assert [r.offset for r in recs] == list(range(leo))
        tail = [r.key for r in recs[-60:]]
        assert f"w{round_}-49".encode() in tail


def test_torn_tail_left_by_a_dead_writer(tmp_path):
    """A writer killed inside its write leaves part of a batch: the next writer, whether a
    new process (recovery) or one that was already writing (catch-up), cuts it."""
    data = str(tmp_path)
    eng = Engine(data, BROKER)
    eng.create_topic("torn", configs={"index.interval.bytes": "200", "retention.ms": "-1"})
    running = eng.partition("torn", 0)
    running.append_records([(b"a", b"1", (), NOW)])  # this engine is now an active writer
    start = CTX.Event()
    start.set()
    for round_, next_writer in enumerate(("process", "running", "process", "running")):
        leo = running.log_end_offset
        batch = records.with_base_offset(
            records.encode_batch([(b"torn", b"t" * 500, (), NOW)]), leo)
        active = os.path.join(part_dir(data, "torn"), seg_files(data, topic="torn")[-1])
        with open(active, "ab") as f:
            f.write(batch[: 100 + 97 * round_])
        if next_writer == "process":
            _join_all([_run(_appender, data, "torn", round_, 20, start)])
        else:
            assert running.append_records([(b"b", b"2", (), NOW)])[0] == leo
        total, recs = _verify_partition(data, "torn", 200)
        assert [r.offset for r in recs] == list(range(total))
        assert b"torn" not in {r.key for r in recs}


def test_concurrent_engine_start_on_fresh_dir(tmp_path):
    data = str(tmp_path / "fresh")
    n = 4
    barrier = CTX.Barrier(n)
    q = CTX.Queue()
    procs = [_run(_starter, data, barrier, q) for _ in range(n)]
    results = [q.get(timeout=TIMEOUT) for _ in range(n)]
    _join_all(procs)
    assert all(s == "ok" for s, _ in results), results
    assert len({cid for _, cid in results}) == 1
    eng = Engine(data, BROKER)
    assert eng.cluster_id == results[0][1]
    assert eng.list_topics() == ["__consumer_offsets"]


def test_concurrent_create_same_topic(tmp_path):
    data = str(tmp_path)
    Engine(data, BROKER)
    n = 5
    barrier = CTX.Barrier(n)
    q = CTX.Queue()
    procs = [_run(_creator, data, "same", barrier, q) for _ in range(n)]
    results = [q.get(timeout=TIMEOUT) for _ in range(n)]
    _join_all(procs)
    assert not [r for r in results if r[0] == "error"], results
    created = [r for r in results if r[0] == "created"]
    exists = [r for r in results if r[0] == "exists"]
    assert len(created) == 1 and len(exists) == n - 1
    assert all(msg == "Topic 'same' already exists." for _, msg in exists)
    eng = Engine(data, BROKER)
    meta = eng.topic("same")
    assert meta.topic_id == created[0][1]
    for p in range(3):
        with open(os.path.join(data, f"same-{p}", "partition.metadata")) as f:
            assert meta.topic_id in f.read()


def test_delete_topics_under_a_reader(tmp_path):
    data = str(tmp_path)
    eng = Engine(data, BROKER)
    topics = [f"d{i}" for i in range(4)]
    for t in topics:
        eng.create_topic(t, configs={"segment.bytes": "2000", "retention.ms": "-1"})
        log = eng.partition(t, 0)
        for i in range(60):
            log.append_records([(f"gen1-{i}".encode(), b"v" * 40, (), NOW)])
    eng.close()
    reading = CTX.Event()
    q = CTX.Queue()
    reader = _run(_doomed_reader, data, topics, reading, q)
    assert reading.wait(TIMEOUT)
    admin = Engine(data, BROKER)
    for i, t in enumerate(topics):
        time.sleep(0.02 * i)
        admin.delete_topic(t)
        if i % 2:
            # re-created at once under the same name, with other records
            admin.create_topic(t)
            admin.partition(t, 0).append_records([(b"gen2", b"new", (), NOW)])
    status, detail = q.get(timeout=TIMEOUT)
    _join_all([reader])
    assert status == "ok", detail
    assert detail == {t: "gone" for t in topics}
