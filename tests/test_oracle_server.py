"""Kafka 4.4's own tools against pk-server-start, compared with the same tools against the real
Kafka 4.4 broker (the oracle).

Every scenario runs through Kafka's tool twice, on the oracle broker and on a pk-server-start
started with the oracle's own server.properties (node id 0; only its log dir and port differ),
and stdout, stderr's first line and the exit status must be the same after normalising only
what must differ: the broker's host:port, topic ids, log timestamps, generated client and group
ids, and the figures of the perf tools. Where Kafka 4.4's clients need a protocol version that
pk-server-start does not serve yet, the scenario sits in its own test, marked xfail (strict)
with the API and version in the reason.

Kafka's tools run in the session's shared tool JVM, which runs each call's shutdown hooks (the
console producer closes its producer there) and keeps what leftover client threads log out of
the answers.
"""

from __future__ import annotations

import json
import os
import re
import time

import pytest
from conftest import BrokerProcess, tool_path
from kafka_oracle import normalise

P = "ot-srv-"  # every topic and group of this module (the oracle broker is shared by the session)


class SameConfigBroker(BrokerProcess):
    """pk-server-start run with the oracle broker's server.properties, on its own port and log
    dir, so that a scenario meets the same broker settings on both sides."""

    def __init__(self, data_dir: str, kafka):
        super().__init__(data_dir, {"node.id": "0"})
        config = {**kafka.config(), "log.dirs": data_dir, "listeners": f"PLAINTEXT://{self.bootstrap}",
                  "advertised.listeners": f"PLAINTEXT://{self.bootstrap}"}
        for key in ("controller.quorum.voters", "controller.listener.names", "listener.security.protocol.map"):
            config.pop(key, None)  # the KRaft controller's listener: pk-server-start has none
        self.properties = os.path.join(os.path.dirname(data_dir), "server.properties")
        os.makedirs(os.path.dirname(self.properties), exist_ok=True)
        with open(self.properties, "w") as f:
            f.writelines(f"{k}={v}\n" for k, v in config.items())

    def command(self) -> list[str]:
        return [tool_path("pk-server-start"), self.properties]


@pytest.fixture(scope="module")
def pk_broker(kafka, kafka_tools, tmp_path_factory):
    b = SameConfigBroker(str(tmp_path_factory.mktemp("oracle-server") / "data"), kafka).start()
    try:
        yield b
    finally:
        b.stop()
        # A Kafka client a tool left open in the shared JVM would now log connection warnings
        # into the tool server's answers: check, and start the JVM afresh if it happened.
        time.sleep(1)
        try:
            version = kafka_tools("kafka-topics", "--version").out
        except (ValueError, TimeoutError) as e:
            version = repr(e)
        if not version.startswith(kafka_tools.dist.version):
            kafka_tools.close()
            pytest.fail(f"a Kafka client outlived its tool call against pk-server-start: {version[:300]}")


_CLIENT_IDS = re.compile(r"\b(adminclient|consumer-[\w.-]+|producer)-\d+\b")
_PERF_GROUP = re.compile(r"\bperf-consumer-\d+\b")


class Pair:
    """Runs one tool call on both brokers ("{B}" in an argument stands for the broker's
    address) and records every difference; `check()` fails with all of them at once."""

    def __init__(self, kafka_tools, kafka, pk_broker, tmp_path):
        self.tools = kafka_tools
        self.brokers = {"kafka": kafka.bootstrap, "pk": pk_broker.bootstrap}
        self.tmp = tmp_path
        self.compared = 0
        self.diffs: list[str] = []

    def norm(self, text: str, broker: str) -> str:
        text = normalise(text, replace={self.brokers[broker]: "HOST:PORT"})
        text = _CLIENT_IDS.sub(lambda m: m.group(1) + "-N", text)
        return _PERF_GROUP.sub("perf-consumer-N", text)

    def run(self, broker: str, tool: str, *args: str, input: str = "", process: bool = False):
        args = tuple(a.replace("{B}", self.brokers[broker]) for a in args)
        run = self.tools.run_process if process else self.tools
        return run(tool, *args, input=input, timeout=90)

    def both(self, tool: str, *args: str, input: str = "", process: bool = False, lines=None, fix=None):
        """(kafka's, pk's) (exit status, stdout, stderr's first line), normalised; `lines`
        keeps only the stdout lines it accepts (a shared broker holds other tests' names),
        `fix` rewrites both outcomes further (perf figures)."""
        out = {}
        for broker in ("kafka", "pk"):
            start = time.monotonic()
            r = self.run(broker, tool, *args, input=input, process=process)
            if os.environ.get("OT_TIMES"):
                print(f"{time.monotonic() - start:6.2f}s {broker} {tool} {' '.join(args)}")
            stdout = r.out if lines is None else "".join(l for l in r.out.splitlines(True) if lines(l))
            result = (r.returncode, self.norm(stdout, broker), self.norm(r.err_first, broker))
            out[broker] = fix(result) if fix else result
        self.compared += 1
        if out["kafka"] != out["pk"]:
            self.diffs.append(f"{tool} {' '.join(args)}\n  kafka: {out['kafka']!r}\n  pk:    {out['pk']!r}")
        return out["kafka"], out["pk"]

    def json_file(self, name: str, data) -> str:
        path = self.tmp / name
        path.write_text(json.dumps(data) if not isinstance(data, str) else data)
        return str(path)

    def check(self) -> None:
        assert not self.diffs, f"{len(self.diffs)} of {self.compared} scenarios differ:\n" + "\n".join(self.diffs)


