"""`--output json` of pk-topics, pk-get-offsets, pk-groups and pk-consumer-groups (pk only).

Each command runs twice on the same state, with Kafka's text and with --output json: the JSON
must say what the text says (the text parsed back into fields), stdout must be one document
that json.loads reads, and keys must come in the README's documented order. Every test runs
on the bundled engine, on a pk-server-start and on the session's Apache Kafka 4.4 broker
(shared with other modules: names carry a per-run prefix, and listings are cut down to them).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import uuid

import pytest

from conftest import BrokerProcess, Runner, tool_path
from waits import wait_for

TOPIC_KEYS = ["topic", "topicId", "partitionCount", "replicationFactor", "configs", "partitions"]
PARTITION_KEYS = ["partition", "leader", "replicas", "isr", "elr", "lastKnownElr"]
OFFSETS_KEYS = ["group", "topic", "partition", "currentOffset", "logEndOffset", "lag", "consumerId", "host",
                "clientId"]
MEMBERS_KEYS = ["group", "consumerId", "groupInstanceId", "host", "clientId", "numPartitions"]
MEMBERS_VERBOSE_KEYS = MEMBERS_KEYS + ["currentEpoch", "currentAssignment", "targetEpoch", "targetAssignment"]
# a bound for the first steps on a Kafka broker that may have just started on a loaded machine
# (its __consumer_offsets made on the first group request): generous, not a speed check
SLOW = 180

STATE_KEYS = ["group", "coordinator", "assignmentStrategy", "state", "numMembers"]


class Target:
    """Where the tools point: the bundled engine (--data-dir) or a cluster (--bootstrap-server),
    with this module's topics and groups already made."""

    def __init__(self, name: str, args: list[str], runner: Runner):
        self.name = name
        self.args = args
        self.run_tool = runner
        self.prefix = f"aj{uuid.uuid4().hex[:6]}-"
        self.t2, self.t1 = self.prefix + "t2", self.prefix + "t1"
        self.g1, self.g2 = self.prefix + "g1", self.prefix + "g2"

    def __call__(self, tool: str, *args: str, ok: bool = True, **kw) -> subprocess.CompletedProcess:
        proc = self.run_tool(tool, *self.args, *args, **kw)
        if ok:
            assert proc.returncode == 0, (tool, args, proc.err)
        return proc

    def both(self, tool: str, *args: str, ok: bool = True):
        """(text stdout, the JSON document) of one command line."""
        text = self(tool, *args, ok=ok)
        js = self(tool, *args, "--output", "json", ok=ok)
        assert js.returncode == text.returncode
        assert js.out.count("\n") == 1 and js.out.endswith("\n"), js.out  # one document, one line
        return text.out, json.loads(js.out)


def _setup(target: Target) -> Target:
    t = target
    t("pk-topics", "--create", "--topic", t.t2, "--partitions", "2", "--config", "retention.ms=86400000")
    t("pk-topics", "--create", "--topic", t.t1, "--partitions", "1")

    def led():
        proc = t("pk-topics", "--describe", "--topic", t.prefix + ".*", "--output", "json", ok=False)
        if proc.returncode != 0:
            return False
        doc = json.loads(proc.out)
        return len(doc) == 2 and all(p["leader"] is not None for d in doc for p in d["partitions"])
    wait_for(led, SLOW, "the topics' leaders")
    t("pk-console-producer", "--topic", t.t2, "--property", "parse.key=true", "--property", "key.separator=:",
      input="".join(f"k{i}:v{i}\n" for i in range(8)), timeout=SLOW)
    t("pk-console-producer", "--topic", t.t1, input="a\nb\nc\n", timeout=SLOW)
    # committed offsets of inactive groups, made by a reset (no consumer needed); a fresh Kafka
    # broker has no group coordinator until its __consumer_offsets is made: "not yet"
    last = []

    def committed():
        proc = t("pk-consumer-groups", "--reset-offsets", "--group", t.g1, "--topic", t.t2, "--to-offset", "1",
                 "--execute", ok=False, timeout=SLOW)
        last[:] = [proc.err]
        return proc.returncode == 0
    try:
        wait_for(committed, SLOW, "a group coordinator", interval=0.5)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; its last answer: {last}") from None
    t("pk-consumer-groups", "--reset-offsets", "--group", t.g2, "--topic", t.t1, "--to-latest", "--execute")
    return t


