"""Share groups (KIP-932) served by pk-server-start, checked with Kafka 4.4's own share consumer
(`kafka-console-share-consumer`, the Java KafkaShareConsumer) on pk-server-start and, for the
same scenario, on the session's Kafka 4.4 broker: every record read, releases re-delivered with
growing delivery counts up to group.share.delivery.count.limit, rejects never re-delivered, two
members of one group splitting a topic, and a member killed while holding records whose locks
then time out, its records delivered again to another member.

Normalised: nothing but the order of lines where a share group's delivery order is not Kafka's
promise (releases re-delivered in batches), compared sorted."""

from __future__ import annotations

import signal
import subprocess
import time
import uuid

import pytest

from conftest import BrokerProcess
from waits import wait_for

# A lock short enough for the expiry tests (Kafka's bounds allow 15 s at the least; the pk
# broker lowers them, as a Kafka broker's server.properties may).
LOCK_MS = 1000
PK_OVERRIDES = {"group.share.min.record.lock.duration.ms": "1000"}


@pytest.fixture(scope="module")
def pk_server(tmp_path_factory):
    b = BrokerProcess(str(tmp_path_factory.mktemp("share-groups") / "data"), overrides=PK_OVERRIDES).start()
    yield b
    b.stop()


@pytest.fixture(params=["pk", "kafka"])
def bootstrap(request, pk_server):
    if request.param == "pk":
        return pk_server.bootstrap
    return request.getfixturevalue("kafka").bootstrap


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _topic(kafka_tools, bootstrap: str, lines: list[str], partitions: int = 1) -> str:
    topic = _name("sg-t")
    r = kafka_tools("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic,
                    "--partitions", str(partitions))
    assert r.returncode == 0, r.stderr
    r = kafka_tools("kafka-console-producer", "--bootstrap-server", bootstrap, "--topic", topic,
                    input="".join(line + "\n" for line in lines))
    assert r.returncode == 0, r.stderr
    return topic


def _group(kafka_tools, bootstrap: str, **configs: str) -> str:
    """A new share group id, starting at the earliest records, with these group configs."""
    group = _name("sg-g")
    settings = {"share.auto.offset.reset": "earliest", **configs}
    r = kafka_tools("kafka-configs", "--bootstrap-server", bootstrap, "--alter", "--entity-type", "groups",
                    "--entity-name", group, "--add-config", ",".join(f"{k}={v}" for k, v in settings.items()))
    assert r.returncode == 0, r.stderr
    return group


def _share_consume(kafka_tools, bootstrap: str, topic: str, group: str, *args: str):
    r = kafka_tools("kafka-console-share-consumer", "--bootstrap-server", bootstrap, "--topic", topic,
                    "--group", group, *args, timeout=120)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def _nothing_left(kafka_tools, bootstrap: str, group: str, topic: str) -> None:
    """Wait until the group's share-partition has no lag: every record was acknowledged or
    archived, nothing is left to deliver (a state, where a consumer run would have to wait out
    a timeout to show it). (Kafka 4.4 may still print START-OFFSET 0 there: its lag counts the
    records delivered for good.)"""
    def drained() -> bool:
        r = kafka_tools("kafka-share-groups", "--bootstrap-server", bootstrap, "--describe", "--group", group)
        rows = [line.split() for line in r.stdout.decode().splitlines()]
        return r.returncode == 0 and [(row[1], row[2], row[4]) for row in rows if row[:1] == [group]] == [(topic, "0", "0")]

    wait_for(drained, what=f"share group {group} to have nothing left of {topic}", interval=0.2)


LINES = [f"m{i}" for i in range(10)]


def test_reads_every_record(kafka_tools, bootstrap):
    topic = _topic(kafka_tools, bootstrap, LINES)
    group = _group(kafka_tools, bootstrap)
    rc, out, err = _share_consume(kafka_tools, bootstrap, topic, group, "--max-messages", "10",
                                  "--timeout-ms", "30000")
    assert (rc, out, err) == (0, "".join(f"{x}\n" for x in LINES), "Processed a total of 10 messages\n")
    _nothing_left(kafka_tools, bootstrap, group, topic)  # all were accepted


def test_latest_is_the_default_start(kafka_tools, bootstrap):
    topic = _topic(kafka_tools, bootstrap, LINES)
    group = _name("sg-latest")  # no configs: share.auto.offset.reset=latest
    rc, out, err = _share_consume(kafka_tools, bootstrap, topic, group, "--timeout-ms", "3000")
    assert (rc, out, err.splitlines()[-1]) == (0, "", "Processed a total of 0 messages")