@pytest.fixture
def pair(kafka_tools, kafka, pk_broker, tmp_path):
    return Pair(kafka_tools, kafka, pk_broker, tmp_path)


def create(pair: Pair, topic: str, *args: str) -> None:
    k, p = pair.both("kafka-topics", "--bootstrap-server", "{B}", "--create", "--topic", topic, *args)
    assert k == p == (0, f"Created topic {topic}.\n", ""), (k, p)
    for bootstrap in pair.brokers.values():
        visible(bootstrap, topic)


def visible(bootstrap: str, topic: str, timeout: float = 30.0) -> None:
    """Until the broker's metadata shows `topic` with a leader for each partition. Kafka's
    CreateTopics answers once its controller has the topic; the broker's metadata cache can
    apply it a moment later, and a describe in between said "does not exist"."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    deadline = time.monotonic() + timeout
    while True:
        meta = admin.list_topics(topic, timeout=10).topics.get(topic)
        if meta is not None and meta.error is None and meta.partitions \
                and all(p.leader >= 0 for p in meta.partitions.values()):
            return
        assert time.monotonic() < deadline, (bootstrap, topic, meta and meta.error)
        time.sleep(0.05)


def produce(pair: Pair, topic: str, lines: str) -> None:
    """key:value lines through Kafka's ConsoleProducer (in a JVM of its own), on both."""
    k, p = pair.both("kafka-console-producer", "--bootstrap-server", "{B}", "--topic", topic,
                     "--reader-property", "parse.key=true", "--reader-property", "key.separator=:",
                     input=lines)
    assert k == p and k[0] == 0, (k, p)


def seed(pair: Pair, topic: str, lines: str) -> None:
    """key:value lines written to both brokers by confluent-kafka (murmur2 of the key picks the
    partition, as Kafka's Java producer does): test data for the tools that read it."""
    from confluent_kafka import Producer

    for bootstrap in pair.brokers.values():
        producer = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random",
                             "enable.idempotence": True, "log_level": 0})
        for line in lines.splitlines():
            key, value = line.split(":", 1)
            producer.produce(topic, value.encode(), key.encode())
        assert producer.flush(30) == 0


def mine(line: str) -> bool:
    return P in line


def sorted_lines(result):
    """A listing whose order is each broker's own (group coordinators iterate hash maps): its
    lines compared as a sorted list."""
    rc, out, err = result
    return rc, "".join(sorted(out.splitlines(True))), err


# --------------------------------------------------------------------------- kafka-broker-api-versions

_API_LINE = re.compile(r"^\t(\w+)\((\d+)\): (?:UNSUPPORTED|(\d+)(?: to (\d+))? \[usable: (\d+)\])")


def api_table(out: str) -> dict[str, tuple[int, int] | None]:
    table = {}
    for line in out.splitlines():
        m = _API_LINE.match(line)
        if m:
            name, _, low, high, _ = m.groups()
            table[f"{name}({m.group(2)})"] = None if low is None else (int(low), int(high or low))
    return table


