"""The remote producer (commands/backends/kafka_clients.RemoteProducer) where its bulk path
matters: chunks of records handed to librdkafka from C, a full local queue waited on and the
records resumed at the one it refused, failed deliveries reported alone. Against
pk-server-start (tests/conftest.py BrokerProcess) and the real Kafka 4.4 broker, read back
with kcat and Kafka's own console consumer."""

from __future__ import annotations

import re
import subprocess

import pytest

from pk.commands import producer as cmd
from pk.commands.backends.kafka_clients import producer_opener
from pk.engine.partitioner import partition_for_key
from pk.engine.producer import ProducerTimeoutError

from conftest import BrokerProcess, Runner, tool_path

# kcat -e ends a partition at the first empty fetch there, which the broker holds for
# librdkafka's fetch.wait.max.ms (500 ms) first: half a second per call, to no purpose here.
KCAT_QUICK_END = ("-X", "fetch.wait.max.ms=10")

PRODUCER = "pk-console-producer"
KEYED = ("--reader-property", "parse.key=true", "--reader-property", "key.separator=:")


def ok(proc):
    assert proc.returncode == 0 and proc.err == "" and proc.out == "", (proc.returncode, proc.out, proc.err)


def create(bootstrap: str, topic: str, partitions: int) -> None:
    proc = Runner("unused")("pk-topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic,
                            "--partitions", str(partitions), "--replication-factor", "1")
    assert proc.returncode == 0, proc.err