def test_release_redelivers_up_to_the_delivery_count_limit(kafka_tools, bootstrap):
    """--release: every record comes back, its delivery count one higher each time, until
    group.share.delivery.count.limit (3 here) archives it."""
    topic = _topic(kafka_tools, bootstrap, LINES[:4])
    group = _group(kafka_tools, bootstrap, **{"share.delivery.count.limit": "3"})
    rc, out, err = _share_consume(kafka_tools, bootstrap, topic, group, "--release", "--max-messages", "12",
                                  "--timeout-ms", "30000", "--formatter-property", "print.delivery=true",
                                  "--formatter-property", "print.offset=true")
    assert rc == 0, err
    assert err == "Processed a total of 12 messages\n"
    assert sorted(out.splitlines()) == sorted(f"Offset:{i}\tDelivery:{n}\tm{i}" for i in range(4)
                                              for n in (1, 2, 3))
    _nothing_left(kafka_tools, bootstrap, group, topic)  # all archived


def test_reject_is_never_redelivered(kafka_tools, bootstrap):
    topic = _topic(kafka_tools, bootstrap, LINES)
    group = _group(kafka_tools, bootstrap)
    rc, out, err = _share_consume(kafka_tools, bootstrap, topic, group, "--reject", "--max-messages", "10",
                                  "--timeout-ms", "30000")
    assert (rc, out, err) == (0, "".join(f"{x}\n" for x in LINES), "Processed a total of 10 messages\n")
    _nothing_left(kafka_tools, bootstrap, group, topic)  # rejected: archived


def test_same_output_on_both_brokers(kafka_tools, pk_server, kafka):
    """One scenario, byte for byte: a released pass then an accepted one, with offsets,
    delivery counts and partitions printed."""
    outputs = []
    for bootstrap in (pk_server.bootstrap, kafka.bootstrap):
        topic = _topic(kafka_tools, bootstrap, LINES[:5])
        group = _group(kafka_tools, bootstrap)
        fmt = ["--formatter-property", "print.delivery=true", "--formatter-property", "print.offset=true",
               "--formatter-property", "print.partition=true"]
        first = _share_consume(kafka_tools, bootstrap, topic, group, "--release", "--max-messages", "5",
                               "--timeout-ms", "30000", *fmt)
        second = _share_consume(kafka_tools, bootstrap, topic, group, "--max-messages", "5",
                                "--timeout-ms", "30000", *fmt)
        outputs.append((first[0], sorted(first[1].splitlines()), first[2],
                        second[0], sorted(second[1].splitlines()), second[2]))
    assert outputs[0] == outputs[1]
    assert outputs[0][4][0] == "Partition:0\tOffset:0\tDelivery:2\tm0"


def _spawn_consumer(kafka_tools, bootstrap: str, topic: str, group: str, path: str, *args: str):
    """A share consumer in a JVM of its own, printing offsets and delivery counts to `path`."""
    out = open(path, "wb")
    proc = kafka_tools.spawn("kafka-console-share-consumer", "--bootstrap-server", bootstrap, "--topic", topic,
                             "--group", group, "--formatter-property", "print.offset=true",
                             "--formatter-property", "print.delivery=true", *args, stdout=out)
    out.close()
    return proc


def _lines(path: str) -> list[str]:
    with open(path) as f:
        return [line for line in f.read().splitlines() if line]