def test_broker_api_versions(pair):
    """BrokerApiVersionsCommand: the same node line and the same APIs in the same order; each
    API pk serves has a range inside the one Kafka 4.4's client knows (so `usable` is pk's
    highest version), and what pk does not serve is UNSUPPORTED."""
    k = pair.run("kafka", "kafka-broker-api-versions", "--bootstrap-server", "{B}")
    p = pair.run("pk", "kafka-broker-api-versions", "--bootstrap-server", "{B}")
    assert (k.returncode, p.returncode, k.err, p.err) == (0, 0, "", "")
    head_k, head_p = (pair.norm(r.out.splitlines()[0], b) for r, b in ((k, "kafka"), (p, "pk")))
    assert head_k == head_p == "HOST:PORT (id: 0 rack: null isFenced: false) -> ("
    kt, pt = api_table(k.out), api_table(p.out)
    assert list(kt) == list(pt) and len(kt) > 60
    served = {api: rng for api, rng in pt.items() if rng is not None}
    assert {"Produce(0)", "Fetch(1)", "Metadata(3)", "ApiVersions(18)", "DeleteRecords(21)"} <= set(served)
    for api, (low, high) in served.items():
        assert kt[api] is not None and kt[api][0] <= high <= kt[api][1], (api, kt[api], (low, high))
        assert f"\t{api}: {low}{'' if low == high else f' to {high}'} [usable: {high}]" in p.out
    assert p.out.endswith(")\n") and k.out.endswith(")\n")


def test_broker_api_versions_same_ranges(pair):
    """For every API pk-server-start serves, the same range as Kafka 4.4's broker."""
    k = api_table(pair.run("kafka", "kafka-broker-api-versions", "--bootstrap-server", "{B}").out)
    p = api_table(pair.run("pk", "kafka-broker-api-versions", "--bootstrap-server", "{B}").out)
    served = [api for api, rng in p.items() if rng is not None]
    assert [(api, p[api]) for api in served] == [(api, k[api]) for api in served]


# --------------------------------------------------------------------------- kafka-topics


def test_topics(pair):
    t = P + "topics"
    create(pair, t, "--partitions", "2", "--config", "retention.ms=100000")
    create(pair, t + "-cfg", "--config", "cleanup.policy=compact", "--config", "segment.bytes=2000000")
    for args in (
        ("--create", "--topic", t),                                      # exists
        ("--create", "--topic", t, "--if-not-exists"),
        ("--create", "--topic", t + "-x", "--partitions", "0"),
        ("--create", "--topic", t + "-x", "--replication-factor", "3"),
        ("--create", "--topic", t + "-x", "--config", "retention.ms=abc"),
        ("--create", "--topic", t + "-x", "--config", "nosuch=1"),
        ("--create", "--topic", t + "-x", "--replica-assignment", "0:0"),
        ("--create", "--topic", "ot srv bad"),
        ("--alter", "--topic", t, "--partitions", "2"),
        ("--alter", "--topic", t, "--partitions", "1"),
        ("--alter", "--topic", t, "--partitions", "3"),
        ("--alter", "--topic", t + "-nosuch", "--partitions", "3"),
        ("--describe", "--topic", t + "-nosuch"),
        ("--delete", "--topic", t + "-nosuch"),
        ("--list", "--topic", P + "topics.*"),
        ("--list", "--exclude-internal", "--topic", P + "topics.*"),
        ("--describe", "--topic", t, "--unavailable-partitions"),
        ("--describe", "--topic", t, "--under-replicated-partitions"),
        ("--describe", "--topic", t, "--under-min-isr-partitions"),
        ("--delete", "--topic", t + "-cfg"),
        ("--list", "--topic", P + "topics.*"),
        ("--no-such-flag",),
    ):
        pair.both("kafka-topics", "--bootstrap-server", "{B}", *args)
    pair.check()


def test_topics_describe(pair):
    t = P + "describe"
    create(pair, t, "--partitions", "2", "--config", "retention.ms=100000")
    pair.both("kafka-topics", "--bootstrap-server", "{B}", "--describe", "--topic", t)
    pair.both("kafka-topics", "--bootstrap-server", "{B}", "--describe", "--topic", P + "describe.*")
    pair.check()


# --------------------------------------------------------------------------- console producer / consumer


