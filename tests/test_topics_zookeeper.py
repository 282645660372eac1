"""pk-topics --zookeeper against a real ZooKeeper (Debian's package, started here on a free port),
compared with what Kafka 2.8.2's `kafka-topics --zookeeper` prints and writes
(docs/versions.md).

No Kafka broker runs: the tests register brokers themselves (ephemeral /brokers/ids/<id>) and
write the partition state znodes a controller would write.
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import time

import pytest

from conftest import free_port

kazoo_client = pytest.importorskip("kazoo.client")

WARNING = ("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') "
           "could collide. To avoid issues it is best to use either, but not both.\n")
ERR = "Error while executing topic command : "
ALTER_CONFIG = ("WARNING: Altering topic configuration from this script has been deprecated and may be removed "
                "in future releases.\n         Going forward, please use kafka-configs.sh for this functionality\n")
ADD_PARTITIONS = ("WARNING: If partitions are increased for a topic that has a key, the partition logic or "
                  "ordering of the messages will be affected\nAdding partitions succeeded!\n")
MARKED = "Note: This will have no impact if delete.topic.enable is not set to true.\n"
TIMEOUT_LINE = ('Exception in thread "main" kafka.zookeeper.ZooKeeperClientTimeoutException: '
                "Timed out waiting for connection while in state: CONNECTING")


# The ZooKeeper server: the session-scoped `zookeeper` fixture in conftest.py.


_chroots = itertools.count()


class Cluster:
    """One test's slice of the server: a fresh chroot, a kazoo client rooted there, and helpers
    to play the brokers and the controller."""

    def __init__(self, server: str):
        self.chroot = f"/pk-test-{next(_chroots)}"
        admin = kazoo_client.KazooClient(hosts=server)
        admin.start(timeout=10)
        admin.create(self.chroot)
        admin.stop()
        admin.close()
        self.connect = server + self.chroot
        self.client = kazoo_client.KazooClient(hosts=self.connect)
        self.client.start(timeout=10)

    def register_broker(self, broker_id: int, rack: str | None = None) -> None:
        """A 2.8 broker's registration (BrokerIdZNode v5), ephemeral like the real one."""
        info = {"features": {}, "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
                "endpoints": [f"PLAINTEXT://127.0.0.1:{9092 + broker_id}"], "jmx_port": -1,
                "port": 9092 + broker_id, "host": "127.0.0.1", "version": 5, "timestamp": "1600000000000"}
        if rack is not None:
            info["rack"] = rack
        self.client.create(f"/brokers/ids/{broker_id}", json.dumps(info).encode(), ephemeral=True, makepath=True)

    def set_state(self, topic: str, partition: int, leader: int, isr: list[int]) -> None:
        """What the controller writes once a partition has a leader."""
        data = json.dumps({"controller_epoch": 1, "leader": leader, "version": 1, "leader_epoch": 0, "isr": isr},
                          separators=(",", ":")).encode()
        self.client.create(f"/brokers/topics/{topic}/partitions/{partition}/state", data, makepath=True)

    def get(self, path: str) -> bytes | None:
        data, _ = self.client.get(path)
        return data

    def close(self) -> None:
        self.client.stop()
        self.client.close()


@pytest.fixture
def cluster(zookeeper):
    c = Cluster(zookeeper)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def topics(pk, cluster):
    """topics("--list") runs `pk-topics --zookeeper <this test's chroot> --list`."""
    return lambda *args: pk("pk-topics", "--zookeeper", cluster.connect, *args)


def ok(proc):
    assert proc.returncode == 0, (proc.returncode, proc.out, proc.err)
    assert proc.err == ""
    return proc.out


def fails(proc, message):
    """One line on stderr, exit 1, never a traceback."""
    assert proc.returncode == 1, (proc.returncode, proc.out, proc.err)
    assert proc.err == message + "\n"
    assert "Traceback" not in proc.out
    return proc


