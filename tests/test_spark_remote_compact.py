"""pk-spark compact against a cluster (pk-server-start as a real subprocess, produced to with
confluent-kafka): the compacted snapshot to --output-topic (created compacted with the
source's partition count, each record in its source partition, in offset order, headers and
timestamps kept), to Parquet files, through the installed tool, and its errors."""

from __future__ import annotations

import random
import time

import pytest

from test_spark_datasource import spark  # noqa: F401  (the shared session fixture)

pytest.importorskip("pyspark")
confluent_kafka = pytest.importorskip("confluent_kafka")

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic  # noqa: E402

from conftest import BrokerProcess  # noqa: E402
from pk.spark_ops import compact as job  # noqa: E402
from pk.spark_ops.datasource import PkLogError  # noqa: E402

BASE_TS = int(time.time() * 1000) - 60_000  # recent: older records would meet retention.ms


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A pk-server-start with topic `src` (3 partitions) holding keyed records, tombstones,
    headers, and records sent to partitions their key would not choose. Yields (bootstrap,
    [(partition, offset, key, value, headers, timestamp)] as acknowledged)."""
    broker = BrokerProcess(str(tmp_path_factory.mktemp("remote-compact") / "data")).start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("src", 3, 1)])["src"].result(30)
        written = []

        def delivered(err, msg, headers):  # (delivery reports carry no headers)
            assert err is None, err
            written.append((msg.partition(), msg.offset(), msg.key(), msg.value(), headers or [],
                            msg.timestamp()[1]))

        producer = Producer({"bootstrap.servers": broker.bootstrap, "partitioner": "murmur2_random",
                             "linger.ms": 5})
        rng = random.Random(7)
        for i in range(900):
            key = b"user-%d" % rng.randrange(60)
            value = None if rng.random() < 0.1 else b"v%d" % i
            headers = [("seq", b"%d" % i)] if i % 5 == 0 else None
            extra = {"partition": rng.randrange(3)} if i % 17 == 0 else {}  # placed by hand
            producer.produce("src", key=key, value=value, headers=headers, timestamp=BASE_TS + i,
                             on_delivery=lambda err, msg, h=headers: delivered(err, msg, h), **extra)
        assert producer.flush(30) == 0
        yield broker.bootstrap, written
    finally:
        broker.stop()


def expected_snapshot(written, keep_tombstones=False):
    """Per partition: the latest record of each key, in offset order."""
    latest = {}
    for rec in sorted(written, key=lambda r: (r[0], r[1])):
        latest[(rec[0], rec[2])] = rec
    out = {}
    for rec in sorted(latest.values(), key=lambda r: (r[0], r[1])):
        if rec[3] is not None or keep_tombstones:
            out.setdefault(rec[0], []).append(rec)
    return out


def read_topic(bootstrap, topic, partitions):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "check", "enable.partition.eof": True})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out, done = {}, set()
    while len(done) < partitions:
        msg = consumer.poll(10)
        assert msg is not None, f"timed out reading {topic}"
        if msg.error():
            assert msg.error().code() == KafkaError._PARTITION_EOF, msg.error()
            done.add(msg.partition())
            continue
        out.setdefault(msg.partition(), []).append((msg.key(), msg.value(), msg.headers() or [], msg.timestamp()[1]))
    consumer.close()
    return out


def test_snapshot_to_an_output_topic(spark, cluster):  # noqa: F811
    bootstrap, written = cluster
    plan = job.prepare(job.CompactRequest(topic="src", bootstrap_server=bootstrap, output_topic="src-compacted"))
    results = job.run(spark, plan)
    expected = expected_snapshot(written)
    assert [(r.topic, r.partition, r.status) for r in results] == [
        ("src", p, f"{len(expected[p])} records in snapshot") for p in sorted(expected)]

    admin = AdminClient({"bootstrap.servers": bootstrap})
    meta = admin.list_topics(timeout=10).topics["src-compacted"]
    assert len(meta.partitions) == 3  # created like the source
    configs = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, "src-compacted")])
    described = list(configs.values())[0].result(30)
    assert described["cleanup.policy"].value == "compact"

    got = read_topic(bootstrap, "src-compacted", 3)
    assert got == {p: [(k, v, h, ts) for _, _, k, v, h, ts in recs] for p, recs in expected.items()}


def test_snapshot_with_tombstones_to_an_existing_topic(spark, cluster):  # noqa: F811
    """An existing output topic is used as it is; with fewer partitions than the source the
    records are placed by key."""
    bootstrap, written = cluster
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic("one-partition", 1, 1)])["one-partition"].result(30)
    plan = job.prepare(job.CompactRequest(topic="src", bootstrap_server=bootstrap, output_topic="one-partition",
                                          keep_tombstones=True))
    job.run(spark, plan)
    expected = expected_snapshot(written, keep_tombstones=True)
    got = read_topic(bootstrap, "one-partition", 1)[0]
    assert sorted((k, v or b"") for k, v, _, _ in got) == sorted(
        (r[2], r[3] or b"") for recs in expected.values() for r in recs)
    assert any(v is None for _, v, _, _ in got)


def test_snapshot_of_a_cluster_to_parquet(spark, cluster, tmp_path):  # noqa: F811
    bootstrap, written = cluster
    out = str(tmp_path / "snap.parquet")
    plan = job.prepare(job.CompactRequest(topic="src", bootstrap_server=bootstrap, output=out))
    job.run(spark, plan)
    rows = spark.read.parquet(out).select("partition", "offset", "key", "value").collect()
    expected = expected_snapshot(written)
    assert sorted((r["partition"], r["offset"], bytes(r["key"]), bytes(r["value"])) for r in rows) == [
        (p, o, k, v) for recs in expected.values() for p, o, k, v, _, _ in recs]


def test_installed_tool_produces_the_snapshot(cluster, pk):
    bootstrap, written = cluster
    proc = pk("pk-spark", "compact", "--bootstrap-server", bootstrap, "--topic", "src",
              "--output-topic", "from-cli", "--master", "local[1]", timeout=240)
    assert proc.returncode == 0, proc.err
    expected = expected_snapshot(written)
    assert proc.out.splitlines() == [f"src-{p}: {len(expected[p])} records in snapshot" for p in sorted(expected)]
    got = read_topic(bootstrap, "from-cli", 3)
    assert {p: len(v) for p, v in got.items()} == {p: len(v) for p, v in expected.items()}


def test_bad_output_topics_are_refused(cluster):
    bootstrap, _ = cluster
    with pytest.raises(PkLogError, match="also a topic being compacted"):
        job.prepare(job.CompactRequest(topic="src", bootstrap_server=bootstrap, output_topic="src"))
    with pytest.raises(PkLogError, match="Cannot create the output topic 'bad name!'"):
        job.prepare(job.CompactRequest(topic="src", bootstrap_server=bootstrap, output_topic="bad name!"))
    with pytest.raises(PkLogError, match="needs --bootstrap-server"):
        job.prepare(job.CompactRequest(topic="src", data_dir="/nonexistent", output_topic="x"))



def test_an_unreachable_cluster_is_one_line_on_stderr(pk):
    """librdkafka's own log lines are silenced: the user sees pk's one-line error."""
    from conftest import free_port

    proc = pk("pk-spark", "compact", "--bootstrap-server", f"127.0.0.1:{free_port()}", "--topic", "x",
              "--output-topic", "y", "--consumer-property", "socket.timeout.ms=3000", timeout=120)
    assert proc.returncode == 1
    assert proc.err.count("\n") == 1 and proc.err.startswith("Error: Cannot reach 127.0.0.1:"), proc.err