def test_console_consumer_group_resumes(pair):
    """ConsoleProducer, then ConsoleConsumer --group twice: the second resumes where the first
    committed, a third finds nothing; ConsumerGroupCommand sees the committed offsets."""
    t, g = P + "console", P + "console-g"
    create(pair, t)
    produce(pair, t, "k1:v1\nk2:v2\nk3:v3\nk4:v4\nk5:v5\n")
    fmt = ("--formatter-property", "print.key=true", "--formatter-property", "print.offset=true",
           "--formatter-property", "print.partition=true")
    first = pair.both("kafka-console-consumer", "--bootstrap-server", "{B}", "--topic", t, "--group", g,
                      "--from-beginning", "--max-messages", "3", *fmt)
    second = pair.both("kafka-console-consumer", "--bootstrap-server", "{B}", "--topic", t, "--group", g,
                       "--max-messages", "2", *fmt)
    third = pair.both("kafka-console-consumer", "--bootstrap-server", "{B}", "--topic", t, "--group", g,
                      "--max-messages", "1", "--timeout-ms", "1500")
    assert first[1][1] == "Partition:0\tOffset:0\tk1\tv1\nPartition:0\tOffset:1\tk2\tv2\nPartition:0\tOffset:2\tk3\tv3\n"
    assert second[1][1] == "Partition:0\tOffset:3\tk4\tv4\nPartition:0\tOffset:4\tk5\tv5\n"
    assert third[1][:2] == (0, "")
    pair.both("kafka-consumer-groups", "--bootstrap-server", "{B}", "--describe", "--group", g)
    # without a group: partition and offset options, and a formatter's properties
    pair.both("kafka-console-consumer", "--bootstrap-server", "{B}", "--topic", t, "--partition", "0",
              "--offset", "3", "--max-messages", "2", "--formatter-property", "print.key=true",
              "--formatter-property", "key.separator=|")
    pair.both("kafka-console-consumer", "--bootstrap-server", "{B}", "--topic", t, "--partition", "0",
              "--offset", "latest", "--max-messages", "1", "--timeout-ms", "1000")
    pair.both("kafka-console-consumer", "--bootstrap-server", "{B}", "--topic", t, "--group", g,
              "--partition", "0")
    pair.check()


def test_console_producer_auto_creates(pair):
    t = P + "auto"
    pair.both("kafka-console-producer", "--bootstrap-server", "{B}", "--topic", t, input="a\n")
    pair.both("kafka-console-consumer", "--bootstrap-server", "{B}", "--topic", t, "--from-beginning",
              "--max-messages", "1")
    pair.check()


# --------------------------------------------------------------------------- kafka-consumer-groups


def test_consumer_groups(pair):
    t, g = P + "groups", P + "groups-g"
    create(pair, t, "--partitions", "2")
    seed(pair, t, "a:1\nb:2\nc:3\nd:4\ne:5\nf:6\n")
    k, p = pair.both("kafka-console-consumer", "--bootstrap-server", "{B}", "--topic", t, "--group", g,
                     "--from-beginning", "--max-messages", "6", "--timeout-ms", "10000")
    assert k[0] == p[0] == 0
    cg = ("kafka-consumer-groups", "--bootstrap-server", "{B}")
    pair.both(*cg, "--list", lines=mine, fix=sorted_lines)
    # an active member (confluent-kafka, the classic protocol) on each broker
    from confluent_kafka import Consumer

    members = []
    try:
        for bootstrap in pair.brokers.values():
            c = Consumer({"bootstrap.servers": bootstrap, "group.id": g, "client.id": P + "client",
                          "log_level": 0, "enable.auto.commit": False})
            members.append(c)
            c.subscribe([t])
            deadline = time.monotonic() + 30
            while len(c.assignment()) < 2 and time.monotonic() < deadline:
                c.poll(0.1)
            assert len(c.assignment()) == 2
        for args in (
            ("--describe", "--group", g),
            ("--describe", "--group", g, "--members"),
            ("--describe", "--group", g, "--members", "--verbose"),
            ("--describe", "--group", g, "--state"),
            ("--delete", "--group", g),
            ("--reset-offsets", "--group", g, "--topic", t, "--to-earliest", "--execute"),
            ("--delete-offsets", "--group", g, "--topic", t),
        ):
            k, _ = pair.both(*cg, *args)
            if args[-1] == "--members":
                assert f"{g} {P}client-<uuid> /127.0.0.1 {P}client 2" in re.sub(r" +", " ", k[1]), k
    finally:
        for c in members:
            c.close()
    for args in (
        ("--describe", "--group", g),
        ("--describe", "--group", g, "--offsets"),
        ("--describe", "--group", g, "--members"),
        ("--describe", "--group", g, "--members", "--verbose"),
        ("--describe", "--group", g, "--state"),
        ("--reset-offsets", "--group", g, "--topic", t, "--to-earliest", "--dry-run"),
        ("--reset-offsets", "--group", g, "--topic", t, "--to-earliest", "--execute"),
        ("--describe", "--group", g),
        ("--reset-offsets", "--group", g, "--topic", t + ":0", "--to-offset", "2", "--execute"),
        ("--reset-offsets", "--group", g, "--topic", t, "--shift-by", "1", "--execute"),
        ("--reset-offsets", "--group", g, "--topic", t, "--to-latest", "--dry-run"),
        ("--reset-offsets", "--group", g, "--topic", t, "--to-offset", "99", "--dry-run"),
        ("--reset-offsets", "--group", g, "--all-topics", "--to-current", "--dry-run"),
        ("--reset-offsets", "--group", g, "--topic", t, "--to-datetime", "2000-01-01T00:00:00.000", "--dry-run"),
        ("--reset-offsets", "--group", g, "--topic", t + "-nosuch", "--to-earliest", "--dry-run"),
        ("--describe", "--group", g, "--offsets"),
        ("--delete-offsets", "--group", g, "--topic", t + ":1"),
        ("--describe", "--group", g),
        ("--delete-offsets", "--group", g, "--topic", t + "-nosuch"),
        ("--delete", "--group", g),
        ("--delete", "--group", g),
        ("--describe", "--group"),
    ):
        pair.both(*cg, *args)
    # exits (usage) while its admin client is open: a JVM of its own, where the exit ends it
    pair.both(*cg, "--reset-offsets", "--group", g)
    pair.both(*cg, "--list", lines=mine, fix=sorted_lines)
    pair.check()


