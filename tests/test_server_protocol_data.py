"""The data path's newer protocol versions on a real pk-server-start: ApiVersions v3-5
features and cluster checks, Metadata v10+ topic ids and authorized operations, Produce
v8+ record errors and v13 topic ids, Fetch v12+ sessions (KIP-227), topic ids and epochs,
ListOffsets v7-11 special timestamps, OffsetForLeaderEpoch, DescribeTopicPartitions.

Raw requests go through pk's own codec (kp.encode_request / the response schema) over a
socket; the client tests use confluent-kafka and kafka-python as users would.
"""

from __future__ import annotations

import os
import socket
import struct
import time
import uuid

import pytest

from pk.engine import protocol as kp
from pk.engine import records
from pk.engine.protocol import RESPONSES
from pk.engine.protocol import errors as E
from pk.engine.protocol.messages import INT32_MIN

from conftest import BrokerProcess, ProtocolClient

ZERO = uuid.UUID(int=0)


class Conn(ProtocolClient):
    """The shared client, decoding each answer with the schema of the version asked:
    parse_response reads an ApiVersions error as v0, which v5's REBOOTSTRAP_REQUIRED is not."""

    def __init__(self, port: int):
        super().__init__(port, client_id="raw")

    def call(self, key: int, version: int, body: dict) -> dict:
        corr = self.send(key, version, body)
        frame = self.recv_exactly(struct.unpack(">i", self.recv_exactly(4))[0])
        assert struct.unpack(">i", frame[:4])[0] == corr
        schema = RESPONSES[key]
        pos = 4
        if schema.is_flexible(version) and key != kp.ApiKey.API_VERSIONS:
            assert frame[4] == 0  # no tagged header fields
            pos = 5
        return schema.decode(frame[pos:], version)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = str(tmp_path_factory.mktemp("protocol-data") / "data")
    b = BrokerProcess(data, {"max.incremental.fetch.session.cache.slots": "3"}).start()
    yield b
    b.stop()


@pytest.fixture
def conn(server):
    c = Conn(server.port)
    yield c
    c.close()


def create(conn: Conn, name: str, partitions: int = 1, **configs: str) -> uuid.UUID:
    r = conn.call(kp.ApiKey.CREATE_TOPICS, 4, {
        "topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1, "assignments": [],
                    "configs": [{"name": k.replace("_", "."), "value": v} for k, v in configs.items()]}],
        "timeout_ms": 5000, "validate_only": False})
    assert r["topics"][0]["error_code"] == E.NONE, r
    meta = conn.call(kp.ApiKey.METADATA, 12, {"topics": [{"name": name, "topic_id": ZERO}],
                                              "allow_auto_topic_creation": False,
                                              "include_topic_authorized_operations": False})
    return meta["topics"][0]["topic_id"]


NOW_MS = int(time.time() * 1000)  # record timestamps: recent, so that retention keeps them


def produce(conn: Conn, name: str, items, partition: int = 0, version: int = 9, topic_id=ZERO) -> dict:
    batch = records.encode_batch([(k, v, (), NOW_MS + i) for i, (k, v) in enumerate(items)],
                                 partition_leader_epoch=-1)
    r = conn.call(kp.ApiKey.PRODUCE, version, {
        "transactional_id": None, "acks": -1, "timeout_ms": 5000,
        "topic_data": [{"name": name, "topic_id": topic_id,
                        "partition_data": [{"index": partition, "records": batch}]}]})
    return r["responses"][0]["partition_responses"][0]


def fetch_body(parts, session_id=0, epoch=-1, forgotten=(), max_wait_ms=0, version=12):
    """parts: [(topic name or id, partition, fetch offset)]."""
    topics = []
    for topic, p, offset, *more in parts:
        entry = {"partition": p, "current_leader_epoch": more[0] if more else -1, "fetch_offset": offset,
                 "last_fetched_epoch": more[1] if len(more) > 1 else -1, "log_start_offset": -1,
                 "partition_max_bytes": 1 << 20}
        if topics and topics[-1]["_t"] == topic:
            topics[-1]["partitions"].append(entry)
        else:
            topics.append({"_t": topic, "partitions": [entry]})
    for t in topics:
        key = t.pop("_t")
        t["topic_id" if version >= 13 else "topic"] = key
    return {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": 50 << 20,
            "isolation_level": 0, "session_id": session_id, "session_epoch": epoch, "topics": topics,
            "forgotten_topics_data": [{("topic_id" if version >= 13 else "topic"): t, "partitions": ps}
                                      for t, ps in forgotten],
            "rack_id": ""}