@pytest.fixture(scope="module", params=["engine", "pk", "kafka"])
def target(request, tmp_path_factory):
    if request.param == "engine":
        data = str(tmp_path_factory.mktemp("engine") / "data")
        yield _setup(Target("engine", ["--data-dir", data], Runner(data)))
        return
    if request.param == "kafka":
        kafka = request.getfixturevalue("kafka")
        runner = Runner(str(tmp_path_factory.mktemp("unused") / "data"))
        yield _setup(Target("kafka", ["--bootstrap-server", kafka.bootstrap], runner))
        return
    server = BrokerProcess(str(tmp_path_factory.mktemp("server") / "data")).start()
    try:
        yield _setup(Target("pk", ["--bootstrap-server", server.bootstrap], Runner(server.data_dir)))
    finally:
        server.stop()


def _ints(cell: str) -> list[int]:
    return [int(b) for b in cell.split(",")] if cell else []


def _fields(line: str) -> dict[str, str]:
    """A tab-separated `Name: value` line of pk-topics --describe."""
    return dict(f.split(": ", 1) if ": " in f else (f.rstrip(":"), "") for f in line.strip("\t").split("\t"))


# --------------------------------------------------------------------------- pk-topics
def test_topics_list(target):
    text, doc = target.both("pk-topics", "--list", "--topic", target.prefix + ".*")
    assert doc == text.splitlines() == [target.t1, target.t2]


def test_topics_describe(target):
    text, doc = target.both("pk-topics", "--describe", "--topic", target.prefix + ".*")
    expected, current = [], None
    for line in text.splitlines():
        f = _fields(line)
        if not line.startswith("\t"):
            configs = dict(c.split("=", 1) for c in f["Configs"].split(",")) if f["Configs"] else {}
            current = {"topic": f["Topic"], "topicId": f.get("TopicId"), "partitionCount": int(f["PartitionCount"]),
                       "replicationFactor": int(f["ReplicationFactor"]), "configs": configs, "partitions": []}
            expected.append(current)
        else:
            na = f["Elr"] == "N/A"
            current["partitions"].append({
                "partition": int(f["Partition"]), "leader": None if f["Leader"] == "none" else int(f["Leader"]),
                "replicas": _ints(f["Replicas"]), "isr": _ints(f["Isr"]),
                "elr": None if na else _ints(f["Elr"]), "lastKnownElr": None if na else _ints(f["LastKnownElr"])})
    assert doc == expected
    assert [d["topic"] for d in doc] and {d["topic"] for d in doc} == {target.t1, target.t2}
    assert doc[[d["topic"] for d in doc].index(target.t2)]["configs"]["retention.ms"] == "86400000"
    for d in doc:
        assert list(d) == TOPIC_KEYS
        assert all(list(p) == PARTITION_KEYS for p in d["partitions"])


def test_topics_describe_report_filters(target):
    pattern = target.prefix + ".*"
    # one broker, min.insync.replicas 1: every partition is at its minimum ISR, none is under it
    text, doc = target.both("pk-topics", "--describe", "--topic", pattern, "--at-min-isr-partitions")
    shown = [(_fields(line)["Topic"], int(_fields(line)["Partition"])) for line in text.splitlines()]
    assert sorted(shown) == [(target.t1, 0), (target.t2, 0), (target.t2, 1)]
    assert sorted((d["topic"], p["partition"]) for d in doc for p in d["partitions"]) == sorted(shown)
    for flag in ("--under-replicated-partitions", "--under-min-isr-partitions", "--unavailable-partitions"):
        text, doc = target.both("pk-topics", "--describe", "--topic", pattern, flag)
        assert text == "" and doc == []
    text, doc = target.both("pk-topics", "--describe", "--topic", pattern, "--topics-with-overrides")
    assert [_fields(line)["Topic"] for line in text.splitlines()] == [d["topic"] for d in doc]
    assert target.t2 in [d["topic"] for d in doc]
    assert all(len(d["partitions"]) == d["partitionCount"] for d in doc)


