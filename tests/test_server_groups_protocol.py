"""The group coordinator's version-specific fields, through a real pk-server-start: requests
encoded with pk's codec (kp.encode_request) over a socket, answers parsed with it, for the
fields each version adds — committed leader epochs (OffsetCommit v6+, OffsetFetch v5+), several
groups per OffsetFetch (v8+), topic ids (v10), batched FindCoordinator keys (v4+), JoinGroup
v7-9's protocol type and skip_assignment, SyncGroup v5's protocol check, LeaveGroup v3+'s
batches by instance id, DescribeGroups v6's errors, ListGroups v4-5's filters.

Expected answers are the ones a Kafka 4.4 broker gives to the same requests."""

from __future__ import annotations

import uuid

import pytest
from conftest import BrokerProcess, ProtocolClient

from pk.engine import consumer_offsets as codec
from pk.engine.broker.topic_ids import to_uuid
from pk.engine.engine import Engine
from pk.engine.offsets import OffsetStore
from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E

TOPIC = "gp"
SUB = codec.encode_subscription([TOPIC])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data_dir = str(tmp_path_factory.mktemp("groups-protocol") / "data")
    with Engine(data_dir) as engine:
        engine.create_topic(TOPIC, 3)
        topic_id = to_uuid(engine.topic(TOPIC).topic_id)
    broker = BrokerProcess(data_dir, {"group.min.session.timeout.ms": "1000"}).start()
    broker.topic_id = topic_id
    try:
        yield broker
    finally:
        broker.stop()


def Conn(bootstrap: str) -> ProtocolClient:
    return ProtocolClient(bootstrap, client_id="probe")


@pytest.fixture
def conn(server):
    c = Conn(server.bootstrap)
    yield c
    c.close()


