"""pk-server-start with real clients: confluent-kafka (librdkafka 2.16), kcat (librdkafka 2.0.2)
and kafka-python 3.0. One broker serves the whole module; each test uses its own topics.

Group consumption (subscribe) is tested with the group coordinator; here consumers `assign`.
"""

from __future__ import annotations

import socket
import struct
import subprocess
import threading
import time

import pytest

from conftest import BrokerProcess
from pk.engine import protocol as kp
from pk.engine.protocol.messages import advertised as kp_advertised
from pk.engine.engine import Engine
from pk.engine.records import decode_records, iter_batches

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import (  # noqa: E402
    AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewPartitions, NewTopic, OffsetSpec,
    ResourceType,
)

TIMEOUT = 10


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    b = BrokerProcess(str(tmp_path_factory.mktemp("server") / "data")).start()
    try:
        yield b
    finally:
        b.stop()


@pytest.fixture(scope="module")
def admin(server):
    return AdminClient({"bootstrap.servers": server.bootstrap})


def create(admin, name, partitions=1, config=None):
    for future in admin.create_topics([NewTopic(name, partitions, 1, config=config or {})]).values():
        future.result(TIMEOUT)


def engine_records(server, topic, partition=0):
    """Every record of a partition as the bundled engine reads it (a second process's view)."""
    with Engine(server.data_dir) as engine:
        data = engine.partition(topic, partition).read(0, 1 << 30)
    out = []
    for pos, header in iter_batches(data):
        out.extend(decode_records(data, pos, header))
    return out


def consume(bootstrap, topic, partitions, count, **extra):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "assign-only",
                         "enable.auto.commit": False, **extra})
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    got = []
    deadline = time.monotonic() + TIMEOUT
    try:
        while len(got) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            got.append(msg)
    finally:
        consumer.close()
    return got


# ------------------------------------------------------------------ confluent-kafka Producer
@pytest.mark.parametrize("acks", ["0", "1", "all"])
def test_confluent_producer_acks_keyed_and_unkeyed(server, admin, acks):
    topic = f"acks-{acks}"
    create(admin, topic, 2)
    producer = Producer({"bootstrap.servers": server.bootstrap, "acks": acks, "linger.ms": 2})
    reports = []
    for i in range(50):
        key = f"key-{i % 7}".encode() if i % 2 else None
        producer.produce(topic, value=f"value-{i}".encode(), key=key,
                         on_delivery=lambda err, msg: reports.append((err, msg.offset())))
    assert producer.flush(TIMEOUT) == 0
    assert [err for err, _ in reports if err] == []
    if acks != "0":
        assert all(offset >= 0 for _, offset in reports)
    deadline = time.monotonic() + TIMEOUT
    while True:  # acks=0: delivered once sent, appended a moment later
        stored = engine_records(server, topic, 0) + engine_records(server, topic, 1)
        if len(stored) >= 50 or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert sorted(r.value for r in stored) == sorted(f"value-{i}".encode() for i in range(50))
    # Keyed records of one key share a partition (librdkafka's consistent_random).
    by_key = {}
    for p in (0, 1):
        for r in engine_records(server, topic, p):
            if r.key is not None:
                by_key.setdefault(r.key, set()).add(p)
    assert by_key and all(len(parts) == 1 for parts in by_key.values())


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_confluent_idempotent_producer_every_codec(server, admin, codec):
    topic = f"codec-{codec}"
    create(admin, topic)
    producer = Producer({"bootstrap.servers": server.bootstrap, "enable.idempotence": True,
                         "compression.type": codec, "linger.ms": 5})
    for i in range(200):
        producer.produce(topic, value=(f"{codec} record {i} " * 5).encode(), key=b"k%d" % i,
                         headers=[("h", b"%d" % i)])
    assert producer.flush(TIMEOUT) == 0
    stored = engine_records(server, topic)
    assert [r.offset for r in stored] == list(range(200))
    assert [r.value for r in stored] == [(f"{codec} record {i} " * 5).encode() for i in range(200)]
    assert stored[7].headers == (("h", b"7"),)
    with Engine(server.data_dir) as engine:
        data = engine.partition(topic, 0).read(0, 1 << 30)
    headers = [h for _, h in iter_batches(data)]
    assert {h.compression for h in headers} == {["none", "gzip", "snappy", "lz4", "zstd"].index(codec)}
    assert all(h.producer_id >= 0 and h.base_sequence >= 0 for h in headers)
    # consumed back through the broker, byte for byte the same values
    got = consume(server.bootstrap, topic, [0], 200)
    assert [m.value() for m in got] == [r.value for r in stored]
    assert got[7].headers() == [("h", b"7")]


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd", "uncompressed"])
def test_a_topic_codec_re_compresses_what_producers_send(server, admin, codec):
    """compression.type other than `producer`: each batch is re-compressed as it inflates
    (records/walk.recompress; snappy in xerial framing, as Kafka's Java writer frames it),
    keeping its idempotent producer's fields; librdkafka and kafka-python read it back."""
    from kafka import KafkaConsumer

    topic = f"topic-codec-{codec}"
    create(admin, topic, config={"compression.type": codec})
    sent_codec = "lz4" if codec == "zstd" else "zstd"
    producer = Producer({"bootstrap.servers": server.bootstrap, "enable.idempotence": True,
                         "compression.type": sent_codec, "linger.ms": 5})
    values = [(f"{codec} record {i} " * 20).encode() for i in range(300)]
    for i, value in enumerate(values):
        producer.produce(topic, value=value, key=b"k%d" % i, headers=[("h", b"%d" % i)])
    assert producer.flush(TIMEOUT) == 0
    with Engine(server.data_dir) as engine:
        data = engine.partition(topic, 0).read(0, 1 << 30)
    headers = [h for _, h in iter_batches(data)]
    wanted = ["uncompressed", "gzip", "snappy", "lz4", "zstd"].index(codec)
    assert {h.compression for h in headers} == {wanted}
    assert all(h.producer_id >= 0 and h.base_sequence >= 0 for h in headers)
    assert [m.value() for m in consume(server.bootstrap, topic, [0], 300)] == values
    reader = KafkaConsumer(topic, bootstrap_servers=server.bootstrap, auto_offset_reset="earliest",
                           consumer_timeout_ms=5000)
    try:
        got = []
        for message in reader:
            got.append(message.value)
            if len(got) == len(values):
                break
    finally:
        reader.close()
    assert got == values