def test_topics_json_errors_and_refusals(target):
    proc = target("pk-topics", "--describe", "--topic", target.prefix + "nope", "--output", "json", ok=False)
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == (f"Error while executing topic command : Topic '{target.prefix}nope' "
                        "does not exist as expected\n")
    proc = target("pk-topics", "--delete", "--topic", target.t1, "--output", "json", ok=False)
    assert proc.returncode == 1 and proc.out == ""
    assert proc.err == "--output json can only be used with --list or --describe\n"
    assert target.t1 in json.loads(target("pk-topics", "--list", "--output", "json").out)


# --------------------------------------------------------------------------- pk-get-offsets
def test_get_offsets(target):
    for time_arg in ("-1", "-2"):
        text, doc = target.both("pk-get-offsets", "--topic", target.prefix + ".*", "--time", time_arg)
        rows = [line.rsplit(":", 2) for line in text.splitlines()]
        assert doc == [{"topic": t, "partition": int(p), "offset": int(o)} for t, p, o in rows]
        assert sum(r["offset"] for r in doc) == (11 if time_arg == "-1" else 0)
        assert all(list(r) == ["topic", "partition", "offset"] for r in doc)


# --------------------------------------------------------------------------- pk-groups
def test_groups_list(target):
    text, doc = target.both("pk-groups", "--list")
    ours = [r for r in doc if r["group"].startswith(target.prefix)]
    rows = [line.split() for line in text.splitlines()[1:] if line.startswith(target.prefix)]
    # GROUP TYPE PROTOCOL, the protocol cell empty for a group made by a reset
    assert ours == [{"group": r[0], "type": r[1], "protocol": r[2] if len(r) > 2 else ""} for r in rows]
    assert sorted(r["group"] for r in ours) == [target.g1, target.g2]
    assert all(list(r) == ["group", "type", "protocol"] for r in doc)


# --------------------------------------------------------------------------- pk-consumer-groups
def test_consumer_groups_list(target):
    text, doc = target.both("pk-consumer-groups", "--list")
    ours = [r for r in doc if r["group"].startswith(target.prefix)]
    assert [r["group"] for r in ours] == [g for g in text.splitlines() if g.startswith(target.prefix)]
    assert {r["group"] for r in ours} >= {target.g1, target.g2}
    text, doc = target.both("pk-consumer-groups", "--list", "--type", "--state", "Empty")
    rows = [line.split() for line in text.splitlines()[1:] if line.startswith(target.prefix)]
    assert [r for r in doc if r["group"].startswith(target.prefix)] == \
        [{"group": g, "type": t, "state": s} for g, t, s in rows]
    assert all(r["state"] == "Empty" for r in doc)
    assert all(list(r) == ["group", "type", "state"] for r in doc)
    _, doc = target.both("pk-consumer-groups", "--list", "--state", "Stable,Dead")
    assert not [r for r in doc if r["group"] in (target.g1, target.g2)]


def _table(text: str) -> list[list[str]]:
    """The rows of a consumer-groups table (headers left out), split on blanks."""
    return [line.split() for line in text.splitlines() if line.strip() and not line.startswith("GROUP")]


def _cell(value: str):
    return None if value == "-" else int(value) if re.fullmatch(r"-?[0-9]+", value) else value


def test_describe_offsets(target):
    groups = ("--group", target.g1, "--group", target.g2)
    for verbose in ((), ("--verbose",)):
        text, doc = target.both("pk-consumer-groups", "--describe", *groups, *verbose)
        keys = OFFSETS_KEYS[:3] + ["leaderEpoch"] + OFFSETS_KEYS[3:] if verbose else OFFSETS_KEYS
        assert doc == [dict(zip(keys, map(_cell, row))) for row in _table(text)]
        assert all(list(r) == keys for r in doc)
    assert [(r["group"], r["topic"], r["partition"], r["currentOffset"]) for r in doc] == \
        [(target.g1, target.t2, 0, 1), (target.g1, target.t2, 1, 1), (target.g2, target.t1, 0, 3)]
    assert doc[-1]["logEndOffset"] == 3 and doc[-1]["lag"] == 0 and doc[-1]["consumerId"] is None


