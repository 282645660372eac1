"""Issue 15's replication leftovers on three pk-server-start brokers over a real ZooKeeper
(tests/replication_cluster.py): a replica moved away by a reassignment deletes its local copy
(at once, or when its broker comes back), Kafka 2.8's /admin/reassign_partitions znode,
DeleteRecords on a replicated partition, racks, and controlled shutdown."""

from __future__ import annotations

import json
import os

import pytest

from conftest import ProtocolClient
from replication_cluster import ReplicationCluster, wait_for
from test_replication import consume_all, produce, producer

from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E

pytest.importorskip("kazoo.client")


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    with ReplicationCluster(zookeeper, tmp_path_factory.mktemp("reassign"), 3,
                            {"auto.leader.rebalance.enable": "false"}) as c:
        c.start_all()
        yield c


@pytest.fixture
def all_up(cluster):
    """Every broker running after the test, whatever it stopped."""
    yield cluster
    for b in cluster.brokers:
        if b not in cluster.running():
            cluster.start(b)
    cluster.wait_converged()


def create_assigned(cluster, name: str, assignment: list[list[int]], config: dict | None = None) -> None:
    """CreateTopics with a replica assignment (raw frames: the replicas are the test's subject)."""
    with ProtocolClient(cluster.brokers[controller(cluster)].port, timeout=20) as c:
        answer = c.call(ApiKey.CREATE_TOPICS, 5, {"timeout_ms": 15000, "validate_only": False, "topics": [
            {"name": name, "num_partitions": -1, "replication_factor": -1,
             "assignments": [{"partition_index": p, "broker_ids": r} for p, r in enumerate(assignment)],
             "configs": [{"name": k, "value": v} for k, v in (config or {}).items()]}]})
    assert answer["topics"][0]["error_code"] == E.NONE, answer
    for p, replicas in enumerate(assignment):
        cluster.wait_state(name, p, lambda s, n=len(replicas): len(s["isr"]) == n)
    cluster.wait_applied(name, len(assignment))


def controller(cluster) -> int:
    return json.loads(cluster.get("/controller"))["brokerid"]


def reassign(cluster, topic: str, partition: int, replicas: list[int]):
    with ProtocolClient(cluster.brokers[controller(cluster)].port, timeout=10) as c:
        answer = c.call(ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0, {"timeout_ms": 5000, "topics": [
            {"name": topic, "partitions": [{"partition_index": partition, "replicas": replicas}]}]})
    return [(p["error_code"], p["error_message"]) for t in answer["responses"] for p in t["partitions"]]


def topic_replicas(cluster, topic: str, partition: int = 0):
    js = json.loads(cluster.get(f"/brokers/topics/{topic}"))
    return js["partitions"][str(partition)], js.get("adding_replicas", {}), js.get("removing_replicas", {})


def wait_reassigned(cluster, topic: str, target: list[int], partition: int = 0) -> None:
    wait_for(lambda: topic_replicas(cluster, topic, partition) == (target, {}, {}), timeout=60,
             what=f"the reassignment of {topic}-{partition} to complete")


def data_dir(cluster, broker: int) -> str:
    return cluster.brokers[broker].data_dir


def log_bytes(cluster, broker: int, topic: str, partition: int = 0) -> int:
    """The bytes of the partition's segment files in the broker's data directory."""
    d = os.path.join(data_dir(cluster, broker), f"{topic}-{partition}")
    total = 0
    try:
        names = os.listdir(d)
    except FileNotFoundError:
        return 0  # the broker deleted its copy (the directory goes with it)
    for f in names:
        if f.endswith(".log"):
            try:
                total += os.path.getsize(os.path.join(d, f))
            except FileNotFoundError:
                pass  # deleted while we looked
    return total


def checkpointed(cluster, broker: int, name: str) -> set[tuple[str, int]]:
    path = os.path.join(data_dir(cluster, broker), name)
    if not os.path.exists(path):
        return set()
    lines = open(path).read().splitlines()[2:]
    return {(t, int(p)) for t, p, _ in (line.split() for line in lines)}


def leftovers(cluster, broker: int, topic: str) -> list[str]:
    return [f for f in os.listdir(data_dir(cluster, broker)) if f.startswith(f"{topic}-") and f.endswith("-delete")]


def copy_deleted(cluster, broker: int, topic: str, partition: int = 0) -> bool:
    """The broker's copy is gone as Kafka's StopReplica(delete=true) leaves it: the directory
    renamed to -delete and removed, an empty one in its place (while the removal runs the
    directory is briefly missing, or the -delete one still there)."""
    return (os.path.isdir(os.path.join(data_dir(cluster, broker), f"{topic}-{partition}"))
            and log_bytes(cluster, broker, topic, partition) == 0 and not leftovers(cluster, broker, topic))


