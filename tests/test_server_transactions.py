"""Transactions (exactly-once) on pk-server-start with real clients: confluent-kafka's and
kafka-python's transactional producers, read_committed consumers, zombie fencing, timeouts,
a broker restart in the middle, and the transaction APIs' version-specific fields over the
codec directly.
"""

from __future__ import annotations

import base64
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from conftest import BrokerProcess, ProtocolClient
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
    with ProtocolClient(server.port, timeout=TIMEOUT) as sock:
        def latest(isolation):
            body = {"replica_id": -1, "isolation_level": isolation, "topics": [
                {"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1}]}]}
            resp = sock.call(kp.ApiKey.LIST_OFFSETS, 2, body)
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
    with ProtocolClient(server.port, timeout=TIMEOUT) as sock:
        resp = sock.call(kp.ApiKey.INIT_PRODUCER_ID, 4, {"transactional_id": "tid-too-long",
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
    pytest.importorskip("kafka")
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
                producer.send_offsets_to_transaction(
                    {KTP(source, tp.partition): OffsetAndMetadata(msgs[-1].offset + 1, "", -1)}, group)
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
        with ProtocolClient(b.port, timeout=TIMEOUT) as sock:
            resp = sock.call(kp.ApiKey.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": ["tid-restart", "nope"]})
            state, missing = resp["transaction_states"]
            assert (state["transaction_state"], state["producer_id"], state["producer_epoch"]) == (
                "Ongoing", value.producer_id, value.producer_epoch)
            assert state["topics"] == [{"topic": topic, "partitions": [0]}]
            assert missing["error_code"] == kp.errors.TRANSACTIONAL_ID_NOT_FOUND
            listed = sock.call(kp.ApiKey.LIST_TRANSACTIONS, 1, {"state_filters": ["Ongoing"],
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
def _produce_body(topic, partition, batch, transactional_id):
    return {"transactional_id": transactional_id, "acks": -1, "timeout_ms": 5000,
            "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": batch}]}]}


def test_protocol_versions_of_the_transaction_apis(server):
    """InitProducerId v0-5 (KIP-360 bump, fencing and its pre-KIP-588 error), AddPartitionsToTxn
    v3 (a client's) and v4+ (batched, verify_only), a transactional Produce into a partition
    not added, TxnOffsetCommit v6 (topic ids), EndTxn v5 (the epoch answered), WriteTxnMarkers."""
    from pk.engine.records import encode_batch
    E = kp.errors
    topic = "txn-protocol"
    create(server.bootstrap, topic, 2)
    with ProtocolClient(server.port, timeout=TIMEOUT) as sock:
        first = sock.call(kp.ApiKey.INIT_PRODUCER_ID, 0, {"transactional_id": "tid-proto",
                                                            "transaction_timeout_ms": 60000})
        assert first["error_code"] == E.NONE and first["producer_epoch"] == 0
        pid = first["producer_id"]
        # v3+: re-initialising with the current id and epoch bumps the epoch (KIP-360)
        bumped = sock.call(kp.ApiKey.INIT_PRODUCER_ID, 5, {"transactional_id": "tid-proto",
                      "transaction_timeout_ms": 60000, "producer_id": pid, "producer_epoch": 0})
        assert (bumped["error_code"], bumped["producer_id"], bumped["producer_epoch"]) == (E.NONE, pid, 1)
        # a stale epoch is fenced: PRODUCER_FENCED from v4, INVALID_PRODUCER_EPOCH before
        for version, code in ((4, E.PRODUCER_FENCED), (3, E.INVALID_PRODUCER_EPOCH)):
            stale = sock.call(kp.ApiKey.INIT_PRODUCER_ID, version, {"transactional_id": "tid-proto",
                         "transaction_timeout_ms": 60000, "producer_id": pid, "producer_epoch": 7})
            assert stale["error_code"] == code, version
        epoch = 1
        batch = encode_batch([(None, b"v", (), int(time.time() * 1000))], producer_id=pid,
                             producer_epoch=epoch, base_sequence=0, transactional=True)
        # not added to the transaction yet: refused
        resp = sock.call(kp.ApiKey.PRODUCE, 3, _produce_body(topic, 0, batch, "tid-proto"))
        assert resp["responses"][0]["partition_responses"][0]["error_code"] == E.INVALID_TXN_STATE
        # AddPartitionsToTxn v3: partition 0, and an unknown partition fails the whole request
        added = sock.call(kp.ApiKey.ADD_PARTITIONS_TO_TXN, 3, {
            "v3_and_below_transactional_id": "tid-proto", "v3_and_below_producer_id": pid,
            "v3_and_below_producer_epoch": epoch,
            "v3_and_below_topics": [{"name": topic, "partitions": [0, 9]}]})
        codes = {r["partition_index"]: r["partition_error_code"]
                 for r in added["results_by_topic_v3_and_below"][0]["results_by_partition"]}
        assert codes == {0: E.OPERATION_NOT_ATTEMPTED, 9: E.UNKNOWN_TOPIC_OR_PARTITION}
        added = sock.call(kp.ApiKey.ADD_PARTITIONS_TO_TXN, 2, {
            "v3_and_below_transactional_id": "tid-proto", "v3_and_below_producer_id": pid,
            "v3_and_below_producer_epoch": epoch, "v3_and_below_topics": [{"name": topic, "partitions": [0]}]})
        assert added["results_by_topic_v3_and_below"][0]["results_by_partition"][0]["partition_error_code"] == E.NONE
        # v4+: batched by transactional id; verify_only checks without adding
        verified = sock.call(kp.ApiKey.ADD_PARTITIONS_TO_TXN, 5, {"transactions": [
            {"transactional_id": "tid-proto", "producer_id": pid, "producer_epoch": epoch, "verify_only": True,
             "topics": [{"name": topic, "partitions": [0, 1]}]},
            {"transactional_id": "tid-unknown", "producer_id": 1, "producer_epoch": 0, "verify_only": True,
             "topics": [{"name": topic, "partitions": [0]}]}]})
        assert verified["error_code"] == E.NONE
        mine, unknown = verified["results_by_transaction"]
        assert {r["partition_index"]: r["partition_error_code"] for r in mine["topic_results"][0]["results_by_partition"]} \
            == {0: E.NONE, 1: E.TRANSACTION_ABORTABLE}
        assert unknown["topic_results"][0]["results_by_partition"][0]["partition_error_code"] == E.INVALID_PRODUCER_ID_MAPPING
        resp = sock.call(kp.ApiKey.PRODUCE, 3, _produce_body(topic, 0, batch, "tid-proto"))
        assert resp["responses"][0]["partition_responses"][0]["error_code"] == E.NONE
        # AddPartitionsToTxn with an old epoch: fenced (v2+), INVALID_PRODUCER_EPOCH (v0-1)
        for version, code in ((2, E.PRODUCER_FENCED), (1, E.INVALID_PRODUCER_EPOCH)):
            old = sock.call(kp.ApiKey.ADD_PARTITIONS_TO_TXN, version, {
                "v3_and_below_transactional_id": "tid-proto", "v3_and_below_producer_id": pid,
                "v3_and_below_producer_epoch": 0, "v3_and_below_topics": [{"name": topic, "partitions": [1]}]})
            assert old["results_by_topic_v3_and_below"][0]["results_by_partition"][0]["partition_error_code"] == code
        # offsets with the transaction: AddOffsetsToTxn, then TxnOffsetCommit v6 by topic id
        resp = sock.call(kp.ApiKey.ADD_OFFSETS_TO_TXN, 4, {"transactional_id": "tid-proto", "producer_id": pid,
                                                             "producer_epoch": epoch, "group_id": "g-proto"})
        assert resp["error_code"] == E.NONE
        meta = sock.call(kp.ApiKey.METADATA, 4, {"topics": [{"name": topic}], "allow_auto_topic_creation": False})
        assert meta["topics"][0]["error_code"] == E.NONE
        with Engine(server.data_dir) as engine:
            topic_id = uuid.UUID(bytes=base64.urlsafe_b64decode(engine.topic(topic).topic_id + "=="))
        committed = sock.call(kp.ApiKey.TXN_OFFSET_COMMIT, 6, {
            "transactional_id": "tid-proto", "group_id": "g-proto", "producer_id": pid, "producer_epoch": epoch,
            "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"topic_id": topic_id, "partitions": [
                {"partition_index": 0, "committed_offset": 42, "committed_leader_epoch": -1,
                 "committed_metadata": "m"}]}]})
        assert [(t["topic_id"], t["partitions"]) for t in committed["topics"]] == [
            (topic_id, [{"partition_index": 0, "error_code": E.NONE}])]
        fetched = sock.call(kp.ApiKey.OFFSET_FETCH, 1, {"group_id": "g-proto", "topics": [
            {"name": topic, "partition_indexes": [0]}]})
        assert fetched["topics"][0]["partitions"][0]["committed_offset"] == -1  # not before the commit
        # EndTxn v5 is transaction version 2 (KIP-890): the end bumps the epoch, answered
        ended = sock.call(kp.ApiKey.END_TXN, 5, {"transactional_id": "tid-proto", "producer_id": pid,
                                                  "producer_epoch": epoch, "committed": True})
        assert (ended["error_code"], ended["producer_id"], ended["producer_epoch"]) == (E.NONE, pid, epoch + 1)
        fetched = sock.call(kp.ApiKey.OFFSET_FETCH, 1, {"group_id": "g-proto", "topics": [
            {"name": topic, "partition_indexes": [0]}]})
        assert fetched["topics"][0]["partitions"][0]["committed_offset"] == 42
        # a v5 retry with the epoch it had is answered the same; an older client is fenced
        again = sock.call(kp.ApiKey.END_TXN, 5, {"transactional_id": "tid-proto", "producer_id": pid,
                                                  "producer_epoch": epoch, "committed": True})
        assert (again["error_code"], again["producer_epoch"]) == (E.NONE, epoch + 1)
        stale = sock.call(kp.ApiKey.END_TXN, 0, {"transactional_id": "tid-proto", "producer_id": pid,
                                                  "producer_epoch": epoch, "committed": True})
        assert stale["error_code"] == E.INVALID_PRODUCER_EPOCH
        # with the current epoch: a retried end answers NONE, the other outcome INVALID_TXN_STATE
        epoch += 1
        again = sock.call(kp.ApiKey.END_TXN, 0, {"transactional_id": "tid-proto", "producer_id": pid,
                                                  "producer_epoch": epoch, "committed": True})
        assert again["error_code"] == E.NONE
        other = sock.call(kp.ApiKey.END_TXN, 0, {"transactional_id": "tid-proto", "producer_id": pid,
                                                  "producer_epoch": epoch, "committed": False})
        assert other["error_code"] == E.INVALID_TXN_STATE
        # WriteTxnMarkers: a marker written directly (as another coordinator would ask)
        written = sock.call(kp.ApiKey.WRITE_TXN_MARKERS, 2, {"markers": [
            {"producer_id": 999999, "producer_epoch": 0, "transaction_result": False, "coordinator_epoch": 3,
             "transaction_version": 0, "topics": [{"name": topic, "partition_indexes": [1]},
                                                  {"name": "no-such-topic", "partition_indexes": [0]}]}]})
        results = {t["name"]: t["partitions"][0]["error_code"] for t in written["markers"][0]["topics"]}
        assert results == {topic: E.NONE, "no-such-topic": E.UNKNOWN_TOPIC_OR_PARTITION}
    assert markers(server.data_dir, topic, 0) == [(1, CONTROL_COMMIT)]
    with Engine(server.data_dir) as engine:  # the marker carries the bumped epoch
        data = engine.partition(topic, 0).read(1, 1 << 20)
    assert [h.producer_epoch for _, h in iter_batches(data)] == [2]
    assert markers(server.data_dir, topic, 1) == [(0, CONTROL_ABORT)]


def test_fetch_read_committed_lists_aborted_transactions(server):
    """Fetch v4+ with isolation_level 1: records up to the LSO and the aborted transactions
    they overlap, from the .txnindex; read_uncommitted gets no list."""
    topic = "txn-fetch"
    create(server.bootstrap, topic)
    p = txn_producer(server.bootstrap, "tid-fetch")
    p.begin_transaction()
    p.produce(topic, b"aborted")
    p.flush(TIMEOUT)
    p.abort_transaction(TIMEOUT)
    p.begin_transaction()
    p.produce(topic, b"open")
    p.flush(TIMEOUT)
    with ProtocolClient(server.port, timeout=TIMEOUT) as sock:
        def fetch(isolation, version=11):
            body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
                    "isolation_level": isolation, "session_id": 0, "session_epoch": -1, "rack_id": "",
                    "forgotten_topics_data": [], "topics": [{"topic": topic, "partitions": [
                        {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "log_start_offset": -1,
                         "partition_max_bytes": 1 << 20}]}]}
            return sock.call(kp.ApiKey.FETCH, version, body)["responses"][0]["partitions"][0]
        committed = fetch(1, 4)
        assert (committed["high_watermark"], committed["last_stable_offset"]) == (3, 2)
        assert committed["aborted_transactions"][0]["first_offset"] == 0
        offsets = [h.base_offset for _, h in iter_batches(committed["records"])]
        assert offsets == [0, 1]  # the aborted record and its marker; not the open transaction
        uncommitted = fetch(0)
        assert uncommitted["aborted_transactions"] is None
        assert [h.base_offset for _, h in iter_batches(uncommitted["records"])] == [0, 1, 2]
    p.commit_transaction(TIMEOUT)


