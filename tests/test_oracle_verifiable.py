"""pk-verifiable-producer and pk-verifiable-consumer against Kafka 4.4's kafka-verifiable-producer
and kafka-verifiable-consumer on the shared Kafka 4.4
broker: the same JSON event lines field by field (the timestamps and the measured average
throughput blanked), and argparse4j's error messages (Kafka prints its usage, then the
message wrapped and justified at 75 columns; pk prints the message as one line).

Kafka's tools print their last events from a JVM shutdown hook, so its runs use a
JVM of their own (kafka_tools.run_process); its usage errors use the shared one."""

from __future__ import annotations

import json
import re

import pytest

from conftest import Runner
from kafka_oracle import wait_for_leaders

P = "ot-verif-"


def argparse_error(err: str, prog: str) -> str:
    m = re.search(rf"{prog}:\s+error:", err)
    assert m, err
    text = err[m.start():].split("\n\n", 1)[0].rstrip("\n")
    return re.sub(r"\s+", " ", re.sub(r"-\n", "-", text))


def normalised(out: str) -> list[dict]:
    """Each event with its timestamp and the measured throughput blanked."""
    ev = [json.loads(line) for line in out.splitlines()]
    for e in ev:
        e["timestamp"] = 0
        if "avg_throughput" in e:
            e["avg_throughput"] = 0.0
    return ev


@pytest.fixture(scope="module")
def verif(kafka, kafka_tools, tmp_path_factory):
    b = kafka.bootstrap
    topics = {P + name: 1 for name in ("k1", "p1", "k2", "p2", "c")}
    for topic in topics:
        r = kafka_tools("kafka-topics", "--bootstrap-server", b, "--create", "--topic", topic, "--partitions", "1")
        assert r.returncode == 0, r.err
    wait_for_leaders(b, topics)
    r = kafka_tools("kafka-console-producer", "--bootstrap-server", b, "--topic", P + "c", "--property",
                    "parse.key=true", input="".join(f"k{i % 3}\tv{i}\n" for i in range(8)))
    assert r.returncode == 0, r.err
    root = tmp_path_factory.mktemp("oracle-verifiable")
    (root / "client.properties").write_text("linger.ms=1\n")
    return b, root, Runner(str(root / "pk-data"))


@pytest.mark.parametrize("n,extra", [
    ("1", ["--max-messages", "7", "--repeating-keys", "3", "--value-prefix", "12", "--acks", "1"]),
    ("2", ["--max-messages", "4", "--message-create-time", "1500000000000", "--acks", "-1",
           "--throughput", "100", "--command-config", "{root}/client.properties"]),
])
def test_events_match_kafka(verif, kafka_tools, n, extra):
    b, root, pk = verif
    extra = [a.replace("{root}", str(root)) for a in extra]
    k = kafka_tools.run_process("kafka-verifiable-producer", "--topic", P + "k" + n, "--bootstrap-server", b, *extra)
    p = pk("pk-verifiable-producer", "--topic", P + "p" + n, "--bootstrap-server", b, *extra)
    assert (p.returncode, k.returncode) == (0, 0), (p.err, k.err)
    kev, pev = normalised(k.out), normalised(p.out)
    for e in kev:
        if "topic" in e:
            e["topic"] = P + "p" + n
    assert pev == kev
    assert [list(e) for e in pev] == [list(e) for e in kev]  # Jackson's field order


def test_argument_errors_match_kafka(verif, kafka_tools):
    b, root, pk = verif
    cases = [
        ["--bootstrap-server", b],
        ["--topic", "t"],
        ["--topic", "t", "--bootstrap-server", b, "--acks", "2"],
        ["--topic", "t", "--bootstrap-server", b, "--max-messages", "ten"],
        ["--topic", "t", "--bootstrap-server", b, "--message-create-time", "9223372036854775808"],
        ["--topic", "t", "--bootstrap-server", b, "--nope"],
        ["--topic", "t", "--bootstrap-server", b, "extra"],
        ["--topic", "t", "--bootstrap-server", b, "--producer.config", str(root / "missing.properties")],
        ["--topic", "t", "--bootstrap-server", b, "--command-config", str(root / "missing.properties")],
        ["--topic", "t", "--bootstrap-server", b, "--throughput"],
        ["--topic", "t", "--bootstrap-server", b, "--max=3", "--thr", "x"],
    ]
    for args in cases:
        k = kafka_tools("kafka-verifiable-producer", *args)
        p = pk("pk-verifiable-producer", *args)
        assert (p.returncode, k.returncode) == (1, 1), args
        assert p.err == argparse_error(k.err, "verifiable-producer") + "\n", args
        assert p.out == ""


@pytest.mark.parametrize("extra", [
    ["--max-messages", "8", "--verbose"],
    ["--max-messages", "5", "--group-protocol", "consumer", "--command-config", "{root}/client.properties"],
])
def test_consumer_events_match_kafka(verif, kafka_tools, extra):
    """The same eight records read by each tool in a group of its own."""
    b, root, pk = verif
    extra = [a.replace("{root}", str(root)) for a in extra]
    group = "ot-verif-" + "-".join(a.strip("-") for a in extra[:2])
    common = ["--topic", P + "c", "--bootstrap-server", b]
    k = kafka_tools.run_process("kafka-verifiable-consumer", *common, "--group-id", group + "-k", *extra)
    p = pk("pk-verifiable-consumer", *common, "--group-id", group + "-p", *extra, timeout=60)
    assert (p.returncode, k.returncode) == (0, 0), (p.err, k.err)
    assert normalised(p.out) == normalised(k.out)
    assert [list(e) for e in normalised(p.out)] == [list(e) for e in normalised(k.out)]


def test_consumer_errors_match_kafka(verif, kafka_tools):
    b, root, pk = verif
    common = ["--topic", "t", "--group-id", "g"]
    usage = [
        ["--topic", "t", "--bootstrap-server", b],
        [*common],
        [*common, "--bootstrap-server", b, "--max-messages", "x"],
        [*common, "--bootstrap-server", b, "--verbose=1"],
        [*common, "--bootstrap-server", b, "--consumer.config", str(root / "missing.properties")],
    ]
    for args in usage:
        k = kafka_tools("kafka-verifiable-consumer", *args)
        p = pk("pk-verifiable-consumer", *args)
        assert (p.returncode, k.returncode) == (1, 1), args
        assert p.err == argparse_error(k.err, "verifiable-consumer") + "\n", args
    for args in ([*common, "--bootstrap-server", b, "--group-protocol", "nope"],
                 [*common, "--bootstrap-server", b, "--reset-policy", "nope"]):
        k = kafka_tools("kafka-verifiable-consumer", *args)
        p = pk("pk-verifiable-consumer", *args)
        assert (p.returncode, k.returncode) == (1, 1), args
        assert p.err == k.err_first + "\n", args
