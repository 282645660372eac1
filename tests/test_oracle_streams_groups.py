"""Streams groups (KIP-1071) in pk-server-start, with a real Kafka Streams 4.4 application as the
client (tests/kafka/streams/WordCountApp.java, `group.protocol=streams`) and the session's
Kafka 4.4 broker as the oracle.

The app counts words: its topology has two subtopologies joined by a repartition topic, and a
changelog topic for the count's store, so the broker must register the topology, create both
internal topics (the app's first heartbeats report them missing) and assign four tasks.

- The same input through pk-server-start and through Kafka 4.4 gives the same output records
  (word, count), the same internal topics, and ListGroups shows the group as type "streams".
- pk-streams-groups and Kafka 4.4's kafka-streams-groups print the same stdout byte for byte,
  with the same exit status, on both brokers (each tool pair on the same broker at the same
  moment: nothing is normalised): --list, --describe with --offsets/--members/--state and
  --verbose, while the app runs and once it stopped (an empty group), and for an unknown group
  (the topics' partitions share no bucket of Java's HashMap, where Kafka's tool orders them
  differently from one JVM to the next);
  --delete-offsets and --delete of the empty group and of an unknown one; bad command lines
  give the same first stderr line and status.
- Two instances on pk-server-start split the tasks between them (disjoint, all four covered);
  with one standby replica (group config) each keeps a standby of the other's stateful task;
  when one stops (SIGTERM: Kafka Streams leaves the group), the other takes its tasks, and
  every word's last count is its count in the input; when one is killed (SIGKILL), its
  session expires and the other takes its tasks.

pk-server-start runs with a short streams heartbeat interval, a short session timeout and no
initial rebalance delay (broker settings), so that the group moves within a second of a change.
"""

from __future__ import annotations

import subprocess
from collections import Counter

import pytest

from conftest import BrokerProcess, tool_path
from kafka_oracle import KafkaMissing
from streams_app import StreamsApp, streams_home
from waits import create_topic_with_leaders, wait_for

APP = "ostr-wordcount"
INPUT, OUTPUT = "ostr-lines", "ostr-counts"
LINES = ["the quick brown fox", "jumps over the lazy dog", "the dog sleeps", "a fox is quick"] * 3
MORE = ["brown dog jumps", "lazy fox"]
INTERNAL = {f"{APP}-words-repartition": 2, f"{APP}-counts-changelog": 2}
ALL_TASKS = "0_0 0_1 1_0 1_1"


@pytest.fixture(scope="module")
def streams_jars():
    try:
        streams_home()
    except KafkaMissing as missing:
        pytest.skip(str(missing))


@pytest.fixture(scope="module")
def pk_server(tmp_path_factory):
    server = BrokerProcess(str(tmp_path_factory.mktemp("pk-streams") / "data"), {
        "group.streams.initial.rebalance.delay.ms": "0", "group.streams.heartbeat.interval.ms": "500",
        "group.streams.min.heartbeat.interval.ms": "500", "group.streams.session.timeout.ms": "2500",
        "group.streams.min.session.timeout.ms": "2500"}).start()
    try:
        yield server
    finally:
        server.stop()


def _produce(bootstrap: str, lines: list[str]) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap})
    for i, line in enumerate(lines):
        producer.produce(INPUT, value=line.encode(), partition=i % 2)
    assert producer.flush(30) == 0


def _final(lines: list[str]) -> Counter:
    return Counter(word for line in lines for word in line.split())


def _words(lines: list[str]) -> int:
    return sum(len(line.split()) for line in lines)


class _Output:
    """The app's output topic read from the start, as (word, count) pairs."""

    def __init__(self, bootstrap: str, topic: str = OUTPUT):
        from confluent_kafka import Consumer

        self.topic = topic
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-reader",
                                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
        self.consumer.subscribe([topic])
        self.records: list[tuple[str, int]] = []

    def read_until(self, count: int) -> list[tuple[str, int]]:
        def enough() -> bool:
            message = self.consumer.poll(0.2)
            if message is not None and message.error() is None:
                self.records.append((message.key().decode(), int(message.value())))
            return len(set(self.records)) >= count
        wait_for(enough, timeout=90, what=f"{count} word counts in {self.topic}")
        return sorted(set(self.records))

    def close(self) -> None:
        self.consumer.close()