# ------------------------------------------------------------------ the bundled engine's reader
def test_engine_console_consumer_read_committed(tmp_path):
    """pk-console-consumer on the data dir (no broker in between): read_committed hides aborted
    records and markers, and stops at a transaction still open; read_uncommitted shows all."""
    from conftest import Runner

    data = str(tmp_path / "data")
    b = BrokerProcess(data).start()
    topic = "txn-engine"
    try:
        create(b.bootstrap, topic)
        plain = Producer({"bootstrap.servers": b.bootstrap})
        p = txn_producer(b.bootstrap, "tid-engine")
        for value, outcome in ((b"c1", "commit"), (b"a1", "abort"), (b"c2", "commit")):
            p.begin_transaction()
            p.produce(topic, value)
            p.flush(TIMEOUT)
            plain.produce(topic, value + b"-plain")  # interleaved, outside any transaction
            plain.flush(TIMEOUT)
            (p.commit_transaction if outcome == "commit" else p.abort_transaction)(TIMEOUT)
        p.begin_transaction()
        p.produce(topic, b"open")
        p.flush(TIMEOUT)
        plain.produce(topic, b"after-open")
        plain.flush(TIMEOUT)
        pk = Runner(data)
        args = ("pk-console-consumer", "--topic", topic, "--from-beginning", "--timeout-ms", "1500")
        committed = pk(*args, "--isolation-level", "read_committed")
        assert committed.out.split() == ["c1", "c1-plain", "a1-plain", "c2", "c2-plain"], committed.err
        uncommitted = pk(*args, "--isolation-level", "read_uncommitted")
        assert uncommitted.out.split() == ["c1", "c1-plain", "a1", "a1-plain", "c2", "c2-plain", "open",
                                           "after-open"]
        p.commit_transaction(TIMEOUT)
        committed = pk(*args, "--isolation-level", "read_committed")
        assert committed.out.split() == ["c1", "c1-plain", "a1-plain", "c2", "c2-plain", "open", "after-open"]
    finally:
        b.stop()


