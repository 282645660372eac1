"""pk-topics --zookeeper against Apache Kafka 2.8.2's own `kafka-topics --zookeeper`, on the same
ZooKeeper, with a real Kafka 2.8.2 broker (the session's `kafka28` fixture) serving the topics.

Each tool creates, alters and deletes its own topics (ot28-k-... by Kafka's tool, ot28-p-... by
pk); both then list and describe all of them: the outputs must be byte for byte the same (TopicIds
included: they are the same topics), so Kafka's tool reads what pk wrote and pk what Kafka
wrote. A topic pk created is then produced to and consumed from through the Kafka 2.8 broker.

Kafka's tool runs in the session's shared tool JVM (milliseconds a call). The differences
that stay are the project's rules: an action error is Kafka's stdout line
`Error while executing topic command : ...` on pk's stderr (exit status 1 both), and an
exception Kafka lets escape from main (`Exception in thread "main" joptsimple....Exception: m`)
is pk's one line `m`.
"""

from __future__ import annotations

import re
import time


from kafka_oracle import normalise

ERR = "Error while executing topic command : "
K, P = "ot28-k-", "ot28-p-"

WRITES = [
    ["--create", "--topic", "{T}a", "--partitions", "3", "--replication-factor", "1"],
    ["--create", "--topic", "{T}b_c.d", "--partitions", "1", "--replication-factor", "1"],
    ["--create", "--topic", "{T}cfg", "--partitions", "2", "--replication-factor", "1", "--config", "retention.ms=1000",
     "--config", "cleanup.policy=compact", "--config", "segment.ms=100000", "--config", "max.message.bytes=5000"],
    ["--create", "--topic", "{T}ra", "--replica-assignment", "0,0,0"],
    ["--create", "--topic", "{T}a", "--partitions", "1", "--replication-factor", "1", "--if-not-exists"],
    ["--alter", "--topic", "{T}a", "--partitions", "5"],
    ["--alter", "--topic", "{T}a", "--config", "retention.ms=5", "--config", "flush.ms=1000"],
    ["--alter", "--topic", "{T}a", "--delete-config", "retention.ms"],
    ["--delete", "--topic", "{T}b_c.d"],
]

READS = [
    ["--list", "--topic", "ot28-.*"],
    ["--describe", "--topic", "ot28-.*"],
    ["--describe", "--topic", "ot28-.*", "--topics-with-overrides"],
]

# Errors: Kafka 2.8 logs the action error (`ERROR <exception class>: <message>`) on stderr too.
ERRORS = [
    ["--create", "--topic", "{T}a", "--partitions", "1", "--replication-factor", "1"],
    ["--create", "--topic", "{T}x", "--partitions", "0", "--replication-factor", "1"],
    ["--create", "--topic", "{T}x", "--partitions", "abc", "--replication-factor", "1"],
    ["--create", "--topic", "{T}x", "--partitions", "1", "--replication-factor", "3"],
    ["--create", "--topic", "bad name!", "--partitions", "1", "--replication-factor", "1"],
    ["--create", "--topic", "{T}x", "--partitions", "1", "--replication-factor", "1", "--config", "nope.nope=1"],
    ["--create", "--topic", "{T}x", "--partitions", "1", "--replication-factor", "1", "--config", "retention.ms=abc"],
    ["--create", "--topic", "{T}x", "--partitions", "1", "--replication-factor", "1", "--config", "retention.ms"],
    ["--alter", "--topic", "{T}a", "--config", "nope.x=1"],
    ["--alter", "--topic", "{T}nope", "--partitions", "4"],
    ["--describe", "--topic", "{T}nope"],
    ["--delete", "--topic", "{T}nope"],
]
USAGE = [
    [],
    ["--topic", "{T}a"],
    ["--list", "--describe"],
    ["--create", "--topic", "{T}x"],
    ["--create", "--topic", "{T}x", "--partitions", "1"],
    ["--describe", "--topic", "{T}a", "--under-min-isr-partitions"],
    ["--describe", "--topic", "{T}a", "--under-replicated-partitions", "--unavailable-partitions"],
    ["--list", "--partitions", "3"],
    ["--alter", "--topic", "{T}a", "--replication-factor", "2"],
    ["--bogus"],
    ["--describe", "--topic-id", "AAAAAAAAAAAAAAAAAAAAAQ"],
    ["--list", "--bootstrap-server", "127.0.0.1:1"],
]
_LOGGED = re.compile(r"^\[[^\]]*\] ERROR (\S+): (.*)$")
_ESCAPED = re.compile(r'^Exception in thread "main" joptsimple\.\w+: (.*)$')


def _fill(args, prefix):
    return [a.replace("{T}", prefix) for a in args]


def _same(kafka_run, mine, k_prefix=K, p_prefix=P):
    """Kafka's run (in its own JVM) and pk's: the same output, the error line moved to stderr."""
    k_out = normalise(kafka_run.out, replace={k_prefix: "{T}"})
    p_out, p_err = (normalise(t, replace={p_prefix: "{T}"}) for t in (mine.out, mine.err))
    where = (kafka_run.returncode, k_out, kafka_run.err[:300], mine.returncode, p_out, p_err)
    assert mine.returncode == kafka_run.returncode, where
    lines = k_out.splitlines(keepends=True)
    if kafka_run.returncode == 1 and lines and lines[-1].startswith(ERR):
        assert p_out == "".join(lines[:-1]) and p_err == lines[-1], where
    else:
        assert (p_out, p_err) == (k_out, normalise(kafka_run.err)), where