def _topics(bootstrap: str, app: str = APP) -> dict[str, int]:
    """The app's internal topics (named `<application id>-...`) and their partition counts."""
    from confluent_kafka.admin import AdminClient

    meta = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10)
    return {name: len(t.partitions) for name, t in meta.topics.items() if name.startswith(app + "-")}


def _topic_overrides(bootstrap: str, topic: str) -> dict[str, str]:
    """The configs a topic was created with (DescribeConfigs' DYNAMIC_TOPIC_CONFIG entries)."""
    from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource

    resource = ConfigResource("topic", topic)
    admin = AdminClient({"bootstrap.servers": bootstrap})  # (kept alive until the answer is in)
    entries = admin.describe_configs([resource])[resource].result(30)
    return {k: e.value for k, e in entries.items() if e.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value}


def _list_groups(kafka_tools, bootstrap: str) -> str:
    r = kafka_tools("kafka-groups", "--bootstrap-server", bootstrap, "--list", "--group-type", "streams")
    assert r.returncode == 0, r.err
    return r.out


def test_word_count_through_pk_as_through_kafka(streams_jars, kafka, kafka_tools, pk_server, tmp_path):
    results = {}
    apps = {}
    # (Kafka's first assignment of a new streams group otherwise waits 3 s)
    r = kafka_tools("kafka-configs", "--bootstrap-server", kafka.bootstrap, "--alter", "--entity-type", "groups",
                    "--entity-name", APP, "--add-config", "streams.initial.rebalance.delay.ms=0")
    assert r.returncode == 0, r.err
    try:
        for name, bootstrap in (("kafka", kafka.bootstrap), ("pk", pk_server.bootstrap)):
            create_topic_with_leaders(bootstrap, INPUT, partitions=2)
            create_topic_with_leaders(bootstrap, OUTPUT, partitions=1)
            _produce(bootstrap, LINES)
            apps[name] = StreamsApp(bootstrap, APP, INPUT, OUTPUT, str(tmp_path / f"{name}.log")).start()
        for name, bootstrap in (("kafka", kafka.bootstrap), ("pk", pk_server.bootstrap)):
            apps[name].wait_running(90)
            assert apps[name].tasks == ALL_TASKS
            output = _Output(bootstrap)
            try:
                results[name] = output.read_until(_words(LINES))
            finally:
                output.close()
            assert _topics(bootstrap) == INTERNAL
            results[name + " configs"] = {t: _topic_overrides(bootstrap, t) for t in INTERNAL}
        assert results["pk"] == results["kafka"]
        assert results["pk configs"] == results["kafka configs"]  # the topology's topic configs
        assert results["pk configs"][f"{APP}-counts-changelog"]["cleanup.policy"] == "compact"
        assert max(results["pk"], key=lambda pair: pair[1]) == ("the", _final(LINES)["the"])
        listed = {name: _list_groups(kafka_tools, b) for name, b in (("kafka", kafka.bootstrap),
                                                                    ("pk", pk_server.bootstrap))}
        assert APP in listed["pk"] and listed["pk"] == listed["kafka"]
        for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
            _same_tool_output(kafka_tools, bootstrap, LIVE)
    finally:
        for app in apps.values():
            app.stop()
    for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
        _same_tool_output(kafka_tools, bootstrap, STOPPED)
    _resets_as_kafka(kafka, kafka_tools, pk_server, tmp_path)
    # --delete-offsets and --delete: each tool changes the group on one broker, then both
    # tools see the same result on either
    dropped = {}
    for bootstrap, tool in ((kafka.bootstrap, "kafka"), (pk_server.bootstrap, "pk")):
        dropped[tool] = _tool(kafka_tools, tool, bootstrap, ["--delete-offsets", "--group", APP, "--all-input-topics"])
    assert dropped["pk"] == dropped["kafka"]
    assert f"{INPUT}      0          Successful" in dropped["pk"][0]
    for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
        _same_tool_output(kafka_tools, bootstrap, [
            ["--delete-offsets", "--group", APP, "--input-topic", "ostr-unknown", "--input-topic", INPUT],
            ["--delete-offsets", "--group", "ostr-unknown", "--all-input-topics"]])
    deleted = {}
    for bootstrap, tool in ((kafka.bootstrap, "kafka"), (pk_server.bootstrap, "pk")):
        deleted[tool] = _tool(kafka_tools, tool, bootstrap, ["--delete", "--group", APP, "--group", "ostr-unknown",
                                                             "--delete-all-internal-topics"])
    assert deleted["pk"] == deleted["kafka"]
    assert "* Group 'ostr-unknown' could not be deleted" in deleted["pk"][0]
    # (the repartition topic went with --reset-offsets above: its deletion fails, the changelog's not)
    assert deleted["pk"][0].startswith(f"Failed to delete internal topic: {APP}-words-repartition\n")
    assert f"* Internal topics of the streams group '{APP}' could not be deleted" in deleted["pk"][0]
    assert _topics(kafka.bootstrap) == _topics(pk_server.bootstrap) == {}
    for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
        _same_tool_output(kafka_tools, bootstrap, [["--delete", "--group", APP], ["--list", "--state"]])


