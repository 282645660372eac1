"""pk-server-start and the bundled-engine tools on one data directory at the same time.

Records produced through the server read back byte for byte through the engine and
pk-console-consumer (no --bootstrap-server), and the reverse: pk-console-producer writes
while the server runs and a client fetches those records, a waiting one included. Topic
changes made by pk-topics in another process are seen by the running server.
"""

from __future__ import annotations

import threading
import time

import pytest

from conftest import ProtocolClient
from pk.engine import protocol as kp
from pk.engine.engine import Engine
from pk.engine.records import decode_records, iter_batches

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402

TIMEOUT = 10


class Client(ProtocolClient):
    """The shared bare protocol client, with this file's shortcut."""

    def fetch(self, topic: str, partition: int = 0, offset: int = 0, max_wait_ms: int = 0) -> dict:
        body = {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": 1 << 30,
                "topics": [{"topic": topic, "partitions": [{"partition": partition, "fetch_offset": offset,
                                                            "partition_max_bytes": 1 << 30}]}]}
        return self.call(1, 11, body)["responses"][0]["partitions"][0]


def segment_bytes(data_dir: str, topic: str, partition: int = 0) -> bytes:
    with open(f"{data_dir}/{topic}-{partition}/00000000000000000000.log", "rb") as f:
        return f.read()


def test_server_writes_engine_and_console_consumer_read_byte_for_byte(broker, pk):
    assert pk("pk-topics", "--create", "--topic", "fromserver", "--partitions", "1").returncode == 0
    producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True, "linger.ms": 5})
    for codec in ("none", "gzip", "lz4"):
        p = Producer({"bootstrap.servers": broker.bootstrap, "compression.type": codec, "linger.ms": 5})
        for i in range(20):
            p.produce("fromserver", key=b"%s-%d" % (codec.encode(), i), value=b"value %d" % i,
                      headers=[("codec", codec.encode())])
        assert p.flush(TIMEOUT) == 0
    assert producer.flush(TIMEOUT) == 0

    client = Client(broker.port)
    try:
        served = client.fetch("fromserver")
    finally:
        client.close()
    assert served["error_code"] == 0 and served["high_watermark"] == 60
    # What the server returns, what the engine reads and what is on disk are the same bytes.
    with Engine(broker.data_dir) as engine:
        read = engine.partition("fromserver", 0).read(0, 1 << 30)
    assert bytes(served["records"]) == read == segment_bytes(broker.data_dir, "fromserver")
    records = [r for pos, h in iter_batches(read) for r in decode_records(read, pos, h)]
    assert [r.offset for r in records] == list(range(60))
    assert records[25].key == b"gzip-5" and records[25].headers == (("codec", b"gzip"),)

    out = pk("pk-console-consumer", "--topic", "fromserver", "--partition", "0", "--offset", "earliest",
             "--max-messages", "60", "--formatter-property", "print.key=true", timeout=30)
    assert out.returncode == 0, out.err
    lines = out.out.splitlines()
    assert len(lines) == 60 and lines[0] == "none-0\tvalue 0" and lines[59] == "lz4-19\tvalue 19"

    offsets = pk("pk-run-class", "kafka.tools.GetOffsetShell", "--topic", "fromserver")
    assert offsets.out.strip() == "fromserver:0:60"


def test_console_producer_writes_while_server_runs_and_clients_fetch(broker, pk):
    assert pk("pk-topics", "--create", "--topic", "fromtool").returncode == 0
    client = Client(broker.port)
    result = {}

    def waiting_fetch():  # parked on the empty log before the tool writes
        result["part"] = client.fetch("fromtool", max_wait_ms=8000)

    waiter = threading.Thread(target=waiting_fetch)
    waiter.start()
    time.sleep(0.3)
    lines = "".join(f"k{i}:line {i}\n" for i in range(10))
    written = pk("pk-console-producer", "--topic", "fromtool", "--reader-property", "parse.key=true",
                 "--reader-property", "key.separator=:", input=lines)
    assert written.returncode == 0, written.err
    done = time.monotonic()
    waiter.join(TIMEOUT)
    assert time.monotonic() - done < 1.0  # noticed by the re-check, long before max_wait_ms
    part = result["part"]
    assert part["error_code"] == 0 and len(part["records"]) > 0
    # Whole tool-written batches, served as stored.
    assert bytes(client.fetch("fromtool")["records"]) == segment_bytes(broker.data_dir, "fromtool")
    client.close()

    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "interop",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition("fromtool", 0, 0)])
    got = []
    deadline = time.monotonic() + TIMEOUT
    while len(got) < 10 and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got.append((msg.key(), msg.value()))
    consumer.close()
    assert got == [(b"k%d" % i, b"line %d" % i) for i in range(10)]


def test_topic_changes_by_pk_topics_reach_the_running_server(broker, pk):
    assert pk("pk-topics", "--create", "--topic", "altered").returncode == 0
    client = Client(broker.port)
    try:
        meta = client.call(3, 4, {"topics": [{"name": "altered"}], "allow_auto_topic_creation": False})
        assert meta["topics"][0]["error_code"] == 0
        from pk.engine.records import encode_batch

        def produce(value: bytes) -> int:
            body = {"acks": -1, "timeout_ms": 1000, "topic_data": [{"name": "altered", "partition_data": [
                {"index": 0, "records": encode_batch([(None, value, (), int(time.time() * 1000))])}]}]}
            return client.call(0, 7, body)["responses"][0]["partition_responses"][0]["error_code"]

        assert produce(b"x" * 2000) == 0  # the log is open now, with the default max.message.bytes
        altered = pk("pk-topics", "--alter", "--topic", "altered", "--config", "max.message.bytes=1000")
        assert altered.returncode == 0, altered.err
        assert produce(b"x" * 2000) == kp.errors.MESSAGE_TOO_LARGE
        assert produce(b"x" * 100) == 0

        assert pk("pk-topics", "--alter", "--topic", "altered", "--partitions", "3").returncode == 0
        meta = client.call(3, 4, {"topics": [{"name": "altered"}], "allow_auto_topic_creation": False})
        assert len(meta["topics"][0]["partitions"]) == 3

        assert pk("pk-topics", "--delete", "--topic", "altered").returncode == 0
        assert produce(b"gone") == kp.errors.UNKNOWN_TOPIC_OR_PARTITION
        assert pk("pk-topics", "--create", "--topic", "altered").returncode == 0
        assert produce(b"again") == 0
        assert client.fetch("altered")["high_watermark"] == 1
    finally:
        client.close()


def test_topics_created_through_the_server_are_listed_by_pk_topics(broker, pk):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic("viaadmin", 2, 1, config={"cleanup.policy": "compact"})]).values():
        f.result(TIMEOUT)
    listed = pk("pk-topics", "--list")
    assert "viaadmin" in listed.out.split()
    described = pk("pk-topics", "--describe", "--topic", "viaadmin")
    assert "PartitionCount: 2" in described.out and "cleanup.policy=compact" in described.out