def test_confluent_consumer_assign_and_long_poll(server, admin):
    topic = "long-poll"
    create(admin, topic)
    consumer = Consumer({"bootstrap.servers": server.bootstrap, "group.id": "assign-only",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 5000})
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        assert consumer.poll(1.0) is None  # nothing yet: the fetch is parked at the broker
        producer = Producer({"bootstrap.servers": server.bootstrap, "linger.ms": 0})
        sent = time.monotonic()
        producer.produce(topic, value=b"wake up")
        producer.flush(TIMEOUT)
        msg = consumer.poll(TIMEOUT)
        elapsed = time.monotonic() - sent
        assert msg is not None and msg.value() == b"wake up"
        assert elapsed < 1.0  # far less than fetch.wait.max.ms
    finally:
        consumer.close()


def _call(sock, key, version, body, corr=1):
    sock.sendall(kp.encode_request(key, version, corr, body))
    size = struct.unpack(">i", _recv(sock, 4))[0]
    return kp.parse_response(_recv(sock, size), key, version)[1]


def _recv(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        assert chunk, "connection closed"
        buf += chunk
    return buf


def test_fetch_wakes_within_milliseconds_of_an_append(server, admin):
    """A Fetch parked with max_wait_ms=5000 answers as soon as a Produce on another
    connection has appended (measured from the Produce's answer)."""
    topic = "wake-ms"
    create(admin, topic)
    from pk.engine.records import encode_batch
    fetch = {"replica_id": -1, "max_wait_ms": 5000, "min_bytes": 1, "max_bytes": 1 << 20,
             "topics": [{"topic": topic, "partitions": [{"partition": 0, "fetch_offset": 0,
                                                          "partition_max_bytes": 1 << 20}]}]}
    result = {}

    def fetcher():
        with socket.create_connection(("127.0.0.1", server.port)) as s:
            result["body"] = _call(s, 1, 11, fetch)
            result["at"] = time.monotonic()

    thread = threading.Thread(target=fetcher)
    thread.start()
    time.sleep(0.3)
    with socket.create_connection(("127.0.0.1", server.port)) as s:
        produced = _call(s, 0, 7, {"acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": topic, "partition_data": [{"index": 0, "records": encode_batch(
                [(None, b"now", (), int(time.time() * 1000))])}]}]})
        acked = time.monotonic()
    thread.join(TIMEOUT)
    assert produced["responses"][0]["partition_responses"][0]["error_code"] == 0
    part = result["body"]["responses"][0]["partitions"][0]
    assert part["high_watermark"] == 1 and len(part["records"]) > 0
    assert result["at"] - acked < 0.05