def test_describe_state_and_members_of_inactive_groups(target):
    text, doc = target.both("pk-consumer-groups", "--describe", "--group", target.g1, "--state")
    group, host_port, node, strategy, state, members = re.fullmatch(
        r"(\S+) +(\S+)  \((\d+)\) +(\S+) +(\S+) +(\d+)", text.strip().splitlines()[-1]).groups()
    host, port = (None, None) if host_port == "-" else (host_port.rsplit(":", 1)[0], int(host_port.rsplit(":", 1)[1]))
    assert doc == [{"group": group, "coordinator": {"host": host, "port": port, "id": int(node)},
                    "assignmentStrategy": _cell(strategy), "state": state, "numMembers": int(members)}]
    assert list(doc[0]) == STATE_KEYS and state == "Empty"
    _, doc = target.both("pk-consumer-groups", "--describe", "--group", target.g1, "--state", "--verbose")
    assert list(doc[0]) == STATE_KEYS[:4] + ["groupEpoch", "targetAssignmentEpoch", "numMembers"]
    # no members: Kafka prints the header alone (and its note on stderr), the JSON no rows
    text, doc = target.both("pk-consumer-groups", "--describe", "--group", target.g1, "--members")
    assert _table(text) == [] and doc == []


def _assignment(cell: str) -> list[dict]:
    """CURRENT-ASSIGNMENT: `topic:0,1;other:2`, `-` for none."""
    if cell == "-":
        return []
    return [{"topic": topic, "partition": int(p)} for part in cell.split(";")
            for topic, ps in [part.rsplit(":", 1)] for p in ps.split(",")]


def test_describe_members_of_a_live_group(target):
    group = target.prefix + "live"
    consumer = subprocess.Popen([tool_path("pk-console-consumer"), *target.args, "--topic", target.t2,
                                 "--group", group],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=target.run_tool.env)
    try:
        def settled():
            proc = target("pk-consumer-groups", "--describe", "--group", group, "--members", "--output", "json",
                          ok=False)
            if proc.returncode != 0:
                return None  # not there yet
            doc = json.loads(proc.out)
            return len(doc) == 1 and doc[0]["numPartitions"] == 2
        wait_for(settled, 90, "the consumer's two partitions")
        text, doc = target.both("pk-consumer-groups", "--describe", "--group", group, "--members", "--verbose")
        (row,) = _table(text)
        # GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS CURRENT-EPOCH CURRENT-ASSIGNMENT TARGET-EPOCH TARGET-ASSIGNMENT
        assert doc == [{"group": row[0], "consumerId": row[1], "groupInstanceId": None, "host": row[2],
                        "clientId": row[3], "numPartitions": int(row[4]), "currentEpoch": None,
                        "currentAssignment": _assignment(row[6]), "targetEpoch": None, "targetAssignment": None}]
        assert doc[0]["currentAssignment"] == [{"topic": target.t2, "partition": 0},
                                               {"topic": target.t2, "partition": 1}]
        assert list(doc[0]) == MEMBERS_VERBOSE_KEYS
        _, doc = target.both("pk-consumer-groups", "--describe", "--group", group, "--members")
        assert list(doc[0]) == MEMBERS_KEYS
        text, doc = target.both("pk-consumer-groups", "--describe", "--group", group)
        assert doc == [dict(zip(OFFSETS_KEYS, map(_cell, row))) for row in _table(text)]
        assert {r["consumerId"] for r in doc} == {row[1]}
    finally:
        consumer.send_signal(signal.SIGTERM)
        consumer.wait(30)


