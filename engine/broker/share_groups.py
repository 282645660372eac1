"""Share groups (KIP-932, Kafka's queues) served by pk-server-start: ShareGroupHeartbeat (76),
ShareGroupDescribe (77), ShareFetch (78) and ShareAcknowledge (79), and share groups in
ListGroups.

Three parts, as in Kafka (group coordinator, SharePartitionManager, share sessions):

- the *groups*: members join with epoch 0 and heartbeat; any change of membership or
  subscriptions bumps the group epoch and reassigns at once with Kafka's simple assignor
  (`simple_assignment`): a share group needs no revocation, since members may share a
  partition, so a member takes its new assignment on its next heartbeat; a member silent for
  the group's `share.session.timeout.ms` is removed;
- the *share-partitions*: one engine/share_partition.py `SharePartition` per (group, topic,
  partition), created when a member is first assigned the partition, starting where the
  group's `share.auto.offset.reset` says (latest by default);
- the *share sessions*: one per (group, member) a ShareFetch opened with epoch 0; later
  requests must carry the next epoch; epoch -1 closes it. Closing a session, leaving the
  group or being timed out releases the records the member holds.

Each share-partition's state is kept in `__share_group_state` (share_state.py), read back
when the partition is first used after a restart; groups and their members are not (members
rejoin). Alter/DeleteShareGroupOffsets (91-92) are share_offsets.py's. In ZooKeeper mode the
state is the share coordinators' (share_coordinator.py) and each of the three parts follows its
own leadership (docs/replication.md, "The share coordinator"). What is not done yet:
docs/share-groups.md.
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid

from .. import acls
from .. import records
from .. import topic_names
from ..errors import KafkaError
from ..protocol import ApiKey
from ..protocol.messages import INT32_MIN
from ..protocol import errors as E
from ..share_groups import INITIALIZING_BUMPS, now_ms, simple_assignment  # Kafka's SimpleAssignor, shared with the engine's share groups
from ..share_partition import RENEW, InvalidRecordState, SharePartition
from ..share_state_log import STATE_CODES, STATE_NAMES, ShareStateValue
from .group_state import client_host, topic_ids_by_name
from .share_coordinator import SharePersister
from .share_offsets import ShareOffsetAdmin
from .share_state import ShareStateStore
from .share_state_apis import ShareStateApis

log = logging.getLogger("kafka.coordinator.group.GroupMetadataManager")
api_log = logging.getLogger("kafka.server.KafkaApis")

SHARE_GROUP_TYPE = SHARE_PROTOCOL_TYPE = "share"
EMPTY, STABLE = "Empty", "Stable"
ASSIGNOR_NAME = "simple"
LEAVE_GROUP_MEMBER_EPOCH = -1
INITIAL_EPOCH, FINAL_EPOCH = 0, -1
RECHECK_SECONDS = 0.05
READ_CHUNK = 1 << 20
CONTROL_BIT = 0x20
# A ShareFetch flagged is_renew_ack (v2) carries acknowledgements only: these limits must be 0.
RENEW_ACK_ZERO = (("max_bytes", "maxBytes"), ("min_bytes", "minBytes"), ("max_records", "maxRecords"),
                  ("max_wait_ms", "maxWaitMs"))
# READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS, as for other groups without an authorizer
GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11)


class ShareMember:
    def __init__(self, member_id: str, client_id: str, host: str):
        self.member_id = member_id
        self.epoch = 0
        self.client_id = client_id
        self.client_host = host
        self.rack_id: str | None = None
        self.subscribed: list[str] = []
        self.assignment: list[tuple[str, int]] = []
        self.sent_epoch = -1  # the epoch whose assignment the member was last sent
        self.last_seen_ms = now_ms()


class ShareGroup:
    def __init__(self, group_id: str):
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.members: dict[str, ShareMember] = {}
        # the (topic, partition)s whose share-partition state the group has (initialized)
        self.initialized: set[tuple[str, int]] = set()

    @property
    def state(self) -> str:
        return STABLE if self.members else EMPTY


class ShareSession:
    def __init__(self, group_id: str, member_id: str):
        self.group_id, self.member_id = group_id, member_id
        self.next_epoch = 1
        self.partitions: dict[tuple[uuid.UUID, int], None] = {}  # kept in the order they came


class ShareGroupHandlers:
    def __init__(self, broker):
        self.broker = broker
        self.groups: dict[str, ShareGroup] = {}
        self.partitions: dict[tuple[str, str, int], SharePartition] = {}
        self.sessions: dict[tuple[str, str], ShareSession] = {}
        self.store = ShareStateStore(broker)
        self._saved = None  # what __share_group_state holds, read at first use (the logs are not up yet here)
        self._persisted: dict[tuple[str, str, int], int] = {}  # each partition's changes when last written
        self._ids: dict[tuple[str, str, int], uuid.UUID] = {}
        broker.register(ApiKey.SHARE_GROUP_HEARTBEAT, self.heartbeat)
        broker.register(ApiKey.SHARE_GROUP_DESCRIBE, self.describe)
        broker.register(ApiKey.SHARE_FETCH, self.share_fetch)
        broker.register(ApiKey.SHARE_ACKNOWLEDGE, self.share_acknowledge)
        broker.register(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, self.describe_offsets)
        ShareOffsetAdmin(broker, self)  # AlterShareGroupOffsets, DeleteShareGroupOffsets
        self.state_apis = ShareStateApis(broker, self)  # the share coordinator's APIs (83-87)
        # ZooKeeper mode: each share-partition's state is its share coordinator's (maybe another
        # broker's), read when this broker starts leading the data partition, written after changes
        self.persister = SharePersister(broker, self.state_apis)
        self._loaded_epochs: dict[tuple[str, str, int], int] = {}  # the leader epoch a partition was read at
        self._load_failures: dict[tuple[str, str, int], int] = {}
        self._background: set[asyncio.Task] = set()
        self._state_epochs: dict[tuple[str, str, int], int] = {}
        self._key_locks: dict[tuple[str, str, int], asyncio.Lock] = {}
        broker.leadership_listeners.append(self.on_leadership)

    @property
    def zk(self) -> bool:
        return self.broker.replication is not None

    def coordinator_error(self, group_id: str) -> int:
        """NOT_COORDINATOR unless this broker is the group's coordinator (the leader of its
        `__consumer_offsets` partition, as for every other group type)."""
        return self.broker.groups.coordinator.coordinator_error(group_id)

    def on_leadership(self, topic: str, partition: int, leader: bool) -> None:
        """ZooKeeper mode: losing a `__consumer_offsets` partition unloads its share groups
        (their members rejoin at the new coordinator, which answers UNKNOWN_MEMBER_ID)."""
        from .group_state import GROUP_METADATA_TOPIC

        if topic != GROUP_METADATA_TOPIC or leader:
            return
        offsets = self.broker.groups.coordinator.offsets
        for gid in [g for g in self.groups if offsets.partition_for(g) == partition]:
            del self.groups[gid]
            log.info("[GroupCoordinator %d]: Unloaded share group %s (partition %d moved)", self.broker.node_id,
                     gid, partition)

    @property
    def saved(self) -> dict:
        """Stored share-partition states not taken into memory yet, by (group, topic id, partition)."""
        if self._saved is None:
            # (ZooKeeper mode: the states are the share coordinators', read per partition)
            self._saved = {} if self.zk else self.store.load()
            # the groups come back empty (their members rejoin): pk keeps no group records yet
            for gid, topic_id, partition in self._saved:
                self.groups.setdefault(gid, ShareGroup(gid)).initialized.add((self._topic_name(topic_id), partition))
        return self._saved

    # ------------------------------------------------------------------ configs
    def _config(self, group_id: str, name: str) -> int:
        return self.broker.group_configs.value(group_id, name)

    def _renew_enabled(self, group_id: str) -> bool:
        from .. import group_config
        store = self.broker.group_configs.store.get(group_id)
        return group_config.effective(store, "share.renew.acknowledge.enable",
                                      self.broker.group_configs._broker_get).lower() == "true"

    def _reset_policy(self, group_id: str) -> str:
        from .. import group_config
        store = self.broker.group_configs.store.get(group_id)
        return group_config.effective(store, "share.auto.offset.reset", self.broker.group_configs._broker_get)

    def listed_groups(self) -> dict[str, tuple[str, str, str]]:
        self.saved  # noqa: B018 (the stored groups first)
        return {gid: (SHARE_PROTOCOL_TYPE, g.state, SHARE_GROUP_TYPE) for gid, g in self.groups.items()}

    # ------------------------------------------------------------------ ShareGroupHeartbeat
    async def heartbeat(self, request) -> dict:
        body = request.body
        group_id, member_id, epoch = body["group_id"], body["member_id"], body["member_epoch"]
        # (an error answer names no member, as Kafka's: member_id null, epoch 0)
        answer = {"throttle_time_ms": 0, "error_code": E.NONE, "member_id": None, "member_epoch": 0,
                  "heartbeat_interval_ms": 0}
        guard = self.broker.guard
        if not guard.allows(request, acls.READ, acls.GROUP, group_id):
            return {**answer, "error_code": E.GROUP_AUTHORIZATION_FAILED, "error_message": None}
        if not group_id:
            return {**answer, "error_code": E.INVALID_REQUEST, "error_message": "GroupId can't be empty."}
        if not member_id:
            return {**answer, "error_code": E.INVALID_REQUEST, "error_message": "MemberId can't be empty."}
        if epoch == 0 and not body["subscribed_topic_names"]:
            return {**answer, "error_code": E.INVALID_REQUEST,
                    "error_message": "SubscribedTopicNames must be set in first request."}
        if body["subscribed_topic_names"] and guard.enabled:
            names = set(body["subscribed_topic_names"])
            if len(guard.allowed_names(request, acls.DESCRIBE, acls.TOPIC, names)) < len(names):
                return {**answer, "error_code": E.TOPIC_AUTHORIZATION_FAILED, "error_message": None}
        not_ours = self.coordinator_error(group_id)
        if not_ours:
            return {**answer, "error_code": not_ours, "error_message": None}
        if self._in_use_by_other_type(group_id):
            return {**answer, "error_code": E.GROUP_ID_NOT_FOUND,
                    "error_message": f"Group {group_id} is not a share group."}
        self.saved  # noqa: B018 (the stored groups first)
        group = self.groups.get(group_id)
        if epoch == LEAVE_GROUP_MEMBER_EPOCH:
            if group is not None and member_id in group.members:
                self._remove_member(group, member_id)
            return {**answer, "member_id": member_id, "member_epoch": LEAVE_GROUP_MEMBER_EPOCH}
        if group is None:
            group = self.groups[group_id] = ShareGroup(group_id)
        member = group.members.get(member_id)
        if member is None:
            if epoch != 0:
                return {**answer, "error_code": E.UNKNOWN_MEMBER_ID,
                        "error_message": f"Member {member_id} is not a member of group {group_id}."}
            member = group.members[member_id] = ShareMember(member_id, request.client_id, client_host(request))
            changed = True
        elif epoch not in (0, member.epoch):
            return {**answer, "error_code": E.FENCED_MEMBER_EPOCH,
                    "error_message": f"The share group member has a smaller member epoch ({epoch}) than the one "
                                     f"known by the group coordinator ({member.epoch}). The member must abandon "
                                     f"all its partitions and rejoin."}
        else:
            changed = epoch == 0  # a member rejoining after an error
        member.last_seen_ms = now_ms()
        member.rack_id = body["rack_id"]
        if body["subscribed_topic_names"] is not None and sorted(body["subscribed_topic_names"]) != member.subscribed:
            member.subscribed = sorted(body["subscribed_topic_names"])
            changed = True
        if changed or self._partition_counts_changed(group):
            self._reassign(group)
        if epoch == 0:
            member.sent_epoch = -1
        # A member takes the group's new assignment, and its epoch, at its own next heartbeat
        # (a share group has nothing to revoke): until then the epoch it has is still valid, so
        # one member joining does not fence the others (as Kafka's reconciliation of a member).
        member.epoch = group.assignment_epoch
        answer.update(member_id=member_id, member_epoch=member.epoch,
                      heartbeat_interval_ms=self._config(group_id, "share.heartbeat.interval.ms"))
        if member.sent_epoch != member.epoch:
            ids = topic_ids_by_name(self.broker.data.topic_ids)
            by_topic: dict[str, list[int]] = {}
            for topic, p in member.assignment:
                by_topic.setdefault(topic, []).append(p)
            answer["assignment"] = {"topic_partitions": [
                {"topic_id": ids[t], "partitions": ps} for t, ps in sorted(by_topic.items()) if t in ids]}
            member.sent_epoch = member.epoch
        return answer

    def _in_use_by_other_type(self, group_id: str) -> bool:
        listed = self.broker.groups.listed_groups()
        found = listed.get(group_id)
        return found is not None and found[2] != SHARE_GROUP_TYPE

    def _subscribed_partitions(self, group: ShareGroup) -> list[tuple[str, int]]:
        topics = sorted({t for m in group.members.values() for t in m.subscribed})
        out = []
        for topic in topics:
            try:
                count = self.broker.engine.topic(topic).partitions
            except KafkaError:
                continue  # not (yet) a topic: subscribed to, nothing to assign
            out.extend((topic, p) for p in range(count))
        return out

    def _partition_counts_changed(self, group: ShareGroup) -> bool:
        assigned = {tp for m in group.members.values() for tp in m.assignment}
        return set(self._subscribed_partitions(group)) != assigned

    def _reassign(self, group: ShareGroup) -> None:
        """A new group epoch and target assignment, taken by every member at once."""
        group.group_epoch += 1
        # members subscribe alike in practice; one differing gets only partitions of its topics
        wanted = self._subscribed_partitions(group)
        fresh = set(wanted) - group.initialized
        if fresh:  # Kafka initializes their state first: the epoch moves for that twice more
            group.group_epoch += INITIALIZING_BUMPS
            group.initialized |= fresh
        by_topics: dict[tuple, list[str]] = {}
        for m in group.members.values():
            by_topics.setdefault(tuple(m.subscribed), []).append(m.member_id)
        for topics, members in by_topics.items():
            plan = simple_assignment(members, [tp for tp in wanted if tp[0] in topics])
            for member_id, tps in plan.items():
                group.members[member_id].assignment = tps
        group.assignment_epoch = group.group_epoch
        if self.zk:
            return  # each partition's leader sets its share-partition up, from its share coordinator
        for tp in wanted:
            self._share_partition(group.group_id, *tp)

    def _remove_member(self, group: ShareGroup, member_id: str) -> None:
        group.members.pop(member_id, None)
        self.sessions.pop((group.group_id, member_id), None)
        self._release(group.group_id, member_id)
        self._reassign(group)

    async def _close_session(self, group_id: str, member_id: str) -> dict:
        """A member's last request (epoch -1): its acknowledgements are written, then what it
        still holds is released and written, two writes as in Kafka (the session closes after
        the acknowledgements' write; a share group's stored start offset moves in between).
        The acknowledgements' unwritten partitions, as `_persist_now`."""
        unwritten = await self._persist_now()
        self.sessions.pop((group_id, member_id), None)
        self._release(group_id, member_id)
        await self._persist_now()
        return unwritten

    def _release(self, group_id: str, member_id: str) -> None:
        released = False
        for (gid, _, _), sp in self.partitions.items():
            if gid == group_id:
                released |= sp.release_member(member_id)
        if released:
            self.broker.notify_data()  # waiting share fetches may acquire them now

    # ------------------------------------------------------------------ share-partitions
    def _share_partition(self, group_id: str, topic: str, partition: int) -> SharePartition:
        key = (group_id, topic, partition)
        sp = self.partitions.get(key)
        if sp is None and self.zk:  # set up by _load_zk from the share coordinator, which failed
            error = KafkaError(f"The state of share-partition {group_id}:{topic}-{partition} is not available")
            error.code = self._load_failures.get(key, E.COORDINATOR_NOT_AVAILABLE)
            raise error
        if sp is None:
            plog = self.broker.data.log(topic, partition)
            topic_id = self._ids[key] = self.broker.data.topic_ids.uuid_of(plog.topic_id)
            stored = self.saved.pop((group_id, topic_id, partition), None)
            if stored is not None:
                sp = SharePartition(stored.start_offset)
                self.store.restore(stored, sp)
                sp.restored(stored.start_offset)
            else:
                policy = self._reset_policy(group_id).strip().lower()
                start = plog.log_start_offset if policy == "earliest" else plog.log_end_offset
                if policy.startswith("by_duration:"):
                    start = self._offset_for_duration(plog, policy.split(":", 1)[1])
                sp = SharePartition(start)
            self.partitions[key] = sp
        # the group's configs may have changed since: each acquisition uses the current ones
        sp.lock_duration_ms = self._config(group_id, "share.record.lock.duration.ms")
        sp.delivery_count_limit = self._config(group_id, "share.delivery.count.limit")
        sp.max_record_locks = self._config(group_id, "share.partition.max.record.locks")
        return sp

    @staticmethod
    def _offset_for_duration(plog, duration: str) -> int:
        """The first offset of a record no older than the duration (Java's Duration syntax)."""
        found = plog.offset_for_timestamp(now_ms() - _duration_ms(duration))
        return found[0] if found is not None else plog.log_end_offset

    # ------------------------------------------------------------------ ShareFetch / ShareAcknowledge
    def _session(self, group_id: str, member_id: str, epoch: int) -> tuple[ShareSession | None, int]:
        """The request's share session (opened by epoch 0), or an error code."""
        key = (group_id, member_id)
        if epoch == INITIAL_EPOCH:
            if key in self.sessions:  # a new session replaces the old one, whose records go back
                self._release(group_id, member_id)
            session = self.sessions[key] = ShareSession(group_id, member_id)
            return session, E.NONE
        session = self.sessions.get(key)
        if session is None:
            return None, E.SHARE_SESSION_NOT_FOUND
        if epoch == FINAL_EPOCH:
            return session, E.NONE
        if epoch != session.next_epoch:
            return None, E.INVALID_SHARE_SESSION_EPOCH
        session.next_epoch = 1 if epoch == 2147483647 else epoch + 1
        return session, E.NONE

    def _topic_name(self, topic_id) -> str | None:
        return self.broker.data.topic_ids.name_of(topic_id)

    def _acknowledge(self, group_id: str, member_id: str, topic: str | None, partition: int,
                     batches: list[dict], version: int = 1, renew_ack: bool = False) -> int:
        """Apply one partition's acknowledgement batches; the partition's acknowledge error code."""
        if malformed_batches(batches, version, renew_ack):
            return E.INVALID_REQUEST
        if topic is None:
            return E.UNKNOWN_TOPIC_ID
        sp = self.partitions.get((group_id, topic, partition))
        if sp is None:
            return self._load_failures.get((group_id, topic, partition), E.INVALID_RECORD_STATE) if self.zk \
                else E.INVALID_RECORD_STATE
        code = E.NONE
        now = now_ms()
        sp.expire_locks(now)
        renew_enabled = self._renew_enabled(group_id)
        for batch in batches:
            if not renew_enabled and RENEW in batch["acknowledge_types"]:
                code = E.INVALID_RECORD_STATE  # "Renewing acquisition locks is not enabled for the group."
                continue
            try:
                sp.acknowledge(member_id, batch["first_offset"], batch["last_offset"],
                               list(batch["acknowledge_types"]), now)
            except InvalidRecordState:
                code = E.INVALID_RECORD_STATE
        self.broker.notify_data()  # released records may be acquired by a waiting fetch
        return code

    def _refused_group(self, request, group_id: str) -> dict | None:
        """The answer to a ShareFetch or ShareAcknowledge without a group id (INVALID_REQUEST)
        or without READ on its group; None when it may go on."""
        if group_id and self.broker.guard.allows(request, acls.READ, acls.GROUP, group_id):
            return None
        code = E.GROUP_AUTHORIZATION_FAILED if group_id else E.INVALID_REQUEST
        return {"throttle_time_ms": 0, "error_code": code, "responses": []}

    async def share_fetch(self, request) -> dict:
        body = request.body
        version = request.api_version
        group_id, member_id = body["group_id"], body["member_id"] or ""
        epoch = body["share_session_epoch"]
        refused = self._refused_group(request, group_id)
        if refused is not None:
            return refused
        guard = self.broker.guard
        renew_ack = version >= 2 and body.get("is_renew_ack", False)
        if renew_ack:  # a fetch that only renews locks takes no records: its limits must all be 0
            wrong = "".join(f"{label} must be set to 0, " for field, label in RENEW_ACK_ZERO if body[field] != 0)
            if wrong:  # Kafka logs the reason; its error answer carries no message
                api_log.error("%sif isRenewAck is true.", wrong)
                return {"throttle_time_ms": 0, "error_code": E.INVALID_REQUEST, "responses": []}
        session, code = self._session(group_id, member_id, epoch)
        if code != E.NONE:
            return {"throttle_time_ms": 0, "error_code": code, "responses": []}
        lock_ms = self._config(group_id, "share.record.lock.duration.ms")
        names = {t["topic_id"]: self._topic_name(t["topic_id"]) for t in body["topics"]}
        if self.zk:
            wanted = {(t["topic_id"], p["partition_index"]) for t in body["topics"] for p in t["partitions"]}
            if epoch == INITIAL_EPOCH:
                self._recheck_idle(group_id, wanted, names)
            await self._load_all(group_id, wanted | set(session.partitions))
        readable = (guard.allowed_names(request, acls.READ, acls.TOPIC, {n for n in names.values() if n})
                    if guard.enabled else None)
        answers: dict[tuple[uuid.UUID, int], dict] = {}

        def answer(topic_id, partition: int) -> dict:
            key = (topic_id, partition)
            if key not in answers:
                answers[key] = {"partition_index": partition, "error_code": E.NONE, "acknowledge_error_code": E.NONE,
                                "current_leader": {"leader_id": self.broker.node_id, "leader_epoch": 0},
                                "records": b"", "acquired_records": []}
            return answers[key]

        for topic in body["topics"]:
            name = names[topic["topic_id"]]
            for p in topic["partitions"]:
                part = answer(topic["topic_id"], p["partition_index"])
                if readable is not None and name is not None and name not in readable:
                    part["error_code"] = E.TOPIC_AUTHORIZATION_FAILED
                    continue
                if p["acknowledgement_batches"]:
                    part["acknowledge_error_code"] = self._acknowledge(group_id, member_id, name, p["partition_index"],
                                                                        p["acknowledgement_batches"], version,
                                                                        renew_ack)
                if epoch != FINAL_EPOCH:
                    session.partitions[(topic["topic_id"], p["partition_index"])] = None
        for forgotten in body["forgotten_topics_data"]:
            for p in forgotten["partitions"]:
                session.partitions.pop((forgotten["topic_id"], p), None)
        closed = None
        if epoch == FINAL_EPOCH:  # the member is done: what it still holds goes back
            closed = await self._close_session(group_id, member_id)
        else:
            max_records = body["max_records"] if version >= 1 and body["max_records"] > 0 else 500
            # the session's partitions named in earlier requests are read too: check them all
            for topic_id, _ in session.partitions:
                if topic_id not in names:
                    names[topic_id] = self._topic_name(topic_id)
            if guard.enabled:
                readable = guard.allowed_names(request, acls.READ, acls.TOPIC, {n for n in names.values() if n})
            # each request starts at the next partition, so that none starves behind max_records
            order = list(session.partitions)
            session.partitions = dict.fromkeys(order[1:] + order[:1])
            if not renew_ack:  # Kafka answers a renewing fetch's acknowledgements only
                await self._acquire(request, session, answer, names, readable, max_records, max(body["max_wait_ms"], 0),
                                    min(body["max_bytes"], self.broker.data.fetch_max_bytes))
        if epoch == INITIAL_EPOCH:
            for topic_id, p in session.partitions:
                answer(topic_id, p)
        unwritten = await self._persist_now() if closed is None else closed
        for topic in body["topics"]:  # acknowledgements not made durable are answered with the write's error
            for p in topic["partitions"]:
                code = unwritten.get((group_id, names.get(topic["topic_id"]), p["partition_index"]))
                if code and p["acknowledgement_batches"]:
                    part = answer(topic["topic_id"], p["partition_index"])
                    if part["acknowledge_error_code"] == E.NONE:
                        part["acknowledge_error_code"] = code
        by_topic: dict = {}
        for (topic_id, _), part in answers.items():
            by_topic.setdefault(topic_id, []).append(part)
        return {"throttle_time_ms": 0, "error_code": E.NONE, "acquisition_lock_timeout_ms": lock_ms,
                "responses": [{"topic_id": t, "partitions": ps} for t, ps in by_topic.items()],
                "node_endpoints": self.broker.data.node_endpoints(request, [self.broker.node_id]) if answers else []}

    async def _acquire(self, request, session: ShareSession, answer, names: dict, readable, max_records: int,
                       max_wait_ms: int, max_bytes: int) -> None:
        """Acquire records of the session's partitions for the member, waiting up to max_wait_ms
        for some to become available (appended, released, or their locks timed out)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max_wait_ms / 1000.0
        while True:
            got, failed = self._acquire_once(session, answer, names, readable, max_records, max_bytes)
            remaining = deadline - loop.time()
            # a partition's error is an answer too, as in Kafka's DelayedShareFetch, and a request
            # that can take no bytes never gets more by waiting
            if got or failed or remaining <= 0 or not session.partitions or max_bytes <= 0:
                return
            await self.broker.wait_for_data(min(remaining, RECHECK_SECONDS * 4))

    def _acquire_once(self, session: ShareSession, answer, names: dict, readable, max_records: int,
                      max_bytes: int) -> tuple[int, int]:
        """(records acquired, partitions answered with an error)."""
        total = failed = 0
        now = now_ms()
        for topic_id, partition in list(session.partitions):
            if total >= max_records or max_bytes <= 0:
                break
            name = names.get(topic_id) or self._topic_name(topic_id)
            if name is None:
                answer(topic_id, partition)["error_code"] = E.UNKNOWN_TOPIC_ID
                failed += 1
                continue
            if readable is not None and name not in readable:
                continue
            state = self.broker.data.replica_state(name, partition)
            if state is not None and state.leader != self.broker.node_id:  # ZooKeeper mode: another leads it
                self._unload((session.group_id, name, partition))
                part = answer(topic_id, partition)
                part["error_code"] = E.NOT_LEADER_OR_FOLLOWER
                part["current_leader"] = {"leader_id": state.leader, "leader_epoch": max(state.leader_epoch, 0)}
                failed += 1
                continue
            try:
                plog = self.broker.data.log(name, partition)
                sp = self._share_partition(session.group_id, name, partition)
            except KafkaError as exc:
                answer(topic_id, partition)["error_code"] = exc.code
                failed += 1
                continue
            sp.expire_locks(now)
            sp.move_start(plog.log_start_offset)
            data, acquired = self._read_and_acquire(plog, sp, session.member_id, max_records - total, max_bytes, now)
            if acquired:
                part = answer(topic_id, partition)
                part["records"] = data
                part["acquired_records"] = [{"first_offset": f, "last_offset": l, "delivery_count": c}
                                            for f, l, c in acquired]
                total += sum(l - f + 1 for f, l, _ in acquired)
                max_bytes -= len(data)
        return total, failed

    @staticmethod
    def _read_and_acquire(plog, sp: SharePartition, member_id: str, max_records: int, max_bytes: int, now: int):
        """Read the log from the share-partition's next fetch offset and acquire what is free;
        (the batches holding acquired records, joined; the AcquiredRecords runs)."""
        if sp.acquired_count() >= sp.max_record_locks:
            return b"", []  # every lock taken: nothing to acquire, no need to read
        position = sp.next_fetch_offset()
        end = plog.log_end_offset
        kept: list[bytes] = []
        acquired: list[tuple[int, int, int]] = []
        size = 0
        while position < end and max_records > 0 and size < max_bytes:
            try:
                data, _, end = plog.read_with_offsets(position, min(READ_CHUNK, max_bytes - size), min_one=True)
            except KafkaError:
                break
            if not data:
                break
            view = memoryview(data)
            next_position = position
            for pos, header in records.iter_batches(view):
                next_position = header.next_offset
                if header.attributes & CONTROL_BIT or header.last_offset < position:
                    continue
                offsets = range(max(header.base_offset, position), header.last_offset + 1)
                runs = sp.acquire(member_id, offsets, max_records, now)
                if runs:
                    kept.append(bytes(view[pos:pos + header.size]))
                    size += header.size
                    acquired.extend(runs)
                    max_records -= sum(l - f + 1 for f, l, _ in runs)
                if max_records <= 0 or size >= max_bytes:
                    break
            if next_position <= position:
                break
            position = next_position  # the records read were held or done: read on
        return b"".join(kept), _merge(acquired)

    async def share_acknowledge(self, request) -> dict:
        body = request.body
        group_id, member_id = body["group_id"], body["member_id"] or ""
        epoch = body["share_session_epoch"]
        refused = self._refused_group(request, group_id)
        if refused is not None:
            return refused
        guard = self.broker.guard
        if epoch == INITIAL_EPOCH:  # acknowledging needs an open session
            return {"throttle_time_ms": 0, "error_code": E.INVALID_SHARE_SESSION_EPOCH, "responses": []}
        session, code = self._session(group_id, member_id, epoch)
        if code != E.NONE:
            return {"throttle_time_ms": 0, "error_code": code, "responses": []}
        if self.zk:
            await self._load_all(group_id, {(t["topic_id"], p["partition_index"]) for t in body["topics"]
                                            for p in t["partitions"]})
        responses = []
        for topic in body["topics"]:
            name = self._topic_name(topic["topic_id"])
            parts = []
            for p in topic["partitions"]:
                if guard.enabled and name is not None and not guard.allows(request, acls.READ, acls.TOPIC, name):
                    code = E.TOPIC_AUTHORIZATION_FAILED
                else:
                    code = self._acknowledge(group_id, member_id, name, p["partition_index"],
                                             p["acknowledgement_batches"], request.api_version,
                                             request.api_version >= 2 and body.get("is_renew_ack", False))
                parts.append({"partition_index": p["partition_index"], "error_code": code,
                              "current_leader": {"leader_id": self.broker.node_id, "leader_epoch": 0},
                              "_key": (group_id, name, p["partition_index"])})
            responses.append({"topic_id": topic["topic_id"], "partitions": parts})
        if epoch == FINAL_EPOCH:
            unwritten = await self._close_session(group_id, member_id)
        else:
            unwritten = await self._persist_now()
        for topic in responses:  # acknowledgements not made durable are answered with the write's error
            for part in topic["partitions"]:
                code = unwritten.get(part.pop("_key"))
                if code and part["error_code"] == E.NONE:
                    part["error_code"] = code
        return {"throttle_time_ms": 0, "error_code": E.NONE,
                "acquisition_lock_timeout_ms": self._config(group_id, "share.record.lock.duration.ms"),
                "responses": responses,
                "node_endpoints": self.broker.data.node_endpoints(request, [self.broker.node_id])}

    # ------------------------------------------------------------------ ShareGroupDescribe
    async def describe(self, request) -> dict:
        body = request.body
        guard = self.broker.guard
        ids = None
        out = []
        self.saved  # noqa: B018 (the stored groups first)
        for gid in body["group_ids"]:
            entry = {"group_id": gid, "error_code": E.NONE, "group_state": "", "group_epoch": 0,
                     "assignment_epoch": 0, "assignor_name": "", "members": [],
                     "authorized_operations": INT32_MIN}
            if not guard.allows(request, acls.DESCRIBE, acls.GROUP, gid):
                out.append({**entry, "error_code": E.GROUP_AUTHORIZATION_FAILED})
                continue
            not_ours = self.coordinator_error(gid)
            if not_ours:
                out.append({**entry, "error_code": not_ours})
                continue
            group = self.groups.get(gid)
            if group is None:
                other = self.broker.groups.listed_groups().get(gid)
                message = (f"Group {gid} is not a share group." if other is not None
                           else f"Group {gid} not found.")
                out.append({**entry, "error_code": E.GROUP_ID_NOT_FOUND, "error_message": message})
                continue
            if ids is None:
                ids = topic_ids_by_name(self.broker.data.topic_ids)
            members = []
            for m in group.members.values():
                by_topic: dict[str, list[int]] = {}
                for topic, p in m.assignment:
                    by_topic.setdefault(topic, []).append(p)
                members.append({"member_id": m.member_id, "rack_id": m.rack_id, "member_epoch": m.epoch,
                                "client_id": m.client_id, "client_host": m.client_host,
                                "subscribed_topic_names": m.subscribed,
                                "assignment": {"topic_partitions": [
                                    {"topic_id": ids[t], "topic_name": t, "partitions": ps}
                                    for t, ps in sorted(by_topic.items()) if t in ids]}})
            operations = INT32_MIN
            if body["include_authorized_operations"]:
                operations = guard.operations(request, acls.GROUP, gid) if guard.enabled \
                    else GROUP_AUTHORIZED_OPERATIONS
            out.append({**entry, "group_state": group.state, "group_epoch": group.group_epoch,
                        "assignment_epoch": group.assignment_epoch, "assignor_name": ASSIGNOR_NAME,
                        "members": members, "authorized_operations": operations})
        return {"throttle_time_ms": 0, "groups": out}

    # ------------------------------------------------------------------ DescribeShareGroupOffsets
    async def describe_offsets(self, request) -> dict:
        """Each share-partition's start offset and lag (v1): the records at or past the start
        offset not yet acknowledged or archived, up to the log end."""
        guard = self.broker.guard
        out = []
        for wanted in request.body["groups"]:
            gid = wanted["group_id"]
            entry = {"group_id": gid, "error_code": E.NONE, "topics": []}
            if not guard.allows(request, acls.DESCRIBE, acls.GROUP, gid):
                out.append({**entry, "error_code": E.GROUP_AUTHORIZATION_FAILED,
                            "error_message": "Group authorization failed."})
                continue
            not_ours = self.coordinator_error(gid)
            if not_ours:
                out.append({**entry, "error_code": not_ours, "error_message": "This is not the correct coordinator."})
                continue
            self._take_saved(gid)
            known = sorted((t, p) for g, t, p in self.partitions if g == gid)
            if self.zk:  # the states are the share coordinators': any topic's partition may have one
                known = [(t, p) for t in self.broker.engine.list_topics() if not topic_names.is_internal(t)
                         for p in range(self._partition_count(t))]
            if wanted["topics"] is None:  # every partition the group has state of
                asked: dict[str, list[int]] = {}
                for topic, p in known:
                    asked.setdefault(topic, []).append(p)
            else:
                asked = {t["topic_name"]: list(t["partitions"]) for t in wanted["topics"]}
            readable = (guard.allowed_names(request, acls.DESCRIBE, acls.TOPIC, set(asked))
                        if guard.enabled else set(asked))
            for topic, partitions in asked.items():
                if topic not in readable:
                    continue
                try:
                    topic_id = self.broker.data.topic_ids.uuid_of(self.broker.engine.topic(topic).topic_id)
                except (KafkaError, ValueError):
                    entry["topics"].append({"topic_name": topic, "topic_id": uuid.UUID(int=0), "partitions": [
                        {"partition_index": p, "start_offset": -1, "leader_epoch": -1, "lag": -1,
                         "error_code": E.UNKNOWN_TOPIC_OR_PARTITION,
                         "error_message": "This server does not host this topic-partition."}
                        for p in partitions]})
                    continue
                rows = []
                for p in partitions:
                    if self.zk:
                        row = await self._offsets_row(gid, topic, topic_id, p)
                        if row is not None or wanted["topics"] is not None:
                            rows.append(row or {"partition_index": p, "start_offset": -1, "leader_epoch": -1,
                                                "lag": -1})
                        continue
                    sp = self.partitions.get((gid, topic, p))
                    if sp is None or not sp.written:  # no state written yet: Kafka shows "-"
                        rows.append({"partition_index": p, "start_offset": -1, "leader_epoch": -1, "lag": -1})
                        continue
                    rows.append({"partition_index": p, "start_offset": sp.stored_start, "leader_epoch": 0,
                                 "lag": self._lag(topic, p, sp)})
                if rows or not self.zk or wanted["topics"] is not None:
                    entry["topics"].append({"topic_name": topic, "topic_id": topic_id, "partitions": rows})
            out.append(entry)
        return {"throttle_time_ms": 0, "groups": out}

    def _partition_count(self, topic: str) -> int:
        try:
            return self.broker.engine.topic(topic).partitions
        except KafkaError:
            return 0

    async def _offsets_row(self, group_id: str, topic: str, topic_id: uuid.UUID, partition: int) -> dict | None:
        """ZooKeeper mode: a partition's start offset and lag from its share coordinator's
        summary (Kafka's ReadShareGroupStateSummary), None when it has no state. The lag is
        counted to this broker's copy of the log (its high watermark)."""
        summary = await self.persister.call(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, group_id, topic_id,
                                            {"partition": partition, "leader_epoch": 0})
        if summary["error_code"] != E.NONE or summary.get("start_offset", -1) < 0:
            return None
        start = summary["start_offset"]
        try:
            end = self.broker.replication.high_watermark((topic, partition),
                                                         self.broker.data.log(topic, partition).log_end_offset)
        except KafkaError:
            return {"partition_index": partition, "start_offset": start, "leader_epoch": 0, "lag": -1}
        done = max(summary.get("delivery_complete_count", -1), 0)
        return {"partition_index": partition, "start_offset": start, "leader_epoch": summary.get("leader_epoch", 0),
                "lag": end - start - done}

    def _take_saved(self, group_id: str) -> None:
        """Bring the group's stored share-partitions (from before a restart) into memory."""
        for gid, topic_id, partition in [k for k in self.saved if k[0] == group_id]:
            name = self._topic_name(topic_id)
            if name is None:  # the topic is gone
                self.saved.pop((gid, topic_id, partition), None)
                continue
            try:
                self._share_partition(gid, name, partition)
            except KafkaError:
                self.saved.pop((gid, topic_id, partition), None)

    def _lag(self, topic: str, partition: int, sp: SharePartition) -> int:
        try:
            end = self.broker.data.log(topic, partition).log_end_offset
        except KafkaError:
            return -1
        # not clamped at 0: a start offset altered past the log end shows a negative lag, as Kafka's
        return end - sp.start_offset - sp.done_in_flight()

    # ------------------------------------------------------------------ upkeep
    async def tick(self) -> None:
        """Members past their session timeout are removed; timed-out record locks released."""
        now = now_ms()
        for group in list(self.groups.values()):
            timeout = self._config(group.group_id, "share.session.timeout.ms")
            for member in [m for m in group.members.values() if now - m.last_seen_ms > timeout]:
                log.info("[GroupCoordinator 0]: Member %s in share group %s has been removed (session timeout)",
                         member.member_id, group.group_id)
                self._remove_member(group, member.member_id)
        if self.zk:  # data partitions another broker leads now: its share-partitions are that leader's
            for key in list(self.partitions):
                state = self.broker.data.replica_state(key[1], key[2])
                if state is None or state.leader != self.broker.node_id:
                    self._unload(key)
        if [sp for sp in list(self.partitions.values()) if sp.expire_locks(now)]:
            self.broker.notify_data()
        if self.zk:  # in the background: a share coordinator moving must not hold the broker's upkeep
            if not any(t.get_name() == "share-persist" for t in self._background):
                task = asyncio.get_running_loop().create_task(self._persist_zk(), name="share-persist")
                self._background.add(task)
                task.add_done_callback(self._background.discard)
        else:
            self._persist()

    async def _persist_now(self) -> dict:
        """The changed share-partitions' states written (ZooKeeper mode: to their share
        coordinators, waited for, as Kafka's SharePartition waits for its persister's write
        before it answers the acknowledgements)."""
        if self.zk:
            return await self._persist_zk()
        self._persist()
        return {}

    def _persist(self) -> None:
        """Write to __share_group_state each share-partition that changed since last written."""
        if self.zk:
            return  # (_persist_zk's: the state is the share coordinator's)
        for key, sp in list(self.partitions.items()):
            if sp.changes == self._persisted.get(key, 0):
                continue
            try:
                self.store.write(key[0], self._ids[key], key[2], sp)
                self._persisted[key] = sp.changes
            except (KafkaError, OSError) as exc:
                log.warning("Cannot write the state of share-partition %s:%s-%d: %s", *key, exc)

    # ------------------------------------------------------------------ ZooKeeper mode: the persister
    def _unload(self, key: tuple[str, str, int]) -> None:
        """This broker no longer leads the data partition (or its state was fenced): the
        share-partition goes; the next leader reads it from the share coordinator."""
        if self.partitions.pop(key, None) is not None:
            log.info("[SharePartitionManager %d]: Removed share-partition %s:%s-%d", self.broker.node_id, *key)
        for table in (self._persisted, self._loaded_epochs, self._state_epochs):
            table.pop(key, None)

    def _recheck_idle(self, group_id: str, wanted, names: dict) -> None:
        """A new share session: share-partitions holding no records and nothing unwritten are
        read again from their share coordinator at their next use, so that offsets altered or
        deleted meanwhile (the group was empty then) take effect."""
        for topic_id, partition in wanted:
            key = (group_id, names.get(topic_id), partition)
            sp = self.partitions.get(key)
            if sp is not None and sp.acquired_count() == 0 and sp.changes == self._persisted.get(key, 0):
                self._loaded_epochs.pop(key, None)

    async def _load_all(self, group_id: str, partitions) -> None:
        for topic_id, partition in sorted(partitions, key=lambda tp: (str(tp[0]), tp[1])):
            name = self._topic_name(topic_id)
            if name is None:
                continue
            key = (group_id, name, partition)
            code = await self._load_zk(group_id, topic_id, name, partition)
            if code == E.NONE:
                self._load_failures.pop(key, None)
            else:
                self._load_failures[key] = code

    async def _load_zk(self, group_id: str, topic_id: uuid.UUID, name: str, partition: int) -> int:
        """Set the share-partition up from its share coordinator's state, once per leader epoch
        of the data partition (Kafka's SharePartition initialization: ReadShareGroupState, and
        InitializeShareGroupState at `share.auto.offset.reset` when there is none yet); the
        error to answer for the partition when that fails."""
        key = (group_id, name, partition)
        state = self.broker.data.replica_state(name, partition)
        if state is None or state.leader != self.broker.node_id:
            self._unload(key)
            return E.NOT_LEADER_OR_FOLLOWER
        epoch = max(state.leader_epoch, 0)
        if key in self.partitions and self._loaded_epochs.get(key) == epoch:
            return E.NONE
        async with self._key_locks.setdefault(key, asyncio.Lock()):
            if key in self.partitions and self._loaded_epochs.get(key) == epoch:
                return E.NONE
            self._unload(key)
            read = await self.persister.call(ApiKey.READ_SHARE_GROUP_STATE, group_id, topic_id,
                                             {"partition": partition, "leader_epoch": epoch})
            code = read["error_code"]
            uninitialized = code == E.INVALID_REQUEST and "uninitialized" in (read.get("error_message") or "")
            if code == E.NONE and read["start_offset"] >= 0:
                value = ShareStateValue(read["start_offset"], [
                    (b["first_offset"], b["last_offset"], b["delivery_count"],
                     STATE_NAMES.get(b["delivery_state"], "Available")) for b in read["state_batches"]])
                sp = SharePartition(value.start_offset)
                self.store.restore(value, sp)
                sp.restored(value.start_offset)
                state_epoch = read["state_epoch"]
            elif code == E.NONE or uninitialized:
                try:
                    sp = SharePartition(self._reset_start(group_id, name, partition))
                except KafkaError as exc:
                    return exc.code
                state_epoch = read.get("state_epoch", 0) if code == E.NONE else 0
                if uninitialized:
                    init = await self.persister.call(ApiKey.INITIALIZE_SHARE_GROUP_STATE, group_id, topic_id,
                                                     {"partition": partition, "state_epoch": state_epoch,
                                                      "start_offset": sp.start_offset})
                    if init["error_code"] != E.NONE:
                        return _persister_error(init["error_code"])
                else:
                    sp.changes = 1  # a state without a start offset: write the one chosen now
            else:
                return _persister_error(code)
            now_state = self.broker.data.replica_state(name, partition)
            if now_state is None or now_state.leader != self.broker.node_id or max(now_state.leader_epoch, 0) != epoch:
                return E.NOT_LEADER_OR_FOLLOWER  # moved meanwhile
            self.partitions[key] = sp
            self._ids[key] = topic_id
            self._loaded_epochs[key] = epoch
            self._state_epochs[key] = state_epoch
            self._persisted[key] = 0  # (a state without a start offset has changes=1: written next)
        log.info("[SharePartitionManager %d]: Share-partition %s:%s-%d initialized at leader epoch %d, start "
                 "offset %d", self.broker.node_id, group_id, name, partition, epoch, sp.start_offset)
        return E.NONE

    def _reset_start(self, group_id: str, topic: str, partition: int) -> int:
        """Where a share-partition without state starts: the group's share.auto.offset.reset."""
        plog = self.broker.data.log(topic, partition)
        policy = self._reset_policy(group_id).strip().lower()
        if policy.startswith("by_duration:"):
            return self._offset_for_duration(plog, policy.split(":", 1)[1])
        return plog.log_start_offset if policy == "earliest" else plog.log_end_offset

    async def _persist_zk(self) -> dict:
        """{key: error} of the share-partitions whose state could not be written (tried again
        at the next change or tick)."""
        failed = {}
        for key, sp in list(self.partitions.items()):
            if sp.changes == self._persisted.get(key, 0):
                continue
            async with self._key_locks.setdefault(key, asyncio.Lock()):
                if self.partitions.get(key) is not sp or sp.changes == self._persisted.get(key, 0):
                    continue  # unloaded, or written meanwhile
                changes, start_now = sp.changes, sp.start_offset
                start, batches, done = sp.stored_state(with_acquired=False)
                written = await self.persister.call(ApiKey.WRITE_SHARE_GROUP_STATE, key[0], self._ids[key], {
                    "partition": key[2], "state_epoch": self._state_epochs.get(key, 0),
                    "leader_epoch": self._loaded_epochs.get(key, 0), "start_offset": start,
                    "delivery_complete_count": done,
                    "state_batches": [{"first_offset": f, "last_offset": l, "delivery_count": c,
                                       "delivery_state": STATE_CODES[st]} for f, l, c, st in batches]})
                code = written["error_code"]
                if code == E.NONE:
                    self._persisted[key] = changes
                    sp.stored(start, start_now)
                    continue
                failed[key] = _persister_error(code)
                if code in (E.FENCED_LEADER_EPOCH, E.FENCED_STATE_EPOCH):
                    self._unload(key)  # a newer leader or a reset of the offsets took the state over
                else:  # written again at the next change or tick
                    log.debug("Cannot write the state of share-partition %s:%s-%d: %s", *key, E.error_name(code))
        return failed

    # ------------------------------------------------------------------ DeleteGroups
    def has(self, group_id: str) -> bool:
        self.saved  # noqa: B018 (the stored groups first)
        return group_id in self.groups

    def delete(self, group_id: str) -> int:
        """DeleteGroups of a share group: refused while it has members; else the group and
        its share-partitions' stored state go (tombstones in __share_group_state)."""
        group = self.groups.get(group_id)
        if group is None:
            return E.GROUP_ID_NOT_FOUND
        if group.members:
            return E.NON_EMPTY_GROUP
        self._take_saved(group_id)
        if self.zk:  # the states are the share coordinators': deleted there, in the background
            for key in [k for k in self.partitions if k[0] == group_id]:
                self._unload(key)
            del self.groups[group_id]
            task = asyncio.get_running_loop().create_task(self._delete_states_zk(group_id))
            self._background.add(task)
            task.add_done_callback(self._background.discard)
            return E.NONE
        try:
            for key in [k for k in self.partitions if k[0] == group_id]:
                if self.partitions[key].written:
                    self.store.delete(group_id, self._ids[key], key[2])
                del self.partitions[key]
                self._persisted.pop(key, None)
        except (KafkaError, OSError) as exc:
            log.warning("Failed to delete share group %s: %s", group_id, exc)
            return E.COORDINATOR_NOT_AVAILABLE
        del self.groups[group_id]
        log.info("[GroupCoordinator %d]: Share group %s deleted", self.broker.node_id, group_id)
        return E.NONE

    async def _delete_states_zk(self, group_id: str) -> None:
        """A deleted share group's states, at every share coordinator that has one (Kafka's
        DeleteShareGroupState for the group's initialized partitions)."""
        ids = topic_ids_by_name(self.broker.data.topic_ids)
        for topic in self.broker.engine.list_topics():
            if topic_names.is_internal(topic) or topic not in ids:
                continue
            for partition in range(self._partition_count(topic)):
                done = await self.persister.call(ApiKey.DELETE_SHARE_GROUP_STATE, group_id, ids[topic],
                                                 {"partition": partition})
                if done["error_code"] != E.NONE:
                    log.warning("Cannot delete the state of share-partition %s:%s-%d: %s", group_id, topic,
                                partition, E.error_name(done["error_code"]))

    def close(self) -> None:
        for task in self._background:
            task.cancel()
        self.persister.close()

    def topic_deleted(self, topic: str) -> None:
        for key in [k for k in self.partitions if k[1] == topic]:
            del self.partitions[key]
            self._persisted.pop(key, None)


def malformed_batches(batches: list[dict], version: int, renew_ack: bool) -> bool:
    """KafkaApis.validateAcknowledgementBatches: batches out of order or overlapping, a batch
    without types or with a type count that is neither 1 nor its length, a type past REJECT
    (past RENEW from v2 on), a RENEW in a request not flagged is_renew_ack. Any of these answers
    the partition INVALID_REQUEST and applies none of its batches."""
    highest = RENEW if version >= 2 else RENEW - 1
    previous_end = -1
    for batch in batches:
        first, last, types = batch["first_offset"], batch["last_offset"], batch["acknowledge_types"]
        if first > last or first < previous_end or not types:
            return True
        if len(types) > 1 and last - first != len(types) - 1:
            return True
        if any(t < 0 or t > highest for t in types) or (RENEW in types and not renew_ack):
            return True
        previous_end = last
    return False


def _persister_error(code: int) -> int:
    """A share coordinator's error as a share-partition's fetch answers it: the coordinator
    moving or unreachable is COORDINATOR_NOT_AVAILABLE (the consumer tries again), a fenced
    leader epoch NOT_LEADER_OR_FOLLOWER."""
    if code in (E.NOT_COORDINATOR, E.COORDINATOR_NOT_AVAILABLE, E.COORDINATOR_LOAD_IN_PROGRESS, E.REQUEST_TIMED_OUT):
        return E.COORDINATOR_NOT_AVAILABLE
    if code in (E.FENCED_LEADER_EPOCH, E.FENCED_STATE_EPOCH):
        return E.NOT_LEADER_OR_FOLLOWER
    return code


def _merge(runs: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    out: list[tuple[int, int, int]] = []
    for first, last, count in runs:
        if out and out[-1][1] == first - 1 and out[-1][2] == count:
            out[-1] = (out[-1][0], last, count)
        else:
            out.append((first, last, count))
    return out


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)([DHMS])", re.I)


def _duration_ms(text: str) -> int:
    """Milliseconds of an ISO-8601 duration as group_config.py accepts it (PnDTnHnMn.nS)."""
    date, _, clock = text.upper().lstrip("P").partition("T")
    units = {"D": 86400000}
    total = 0.0
    for amount, unit in _DURATION_PART.findall(date):
        total += float(amount) * units.get(unit, 0)
    for amount, unit in _DURATION_PART.findall(clock):
        total += float(amount) * {"H": 3600000, "M": 60000, "S": 1000}[unit]
    return int(total)
