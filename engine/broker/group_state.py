"""The group coordinator's state: Kafka's classic consumer groups, coordinator side, without
the requests (groups.py answers those through `ClassicGroups`).

The logic mirrors Kafka's own classic-group coordinator
(group-coordinator/.../GroupMetadataManager.java, classic/ClassicGroup.java at apache/kafka
1eb76443) state for state:

    Empty -> PreparingRebalance -> CompletingRebalance -> Stable   (and back), Dead

`Member` and `Group` are the model (members, generations, protocols, assignments);
`ClassicGroups` holds the groups of one broker and moves them through those states: joins,
rebalances, the timers, the durable records. Membership lives in memory, in the server
process. A JoinGroup answer is *parked* (an asyncio future the handler awaits) until the join
phase completes; a follower's SyncGroup is parked until the leader's SyncGroup brings the
assignment.

Timers, as Kafka's coordinator timer keys (loop.call_later handles, cancelled and replaced):

- per member, the session (heartbeat) expiration: `session.timeout.ms` after the last
  JoinGroup/SyncGroup/Heartbeat/OffsetCommit; a member awaiting a JoinGroup or SyncGroup
  answer is not expired (except a new member, which gets 5 minutes to finish its first join);
- per pending member (a member id handed out with MEMBER_ID_REQUIRED), its session timeout;
- per group, the join phase: `group.initial.rebalance.delay.ms` (extended while new members
  arrive, up to the rebalance timeout) when the group was Empty, else the rebalance timeout
  (the largest of the members' `rebalance.timeout.ms`);
- per group, the sync phase: members that do not send SyncGroup within the rebalance timeout
  after the join phase are removed and the group rebalances again.

Durable state is what Kafka keeps in `__consumer_offsets` (engine/consumer_offsets.py), written through the same
records the bundled engine's consumers use: committed offsets through `OffsetStore`
(OffsetCommit records), and a GroupMetadata record whenever a rebalance completes (the
leader's SyncGroup) or the group becomes Empty; DeleteGroups writes tombstones for both.
Groups known only from those records (committed by pk-console-consumer on the same data
dir, or before a restart) show as Empty in ListGroups/DescribeGroups; their members are not
restored (a member of a group that lived before a restart gets UNKNOWN_MEMBER_ID and
rejoins), but the generation carries on from the stored GroupMetadata.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid

from .. import consumer_offsets as codec
from ..errors import KafkaError, UnknownTopicOrPartitionError
from ..offsets import CommittedOffset, OffsetStore
from ..protocol import errors as E
from ..topic_names import GROUP_METADATA_TOPIC

log = logging.getLogger("kafka.coordinator.group.GroupCoordinator")

EMPTY = "Empty"
PREPARING_REBALANCE = "PreparingRebalance"
COMPLETING_REBALANCE = "CompletingRebalance"
STABLE = "Stable"
DEAD = "Dead"

CONSUMER_PROTOCOL_TYPE = "consumer"
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000  # Kafka's classicGroupNewMemberJoinTimeoutMs


def now_ms() -> int:
    return int(time.time() * 1000)


def client_host(request) -> str:
    """The member's address as Kafka prints it ("/127.0.0.1"), set on the request by the server."""
    return getattr(request, "client_host", "") or ""


# ---------------------------------------------------------------------------------- model
class Member:
    __slots__ = ("member_id", "instance_id", "client_id", "client_host", "rebalance_timeout_ms",
                 "session_timeout_ms", "protocol_type", "protocols", "assignment", "join_future",
                 "sync_future", "is_new", "heartbeat_timer")

    def __init__(self, member_id: str, instance_id: str | None, client_id: str, client_host: str,
                 rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                 protocols: list[tuple[str, bytes]]):
        self.member_id = member_id
        self.instance_id = instance_id
        self.client_id = client_id
        self.client_host = client_host
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.session_timeout_ms = session_timeout_ms
        self.protocol_type = protocol_type
        self.protocols = protocols  # ordered by the member's preference
        self.assignment = b""
        self.join_future: asyncio.Future | None = None
        self.sync_future: asyncio.Future | None = None
        self.is_new = False
        self.heartbeat_timer: asyncio.TimerHandle | None = None

    @property
    def awaiting_join(self) -> bool:
        return self.join_future is not None and not self.join_future.done()

    @property
    def awaiting_sync(self) -> bool:
        return self.sync_future is not None and not self.sync_future.done()

    def has_satisfied_heartbeat(self) -> bool:
        """Kafka's ClassicGroupMember.hasSatisfiedHeartbeat: parked members are alive,
        except new members (who may never come back for their first answer)."""
        if self.is_new:
            return False
        return self.awaiting_join or self.awaiting_sync

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def metadata(self, protocol: str | None) -> bytes:
        for name, data in self.protocols:
            if name == protocol:
                return data
        return b""

    def vote(self, candidates: set[str]) -> str:
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise ValueError("member supports none of the candidate protocols")


