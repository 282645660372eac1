"""pk-topics run as an installed tool, output compared byte for byte with Kafka 3.7's texts
(kafka-cli.md §1, pk-choices.md)."""

from __future__ import annotations

import json
import os
import re

import pytest

WARNING = ("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') "
           "could collide. To avoid issues it is best to use either, but not both.\n")
ERR = "Error while executing topic command : "


def ok(proc):
    assert proc.returncode == 0, (proc.returncode, proc.out, proc.err)
    assert proc.err == ""
    return proc.out


def fails(proc, message):
    """One line on stderr, exit 1, never a traceback."""
    assert proc.returncode == 1, (proc.returncode, proc.out, proc.err)
    assert proc.err == message + "\n"
    assert "Traceback" not in proc.out
    return proc


def topic_id(pk, name):
    line = ok(pk("pk-topics", "--describe", "--topic", name)).splitlines()[0]
    return re.search(r"TopicId: (\S+)", line).group(1)


def test_seed_transcript(pk):
    # The seeds use a single dash (-topic): jopt-simple accepts that, so pk does too.
    out = ok(pk("pk-topics", "-topic", "first_topic", "--create", "--partitions", "3", "--replication-factor", "1"))
    assert out == WARNING + "Created topic first_topic.\n"
    assert ok(pk("pk-topics", "--list")) == "__consumer_offsets\nfirst_topic\n"
    tid = topic_id(pk, "first_topic")
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", tid) and not tid.startswith("-")
    assert ok(pk("pk-topics", "--topic", "first_topic", "--describe")) == (
        f"Topic: first_topic\tTopicId: {tid}\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: \n"
        "\tTopic: first_topic\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\n"
        "\tTopic: first_topic\tPartition: 1\tLeader: 0\tReplicas: 0\tIsr: 0\n"
        "\tTopic: first_topic\tPartition: 2\tLeader: 0\tReplicas: 0\tIsr: 0\n")
    assert ok(pk("pk-topics", "--create", "--topic", "second_topic")) == WARNING + "Created topic second_topic.\n"
    assert ok(pk("pk-topics", "--topic", "second_topic", "--delete")) == ""
    assert ok(pk("pk-topics", "--list")) == "__consumer_offsets\nfirst_topic\n"


def test_on_disk_layout(pk, data_dir):
    ok(pk("pk-topics", "--create", "--topic", "orders", "--partitions", "2"))
    for p in (0, 1):
        d = os.path.join(data_dir, f"orders-{p}")
        assert {"00000000000000000000.index", "00000000000000000000.log", "00000000000000000000.timeindex",
                "partition.metadata"} <= set(os.listdir(d))
        with open(os.path.join(d, "partition.metadata")) as f:
            assert f.read() == f"version: 0\ntopic_id: {topic_id(pk, 'orders')}\n"
    with open(os.path.join(data_dir, "meta.properties")) as f:
        text = f.read()
    assert "node.id=0\n" in text and re.search(r"^cluster\.id=[A-Za-z0-9_-]{22}$", text, re.M)


def test_list_and_exclude_internal(pk):
    assert ok(pk("pk-topics", "--list")) == "__consumer_offsets\n"
    # Kafka joins the names with "\n" and println()s them: no topics is one empty line.
    assert ok(pk("pk-topics", "--list", "--exclude-internal")) == "\n"
    ok(pk("pk-topics", "--create", "--topic", "b"))
    ok(pk("pk-topics", "--create", "--topic", "a"))
    assert ok(pk("pk-topics", "--list", "--exclude-internal")) == "a\nb\n"
    assert ok(pk("pk-topics", "--list", "--topic", "a,b")) == "a\nb\n"
    assert ok(pk("pk-topics", "--list", "--topic", "__.*")) == "__consumer_offsets\n"
    assert ok(pk("pk-topics", "--list", "--topic", "__.*", "--exclude-internal")) == "\n"


def test_internal_offsets_topic(pk):
    out = ok(pk("pk-topics", "--describe", "--topic", "__consumer_offsets")).splitlines()
    assert re.fullmatch(r"Topic: __consumer_offsets\tTopicId: \S{22}\tPartitionCount: 50\tReplicationFactor: 1\t"
                        r"Configs: cleanup.policy=compact,compression.type=producer,segment.bytes=104857600",
                        out[0])
    assert len(out) == 51
    assert out[50] == "\tTopic: __consumer_offsets\tPartition: 49\tLeader: 0\tReplicas: 0\tIsr: 0"
    fails(pk("pk-topics", "--delete", "--topic", "__consumer_offsets"),
          ERR + "Topic __consumer_offsets is a kafka internal topic and is not allowed to be marked for deletion.")


