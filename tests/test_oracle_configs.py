"""pk-configs against Kafka 4.4's kafka-configs (the oracle).

Each scenario runs twice on the session's Kafka 4.4 broker: Kafka's tool on its own names
(topic, user, client, group ending in `-k`) and pk's on a twin set (`-p`), so that each
alter sees the same starting state; stdout, stderr's first two lines (Kafka prints the
exception's toString after "Error while executing config command ..."; pk prints the same
two lines and no stack trace) and the exit status must match once the names are swapped.
The topic scenarios then run through pk on the bundled engine (compared with Kafka's output
on the real broker) and through both tools on a pk-server-start.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import time

import pytest

from conftest import BrokerProcess, tool_path
from waits import wait_for

P = "occ-"
SIDES = {"k": "kafka", "p": "pk"}


def names(side: str) -> dict[str, str]:
    return {"{T}": f"{P}topic-{side}", "{U}": f"{P}user-{side}", "{C}": f"{P}client-{side}",
            "{G}": f"{P}group-{side}"}


TOPIC_SCENARIOS = [
    ["--describe", "--topic", "{T}"],
    ["--alter", "--topic", "{T}", "--add-config", "retention.ms=1000,cleanup.policy=[compact,delete]"],
    ["--describe", "--topic", "{T}"],
    ["--describe", "--entity-type", "topics", "--entity-name", "{T}"],
    ["--alter", "--topic", "{T}", "--add-config-file", "{F}"],
    ["--describe", "--topic", "{T}"],
    ["--alter", "--topic", "{T}", "--delete-config", "retention.ms,nosuch"],
    ["--alter", "--entity-type", "topics", "--entity-name", "{T}", "--add-config", "max.message.bytes = 2000 ,"],
    ["--describe", "--topic", "{T}"],
    ["--alter", "--topic", "{T}", "--add-config", "bogus.key=1"],
    ["--alter", "--topic", "{T}", "--add-config", "retention.ms=abc"],
    ["--alter", "--topic", P + "nosuch", "--add-config", "retention.ms=1"],
    ["--describe", "--topic", P + "nosuch"],
    ["--describe", "--broker-defaults"],
    ["--describe", "--broker", "0"],
    ["--describe", "--entity-type", "brokers", "--entity-default"],
    # bad input
    ["--describe"],
    ["--topic", "{T}"],
    ["--alter", "--topic", "{T}"],
    ["--alter", "--entity-type", "topics"],
    ["--alter", "--entity-type", "users"],
    ["--alter", "--topic", "{T}", "--add-config", "retention.ms"],
    ["--alter", "--topic", "{T}", "--add-config", "a b=1"],
    ["--alter", "--topic", "{T}", "--add-config", "a=1", "--add-config-file", "{F}"],
    ["--describe", "--topic", "{T}", "--add-config", "a=1"],
    ["--describe", "--entity-type", "foo"],
    ["--describe", "--entity-type", "topics", "--entity-type", "topics"],
    ["--describe", "--topic", "{T}", "--entity-name", "x"],
    ["--describe", "--topic", "{T}", "--broker", "0"],
    ["--describe", "--broker", "x"],
    ["--describe", "--entity-type", "topics", "--entity-default"],
    ["--describe", "--entity-type", "broker-loggers"],
    ["--describe", "--topic", "bad name!"],
    ["--describe", "--topic", "{T}", "--topic", "{T}"],
    ["--alter", "--entity-type", "topics", "--entity-name", "{T}", "--entity-name", "x", "--add-config", "a=1"],
    ["--bogus"],
]

CLUSTER_SCENARIOS = [
    ["--describe", "--user", "{U}"],
    ["--alter", "--user", "{U}", "--add-config", "SCRAM-SHA-256=[iterations=8192,password=secret]"],
    ["--alter", "--user", "{U}", "--add-config", "SCRAM-SHA-512=[password=secret]"],
    ["--describe", "--user", "{U}"],
    ["--alter", "--user", "{U}", "--delete-config", "SCRAM-SHA-512"],
    ["--describe", "--user", "{U}"],
    ["--alter", "--user", "{U}", "--delete-config", "SCRAM-SHA-512"],
    ["--alter", "--user", "{U}", "--add-config", "producer_byte_rate=1024"],
    ["--describe", "--user", "{U}"],
    ["--alter", "--user", "{U}", "--add-config", "SCRAM-SHA-256=[iterations=100,password=x]"],
    ["--alter", "--user", "{U}", "--add-config", "SCRAM-SHA-256=[pw=x]"],
    ["--alter", "--user", "{U}", "--add-config", "foo=1"],
    ["--alter", "--user-defaults", "--add-config", "SCRAM-SHA-256=[password=x]"],
    ["--alter", "--user", "{U}", "--add-config", "SCRAM-SHA-256=[password=x],producer_byte_rate=10"],
    ["--alter", "--client", "{C}", "--add-config", "consumer_byte_rate=2048"],
    ["--describe", "--client", "{C}"],
    ["--describe", "--entity-type", "users", "--entity-name", "{U}", "--entity-type", "clients"],
    ["--alter", "--client", "{C}", "--add-config", "SCRAM-SHA-256=[password=x]"],
    ["--alter", "--client", "{C}", "--delete-config", "request_percentage"],
    ["--alter", "--group", "{G}", "--add-config", "consumer.session.timeout.ms=50000"],
    ["--describe", "--group", "{G}"],
    ["--describe", "--broker-logger", "0"],
]


def _fill(args: list[str], side: str, config_file: str) -> list[str]:
    out = []
    for a in args:
        for key, value in {**names(side), "{F}": config_file}.items():
            a = a.replace(key, value)
        out.append(a)
    return out


def _swap(text: str) -> str:
    for key, value in names("p").items():
        text = text.replace(value, names("k")[key])
    return text


def _head(err: str) -> str:
    """The message, and the exception line after "Error while executing ..." (not the usage
    table Kafka prints after some messages, nor stack frames)."""
    lines = err.splitlines()
    return "\n".join(lines[:2] if lines and lines[0].startswith("Error while executing") else lines[:1])


def _pk(*args, data_dir=None):
    env = {**os.environ, "PK_DATA_DIR": data_dir} if data_dir else None
    proc = subprocess.run([tool_path("pk-configs"), *args], capture_output=True, timeout=120, env=env)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.fixture(scope="module")
def config_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("oracle-configs") / "add.properties"
    path.write_text("retention.ms=777\nsegment.ms = 100000\n")
    return str(path)


def _create_topics(tools, bootstrap):
    for side in SIDES:
        r = tools("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", names(side)["{T}"])
        assert r.returncode == 0, r.err


def _compare(tools, bootstrap, scenarios, config_file) -> list[str]:
    b = ["--bootstrap-server", bootstrap]
    report = []
    for args in scenarios:
        k = tools("kafka-configs", *b, *_fill(args, "k", config_file))
        expected = (k.returncode, k.out, _head(k.err))
        rc, out, err = _pk(*b, *_fill(args, "p", config_file))
        got = (rc, _swap(out), _swap(_head(err)))
        if got != expected:
            report.append(f"{json.dumps(args)}\n  kafka: {expected!r}\n  pk:    {got!r}")
    return report


def test_scenarios_match_kafka(kafka, kafka_tools, config_file):
    _create_topics(kafka_tools, kafka.bootstrap)
    report = _compare(kafka_tools, kafka.bootstrap, TOPIC_SCENARIOS + CLUSTER_SCENARIOS, config_file)
    assert not report, "\n".join(report)


def test_engine_matches_kafka(kafka, kafka_tools, config_file, tmp_path):
    """The topic scenarios on the bundled engine against Kafka's tool on the real broker
    (a fresh topic on each side). Kafka's error line echoes its arguments (pk's has no
    --bootstrap-server there): after it, the exception line must match."""
    data_dir = str(tmp_path / "data")
    t = f"{P}engine"
    subprocess.run([tool_path("pk-topics"), "--create", "--topic", names("p")["{T}"]],
                   env={**os.environ, "PK_DATA_DIR": data_dir}, check=True, capture_output=True)
    r = kafka_tools("kafka-topics", "--bootstrap-server", kafka.bootstrap, "--create", "--topic", t)
    assert r.returncode == 0, r.err
    report = []
    for args in TOPIC_SCENARIOS:
        k = kafka_tools("kafka-configs", "--bootstrap-server", kafka.bootstrap,
                        *[a.replace("{T}", t).replace("{F}", config_file) for a in args])
        rc, out, err = _pk(*_fill(args, "p", config_file), data_dir=data_dir)
        out, err = out.replace(names("p")["{T}"], t), err.replace(names("p")["{T}"], t)
        kerr, perr = _head(k.err).splitlines(), _head(err).splitlines()
        if kerr and kerr[0].startswith("Error while executing config command"):
            kerr, perr = kerr[1:], perr[1:]
        if (rc, out, perr) != (k.returncode, k.out, kerr):
            report.append(f"{json.dumps(args)}\n  kafka:  {(k.returncode, k.out, kerr)!r}\n  engine: {(rc, out, perr)!r}")
    assert not report, "\n".join(report)


def test_kafka_tool_on_pk_server(kafka_tools, config_file, tmp_path):
    """Kafka's kafka-configs and pk-configs against a pk-server-start print the same."""
    server = BrokerProcess(str(tmp_path / "data")).start()
    try:
        _create_topics(kafka_tools, server.bootstrap)
        report = _compare(kafka_tools, server.bootstrap, TOPIC_SCENARIOS, config_file)
    finally:
        server.stop()
    assert not report, "\n".join(report)


