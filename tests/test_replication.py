"""Replication across three pk-server-start brokers coordinated by a real ZooKeeper
(engine/broker/replication.py, zookeeper.py; docs/replication.md): replicated topics,
leaders and ISRs in Metadata and pk-topics, acks=all, failover with SIGKILL, a returning
broker catching up, min.insync.replicas, and the ISR shrinking."""

from __future__ import annotations

import json
import signal
import time

import pytest

from replication_cluster import ReplicationCluster, wait_for

pytest.importorskip("kazoo.client")
ck = pytest.importorskip("confluent_kafka")


@pytest.fixture
def cluster(zookeeper, tmp_path):
    with ReplicationCluster(zookeeper, tmp_path, 3) as c:
        c.start_all()
        yield c


def create(cluster, name, partitions=1, rf=3, config=None, broker=0):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": cluster.brokers[broker].bootstrap})
    admin.create_topics([NewTopic(name, partitions, rf, config=config or {})])[name].result(15)
    for p in range(partitions):
        cluster.wait_state(name, p, lambda s: len(s["isr"]) == rf)
    cluster.wait_applied(name, partitions)


def producer(cluster, **extra):
    return ck.Producer({"bootstrap.servers": cluster.bootstrap, "enable.idempotence": True, "acks": "all",
                        "linger.ms": 5, "message.timeout.ms": 60000, "retry.backoff.ms": 100,
                        "topic.metadata.refresh.interval.ms": 1000, **extra})


def produce(p, topic, values, partition=0):
    """Produce and flush; returns the values whose delivery was acknowledged."""
    acked, failed = [], []

    def done(err, msg):
        (failed if err else acked).append((msg.value(), err))
    for v in values:
        p.produce(topic, v, partition=partition, on_delivery=done)
        p.poll(0)
    p.flush(90)
    return [v for v, _ in acked], failed


def consume_all(cluster, topic, partition=0, expected=None, timeout=60):
    c = ck.Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": f"g-{time.monotonic_ns()}",
                     "enable.auto.commit": False, "auto.offset.reset": "earliest",
                     "topic.metadata.refresh.interval.ms": 1000})
    c.assign([ck.TopicPartition(topic, partition, 0)])
    out = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and (expected is None or len(out) < expected):
            m = c.poll(0.5)
            if m is None:
                if expected is None:
                    break
                continue
            if m.error():
                continue
            out.append(m.value())
    finally:
        c.close()
    return out


def test_replicated_topic_metadata_and_describe(pk, cluster):
    create(cluster, "rf3", partitions=3)
    md = cluster.metadata(1, "rf3")
    assert sorted(b["node_id"] for b in md["brokers"]) == [0, 1, 2]
    (topic,) = md["topics"]
    states = {p: cluster.state("rf3", p) for p in range(3)}
    for part in topic["partitions"]:
        state = states[part["partition_index"]]
        assert part["leader_id"] == state["leader"] == part["replica_nodes"][0]
        assert sorted(part["replica_nodes"]) == [0, 1, 2]
        assert sorted(part["isr_nodes"]) == [0, 1, 2]
    assert len({topic["partitions"][p]["leader_id"] for p in range(3)}) == 3  # spread over the brokers
    proc = pk("pk-topics", "--bootstrap-server", cluster.brokers[2].bootstrap, "--describe", "--topic", "rf3")
    assert proc.returncode == 0, proc.err
    lines = proc.out.splitlines()
    assert "ReplicationFactor: 3" in lines[0]
    for part in topic["partitions"]:
        replicas = ",".join(map(str, part["replica_nodes"]))
        isr = ",".join(map(str, part["isr_nodes"]))
        assert (f"\tTopic: rf3\tPartition: {part['partition_index']}\tLeader: {part['leader_id']}\t"
                f"Replicas: {replicas}\tIsr: {isr}") in proc.out
    proc = pk("pk-topics", "--zookeeper", cluster.connect, "--describe", "--topic", "rf3")
    assert proc.returncode == 0, proc.err
    assert "Isr: " in proc.out and proc.out.count("\tLeader: ") == 3
    _non_leader_refuses(cluster, topic["partitions"][0])


