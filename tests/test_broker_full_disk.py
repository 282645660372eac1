"""pk-server-start on a full disk (issue 23): a produce whose append fails answers
KAFKA_STORAGE_ERROR and takes that log dir offline (Kafka's LogDirFailureChannel), so no later
record of any producer is stored behind the lost one; what is stored is exactly a prefix of
what was sent. The broker's other log dirs keep serving; when its last live dir fails it halts
as Kafka does, and a restart recovers the log. The full dir is a 2 MB tmpfs (root only)."""

from __future__ import annotations

import json
import os
import subprocess
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from conftest import BrokerProcess, ProtocolClient, tool_path
from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E
from test_cli_failures import LINES, _assert_prefix, _tmpfs
from waits import wait_for

SMALL_INTERNAL_TOPICS = {"offsets.topic.num.partitions": "1", "transaction.state.log.num.partitions": "1"}
# a refused record fails at once (retries 0) or, once Metadata shows the partition leaderless,
# after message.timeout.ms
FAILED = {KafkaError.KAFKA_STORAGE_ERROR, KafkaError._MSG_TIMED_OUT, KafkaError._TRANSPORT,
          KafkaError.LEADER_NOT_AVAILABLE, KafkaError.NOT_LEADER_FOR_PARTITION}


def _pk(tool, *args, data_dir):
    return subprocess.run([tool_path(tool), *args], capture_output=True, timeout=60,
                          env={**os.environ, "PK_DATA_DIR": data_dir})


def _stored(data_dir: str, topic: str = "t") -> list[bytes]:
    """The partition's records as the bundled engine reads them (uncommitted ones included)."""
    proc = _pk("pk-console-consumer", "--topic", topic, "--from-beginning", "--timeout-ms", "1000",
               data_dir=data_dir)
    return proc.stdout.splitlines()


def _fetched(bootstrap: str, topic: str) -> list[bytes]:
    """Partition 0's records up to its end, read through the broker (uncommitted ones included)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "isolation.level": "read_uncommitted",
                         "enable.partition.eof": True})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got = []

    def at_end():
        for msg in consumer.consume(1000, 0.5):
            if msg.error() is None:
                got.append(msg.value())
            elif msg.error().code() == KafkaError._PARTITION_EOF:
                return True
            else:
                assert msg.error().retriable(), msg.error()  # (not yet: the partition is loading)
        return False
    try:
        wait_for(at_end, 60, f"the end of {topic}")
    finally:
        consumer.close()
    return got


def _list_offsets_error(bootstrap: str, topic: str) -> int:
    """Partition 0's error code in a ListOffsets answer (latest offset)."""
    with ProtocolClient(bootstrap) as c:
        r = c.call(ApiKey.LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]})
    (t,) = r["topics"]
    (p,) = t["partitions"]
    return p["error_code"]


