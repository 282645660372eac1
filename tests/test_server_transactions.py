"""Transactions (exactly-once) on pk-server-start with real clients: confluent-kafka's and
kafka-python's transactional producers, read_committed consumers, zombie fencing, timeouts,
a broker restart in the middle, and the transaction APIs' version-specific fields over the
codec directly.
"""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from conftest import BrokerProcess
from pk.engine import protocol as kp
from pk.engine import transaction_log as tlog
from pk.engine import txn_index
from pk.engine.engine import Engine
from pk.engine.records import CONTROL_ABORT, CONTROL_COMMIT, control_type, iter_batches

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

TIMEOUT = 15


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    b = BrokerProcess(str(tmp_path_factory.mktemp("txn") / "data"),
                      {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "200"}).start()
    try:
        yield b
    finally:
        b.stop()


def create(bootstrap, name, partitions=1):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        future.result(TIMEOUT)


def txn_producer(bootstrap, tid, **extra):
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, **extra})
    p.init_transactions(TIMEOUT)
    return p


def consume_all(bootstrap, topic, partitions=(0,), isolation="read_committed", idle=2.0):
    """Every message a consumer with `isolation` reads, until nothing new came for `idle` s."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4()}",
                         "enable.auto.commit": False, "isolation.level": isolation,
                         "enable.partition.eof": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    got = []
    last = time.monotonic()
    try:
        while time.monotonic() - last < idle:
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            got.append(msg.value())
            last = time.monotonic()
    finally:
        consumer.close()
    return got


def watermarks(bootstrap, topic, partition=0, isolation="read_committed"):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "wm", "isolation.level": isolation})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, partition), TIMEOUT)
    finally:
        consumer.close()


def markers(data_dir, topic, partition=0):
    """[(offset, control type)] of the control batches in a partition, read by the engine."""
    with Engine(data_dir) as engine:
        data = engine.partition(topic, partition).read(0, 1 << 30)
    return [(h.base_offset, control_type(data, pos, h)) for pos, h in iter_batches(data) if h.is_control]


# ------------------------------------------------------------------ commit / abort visibility
def test_commit_visible_once_abort_never_read_uncommitted_sees_both(server):
    topic = "txn-visibility"
    create(server.bootstrap, topic, 2)
    p = txn_producer(server.bootstrap, "tid-visibility")
    p.begin_transaction()
    for i in range(5):
        p.produce(topic, f"c{i}".encode(), partition=i % 2)
    p.commit_transaction(TIMEOUT)
    p.begin_transaction()
    for i in range(3):
        p.produce(topic, f"a{i}".encode(), partition=i % 2)
    p.flush(TIMEOUT)
    p.abort_transaction(TIMEOUT)
    p.begin_transaction()
    p.produce(topic, b"c-last", partition=0)
    p.commit_transaction(TIMEOUT)

    committed = consume_all(server.bootstrap, topic, (0, 1))
    assert sorted(committed) == sorted([f"c{i}".encode() for i in range(5)] + [b"c-last"])
    uncommitted = consume_all(server.bootstrap, topic, (0, 1), isolation="read_uncommitted")
    assert sorted(uncommitted) == sorted([f"c{i}".encode() for i in range(5)] + [b"c-last"]
                                         + [f"a{i}".encode() for i in range(3)])
    # each partition got a marker per transaction: commit, abort, commit (partition 1: no third)
    assert [t for _, t in markers(server.data_dir, topic, 0)] == [CONTROL_COMMIT, CONTROL_ABORT, CONTROL_COMMIT]
    assert [t for _, t in markers(server.data_dir, topic, 1)] == [CONTROL_COMMIT, CONTROL_ABORT]
    # the abort is in the segment's .txnindex, in Kafka's format
    with Engine(server.data_dir) as engine:
        plog = engine.partition(topic, 0)
        entries = txn_index.read(txn_index.path_for(plog.dir, 0))
    assert len(entries) == 1 and entries[0].first_offset == 4 and entries[0].last_offset == 6
    p.flush(TIMEOUT)


def test_open_transaction_holds_back_read_committed_until_commit(server):
    topic = "txn-open"
    create(server.bootstrap, topic)
    plain = Producer({"bootstrap.servers": server.bootstrap})
    plain.produce(topic, b"before")
    plain.flush(TIMEOUT)
    p = txn_producer(server.bootstrap, "tid-open")
    p.begin_transaction()
    p.produce(topic, b"inside")
    p.flush(TIMEOUT)
    plain.produce(topic, b"after")  # non-transactional, after the open transaction's first record
    plain.flush(TIMEOUT)
    assert consume_all(server.bootstrap, topic, idle=1.5) == [b"before"]  # stops at the LSO
    assert watermarks(server.bootstrap, topic) == (0, 1)  # read_committed: latest is the LSO
    assert consume_all(server.bootstrap, topic, isolation="read_uncommitted", idle=1.5) == [b"before", b"inside", b"after"]
    p.commit_transaction(TIMEOUT)
    assert consume_all(server.bootstrap, topic) == [b"before", b"inside", b"after"]


def test_list_offsets_read_committed_answers_the_last_stable_offset(server):
    topic = "txn-lso"
    create(server.bootstrap, topic)
    p = txn_producer(server.bootstrap, "tid-lso")
    p.begin_transaction()
    p.produce(topic, b"x")
    p.flush(TIMEOUT)
    with socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT) as sock:
        def latest(isolation):
            body = {"replica_id": -1, "isolation_level": isolation, "topics": [
                {"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1}]}]}
            resp = call(sock, kp.ApiKey.LIST_OFFSETS, 2, body)
            return resp["topics"][0]["partitions"][0]["offset"]
        assert (latest(0), latest(1)) == (1, 0)
        p.commit_transaction(TIMEOUT)
        assert (latest(0), latest(1)) == (2, 2)  # the record and its marker


# ------------------------------------------------------------------ fencing
def test_zombie_producer_is_fenced_by_a_second_one(server):
    topic = "txn-zombie"
    create(server.bootstrap, topic)
    zombie = txn_producer(server.bootstrap, "tid-zombie")
    zombie.begin_transaction()
    zombie.produce(topic, b"zombie")
    zombie.flush(TIMEOUT)
    successor = txn_producer(server.bootstrap, "tid-zombie")  # aborts the zombie's transaction
    successor.begin_transaction()
    successor.produce(topic, b"successor")
    successor.commit_transaction(TIMEOUT)
    with pytest.raises(KafkaException) as err:
        zombie.produce(topic, b"zombie-2")
        zombie.commit_transaction(TIMEOUT)
    assert err.value.args[0].fatal() or err.value.args[0].code() in (
        confluent_kafka.KafkaError._FENCED, confluent_kafka.KafkaError.PRODUCER_FENCED,
        confluent_kafka.KafkaError.INVALID_PRODUCER_EPOCH)
    assert consume_all(server.bootstrap, topic) == [b"successor"]
    assert [t for _, t in markers(server.data_dir, topic)] == [CONTROL_ABORT, CONTROL_COMMIT]


def test_killed_producer_transaction_aborted_after_its_timeout(server, tmp_path):
    topic = "txn-timeout"
    create(server.bootstrap, topic)
    script = textwrap.dedent(f"""
        import os, sys
        from confluent_kafka import Producer
        p = Producer({{"bootstrap.servers": "{server.bootstrap}", "transactional.id": "tid-killed",
                      "transaction.timeout.ms": 1500}})
        p.init_transactions(15)
        p.begin_transaction()
        p.produce("{topic}", b"lost")
        p.flush(15)
        os._exit(0)  # dies with its transaction open
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    assert consume_all(server.bootstrap, topic, idle=0.5) == []
    assert watermarks(server.bootstrap, topic) == (0, 0)  # the LSO is held at the open transaction
    deadline = time.monotonic() + 20
    while markers(server.data_dir, topic) == [] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [t for _, t in markers(server.data_dir, topic)] == [CONTROL_ABORT]
    assert consume_all(server.bootstrap, topic, idle=1.0) == []
    assert watermarks(server.bootstrap, topic) == (0, 2)
    assert consume_all(server.bootstrap, topic, isolation="read_uncommitted", idle=1.0) == [b"lost"]