def answered(response) -> dict:
    """{(topic or id, partition): partition answer}."""
    out = {}
    for t in response["responses"]:
        key = t["topic_id"] if t.get("topic_id", ZERO) != ZERO else t["topic"]
        for p in t["partitions"]:
            out[(key, p["partition_index"])] = p
    return out


def batches_of(data) -> list[records.BatchHeader]:
    return [h for _, h in records.iter_batches(bytes(data))]


# --------------------------------------------------------------------------- ApiVersions

def test_api_versions_profile_and_features(conn, server):
    r = conn.call(kp.ApiKey.API_VERSIONS, 5, {"client_software_name": "t", "client_software_version": "1",
                                              "cluster_id": None, "node_id": -1})
    assert r["error_code"] == E.NONE
    versions = {k["api_key"]: (k["min_version"], k["max_version"]) for k in r["api_keys"]}
    assert versions[0] == (0, 13) and versions[1] == (4, 18)  # Produce: advertised from v0, served from v3
    assert (kp.SUPPORTED_VERSIONS[0][0], versions[0][0]) == (3, 0) and versions[2] == (1, 11)
    assert versions[3] == (0, 13) and versions[18] == (0, 5) and versions[23] == (2, 4)
    assert versions[75] == (0, 0)
    features = {f["name"]: (f["min_version"], f["max_version"]) for f in r["supported_features"]}
    assert features["metadata.version"] == (7, 33) and features["transaction.version"] == (0, 2)
    finalized = {f["name"]: f["max_version_level"] for f in r["finalized_features"]}
    assert finalized["metadata.version"] == 33 and r["finalized_features_epoch"] >= 0
    # v3 lists only the features whose minimum is above 0
    r3 = conn.call(kp.ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
    assert [f["name"] for f in r3["supported_features"]] == ["metadata.version"]


def test_api_versions_v5_cluster_and_node(conn, server):
    meta = conn.call(kp.ApiKey.METADATA, 12, {"topics": [], "allow_auto_topic_creation": False,
                                              "include_topic_authorized_operations": False})
    cluster = meta["cluster_id"]
    ok = conn.call(kp.ApiKey.API_VERSIONS, 5, {"client_software_name": "t", "client_software_version": "1",
                                               "cluster_id": cluster, "node_id": 0})
    assert ok["error_code"] == E.NONE and ok["api_keys"]
    for cid, nid, code in ((cluster, 3, E.REBOOTSTRAP_REQUIRED), ("other", 0, E.REBOOTSTRAP_REQUIRED),
                           (None, 0, E.INVALID_REQUEST), (cluster, -1, E.INVALID_REQUEST)):
        r = conn.call(kp.ApiKey.API_VERSIONS, 5, {"client_software_name": "t", "client_software_version": "1",
                                                  "cluster_id": cid, "node_id": nid})
        assert (r["error_code"], r["api_keys"]) == (code, [])


def test_produce_v0_to_2_closes_the_connection(server):
    """Kafka 4 advertises Produce v0 but refuses v0-2 (their codec is gone): the connection
    closes, as the real broker's does."""
    batch = records.encode_batch([(b"k", b"v", (), 1)])
    v3 = kp.encode_request(0, 3, 1, {"transactional_id": None, "acks": 1, "timeout_ms": 1000,
                                     "topic_data": [{"name": "x", "partition_data": [{"index": 0, "records": batch}]}]})
    header = struct.pack(">hhih", 0, 2, 1, 3) + b"raw"
    body = v3[4 + 8 + 2 + 2 + 2:]  # past length, key/version/corr, client id "pk", null transactional id
    frame = header + body
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(struct.pack(">i", len(frame)) + frame)
        assert s.recv(100) == b""
    assert "Produce v2 is not supported (v3-v13)" in server.log()


# --------------------------------------------------------------------------- Metadata

def test_metadata_topic_ids_epochs_and_operations(conn):
    tid = create(conn, "md-a", 2)
    r = conn.call(kp.ApiKey.METADATA, 12, {"topics": [{"name": "md-a", "topic_id": ZERO}],
                                           "allow_auto_topic_creation": False,
                                           "include_topic_authorized_operations": True})
    (t,) = r["topics"]
    assert (t["error_code"], t["topic_id"], t["topic_authorized_operations"]) == (E.NONE, tid, 3576)
    assert [(p["partition_index"], p["leader_epoch"], p["offline_replicas"]) for p in t["partitions"]] == \
        [(0, 0, []), (1, 0, [])]
    # by id (v10+), and an unknown id first
    missing = uuid.uuid4()
    r = conn.call(kp.ApiKey.METADATA, 13, {"topics": [{"name": None, "topic_id": tid},
                                                      {"name": None, "topic_id": missing}],
                                           "allow_auto_topic_creation": False,
                                           "include_topic_authorized_operations": False})
    assert [(t["error_code"], t["name"], t["topic_id"], t["topic_authorized_operations"]) for t in r["topics"]] == \
        [(E.UNKNOWN_TOPIC_ID, None, missing, INT32_MIN), (E.NONE, "md-a", tid, INT32_MIN)]
    # v8-10: cluster operations on request
    r = conn.call(kp.ApiKey.METADATA, 8, {"topics": [], "allow_auto_topic_creation": False,
                                          "include_cluster_authorized_operations": True,
                                          "include_topic_authorized_operations": False})
    assert r["cluster_authorized_operations"] == 8096 and r["topics"] == []


# --------------------------------------------------------------------------- Produce

def test_produce_record_errors_on_a_compacted_topic(conn):
    create(conn, "pr-compact", cleanup_policy="compact")
    p = produce(conn, "pr-compact", [(b"k", b"v"), (None, b"v"), (b"k2", b"v"), (None, b"x")])
    message = "Compacted topic cannot accept message without key in topic partition pr-compact-0"
    assert p["error_code"] == E.INVALID_RECORD and p["base_offset"] == -1
    assert p["record_errors"] == [{"batch_index": 1, "batch_index_error_message": message},
                                  {"batch_index": 3, "batch_index_error_message": message}]
    assert p["error_message"] == (
        "One or more records have been rejected due to 2 record errors in total, and only showing the first "
        f"three errors at most: [RecordError(batchIndex=1, message='{message}'), "
        f"RecordError(batchIndex=3, message='{message}')]")


def test_produce_v13_by_topic_id(conn):
    tid = create(conn, "pr-ids")
    p = produce(conn, "", [(b"a", b"1")], version=13, topic_id=tid)
    assert (p["error_code"], p["base_offset"]) == (E.NONE, 0)
    unknown = produce(conn, "", [(b"a", b"1")], version=13, topic_id=uuid.uuid4())
    assert unknown["error_code"] == E.UNKNOWN_TOPIC_ID
    # the batch carries the partition leader epoch, 0 on a lone broker
    r = conn.call(kp.ApiKey.FETCH, 12, fetch_body([("pr-ids", 0, 0)]))
    (h,) = batches_of(answered(r)[("pr-ids", 0)]["records"])
    assert h.partition_leader_epoch == 0


# --------------------------------------------------------------------------- Fetch

def test_fetch_session_full_then_incremental(conn):
    create(conn, "fs-a", 2)
    produce(conn, "fs-a", [(b"k", b"v0")], partition=0)
    produce(conn, "fs-a", [(b"k", b"v1")], partition=1)
    full = conn.call(kp.ApiKey.FETCH, 12, fetch_body([("fs-a", 0, 0), ("fs-a", 1, 0)], 0, 0))
    sid = full["session_id"]
    assert full["error_code"] == E.NONE and sid > 0
    assert sorted(answered(full)) == [("fs-a", 0), ("fs-a", 1)]
    # nothing changed: an incremental fetch of the same positions answers no partition
    # (each was answered with its records; positions move only when the client says so)
    inc = conn.call(kp.ApiKey.FETCH, 12, fetch_body([("fs-a", 0, 1), ("fs-a", 1, 1)], sid, 1))
    assert (inc["session_id"], inc["responses"]) == (sid, [])
    # new data on partition 1 only: only it is answered, from the cached position
    produce(conn, "fs-a", [(b"k", b"v2")], partition=1)
    inc = conn.call(kp.ApiKey.FETCH, 12, fetch_body([], sid, 2))
    assert list(answered(inc)) == [("fs-a", 1)]
    assert answered(inc)[("fs-a", 1)]["high_watermark"] == 2
    assert [h.base_offset for h in batches_of(answered(inc)[("fs-a", 1)]["records"])] == [1]
    # forget partition 0; a stale epoch, an unknown session
    inc = conn.call(kp.ApiKey.FETCH, 12, fetch_body([("fs-a", 1, 2)], sid, 3, forgotten=[("fs-a", [0])]))
    assert inc["error_code"] == E.NONE and inc["responses"] == []
    stale = conn.call(kp.ApiKey.FETCH, 12, fetch_body([], sid, 3))
    assert (stale["error_code"], stale["session_id"], stale["responses"]) == (E.INVALID_FETCH_SESSION_EPOCH, 0, [])
    gone = conn.call(kp.ApiKey.FETCH, 12, fetch_body([], 12345, 1))
    assert gone["error_code"] == E.FETCH_SESSION_ID_NOT_FOUND
    produce(conn, "fs-a", [(b"k", b"v3")], partition=0)
    inc = conn.call(kp.ApiKey.FETCH, 12, fetch_body([], sid, 4))
    assert inc["responses"] == []  # partition 0 was forgotten
    # epoch -1 closes the session: a sessionless full fetch
    closed = conn.call(kp.ApiKey.FETCH, 12, fetch_body([("fs-a", 0, 0)], sid, -1))
    assert closed["session_id"] == 0 and list(answered(closed)) == [("fs-a", 0)]
    assert conn.call(kp.ApiKey.FETCH, 12, fetch_body([], sid, 5))["error_code"] == E.FETCH_SESSION_ID_NOT_FOUND


def test_fetch_session_cache_is_bounded(conn):
    """The server runs with max.incremental.fetch.session.cache.slots=3: a fourth session is
    not created (no session is stale or evictable yet), and the client gets session id 0."""
    create(conn, "fs-bound")
    ids = [conn.call(kp.ApiKey.FETCH, 12, fetch_body([("fs-bound", 0, 0)], 0, 0))["session_id"] for _ in range(4)]
    created = [i for i in ids if i]
    assert len(created) <= 3 and ids[-1] == 0  # earlier tests' sessions may hold slots too


def test_fetch_topic_ids_v13(conn):
    tid = create(conn, "fi-a")
    produce(conn, "fi-a", [(b"k", b"v")])
    missing = uuid.uuid4()
    r = conn.call(kp.ApiKey.FETCH, 16, fetch_body([(tid, 0, 0), (missing, 0, 0)], version=16))
    got = answered(r)
    assert got[(tid, 0)]["error_code"] == E.NONE and len(batches_of(got[(tid, 0)]["records"])) == 1
    assert got[(missing, 0)]["error_code"] == E.UNKNOWN_TOPIC_ID


def test_fetch_leader_epoch_checks_and_diverging_epoch(conn):
    create(conn, "fe-a")
    produce(conn, "fe-a", [(b"k", b"v"), (b"k", b"w")])
    fenced = conn.call(kp.ApiKey.FETCH, 12, fetch_body([("fe-a", 0, 0, 5)]))
    assert answered(fenced)[("fe-a", 0)]["error_code"] == E.UNKNOWN_LEADER_EPOCH
    ok = conn.call(kp.ApiKey.FETCH, 12, fetch_body([("fe-a", 0, 0, 0)]))
    assert answered(ok)[("fe-a", 0)]["error_code"] == E.NONE
    # a fetcher claiming it last fetched epoch 0 at offset 2: consistent, records follow
    same = conn.call(kp.ApiKey.FETCH, 12, fetch_body([("fe-a", 0, 2, 0, 0)]))
    assert answered(same)[("fe-a", 0)]["diverging_epoch"]["epoch"] == -1
    # past the end of epoch 0 (offset 5 > log end 2) would be out of range; epoch 3 unknown
    bad = conn.call(kp.ApiKey.FETCH, 12, fetch_body([("fe-a", 0, 1, 0, 3)]))
    assert answered(bad)[("fe-a", 0)]["error_code"] == E.OFFSET_OUT_OF_RANGE


# --------------------------------------------------------------------------- ListOffsets

@pytest.mark.parametrize("version", [7, 9, 11])
def test_list_offsets_special_timestamps(conn, version):
    name = f"lo-{version}"
    create(conn, name)
    produce(conn, name, [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")])  # timestamps NOW_MS + 0, 1, 2
    expected = {-1: (3, 0), -2: (0, 0), -3: (2, 0), -4: (0, 0), -5: (-1, -1), -6: (-1, -1), NOW_MS + 1: (1, 0)}
    for ts, (offset, epoch) in expected.items():
        r = conn.call(kp.ApiKey.LIST_OFFSETS, version, {
            "replica_id": -1, "isolation_level": 0, "timeout_ms": 1000,
            "topics": [{"name": name, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                                      "timestamp": ts}]}]})
        p = r["topics"][0]["partitions"][0]
        known = {7: -3, 8: -4, 9: -5, 11: -6}
        if ts < -2 and not any(version >= v and ts >= t for v, t in known.items()):
            assert p["error_code"] == E.UNSUPPORTED_VERSION, (ts, p)
            continue
        assert (p["error_code"], p["offset"], p["leader_epoch"]) == (E.NONE, offset, epoch), (ts, p)
    fenced = conn.call(kp.ApiKey.LIST_OFFSETS, version, {
        "replica_id": -1, "isolation_level": 0, "timeout_ms": 1000,
        "topics": [{"name": name, "partitions": [{"partition_index": 0, "current_leader_epoch": 1,
                                                  "timestamp": -1}]}]})
    assert fenced["topics"][0]["partitions"][0]["error_code"] == E.UNKNOWN_LEADER_EPOCH
    # a partition named twice, an unknown special timestamp
    r = conn.call(kp.ApiKey.LIST_OFFSETS, version, {
        "replica_id": -1, "isolation_level": 0, "timeout_ms": 1000,
        "topics": [{"name": name, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1},
                                                 {"partition_index": 0, "current_leader_epoch": -1, "timestamp": -2}]},
                   {"name": name, "partitions": [{"partition_index": 1, "current_leader_epoch": -1, "timestamp": -9}]}]})
    assert [p["error_code"] for t in r["topics"] for p in t["partitions"]] == \
        [E.INVALID_REQUEST, E.INVALID_REQUEST, E.UNSUPPORTED_VERSION]