def test_run_class_names(kafka, tmp_path):
    for cls in ("kafka.admin.ConfigCommand", "org.apache.kafka.tools.ConfigCommand"):
        proc = subprocess.run([tool_path("pk-run-class"), cls, "--bootstrap-server", kafka.bootstrap,
                               "--describe", "--broker-defaults"], capture_output=True, timeout=60)
        assert proc.returncode == 0 and proc.stdout.decode().startswith("Default configs for brokers in the cluster are:")


# ------------------------------------------------------------------ groups and brokers on a pk-server-start
# Run by Kafka's tool on the real Kafka 4.4 broker, by Kafka's tool on a pk-server-start, and
# by pk-configs on both: all four must print the same. Each tool alters its own groups (the -k
# names for Kafka's tool, the -p names for pk-configs), so every alter starts from the same state.
G = "{X}"  # a group of this module only (no consumer ever joins it)
GROUP_SCENARIOS = [
    ["--describe", "--entity-type", "groups", "--entity-name", G],
    ["--describe", "--group", G, "--all"],
    ["--alter", "--group", G, "--add-config", "consumer.session.timeout.ms=50000,consumer.heartbeat.interval.ms=6000"],
    ["--describe", "--entity-type", "groups", "--entity-name", G],
    ["--alter", "--group", G, "--add-config", "consumer.assignor.offload.enable=false,share.isolation.level=read_committed"],
    ["--describe", "--group", G, "--all"],
    ["--alter", "--group", G, "--add-config", "consumer.session.timeout.ms=5000"],
    ["--alter", "--group", G, "--add-config", "consumer.heartbeat.interval.ms=50000"],
    ["--alter", "--group", G, "--add-config", "consumer.session.timeout.ms=abc"],
    ["--alter", "--group", G, "--add-config", "share.renew.acknowledge.enable=maybe"],
    ["--alter", "--group", G, "--add-config", "foo=1"],
    ["--alter", "--group", G, "--add-config", "share.isolation.level=x"],
    ["--alter", "--group", G, "--add-config", "share.auto.offset.reset=x"],
    ["--alter", "--group", G, "--add-config", "share.auto.offset.reset=by_duration:PT1H"],
    ["--alter", "--group", G, "--add-config", "errors.deadletterqueue.topic.name=__x"],
    ["--alter", "--group", G, "--add-config", "streams.assignor.name=nosuch"],
    ["--alter", "--group", G, "--add-config", "streams.num.standby.replicas=3"],
    ["--alter", "--group", G, "--add-config", "streams.rack.aware.assignment.tags=[a,b,a]"],
    ["--alter", "--group", G, "--add-config", "share.record.lock.duration.ms=10"],
    ["--describe", "--group", G],
    ["--alter", "--group", G, "--delete-config", "consumer.session.timeout.ms,nosuch"],
    ["--describe", "--group", G],
    ["--alter", "--group", G, "--delete-config",
     "consumer.heartbeat.interval.ms,consumer.assignor.offload.enable,share.isolation.level,share.auto.offset.reset"],
    ["--describe", "--group", G],
]


