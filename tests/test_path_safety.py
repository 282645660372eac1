"""A topic name is never a path: nothing outside the data dir is created or removed, whoever
asks (the engine's own API, or any client through pk-server-start's admin requests)."""

from __future__ import annotations

import os

import pytest
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from conftest import BrokerProcess
from pk.engine.engine import Engine
from pk.engine.errors import InvalidTopicError, UnknownTopicOrPartitionError
from pk.engine.log import partition_dir_name

HOSTILE = ["../topics/fz", "..", ".", "a/b", "/tmp/x", "fz\x00", "x" * 300]


def tree(root: str) -> set[str]:
    out = set()
    for folder, dirs, files in os.walk(root):
        out.update(os.path.relpath(os.path.join(folder, n), root) for n in dirs + files)
    return out


@pytest.mark.parametrize("name", HOSTILE)
def test_partition_paths_refuse_names_that_are_not_topic_names(name):
    with pytest.raises(InvalidTopicError):
        partition_dir_name(name, 0)


def test_engine_admin_calls_with_hostile_names_touch_nothing(tmp_path):
    data = tmp_path / "data"
    engine = Engine(str(data))
    engine.create_topic("fz", 1)
    before = tree(str(tmp_path))
    for name in HOSTILE:
        with pytest.raises((UnknownTopicOrPartitionError, InvalidTopicError)):
            engine.create_partitions(name, 3)
        with pytest.raises((UnknownTopicOrPartitionError, InvalidTopicError)):
            engine.delete_topic(name)
        with pytest.raises((UnknownTopicOrPartitionError, InvalidTopicError)):
            engine.partition(name, 0)
        with pytest.raises((UnknownTopicOrPartitionError, InvalidTopicError)):
            engine.create_topic(name, 1)
        assert not engine.store.exists(name)
    assert tree(str(tmp_path)) == before
    assert engine.topic("fz").partitions == 1
    engine.close()


def test_broker_admin_requests_with_hostile_names_touch_nothing(tmp_path):
    """The reported attack: CreatePartitions then DeleteTopics on `../topics/fz` made
    `<parent of log.dirs>/topics/fz-1`, `fz-2` and then removed them, leaving `fz` broken."""
    broker = BrokerProcess(str(tmp_path / "data")).start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for f in admin.create_topics([NewTopic("fz", 1)]).values():
            f.result(30)
        before = tree(str(tmp_path))
        for f in admin.create_partitions([NewPartitions("../topics/fz", 3)]).values():
            with pytest.raises(Exception, match="UNKNOWN_TOPIC_OR_PART"):
                f.result(30)
        for f in admin.delete_topics(["../topics/fz", "..", "a/b"]).values():
            with pytest.raises(Exception, match="UNKNOWN_TOPIC_OR_PART"):
                f.result(30)
        after = {p for p in tree(str(tmp_path)) if not p.startswith("broker-")}
        assert after == {p for p in before if not p.startswith("broker-")}
        assert admin.list_topics(timeout=30).topics["fz"].partitions.keys() == {0}
        assert "Traceback" not in broker.log()
    finally:
        broker.stop()
