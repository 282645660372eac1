"""A corrupt batch anywhere in a partition (a flipped byte in a middle batch, also below the
recovery point, also at the end of an older segment): the console consumer prints every record
before it, then reports it as Kafka 4.4's console consumer does (observed on a Kafka broker
serving a segment corrupted the same way): the ERROR line, the consumer's KafkaException and
its cause, "Processed a total of N messages", exit 0. pk-server-start serving the segment
answers the records before it and stays up."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from conftest import BrokerProcess, tool_path
from pk.engine import records


def run(tool, *args, data_dir, stdin=b""):
    return subprocess.run([tool_path(tool), *args], input=stdin, capture_output=True, timeout=60,
                          env={**os.environ, "PK_DATA_DIR": data_dir})


def batches(path: str) -> list[tuple[int, records.BatchHeader]]:
    with open(path, "rb") as f:
        return list(records.iter_batches(f.read()))


def corrupt_last_byte(path: str, pos: int, header) -> None:
    with open(path, "r+b") as f:
        f.seek(pos + header.size - 1)
        byte = f.read(1)[0]
        f.seek(pos + header.size - 1)
        f.write(bytes([byte ^ 0x5A]))


@pytest.fixture
def corrupt_dir(tmp_path):
    """Topic t: batches [a1 b1] [a2 b2] [a3 b3] in one segment, the middle one corrupted."""
    data = str(tmp_path / "data")
    assert run("pk-topics", "--create", "--topic", "t", data_dir=data).returncode == 0
    for i in (1, 2, 3):
        assert run("pk-console-producer", "--topic", "t", data_dir=data, stdin=f"a{i}\nb{i}\n".encode()).returncode == 0
    segment = os.path.join(data, "t-0", "00000000000000000000.log")
    found = batches(segment)
    assert [h.base_offset for _, h in found] == [0, 2, 4]
    corrupt_last_byte(segment, *found[1])
    return data


KAFKA_LINES = [
    "The consumer rebalance protocol (KIP-848) is production-ready! Set group.protocol=consumer to try it out. "
    "See https://kafka.apache.org/documentation/#consumer_rebalance_protocol",
    "[TS] ERROR Error processing message, terminating consumer process:  (org.apache.kafka.tools.consumer.ConsoleConsumer)",
    "org.apache.kafka.common.KafkaException: Received exception when fetching the next record from t-0. If needed, "
    "please seek past the record to continue consumption.",
    "Caused by: org.apache.kafka.common.KafkaException: Record batch for partition t-0 at offset 2 is invalid, "
    "cause: Record is corrupt (stored crc = CRC, computed crc = CRC)",
]


def normalised(stderr: bytes) -> list[str]:
    text = re.sub(r"^\[[^\]]+\]", "[TS]", stderr.decode(), flags=re.M)
    return re.sub(r"crc = \d+", "crc = CRC", text).splitlines()


def test_the_console_consumer_prints_up_to_the_corrupt_batch_then_reports_it(corrupt_dir):
    proc = run("pk-console-consumer", "--topic", "t", "--from-beginning", "--timeout-ms", "1000", data_dir=corrupt_dir)
    assert proc.stdout == b"a1\nb1\n"
    assert normalised(proc.stderr) == KAFKA_LINES + ["Processed a total of 2 messages"]
    assert proc.returncode == 0


def test_a_corrupt_batch_closing_an_older_segment_is_reported_not_waited_on(tmp_path):
    data = str(tmp_path / "data")
    assert run("pk-topics", "--create", "--topic", "t", "--config", "segment.bytes=160", data_dir=data).returncode == 0
    for i in (1, 2, 3):
        assert run("pk-console-producer", "--topic", "t", data_dir=data, stdin=f"a{i}\nb{i}\n".encode()).returncode == 0
    first = os.path.join(data, "t-0", "00000000000000000000.log")
    found = batches(first)
    assert [h.base_offset for _, h in found] == [0, 2]  # the segment rolled after two batches
    corrupt_last_byte(first, *found[1])
    proc = run("pk-console-consumer", "--topic", "t", "--from-beginning", "--timeout-ms", "1000", data_dir=data)
    assert proc.stdout == b"a1\nb1\n"
    assert normalised(proc.stderr)[-2:] == [KAFKA_LINES[-1], "Processed a total of 2 messages"]


def test_the_broker_serves_the_records_before_it_and_stays_up(corrupt_dir):
    from confluent_kafka import Consumer, TopicPartition

    broker = BrokerProcess(corrupt_dir).start()
    try:
        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "corrupt", "log_level": 0,
                             "enable.auto.commit": False})
        consumer.assign([TopicPartition("t", 0, 0)])
        got, errors = [], []
        for _ in range(40):
            msg = consumer.poll(0.25)
            if msg is None:
                continue
            if msg.error():
                errors.append(msg.error())
                break
            got.append(msg.value())
        consumer.close()
        assert got == [b"a1", b"b1"]
        assert broker.proc.poll() is None
        assert "Traceback" not in broker.log()
    finally:
        broker.stop()