def test_api_versions_advertises_the_profile_and_nothing_more(server):
    with socket.create_connection(("127.0.0.1", server.port)) as s:
        answer = _call(s, 18, 3, {"client_software_name": "pk-test", "client_software_version": "1"})
    advertised = {k["api_key"]: (k["min_version"], k["max_version"]) for k in answer["api_keys"]}
    assert answer["error_code"] == 0
    assert advertised == kp_advertised(kp.SUPPORTED_VERSIONS)  # the whole profile (test_protocol.py pins it)
    # SASL's APIs on every listener, as Kafka advertises them; never a controller-only API (Envelope)
    assert {17, 36} <= advertised.keys() and 58 not in advertised


# ------------------------------------------------------------------ confluent-kafka AdminClient
def test_confluent_admin_topics_partitions_and_configs(server, admin):
    create(admin, "adm", 2, {"retention.ms": "3600000"})
    assert "adm" in admin.list_topics(timeout=TIMEOUT).topics
    # errors come back per topic
    with pytest.raises(confluent_kafka.KafkaException) as exc:
        create(admin, "adm")
    assert exc.value.args[0].code() == confluent_kafka.KafkaError.TOPIC_ALREADY_EXISTS
    with pytest.raises(confluent_kafka.KafkaException) as exc:
        for f in admin.create_topics([NewTopic("rf3", 1, 3)]).values():
            f.result(TIMEOUT)
    assert exc.value.args[0].code() == confluent_kafka.KafkaError.INVALID_REPLICATION_FACTOR

    for f in admin.create_partitions([NewPartitions("adm", 4)]).values():
        f.result(TIMEOUT)
    assert len(admin.list_topics("adm", timeout=TIMEOUT).topics["adm"].partitions) == 4

    resource = ConfigResource(ResourceType.TOPIC, "adm")
    configs = list(admin.describe_configs([resource]).values())[0].result(TIMEOUT)
    assert configs["retention.ms"].value == "3600000" and configs["retention.ms"].source == 1
    assert configs["max.message.bytes"].value == "1048588"
    assert configs["cleanup.policy"].value == "delete"

    list(admin.incremental_alter_configs([ConfigResource(ResourceType.TOPIC, "adm", incremental_configs=[
        ConfigEntry("max.message.bytes", "5000", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND),
        ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE),
    ])]).values())[0].result(TIMEOUT)
    configs = list(admin.describe_configs([resource]).values())[0].result(TIMEOUT)
    assert configs["max.message.bytes"].value == "5000"
    assert configs["cleanup.policy"].value == "delete,compact"
    assert configs["retention.ms"].value == "604800000" and configs["retention.ms"].source != 1

    # the legacy AlterConfigs replaces the whole set of overrides
    with pytest.warns(DeprecationWarning):
        altered = admin.alter_configs([ConfigResource(ResourceType.TOPIC, "adm", set_config={"segment.ms": "100000"})])
    list(altered.values())[0].result(TIMEOUT)
    configs = list(admin.describe_configs([resource]).values())[0].result(TIMEOUT)
    assert {k: v.value for k, v in configs.items() if v.source == 1} == {"segment.ms": "100000"}
    with Engine(server.data_dir) as engine:
        assert engine.topic("adm").configs == {"segment.ms": "100000"}

    broker = list(admin.describe_configs([ConfigResource(ResourceType.BROKER, "0")]).values())[0].result(TIMEOUT)
    assert broker["log.dirs"].value == server.data_dir

    for f in admin.delete_topics(["adm"]).values():
        f.result(TIMEOUT)
    assert "adm" not in admin.list_topics(timeout=TIMEOUT).topics