def _fetch_error(bootstrap: str, topic: str) -> int:
    with ProtocolClient(bootstrap) as c:
        r = c.call(ApiKey.FETCH, 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "topics": [
                {"topic": topic, "partitions": [{"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                                 "last_fetched_epoch": -1, "log_start_offset": -1,
                                                 "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": [], "rack_id": ""})
    (t,) = r["responses"]
    (p,) = t["partitions"]
    return p["error_code"]


@pytest.fixture
def two_dirs(tmp_path):
    """A broker whose log.dirs are a roomy tmpfs (first: pk's state, internal topics, topic u)
    and a 2 MB one (topic t, placed there as the dir with fewer partitions); yields
    (BrokerProcess, roomy mount, small mount)."""
    roomy_mounts, small_mounts = _tmpfs(tmp_path / "roomy", "64m"), _tmpfs(tmp_path / "small", "2m")
    roomy, small = next(roomy_mounts), next(small_mounts)
    dirs = [os.path.join(roomy.path, "d"), os.path.join(small.path, "d")]
    b = BrokerProcess(dirs[0], {"log.dirs": ",".join(dirs), **SMALL_INTERNAL_TOPICS})
    b.log_path = str(tmp_path / "broker.log")
    try:
        b.start()
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        for topic in ("t", "u"):  # one at a time: each goes to the dir with fewer partitions then
            admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
        assert os.path.isdir(os.path.join(dirs[1], "t-0")) and os.path.isdir(os.path.join(dirs[0], "u-0"))
        yield b, roomy, small
    finally:
        b.stop()
        next(small_mounts, None)
        next(roomy_mounts, None)


@pytest.fixture
def one_dir(tmp_path):
    """A broker with one log dir, on a 2 MB tmpfs, holding topic t; yields (BrokerProcess, mount)."""
    mounts = _tmpfs(tmp_path / "small", "2m")
    mount = next(mounts)
    data = os.path.join(mount.path, "d")
    assert _pk("pk-topics", "--create", "--topic", "t", data_dir=data).returncode == 0
    b = BrokerProcess(data, SMALL_INTERNAL_TOPICS)
    b.log_path = str(tmp_path / "broker.log")  # not on the small disk
    try:
        yield b.start(), mount
    finally:
        b.stop()
        next(mounts, None)


def _send(producer: Producer, topic: str, values: list[bytes], sync: bool = False) -> dict[bytes, KafkaError | None]:
    """Each value's delivery report: None (stored) or its error. sync: one at a time, each
    acknowledged (or refused) before the next is sent, stopping at the third refusal: once
    Metadata shows the partition leaderless a record waits out message.timeout.ms before it
    is refused, and more of them only slow the test down."""
    outcomes = {}

    def report(err, msg):
        outcomes[msg.value()] = err
    for value in values:
        producer.produce(topic, value, partition=0, on_delivery=report)
        if sync:
            assert producer.flush(30) == 0
            if sum(err is not None for err in outcomes.values()) >= 3:
                break
        else:
            producer.poll(0)
    assert producer.flush(60) == 0
    return outcomes


def _refused(outcomes: dict) -> list[bytes]:
    refused = [v for v, err in outcomes.items() if err is not None]
    assert {outcomes[v].code() for v in refused} <= FAILED, {outcomes[v] for v in refused}
    return refused


def _producer(bootstrap: str, **extra) -> Producer:
    return Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "retries": 0, "message.timeout.ms": 5000,
                     **extra})


@pytest.mark.parametrize("mode", ["async", "sync"])
def test_a_failed_append_takes_only_its_log_dir_offline(two_dirs, mode):
    b, roomy, small = two_dirs
    roomy_dir, small_dir = b.overrides["log.dirs"].split(",")
    outcomes = _send(_producer(b.bootstrap), "t", LINES, sync=mode == "sync")
    refused = _refused(outcomes)
    assert refused and any(outcomes[v].code() == KafkaError.KAFKA_STORAGE_ERROR for v in refused)
    acknowledged = [v for v in LINES if v in outcomes and outcomes[v] is None]
    log = b.log()
    assert f"Error while appending records to t-0 in dir {small_dir}" in log
    assert f"Stopping serving replicas in dir {small_dir}" in log
    assert b.proc.poll() is None  # another dir is live: the broker keeps running
    # t answers KAFKA_STORAGE_ERROR to Fetch and ListOffsets, and Metadata shows it leaderless
    assert _fetch_error(b.bootstrap, "t") == E.KAFKA_STORAGE_ERROR
    assert _list_offsets_error(b.bootstrap, "t") == E.KAFKA_STORAGE_ERROR
    with ProtocolClient(b.bootstrap) as c:
        r = c.call(ApiKey.METADATA, 12, {"topics": [{"topic_id": uuid.UUID(int=0), "name": "t"}],
                                         "allow_auto_topic_creation": False,
                                         "include_topic_authorized_operations": False})
    (partition,) = r["topics"][0]["partitions"]
    assert (partition["error_code"], partition["leader_id"], partition["replica_nodes"], partition["isr_nodes"],
            partition["offline_replicas"]) == (E.LEADER_NOT_AVAILABLE, -1, [0], [], [0])
    # DescribeLogDirs: the small dir offline, the roomy one with its partitions
    dirs = _pk("pk-log-dirs", "--describe", "--bootstrap-server", b.bootstrap, data_dir=roomy_dir)
    assert dirs.returncode == 0, dirs
    (described,) = json.loads(dirs.stdout.splitlines()[-1])["brokers"]
    by_dir = {d["logDir"]: d for d in described["logDirs"]}
    assert set(by_dir) == {roomy_dir, small_dir}
    assert (by_dir[small_dir]["error"], by_dir[small_dir]["partitions"]) == \
        ("org.apache.kafka.common.errors.KafkaStorageException", [])
    assert by_dir[roomy_dir]["error"] is None
    assert {p["partition"] for p in by_dir[roomy_dir]["partitions"]} >= {"u-0", "__consumer_offsets-0"}
    # the roomy dir keeps taking and serving records
    taken = _send(_producer(b.bootstrap), "u", [b"u1", b"u2", b"u3"])
    assert taken == {b"u1": None, b"u2": None, b"u3": None}
    assert _fetched(b.bootstrap, "u") == [b"u1", b"u2", b"u3"]
    # The small dir stays offline with room on its disk; a restart recovers its log: what is
    # stored is a prefix holding every acknowledged record, and producing carries on after it.
    small.grow("16m")
    late = _send(_producer(b.bootstrap), "t", [b"late"])
    assert late[b"late"] is not None and late[b"late"].code() in FAILED
    b.stop()
    b.start()
    stored = _fetched(b.bootstrap, "t")
    _assert_prefix(stored, LINES)
    assert stored[:len(acknowledged)] == acknowledged
    outcomes = _send(Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5}), "t", LINES[len(stored):])
    assert not _refused(outcomes)
    assert _fetched(b.bootstrap, "t") == LINES