# --------------------------------------------------------------------------- the seeds' session
def test_seed_transcript(topics, cluster):
    cluster.register_broker(0)
    # $kafka-topics --zookeeper 127.0.01:2181 -topic first_topic --create --partitions 3 --replication-factor 1
    out = ok(topics("-topic", "first_topic", "--create", "--partitions", "3", "--replication-factor", "1"))
    assert out == WARNING + "Created topic first_topic.\n"
    assert ok(topics("--list")) == "first_topic\n"
    # Before the controller has elected leaders there is no state znode.
    assert ok(topics("--topic", "first_topic", "--describe")) == (
        "Topic: first_topic\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: \n"
        "\tTopic: first_topic\tPartition: 0\tLeader: none\tReplicas: 0\tIsr: \n"
        "\tTopic: first_topic\tPartition: 1\tLeader: none\tReplicas: 0\tIsr: \n"
        "\tTopic: first_topic\tPartition: 2\tLeader: none\tReplicas: 0\tIsr: \n")
    for p in range(3):
        cluster.set_state("first_topic", p, 0, [0])
    assert ok(topics("--topic", "first_topic", "--describe")) == (
        "Topic: first_topic\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: \n"
        "\tTopic: first_topic\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\n"
        "\tTopic: first_topic\tPartition: 1\tLeader: 0\tReplicas: 0\tIsr: 0\n"
        "\tTopic: first_topic\tPartition: 2\tLeader: 0\tReplicas: 0\tIsr: 0\n")
    out = ok(topics("--topic", "second_topic", "--create", "--partitions", "3", "--replication-factor", "1"))
    assert out == WARNING + "Created topic second_topic.\n"
    assert ok(topics("--topic", "second_topic", "--delete")) == "Topic second_topic is marked for deletion.\n" + MARKED
    assert ok(topics("--list")) == "first_topic\nsecond_topic - marked for deletion\n"
    assert ok(topics("--topic", "second_topic", "--delete")) == "Topic second_topic is already marked for deletion.\n"


# --------------------------------------------------------------------------- znodes written
def test_create_writes_config_then_assignment(topics, cluster):
    cluster.register_broker(0)
    ok(topics("--create", "--topic", "plain", "--partitions", "2", "--replication-factor", "1"))
    # The config znode is always written (empty overrides too), before the assignment znode.
    assert cluster.get("/config/topics/plain") == b'{"version":1,"config":{}}'
    assert cluster.get("/brokers/topics/plain") == (
        b'{"partitions":{"0":[0],"1":[0]},"adding_replicas":{},"removing_replicas":{},"version":3}')
    _, config_stat = cluster.client.get("/config/topics/plain")
    _, topic_stat = cluster.client.get("/brokers/topics/plain")
    assert config_stat.czxid < topic_stat.czxid
    # No config change notification on create, no partition znodes (the controller makes those).
    assert not cluster.client.exists("/config/changes") or cluster.client.get_children("/config/changes") == []
    assert cluster.client.get_children("/brokers/topics/plain") == []

    ok(topics("--create", "--topic", "conf", "--replica-assignment", "0,0,0,0,0,0,0,0,0,0,0,0",
              "--config", "segment.ms=100000", "--config", "preallocate=true", "--config", "compression.type=gzip"))
    # Key orders as Kafka 2.8 writes them: java.util.Properties (Java 11+) for the configs and
    # Scala 2.13's mutable.HashMap for the partitions (checked against the JVM's libraries).
    assert cluster.get("/config/topics/conf") == (
        b'{"version":1,"config":{"compression.type":"gzip","segment.ms":"100000","preallocate":"true"}}')
    assert cluster.get("/brokers/topics/conf") == (
        b'{"partitions":{"11":[0],"0":[0],"1":[0],"2":[0],"3":[0],"4":[0],"5":[0],"6":[0],"7":[0],'
        b'"8":[0],"9":[0],"10":[0]},"adding_replicas":{},"removing_replicas":{},"version":3}')
    assert ok(topics("--describe", "--topic", "conf")).splitlines()[0] == (
        "Topic: conf\tPartitionCount: 12\tReplicationFactor: 1\t"
        "Configs: compression.type=gzip,segment.ms=100000,preallocate=true")  # Properties order, as 2.8.2 prints


def test_replica_assignment_is_not_checked_against_brokers(topics, cluster):
    # Kafka 2.8's ZooKeeper path writes a manual assignment as given: no broker need exist.
    ok(topics("--create", "--topic", "manual", "--replica-assignment", "5:6,6:7"))
    assert json.loads(cluster.get("/brokers/topics/manual"))["partitions"] == {"0": [5, 6], "1": [6, 7]}
    assert ok(topics("--describe", "--topic", "manual")) == (
        "Topic: manual\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: \n"
        "\tTopic: manual\tPartition: 0\tLeader: none\tReplicas: 5,6\tIsr: \n"
        "\tTopic: manual\tPartition: 1\tLeader: none\tReplicas: 6,7\tIsr: \n")