def test_consumer_groups_new_versions(pair):
    t, g = P + "groups2", P + "groups2-g"
    create(pair, t)
    seed(pair, t, "k:v\n")  # (a member that joins and commits: the group then exists on both)
    pair.both("kafka-console-consumer", "--bootstrap-server", "{B}", "--topic", t, "--group", g,
              "--from-beginning", "--max-messages", "1", "--timeout-ms", "10000")
    cg = ("kafka-consumer-groups", "--bootstrap-server", "{B}")
    pair.both(*cg, "--describe", "--group", P + "nosuch")
    # (widths follow other tests' groups; Kafka lists groups in the order of its coordinator
    # shards' hash map, an accident of its implementation: the lines are compared sorted)
    squeeze = lambda r: sorted_lines((r[0], re.sub(r" +", " ", r[1]), r[2]))  # noqa: E731
    pair.both(*cg, "--list", "--state", lines=mine, fix=squeeze)
    pair.both(*cg, "--list", "--type", lines=mine, fix=squeeze)
    pair.check()


def _serves_topic_ids(bootstrap: str) -> bool:
    """Whether a broker's Metadata carries topic ids (v10+): KIP-848 consumers need them."""
    from pk.engine.protocol import ApiKey
    from test_server_groups_protocol import Conn

    c = Conn(bootstrap)
    try:
        versions = c.call(ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
    finally:
        c.close()
    return any(k["api_key"] == ApiKey.METADATA and k["max_version"] >= 10 for k in versions["api_keys"])


_MEMBER_IDS = re.compile(r"^(\S+ +)\S+( +/127\.0\.0\.1)", re.M)


def test_consumer_protocol_group(pair, pk_broker):
    """KIP-848: Kafka's Java consumer with group.protocol=consumer reads a 3-partition topic;
    then, while a confluent-kafka consumer (also group.protocol=consumer) holds every partition
    of the group, the Java consumer joins it, takes partitions over and reads new records;
    kafka-consumer-groups describes the group."""
    if not _serves_topic_ids(pk_broker.bootstrap):
        pytest.skip("pk-server-start's Metadata does not carry topic ids (v10+), which KIP-848 consumers need")
    import threading

    from confluent_kafka import Consumer, Producer

    t, g = P + "kip848", P + "kip848-g"
    create(pair, t, "--partitions", "3")
    seed(pair, t, "".join(f"k{i}:v{i}\n" for i in range(30)))
    java = ("kafka-console-consumer", "--bootstrap-server", "{B}", "--topic", t, "--group", g,
            "--command-property", "group.protocol=consumer", "--timeout-ms", "20000")
    k, p = pair.both(*java, "--from-beginning", "--max-messages", "30", fix=sorted_lines)
    assert k[0] == 0 and k[1].count("\n") == 30, k
    cg = ("kafka-consumer-groups", "--bootstrap-server", "{B}")
    pair.both(*cg, "--describe", "--group", g)
    pair.both(*cg, "--describe", "--group", g, "--state")
    # (column widths follow the longest group name on each broker, other tests' included)
    pair.both(*cg, "--list", "--type", lines=mine,
              fix=lambda r: sorted_lines((r[0], re.sub(r" +", " ", r[1]), r[2])))

    outcomes = {}
    for broker, bootstrap in pair.brokers.items():
        member = Consumer({"bootstrap.servers": bootstrap, "group.id": g, "group.protocol": "consumer",
                           "client.id": P + "client", "log_level": 0})
        member.subscribe([t])
        deadline = time.monotonic() + 30
        while len(member.assignment()) < 3 and time.monotonic() < deadline:
            member.poll(0.1)
        assert len(member.assignment()) == 3
        held = pair.run(broker, *cg, "--describe", "--group", g, "--members")
        stop = threading.Event()

        def serve():  # the member heartbeats, revokes and keeps producing while Java joins
            producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0})
            i = 0
            while not stop.is_set():
                member.poll(0.05)
                producer.produce(t, f"n{i}".encode(), partition=i % 3)
                producer.poll(0)
                i += 1
            producer.flush(10)
        thread = threading.Thread(target=serve)
        thread.start()
        try:
            joined = pair.run(broker, *java, "--max-messages", "5")
        finally:
            stop.set()
            thread.join()
            member.close()
        # (the records read are whichever the member produced: their count is compared)
        outcomes[broker] = [(held.returncode, pair.norm(_MEMBER_IDS.sub(r"\1ID\2", held.out), broker),
                             pair.norm(held.err_first, broker)),
                            (joined.returncode, joined.out.count("\n"), pair.norm(joined.err_first, broker))]
        # the Java consumer read records of the partitions it took over
        assert joined.returncode == 0 and joined.out.count("\n") == 5, (broker, joined.out, joined.err)
    pair.compared += 1
    if outcomes["kafka"] != outcomes["pk"]:
        pair.diffs.append(f"KIP-848 group\n  kafka: {outcomes['kafka']!r}\n  pk:    {outcomes['pk']!r}")
    pair.both(*cg, "--describe", "--group", g, "--state")
    pair.check()
    # pk recorded the group in __consumer_offsets as Kafka does: Kafka's own decoder reads it
    import glob

    from pk.engine.consumer_offsets import partition_for
    files = sorted(glob.glob(os.path.join(pk_broker.data_dir, f"__consumer_offsets-{partition_for(g)}", "*.log")))
    dump = pair.tools("kafka-dump-log", "--offsets-decoder", "--files", ",".join(files))
    assert dump.returncode == 0 and "Exception" not in dump.out + dump.err, dump.err
    for record_type in (3, 5, 6, 7, 8):
        assert f'key: {{"type":"{record_type}","data":{{"groupId":"{g}"' in dump.out, record_type


