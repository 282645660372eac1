"""Consumer groups through pk-server-start, with real clients: confluent-kafka (librdkafka
2.16) Consumer and AdminClient, kcat (librdkafka 2.0.2) -G, kafka-python KafkaConsumer.

Most tests share one broker (distinct topics and groups per test); it runs with
group.min.session.timeout.ms=1000 so that a killed member's session can end in 2 s, and the
clients heartbeat every 100 ms so that rebalances take a fraction of a second. Records are
appended to the topics directly with the engine (same data directory), after the group is
stable, so that every record is read exactly once by the member owning its partition.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from confluent_kafka import Consumer, ConsumerGroupState, ConsumerGroupTopicPartitions, KafkaException, \
    TopicPartition
from confluent_kafka.admin import AdminClient
from conftest import BrokerProcess, tool_path

from pk.engine import records
from pk.engine.engine import Engine
from pk.engine.offsets import OffsetStore

PARTITIONS = 3
PER_PARTITION = 10
BROKER_OVERRIDES = {"group.min.session.timeout.ms": "1000"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data_dir = str(tmp_path_factory.mktemp("groups") / "data")
    Engine(data_dir).close()
    broker = BrokerProcess(data_dir, BROKER_OVERRIDES).start()
    try:
        yield broker
    finally:
        broker.stop()


# ------------------------------------------------------------------------------ helpers
def create_topic(data_dir: str, topic: str, partitions: int = PARTITIONS) -> None:
    with Engine(data_dir) as engine:
        engine.create_topic(topic, partitions)


def produce(data_dir: str, topic: str, per_partition: int = PER_PARTITION, partitions: int = PARTITIONS) -> set:
    """Append `per_partition` records to every partition; returns their values."""
    now = int(time.time() * 1000)
    values = set()
    with Engine(data_dir) as engine:
        for p in range(partitions):
            batch = [(None, f"{p}-{i}".encode(), (), now) for i in range(per_partition)]
            engine.partition(topic, p).append_batches([records.encode_batch(batch)])
            values.update(v for _, v, _, _ in batch)
    return values


def consumer(bootstrap: str, group: str, **extra) -> Consumer:
    config = {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
              "enable.auto.commit": False, "heartbeat.interval.ms": 100, "session.timeout.ms": 6000,
              "topic.metadata.refresh.interval.ms": 1000, **extra}
    return Consumer(config)


def pump(consumers: list[Consumer], got: dict | None = None, timeout: float = 0.03) -> dict:
    """Poll every consumer once; record (partition, offset, value) per consumer index."""
    got = {} if got is None else got
    for i, c in enumerate(consumers):
        for m in c.consume(num_messages=500, timeout=timeout):
            if m.error():
                continue
            got.setdefault(i, []).append((m.partition(), m.offset(), m.value()))
    return got


def owned(c: Consumer) -> set[int]:
    return {tp.partition for tp in c.assignment()}


def group_state(admin: AdminClient, group: str):
    description = admin.describe_consumer_groups([group], request_timeout=10)[group].result()
    return description.state, description.members


def wait_balanced(consumers: list[Consumer], admin: AdminClient, group: str, timeout: float = 15.0) -> list:
    """Poll until the group is Stable with every consumer in it, and the consumers' own
    assignments split the partitions between them; returns each one's partitions."""
    deadline = time.monotonic() + timeout
    expected_busy = min(len(consumers), PARTITIONS)
    while time.monotonic() < deadline:
        pump(consumers)
        parts = [owned(c) for c in consumers]
        union = set().union(*parts)
        if (sum(map(len, parts)) == PARTITIONS and union == set(range(PARTITIONS))
                and sum(1 for p in parts if p) == expected_busy):
            state, members = group_state(admin, group)
            if state == ConsumerGroupState.STABLE and len(members) == len(consumers):
                return parts
    raise AssertionError(f"group {group} did not settle: {[owned(c) for c in consumers]}")


def consume_all(consumers: list[Consumer], count: int, timeout: float = 15.0) -> dict:
    got: dict = {}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and sum(map(len, got.values())) < count:
        pump(consumers, got)
    for _ in range(5):  # nothing more may come
        pump(consumers, got)
    return got