class Group:
    def __init__(self, group_id: str, generation: int = 0, protocol_type: str | None = None):
        self.group_id = group_id
        self.state = EMPTY
        self.previous_state: str | None = None
        self.state_timestamp = now_ms()
        self.generation = generation
        self.protocol_type = protocol_type  # None: never had a member (a "simple" group)
        self.protocol: str | None = None
        self.leader: str | None = None
        self.members: dict[str, Member] = {}  # insertion order: join order
        self.static_members: dict[str, str] = {}  # group.instance.id -> member id
        self.pending_members: dict[str, asyncio.TimerHandle | None] = {}
        self.pending_sync: set[str] = set()
        self.new_member_added = False
        self.subscribed_topics: set[str] | None = None
        self.join_timer: asyncio.TimerHandle | None = None
        self.sync_timer: asyncio.TimerHandle | None = None

    # ------------------------------------------------------------------ state
    def transition(self, state: str) -> None:
        self.previous_state = self.state
        self.state = state
        self.state_timestamp = now_ms()

    def can_rebalance(self) -> bool:
        return self.state in (STABLE, COMPLETING_REBALANCE, EMPTY)

    def is_active(self) -> bool:
        return self.state in (PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE)

    def has_all_members_joined(self) -> bool:
        return all(m.awaiting_join for m in self.members.values()) and not self.pending_members

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    # ------------------------------------------------------------------ members
    def add(self, member: Member) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader is None:
            self.leader = member.member_id
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id

    def remove(self, member_id: str) -> Member | None:
        member = self.members.pop(member_id, None)
        if member is not None:
            if member.heartbeat_timer is not None:
                member.heartbeat_timer.cancel()
                member.heartbeat_timer = None
            if member.instance_id is not None and self.static_members.get(member.instance_id) == member_id:
                del self.static_members[member.instance_id]
        if self.leader == member_id:
            self.leader = next(iter(self.members), None)
        timer = self.pending_members.pop(member_id, None)
        if timer is not None:
            timer.cancel()
        self.pending_sync.discard(member_id)
        return member

    def validate_member(self, member_id: str, instance_id: str | None) -> int:
        """Kafka's ClassicGroup.validateMember: 0, UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID."""
        if instance_id is not None:
            existing = self.static_members.get(instance_id)
            if existing is None:
                return E.UNKNOWN_MEMBER_ID
            if existing != member_id:
                return E.FENCED_INSTANCE_ID
        if member_id not in self.members:
            return E.UNKNOWN_MEMBER_ID
        return E.NONE

    # ------------------------------------------------------------------ protocols
    def supports_protocols(self, protocol_type: str, names: list[str], joining: str | None = None) -> bool:
        """At least one of `names` is supported by every member (the joining member's own
        previous registration aside); an Empty group takes any non-empty type and list."""
        if self.state == EMPTY or not self.members:
            return bool(protocol_type) and bool(names)
        if self.protocol_type != protocol_type:
            return False
        others = [set(m.protocol_names()) for mid, m in self.members.items() if mid != joining]
        return any(all(name in s for s in others) for name in names)

    def select_protocol(self) -> str:
        """Each member votes for its most preferred protocol among those every member
        supports; most votes wins (ties: the earliest member's preference decides)."""
        members = list(self.members.values())
        candidates = set(members[0].protocol_names())
        for m in members[1:]:
            candidates &= set(m.protocol_names())
        votes: dict[str, int] = {}
        for m in members:
            choice = m.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        best = max(votes.values())
        for name in members[0].protocol_names():
            if votes.get(name) == best:
                return name
        return max(votes, key=votes.get)  # unreachable: the first member votes too

    def compute_subscribed_topics(self) -> set[str] | None:
        """The topics the members subscribe to (consumer protocol only; None: unknown)."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return set()
        if self.protocol is None:
            return None
        topics: set[str] = set()
        try:
            for m in self.members.values():
                topics.update(codec.decode_subscription(m.metadata(self.protocol)).topics)
        except codec.SchemaError:
            return None
        return topics

    def matches_protocol(self, protocol_type: str | None, protocol_name: str | None) -> bool:
        """SyncGroup v5 repeats the protocol type and name the JoinGroup answer gave: they must
        be the group's (None: not sent)."""
        return ((protocol_type is None or protocol_type == self.protocol_type)
                and (protocol_name is None or protocol_name == self.protocol))

    def is_subscribed_to(self, topic: str) -> bool:
        if self.subscribed_topics is not None:
            return topic in self.subscribed_topics
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE



# ---------------------------------------------------------------------------------- topic ids
def topic_ids_by_name(topic_ids) -> dict:
    """{topic name: topic id (UUID)} of every topic (`topic_ids` is a topic_ids.TopicIds)."""
    found = {}
    for name in topic_ids.engine.list_topics():
        try:
            found[name] = topic_ids.uuid_of(topic_ids.engine.topic(name).topic_id)
        except (KafkaError, ValueError):  # deleted meanwhile, or an id pk cannot read
            continue
    return found


def named_topics(topic_ids, topics: list[dict], by_id: bool) -> list[dict]:
    """A request's topics with "name" filled in from "topic_id" when the version names topics
    by id (None: no such topic), and "topic_id" from the name otherwise (OffsetCommit and
    OffsetFetch v10)."""
    if not by_id:
        return [{**t, "topic_id": None} for t in topics]
    return [{**t, "name": topic_ids.name_of(t["topic_id"])} for t in topics]


# ---------------------------------------------------------------------------------- parked answers
def join_error(code: int, member_id: str = "") -> dict:
    return {"throttle_time_ms": 0, "error_code": code, "generation_id": -1, "protocol_type": None,
            "protocol_name": None, "leader": "", "member_id": member_id, "members": []}


def sync_answer(code: int, assignment: bytes = b"", group: "Group | None" = None) -> dict:
    """A SyncGroup answer; a successful one names the group's protocol (v5)."""
    answer = {"throttle_time_ms": 0, "error_code": code, "assignment": assignment}
    if group is not None and code == E.NONE:
        answer["protocol_type"] = group.protocol_type
        answer["protocol_name"] = group.protocol
    return answer