# --------------------------------------------------------------------------- replica assignment
class FixedRandom:
    """Stands in for AdminUtils.rand: returns the given start index, then the given shift."""

    def __init__(self, *values: int):
        self.values = list(values)
        self.bounds: list[int] = []

    def next_int(self, bound: int) -> int:
        self.bounds.append(bound)
        return self.values.pop(0)


def brokers(ids, racks=None):
    from pk.engine.replica_assignment import BrokerMetadata

    return [BrokerMetadata(i, (racks or {}).get(i)) for i in ids]


def test_assignment_matches_kafkas_own_tables():
    from pk.engine.replica_assignment import assign_replicas_to_brokers

    # AdminRackAwareTest.testReplicaAssignment (2.8.2), the table in AdminUtils' comment.
    assert assign_replicas_to_brokers(brokers(range(5)), 10, 3, 0) == {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
        5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2]}
    # One broker: every partition on it, whatever the random start.
    assert assign_replicas_to_brokers(brokers([3]), 3, 1) == {0: [3], 1: [3], 2: [3]}


def test_assignment_with_a_pinned_random():
    from pk.engine.replica_assignment import assign_replicas_to_brokers

    rng = FixedRandom(3, 1)  # start index 3, replica shift 1
    # By hand: leader index (p + 3) % 5; follower j at (leader + 1 + (shift + j) % 4) % 5, the
    # shift growing by one at p = 5. Brokers are addressed by index into the sorted ids.
    assert assign_replicas_to_brokers(brokers([1, 2, 5, 7, 9]), 6, 3, rng=rng) == {
        0: [7, 1, 2], 1: [9, 2, 5], 2: [1, 5, 7], 3: [2, 7, 9], 4: [5, 9, 1], 5: [7, 2, 5]}
    assert rng.bounds == [5, 5]


def test_java_random_picks_what_kafka_would():
    from pk.engine.javacompat import JavaRandom
    from pk.engine.replica_assignment import assign_replicas_to_brokers

    # java.util.Random(42).nextInt(3) twice gives 2, 0: start index 2, shift 0.
    r = JavaRandom(42)
    assert (r.next_int(3), r.next_int(3)) == (2, 0)
    assert assign_replicas_to_brokers(brokers(range(3)), 4, 2, rng=JavaRandom(42)) == {
        0: [2, 0], 1: [0, 1], 2: [1, 2], 3: [2, 1]}