def test_transaction_version_2_txn_offset_commit_adds_its_partition(server):
    """TxnOffsetCommit v5+ (transaction version 2) needs no AddOffsetsToTxn; ListTransactions
    v1 filters by how long a transaction has been running."""
    E = kp.errors
    topic = "txn-tv2"
    create(server.bootstrap, topic)
    with ProtocolClient(server.port, timeout=TIMEOUT) as sock:
        init = sock.call(kp.ApiKey.INIT_PRODUCER_ID, 5, {"transactional_id": "tid-tv2",
                                                         "transaction_timeout_ms": 60000})
        pid, epoch = init["producer_id"], init["producer_epoch"]
        body = {"transactional_id": "tid-tv2", "group_id": "g-tv2", "producer_id": pid, "producer_epoch": epoch,
                "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
                "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 7,
                                                            "committed_leader_epoch": -1, "committed_metadata": ""}]}]}
        # v4 (transaction version 1): the offsets partition must have been added
        assert sock.call(kp.ApiKey.TXN_OFFSET_COMMIT, 4, body)["topics"][0]["partitions"][0]["error_code"] \
            == E.INVALID_TXN_STATE
        assert sock.call(kp.ApiKey.TXN_OFFSET_COMMIT, 5, body)["topics"][0]["partitions"][0]["error_code"] == E.NONE
        state = sock.call(kp.ApiKey.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": ["tid-tv2"]})["transaction_states"][0]
        assert state["transaction_state"] == "Ongoing"
        assert [t["topic"] for t in state["topics"]] == ["__consumer_offsets"]
        listing = lambda duration: [t["transactional_id"] for t in sock.call(kp.ApiKey.LIST_TRANSACTIONS, 1, {
            "state_filters": [], "producer_id_filters": [pid], "duration_filter": duration})["transaction_states"]]
        assert listing(-1) == ["tid-tv2"] and listing(3_600_000) == []
        ended = sock.call(kp.ApiKey.END_TXN, 5, {"transactional_id": "tid-tv2", "producer_id": pid,
                                                  "producer_epoch": epoch, "committed": True})
        assert (ended["error_code"], ended["producer_epoch"]) == (E.NONE, epoch + 1)
        fetched = sock.call(kp.ApiKey.OFFSET_FETCH, 1, {"group_id": "g-tv2", "topics": [
            {"name": topic, "partition_indexes": [0]}]})
        assert fetched["topics"][0]["partitions"][0]["committed_offset"] == 7


def test_restart_finishes_a_transaction_left_in_prepare_commit(tmp_path):
    """A broker that died after writing PrepareCommit but before the markers: the next start
    writes the COMMIT markers, and the records become visible to read_committed consumers."""
    data = str(tmp_path / "data")
    b = BrokerProcess(data).start()
    topic = "txn-prepare"
    try:
        create(b.bootstrap, topic, 2)
        p = txn_producer(b.bootstrap, "tid-prepare")
        p.begin_transaction()
        p.produce(topic, b"p0", partition=0)
        p.produce(topic, b"p1", partition=1)
        p.flush(TIMEOUT)
    finally:
        b.kill()
    with Engine(data) as engine:  # the record the dead broker would have written next
        plog = engine.partition(tlog.TRANSACTION_STATE_TOPIC, tlog.partition_for("tid-prepare"))
        found = {}
        plog.each_record(0, lambda rec: found.__setitem__(tlog.decode_key(rec.key), tlog.decode_value(rec.value)))
        value = found["tid-prepare"]
        value.status = tlog.PREPARE_COMMIT
        plog.append_records([(tlog.encode_key("tid-prepare"), tlog.encode_value(value), (), int(time.time() * 1000))])
    b = BrokerProcess(data, port=b.port).start()
    try:
        assert sorted(consume_all(b.bootstrap, topic, (0, 1))) == [b"p0", b"p1"]
        assert markers(data, topic, 0) == [(1, CONTROL_COMMIT)] and markers(data, topic, 1) == [(1, CONTROL_COMMIT)]
        with ProtocolClient(b.port, timeout=TIMEOUT) as sock:
            state = sock.call(kp.ApiKey.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": ["tid-prepare"]})
            assert state["transaction_states"][0]["transaction_state"] == "CompleteCommit"
    finally:
        b.stop()


# ------------------------------------------------------------------ the log cleaner
def test_log_cleaner_drops_aborted_records_and_stops_at_open_transactions(tmp_path):
    """Compacting a transactional topic: an aborted record never supersedes the committed one
    of its key and is removed; records of a transaction still open are not cleaned."""
    from conftest import Runner

    data = str(tmp_path / "data")
    topic = "txn-compacted"
    with Engine(data) as engine:
        engine.create_topic(topic, 1, configs={"cleanup.policy": "compact", "segment.bytes": "2000"})
    b = BrokerProcess(data).start()
    try:
        p = txn_producer(b.bootstrap, "tid-compact")
        for value, commit in ((b"committed-1", True), (b"aborted-2", False)):
            p.begin_transaction()
            p.produce(topic, value, key=b"K")
            p.flush(TIMEOUT)
            (p.commit_transaction if commit else p.abort_transaction)(TIMEOUT)
        p.begin_transaction()
        for i in range(30):  # separate batches: several segments
            p.produce(topic, b"filler-%02d" % i + b"." * 80, key=b"F%02d" % i)
            p.flush(TIMEOUT)
        p.commit_transaction(TIMEOUT)
        p.begin_transaction()
        p.produce(topic, b"open-4", key=b"K")
        p.flush(TIMEOUT)
    finally:
        b.stop()
    with Engine(data) as engine:
        plog = engine.partition(topic, 0)
        assert len(plog.segments) >= 3
        assert plog.clean(force=True)
        values = [r.value for r in engine_records_of(plog)]
    assert b"committed-1" in values
    assert b"aborted-2" not in values
    assert b"open-4" in values
    pk = Runner(data)
    args = ("pk-console-consumer", "--topic", topic, "--from-beginning", "--timeout-ms", "1500",
            "--formatter-property", "print.key=true")
    committed = pk(*args, "--isolation-level", "read_committed").out.split()
    assert committed[:2] == ["K", "committed-1"] and "aborted-2" not in committed and "open-4" not in committed


def engine_records_of(plog):
    """The data records of a partition, every segment (markers left out)."""
    out = []
    plog.each_record(plog.log_start_offset, out.append)
    return out