def _resets_as_kafka(kafka, kafka_tools, pk_server, tmp_path) -> None:
    """--reset-offsets of the empty group: each scenario planned by both tools on both brokers,
    then executed; with --execute, the internal topic named by --delete-internal-topic goes."""
    plan = tmp_path / "plan.csv"
    plan.write_text(f"{INPUT},0,1\n{INPUT},1,100\n")
    for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
        _same_tool_output(kafka_tools, bootstrap, RESETS + [
            ["--reset-offsets", "--group", APP, "--from-file", str(plan), "--dry-run"],
            ["--reset-offsets", "--group", APP, "--all-input-topics", "--to-offset", "2", "--execute"],
            ["--reset-offsets", "--group", APP, "--all-input-topics", "--to-current", "--dry-run", "--export"]])
    # (pk-server-start keeps no topology description, as a Kafka broker without the plugin)
    topology = ["--describe", "--group", APP, "--topology"]
    assert _tool(kafka_tools, "kafka", pk_server.bootstrap, topology) == \
        _tool(kafka_tools, "kafka", kafka.bootstrap, topology) == \
        (f"\nError: No topology description is stored for streams group '{APP}'.\n", 1)
    executed = {}
    for bootstrap, tool in ((kafka.bootstrap, "kafka"), (pk_server.bootstrap, "pk")):
        executed[tool] = _tool(kafka_tools, tool, bootstrap, [
            "--reset-offsets", "--group", APP, "--all-input-topics", "--to-earliest", "--execute",
            "--delete-internal-topic", f"{APP}-words-repartition"])
    assert executed["pk"] == executed["kafka"]
    assert f"{APP:<30} {INPUT:<30} {0:<10} {0:<15}" in executed["pk"][0]
    assert _topics(kafka.bootstrap) == _topics(pk_server.bootstrap) == {f"{APP}-counts-changelog": 2}


RESETS = [["--reset-offsets", "--group", APP, "--all-input-topics", "--to-earliest", "--dry-run"],
          ["--reset-offsets", "--group", APP, "--all-input-topics", "--to-latest", "--dry-run", "--export"],
          ["--reset-offsets", "--group", APP, "--input-topic", f"{INPUT}:1", "--to-offset", "300", "--dry-run"],
          ["--reset-offsets", "--group", APP, "--all-input-topics", "--shift-by", "-2", "--dry-run"],
          ["--reset-offsets", "--group", APP, "--all-input-topics", "--to-datetime", "2000-01-01T00:00:00.000",
           "--dry-run"],
          ["--reset-offsets", "--group", APP, "--all-input-topics", "--by-duration", "P1D", "--dry-run"],
          ["--reset-offsets", "--group", APP, "--input-topic", OUTPUT, "--to-earliest", "--dry-run"],
          ["--reset-offsets", "--group", "ostr-unknown", "--all-input-topics", "--to-earliest", "--dry-run"],
          ["--describe", "--group", APP, "--topology"]]


LIVE = [["--list"], ["--list", "--state", "stable,empty"],
        ["--describe", "--group", APP], ["--describe", "--group", APP, "--offsets", "--verbose"],
        ["--describe", "--group", APP, "--members"], ["--describe", "--group", APP, "--members", "--verbose"],
        ["--describe", "--group", APP, "--state"], ["--describe", "--all-groups", "--state", "--verbose"],
        ["--describe", "--group", "ostr-unknown"]]
STOPPED = [["--describe", "--group", APP], ["--describe", "--group", APP, "--members"],
           ["--describe", "--group", APP, "--state"]]  # (--list --state: after --delete below)


