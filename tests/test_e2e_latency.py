"""pk-e2e-latency against a pk-server-start subprocess: round trips with keys and headers, the
topic created when missing, Kafka's deprecated positional form, and Kafka's usage errors."""

from __future__ import annotations

import re

import pytest

from conftest import BrokerProcess, Runner

LATENCY = re.compile(r"0\t\d+\.\d+(E-?\d+)?\nAvg latency: \d+\.\d{4} ms\nPercentiles: 50th = \d+, 99th = \d+, "
                     r"99\.9th = \d+\n")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("e2e")
    b = BrokerProcess(str(root / "data")).start()
    try:
        yield b, Runner(str(root / "pk-data")), root
    finally:
        b.stop()


def test_round_trips_create_the_topic_once(server):
    b, pk, _ = server
    args = ["--bootstrap-server", b.bootstrap, "--topic", "e2e-a", "--num-records", "20", "--producer-acks", "all",
            "--record-size", "30"]
    r = pk("pk-e2e-latency", *args)
    assert r.returncode == 0, r.err
    first, rest = r.out.split("\n", 1)
    assert first == 'Topic "e2e-a" does not exist. Will create topic with 1 partition(s) and replication factor = 1'
    assert LATENCY.fullmatch(rest), r.out
    r = pk("pk-e2e-latency", *args, "--record-key-size", "4", "--num-headers", "2", "--record-header-size", "-1",
           "--record-header-key-size", "3")
    assert r.returncode == 0 and r.err == "" and LATENCY.fullmatch(r.out), (r.out, r.err)
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "e2e-check"})
    try:
        assert c.get_watermark_offsets(TopicPartition("e2e-a", 0), timeout=10) == (0, 40)
    finally:
        c.close()


def test_positional_arguments_and_properties_file(server):
    b, pk, root = server
    (root / "client.properties").write_text("client.id=e2e\n")
    r = pk("pk-e2e-latency", b.bootstrap, "e2e-b", "3", "1", "10", str(root / "client.properties"))
    assert r.returncode == 0, r.err
    lines = r.out.split("\n", 2)
    assert lines[0].startswith("WARNING: Positional argument usage is deprecated and will be removed in Apache Kafka")
    assert lines[1].startswith('Topic "e2e-b" does not exist.')
    assert LATENCY.fullmatch(lines[2])


@pytest.mark.parametrize("args,err", [
    (["b:1", "t", "2", "1"], "Invalid number of arguments. Expected 5 or 6 positional arguments, but got 4. Usage: "
     "bootstrap-server topic num-records producer-acks record-size [optional] command-config"),
    (["--bootstrap-server", "b:1", "--topic", "t", "--num-records", "2", "--producer-acks", "1"],
     'Missing required argument "[record-size]"'),
    (["--bootstrap-server", "b:1", "--topic", "t", "--num-records", "2", "--producer-acks", "0", "--record-size", "1"],
     "Invalid value for --producer-acks. Latency testing requires synchronous acknowledgement. Please use '1' or "
     "'all'."),
    (["--bootstrap-server", "b:1", "--topic", "t", "--num-records", "0", "--producer-acks", "1", "--record-size", "1"],
     "Value for --num-records must be a positive integer."),
    (["--bootstrap-server", "b:1", "--topic", "t", "--num-records", "x", "--producer-acks", "1", "--record-size", "1"],
     "Cannot parse argument 'x' of option num-records"),
    (["--bootstrap-server", "b:1", "--topic", "t", "--num-records", "1", "--producer-acks", "1", "--record-size", "1",
      "--record-header-size", "-2"],
     "Value for --record-header-size must be a non-negative integer or -1 for null header value."),
    (["--bootstrap-server", "b:1", "--topic", "t", "--num-records", "1", "--producer-acks", "1", "--record-size", "1",
      "--command-config", "/no/such/file"], "/no/such/file"),
])
def test_usage_errors(server, args, err):
    _, pk, _ = server
    r = pk("pk-e2e-latency", *args)
    assert (r.returncode, r.err) == (1, err + "\n")