def test_confluent_admin_list_offsets_watermarks_and_delete_records(server, admin):
    topic = "offsets"
    create(admin, topic)
    producer = Producer({"bootstrap.servers": server.bootstrap})
    now = int(time.time() * 1000)
    for i in range(10):
        producer.produce(topic, value=b"v%d" % i, timestamp=now + i * 1000)
        producer.flush(TIMEOUT)  # one batch per record: timestamp lookups land inside the log

    def offset(spec):
        return list(admin.list_offsets({TopicPartition(topic, 0): spec}).values())[0].result(TIMEOUT).offset

    assert offset(OffsetSpec.earliest()) == 0
    assert offset(OffsetSpec.latest()) == 10
    assert offset(OffsetSpec.for_timestamp(now + 3500)) == 4
    assert offset(OffsetSpec.for_timestamp(now + 60_000)) == -1

    consumer = Consumer({"bootstrap.servers": server.bootstrap, "group.id": "wm"})
    try:
        assert consumer.get_watermark_offsets(TopicPartition(topic, 0), TIMEOUT) == (0, 10)
        deleted = list(admin.delete_records([TopicPartition(topic, 0, 6)]).values())[0].result(TIMEOUT)
        assert deleted.low_watermark == 6
        assert consumer.get_watermark_offsets(TopicPartition(topic, 0), TIMEOUT) == (6, 10)
    finally:
        consumer.close()
    assert offset(OffsetSpec.earliest()) == 6
    got = consume(server.bootstrap, topic, [0], 4, **{"auto.offset.reset": "earliest"})
    assert [m.offset() for m in got] == [6, 7, 8, 9]


# ------------------------------------------------------------------ kcat
def kcat(server, *args, input=None):
    proc = subprocess.run(["kcat", "-b", server.bootstrap, *args], input=input, capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_kcat_metadata_produce_consume(server, admin):
    create(admin, "kc")
    listing = kcat(server, "-L")
    assert f"broker 0 at 127.0.0.1:{server.port} (controller)" in listing
    assert 'topic "kc" with 1 partitions' in listing
    kcat(server, "-P", "-t", "kc", "-K:", input="k1:hello\nk2:world\n:no key\n")
    out = kcat(server, "-C", "-t", "kc", "-o", "beginning", "-e", "-f", "%k|%s|%o\n")
    assert out.splitlines() == ["k1|hello|0", "k2|world|1", "|no key|2"]
    assert [r.key for r in engine_records(server, "kc")] == [b"k1", b"k2", b""]


# ------------------------------------------------------------------ kafka-python
def test_kafka_python_producer_consumer_admin(server):
    kafka = pytest.importorskip("kafka")
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.admin import ConfigResource as KConfigResource
    from kafka.admin import ConfigResourceType, KafkaAdminClient, NewPartitions as KNewPartitions
    from kafka.admin import NewTopic as KNewTopic

    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap)
    try:
        admin.create_topics([KNewTopic("kpy", 2, 1, topic_configs={"retention.ms": "7200000"})])
        assert "kpy" in admin.list_topics()
        cluster = admin.describe_cluster()
        assert cluster["controller_id"] == 0 and cluster["brokers"][0]["port"] == server.port
        described = admin.describe_configs([KConfigResource(ConfigResourceType.TOPIC, "kpy")])
        assert described["topic"]["kpy"]["retention.ms"]["value"] == "7200000"
        admin.alter_configs([KConfigResource(ConfigResourceType.TOPIC, "kpy", configs={"retention.ms": "9000000"})])
        described = admin.describe_configs([KConfigResource(ConfigResourceType.TOPIC, "kpy")])
        assert described["topic"]["kpy"]["retention.ms"]["value"] == "9000000"
        admin.create_partitions({"kpy": KNewPartitions(3)})

        producer = KafkaProducer(bootstrap_servers=server.bootstrap)  # idempotent by default
        futures = [producer.send("kpy", key=b"k%d" % (i % 4), value=b"v%d" % i, partition=i % 3)
                   for i in range(30)]
        producer.flush(TIMEOUT)
        assert all(f.get(TIMEOUT).offset >= 0 for f in futures)
        producer.close()
        stored = [r for p in range(3) for r in engine_records(server, "kpy", p)]
        assert sorted(r.value for r in stored) == sorted(b"v%d" % i for i in range(30))
        with Engine(server.data_dir) as engine:
            data = engine.partition("kpy", 0).read(0, 1 << 20)
        assert all(h.producer_id >= 0 for _, h in iter_batches(data))

        consumer = KafkaConsumer(bootstrap_servers=server.bootstrap, fetch_max_wait_ms=200)
        tps = [kafka.TopicPartition("kpy", p) for p in range(3)]
        consumer.assign(tps)
        consumer.seek_to_beginning()
        values = []
        deadline = time.monotonic() + TIMEOUT
        while len(values) < 30 and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                values += [m.value for m in batch]
        assert sorted(values) == sorted(b"v%d" % i for i in range(30))
        assert consumer.end_offsets(tps) == {tp: 10 for tp in tps}
        consumer.close()

        admin.delete_topics(["kpy"])
        assert "kpy" not in admin.list_topics()
    finally:
        admin.close()
