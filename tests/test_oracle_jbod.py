"""Kafka 4.4 and pk-server-start with two log dirs (JBOD), side by side: kafka-log-dirs shows
both dirs with the topic's partitions spread over them; when the second dir's disk is full, a
produce to its partition answers KAFKA_STORAGE_ERROR, that dir alone goes offline (Fetch,
Metadata and DescribeLogDirs say so, as Kafka's do), and the partition in the first dir keeps
taking records. The second dir is a 4 MB tmpfs (root only)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import uuid

import pytest
from confluent_kafka import KafkaError, Producer

import kafka_oracle
from conftest import BrokerProcess, ProtocolClient, _dist, tool_path
from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E
from test_cli_failures import _tmpfs
from waits import wait_for

TOPIC = "jbod"


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    """{"kafka": (bootstrap, [dir 1, dir 2]), "pk": (...)}: each broker's second dir on its own tmpfs."""
    root = tmp_path_factory.mktemp("oracle-jbod")
    mounts, started, found = [], [], {}
    try:
        for name in ("kafka", "pk"):
            mounts.append(_tmpfs(root / f"{name}-small", "4m"))
            small = next(mounts[-1])
            dirs = [str(root / f"{name}-roomy"), os.path.join(small.path, "d")]
            if name == "kafka":
                broker = kafka_oracle.KafkaBroker(_dist("4"), str(root / "kafka"), overrides={"log.dirs": ",".join(dirs)})
                broker.heap = "512m"
            else:
                broker = BrokerProcess(dirs[0], {"log.dirs": ",".join(dirs)})
                broker.log_path = str(root / "pk.log")
            started.append(broker)
            broker.start()
            found[name] = (broker.bootstrap, dirs)
        yield found
    finally:
        for broker in started:
            broker.stop()
        for m in mounts:
            next(m, None)


def log_dirs(kafka_tools, bootstrap: str) -> dict[str, tuple[str | None, list[str]]]:
    """Kafka's kafka-log-dirs --describe of TOPIC: {log dir: (error, partitions)}; the tool prints
    the dirs in a HashMap's order of their paths, which differ between the two brokers. pk's
    tool prints the same as Kafka's (its raw answer is compared in log.dirs order below)."""
    def both():
        r = kafka_tools("kafka-log-dirs", "--bootstrap-server", bootstrap, "--describe", "--topic-list", TOPIC)
        assert r.returncode == 0, r.err
        pk = subprocess.run([tool_path("pk-log-dirs"), "--bootstrap-server", bootstrap, "--describe",
                             "--topic-list", TOPIC], capture_output=True, text=True, timeout=60)
        assert pk.returncode == 0, pk.stderr
        return r.out.splitlines()[-1], pk.stdout.splitlines()[-1]
    # The two tools ask one after the other: a log the broker creates meanwhile (Kafka creates a
    # new topic's logs as the metadata reaches it) shows in the second answer only. Ask again
    # until both saw the same broker state.
    kafka_out, pk_out = wait_for(lambda: (lambda k, p: k == p and (k, p))(*both()), 30,
                                 "kafka-log-dirs and pk-log-dirs to see the same logs")
    (broker,) = json.loads(kafka_out)["brokers"]
    return {d["logDir"]: (d["error"], sorted(p["partition"] for p in d["partitions"])) for d in broker["logDirs"]}


def raw_log_dirs(bootstrap: str) -> list[tuple[str, int]]:
    """The DescribeLogDirs answer's (log dir, error code) per result, in its order."""
    with ProtocolClient(bootstrap) as c:
        r = c.call(ApiKey.DESCRIBE_LOG_DIRS, 4, {"topics": None})
    return [(d["log_dir"], d["error_code"]) for d in r["results"]]


def metadata(bootstrap: str) -> dict[int, dict]:
    with ProtocolClient(bootstrap) as c:
        r = c.call(ApiKey.METADATA, 12, {"topics": [{"topic_id": uuid.UUID(int=0), "name": TOPIC}],
                                         "allow_auto_topic_creation": False,
                                         "include_topic_authorized_operations": False})
    (topic,) = r["topics"]
    return {p["partition_index"]: p for p in topic["partitions"]}