# --------------------------------------------------------------------------- OffsetForLeaderEpoch

def test_offset_for_leader_epoch(conn, server):
    create(conn, "ole-a")
    produce(conn, "ole-a", [(b"a", b"1"), (b"b", b"2")])
    r = conn.call(kp.ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, {"replica_id": -1, "topics": [
        {"topic": "ole-a", "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0},
            {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 1},
            {"partition": 0, "current_leader_epoch": 5, "leader_epoch": 0},
            {"partition": 3, "current_leader_epoch": -1, "leader_epoch": 0}]},
        {"topic": "ole-missing", "partitions": [{"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]})
    got = [(p["error_code"], p["leader_epoch"], p["end_offset"]) for t in r["topics"] for p in t["partitions"]]
    assert got == [(E.NONE, 0, 2), (E.NONE, -1, -1), (E.UNKNOWN_LEADER_EPOCH, -1, -1),
                   (E.UNKNOWN_TOPIC_OR_PARTITION, -1, -1), (E.UNKNOWN_TOPIC_OR_PARTITION, -1, -1)]
    # the checkpoint is Kafka's file: version, count, "epoch start-offset"
    with open(os.path.join(server.data_dir, "ole-a-0", "leader-epoch-checkpoint")) as f:
        assert f.read() == "0\n1\n0 0\n"


# --------------------------------------------------------------------------- DescribeTopicPartitions

def test_describe_topic_partitions_cursor(conn):
    create(conn, "dtp-a", 3)
    tid_b = create(conn, "dtp-b", 2)

    def describe(names, limit, cursor=None):
        return conn.call(kp.ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, {
            "topics": [{"name": n} for n in names], "response_partition_limit": limit, "cursor": cursor})

    r = describe(["dtp-b", "dtp-a", "dtp-none"], 4)
    assert [(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in r["topics"]] == \
        [("dtp-a", [0, 1, 2]), ("dtp-b", [0])]
    assert r["next_cursor"] == {"topic_name": "dtp-b", "partition_index": 1}
    b = r["topics"][1]
    assert (b["topic_id"], b["topic_authorized_operations"], b["partitions"][0]["eligible_leader_replicas"]) == \
        (tid_b, 3576, [])
    r = describe(["dtp-b", "dtp-a", "dtp-none"], 4, r["next_cursor"])
    assert [(t["name"], t["error_code"], [p["partition_index"] for p in t["partitions"]]) for t in r["topics"]] == \
        [("dtp-b", E.NONE, [1]), ("dtp-none", E.UNKNOWN_TOPIC_OR_PARTITION, [])]
    assert r["next_cursor"] is None
    # the cursor's topic must be among the requested ones
    r = describe(["dtp-a"], 10, {"topic_name": "dtp-b", "partition_index": 0})
    assert [t["error_code"] for t in r["topics"]] == [E.INVALID_REQUEST]


# --------------------------------------------------------------------------- real clients

def test_confluent_kafka_round_trip_with_offset_validation(server):
    ck = pytest.importorskip("confluent_kafka")
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": server.bootstrap})
    admin.create_topics([NewTopic("ck-epochs", 2, 1)])["ck-epochs"].result(20)
    producer = ck.Producer({"bootstrap.servers": server.bootstrap, "enable.idempotence": True})
    for i in range(20):
        producer.produce("ck-epochs", key=b"k%d" % i, value=b"v%d" % i, partition=i % 2)
    assert producer.flush(20) == 0
    consumer = ck.Consumer({"bootstrap.servers": server.bootstrap, "group.id": "ck-epochs-g",
                            "auto.offset.reset": "earliest", "enable.auto.commit": False})
    # a committed offset with its leader epoch makes librdkafka validate the position with
    # OffsetForLeaderEpoch before fetching (KIP-320)
    consumer.assign([ck.TopicPartition("ck-epochs", 0, 3, leader_epoch=0), ck.TopicPartition("ck-epochs", 1, 0)])
    got = []
    while len(got) < 17:
        msg = consumer.poll(10)
        assert msg is not None, got
        assert msg.error() is None, msg.error()
        got.append((msg.partition(), msg.offset(), msg.leader_epoch()))
    consumer.close()
    assert sorted(o for p, o, _ in got if p == 0) == list(range(3, 10))
    assert {e for _, _, e in got} == {0}


def test_kafka_python_consumer_and_producer(server):
    kafka = pytest.importorskip("kafka")
    producer = kafka.KafkaProducer(bootstrap_servers=server.bootstrap)
    for i in range(5):
        producer.send("kp-data", key=b"k", value=b"v%d" % i)
    producer.flush(20)
    producer.close()
    consumer = kafka.KafkaConsumer("kp-data", bootstrap_servers=server.bootstrap, auto_offset_reset="earliest",
                                   consumer_timeout_ms=10000, group_id=None)
    values = [m.value for _, m in zip(range(5), consumer)]  # stops at the fifth, not at the timeout
    consumer.close()
    assert values == [b"v%d" % i for i in range(5)]


def test_kcat_metadata_produce_consume_and_offsets_by_time(server):
    import shutil
    import subprocess
    kcat = shutil.which("kcat")
    if kcat is None:
        pytest.skip("kcat is not installed")
    b = ("-b", server.bootstrap)
    subprocess.run([kcat, *b, "-P", "-t", "kc-data", "-K", ":"], input=b"k1:v1\nk2:v2\nk3:v3\n",
                   check=True, timeout=30)
    listing = subprocess.run([kcat, *b, "-L", "-t", "kc-data"], capture_output=True, text=True,
                             check=True, timeout=30).stdout
    assert 'topic "kc-data" with 1 partitions:' in listing and "leader 0, replicas: 0, isrs: 0" in listing
    out = subprocess.run([kcat, *b, "-C", "-t", "kc-data", "-o", "beginning", "-e", "-f", "%k=%s@%o\n"],
                         capture_output=True, text=True, check=True, timeout=30).stdout
    assert out == "k1=v1@0\nk2=v2@1\nk3=v3@2\n"
    # -Q: ListOffsets by timestamp: the first record at or after it; none after the last (-1)
    for ts, offset in ((0, 0), (NOW_MS + 3_600_000, -1)):
        q = subprocess.run([kcat, *b, "-Q", "-t", f"kc-data:0:{ts}"], capture_output=True,
                           text=True, check=True, timeout=30).stdout
        assert q == f"kc-data [0] offset {offset}\n"


def test_zookeeper_leader_epoch_is_stamped_cached_and_reported(zookeeper, tmp_path):
    """In ZooKeeper mode a partition whose state znode named another leader is taken over with
    the next leader epoch: Metadata reports it, appended batches carry it, the checkpoint
    records where it began, OffsetForLeaderEpoch and ListOffsets answer from it."""
    pytest.importorskip("kazoo.client")
    from test_server_zookeeper import ZkCluster, wait_for

    cluster = ZkCluster(zookeeper, tmp_path)
    try:
        # Broker 0 is not in the state's ISR: only an unclean election gives it the partition.
        b = cluster.broker(0, unclean_leader_election_enable="true")
        cluster.zk.create("/brokers/topics/zk-ep/partitions/0/state",
                          b'{"controller_epoch":1,"leader":5,"version":1,"leader_epoch":3,"isr":[5]}', makepath=True)
        cluster.zk.set("/brokers/topics/zk-ep", b'{"version":1,"partitions":{"0":[0]}}')
        wait_for(lambda: (cluster.state("zk-ep", 0) or {}).get("leader") == 0, what="leadership of zk-ep-0")
        assert cluster.state("zk-ep", 0)["leader_epoch"] == 4
        conn = Conn(b.port)
        try:
            # (the broker takes the state in on its next pass: until then Metadata has no leader)
            meta = wait_for(lambda: [p for p in conn.call(kp.ApiKey.METADATA, 12, {
                "topics": [{"name": "zk-ep", "topic_id": ZERO}], "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": False})["topics"][0]["partitions"] if p["leader_id"] == 0],
                what="zk-ep metadata naming broker 0 as leader")
            assert meta[0]["leader_epoch"] == 4
            assert produce(conn, "zk-ep", [(b"a", b"1"), (b"b", b"2")])["error_code"] == E.NONE
            r = conn.call(kp.ApiKey.FETCH, 12, fetch_body([("zk-ep", 0, 0, 4)]))
            assert [h.partition_leader_epoch for h in batches_of(answered(r)[("zk-ep", 0)]["records"])] == [4]
            stale = conn.call(kp.ApiKey.FETCH, 12, fetch_body([("zk-ep", 0, 0, 3)]))
            part = answered(stale)[("zk-ep", 0)]
            assert (part["error_code"], part["current_leader"]) == \
                (E.FENCED_LEADER_EPOCH, {"leader_id": 0, "leader_epoch": 4})
            ole = conn.call(kp.ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, {"replica_id": -1, "topics": [
                {"topic": "zk-ep", "partitions": [{"partition": 0, "current_leader_epoch": 4, "leader_epoch": 4},
                                                  {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 2}]}]})
            assert [(p["leader_epoch"], p["end_offset"]) for p in ole["topics"][0]["partitions"]] == [(4, 2), (2, 0)]
            lo = conn.call(kp.ApiKey.LIST_OFFSETS, 7, {
                "replica_id": -1, "isolation_level": 0, "timeout_ms": 1000,
                "topics": [{"name": "zk-ep", "partitions": [{"partition_index": 0, "current_leader_epoch": 4,
                                                             "timestamp": -1}]}]})
            assert lo["topics"][0]["partitions"][0]["leader_epoch"] == 4
        finally:
            conn.close()
        with open(os.path.join(b.data_dir, "zk-ep-0", "leader-epoch-checkpoint")) as f:
            assert f.read() == "0\n1\n4 0\n"
    finally:
        cluster.close()


def test_fetch_session_eviction(tmp_path):
    """One slot, sessions evictable after 300 ms: a newcomer takes the slot of a stale session,
    or of an older, smaller one, and never of an equal or larger one (Kafka's tryEvict)."""
    b = BrokerProcess(str(tmp_path / "data"), {"max.incremental.fetch.session.cache.slots": "1",
                                               "min.incremental.fetch.session.eviction.ms": "300"}).start()
    conn = Conn(b.port)
    try:
        create(conn, "ev-a", 2)
        one, two = [("ev-a", 0, 0)], [("ev-a", 0, 0), ("ev-a", 1, 0)]
        first = conn.call(kp.ApiKey.FETCH, 12, fetch_body(one, 0, 0))["session_id"]
        assert first and conn.call(kp.ApiKey.FETCH, 12, fetch_body(one, 0, 0))["session_id"] == 0  # no room
        time.sleep(0.5)  # idle past the eviction time: stale, the next one takes its slot
        second = conn.call(kp.ApiKey.FETCH, 12, fetch_body(one, 0, 0))["session_id"]
        assert second not in (0, first)
        assert conn.call(kp.ApiKey.FETCH, 12, fetch_body([], first, 1))["error_code"] == E.FETCH_SESSION_ID_NOT_FOUND
        time.sleep(0.5)
        # used again now (not stale) but older than the eviction time: evictable by a larger session only
        assert conn.call(kp.ApiKey.FETCH, 12, fetch_body([], second, 1))["error_code"] == E.NONE
        assert conn.call(kp.ApiKey.FETCH, 12, fetch_body(one, 0, 0))["session_id"] == 0
        third = conn.call(kp.ApiKey.FETCH, 12, fetch_body(two, 0, 0))["session_id"]
        assert third not in (0, second)
        assert conn.call(kp.ApiKey.FETCH, 12, fetch_body([], second, 2))["error_code"] == E.FETCH_SESSION_ID_NOT_FOUND
    finally:
        conn.close()
        b.stop()


def test_topic_ids_after_delete_and_recreate(conn):
    """An id names one incarnation of a topic: once deleted and recreated under the same name,
    the old id is unknown to Produce v13 and Fetch v13+; a known id with a missing partition is
    an unknown partition."""
    old = create(conn, "ids-re")
    assert produce(conn, "", [(b"a", b"1")], version=13, topic_id=old)["error_code"] == E.NONE
    missing = produce(conn, "", [(b"a", b"1")], partition=7, version=13, topic_id=old)
    assert missing["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
    r = conn.call(kp.ApiKey.DELETE_TOPICS, 3, {"topic_names": ["ids-re"], "timeout_ms": 5000})
    assert r["responses"][0]["error_code"] == E.NONE
    new = create(conn, "ids-re")
    assert new != old
    assert produce(conn, "", [(b"a", b"1")], version=13, topic_id=old)["error_code"] == E.UNKNOWN_TOPIC_ID
    got = answered(conn.call(kp.ApiKey.FETCH, 13, fetch_body([(old, 0, 0), (new, 0, 0)], version=13)))
    assert (got[(old, 0)]["error_code"], got[(new, 0)]["error_code"]) == (E.UNKNOWN_TOPIC_ID, E.NONE)
    assert produce(conn, "", [(b"b", b"2")], version=13, topic_id=new)["base_offset"] == 0
