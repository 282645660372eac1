"""pk-verifiable-producer against a pk-server-start subprocess: the JSON event lines the
system tests read (every record acknowledged with its partition and offset), keys, value
prefixes and create times as stored, SIGTERM's summary, and argparse4j's errors."""

from __future__ import annotations

import json
import signal
import subprocess

import pytest

from conftest import BrokerProcess, Runner, tool_path


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("verifiable")
    b = BrokerProcess(str(root / "data"), {"num.partitions": "1"}).start()
    try:
        yield b, Runner(str(root / "pk-data")), root
    finally:
        b.stop()


def events(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def consume(bootstrap: str, topic: str, count: int) -> list:
    from confluent_kafka import Consumer

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "verify-" + topic, "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    got = []
    try:
        while len(got) < count:
            msg = c.poll(10)
            assert msg is not None, got
            assert msg.error() is None, msg.error()
            got.append(msg)
    finally:
        c.close()
    return got


def test_every_record_is_reported_acknowledged(server):
    b, pk, _ = server
    r = pk("pk-verifiable-producer", "--topic", "vp-a", "--bootstrap-server", b.bootstrap, "--max-messages", "6",
           "--repeating-keys", "4", "--value-prefix", "3")
    assert r.returncode == 0, r.err
    ev = events(r.out)
    assert [e["name"] for e in ev] == ["startup_complete", *["producer_send_success"] * 6, "shutdown_complete",
                                       "tool_data"]
    sends = ev[1:7]
    assert [(e["key"], e["value"], e["offset"], e["topic"], e["partition"]) for e in sends] == [
        (str(i % 4), f"3.{i}", i, "vp-a", 0) for i in range(6)]
    assert list(sends[0]) == ["timestamp", "name", "key", "value", "offset", "topic", "partition"]
    tool = ev[-1]
    assert (tool["sent"], tool["acked"], tool["target_throughput"]) == (6, 6, -1)
    assert isinstance(tool["avg_throughput"], float) and tool["avg_throughput"] > 0
    stored = consume(b.bootstrap, "vp-a", 6)
    assert [(m.key(), m.value()) for m in stored] == [(str(i % 4).encode(), f"3.{i}".encode()) for i in range(6)]


def test_create_time_acks_and_config_file(server):
    b, pk, root = server
    conf = root / "producer.properties"
    conf.write_text("linger.ms=5\nclient.id=verifier\n")
    r = pk("pk-run-class", "org.apache.kafka.tools.VerifiableProducer", "--topic", "vp-t", "--bootstrap-server",
           b.bootstrap, "--max-messages", "3", "--message-create-time", "1000000", "--acks", "1",
           "--command-config", str(conf))
    assert r.returncode == 0, r.err
    ev = events(r.out)
    assert [e["key"] for e in ev if e["name"] == "producer_send_success"] == [None] * 3
    stored = consume(b.bootstrap, "vp-t", 3)
    stamps = [m.timestamp()[1] for m in stored]
    assert stamps[0] == 1000000 and stamps == sorted(stamps)  # Kafka adds the elapsed time at every send


def test_sigterm_flushes_and_prints_the_summary(server):
    b, _, _ = server
    proc = subprocess.Popen([tool_path("pk-verifiable-producer"), "--topic", "vp-s", "--bootstrap-server",
                             b.bootstrap, "--throughput", "200"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        lines = [proc.stdout.readline(), proc.stdout.readline()]
        assert json.loads(lines[1])["name"] == "producer_send_success", lines
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        out, err = proc.stdout.read(), proc.stderr.read()  # what readline() buffered included
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    ev = events(b"".join(lines).decode() + out.decode())
    assert proc.returncode == 143 and err == b""
    assert [e["name"] for e in ev[-2:]] == ["shutdown_complete", "tool_data"]
    acked = [e for e in ev if e["name"] == "producer_send_success"]
    assert ev[-1]["acked"] == ev[-1]["sent"] == len(acked) and ev[-1]["target_throughput"] == 200
    assert [e["value"] for e in acked] == [str(i) for i in range(len(acked))]


def test_throughput_limits_the_rate(server):
    b, pk, _ = server
    r = pk("pk-verifiable-producer", "--topic", "vp-r", "--bootstrap-server", b.bootstrap, "--max-messages", "30",
           "--throughput", "50")
    assert r.returncode == 0, r.err
    ev = events(r.out)
    elapsed = ev[-1]["timestamp"] - ev[0]["timestamp"]
    assert elapsed >= 400, elapsed  # 30 records at 50/s: at least ~0.6 s


def test_no_arguments_prints_help(server):
    _, pk, _ = server
    r = pk("pk-verifiable-producer")
    assert r.returncode == 0 and "--bootstrap-server" in r.out and r.err == ""


@pytest.mark.parametrize("args,message", [
    (["--bootstrap-server", "x:1"], "argument --topic is required"),
    (["--topic", "t"], "one of the arguments --bootstrap-server is required"),
    (["--topic", "t", "--bootstrap-server", "x:1", "--acks", "2"],
     "argument --acks: invalid choice: '2' (choose from {0,1,-1})"),
    (["--topic", "t", "--bootstrap-server", "x:1", "--max-messages", "ten"],
     "argument --max-messages: could not convert 'ten' to Integer (For input string: \"ten\")"),
    (["--topic", "t", "--bootstrap-server", "x:1", "--nope"], "unrecognized arguments: '--nope'"),
    (["--topic", "t", "--bootstrap-server", "x:1", "--producer.config", "/no/such/file"], "/no/such/file"),
])
def test_argument_errors(server, args, message):
    _, pk, _ = server
    r = pk("pk-verifiable-producer", *args)
    assert (r.returncode, r.out, r.err) == (1, "", f"verifiable-producer: error: {message}\n")