def _wait_deleted(pk, zk, name):
    deadline = time.monotonic() + 30
    while any(line.split(" - ")[0] == name for line in pk("pk-topics", "--zookeeper", zk, "--list").out.split("\n")):
        assert time.monotonic() < deadline, f"{name} was not deleted by the Kafka 2.8 controller"
        time.sleep(0.2)


def test_topics_written_by_either_tool_read_the_same_by_both(kafka28, kafka28_tools, pk):
    zk = kafka28.zookeeper
    for args in WRITES:  # each tool on its own topics
        _same(kafka28_tools("kafka-topics", "--zookeeper", zk, *_fill(args, K)),
              pk("pk-topics", "--zookeeper", zk, *_fill(args, P)))
    for prefix in (K, P):  # the 2.8 controller deletes them (delete.topic.enable defaults to true)
        _wait_deleted(pk, zk, prefix + "b_c.d")
    for args in READS:
        kafka_run = kafka28_tools("kafka-topics", "--zookeeper", zk, *args)
        assert kafka_run.returncode == 0, kafka_run.err
        mine = pk("pk-topics", "--zookeeper", zk, *args)
        assert (mine.returncode, mine.out, mine.err) == (0, kafka_run.out, ""), (args, kafka_run.out, mine.out)
    # Both tools' topics are in the listing, served by broker 0, with their TopicIds.
    described = kafka28_tools("kafka-topics", "--zookeeper", zk, "--describe", "--topic", P + "cfg").out
    assert re.fullmatch(
        rf"Topic: {P}cfg\tTopicId: \S{{22}}\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: "
        r"cleanup\.policy=compact,max\.message\.bytes=5000,retention\.ms=1000,segment\.ms=100000\n"
        rf"\tTopic: {P}cfg\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\n"
        rf"\tTopic: {P}cfg\tPartition: 1\tLeader: 0\tReplicas: 0\tIsr: 0\n", described)


def test_errors_as_kafka_2_8(kafka28, kafka28_tools, pk):
    zk = kafka28.zookeeper
    for args in (["--create", "--topic", "{T}a", "--partitions", "1", "--replication-factor", "1"],):
        kafka28_tools("kafka-topics", "--zookeeper", zk, *_fill(args, K), "--if-not-exists")
        pk("pk-topics", "--zookeeper", zk, *_fill(args, P), "--if-not-exists")
    # The error line is on Kafka's stdout, after what it printed before.
    for args in (["--describe", "--topic", "{T}nope"], ["--alter", "--topic", "{T}a", "--partitions", "1"]):
        _same(kafka28_tools("kafka-topics", "--zookeeper", zk, *_fill(args, K)),
              pk("pk-topics", "--zookeeper", zk, *_fill(args, P)))
    for args in ERRORS:
        kafka_run = kafka28_tools("kafka-topics", "--zookeeper", zk, *_fill(args, K))
        mine = pk("pk-topics", "--zookeeper", zk, *_fill(args, P))
        logged = _LOGGED.match(normalise(kafka_run.err_first, replace={K: "{T}"}))
        assert kafka_run.returncode == 1 and logged, (args, kafka_run.err[:300])
        assert (mine.returncode, mine.out) == (1, ""), (args, mine.out, mine.err)
        assert normalise(mine.err, replace={P: "{T}"}) == ERR + logged.group(2) + "\n", (args, kafka_run.err_first)
    for args in USAGE:
        kafka_run = kafka28_tools("kafka-topics", "--zookeeper", zk, *_fill(args, K))
        mine = pk("pk-topics", "--zookeeper", zk, *_fill(args, P))
        first = normalise(kafka_run.err_first, replace={K: "{T}"})
        escaped = _ESCAPED.match(first)
        assert kafka_run.returncode == 1 and (mine.returncode, mine.out) == (1, ""), (args, kafka_run.err, mine.err)
        assert normalise(mine.err, replace={P: "{T}"}) == (escaped.group(1) if escaped else first) + "\n", \
            (args, first)


def test_topic_created_by_pk_is_served_by_the_kafka_2_8_broker(kafka28, kafka28_tools, pk):
    from confluent_kafka import Consumer, Producer

    topic = P + "served"
    zk = kafka28.zookeeper
    assert pk("pk-topics", "--zookeeper", zk, "--create", "--topic", topic, "--partitions", "3",
              "--replication-factor", "1").out == f"Created topic {topic}.\n"
    producer = Producer({"bootstrap.servers": kafka28.bootstrap, "linger.ms": 0})
    sent = {(f"k{i}".encode(), f"v{i}".encode()) for i in range(12)}
    for key, value in sorted(sent):
        producer.produce(topic, value, key)
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": kafka28.bootstrap, "group.id": topic,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    received, partitions = set(), set()
    deadline = time.monotonic() + 30
    while len(received) < len(sent) and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            received.add((message.key(), message.value()))
            partitions.add(message.partition())
    consumer.close()
    assert received == sent and partitions == {0, 1, 2}
    # Kafka 2.8's tool describes it as pk does (leaders elected by the 2.8 controller).
    kafka_run = kafka28_tools("kafka-topics", "--zookeeper", zk, "--describe", "--topic", topic)
    assert pk("pk-topics", "--zookeeper", zk, "--describe", "--topic", topic).out == kafka_run.out
    assert kafka_run.out.count("\tLeader: 0\tReplicas: 0\tIsr: 0\n") == 3
