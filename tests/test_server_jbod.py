"""pk-server-start with several log dirs (`log.dirs=a,b`, Kafka's JBOD): partitions are spread
over the dirs as Kafka's LogManager places them (the dir holding the fewest first), each dir
has its own meta.properties and checkpoint files, and a restart loads the partitions of every
dir. pk's own state (.pk/topics, groups, ...) stays in the first dir."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from conftest import BrokerProcess, ProtocolClient, tool_path
from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E
from waits import wait_for

SMALL_INTERNAL_TOPICS = {"offsets.topic.num.partitions": "1", "transaction.state.log.num.partitions": "1"}


def partitions_in(directory: str, topic: str) -> set[int]:
    """The partitions of a topic whose directory is in one log dir."""
    found = set()
    for entry in os.listdir(directory):
        name, _, number = entry.rpartition("-")
        if name == topic and number.isdigit():
            found.add(int(number))
    return found


def meta_properties(directory: str) -> dict[str, str]:
    with open(os.path.join(directory, "meta.properties")) as f:
        return dict(line.strip().split("=", 1) for line in f if "=" in line and not line.startswith("#"))


@pytest.fixture(scope="module")
def jbod(tmp_path_factory):
    """A broker on two log dirs; yields (BrokerProcess, [dir a, dir b])."""
    root = tmp_path_factory.mktemp("jbod")
    dirs = [str(root / "a"), str(root / "b")]
    b = BrokerProcess(dirs[0], {"log.dirs": ",".join(dirs), **SMALL_INTERNAL_TOPICS})
    try:
        yield b.start(), dirs
    finally:
        b.stop()


def create(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)


def produce(bootstrap: str, topic: str, values_by_partition: dict[int, list[bytes]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    errors = []
    for p, values in values_by_partition.items():
        for v in values:
            producer.produce(topic, v, partition=p, on_delivery=lambda err, msg: err and errors.append(err))
    assert producer.flush(30) == 0
    assert errors == []


def consume(bootstrap: str, topic: str, partition: int, count: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{topic}-{partition}",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, partition, 0)])
    got = []
    try:
        def more():
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
            elif msg is not None and msg.error().code() != KafkaError._PARTITION_EOF:
                assert msg.error().retriable(), msg.error()
            return len(got) >= count
        wait_for(more, 30, f"{count} records of {topic}-{partition}")
    finally:
        consumer.close()
    return got


def test_each_dir_has_its_meta_properties(jbod):
    _, (a, b) = jbod
    first, second = meta_properties(a), meta_properties(b)
    assert first["cluster.id"] == second["cluster.id"]
    assert first["node.id"] == second["node.id"]
    assert first["directory.id"] != second["directory.id"]
    assert os.path.isdir(os.path.join(a, ".pk", "topics"))
    assert not os.path.exists(os.path.join(b, ".pk", "topics"))  # pk's shared state: first dir only


def test_new_partitions_go_to_the_dir_with_fewest(jbod):
    broker, (a, b) = jbod

    def count(d):
        return sum(1 for e in os.listdir(d) if e.rpartition("-")[2].isdigit())
    before = {a: count(a), b: count(b)}
    create(broker.bootstrap, "spread", 4)
    in_a, in_b = partitions_in(a, "spread"), partitions_in(b, "spread")
    assert in_a.isdisjoint(in_b) and in_a | in_b == {0, 1, 2, 3}
    # each partition went to the dir holding fewer partitions then (the first on a tie)
    counts = dict(before)
    for p in range(4):
        want = a if counts[a] <= counts[b] else b
        assert p in (in_a if want == a else in_b), (p, before, in_a, in_b)
        counts[want] += 1


def test_records_in_both_dirs_survive_a_restart_with_checkpoints_per_dir(jbod):
    broker, (a, b) = jbod
    create(broker.bootstrap, "kept", 2)
    assert partitions_in(a, "kept") and partitions_in(b, "kept")  # one in each (2 partitions, fewest first)
    values = {p: [f"{p}-{i}".encode() for i in range(20)] for p in (0, 1)}
    produce(broker.bootstrap, "kept", values)
    broker.stop()
    # a clean shutdown writes each dir's recovery points, naming only that dir's partitions
    for d in (a, b):
        with open(os.path.join(d, "recovery-point-offset-checkpoint")) as f:
            lines = f.read().split("\n")
        entries = {(t, int(p)) for t, p, _ in (line.split() for line in lines[2:2 + int(lines[1])])}
        assert ("kept", next(iter(partitions_in(d, "kept")))) in entries
        assert all(p in partitions_in(d, t) for t, p in entries), (d, entries)
        assert os.path.isfile(os.path.join(d, "log-start-offset-checkpoint"))
    broker.start()
    for p in (0, 1):
        assert consume(broker.bootstrap, "kept", p, 20) == values[p]


def describe_log_dirs(bootstrap: str, topic: str) -> dict[str, dict]:
    """pk-log-dirs --describe's answer for one topic: {log dir: {partition name: size}}."""
    proc = subprocess.run([tool_path("pk-log-dirs"), "--bootstrap-server", bootstrap, "--describe",
                           "--topic-list", topic], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout.splitlines()[-1])
    (broker,) = answer["brokers"]
    return {d["logDir"]: {p["partition"]: p["size"] for p in d["partitions"]} for d in broker["logDirs"]}


