"""pk-groups against Kafka 4.4's kafka-groups (the oracle). The same groups are made on the
session's Kafka 4.4 broker and on a pk-server-start: a classic group and a KIP-848 consumer
group with live confluent-kafka members, and a simple group (offsets committed without
membership). Each command line then runs four ways: Kafka's tool and pk-groups, each on both
brokers, and all four must agree.

Normalised: the session's Kafka broker holds other tests' groups, so only this test's groups
(prefix `ogr-`) are compared, as rows of cells in sorted order (Kafka lists them in its
coordinator's hash order), and the header by its words (column widths follow the longest
cell of the whole table). Errors are compared by their first line: Kafka prints
"Error while executing groups command : ..." on stdout and a stack trace on stderr; pk prints
the one line on stderr."""

from __future__ import annotations

import subprocess

from conftest import tool_path

TOPIC = "ogr-t"
GROUPS = (("ogr-classic", "classic"), ("ogr-consumer-protocol-group", "consumer"))
SIMPLE = "ogr-simple"


def _make_groups(bootstrap: str, kafka_tools) -> list:
    from confluent_kafka import Consumer, Producer, TopicPartition

    r = kafka_tools("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--if-not-exists", "--topic", TOPIC)
    assert r.returncode == 0, r.err
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(TOPIC, b"v")
    assert producer.flush(30) == 0
    members = []
    for group, protocol in GROUPS:
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": protocol,
                      "auto.offset.reset": "earliest"})
        c.subscribe([TOPIC])
        while (m := c.poll(1.0)) is None or m.error():
            pass
        members.append(c)
    simple = Consumer({"bootstrap.servers": bootstrap, "group.id": SIMPLE})
    simple.commit(offsets=[TopicPartition(TOPIC, 0, 1)], asynchronous=False)
    simple.close()
    return members


def _view(rc: int, out: str, err: str):
    """(status, header words, this test's rows) of a listing, or (status, first error line)."""
    if rc != 0:
        first = (out.splitlines() or err.splitlines() or [""])[0]
        return rc, first
    lines = out.splitlines()
    rows = sorted(line.split() for line in lines[1:] if line.startswith("ogr-"))
    return rc, lines[0].split(), rows


CASES = (
    ["--list"],
    ["--list", "--consumer"],
    ["--list", "--group-type", "classic"],
    ["--list", "--group-type", "Consumer"],
    ["--list", "--group-type", "consumer", "--protocol", "consumer"],
    ["--list", "--group-type", "classic", "--protocol", "other"],
    ["--list", "--protocol", "consumer"],
    ["--list", "--protocol", ""],
    ["--list", "--share"],
    ["--list", "--streams"],
    ["--list", "--group-type", "share"],
    ["--list", "--group-type", "foo"],
    ["--list", "--consumer", "--streams"],
    ["--list", "--share", "--protocol", "x"],
    ["--list", "--group-type", "a", "--group-type", "b"],
    ["--list", "--protocol", "a", "--protocol", "b"],
    ["--list", "--bogus"],
    [],
)


def test_groups_match(kafka, kafka_tools, pk_server):
    members = []
    try:
        for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
            members += _make_groups(bootstrap, kafka_tools)
        for args in CASES:
            views = []
            for bootstrap in (kafka.bootstrap, pk_server.bootstrap):
                base = ["--bootstrap-server", bootstrap, *args]
                r = kafka_tools("kafka-groups", *base)
                views.append(("kafka-groups", bootstrap, _view(r.returncode, r.out, r.err)))
                proc = subprocess.run([tool_path("pk-groups"), *base], capture_output=True, timeout=60)
                assert proc.returncode == 0 or proc.stdout == b"", args
                views.append(("pk-groups", bootstrap, _view(proc.returncode, proc.stdout.decode(),
                                                             proc.stderr.decode())))
            expected = views[0][2]
            for tool, bootstrap, view in views[1:]:
                assert view == expected, (args, tool, bootstrap)
            if args == ["--list"]:
                assert expected[2] == [["ogr-classic", "Classic", "consumer"],
                                       ["ogr-consumer-protocol-group", "Consumer", "consumer"],
                                       ["ogr-simple", "Classic"]]
    finally:
        for c in members:
            c.close()
