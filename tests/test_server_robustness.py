"""pk-server-start under bad input and hard stops.

A malformed, truncated or oversized frame, an unknown API or version closes only that
connection (with a log line); other connections carry on and nothing stored changes. Bad
produce data is refused per partition. Idempotent producers: duplicates are answered with the
original offsets, gaps refused, state and producer ids survive restarts. SIGTERM leaves
checkpoints and a clean restart; kill -9 loses no acks=all record.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import time

import pytest

from conftest import BrokerProcess, ProtocolClient
from pk.engine import checkpoint
from pk.engine.engine import Engine
from pk.engine.protocol import errors as E
from pk.engine.records import decode_records, encode_batch, iter_batches

TIMEOUT = 10
MAX_REQUEST = 65536


class Client(ProtocolClient):
    def __init__(self, port: int):
        super().__init__(port, timeout=TIMEOUT)

    # the calls the tests use
    def produce(self, topic: str, batch, partition: int = 0, acks: int = -1, version: int = 7,
                transactional_id=None) -> dict:
        body = {"transactional_id": transactional_id, "acks": acks, "timeout_ms": 1000, "topic_data": [
            {"name": topic, "partition_data": [{"index": partition, "records": batch}]}]}
        return self.call(0, version, body)["responses"][0]["partition_responses"][0]

    def fetch_all(self, topic: str, partition: int = 0) -> dict:
        body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 30,
                "topics": [{"topic": topic, "partitions": [{"partition": partition, "fetch_offset": 0,
                                                            "partition_max_bytes": 1 << 30}]}]}
        return self.call(1, 11, body)["responses"][0]["partitions"][0]

    def create_topic(self, name: str, partitions: int = 1, configs: dict | None = None) -> int:
        body = {"topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1,
                            "assignments": [], "configs": [{"name": k, "value": v}
                                                           for k, v in (configs or {}).items()]}],
                "timeout_ms": 5000, "validate_only": False}
        return self.call(19, 4, body)["topics"][0]["error_code"]

    def init_producer_id(self) -> tuple[int, int]:
        answer = self.call(22, 1, {"transactional_id": None, "transaction_timeout_ms": -1})
        assert answer["error_code"] == 0
        return answer["producer_id"], answer["producer_epoch"]


def batch(values, *, producer_id=-1, epoch=-1, sequence=-1, compression=0, transactional=False) -> bytes:
    now = int(time.time() * 1000)
    return encode_batch([(None, v, (), now) for v in values], compression_type=compression,
                        producer_id=producer_id, producer_epoch=epoch, base_sequence=sequence,
                        transactional=transactional)


def stored_values(data_dir: str, topic: str, partition: int = 0) -> list[bytes]:
    with Engine(data_dir) as engine:
        log = engine.partition(topic, partition)
        data = log.read(log.log_start_offset, 1 << 30)
    return [r.value for pos, h in iter_batches(data) for r in decode_records(data, pos, h)]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    b = BrokerProcess(str(tmp_path_factory.mktemp("robust") / "data"),
                      {"socket.request.max.bytes": str(MAX_REQUEST)}).start()
    try:
        yield b
    finally:
        b.stop()


# ------------------------------------------------------------------ bad frames
def _frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


BAD_INPUT = {
    "garbage": _frame(b"\x7f\xee\xdd" + b"\xff" * 40),
    "garbage body": _frame(struct.pack(">hhi", 3, 4, 1) + b"\x00\x02id" + b"\xff\xff\xff\x7f\x00"),
    "truncated": struct.pack(">i", 200) + struct.pack(">hhi", 18, 0, 1) + b"\x00",
    "oversized": struct.pack(">i", MAX_REQUEST + 1) + b"\x00" * 64,
    "negative size": struct.pack(">i", -5),
    "unknown api": _frame(struct.pack(">hhi", 99, 0, 1) + b"\x00\x02id"),
    "unsupported version": _frame(struct.pack(">hhi", 0, 2, 1) + b"\x00\x02id" + b"\x00" * 20),
}


@pytest.mark.parametrize("kind", list(BAD_INPUT))
def test_bad_frame_closes_only_its_connection(server, kind):
    topic = "intact-" + kind.replace(" ", "-")
    good = Client(server.port)
    assert good.create_topic(topic) == 0
    assert good.produce(topic, batch([b"before"]))["error_code"] == 0
    before = good.fetch_all(topic)["records"]

    closings = server.log().count("Closing connection from")
    bad = Client(server.port)
    bad.sock.sendall(BAD_INPUT[kind])
    if kind == "truncated":
        bad.sock.shutdown(socket.SHUT_WR)  # the rest of the frame never comes
    assert bad.closed_by_peer()
    bad.close()

    # The other connection, opened before, still works; so does a new one.
    assert good.produce(topic, batch([b"after"]))["error_code"] == 0
    assert bytes(good.fetch_all(topic)["records"]).startswith(bytes(before))
    good.close()
    fresh = Client(server.port)
    assert fresh.call(18, 3, {"client_software_name": "t", "client_software_version": "1"})["error_code"] == 0
    fresh.close()
    assert stored_values(server.data_dir, topic) == [b"before", b"after"]
    deadline = time.monotonic() + 2
    while server.log().count("Closing connection from") == closings and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.log().count("Closing connection from") == closings + 1
    assert server.proc.poll() is None


def test_many_clients_keep_working_while_bad_ones_come_and_go(server):
    clients = [Client(server.port) for _ in range(5)]
    assert clients[0].create_topic("busy") == 0
    for round_ in range(3):
        for payload in BAD_INPUT.values():
            with socket.create_connection(("127.0.0.1", server.port)) as s:
                s.sendall(payload)
        for i, c in enumerate(clients):
            assert c.produce("busy", batch([b"%d-%d" % (round_, i)]))["error_code"] == 0
    assert len(stored_values(server.data_dir, "busy")) == 15
    for c in clients:
        c.close()


# ------------------------------------------------------------------ bad produce data
def test_bad_batches_are_refused_per_partition(server):
    c = Client(server.port)
    assert c.create_topic("strict", configs={"max.message.bytes": "2000"}) == 0
    good = batch([b"ok"])
    corrupt = bytearray(good)
    corrupt[-1] ^= 0xFF
    legacy = bytearray(good)
    legacy[16] = 1
    cases = [
        (bytes(corrupt), 7, E.CORRUPT_MESSAGE),
        (good[:-3], 7, E.CORRUPT_MESSAGE),
        (good + good, 7, E.INVALID_RECORD),
        (bytes(legacy), 7, E.INVALID_RECORD),
        (b"", 7, E.INVALID_RECORD),
        (batch([b"z"], compression=4), 6, E.UNSUPPORTED_COMPRESSION_TYPE),
        (batch([b"x" * 3000]), 7, E.MESSAGE_TOO_LARGE),
        (batch([b"p"], producer_id=5, epoch=0, sequence=-1), 7, E.INVALID_RECORD),
    ]
    for data, version, code in cases:
        assert c.produce("strict", data, version=version)["error_code"] == code, code
    assert c.produce("strict", good, acks=2)["error_code"] == E.INVALID_REQUIRED_ACKS
    # a transactional batch needs its transactional id, and a partition of its open transaction
    txn_batch = batch([b"t"], producer_id=5, epoch=0, sequence=0, transactional=True)
    assert c.produce("strict", txn_batch)["error_code"] == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert c.produce("strict", txn_batch, transactional_id="tx")["error_code"] == E.INVALID_PRODUCER_ID_MAPPING
    assert c.produce("no-such-topic", good)["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
    assert c.produce("strict", good, partition=7)["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
    assert c.produce("__consumer_offsets", good)["error_code"] == E.INVALID_TOPIC_EXCEPTION
    assert c.produce("strict", batch([b"z"], compression=4))["error_code"] == 0  # zstd from v7
    assert c.produce("strict", good)["error_code"] == 0
    c.close()
    assert stored_values(server.data_dir, "strict") == [b"z", b"ok"]


def test_topic_configs_shape_what_is_stored(server):
    c = Client(server.port)
    assert c.create_topic("gz", configs={"compression.type": "gzip"}) == 0
    assert c.create_topic("appendtime", configs={"message.timestamp.type": "LogAppendTime"}) == 0
    assert c.create_topic("isr2", configs={"min.insync.replicas": "2"}) == 0
    assert c.create_topic("compacted", configs={"cleanup.policy": "compact"}) == 0
    now = int(time.time() * 1000)
    keyed = encode_batch([(b"k", b"v1", (("h", b"x"),), now), (b"k", b"v2", (), now + 1)],
                         producer_id=3, producer_epoch=0, base_sequence=0)

    assert c.produce("gz", keyed)["error_code"] == 0
    with Engine(server.data_dir) as engine:
        data = engine.partition("gz", 0).read(0, 1 << 20)
    (pos, header), = list(iter_batches(data))
    assert header.compression == 1 and (header.producer_id, header.base_sequence) == (3, 0)
    assert [(r.key, r.value, r.headers, r.timestamp) for r in decode_records(data, pos, header)] == [
        (b"k", b"v1", (("h", b"x"),), now), (b"k", b"v2", (), now + 1)]

    answer = c.produce("appendtime", batch([b"t"]))
    assert answer["error_code"] == 0 and answer["log_append_time_ms"] > 0
    with Engine(server.data_dir) as engine:
        data = engine.partition("appendtime", 0).read(0, 1 << 20)  # CRC checked on the way
    (_, header), = list(iter_batches(data))
    assert header.timestamp_type == 1 and header.max_timestamp == answer["log_append_time_ms"]

    assert c.produce("isr2", batch([b"x"]))["error_code"] == E.NOT_ENOUGH_REPLICAS
    assert c.produce("isr2", batch([b"x"]), acks=1)["error_code"] == 0

    assert c.produce("compacted", batch([b"no key"]))["error_code"] == E.INVALID_RECORD
    assert c.produce("compacted", keyed)["error_code"] == 0
    c.close()


def test_acks_zero_answers_nothing_and_a_failure_closes_the_connection(server):
    c = Client(server.port)
    assert c.create_topic("fire") == 0
    body = {"transactional_id": None, "acks": 0, "timeout_ms": 1000,
            "topic_data": [{"name": "fire", "partition_data": [{"index": 0, "records": batch([b"a"])}]}]}
    c.send(0, 7, body)
    # No response to the acks=0 produce: the next answer is the Metadata's.
    corr = c.send(3, 4, {"topics": [{"name": "fire"}], "allow_auto_topic_creation": False})
    assert c.receive(3, 4)[0] == corr
    bad = bytearray(batch([b"b"]))
    bad[-1] ^= 1
    body["topic_data"][0]["partition_data"][0]["records"] = bytes(bad)
    c.send(0, 7, body)
    assert c.closed_by_peer()
    c.close()
    assert stored_values(server.data_dir, "fire") == [b"a"]


# ------------------------------------------------------------------ idempotence
def test_idempotent_sequences_duplicates_gaps_and_restart(tmp_path):
    b = BrokerProcess(str(tmp_path / "data")).start()
    try:
        c = Client(b.port)
        assert c.create_topic("idem") == 0
        pid, epoch = c.init_producer_id()
        first = batch([b"a", b"b", b"c"], producer_id=pid, epoch=epoch, sequence=0)
        assert c.produce("idem", first)["base_offset"] == 0
        assert c.produce("idem", first)["base_offset"] == 0  # a retry: not stored twice
        second = batch([b"d"], producer_id=pid, epoch=epoch, sequence=3)
        assert c.produce("idem", second)["base_offset"] == 3
        assert c.produce("idem", first)["base_offset"] == 0  # still among the last five
        gap = batch([b"x"], producer_id=pid, epoch=epoch, sequence=9)
        assert c.produce("idem", gap)["error_code"] == E.OUT_OF_ORDER_SEQUENCE_NUMBER
        bumped = batch([b"e"], producer_id=pid, epoch=epoch + 1, sequence=0)
        assert c.produce("idem", bumped)["base_offset"] == 4
        fenced = batch([b"y"], producer_id=pid, epoch=epoch, sequence=4)
        assert c.produce("idem", fenced)["error_code"] == E.INVALID_PRODUCER_EPOCH
        # another producer id is independent; an unknown one may start anywhere
        other, _ = c.init_producer_id()
        assert other != pid
        assert c.produce("idem", batch([b"f"], producer_id=other, epoch=0, sequence=7))["base_offset"] == 5
        c.close()
        assert b.stop() == 0

        b.start()
        c = Client(b.port)
        newer, _ = c.init_producer_id()
        assert newer > max(pid, other)  # ids are never handed out twice
        # the state is rebuilt from the log: retries are still recognised, gaps refused
        assert c.produce("idem", bumped)["base_offset"] == 4
        assert c.produce("idem", batch([b"z"], producer_id=pid, epoch=epoch + 1, sequence=2))["error_code"] \
            == E.OUT_OF_ORDER_SEQUENCE_NUMBER
        assert c.produce("idem", batch([b"g"], producer_id=pid, epoch=epoch + 1, sequence=1))["base_offset"] == 6
        c.close()
    finally:
        b.stop()
    assert stored_values(b.data_dir, "idem") == [b"a", b"b", b"c", b"d", b"e", b"f", b"g"]


# ------------------------------------------------------------------ shutdown and crash
def _produce_acks_all(bootstrap: str, topic: str, count: int) -> list[tuple[int, bytes]]:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                         "linger.ms": 1})
    acked = []
    for i in range(count):
        producer.produce(topic, value=b"record %d" % i,
                         on_delivery=lambda err, msg: acked.append((msg.offset(), msg.value())) if err is None else None)
        if i % 100 == 0:
            producer.poll(0)
    assert producer.flush(TIMEOUT) == 0
    return acked


def test_sigterm_flushes_writes_checkpoints_and_restarts_clean(tmp_path):
    pytest.importorskip("confluent_kafka")
    b = BrokerProcess(str(tmp_path / "data")).start()
    try:
        c = Client(b.port)
        assert c.create_topic("durable", 2) == 0
        c.close()
        acked = _produce_acks_all(b.bootstrap, "durable", 500)
        assert len(acked) == 500
        assert b.stop(signal.SIGTERM) == 0
        assert "shut down completed" in b.log()
        assert not os.path.exists(os.path.join(b.data_dir, ".pk", "server.pid"))
        points = checkpoint.read(os.path.join(b.data_dir, checkpoint.RECOVERY_POINT))
        with Engine(b.data_dir) as engine:
            ends = {p: engine.partition("durable", p).log_end_offset for p in (0, 1)}
        assert sum(ends.values()) == 500
        assert {p: points[("durable", p)] for p in (0, 1) if ends[p]} == {p: e for p, e in ends.items() if e}

        b.start()
        c = Client(b.port)
        assert c.produce("durable", batch([b"after restart"]))["base_offset"] == ends[0]
        c.close()
    finally:
        b.stop()
    values = stored_values(b.data_dir, "durable", 0) + stored_values(b.data_dir, "durable", 1)
    assert sorted(values) == sorted([v for _, v in acked] + [b"after restart"])


def test_log_start_offset_checkpoint_written_periodically_and_at_shutdown(tmp_path):
    """As Kafka's log manager: the data dir holds log-start-offset-checkpoint from start-up,
    rewritten every log.flush.start.offset.checkpoint.interval.ms (an entry only where the log
    start is past the first segment's base) and at a clean shutdown."""
    from waits import wait_for
    data = str(tmp_path / "data")
    path = os.path.join(data, checkpoint.LOG_START_OFFSET)
    with Engine(data) as engine:  # a data dir made by the engine holds it already
        engine.create_topic("ls", 2)
    assert open(path).read() == "0\n0\n"
    os.remove(path)  # (as in a data dir written before pk wrote it)
    b = BrokerProcess(data, {"log.flush.start.offset.checkpoint.interval.ms": "200"}).start()
    try:
        wait_for(lambda: os.path.exists(path), 10, "the checkpoint at start-up")
        c = Client(b.port)
        for i in range(4):
            assert c.produce("ls", batch([b"%d" % i]))["error_code"] == 0
        body = {"topics": [{"name": "ls", "partitions": [{"partition_index": 0, "offset": 3}]}], "timeout_ms": 1000}
        assert c.call(21, 1, body)["topics"][0]["partitions"][0]["low_watermark"] == 3
        c.close()
        assert checkpoint.read(path) == {("ls", 0): 3}
        # entries that say nothing (a partition not here, a start at the first base) go at the next pass
        checkpoint.update(data, checkpoint.LOG_START_OFFSET, {("gone", 0): 7, ("ls", 1): 0})
        wait_for(lambda: checkpoint.read(path) == {("ls", 0): 3}, 10, "the periodic checkpoint")
        os.remove(path)
        assert b.stop(signal.SIGTERM) == 0
    finally:
        b.stop()
    assert open(path).read() == "0\n1\nls 0 3\n"  # written at the clean shutdown
    with Engine(data) as engine:
        assert engine.partition("ls", 0).log_start_offset == 3


def test_delete_records_moves_the_log_start_for_good(tmp_path):
    b = BrokerProcess(str(tmp_path / "data")).start()

    def earliest(c):
        body = {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": "trim", "partitions": [{"partition_index": 0, "timestamp": -2}]}]}
        return c.call(2, 3, body)["topics"][0]["partitions"][0]["offset"]

    try:
        c = Client(b.port)
        assert c.create_topic("trim", configs={"segment.bytes": "1000"}) == 0
        for i in range(20):
            assert c.produce("trim", batch([b"%03d" % i + b"." * 150]))["base_offset"] == i
        segments = sorted(f for f in os.listdir(os.path.join(b.data_dir, "trim-0")) if f.endswith(".log"))
        assert len(segments) > 3
        body = {"topics": [{"name": "trim", "partitions": [{"partition_index": 0, "offset": 13}]}],
                "timeout_ms": 1000}
        result = c.call(21, 1, body)["topics"][0]["partitions"][0]
        assert (result["error_code"], result["low_watermark"]) == (0, 13)
        assert earliest(c) == 13
        body["topics"][0]["partitions"][0]["offset"] = 99
        assert c.call(21, 1, body)["topics"][0]["partitions"][0]["error_code"] == E.OFFSET_OUT_OF_RANGE
        assert c.fetch_all("trim")["error_code"] == E.OFFSET_OUT_OF_RANGE  # offset 0 is gone
        left = sorted(f for f in os.listdir(os.path.join(b.data_dir, "trim-0")) if f.endswith(".log"))
        assert len(left) < len(segments) and int(left[0][:20]) <= 13
        c.close()
        assert checkpoint.read(os.path.join(b.data_dir, checkpoint.LOG_START_OFFSET))[("trim", 0)] == 13
        b.stop()
        b.start()
        c = Client(b.port)
        assert earliest(c) == 13
        c.close()
    finally:
        b.stop()
    assert stored_values(b.data_dir, "trim")[0].startswith(b"013")


def test_kill_9_loses_no_acknowledged_record(tmp_path):
    pytest.importorskip("confluent_kafka")
    b = BrokerProcess(str(tmp_path / "data")).start()
    try:
        c = Client(b.port)
        assert c.create_topic("crash") == 0
        c.close()
        acked = _produce_acks_all(b.bootstrap, "crash", 2000)
        assert len(acked) == 2000
        b.kill()
        assert b.proc.returncode == -signal.SIGKILL
        # A torn tail, as a crash in the middle of a write leaves one.
        with open(os.path.join(b.data_dir, "crash-0", "00000000000000000000.log"), "ab") as f:
            f.write(batch([b"torn"])[:40])

        b.start()
        c = Client(b.port)
        assert c.fetch_all("crash")["high_watermark"] == 2000
        # the next append recovers the log (cuts the torn bytes) and lands right after
        assert c.produce("crash", batch([b"after crash"]))["base_offset"] == 2000
        c.close()
    finally:
        b.stop()
    values = stored_values(b.data_dir, "crash")
    assert values[:2000] == [v for _, v in sorted(acked)]
    assert values[2000:] == [b"after crash"]