def _same_tool_output(kafka_tools, bootstrap: str, calls: list[list[str]]) -> None:
    """Kafka's script and pk's tool, back to back: the same stdout and exit status. (A group
    whose state moves between the two runs would differ: the calls come once the app is idle.)"""
    for args in calls:
        theirs = _tool(kafka_tools, "kafka", bootstrap, args)
        ours = _tool(kafka_tools, "pk", bootstrap, args)
        assert ours == theirs, (bootstrap, args)


def _tool(kafka_tools, which: str, bootstrap: str, args: list[str]) -> tuple[str, int]:
    """(stdout, exit status) of kafka-streams-groups or pk-streams-groups."""
    if which == "kafka":
        r = kafka_tools("kafka-streams-groups", "--bootstrap-server", bootstrap, *args)
        return r.out, r.returncode
    r = subprocess.run([tool_path("pk-streams-groups"), "--bootstrap-server", bootstrap, *args],
                       capture_output=True, timeout=60)
    return r.stdout.decode(), r.returncode


BAD = [["--describe"], ["--list", "--state", "bogus"], ["--delete-offsets", "--group", "g"], ["--delete"],
       ["--describe", "--group", "g", "--members", "--state"],
       ["--describe", "--group", "g", "--state", "Stable"], ["--list", "--group", "g"], ["--list", "--members"],
       ["--reset-offsets", "--group", "g", "--to-earliest"], ["--reset-offsets", "--to-earliest", "--dry-run"],
       ["--reset-offsets", "--group", "g", "--to-earliest", "--to-latest", "--dry-run"],
       ["--reset-offsets", "--group", "g", "--to-earliest", "--dry-run", "--delete-all-internal-topics"],
       ["--reset-offsets", "--group", "g", "--to-earliest", "--dry-run", "--delete-internal-topic", "t"],
       ["--delete-all-internal-topics", "--group", "g", "--list"], ["--list", "--execute"],
       ["--delete", "--group", "g", "--input-topic", "t"], ["--reset-offsets", "--group", "g", "--to-offset", "x",
                                                            "--dry-run"]]


@pytest.mark.parametrize("args", BAD, ids=lambda a: " ".join(a))
def test_bad_command_lines_as_kafka(kafka, kafka_tools, args):
    theirs = kafka_tools("kafka-streams-groups", "--bootstrap-server", kafka.bootstrap, *args)
    ours = subprocess.run([tool_path("pk-streams-groups"), "--bootstrap-server", kafka.bootstrap, *args],
                          capture_output=True, timeout=60)
    assert ours.returncode == theirs.returncode
    assert _states_sorted(ours.stderr.decode().splitlines()[:1]) == _states_sorted(theirs.err.splitlines()[:1])


def _states_sorted(lines: list[str]) -> list[str]:
    """Kafka lists the valid states from a HashSet of enum constants, whose order changes from
    one JVM to the next: compared as a set."""
    head, sep, states = (lines[0] if lines else "").partition("Valid states are: ")
    return [head + sep + ", ".join(sorted(states.split(", ")))] if sep else lines