def _fill_x(args: list[str], side: str) -> list[str]:
    return [a.replace("{X}", f"{P}cfg-group-{side}") for a in args]


def _three_way(tools, kafka_bootstrap: str, pk_bootstrap: str, scenarios) -> list[str]:
    def run(bootstrap: str, args: list[str]) -> tuple[int, str, str]:
        r = tools("kafka-configs", "--bootstrap-server", bootstrap, *_fill_x(args, "k"))
        return r.returncode, r.out, _head(r.err).replace(bootstrap, "B")

    report = []
    for args in scenarios:
        on_pk = run(pk_bootstrap, args)
        ours = [_pk_as_k(pk_bootstrap, args), _pk_as_k(kafka_bootstrap, args)]
        expected = run(kafka_bootstrap, args)
        deadline = time.monotonic() + 15
        # Kafka applies an altered config a moment after answering (its metadata publisher):
        # until then a describe may show the new synonyms beside the old value; not yet, not wrong.
        while args[0] == "--describe" and not expected == on_pk == ours[1] and time.monotonic() < deadline:
            time.sleep(0.2)
            expected, ours[1] = run(kafka_bootstrap, args), _pk_as_k(kafka_bootstrap, args)
        if not expected == on_pk == ours[0] == ours[1]:
            report.append(f"{json.dumps(args)}\n  kafka:         {expected!r}\n  kafka@pk:      {on_pk!r}\n"
                          f"  pk-configs@pk: {ours[0]!r}\n  pk@kafka:      {ours[1]!r}")
    return report