# --------------------------------------------------------------------------- kafka-get-offsets


def test_get_offsets(pair):
    t = P + "offsets"
    create(pair, t, "--partitions", "3")
    seed(pair, t, "k1:a\nk2:b\nk3:c\nk4:d\nk1:e\n")
    go = ("kafka-get-offsets", "--bootstrap-server", "{B}")
    for args in (
        ("--topic", t),
        ("--topic", t, "--time", "-1"),
        ("--topic", t, "--time", "latest"),
        ("--topic", t, "--time", "-2"),
        ("--topic", t, "--time", "earliest"),
        ("--topic", t, "--time", "0"),
        ("--topic", t, "--time", "99999999999999"),
        ("--topic", t, "--partitions", "0,2"),
        ("--topic-partitions", t + ":1"),
        ("--topic-partitions", P + "offs.*:0-2"),
        ("--topic", t + "-nosuch"),
        ("--topic", t, "--partitions", "7"),
        ("--topic", t, "--time", "abc"),
        ("--topic-partitions", t + ":x"),
    ):
        pair.both(*go, *args)
    pair.check()


def test_get_offsets_new_specs(pair):
    t = P + "offsets2"
    create(pair, t)
    seed(pair, t, "k:a\nk:b\n")
    for spec in ("-3", "max-timestamp", "-4", "earliest-local", "-5"):
        pair.both("kafka-get-offsets", "--bootstrap-server", "{B}", "--topic", t, "--time", spec)
    pair.check()


# --------------------------------------------------------------------------- kafka-configs