def _wait_for(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _members(kafka_tools, bootstrap: str, group: str) -> list[list[str]]:
    """The group's member rows from kafka-share-groups --describe --members (none while the
    group is not known yet)."""
    r = kafka_tools("kafka-share-groups", "--bootstrap-server", bootstrap, "--describe", "--group", group,
                    "--members")
    rows = [line.split() for line in r.stdout.decode().splitlines() if line.strip()]
    return [row for row in rows[1:] if row[0] == group] if r.returncode == 0 else []


def test_two_members_split_a_topic(kafka_tools, pk_server, tmp_path):
    """Two members, two partitions: the simple assignor gives each member one partition; records
    are produced until both members have had some (a member fetches the partitions of its
    previous assignment until its next heartbeat), and no record goes to both (all accepted)."""
    from confluent_kafka import Producer

    topic = _topic(kafka_tools, pk_server.bootstrap, [], partitions=2)
    group = _group(kafka_tools, pk_server.bootstrap)
    paths = [str(tmp_path / f"member{i}.out") for i in range(2)]
    procs = [_spawn_consumer(kafka_tools, pk_server.bootstrap, topic, group, p) for p in paths]
    produced = 0
    try:
        rows = _wait_for(lambda: (r := _members(kafka_tools, pk_server.bootstrap, group)) and len(r) == 2
                         and {row[-1] for row in r} == {f"{topic}:0", f"{topic}:1"} and r, 120,
                         "two members with a partition each")
        assert len(rows) == 2
        producer = Producer({"bootstrap.servers": pk_server.bootstrap})

        def both_have_records() -> bool:
            nonlocal produced
            if all(_lines(p) for p in paths):
                return True
            for _ in range(20):
                producer.produce(topic, f"r{produced}".encode(), partition=produced % 2)
                produced += 1
            assert producer.flush(30) == 0
            return False
        _wait_for(both_have_records, 120, "records at both members")
        _wait_for(lambda: sum(len(_lines(p)) for p in paths) >= produced, 120, "all records read")
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(30)
    seen = [[line.split("\t")[-1] for line in _lines(p)] for p in paths]
    assert sorted(seen[0] + seen[1]) == sorted(f"r{i}" for i in range(produced))  # each record once
    assert seen[0] and seen[1]


def test_killed_member_records_are_delivered_again(kafka_tools, pk_server):
    """SIGKILL a member holding acquired records: once their lock times out, another member gets
    them, with delivery count 2; no record is lost. The member is held mid-batch by its stdout,
    a pipe this test does not drain: it has printed a record, so it holds the batch, and cannot
    acknowledge any of it, which it would do on its next poll."""
    count = 50
    pad = "x" * 4000  # 50 records of 4 kB: more than a pipe holds
    lines = [f"k{i}-{pad}" for i in range(count)]
    topic = _topic(kafka_tools, pk_server.bootstrap, lines)
    group = _group(kafka_tools, pk_server.bootstrap, **{"share.record.lock.duration.ms": str(LOCK_MS)})
    proc = kafka_tools.spawn("kafka-console-share-consumer", "--bootstrap-server", pk_server.bootstrap,
                             "--topic", topic, "--group", group, stdout=subprocess.PIPE)
    try:
        import selectors
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            assert sel.select(120), "the first member printed nothing"
        first_line = proc.stdout.readline().decode().strip()
        assert first_line == lines[0]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        proc.stdout.close()
    rc, out, err = _share_consume(kafka_tools, pk_server.bootstrap, topic, group, "--timeout-ms", "5000",
                                  "--formatter-property", "print.offset=true",
                                  "--formatter-property", "print.delivery=true")
    assert rc == 0, err
    again = [line.split("\t") for line in out.splitlines()]
    assert sorted(int(offset.split(":")[1]) for offset, _, _ in again) == list(range(count))  # none lost
    assert {count_ for _, count_, _ in again} == {"Delivery:2"}
    assert [value for _, _, value in again] == lines


def test_share_groups_describe_same_on_both_brokers(kafka_tools, pk_server, kafka):
    """kafka-share-groups --describe (DescribeShareGroupOffsets: start offset and lag),
    --members and --state of a group that read 4 of 10 records and has no member left."""
    views = []
    for bootstrap in (pk_server.bootstrap, kafka.bootstrap):
        topic = _topic(kafka_tools, bootstrap, LINES)
        group = _group(kafka_tools, bootstrap)
        rc, out, err = _share_consume(kafka_tools, bootstrap, topic, group, "--max-messages", "4",
                                      "--timeout-ms", "30000")
        assert (rc, out) == (0, "m0\nm1\nm2\nm3\n"), err
        view = []
        for args in (["--describe"], ["--describe", "--verbose"], ["--describe", "--members"],
                     ["--describe", "--state"]):
            r = kafka_tools("kafka-share-groups", "--bootstrap-server", bootstrap, *args, "--group", group)
            text = r.stdout.decode().replace(group, "GROUP").replace(topic, "TOPIC").replace(bootstrap, "HOST:PORT")
            view.append((r.returncode, " ".join(text.split())))
        views.append(view)
    assert views[0] == views[1]
    assert views[0][0][1] == "GROUP TOPIC PARTITION START-OFFSET LAG GROUP TOPIC 0 4 6"


def test_state_survives_a_restart(kafka_tools, tmp_path):
    """The share-partition state is in __share_group_state: a restarted pk-server-start does not
    deliver acknowledged records again, keeps delivery counts, and describes the same start
    offset."""
    data_dir = str(tmp_path / "data")
    broker = BrokerProcess(data_dir, overrides=PK_OVERRIDES).start()
    try:
        topic = _topic(kafka_tools, broker.bootstrap, LINES)
        group = _group(kafka_tools, broker.bootstrap)
        rc, out, err = _share_consume(kafka_tools, broker.bootstrap, topic, group, "--max-messages", "4",
                                      "--timeout-ms", "30000")
        assert (rc, out) == (0, "m0\nm1\nm2\nm3\n"), err
        before = kafka_tools("kafka-share-groups", "--bootstrap-server", broker.bootstrap, "--describe",
                             "--group", group)
        assert before.returncode == 0
    finally:
        broker.stop()
    broker = BrokerProcess(data_dir, overrides=PK_OVERRIDES, port=broker.port).start()
    try:
        after = kafka_tools("kafka-share-groups", "--bootstrap-server", broker.bootstrap, "--describe",
                            "--group", group)
        # (the group is known again by its stored share-partitions)
        assert after.stdout.split(b"\n")[1:] == before.stdout.split(b"\n")[1:], after
        rc, out, err = _share_consume(kafka_tools, broker.bootstrap, topic, group, "--timeout-ms", "5000",
                                      "--formatter-property", "print.delivery=true")
        assert rc == 0, err
        assert out.splitlines() == [f"Delivery:2\tm{i}" for i in range(4, 10)]
        r = kafka_tools("kafka-topics", "--bootstrap-server", broker.bootstrap, "--list")
        assert "__share_group_state" in r.stdout.decode().split()
    finally:
        broker.stop()


def test_share_groups_delete_same_on_both_brokers(kafka_tools, pk_server, kafka):
    """kafka-share-groups --delete (DeleteGroups) of an empty share group, of an unknown one, and
    --list afterwards."""
    views = []
    for bootstrap in (pk_server.bootstrap, kafka.bootstrap):
        topic = _topic(kafka_tools, bootstrap, LINES[:3])
        group = _group(kafka_tools, bootstrap)
        rc, out, err = _share_consume(kafka_tools, bootstrap, topic, group, "--max-messages", "3",
                                      "--timeout-ms", "30000")
        assert rc == 0, err
        view = []
        for args in (["--delete", "--group", group], ["--delete", "--group", group + "-nosuch"],
                     ["--describe", "--group", group]):
            r = kafka_tools("kafka-share-groups", "--bootstrap-server", bootstrap, *args)
            text = (r.stdout.decode().splitlines() or [""])[:2]
            view.append((r.returncode, [line.replace(group, "GROUP") for line in text]))
        listed = kafka_tools("kafka-share-groups", "--bootstrap-server", bootstrap, "--list").stdout.decode()
        assert group not in listed.split()
        views.append(view)
    assert views[0] == views[1]
    assert views[0][0][1][-1].startswith("Deletion of requested share groups ('GROUP') was successful.")


def test_verifiable_share_consumer_same_events_on_both_brokers(kafka_tools, pk_server, kafka):
    """Kafka 4.4's kafka-verifiable-share-consumer (its own JVM): the same JSON events, in the
    same order, from both brokers (timestamps aside; offsets acknowledged compared as sets)."""
    import json

    views = []
    for bootstrap in (pk_server.bootstrap, kafka.bootstrap):
        topic = _topic(kafka_tools, bootstrap, LINES)
        r = kafka_tools.run_process("kafka-verifiable-share-consumer", "--bootstrap-server", bootstrap,
                                    "--topic", topic, "--group-id", _name("sg-v"), "--max-messages", "10",
                                    "--offset-reset-strategy", "earliest", timeout=180)
        assert r.returncode == 0, r.stderr
        # How many polls the records take is the client's timing: events of one name in a row
        # are merged (counts added, offsets joined).
        events: list[dict] = []
        for line in r.stdout.decode().splitlines():
            event = json.loads(line)
            event.pop("timestamp", None)
            for part in event.get("partitions", []):
                part["topic"] = "TOPIC" if part.get("topic") == topic else part.get("topic")
            if events and events[-1]["name"] == event["name"] and "count" in event:
                last = events[-1]
                last["count"] += event["count"]
                for mine, more in zip(last["partitions"], event["partitions"]):
                    mine["count"] += more["count"]
                    mine["offsets"] += more["offsets"]
            else:
                events.append(event)
        for event in events:
            for part in event.get("partitions", []):
                part["offsets"] = sorted(part.get("offsets", []))
        views.append(events)
    assert views[0] == views[1]
    assert [e["name"] for e in views[0]][:2] == ["startup_complete", "offset_reset_strategy_set"]
    assert sum(e["count"] for e in views[0] if e["name"] == "records_consumed") == 10