def _non_leader_refuses(cluster, part):
    """Produce, Fetch and ListOffsets on a follower: NOT_LEADER_OR_FOLLOWER, with the leader
    where the version carries it."""
    from conftest import ProtocolClient
    from pk.engine import records

    leader, epoch, p = part["leader_id"], part["leader_epoch"], part["partition_index"]
    follower = next(b for b in part["replica_nodes"] if b != leader)
    batch = records.encode_batch([(None, b"v", [], 1700000000000)])
    with ProtocolClient(cluster.brokers[follower].port) as client:
        answer = client.call(0, 12, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": "rf3", "partition_data": [{"index": p, "records": batch}]}]})
        (result,) = answer["responses"][0]["partition_responses"]
        assert result["error_code"] == 6  # NOT_LEADER_OR_FOLLOWER
        assert result["current_leader"] == {"leader_id": leader, "leader_epoch": epoch}
        assert [e["node_id"] for e in answer["node_endpoints"]] == [leader]
        assert answer["node_endpoints"][0]["port"] == cluster.brokers[leader].port
        answer = client.call(1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                                     "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": [
                                         {"topic": "rf3", "partitions": [{"partition": p, "fetch_offset": 0,
                                                                          "partition_max_bytes": 1 << 20}]}],
                                     "forgotten_topics_data": [], "rack_id": ""})
        assert answer["responses"][0]["partitions"][0]["error_code"] == 6
        answer = client.call(2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": "rf3", "partitions": [{"partition_index": p, "timestamp": -1}]}]})
        assert answer["topics"][0]["partitions"][0]["error_code"] == 6


def test_acks_all_survives_leader_kill_and_the_broker_rejoins(cluster):
    create(cluster, "fo")
    p = producer(cluster)
    first, failed = produce(p, "fo", [b"a%d" % i for i in range(500)])
    assert not failed and len(first) == 500
    leader = cluster.state("fo", 0)["leader"]
    for b in cluster.brokers:  # every replica has every record
        if b != leader:
            wait_for(lambda: cluster.metadata(b, "fo") is not None, what="metadata")
    cluster.kill(leader)
    killed_at = time.monotonic()
    state = cluster.wait_state("fo", 0, lambda s: s["leader"] not in (leader, -1))
    assert leader not in state["isr"]
    acked, failed = produce(p, "fo", [b"b0"])
    failover = time.monotonic() - killed_at
    assert acked == [b"b0"], failed
    more, failed = produce(p, "fo", [b"b%d" % i for i in range(1, 300)])
    assert not failed
    print(f"failover (leader kill -> first acks=all produce ok): {failover:.1f} s")
    values = consume_all(cluster, "fo", expected=800)
    assert values == first + acked + more  # every acknowledged record, exactly once, in order
    from pk.engine import checkpoint

    new_leader = state["leader"]
    path = f"{cluster.brokers[new_leader].data_dir}/replication-offset-checkpoint"
    wait_for(lambda: checkpoint.read(path).get(("fo", 0)) == 800, what="the HW checkpoint")

    cluster.start(leader)  # the old leader truncates, catches up and rejoins the ISR
    cluster.wait_state("fo", 0, lambda s: sorted(s["isr"]) == [0, 1, 2], timeout=30)
    p.flush(10)


def test_min_insync_replicas(cluster):
    create(cluster, "mi", config={"min.insync.replicas": "2"})
    state = cluster.state("mi", 0)
    others = [b for b in range(3) if b != state["leader"]]
    for b in others:
        cluster.kill(b)
    cluster.wait_state("mi", 0, lambda s: s["isr"] == [state["leader"]])
    strict = producer(cluster, **{"message.timeout.ms": 3000})
    acked, failed = produce(strict, "mi", [b"x"])
    assert not acked and failed
    assert failed[0][1].code() in (ck.KafkaError.NOT_ENOUGH_REPLICAS, ck.KafkaError._MSG_TIMED_OUT)
    loose = ck.Producer({"bootstrap.servers": cluster.brokers[state["leader"]].bootstrap, "acks": "1"})
    acked, failed = produce(loose, "mi", [b"y"])
    assert acked == [b"y"], failed
    from conftest import ProtocolClient
    from pk.engine import records

    batch = records.encode_batch([(None, b"z", [], 1700000000000)])
    with ProtocolClient(cluster.brokers[state["leader"]].port) as client:
        def send(acks):
            answer = client.call(0, 12, {"transactional_id": None, "acks": acks, "timeout_ms": 5000, "topic_data": [
                {"name": "mi", "partition_data": [{"index": 0, "records": batch}]}]})
            return answer["responses"][0]["partition_responses"][0]["error_code"]
        assert send(-1) == 19  # NOT_ENOUGH_REPLICAS, before the append
        assert send(1) == 0


def test_a_follower_kept_down_leaves_the_isr(pk, zookeeper, tmp_path):
    """The leader drops a follower that stopped fetching after replica.lag.time.max.ms (here
    well before ZooKeeper ends the stopped broker's session), keeping its leader epoch, and
    takes it back once it caught up."""
    with ReplicationCluster(zookeeper, tmp_path, 3, {"replica.lag.time.max.ms": "1500"}) as cluster:
        cluster.start_all()
        _follower_kept_down(pk, cluster)


def _follower_kept_down(pk, cluster):
    create(cluster, "lag")
    state = cluster.state("lag", 0)
    # A follower that is not the controller: librdkafka sends DescribeTopics, DescribeCluster and
    # DescribeConfigs to the controller, so pk-topics (through confluent-kafka) would wait out its
    # timeout on a frozen controller whatever the brokers do (Kafka's Java tools ask any broker).
    controller = json.loads(cluster.zk.get("/controller")[0])["brokerid"]
    follower = next(b for b in range(3) if b not in (state["leader"], controller))
    cluster.brokers[follower].proc.send_signal(signal.SIGSTOP)  # still registered, not fetching
    try:
        shrunk = cluster.wait_state("lag", 0, lambda s: follower not in s["isr"], timeout=20)
        assert shrunk["leader"] == state["leader"] and shrunk["leader_epoch"] == state["leader_epoch"]
        assert cluster.zk.exists(f"/brokers/ids/{follower}")  # the leader's doing, not the controller's
        leader = cluster.brokers[state["leader"]].bootstrap
        isr = ",".join(map(str, shrunk["isr"]))

        def under_replicated():
            proc = pk("pk-topics", "--bootstrap-server", leader, "--describe", "--under-replicated-partitions")
            assert proc.returncode == 0, proc.err
            return f"\tTopic: lag\tPartition: 0\tLeader: {state['leader']}\t" in proc.out \
                and f"\tIsr: {isr}" in proc.out
        wait_for(under_replicated, what="pk-topics to list the partition as under-replicated")
    finally:
        cluster.brokers[follower].proc.send_signal(signal.SIGCONT)
    cluster.wait_state("lag", 0, lambda s: follower in s["isr"], timeout=20)


def test_a_former_leader_truncates_its_unreplicated_tail(cluster):
    """KIP-101: records only the old leader had (acks=1, followers not fetching) are cut
    when it comes back as a follower of the new leader's log."""
    create(cluster, "tr")
    p = producer(cluster)
    kept, failed = produce(p, "tr", [b"k%d" % i for i in range(100)])
    assert not failed
    leader = cluster.state("tr", 0)["leader"]
    followers = [b for b in range(3) if b != leader]
    for b in followers:
        cluster.brokers[b].proc.send_signal(signal.SIGSTOP)
    # A follower's Fetch already waiting at the leader would still carry the next records
    # into its socket: let those long polls (replica.fetch.wait.max.ms) end empty first.
    time.sleep(1.0)
    try:
        loose = ck.Producer({"bootstrap.servers": cluster.brokers[leader].bootstrap, "acks": "1"})
        lost, failed = produce(loose, "tr", [b"lost%d" % i for i in range(10)])
        assert len(lost) == 10, failed
        cluster.kill(leader)
    finally:
        for b in followers:
            cluster.brokers[b].proc.send_signal(signal.SIGCONT)
    state = cluster.wait_state("tr", 0, lambda s: s["leader"] in followers)
    assert state["leader_epoch"] >= 1
    acked, failed = produce(p, "tr", [b"after%d" % i for i in range(20)])
    assert not failed
    cluster.start(leader)
    cluster.wait_state("tr", 0, lambda s: leader in s["isr"])
    assert "Truncating tr-0 from 110 to 100" in cluster.brokers[leader].log()
    for b in followers:  # read from the old leader too once it leads again
        cluster.kill(b)
    cluster.wait_state("tr", 0, lambda s: s["leader"] == leader)
    assert consume_all(cluster, "tr", expected=120) == kept + acked


def test_replication_factor_from_zookeeper_tool_and_auto_creation(pk, zookeeper, tmp_path):
    with ReplicationCluster(zookeeper, tmp_path, 3, {"default.replication.factor": "3"}) as cluster:
        cluster.start_all()
        proc = pk("pk-topics", "--zookeeper", cluster.connect, "--create", "--topic", "viazk", "--partitions", "2",
                  "--replication-factor", "3")
        assert proc.returncode == 0, proc.err
        for part in range(2):
            cluster.wait_state("viazk", part, lambda s: len(s["isr"]) == 3)
        # the same topic id on every broker
        ids = {cluster.metadata(b, "viazk")["topics"][0]["topic_id"] for b in range(3)}
        assert len(ids) == 1
        p = producer(cluster)
        acked, failed = produce(p, "auto", [b"v"])  # auto-created with default.replication.factor
        assert acked == [b"v"], failed
        state = cluster.wait_state("auto", 0, lambda s: len(s["isr"]) == 3)
        cluster.wait_applied("auto", 1)
        assert sorted(cluster.metadata(state["leader"], "auto")["topics"][0]["partitions"][0]["replica_nodes"]) \
            == [0, 1, 2]


def test_repeated_leader_kills_lose_and_duplicate_nothing(cluster):
    """An idempotent acks=all producer runs while the leader's broker is SIGKILLed and
    restarted, three times: every acknowledged record is read back exactly once."""
    import threading

    create(cluster, "kills")
    p = producer(cluster)
    acked, failed, stop = [], [], threading.Event()

    def done(err, msg):
        (failed if err else acked).append(msg.value())

    def run():
        i = 0
        while not stop.is_set():
            try:
                p.produce("kills", b"%06d" % i, partition=0, on_delivery=done)
                i += 1
            except BufferError:
                pass
            p.poll(0.002)
        p.flush(90)
    worker = threading.Thread(target=run)
    worker.start()
    failovers = []
    try:
        for _ in range(3):
            before = len(acked)
            wait_for(lambda: len(acked) > before + 50, what="records acknowledged")
            leader = cluster.state("kills", 0)["leader"]
            cluster.kill(leader)
            killed = time.monotonic()
            cluster.wait_state("kills", 0, lambda s: s["leader"] not in (leader, -1))
            after = len(acked)
            wait_for(lambda: len(acked) > after, what="an acknowledgement from the new leader", timeout=60)
            failovers.append(time.monotonic() - killed)
            cluster.start(leader)
            cluster.wait_state("kills", 0, lambda s: len(s["isr"]) == 3, timeout=60)
    finally:
        stop.set()
        worker.join(120)
    print("failover times (s):", " ".join(f"{t:.1f}" for t in failovers))
    assert not failed
    values = consume_all(cluster, "kills", expected=len(acked), timeout=90)
    assert len(values) == len(set(values))  # no duplicates
    assert set(acked) <= set(values)  # nothing acknowledged is lost
    assert values == sorted(values)  # in production order


def test_tools_see_a_created_topic_led_at_once_through_every_broker(pk, cluster):
    """CreateTopics and CreatePartitions answer once the controller has elected the new
    partitions' leaders (Kafka 2.8's delayed create): a describe run right after the create,
    through any broker, shows them led, as on Kafka."""
    for i, b in cluster.brokers.items():
        made = pk("pk-topics", "--bootstrap-server", b.bootstrap, "--create", "--topic", f"now{i}",
                  "--partitions", "2", "--replication-factor", "3")
        assert made.returncode == 0, made.err
        other = cluster.brokers[(i + 1) % len(cluster.brokers)]
        shown = pk("pk-topics", "--bootstrap-server", other.bootstrap, "--describe", "--topic", f"now{i}")
        assert shown.returncode == 0, shown.err
        rows = [line for line in shown.out.splitlines() if "Partition:" in line]
        assert len(rows) == 2 and all("Leader: none" not in r and "Isr: \t" not in r for r in rows), shown.out
    grown = pk("pk-topics", "--bootstrap-server", cluster.brokers[0].bootstrap, "--alter", "--topic", "now0",
               "--partitions", "4")
    assert grown.returncode == 0, grown.err
    shown = pk("pk-topics", "--bootstrap-server", cluster.brokers[1].bootstrap, "--describe", "--topic", "now0")
    rows = [line for line in shown.out.splitlines() if "Partition:" in line]
    assert len(rows) == 4 and all("Leader: none" not in r for r in rows), shown.out
