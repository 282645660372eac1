"""pk-server-start on a full disk (issue 23): a produce whose append fails answers
KAFKA_STORAGE_ERROR and takes the log dir offline, so no later record of any producer is
stored behind the lost one; what is stored is exactly a prefix of what was sent. A restart
recovers the log and serves produces again. The data dir is a 2 MB tmpfs (root only)."""

from __future__ import annotations

import os
import subprocess

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer

from conftest import BrokerProcess, tool_path
from test_cli_failures import LINES, _assert_prefix, _tmpfs

SMALL_INTERNAL_TOPICS = {"offsets.topic.num.partitions": "1", "transaction.state.log.num.partitions": "1"}


def _pk(tool, *args, data_dir):
    return subprocess.run([tool_path(tool), *args], capture_output=True, timeout=60,
                          env={**os.environ, "PK_DATA_DIR": data_dir})


def _stored(data_dir: str, topic: str = "t") -> list[bytes]:
    """The partition's records as the bundled engine reads them (uncommitted ones included)."""
    proc = _pk("pk-console-consumer", "--topic", topic, "--from-beginning", "--timeout-ms", "1000",
               data_dir=data_dir)
    return proc.stdout.splitlines()


@pytest.fixture
def small_broker(tmp_path):
    """A broker on a 2 MB tmpfs holding topics t and u; yields (BrokerProcess, mount)."""
    mounts = _tmpfs(tmp_path / "small", "2m")
    mount = next(mounts)
    data = os.path.join(mount.path, "d")
    for topic in ("t", "u"):
        assert _pk("pk-topics", "--create", "--topic", topic, data_dir=data).returncode == 0
    b = BrokerProcess(data, SMALL_INTERNAL_TOPICS)
    b.log_path = str(tmp_path / "broker.log")  # not on the small disk
    try:
        yield b.start(), mount
    finally:
        b.stop()
        next(mounts, None)


def _send(producer: Producer, topic: str, values: list[bytes], sync: bool = False) -> dict[bytes, KafkaError | None]:
    """Each value's delivery report: None (stored) or its error. sync: one at a time, each
    acknowledged (or refused) before the next is sent, stopping 20 records after the first
    refusal (the round trips of the rest would only slow the test down)."""
    outcomes = {}

    def report(err, msg):
        outcomes[msg.value()] = err
    for value in values:
        producer.produce(topic, value, partition=0, on_delivery=report)
        if sync:
            assert producer.flush(30) == 0
            if sum(err is not None for err in outcomes.values()) > 20:
                break
        else:
            producer.poll(0)
    assert producer.flush(60) == 0
    return outcomes


def _refused(outcomes: dict) -> list[bytes]:
    refused = [v for v, err in outcomes.items() if err is not None]
    assert {outcomes[v].code() for v in refused} <= {KafkaError.KAFKA_STORAGE_ERROR}, {outcomes[v] for v in refused}
    return refused


@pytest.mark.parametrize("mode", ["async", "sync"])
def test_a_failed_append_takes_the_log_dir_offline_until_restart(small_broker, mode):
    b, mount = small_broker
    outcomes = _send(Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5, "retries": 0}), "t", LINES,
                     sync=mode == "sync")
    assert _refused(outcomes)
    stored = _stored(b.data_dir)
    _assert_prefix(stored, LINES)
    assert stored == [v for v in LINES if v in outcomes and outcomes[v] is None]  # the acknowledged ones
    assert "Stopping serving replicas in dir" in b.log()
    dirs = _pk("pk-log-dirs", "--describe", "--bootstrap-server", b.bootstrap, data_dir=b.data_dir)
    assert b'"error":"org.apache.kafka.common.errors.KafkaStorageException"' in dirs.stdout, dirs
    # The log dir stays offline: a small record to another partition of it is refused too,
    # with room on the disk or not.
    mount.grow("16m")
    late = _send(Producer({"bootstrap.servers": b.bootstrap, "retries": 0}), "u", [b"late"])
    assert late[b"late"] is not None and late[b"late"].code() == KafkaError.KAFKA_STORAGE_ERROR
    # A restart recovers the log: producing carries on after the prefix.
    b.stop()
    b.start()
    rest = LINES[len(stored):]
    outcomes = _send(Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5}), "t", rest)
    assert not _refused(outcomes)
    assert _stored(b.data_dir) == LINES


def test_an_idempotent_transactional_producer_stores_a_prefix(small_broker):
    """librdkafka retries KAFKA_STORAGE_ERROR until message.timeout.ms: every retry is refused,
    and the transaction cannot commit."""
    b, _ = small_broker
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
    stored = _stored(b.data_dir)
    _assert_prefix(stored, LINES)
    assert set(stored).isdisjoint(refused)
