"""Fetch answers are capped as Kafka 4.4's are, and a broker's memory does not grow with
partition size × fetchers (issue 23): a real pk-server-start serving a partition of six
50 MiB batches (written by the bundled engine) to raw Fetch v12 requests asking for 2^31-1
bytes, over PLAINTEXT and TLS, and to confluent-kafka; followers with small
replica.fetch.max.bytes / replica.fetch.response.max.bytes. Kafka 4.4 answers the same
requests with the same sizes: test_oracle_fetch_limits."""

from __future__ import annotations

import time

import pytest

from conftest import BrokerProcess, free_port
from fetch_limits import (
    BATCH_VALUE, BATCHES, MAX_INT, TOPIC_CONFIGS, big_batch, concurrent_fetches, fetch, fetch_request, memory_kb, reset_peak,
)
from security_setup import tls_client_context
from pk.engine.engine import Engine

FETCH_MAX_BYTES = 55 << 20  # Kafka's fetch.max.bytes default


@pytest.fixture(scope="module")
def big(tmp_path_factory, tls_certs):
    """A broker on a data directory holding topic `big`: one partition of six 50 MiB batches,
    served on a PLAINTEXT and an SSL listener; yields (broker, size of one batch)."""
    data = str(tmp_path_factory.mktemp("fetch-limits") / "data")
    engine = Engine(data)
    engine.create_topic("big", 1, 1, configs=TOPIC_CONFIGS)
    plog = engine.partition("big", 0)
    for i in range(BATCHES):
        batch = big_batch(i)
        plog.append_batches([batch])
    engine.close()
    broker = BrokerProcess(data)
    broker.tls_port = free_port()
    broker.overrides.update({
        "listeners": f"PLAINTEXT://{broker.bootstrap},SSL://127.0.0.1:{broker.tls_port}",
        "ssl.keystore.type": "PEM", "ssl.keystore.location": tls_certs.server_keystore,
        "ssl.truststore.type": "PEM", "ssl.truststore.location": tls_certs.ca})
    broker.start()
    yield broker, len(batch)
    broker.stop()


@pytest.mark.parametrize("tls", [False, True], ids=["plaintext", "tls"])
def test_concurrent_huge_fetches_are_capped_and_memory_stays_bounded(big, tls_certs, tls):
    broker, batch_size = big
    pid = broker.proc.pid
    before = memory_kb(pid)["VmRSS"]
    reset_peak(pid)
    tls_context = tls_client_context(tls_certs) if tls else None
    answers = concurrent_fetches(broker.tls_port if tls else broker.port,
                                 fetch_request("big", MAX_INT, MAX_INT), tls=tls_context)
    # fetch.max.bytes: the first batch and the head of the second (Kafka's slice of the segment)
    assert answers == [{0: FETCH_MAX_BYTES}] * 3
    assert batch_size < FETCH_MAX_BYTES < BATCHES * batch_size
    growth = (memory_kb(pid)["VmHWM"] - before) * 1024
    # The records go from the segment file to the socket (sendfile; over TLS a block at a
    # time): memory grows by a few windows of 1 MiB, not with answers (it grew by 3 GB, three
    # copies of the whole partition), fetchers or batch sizes.
    assert growth < 16 << 20, growth
    assert "Traceback" not in broker.log()


@pytest.mark.parametrize("max_bytes, partition_max_bytes", [(1 << 20, MAX_INT), (MAX_INT, 1 << 20), (0, 0)])
def test_a_first_batch_above_the_limits_comes_whole(big, max_bytes, partition_max_bytes):
    broker, batch_size = big
    pid = broker.proc.pid
    before = memory_kb(pid)["VmRSS"]
    reset_peak(pid)
    assert concurrent_fetches(broker.port, fetch_request("big", max_bytes, partition_max_bytes)) == \
        [{0: batch_size}] * 3
    assert (memory_kb(pid)["VmHWM"] - before) * 1024 < 16 << 20  # sent from the file too


