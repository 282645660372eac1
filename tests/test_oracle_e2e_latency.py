"""pk-e2e-latency against Kafka 4.4's kafka-e2e-latency on the shared Kafka 4.4 broker: the same
lines with every figure blanked (named and positional arguments, a missing topic created), and
the same first stderr line, stdout and status for usage errors."""

from __future__ import annotations

import re

from conftest import Runner

NUMBER = re.compile(r"\d+(\.\d+)?(E-?\d+)?")


def shape(text: str) -> list[str]:
    return [NUMBER.sub("N", line) for line in text.splitlines()]


def test_e2e_latency_matches_kafka(kafka, kafka_tools, tmp_path):
    b = kafka.bootstrap
    pk = Runner(str(tmp_path / "pk-data"))
    (tmp_path / "client.properties").write_text("client.id=e2e\n")
    scenarios = [
        lambda t: ["--bootstrap-server", b, "--topic", t, "--num-records", "5", "--producer-acks", "1",
                   "--record-size", "20"],
        lambda t: ["--bootstrap-server", b, "--topic", t, "--num-records", "3", "--producer-acks", "all",
                   "--record-size", "5", "--record-key-size", "2", "--num-headers", "2", "--record-header-size", "-1"],
        lambda t: [b, t, "3", "all", "8", str(tmp_path / "client.properties")],
    ]
    for n, build in enumerate(scenarios):
        k = kafka_tools("kafka-e2e-latency", *build(f"ot-e2e-k{n}"))
        p = pk("pk-e2e-latency", *build(f"ot-e2e-p{n}"))
        assert (p.returncode, k.returncode) == (0, 0), (n, p.err, k.err)
        assert shape(p.out.replace(f"ot-e2e-p{n}", f"ot-e2e-k{n}")) == shape(k.out), n
        assert p.err == ""


def test_e2e_latency_errors_match_kafka(kafka, kafka_tools, tmp_path):
    b = kafka.bootstrap
    pk = Runner(str(tmp_path / "pk-data"))
    named = ["--bootstrap-server", b, "--topic", "t"]
    cases = [
        [b, "t", "2", "1"],
        [b, "t", "x", "1", "10"],
        [b, "t", "2", "0", "10"],
        [b, "t", "2", "1", "10", str(tmp_path / "missing.properties")],
        ["--topic", "t"],
        [*named, "--num-records", "2", "--producer-acks", "1"],
        [*named, "--num-records", "2", "--producer-acks", "2", "--record-size", "1"],
        [*named, "--num-records", "-3", "--producer-acks", "1", "--record-size", "1"],
        [*named, "--num-records", "2", "--producer-acks", "1", "--record-size", "-1"],
        [*named, "--num-records", "2", "--producer-acks", "1", "--record-size", "1", "--record-key-size", "-1"],
        [*named, "--num-records", "2", "--producer-acks", "1", "--record-size", "1", "--record-header-key-size", "-1"],
        [*named, "--num-records", "2", "--producer-acks", "1", "--record-size", "1", "--record-header-size", "-2"],
        [*named, "--num-records", "2", "--producer-acks", "1", "--record-size", "1", "--num-headers", "-1"],
        [*named, "--num-records", "2", "--producer-acks", "1", "--record-size", "1", "--bogus"],
        ["--version"],
    ]
    for args in cases:
        k = kafka_tools("kafka-e2e-latency", *args)
        p = pk("pk-e2e-latency", *args)
        assert (p.returncode, p.out, p.err) == (k.returncode, k.out, k.err_first + "\n"), args