def commit(conn, group, offsets, version=8, generation=-1, member_id="", instance_id=None):
    """offsets: {(topic, partition): (offset, leader epoch, metadata)} -> {(topic, p): error}"""
    topics = {}
    for (t, p), (offset, epoch, metadata) in offsets.items():
        topics.setdefault(t, []).append({"partition_index": p, "committed_offset": offset,
                                         "committed_leader_epoch": epoch, "committed_metadata": metadata})
    answer = conn.call(ApiKey.OFFSET_COMMIT, version, {
        "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member_id,
        "group_instance_id": instance_id, "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]})
    return {(t["name"], p["partition_index"]): p["error_code"] for t in answer["topics"] for p in t["partitions"]}


def fetched(topics) -> dict:
    return {(t["name"], p["partition_index"]): (p["committed_offset"], p["committed_leader_epoch"], p["metadata"],
                                                p["error_code"]) for t in topics for p in t["partitions"]}


# ------------------------------------------------------------------------------ offsets
def test_committed_leader_epochs_are_stored_and_returned(conn, server):
    assert commit(conn, "epochs", {(TOPIC, 0): (5, 3, "md"), (TOPIC, 1): (7, -1, None)}) == \
        {(TOPIC, 0): 0, (TOPIC, 1): 0}
    v5 = conn.call(ApiKey.OFFSET_FETCH, 5, {"group_id": "epochs", "topics": [{"name": TOPIC,
                                                                             "partition_indexes": [0, 1, 2]}]})
    assert v5["error_code"] == 0
    assert fetched(v5["topics"]) == {(TOPIC, 0): (5, 3, "md", 0), (TOPIC, 1): (7, -1, "", 0),
                                     (TOPIC, 2): (-1, -1, "", 0)}
    # v1 has no epoch field; v7 with require_stable and all topics
    v1 = conn.call(ApiKey.OFFSET_FETCH, 1, {"group_id": "epochs", "topics": [{"name": TOPIC, "partition_indexes": [0]}]})
    assert fetched(v1["topics"]) == {(TOPIC, 0): (5, -1, "md", 0)}
    v7 = conn.call(ApiKey.OFFSET_FETCH, 7, {"group_id": "epochs", "topics": None, "require_stable": True})
    assert fetched(v7["topics"]) == {(TOPIC, 0): (5, 3, "md", 0), (TOPIC, 1): (7, -1, "", 0)}
    # (the epoch is in __consumer_offsets, as Kafka writes it: OffsetCommitValue v3)
    with Engine(server.data_dir) as engine:
        assert OffsetStore(engine).entries("epochs")[(TOPIC, 0)][:3] == (5, 3, "md")


def test_offset_fetch_of_several_groups(conn):
    commit(conn, "multi-a", {(TOPIC, 0): (11, 2, "a")})
    commit(conn, "multi-b", {(TOPIC, 2): (22, 4, "b")})
    answer = conn.call(ApiKey.OFFSET_FETCH, 8, {"groups": [
        {"group_id": "multi-a", "topics": None},
        {"group_id": "multi-b", "topics": [{"name": TOPIC, "partition_indexes": [2, 1]}]},
        {"group_id": "multi-none", "topics": [{"name": TOPIC, "partition_indexes": [0]}]}], "require_stable": False})
    groups = {g["group_id"]: (g["error_code"], fetched(g["topics"])) for g in answer["groups"]}
    assert groups == {"multi-a": (0, {(TOPIC, 0): (11, 2, "a", 0)}),
                      "multi-b": (0, {(TOPIC, 2): (22, 4, "b", 0), (TOPIC, 1): (-1, -1, "", 0)}),
                      "multi-none": (0, {(TOPIC, 0): (-1, -1, "", 0)})}


def test_topic_ids_in_offset_commit_and_fetch_v10(conn, server):
    tid, unknown = server.topic_id, uuid.uuid4()
    answer = conn.call(ApiKey.OFFSET_COMMIT, 10, {
        "group_id": "by-id", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"topic_id": tid, "partitions": [{"partition_index": 1, "committed_offset": 9,
                                                     "committed_leader_epoch": 1, "committed_metadata": ""}]},
                   {"topic_id": unknown, "partitions": [{"partition_index": 0, "committed_offset": 9,
                                                         "committed_leader_epoch": 1, "committed_metadata": ""}]}]})
    assert [(t["topic_id"], [(p["partition_index"], p["error_code"]) for p in t["partitions"]])
            for t in answer["topics"]] == [(unknown, [(0, E.UNKNOWN_TOPIC_ID)]), (tid, [(1, 0)])]
    answer = conn.call(ApiKey.OFFSET_FETCH, 10, {"groups": [
        {"group_id": "by-id", "member_id": None, "member_epoch": -1,
         "topics": [{"topic_id": tid, "partition_indexes": [1]}, {"topic_id": unknown, "partition_indexes": [0]}]}],
        "require_stable": False})
    [group] = answer["groups"]
    assert [(t["topic_id"], [(p["partition_index"], p["committed_offset"], p["error_code"]) for p in t["partitions"]])
            for t in group["topics"]] == [(tid, [(1, 9, 0)]), (unknown, [(0, -1, E.UNKNOWN_TOPIC_ID)])]
    # all topics: named by id
    answer = conn.call(ApiKey.OFFSET_FETCH, 10, {"groups": [{"group_id": "by-id", "member_id": None,
                                                             "member_epoch": -1, "topics": None}],
                                                 "require_stable": False})
    assert [t["topic_id"] for t in answer["groups"][0]["topics"]] == [tid]


