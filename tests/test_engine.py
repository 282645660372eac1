"""The Engine facade (engine/engine.py, metadata.py, checkpoint.py): data directory, topics,
their Kafka error messages, and what other Engine instances (other processes) see."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from pk.engine import checkpoint, records
from pk.engine.engine import Engine
from pk.engine.errors import (
    DataDirError,
    InvalidConfigurationError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidRequestError,
    InvalidTopicError,
    TopicDeletionDisabledError,
    TopicExistsError,
    UnknownTopicOrPartitionError,
)
from pk.engine.log import read_partition_topic_id

UNKNOWN = "This server does not host this topic-partition."
T0 = int(time.time() * 1000)  # recent: default retention (7 days) must not delete test records


def rows(i, n=1):
    return [(f"k{i}".encode(), f"v{i}-{j}".encode(), (), T0 + i) for j in range(n)]


def meta_files(data_dir):
    topics = os.path.join(data_dir, ".pk", "topics")
    return sorted(os.listdir(topics))


def assert_metadata_whole(data_dir):
    """Every topic file parses as complete JSON, and no temp file is left behind."""
    topics = os.path.join(data_dir, ".pk", "topics")
    for name in os.listdir(topics):
        assert name.endswith(".json"), f"stray file {name}"
        with open(os.path.join(topics, name), "rb") as f:
            doc = json.loads(f.read())
        assert doc["name"] + ".json" == name
        assert len(doc["topic_id"]) == 22
        assert doc["partitions"]


def read_props(path):
    props = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                k, v = line.split("=", 1)
                props[k] = v
    return props


# --------------------------------------------------------------------------- data dir
def test_data_dir_creation(tmp_path):
    data = str(tmp_path / "a" / "b" / "data")  # parents are created too
    eng = Engine(data)
    props = read_props(os.path.join(data, "meta.properties"))
    assert props["node.id"] == "0"
    assert props["version"] == "1"
    assert len(props["cluster.id"]) == 22 and eng.cluster_id == props["cluster.id"]
    assert "broker.id" not in props
    assert eng.list_topics() == ["__consumer_offsets"]
    meta = eng.topic("__consumer_offsets")
    assert meta.partitions == 50
    assert meta.replication_factor == 1
    assert meta.configs == {"cleanup.policy": "compact", "compression.type": "producer",
                            "segment.bytes": "104857600"}
    cfg = eng.topic_config("__consumer_offsets")
    assert cfg["cleanup.policy"] == ["compact"] and cfg["segment.bytes"] == 104857600
    for p in range(50):
        d = os.path.join(data, f"__consumer_offsets-{p}")
        assert sorted(os.listdir(d)) == [".pk-lock", "00000000000000000000.index", "00000000000000000000.log",
                                         "00000000000000000000.timeindex", "partition.metadata"]
        assert read_partition_topic_id(d) == meta.topic_id
        with open(os.path.join(d, "partition.metadata")) as f:
            assert f.read() == f"version: 0\ntopic_id: {meta.topic_id}\n"
    assert not os.path.exists(os.path.join(data, "__consumer_offsets-50"))
    assert_metadata_whole(data)
    eng.close()
    # reopening keeps the identity and does not recreate anything
    before = os.stat(os.path.join(data, "meta.properties")).st_mtime_ns
    eng2 = Engine(data)
    assert eng2.cluster_id == eng.cluster_id
    assert eng2.topic("__consumer_offsets").topic_id == meta.topic_id
    assert os.stat(os.path.join(data, "meta.properties")).st_mtime_ns == before
    eng2.close()


def test_offsets_topic_partition_count_from_broker_config(tmp_path):
    eng = Engine(str(tmp_path), {"offsets.topic.num.partitions": "3"})
    assert eng.topic("__consumer_offsets").partitions == 3
    assert sorted(n for n in os.listdir(tmp_path) if n.startswith("__consumer_offsets-")) == [
        "__consumer_offsets-0", "__consumer_offsets-1", "__consumer_offsets-2"]


def test_two_engines_share_one_identity(tmp_path):
    a = Engine(str(tmp_path))
    b = Engine(str(tmp_path))
    assert a.cluster_id == b.cluster_id


def test_data_dir_is_a_regular_file(tmp_path):
    path = tmp_path / "file"
    path.write_text("not a dir")
    with pytest.raises(DataDirError, match="is not a directory"):
        Engine(str(path))
    with pytest.raises(DataDirError):
        Engine(str(path / "sub"))  # a path through a regular file
    assert path.read_text() == "not a dir"


@pytest.mark.skipif(os.geteuid() == 0, reason="running as root: chmod 500 does not stop root from writing")
def test_unwritable_data_dir(tmp_path):
    data = tmp_path / "ro"
    data.mkdir()
    os.chmod(data, 0o500)
    try:
        with pytest.raises(DataDirError, match="not writable"):
            Engine(str(data))
    finally:
        os.chmod(data, 0o700)


def test_corrupt_meta_properties(tmp_path):
    Engine(str(tmp_path))
    (tmp_path / "meta.properties").write_text("node.id=0\n")
    with pytest.raises(DataDirError, match="cluster.id"):
        Engine(str(tmp_path))


def test_corrupt_topic_metadata_is_a_data_dir_error(tmp_path):
    eng = Engine(str(tmp_path))
    eng.create_topic("t")
    (tmp_path / ".pk" / "topics" / "t.json").write_text("{\"name\": ")
    with pytest.raises(DataDirError, match="corrupt"):
        Engine(str(tmp_path)).topic("t")


# --------------------------------------------------------------------------- create
def test_create_topic_defaults_and_layout(tmp_path):
    eng = Engine(str(tmp_path))
    meta = eng.create_topic("orders")
    assert meta.partitions == 1 and meta.assignment == {0: [0]}
    assert meta.configs == {}
    meta = eng.create_topic("events", 4, 1, configs={"retention.ms": "1000", "cleanup.policy": "compact"})
    assert meta.partitions == 4
    assert eng.topic("events").configs == {"retention.ms": "1000", "cleanup.policy": "compact"}
    assert eng.topic_config("events")["retention.ms"] == 1000
    assert eng.topic_config("orders")["retention.ms"] == 604800000
    for p in range(4):
        assert read_partition_topic_id(str(tmp_path / f"events-{p}")) == meta.topic_id
    assert eng.list_topics() == ["__consumer_offsets", "events", "orders"]
    assert eng.topic("events").topic_id != eng.topic("orders").topic_id
    assert_metadata_whole(str(tmp_path))
    # another engine (another process) sees it at once
    other = Engine(str(tmp_path))
    assert other.topic("events").topic_id == meta.topic_id


def test_create_topic_with_broker_defaults(tmp_path):
    eng = Engine(str(tmp_path), {"num.partitions": "3", "log.retention.hours": "1"})
    assert eng.create_topic("t").partitions == 3
    assert eng.topic_config("t")["retention.ms"] == 3_600_000


def test_create_topic_manual_assignment(tmp_path):
    eng = Engine(str(tmp_path))
    meta = eng.create_topic("m", assignment={0: [0], 1: [0], 2: [0]})
    assert meta.assignment == {0: [0], 1: [0], 2: [0]}
    assert all((tmp_path / f"m-{p}").is_dir() for p in range(3))


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(name=""), InvalidTopicError, "Topic name is invalid: the empty string is not allowed"),
    (dict(name="."), InvalidTopicError, "Topic name is invalid: '.' is not allowed"),
    (dict(name=".."), InvalidTopicError, "Topic name is invalid: '..' is not allowed"),
    (dict(name="a/b"), InvalidTopicError,
     "Topic name is invalid: 'a/b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"),
    (dict(name="x" * 250), InvalidTopicError,
     f"Topic name is invalid: the length of '{'x' * 250}' is longer than the max allowed length 249"),
    (dict(name="__cluster_metadata"), InvalidRequestError, "Creation of internal topic __cluster_metadata is prohibited."),
    (dict(name="t", num_partitions=0), InvalidPartitionsError,
     "Number of partitions was set to an invalid non-positive value."),
    (dict(name="t", num_partitions=-2), InvalidPartitionsError,
     "Number of partitions was set to an invalid non-positive value."),
    (dict(name="t", replication_factor=0), InvalidReplicationFactorError,
     "Replication factor must be larger than 0, or -1 to use the default value."),
    (dict(name="t", replication_factor=3), InvalidReplicationFactorError,
     "Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be reached "
     "because only 1 broker(s) are registered or some brokers have all their log directories cordoned."),
    (dict(name="t", configs={"foo": "1"}), InvalidConfigurationError, "Unknown topic config name: foo"),
    (dict(name="t", configs={"retention.ms": "abc"}), InvalidConfigurationError,
     "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
    (dict(name="t", configs={"segment.bytes": "10"}), InvalidConfigurationError,
     "Invalid value 10 for configuration segment.bytes: Value must be at least 14"),
    (dict(name="t", assignment={0: [1]}), InvalidReplicaAssignmentError,
     "The manual partition assignment includes broker 1, but no such broker is registered."),
    (dict(name="t", assignment={0: [0, 0]}), InvalidReplicaAssignmentError,
     "The manual partition assignment includes the broker 0 more than once."),
    (dict(name="t", assignment={0: []}), InvalidReplicaAssignmentError,
     "The manual partition assignment includes an empty replica list."),
])
def test_create_topic_errors(tmp_path, kwargs, error, message):
    eng = Engine(str(tmp_path))
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(error) as exc:
        eng.create_topic(**kwargs)
    assert str(exc.value) == message
    assert exc.value.code == error.code
    # nothing was written
    assert sorted(os.listdir(tmp_path)) == before
    assert eng.list_topics() == ["__consumer_offsets"]


def test_create_existing_and_colliding_topics(tmp_path):
    eng = Engine(str(tmp_path))
    eng.create_topic("a.b", 2)
    with pytest.raises(TopicExistsError) as exc:
        eng.create_topic("a.b")
    assert str(exc.value) == "Topic 'a.b' already exists."
    with pytest.raises(InvalidTopicError) as exc:
        eng.create_topic("a_b")
    assert str(exc.value) == "Topic 'a_b' collides with existing topic: a.b"
    with pytest.raises(TopicExistsError):
        eng.create_topic("__consumer_offsets")
    assert eng.topic("a.b").partitions == 2


# --------------------------------------------------------------------------- delete
def test_delete_topic(tmp_path):
    eng = Engine(str(tmp_path))
    eng.create_topic("gone", 3)
    log = eng.partition("gone", 1)
    log.append_records(rows(1))
    log.close()  # records a recovery point for gone-1
    assert (("gone", 1) in checkpoint.read(str(tmp_path / checkpoint.RECOVERY_POINT)))
    eng.delete_topic("gone")
    assert "gone" not in eng.list_topics()
    assert not any(n.startswith("gone-") for n in os.listdir(tmp_path))
    assert "gone.json" not in meta_files(str(tmp_path))
    assert ("gone", 1) not in checkpoint.read(str(tmp_path / checkpoint.RECOVERY_POINT))
    with pytest.raises(UnknownTopicOrPartitionError) as exc:
        eng.delete_topic("gone")
    assert str(exc.value).startswith(UNKNOWN.rstrip("."))
    with pytest.raises(UnknownTopicOrPartitionError):
        eng.partition("gone", 0)
    assert_metadata_whole(str(tmp_path))


def test_delete_disabled(tmp_path):
    eng = Engine(str(tmp_path), {"delete.topic.enable": "false"})
    eng.create_topic("keep")
    with pytest.raises(TopicDeletionDisabledError) as exc:
        eng.delete_topic("keep")
    assert str(exc.value) == "Topic deletion is disabled."
    assert "keep" in eng.list_topics()


def test_delete_while_partition_open_elsewhere(tmp_path):
    writer = Engine(str(tmp_path))
    writer.create_topic("t", 2)
    log = writer.partition("t", 0)
    log.append_records(rows(1))
    reader_engine = Engine(str(tmp_path))
    rlog = reader_engine.partition("t", 0)
    assert records.check_batch(rlog.read(0)).base_offset == 0
    Engine(str(tmp_path)).delete_topic("t")  # a third process deletes it
    with pytest.raises(UnknownTopicOrPartitionError):
        log.append_records(rows(2))
    with pytest.raises(UnknownTopicOrPartitionError):
        rlog.read(0)
    with pytest.raises(UnknownTopicOrPartitionError):
        rlog.log_end_offset
    with pytest.raises(UnknownTopicOrPartitionError):
        reader_engine.partition("t", 1).read(0)
    # the same engine that deleted forgets its open logs
    writer.close()
    reader_engine.close()


def test_delete_through_the_same_engine_invalidates_its_log(tmp_path):
    eng = Engine(str(tmp_path))
    eng.create_topic("t")
    log = eng.partition("t", 0)
    log.append_records(rows(1))
    eng.delete_topic("t")
    with pytest.raises(UnknownTopicOrPartitionError):
        log.append_records(rows(2))
    with pytest.raises(UnknownTopicOrPartitionError):
        log.read(0)
    log.close()  # closing a deleted partition's log is harmless


def test_recreated_topic_is_not_confused_with_the_old_one(tmp_path):
    eng1 = Engine(str(tmp_path))
    eng1.create_topic("t")
    old = eng1.partition("t", 0)
    for i in range(5):
        old.append_records(rows(i, 2))
    old_id = eng1.topic("t").topic_id
    assert old.read(0)  # the reader has the segment open

    eng2 = Engine(str(tmp_path))
    eng2.delete_topic("t")
    new_meta = eng2.create_topic("t")
    assert new_meta.topic_id != old_id
    new = eng2.partition("t", 0)
    assert new.log_end_offset == 0
    assert new.append_records(rows(100)) == (0, 0)

    # the stale log object belongs to the deleted topic: it must not read or write the new one
    with pytest.raises(UnknownTopicOrPartitionError):
        old.append_records(rows(6))
    with pytest.raises(UnknownTopicOrPartitionError):
        old.read(0)
    with pytest.raises(UnknownTopicOrPartitionError):
        old.log_end_offset
    # the new topic holds only its own record
    data = new.read(0)
    recs = records.decode_records(data)
    assert [(r.offset, r.key) for r in recs] == [(0, b"k100")]
    assert new.log_end_offset == 1
    # looking the partition up again through the first engine finds the new topic
    again = eng1.partition("t", 0)
    assert again is not old and again.topic_id == new_meta.topic_id
    assert records.decode_records(again.read(0))[0].key == b"k100"
    eng1.close()
    eng3 = Engine(str(tmp_path))
    assert records.decode_records(eng3.partition("t", 0).read(0))[0].key == b"k100"
    # and once it is deleted for good, the lookup says so
    eng3.delete_topic("t")
    with pytest.raises(UnknownTopicOrPartitionError):
        eng2.partition("t", 0)


# --------------------------------------------------------------------------- partitions
def test_create_partitions(tmp_path):
    eng = Engine(str(tmp_path))
    meta = eng.create_topic("p", 1)
    eng.partition("p", 0).append_records(rows(1))
    grown = eng.create_partitions("p", 3)
    assert grown.partitions == 3 and grown.topic_id == meta.topic_id
    assert eng.topic("p").assignment == {0: [0], 1: [0], 2: [0]}
    for p in range(3):
        assert read_partition_topic_id(str(tmp_path / f"p-{p}")) == meta.topic_id
    assert eng.partition("p", 2).append_records(rows(2)) == (0, 0)
    assert eng.partition("p", 0).log_end_offset == 1  # untouched
    assert eng.create_partitions("p", 5, [[0], [0]]).partitions == 5
    assert_metadata_whole(str(tmp_path))


@pytest.mark.parametrize("total,assignment,error,message", [
    (2, None, InvalidPartitionsError, "Topic already has 2 partition(s)."),
    (1, None, InvalidPartitionsError, "The topic p currently has 2 partition(s); 1 would not be an increase."),
    (4, [[0]], InvalidReplicaAssignmentError,
     "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified."),
    (3, [[1]], InvalidReplicaAssignmentError,
     "The manual partition assignment includes broker 1, but no such broker is registered."),
])
def test_create_partitions_errors(tmp_path, total, assignment, error, message):
    eng = Engine(str(tmp_path))
    eng.create_topic("p", 2)
    with pytest.raises(error) as exc:
        eng.create_partitions("p", total, assignment)
    assert str(exc.value) == message
    assert eng.topic("p").partitions == 2
    assert not (tmp_path / "p-2").exists()


def test_create_partitions_unknown_topic(tmp_path):
    eng = Engine(str(tmp_path))
    with pytest.raises(UnknownTopicOrPartitionError):
        eng.create_partitions("nope", 3)


def test_unknown_partition(tmp_path):
    eng = Engine(str(tmp_path))
    eng.create_topic("t", 2)
    with pytest.raises(UnknownTopicOrPartitionError) as exc:
        eng.partition("t", 2)
    assert str(exc.value) == "This server does not host this topic-partition: t-2"


# --------------------------------------------------------------------------- configs
def test_alter_topic_configs(tmp_path):
    eng = Engine(str(tmp_path))
    eng.create_topic("c", configs={"retention.ms": "1000"})
    log = eng.partition("c", 0)
    assert log.config["retention.ms"] == 1000
    meta = eng.alter_topic_configs("c", {"segment.bytes": "2000", "retention.ms": "5000"})
    assert meta.configs == {"retention.ms": "5000", "segment.bytes": "2000"}
    assert log.config["segment.bytes"] == 2000 and log.config["retention.ms"] == 5000
    eng.alter_topic_configs("c", None, ["retention.ms"])
    assert eng.topic("c").configs == {"segment.bytes": "2000"}
    assert log.config["retention.ms"] == 604800000
    # another engine sees the change
    assert Engine(str(tmp_path)).topic_config("c")["segment.bytes"] == 2000
    assert_metadata_whole(str(tmp_path))


@pytest.mark.parametrize("set_configs,delete,message", [
    ({"foo": "1"}, None, "Unknown topic config name: foo"),
    (None, ["foo"], "Unknown topic config name: foo"),
    ({"retention.ms": "-5"}, None, "Invalid value -5 for configuration retention.ms: Value must be at least -1"),
    ({"cleanup.policy": "shred"}, None,
     "Invalid value shred for configuration cleanup.policy: String must be one of: compact, delete"),
])
def test_alter_topic_configs_errors(tmp_path, set_configs, delete, message):
    eng = Engine(str(tmp_path))
    eng.create_topic("c", configs={"retention.ms": "1000"})
    with pytest.raises(InvalidConfigurationError) as exc:
        eng.alter_topic_configs("c", set_configs, delete)
    assert str(exc.value) == message
    assert eng.topic("c").configs == {"retention.ms": "1000"}


def test_alter_unknown_topic(tmp_path):
    eng = Engine(str(tmp_path))
    with pytest.raises(UnknownTopicOrPartitionError):
        eng.alter_topic_configs("nope", {"retention.ms": "1"})


def test_metadata_files_are_whole_json_while_changing(tmp_path):
    """A reader never sees a half-written topic file while another writer rewrites it."""
    eng = Engine(str(tmp_path))
    eng.create_topic("w")
    path = tmp_path / ".pk" / "topics" / "w.json"
    stop = threading.Event()
    seen = []
    errors = []

    def reader():
        while not stop.is_set():
            try:
                seen.append(json.loads(path.read_bytes())["configs"].get("retention.ms"))
            except Exception as exc:  # noqa: BLE001 - any failure is the finding
                errors.append(repr(exc))

    t = threading.Thread(target=reader)
    t.start()
    try:
        other = Engine(str(tmp_path))
        for i in range(150):
            other.alter_topic_configs("w", {"retention.ms": str(1000 + i), "segment.bytes": str(10**6 + i)})
    finally:
        stop.set()
        t.join()
    assert not errors
    assert seen
    assert_metadata_whole(str(tmp_path))


# --------------------------------------------------------------------------- checkpoints
def test_checkpoint_file_format(tmp_path):
    eng = Engine(str(tmp_path))
    eng.create_topic("cp", 2)
    for p in (0, 1):
        log = eng.partition("cp", p)
        log.append_records(rows(p, p + 1))
    eng.close()
    text = (tmp_path / checkpoint.RECOVERY_POINT).read_text()
    assert text == "0\n2\ncp 0 1\ncp 1 2\n"
    assert checkpoint.read(str(tmp_path / checkpoint.RECOVERY_POINT)) == {("cp", 0): 1, ("cp", 1): 2}
    assert (tmp_path / "cp-0" / "leader-epoch-checkpoint").read_text() == "0\n1\n0 0\n"
    # malformed files read as empty (they are hints)
    (tmp_path / checkpoint.RECOVERY_POINT).write_text("0\n5\ncp 0\n")
    assert checkpoint.read(str(tmp_path / checkpoint.RECOVERY_POINT)) == {}
    assert checkpoint.read(str(tmp_path / "missing")) == {}


def test_enforce_retention_across_topics(tmp_path):
    eng = Engine(str(tmp_path))
    eng.create_topic("old", configs={"retention.ms": "1000", "segment.bytes": "200"})
    eng.create_topic("keep", configs={"retention.ms": "-1", "segment.bytes": "200"})
    for name in ("old", "keep"):
        log = eng.partition(name, 0)
        for i in range(5):
            log.append_records(rows(i), now_ms=T0)
    assert eng.enforce_retention(now_ms=T0 + 10_000) > 0
    assert eng.partition("old", 0).log_start_offset == eng.partition("old", 0).log_end_offset == 5
    assert eng.partition("keep", 0).log_start_offset == 0