def test_describe_selection(pk):
    for name in ("orders", "payments", "users"):
        ok(pk("pk-topics", "--create", "--topic", name))
    out = ok(pk("pk-topics", "--describe", "--exclude-internal"))
    assert [l.split("\t")[0] for l in out.splitlines() if l.startswith("Topic:")] == [
        "Topic: orders", "Topic: payments", "Topic: users"]  # sorted (pk-choices.md)
    out = ok(pk("pk-topics", "--describe", "--topic", "'orders,users'"))
    assert [l.split("\t")[0] for l in out.splitlines() if l.startswith("Topic:")] == ["Topic: orders", "Topic: users"]
    out = ok(pk("pk-topics", "--describe", "--topic-id", topic_id(pk, "payments")))
    assert out.startswith("Topic: payments\t")
    fails(pk("pk-topics", "--describe", "--topic-id", "AAAAAAAAAAAAAAAAAAAAAQ"),
          ERR + "TopicId 'AAAAAAAAAAAAAAAAAAAAAQ' does not exist as expected")


def test_not_found_and_if_exists(pk):
    for action in ("--describe", "--delete"):
        fails(pk("pk-topics", action, "--topic", "nope"), ERR + "Topic 'nope' does not exist as expected")
        assert ok(pk("pk-topics", action, "--topic", "nope", "--if-exists")) == ""
    fails(pk("pk-topics", "--alter", "--topic", "nope", "--partitions", "2"),
          ERR + "Topic 'nope' does not exist as expected")
    assert ok(pk("pk-topics", "--alter", "--topic", "nope", "--partitions", "2", "--if-exists")) == ""
    # An invalid regex is Kafka's error too.
    fails(pk("pk-topics", "--describe", "--topic", "a("), ERR + "a( is an invalid regex.")


def test_create_errors_leave_topics_intact(pk):
    ok(pk("pk-topics", "--create", "--topic", "keep", "--partitions", "2", "--config", "retention.ms=1000"))
    before = ok(pk("pk-topics", "--describe"))
    cases = [
        (["--topic", "keep"], ERR + "Topic 'keep' already exists."),
        (["--topic", "x", "--replication-factor", "3"],
         ERR + "Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be "
               "reached because only 1 broker(s) are registered."),
        (["--topic", "x", "--replication-factor", "0"],
         ERR + "The replication factor must be between 1 and 32767 inclusive"),
        (["--topic", "x", "--partitions", "0"], ERR + "The partitions must be greater than 0"),
        (["--topic", "x", "--partitions", "-3"], ERR + "The partitions must be greater than 0"),
        (["--topic", "x", "--config", "nope=1"], ERR + "Unknown topic config name: nope"),
        (["--topic", "x", "--config", "retention.ms=soon"],
         ERR + "Invalid value soon for configuration retention.ms: Not a number of type LONG"),
        (["--topic", "x", "--config", "retention.ms"],
         ERR + 'requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".'),
        (["--topic", "x", "--replica-assignment", "1"],
         ERR + "The manual partition assignment includes broker 1, but no such broker is registered."),
        (["--topic", "x", "--replica-assignment", "0:0"],
         ERR + "Partition replica lists may not contain duplicate entries: 0"),
        (["--topic", "x", "--replica-assignment", "0,y"], ERR + 'For input string: "y"'),
        (["--topic", ""], ERR + "Topic name is invalid: the empty string is not allowed"),
        (["--topic", "."], ERR + "Topic name is invalid: '.' is not allowed"),
        (["--topic", ".."], ERR + "Topic name is invalid: '..' is not allowed"),
        (["--topic", "a b"],
         ERR + "Topic name is invalid: 'a b' contains one or more characters other than ASCII alphanumerics, "
               "'.', '_' and '-'"),
        (["--topic", "x" * 250],
         ERR + f"Topic name is invalid: the length of '{'x' * 250}' is longer than the max allowed length 249"),
    ]
    for args, message in cases:
        fails(pk("pk-topics", "--create", *args), message)
    assert ok(pk("pk-topics", "--describe")) == before
    assert ok(pk("pk-topics", "--list", "--exclude-internal")) == "keep\n"


