"""pk-groups (kafka-groups --list): the table and filters on the bundled engine and on a
pk-server-start with a classic group, a KIP-848 consumer group and a simple group (offsets
committed without membership), and the jopt-simple refusals."""

from __future__ import annotations

import subprocess

import pytest

from conftest import BrokerProcess, tool_path

TOPIC = "pgr-t"
LONG = "pgr-a-consumer-group-with-a-long-name"


def _pk(*args, env=None):
    proc = subprocess.run([tool_path("pk-groups"), *args], capture_output=True, timeout=60, env=env)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def _rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines()[1:]]


def test_table_widths_follow_the_longest_cell():
    from pk.commands.groups import GroupListing, table_lines

    assert table_lines([]) == ["GROUP" + " " * 16 + "TYPE" + " " * 17 + "PROTOCOL" + " " * 12]
    lines = table_lines([GroupListing("g", "Classic", ""), GroupListing("x" * 25, "Consumer", "consumer")])
    assert lines[0] == "GROUP" + " " * 21 + "TYPE" + " " * 22 + "PROTOCOL" + " " * 17
    assert lines[1] == "g" + " " * 25 + "Classic" + " " * 19 + " " * 26
    assert lines[2] == "x" * 25 + " " + "Consumer" + " " * 18 + "consumer" + " " * 18


def test_filters_as_groups_command():
    from pk.commands.groups import GroupListing, matches

    classic, simple, new, other = (GroupListing("a", "Classic", "consumer"), GroupListing("b", "Classic", ""),
                                   GroupListing("c", "Consumer", "consumer"), GroupListing("d", "Classic", "connect"))
    listed = [classic, simple, new, other]

    def pick(*args):
        return [g.group_id for g in listed if matches(g, *args)]

    assert pick(None, None, False, False, False) == ["a", "b", "c", "d"]
    assert pick(None, None, True, False, False) == ["a", "b", "c"]
    assert pick("Classic", None, False, False, False) == ["a", "b", "d"]
    assert pick("Classic", "connect", False, False, False) == ["d"]
    assert pick(None, "", False, False, False) == ["b"]
    assert pick(None, None, False, True, False) == pick(None, None, False, False, True) == []


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    from confluent_kafka import Consumer, Producer, TopicPartition

    b = BrokerProcess(str(tmp_path_factory.mktemp("pgr") / "data")).start()
    subprocess.run([tool_path("pk-topics"), "--bootstrap-server", b.bootstrap, "--create", "--topic", TOPIC],
                   check=True, capture_output=True, timeout=60)
    producer = Producer({"bootstrap.servers": b.bootstrap})
    producer.produce(TOPIC, b"v")
    assert producer.flush(30) == 0
    members = []
    for group, protocol in (("pgr-classic", "classic"), (LONG, "consumer")):
        c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": group, "group.protocol": protocol,
                      "auto.offset.reset": "earliest"})
        c.subscribe([TOPIC])
        while (m := c.poll(1.0)) is None or m.error():
            pass
        members.append(c)  # live members: the groups are Stable while the tests run
    simple = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "pgr-simple"})
    simple.commit(offsets=[TopicPartition(TOPIC, 0, 1)], asynchronous=False)
    simple.close()
    yield b
    for c in members:
        c.close()
    b.stop()


