"""Streams groups (KIP-1071) in pk-server-start, with a real Kafka Streams 4.4 application as the
client (tests/kafka/streams/WordCountApp.java, `group.protocol=streams`) and the session's
Kafka 4.4 broker as the oracle.

The app counts words: its topology has two subtopologies joined by a repartition topic, and a
changelog topic for the count's store, so the broker must register the topology, create both
internal topics (the app's first heartbeats report them missing) and assign four tasks.

- The same input through pk-server-start and through Kafka 4.4 gives the same output records
  (word, count), the same internal topics, and ListGroups shows the group as type "streams".
- Two instances on pk-server-start split the tasks between them (disjoint, all four covered);
  when one stops (SIGTERM: Kafka Streams leaves the group), the other takes its tasks, and the
  records produced meanwhile are counted on.

pk-server-start runs with a short streams heartbeat interval and no initial rebalance delay
(broker settings), so that the group moves within a second of a change.
"""

from __future__ import annotations

from collections import Counter

import pytest

from conftest import BrokerProcess
from kafka_oracle import KafkaMissing
from streams_app import StreamsApp, streams_home
from waits import create_topic_with_leaders, wait_for

APP = "ostr-wordcount"
INPUT, OUTPUT = "ostr-lines", "ostr-counts"
LINES = ["the quick brown fox", "jumps over the lazy dog", "the dog sleeps", "a fox is quick"] * 3
MORE = ["brown dog jumps", "lazy fox"]
INTERNAL = {f"{APP}-words-repartition": 2, f"{APP}-counts-changelog": 2}
ALL_TASKS = "0_0 0_1 1_0 1_1"


@pytest.fixture(scope="module")
def streams_jars():
    try:
        streams_home()
    except KafkaMissing as missing:
        pytest.skip(str(missing))


@pytest.fixture(scope="module")
def pk_server(tmp_path_factory):
    server = BrokerProcess(str(tmp_path_factory.mktemp("pk-streams") / "data"), {
        "group.streams.initial.rebalance.delay.ms": "0", "group.streams.heartbeat.interval.ms": "500",
        "group.streams.min.heartbeat.interval.ms": "500"}).start()
    try:
        yield server
    finally:
        server.stop()


def _produce(bootstrap: str, lines: list[str]) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap})
    for i, line in enumerate(lines):
        producer.produce(INPUT, value=line.encode(), partition=i % 2)
    assert producer.flush(30) == 0


def _final(lines: list[str]) -> Counter:
    return Counter(word for line in lines for word in line.split())


def _words(lines: list[str]) -> int:
    return sum(len(line.split()) for line in lines)


class _Output:
    """The app's output topic read from the start, as (word, count) pairs."""

    def __init__(self, bootstrap: str):
        from confluent_kafka import Consumer

        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{APP}-reader",
                                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
        self.consumer.subscribe([OUTPUT])
        self.records: list[tuple[str, int]] = []

    def read_until(self, count: int) -> list[tuple[str, int]]:
        def enough() -> bool:
            message = self.consumer.poll(0.2)
            if message is not None and message.error() is None:
                self.records.append((message.key().decode(), int(message.value())))
            return len(set(self.records)) >= count
        wait_for(enough, timeout=90, what=f"{count} word counts in {OUTPUT}")
        return sorted(set(self.records))

    def close(self) -> None:
        self.consumer.close()


def _topics(bootstrap: str) -> dict[str, int]:
    from confluent_kafka.admin import AdminClient

    meta = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10)
    return {name: len(t.partitions) for name, t in meta.topics.items() if name.startswith(APP)}


def _list_groups(kafka_tools, bootstrap: str) -> str:
    r = kafka_tools("kafka-groups", "--bootstrap-server", bootstrap, "--list", "--group-type", "streams")
    assert r.returncode == 0, r.err
    return r.out


def test_word_count_through_pk_as_through_kafka(streams_jars, kafka, kafka_tools, pk_server, tmp_path):
    results = {}
    apps = {}
    try:
        for name, bootstrap in (("kafka", kafka.bootstrap), ("pk", pk_server.bootstrap)):
            create_topic_with_leaders(bootstrap, INPUT, partitions=2)
            create_topic_with_leaders(bootstrap, OUTPUT, partitions=1)
            _produce(bootstrap, LINES)
            apps[name] = StreamsApp(bootstrap, APP, INPUT, OUTPUT, str(tmp_path / f"{name}.log")).start()
        for name, bootstrap in (("kafka", kafka.bootstrap), ("pk", pk_server.bootstrap)):
            apps[name].wait_running(90)
            assert apps[name].tasks == ALL_TASKS
            output = _Output(bootstrap)
            try:
                results[name] = output.read_until(_words(LINES))
            finally:
                output.close()
            assert _topics(bootstrap) == INTERNAL
        assert results["pk"] == results["kafka"]
        assert max(results["pk"], key=lambda pair: pair[1]) == ("the", _final(LINES)["the"])
        listed = {name: _list_groups(kafka_tools, b) for name, b in (("kafka", kafka.bootstrap),
                                                                    ("pk", pk_server.bootstrap))}
        assert APP in listed["pk"] and listed["pk"] == listed["kafka"]
    finally:
        for app in apps.values():
            app.stop()


def test_two_instances_split_tasks_and_take_over(streams_jars, pk_server, tmp_path):
    """(after the first test: the group is empty, its offsets committed; the input is there)"""
    bootstrap = pk_server.bootstrap
    if INPUT not in _topics_all(bootstrap):
        create_topic_with_leaders(bootstrap, INPUT, partitions=2)
        create_topic_with_leaders(bootstrap, OUTPUT, partitions=1)
        _produce(bootstrap, LINES)
    first = StreamsApp(bootstrap, APP, INPUT, OUTPUT, str(tmp_path / "first.log")).start()
    second = None
    try:
        first.wait_running(90)
        second = StreamsApp(bootstrap, APP, INPUT, OUTPUT, str(tmp_path / "second.log")).start()

        def split(_=None) -> bool:
            a, b = set((first.tasks or "").split()), set((second.tasks or "").split())
            return bool(a) and bool(b) and not a & b and " ".join(sorted(a | b)) == ALL_TASKS
        second.wait_for(lambda app: split(), 90, "the tasks split between the two instances")
        assert len(first.tasks.split()) == 2 and len(second.tasks.split()) == 2

        second.stop()
        first.wait_for(lambda app: app.tasks == ALL_TASKS, 90, "all tasks back on the first instance")
        _produce(bootstrap, MORE)
        output = _Output(bootstrap)
        try:
            counts = output.read_until(_words(LINES) + _words(MORE))
        finally:
            output.close()
        final = _final(LINES + MORE)
        assert all((word, n) in counts for word, n in final.items())
    finally:
        first.stop()
        if second is not None:
            second.stop()


def _topics_all(bootstrap: str) -> set[str]:
    from confluent_kafka.admin import AdminClient

    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics)