def test_offset_commit_errors_by_version(conn):
    # an unknown group with a generation: ILLEGAL_GENERATION before v9, GROUP_ID_NOT_FOUND from v9
    for version, code in ((7, E.ILLEGAL_GENERATION), (9, E.GROUP_ID_NOT_FOUND)):
        assert commit(conn, "ghost", {(TOPIC, 0): (1, 0, "")}, version=version, generation=3, member_id="m") == \
            {(TOPIC, 0): code}
    # refused partitions come first in the answer, as Kafka's
    answer = conn.call(ApiKey.OFFSET_COMMIT, 8, {
        "group_id": "order", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": TOPIC, "partitions": [
            {"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1, "committed_metadata": ""},
            {"partition_index": 7, "committed_offset": 1, "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
    assert [(p["partition_index"], p["error_code"]) for p in answer["topics"][0]["partitions"]] == \
        [(7, E.UNKNOWN_TOPIC_OR_PARTITION), (0, 0)]


# ------------------------------------------------------------------------------ FindCoordinator
def test_find_coordinator_versions_and_key_types(conn, server):
    port = int(server.bootstrap.rsplit(":", 1)[1])
    for version in (1, 3):
        for key_type in (0, 1):
            answer = conn.call(ApiKey.FIND_COORDINATOR, version, {"key": "k", "key_type": key_type})
            assert (answer["error_code"], answer["error_message"], answer["node_id"], answer["port"]) == \
                (0, "NONE", 0, port)
        answer = conn.call(ApiKey.FIND_COORDINATOR, version, {"key": "g:t:0", "key_type": 2})
        assert (answer["error_code"], answer["node_id"]) == (E.INVALID_REQUEST, -1)
        assert answer["error_message"].startswith("This most likely occurs because of a request being malformed")
    for version in (4, 6):
        answer = conn.call(ApiKey.FIND_COORDINATOR, version, {"key_type": 1, "coordinator_keys": ["t1", "t2", ""]})
        assert [(c["key"], c["error_code"], c["node_id"], c["host"], c["port"]) for c in answer["coordinators"]] == \
            [(k, 0, 0, "127.0.0.1", port) for k in ("t1", "t2", "")]
        answer = conn.call(ApiKey.FIND_COORDINATOR, version, {"key_type": 2, "coordinator_keys": ["g:t:0"]})
        assert [(c["error_code"], c["error_message"], c["node_id"]) for c in answer["coordinators"]] == \
            [(E.INVALID_REQUEST, "", -1)]
        answer = conn.call(ApiKey.FIND_COORDINATOR, version, {"key_type": 3, "coordinator_keys": ["x"]})
        assert answer["coordinators"][0]["error_code"] == E.INVALID_REQUEST
    assert conn.call(ApiKey.FIND_COORDINATOR, 0, {"key": "g"})["node_id"] == 0


# ------------------------------------------------------------------------------ classic groups
def join_body(group, member_id="", instance_id=None, protocols=(("range", SUB),)):
    return {"group_id": group, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": member_id,
            "group_instance_id": instance_id, "protocol_type": "consumer",
            "protocols": [{"name": n, "metadata": m} for n, m in protocols], "reason": "test"}


def join_and_sync(conn, group, instance_id=None, version=9):
    first = conn.call(ApiKey.JOIN_GROUP, version, join_body(group, instance_id=instance_id))
    member_id = first["member_id"]
    if first["error_code"] == E.MEMBER_ID_REQUIRED:
        first = conn.call(ApiKey.JOIN_GROUP, version, join_body(group, member_id, instance_id))
    assert first["error_code"] == 0, first
    assignment = codec.encode_assignment([(TOPIC, 0), (TOPIC, 1), (TOPIC, 2)])
    sync = conn.call(ApiKey.SYNC_GROUP, 5, {"group_id": group, "generation_id": first["generation_id"],
                                            "member_id": first["member_id"], "group_instance_id": instance_id,
                                            "protocol_type": "consumer", "protocol_name": "range",
                                            "assignments": [{"member_id": first["member_id"], "assignment": assignment}]})
    assert (sync["error_code"], sync["protocol_type"], sync["protocol_name"]) == (0, "consumer", "range")
    assert bytes(sync["assignment"]) == assignment
    return first


def test_join_v9_answers_and_sync_v5_checks(conn):
    first = conn.call(ApiKey.JOIN_GROUP, 9, join_body("j9"))
    assert (first["error_code"], first["protocol_type"], first["protocol_name"]) == (E.MEMBER_ID_REQUIRED, None, None)
    joined = conn.call(ApiKey.JOIN_GROUP, 9, join_body("j9", first["member_id"]))
    assert (joined["error_code"], joined["protocol_type"], joined["protocol_name"], joined["skip_assignment"],
            joined["leader"]) == (0, "consumer", "range", False, first["member_id"])
    wrong = conn.call(ApiKey.SYNC_GROUP, 5, {"group_id": "j9", "generation_id": joined["generation_id"],
                                             "member_id": joined["member_id"], "group_instance_id": None,
                                             "protocol_type": "consumer", "protocol_name": "roundrobin",
                                             "assignments": []})
    assert (wrong["error_code"], wrong["protocol_name"]) == (E.INCONSISTENT_GROUP_PROTOCOL, None)
    assert conn.call(ApiKey.HEARTBEAT, 4, {"group_id": "j9", "generation_id": joined["generation_id"],
                                           "member_id": joined["member_id"],
                                           "group_instance_id": None})["error_code"] == E.NONE
    # (v6 and below: a protocol name is never null)
    old = conn.call(ApiKey.JOIN_GROUP, 6, join_body("j6"))
    assert (old["error_code"], old["protocol_name"]) == (E.MEMBER_ID_REQUIRED, "")


def test_static_member_rejoins_without_rebalance_and_old_id_is_fenced(conn):
    first = join_and_sync(conn, "static", instance_id="inst-1")
    again = conn.call(ApiKey.JOIN_GROUP, 9, join_body("static", instance_id="inst-1"))
    # KIP-345: the same generation, a new member id; KIP-814: the leader keeps its assignment
    assert (again["error_code"], again["generation_id"], again["leader"], again["skip_assignment"]) == \
        (0, first["generation_id"], again["member_id"], True)
    assert again["member_id"] != first["member_id"]
    assert [m["group_instance_id"] for m in again["members"]] == ["inst-1"]
    fenced = conn.call(ApiKey.HEARTBEAT, 4, {"group_id": "static", "generation_id": first["generation_id"],
                                             "member_id": first["member_id"], "group_instance_id": "inst-1"})
    assert fenced["error_code"] == E.FENCED_INSTANCE_ID
    # below v9 the answer names the previous leader, so that the member does not assign again
    third = conn.call(ApiKey.JOIN_GROUP, 8, join_body("static", instance_id="inst-1"))
    assert (third["generation_id"], third["leader"], third["members"]) == \
        (first["generation_id"], again["member_id"], [])


def test_leave_group_batches_by_instance_id(conn):
    a = join_and_sync(conn, "leave-batch", instance_id="i-a")
    answer = conn.call(ApiKey.LEAVE_GROUP, 5, {"group_id": "leave-batch", "members": [
        {"member_id": "", "group_instance_id": "nope", "reason": None},
        {"member_id": "other", "group_instance_id": "i-a", "reason": None},
        {"member_id": "", "group_instance_id": "i-a", "reason": "done"}]})
    assert answer["error_code"] == 0
    assert [(m["member_id"], m["group_instance_id"], m["error_code"]) for m in answer["members"]] == [
        ("", "nope", E.UNKNOWN_MEMBER_ID), ("other", "i-a", E.FENCED_INSTANCE_ID), ("", "i-a", 0)]
    described = conn.call(ApiKey.DESCRIBE_GROUPS, 6, {"groups": ["leave-batch"], "include_authorized_operations": False})
    assert (described["groups"][0]["group_state"], described["groups"][0]["members"]) == ("Empty", [])
    assert a["member_id"]
    assert conn.call(ApiKey.LEAVE_GROUP, 1, {"group_id": "leave-batch", "member_id": "zz"})["error_code"] == \
        E.UNKNOWN_MEMBER_ID


def test_describe_list_and_delete_groups_new_versions(conn):
    join_and_sync(conn, "listed-stable")
    commit(conn, "listed-simple", {(TOPIC, 0): (1, -1, "")})
    described = conn.call(ApiKey.DESCRIBE_GROUPS, 6, {"groups": ["listed-stable", "nosuch"],
                                                      "include_authorized_operations": True})
    by_id = {g["group_id"]: g for g in described["groups"]}
    assert (by_id["listed-stable"]["error_code"], by_id["listed-stable"]["group_state"],
            by_id["listed-stable"]["authorized_operations"]) == (0, "Stable", 3400)
    assert (by_id["nosuch"]["error_code"], by_id["nosuch"]["error_message"], by_id["nosuch"]["group_state"]) == \
        (E.GROUP_ID_NOT_FOUND, "Group nosuch not found.", "Dead")
    old = conn.call(ApiKey.DESCRIBE_GROUPS, 5, {"groups": ["nosuch"], "include_authorized_operations": False})
    assert (old["groups"][0]["error_code"], old["groups"][0]["group_state"]) == (0, "Dead")

    def listed(version, states=(), types=()):
        answer = conn.call(ApiKey.LIST_GROUPS, version, {"states_filter": list(states), "types_filter": list(types)})
        return {g["group_id"]: (g["group_state"], g["group_type"]) for g in answer["groups"]
                if g["group_id"].startswith("listed-")}
    assert listed(5) == {"listed-stable": ("Stable", "classic"), "listed-simple": ("Empty", "classic")}
    assert listed(5, states=["STABLE"]) == {"listed-stable": ("Stable", "classic")}
    assert listed(5, types=["consumer"]) == {}
    assert listed(4, states=["empty"]) == {"listed-simple": ("Empty", "")}
    answer = conn.call(ApiKey.DELETE_GROUPS, 3, {"groups_names": ["listed-simple", "listed-stable", "nosuch"]})
    assert [(r["group_id"], r["error_code"]) for r in answer["results"]] == [
        ("listed-simple", 0), ("listed-stable", E.NON_EMPTY_GROUP), ("nosuch", E.GROUP_ID_NOT_FOUND)]