def check_exactly_once(got: dict, expected_values: set, parts: list[set]) -> None:
    values = [v for msgs in got.values() for _, _, v in msgs]
    assert sorted(values) == sorted(expected_values), "every record exactly once"
    for i, msgs in got.items():
        assert {p for p, _, _ in msgs} <= parts[i], "a member only reads its own partitions"


@pytest.fixture(scope="module")
def admin(server):
    return AdminClient({"bootstrap.servers": server.bootstrap})


# ------------------------------------------------------------------------------ confluent-kafka Consumer
@pytest.mark.parametrize("members", [1, 2, 3, 4])
def test_subscribe_group_splits_partitions(server, admin, members):
    topic, group = f"split{members}", f"split-group-{members}"
    create_topic(server.data_dir, topic)
    consumers = [consumer(server.bootstrap, group, **{"client.id": f"member-{i}"}) for i in range(members)]
    try:
        for c in consumers:
            c.subscribe([topic])
        parts = wait_balanced(consumers, admin, group)
        # each partition belongs to exactly one member; a 4th member stays idle
        assert sorted(len(p) for p in parts) == {1: [3], 2: [1, 2], 3: [1, 1, 1], 4: [0, 1, 1, 1]}[members]
        values = produce(server.data_dir, topic)
        got = consume_all(consumers, len(values))
        check_exactly_once(got, values, parts)
        idle = [i for i, p in enumerate(parts) if not p]
        assert all(i not in got for i in idle)
        state, described = group_state(admin, group)
        assert sorted(m.client_id for m in described) == [f"member-{i}" for i in range(members)]
        assert all(m.host == "/127.0.0.1" for m in described)
    finally:
        for c in consumers:
            c.close()


def test_member_that_closes_hands_its_partitions_over(server, admin):
    topic, group = "closing", "closing-group"
    create_topic(server.data_dir, topic)
    a, b = consumer(server.bootstrap, group), consumer(server.bootstrap, group)
    try:
        a.subscribe([topic])
        b.subscribe([topic])
        parts = wait_balanced([a, b], admin, group)
        assert all(parts)
        started = time.monotonic()
        b.close()  # sends LeaveGroup: the rebalance starts at once
        while owned(a) != set(range(PARTITIONS)):
            assert time.monotonic() - started < 10, owned(a)
            pump([a])
        assert time.monotonic() - started < 5
        values = produce(server.data_dir, topic)
        got = consume_all([a], len(values))
        check_exactly_once(got, values, [set(range(PARTITIONS))])
    finally:
        a.close()


CHILD = textwrap.dedent("""
    import sys
    from confluent_kafka import Consumer
    bootstrap, group, topic = sys.argv[1:4]
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                  "heartbeat.interval.ms": 100, "session.timeout.ms": 2000, "enable.auto.commit": False})
    def on_assign(consumer, partitions):
        print("ASSIGNED " + ",".join(str(tp.partition) for tp in partitions), flush=True)
    c.subscribe([topic], on_assign=on_assign)
    while True:
        c.poll(0.1)
""")


def test_killed_member_loses_its_partitions_after_the_session_timeout(server, admin):
    topic, group = "killed", "killed-group"
    create_topic(server.data_dir, topic)
    child = subprocess.Popen([sys.executable, "-c", CHILD, server.bootstrap, group, topic],
                             stdout=subprocess.PIPE, text=True)
    survivor = consumer(server.bootstrap, group, **{"session.timeout.ms": 2000})
    try:
        line = child.stdout.readline()  # the child is in the group (alone, at first)
        assert line.startswith("ASSIGNED"), line
        survivor.subscribe([topic])
        deadline = time.monotonic() + 15
        while True:
            pump([survivor])
            state, members = group_state(admin, group)
            mine = owned(survivor)
            if state == ConsumerGroupState.STABLE and len(members) == 2 and mine and len(mine) < PARTITIONS:
                break
            assert time.monotonic() < deadline, (state, members, mine)
        child.send_signal(signal.SIGKILL)
        child.wait()
        killed = time.monotonic()
        while owned(survivor) != set(range(PARTITIONS)):
            pump([survivor])
            assert time.monotonic() - killed < 10, owned(survivor)
        elapsed = time.monotonic() - killed
        # nothing happens until the dead member's 2 s session ends (it last heartbeat <= 0.1 s before)
        assert 1.5 <= elapsed < 6, elapsed
        values = produce(server.data_dir, topic)
        got = consume_all([survivor], len(values))
        check_exactly_once(got, values, [set(range(PARTITIONS))])
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        survivor.close()