def test_a_broker_halts_when_its_last_log_dir_fails(one_dir):
    """Kafka's LogManager halts the broker once no log dir is live; clients see a disconnect. On
    restart (with room) recovery leaves a prefix and produce works again."""
    b, mount = one_dir
    outcomes = _send(_producer(b.bootstrap), "t", LINES)
    assert b.proc.wait(30) == 1
    assert f"Shutdown broker because all log dirs in {b.data_dir} have failed" in b.log()
    assert _refused(outcomes)
    acknowledged = [v for v in LINES if v in outcomes and outcomes[v] is None]
    mount.grow("16m")
    b.start()
    stored = _stored(b.data_dir)
    _assert_prefix(stored, LINES)
    assert stored[:len(acknowledged)] == acknowledged
    outcomes = _send(Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5}), "t", LINES[len(stored):])
    assert not _refused(outcomes)
    assert _stored(b.data_dir) == LINES


def test_an_idempotent_transactional_producer_stores_a_prefix(two_dirs):
    """librdkafka retries KAFKA_STORAGE_ERROR until message.timeout.ms: every retry is refused,
    and the transaction cannot commit (its coordinator's dir is live)."""
    b, _, _ = two_dirs
    producer = Producer({"bootstrap.servers": b.bootstrap, "transactional.id": "tx", "linger.ms": 5,
                         "message.timeout.ms": 3000, "transaction.timeout.ms": 3000})
    producer.init_transactions(30)
    producer.begin_transaction()
    outcomes = {}

    def report(err, msg):
        outcomes[msg.value()] = err
    for value in LINES:
        producer.produce("t", value, partition=0, on_delivery=report)
        producer.poll(0)
    producer.flush(60)
    refused = [v for v, err in outcomes.items() if err is not None]
    assert refused
    with pytest.raises(KafkaException):
        producer.commit_transaction(30)
    b.stop()
    b.start()
    stored = _fetched(b.bootstrap, "t")
    _assert_prefix(stored, LINES)
    assert set(stored).isdisjoint(refused)