def test_configs(pair):
    t = P + "configs"
    create(pair, t, "--partitions", "1", "--config", "retention.ms=100000")
    cc = ("kafka-configs", "--bootstrap-server", "{B}", "--entity-type", "topics")
    for args in (
        ("--describe", "--entity-name", t),
        ("--alter", "--entity-name", t, "--add-config", "cleanup.policy=[compact,delete],max.message.bytes=2000"),
        ("--describe", "--entity-name", t),
        ("--alter", "--entity-name", t, "--delete-config", "retention.ms"),
        ("--describe", "--entity-name", t),
        ("--alter", "--entity-name", t, "--add-config", "min.insync.replicas=1,segment.ms=3600000"),
        ("--describe", "--entity-name", t),
        ("--alter", "--entity-name", t, "--add-config", "retention.ms=abc"),
        ("--alter", "--entity-name", t, "--add-config", "nosuch=1"),
        ("--alter", "--entity-name", t, "--delete-config", "nosuch"),
        ("--alter", "--entity-name", t + "-nosuch", "--add-config", "retention.ms=1"),
        ("--describe", "--entity-name", t + "-nosuch"),
        ("--alter", "--entity-name", t),
        ("--describe", "--entity-name", "__consumer_offsets"),
    ):
        pair.both(*cc, *args)
    # --all: compared line by line for the configs both know (pk's topic configs are
    # Kafka 3.7's set: see the report); the common ones must be the same, synonyms included.
    k = pair.run("kafka", *cc, "--describe", "--all", "--entity-name", t)
    p = pair.run("pk", *cc, "--describe", "--all", "--entity-name", t)
    name = lambda line: line.split("=", 1)[0]  # noqa: E731
    kl, pl = ({name(l): l for l in r.out.splitlines()[1:]} for r in (k, p))
    common = sorted(set(kl) & set(pl))
    assert len(common) >= 25
    # message.timestamp.after.max.ms: Kafka 4.0 changed its default to 1 hour; pk's is 3.7's
    differ = {c.strip() for c in common if kl[c] != pl[c]}
    assert differ <= {"message.timestamp.after.max.ms"}, [(kl[c], pl[c]) for c in common if kl[c] != pl[c]]
    assert (k.returncode, k.out.splitlines()[0]) == (p.returncode, p.out.splitlines()[0])
    pair.check()


# --------------------------------------------------------------------------- perf tools

_FIGURE = re.compile(r"\d+(?:\.\d+)?(?= (?:records/sec|MB/sec|ms (?:avg|max|50th|95th|99th|99\.9th)))")


def _producer_figures(result):
    status, out, err = result
    return status, _FIGURE.sub("N", out), err


def _consumer_figures(result):
    """ConsumerPerformance's CSV line: times and rates blanked, MB and record counts kept."""
    status, out, err = result
    lines = out.splitlines(True)
    for i, line in enumerate(lines):
        fields = line.rstrip("\n").split(", ")
        if len(fields) == 10 and fields[4].isdigit():
            lines[i] = ", ".join(f if j in (2, 4) else "N" for j, f in enumerate(fields)) + "\n"
    return status, "".join(lines), err


def test_producer_perf(pair):
    t = P + "pperf"
    create(pair, t, "--partitions", "2")
    pp = ("kafka-producer-perf-test", "--topic", t)
    k, p = pair.both(*pp, "--num-records", "200", "--record-size", "50", "--throughput", "-1",
                     "--bootstrap-server", "{B}", fix=_producer_figures)
    assert k[1] == "200 records sent, N records/sec (N MB/sec), N ms avg latency, N ms max latency, " \
                   "N ms 50th, N ms 95th, N ms 99th, N ms 99.9th.\n", k
    for args in (
        ("--num-records", "20", "--record-size", "10", "--throughput", "-1", "--producer-props",
         "bootstrap.servers={B}", "acks=1", "linger.ms=0", "compression.type=lz4"),
        ("--num-records", "20", "--payload-monotonic", "--throughput", "-1", "--command-property",
         "bootstrap.servers={B}", "acks=all", "enable.idempotence=true"),
        ("--num-records", "20", "--payload-monotonic", "--throughput", "-1", "--command-property",
         "bootstrap.servers={B}", "--command-property", "acks=all"),        # the last one wins
        ("--num-records", "20", "--record-size", "10", "--throughput", "-1", "--transactional-id", "x",
         "--bootstrap-server", "{B}", "--transaction-duration-ms", "0"),
        ("--num-records", "20", "--throughput", "-1", "--bootstrap-server", "{B}"),
    ):
        pair.both(*pp, *args, fix=_producer_figures)
    pair.check()


def test_producer_perf_transactional(pair):
    t = P + "pperf-tx"
    create(pair, t)
    pair.both("kafka-producer-perf-test", "--topic", t, "--num-records", "20", "--record-size", "10",
              "--throughput", "-1", "--transactional-id", P + "tx", "--transaction-duration-ms", "100",
              "--bootstrap-server", "{B}", "--command-property", "max.block.ms=2000", fix=_producer_figures)
    pair.check()


