"""The group coordinator (engine/broker/groups.py), driven directly: requests are encoded and
parsed by the wire codec, handed to the Broker, and the answers encoded and decoded again, so
every answer is also checked to be a valid response of its version. Timers run for real on
an asyncio loop, with timeouts of a few hundred milliseconds."""

from __future__ import annotations

import asyncio
import time

import pytest

from pk.engine import consumer_offsets as codec
from pk.engine import protocol as kp
from pk.engine import records
from pk.engine.broker import Broker
from pk.engine.broker.config import BrokerConfig
from pk.engine.engine import Engine
from pk.engine.offsets import OffsetStore
from pk.engine.protocol import ApiKey
from pk.engine.protocol import errors as E
from pk.engine.topic_names import GROUP_METADATA_TOPIC

TOPIC = "t"
SUB = codec.encode_subscription([TOPIC])


class Harness:
    def __init__(self, data_dir: str, **settings: str):
        props = {"log.dirs": data_dir, "group.initial.rebalance.delay.ms": "0",
                 "group.min.session.timeout.ms": "10", **settings}
        self.data_dir = data_dir
        self.engine = Engine(data_dir)
        self.broker = Broker(self.engine, BrokerConfig.from_properties(props))
        self.coordinator = self.broker.groups
        self._corr = 0

    async def call(self, api_key: int, version: int, body: dict, client_id: str = "cli") -> dict:
        self._corr += 1
        corr_sent = self._corr
        frame = kp.encode_request(api_key, version, corr_sent, body, client_id)
        request = kp.parse_request(frame[4:])
        answer = await self.broker.handle(request)
        corr, decoded = kp.parse_response(request.response(answer)[4:], api_key, version)
        assert corr == corr_sent
        return decoded

    def start(self, api_key: int, version: int, body: dict, client_id: str = "cli") -> asyncio.Task:
        return asyncio.ensure_future(self.call(api_key, version, body, client_id))

    # ------------------------------------------------------------------ shorthands
    def join(self, group="g", member_id="", version=3, protocols=(("range", SUB),), session=10000,
             rebalance=None, instance_id=None, client_id="cli", protocol_type="consumer"):
        body = {"group_id": group, "session_timeout_ms": session,
                "rebalance_timeout_ms": session if rebalance is None else rebalance,
                "member_id": member_id, "group_instance_id": instance_id, "protocol_type": protocol_type,
                "protocols": [{"name": n, "metadata": m} for n, m in protocols]}
        return self.start(ApiKey.JOIN_GROUP, version, body, client_id)

    def sync(self, generation, member_id, assignments=None, group="g", version=2, instance_id=None):
        body = {"group_id": group, "generation_id": generation, "member_id": member_id,
                "group_instance_id": instance_id,
                "assignments": [{"member_id": m, "assignment": a} for m, a in (assignments or {}).items()]}
        return self.start(ApiKey.SYNC_GROUP, version, body)

    async def heartbeat(self, generation, member_id, group="g", version=2, instance_id=None) -> int:
        answer = await self.call(ApiKey.HEARTBEAT, version, {"group_id": group, "generation_id": generation,
                                                             "member_id": member_id,
                                                             "group_instance_id": instance_id})
        return answer["error_code"]

    async def leave(self, member_id, group="g") -> int:
        return (await self.call(ApiKey.LEAVE_GROUP, 1, {"group_id": group, "member_id": member_id}))["error_code"]

    async def commit(self, offsets: dict, group="g", generation=-1, member_id="", metadata="", version=5):
        topics: dict[str, list] = {}
        for (t, p), o in offsets.items():
            topics.setdefault(t, []).append({"partition_index": p, "committed_offset": o,
                                             "committed_metadata": metadata})
        answer = await self.call(ApiKey.OFFSET_COMMIT, version, {
            "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member_id,
            "retention_time_ms": -1, "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]})
        return {(t["name"], p["partition_index"]): p["error_code"] for t in answer["topics"] for p in t["partitions"]}

    async def fetch(self, group="g", topics=None, version=5):
        body = {"group_id": group,
                "topics": None if topics is None else [{"name": t, "partition_indexes": ps} for t, ps in topics.items()]}
        answer = await self.call(ApiKey.OFFSET_FETCH, version, body)
        return {(t["name"], p["partition_index"]): (p["committed_offset"], p["metadata"], p["error_code"])
                for t in answer["topics"] for p in t["partitions"]}

    async def describe(self, *groups, version=4) -> dict:
        answer = await self.call(ApiKey.DESCRIBE_GROUPS, version, {"groups": list(groups),
                                                                   "include_authorized_operations": False})
        return {g["group_id"]: g for g in answer["groups"]}

    async def list_groups(self, version=2) -> dict:
        answer = await self.call(ApiKey.LIST_GROUPS, version, {})
        assert answer["error_code"] == 0
        return {g["group_id"]: g["protocol_type"] for g in answer["groups"]}

    def state(self, group="g") -> str:
        return self.coordinator.groups[group].state

    def close(self):
        self.broker.close()


def run(data_dir, scenario, **settings):
    async def main():
        h = Harness(data_dir, **settings)
        try:
            await scenario(h)
        finally:
            h.close()

    asyncio.run(asyncio.wait_for(main(), 30))


def group_metadata_records(data_dir: str, group: str = "g") -> list:
    """Every GroupMetadata value written for `group` (None for a tombstone), in order."""
    engine = Engine(data_dir)
    try:
        log = engine.partition(GROUP_METADATA_TOPIC, codec.partition_for(group))
        data = log.read(log.log_start_offset, 1 << 24)
        found = []
        for pos, header in records.iter_batches(data):
            for rec in records.decode_records(data, pos, header):
                key = codec.decode_key(rec.key)
                if isinstance(key, codec.GroupMetadataKey) and key.group == group:
                    found.append(codec.decode_group_metadata_value(rec.value))
        return found
    finally:
        engine.close()


async def settle(task: asyncio.Task, timeout: float = 5.0):
    return await asyncio.wait_for(task, timeout)


async def parked(task: asyncio.Task, delay: float = 0.05) -> bool:
    await asyncio.sleep(delay)
    return not task.done()


async def join_stable(h: Harness, n: int = 1, session=10000, rebalance=None, group="g") -> tuple[int, list[str]]:
    """n members join together (the first alone, the others one by one) and sync: (generation, ids)."""
    ids: list[str] = []
    generation = 0
    for _ in range(n):
        # existing members rejoin when told to by their heartbeat
        new = h.join(group=group, session=session, rebalance=rebalance)
        await asyncio.sleep(0.02)
        rejoins = []
        for mid in ids:
            assert await h.heartbeat(generation, mid, group=group) == E.REBALANCE_IN_PROGRESS
            rejoins.append(h.join(group=group, member_id=mid, session=session, rebalance=rebalance))
        answers = [await settle(t) for t in [new, *rejoins]]
        assert all(a["error_code"] == 0 for a in answers), answers
        ids = [a["member_id"] for a in answers]
        generation = answers[0]["generation_id"]
        leader = answers[0]["leader"]
        syncs = [h.sync(generation, mid, {m: b"A-" + m.encode() for m in ids} if mid == leader else None,
                        group=group) for mid in ids]
        for s in syncs:
            assert (await settle(s))["error_code"] == 0
    return generation, ids


@pytest.fixture
def topic_dir(data_dir):
    with Engine(data_dir) as engine:
        engine.create_topic(TOPIC, 3)
        engine.create_topic("other", 2)
    return data_dir


# ------------------------------------------------------------------------------ registration
def test_handlers_are_registered_and_advertised(topic_dir):
    async def scenario(h):
        versions = h.broker.advertised_versions()
        for key in (ApiKey.FIND_COORDINATOR, ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP, ApiKey.HEARTBEAT,
                    ApiKey.LEAVE_GROUP, ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH, ApiKey.LIST_GROUPS,
                    ApiKey.DESCRIBE_GROUPS, ApiKey.DELETE_GROUPS, ApiKey.OFFSET_DELETE):
            assert versions[key] == kp.SUPPORTED_VERSIONS[key]

    run(topic_dir, scenario)


def test_find_coordinator_answers_this_broker(topic_dir):
    async def scenario(h):
        for version in (0, 1, 2):
            answer = await h.call(ApiKey.FIND_COORDINATOR, version, {"key": "any-group", "key_type": 0})
            assert answer["error_code"] == 0
            assert (answer["node_id"], answer["host"], answer["port"]) == (h.broker.node_id, h.broker.host,
                                                                           h.broker.port)
        # this broker coordinates every transactional id too; share groups are not served
        answer = await h.call(ApiKey.FIND_COORDINATOR, 1, {"key": "txn", "key_type": 1})
        assert (answer["error_code"], answer["node_id"]) == (0, h.broker.node_id)
        answer = await h.call(ApiKey.FIND_COORDINATOR, 3, {"key": "g:t:0", "key_type": 2})
        assert (answer["error_code"], answer["node_id"]) == (E.INVALID_REQUEST, -1)

    run(topic_dir, scenario)


# ------------------------------------------------------------------------------ join / sync
def test_single_member_join_sync_heartbeat(topic_dir):
    async def scenario(h):
        answer = await settle(h.join(version=3, client_id="me"))
        assert answer["error_code"] == 0
        mid = answer["member_id"]
        assert mid.startswith("me-") and len(mid) == len("me-") + 36
        assert (answer["generation_id"], answer["protocol_name"], answer["leader"]) == (1, "range", mid)
        assert answer["members"] == [{"member_id": mid, "group_instance_id": None, "metadata": SUB}]
        assert h.state() == "CompletingRebalance"
        assert await h.heartbeat(1, mid) == 0  # Kafka answers NONE between JoinGroup and SyncGroup
        assignment = codec.encode_assignment({TOPIC: [0, 1, 2]})
        synced = await settle(h.sync(1, mid, {mid: assignment}))
        assert synced == {"throttle_time_ms": 0, "error_code": 0, "assignment": assignment,
                          "protocol_type": None, "protocol_name": None}  # SyncGroup v5's, absent here
        assert h.state() == "Stable"
        assert await h.heartbeat(1, mid) == 0
        # a SyncGroup in Stable gets the stored assignment again
        assert (await settle(h.sync(1, mid)))["assignment"] == assignment
        described = (await h.describe("g"))["g"]
        assert (described["group_state"], described["protocol_type"], described["protocol_data"]) == \
            ("Stable", "consumer", "range")
        [member] = described["members"]
        assert (member["member_id"], member["client_id"], member["member_metadata"],
                member["member_assignment"]) == (mid, "me", SUB, assignment)

    run(topic_dir, scenario)
    [value] = group_metadata_records(topic_dir)
    assert (value.protocol_type, value.generation, value.protocol, value.leader) == ("consumer", 1, "range",
                                                                                     value.members[0].member_id)
    assert value.members[0].subscription == SUB
    assert codec.decode_assignment(value.members[0].assignment).partitions() == [(TOPIC, 0), (TOPIC, 1), (TOPIC, 2)]


def test_member_id_required_from_v4(topic_dir):
    async def scenario(h):
        first = await settle(h.join(version=4, client_id="c4"))
        assert first["error_code"] == E.MEMBER_ID_REQUIRED
        assert first["generation_id"] == -1 and first["member_id"].startswith("c4-")
        assert h.state() == "Empty"
        again = await settle(h.join(version=4, member_id=first["member_id"]))
        assert again["error_code"] == 0 and again["member_id"] == first["member_id"]
        assert again["generation_id"] == 1

    run(topic_dir, scenario)


def test_pending_member_expires(topic_dir):
    async def scenario(h):
        first = await settle(h.join(version=5, session=100))
        assert first["error_code"] == E.MEMBER_ID_REQUIRED
        await asyncio.sleep(0.3)
        late = await settle(h.join(version=5, member_id=first["member_id"], session=100))
        assert late["error_code"] == E.UNKNOWN_MEMBER_ID

    run(topic_dir, scenario)


def test_two_members_rebalance(topic_dir):
    async def scenario(h):
        generation, [a] = await join_stable(h, 1)
        b_join = h.join(client_id="b")
        assert await parked(b_join)  # waits for the existing member to rejoin
        assert h.state() == "PreparingRebalance"
        assert await h.heartbeat(generation, a) == E.REBALANCE_IN_PROGRESS
        a_join = h.join(member_id=a)
        ja, jb = await settle(a_join), await settle(b_join)
        assert ja["generation_id"] == jb["generation_id"] == generation + 1
        assert ja["leader"] == jb["leader"] == a  # the leader stays the leader
        assert {m["member_id"] for m in ja["members"]} == {a, jb["member_id"]}
        assert jb["members"] == []  # followers get no member list
        b = jb["member_id"]
        b_sync = h.sync(generation + 1, b)
        assert await parked(b_sync)  # waits for the leader's assignment
        a_sync = h.sync(generation + 1, a, {a: b"for-a", b: b"for-b"})
        assert (await settle(a_sync))["assignment"] == b"for-a"
        assert (await settle(b_sync))["assignment"] == b"for-b"
        assert h.state() == "Stable"

    run(topic_dir, scenario)


def test_stable_follower_rejoining_unchanged_gets_current_generation(topic_dir):
    async def scenario(h):
        generation, [a, b] = await join_stable(h, 2)
        follower = b if h.coordinator.groups["g"].leader == a else a
        answer = await settle(h.join(member_id=follower))
        assert answer["error_code"] == 0 and answer["generation_id"] == generation
        assert h.state() == "Stable"
        # the leader rejoining forces a rebalance
        leader = a if follower == b else b
        lj = h.join(member_id=leader)
        assert await parked(lj)
        assert h.state() == "PreparingRebalance"

    run(topic_dir, scenario)


def test_protocol_selection_and_inconsistent_protocols(topic_dir):
    async def scenario(h):
        a = h.join(protocols=(("range", SUB), ("roundrobin", SUB)))
        ja = await settle(a)
        # b prefers roundrobin; c supports only roundrobin: roundrobin wins the vote
        b = h.join(protocols=(("roundrobin", SUB), ("range", SUB)))
        await asyncio.sleep(0.02)
        c = h.join(protocols=(("roundrobin", b"c-meta"),))
        await asyncio.sleep(0.02)
        a2 = h.join(member_id=ja["member_id"], protocols=(("range", SUB), ("roundrobin", SUB)))
        answers = [await settle(t) for t in (a2, b, c)]
        assert {x["protocol_name"] for x in answers} == {"roundrobin"}
        leader_view = {m["member_id"]: m["metadata"] for m in answers[0]["members"]}
        assert leader_view[answers[2]["member_id"]] == b"c-meta"
        # no common protocol, or another protocol type
        assert (await settle(h.join(protocols=(("sticky", SUB),))))["error_code"] == E.INCONSISTENT_GROUP_PROTOCOL
        assert (await settle(h.join(protocol_type="connect", protocols=(("roundrobin", SUB),))))["error_code"] \
            == E.INCONSISTENT_GROUP_PROTOCOL
        assert (await settle(h.join(group="other", protocols=())))["error_code"] == E.INCONSISTENT_GROUP_PROTOCOL

    run(topic_dir, scenario)


def test_join_validation(topic_dir):
    async def scenario(h):
        assert (await settle(h.join(group="")))["error_code"] == E.INVALID_GROUP_ID
        assert (await settle(h.join(session=5)))["error_code"] == E.INVALID_SESSION_TIMEOUT
        assert (await settle(h.join(session=1800001)))["error_code"] == E.INVALID_SESSION_TIMEOUT
        assert (await settle(h.join(member_id="nobody")))["error_code"] == E.UNKNOWN_MEMBER_ID
        assert "g" not in h.coordinator.groups or h.state() == "Empty"

    run(topic_dir, scenario)


def test_join_v0_uses_session_timeout_as_rebalance_timeout(topic_dir):
    async def scenario(h):
        answer = await settle(h.join(version=0, session=6000))
        assert answer["error_code"] == 0
        member = h.coordinator.groups["g"].members[answer["member_id"]]
        assert member.rebalance_timeout_ms == 6000

    run(topic_dir, scenario)


def test_initial_rebalance_delay_gathers_members(topic_dir):
    async def scenario(h):
        a = h.join()
        await asyncio.sleep(0.1)
        b = h.join()
        ja, jb = await settle(a), await settle(b)
        assert ja["generation_id"] == jb["generation_id"] == 1
        assert len(ja["members"]) == 2 or len(jb["members"]) == 2

    run(topic_dir, scenario, **{"group.initial.rebalance.delay.ms": "300"})


# ------------------------------------------------------------------------------ failures
def test_session_expiry_moves_the_group_on(topic_dir):
    async def scenario(h):
        generation, [a, b] = await join_stable(h, 2, session=300)
        # a keeps heartbeating, b goes silent
        for _ in range(6):
            await asyncio.sleep(0.1)
            code = await h.heartbeat(generation, a)
            if code == E.REBALANCE_IN_PROGRESS:
                break
        assert code == E.REBALANCE_IN_PROGRESS
        assert b not in h.coordinator.groups["g"].members
        rejoined = await settle(h.join(member_id=a, session=300))
        assert rejoined["generation_id"] == generation + 1 and len(rejoined["members"]) == 1
        # and when the last member goes silent the group ends up Empty
        await settle(h.sync(generation + 1, a, {a: b""}))
        await asyncio.sleep(0.5)
        assert h.state() == "Empty"
        assert h.coordinator.groups["g"].generation == generation + 2

    run(topic_dir, scenario)
    last = group_metadata_records(topic_dir)[-1]
    assert last.members == () and last.protocol is None and last.protocol_type == "consumer"


def test_rebalance_timeout_drops_members_that_do_not_rejoin(topic_dir):
    async def scenario(h):
        generation, [a, b] = await join_stable(h, 2, session=5000, rebalance=300)
        c = h.join(session=5000, rebalance=300)
        await asyncio.sleep(0.02)
        a2 = h.join(member_id=a, session=5000, rebalance=300)
        assert await parked(a2, 0.1)  # b has not rejoined yet
        ja, jc = await settle(a2), await settle(c)  # the rebalance timeout ends the join phase
        assert ja["generation_id"] == generation + 1
        assert {m["member_id"] for m in ja["members"]} == {a, jc["member_id"]}
        assert await h.heartbeat(generation, b) == E.UNKNOWN_MEMBER_ID

    run(topic_dir, scenario)


def test_members_that_do_not_sync_are_removed(topic_dir):
    async def scenario(h):
        a = await settle(h.join(session=5000, rebalance=200))
        b_join = h.join(session=5000, rebalance=200)
        await asyncio.sleep(0.02)
        assert await h.heartbeat(1, a["member_id"]) == E.REBALANCE_IN_PROGRESS
        ja = await settle(h.join(member_id=a["member_id"], session=5000, rebalance=200))
        jb = await settle(b_join)
        leader = ja["leader"]
        follower = jb["member_id"] if leader == ja["member_id"] else ja["member_id"]
        # only the follower syncs; the leader never does
        fs = h.sync(ja["generation_id"], follower)
        answer = await settle(fs)
        assert answer["error_code"] == E.REBALANCE_IN_PROGRESS
        assert leader not in h.coordinator.groups["g"].members

    run(topic_dir, scenario)


def test_heartbeat_and_sync_errors(topic_dir):
    async def scenario(h):
        assert await h.heartbeat(1, "x", group="nope") == E.UNKNOWN_MEMBER_ID
        assert (await settle(h.sync(1, "x", group="nope")))["error_code"] == E.UNKNOWN_MEMBER_ID
        generation, [a] = await join_stable(h, 1)
        assert await h.heartbeat(generation + 5, a) == E.ILLEGAL_GENERATION
        assert await h.heartbeat(generation, "stranger") == E.UNKNOWN_MEMBER_ID
        assert (await settle(h.sync(generation + 5, a)))["error_code"] == E.ILLEGAL_GENERATION
        assert (await settle(h.sync(generation, "stranger")))["error_code"] == E.UNKNOWN_MEMBER_ID
        newcomer = h.join()
        await asyncio.sleep(0.02)
        assert (await settle(h.sync(generation, a)))["error_code"] == E.REBALANCE_IN_PROGRESS
        assert await h.leave(a) == 0
        assert (await settle(newcomer))["error_code"] == 0

    run(topic_dir, scenario)


def test_leave_group(topic_dir):
    async def scenario(h):
        assert await h.leave("x", group="nope") == E.UNKNOWN_MEMBER_ID
        generation, [a, b] = await join_stable(h, 2)
        assert await h.leave("stranger") == E.UNKNOWN_MEMBER_ID
        assert await h.leave(b) == 0
        assert h.state() == "PreparingRebalance"
        assert await h.heartbeat(generation, a) == E.REBALANCE_IN_PROGRESS
        ja = await settle(h.join(member_id=a))
        assert ja["generation_id"] == generation + 1 and len(ja["members"]) == 1
        await settle(h.sync(ja["generation_id"], a, {a: b""}))
        assert await h.leave(a) == 0
        assert h.state() == "Empty"
        assert await h.heartbeat(ja["generation_id"], a) == E.UNKNOWN_MEMBER_ID

    run(topic_dir, scenario)
    last = group_metadata_records(topic_dir)[-1]
    assert last.members == () and last.generation == 4  # 1: a, 2: a+b, 3: a, 4: Empty


def test_static_member_rejoin_keeps_its_place(topic_dir):
    async def scenario(h):
        j = await settle(h.join(version=5, instance_id="i-1"))
        assert j["error_code"] == 0 and j["member_id"].startswith("i-1-")
        old = j["member_id"]
        await settle(h.sync(1, old, {old: b"mine"}, version=3, instance_id="i-1"))
        again = await settle(h.join(version=5, instance_id="i-1"))
        assert again["error_code"] == 0 and again["member_id"] != old
        assert again["generation_id"] == 1  # no rebalance
        assert h.state() == "Stable"
        assert await h.heartbeat(1, old, version=3, instance_id="i-1") == E.FENCED_INSTANCE_ID
        assert await h.heartbeat(1, again["member_id"], version=3, instance_id="i-1") == 0
        synced = await settle(h.sync(1, again["member_id"], version=3, instance_id="i-1"))
        assert synced["assignment"] == b"mine"

    run(topic_dir, scenario)


# ------------------------------------------------------------------------------ offsets
def test_offset_commit_validation_and_fetch(topic_dir):
    async def scenario(h):
        # a simple (assign()-style) commit creates an Empty group with no protocol type
        assert await h.commit({(TOPIC, 0): 5, (TOPIC, 1): 7}, group="simple", metadata="m") == \
            {(TOPIC, 0): 0, (TOPIC, 1): 0}
        assert (await h.list_groups())["simple"] == ""
        assert (await h.describe("simple"))["simple"]["group_state"] == "Empty"
        got = await h.fetch("simple", {TOPIC: [0, 1, 2]})
        assert got == {(TOPIC, 0): (5, "m", 0), (TOPIC, 1): (7, "m", 0), (TOPIC, 2): (-1, "", 0)}
        assert await h.fetch("simple") == {(TOPIC, 0): (5, "m", 0), (TOPIC, 1): (7, "m", 0)}
        assert await h.fetch("simple", {TOPIC: [0]}, version=1) == {(TOPIC, 0): (5, "m", 0)}
        assert await h.fetch("nobody", {TOPIC: [0]}) == {(TOPIC, 0): (-1, "", 0)}
        # per-partition errors
        errors = await h.commit({("missing", 0): 1, (TOPIC, 9): 1, (TOPIC, 2): 3}, group="simple")
        assert errors == {("missing", 0): E.UNKNOWN_TOPIC_OR_PARTITION, (TOPIC, 9): E.UNKNOWN_TOPIC_OR_PARTITION,
                          (TOPIC, 2): 0}
        assert (await h.commit({(TOPIC, 0): 1}, group="simple", metadata="x" * 4097))[(TOPIC, 0)] == \
            E.OFFSET_METADATA_TOO_LARGE
        # a generation for a group that does not exist
        assert await h.commit({(TOPIC, 0): 1, ("missing", 0): 1}, group="ghost", generation=3, member_id="m") == \
            {(TOPIC, 0): E.ILLEGAL_GENERATION, ("missing", 0): E.UNKNOWN_TOPIC_OR_PARTITION}

        # a managed group: only its current members may commit
        j = await settle(h.join())
        mid = j["member_id"]
        assert await h.commit({(TOPIC, 0): 1}, generation=1, member_id=mid) == {(TOPIC, 0): E.REBALANCE_IN_PROGRESS}
        assert await h.commit({(TOPIC, 0): 1}) == {(TOPIC, 0): E.UNKNOWN_MEMBER_ID}
        await settle(h.sync(1, mid, {mid: b""}))
        assert await h.commit({(TOPIC, 0): 1}, generation=2, member_id=mid) == {(TOPIC, 0): E.ILLEGAL_GENERATION}
        assert await h.commit({(TOPIC, 0): 1}, generation=1, member_id="x") == {(TOPIC, 0): E.UNKNOWN_MEMBER_ID}
        assert await h.commit({(TOPIC, 0): 11, (TOPIC, 2): 22}, generation=1, member_id=mid, version=2) == \
            {(TOPIC, 0): 0, (TOPIC, 2): 0}
        assert await h.fetch("g", {TOPIC: [0, 2]}, version=3) == {(TOPIC, 0): (11, "", 0), (TOPIC, 2): (22, "", 0)}

    run(topic_dir, scenario)
    with Engine(topic_dir) as engine:
        store = OffsetStore(engine)
        assert store.committed("g") == {(TOPIC, 0): 11, (TOPIC, 2): 22}
        assert store.committed("simple") == {(TOPIC, 0): 5, (TOPIC, 1): 7, (TOPIC, 2): 3}


def test_offsets_committed_elsewhere_are_served(topic_dir):
    with Engine(topic_dir) as engine:  # e.g. pk-console-consumer --group on the same data dir
        OffsetStore(engine).commit("from-engine", {(TOPIC, 1): 42})

    async def scenario(h):
        assert (await h.list_groups()) == {"from-engine": ""}
        described = (await h.describe("from-engine", "unknown"))
        assert (described["from-engine"]["group_state"], described["from-engine"]["protocol_type"]) == ("Empty", "")
        assert (described["unknown"]["group_state"], described["unknown"]["members"]) == ("Dead", [])
        assert await h.fetch("from-engine") == {(TOPIC, 1): (42, "", 0)}
        # committed while the broker runs, by another process: seen at once
        with Engine(topic_dir) as engine:
            OffsetStore(engine).commit("from-engine", {(TOPIC, 2): 43})
        assert await h.fetch("from-engine", {TOPIC: [1, 2]}) == {(TOPIC, 1): (42, "", 0), (TOPIC, 2): (43, "", 0)}

    run(topic_dir, scenario)


def test_restart_keeps_generation_members_and_lists_group(topic_dir):
    """As Kafka's GroupMetadataManager loads a group: a Stable group comes back Stable with its
    members (so a member still running keeps its generation, and a newcomer cannot take its
    partitions before it rejoins or its session ends), its generation and its offsets."""
    members = []

    async def first(h):
        generation, [a] = await join_stable(h, 1)
        members.append(a)
        assert await h.commit({(TOPIC, 0): 3}, generation=generation, member_id=a) == {(TOPIC, 0): 0}
        assert generation == 1

    async def second(h):
        [a] = members
        assert await h.list_groups() == {"g": "consumer"}
        described = (await h.describe("g"))["g"]
        assert (described["group_state"], described["protocol_type"]) == ("Stable", "consumer")
        assert [m["member_id"] for m in described["members"]] == [a]
        assert await h.heartbeat(1, "old-member") == E.UNKNOWN_MEMBER_ID
        assert await h.heartbeat(1, a) == E.NONE  # the restored member carries on
        assert await h.commit({(TOPIC, 0): 4}, generation=1, member_id=a) == {(TOPIC, 0): 0}
        assert await h.leave(a) == E.NONE
        j = await settle(h.join())
        assert j["generation_id"] == 3  # 2: the group emptied by the leave
        assert await h.fetch("g", {TOPIC: [0]}) == {(TOPIC, 0): (4, "", 0)}

    run(topic_dir, first)
    run(topic_dir, second)


# ------------------------------------------------------------------------------ admin
def test_list_describe_groups(topic_dir):
    async def scenario(h):
        assert await h.list_groups() == {}
        generation, [a, b] = await join_stable(h, 2)
        await settle(h.join(group="solo"))
        listed = await h.list_groups(version=0)
        assert listed == {"g": "consumer", "solo": "consumer"}
        described = await h.describe("g", "solo", version=0)
        assert described["g"]["group_state"] == "Stable"
        assert {m["member_id"] for m in described["g"]["members"]} == {a, b}
        # not Stable: members listed without metadata or assignment
        assert described["solo"]["group_state"] == "CompletingRebalance"
        assert described["solo"]["protocol_data"] == ""
        assert [m["member_metadata"] for m in described["solo"]["members"]] == [b""]
        answer = await h.call(ApiKey.DESCRIBE_GROUPS, 3, {"groups": ["g"], "include_authorized_operations": True})
        assert answer["groups"][0]["authorized_operations"] > 0

    run(topic_dir, scenario)


def test_delete_groups(topic_dir):
    async def scenario(h):
        generation, [a] = await join_stable(h, 1)
        await h.commit({(TOPIC, 0): 1}, generation=generation, member_id=a)
        await h.commit({(TOPIC, 0): 1}, group="simple")
        answer = await h.call(ApiKey.DELETE_GROUPS, 1, {"groups_names": ["g", "simple", "nope"]})
        assert {r["group_id"]: r["error_code"] for r in answer["results"]} == \
            {"g": E.NON_EMPTY_GROUP, "simple": 0, "nope": E.GROUP_ID_NOT_FOUND}
        assert await h.leave(a) == 0
        answer = await h.call(ApiKey.DELETE_GROUPS, 0, {"groups_names": ["g"]})
        assert answer["results"] == [{"group_id": "g", "error_code": 0, "error_message": None}]
        assert await h.list_groups() == {}
        assert (await h.describe("g"))["g"]["group_state"] == "Dead"
        assert await h.fetch("g", {TOPIC: [0]}) == {(TOPIC, 0): (-1, "", 0)}

    run(topic_dir, scenario)
    assert group_metadata_records(topic_dir)[-1] is None  # tombstone
    with Engine(topic_dir) as engine:
        assert OffsetStore(engine).committed("g") == {}
        assert OffsetStore(engine).groups() == set()


def test_offset_delete(topic_dir):
    async def scenario(h):
        answer = await h.call(ApiKey.OFFSET_DELETE, 0, {"group_id": "nope", "topics": []})
        assert answer["error_code"] == E.GROUP_ID_NOT_FOUND
        generation, [a] = await join_stable(h, 1)  # subscribed to TOPIC
        await h.commit({(TOPIC, 0): 1, ("other", 0): 2, ("other", 1): 3}, generation=generation, member_id=a)
        answer = await h.call(ApiKey.OFFSET_DELETE, 0, {"group_id": "g", "topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 0}]},
            {"name": "other", "partitions": [{"partition_index": 0}]},
            {"name": "missing", "partitions": [{"partition_index": 0}]}]})
        assert answer["error_code"] == 0
        codes = {(t["name"], p["partition_index"]): p["error_code"] for t in answer["topics"] for p in t["partitions"]}
        assert codes == {(TOPIC, 0): E.GROUP_SUBSCRIBED_TO_TOPIC, ("other", 0): 0,
                         ("missing", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
        assert await h.fetch("g") == {(TOPIC, 0): (1, "", 0), ("other", 1): (3, "", 0)}
        assert await h.leave(a) == 0
        answer = await h.call(ApiKey.OFFSET_DELETE, 0, {"group_id": "g", "topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 0}]}]})
        assert answer["topics"][0]["partitions"][0]["error_code"] == 0
        assert await h.fetch("g") == {("other", 1): (3, "", 0)}

    run(topic_dir, scenario)


def test_group_metadata_record_is_kafka_shaped(topic_dir):
    async def scenario(h):
        await join_stable(h, 2)

    t0 = int(time.time() * 1000)
    run(topic_dir, scenario)
    values = [v for v in group_metadata_records(topic_dir) if v is not None]
    last = values[-1]
    assert last.version == 3 and last.generation == 2 and len(last.members) == 2
    assert last.current_state_timestamp >= t0
    assert {m.assignment for m in last.members} == {b"A-" + m.member_id.encode() for m in last.members}
    assert all(m.session_timeout == 10000 and m.client_id == "cli" for m in last.members)