def test_name_rules(pk):
    assert ok(pk("pk-topics", "--create", "--topic", "x" * 249)) == f"Created topic {'x' * 249}.\n"
    assert ok(pk("pk-topics", "--create", "--topic", "metrics_a")) == WARNING + "Created topic metrics_a.\n"
    proc = pk("pk-topics", "--create", "--topic", "metrics.a")
    assert proc.out == WARNING
    fails(proc, ERR + "Topic 'metrics.a' collides with existing topic: metrics_a")
    assert ok(pk("pk-topics", "--create", "--topic", "metrics_a", "--if-not-exists")) == WARNING


def test_replica_assignment(pk):
    ok(pk("pk-topics", "--create", "--topic", "ra", "--replica-assignment", "0, 0 ,0"))
    assert "PartitionCount: 3\tReplicationFactor: 1" in ok(pk("pk-topics", "--describe", "--topic", "ra"))
    ok(pk("pk-topics", "--alter", "--topic", "ra", "--partitions", "4", "--replica-assignment", "0,0,0,0"))
    assert "PartitionCount: 4" in ok(pk("pk-topics", "--describe", "--topic", "ra"))
    fails(pk("pk-topics", "--alter", "--topic", "ra", "--partitions", "6", "--replica-assignment", "0,0,0,0,0"),
          ERR + "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.")


def test_alter_partitions(pk):
    ok(pk("pk-topics", "--create", "--topic", "t", "--partitions", "2"))
    assert ok(pk("pk-topics", "--alter", "--topic", "t", "--partitions", "4")) == ""
    assert "PartitionCount: 4" in ok(pk("pk-topics", "--describe", "--topic", "t"))
    fails(pk("pk-topics", "--alter", "--topic", "t", "--partitions", "4"), ERR + "Topic already has 4 partition(s).")
    fails(pk("pk-topics", "--alter", "--topic", "t", "--partitions", "3"),
          ERR + "The topic t currently has 4 partition(s); 3 would not be an increase.")
    assert "PartitionCount: 4" in ok(pk("pk-topics", "--describe", "--topic", "t"))


def test_alter_configs_on_bundled_engine(pk, data_dir):
    ok(pk("pk-topics", "--create", "--topic", "c", "--config", "retention.ms=1000"))
    assert ok(pk("pk-topics", "--alter", "--topic", "c", "--config", "max.message.bytes=2000",
                 "--config", "cleanup.policy=compact,delete")) == "Updated config for topic c.\n"
    line = ok(pk("pk-topics", "--describe", "--topic", "c")).splitlines()[0]
    assert line.endswith("Configs: cleanup.policy=compact,delete,max.message.bytes=2000,retention.ms=1000")
    assert ok(pk("pk-topics", "--alter", "--topic", "c", "--delete-config", "retention.ms")) == \
        "Updated config for topic c.\n"
    line = ok(pk("pk-topics", "--describe", "--topic", "c")).splitlines()[0]
    assert line.endswith("Configs: cleanup.policy=compact,delete,max.message.bytes=2000")
    fails(pk("pk-topics", "--alter", "--topic", "c", "--config", "min.insync.replicas=0"),
          ERR + "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1")
    with open(os.path.join(data_dir, ".pk", "topics", "c.json")) as f:
        assert json.load(f)["configs"] == {"cleanup.policy": "compact,delete", "max.message.bytes": "2000"}


def test_describe_report_filters(pk):
    ok(pk("pk-topics", "--create", "--topic", "plain", "--partitions", "2"))
    ok(pk("pk-topics", "--create", "--topic", "strict", "--config", "min.insync.replicas=2"))
    assert ok(pk("pk-topics", "--describe", "--exclude-internal", "--under-replicated-partitions")) == ""
    assert ok(pk("pk-topics", "--describe", "--exclude-internal", "--unavailable-partitions")) == ""
    assert ok(pk("pk-topics", "--describe", "--exclude-internal", "--under-min-isr-partitions")) == \
        "\tTopic: strict\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\n"
    assert ok(pk("pk-topics", "--describe", "--exclude-internal", "--at-min-isr-partitions")) == (
        "\tTopic: plain\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\n"
        "\tTopic: plain\tPartition: 1\tLeader: 0\tReplicas: 0\tIsr: 0\n")
    # Java 3.7 allows combining report flags: a partition prints if it matches any.
    assert ok(pk("pk-topics", "--describe", "--exclude-internal", "--at-min-isr-partitions",
                 "--under-min-isr-partitions")).count("\n") == 3
    out = ok(pk("pk-topics", "--describe", "--topics-with-overrides"))
    assert [l.split("\t")[0] for l in out.splitlines()] == ["Topic: __consumer_offsets", "Topic: strict"]


