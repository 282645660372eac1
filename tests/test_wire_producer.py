"""pk-console-producer's own Produce path on a cluster (commands/backends/wire_produce.py):
what librdkafka used to do for it, checked on Kafka 4.4 and on pk-server-start, read back by
kcat and Kafka's own tools.

- keyed lines land on Java's partitions (murmur2), unkeyed ones all arrive, each partition in
  input order; acks 0, 1 and all; idempotent by default (producer ids in Kafka's log);
- every compression codec, readable by kcat;
- Kafka's texts for a record above max.request.size, a record the broker refuses as too large
  (the records before it stored), an unknown topic after max.block.ms;
- what the wire path does not serve falls back to confluent-kafka;
- a broker that goes away and comes back while records are sent: every record once, in order.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import time

import pytest

from pk.commands import producer as cmd
from pk.commands.backends.kafka_clients import RemoteProducer, producer_opener
from pk.commands.backends.wire_produce import WireProducer, usable
from pk.engine.partitioner import partition_for_key

from conftest import SECURE_PK_SCRAM, secure_pk_client, BrokerProcess, Runner, tool_path
from waits import create_topic_with_leaders, wait_for

# kcat -e ends a partition at the first empty fetch there, which the broker holds for
# librdkafka's fetch.wait.max.ms (500 ms) first: half a second per call, to no purpose here.
KCAT_QUICK_END = ("-X", "fetch.wait.max.ms=10")

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

PRODUCER = "pk-console-producer"
KEYED = ("--reader-property", "parse.key=true", "--reader-property", "key.separator=:")


@pytest.fixture(scope="module")
def cluster(kafka_or_pk):
    return kafka_or_pk


@pytest.fixture
def tools(tmp_path):
    return Runner(str(tmp_path / "unused"))


_names = iter(range(10 ** 6))


def _topic(bootstrap: str, stem: str, partitions: int = 1, **configs) -> str:
    return create_topic_with_leaders(bootstrap, f"wprod-{stem}-{os.getpid()}-{next(_names)}", partitions,
                                     {k.replace("_", "."): v for k, v in configs.items()})


def _ok(proc) -> None:
    assert proc.returncode == 0 and proc.err == "" and proc.out == "", (proc.returncode, proc.out, proc.err)


def _kcat(bootstrap: str, topic: str, partition: int, fmt: str = "%k:%s\n") -> list[str]:
    """Every record of one partition, read by kcat (a client that is not pk's)."""
    proc = subprocess.run(["kcat", "-C", *KCAT_QUICK_END, "-b", bootstrap, "-t", topic, "-p", str(partition), "-o", "beginning",
                           "-e", "-q", "-f", fmt], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode().splitlines()


def _settings(**options):
    opts = cmd.ProducerOptions(**options)
    cmd.check_args(opts)
    return cmd.producer_settings(cmd.producer_properties(opts))


# --------------------------------------------------------------------------- which producer
@pytest.mark.parametrize("extra, props, wire", [
    ({}, [], True),
    ({}, ["security.protocol=PLAINTEXT", "linger.ms=5"], True),
    ({"queue.buffering.max.ms": "5"}, [], False),  # -X: librdkafka's own properties
    ({}, ["transactional.id=tx"], False),
    ({}, ["interceptor.classes=com.example.Counter"], False),
    ({}, ["partitioner.class=com.example.Mine"], False),
    ({}, ["security.protocol=SASL_PLAINTEXT", "sasl.mechanism=OAUTHBEARER"], False),
])
def test_the_wire_producer_serves_what_it_implements(extra, props, wire):
    """wire_produce.usable decides from the configuration alone, before the first record."""
    settings = _settings(topic="t", command_property=props)
    assert (usable(settings, extra) is not False) == wire


def test_the_console_producer_opens_a_wire_producer_by_default(cluster):
    bootstrap, _ = cluster
    topic = _topic(bootstrap, "which")
    producer = producer_opener(bootstrap, {})(topic, _settings(topic=topic))
    try:
        assert isinstance(producer, WireProducer)
        producer.send_values([b"one", b"two"])
    finally:
        producer.close()
    assert _kcat(bootstrap, topic, 0, "%s\n") == ["one", "two"]
    fallback = producer_opener(bootstrap, {"queue.buffering.max.ms": "5"})(topic, _settings(topic=topic))
    try:
        assert isinstance(fallback, RemoteProducer)
    finally:
        fallback.close()


# --------------------------------------------------------------------------- records land where Java puts them
@pytest.mark.parametrize("acks", ["0", "1", "all"])
def test_keyed_lines_land_on_javas_partitions_in_order(cluster, tools, acks):
    bootstrap, _ = cluster
    topic = _topic(bootstrap, f"keys-{acks}", 4)
    lines = [f"user-{i % 53}:event {i}" for i in range(20000)]
    _ok(tools(PRODUCER, "--bootstrap-server", bootstrap, "--topic", topic, *KEYED, "--request-required-acks", acks,
              input="\n".join(lines) + "\n", timeout=120))
    expected = [[] for _ in range(4)]
    for line in lines:
        expected[partition_for_key(line.split(":", 1)[0].encode(), 4)].append(line)
    for p in range(4):
        assert _kcat(bootstrap, topic, p) == expected[p]


def test_unkeyed_lines_all_arrive_each_partition_in_order(cluster, tools):
    bootstrap, _ = cluster
    topic = _topic(bootstrap, "plain", 3)
    lines = [f"line {i:06d} " + "x" * 80 for i in range(30000)]
    _ok(tools(PRODUCER, "--bootstrap-server", bootstrap, "--topic", topic, input="\n".join(lines) + "\n",
              timeout=120))
    got = [_kcat(bootstrap, topic, p, "%s\n") for p in range(3)]
    for values in got:
        assert values == sorted(values)  # the input's order within each partition
    assert sorted(v for values in got for v in values) == lines
    # The sticky partitioner moves on batch by batch: more than one partition is used.
    assert sum(1 for values in got if values) > 1


def test_keyed_lines_on_kafka_read_by_kafkas_console_consumer(kafka, kafka_tools, tools):
    topic = _topic(kafka.bootstrap, "java", 3)
    lines = [f"k{i % 11}:v{i}" for i in range(3000)]
    _ok(tools(PRODUCER, "--bootstrap-server", kafka.bootstrap, "--topic", topic, *KEYED,
              input="\n".join(lines) + "\n", timeout=120))
    for p in range(3):
        expected = [line for line in lines if partition_for_key(line.split(":", 1)[0].encode(), 3) == p]
        result = kafka_tools("kafka-console-consumer", "--bootstrap-server", kafka.bootstrap, "--topic", topic,
                             "--partition", str(p), "--offset", "earliest", "--max-messages", str(len(expected)),
                             "--formatter-property", "print.key=true", "--formatter-property", "key.separator=:",
                             "--timeout-ms", "60000")
        assert result.out.splitlines() == expected, result.err


@pytest.mark.parametrize("args, idempotent", [
    ((), True),  # Kafka's default
    (("--request-required-acks", "1"), False),  # a conflicting setting turns it off silently
    (("--command-property", "enable.idempotence=false"), False),
])
def test_idempotent_by_default_as_kafkas_producer(kafka, kafka_tools, tools, args, idempotent):
    """The batches' producer ids and sequences as Kafka's DumpLogSegments reads them."""
    topic = _topic(kafka.bootstrap, "idem")
    _ok(tools(PRODUCER, "--bootstrap-server", kafka.bootstrap, "--topic", topic, *args,
              input="".join(f"line {i}\n" for i in range(2000)), timeout=120))
    segment = f"{kafka.log_dir}/{topic}-0/00000000000000000000.log"
    dump = kafka_tools("kafka-dump-log", "--files", segment)
    ids = re.findall(r"producerId: (-?\d+)", dump.out)
    assert len(ids) > 1 and all((int(i) >= 0) == idempotent for i in ids), dump.out
    if idempotent:  # each batch's base sequence follows the records before it
        firsts = [int(s) for s in re.findall(r"baseSequence: (-?\d+)", dump.out)]
        counts = [int(c) for c in re.findall(r"count: (\d+)", dump.out)]
        assert firsts == [sum(counts[:i]) for i in range(len(counts))], dump.out


# --------------------------------------------------------------------------- codecs
@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_every_codec_readable_by_kcat(cluster, tools, codec):
    bootstrap, _ = cluster
    topic = _topic(bootstrap, f"codec-{codec}")
    lines = [f"k{i % 7}:{codec} value {i} " + "abc" * (i % 30) for i in range(5000)]
    _ok(tools(PRODUCER, "--bootstrap-server", bootstrap, "--topic", topic, *KEYED, "--compression-codec", codec,
              input="\n".join(lines) + "\n", timeout=120))
    assert _kcat(bootstrap, topic, 0) == lines


# --------------------------------------------------------------------------- errors, with Kafka's texts
def test_a_record_above_max_request_size(cluster, tools):
    bootstrap, _ = cluster
    topic = _topic(bootstrap, "request-size")
    proc = tools(PRODUCER, "--bootstrap-server", bootstrap, "--topic", topic, "--command-property",
                 "max.request.size=1000", input="ok\n" + "z" * 1000 + "\n")
    assert (proc.returncode, proc.err) == (1, "The message is 1086 bytes when serialized which is larger than 1000, "
                                              "which is the value of the max.request.size configuration.\n")
    assert _kcat(bootstrap, topic, 0, "%s\n") == ["ok"]


@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_a_record_the_broker_refuses_as_too_large_keeps_the_others(cluster, tools, codec):
    """MESSAGE_TOO_LARGE splits the batch (as Java's producer does) until the big record is
    alone: it fails with Kafka's text, every other record is stored, in order."""
    bootstrap, _ = cluster
    topic = _topic(bootstrap, "too-large", max_message_bytes="400")
    rng = random.Random(5)
    big = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(800))  # compresses badly
    proc = tools(PRODUCER, "--bootstrap-server", bootstrap, "--topic", topic, "--compression-codec", codec,
                 input=f"one\ntwo\n{big}\nfour\n")
    assert (proc.returncode, proc.err) == (
        1, "The request included a message larger than the max message size the server will accept.\n")
    assert _kcat(bootstrap, topic, 0, "%s\n") == ["one", "two", "four"]


def test_an_unknown_topic_on_a_cluster_that_creates_none(tmp_path, tools):
    server = BrokerProcess(str(tmp_path / "data"), {"auto.create.topics.enable": "false"}).start()
    try:
        proc = tools(PRODUCER, "--bootstrap-server", server.bootstrap, "--topic", "missing", "--max-block-ms", "3000",
                     input="x\n")
        assert (proc.returncode, proc.err) == (1, "Topic missing not present in metadata after 3000 ms.\n")
    finally:
        server.stop()


def test_a_missing_topic_is_created_as_kafkas_producer_asks(cluster, tools):
    bootstrap, _ = cluster
    topic = f"wprod-auto-{os.getpid()}-{next(_names)}"
    _ok(tools(PRODUCER, "--bootstrap-server", bootstrap, "--topic", topic, *KEYED, input="a:1\nb:2\n"))
    assert sorted(_kcat(bootstrap, topic, 0)) == ["a:1", "b:2"]


# --------------------------------------------------------------------------- retries
def test_a_broker_going_away_and_back_loses_and_repeats_nothing(tmp_path):
    """Records keep coming while the broker restarts: the batches it did not acknowledge are
    sent again, in order, with their sequences: each record is stored once."""
    server = BrokerProcess(str(tmp_path / "data")).start()
    try:
        topic = _topic(server.bootstrap, "restart")
        read_fd, write_fd = os.pipe()
        producer = subprocess.Popen([tool_path(PRODUCER), "--bootstrap-server", server.bootstrap, "--topic", topic,
                                     "--timeout", "0", "--message-send-max-retries", "1000",
                                     "--request-timeout-ms", "5000"],
                                    stdin=read_fd, stderr=subprocess.PIPE)
        os.close(read_fd)
        writer = os.fdopen(write_fd, "w")
        try:
            for i in range(2000):
                writer.write(f"a{i}\n")
            writer.flush()
            wait_for(lambda: len(_kcat(server.bootstrap, topic, 0)) == 2000, timeout=60, what="the first records")
            server.stop()
            for i in range(2000):
                writer.write(f"b{i}\n")
            writer.flush()
            time.sleep(1)  # the producer meets a closed port for a while (not a wait for a state)
            assert producer.poll() is None
            server = BrokerProcess(server.data_dir, port=server.port).start()
            writer.close()
            assert producer.wait(120) == 0, producer.stderr.read()
        finally:
            if producer.poll() is None:
                producer.kill()
        assert _kcat(server.bootstrap, topic, 0, "%s\n") == [f"a{i}" for i in range(2000)] + \
            [f"b{i}" for i in range(2000)]
    finally:
        server.stop()


def test_a_leader_killed_on_a_replicated_cluster_loses_and_repeats_nothing(zookeeper, tmp_path):
    """Three pk brokers, a partition on all three: the leader is killed (SIGKILL) while lines
    keep coming; the producer finds the new leader and sends again the batches the old one did
    not acknowledge, with their sequences: every line once, in order (the new leader knows
    the producer's sequences from the replicated batches, so a batch stored but not
    acknowledged is not stored twice)."""
    from replication_cluster import ReplicationCluster

    with ReplicationCluster(zookeeper, tmp_path, 3) as cluster:
        cluster.start_all()
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        admin.create_topics([NewTopic("kill", 1, 3, config={"min.insync.replicas": "2"})])["kill"].result(30)
        state = cluster.wait_state("kill", 0, lambda s: len(s["isr"]) == 3)
        cluster.wait_applied("kill", 1)
        read_fd, write_fd = os.pipe()
        producer = subprocess.Popen([tool_path(PRODUCER), "--bootstrap-server", cluster.bootstrap, "--topic", "kill",
                                     "--timeout", "0", "--message-send-max-retries", "1000",
                                     "--request-timeout-ms", "5000"],
                                    stdin=read_fd, stderr=subprocess.PIPE)
        os.close(read_fd)
        writer = os.fdopen(write_fd, "w")
        survivor = next(i for i in cluster.brokers if i != state["leader"])
        bootstrap = cluster.brokers[survivor].bootstrap
        try:
            for i in range(3000):
                writer.write(f"a{i}\n")
            writer.flush()
            wait_for(lambda: len(_kcat(bootstrap, "kill", 0)) >= 1000, timeout=60, what="the first records")
            cluster.kill(state["leader"])
            for i in range(3000):
                writer.write(f"b{i}\n")
            writer.close()
            assert producer.wait(180) == 0, producer.stderr.read()
        finally:
            if producer.poll() is None:
                producer.kill()
        moved = cluster.wait_state("kill", 0, lambda s: s["leader"] not in (-1, state["leader"]))
        wait_for(lambda: len(_kcat(cluster.brokers[moved["leader"]].bootstrap, "kill", 0)) >= 6000, timeout=60,
                 what="every record at the new leader")
        assert _kcat(cluster.brokers[moved["leader"]].bootstrap, "kill", 0, "%s\n") == \
            [f"a{i}" for i in range(3000)] + [f"b{i}" for i in range(3000)]


# --------------------------------------------------------------------------- security
SCRAM_USER, SCRAM_PASSWORD = SECURE_PK_SCRAM


@pytest.fixture(scope="module")
def secure(secure_pk):
    return secure_pk


@pytest.mark.parametrize("name", ["scram", "plain", "mtls", "sasl_plaintext"])
def test_secured_listeners(secure, tls_certs, tools, tmp_path, name):
    import security_setup as S

    listener, config = secure_pk_client(tls_certs, name)
    path = S.write_properties(str(tmp_path / "client.properties"), config)
    settings = _settings(topic="t", command_config=path)
    assert usable(settings, {}) is not False  # the wire path serves it
    topic = _topic(secure.bootstrap, f"sec-{name}", 2)
    lines = [f"k{i % 5}:{name} {i}" for i in range(3000)]
    _ok(tools(PRODUCER, "--bootstrap-server", f"127.0.0.1:{secure.ports[listener]}", "--command-config", path,
              "--topic", topic, *KEYED, input="\n".join(lines) + "\n", timeout=120))
    for p in range(2):
        assert _kcat(secure.bootstrap, topic, p) == [
            line for line in lines if partition_for_key(line.split(":", 1)[0].encode(), 2) == p]


def test_a_wrong_password_and_an_untrusted_broker(secure, tls_certs, tools, tmp_path):
    import security_setup as S

    wrong = S.write_properties(str(tmp_path / "wrong.properties"),
                               S.client_config(tls_certs, "SASL_SSL", "SCRAM-SHA-512", SCRAM_USER, "nope"))
    proc = tools(PRODUCER, "--bootstrap-server", f"127.0.0.1:{secure.ports['SASL_SSL']}", "--command-config", wrong,
                 "--topic", "t", input="x\n")
    assert (proc.returncode, proc.err) == (1, "Authentication failed during authentication due to invalid "
                                              "credentials with SASL mechanism SCRAM-SHA-512\n")
    config = S.client_config(tls_certs, "SSL", client_cert=True)
    config["ssl.truststore.location"] = tls_certs.client_keystore  # not the CA that signed the broker
    untrusted = S.write_properties(str(tmp_path / "untrusted.properties"), config)
    proc = tools(PRODUCER, "--bootstrap-server", f"127.0.0.1:{secure.ports['SSL']}", "--command-config", untrusted,
                 "--topic", "t", input="x\n")
    assert (proc.returncode, proc.err) == (1, "SSL handshake failed\n")


# --------------------------------------------------------------------------- the request's bytes
@pytest.mark.parametrize("version", [9, 10, 11, 12])
def test_produce_request_pieces_are_the_codecs_bytes(version):
    """The sender writes its Produce requests as pieces (the batches uncopied): joined, they
    are exactly what pk's codec encodes for the same request."""
    from pk.engine import protocol as kp
    from pk.commands.backends.wire_produce import produce_request_pieces

    batches = [(0, bytes(range(256)) * 64), (7, b"x" * 5), (2, b""), (300, bytes(200))]
    for client_id in ("console-producer", ""):
        for acks in (-1, 0, 1):
            body = {"transactional_id": None, "acks": acks, "timeout_ms": 1500, "topic_data": [
                {"name": "tøpic-1", "partition_data": [{"index": p, "records": d} for p, d in batches]}]}
            expected = kp.encode_request(kp.ApiKey.PRODUCE, version, 77, body, client_id=client_id)
            pieces = produce_request_pieces(version, 77, client_id, acks, 1500, "tøpic-1", batches)
            assert b"".join(pieces) == expected


@pytest.mark.parametrize("version", [9, 10, 11, 12])
def test_produce_answer_codes_match_the_codec(version):
    """The sender reads a Produce answer's error codes with a reader of its own: for answers
    with and without record errors, messages and tagged fields (current_leader,
    node_endpoints) it finds what pk's codec decodes, and a cut frame is the codec's error."""
    from pk.engine import protocol as kp
    from pk.commands.backends.wire_produce import produce_answer_codes

    rng = random.Random(version)
    for partitions in (1, 3, 200):
        for detailed in (False, True):
            parts = []
            for index in rng.sample(range(1000), partitions):
                part = {"index": index, "error_code": rng.choice([0, 3, 10, 45, 46, 6]),
                        "base_offset": rng.randrange(1 << 50), "log_append_time_ms": -1, "log_start_offset": 0,
                        "record_errors": [], "error_message": None}
                if detailed:
                    part["record_errors"] = [{"batch_index": 3, "batch_index_error_message": "bad é" * 40},
                                             {"batch_index": 4, "batch_index_error_message": None}]
                    part["error_message"] = "refused"
                    part["current_leader"] = {"leader_id": 2, "leader_epoch": 7}
                parts.append(part)
            body = {"responses": [{"name": "tøpic-1", "partition_responses": parts}], "throttle_time_ms": 5}
            if detailed:
                body["node_endpoints"] = [{"node_id": 2, "host": "broker-2", "port": 9092, "rack": None}]
            frame = bytes(kp.encode_response(kp.ApiKey.PRODUCE, version, 4242, body))[4:]
            corr, answer = kp.parse_response(frame, kp.ApiKey.PRODUCE, version)
            expected = {p["index"]: p["error_code"] for t in answer["responses"] for p in t["partition_responses"]}
            assert produce_answer_codes(frame, version) == (corr, expected) == (4242, expected)
            with pytest.raises(kp.ProtocolError):
                produce_answer_codes(frame[:len(frame) // 2], version)


def test_a_request_larger_than_the_socket_buffer_arrives_whole():
    """_send_pieces sends what sendmsg did not take in one call (a full socket buffer: the
    broker reads slower than the producer writes) until the whole request is out, in order."""
    import socket
    import threading

    from pk.commands.backends.wire_produce import _send_pieces, produce_request_pieces

    rng = random.Random(5)
    batches = [(p, rng.randbytes(rng.randrange(1, 300_000))) for p in range(7)]
    pieces = produce_request_pieces(12, 9, "c", -1, 1500, "t", batches)
    expected = b"".join(pieces)
    writer, reader = socket.socketpair()
    writer.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    writer.settimeout(30)  # as the producer's connections: sendmsg may then take part of a request
    received = bytearray()

    def read_slowly():
        while len(received) < len(expected):
            chunk = reader.recv(rng.randrange(1, 20_000))
            if not chunk:
                return
            received.extend(chunk)

    thread = threading.Thread(target=read_slowly)
    thread.start()
    try:
        _send_pieces(writer, pieces)
    finally:
        thread.join(60)
        writer.close()
        reader.close()
    assert bytes(received) == expected
