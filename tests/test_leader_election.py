"""ElectLeaders (API 43) on pk-server-start and pk-leader-election against it: one broker is
the only replica and leader of every partition, so no election is ever needed."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import BrokerProcess, ProtocolClient, tool_path
from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E

TOPIC = "le-t"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = BrokerProcess(str(tmp_path_factory.mktemp("le") / "data")).start()
    subprocess.run([tool_path("pk-topics"), "--bootstrap-server", b.bootstrap, "--create", "--topic", TOPIC,
                    "--partitions", "2"], check=True, capture_output=True, timeout=60)
    yield b
    b.stop()


def _pk(*args):
    proc = subprocess.run([tool_path("pk-leader-election"), *args], capture_output=True, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def _partitions(answer):
    return {(r["topic"], p["partition_id"]): (p["error_code"], p["error_message"])
            for r in answer["replica_election_results"] for p in r["partition_result"]}


@pytest.mark.parametrize("version", [0, 1, 2])
def test_elect_leaders_answers_election_not_needed(broker, version):
    c = ProtocolClient(broker.bootstrap)
    body = {"election_type": 1, "timeout_ms": 1000,
            "topic_partitions": [{"topic": TOPIC, "partitions": [0, 1, 9]}, {"topic": "le-none", "partitions": [0]}]}
    answer = c.call(ApiKey.ELECT_LEADERS, version, body)
    assert answer.get("error_code", 0) == E.NONE
    assert _partitions(answer) == {
        (TOPIC, 0): (E.ELECTION_NOT_NEEDED, None), (TOPIC, 1): (E.ELECTION_NOT_NEEDED, None),
        (TOPIC, 9): (E.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {TOPIC}-9"),
        ("le-none", 0): (E.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as le-none")}
    # every partition (null): each topic listed, without the partitions that need no election
    answer = c.call(ApiKey.ELECT_LEADERS, version, {"election_type": 0, "timeout_ms": 1000, "topic_partitions": None})
    assert TOPIC in [r["topic"] for r in answer["replica_election_results"]]
    assert _partitions(answer) == {}


def test_elect_leaders_unknown_election_type_is_invalid_request(broker):
    c = ProtocolClient(broker.bootstrap)
    answer = c.call(ApiKey.ELECT_LEADERS, 2, {"election_type": 5, "timeout_ms": 1000,
                                              "topic_partitions": [{"topic": TOPIC, "partitions": [0]}]})
    assert answer["error_code"] == E.INVALID_REQUEST
    assert _partitions(answer) == {(TOPIC, 0): (E.INVALID_REQUEST, "Unknown election type 5")}


def test_elect_leaders_needs_cluster_alter(tmp_path):
    b = BrokerProcess(str(tmp_path / "data"), {
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"}).start()
    try:
        c = ProtocolClient(b.bootstrap)
        answer = c.call(ApiKey.ELECT_LEADERS, 2, {"election_type": 0, "timeout_ms": 1000,
                                                  "topic_partitions": [{"topic": "x", "partitions": [0, 1]}]})
        assert answer["error_code"] == E.CLUSTER_AUTHORIZATION_FAILED
        assert {code for code, _ in _partitions(answer).values()} == {E.CLUSTER_AUTHORIZATION_FAILED}
        rc, out, err = _pk("--bootstrap-server", b.bootstrap, "--election-type", "preferred", "--topic", "x",
                           "--partition", "0")
        assert (rc, out, err) == (1, "Not authorized to perform leader election\n",
                                  "Not authorized to perform leader election\n")
    finally:
        b.stop()


def test_leader_election_tool(broker, tmp_path):
    b = broker.bootstrap
    assert _pk("--bootstrap-server", b, "--election-type", "preferred", "--topic", TOPIC, "--partition", "1") == (
        0, f"Valid replica already elected for partitions {TOPIC}-1\n", "")
    assert _pk("--bootstrap-server", b, "--election-type", "UNCLEAN", "--all-topic-partitions") == (0, "", "")
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"partitions": [{"topic": TOPIC, "partition": 0}, {"topic": TOPIC, "partition": 1},
                                               {"topic": "le-none", "partition": 3}]}))
    rc, out, err = _pk("--bootstrap-server", b, "--election-type", "PREFERRED", "--path-to-json-file", str(path))
    assert (rc, err) == (1, "1 replica(s) could not be elected\n")
    # the lines list partitions in the order of Java's HashSet, as Kafka's tool prints them
    assert out == (f"Valid replica already elected for partitions {TOPIC}-1, {TOPIC}-0\n"
                   "Error completing leader election (PREFERRED) for partition: le-none-3: "
                   "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: No such topic as le-none\n")


def test_java_set_order():
    from pk.commands.leader_election import java_set_order

    # TopicPartition.hashCode(): t1-0 -> bucket 14, t1-1 -> bucket 13 of a 16-bucket table
    assert java_set_order([("t1", 0), ("t1", 1)]) == [("t1", 1), ("t1", 0)]
    many = [("t", i) for i in range(40)]
    assert sorted(java_set_order(many)) == sorted(many)


@pytest.mark.parametrize("args, err", [
    (["--election-type", "preferred", "--all-topic-partitions"], "Missing required option(s): bootstrap-server"),
    (["--bootstrap-server", "x:1", "--all-topic-partitions"], "Missing required option(s): election-type"),
    (["--bootstrap-server", "x:1", "--election-type", "preferred"],
     "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file"),
    (["--bootstrap-server", "x:1", "--election-type", "preferred", "--topic", "t"],
     "Missing required option(s): partition"),
    (["--bootstrap-server", "x:1", "--election-type", "preferred", "--all-topic-partitions", "--partition", "1"],
     "Option partition is only allowed if topic is used"),
    (["--bootstrap-server", "x:1", "--election-type", "bogus", "--all-topic-partitions"],
     "Cannot parse argument 'bogus' of option election-type"),
    (["--bootstrap-server", "x:1", "--election-type", "preferred", "--topic", "t", "--partition", "x"],
     "Cannot parse argument 'x' of option partition"),
    (["--bootstrap-server", "x:1", "--election-type", "preferred", "--path-to-json-file", "/nonexistent/p.json"],
     "java.io.IOException: Unable to read file /nonexistent/p.json"),
    (["--bootstrap-server", "x:1", "--election-type", "preferred", "--all-topic-partitions", "--bogus"],
     "bogus is not a recognized option"),
])
def test_leader_election_refusals(args, err):
    assert _pk(*args) == (1, "", err + "\n")