def resolve(future: asyncio.Future | None, value: dict) -> bool:
    """Answer a parked request; False if it was answered already (or none is parked)."""
    if future is not None and not future.done():
        future.set_result(value)
        return True
    return False


def append_error(code: int) -> int:
    """An append's error as the group coordinator answers it (Kafka's
    CoordinatorOperationExceptionHelper, and 2.8's GroupMetadataManager for AFTER_APPEND)."""
    if code in (E.UNKNOWN_TOPIC_OR_PARTITION, E.NOT_ENOUGH_REPLICAS, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                E.REQUEST_TIMED_OUT):
        return E.COORDINATOR_NOT_AVAILABLE
    if code in (E.NOT_LEADER_OR_FOLLOWER, E.KAFKA_STORAGE_ERROR):
        return E.NOT_COORDINATOR
    return code


def _refused(code: int, message: str) -> KafkaError:
    error = KafkaError(message)
    error.code = code
    return error


# ---------------------------------------------------------------------------------- coordinator
class ClassicGroups:
    """The groups of one broker's coordinator, by id, and the state machine over them."""

    def __init__(self, broker):
        self.broker = broker
        self.engine = broker.engine
        config = broker.config
        self.initial_rebalance_delay_ms = config.get_int("group.initial.rebalance.delay.ms")
        self.min_session_timeout_ms = config.get_int("group.min.session.timeout.ms")
        self.max_session_timeout_ms = config.get_int("group.max.session.timeout.ms")
        self.new_member_join_timeout_ms = NEW_MEMBER_JOIN_TIMEOUT_MS
        self.offsets = OffsetStore(self.engine)
        self.offsets.write = self.write  # leader epoch, replication
        self.required_acks = int(config.get("offsets.commit.required.acks") or -1)
        self.commit_timeout_ms = int(config.get("offsets.commit.timeout.ms") or 5000)
        self.groups: dict[str, Group] = {}
        # group id -> its consumer-protocol group or None; set by the KIP-848 coordinator
        self.modern_groups = None
        # __consumer_offsets partition -> (next offset to read, {group: GroupMetadataValue | None})
        self._metadata_seen: dict[int, tuple[int, dict]] = {}

    # ================================================================== which groups are ours
    def coordinator_error(self, group_id: str) -> int:
        """NONE when this broker coordinates the group, i.e. leads its `__consumer_offsets`
        partition (always without ZooKeeper); else NOT_COORDINATOR, which sends the client
        back to FindCoordinator (Kafka's answer from a broker that does not own the group)."""
        if self.broker.replication is None:
            return E.NONE
        try:
            partition = self.offsets.partition_for(group_id)
        except KafkaError:
            return E.NOT_COORDINATOR  # (not taken in from ZooKeeper yet)
        if self.broker.internal_leader(GROUP_METADATA_TOPIC, partition) != self.broker.node_id:
            return E.NOT_COORDINATOR
        return E.NONE

    def led_partitions(self) -> list[int]:
        """The `__consumer_offsets` partitions this broker coordinates (all without ZooKeeper)."""
        try:
            count = self.offsets.num_partitions
        except KafkaError:
            return []
        if self.broker.replication is None:
            return list(range(count))
        return [p for p in range(count)
                if self.broker.internal_leader(GROUP_METADATA_TOPIC, p) == self.broker.node_id]

    def forget_partition(self, partition: int) -> None:
        """Drop what was read of a partition (its log may be cut or replaced under it)."""
        self._metadata_seen.pop(partition, None)
        self.offsets.forget(partition)

    def unload(self, partition: int) -> int:
        """This broker no longer coordinates the partition's groups (Kafka's
        removeGroupsForPartition): they leave memory, their timers stop, parked JoinGroup and
        SyncGroup answers get NOT_COORDINATOR. Returns how many groups went."""
        gone = 0
        for gid, group in list(self.groups.items()):
            if self.offsets.partition_for(gid) != partition:
                continue
            for m in group.members.values():
                resolve(m.join_future, join_error(E.NOT_COORDINATOR, m.member_id))
                resolve(m.sync_future, sync_answer(E.NOT_COORDINATOR))
            self.drop(group)
            gone += 1
        self.forget_partition(partition)
        return gone

    # ================================================================== durable state
    def append(self, group_id: str, items: list[tuple]) -> tuple[int, int]:
        """Append records to the group's partition; where they end, for `replicated`."""
        return self.write(self.offsets.partition_for(group_id), items)

    def write(self, partition: int, items: list[tuple], **batch_fields) -> tuple[int, int]:
        """Every append of the coordinator to `__consumer_offsets` (OffsetStore's too): on a
        replicated partition only as its leader, with its leader epoch, as Produce appends
        (NOT_LEADER_OR_FOLLOWER / NOT_ENOUGH_REPLICAS refused, mapped by `append_error`)."""
        data = self.broker.data
        plog = data.log(GROUP_METADATA_TOPIC, partition)
        state = data.replica_state(GROUP_METADATA_TOPIC, partition)
        if state is not None:
            if state.leader != self.broker.node_id:
                raise _refused(E.NOT_LEADER_OR_FOLLOWER, f"Not the leader of {GROUP_METADATA_TOPIC}-{partition}")
            if self.required_acks == -1 and plog.config["min.insync.replicas"] > len(state.isr):
                raise _refused(E.NOT_ENOUGH_REPLICAS, f"The ISR of {GROUP_METADATA_TOPIC}-{partition} is too small")
        _, last = plog.append_records(items, **batch_fields)
        if state is not None:
            self.broker.replication.leader_appended((GROUP_METADATA_TOPIC, partition), last + 1)
        self.broker.notify_data()
        return partition, last + 1

    async def replicated(self, written: tuple[int, int] | None) -> int:
        """Kafka's acks=-1 append of the coordinator (offsets.commit.required.acks): NONE once
        the high watermark passes `written` (partition, next offset), else the append's error
        as the group coordinator maps it (`append_error`), after offsets.commit.timeout.ms at
        most."""
        replication = self.broker.replication
        if written is None or replication is None or self.required_acks != -1:
            return E.NONE
        key = (GROUP_METADATA_TOPIC, written[0])
        try:
            min_isr = self.broker.data.log(*key).config["min.insync.replicas"]
        except (KafkaError, OSError):
            return E.COORDINATOR_NOT_AVAILABLE
        result = {"error_code": E.NONE}
        await replication.wait_for_hw([(key, written[1], result, min_isr)], self.commit_timeout_ms)
        return append_error(result["error_code"])

    def _stored_metadata(self, partition: int) -> dict:
        """{group: latest GroupMetadataValue (None after a tombstone)} of one partition,
        read incrementally (as OffsetStore reads the offset commits)."""
        log_ = self.engine.partition(GROUP_METADATA_TOPIC, partition)
        position, table = self._metadata_seen.get(partition, (log_.log_start_offset, {}))

        def take(rec) -> None:
            if rec.key is None:
                return
            try:
                key = codec.decode_key(rec.key)
                if isinstance(key, codec.GroupMetadataKey):
                    table[key.group] = codec.decode_group_metadata_value(rec.value)
            except codec.SchemaError:
                pass

        self._metadata_seen[partition] = (log_.each_record(position, take), table)
        return table

    def _stored_group(self, group_id: str) -> codec.GroupMetadataValue | None:
        try:
            return self._stored_metadata(self.offsets.partition_for(group_id)).get(group_id)
        except KafkaError:
            return None

    def _stored_group_ids(self, partitions) -> dict[str, str]:
        """{group: protocol type} of every group with a live GroupMetadata record in these
        partitions."""
        found = {}
        for partition in partitions:
            for gid, value in self._stored_metadata(partition).items():
                if value is not None:
                    found[gid] = value.protocol_type
        return found

    def offset_table(self, group_id: str) -> dict[tuple[str, int], CommittedOffset]:
        """{(topic, partition): CommittedOffset} committed by the group."""
        return self.offsets.entries(group_id)

    def commit_offsets(self, group_id: str, offsets: dict[tuple[str, int], CommittedOffset]) -> tuple | None:
        """Commit these offsets for this group (one batch in `__consumer_offsets`); where the
        batch ended, for `replicated`. Validation (group, member, generation) is the caller's."""
        return self.offsets.commit_offsets(group_id, offsets) if offsets else None

    def has_pending_transactional_offsets(self, group_id: str, tp: tuple[str, int]) -> bool:
        """Whether an open transaction holds an offset for this partition, not yet committed
        (OffsetFetch's require_stable answers UNSTABLE_OFFSET_COMMIT then)."""
        return tp in self.offsets.pending(group_id)

    def store_group(self, group: Group, assignment: dict[str, bytes] | None = None) -> tuple[int, int]:
        """Append the group's GroupMetadata record (Kafka's newGroupMetadataRecord)."""
        members = []
        for m in group.members.values():
            members.append(codec.MemberMetadata(
                member_id=m.member_id, client_id=m.client_id, client_host=m.client_host,
                session_timeout=m.session_timeout_ms, subscription=m.metadata(group.protocol),
                assignment=(assignment.get(m.member_id, b"") if assignment is not None else m.assignment),
                rebalance_timeout=m.rebalance_timeout_ms, group_instance_id=m.instance_id))
        value = codec.group_metadata_value(group.protocol_type or "", group.generation, group.protocol,
                                           group.leader, members, group.state_timestamp)
        return self.append(group.group_id, [(codec.group_metadata_key(group.group_id), value, (), now_ms())])

    # ================================================================== group lookup
    def group(self, group_id: str, create: bool = False) -> Group | None:
        """The group in memory; a group known only from `__consumer_offsets` is brought in
        as Empty (generation and protocol type from its last GroupMetadata record)."""
        group = self.groups.get(group_id)
        if group is not None:
            return group
        stored = self._stored_group(group_id)
        if stored is not None:
            group = self._loaded(group_id, stored)
        elif create or self.offset_table(group_id):
            group = Group(group_id)
        else:
            return None
        self.groups[group_id] = group
        return group

    def _loaded(self, group_id: str, stored: codec.GroupMetadataValue) -> Group:
        """A group read back from its last GroupMetadata record, as Kafka's GroupMetadataManager
        loads one after a coordinator moves: a group stored with members comes back Stable with
        them (subscriptions, assignments, the leader), each given a session timeout to heartbeat
        to this coordinator. Without them, a member still consuming under the old generation
        would keep its partitions while a newcomer joining the emptied group took them all:
        two consumers of one partition, re-reading from before the last commit."""
        group = Group(group_id, stored.generation, stored.protocol_type or None)
        if not stored.members or stored.protocol is None:
            return group
        group.protocol = stored.protocol
        for m in stored.members:
            rebalance_timeout = m.rebalance_timeout if m.rebalance_timeout >= 0 else m.session_timeout
            member = Member(m.member_id, m.group_instance_id, m.client_id, m.client_host, rebalance_timeout,
                            m.session_timeout, stored.protocol_type, [(stored.protocol, m.subscription)])
            member.assignment = m.assignment
            group.add(member)
        if stored.leader in group.members:
            group.leader = stored.leader
        group.transition(STABLE)
        group.subscribed_topics = group.compute_subscribed_topics()
        for member in group.members.values():
            self.reschedule_heartbeat(group, member)
        return group

    def known_empty(self, group: Group) -> bool:
        """Whether an Empty group in memory still exists for ListGroups/DescribeGroups: a group
        that had members does; a simple (commit-only) group only while it has offsets."""
        return group.protocol_type is not None or bool(self.offset_table(group.group_id))

    @staticmethod
    def _cancel_timers(group: Group) -> None:
        for timer in (group.join_timer, group.sync_timer, *group.pending_members.values()):
            if timer is not None:
                timer.cancel()
        for m in group.members.values():
            if m.heartbeat_timer is not None:
                m.heartbeat_timer.cancel()

    def drop(self, group: Group) -> None:
        self._cancel_timers(group)
        group.transition(DEAD)
        if self.groups.get(group.group_id) is group:
            del self.groups[group.group_id]

    def _alive(self, group: Group) -> bool:
        return self.groups.get(group.group_id) is group and group.state != DEAD

    # ================================================================== timers
    def _call_later(self, delay_ms: int, callback, *args) -> asyncio.TimerHandle:
        return asyncio.get_running_loop().call_later(max(delay_ms, 0) / 1000.0, self._guarded, callback, args)

    def _guarded(self, callback, args) -> None:
        try:
            callback(*args)
        except Exception:  # a timer must never take the server down
            log.exception("Error in group coordinator timer %s", getattr(callback, "__name__", callback))

    def reschedule_heartbeat(self, group: Group, member: Member, timeout_ms: int | None = None) -> None:
        if member.heartbeat_timer is not None:
            member.heartbeat_timer.cancel()
        timeout = member.session_timeout_ms if timeout_ms is None else timeout_ms
        member.heartbeat_timer = self._call_later(timeout, self._expire_heartbeat, group, member.member_id)

    def _expire_heartbeat(self, group: Group, member_id: str) -> None:
        if not self._alive(group):
            return
        member = group.members.get(member_id)
        if member is None:
            return
        member.heartbeat_timer = None
        if not member.has_satisfied_heartbeat():
            log.info("[GroupCoordinator %d]: Member %s in group %s has failed, removing it from the group",
                     self.broker.node_id, member_id, group.group_id)
            self._remove_member_and_update(group, member)

    def _expire_pending_member(self, group: Group, member_id: str) -> None:
        if not self._alive(group) or member_id not in group.pending_members:
            return
        log.info("[GroupCoordinator %d]: Pending member %s in group %s has been removed after session "
                 "timeout expiration.", self.broker.node_id, member_id, group.group_id)
        group.pending_members.pop(member_id, None)
        if group.state == PREPARING_REBALANCE and group.has_all_members_joined():
            self._complete_join(group)

    def _expire_pending_sync(self, group: Group, generation: int) -> None:
        if not self._alive(group) or generation != group.generation:
            return
        group.sync_timer = None
        if group.state in (COMPLETING_REBALANCE, STABLE) and group.pending_sync:
            late = sorted(group.pending_sync)
            for mid in late:
                self.remove(group, mid, E.UNKNOWN_MEMBER_ID)
            log.info("[GroupCoordinator %d]: Group %s removed members who haven't sent their sync "
                     "requests: %s", self.broker.node_id, group.group_id, late)
            self._prepare_rebalance(group, f"removing {late} on pending sync request expiration")

    def _cancel_sync_timer(self, group: Group) -> None:
        group.pending_sync.clear()
        if group.sync_timer is not None:
            group.sync_timer.cancel()
            group.sync_timer = None

    # ================================================================== rebalancing
    def remove(self, group: Group, member_id: str, error: int) -> None:
        """Take a member out, answering its parked requests (Kafka answers a parked JoinGroup
        with UNKNOWN_MEMBER_ID so that a still-running client joins again)."""
        member = group.members.get(member_id)
        if member is not None:
            resolve(member.join_future, join_error(error))
            resolve(member.sync_future, sync_answer(error))
        group.remove(member_id)

    def _remove_member_and_update(self, group: Group, member: Member) -> None:
        self.remove(group, member.member_id, E.UNKNOWN_MEMBER_ID)
        if group.state in (STABLE, COMPLETING_REBALANCE):
            self.maybe_prepare_rebalance_or_complete_join(group, f"removing member {member.member_id} "
                                                                  "on heartbeat expiration")
        elif group.state == PREPARING_REBALANCE and group.has_all_members_joined():
            self._complete_join(group)

    def maybe_prepare_rebalance_or_complete_join(self, group: Group, reason: str) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group, reason)
        else:
            self.maybe_complete_join_phase(group)

    def maybe_complete_join_phase(self, group: Group) -> None:
        if group.state != PREPARING_REBALANCE:
            return
        if group.previous_state == EMPTY:
            return  # the initial rebalance completes on its (delay) timer only
        if group.has_all_members_joined():
            self._complete_join(group)

    def _prepare_rebalance(self, group: Group, reason: str) -> None:
        if group.state == COMPLETING_REBALANCE:
            # Members awaiting their assignment must rejoin.
            for m in group.members.values():
                m.assignment = b""
            self.propagate_assignment(group, E.REBALANCE_IN_PROGRESS)
        self._cancel_sync_timer(group)
        if group.join_timer is not None:
            group.join_timer.cancel()
            group.join_timer = None
        initial = group.state == EMPTY
        if initial:
            delay = self.initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            group.new_member_added = False
            group.join_timer = self._call_later(delay, self._initial_rebalance_timer, group, delay, remaining)
        old_state = group.state
        group.transition(PREPARING_REBALANCE)
        log.info("[GroupCoordinator %d]: Preparing to rebalance group %s in state %s with old generation %d "
                 "(%s-%d) (reason: %s)", self.broker.node_id, group.group_id, old_state, group.generation,
                 GROUP_METADATA_TOPIC, self.offsets.partition_for(group.group_id), reason)
        if not initial:
            if group.has_all_members_joined():
                self._complete_join(group)
            else:
                group.join_timer = self._call_later(group.rebalance_timeout_ms(), self._join_timer, group)

    def _join_timer(self, group: Group) -> None:
        if self._alive(group) and group.state == PREPARING_REBALANCE:
            group.join_timer = None
            self._complete_join(group)

    def _initial_rebalance_timer(self, group: Group, delay: int, remaining: int) -> None:
        if not self._alive(group) or group.state != PREPARING_REBALANCE:
            return
        group.join_timer = None
        if group.new_member_added and remaining != 0:
            group.new_member_added = False
            new_delay = min(self.initial_rebalance_delay_ms, remaining)
            new_remaining = max(remaining - delay, 0)
            group.join_timer = self._call_later(new_delay, self._initial_rebalance_timer, group, new_delay,
                                                new_remaining)
        else:
            self._complete_join(group)

    def _maybe_elect_new_joined_leader(self, group: Group) -> bool:
        if group.leader is None:
            return False
        leader = group.members.get(group.leader)
        if leader is not None and leader.awaiting_join:
            return True
        for m in group.members.values():
            if m.awaiting_join:
                group.leader = m.member_id
                return True
        return False

    def _complete_join(self, group: Group) -> None:
        """The join phase ends: drop dynamic members that did not rejoin, start the next
        generation and answer every parked JoinGroup (the leader gets the member list)."""
        if group.join_timer is not None:
            group.join_timer.cancel()
            group.join_timer = None
        if group.state != PREPARING_REBALANCE:
            return
        gone = [m.member_id for m in group.members.values() if not m.awaiting_join and m.instance_id is None]
        for mid in gone:
            self.remove(group, mid, E.UNKNOWN_MEMBER_ID)
        if gone:
            log.info("[GroupCoordinator %d]: Group %s removed dynamic members who haven't joined: %s",
                     self.broker.node_id, group.group_id, gone)
        if not self._maybe_elect_new_joined_leader(group) and group.members:
            # Nobody rejoined (only static members left): wait for their sessions to end.
            group.join_timer = self._call_later(group.rebalance_timeout_ms(), self._join_timer, group)
            return
        group.generation += 1
        if group.members:
            group.protocol = group.select_protocol()
            group.subscribed_topics = group.compute_subscribed_topics()
            group.transition(COMPLETING_REBALANCE)
        else:
            group.protocol = None
            group.subscribed_topics = group.compute_subscribed_topics()
            group.transition(EMPTY)
        group.pending_sync.clear()
        if group.state == EMPTY:
            log.info("[GroupCoordinator %d]: Group %s with generation %d is now empty (%s-%d)",
                     self.broker.node_id, group.group_id, group.generation, GROUP_METADATA_TOPIC,
                     self.offsets.partition_for(group.group_id))
            try:
                self.store_group(group, {})
            except KafkaError as exc:  # the group is empty anyway: Kafka only warns
                log.warning("Failed to write empty metadata for group %s: %s", group.group_id, exc)
            return
        log.info("[GroupCoordinator %d]: Stabilized group %s generation %d (%s-%d) with %d members",
                 self.broker.node_id, group.group_id, group.generation, GROUP_METADATA_TOPIC,
                 self.offsets.partition_for(group.group_id), len(group.members))
        leader_view = [{"member_id": m.member_id, "group_instance_id": m.instance_id,
                        "metadata": m.metadata(group.protocol)} for m in group.members.values()]
        for m in group.members.values():
            if m.awaiting_join:
                resolve(m.join_future, self._join_answer(group, m.member_id,
                                                          leader_view if m.member_id == group.leader else []))
                m.join_future = None
            self.reschedule_heartbeat(group, m)
            m.is_new = False
            group.pending_sync.add(m.member_id)
        group.sync_timer = self._call_later(group.rebalance_timeout_ms(), self._expire_pending_sync, group,
                                            group.generation)

    def _join_answer(self, group: Group, member_id: str, members: list) -> dict:
        return {"throttle_time_ms": 0, "error_code": E.NONE, "generation_id": group.generation,
                "protocol_type": group.protocol_type, "protocol_name": group.protocol or "",
                "leader": group.leader or "", "skip_assignment": False, "member_id": member_id,
                "members": members}

    def _current_members_view(self, group: Group) -> list:
        return [{"member_id": m.member_id, "group_instance_id": m.instance_id,
                 "metadata": m.metadata(group.protocol)} for m in group.members.values()]

    def propagate_assignment(self, group: Group, error: int) -> None:
        for m in group.members.values():
            if resolve(m.sync_future, sync_answer(error, m.assignment if error == E.NONE else b"", group)):
                self.reschedule_heartbeat(group, m)
            m.sync_future = None

    # ================================================================== joining (JoinGroup's steps)
    def join_new_member(self, group: Group, join) -> None:
        request, instance_id, session_timeout, rebalance_timeout, protocol_type, protocols, future = join
        names = [n for n, _ in protocols]
        if not group.supports_protocols(protocol_type, names):
            resolve(future, join_error(E.INCONSISTENT_GROUP_PROTOCOL))
            return
        new_id = f"{instance_id if instance_id is not None else request.client_id}-{uuid.uuid4()}"
        if instance_id is not None:
            existing = group.static_members.get(instance_id)
            if existing is not None:
                self._replace_static_member(group, existing, new_id, join)
            else:
                self._add_member(group, new_id, join)
        elif request.api_version >= 4:
            # KIP-394: hand out the member id, and expect the member back with it.
            group.pending_members[new_id] = self._call_later(session_timeout, self._expire_pending_member,
                                                             group, new_id)
            resolve(future, join_error(E.MEMBER_ID_REQUIRED, new_id))
        else:
            self._add_member(group, new_id, join)

    def join_existing_member(self, group: Group, member_id: str, join) -> None:
        request, instance_id, session_timeout, rebalance_timeout, protocol_type, protocols, future = join
        names = [n for n, _ in protocols]
        if not group.supports_protocols(protocol_type, names, joining=member_id):
            resolve(future, join_error(E.INCONSISTENT_GROUP_PROTOCOL, member_id))
            return
        if member_id in group.pending_members:
            self._add_member(group, member_id, join)
            return
        error = group.validate_member(member_id, instance_id)
        if error:
            resolve(future, join_error(error, member_id))
            return
        member = group.members[member_id]
        if group.state == PREPARING_REBALANCE:
            self._update_member(group, member, join, f"Member {member_id} is joining group during "
                                                     "PreparingRebalance")
        elif group.state == COMPLETING_REBALANCE:
            if member.protocols == protocols:
                # Same metadata (it probably missed the answer): the current generation again.
                view = self._current_members_view(group) if member_id == group.leader else []
                resolve(future, self._join_answer(group, member_id, view))
            else:
                self._update_member(group, member, join, f"Updating metadata for member {member_id} "
                                                         "during CompletingRebalance")
        elif group.state == STABLE:
            if member_id == group.leader:
                self._update_member(group, member, join, f"Leader {member_id} re-joining group during Stable")
            elif member.protocols != protocols:
                self._update_member(group, member, join, f"Updating metadata for member {member_id} "
                                                         "during Stable")
            else:
                resolve(future, self._join_answer(group, member_id, []))
        else:
            resolve(future, join_error(E.UNKNOWN_MEMBER_ID, member_id))

    def _add_member(self, group: Group, member_id: str, join) -> None:
        request, instance_id, session_timeout, rebalance_timeout, protocol_type, protocols, future = join
        timer = group.pending_members.pop(member_id, None)
        if timer is not None:
            timer.cancel()
        member = Member(member_id, instance_id, request.client_id, client_host(request), rebalance_timeout,
                        session_timeout, protocol_type, protocols)
        member.is_new = True
        if group.state == PREPARING_REBALANCE and group.previous_state == EMPTY:
            group.new_member_added = True  # extends the initial rebalance delay
        group.add(member)
        member.join_future = future
        # A new member cannot heartbeat before its first answer: give it the new-member
        # join timeout instead of its session timeout.
        self.reschedule_heartbeat(group, member, self.new_member_join_timeout_ms)
        self.maybe_prepare_rebalance_or_complete_join(
            group, f"Adding new member {member_id} with group instance id {instance_id}")

    def _update_member(self, group: Group, member: Member, join, reason: str) -> None:
        request, instance_id, session_timeout, rebalance_timeout, protocol_type, protocols, future = join
        if member.join_future is not None and member.join_future is not future:
            # The same member joined again on another connection: the older request is moot.
            resolve(member.join_future, join_error(E.REBALANCE_IN_PROGRESS, member.member_id))
        member.protocols = protocols
        member.rebalance_timeout_ms = rebalance_timeout
        member.session_timeout_ms = session_timeout
        member.join_future = future
        self.maybe_prepare_rebalance_or_complete_join(group, reason)

    def _replace_static_member(self, group: Group, old_id: str, new_id: str, join) -> None:
        """A static member came back with an unknown member id: it takes over the old id's
        place (and assignment), and whoever still uses the old id is fenced."""
        request, instance_id, session_timeout, rebalance_timeout, protocol_type, protocols, future = join
        previous_leader = group.leader
        member = group.members.pop(old_id)
        resolve(member.join_future, join_error(E.FENCED_INSTANCE_ID, old_id))
        resolve(member.sync_future, sync_answer(E.FENCED_INSTANCE_ID))
        member.join_future = member.sync_future = None
        member.member_id = new_id
        group.members[new_id] = member
        group.static_members[instance_id] = new_id
        if group.leader == old_id:
            group.leader = new_id
        if old_id in group.pending_sync:
            group.pending_sync.discard(old_id)
            group.pending_sync.add(new_id)
        self.reschedule_heartbeat(group, member)
        member.protocols = protocols
        member.rebalance_timeout_ms = rebalance_timeout
        member.session_timeout_ms = session_timeout
        member.join_future = future
        if group.state == STABLE:
            if group.protocol == group.select_protocol():
                # Nothing changes for the group: persist the new member id and answer at once,
                # naming the previous leader so that the member does not assign again
                # (JoinGroup below v9 cannot tell a leader to skip the assignment).
                log.info("Static member which joins during Stable stage and doesn't affect the selected "
                         "protocol will not trigger a rebalance.")
                self.store_group(group)
                if request.api_version >= 9 and group.leader == new_id:
                    # KIP-814: the returning leader gets the members but keeps the assignment.
                    answer = self._join_answer(group, new_id, self._current_members_view(group))
                    answer["skip_assignment"] = True
                else:
                    answer = self._join_answer(group, new_id, [])
                    if request.api_version < 9:
                        answer["leader"] = previous_leader or ""
                resolve(future, answer)
                member.join_future = None
            else:
                self.maybe_prepare_rebalance_or_complete_join(
                    group, f"Group's selectedProtocol will change because static member {new_id} with "
                           f"instance id {instance_id} joined with change of protocol")
        elif group.state == COMPLETING_REBALANCE:
            self._prepare_rebalance(group, f"Updating metadata for static member {new_id} with instance id "
                                           f"{instance_id}")
        else:
            self.maybe_complete_join_phase(group)

    # ================================================================== SyncGroup, Heartbeat
    def remove_pending_sync(self, group: Group, member_id: str) -> None:
        group.pending_sync.discard(member_id)
        if not group.pending_sync and group.sync_timer is not None:
            group.sync_timer.cancel()
            group.sync_timer = None

    def heartbeat_error(self, group: Group, member_id: str, instance_id: str | None, generation: int) -> int:
        if group.state == DEAD:
            return E.COORDINATOR_NOT_AVAILABLE
        error = group.validate_member(member_id, instance_id)
        if error:
            return error
        if generation != group.generation:
            return E.ILLEGAL_GENERATION
        if group.state == EMPTY:
            return E.UNKNOWN_MEMBER_ID
        self.reschedule_heartbeat(group, group.members[member_id])
        if group.state == PREPARING_REBALANCE:
            return E.REBALANCE_IN_PROGRESS
        # Stable, or CompletingRebalance: a member may heartbeat between its JoinGroup
        # answer and its SyncGroup (Kafka answers NONE there too).
        return E.NONE

    # ================================================================== offset commits
    def validate_commit(self, group_id: str, generation: int, member_id: str, instance_id: str | None,
                        version: int) -> int:
        """Kafka's OffsetMetadataManager.validateOffsetCommit + ClassicGroup.validateOffsetCommit:
        0, or the error of every partition of the commit. A commit with no generation to an
        unknown group creates a "simple" group."""
        modern = self.modern_group(group_id)
        if modern is not None:
            return modern.validate_offset_commit(member_id, generation, version)
        group = self.group(group_id)
        if group is None:
            if generation >= 0:
                return E.GROUP_ID_NOT_FOUND if version >= 9 else E.ILLEGAL_GENERATION
            self.group(group_id, create=True)
            return E.NONE
        if group.state == DEAD:
            return E.COORDINATOR_NOT_AVAILABLE
        if generation < 0 and group.state == EMPTY:
            return E.NONE
        if generation >= 0 or member_id or instance_id is not None:
            error = group.validate_member(member_id, instance_id)
            if error:
                return error
            if generation != group.generation:
                return E.ILLEGAL_GENERATION
        elif group.state != EMPTY:
            return E.UNKNOWN_MEMBER_ID
        if group.state == COMPLETING_REBALANCE:
            return E.REBALANCE_IN_PROGRESS
        return E.NONE

    def touch_committer(self, group_id: str, member_id: str) -> None:
        """A member's offset commit counts as a heartbeat (classic groups)."""
        group = self.groups.get(group_id)
        if group is not None and group.state in (STABLE, PREPARING_REBALANCE) and member_id in group.members:
            self.reschedule_heartbeat(group, group.members[member_id])

    def validate_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> int:
        """OffsetFetch v9+ names the member of a consumer-protocol group that asks."""
        modern = self.modern_group(group_id)
        if modern is not None:
            return modern.validate_offset_fetch(member_id, member_epoch)
        return E.NONE

    def modern_group(self, group_id: str):
        """The consumer-protocol (KIP-848) group of that id, if it is one (None: classic or unknown)."""
        lookup = self.modern_groups
        return lookup(group_id) if lookup is not None else None

    # ================================================================== leaving
    def leave(self, group: Group, member_id: str, instance_id: str | None) -> int:
        """One member leaves (LeaveGroup; by instance id from v3): its error code."""
        if instance_id is not None:
            known = group.static_members.get(instance_id)
            if known is None:
                return E.UNKNOWN_MEMBER_ID
            if member_id and member_id != known:  # "" = leave by instance id alone
                return E.FENCED_INSTANCE_ID
            member_id = known
        if member_id in group.pending_members:
            group.remove(member_id)
            return E.NONE
        error = group.validate_member(member_id, None)
        if error:
            return error
        log.info("[GroupCoordinator %d]: Member %s has left group %s through explicit `LeaveGroup` request",
                 self.broker.node_id, member_id, group.group_id)
        self.remove(group, member_id, E.UNKNOWN_MEMBER_ID)
        return E.NONE

    def partition_exists(self, topic: str, partition: int) -> bool:
        try:
            return 0 <= partition < self.engine.topic(topic).partitions
        except (UnknownTopicOrPartitionError, KafkaError):
            return False

    # ================================================================== listing
    def listed_groups(self) -> dict[str, tuple[str, str]]:
        """{group id: (protocol type, state)} of every classic group this coordinator knows
        (groups known only from `__consumer_offsets` are Empty), in the partitions it leads."""
        listed: dict[str, tuple[str, str]] = {}
        led = self.led_partitions()
        for gid, group in self.groups.items():
            if group.state != EMPTY or self.known_empty(group):
                listed[gid] = (group.protocol_type or "", group.state)
        for gid, protocol_type in self._stored_group_ids(led).items():
            if gid not in self.groups:
                listed[gid] = (protocol_type, EMPTY)
        for gid in self.offsets.groups(led):
            if gid not in self.groups:
                listed.setdefault(gid, ("", EMPTY))
        return listed

    # ================================================================== lifecycle
    def close(self) -> None:
        for group in list(self.groups.values()):
            self._cancel_timers(group)