def test_two_groups_each_read_everything(server, admin):
    topic = "shared"
    create_topic(server.data_dir, topic)
    first = [consumer(server.bootstrap, "reader-1") for _ in range(2)]
    second = [consumer(server.bootstrap, "reader-2")]
    try:
        for c in first + second:
            c.subscribe([topic])
        parts_1 = wait_balanced(first, admin, "reader-1")
        parts_2 = wait_balanced(second, admin, "reader-2")
        values = produce(server.data_dir, topic)
        got_1 = consume_all(first, len(values))
        got_2 = consume_all(second, len(values))
        check_exactly_once(got_1, values, parts_1)
        check_exactly_once(got_2, values, parts_2)
    finally:
        for c in first + second:
            c.close()


def test_mixed_clients_share_one_group(server, admin):
    """A librdkafka member and a kafka-python member: both offer range, and split the topic."""
    from kafka import KafkaConsumer

    topic, group = "mixed", "mixed-group"
    create_topic(server.data_dir, topic)
    rd = consumer(server.bootstrap, group)
    rd.subscribe([topic])
    # librdkafka first, so that it leads: kafka-python 3.0.12 as leader can lose a join that
    # outlives a short poll() when it rejoins for a metadata change (its first assignment
    # predates the topic's metadata): need_rejoin() turns False, the finished JoinGroup is
    # never picked up, its heartbeat stays disabled, and its session expires.
    wait_balanced([rd], admin, group)
    kp = KafkaConsumer(topic, bootstrap_servers=server.bootstrap, group_id=group, auto_offset_reset="earliest",
                       enable_auto_commit=False, heartbeat_interval_ms=100, session_timeout_ms=6000)
    try:
        deadline = time.monotonic() + 20
        got_rd, got_kp = {}, []
        while True:
            pump([rd], got_rd)
            for records_ in kp.poll(timeout_ms=30).values():
                got_kp.extend((r.partition, r.offset, r.value) for r in records_)
            state, members = group_state(admin, group)
            mine, theirs = owned(rd), {tp.partition for tp in kp.assignment()}
            if (state == ConsumerGroupState.STABLE and len(members) == 2 and mine and theirs
                    and mine | theirs == set(range(PARTITIONS)) and not mine & theirs):
                break
            assert time.monotonic() < deadline, (state, mine, theirs)
        assert {m.client_id for m in members} == {"rdkafka", "kafka-python-3.0.12"}
        values = produce(server.data_dir, topic)
        deadline = time.monotonic() + 15
        while len(got_rd.get(0, [])) + len(got_kp) < len(values) and time.monotonic() < deadline:
            pump([rd], got_rd)
            for records_ in kp.poll(timeout_ms=30).values():
                got_kp.extend((r.partition, r.offset, r.value) for r in records_)
        check_exactly_once({0: got_rd.get(0, []), 1: got_kp}, values, [mine, theirs])
    finally:
        kp.close()
        rd.close()


