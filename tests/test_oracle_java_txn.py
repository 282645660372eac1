"""Kafka 4.4's own Java transactional producer through librdkafka's 0098_consumer_txn shapes
(commit and abort with records, empty commit and abort, an abort right after a commit, and
"rapid abort/committing": one record a transaction, mostly unflushed) against the session's
Kafka 4.4 broker and a pk-server-start, then a read_committed consumer reads what is visible.
Both brokers must give every step the same outcome and show exactly the committed and the
non-transactional records. Kafka's producer 4.4 uses transaction version 2 (EndTxn v5) when
the broker finalizes it, and aborts an Empty or completed transaction with EndTxn there: pk
answered INVALID_TXN_STATE, the producer went into its fatal state, and 0098 read 1 record of 7.

The producer runs as tests/kafka/TransactionSteps.java (compiled by scripts/kafka-jars) in the
tool server's JVM; each step is "<kind>,<flush|noflush>,<first key>,<count>"."""

from __future__ import annotations

import os
import uuid

import confluent_kafka as ck
import pytest
from confluent_kafka.admin import AdminClient, OffsetSpec

from conftest import _kafka_unavailable
from kafka_oracle import KAFKA_HOME, wait_for_leaders
from waits import wait_for

# (kind, flush, count): kind commit/abort is one transaction of `count` records, plain is
# `count` records of a non-transactional producer.
SHAPES = [
    ("commit", "flush", 5), ("abort", "flush", 5),    # 0098 test 0: with records
    ("abort", "noflush", 1),                          # a record aborted before it was sent
    ("abort", "noflush", 0), ("commit", "noflush", 0),  # empty transactions
    ("commit", "flush", 1), ("abort", "noflush", 0),  # right after a commit: an empty abort,
    ("commit", "flush", 1), ("abort", "noflush", 1),  # an unsent record aborted,
    ("commit", "flush", 1), ("abort", "flush", 1),    # a sent one aborted
    ("plain", "flush", 2),
]
RAPID = [  # 0098 test 2 ("rapid abort / committing") then test 2.1, the same flushed
    *[("abort", "noflush", 1), ("commit", "noflush", 1)] * 4, ("abort", "noflush", 1), ("commit", "flush", 1),
    ("plain", "noflush", 1), ("plain", "flush", 1),
    *[("abort", "flush", 1), ("commit", "flush", 1)] * 5, ("plain", "flush", 1), ("plain", "flush", 1),
]


@pytest.fixture(scope="module")
def steps_program():
    if not os.path.exists(os.path.join(KAFKA_HOME, "classes", "TransactionSteps.class")):
        _kafka_unavailable(f"{KAFKA_HOME}/classes/TransactionSteps.class is missing (run scripts/kafka-jars)")


def numbered(shapes) -> tuple[list[str], list[str]]:
    """The program's step arguments, keys numbered in order, and the keys a read_committed
    consumer must see: those of the committed transactions and of the plain records."""
    steps, visible, key = [], [], 0
    for kind, flush, count in shapes:
        steps.append(f"{kind},{flush},{key},{count}")
        if kind in ("commit", "plain"):
            visible += [str(k) for k in range(key, key + count)]
        key += count
    return steps, visible


def committed_end_reached(bootstrap: str, topic: str) -> bool:
    """The last stable offset is the log end: the coordinator has written every marker (an
    EndTxn answers before its markers are written)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = ck.TopicPartition(topic, 0)
    ends = []
    for level in (ck.IsolationLevel.READ_COMMITTED, ck.IsolationLevel.READ_UNCOMMITTED):
        try:
            ends.append(admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=level,
                                           request_timeout=5)[tp].result().offset)
        except ck.KafkaException:  # not yet (a leader or coordinator on its way)
            return False
    return ends[0] == ends[1]


def read_committed(bootstrap: str, topic: str) -> list[str]:
    """Every key a read_committed consumer sees from the start of partition 0 to its end."""
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{topic}", "isolation.level":
                            "read_committed", "enable.auto.commit": False, "enable.partition.eof": True})
    keys = []
    try:
        consumer.assign([ck.TopicPartition(topic, 0, ck.OFFSET_BEGINNING)])

        def at_end():
            msg = consumer.poll(0.5)
            if msg is None:
                return False
            if msg.error():
                if msg.error().code() == ck.KafkaError._PARTITION_EOF:
                    return True
                assert msg.error().retriable(), msg.error()
                return False
            keys.append(msg.key().decode())
            return False
        wait_for(at_end, 60, f"the end of {topic} read_committed")
    finally:
        consumer.close()
    return keys


def run(kafka_tools, bootstrap: str, name: str, steps: list[str]) -> tuple[str, list[str]]:
    """(the program's output, the keys visible read_committed) on one broker."""
    topic = f"java-txn-{name}-{uuid.uuid4().hex[:8]}"
    created = kafka_tools("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic,
                          "--partitions", "1", "--replication-factor", "1")
    assert created.returncode == 0, created.err
    wait_for_leaders(bootstrap, {topic: 1})
    result = kafka_tools.run_class("TransactionSteps", bootstrap, topic, f"tid-{topic}", *steps, timeout=120)
    assert result.returncode == 0, result.err
    wait_for(lambda: committed_end_reached(bootstrap, topic), 30, f"{topic}'s last stable offset at its end")
    return result.out, read_committed(bootstrap, topic)


@pytest.mark.parametrize("name, shapes", [("shapes", SHAPES), ("rapid", RAPID)])
def test_java_transactional_producer(kafka, pk_server, kafka_tools, steps_program, name, shapes):
    steps, visible = numbered(shapes)
    kafka_out, kafka_keys = run(kafka_tools, kafka.bootstrap, name, steps)
    pk_out, pk_keys = run(kafka_tools, pk_server.bootstrap, name, steps)
    assert kafka_out == "".join(f"{s} ok\n" for s in steps) + "transaction version 2\n"
    assert kafka_keys == visible
    assert pk_out == kafka_out
    assert pk_keys == kafka_keys


def test_transaction_version_2_finalized(kafka, pk_server, kafka_tools):
    """What the producer chooses its version from: transaction.version in the finalized
    features (kafka-features describe), 2 on both."""
    lines = []
    for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
        described = kafka_tools("kafka-features", "--bootstrap-server", bootstrap, "describe")
        assert described.returncode == 0, described.err
        # "Feature: transaction.version  SupportedMinVersion: 0 ... Epoch: <n>", the epoch aside
        lines.append([line.split()[:8] for line in described.out.splitlines()
                      if line.split()[:2] == ["Feature:", "transaction.version"]])
    assert lines[0] == lines[1]
    assert len(lines[0]) == 1 and lines[0][0][6:8] == ["FinalizedVersionLevel:", "2"], lines[0]
