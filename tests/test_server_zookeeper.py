"""pk-server-start with zookeeper.connect: a real ZooKeeper (the `zookeeper` fixture), a real
broker subprocess, the real pk-topics --zookeeper and real clients
(Kafka 2.8.2's ZkData.scala for the JSON the broker and its controller write).

Each test has its own chroot, so that brokers of different tests never meet.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import time
import warnings

import pytest

from conftest import BrokerProcess, free_port
from waits import wait_for

kazoo_client = pytest.importorskip("kazoo.client")

_chroots = itertools.count()
DESCRIBE = ("Topic: first_topic\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: \n"
            + "".join(f"\tTopic: first_topic\tPartition: {p}\tLeader: 0\tReplicas: 0\tIsr: 0\n" for p in range(3)))


class ZkCluster:
    """A chroot of the shared ZooKeeper, a kazoo client rooted there, and the brokers started in it."""

    def __init__(self, server: str, tmp_path):
        self.connect = f"{server}/pk_server_{os.getpid()}_{next(_chroots)}"
        self.tmp_path = tmp_path
        self.zk = kazoo_client.KazooClient(hosts=self.connect)
        with warnings.catch_warnings():  # the chroot does not exist yet: the broker creates it
            warnings.simplefilter("ignore")
            self.zk.start(timeout=10)
        self.brokers: list[BrokerProcess] = []

    def broker(self, broker_id: int = 0, **overrides) -> BrokerProcess:
        data_dir = str(self.tmp_path / f"broker{broker_id}" / "data")
        os.makedirs(os.path.dirname(data_dir), exist_ok=True)
        b = BrokerProcess(data_dir, {"zookeeper.connect": self.connect, "broker.id": str(broker_id), "node.id": str(broker_id),
                                     **{k.replace("_", "."): v for k, v in overrides.items()}})
        self.brokers.append(b)
        b.start()
        # Registered once listening? Registration follows the bind by a few milliseconds, and the
        # election follows the registration: wait for both, so that the first broker is the
        # controller even on a loaded machine.
        wait_for(lambda: self.zk.exists(f"/brokers/ids/{broker_id}") and self.zk.exists("/controller"),
                 what=f"broker {broker_id} registration and a controller")
        return b

    def get(self, path: str):
        try:
            return self.zk.get(path)[0]
        except kazoo_client.NoNodeError:
            return None

    def json(self, path: str):
        data = self.get(path)
        return None if data is None else json.loads(data)

    def state(self, topic: str, p: int):
        return self.json(f"/brokers/topics/{topic}/partitions/{p}/state")

    def close(self) -> None:
        for b in self.brokers:
            b.stop()
        try:
            self.zk.delete("/", recursive=True)
        except Exception:
            pass
        self.zk.stop()
        self.zk.close()


@pytest.fixture
def cluster(zookeeper, tmp_path):
    c = ZkCluster(zookeeper, tmp_path)
    try:
        yield c
    finally:
        c.close()


def topics(pk, cluster, *args, **kw):
    return pk("pk-topics", "--zookeeper", cluster.connect, *args, **kw)


def metadata_partitions(bootstrap: str, topic: str) -> int | None:
    """How many partitions the broker serves for `topic` (Metadata through confluent-kafka)."""
    from confluent_kafka.admin import AdminClient

    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic=topic, timeout=10)
    t = md.topics.get(topic)
    return None if t is None or t.error is not None else len(t.partitions)


# --------------------------------------------------------------------------- the seed transcript
def test_seed_transcript(pk, cluster):
    b = cluster.broker()
    proc = topics(pk, cluster, "--topic", "first_topic", "--create", "--partitions", "3", "--replication-factor", "1")
    assert proc.returncode == 0, proc.err
    assert proc.out.endswith("Created topic first_topic.\n")
    assert topics(pk, cluster, "--list").out == "first_topic\n"
    wait_for(lambda: all(cluster.state("first_topic", p) for p in range(3)), what="partition states")
    proc = topics(pk, cluster, "--topic", "first_topic", "--describe")
    assert proc.returncode == 0, proc.err
    # The controller gives a topic created through ZooKeeper its id before its partition states,
    # as Kafka 2.8's does (test_oracle_replication_reassign: 2.8's describe then lists it); the
    # seed transcript predates topic ids.
    topic_id = cluster.json("/brokers/topics/first_topic")["topic_id"]
    assert proc.out == DESCRIBE.replace("first_topic\tPartitionCount", f"first_topic\tTopicId: {topic_id}\tPartitionCount", 1)

    lines = ["Hello Meriem", "awsome course!", "learning kafka", "another message"]
    wait_for(lambda: metadata_partitions(b.bootstrap, "first_topic") == 3, what="the topic on the broker")
    proc = pk("pk-console-producer", "--broker-list", b.bootstrap, "--topic", "first_topic",
              input="".join(f"{line}\n" for line in lines))
    assert proc.returncode == 0, proc.err
    proc = pk("pk-console-consumer", "--bootstrap-server", b.bootstrap, "--topic", "first_topic",
              "--from-beginning", "--max-messages", "4", "--timeout-ms", "20000")
    assert proc.returncode == 0, proc.err
    assert sorted(proc.out.splitlines()) == sorted(lines)  # 3 partitions: order within each only

    proc = topics(pk, cluster, "--topic", "second_topic", "--create", "--partitions", "1", "--replication-factor", "1")
    assert proc.returncode == 0, proc.err
    wait_for(lambda: metadata_partitions(b.bootstrap, "second_topic") == 1, what="second_topic on the broker")
    proc = topics(pk, cluster, "--topic", "second_topic", "--delete")
    assert proc.out == ("Topic second_topic is marked for deletion.\n"
                        "Note: This will have no impact if delete.topic.enable is not set to true.\n")
    # (the console consumer's group had FindCoordinator create __consumer_offsets in ZooKeeper)
    wait_for(lambda: topics(pk, cluster, "--list").out == "__consumer_offsets\nfirst_topic\n",
             what="the deletion to complete")
    assert cluster.get("/brokers/topics/second_topic") is None
    assert cluster.get("/config/topics/second_topic") is None
    assert cluster.get("/admin/delete_topics/second_topic") is None
    # (Metadata from confluent-kafka would auto-create it again, as on Kafka.)
    assert "second_topic" not in pk("pk-topics", "--bootstrap-server", b.bootstrap, "--list").out
    assert not any(name.startswith("second_topic-") and not name.endswith("-delete") for name in os.listdir(b.data_dir))


# --------------------------------------------------------------------------- what the broker writes
def test_registration_controller_and_cluster_id(cluster):
    b = cluster.broker(0)
    data, stat = cluster.zk.get("/brokers/ids/0")
    assert stat.ephemeralOwner != 0
    text = data.decode()
    js = json.loads(text)
    stamp = js["timestamp"]
    assert isinstance(stamp, str) and abs(int(stamp) / 1000 - time.time()) < 60
    # BrokerIdZNode.encode (v5): a Scala mutable.HashMap's order, as Kafka 2.8 writes it.
    assert text == ('{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
                    f'"endpoints":["PLAINTEXT://{b.bootstrap}"],"jmx_port":-1,"port":{b.port},'
                    f'"host":"127.0.0.1","version":5,"timestamp":"{stamp}"}}')
    controller = cluster.get("/controller").decode()
    ts = json.loads(controller)["timestamp"]
    assert controller == f'{{"version":1,"brokerid":0,"timestamp":"{ts}"}}'
    assert cluster.zk.get("/controller")[1].ephemeralOwner == stat.ephemeralOwner
    assert cluster.get("/controller_epoch") == b"1"
    cluster_id = cluster.json("/cluster/id")
    assert list(cluster_id) == ["version", "id"] and cluster_id["version"] == "1" and len(cluster_id["id"]) == 22
    with open(os.path.join(b.data_dir, "meta.properties")) as f:
        assert f"cluster.id={cluster_id['id']}\n" in f.read()
    for path in ("/consumers", "/brokers/seqid", "/config/changes", "/admin/delete_topics", "/config/clients",
                 "/isr_change_notification", "/latest_producer_id_block", "/log_dir_event_notification"):
        assert cluster.zk.exists(path), path
    # The broker's Metadata and DescribeCluster carry the same cluster id.
    from confluent_kafka.admin import AdminClient

    assert AdminClient({"bootstrap.servers": b.bootstrap}).describe_cluster().result(10).cluster_id == cluster_id["id"]


def test_second_broker_is_not_controller_and_takes_over(cluster):
    b0 = cluster.broker(0)
    cluster.broker(1)
    assert json.loads(cluster.get("/controller"))["brokerid"] == 0
    assert sorted(cluster.zk.get_children("/brokers/ids")) == ["0", "1"]
    b0.stop()
    wait_for(lambda: cluster.get("/controller") and json.loads(cluster.get("/controller"))["brokerid"] == 1,
             what="broker 1 to become controller")
    assert cluster.get("/controller_epoch") == b"2"


def test_broker_znode_goes_away_on_sigterm(cluster):
    b = cluster.broker()
    assert cluster.zk.exists("/brokers/ids/0")
    assert b.stop(signal.SIGTERM) == 0
    assert cluster.zk.exists("/brokers/ids/0") is None
    assert cluster.zk.exists("/controller") is None
    # Started again on the same data directory: the same cluster id, registered again.
    b.start()
    wait_for(lambda: cluster.zk.exists("/brokers/ids/0"), what="registration after restart")


def test_state_znodes_and_foreign_replicas(pk, cluster):
    """A legacy tool's assignment naming brokers that are not there: the engine keeps the
    replicas as listed, and this broker leads where it is the first live replica."""
    b = cluster.broker(0)
    cluster.zk.create("/config/topics/legacy", b'{"version":1,"config":{"retention.ms":"1000000"}}', makepath=True)
    cluster.zk.create("/brokers/topics/legacy", b'{"version":1,"partitions":{"0":[0,5],"1":[5,0],"2":[5,6]}}',
                      makepath=True)
    wait_for(lambda: cluster.state("legacy", 1), what="state of legacy-1")
    assert cluster.get("/brokers/topics/legacy/partitions/0/state") == \
        b'{"controller_epoch":1,"leader":0,"version":1,"leader_epoch":0,"isr":[0]}'
    assert cluster.state("legacy", 1)["leader"] == 0
    assert cluster.state("legacy", 2) is None  # no live replica: no state, as in Kafka
    proc = pk("pk-topics", "--bootstrap-server", b.bootstrap, "--describe", "--topic", "legacy")
    assert proc.returncode == 0, proc.err
    assert "retention.ms=1000000" in proc.out and "PartitionCount: 3" in proc.out
    from pk.engine.engine import Engine

    with Engine(b.data_dir) as engine:
        meta = engine.topic("legacy")
        assert meta.assignment == {0: [0, 5], 1: [5, 0], 2: [5, 6]}
        assert meta.configs == {"retention.ms": "1000000"}


def test_partition_increase_and_config_change(pk, cluster):
    b = cluster.broker()
    assert topics(pk, cluster, "--create", "--topic", "grow", "--partitions", "2", "--replication-factor", "1").returncode == 0
    wait_for(lambda: metadata_partitions(b.bootstrap, "grow") == 2, what="grow on the broker")
    proc = topics(pk, cluster, "--alter", "--topic", "grow", "--partitions", "5")
    assert proc.returncode == 0, proc.err
    wait_for(lambda: metadata_partitions(b.bootstrap, "grow") == 5, what="the new partitions")
    wait_for(lambda: all(cluster.state("grow", p) for p in range(5)), what="states of the new partitions")
    assert "Leader: 0\tReplicas: 0\tIsr: 0" in topics(pk, cluster, "--describe", "--topic", "grow").out.splitlines()[5]
    proc = pk("pk-console-producer", "--bootstrap-server", b.bootstrap, "--topic", "grow",
              "--reader-property", "parse.key=true", input="k\tv\n")
    assert proc.returncode == 0, proc.err

    proc = topics(pk, cluster, "--alter", "--topic", "grow", "--config", "cleanup.policy=compact")
    assert proc.returncode == 0, proc.err

    def policy():
        out = pk("pk-topics", "--bootstrap-server", b.bootstrap, "--describe", "--topic", "grow").out
        return "cleanup.policy=compact" in out
    wait_for(policy, what="the config change on the broker")


def test_admin_api_changes_go_to_zookeeper(pk, cluster):
    """CreateTopics / CreatePartitions / DeleteTopics through the broker end up in ZooKeeper,
    where kafka-topics --zookeeper sees them."""
    from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

    b = cluster.broker()
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    admin.create_topics([NewTopic("via_admin", 2, 1, config={"retention.ms": "123456"})])["via_admin"].result(30)
    wait_for(lambda: cluster.get("/brokers/topics/via_admin"), what="the topic znode")
    assert json.loads(cluster.get("/brokers/topics/via_admin"))["partitions"] == {"0": [0], "1": [0]}
    assert cluster.json("/config/topics/via_admin") == {"version": 1, "config": {"retention.ms": "123456"}}
    wait_for(lambda: cluster.state("via_admin", 1), what="its states")
    assert "via_admin" in topics(pk, cluster, "--list").out.split()

    admin.create_partitions([NewPartitions("via_admin", 3)])["via_admin"].result(30)
    wait_for(lambda: len(json.loads(cluster.get("/brokers/topics/via_admin"))["partitions"]) == 3,
             what="the grown assignment")
    wait_for(lambda: cluster.state("via_admin", 2), what="the new partition's state")

    admin.delete_topics(["via_admin"])["via_admin"].result(30)
    wait_for(lambda: cluster.get("/brokers/topics/via_admin") is None, what="the topic znode to go")
    wait_for(lambda: cluster.get("/admin/delete_topics/via_admin") is None, what="the marker to go")
    assert cluster.get("/config/topics/via_admin") is None
    assert "__consumer_offsets" not in topics(pk, cluster, "--list").out  # (created by FindCoordinator only)


def test_metadata_creates_internal_topics_with_their_own_counts(cluster):
    """A Metadata request that may auto-create __transaction_state creates it as its
    coordinator does (Kafka 2.8's createInternalTopic): in ZooKeeper, with
    transaction.state.log.num.partitions partitions, not num.partitions."""
    from conftest import ProtocolClient

    b = cluster.broker(transaction_state_log_num_partitions="3")
    with ProtocolClient(b.bootstrap) as c:
        c.call(3, 9, {"topics": [{"name": "__transaction_state"}], "allow_auto_topic_creation": True,
                      "include_cluster_authorized_operations": False, "include_topic_authorized_operations": False})
    wait_for(lambda: cluster.get("/brokers/topics/__transaction_state"), what="the topic znode")
    assert sorted(json.loads(cluster.get("/brokers/topics/__transaction_state"))["partitions"]) == ["0", "1", "2"]
    wait_for(lambda: metadata_partitions(b.bootstrap, "__transaction_state") == 3, what="the broker to serve it")


def test_topics_created_while_down_are_taken_at_start(pk, cluster):
    b = cluster.broker()
    b.stop()
    wait_for(lambda: cluster.zk.exists("/brokers/ids/0") is None, what="the registration to go")
    cluster.zk.create("/brokers/topics/offline", b'{"version":2,"partitions":{"0":[0]},"adding_replicas":{},'
                      b'"removing_replicas":{}}', makepath=True)
    b.start()
    wait_for(lambda: cluster.state("offline", 0), what="the state of offline-0")
    assert metadata_partitions(b.bootstrap, "offline") == 1


# --------------------------------------------------------------------------- start-up failures
def test_unreachable_zookeeper_is_fatal(tmp_path):
    port = free_port()  # nothing listens there
    b = BrokerProcess(str(tmp_path / "data"), {"zookeeper.connect": f"127.0.0.1:{port}",
                                               "zookeeper.connection.timeout.ms": "1500"})
    with pytest.raises(RuntimeError, match="exited with 1"):
        b.start()
    log = b.log()
    assert "ERROR Fatal error during KafkaServer startup. Prepare to shutdown" in log
    assert ("kafka.zookeeper.ZooKeeperClientTimeoutException: Timed out waiting for connection while in "
            "state: CONNECTING") in log


def test_cluster_id_mismatch_is_fatal(cluster):
    b = cluster.broker()
    b.stop()
    cluster.zk.set("/cluster/id", b'{"version":"1","id":"AAAAAAAAAAAAAAAAAAAAAA"}')
    with pytest.raises(RuntimeError, match="exited with 1"):
        b.start()
    with open(os.path.join(b.data_dir, "meta.properties")) as f:
        stored = next(line.split("=", 1)[1].strip() for line in f if line.startswith("cluster.id="))
    assert (f"kafka.common.InconsistentClusterIdException: The Cluster ID AAAAAAAAAAAAAAAAAAAAAA doesn't match "
            f"stored clusterId Some({stored}) in meta.properties. The broker is trying to join the wrong "
            f"cluster. Configured zookeeper.connect may be wrong.") in b.log()
    assert cluster.zk.exists("/brokers/ids/0") is None
