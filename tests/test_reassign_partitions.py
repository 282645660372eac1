"""Partition reassignment on pk-server-start: AlterPartitionReassignments (45),
ListPartitionReassignments (46) and AlterReplicaLogDirs (34) with raw frames, and
pk-reassign-partitions against it. One broker is the whole cluster, so a reassignment to it
completes at once and nothing is ever listed as ongoing; the texts are Kafka 4.4's (the oracle
test compares them with Kafka's tool on a real Kafka)."""

from __future__ import annotations

import json
import os
import random
import subprocess

import pytest

from conftest import BrokerProcess, ProtocolClient, tool_path
from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E

TOPIC = "ra-t"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = BrokerProcess(str(tmp_path_factory.mktemp("ra") / "data")).start()
    for topic, count in ((TOPIC, 3), ("ra-u", 2)):
        subprocess.run([tool_path("pk-topics"), "--bootstrap-server", b.bootstrap, "--create", "--topic", topic,
                        "--partitions", str(count)], check=True, capture_output=True, timeout=60)
    yield b
    b.stop()


def _pk(*args):
    proc = subprocess.run([tool_path("pk-reassign-partitions"), *args], capture_output=True, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def _files(tmp_path, **contents) -> dict[str, str]:
    paths = {}
    for name, content in contents.items():
        path = tmp_path / f"{name}.json"
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        paths[name] = str(path)
    return paths


def _alter(client, version, parts, allow=True):
    topics: dict[str, list] = {}
    for topic, partition, replicas in parts:
        topics.setdefault(topic, []).append({"partition_index": partition, "replicas": replicas})
    answer = client.call(ApiKey.ALTER_PARTITION_REASSIGNMENTS, version, {
        "timeout_ms": 1000, "allow_replication_factor_change": allow,
        "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]})
    assert (answer["error_code"], answer["error_message"]) == (E.NONE, None)
    return [(t["name"], p["partition_index"], p["error_code"], p["error_message"])
            for t in answer["responses"] for p in t["partitions"]]


# --------------------------------------------------------------------------- the APIs
@pytest.mark.parametrize("version", [0, 1])
def test_alter_partition_reassignments_answers_as_kraft(broker, version):
    c = ProtocolClient(broker.bootstrap)
    registered = "but no such broker is registered."
    assert _alter(c, version, [(TOPIC, 0, [0]), (TOPIC, 1, [5]), (TOPIC, 2, [0, 0]), (TOPIC, 9, [0]),
                               (TOPIC, 1, []), (TOPIC, 2, [0, 7, 7]), ("ra-none", 0, [0]), (TOPIC, 0, None),
                               ("ra-none", 1, None)]) == [
        (TOPIC, 0, E.NONE, None),
        (TOPIC, 1, E.INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment includes broker 5, {registered}"),
        (TOPIC, 2, E.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes the broker 0 more than once."),
        (TOPIC, 9, E.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {TOPIC}:9."),
        (TOPIC, 1, E.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list."),
        (TOPIC, 2, E.INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment includes broker 7, {registered}"),
        (TOPIC, 0, E.NO_REASSIGNMENT_IN_PROGRESS, None),  # a cancel: the reassignment to [0] is done already
        ("ra-none", 0, E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named ra-none."),
        ("ra-none", 1, E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named ra-none.")]


def test_list_partition_reassignments_lists_nothing_ongoing(broker):
    c = ProtocolClient(broker.bootstrap)
    for topics in (None, [], [{"name": TOPIC, "partition_indexes": [0, 9]}], [{"name": "ra-none", "partition_indexes": [0]}]):
        answer = c.call(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, {"timeout_ms": 1000, "topics": topics})
        assert (answer["error_code"], answer["error_message"], answer["topics"]) == (E.NONE, None, [])


def test_alter_replica_log_dirs_knows_the_one_log_dir(broker):
    c = ProtocolClient(broker.bootstrap)
    log_dir = os.path.abspath(broker.data_dir)
    body = {"dirs": [{"path": log_dir, "topics": [{"name": TOPIC, "partitions": [0, 1, 9]},
                                                  {"name": "ra-none", "partitions": [0]}]},
                     {"path": log_dir + "/", "topics": [{"name": "ra-u", "partitions": [0]}]}]}
    for version in (1, 2):
        answer = c.call(ApiKey.ALTER_REPLICA_LOG_DIRS, version, body)
        got = {(t["topic_name"], p["partition_index"]): p["error_code"] for t in answer["results"]
               for p in t["partitions"]}
        assert got == {(TOPIC, 0): E.NONE, (TOPIC, 1): E.NONE, (TOPIC, 9): E.UNKNOWN_TOPIC_OR_PARTITION,
                       ("ra-none", 0): E.UNKNOWN_TOPIC_OR_PARTITION, ("ra-u", 0): E.LOG_DIR_NOT_FOUND}


def test_reassignment_apis_need_the_cluster_permission(tmp_path):
    b = BrokerProcess(str(tmp_path / "data"), {
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"}).start()
    try:
        c = ProtocolClient(b.bootstrap)
        answer = c.call(ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0, {"timeout_ms": 1000, "topics": [
            {"name": "x", "partitions": [{"partition_index": 0, "replicas": [0]}]}]})
        assert (answer["error_code"], answer["error_message"]) == (E.CLUSTER_AUTHORIZATION_FAILED,
                                                                   "Cluster authorization failed.")
        assert [p["error_code"] for p in answer["responses"][0]["partitions"]] == [E.CLUSTER_AUTHORIZATION_FAILED]
        answer = c.call(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, {"timeout_ms": 1000, "topics": None})
        assert answer["error_code"] == E.CLUSTER_AUTHORIZATION_FAILED
        answer = c.call(ApiKey.ALTER_REPLICA_LOG_DIRS, 2, {"dirs": [{"path": "/x", "topics": [
            {"name": "x", "partitions": [0]}]}]})
        assert answer["results"][0]["partitions"][0]["error_code"] == E.CLUSTER_AUTHORIZATION_FAILED
        assert _pk("--bootstrap-server", b.bootstrap, "--list") == (
            1, "", "Error: org.apache.kafka.common.errors.ClusterAuthorizationException: Cluster authorization failed.\n")
    finally:
        b.stop()


def test_plan_reassignment():
    from pk.engine.broker.reassignment import plan_reassignment

    plan = plan_reassignment([1, 2, 3], [3, 4, 1])
    assert (plan.replicas, plan.adding, plan.removing, plan.done) == ([1, 2, 3, 4], [4], [2], False)
    assert plan_reassignment([0], [0]).done


# --------------------------------------------------------------------------- the tool
def test_execute_verify_list_cancel(broker, tmp_path):
    b, d = broker.bootstrap, os.path.abspath(broker.data_dir)
    f = _files(tmp_path, plan={"version": 1, "partitions": [
        {"topic": TOPIC, "partition": 2, "replicas": [0]}, {"topic": TOPIC, "partition": 0, "replicas": [0]},
        {"topic": "ra-u", "partition": 1, "replicas": [0], "log_dirs": [d]}]})
    current = (f'{{"version":1,"partitions":[{{"topic":"{TOPIC}","partition":0,"replicas":[0],"log_dirs":["{d}"]}},'
               f'{{"topic":"{TOPIC}","partition":2,"replicas":[0],"log_dirs":["{d}"]}},'
               f'{{"topic":"ra-u","partition":1,"replicas":[0],"log_dirs":["{d}"]}}]}}')
    assert _pk("--bootstrap-server", b, "--execute", "--reassignment-json-file", f["plan"]) == (0, (
        f"Current partition replica assignment\n\n{current}\n\n"
        "Save this to use as the --reassignment-json-file option during rollback\n"
        f"Successfully started partition reassignments for {TOPIC}-0,{TOPIC}-2,ra-u-1\n"
        f"Successfully started moving log directory to {d} for replica ra-u-1 with broker 0 \n"), "")
    assert _pk("--bootstrap-server", b, "--list") == (0, "No partition reassignments found.\n", "")
    assert _pk("--bootstrap-server", b, "--verify", "--reassignment-json-file", f["plan"]) == (0, (
        "Status of partition reassignment:\n"
        f"Reassignment of partition {TOPIC}-0 is completed.\n"
        f"Reassignment of partition {TOPIC}-2 is completed.\n"
        "Reassignment of partition ra-u-1 is completed.\n"
        "Reassignment of replica ra-u-1-0 completed successfully.\n"
        "Clearing broker-level throttles on broker 0\n"
        f"Clearing topic-level throttles on topics ra-u,{TOPIC}\n"), "")
    assert _pk("--bootstrap-server", b, "--cancel", "--preserve-throttles", "--reassignment-json-file", f["plan"]) == (
        0, "None of the specified partition reassignments are active.\nNone of the specified partition moves are active.",
        "")


def test_generate_to_the_one_broker(broker, tmp_path):
    d = os.path.abspath(broker.data_dir)
    f = _files(tmp_path, topics={"topics": [{"topic": "ra-u"}], "version": 1})
    rc, out, err = _pk("--bootstrap-server", broker.bootstrap, "--generate", "--topics-to-move-json-file",
                       f["topics"], "--broker-list", "0,5")
    assert (rc, err) == (0, "")
    assert out == ("Current partition replica assignment\n"
                   f'{{"version":1,"partitions":[{{"topic":"ra-u","partition":0,"replicas":[0],"log_dirs":["{d}"]}},'
                   f'{{"topic":"ra-u","partition":1,"replicas":[0],"log_dirs":["{d}"]}}]}}\n\n'
                   "Proposed partition reassignment configuration\n"
                   '{"version":1,"partitions":[{"topic":"ra-u","partition":0,"replicas":[0],"log_dirs":["any"]},'
                   '{"topic":"ra-u","partition":1,"replicas":[0],"log_dirs":["any"]}]}\n')
    assert _pk("--bootstrap-server", broker.bootstrap, "--generate", "--topics-to-move-json-file", f["topics"],
               "--broker-list", "5") == (
        1, "", "Error: All brokers are currently fenced, or have all their log directories cordoned.\n")


def test_execute_errors(broker, tmp_path):
    b = broker.bootstrap
    f = _files(tmp_path, empty="", blank="\n", bad="nojson", none={"version": 1, "partitions": []},
               dup={"partitions": [{"topic": TOPIC, "partition": 0, "replicas": [0]},
                                   {"topic": TOPIC, "partition": 0, "replicas": [0]}]},
               duprepl={"partitions": [{"topic": TOPIC, "partition": 0, "replicas": [0, 0]},
                                       {"topic": TOPIC, "partition": 1, "replicas": [0, 0, 1, 1]}]},
               broker5={"partitions": [{"topic": TOPIC, "partition": 0, "replicas": [5]}]},
               notopic={"partitions": [{"topic": "ra-none", "partition": 0, "replicas": [0]}]},
               nopart={"partitions": [{"topic": TOPIC, "partition": 7, "replicas": [0]},
                                      {"topic": TOPIC, "partition": 8, "replicas": [0]}]},
               v2={"version": 2, "partitions": []},
               dirs={"partitions": [{"topic": TOPIC, "partition": 0, "replicas": [0], "log_dirs": ["any", "any"]}]},
               elsewhere={"partitions": [{"topic": TOPIC, "partition": 0, "replicas": [0], "log_dirs": ["/elsewhere"]}]},
               trunc='{"partitions":[{"topic":"x"}')
    expected = {
        "empty": "Error: The input string shouldn't be empty",
        "blank": "Error: Expected JSON object, received ",
        "bad": "Error: Unrecognized token 'nojson': was expecting (JSON String, Number, Array, Object or token "
               "'null', 'true' or 'false')",
        "none": "Error: Partition reassignment list cannot be empty",
        "dup": f"Error: Partition reassignment contains duplicate topic partitions: {TOPIC}-0",
        "duprepl": f"Error: Partition replica lists may not contain duplicate entries: {TOPIC}-0 contains multiple "
                   f"entries for 0. {TOPIC}-1 contains multiple entries for 0,1",
        "broker5": "Error: Unknown broker id 5",
        "notopic": "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic ra-none not found.",
        # a java.util.HashSet of TopicPartitions, in its order
        "nopart": "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Unable to find partition: "
                  f"{TOPIC}-7, {TOPIC}-8",
        "v2": "Error: Not supported version field value 2",
        "dirs": f"Error: Size of replicas list [0] is different from size of log dirs list [any, any] for partition "
                f"{TOPIC}-0",
        "trunc": "Error: Unexpected end-of-input: expected close marker for Array (start marker at [Source: REDACTED "
                 "(`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 15])",
    }
    for name, line in expected.items():
        assert _pk("--bootstrap-server", b, "--execute", "--reassignment-json-file", f[name]) == (1, "", line + "\n"), name
    rc, out, err = _pk("--bootstrap-server", b, "--execute", "--reassignment-json-file", f["elsewhere"])
    assert (rc, out.splitlines()[-1], err) == (1, f"Successfully started partition reassignment for {TOPIC}-0",
                                               f"Error: Failed to alter dir for {TOPIC}-0-0\n")
    missing = str(tmp_path / "missing.json")
    assert _pk("--bootstrap-server", b, "--verify", "--reassignment-json-file", missing) == (
        1, "", f"Error: Unable to read file {missing}\n")
    assert _pk("--bootstrap-server", b, "--execute", "--reassignment-json-file", f["dup"], "--throttle", "x") == (
        1, "", "Error: Cannot parse argument 'x' of option throttle\n")


def test_verify_of_partitions_that_do_not_exist(broker, tmp_path):
    b = broker.bootstrap
    f = _files(tmp_path, far={"partitions": [{"topic": TOPIC, "partition": 8, "replicas": [0]}]},
               next={"partitions": [{"topic": TOPIC, "partition": 3, "replicas": [0]}]},
               none={"partitions": [{"topic": "ra-none", "partition": 0, "replicas": [0]}]})
    assert _pk("--bootstrap-server", b, "--verify", "--reassignment-json-file", f["far"]) == (0, (
        "Status of partition reassignment:\n"
        f"There is no active reassignment of partition {TOPIC}-8, but replica set is  rather than 0.\n\n"
        "Clearing broker-level throttles on broker 0\n"
        f"Clearing topic-level throttles on topic {TOPIC}\n"), "")
    # Kafka's tool indexes the partition list with the partition number (an off-by-one it keeps)
    assert _pk("--bootstrap-server", b, "--verify", "--reassignment-json-file", f["next"]) == (
        1, "", "Error: Index 3 out of bounds for length 3\n")
    rc, out, err = _pk("--bootstrap-server", b, "--verify", "--reassignment-json-file", f["none"])
    assert (rc, err) == (1, "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
                            "The topic 'ra-none' does not exist.\n")
    assert out.endswith("Clearing topic-level throttles on topic ra-none\n")


def test_generate_errors(broker, tmp_path):
    b = broker.bootstrap
    f = _files(tmp_path, ok={"topics": [{"topic": "ra-u"}]}, dup={"topics": [{"topic": "ra-u"}, {"topic": "ra-u"}]},
               none={"topics": [{"topic": "ra-none"}]}, bad="nojson", v3={"version": 3})
    cases = [("ok", "0,0", "Error: Broker list contains duplicate entries: [0]"),
             ("ok", "x", 'Error: For input string: "x"'),
             ("ok", "", 'Error: For input string: ""'),
             ("dup", "0", "Error: List of topics to reassign contains duplicate entries: [ra-u]"),
             ("none", "0", "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic ra-none "
                           "not found."),
             ("bad", "0", "Error: The input string is not a valid JSON"),
             ("v3", "0", "Error: Not supported version field value 3")]
    for name, brokers, line in cases:
        assert _pk("--bootstrap-server", b, "--generate", "--topics-to-move-json-file", f[name],
                   "--broker-list", brokers) == (1, "", line + "\n"), (name, brokers)


def test_usage_errors(tmp_path):
    f = str(tmp_path / "x.json")
    cases = [(["--list"], "Please specify either --bootstrap-server or --bootstrap-controller"),
             (["--bootstrap-server", "b:9", "--list", "--verify"],
              "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list"),
             (["--bootstrap-server", "b:9", "--bootstrap-controller", "c:9", "--list"],
              "Please don't specify both --bootstrap-server and --bootstrap-controller"),
             (["--bootstrap-server", "b:9", "--generate", "--broker-list", "0"],
              'Missing required argument "[topics-to-move-json-file]"'),
             (["--bootstrap-server", "b:9", "--execute"], 'Missing required argument "[reassignment-json-file]"'),
             (["--bootstrap-server", "b:9", "--list", "--throttle", "5"],
              'Option "[throttle]" can\'t be used with action "[list]"'),
             (["--bootstrap-server", "b:9", "--verify", "--reassignment-json-file", f, "--additional", "--timeout", "1"],
              'Option "[additional]" can\'t be used with action "[verify]"'),
             (["--bootstrap-controller", "b:9", "--execute", "--reassignment-json-file", f],
              'Option "[bootstrap-controller]" can\'t be used with action "[execute]"'),
             (["--bootstrap-server", "b:9", "--list", "--bogus"], "bogus is not a recognized option")]
    for args, line in cases:
        assert _pk(*args) == (1, "", line + "\n"), args
    rc, _out, err = _pk()
    assert rc == 1 and err.startswith("This tool helps to move topic partitions between replicas.\n")


def test_striped_placer_spreads_leaders_and_racks():
    from pk.commands.reassign_partitions import Failed, StripedPlacer

    placements = StripedPlacer([(b, None) for b in range(4)], random.Random(3)).place(8, 3)
    assert all(len(set(p)) == 3 for p in placements)
    # every broker leads exactly twice among 8 partitions: the leaders go round the brokers
    assert sorted(p[0] for p in placements) == [0, 0, 1, 1, 2, 2, 3, 3]
    racks = {0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "c"}
    placements = StripedPlacer(list(racks.items()), random.Random(5)).place(12, 3)
    assert all(sorted(racks[b] for b in p) == ["a", "b", "c"] for p in placements)
    with pytest.raises(Failed, match="The target replication factor of 3 cannot be reached because only 2 "):
        StripedPlacer([(0, None), (1, None)]).place(1, 3)