def described_partition(bootstrap: str, partition: int) -> dict:
    """DescribeTopicPartitions' answer for one partition of TOPIC (KIP-966's fields)."""
    with ProtocolClient(bootstrap) as c:
        r = c.call(ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": [{"name": TOPIC}],
                                                         "response_partition_limit": 2000, "cursor": None})
    (topic,) = r["topics"]
    (p,) = [p for p in topic["partitions"] if p["partition_index"] == partition]
    return {k: p[k] for k in ("error_code", "leader_id", "isr_nodes", "eligible_leader_replicas", "last_known_elr",
                              "offline_replicas")}


def fetch_error(bootstrap: str, partition: int) -> int:
    with ProtocolClient(bootstrap) as c:
        r = c.call(ApiKey.FETCH, 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "topics": [
                {"topic": TOPIC, "partitions": [{"partition": partition, "current_leader_epoch": -1, "fetch_offset": 0,
                                                 "last_fetched_epoch": -1, "log_start_offset": -1,
                                                 "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": [], "rack_id": ""})
    (t,) = r["responses"]
    (p,) = t["partitions"]
    return p["error_code"]


def produce(bootstrap: str, partition: int, value: bytes) -> int | None:
    """The delivery's error code (None: stored), one record, no retry."""
    outcome = []
    producer = Producer({"bootstrap.servers": bootstrap, "retries": 0, "message.timeout.ms": 10000})
    producer.produce(TOPIC, value, partition=partition, on_delivery=lambda err, msg: outcome.append(err))
    assert producer.flush(30) == 0
    (err,) = outcome
    return None if err is None else err.code()


def fill(directory: str) -> None:
    """Take every free byte of the file system holding `directory`."""
    with open(os.path.join(directory, "filler"), "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc


def test_two_log_dirs_and_one_failing(sides, kafka_tools):
    seen = {}
    for name, (bootstrap, dirs) in sides.items():
        r = kafka_tools("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", TOPIC,
                        "--partitions", "2", "--replication-factor", "1")
        assert r.returncode == 0, r.err
        described = wait_for(lambda: (lambda d: sum(len(p) for _, p in d.values()) == 2 and d)(
            log_dirs(kafka_tools, bootstrap)), 30, "the topic's logs")
        # one result per dir, in log.dirs order; one partition in each (the dir with fewer first)
        assert raw_log_dirs(bootstrap) == [(dirs[0], E.NONE), (dirs[1], E.NONE)]
        assert {d: (err, len(p)) for d, (err, p) in described.items()} == {dirs[0]: (None, 1), dirs[1]: (None, 1)}
        on_small = int(described[dirs[1]][1][0].rsplit("-", 1)[1])
        on_roomy = 1 - on_small
        # two records in each partition while there is room, then the small disk fills up
        for p in (on_small, on_roomy):
            for _ in range(2):
                assert produce(bootstrap, p, b"x" * 10000) is None
        fill(dirs[1])
        refused = produce(bootstrap, on_small, b"y" * 10000)
        # Kafka's controller learns of the offline dir from the broker's heartbeat: wait for it
        wait_for(lambda: metadata(bootstrap)[on_small]["leader_id"] == -1, 30, "the leaderless partition")
        meta = metadata(bootstrap)
        after = log_dirs(kafka_tools, bootstrap)
        seen[name] = {
            "refused": refused,
            "fetch": fetch_error(bootstrap, on_small),
            "offline partition": {k: meta[on_small][k] for k in ("error_code", "leader_id", "replica_nodes",
                                                                 "isr_nodes", "offline_replicas")},
            "leader epoch change": meta[on_small]["leader_epoch"] - meta[on_roomy]["leader_epoch"],
            "described offline partition": described_partition(bootstrap, on_small),
            "online partition": {k: meta[on_roomy][k] for k in ("error_code", "leader_id", "offline_replicas")},
            "log dirs": {d == dirs[0]: (err, len(p)) for d, (err, p) in after.items()},
            "raw log dirs": [(d == dirs[0], code) for d, code in raw_log_dirs(bootstrap)],
            "roomy takes records": produce(bootstrap, on_roomy, b"z"),
            "roomy serves": fetch_error(bootstrap, on_roomy),
        }
    assert seen["kafka"]["refused"] == KafkaError.KAFKA_STORAGE_ERROR
    assert seen["kafka"]["log dirs"] == {True: (None, 1), False: ("org.apache.kafka.common.errors.KafkaStorageException", 0)}
    assert seen["kafka"]["raw log dirs"] == [(True, E.NONE), (False, E.KAFKA_STORAGE_ERROR)]
    assert seen["pk"] == seen["kafka"]