def kcat_pairs(bootstrap: str, topic: str, partition: int) -> list[tuple[str, str]]:
    """Every record of one partition, read by kcat (a client that is not pk's)."""
    proc = subprocess.run(["kcat", "-C", *KCAT_QUICK_END, "-b", bootstrap, "-t", topic, "-p", str(partition), "-o", "beginning", "-e",
                           "-q", "-f", "%k:%s\n"], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [tuple(line.split(":", 1)) for line in proc.stdout.decode().splitlines()]


def expected_by_partition(lines: list[str], partitions: int) -> list[list[tuple[str, str]]]:
    out = [[] for _ in range(partitions)]
    for line in lines:
        key, value = line.split(":", 1)
        out[partition_for_key(key.encode(), partitions)].append((key, value))
    return out


@pytest.fixture
def server(tmp_path):
    b = BrokerProcess(str(tmp_path / "data")).start()
    try:
        yield b
    finally:
        b.stop()


def test_full_local_queue_resumes_at_the_refused_record(tmp_path, server):
    """buffer.memory of 20 KB against 30 000 records: librdkafka refuses records again and
    again; each time the chunk resumes at the refused one, so every record is stored once, in
    order, on Java's partition for its key."""
    create(server.bootstrap, "queue", 3)
    lines = [f"user-{i % 101}:event {i}" for i in range(30000)]
    ok(Runner(str(tmp_path))(PRODUCER, "--bootstrap-server", server.bootstrap, "--topic", "queue", *KEYED,
                             "--max-memory-bytes", "20000", input="\n".join(lines) + "\n", timeout=300))
    expected = expected_by_partition(lines, 3)
    for p in range(3):
        assert kcat_pairs(server.bootstrap, "queue", p) == expected[p]


def test_full_queue_with_the_broker_gone_fails_within_max_block_ms(tmp_path, server):
    """Records pile up while the broker is down: the sender waits max.block.ms for room, then
    fails with Kafka's text; closing reports nothing more (the first failure is the one)."""
    create(server.bootstrap, "gone", 1)
    options = cmd.ProducerOptions(topic="gone", max_memory_bytes=20000, max_block_ms=1000,
                                  command_property=["delivery.timeout.ms=3000", "request.timeout.ms=1000"])
    cmd.check_args(options)
    settings = cmd.producer_settings(cmd.producer_properties(options))
    producer = producer_opener(server.bootstrap, {})("gone", settings)
    producer.send_values([b"first"])
    producer.flush()
    server.stop()
    with pytest.raises(ProducerTimeoutError) as failure:
        producer.send_values([b"x" * 100] * 2000)
    assert str(failure.value) == "Failed to allocate memory within the configured max blocking time 1000 ms."
    with pytest.raises(ProducerTimeoutError) as expired:
        producer.close()  # the queued records expire after delivery.timeout.ms
    # the count of the batch that expired first (one record each for librdkafka, a batch.size batch for pk's
    # wire producer, as for Java's)
    assert re.fullmatch(r"Expiring \d+ record\(s\) for gone-0:3000 ms has passed since batch creation",
                        str(expired.value)), str(expired.value)


def test_delivery_failure_is_reported_once_as_kafkas_callback_does(tmp_path, server):
    """Only failed deliveries reach Python: a record the broker refuses is named as Kafka's
    ErrorLoggingCallback names it, after the records before it were stored."""
    runner = Runner(str(tmp_path))
    assert runner("pk-topics", "--bootstrap-server", server.bootstrap, "--create", "--topic", "small",
                  "--config", "max.message.bytes=200").returncode == 0
    proc = runner(PRODUCER, "--bootstrap-server", server.bootstrap, "--topic", "small", "--sync",
                  input="one\ntwo\n" + "x" * 300 + "\n")
    assert proc.returncode == 1
    assert proc.err == "The request included a message larger than the max message size the server will accept.\n"
    assert [v for _k, v in kcat_pairs(server.bootstrap, "small", 0)] == ["one", "two"]


def test_perf_tool_with_a_small_buffer_sends_every_record(tmp_path, server):
    create(server.bootstrap, "perf", 2)
    proc = Runner(str(tmp_path))("pk-producer-perf-test", "--topic", "perf", "--num-records", "20000",
                                 "--record-size", "50", "--throughput", "-1", "--producer-props",
                                 f"bootstrap.servers={server.bootstrap}", "buffer.memory=20000", timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^20000 records sent, ", proc.stdout.decode(), re.M), proc.stdout
    stored = sum(len(kcat_pairs(server.bootstrap, "perf", p)) for p in range(2))
    assert stored == 20000


@pytest.mark.parametrize("acks", ["0", "1", "-1", "all"])
def test_keys_land_on_javas_partitions_on_kafka(tmp_path, kafka, kafka_tools, acks):
    """Against Kafka 4.4, read back by Kafka's own console consumer partition by partition."""
    topic = f"remote-keys-{acks.replace('-', 'm')}"
    create(kafka.bootstrap, topic, 4)
    lines = [f"k{i % 37}:v{i}" for i in range(3000)]
    ok(Runner(str(tmp_path))(PRODUCER, "--bootstrap-server", kafka.bootstrap, "--topic", topic, *KEYED,
                             "--request-required-acks", acks, input="\n".join(lines) + "\n", timeout=120))
    expected = expected_by_partition(lines, 4)
    for p in range(4):
        result = kafka_tools("kafka-console-consumer", "--bootstrap-server", kafka.bootstrap, "--topic", topic,
                             "--partition", str(p), "--offset", "earliest", "--max-messages", str(len(expected[p])),
                             "--formatter-property", "print.key=true", "--formatter-property", "key.separator=:",
                             "--timeout-ms", "60000")
        assert [tuple(line.split(":", 1)) for line in result.out.splitlines()] == expected[p], result.err


@pytest.mark.parametrize("args, idempotent", [
    ((), True),  # Kafka's default
    (("--request-required-acks", "1"), False),  # a conflicting setting turns it off silently
    (("--command-property", "enable.idempotence=false"), False),
    (("-X", "acks=all"), False),  # librdkafka's own keys are left as given
])
def test_idempotent_by_default_as_kafkas_producer(tmp_path, kafka, kafka_tools, args, idempotent):
    """The batches' producer ids as Kafka's DumpLogSegments reads them from the broker's log."""
    topic = f"remote-idempotent-{len(args)}-{args[-1].replace('=', '-').replace('.', '-') if args else 'default'}"
    create(kafka.bootstrap, topic, 1)
    ok(Runner(str(tmp_path))(PRODUCER, "--bootstrap-server", kafka.bootstrap, "--topic", topic, *args,
                             input="a\nb\n", timeout=120))
    segment = f"{kafka.log_dir}/{topic}-0/00000000000000000000.log"
    dump = kafka_tools("kafka-dump-log", "--files", segment)
    ids = re.findall(r"producerId: (-?\d+)", dump.out)
    assert ids and all((int(i) >= 0) == idempotent for i in ids), dump.out
