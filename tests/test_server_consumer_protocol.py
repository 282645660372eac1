"""KIP-848's consumer group protocol through a real pk-server-start: ConsumerGroupHeartbeat
and ConsumerGroupDescribe driven with pk's codec over a socket (epochs, the server-side
assignors, reconciliation with revocation before reassignment, fencing, session timeouts,
static members, offsets committed with member epochs), and confluent-kafka consumers with
`group.protocol=consumer` sharing a topic.

Expected answers are the ones a Kafka 4.4 broker gives (same errors and messages); where Kafka
computes a new target assignment a little later (it batches assignments), pk computes it at
once, which only shortens the rebalance."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer
from conftest import BrokerProcess
from test_server_groups_protocol import Conn

from pk.engine.broker.topic_ids import to_uuid
from pk.engine.engine import Engine
from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E

TOPIC = "cp"
SESSION_MS = 1500


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data_dir = str(tmp_path_factory.mktemp("consumer-protocol") / "data")
    with Engine(data_dir) as engine:
        engine.create_topic(TOPIC, 3)
        engine.create_topic(TOPIC + "-other", 2)
        topic_id = to_uuid(engine.topic(TOPIC).topic_id)
    broker = BrokerProcess(data_dir, {"group.consumer.session.timeout.ms": str(SESSION_MS),
                                      "group.consumer.heartbeat.interval.ms": "200"}).start()
    broker.topic_id = topic_id
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def conn(server):
    c = Conn(server.bootstrap)
    yield c
    c.close()


def heartbeat(conn, group, member_id, epoch, topics=(TOPIC,), owned=None, version=1, **extra):
    """One ConsumerGroupHeartbeat; `owned`: {topic id: [partitions]} (None: not sent)."""
    body = {"group_id": group, "member_id": member_id, "member_epoch": epoch, "instance_id": None, "rack_id": None,
            "rebalance_timeout_ms": 30000 if epoch == 0 else -1,
            "subscribed_topic_names": list(topics) if topics is not None else None,
            "subscribed_topic_regex": None, "server_assignor": None,
            "topic_partitions": [] if epoch == 0 else
            (None if owned is None else [{"topic_id": t, "partitions": ps} for t, ps in owned.items()])}
    body.update(extra)
    return conn.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, version, body)


def assigned(answer) -> dict | None:
    if answer["assignment"] is None:
        return None
    return {t["topic_id"]: sorted(t["partitions"]) for t in answer["assignment"]["topic_partitions"]}


def describe(conn, group) -> dict:
    [g] = conn.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 1, {"group_ids": [group],
                                                        "include_authorized_operations": False})["groups"]
    return g


def commit(conn, group, member_id, epoch, version=9) -> int:
    answer = conn.call(ApiKey.OFFSET_COMMIT, version, {
        "group_id": group, "generation_id_or_member_epoch": epoch, "member_id": member_id,
        "group_instance_id": None, "topics": [{"name": TOPIC, "partitions": [
            {"partition_index": 0, "committed_offset": 4, "committed_leader_epoch": 0, "committed_metadata": ""}]}]})
    return answer["topics"][0]["partitions"][0]["error_code"]


# ------------------------------------------------------------------------------ reconciliation
def test_second_member_gets_partitions_after_the_first_revokes_them(conn, server):
    tid, g = server.topic_id, "reconcile"
    a = heartbeat(conn, g, "member-a", 0)
    assert (a["error_code"], a["member_id"], a["member_epoch"], assigned(a), a["heartbeat_interval_ms"]) == \
        (0, "member-a", 1, {tid: [0, 1, 2]}, 200)
    b = heartbeat(conn, g, "member-b", 0)
    # the uniform assignor gives member-b one partition, but member-a still owns it
    assert (b["error_code"], b["member_epoch"], assigned(b)) == (0, 2, {})
    assert describe(conn, g)["group_state"] == "Reconciling"
    a = heartbeat(conn, g, "member-a", 1, topics=None, owned={tid: [0, 1, 2]})
    assert (a["member_epoch"], assigned(a)) == (1, {tid: [0, 1]})  # revoke 2 first, keep the epoch
    b = heartbeat(conn, g, "member-b", 2, topics=None, owned={})
    assert assigned(b) is None  # nothing released yet
    a = heartbeat(conn, g, "member-a", 1, topics=None, owned={tid: [0, 1]})
    assert (a["member_epoch"], assigned(a)) == (2, None)
    b = heartbeat(conn, g, "member-b", 2, topics=None, owned={})
    assert (b["member_epoch"], assigned(b)) == (2, {tid: [2]})
    described = describe(conn, g)
    assert (described["group_state"], described["group_epoch"], described["assignment_epoch"],
            described["assignor_name"]) == ("Stable", 2, 2, "uniform")
    members = {m["member_id"]: ([p for t in m["assignment"]["topic_partitions"] for p in t["partitions"]],
                                m["member_epoch"], m["subscribed_topic_names"], m["member_type"])
               for m in described["members"]}
    assert members == {"member-a": ([0, 1], 2, [TOPIC], 1), "member-b": ([2], 2, [TOPIC], 1)}

    # offsets are committed with the member epoch, over OffsetCommit v9+
    assert commit(conn, g, "member-b", 2) == 0
    assert commit(conn, g, "member-b", 1) == E.STALE_MEMBER_EPOCH
    assert commit(conn, g, "member-b", 2, version=8) == E.UNSUPPORTED_VERSION
    assert commit(conn, g, "nobody", 2) == E.UNKNOWN_MEMBER_ID
    assert commit(conn, g, "", -1) == E.UNKNOWN_MEMBER_ID  # no simple commits into a live group
    fetch = conn.call(ApiKey.OFFSET_FETCH, 9, {"groups": [
        {"group_id": g, "member_id": "member-a", "member_epoch": 2, "topics": None},
        {"group_id": g, "member_id": "member-a", "member_epoch": 5, "topics": None}], "require_stable": True})
    assert [(x["error_code"], [(p["partition_index"], p["committed_offset"]) for t in x["topics"]
                               for p in t["partitions"]]) for x in fetch["groups"]] == \
        [(0, [(0, 4)]), (E.STALE_MEMBER_EPOCH, [])]

    # a classic member cannot join, DescribeGroups v6 and ListGroups tell the group's type
    join = conn.call(ApiKey.JOIN_GROUP, 9, {"group_id": g, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000,
                                            "member_id": "", "group_instance_id": None, "protocol_type": "consumer",
                                            "protocols": [{"name": "range", "metadata": b""}], "reason": None})
    assert join["error_code"] == E.INCONSISTENT_GROUP_PROTOCOL
    old = conn.call(ApiKey.DESCRIBE_GROUPS, 6, {"groups": [g], "include_authorized_operations": False})
    assert (old["groups"][0]["error_code"], old["groups"][0]["error_message"]) == \
        (E.GROUP_ID_NOT_FOUND, f"Group {g} is not a classic group.")
    listed = conn.call(ApiKey.LIST_GROUPS, 5, {"states_filter": [], "types_filter": ["Consumer"]})
    assert [(x["group_id"], x["group_state"], x["protocol_type"]) for x in listed["groups"] if x["group_id"] == g] == \
        [(g, "Stable", "consumer")]

    # leaving: the last member's partitions go back to the other one
    assert conn.call(ApiKey.DELETE_GROUPS, 3, {"groups_names": [g]})["results"][0]["error_code"] == \
        E.NON_EMPTY_GROUP
    left = heartbeat(conn, g, "member-b", -1, topics=None)
    assert (left["error_code"], left["member_epoch"]) == (0, -1)
    a = heartbeat(conn, g, "member-a", 2, topics=None, owned={tid: [0, 1]})
    assert (a["member_epoch"], assigned(a)) == (3, {tid: [0, 1, 2]})
    heartbeat(conn, g, "member-a", -1, topics=None)
    assert describe(conn, g)["group_state"] == "Empty"
    assert conn.call(ApiKey.DELETE_GROUPS, 3, {"groups_names": [g]})["results"][0]["error_code"] == 0
    gone = describe(conn, g)
    assert (gone["error_code"], gone["error_message"]) == (E.GROUP_ID_NOT_FOUND, f"Group {g} not found.")


def test_range_assignor_and_subscription_change(conn, server):
    g = "ranged"
    a = heartbeat(conn, g, "m-1", 0, topics=(TOPIC, TOPIC + "-other"), server_assignor="range")
    b = heartbeat(conn, g, "m-2", 0, topics=(TOPIC, TOPIC + "-other"), server_assignor="range")
    assert describe(conn, g)["assignor_name"] == "range"
    targets = {m["member_id"]: sorted((t["topic_name"], p) for t in m["target_assignment"]["topic_partitions"]
                                      for p in t["partitions"]) for m in describe(conn, g)["members"]}
    assert targets == {"m-1": [(TOPIC, 0), (TOPIC, 1), (TOPIC + "-other", 0)],
                       "m-2": [(TOPIC, 2), (TOPIC + "-other", 1)]}
    assert a["error_code"] == b["error_code"] == 0
    # m-2 narrows its subscription: a new group epoch and target
    before = describe(conn, g)["group_epoch"]
    heartbeat(conn, g, "m-2", b["member_epoch"], topics=(TOPIC + "-other",))
    after = describe(conn, g)
    assert after["group_epoch"] == after["assignment_epoch"] == before + 1
    targets = {m["member_id"]: sorted((t["topic_name"], p) for t in m["target_assignment"]["topic_partitions"]
                                      for p in t["partitions"]) for m in after["members"]}
    assert targets["m-1"] == [(TOPIC, 0), (TOPIC, 1), (TOPIC, 2), (TOPIC + "-other", 0)]


def test_request_checks_and_fencing(conn, server):
    g = "checks"
    for body, code, message in (
        ({"member_epoch": 5, "member_id": ""}, E.INVALID_REQUEST, "MemberId can't be empty."),
        ({"member_epoch": -3, "member_id": "x"}, E.INVALID_REQUEST, "MemberEpoch is invalid."),
        ({"group_id": ""}, E.INVALID_REQUEST, "GroupId can't be empty."),
        ({"server_assignor": "sticky"}, E.UNSUPPORTED_ASSIGNOR,
         "ServerAssignor sticky is not supported. Supported assignors: uniform, range."),
        ({"rebalance_timeout_ms": -1}, E.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request."),
        ({"topic_partitions": None}, E.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining."),
    ):
        answer = heartbeat(conn, body.pop("group_id", g), body.pop("member_id", "m"), body.pop("member_epoch", 0),
                           **body)
        assert (answer["error_code"], answer["error_message"], answer["member_id"]) == (code, message, None)
    joined = heartbeat(conn, g, "m", 0)
    assert joined["member_epoch"] == 1
    fenced = heartbeat(conn, g, "m", 7, topics=None)
    assert fenced["error_code"] == E.FENCED_MEMBER_EPOCH
    assert fenced["error_message"].startswith("The consumer group member has a greater member epoch (7)")
    assert heartbeat(conn, g, "stranger", 1, topics=None)["error_code"] == E.UNKNOWN_MEMBER_ID
    assert heartbeat(conn, "no-such-group", "m", 1, topics=None)["error_code"] == E.GROUP_ID_NOT_FOUND
    # v0: the coordinator names a new member
    v0 = heartbeat(conn, g + "-v0", "", 0, version=0)
    assert v0["error_code"] == 0 and len(v0["member_id"]) > 10


def test_session_timeout_fences_a_silent_member(conn, server):
    tid, g = server.topic_id, "sessions"
    heartbeat(conn, g, "quiet", 0)
    loud = heartbeat(conn, g, "loud", 0)
    deadline = time.monotonic() + SESSION_MS / 1000 + 5
    epoch, owned = loud["member_epoch"], {}
    while time.monotonic() < deadline:
        answer = heartbeat(conn, g, "loud", epoch, topics=None, owned=owned)
        assert answer["error_code"] == 0
        epoch = answer["member_epoch"]
        if assigned(answer) is not None:
            owned = assigned(answer)
        if owned == {tid: [0, 1, 2]}:
            break
        time.sleep(0.2)
    assert owned == {tid: [0, 1, 2]}
    assert [m["member_id"] for m in describe(conn, g)["members"]] == ["loud"]


def test_static_member_keeps_its_partitions_across_a_restart(conn, server):
    tid, g = server.topic_id, "static-848"
    first = heartbeat(conn, g, "s-1", 0, instance_id="inst")
    assert assigned(first) == {tid: [0, 1, 2]}
    left = heartbeat(conn, g, "s-1", -2, topics=None, instance_id="inst")
    assert (left["error_code"], left["member_epoch"]) == (0, -2)
    back = heartbeat(conn, g, "s-2", 0, instance_id="inst")
    assert (back["error_code"], back["member_id"], assigned(back)) == (0, "s-2", {tid: [0, 1, 2]})
    assert back["member_epoch"] == first["member_epoch"]  # no rebalance
    taken = heartbeat(conn, g, "s-3", 0, instance_id="inst")
    assert taken["error_code"] == E.UNRELEASED_INSTANCE_ID


# ------------------------------------------------------------------------------ real clients
def _topic_ids_served(server) -> bool:
    """Whether the broker's Metadata names topic ids (v10+): KIP-848 clients map the assigned
    topic ids to names through it."""
    c = Conn(server.bootstrap)
    try:
        versions = c.call(ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
    finally:
        c.close()
    return any(k["api_key"] == ApiKey.METADATA and k["max_version"] >= 10 for k in versions["api_keys"])


def test_confluent_consumers_share_a_topic(server):
    if not _topic_ids_served(server):
        pytest.skip("the broker's Metadata does not carry topic ids (v10+), which KIP-848 clients need")
    topic = "cp-clients"
    with Engine(server.data_dir) as engine:
        engine.create_topic(topic, 3)
    producer = Producer({"bootstrap.servers": server.bootstrap})
    for i in range(30):
        producer.produce(topic, f"a{i}".encode(), partition=i % 3)
    assert producer.flush(10) == 0
    group = f"cp-clients-{uuid.uuid4().hex[:6]}"

    def consumer():
        c = Consumer({"bootstrap.servers": server.bootstrap, "group.id": group, "group.protocol": "consumer",
                      "auto.offset.reset": "earliest", "log_level": 0})
        c.subscribe([topic])
        return c

    first = consumer()
    second = None
    try:
        got = []
        deadline = time.monotonic() + 30
        while len(got) < 30 and time.monotonic() < deadline:
            got += [m.value() for m in first.consume(100, 0.2) if not m.error()]
        assert sorted(got) == sorted(f"a{i}".encode() for i in range(30))
        assert {tp.partition for tp in first.assignment()} == {0, 1, 2}

        second = consumer()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            first.poll(0.1)
            second.poll(0.1)
            mine, theirs = ({tp.partition for tp in c.assignment()} for c in (first, second))
            if mine and theirs and not mine & theirs and mine | theirs == {0, 1, 2}:
                break
        assert theirs and not mine & theirs and mine | theirs == {0, 1, 2}, (mine, theirs)

        for i in range(30):
            producer.produce(topic, f"b{i}".encode(), partition=i % 3)
        assert producer.flush(10) == 0
        by_member: dict[int, set] = {0: set(), 1: set()}
        values = []
        deadline = time.monotonic() + 30
        while len(values) < 30 and time.monotonic() < deadline:
            for i, c in enumerate((first, second)):
                for m in c.consume(100, 0.1):
                    if not m.error():
                        by_member[i].add(m.partition())
                        values.append(m.value())
        assert sorted(values) == sorted(f"b{i}".encode() for i in range(30))
        assert by_member == {0: mine, 1: theirs}
    finally:
        for c in (first, second):
            if c is not None:
                c.close()


def test_groups_survive_a_restart(tmp_path):
    """The groups are recorded in __consumer_offsets as Kafka records them: after a restart the
    members carry on with their epochs and partitions; one that does not come back is fenced
    after its session timeout."""
    data_dir = str(tmp_path / "data")
    with Engine(data_dir) as engine:
        engine.create_topic(TOPIC, 3)
        tid = to_uuid(engine.topic(TOPIC).topic_id)
    overrides = {"group.consumer.session.timeout.ms": str(SESSION_MS)}
    broker = BrokerProcess(data_dir, overrides).start()
    try:
        c = Conn(broker.bootstrap)
        a = heartbeat(c, "durable", "d-a", 0)
        b = heartbeat(c, "durable", "d-b", 0, instance_id="inst-b")
        a = heartbeat(c, "durable", "d-a", a["member_epoch"], topics=None, owned=assigned(a))
        a = heartbeat(c, "durable", "d-a", a["member_epoch"], topics=None, owned=assigned(a))
        b = heartbeat(c, "durable", "d-b", b["member_epoch"], topics=None, owned={})
        before = describe(c, "durable")
        assert before["group_state"] == "Stable"
        # a static member away for a moment (epoch -2) keeps its place
        heartbeat(c, "durable", "d-b", -2, topics=None, instance_id="inst-b")
        c.close()
    finally:
        broker.stop()
    broker = BrokerProcess(data_dir, overrides, port=broker.port).start()
    try:
        c = Conn(broker.bootstrap)
        after = describe(c, "durable")
        key = lambda g: (g["group_state"], g["group_epoch"], g["assignment_epoch"], sorted(  # noqa: E731
            (m["member_id"], m["instance_id"], m["member_epoch"], str(m["assignment"]), str(m["target_assignment"]),
             m["subscribed_topic_names"]) for m in g["members"]))
        assert key(after) == key(before)
        # the static member comes back under a new member id: its partitions and epoch, no rebalance
        back = heartbeat(c, "durable", "d-b2", 0, instance_id="inst-b")
        assert (back["error_code"], back["member_epoch"], assigned(back)) == (0, b["member_epoch"], assigned(b))
        listed = c.call(ApiKey.LIST_GROUPS, 5, {"states_filter": [], "types_filter": []})
        assert [(g["group_id"], g["group_type"]) for g in listed["groups"]] == [("durable", "consumer")]
        # d-a goes on with its epoch; d-b2 stays silent and is fenced: d-a takes everything
        epoch, owned = a["member_epoch"], assigned(a)
        deadline = time.monotonic() + SESSION_MS / 1000 + 5
        while time.monotonic() < deadline and owned != {tid: [0, 1, 2]}:
            answer = heartbeat(c, "durable", "d-a", epoch, topics=None, owned=owned)
            assert answer["error_code"] == 0, answer
            epoch = answer["member_epoch"]
            owned = assigned(answer) if assigned(answer) is not None else owned
            time.sleep(0.2)
        assert owned == {tid: [0, 1, 2]}
        assert [m["member_id"] for m in describe(c, "durable")["members"]] == ["d-a"]
        heartbeat(c, "durable", "d-a", -1, topics=None)
        assert c.call(ApiKey.DELETE_GROUPS, 3, {"groups_names": ["durable"]})["results"][0]["error_code"] == 0
        c.close()
    finally:
        broker.stop()
    broker = BrokerProcess(data_dir, overrides, port=broker.port).start()
    try:
        c = Conn(broker.bootstrap)
        assert c.call(ApiKey.LIST_GROUPS, 5, {"states_filter": [], "types_filter": []})["groups"] == []
        c.close()
    finally:
        broker.stop()