def test_transaction_timeout_above_the_maximum_is_refused(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT) as sock:
        resp = call(sock, kp.ApiKey.INIT_PRODUCER_ID, 4, {"transactional_id": "tid-too-long",
                                                         "transaction_timeout_ms": 900001})
        assert resp["error_code"] == kp.errors.INVALID_TRANSACTION_TIMEOUT


# ------------------------------------------------------------------ consume-transform-produce
def test_consume_transform_produce_with_confluent_kafka(server):
    source, sink, group = "ctp-in", "ctp-out", "ctp-group"
    create(server.bootstrap, source)
    create(server.bootstrap, sink)
    plain = Producer({"bootstrap.servers": server.bootstrap})
    for i in range(10):
        plain.produce(source, str(i).encode())
    plain.flush(TIMEOUT)
    consumer = Consumer({"bootstrap.servers": server.bootstrap, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    consumer.subscribe([source])
    p = txn_producer(server.bootstrap, "tid-ctp")
    done = 0
    aborted_once = False
    deadline = time.monotonic() + 30
    try:
        while done < 10 and time.monotonic() < deadline:
            msgs = consumer.consume(5, 1.0)
            if not msgs:
                continue
            p.begin_transaction()
            for m in msgs:
                p.produce(sink, str(int(m.value()) * 10).encode())
            p.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                          consumer.consumer_group_metadata(), TIMEOUT)
            if not aborted_once:
                # the first batch is aborted: its output is dropped, its offsets not committed
                p.abort_transaction(TIMEOUT)
                aborted_once = True
                consumer.seek(TopicPartition(source, 0, msgs[0].offset()))
                continue
            p.commit_transaction(TIMEOUT)
            done += len(msgs)
        committed = consumer.committed([TopicPartition(source, 0)], TIMEOUT)[0].offset
    finally:
        consumer.close()
    assert committed == 10
    assert sorted(consume_all(server.bootstrap, sink), key=int) == [str(i * 10).encode() for i in range(10)]


def test_consume_transform_produce_with_kafka_python(server):
    kafka = pytest.importorskip("kafka")
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.structs import OffsetAndMetadata
    from kafka.structs import TopicPartition as KTP

    source, sink, group = "kp-ctp-in", "kp-ctp-out", "kp-ctp-group"
    create(server.bootstrap, source)
    create(server.bootstrap, sink)
    plain = Producer({"bootstrap.servers": server.bootstrap})
    for i in range(6):
        plain.produce(source, str(i).encode())
    plain.flush(TIMEOUT)
    consumer = KafkaConsumer(source, bootstrap_servers=server.bootstrap, group_id=group,
                             enable_auto_commit=False, auto_offset_reset="earliest",
                             isolation_level="read_committed")
    producer = KafkaProducer(bootstrap_servers=server.bootstrap, transactional_id="tid-kp-ctp")
    producer.init_transactions()
    done = 0
    deadline = time.monotonic() + 30
    try:
        while done < 6 and time.monotonic() < deadline:
            polled = consumer.poll(1000)
            for tp, msgs in polled.items():
                producer.begin_transaction()
                for m in msgs:
                    producer.send(sink, str(int(m.value) + 100).encode())
                producer.send_offsets_to_transaction({KTP(source, tp.partition): OffsetAndMetadata(
                    msgs[-1].offset + 1, "", -1)}, consumer.group_id if hasattr(consumer, "group_id") else group)
                producer.commit_transaction()
                done += len(msgs)
    finally:
        consumer.close()
        producer.close()
    assert done == 6
    got = consume_all(server.bootstrap, sink)
    assert sorted(got, key=int) == [str(i + 100).encode() for i in range(6)]
    check = Consumer({"bootstrap.servers": server.bootstrap, "group.id": group})
    try:
        assert check.committed([TopicPartition(source, 0)], TIMEOUT)[0].offset == 6
    finally:
        check.close()


# ------------------------------------------------------------------ restart
def test_restart_mid_transaction_recovers_the_coordinator(tmp_path):
    data = str(tmp_path / "data")
    b = BrokerProcess(data).start()
    topic = "txn-restart"
    try:
        create(b.bootstrap, topic)
        p = txn_producer(b.bootstrap, "tid-restart")
        p.begin_transaction()
        p.produce(topic, b"committed-before")
        p.commit_transaction(TIMEOUT)
        p.begin_transaction()
        p.produce(topic, b"open-across-restart")
        p.flush(TIMEOUT)
    finally:
        b.kill()
    # __transaction_state holds the transaction, Ongoing, with its partition
    with Engine(data) as engine:
        part = tlog.partition_for("tid-restart")
        found = {}
        engine.partition(tlog.TRANSACTION_STATE_TOPIC, part).each_record(
            0, lambda rec: found.__setitem__(tlog.decode_key(rec.key), tlog.decode_value(rec.value)))
        assert engine.topic(tlog.TRANSACTION_STATE_TOPIC).partitions == 50
        assert engine.topic(tlog.TRANSACTION_STATE_TOPIC).configs["cleanup.policy"] == "compact"
    value = found["tid-restart"]
    assert value.state_name == "Ongoing" and value.partitions == {topic: [0]}

    b = BrokerProcess(data, port=b.port).start()
    try:
        # the open transaction still holds the LSO after the restart
        assert consume_all(b.bootstrap, topic, idle=1.0) == [b"committed-before"]
        with socket.create_connection(("127.0.0.1", b.port), timeout=TIMEOUT) as sock:
            resp = call(sock, kp.ApiKey.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": ["tid-restart", "nope"]})
            state, missing = resp["transaction_states"]
            assert (state["transaction_state"], state["producer_id"], state["producer_epoch"]) == (
                "Ongoing", value.producer_id, value.producer_epoch)
            assert state["topics"] == [{"topic": topic, "partitions": [0]}]
            assert missing["error_code"] == kp.errors.TRANSACTIONAL_ID_NOT_FOUND
            listed = call(sock, kp.ApiKey.LIST_TRANSACTIONS, 1, {"state_filters": ["Ongoing"],
                                                                "producer_id_filters": [], "duration_filter": -1})
            assert [t["transactional_id"] for t in listed["transaction_states"]] == ["tid-restart"]
        # a new producer with the id fences the dead one and aborts its transaction
        p2 = txn_producer(b.bootstrap, "tid-restart")
        p2.begin_transaction()
        p2.produce(topic, b"after-restart")
        p2.commit_transaction(TIMEOUT)
        assert consume_all(b.bootstrap, topic) == [b"committed-before", b"after-restart"]
    finally:
        b.stop()


# ------------------------------------------------------------------ the codec directly
def call(sock, key, version, body, corr=7):
    sock.sendall(kp.encode_request(key, version, corr, body))
    size = struct.unpack(">i", _recv(sock, 4))[0]
    return kp.parse_response(_recv(sock, size), key, version)[1]


def _recv(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        assert chunk, "connection closed"
        buf += chunk
    return buf
