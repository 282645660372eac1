"""The seeds' transcripts (tutorial sessions with Kafka's tools, restated below), replayed with `kafka-` replaced by `pk-`, on both
backends (conftest.py): the console producer and consumer run on the bundled engine and
through --bootstrap-server against pk-server-start; pk-topics and GetOffsetShell work on the
data directory the server shares. The seeds used the ZooKeeper-era tool; pk prints what Kafka
4.4 prints (test_oracle_topics.py): the describe line carries a TopicId and the cluster-wide
min.insync.replicas, partitions their (empty) Elr lists, and --delete is silent.
"""

from __future__ import annotations

import re

import pytest

from conftest import TEST_BOOTSTRAP, BrokerProcess

WARNING = ("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') "
           "could collide. To avoid issues it is best to use either, but not both.\n")


@pytest.fixture
def module_server(tmp_path):
    """A server per test here: the transcripts list every topic, so they need a cluster of their own."""
    if TEST_BOOTSTRAP:
        yield None
        return
    b = BrokerProcess(str(tmp_path / "server"), {"group.min.session.timeout.ms": "500"}).start()
    try:
        yield b
    finally:
        b.stop()


@pytest.fixture
def data_dir(backend, tmp_path):
    if backend.data_dir is None:
        pytest.skip("pk-topics and GetOffsetShell read the server's data directory: not on PK_TEST_BOOTSTRAP")
    return backend.data_dir


def run(pk, *args, input=None):
    proc = pk(*args, input=input)
    assert proc.returncode == 0, (args, proc.out, proc.err)
    return proc


def test_first_topic_transcript(pk, backend):
    # $kafka-topics --zookeeper 127.0.01:2181 -topic first_topic --create --partitions 3 --replication-factor 1
    out = run(pk, "pk-topics", "-topic", "first_topic", "--create", "--partitions", "3",
              "--replication-factor", "1").out
    assert out == WARNING + "Created topic first_topic.\n"
    assert run(pk, "pk-topics", "--list").out == "__consumer_offsets\nfirst_topic\n"
    described = run(pk, "pk-topics", "--topic", "first_topic", "--describe").out
    assert re.fullmatch(
        "Topic: first_topic\tTopicId: [A-Za-z0-9_-]{22}\tPartitionCount: 3\tReplicationFactor: 1\t"
        "Configs: min.insync.replicas=1\n"
        "\tTopic: first_topic\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\tElr: \tLastKnownElr: \n"
        "\tTopic: first_topic\tPartition: 1\tLeader: 0\tReplicas: 0\tIsr: 0\tElr: \tLastKnownElr: \n"
        "\tTopic: first_topic\tPartition: 2\tLeader: 0\tReplicas: 0\tIsr: 0\tElr: \tLastKnownElr: \n", described)

    # $kafka-console-producer --broker-list --topic first_topic   (lines typed at the > prompt)
    lines = ["Hello Meriem", "awsome course!", "learning kafka", "another message"]
    produced = run(pk, "pk-console-producer", *backend, "--topic", "first_topic", input="\n".join(lines) + "\n")
    assert produced.out == ""  # no prompt when stdin is not a terminal

    # $kafka-console-consumer --bootstrap-server --topic first_topic --from-beginning
    consumed = run(pk, "pk-console-consumer", *backend, "--topic", "first_topic", "--from-beginning",
                   "--max-messages", "4")
    assert sorted(consumed.out.splitlines()) == sorted(lines)
    # Kafka 4.4's consumer notes the new group protocol (KIP-848) on stderr first.
    assert consumed.err == (
        "The consumer rebalance protocol (KIP-848) is production-ready! Set group.protocol=consumer to try it out. "
        "See https://kafka.apache.org/documentation/#consumer_rebalance_protocol\nProcessed a total of 4 messages\n")

    # A consumer without --from-beginning sees only what arrives after it starts.
    assert run(pk, "pk-console-consumer", *backend, "--topic", "first_topic", "--timeout-ms", "500").out == ""

    # Create second_topic and delete it.
    assert run(pk, "pk-topics", "--topic", "second_topic", "--create", "--partitions", "3",
               "--replication-factor", "1").out == WARNING + "Created topic second_topic.\n"
    assert run(pk, "pk-topics", "--topic", "second_topic", "--delete").out == ""
    assert run(pk, "pk-topics", "--list").out == "__consumer_offsets\nfirst_topic\n"


def test_keyed_file_producer_transcript(pk, backend, tmp_path):
    """Seed 002: --property parse.key=true --property key.separator=: --property file=my-messages.txt"""
    run(pk, "pk-topics", "--create", "--topic", "my-topic-name", "--partitions", "3", "--replication-factor", "1")
    run(pk, "pk-topics", "--create", "--if-not-exists", "--topic", "my-topic-name", "--partitions", "3",
        "--replication-factor", "1")
    messages = tmp_path / "my-messages.txt"
    messages.write_text("".join(f"truck_{i % 4}:position {i}\n" for i in range(40)))
    produced = run(pk, "pk-console-producer", *backend, "--topic", "my-topic-name",
                   "--property", "parse.key=true", "--property", "key.separator=:", "--property", f"file={messages}")
    # Kafka 4.4 warns about the deprecated --property on stdout (test_oracle_console.py).
    assert produced.out == ("Warning: --property is deprecated and will be removed in a future version. "
                            "Use --reader-property instead.\n")
    out = run(pk, "pk-console-consumer", *backend, "--topic", "my-topic-name", "--from-beginning", "--max-messages", "40",
              "--property", "print.key=true", "--property", "print.partition=true").out.splitlines()
    assert out.pop(0) == ("Option --property is deprecated and will be removed in a future version. "
                          "Use --formatter-property instead.")
    assert len(out) == 40
    # Every record of one key lands in one partition, in the order it was written.
    partitions: dict[str, set[str]] = {}
    per_key: dict[str, list[int]] = {}
    for line in out:
        partition, key, value = line.split("\t")
        partitions.setdefault(key, set()).add(partition)
        per_key.setdefault(key, []).append(int(value.split()[1]))
    assert all(len(p) == 1 for p in partitions.values())
    assert all(seq == sorted(seq) for seq in per_key.values())
    offsets = run(pk, "pk-run-class", "kafka.tools.GetOffsetShell", "--topic", "my-topic-name").out.splitlines()
    assert sum(int(line.rsplit(":", 1)[1]) for line in offsets) == 40
    # --alter --partitions 10, then --delete
    run(pk, "pk-topics", "--alter", "--topic", "my-topic-name", "--partitions", "10")
    assert "PartitionCount: 10" in run(pk, "pk-topics", "--describe", "--topic", "my-topic-name").out
    run(pk, "pk-topics", "--delete", "--topic", "my-topic-name")
    assert run(pk, "pk-topics", "--list", "--exclude-internal").out == "\n"