def test_describe_log_dirs_answers_each_dir_with_its_partitions(jbod):
    broker, (a, b) = jbod
    create(broker.bootstrap, "described", 2)
    produce(broker.bootstrap, "described", {0: [b"x" * 100] * 3, 1: [b"y"]})
    got = describe_log_dirs(broker.bootstrap, "described")
    assert set(got) == {a, b}  # one result per dir (the tool prints them in a HashMap's order)
    for d in (a, b):
        assert set(got[d]) == {f"described-{p}" for p in partitions_in(d, "described")}
    sizes = {**got[a], **got[b]}
    assert sizes["described-0"] > sizes["described-1"] > 0
    answer = ProtocolClient(broker.bootstrap).call(ApiKey.DESCRIBE_LOG_DIRS, 4, {"topics": None})
    assert [r["log_dir"] for r in answer["results"]] == [a, b]
    for r in answer["results"]:
        assert r["error_code"] == E.NONE and 0 < r["usable_bytes"] <= r["total_bytes"]


def test_alter_replica_log_dirs_moves_a_partition(jbod):
    broker, (a, b) = jbod
    create(broker.bootstrap, "moved", 1)
    values = [f"m{i}".encode() for i in range(10)]
    produce(broker.bootstrap, "moved", {0: values})
    source = a if partitions_in(a, "moved") else b
    target = b if source == a else a
    c = ProtocolClient(broker.bootstrap)
    body = {"dirs": [{"path": target, "topics": [{"name": "moved", "partitions": [0]}]},
                     {"path": target + "/", "topics": [{"name": "moved", "partitions": [1]}]}]}
    answer = c.call(ApiKey.ALTER_REPLICA_LOG_DIRS, 2, body)
    got = {(t["topic_name"], p["partition_index"]): p["error_code"] for t in answer["results"] for p in t["partitions"]}
    assert got == {("moved", 0): E.NONE, ("moved", 1): E.LOG_DIR_NOT_FOUND}
    assert partitions_in(target, "moved") == {0} and partitions_in(source, "moved") == set()
    dirs = describe_log_dirs(broker.bootstrap, "moved")
    assert dirs[source] == {} and set(dirs[target]) == {"moved-0"} and dirs[target]["moved-0"] > 0
    produce(broker.bootstrap, "moved", {0: [b"after"]})
    assert consume(broker.bootstrap, "moved", 0, 11) == values + [b"after"]


def test_a_log_dir_of_another_cluster_stops_the_broker(tmp_path):
    """Kafka's MetaPropertiesEnsemble.verify: every log dir's meta.properties names the same
    cluster; the broker exits with one line otherwise."""
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    for d in (a, b):  # two separately initialised dirs: two cluster ids
        BrokerProcess(d, SMALL_INTERNAL_TOPICS).start().stop()
    broker = BrokerProcess(a, {"log.dirs": f"{a},{b}"})
    with pytest.raises(RuntimeError, match="exited with 1"):
        broker.start()
    expected = meta_properties(a)["cluster.id"], meta_properties(b)["cluster.id"]
    assert (f"Exiting Kafka due to fatal exception: Invalid cluster.id in: {b}. Expected {expected[0]}, "
            f"but read {expected[1]}") in broker.log()
    assert "Traceback" not in broker.log()