def test_consumer_perf(pair):
    t = P + "cperf"
    create(pair, t)
    k, p = pair.both("kafka-producer-perf-test", "--topic", t, "--num-records", "100", "--record-size", "20",
                     "--throughput", "-1", "--bootstrap-server", "{B}", fix=_producer_figures)
    assert k[0] == p[0] == 0
    cp = ("kafka-consumer-perf-test", "--bootstrap-server", "{B}", "--topic", t)
    k, p = pair.both(*cp, "--num-records", "100", "--timeout", "10000", fix=_consumer_figures)
    assert k[1].endswith("N, N, 0.0019, N, 100, N, N, N, N, N\n"), k
    for args in (
        ("--num-records", "50", "--timeout", "10000", "--group", P + "cperf-g", "--show-detailed-stats",
         "--reporting-interval", "60000"),
        ("--num-records", "30", "--timeout", "2000", "--group", P + "cperf-g"),
        ("--num-records", "100", "--timeout", "1000", "--hide-header", "--from-latest"),
        ("--messages", "10", "--timeout", "10000"),
        ("--num-records", "101", "--timeout", "1000"),
    ):
        pair.both(*cp, *args, fix=_consumer_figures)
    pair.check()


# --------------------------------------------------------------------------- kafka-delete-records


def test_delete_records(pair):
    t = P + "delrec"
    create(pair, t, "--partitions", "2")
    seed(pair, t, "k1:a\nk2:b\nk3:c\nk4:d\nk5:e\nk6:f\n")
    dr = ("kafka-delete-records", "--bootstrap-server", "{B}", "--offset-json-file")

    def offsets(*entries):
        return pair.json_file("offsets.json", {"version": 1, "partitions": [
            {"topic": t, "partition": p, "offset": o} for p, o in entries]})

    for path in (
        offsets((0, 1)),
        offsets((0, 1), (1, -1)),
        offsets((1, 99)),
        offsets((0, 0)),
        pair.json_file("bad.json", "junk"),
        pair.json_file("empty.json", {"version": 1, "partitions": []}),
        pair.json_file("dup.json", {"version": 1, "partitions": [{"topic": t, "partition": 0, "offset": 1}] * 2}),
        str(pair.tmp / "missing.json"),
    ):
        pair.both(*dr, path)
    pair.both("kafka-get-offsets", "--bootstrap-server", "{B}", "--topic", t, "--time", "-2")
    pair.check()


# --------------------------------------------------------------------------- admin: log dirs, producers, broker configs


def _log_dir_json(result):
    """kafka-log-dirs' answer with each broker's log directory path blanked (they differ)."""
    status, out, err = result
    return status, re.sub(r'"logDir":"[^"]*"', '"logDir":"DIR"', out), err


def test_log_dirs(pair):
    t = P + "logdirs"
    create(pair, t, "--partitions", "2")
    seed(pair, t, "k1:a\n")  # one batch: the same bytes on both brokers
    ld = ("kafka-log-dirs", "--bootstrap-server", "{B}", "--describe")
    for args in (("--topic-list", t), ("--topic-list", t + "," + t + "-nosuch"), ("--topic-list", t + "-nosuch"),
                 ("--topic-list", t, "--broker-list", "0")):
        pair.both(*ld, *args, fix=_log_dir_json)
    pair.check()


def _producer_rows(result):
    """describe-producers' table with what must differ blanked: the producer id (each broker
    hands out its own) and the last timestamp (column widths follow)."""
    status, out, err = result
    rows = []
    for line in out.splitlines():
        cells = line.split()
        if cells and cells[0].isdigit():
            cells[0] = cells[4] = "N"
        rows.append(" ".join(cells) + "\n")
    return status, "".join(rows), err


def test_transactions_describe_producers(pair):
    t = P + "producers"
    create(pair, t)
    seed(pair, t, "k1:a\nk2:b\n")
    k, p = pair.both("kafka-transactions", "--bootstrap-server", "{B}", "describe-producers", "--topic", t,
                     "--partition", "0", fix=_producer_rows)
    assert k[0] == 0 and "ProducerId" in k[1] and k[1].count("\n") == 2, k
    pair.check()


def test_configs_brokers(pair):
    cc = ("kafka-configs", "--bootstrap-server", "{B}")
    for args in (
        ("--entity-type", "brokers", "--entity-name", "0", "--describe"),
        ("--entity-type", "brokers", "--entity-default", "--describe"),
        ("--entity-type", "brokers", "--entity-name", "7", "--describe"),
        ("--entity-type", "broker-loggers", "--entity-name", "7", "--describe"),
        ("--entity-type", "broker-loggers", "--entity-name", "0", "--alter", "--add-config", "nosuch.logger=INFO"),
    ):
        pair.both(*cc, *args)
    pair.check()
