"""pk-console-consumer's own Fetch path on a cluster (commands/backends/wire_fetch.py and
wire_consumer.py): what librdkafka used to do for it, checked against Kafka 4.4's own console
consumer and kcat on the same topics, on Kafka 4.4 and on pk-server-start.

- transactions: read_committed drops aborted batches and markers exactly as Kafka's tool does;
- every compression codec, and batches a fetch offset falls inside of;
- a group: two pk consumers split the partitions, and the committed offsets cover exactly
  what was printed (--max-messages stopping inside a fetch answer);
- a broker that goes away and comes back: the consumer waits, reconnects and goes on,
  printing every record once.
"""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from conftest import BrokerProcess, Runner, tool_path
from waits import create_topic_with_leaders, wait_for

confluent_kafka = pytest.importorskip("confluent_kafka")

CONSUMER = "pk-console-consumer"


@pytest.fixture(scope="module")
def cluster(kafka_or_pk):
    return kafka_or_pk


@pytest.fixture
def tools(tmp_path):
    return Runner(str(tmp_path / "unused"))


_names = iter(range(10 ** 6))


def _topic(bootstrap: str, stem: str, partitions: int = 1, **configs) -> str:
    return create_topic_with_leaders(bootstrap, f"wire-{stem}-{os.getpid()}-{next(_names)}", partitions,
                                     {k.replace("_", "."): v for k, v in configs.items()})


def _produce(bootstrap: str, topic: str, values, *, partition: int | None = None, **conf) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, **conf})
    for key, value in values:
        kwargs = {} if partition is None else {"partition": partition}
        producer.produce(topic, value, key, **kwargs)
    assert producer.flush(30) == 0


def _consume(tools, bootstrap: str, topic: str, *args: str, expect: int | None = None) -> list[str]:
    extra = ["--max-messages", str(expect)] if expect is not None else ["--timeout-ms", "3000"]
    proc = tools(CONSUMER, "--bootstrap-server", bootstrap, "--topic", topic, *args, *extra, timeout=120)
    assert proc.returncode == 0, proc.err
    return proc.out.splitlines()


def test_read_committed_drops_aborted_transactions_as_kafka_does(cluster, tools, kafka_tools):
    bootstrap, name = cluster
    topic = _topic(bootstrap, "txn")
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "transactional.id": f"{topic}-tx"})
    producer.init_transactions(30)
    plain = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    expected_committed, expected_all = [], []
    for round_ in range(6):
        producer.begin_transaction()
        values = [f"r{round_}-{i}" for i in range(300 if round_ % 2 else 40)]
        for v in values:
            producer.produce(topic, v.encode(), partition=0)
        plain.produce(topic, f"plain-{round_}".encode(), partition=0)  # interleaved, outside any transaction
        assert plain.flush(30) == 0
        producer.flush(30)
        if round_ in (1, 4):
            producer.abort_transaction(30)
        else:
            producer.commit_transaction(30)
            expected_committed += values
        expected_committed.append(f"plain-{round_}")
        expected_all += values + [f"plain-{round_}"]
    committed = _consume(tools, bootstrap, topic, "--from-beginning", "--isolation-level", "read_committed",
                         expect=len(expected_committed))
    assert sorted(committed) == sorted(expected_committed)
    everything = _consume(tools, bootstrap, topic, "--from-beginning", expect=len(expected_all))
    assert sorted(everything) == sorted(expected_all)
    if name == "kafka":  # Kafka's own tool, same topic: same lines in the same order
        theirs = kafka_tools("kafka-console-consumer", "--bootstrap-server", bootstrap, "--topic", topic,
                             "--from-beginning", "--isolation-level", "read_committed",
                             "--max-messages", str(len(expected_committed)))
        assert theirs.out.splitlines() == committed


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_every_codec_and_a_fetch_offset_inside_a_batch(cluster, tools, codec):
    bootstrap, _ = cluster
    topic = _topic(bootstrap, codec)
    values = [(f"k{i % 7}".encode(), f"value-{i:05d}".encode() * (1 + i % 3)) for i in range(5000)]
    _produce(bootstrap, topic, values, partition=0, **{"compression.type": codec, "linger.ms": 50})
    lines = _consume(tools, bootstrap, topic, "--from-beginning", "--property", "print.key=true",
                     "--property", "print.offset=true", expect=len(values))
    assert lines[1:] == [f"Offset:{i}\t{k.decode()}\t{v.decode()}" for i, (k, v) in enumerate(values)]
    # an offset inside a compressed batch: the batch comes whole, the records before are skipped
    middle = _consume(tools, bootstrap, topic, "--partition", "0", "--offset", "2501", expect=10)
    assert middle == [v.decode() for _, v in values[2501:2511]]


def test_a_group_splits_partitions_and_commits_what_was_printed(cluster, tools, tmp_path):
    bootstrap, _ = cluster
    topic = _topic(bootstrap, "group", partitions=4)
    values = [(None, f"{i:06d}".encode()) for i in range(40000)]
    _produce(bootstrap, topic, values, **{"linger.ms": 20})
    group = f"{topic}-g"
    # --max-messages stops inside a fetch answer: the commit covers exactly the printed records
    first = _consume(tools, bootstrap, topic, "--group", group, "--from-beginning", expect=12345)
    assert len(set(first)) == 12345
    # two members of the group, at once, share what is left
    procs = [subprocess.Popen([tool_path(CONSUMER), "--bootstrap-server", bootstrap, "--topic", topic,
                               "--group", group, "--timeout-ms", "8000"],
                              stdout=open(tmp_path / f"out{i}", "wb"), stderr=open(tmp_path / f"err{i}", "wb"))
             for i in range(2)]
    for proc in procs:
        assert proc.wait(120) == 0, (tmp_path / "err0").read_text() + (tmp_path / "err1").read_text()
    rest = [line for i in range(2) for line in (tmp_path / f"out{i}").read_text().splitlines()]
    assert sorted(first + rest) == [v.decode() for _, v in values]  # every record exactly once


def test_a_broker_going_away_and_back_loses_and_repeats_nothing(tmp_path, tools):
    server = BrokerProcess(str(tmp_path / "data")).start()
    try:
        topic = _topic(server.bootstrap, "restart")
        _produce(server.bootstrap, topic, [(None, f"a{i}".encode()) for i in range(1000)], partition=0)
        out = tmp_path / "out"
        consumer = subprocess.Popen([tool_path(CONSUMER), "--bootstrap-server", server.bootstrap, "--topic", topic,
                                     "--partition", "0", "--offset", "0", "--max-messages", "2000"],
                                    stdout=open(out, "wb"), stderr=subprocess.PIPE)
        try:
            wait_for(lambda: len(out.read_bytes().splitlines()) == 1000, timeout=60, what="the first 1000 records")
            server.stop()
            time.sleep(1)  # the consumer meets a closed port for a while (not a wait for a state)
            assert consumer.poll() is None
            server = BrokerProcess(server.data_dir, port=server.port).start()
            _produce(server.bootstrap, topic, [(None, f"b{i}".encode()) for i in range(1000)], partition=0)
            assert consumer.wait(60) == 0, consumer.stderr.read()
        finally:
            if consumer.poll() is None:
                consumer.kill()
        assert out.read_text().splitlines() == [f"a{i}" for i in range(1000)] + [f"b{i}" for i in range(1000)]
    finally:
        server.stop()
