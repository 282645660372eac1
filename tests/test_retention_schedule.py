"""Retention on Kafka's schedule: a record older than retention.ms is not deleted as it is
written, but at the next retention check (log.retention.check.interval.ms, the broker's first
one log.initial.task.delay.ms after start-up). A client that produces records with old
timestamps reads them back; after the next check they are gone. Both through pk-server-start
and through the bundled engine (whose appends run the checks, at most once per interval per
partition, the last check recorded in .pk/retention-check-checkpoint).
"""

from __future__ import annotations

import os
import time

import pytest

from conftest import BrokerProcess
from pk.engine import checkpoint
from pk.engine.engine import Engine
from pk.engine.records import decode_records, iter_batches

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

TIMEOUT = 10
HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS


def now_ms() -> int:
    return int(time.time() * 1000)


def produce_old(bootstrap: str, topic: str, n: int) -> int:
    """n records stamped a day ago; returns that timestamp."""
    stamp = now_ms() - DAY_MS
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(n):
        producer.produce(topic, b"old-%d" % i, partition=0, timestamp=stamp + i)
        producer.flush(TIMEOUT)  # one batch each
    return stamp


def consume_all(bootstrap: str, topic: str) -> list:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "retention-reader",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=TIMEOUT)
        if high <= low:
            return []
        consumer.assign([TopicPartition(topic, 0, low)])
        out = []
        deadline = time.monotonic() + TIMEOUT
        while len(out) < high - low and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                out.append((msg.offset(), msg.value(), msg.timestamp()[1]))
        return out
    finally:
        consumer.close()


def watermarks(bootstrap: str, topic: str) -> tuple[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "retention-watermarks"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=TIMEOUT)
    finally:
        consumer.close()


def test_broker_keeps_old_records_until_its_next_retention_check(tmp_path):
    broker = BrokerProcess(str(tmp_path / "data"), {"log.initial.task.delay.ms": "5000",
                                                    "log.retention.check.interval.ms": "1000"}).start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for f in admin.create_topics([NewTopic("old", 1, 1, config={"retention.ms": str(HOUR_MS)})]).values():
            f.result(TIMEOUT)
        stamp = produce_old(broker.bootstrap, "old", 12)
        # read back at once: every record is there, with its old timestamp
        assert consume_all(broker.bootstrap, "old") == [(i, b"old-%d" % i, stamp + i) for i in range(12)]
        # the next check deletes them (the active segment too: a new one is rolled)
        deadline = time.monotonic() + 15
        while watermarks(broker.bootstrap, "old") != (12, 12) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert watermarks(broker.bootstrap, "old") == (12, 12)
        assert consume_all(broker.bootstrap, "old") == []
        assert sorted(n for n in os.listdir(os.path.join(broker.data_dir, "old-0")) if n.endswith(".log")) == [
            "00000000000000000012.log"]
        last = checkpoint.read(os.path.join(broker.data_dir, checkpoint.RETENTION_CHECK))[("old", 0)]
        assert abs(last - now_ms()) < 15_000
        assert "Retention deleted" in broker.log()
    finally:
        broker.stop()


def test_broker_first_check_waits_for_the_start_up_delay(tmp_path):
    """Kafka's default delay (30 s) and interval (5 min): old records produced right after the
    start-up stay readable, whatever appends follow."""
    broker = BrokerProcess(str(tmp_path / "data")).start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for f in admin.create_topics([NewTopic("old", 1, 1, config={"retention.ms": str(HOUR_MS)})]).values():
            f.result(TIMEOUT)
        stamp = produce_old(broker.bootstrap, "old", 3)
        producer = Producer({"bootstrap.servers": broker.bootstrap})
        producer.produce("old", b"new", partition=0)
        producer.flush(TIMEOUT)
        time.sleep(1.5)  # a few broker ticks
        records = consume_all(broker.bootstrap, "old")
        assert [r[:2] for r in records] == [(0, b"old-0"), (1, b"old-1"), (2, b"old-2"), (3, b"new")]
        assert records[0][2] == stamp
    finally:
        broker.stop()