def _pk_as_k(bootstrap: str, args: list[str]) -> tuple[int, str, str]:
    """pk-configs on its own (-p) names, its output with the -k names and the address as B."""
    rc, out, err = _pk("--bootstrap-server", bootstrap, *_fill_x(args, "p"))
    return (rc, out.replace(f"{P}cfg-group-p", f"{P}cfg-group-k"),
            _head(err).replace(bootstrap, "B").replace(f"{P}cfg-group-p", f"{P}cfg-group-k"))


class _KafkaLikeBroker(BrokerProcess):
    """A pk-server-start given the settings the oracle's Kafka broker has (kafka_oracle.py),
    not the sample server.properties: a broker's describe lists its static settings too."""

    def command(self) -> list[str]:
        props = os.path.join(os.path.dirname(self.data_dir), "server.properties")
        with open(props, "w") as f:
            f.write("node.id=0\nnum.partitions=1\noffsets.topic.replication.factor=1\n"
                    "transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n"
                    "auto.create.topics.enable=true\n")
        args = [tool_path("pk-server-start"), props]
        for key, value in self.overrides.items():
            args += ["--override", f"{key}={value}"]
        return args


@pytest.fixture(scope="module")
def pk_server(tmp_path_factory):
    server = _KafkaLikeBroker(str(tmp_path_factory.mktemp("oracle-configs-server") / "data")).start()
    yield server
    server.stop()


def test_group_configs_match_kafka(kafka, kafka_tools, pk_server):
    report = _three_way(kafka_tools, kafka.bootstrap, pk_server.bootstrap, GROUP_SCENARIOS)
    assert not report, "\n".join(report)