def test_reset_plan(target):
    for mode in ((), ("--dry-run",)):
        text, doc = target.both("pk-consumer-groups", "--reset-offsets", "--group", target.g1, "--group", target.g2,
                                "--all-topics", "--to-earliest", *mode)
        assert doc == [{"group": g, "topic": t, "partition": int(p), "newOffset": int(o)}
                       for g, t, p, o in _table(text)]
        assert sorted((r["group"], r["topic"], r["partition"], r["newOffset"]) for r in doc) == \
            [(target.g1, target.t2, 0, 0), (target.g1, target.t2, 1, 0), (target.g2, target.t1, 0, 0)]
        assert all(list(r) == ["group", "topic", "partition", "newOffset"] for r in doc)
    # a note Kafka prints on stdout beside the table goes to stderr: stdout is the document alone
    args = ("--reset-offsets", "--group", target.g2, "--topic", target.t1, "--to-datetime", "2999-01-01T00:00:00.000",
            "--dry-run")
    note = f"Warn: Partition 0 from topic {target.t1} is empty. Falling back to latest known offset."
    assert note in target("pk-consumer-groups", *args).out
    proc = target("pk-consumer-groups", *args, "--output", "json")
    assert json.loads(proc.out) == [{"group": target.g2, "topic": target.t1, "partition": 0, "newOffset": 3}]
    assert note in proc.err
    # --execute: the JSON plan is what was committed
    group = target.prefix + "exec"
    proc = target("pk-consumer-groups", "--reset-offsets", "--group", group, "--topic", target.t1, "--to-offset", "2",
                  "--execute", "--output", "json")
    assert json.loads(proc.out) == [{"group": group, "topic": target.t1, "partition": 0, "newOffset": 2}]
    _, doc = target.both("pk-consumer-groups", "--describe", "--group", group)
    assert [(r["topic"], r["currentOffset"], r["lag"]) for r in doc] == [(target.t1, 2, 1)]
    proc = target("pk-consumer-groups", "--reset-offsets", "--group", group, "--all-topics", "--to-earliest",
                  "--export", "--output", "json", ok=False)
    assert proc.returncode == 1 and proc.out == "" and proc.err.endswith("--output json can't be used with --export\n")


def test_delete_offsets_and_groups(target):
    group = target.prefix + "del"
    target("pk-consumer-groups", "--reset-offsets", "--group", group, "--topic", target.t2, "--topic", target.t1,
           "--to-offset", "0", "--execute")
    missing_topic = target.prefix + "missing"
    proc = target("pk-consumer-groups", "--delete-offsets", "--group", group, "--topic", f"{target.t2}:0",
                  "--topic", missing_topic, "--output", "json", ok=False)
    assert proc.returncode == 1  # a partition's error, as with the text
    doc = json.loads(proc.out)
    assert all(list(r) == ["topic", "partition", "status"] for r in doc)
    rows = {r["topic"]: r for r in doc}
    assert rows[target.t2] == {"topic": target.t2, "partition": 0, "status": "Successful"}
    assert rows[missing_topic]["partition"] is None
    assert rows[missing_topic]["status"].startswith(
        "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException")
    text = target("pk-consumer-groups", "--delete-offsets", "--group", group, "--topic", f"{target.t2}:1").out
    assert _table(text)[-1] == [target.t2, "1", "Successful"]  # the text's STATUS cell, as the JSON's
    _, doc = target.both("pk-consumer-groups", "--describe", "--group", group)
    assert [(r["topic"], r["partition"]) for r in doc] == [(target.t1, 0)]
    never = target.prefix + "never"
    proc = target("pk-consumer-groups", "--delete", "--group", group, "--group", never, "--output", "json", ok=False)
    assert proc.returncode == 1 and proc.err.startswith("Error: Deletion of some consumer groups failed:")
    doc = json.loads(proc.out)
    assert list(doc) == ["deleted", "failed"] and doc["deleted"] == [group]
    assert [f["group"] for f in doc["failed"]] == [never]
    assert doc["failed"][0]["error"].startswith("org.apache.kafka.common.errors.GroupIdNotFoundException")
    listed = json.loads(target("pk-consumer-groups", "--list", "--output", "json").out)
    assert group not in [r["group"] for r in listed]


@pytest.mark.parametrize("tool", ["pk-topics", "pk-consumer-groups", "pk-groups", "pk-get-offsets"])
def test_shell_completion_knows_output(tool, tmp_path):
    """Click's completion protocol, as the generated completions/ scripts call it at <TAB>."""
    def complete(line: str) -> list[str]:
        var = "_" + tool.replace("-", "_").upper() + "_COMPLETE"
        env = {**Runner(str(tmp_path / "data")).env, "COMP_WORDS": line, "COMP_CWORD": str(len(line.split(" ")) - 1),
               var: "bash_complete"}
        out = subprocess.run([tool_path(tool)], env=env, capture_output=True, text=True, timeout=60).stdout
        return [item.split(",", 1)[1] for item in out.split()]
    assert complete(f"{tool} --outp") == ["--output"]
    assert complete(f"{tool} --output ") == ["text", "json"]
