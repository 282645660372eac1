"""pk-console-share-consumer's behaviour as a share-group member (KIP-932), on the session's
Kafka 4.4 broker: members of one group share a topic's records (each delivered once when all
are accepted), --release hands records back for redelivery with a higher delivery count,
--reject archives them for good; pk-run-class runs both share tools by Kafka's class names.

Share groups on the bundled engine: tests/test_engine_share_groups.py."""

from __future__ import annotations

import subprocess

from conftest import tool_path
from waits import create_topic_with_leaders, wait_for

N = 60
DELIVERY = ["--formatter-property", "print.partition=true", "--formatter-property", "print.offset=true",
            "--formatter-property", "print.delivery=true"]


def _pk(*args: str, timeout: float = 150) -> subprocess.CompletedProcess:
    return subprocess.run([tool_path(args[0]), *args[1:]], capture_output=True, timeout=timeout)


def _earliest(kafka_tools, bootstrap: str, group: str) -> None:
    r = kafka_tools("kafka-configs", "--bootstrap-server", bootstrap, "--alter", "--entity-type", "groups",
                    "--entity-name", group, "--add-config", "share.auto.offset.reset=earliest")
    assert r.returncode == 0, r.err


def _topic(kafka, kafka_tools, name: str, partitions: int = 2) -> str:
    create_topic_with_leaders(kafka.bootstrap, name, partitions=partitions)
    r = kafka_tools("kafka-console-producer", "--bootstrap-server", kafka.bootstrap, "--topic", name,
                    input="".join(f"v{i}\n" for i in range(N)))
    assert r.returncode == 0, r.err
    return name


def _rows(out: bytes) -> list[tuple[int, int, int, str]]:
    """(partition, offset, delivery count, value) of each printed record."""
    rows = []
    for line in out.decode().splitlines():
        partition, offset, delivery, value = line.split("\t")
        rows.append((int(partition.split(":")[1]), int(offset.split(":")[1]), int(delivery.split(":")[1]), value))
    return rows


def _members(bootstrap: str, group: str) -> int:
    r = _pk("pk-share-groups", "--bootstrap-server", bootstrap, "--describe", "--group", group, "--state")
    lines = r.stdout.decode().split("\n")
    return int(lines[2].split()[-1]) if r.returncode == 0 and len(lines) > 2 and lines[2].startswith(group) else -1


def test_two_members_share_the_records_once_each(kafka, kafka_tools, tmp_path):
    topic = create_topic_with_leaders(kafka.bootstrap, "sht-split", partitions=2)
    group = "sht-split-g"
    _earliest(kafka_tools, kafka.bootstrap, group)
    outs = [tmp_path / f"member{i}.out" for i in range(2)]
    members = []
    for out in outs:
        with open(out, "wb") as f:
            members.append(subprocess.Popen([tool_path("pk-console-share-consumer"), "--bootstrap-server",
                                             kafka.bootstrap, "--topic", topic, "--group", group, *DELIVERY],
                                            stdout=f, stderr=open(str(out) + ".err", "wb")))
    try:
        wait_for(lambda: _members(kafka.bootstrap, group) == 2, timeout=90, what="both members in the group")
        r = kafka_tools("kafka-console-producer", "--bootstrap-server", kafka.bootstrap, "--topic", topic,
                        input="".join(f"v{i}\n" for i in range(N)))
        assert r.returncode == 0, r.err
        wait_for(lambda: sum(len(o.read_bytes().splitlines()) for o in outs) >= N, timeout=120,
                 what="every record printed")
    finally:
        for m in members:
            if m.poll() is None:
                m.terminate()  # SIGTERM: the member acknowledges, leaves the group and exits
            m.wait(60)
    got = [row for out in outs for row in _rows(out.read_bytes())]
    assert sorted(v for *_, v in got) == sorted(f"v{i}" for i in range(N))  # every record, once
    assert {d for _, _, d, _ in got} == {1}
    wait_for(lambda: _members(kafka.bootstrap, group) == 0, timeout=60, what="both members gone")