def test_fetch_max_bytes_is_the_brokers_setting(tmp_path):
    data = str(tmp_path / "data")
    engine = Engine(data)
    engine.create_topic("big", 1, 1, configs=TOPIC_CONFIGS)
    batch = big_batch(0)
    engine.partition("big", 0).append_batches([batch, big_batch(1)])
    engine.close()
    broker = BrokerProcess(data, {"fetch.max.bytes": "1024"}).start()
    try:
        assert fetch(broker.port, fetch_request("big", MAX_INT, MAX_INT)) == {0: len(batch)}
    finally:
        broker.stop()
    refused = BrokerProcess(data, {"fetch.max.bytes": "1023"})
    with pytest.raises(RuntimeError, match="Invalid value 1023 for configuration fetch.max.bytes: "
                                           "Value must be at least 1024"):
        refused.start()


def test_followers_fetch_within_their_limits_and_get_larger_batches_whole(zookeeper, tmp_path):
    """Followers asking for 1 KiB per partition and 2 KiB per fetch (replica.fetch.max.bytes,
    replica.fetch.response.max.bytes) still replicate 100 KiB batches: the leader sends a first
    batch above the limits whole (KIP-74); acks=all with min.insync.replicas=2 is acknowledged
    only once the follower has each batch."""
    ck = pytest.importorskip("confluent_kafka")
    from confluent_kafka.admin import AdminClient, NewTopic
    from replication_cluster import ReplicationCluster

    limits = {"replica.fetch.max.bytes": "1024", "replica.fetch.response.max.bytes": "2048"}
    with ReplicationCluster(zookeeper, tmp_path, 2, overrides=limits) as cluster:
        cluster.start_all()
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        admin.create_topics([NewTopic("wide", 1, 2, config={"min.insync.replicas": "2"})])["wide"].result(15)
        cluster.wait_state("wide", 0, lambda s: len(s["isr"]) == 2)
        cluster.wait_applied("wide", 1)
        producer = ck.Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 0,
                                "message.timeout.ms": 60000, "compression.type": "none"})
        failed = []
        values = [bytes([i]) * (100 << 10) for i in range(8)]
        for value in values:
            producer.produce("wide", value, partition=0,
                             on_delivery=lambda err, msg: err is not None and failed.append(err))
            producer.flush(60)
        assert failed == []
        assert len(cluster.state("wide", 0)["isr"]) == 2
        consumer = ck.Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "wide",
                                "auto.offset.reset": "earliest", "enable.auto.commit": False})
        consumer.assign([ck.TopicPartition("wide", 0, 0)])
        got = []
        try:
            deadline = time.monotonic() + 60
            while len(got) < len(values) and time.monotonic() < deadline:
                message = consumer.poll(0.5)
                if message is not None and not message.error():
                    got.append(message.value())
        finally:
            consumer.close()
        assert got == values


def test_a_client_reads_the_partition_through_sliced_answers(big):
    """confluent-kafka (librdkafka) asking for 55 MiB per partition gets answers sent from the
    segment file and ending in a cut batch, and reads every record once, in order."""
    ck = pytest.importorskip("confluent_kafka")
    broker, _ = big
    consumer = ck.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "sliced",
                            "enable.auto.commit": False, "auto.offset.reset": "earliest",
                            "fetch.max.bytes": FETCH_MAX_BYTES, "max.partition.fetch.bytes": FETCH_MAX_BYTES,
                            "receive.message.max.bytes": FETCH_MAX_BYTES + (1 << 20)})
    consumer.assign([ck.TopicPartition("big", 0, 0)])
    seen = []
    try:
        deadline = time.monotonic() + 120
        while len(seen) < BATCHES and time.monotonic() < deadline:
            message = consumer.poll(1)
            if message is None:
                continue
            assert message.error() is None, message.error()
            value = message.value()
            seen.append((message.offset(), len(value), value.count(0)))
    finally:
        consumer.close()
    assert seen == [(offset, BATCH_VALUE, BATCH_VALUE) for offset in range(BATCHES)]