def test_two_instances_split_tasks_and_take_over(streams_jars, pk_server, tmp_path):
    """An application of its own (its own group, internal topics and output) over the same
    input; after the handover every word's last count is its count in the input: no record
    lost, none counted twice."""
    bootstrap = pk_server.bootstrap
    app_id, output_topic = f"{APP}-pair", f"{OUTPUT}-pair"
    if INPUT not in _topics_all(bootstrap):
        create_topic_with_leaders(bootstrap, INPUT, partitions=2)
        _produce(bootstrap, LINES)
    create_topic_with_leaders(bootstrap, output_topic, partitions=1)
    configs = subprocess.run([tool_path("pk-configs"), "--bootstrap-server", bootstrap, "--alter", "--entity-type",
                              "groups", "--entity-name", app_id, "--add-config", "streams.num.standby.replicas=1"],
                             capture_output=True, timeout=60)
    assert configs.returncode == 0, configs.stderr
    first = StreamsApp(bootstrap, app_id, INPUT, output_topic, str(tmp_path / "first.log")).start()
    second = None
    try:
        first.wait_running(90)
        second = StreamsApp(bootstrap, app_id, INPUT, output_topic, str(tmp_path / "second.log")).start()

        def split() -> bool:
            a, b = set((first.tasks or "").split()), set((second.tasks or "").split())
            return bool(a) and bool(b) and not a & b and " ".join(sorted(a | b)) == ALL_TASKS
        second.wait_for(lambda app: split(), 90, "the tasks split between the two instances")
        assert len(first.tasks.split()) == 2 and len(second.tasks.split()) == 2
        # one standby replica (group config): each instance keeps a standby of the other's
        # stateful task (subtopology 1, the count), shown by pk-streams-groups
        members = wait_for(lambda: _standbys(bootstrap, app_id), 60, "standby tasks on both members")
        assert sorted(members) == ["1:[0]", "1:[1]"]

        second.stop()
        first.wait_for(lambda app: app.tasks == ALL_TASKS, 90, "all tasks back on the first instance")
        _produce(bootstrap, MORE)
        output = _Output(bootstrap, output_topic)
        try:
            counts = output.read_until(_words(LINES) + _words(MORE))
        finally:
            output.close()
        last = {}
        for word, n in counts:
            last[word] = max(n, last.get(word, 0))
        assert last == dict(_final(LINES + MORE))
        assert _topics(bootstrap, app_id) == {f"{app_id}-words-repartition": 2, f"{app_id}-counts-changelog": 2}

        # a third instance takes half, then vanishes (SIGKILL): its session expires (2.5 s
        # here) and the first instance gets its tasks back
        third = StreamsApp(bootstrap, app_id, INPUT, output_topic, str(tmp_path / "third.log")).start()
        second = third
        third.wait_for(lambda app: len((app.tasks or "").split()) == 2 and len(first.tasks.split()) == 2, 90,
                       "the tasks split again")
        third.kill()
        first.wait_for(lambda app: app.tasks == ALL_TASKS, 90, "all tasks back after the session timeout")
    finally:
        first.stop()
        if second is not None:
            second.stop()


def _standbys(bootstrap: str, app_id: str) -> list[str] | None:
    """Each member's standby tasks as pk-streams-groups --describe --members prints them
    ("1:[0]"), once every member has some; None before."""
    r = subprocess.run([tool_path("pk-streams-groups"), "--bootstrap-server", bootstrap, "--describe", "--group",
                        app_id, "--members"], capture_output=True, timeout=60)
    rows = r.stdout.decode().splitlines()[1:]
    found = [row.partition("STANDBY: ")[2].rstrip("; ") for row in rows]
    return found if len(rows) == 2 and all(found) else None


def _topics_all(bootstrap: str) -> set[str]:
    from confluent_kafka.admin import AdminClient

    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics)


def test_streams_version_zero_turns_the_protocol_off(pk_server):
    """With streams.version downgraded to 0, a heartbeat is answered UNSUPPORTED_VERSION and
    nothing else, as Kafka 4.4 answers (seen on a Kafka broker of the test's author's own:
    the session's broker is shared, its features are left alone); upgraded again, it joins."""
    from pk.commands.backends.wire import WireClient
    from pk.engine import protocol as kp

    def features(action: str, level: int) -> None:
        r = subprocess.run([tool_path("pk-features"), "--bootstrap-server", pk_server.bootstrap, action,
                            "--feature", f"streams.version={level}"], capture_output=True, timeout=60)
        assert r.returncode == 0, r.stderr

    topology = {"epoch": 0, "subtopologies": [{
        "subtopology_id": "0", "source_topics": [INPUT], "source_topic_regex": [], "state_changelog_topics": [],
        "repartition_sink_topics": [], "repartition_source_topics": [], "copartition_groups": []}]}
    body = {"group_id": "ostr-gated", "member_id": "ostr-member", "member_epoch": 0, "endpoint_information_epoch": 0,
            "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30000, "topology": topology,
            "active_tasks": [], "standby_tasks": [], "warmup_tasks": [], "process_id": "ostr-process",
            "user_endpoint": None, "client_tags": None, "task_offsets": None, "task_end_offsets": None,
            "shutdown_application": False}
    client = WireClient(pk_server.bootstrap, 30)
    try:
        features("downgrade", 0)
        try:
            r = client.call(kp.ApiKey.STREAMS_GROUP_HEARTBEAT, 1, body)
        finally:
            features("upgrade", 1)
        assert (r["error_code"], r["error_message"], r["member_id"], r["status"]) == (35, None, "", [])
        r = client.call(kp.ApiKey.STREAMS_GROUP_HEARTBEAT, 1, body)
        assert (r["error_code"], r["member_id"], r["member_epoch"]) == (0, "ostr-member", 1)
    finally:
        client.close()