def test_release_hands_records_back_and_reject_archives_them(kafka, kafka_tools):
    topic = _topic(kafka, kafka_tools, "sht-ack")
    group = "sht-ack-g"
    _earliest(kafka_tools, kafka.bootstrap, group)
    base = ["--bootstrap-server", kafka.bootstrap, "--topic", topic, "--group", group, *DELIVERY]
    released = _pk("pk-console-share-consumer", *base, "--release", "--max-messages", str(N), "--timeout-ms", "90000")
    assert released.returncode == 0, released.stderr
    first = _rows(released.stdout)
    assert len(first) == N and {d for _, _, d, _ in first} == {1}
    # released: the same records again, delivered a second time; rejected now
    rejected = _pk("pk-console-share-consumer", *base, "--reject", "--max-messages", str(N), "--timeout-ms", "90000")
    assert rejected.returncode == 0, rejected.stderr
    second = _rows(rejected.stdout)
    assert sorted((p, o, v) for p, o, _, v in second) == sorted((p, o, v) for p, o, _, v in first)
    assert {d for _, _, d, _ in second} == {2}
    # rejected records are archived: nothing is delivered again
    after = _pk("pk-console-share-consumer", *base, "--timeout-ms", "3000")
    assert after.returncode == 0, after.stderr
    assert after.stdout == b""
    assert b"Processed a total of 0 messages" in after.stderr


def test_max_messages_releases_what_it_did_not_print(kafka, kafka_tools):
    topic = _topic(kafka, kafka_tools, "sht-max", partitions=1)
    group = "sht-max-g"
    _earliest(kafka_tools, kafka.bootstrap, group)
    base = ["--bootstrap-server", kafka.bootstrap, "--topic", topic, "--group", group, *DELIVERY]
    some = _pk("pk-console-share-consumer", *base, "--max-messages", "5", "--timeout-ms", "90000")
    assert some.returncode == 0, some.stderr
    assert [o for _, o, _, _ in _rows(some.stdout)] == [0, 1, 2, 3, 4]
    assert some.stderr.decode().splitlines()[-1] == "Processed a total of 5 messages"
    rest = _pk("pk-console-share-consumer", *base, "--max-messages", str(N - 5), "--timeout-ms", "90000")
    assert rest.returncode == 0, rest.stderr
    assert [o for _, o, _, _ in _rows(rest.stdout)] == list(range(5, N))  # accepted ones are gone


def test_run_class_runs_the_share_tools(kafka):
    r = _pk("pk-run-class", "org.apache.kafka.tools.consumer.group.ShareGroupCommand", "--bootstrap-server",
            kafka.bootstrap, "--describe")
    assert (r.returncode, r.stderr.decode().splitlines()[0]) == (
        1, "Option [describe] takes one of these options: [all-groups], [group]")
    r = _pk("pk-run-class", "org.apache.kafka.tools.consumer.ConsoleShareConsumer", "--bootstrap-server",
            kafka.bootstrap)
    assert (r.returncode, r.stderr.decode().splitlines()[0]) == (1, "--topic is a required argument")


def test_bad_input_is_one_line():
    for tool, args in (("pk-console-share-consumer", ["--topic", "t", "--bootstrap-server", "127.0.0.1:1",
                                                      "--reject", "--release"]),
                       ("pk-share-groups", ["--bootstrap-server", "127.0.0.1:1", "--list", "--state", "Nope"]),
                       ("pk-share-groups", ["--bootstrap-server", "127.0.0.1:1", "--reset-offsets", "--group", "g",
                                            "--all-topics", "--to-offset", "1"])):
        r = _pk(tool, *args, timeout=60)
        assert r.returncode != 0
        assert len(r.stderr.decode().splitlines()) == 1, r.stderr
        assert b"Traceback" not in r.stderr