# --------------------------------------------------------------------------- removed replicas
def test_a_replica_moved_away_deletes_its_local_copy(cluster, all_up):
    create_assigned(cluster, "moved", [[0, 1]])
    values = [f"m{i}".encode() for i in range(40)]
    acked, failed = produce(producer(cluster), "moved", values)
    assert not failed and len(acked) == len(values)
    wait_for(lambda: log_bytes(cluster, 0, "moved") > 0 and log_bytes(cluster, 1, "moved") > 0,
             what="both replicas to hold the records")
    wait_for(lambda: ("moved", 0) in checkpointed(cluster, 0, "replication-offset-checkpoint"),
             what="broker 0's HW checkpoint")

    assert reassign(cluster, "moved", 0, [2, 1]) == [(E.NONE, None)]
    wait_reassigned(cluster, "moved", [2, 1])
    wait_for(lambda: copy_deleted(cluster, 0, "moved"), what="broker 0 to delete its copy")
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
        wait_for(lambda: ("moved", 0) not in checkpointed(cluster, 0, name), what=f"{name} without moved-0")
    assert log_bytes(cluster, 2, "moved") > 0
    cluster.wait_applied("moved", 1)
    assert consume_all(cluster, "moved", expected=len(values)) == acked


def test_a_broker_back_after_its_partition_moved_deletes_its_copy(cluster, all_up):
    create_assigned(cluster, "away", [[0, 1]])
    values = [f"a{i}".encode() for i in range(30)]
    acked, failed = produce(producer(cluster), "away", values)
    assert not failed
    wait_for(lambda: log_bytes(cluster, 0, "away") > 0, what="broker 0 to hold the records")
    cluster.kill(0)
    cluster.wait_state("away", 0, lambda s: 0 not in s["isr"], timeout=30)
    assert reassign(cluster, "away", 0, [1, 2]) == [(E.NONE, None)]
    wait_reassigned(cluster, "away", [1, 2])
    assert log_bytes(cluster, 0, "away") > 0  # still there while broker 0 is down
    cluster.start(0)
    wait_for(lambda: copy_deleted(cluster, 0, "away"), what="broker 0 back to delete its copy")
    cluster.wait_applied("away", 1)
    assert consume_all(cluster, "away", expected=len(values)) == acked


# --------------------------------------------------------------------------- /admin/reassign_partitions
def test_the_controller_carries_out_admin_reassign_partitions(cluster, all_up):
    """Kafka 2.8's znode: the controller starts each move, drops a partition it cannot move at
    once, drops each completed one, and deletes the znode when none is left."""
    create_assigned(cluster, "zkplan", [[0, 1], [1, 2]])
    acked, failed = produce(producer(cluster), "zkplan", [b"x"] * 10)
    assert not failed
    cluster.zk.create("/admin/reassign_partitions", json.dumps({"version": 1, "partitions": [
        {"topic": "zkplan", "partition": 0, "replicas": [2, 0]},
        {"topic": "zkplan", "partition": 9, "replicas": [0, 1]},
        {"topic": "nosuch", "partition": 0, "replicas": [0, 1]}]}).encode())
    wait_for(lambda: cluster.get("/admin/reassign_partitions") is None, timeout=60,
             what="the znode to be deleted once the move completed")
    assert topic_replicas(cluster, "zkplan", 0) == ([2, 0], {}, {})
    assert topic_replicas(cluster, "zkplan", 1) == ([1, 2], {}, {})
    wait_for(lambda: copy_deleted(cluster, 1, "zkplan"), what="broker 1 to delete its copy of zkplan-0")
    cluster.wait_applied("zkplan", 2)
    assert consume_all(cluster, "zkplan", expected=len(acked)) == acked

    # A move asked for through the Admin API replaces the znode's for the same partition.
    cluster.kill(0)
    cluster.wait_state("zkplan", 0, lambda s: 0 not in s["isr"], timeout=30)
    cluster.zk.create("/admin/reassign_partitions", json.dumps({"version": 1, "partitions": [
        {"topic": "zkplan", "partition": 0, "replicas": [0, 1]},
        {"topic": "zkplan", "partition": 1, "replicas": [0, 2]}]}).encode())
    wait_for(lambda: topic_replicas(cluster, "zkplan", 0)[1], what="the move of zkplan-0 to start")
    assert json.loads(cluster.get("/admin/reassign_partitions"))["partitions"] == [
        {"topic": "zkplan", "partition": 0, "replicas": [0, 1]},
        {"topic": "zkplan", "partition": 1, "replicas": [0, 2]}]  # broker 0 is down: in progress
    assert reassign(cluster, "zkplan", 1, [1, 2]) == [(E.NONE, None)]
    assert json.loads(cluster.get("/admin/reassign_partitions"))["partitions"] == [
        {"topic": "zkplan", "partition": 0, "replicas": [0, 1]}]
    cluster.start(0)
    wait_for(lambda: cluster.get("/admin/reassign_partitions") is None, timeout=60,
             what="the znode to go once broker 0 caught up")
    assert topic_replicas(cluster, "zkplan", 0) == ([0, 1], {}, {})


