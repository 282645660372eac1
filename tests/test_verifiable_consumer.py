"""pk-verifiable-consumer against a pk-server-start subprocess: the JSON events (assignment,
records_consumed with per-partition summaries, record_data with --verbose, synchronous commits
the group then holds), auto-commit, the consumer group protocol, SIGTERM's shutdown, errors."""

from __future__ import annotations

import json
import signal
import subprocess

import pytest

from conftest import BrokerProcess, Runner, tool_path


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("verifiable-consumer")
    b = BrokerProcess(str(root / "data"), {"num.partitions": "2"}).start()
    pk = Runner(str(root / "pk-data"))
    r = pk("pk-verifiable-producer", "--topic", "vc", "--bootstrap-server", b.bootstrap, "--max-messages", "10",
           "--repeating-keys", "5")
    assert r.returncode == 0, r.err
    try:
        yield b, pk
    finally:
        b.stop()


def events(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def committed(bootstrap: str, group: str) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        return {tp.partition: tp.offset for tp in c.committed([TopicPartition("vc", 0), TopicPartition("vc", 1)],
                                                             timeout=10)}
    finally:
        c.close()


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_consumes_commits_and_reports(server, protocol):
    b, pk = server
    group = "vcg-" + protocol
    r = pk("pk-verifiable-consumer", "--topic", "vc", "--group-id", group, "--bootstrap-server", b.bootstrap,
           "--max-messages", "10", "--verbose", "--group-protocol", protocol, timeout=60)
    assert r.returncode == 0, r.err
    ev = events(r.out)
    names = [e["name"] for e in ev]
    assert names[0] == "startup_complete" and names[-2:] == ["shutdown_complete", "shutdown_requested"]
    assigned = [p for e in ev if e["name"] == "partitions_assigned" for p in e["partitions"]]
    assert sorted(p["partition"] for p in assigned) == [0, 1] and {p["topic"] for p in assigned} == {"vc"}
    data = [e for e in ev if e["name"] == "record_data"]
    assert sorted((e["partition"], e["offset"]) for e in data) == sorted(
        (e["partition"], e["offset"]) for e in data)  # each record once
    assert len(data) == 10 and list(data[0]) == ["timestamp", "name", "key", "value", "topic", "partition", "offset"]
    assert sorted(int(e["value"]) for e in data) == list(range(10))
    summaries = [s for e in ev if e["name"] == "records_consumed" for s in e["partitions"]]
    assert sum(s["count"] for s in summaries) == 10
    assert list(summaries[0]) == ["topic", "partition", "count", "minOffset", "maxOffset"]
    commits = [e for e in ev if e["name"] == "offsets_committed"]
    assert commits and all(e["success"] for e in commits) and all("error" not in e for e in commits)
    ends = {}
    for s in summaries:
        ends[s["partition"]] = s["maxOffset"] + 1
    assert {o["partition"]: o["offset"] for e in commits for o in e["offsets"]} == ends
    assert committed(b.bootstrap, group) == ends


def test_autocommit_prints_no_commit_events(server):
    b, pk = server
    r = pk("pk-verifiable-consumer", "--topic", "vc", "--group-id", "vcg-auto", "--bootstrap-server", b.bootstrap,
           "--max-messages", "4", "--enable-autocommit", "--reset-policy", "earliest", timeout=60)
    assert r.returncode == 0, r.err
    ev = events(r.out)
    assert "offsets_committed" not in [e["name"] for e in ev]
    assert sum(s["count"] for e in ev if e["name"] == "records_consumed" for s in e["partitions"]) == 4


def test_sigterm_stops_as_the_shutdown_hook(server):
    b, _ = server
    proc = subprocess.Popen([tool_path("pk-verifiable-consumer"), "--topic", "vc", "--group-id", "vcg-term",
                             "--bootstrap-server", b.bootstrap], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        seen = []
        while not any(e["name"] == "offsets_committed" for e in seen):
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            seen.append(json.loads(line))
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        rest = events(proc.stdout.read().decode())
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143 and err == b""
    names = [e["name"] for e in rest]
    assert names[0] == "shutdown_requested" and names[-1] == "shutdown_complete"
    assert "partitions_revoked" in names


@pytest.mark.parametrize("args,err", [
    (["--topic", "t", "--bootstrap-server", "x:1"], "verifiable-consumer: error: argument --group-id is required"),
    (["--topic", "t", "--group-id", "g"],
     "verifiable-consumer: error: argument --bootstrap-server is required"),
    (["--topic", "t", "--group-id", "g", "--bootstrap-server", "x:1", "--verbose=yes"],
     "verifiable-consumer: error: argument --verbose: ignore implicit argument 'yes'"),
    (["--topic", "t", "--group-id", "g", "--bootstrap-server", "x:1", "--group-protocol", "bogus"],
     'Exception in thread "main" java.lang.IllegalArgumentException: No enum constant '
     "org.apache.kafka.clients.consumer.GroupProtocol.BOGUS"),
    (["--topic", "t", "--group-id", "g", "--bootstrap-server", "x:1", "--command-config", "/no/such"],
     "verifiable-consumer: error: /no/such"),
])
def test_errors(server, args, err):
    _, pk = server
    r = pk("pk-verifiable-consumer", *args)
    assert (r.returncode, r.out, r.err) == (1, "", err + "\n")