def engine_records(engine: Engine, topic: str) -> list:
    log = engine.partition(topic, 0)
    data = log.read(log.log_start_offset, 1 << 30)
    out = []
    for pos, header in iter_batches(data):
        out += [(r.offset, r.value) for r in decode_records(data, pos, header)]
    return out


def test_bundled_engine_keeps_old_records_until_the_next_check(tmp_path):
    data_dir = str(tmp_path / "data")
    interval_ms = 1000
    engine = Engine(data_dir, {"log.retention.check.interval.ms": str(interval_ms)})
    engine.create_topic("old", 1, configs={"retention.ms": str(HOUR_MS)})
    log = engine.partition("old", 0)
    stamp = now_ms() - DAY_MS
    for i in range(3):
        log.append_records([(None, b"old-%d" % i, [], stamp + i)])
    # read back at once, here and by another process
    assert engine_records(engine, "old") == [(0, b"old-0"), (1, b"old-1"), (2, b"old-2")]
    with Engine(data_dir, {"log.retention.check.interval.ms": str(interval_ms)}) as other:
        other.partition("old", 0).append_records([(None, b"old-3", [], stamp + 3)])
        assert [v for _, v in engine_records(other, "old")] == [b"old-0", b"old-1", b"old-2", b"old-3"]
    # after the interval, the next append runs the check before it writes: the old records
    # go, the one being written stays
    time.sleep(interval_ms / 1000 + 0.1)
    log.append_records([(None, b"new", [], now_ms())])
    assert engine_records(engine, "old") == [(4, b"new")]
    assert log.log_start_offset == 4
    engine.close()


def test_bundled_engine_shares_the_broker_schedule_on_disk(tmp_path):
    """A check recorded by one process (here: an explicit enforce_retention) holds off the
    next append-time check of another for an interval."""
    data_dir = str(tmp_path / "data")
    settings = {"log.retention.check.interval.ms": "60000"}
    with Engine(data_dir, settings) as engine:
        engine.create_topic("t", 1, configs={"retention.ms": str(HOUR_MS)})
        engine.partition("t", 0).enforce_retention()
    with Engine(data_dir, settings) as engine:
        log = engine.partition("t", 0)
        log.append_records([(None, b"old", [], now_ms() - DAY_MS)])
        log.append_records([(None, b"old2", [], now_ms() - DAY_MS)])
        assert [v for _, v in engine_records(engine, "t")] == [b"old", b"old2"]
        engine.delete_topic("t")
    assert ("t", 0) not in checkpoint.read(os.path.join(data_dir, checkpoint.RETENTION_CHECK))


def test_engine_wide_check_records_every_partition_at_once(tmp_path):
    data_dir = str(tmp_path / "data")
    with Engine(data_dir, {"log.retention.check.interval.ms": "60000"}) as engine:
        engine.create_topic("a", 3, configs={"retention.ms": str(HOUR_MS)})
        log = engine.partition("a", 1)
        log.append_records([(None, b"old", [], now_ms() - DAY_MS)])  # starts the clock only
        assert engine_records_of(engine, "a", 1) == [b"old"]
        engine.enforce_retention()  # what the broker's scheduler runs
        checked = checkpoint.read(os.path.join(data_dir, checkpoint.RETENTION_CHECK))
        assert {("a", p) for p in range(3)} <= set(checked)
        assert engine_records_of(engine, "a", 1) == []
        # the check just recorded holds off the append-time one: a new old record stays
        log.append_records([(None, b"old2", [], now_ms() - DAY_MS)])
        assert engine_records_of(engine, "a", 1) == [b"old2"]


def engine_records_of(engine: Engine, topic: str, partition: int) -> list:
    log = engine.partition(topic, partition)
    data = log.read(log.log_start_offset, 1 << 30)
    return [r.value for pos, header in iter_batches(data) for r in decode_records(data, pos, header)]