# --------------------------------------------------------------------------- DeleteRecords
def log_start(cluster, broker: int, topic: str, partition: int = 0) -> int:
    """The partition's log start offset in the broker's log-start-offset-checkpoint (0 if absent)."""
    path = os.path.join(data_dir(cluster, broker), "log-start-offset-checkpoint")
    if not os.path.exists(path):
        return 0
    for line in open(path).read().splitlines()[2:]:
        t, p, offset = line.split()
        if (t, int(p)) == (topic, partition):
            return int(offset)
    return 0


def list_earliest(cluster, broker: int, topic: str) -> tuple[int, int]:
    with ProtocolClient(cluster.brokers[broker].port, timeout=10) as c:
        answer = c.call(ApiKey.LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -2}]}]})
    p = answer["topics"][0]["partitions"][0]
    return p["error_code"], p["offset"]


def delete_records(cluster, broker: int, topic: str, offset: int, timeout_ms: int = 10000):
    with ProtocolClient(cluster.brokers[broker].port, timeout=20) as c:
        answer = c.call(ApiKey.DELETE_RECORDS, 2, {"timeout_ms": timeout_ms, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "offset": offset}]}]})
    p = answer["topics"][0]["partitions"][0]
    return p["error_code"], p["low_watermark"]


def test_delete_records_moves_every_replicas_log_start(pk, cluster, all_up, tmp_path):
    create_assigned(cluster, "trimmed", [[0, 1, 2]])
    values = [f"d{i}".encode() for i in range(50)]
    acked, failed = produce(producer(cluster), "trimmed", values)
    assert not failed and acked == values
    plan = tmp_path / "offsets.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "trimmed", "partition": 0, "offset": 20}]}))
    run = pk("pk-delete-records", "--bootstrap-server", cluster.bootstrap, "--offset-json-file", str(plan))
    assert run.returncode == 0, run.err
    assert "partition: trimmed-0\tlow_watermark: 20" in run.out, run.out
    # answered once every replica moved its log start: the followers' logs start there too
    assert [log_start(cluster, b, "trimmed") for b in range(3)] == [20, 20, 20]

    # the leader: not a follower, not above the HW
    leader = cluster.state("trimmed", 0)["leader"]
    follower = next(b for b in range(3) if b != leader)
    assert delete_records(cluster, follower, "trimmed", 30) == (E.NOT_LEADER_OR_FOLLOWER, -1)
    assert delete_records(cluster, leader, "trimmed", 51) == (E.OFFSET_OUT_OF_RANGE, -1)
    # a follower down: the low watermark cannot reach the offset within the timeout
    cluster.kill(follower)
    assert delete_records(cluster, leader, "trimmed", 30, timeout_ms=1500) == (E.REQUEST_TIMED_OUT, -1)
    cluster.wait_state("trimmed", 0, lambda s: follower not in s["isr"])  # and, its session gone, ...
    cluster.wait_applied("trimmed", 1)
    assert delete_records(cluster, leader, "trimmed", 30) == (E.NONE, 30)  # ... only live replicas count

    # a follower that becomes leader serves from the new log start
    third = next(b for b in range(3) if b not in (leader, follower))
    assert log_start(cluster, third, "trimmed") == 30
    cluster.kill(leader)
    cluster.wait_state("trimmed", 0, lambda s: s["leader"] == third)
    cluster.wait_applied("trimmed", 1)
    assert list_earliest(cluster, third, "trimmed") == (E.NONE, 30)
    assert consume_all(cluster, "trimmed", expected=20) == values[30:]


