"""pk-server-start sizes Fetch answers as Kafka 4.4 does (issue 23): the same 50 MiB batches
produced to a real Kafka 4.4 broker and to pk, the same Fetch v12 requests, the same number of
bytes of records in every partition's answer — fetch.max.bytes caps a huge request, a first
batch above the limits comes whole (KIP-74) and only for the first partition, the limit's
bytes are sliced from the segment with a cut last batch."""

from __future__ import annotations

import pytest

from conftest import BrokerProcess, ProtocolClient
from fetch_limits import BATCHES, MAX_INT, TOPIC_CONFIGS, big_batch, concurrent_fetches, fetch, fetch_request
from pk.engine import protocol as kp
from pk.engine.protocol import errors as E
from waits import wait_for


def _create_and_fill(port: int) -> None:
    """Topic `big` (one partition, six 50 MiB batches) and `pair` (two partitions, one batch
    each), through CreateTopics and Produce as any client would."""
    client = ProtocolClient(port, timeout=120)
    try:
        answer = client.call(kp.ApiKey.CREATE_TOPICS, 4, {
            "topics": [{"name": name, "num_partitions": count, "replication_factor": 1, "assignments": [],
                        "configs": [{"name": k, "value": v} for k, v in TOPIC_CONFIGS.items()]}
                       for name, count in (("big", 1), ("pair", 2))],
            "timeout_ms": 30000, "validate_only": False})
        assert [t["error_code"] for t in answer["topics"]] == [E.NONE, E.NONE], answer
        batches = [("big", 0)] * BATCHES + [("pair", 0), ("pair", 1)]
        for i, (topic, partition) in enumerate(batches):
            wait_for(lambda: _produced(client, topic, partition, big_batch(i)), 60, f"produce to {topic}-{partition}")
    finally:
        client.sock.close()


def _produced(client: ProtocolClient, topic: str, partition: int, batch: bytes) -> bool:
    """Produce `batch`; False on a retriable error (a topic just created may have no leader yet)."""
    answer = client.call(kp.ApiKey.PRODUCE, 9, {
        "transactional_id": None, "acks": 1, "timeout_ms": 30000,
        "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": batch}]}]})
    topics = answer["responses"]
    assert len(topics) == 1 and len(topics[0]["partition_responses"]) == 1, answer
    code = topics[0]["partition_responses"][0]["error_code"]
    if code in (E.NOT_LEADER_OR_FOLLOWER, E.UNKNOWN_TOPIC_OR_PARTITION, E.LEADER_NOT_AVAILABLE):
        return False
    assert code == E.NONE, answer
    return True


@pytest.fixture(scope="module")
def brokers(kafka, tmp_path_factory):
    """(Kafka's port, pk's port), both holding the same topics."""
    pk = BrokerProcess(str(tmp_path_factory.mktemp("oracle-fetch-limits") / "data")).start()
    try:
        _create_and_fill(kafka.port)
        _create_and_fill(pk.port)
        yield kafka.port, pk.port
    finally:
        pk.stop()


def test_concurrent_huge_fetches_answer_as_kafkas(brokers):
    kafka_port, pk_port = brokers
    request = fetch_request("big", MAX_INT, MAX_INT)
    kafka_sizes = concurrent_fetches(kafka_port, request)
    assert kafka_sizes == [{0: 55 << 20}] * 3  # fetch.max.bytes: 57,671,680
    assert concurrent_fetches(pk_port, request) == kafka_sizes


@pytest.mark.parametrize("max_bytes, partition_max_bytes", [
    (1 << 20, MAX_INT), (MAX_INT, 1 << 20), (0, 0), (60_000_000, MAX_INT), (MAX_INT, 53_000_000)])
def test_fetch_sizes_as_kafkas(brokers, max_bytes, partition_max_bytes):
    kafka_port, pk_port = brokers
    request = fetch_request("big", max_bytes, partition_max_bytes)
    assert fetch(pk_port, request) == fetch(kafka_port, request)


@pytest.mark.parametrize("max_bytes", [MAX_INT, 1 << 20, 110 << 20])
def test_only_the_first_partition_gets_a_batch_above_the_limits(brokers, max_bytes):
    kafka_port, pk_port = brokers
    request = fetch_request("pair", max_bytes, MAX_INT, partitions=(0, 1))
    kafka_sizes = fetch(kafka_port, request)
    assert kafka_sizes[1] == 0 < kafka_sizes[0]
    assert fetch(pk_port, request) == kafka_sizes