# ------------------------------------------------------------------------------ commits
def run_consumer_groups(data_dir: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([tool_path("pk-run-class"), "kafka.admin.ConsumerGroupCommand", *args],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PK_DATA_DIR": data_dir})


def test_commit_restart_and_resume(data_dir):
    create_topic(data_dir, "resume")
    produce(data_dir, "resume")
    broker = BrokerProcess(data_dir).start()
    try:
        c = consumer(broker.bootstrap, "resumer")
        c.subscribe(["resume"])
        got = consume_all([c], PARTITIONS * PER_PARTITION)
        assert len(got[0]) == PARTITIONS * PER_PARTITION
        committed = c.commit(offsets=[TopicPartition("resume", p, 4 + p) for p in range(PARTITIONS)],
                             asynchronous=False)
        assert all(tp.error is None for tp in committed)
        assert [tp.offset for tp in c.committed([TopicPartition("resume", p) for p in range(PARTITIONS)])] == \
            [4, 5, 6]
        c.close()
    finally:
        broker.stop()

    # what the server committed is what the engine's own tools read
    with Engine(data_dir) as engine:
        assert OffsetStore(engine).committed("resumer") == {("resume", 0): 4, ("resume", 1): 5, ("resume", 2): 6}
    described = run_consumer_groups(data_dir, "--describe", "--group", "resumer")
    assert described.returncode == 0, described.stderr
    rows = [line.split() for line in described.stdout.splitlines() if line.startswith("resumer ")]
    assert [row[1:6] for row in rows] == [["resume", str(p), str(4 + p), "10", str(6 - p)] for p in range(3)]

    broker = BrokerProcess(data_dir, port=broker.port).start()  # the server restarts: offsets survive
    try:
        c = consumer(broker.bootstrap, "resumer")
        c.subscribe(["resume"])
        got = consume_all([c], 6 + 5 + 4)
        assert sorted((p, o) for p, o, _ in got[0]) == \
            sorted((p, o) for p in range(PARTITIONS) for o in range(4 + p, PER_PARTITION))
        c.close()
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        groups = admin.list_consumer_groups(request_timeout=10).result()
        assert [g.group_id for g in groups.valid] == ["resumer"]
    finally:
        broker.stop()


# ------------------------------------------------------------------------------ kcat
def test_kcat_balanced_consumers(server, admin, tmp_path):
    topic, group = "kcat-topic", "kcat-group"
    create_topic(server.data_dir, topic)
    procs, outs = [], []
    for i in range(2):
        out = tmp_path / f"kcat-{i}.out"
        outs.append(out)
        procs.append(subprocess.Popen(
            ["kcat", "-b", server.bootstrap, "-G", group, topic, "-u", "-q", "-f", "%p %o %s\\n",
             "-X", "auto.offset.reset=earliest", "-X", "heartbeat.interval.ms=100",
             "-X", "session.timeout.ms=6000", "-X", "auto.commit.interval.ms=100"],
            stdout=open(out, "wb"), stderr=subprocess.DEVNULL))
    try:
        deadline = time.monotonic() + 15
        while True:
            state, members = group_state(admin, group)
            assigned = [{tp.partition for tp in m.assignment.topic_partitions} for m in members]
            if state == ConsumerGroupState.STABLE and len(members) == 2 and all(assigned):
                break
            assert time.monotonic() < deadline, (state, assigned)
            time.sleep(0.1)
        values = produce(server.data_dir, topic)
        lines: list[list[str]] = [[], []]
        while sum(map(len, lines)) < len(values):
            assert time.monotonic() < deadline + 15, lines
            time.sleep(0.1)
            lines = [out.read_text().splitlines() for out in outs]
        got = {i: [(int(p), int(o), v.encode()) for p, o, v in (line.split(" ", 2) for line in ls)]
               for i, ls in enumerate(lines)}
        # which kcat is which member is not known: the two processes read the two members' partitions
        read = [{p for p, _, _ in got[i]} for i in range(2)]
        assert sorted(map(sorted, read)) == sorted(map(sorted, assigned))
        check_exactly_once(got, values, read)
        # kcat commits what it consumed (auto commit)
        deadline = time.monotonic() + 10
        with Engine(server.data_dir) as engine:
            store = OffsetStore(engine)
            while store.committed(group) != {(topic, p): PER_PARTITION for p in range(PARTITIONS)}:
                assert time.monotonic() < deadline, store.committed(group)
                time.sleep(0.1)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


# ------------------------------------------------------------------------------ kafka-python
def test_kafka_python_group_consumer(server, admin):
    from kafka import KafkaConsumer
    from kafka.structs import TopicPartition as KTP

    topic, group = "kp-topic", "kp-group"
    create_topic(server.data_dir, topic)
    values = produce(server.data_dir, topic)
    kc = KafkaConsumer(topic, bootstrap_servers=server.bootstrap, group_id=group, auto_offset_reset="earliest",
                       enable_auto_commit=False, heartbeat_interval_ms=100, session_timeout_ms=6000,
                       consumer_timeout_ms=1500)
    try:
        got = [m for m in kc]
        assert sorted(m.value for m in got) == sorted(values)
        assert {tp.partition for tp in kc.assignment()} == set(range(PARTITIONS))
        kc.commit()
        assert [kc.committed(KTP(topic, p)) for p in range(PARTITIONS)] == [PER_PARTITION] * PARTITIONS
        state, members = group_state(admin, group)
        assert state == ConsumerGroupState.STABLE and members[0].client_id.startswith("kafka-python")
    finally:
        kc.close()
    with Engine(server.data_dir) as engine:
        assert OffsetStore(engine).committed(group) == {(topic, p): PER_PARTITION for p in range(PARTITIONS)}
    assert group_state(admin, group)[0] == ConsumerGroupState.EMPTY


# ------------------------------------------------------------------------------ AdminClient
def test_admin_client_groups(server, admin):
    topic, group = "admin-topic", "admin-group"
    create_topic(server.data_dir, topic)
    produce(server.data_dir, topic)
    with Engine(server.data_dir) as engine:  # offsets only, as pk-console-consumer leaves them
        OffsetStore(engine).commit("offsets-only", {(topic, 0): 3, (topic, 2): 7})
    c = consumer(server.bootstrap, group)
    try:
        c.subscribe([topic])
        wait_balanced([c], admin, group)
        c.commit(offsets=[TopicPartition(topic, p, 1 + p) for p in range(PARTITIONS)], asynchronous=False)

        listed = admin.list_consumer_groups(request_timeout=10).result()
        assert not listed.errors
        by_id = {g.group_id: g for g in listed.valid}
        assert {group, "offsets-only"} <= set(by_id)
        assert not by_id[group].is_simple_consumer_group
        assert by_id["offsets-only"].is_simple_consumer_group

        described = admin.describe_consumer_groups([group, "offsets-only", "no-such-group"], request_timeout=10)
        live = described[group].result()
        assert (live.state, live.partition_assignor, live.is_simple_consumer_group) == \
            (ConsumerGroupState.STABLE, "range", False)
        [member] = live.members
        assert member.client_id == "rdkafka" and member.host == "/127.0.0.1"
        assert sorted(tp.partition for tp in member.assignment.topic_partitions) == [0, 1, 2]
        assert described["offsets-only"].result().state == ConsumerGroupState.EMPTY
        assert described["no-such-group"].result().state == ConsumerGroupState.DEAD

        offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)], request_timeout=10)
        assert sorted((tp.partition, tp.offset) for tp in offsets[group].result().topic_partitions) == \
            [(0, 1), (1, 2), (2, 3)]
        offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions("offsets-only")],
                                                    request_timeout=10)
        assert sorted((tp.partition, tp.offset) for tp in offsets["offsets-only"].result().topic_partitions) == \
            [(0, 3), (2, 7)]

        deleted = admin.delete_consumer_groups([group, "offsets-only", "no-such-group"], request_timeout=10)
        with pytest.raises(KafkaException, match="NON_EMPTY_GROUP"):
            deleted[group].result()
        deleted["offsets-only"].result()
        with pytest.raises(KafkaException, match="GROUP_ID_NOT_FOUND"):
            deleted["no-such-group"].result()
    finally:
        c.close()
    admin.delete_consumer_groups([group], request_timeout=10)[group].result()  # empty now
    listed = {g.group_id for g in admin.list_consumer_groups(request_timeout=10).result().valid}
    assert group not in listed and "offsets-only" not in listed
    with Engine(server.data_dir) as engine:
        store = OffsetStore(engine)
        assert store.committed(group) == {} and store.committed("offsets-only") == {}