@pytest.mark.parametrize("args, message", [
    ([], None),
    (["--list", "--describe"], "Command must include exactly one action: --list, --describe, --create, --alter or --delete"),
    (["--topic", "t"], "Command must include exactly one action: --list, --describe, --create, --alter or --delete"),
    (["--create"], 'Missing required argument "[topic]"'),
    (["--delete"], 'Missing required argument "[topic]"'),
    (["--alter", "--topic", "t"], 'Missing required argument "[partitions]"'),
    (["--describe", "--if-exists"], "--topic or --topic-id is required to describe a topic"),
    (["--list", "--partitions", "3"], 'Option "[partitions]" can\'t be used with option "[list]"'),
    (["--alter", "--topic", "t", "--partitions", "3", "--replication-factor", "1"],
     'Option "[replication-factor]" can\'t be used with option "[alter]"'),
    (["--create", "--topic", "t", "--replica-assignment", "0", "--partitions", "1"],
     'Option "[replica-assignment]" can\'t be used with option "[partitions]"'),
    (["--delete", "--topic", "t", "--if-not-exists"], 'Option "[if-not-exists]" can\'t be used with option "[delete]"'),
    (["--create", "--topic", "t", "--if-exists"], 'Option "[if-exists]" can\'t be used with option "[create]"'),
    (["--create", "--topic", "t", "--exclude-internal"], 'Option "[exclude-internal]" can\'t be used with option "[create]"'),
    (["--describe", "--topics-with-overrides", "--unavailable-partitions"],
     'Option "[unavailable-partitions]" can\'t be used with option "[topics-with-overrides]"'),
    (["--list", "--bogus"], "bogus is not a recognized option"),
    (["--create", "--topic", "t", "--partitions", "three"], "Cannot parse argument 'three' of option partitions"),
    (["--create", "--topic"], "Option topic requires an argument"),
])
def test_usage_errors(pk, args, message):
    proc = pk("pk-topics", *args)
    assert proc.returncode == 1 and proc.out == "" and "Traceback" not in proc.err
    if message is None:  # no arguments: Kafka's description line, then the help
        assert proc.err.startswith("Create, delete, describe, or change a topic.\n")
        assert "--bootstrap-server" not in proc.err and "--create" in proc.err
    else:
        assert proc.err == message + "\n"


def test_help_and_version(pk):
    out = ok(pk("pk-topics", "--help"))
    assert "This tool helps to create, delete, describe, or change a topic." in out
    assert re.fullmatch(r"pk \d+\.\d+\.\d+ \(Kafka 3\.7\.0 tools\)\n", ok(pk("pk-topics", "--version")))


def test_data_dir_option_and_bad_data_dir(pk, tmp_path):
    other = str(tmp_path / "other")
    assert ok(pk("pk-topics", "--data-dir", other, "--create", "--topic", "elsewhere")) == "Created topic elsewhere.\n"
    assert ok(pk("pk-topics", "--list", "--exclude-internal")) == "\n"
    assert ok(pk("pk-topics", "--list", "--exclude-internal", "--data-dir", other)) == "elsewhere\n"
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    fails(pk("pk-topics", "--list", "--data-dir", str(not_a_dir)),
          ERR + f"Data directory {not_a_dir} is not a directory")


def test_default_data_dir_follows_xdg(pk, tmp_path):
    env = {"PK_DATA_DIR": "", "XDG_DATA_HOME": str(tmp_path / "xdg")}
    ok(pk("pk-topics", "--create", "--topic", "xdg", env=env))
    assert os.path.isdir(tmp_path / "xdg" / "pk" / "xdg-0")


def test_corrupt_topic_metadata_is_reported(pk, data_dir):
    ok(pk("pk-topics", "--create", "--topic", "good"))
    ok(pk("pk-topics", "--create", "--topic", "broken"))
    path = os.path.join(data_dir, ".pk", "topics", "broken.json")
    with open(path, "w") as f:
        f.write("{not json")
    proc = pk("pk-topics", "--describe", "--topic", "broken")
    assert proc.returncode == 1 and proc.err.startswith(ERR + f"Topic metadata file {path} is corrupt")
    assert proc.err.count("\n") == 1
    assert ok(pk("pk-topics", "--describe", "--topic", "good")).startswith("Topic: good\t")