def test_list_and_filters_on_server(broker):
    b = ["--bootstrap-server", broker.bootstrap, "--list"]
    rc, out, err = _pk(*b)
    assert (rc, err) == (0, "")
    width = len(LONG)
    assert out.splitlines()[0] == " ".join(h.ljust(width) for h in ("GROUP", "TYPE", "PROTOCOL"))
    assert _rows(out) == [["pgr-a-consumer-group-with-a-long-name", "Consumer", "consumer"],
                          ["pgr-classic", "Classic", "consumer"], ["pgr-simple", "Classic"]]
    assert out.splitlines()[3] == "pgr-simple".ljust(width) + " " + "Classic".ljust(width) + " " + " " * (width + 1)
    assert _pk(*b, "--consumer")[1] == out
    assert _rows(_pk(*b, "--group-type", "CLASSIC")[1]) == [["pgr-classic", "Classic", "consumer"],
                                                             ["pgr-simple", "Classic"]]
    assert _rows(_pk(*b, "--group-type", "classic", "--protocol", "consumer")[1]) == [
        ["pgr-classic", "Classic", "consumer"]]
    assert _rows(_pk(*b, "--group-type", "consumer")[1]) == [[LONG, "Consumer", "consumer"]]
    assert _rows(_pk(*b, "--protocol", "")[1]) == [["pgr-simple", "Classic"]]
    assert _rows(_pk(*b, "--protocol", "Consumer")[1]) == []
    for kind in ("--share", "--streams"):
        rc, out, err = _pk(*b, kind)
        assert (rc, out, err) == (0, "GROUP" + " " * 16 + "TYPE" + " " * 17 + "PROTOCOL" + " " * 12 + "\n", "")
    # pk-run-class runs the same tool by Kafka's class name
    proc = subprocess.run([tool_path("pk-run-class"), "org.apache.kafka.tools.GroupsCommand", *b, "--group-type",
                           "consumer"], capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.decode() == _pk(*b, "--group-type", "consumer")[1]


def test_list_on_the_bundled_engine(tmp_path):
    import os

    env = {**os.environ, "PK_DATA_DIR": str(tmp_path / "data")}

    def run(tool, *args, input=None):
        proc = subprocess.run([tool_path(tool), *args], capture_output=True, timeout=60, env=env, input=input)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.decode()

    assert run("pk-groups", "--list") == "GROUP" + " " * 16 + "TYPE" + " " * 17 + "PROTOCOL" + " " * 12 + "\n"
    run("pk-topics", "--create", "--topic", TOPIC)
    run("pk-console-producer", "--topic", TOPIC, input=b"v\n")
    run("pk-console-consumer", "--topic", TOPIC, "--group", "pgr-e", "--from-beginning", "--max-messages", "1")
    run("pk-consumer-groups", "--reset-offsets", "--to-earliest", "--group", "pgr-simple", "--topic", TOPIC,
        "--execute")
    out = run("pk-groups", "--list")
    assert out.splitlines()[1:] == ["pgr-e".ljust(21) + "Classic".ljust(21) + "consumer".ljust(21),
                                    "pgr-simple".ljust(21) + "Classic".ljust(21) + " " * 21]
    assert _rows(run("pk-groups", "--list", "--protocol", "consumer")) == [["pgr-e", "Classic", "consumer"]]
    assert _rows(run("pk-groups", "--list", "--group-type", "consumer")) == []
    assert _rows(run("pk-groups", "--list", "--consumer")) == _rows(out)


@pytest.mark.parametrize("args, line", [
    ([], "Command must include exactly one action: --list."),
    (["--list", "--group-type", "foo"], "--group-type must be a valid group type."),
    (["--list", "--group-type", "unknown", "--consumer"], "--group-type must be a valid group type."),
    (["--list", "--group-type", "a", "--group-type", "b"],
     "Found multiple arguments for option group-type, but you asked for only one"),
    (["--list", "--protocol", "a", "--protocol", "b"],
     "Error while executing groups command : Found multiple arguments for option protocol, but you asked for "
     "only one"),
    (["--list", "--consumer", "--share"], 'Option "[consumer]" can\'t be used with option "[share]"'),
    (["--list", "--group-type", "share", "--consumer"],
     'Option "[consumer]" can\'t be used with option "[group-type]"'),
    (["--list", "--share", "--streams", "--protocol", "x"], 'Option "[share]" can\'t be used with option "[protocol]"'),
    (["--list", "--streams", "--protocol", "x"], 'Option "[streams]" can\'t be used with option "[protocol]"'),
    (["--list", "--group-type"], "Option group-type requires an argument"),
    (["--list", "--bogus"], "bogus is not a recognized option"),
])
def test_refusals(tmp_path, args, line):
    rc, out, err = _pk("--data-dir", str(tmp_path / "d"), *args)
    assert (rc, out, err) == (1, "", line + "\n")


def test_no_arguments_prints_the_help():
    rc, out, err = _pk()
    assert rc == 1 and out == "" and err.startswith("This tool helps to list groups of all types.\n")