# Broker 0 and the cluster-wide default: each alter is idempotent, so Kafka's tool and
# pk-configs may both apply it to pk's one broker; the last ones leave no dynamic config behind.
BROKER_SCENARIOS = [
    ["--describe", "--entity-type", "brokers", "--entity-name", "0"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config",
     "log.cleaner.threads=2,message.max.bytes=2000000,log.cleaner.io.buffer.size=600000,pk.unknown.key=5"],
    ["--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "log.retention.ms=100000,num.io.threads=9"],
    ["--alter", "--broker-defaults", "--add-config", "log.segment.delete.delay.ms=1000"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config",
     "listener.name.plaintext.ssl.keystore.password=secret,log.retention.ms=12345"],
    ["--describe", "--entity-type", "brokers", "--entity-name", "0"],
    ["--describe", "--broker", "0"],
    ["--describe", "--entity-type", "brokers", "--entity-default"],
    ["--describe", "--broker-defaults"],
    ["--describe", "--entity-type", "brokers"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "broker.id=5"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "log.dirs=/x,process.roles=broker"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "ssl.keystore.password=x"],
    ["--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "listeners=PLAINTEXT://:1"],
    ["--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "listener.name.x.ssl.key.password=y"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "log.cleaner.threads=abc"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "log.cleaner.threads=-1"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "log.cleaner.threads=9"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "log.cleaner.threads=0"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "num.io.threads=100"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "num.io.threads=1"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "log.cleaner.min.cleanable.ratio=2"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "log.cleanup.policy=foo"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "compression.type=foo"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "unclean.leader.election.enable=x"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "log.segment.bytes=10"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--delete-config", "nosuch,log.cleaner.threads"],
    ["--describe", "--entity-type", "brokers", "--entity-name", "0"],
    ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--delete-config",
     "message.max.bytes,log.cleaner.io.buffer.size,pk.unknown.key,listener.name.plaintext.ssl.keystore.password,"
     "log.retention.ms"],
    ["--alter", "--entity-type", "brokers", "--entity-default", "--delete-config",
     "log.retention.ms,num.io.threads,log.segment.delete.delay.ms"],
    ["--describe", "--entity-type", "brokers", "--entity-name", "0"],
    ["--describe", "--entity-type", "brokers", "--entity-default"],
]


def test_broker_configs_match_kafka(kafka, kafka_tools, pk_server):
    report = _three_way(kafka_tools, kafka.bootstrap, pk_server.bootstrap, BROKER_SCENARIOS)
    assert not report, "\n".join(report)


# Settings that differ with the setup, not the code: the oracle runs a KRaft controller beside its
# broker (pk has none) and sets the share coordinator's topic; pk-server-start defaults the
# internal topics to one replica (README: one node).
SETUP_KEYS = {"advertised.listeners", "controller.listener.names", "controller.quorum.voters",
              "listener.security.protocol.map", "listeners", "log.dirs", "process.roles",
              "share.coordinator.state.topic.min.isr", "share.coordinator.state.topic.replication.factor"}
PK_DEFAULTS = {"offsets.topic.replication.factor", "transaction.state.log.min.isr",
               "transaction.state.log.replication.factor"}


def test_broker_describe_all_matches_kafka(kafka, kafka_tools, pk_server):
    """--describe --all of broker 0, with dynamic configs set on it and as the default: every
    KafkaConfig line reads the same (but the setup's own settings), from either tool."""
    alters = [["--entity-name", "0", "--add-config", "log.cleaner.threads=2,log.retention.ms=5000"],
              ["--entity-default", "--add-config", "message.max.bytes=3000000,num.io.threads=10"]]
    undo = [["--entity-name", "0", "--delete-config", "log.cleaner.threads,log.retention.ms"],
            ["--entity-default", "--delete-config", "message.max.bytes,num.io.threads"]]
    outputs = []
    for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
        b = ["--bootstrap-server", bootstrap, "--alter", "--entity-type", "brokers"]
        try:
            for args in alters:
                assert kafka_tools("kafka-configs", *b, *args).returncode == 0

            def applied() -> str | None:
                """Kafka's describe once the broker applied the defaults (its value follows the
                synonyms a moment later: the metadata publisher applies them)."""
                out = kafka_tools("kafka-configs", "--bootstrap-server", bootstrap, "--describe", "--all",
                                  "--broker", "0").out
                lines = out.splitlines()
                done = all(f"  {kv} sensitive=false" in " ".join(lines) for kv in ("message.max.bytes=3000000",
                                                                                  "num.io.threads=10"))
                return out if done else None

            described = [wait_for(applied, timeout=30, what="the dynamic defaults applied"),
                         _pk("--bootstrap-server", bootstrap, "--describe", "--all", "--broker", "0")[1]]
        finally:
            for args in undo:
                kafka_tools("kafka-configs", *b, *args)
        outputs += [[line for line in out.splitlines()
                     if line.split("=")[0].strip() not in SETUP_KEYS | PK_DEFAULTS] for out in described]
    assert len(outputs[0]) > 300
    report = ["\n".join(difflib.unified_diff(outputs[0], other, lineterm="", n=0)) for other in outputs[1:]]
    assert not any(report), "\n".join(report)