def test_java_random_against_the_jvm(tmp_path):
    from pk.commands.backends.zookeeper import JavaRandom

    if shutil.which("java") is None:
        pytest.skip("no java")
    src = tmp_path / "Rand.java"
    src.write_text("public class Rand { public static void main(String[] a) {\n"
                   "  java.util.Random r = new java.util.Random(Long.parseLong(a[0]));\n"
                   "  int[] b = {1, 2, 3, 5, 7, 8, 1000, 1 << 30, Integer.MAX_VALUE, 1610612736};\n"
                   "  StringBuilder s = new StringBuilder();\n"
                   "  for (int i = 0; i < 50; i++) s.append(r.nextInt(b[i % b.length])).append(' ');\n"
                   "  System.out.println(s.toString().trim()); } }\n")
    bounds = [1, 2, 3, 5, 7, 8, 1000, 1 << 30, 2**31 - 1, 1610612736]
    for seed in (0, 42, -7, 123456789012):
        proc = subprocess.run(["java", str(src), str(seed)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        r = JavaRandom(seed)
        assert proc.stdout.split() == [str(r.next_int(bounds[i % 10])) for i in range(50)]


def test_rack_aware_assignment():
    from pk.engine.replica_assignment import assign_replicas_to_brokers, rack_alternated_broker_list

    # AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers (2.8.2).
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated_broker_list(racks) == [0, 3, 1, 5, 4, 2]
    assert rack_alternated_broker_list({k: v for k, v in racks.items() if k != 5}) == [0, 3, 1, 4, 2]
    assert assign_replicas_to_brokers(brokers(range(6), racks), 7, 3, 0, 0) == {
        0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3], 6: [0, 4, 2]}
    # By hand: racks a={0,1}, b={2,3} alternate as [0,2,1,3]; start 1, shift 0; the shift
    # (times the 2 racks) grows at p = 4. Each partition gets both racks.
    two = {0: "a", 1: "a", 2: "b", 3: "b"}
    assert assign_replicas_to_brokers(brokers(range(4), two), 5, 2, rng=FixedRandom(1, 0)) == {
        0: [2, 1], 1: [1, 3], 2: [3, 0], 3: [0, 2], 4: [2, 0]}
    # More replicas than racks: once every rack has one, any broker without one may follow.
    assert assign_replicas_to_brokers(brokers(range(4), two), 1, 3, rng=FixedRandom(1, 0)) == {0: [2, 1, 3]}


def test_create_uses_the_backends_random(cluster):
    from pk.commands import topics_zk
    from pk.commands.topics import TopicOptions
    from pk.commands.backends.zookeeper import JavaRandom, ZkBackend

    for broker in (1, 2, 5, 7, 9):
        cluster.register_broker(broker)
    lines: list[str] = []
    backend = ZkBackend(cluster.connect, rng=FixedRandom(3, 1))
    try:
        topics_zk.run(backend, TopicOptions(create=True, topic="pinned", partitions=6, replication_factor=3,
                                            zookeeper=cluster.connect), lines.append)
    finally:
        backend.close()
    assert lines == ["Created topic pinned."]
    assert cluster.get("/brokers/topics/pinned") == (
        b'{"partitions":{"0":[7,1,2],"1":[9,2,5],"2":[1,5,7],"3":[2,7,9],"4":[5,9,1],"5":[7,2,5]},'
        b'"adding_replicas":{},"removing_replicas":{},"version":3}')
    backend = ZkBackend(cluster.connect, rng=JavaRandom(42))
    try:
        backend.create_topic("seeded", 4, 2, None, {})
    finally:
        backend.close()
    # Random(42) over 5 brokers: start index 0, shift 3, so the follower sits 4 places on.
    assert json.loads(cluster.get("/brokers/topics/seeded"))["partitions"] == {
        "0": [1, 9], "1": [2, 1], "2": [5, 2], "3": [7, 5]}


def test_rack_aware_create(topics, cluster):
    for broker, rack in ((0, "r1"), (1, "r2"), (2, "r3")):
        cluster.register_broker(broker, rack)
    ok(topics("--create", "--topic", "racked", "--partitions", "6", "--replication-factor", "3"))
    rack_of = {0: "r1", 1: "r2", 2: "r3"}
    parts = json.loads(cluster.get("/brokers/topics/racked"))["partitions"]
    assert len(parts) == 6 and all({rack_of[b] for b in r} == {"r1", "r2", "r3"} for r in parts.values())
    leaders = [parts[str(p)][0] for p in range(6)]
    assert leaders[3:] == leaders[:3] and sorted(leaders[:3]) == [0, 1, 2]  # round robin


def test_partial_rack_information(topics, cluster):
    cluster.register_broker(0, "r1")
    cluster.register_broker(1)
    proc = topics("--create", "--topic", "t", "--partitions", "2", "--replication-factor", "2")
    fails(proc, ERR + "Not all brokers have rack information. Add --disable-rack-aware in command line to make "
                      "replica assignment without rack information.")
    assert not cluster.client.exists("/brokers/topics/t") and not cluster.client.exists("/config/topics/t")
    assert ok(topics("--create", "--topic", "t", "--partitions", "2", "--replication-factor", "2",
                     "--disable-rack-aware", "--force")) == "Created topic t.\n"
    assert sorted(sorted(r) for r in json.loads(cluster.get("/brokers/topics/t"))["partitions"].values()) == [
        [0, 1], [0, 1]]


# --------------------------------------------------------------------------- alter
def test_alter_partitions(topics, cluster):
    for broker in range(4):
        cluster.register_broker(broker)
    ok(topics("--create", "--topic", "grow", "--replica-assignment", "1:2"))
    # AddPartitionsTest.testReplicaPlacementPartialServers (2.8.2): the start index is the first
    # broker >= partition 0's leader, and serves as the fixed shift too.
    assert ok(topics("--alter", "--topic", "grow", "--partitions", "3")) == ADD_PARTITIONS
    assert cluster.get("/brokers/topics/grow") == (
        b'{"partitions":{"0":[1,2],"1":[2,0],"2":[3,1]},"adding_replicas":{},"removing_replicas":{},"version":3}')
    fails(topics("--alter", "--topic", "grow", "--partitions", "3"),
          ERR + "The number of partitions for a topic can only be increased. Topic grow currently has 3 partitions, "
                "3 would not be an increase.")
    # A manual assignment: the entries past the current count are the new partitions.
    assert ok(topics("--alter", "--topic", "grow", "--partitions", "5", "--replica-assignment",
                     "9:8,9:8,9:8,0:3,3:0")) == ADD_PARTITIONS
    assert json.loads(cluster.get("/brokers/topics/grow"))["partitions"] == {
        "0": [1, 2], "1": [2, 0], "2": [3, 1], "3": [0, 3], "4": [3, 0]}
    proc = topics("--alter", "--topic", "grow", "--partitions", "6", "--replica-assignment", "0:1,0:1,0:1,0:1,0:1,7:1")
    assert proc.out == ADD_PARTITIONS.splitlines(keepends=True)[0]
    fails(proc, ERR + "Some brokers specified for partition id 5 are not available. Specified brokers: 7, 1, "
                      "available brokers: 0, 1, 2, 3.")
    fails(topics("--alter", "--topic", "grow", "--partitions", "6", "--replica-assignment", "0,0,0,0,0,1"),
          ERR + "Inconsistent replication factor between partitions, partition 0 has 2 while partitions [5] have "
                "replication factors [1], respectively.")
    # Without --partitions or configs the ZooKeeper tool does nothing (3.7 requires --partitions).
    assert ok(topics("--alter", "--topic", "grow")) == ""


def test_alter_partitions_keeps_topic_id_and_reassignments(topics, cluster):
    cluster.register_broker(0)
    cluster.register_broker(1)
    # A topic the 2.8 controller has given an id, in the middle of a reassignment.
    cluster.client.create("/brokers/topics/idd", b'{"version":3,"partitions":{"0":[0,1]},"adding_replicas":{"0":[1]},'
                                                 b'"removing_replicas":{},"topic_id":"s9UhFHy0TMiuDUDv9JIR0A"}',
                          makepath=True)
    line = ok(topics("--describe", "--topic", "idd")).splitlines()[0]
    assert line == "Topic: idd\tTopicId: s9UhFHy0TMiuDUDv9JIR0A\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: "
    ok(topics("--alter", "--topic", "idd", "--partitions", "2"))
    assert cluster.get("/brokers/topics/idd") == (
        b'{"partitions":{"0":[0,1],"1":[1,0]},"topic_id":"s9UhFHy0TMiuDUDv9JIR0A","adding_replicas":{"0":[1]},'
        b'"removing_replicas":{},"version":3}')


def test_alter_configs(topics, cluster):
    cluster.register_broker(0)
    ok(topics("--create", "--topic", "c", "--partitions", "1", "--replication-factor", "1",
              "--config", "compression.type=gzip", "--config", "segment.ms=100000", "--config", "preallocate=true"))
    out = ok(topics("--alter", "--topic", "c", "--config", "retention.bytes=1000", "--config", "flush.ms=1000",
                    "--config", "compression.type=lz4", "--delete-config", "preallocate"))
    assert out == ALTER_CONFIG + "Updated config for topic c.\n"
    assert cluster.get("/config/topics/c") == (
        b'{"version":1,"config":{"compression.type":"lz4","flush.ms":"1000","segment.ms":"100000",'
        b'"retention.bytes":"1000"}}')
    assert cluster.client.get_children("/config/changes") == ["config_change_0000000000"]
    assert cluster.get("/config/changes/config_change_0000000000") == b'{"version":2,"entity_path":"topics/c"}'
    assert ok(topics("--describe", "--topic", "c")).splitlines()[0] == (
        "Topic: c\tPartitionCount: 1\tReplicationFactor: 1\t"
        "Configs: compression.type=lz4,flush.ms=1000,segment.ms=100000,retention.bytes=1000")  # as 2.8.2 prints
    # Configs and partitions in one go: the config part first, then the partitions, per topic.
    out = ok(topics("--alter", "--topic", "c", "--delete-config", "flush.ms", "--partitions", "2"))
    assert out == ALTER_CONFIG + "Updated config for topic c.\n" + ADD_PARTITIONS
    assert sorted(cluster.client.get_children("/config/changes")) == [
        "config_change_0000000000", "config_change_0000000001"]
    # 2.8's config rules: names added after 2.8 are unknown; message.format.version is 2.8's.
    fails(topics("--alter", "--topic", "c", "--config", "remote.storage.enable=true"),
          ERR + "Unknown topic config name: remote.storage.enable")
    fails(topics("--alter", "--topic", "c", "--delete-config", "nope"), ERR + "Unknown topic config name: nope")
    fails(topics("--alter", "--topic", "c", "--config", "message.format.version=3.0"),
          ERR + "Invalid value 3.0 for configuration message.format.version: Version `3.0` is not a valid version")
    fails(topics("--alter", "--topic", "c", "--config", "min.insync.replicas=0"),
          ERR + "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1")
    out = ok(topics("--alter", "--topic", "c", "--config", "message.format.version=2.8"))
    assert out == ("WARNING: The configuration message.format.version=2.8 is specified. This configuration will be "
                   "ignored if the version is newer than the inter.broker.protocol.version specified in the broker.\n"
                   + ALTER_CONFIG + "Updated config for topic c.\n")
    assert len(cluster.client.get_children("/config/changes")) == 3


# --------------------------------------------------------------------------- describe
def test_describe_states_and_report_flags(topics, cluster):
    for broker in (0, 1, 2):
        cluster.register_broker(broker)
    ok(topics("--create", "--topic", "r", "--replica-assignment", "0:1,1:2,2:0,0:2"))
    cluster.set_state("r", 0, 0, [0, 1])
    cluster.set_state("r", 1, 1, [1])     # under-replicated
    cluster.set_state("r", 2, -1, [])     # leader -1: none
    cluster.set_state("r", 3, 5, [5])     # led by a broker that is not registered
    assert ok(topics("--describe", "--topic", "r")) == (
        "Topic: r\tPartitionCount: 4\tReplicationFactor: 2\tConfigs: \n"
        "\tTopic: r\tPartition: 0\tLeader: 0\tReplicas: 0,1\tIsr: 0,1\n"
        "\tTopic: r\tPartition: 1\tLeader: 1\tReplicas: 1,2\tIsr: 1\n"
        "\tTopic: r\tPartition: 2\tLeader: none\tReplicas: 2,0\tIsr: \n"
        "\tTopic: r\tPartition: 3\tLeader: 5\tReplicas: 0,2\tIsr: 5\n")
    assert ok(topics("--describe", "--under-replicated-partitions")) == (
        "\tTopic: r\tPartition: 1\tLeader: 1\tReplicas: 1,2\tIsr: 1\n"
        "\tTopic: r\tPartition: 2\tLeader: none\tReplicas: 2,0\tIsr: \n"
        "\tTopic: r\tPartition: 3\tLeader: 5\tReplicas: 0,2\tIsr: 5\n")
    assert ok(topics("--describe", "--unavailable-partitions")) == (
        "\tTopic: r\tPartition: 2\tLeader: none\tReplicas: 2,0\tIsr: \n"
        "\tTopic: r\tPartition: 3\tLeader: 5\tReplicas: 0,2\tIsr: 5\n")
    ok(topics("--create", "--topic", "o", "--replica-assignment", "0", "--config", "retention.ms=5"))
    assert ok(topics("--describe", "--topics-with-overrides")) == (
        "Topic: o\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: retention.ms=5\n")
    # Marked for deletion: both kinds of line say so.
    ok(topics("--delete", "--topic", "o"))
    assert ok(topics("--describe", "--topic", "o")) == (
        "Topic: o\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: retention.ms=5\tMarkedForDeletion: true\n"
        "\tTopic: o\tPartition: 0\tLeader: none\tReplicas: 0\tIsr: \tMarkedForDeletion: true\n")


def test_list_and_selection(topics, cluster):
    assert ok(topics("--list")) == ""  # one println per topic: nothing at all
    assert ok(topics("--describe")) == ""
    for name in ("b", "a", "__consumer_offsets"):
        ok(topics("--create", "--topic", name, "--replica-assignment", "0"))
    assert ok(topics("--list")) == "__consumer_offsets\na\nb\n"
    assert ok(topics("--list", "--exclude-internal")) == "a\nb\n"
    assert ok(topics("--list", "--topic", "a,b")) == "a\nb\n"
    out = ok(topics("--describe", "--exclude-internal"))
    assert [l.split("\t")[0] for l in out.splitlines() if l.startswith("Topic:")] == ["Topic: a", "Topic: b"]
    fails(topics("--describe", "--topic", "a("), ERR + "a( is an invalid regex.")


# --------------------------------------------------------------------------- delete and internal topics
def test_delete_marks_topics(topics, cluster):
    for name in ("del.a", "delxa", "keep"):
        ok(topics("--create", "--topic", name, "--replica-assignment", "0"))
    # --topic is a regex: del.a matches both del.a and delxa.
    assert ok(topics("--delete", "--topic", "del.a")) == (
        "Topic del.a is marked for deletion.\n" + MARKED + "Topic delxa is marked for deletion.\n" + MARKED)
    assert sorted(cluster.client.get_children("/admin/delete_topics")) == ["del.a", "delxa"]
    data, stat = cluster.client.get("/admin/delete_topics/del.a")
    assert not data and stat.dataLength == 0
    # Marking deletes nothing: that is the controller's job.
    assert cluster.client.exists("/brokers/topics/del.a") and cluster.client.exists("/config/topics/del.a")
    assert ok(topics("--list")) == "del.a - marked for deletion\ndelxa - marked for deletion\nkeep\n"


def test_internal_topics(topics, cluster):
    # 2.8's ZooKeeper path lets anyone create __consumer_offsets; it refuses the rest.
    ok(topics("--create", "--topic", "__consumer_offsets", "--replica-assignment", "0,0"))
    fails(topics("--delete", "--topic", "__consumer_offsets"),
          ERR + "Topic __consumer_offsets is a kafka internal topic and is not allowed to be marked for deletion.")
    assert not cluster.client.exists("/admin/delete_topics/__consumer_offsets")
    proc = topics("--alter", "--topic", "__consumer_offsets", "--partitions", "3")
    assert proc.out == ""
    fails(proc, ERR + "The number of partitions for the internal topic __consumer_offsets cannot be changed.")
    # Configs of an internal topic may be altered.
    assert ok(topics("--alter", "--topic", "__consumer_offsets", "--config", "cleanup.policy=compact")) == (
        ALTER_CONFIG + "Updated config for topic __consumer_offsets.\n")


# --------------------------------------------------------------------------- errors
def test_create_errors(topics, cluster):
    cluster.register_broker(0)
    ok(topics("--create", "--topic", "metrics_a", "--partitions", "1", "--replication-factor", "1"))
    cases = [
        (["--topic", "x", "--partitions", "1", "--replication-factor", "3"],
         "Replication factor: 3 larger than available brokers: 1."),
        # The broker check comes before the existence and name checks.
        (["--topic", "metrics_a", "--partitions", "1", "--replication-factor", "2"],
         "Replication factor: 2 larger than available brokers: 1."),
        (["--topic", "x", "--partitions", "0", "--replication-factor", "1"], "Number of partitions must be larger than 0."),
        (["--topic", "x", "--partitions", "1", "--replication-factor", "0"], "Replication factor must be larger than 0."),
        (["--topic", "metrics_a", "--partitions", "1", "--replication-factor", "1"], "Topic 'metrics_a' already exists."),
        (["--topic", "metrics.a", "--partitions", "1", "--replication-factor", "1"],
         "Topic 'metrics.a' collides with existing topics: metrics_a"),
        (["--topic", "", "--partitions", "1", "--replication-factor", "1"], "Topic name is illegal, it can't be empty"),
        (["--topic", "..", "--partitions", "1", "--replication-factor", "1"], 'Topic name cannot be "." or ".."'),
        (["--topic", "a b", "--partitions", "1", "--replication-factor", "1"],
         "Topic name \"a b\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'"),
        (["--topic", "x" * 250, "--partitions", "1", "--replication-factor", "1"],
         f"Topic name is illegal, it can't be longer than 249 characters, topic name: {'x' * 250}"),
        (["--topic", "x", "--replica-assignment", "0:0"], "Partition replica lists may not contain duplicate entries: 0"),
        (["--topic", "x", "--replica-assignment", "0,y"], 'For input string: "y"'),
        (["--topic", "x", "--replica-assignment", "0", "--config", "nope=1"], "Unknown topic config name: nope"),
        (["--topic", "x", "--replica-assignment", "0", "--config", "retention.ms"],
         'requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".'),
    ]
    for args, message in cases:
        fails(topics("--create", *args), ERR + message)
    assert cluster.client.get_children("/brokers/topics") == ["metrics_a"]
    assert cluster.client.get_children("/config/topics") == ["metrics_a"]
    # --if-not-exists: silent (after the WARNING the name earns).
    assert ok(topics("--create", "--topic", "metrics_a", "--partitions", "1", "--replication-factor", "1",
                     "--if-not-exists")) == WARNING


def test_not_found_and_if_exists(topics, cluster):
    for args in (["--describe"], ["--delete"], ["--alter", "--partitions", "2"], ["--alter", "--config", "flush.ms=1"]):
        fails(topics(*args, "--topic", "nope"), ERR + "Topic 'nope' does not exist as expected")
        assert ok(topics(*args, "--topic", "nope", "--if-exists")) == ""


@pytest.mark.parametrize("args, message", [
    (["--list", "--describe"], "Command must include exactly one action: --list, --describe, --create, --alter or --delete"),
    (["--list", "--bootstrap-server", "localhost:9092"],
     'Exception in thread "main" java.lang.IllegalArgumentException: '
     "Only one of --bootstrap-server or --zookeeper must be specified"),
    (["--create", "--topic", "t"], 'Missing required argument "[partitions]"'),
    (["--create", "--topic", "t", "--partitions", "1"], 'Missing required argument "[replication-factor]"'),
    (["--describe", "--if-exists"], 'Missing required argument "[topic]"'),
    (["--delete"], 'Missing required argument "[topic]"'),
    (["--describe", "--topic-id", "AAAAAAAAAAAAAAAAAAAAAQ"], "topic-id is not a recognized option"),
    (["--describe", "--under-min-isr-partitions"],
     'Option "[under-min-isr-partitions]" can\'t be used with option "[zookeeper]"'),
    (["--describe", "--at-min-isr-partitions"], 'Option "[at-min-isr-partitions]" can\'t be used with option "[zookeeper]"'),
    (["--describe", "--under-replicated-partitions", "--unavailable-partitions"],
     'Option "[under-replicated-partitions]" can\'t be used with option "[unavailable-partitions]"'),
    (["--create", "--topic", "t", "--replica-assignment", "0", "--partitions", "1"],
     'Option "[replica-assignment]" can\'t be used with option "[partitions]"'),
    (["--list", "--delete-config", "x"], 'Option "[delete-config]" can\'t be used with option "[list]"'),
])
def test_usage_errors(pk, args, message):
    # Checked before connecting: the address is never used.
    proc = pk("pk-topics", "--zookeeper", "127.0.0.1:1", *args)
    assert proc.returncode == 1 and proc.out == "" and proc.err == message + "\n"


@pytest.mark.parametrize("option", [["--force"], ["--disable-rack-aware"]])
def test_zookeeper_only_options_need_zookeeper(pk, option):
    name = option[0][2:]
    proc = pk("pk-topics", "--list", *option)
    assert proc.returncode == 1 and proc.out == "" and proc.err == f"{name} is not a recognized option\n"


def test_unreachable_zookeeper_fails_fast(pk):
    port = free_port()  # nothing listens there
    start = time.monotonic()
    proc = pk("pk-topics", "--zookeeper", f"127.0.0.1:{port}", "--list", timeout=30)
    assert time.monotonic() - start < 10
    assert proc.returncode == 1 and proc.out == "" and proc.err == TIMEOUT_LINE + "\n"


def test_missing_chroot(pk, zookeeper):
    start = time.monotonic()
    proc = pk("pk-topics", "--zookeeper", f"{zookeeper}/no/such/chroot", "--create", "--topic", "t",
              "--partitions", "1", "--replication-factor", "1")
    assert time.monotonic() - start < 10
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == ERR + f"The chroot /no/such/chroot of --zookeeper {zookeeper}/no/such/chroot does not exist\n"
    client = kazoo_client.KazooClient(hosts=zookeeper)
    client.start(timeout=10)
    try:
        assert client.exists("/no") is None  # nothing was created
    finally:
        client.stop()
        client.close()


def test_malformed_znodes(topics, cluster):
    cluster.client.create("/brokers/ids/0", b"not json", makepath=True, ephemeral=True)
    fails(topics("--create", "--topic", "t", "--partitions", "1", "--replication-factor", "1"),
          ERR + "Failed to parse ZooKeeper registration for broker 0: not json")
    # describe reads the brokers too, before the topics.
    fails(topics("--describe"), ERR + "Failed to parse ZooKeeper registration for broker 0: not json")
    cluster.client.delete("/brokers/ids/0")
    cluster.client.create("/brokers/topics/odd", b'{"partitions":{"0":5}}', makepath=True)
    assert ok(topics("--list")) == "odd\n"
    fails(topics("--describe", "--topic", "odd", "--exclude-internal"),
          ERR + 'Invalid replica assignment in /brokers/topics/odd: {"partitions":{"0":5}}')
    # A topic znode without data (e.g. made by hand before the assignment) describes as missing.
    cluster.client.create("/brokers/topics/empty")
    assert ok(topics("--describe", "--topic", "empty")) == "Topic empty doesn't exist!\n"