# --------------------------------------------------------------------------- controlled shutdown
def _produce_through_stop(cluster, topic: str, stop, seconds: float = 14.0):
    """Produce ~100 records/s with acks=all for `seconds`, calling `stop()` (in another thread)
    after one second. Returns (values sent, values acked, longest gap between two
    acknowledgements from the stop on, in seconds)."""
    import threading
    import time

    p = producer(cluster, **{"linger.ms": 0})
    sent, acked, times, failed = [], [], [], []

    def done(err, msg):
        if err:
            failed.append(err)
        else:
            acked.append(msg.value())
            times.append(time.monotonic())
    stopper = threading.Timer(1.0, stop)
    stopped_at = time.monotonic() + 1.0
    stopper.start()
    deadline = time.monotonic() + seconds
    i = 0
    while time.monotonic() < deadline:
        value = f"s{i}".encode()
        p.produce(topic, value, partition=0, on_delivery=done)
        sent.append(value)
        i += 1
        p.poll(0.01)
    stopper.join()
    p.flush(90)
    assert not failed, failed[:3]
    after = [stopped_at] + [t for t in times if t >= stopped_at]
    gap = max(b - a for a, b in zip(after, after[1:])) if len(after) > 1 else float("inf")
    return sent, acked, gap


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_controlled_shutdown_moves_leadership_before_exiting(cluster, all_up, how, capsys):
    topic = f"shutdown-{how.lower()}"
    create_assigned(cluster, topic, [[0, 1, 2]])
    leader = cluster.state(topic, 0)["leader"]
    epoch = cluster.state(topic, 0)["leader_epoch"]
    stop = (lambda: cluster.stop(leader)) if how == "SIGTERM" else (lambda: cluster.kill(leader))
    logged = os.path.getsize(cluster.brokers[leader].log_path)
    sent, acked, gap = _produce_through_stop(cluster, topic, stop)
    with capsys.disabled():
        print(f"\n[controlled shutdown] {how} of the leader: produce unavailable for {gap:.2f} s "
              f"({len(acked)} records acknowledged)")
    assert acked == sent  # an idempotent producer: every record once, in order
    state = cluster.wait_state(topic, 0, lambda s: s["leader"] not in (leader, -1))
    assert state["leader_epoch"] > epoch and leader not in state["isr"]
    cluster.wait_applied(topic, 1)
    assert consume_all(cluster, topic, expected=len(acked)) == acked  # no acknowledged record lost
    with open(cluster.brokers[leader].log_path) as f:
        f.seek(logged)
        log = f.read()
    assert ("Controlled shutdown succeeded" in log) == (how == "SIGTERM")


# --------------------------------------------------------------------------- racks
RACKS = {0: "r1", 1: "r1", 2: "r2"}


def racked_cluster(zookeeper, tmp_path) -> ReplicationCluster:
    c = ReplicationCluster(zookeeper, tmp_path, 3, {"auto.leader.rebalance.enable": "false"})
    for b, rack in RACKS.items():
        c.brokers[b].overrides = {**c.brokers[b].overrides, "broker.rack": rack}
    return c


def test_racks_registered_listed_and_used_for_placement(zookeeper, tmp_path):
    from confluent_kafka.admin import AdminClient, NewTopic

    with racked_cluster(zookeeper, tmp_path) as cluster:
        cluster.start_all()
        assert {b: json.loads(cluster.get(f"/brokers/ids/{b}")).get("rack") for b in RACKS} == RACKS
        for b in RACKS:
            assert {n["node_id"]: n["rack"] for n in cluster.metadata(b, "")["brokers"]} == RACKS
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        assert {n.id: n.rack for n in admin.describe_cluster().result(15).nodes} == RACKS
        admin.create_topics([NewTopic("racked", 6, 2)])["racked"].result(15)
        assignment = json.loads(cluster.get("/brokers/topics/racked"))["partitions"]
        assert len(assignment) == 6
        for replicas in assignment.values():  # as many racks as replicas: one replica per rack
            assert sorted(RACKS[r] for r in replicas) == ["r1", "r2"], assignment

        # a broker without a rack among racked ones: Kafka's AdminUtils refuses to place
        cluster.stop(2)
        cluster.brokers[2].overrides.pop("broker.rack")
        cluster.start(2)
        cluster.wait_converged()
        wait_for(lambda: "rack" not in json.loads(cluster.get("/brokers/ids/2")), what="broker 2 without a rack")
        with ProtocolClient(cluster.brokers[0].port, timeout=20) as c:
            answer = c.call(ApiKey.CREATE_TOPICS, 5, {"timeout_ms": 15000, "validate_only": False, "topics": [
                {"name": "mixed", "num_partitions": 1, "replication_factor": 2, "assignments": [], "configs": []}]})
        (topic,) = answer["topics"]
        assert (topic["error_code"], topic["error_message"]) == (
            E.UNKNOWN_SERVER_ERROR, None)  # as Kafka 2.8 (AdminOperationException: no message)
