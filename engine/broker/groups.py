"""The group coordinator's request handlers, one coroutine per API: FindCoordinator, the
classic protocol's JoinGroup, SyncGroup, Heartbeat and LeaveGroup, OffsetCommit, OffsetFetch,
ListGroups, DescribeGroups, DeleteGroups, OffsetDelete, KIP-848's ConsumerGroupHeartbeat
and ConsumerGroupDescribe, and KIP-1071's StreamsGroupHeartbeat and StreamsGroupDescribe
(docs/protocol.md says what each version adds).

Classic groups, their state machine, timers and durable records are group_state.py's
`ClassicGroups`; consumer-protocol groups are consumer_group_848.py's `ConsumerGroups`,
streams groups streams_groups.py's `StreamsGroups` (one group id space: a group is one
kind). A handler reads the request, asks them, and shapes the answer. A JoinGroup or
SyncGroup answer may be parked there until the group moves on: since the server answers one
connection's requests strictly in order, a parked request blocks only its own connection, as
in Kafka.
"""

from __future__ import annotations

import asyncio
import logging

from .. import acls
from .. import consumer_offsets as codec
from .. import transaction_log as tlog
from .. import topic_names, validation
from ..errors import KafkaError
from ..offsets import CommittedOffset
from ..protocol import ApiKey
from ..protocol import errors as E
from ..topic_names import GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC
from . import features
from .consumer_group_848 import ConsumerGroups
from .group_state import (COMPLETING_REBALANCE, CONSUMER_PROTOCOL_TYPE, DEAD, EMPTY, PREPARING_REBALANCE,
                          STABLE, ClassicGroups, append_error, client_host, join_error, named_topics, now_ms, resolve,
                          sync_answer, topic_ids_by_name)
from .streams_groups import StreamsGroups
from .topic_ids import TopicIds

log = logging.getLogger("kafka.coordinator.group.GroupCoordinator")

OFFSET_METADATA_MAX_BYTES = 4096            # offset.metadata.max.bytes
# Authorized operations on a group with no authorizer: READ(3), DELETE(6), DESCRIBE(8),
# DESCRIBE_CONFIGS(10), ALTER_CONFIGS(11) (Kafka 4's groups have configs).
GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11)
INT32_MIN = -2147483648
CLASSIC_GROUP_TYPE = "classic"
COORDINATOR_GROUP, COORDINATOR_TRANSACTION, COORDINATOR_SHARE = 0, 1, 2  # FindCoordinator key types
NOT_COORDINATOR_MESSAGE = "This is not the correct coordinator."
# StreamsGroupDescribe v1's topology_description_status when a description is asked for and none is kept
TOPOLOGY_DESCRIPTION_NOT_STORED = 1
NO_NODE = {"node_id": -1, "host": "", "port": -1}
INVALID_REQUEST_MESSAGE = ("This most likely occurs because of a request being malformed by the client library "
                           "or the message was sent to an incompatible broker. See the broker logs for more details.")


class GroupHandlers:
    def __init__(self, broker):
        self.broker = broker
        self.coordinator = ClassicGroups(broker)
        self.groups = self.coordinator.groups  # the same dict: groups in memory, by id
        self.topic_ids = TopicIds(broker.engine)
        self.consumer = ConsumerGroups(broker, self.coordinator, self.topic_ids)  # KIP-848 groups
        self.streams = StreamsGroups(broker, self.coordinator)  # KIP-1071 groups
        consumer_lookup = self.coordinator.modern_groups  # (offset commits and fetches ask either)
        self.coordinator.modern_groups = lambda gid: consumer_lookup(gid) or self.streams.get(gid)
        for key, handler in (
            (ApiKey.FIND_COORDINATOR, self.find_coordinator),
            (ApiKey.JOIN_GROUP, self.join_group),
            (ApiKey.SYNC_GROUP, self.sync_group),
            (ApiKey.HEARTBEAT, self.heartbeat),
            (ApiKey.LEAVE_GROUP, self.leave_group),
            (ApiKey.OFFSET_COMMIT, self.offset_commit),
            (ApiKey.OFFSET_FETCH, self.offset_fetch),
            (ApiKey.LIST_GROUPS, self.list_groups),
            (ApiKey.DESCRIBE_GROUPS, self.describe_groups),
            (ApiKey.DELETE_GROUPS, self.delete_groups),
            (ApiKey.OFFSET_DELETE, self.offset_delete),
            (ApiKey.CONSUMER_GROUP_HEARTBEAT, self.consumer_group_heartbeat),
            (ApiKey.CONSUMER_GROUP_DESCRIBE, self.consumer_group_describe),
            (ApiKey.STREAMS_GROUP_HEARTBEAT, self.streams_group_heartbeat),
            (ApiKey.STREAMS_GROUP_DESCRIBE, self.streams_group_describe),
        ):
            broker.register(key, handler)
        broker.leadership_listeners.append(self.on_leadership)

    # ================================================================== moving coordinators
    def on_leadership(self, topic: str, partition: int, leader: bool) -> None:
        """This broker starts or stops leading a `__consumer_offsets` partition (ZooKeeper mode):
        its groups are unloaded, or read again from the partition's log start (lazily: a group
        comes back Empty, with its generation and offsets, at its first request)."""
        if topic != GROUP_METADATA_TOPIC:
            return
        where = f"{GROUP_METADATA_TOPIC}-{partition}"
        if leader:
            self.coordinator.forget_partition(partition)
            self.consumer.load_partition(partition)
            log.info("[GroupCoordinator %d]: Elected as the group coordinator for partition %d; groups and "
                     "offsets of %s are read from its log", self.broker.node_id, partition, where)
        else:
            gone = self.coordinator.unload(partition) + self.consumer.unload(partition)
            log.info("[GroupCoordinator %d]: Resigned as the group coordinator for partition %d: unloaded %s, "
                     "removed %d cached groups", self.broker.node_id, partition, where, gone)

    def topic_deleted(self, topic: str) -> None:
        """ZooKeeper mode: tombstone every group's committed offsets of a deleted topic in the
        partitions this broker coordinates (Kafka's handleDeletedPartitions; without ZooKeeper
        the engine's delete_topic does it for its one broker)."""
        if self.broker.replication is None:
            return
        offsets = self.coordinator.offsets
        for partition in self.coordinator.led_partitions():
            try:
                for group, doomed in sorted(offsets.committed_to(topic, [partition]).items()):
                    offsets.delete(group, doomed)
            except (KafkaError, OSError) as exc:
                log.warning("Cannot remove the offsets of deleted topic %s from %s-%d: %s", topic,
                            GROUP_METADATA_TOPIC, partition, exc)

    # ================================================================== JoinGroup
    async def _join_group(self, request) -> dict:
        body = request.body
        version = request.api_version
        group_id = body["group_id"]
        member_id = body["member_id"]
        instance_id = body["group_instance_id"] if version >= 5 else None
        session_timeout = body["session_timeout_ms"]
        rebalance_timeout = body["rebalance_timeout_ms"] if version >= 1 else session_timeout
        if rebalance_timeout < 0:
            rebalance_timeout = session_timeout
        protocol_type = body["protocol_type"]
        protocols = [(p["name"], bytes(p["metadata"])) for p in body["protocols"]]

        if not validation.is_group_id(group_id):
            return join_error(E.INVALID_GROUP_ID, member_id)
        if not self.coordinator.min_session_timeout_ms <= session_timeout <= self.coordinator.max_session_timeout_ms:
            return join_error(E.INVALID_SESSION_TIMEOUT, member_id)
        not_ours = self.coordinator.coordinator_error(group_id)
        if not_ours:
            return join_error(not_ours, member_id)
        modern = self.consumer.get(group_id)
        if modern is not None:
            if modern.members:  # classic members cannot join a consumer-protocol group
                return join_error(E.INCONSISTENT_GROUP_PROTOCOL, member_id)
            self.consumer.drop(group_id)  # an empty one becomes classic
        streams = self.streams.get(group_id)
        if streams is not None:  # (the same for a streams group)
            if streams.members:
                return join_error(E.INCONSISTENT_GROUP_PROTOCOL, member_id)
            self.streams.drop(group_id)
        new_member = member_id == ""
        group = self.coordinator.group(group_id, create=new_member)
        if group is None:
            return join_error(E.UNKNOWN_MEMBER_ID, member_id)

        future = asyncio.get_running_loop().create_future()
        join = (request, instance_id, session_timeout, rebalance_timeout, protocol_type, protocols, future)
        if new_member:
            self.coordinator.join_new_member(group, join)
        else:
            self.coordinator.join_existing_member(group, member_id, join)
        return await future

    async def join_group(self, request) -> dict:
        if not self.broker.guard.allows(request, acls.READ, acls.GROUP, request.body["group_id"]):
            answer = join_error(E.GROUP_AUTHORIZATION_FAILED, request.body["member_id"])
        else:
            answer = await self._join_group(request)
        if answer["protocol_name"] is None and request.api_version < 7:  # nullable from v7 only
            answer = {**answer, "protocol_name": ""}
        return answer

    # ================================================================== SyncGroup
    async def sync_group(self, request) -> dict:
        body = request.body
        group_id = body["group_id"]
        member_id = body["member_id"]
        instance_id = body["group_instance_id"] if request.api_version >= 3 else None
        if request.api_version >= 5 and (body["protocol_type"] is None or body["protocol_name"] is None):
            return sync_answer(E.INCONSISTENT_GROUP_PROTOCOL)  # v5 makes both mandatory
        if not self.broker.guard.allows(request, acls.READ, acls.GROUP, group_id):
            return sync_answer(E.GROUP_AUTHORIZATION_FAILED)
        if not validation.is_group_id(group_id):
            return sync_answer(E.INVALID_GROUP_ID)
        not_ours = self.coordinator.coordinator_error(group_id)
        if not_ours:
            return sync_answer(not_ours)
        group = self.groups.get(group_id)
        if group is None or group.state == EMPTY:
            return sync_answer(E.UNKNOWN_MEMBER_ID)
        if group.state == DEAD:
            return sync_answer(E.COORDINATOR_NOT_AVAILABLE)
        error = group.validate_member(member_id, instance_id)
        if error:
            return sync_answer(error)
        if body["generation_id"] != group.generation:
            return sync_answer(E.ILLEGAL_GENERATION)
        if not group.matches_protocol(body["protocol_type"], body["protocol_name"]):  # v5
            return sync_answer(E.INCONSISTENT_GROUP_PROTOCOL)
        member = group.members[member_id]
        if group.state == PREPARING_REBALANCE:
            return sync_answer(E.REBALANCE_IN_PROGRESS)
        if group.state == STABLE:
            self.coordinator.remove_pending_sync(group, member_id)
            return sync_answer(E.NONE, member.assignment, group)

        # CompletingRebalance: park until the leader's assignment is in.
        future = asyncio.get_running_loop().create_future()
        if member.sync_future is not None:
            resolve(member.sync_future, sync_answer(E.REBALANCE_IN_PROGRESS))
        member.sync_future = future
        self.coordinator.remove_pending_sync(group, member_id)
        if member_id == group.leader:
            assignment = {a["member_id"]: bytes(a["assignment"]) for a in body["assignments"]}
            log.info("[GroupCoordinator %d]: Assignment received from leader %s for group %s for generation %d. "
                     "The group has %d members, %d of which are static.", self.broker.node_id, member_id,
                     group_id, group.generation, len(group.members), len(group.static_members))
            generation = group.generation
            try:
                error = await self.coordinator.replicated(self.coordinator.store_group(group, assignment))
            except KafkaError as exc:
                log.warning("Failed to store the assignment of group %s: %s", group_id, exc)
                error = append_error(exc.code)
            if self.groups.get(group_id) is not group or group.generation != generation \
                    or group.state != COMPLETING_REBALANCE:
                return await future  # moved on (or unloaded) meanwhile: answered by that
            if error:
                for m in group.members.values():
                    m.assignment = b""
                self.coordinator.propagate_assignment(group, error)
                self.coordinator.maybe_prepare_rebalance_or_complete_join(group, "error when storing group assignment")
                return await future
            for m in group.members.values():
                m.assignment = assignment.get(m.member_id, b"")
            self.coordinator.propagate_assignment(group, E.NONE)
            group.transition(STABLE)
        return await future

    # ================================================================== Heartbeat, LeaveGroup
    async def heartbeat(self, request) -> dict:
        body = request.body
        instance_id = body["group_instance_id"] if request.api_version >= 3 else None
        if not self.broker.guard.allows(request, acls.READ, acls.GROUP, body["group_id"]):
            return {"throttle_time_ms": 0, "error_code": E.GROUP_AUTHORIZATION_FAILED}
        if not validation.is_group_id(body["group_id"]):
            return {"throttle_time_ms": 0, "error_code": E.INVALID_GROUP_ID}
        not_ours = self.coordinator.coordinator_error(body["group_id"])
        if not_ours:
            return {"throttle_time_ms": 0, "error_code": not_ours}
        group = self.groups.get(body["group_id"])
        if group is None:
            return {"throttle_time_ms": 0, "error_code": E.UNKNOWN_MEMBER_ID}
        error = self.coordinator.heartbeat_error(group, body["member_id"], instance_id, body["generation_id"])
        return {"throttle_time_ms": 0, "error_code": error}

    async def leave_group(self, request) -> dict:
        body = request.body
        batched = request.api_version >= 3
        leaving = ([(m["member_id"], m["group_instance_id"]) for m in body["members"]] if batched
                   else [(body["member_id"], None)])
        if not self.broker.guard.allows(request, acls.READ, acls.GROUP, body["group_id"]):
            return {"throttle_time_ms": 0, "error_code": E.GROUP_AUTHORIZATION_FAILED, "members": []}
        if not validation.is_group_id(body["group_id"]):
            return {"throttle_time_ms": 0, "error_code": E.INVALID_GROUP_ID, "members": []}
        not_ours = self.coordinator.coordinator_error(body["group_id"])
        if not_ours:
            return {"throttle_time_ms": 0, "error_code": not_ours, "members": []}
        group = self.groups.get(body["group_id"])
        if group is None or group.state == DEAD:
            code = E.UNKNOWN_MEMBER_ID if group is None else E.COORDINATOR_NOT_AVAILABLE
            return {"throttle_time_ms": 0, "error_code": code, "members": []}
        answers = []
        left = []
        for member_id, instance_id in leaving:
            code = self.coordinator.leave(group, member_id, instance_id)
            if code == E.NONE:
                left.append(member_id or instance_id)
            answers.append({"member_id": member_id, "group_instance_id": instance_id, "error_code": code})
        if left:
            reason = f"explicit `LeaveGroup` request for ({', '.join(left)}) members"
            if group.state in (STABLE, COMPLETING_REBALANCE):
                self.coordinator.maybe_prepare_rebalance_or_complete_join(group, reason)
            elif group.state == PREPARING_REBALANCE:
                self.coordinator.maybe_complete_join_phase(group)
        if not batched:
            return {"throttle_time_ms": 0, "error_code": answers[0]["error_code"], "members": []}
        return {"throttle_time_ms": 0, "error_code": E.NONE, "members": answers}

    # ================================================================== FindCoordinator
    async def find_coordinator(self, request) -> dict:
        body = request.body
        version = request.api_version
        key_type = body["key_type"]
        if version < 4:
            code, message, node = await self._coordinator_for(request, key_type, body["key"], version)
            return {"throttle_time_ms": 0, "error_code": code, "error_message": message, **node}
        coordinators = []
        for key in body["coordinator_keys"]:
            code, message, node = await self._coordinator_for(request, key_type, key, version)
            # Kafka's v4+ answers name no message (""), but for an error of the whole request
            # (CLUSTER_ACTION refused for the SHARE key type, an unknown key type), which names
            # its error's
            if code != E.CLUSTER_AUTHORIZATION_FAILED and key_type in (COORDINATOR_GROUP, COORDINATOR_TRANSACTION,
                                                                         COORDINATOR_SHARE):
                message = ""
            coordinators.append({"key": key, "error_code": code, "error_message": message, **node})
        return {"throttle_time_ms": 0, "coordinators": coordinators}

    async def _coordinator_for(self, request, key_type: int, key: str, version: int) -> tuple[int, str | None, dict]:
        """(error, message, node) for one key: the broker leading the key's partition of the
        coordinator's internal topic (this broker alone without ZooKeeper). Share group members
        find their group coordinator with the GROUP key type; the SHARE key type (the share
        coordinator of a share-partition's state, used between brokers) is
        `_share_coordinator_for`'s. The caller must be allowed to DESCRIBE the group or transactional id."""
        if key_type in (COORDINATOR_GROUP, COORDINATOR_TRANSACTION):
            resource = acls.GROUP if key_type == COORDINATOR_GROUP else acls.TRANSACTIONAL_ID
            if not self.broker.guard.allows(request, acls.DESCRIBE, resource, key):
                if resource == acls.GROUP:
                    return E.GROUP_AUTHORIZATION_FAILED, "Group authorization failed.", NO_NODE
                return E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "Transactional Id authorization failed.", NO_NODE
            unavailable = E.COORDINATOR_NOT_AVAILABLE, None if version >= 4 else "", NO_NODE
            topic = GROUP_METADATA_TOPIC if key_type == COORDINATOR_GROUP else TRANSACTION_STATE_TOPIC
            try:  # Kafka creates the coordinator's internal topic here when it is missing
                if self.broker.zookeeper is not None:
                    replication = self.broker.replication
                    known = replication is not None and (topic, 0) in replication.states  # (taken in)
                    if not known and not await self.broker.zookeeper.ensure_internal_topic(topic):
                        return unavailable
                elif key_type == COORDINATOR_GROUP:
                    self.broker.engine.ensure_offsets_topic()
                else:
                    self.broker.transactions.ensure_state_topic()
                count = self.broker.engine.topic(topic).partitions
            except (KafkaError, OSError) as exc:
                if self.broker.zookeeper is None:
                    log.warning("Cannot create the coordinator's internal topic: %s", exc)
                return unavailable  # (ZooKeeper mode: not taken in from ZooKeeper yet)
            partition = codec.partition_for(key, count) if key_type == COORDINATOR_GROUP \
                else tlog.partition_for(key, count)
            node = self._leader_node(request, topic, partition)
            if node is None:
                return unavailable
            # (Kafka names no error as "NONE" in v1-3's error_message; it accepts an empty key)
            return E.NONE, "NONE" if version < 4 else None, node
        if key_type == COORDINATOR_SHARE and version >= 4:
            return await self._share_coordinator_for(request, key, version)
        return E.INVALID_REQUEST, INVALID_REQUEST_MESSAGE, NO_NODE

    async def _share_coordinator_for(self, request, key: str, version: int) -> tuple[int, str | None, dict]:
        """The SHARE key type (v6+, as Kafka 4.4): the share coordinator of one share-partition's
        state, "group:topic id:partition", i.e. the leader of the `__share_group_state`
        partition the key hashes to. Kafka's brokers ask it of each other, with CLUSTER_ACTION;
        a key that does not parse is an invalid request, a missing state topic is created and
        answered COORDINATOR_NOT_AVAILABLE (as Kafka does)."""
        from .. import share_state_log as slog

        if version < 6:
            return E.INVALID_REQUEST, "", NO_NODE
        if not self.broker.guard.allows(request, acls.CLUSTER_ACTION, acls.CLUSTER, acls.CLUSTER_NAME):
            return E.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.", NO_NODE
        parsed = slog.parse_coordinator_key(key)
        if parsed is None:
            return E.INVALID_REQUEST, "", NO_NODE
        store = self.broker.share_groups.store
        count = store._partitions()
        if count is None:
            if self.broker.zookeeper is not None:  # replicated, as __consumer_offsets (Kafka's settings)
                await self.broker.zookeeper.ensure_internal_topic(slog.SHARE_GROUP_STATE_TOPIC)
                return E.COORDINATOR_NOT_AVAILABLE, None, NO_NODE
            try:
                store.ensure_topic()
            except (KafkaError, OSError) as exc:
                log.warning("Cannot create %s: %s", slog.SHARE_GROUP_STATE_TOPIC, exc)
            return E.COORDINATOR_NOT_AVAILABLE, None, NO_NODE
        node = self._leader_node(request, slog.SHARE_GROUP_STATE_TOPIC, slog.partition_for(*parsed, count))
        if node is None:
            return E.COORDINATOR_NOT_AVAILABLE, None, NO_NODE
        return E.NONE, None, node

    def _leader_node(self, request, topic: str, partition: int) -> dict | None:
        """The live leader of an internal partition, with its endpoint (this broker's: on the
        listener the request came in on); None when no leader is known."""
        leader = self.broker.internal_leader(topic, partition)
        if leader == self.broker.node_id:
            host, port = self.broker.endpoint(request)
        elif leader >= 0 and leader in self.broker.replication.brokers:
            host, port = self.broker.replication.brokers[leader]
        else:
            return None
        return {"node_id": leader, "host": host, "port": port}

    # ================================================================== offsets
    async def offset_commit(self, request) -> dict:
        body = request.body
        version = request.api_version
        group_id = body["group_id"]
        member_id = body["member_id"]
        generation = body["generation_id_or_member_epoch"]
        topics = named_topics(self.topic_ids, body["topics"], version >= 10)
        # (a group another broker coordinates is not looked at: validating could create it here)
        error = self.coordinator.coordinator_error(group_id) or \
            self.coordinator.validate_commit(group_id, generation, member_id, body["group_instance_id"], version)
        guard = self.broker.guard
        readable = None  # None: no authorizer; else the topics the caller may READ
        if guard.enabled:
            if not guard.allows(request, acls.READ, acls.GROUP, group_id):
                error = E.GROUP_AUTHORIZATION_FAILED
            readable = guard.allowed_names(request, acls.READ, acls.TOPIC, {t["name"] for t in topics if t["name"]})

        answers: dict[str, dict] = {}  # by topic: partitions refused up front first, as Kafka answers
        offsets: dict[tuple[str, int], CommittedOffset] = {}
        later = []
        for t in topics:
            for p in t["partitions"]:
                index = p["partition_index"]
                metadata = p["committed_metadata"]
                if error == E.GROUP_AUTHORIZATION_FAILED:
                    code = error
                elif t["name"] is None:
                    code = E.UNKNOWN_TOPIC_ID
                elif readable is not None and t["name"] not in readable:
                    code = E.TOPIC_AUTHORIZATION_FAILED
                elif not self.coordinator.partition_exists(t["name"], index):
                    # (told so whatever the group's answer: Kafka filters unknown partitions first)
                    code = E.UNKNOWN_TOPIC_OR_PARTITION
                elif error:
                    code = error
                elif metadata is not None and len(metadata) > OFFSET_METADATA_MAX_BYTES:
                    code = E.OFFSET_METADATA_TOO_LARGE
                else:
                    code = E.NONE
                    offsets[(t["name"], index)] = CommittedOffset(p["committed_offset"],
                                                                  p["committed_leader_epoch"], metadata or "")
                answer = {"partition_index": index, "error_code": code}
                if code in (E.UNKNOWN_TOPIC_ID, E.UNKNOWN_TOPIC_OR_PARTITION, E.TOPIC_AUTHORIZATION_FAILED):
                    self._topic_answer(answers, t)["partitions"].append(answer)
                else:
                    later.append((t, answer))
        for t, answer in later:
            self._topic_answer(answers, t)["partitions"].append(answer)
        answers = list(answers.values())
        if error:
            return {"throttle_time_ms": 0, "topics": answers}
        self.coordinator.touch_committer(group_id, member_id)  # commits keep a session alive
        try:
            failed = await self.coordinator.replicated(self.coordinator.commit_offsets(group_id, offsets))
        except KafkaError as exc:
            log.warning("Failed to store offsets of group %s: %s", group_id, exc)
            failed = append_error(exc.code)
        if failed:
            for t in answers:
                for p in t["partitions"]:
                    if p["error_code"] == E.NONE:
                        p["error_code"] = failed
        return {"throttle_time_ms": 0, "topics": answers}

    @staticmethod
    def _topic_answer(answers: dict, topic: dict) -> dict:
        key = topic["name"] if topic["name"] is not None else str(topic["topic_id"])
        if key not in answers:
            answers[key] = {"name": topic["name"] or "", "topic_id": topic["topic_id"], "partitions": []}
        return answers[key]

    async def offset_fetch(self, request) -> dict:
        body = request.body
        version = request.api_version
        stable = body["require_stable"]
        if version < 8:
            answer = self._fetch_group_offsets(request, body["group_id"], None, -1, body["topics"], stable, version)
            return {"throttle_time_ms": 0, "topics": answer["topics"], "error_code": answer["error_code"]}
        groups = [self._fetch_group_offsets(request, g["group_id"], g["member_id"], g["member_epoch"],
                                            named_topics(self.topic_ids, g["topics"], version >= 10)
                                            if g["topics"] is not None else None, stable, version)
                  for g in body["groups"]]
        return {"throttle_time_ms": 0, "groups": groups}

    def _fetch_group_offsets(self, request, group_id: str, member_id: str | None, member_epoch: int,
                             requested: list | None, require_stable: bool, version: int) -> dict:
        """One group's committed offsets: of the requested partitions (-1 where none), or of
        every partition with a commit (`requested` None). The caller must be allowed to DESCRIBE
        the group; topics it may not DESCRIBE are refused when named and left out of "all"."""
        guard = self.broker.guard
        if not guard.allows(request, acls.DESCRIBE, acls.GROUP, group_id):
            return {"group_id": group_id, "topics": [], "error_code": E.GROUP_AUTHORIZATION_FAILED}
        not_ours = self.coordinator.coordinator_error(group_id)
        if not_ours:
            topics = []
            if version < 2 and requested is not None:  # (no group-level error before v2)
                topics = [{"name": t["name"] or "", "partitions": [
                    {"partition_index": i, "committed_offset": -1, "committed_leader_epoch": -1, "metadata": "",
                     "error_code": not_ours} for i in t["partition_indexes"]]} for t in requested]
            return {"group_id": group_id, "topics": topics, "error_code": not_ours}
        error = self.coordinator.validate_fetch(group_id, member_id, member_epoch)
        if error:
            return {"group_id": group_id, "topics": [], "error_code": error}
        table = self.coordinator.offset_table(group_id)
        pending = self.coordinator.has_pending_transactional_offsets

        visible = None
        if guard.enabled:
            named = {t for t, _ in table} if requested is None else {t["name"] for t in requested if t.get("name")}
            visible = guard.allowed_names(request, acls.DESCRIBE, acls.TOPIC, named)

        def answer(topic: str, index: int) -> dict:
            if visible is not None and topic not in visible:
                return {"partition_index": index, "committed_offset": -1, "committed_leader_epoch": -1,
                        "metadata": "", "error_code": E.TOPIC_AUTHORIZATION_FAILED}
            if require_stable and pending(group_id, (topic, index)):
                return {"partition_index": index, "committed_offset": -1, "committed_leader_epoch": -1,
                        "metadata": "", "error_code": E.UNSTABLE_OFFSET_COMMIT}
            c = table.get((topic, index))
            if c is None:
                return {"partition_index": index, "committed_offset": -1, "committed_leader_epoch": -1,
                        "metadata": "", "error_code": E.NONE}
            return {"partition_index": index, "committed_offset": c.offset, "committed_leader_epoch": c.leader_epoch,
                    "metadata": c.metadata, "error_code": E.NONE}

        topics = []
        if requested is None:  # v2+: every partition with a committed offset
            by_topic: dict[str, list] = {}
            for topic, index in sorted(table):
                if visible is not None and topic not in visible:
                    continue
                by_topic.setdefault(topic, []).append(answer(topic, index))
            ids = topic_ids_by_name(self.topic_ids) if version >= 10 else {}
            topics = [{"name": t, "topic_id": ids.get(t), "partitions": ps}
                      for t, ps in by_topic.items() if version < 10 or t in ids]
        else:
            for t in requested:
                if t.get("name", "") is None:  # v10: an unknown topic id
                    parts = [{"partition_index": i, "committed_offset": -1, "committed_leader_epoch": -1,
                              "metadata": "", "error_code": E.UNKNOWN_TOPIC_ID} for i in t["partition_indexes"]]
                else:
                    parts = [answer(t["name"], i) for i in t["partition_indexes"]]
                topics.append({"name": t["name"] or "", "topic_id": t.get("topic_id"), "partitions": parts})
        if version < 8:  # (the per-group topics of v8+ carry topic ids, the old ones do not)
            for t in topics:
                del t["topic_id"]
        return {"group_id": group_id, "topics": topics, "error_code": E.NONE}

    # ================================================================== admin
    async def list_groups(self, request) -> dict:
        body = request.body
        # (filters match case-insensitively, as Kafka's do)
        states = {x.lower() for x in body["states_filter"]} if request.api_version >= 4 else set()
        types = {x.lower() for x in body["types_filter"]} if request.api_version >= 5 else set()
        groups = []
        guard = self.broker.guard
        # cluster DESCRIBE lists every group; else only the groups the caller may DESCRIBE
        filtered = guard.enabled and not guard.allows(request, acls.DESCRIBE, acls.CLUSTER, acls.CLUSTER_NAME)
        for gid, (protocol_type, state, group_type) in sorted(self.listed_groups().items()):
            if (states and state.lower() not in states) or (types and group_type not in types):
                continue
            if filtered and not guard.allowed_names(request, acls.DESCRIBE, acls.GROUP, (gid,)):
                continue
            groups.append({"group_id": gid, "protocol_type": protocol_type, "group_state": state,
                           "group_type": group_type})
        return {"throttle_time_ms": 0, "error_code": E.NONE, "groups": groups}

    def listed_groups(self) -> dict[str, tuple[str, str, str]]:
        """{group id: (protocol type, state, type)} of every group, classic and consumer."""
        listed = {gid: (ptype, state, CLASSIC_GROUP_TYPE)
                  for gid, (ptype, state) in self.coordinator.listed_groups().items()}
        listed.update(self.consumer.listed_groups())
        listed.update(self.streams.listed_groups())
        share = getattr(self.broker, "share_groups", None)  # (made after this coordinator)
        if share is not None:
            listed.update(share.listed_groups())
        return listed

    async def describe_groups(self, request) -> dict:
        body = request.body
        version = request.api_version
        operations = GROUP_AUTHORIZED_OPERATIONS if body["include_authorized_operations"] else INT32_MIN
        described = []
        guard = self.broker.guard
        for group_id in body["groups"]:
            if not guard.allows(request, acls.DESCRIBE, acls.GROUP, group_id):
                described.append({"error_code": E.GROUP_AUTHORIZATION_FAILED, "group_id": group_id,
                                  "group_state": "", "protocol_type": "", "protocol_data": "", "members": [],
                                  "authorized_operations": INT32_MIN})
                continue
            not_ours = self.coordinator.coordinator_error(group_id)
            if not_ours:
                described.append({"error_code": not_ours, "group_id": group_id, "group_state": "",
                                  "protocol_type": "", "protocol_data": "", "members": [],
                                  "authorized_operations": INT32_MIN})
                continue
            if guard.enabled and operations != INT32_MIN:
                operations = guard.operations(request, acls.GROUP, group_id)
            modern = self.consumer.get(group_id) is not None or self.streams.get(group_id) is not None
            group = self.coordinator.group(group_id) if not modern else None
            if group is not None and group.state == EMPTY and not self.coordinator.known_empty(group):
                group = None
            if group is None:
                missing = {"error_code": E.NONE, "group_id": group_id, "group_state": DEAD, "protocol_type": "",
                           "protocol_data": "", "members": [], "authorized_operations": operations}
                if version >= 6:  # KIP-1043: v6 tells a missing (or not classic) group apart
                    kind = "is not a classic group" if modern or self.broker.share_groups.has(group_id) \
                        else "not found"
                    missing.update(error_code=E.GROUP_ID_NOT_FOUND, error_message=f"Group {group_id} {kind}.",
                                   authorized_operations=INT32_MIN)
                described.append(missing)
                continue
            stable = group.state == STABLE
            members = [{"member_id": m.member_id, "group_instance_id": m.instance_id, "client_id": m.client_id,
                        "client_host": m.client_host,
                        "member_metadata": m.metadata(group.protocol) if stable else b"",
                        "member_assignment": m.assignment if stable else b""}
                       for m in group.members.values()]
            described.append({"error_code": E.NONE, "group_id": group_id, "group_state": group.state,
                              "protocol_type": group.protocol_type or "",
                              "protocol_data": (group.protocol or "") if stable else "",
                              "members": members, "authorized_operations": operations})
        return {"throttle_time_ms": 0, "groups": described}

    async def delete_groups(self, request) -> dict:
        results = []
        for group_id in request.body["groups_names"]:
            if not self.broker.guard.allows(request, acls.DELETE, acls.GROUP, group_id):
                results.append({"group_id": group_id, "error_code": E.GROUP_AUTHORIZATION_FAILED})
                continue
            not_ours = self.coordinator.coordinator_error(group_id)
            if not_ours:
                results.append({"group_id": group_id, "error_code": not_ours})
                continue
            if self.consumer.get(group_id) is not None:
                results.append({"group_id": group_id, "error_code": self.consumer.delete(group_id)})
                continue
            if self.streams.get(group_id) is not None:
                results.append({"group_id": group_id, "error_code": self.streams.delete(group_id)})
                continue
            if self.broker.share_groups.has(group_id):
                results.append({"group_id": group_id, "error_code": self.broker.share_groups.delete(group_id)})
                continue
            group = self.coordinator.group(group_id)
            if group is not None and group.state == EMPTY and not self.coordinator.known_empty(group):
                group = None
            if group is None or group.state == DEAD:
                code = E.GROUP_ID_NOT_FOUND
            elif group.is_active():
                code = E.NON_EMPTY_GROUP
            else:
                try:
                    self.coordinator.offsets.delete(group_id)
                    written = self.coordinator.append(group_id, [(codec.group_metadata_key(group_id), None, (),
                                                                  now_ms())])
                    self.coordinator.drop(group)
                    log.info("[GroupCoordinator %d]: Group %s deleted", self.broker.node_id, group_id)
                    code = await self.coordinator.replicated(written)
                except KafkaError as exc:
                    log.warning("Failed to delete group %s: %s", group_id, exc)
                    code = append_error(exc.code)
            results.append({"group_id": group_id, "error_code": code})
        return {"throttle_time_ms": 0, "results": results}

    async def offset_delete(self, request) -> dict:
        body = request.body
        group_id = body["group_id"]
        guard = self.broker.guard
        if not guard.allows(request, acls.DELETE, acls.GROUP, group_id):
            return {"error_code": E.GROUP_AUTHORIZATION_FAILED, "throttle_time_ms": 0, "topics": []}
        if not validation.is_group_id(group_id):
            return {"error_code": E.INVALID_GROUP_ID, "throttle_time_ms": 0, "topics": []}
        not_ours = self.coordinator.coordinator_error(group_id)
        if not_ours:
            return {"error_code": not_ours, "throttle_time_ms": 0, "topics": []}
        if guard.enabled:  # topics the caller may not READ are refused before anything else
            readable = guard.allowed_names(request, acls.READ, acls.TOPIC, {t["name"] for t in body["topics"]})
            body = {**body, "topics": [t for t in body["topics"] if t["name"] in readable]}
            refused = [{"name": t["name"], "partitions": [
                {"partition_index": p["partition_index"], "error_code": E.TOPIC_AUTHORIZATION_FAILED}
                for p in t["partitions"]]} for t in request.body["topics"] if t["name"] not in readable]
            if refused:
                answer = await self._offset_delete(group_id, body)
                return {**answer, "topics": refused + answer["topics"]}
        return await self._offset_delete(group_id, body)

    async def _offset_delete(self, group_id: str, body: dict) -> dict:
        modern = self.consumer.get(group_id) or self.streams.get(group_id)
        if modern is not None:
            subscribed = modern.subscribed_topics()
            return self._delete_offsets(group_id, body["topics"], lambda topic: topic in subscribed)
        group = self.coordinator.group(group_id)
        if group is not None and group.state == EMPTY and not self.coordinator.known_empty(group):
            group = None
        if group is None or group.state == DEAD:
            return {"error_code": E.GROUP_ID_NOT_FOUND, "throttle_time_ms": 0, "topics": []}
        if group.is_active() and group.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return {"error_code": E.NON_EMPTY_GROUP, "throttle_time_ms": 0, "topics": []}
        return self._delete_offsets(group_id, body["topics"],
                                    lambda topic: group.is_active() and group.is_subscribed_to(topic))

    def _delete_offsets(self, group_id: str, topics: list, subscribed) -> dict:
        """OffsetDelete's partitions: deleted unless the group's members subscribe to the topic."""
        doomed = []
        answers = []
        for t in topics:
            parts = []
            for p in t["partitions"]:
                index = p["partition_index"]
                if not self.coordinator.partition_exists(t["name"], index):
                    code = E.UNKNOWN_TOPIC_OR_PARTITION
                elif subscribed(t["name"]):
                    code = E.GROUP_SUBSCRIBED_TO_TOPIC
                else:
                    code = E.NONE
                    doomed.append((t["name"], index))
                parts.append({"partition_index": index, "error_code": code})
            answers.append({"name": t["name"], "partitions": parts})
        if doomed:
            self.coordinator.offsets.delete(group_id, doomed)
            self.broker.notify_data()
        return {"error_code": E.NONE, "throttle_time_ms": 0, "topics": answers}

    # ================================================================== KIP-848
    async def consumer_group_heartbeat(self, request) -> dict:
        if not self.broker.guard.allows(request, acls.READ, acls.GROUP, request.body["group_id"]):
            return {"throttle_time_ms": 0, "error_code": E.GROUP_AUTHORIZATION_FAILED,
                    "error_message": "Group authorization failed.", "member_id": None, "member_epoch": 0,
                    "heartbeat_interval_ms": 0, "assignment": None}
        names = request.body["subscribed_topic_names"]
        guard = self.broker.guard
        if guard.enabled and names and len(guard.allowed_names(request, acls.DESCRIBE, acls.TOPIC, names)) < len(
                set(names)):
            # KafkaApis.handleConsumerGroupHeartbeat: every subscribed name needs topic DESCRIBE, or
            # the whole heartbeat is refused (no member id, no assignment, no message)
            return {"throttle_time_ms": 0, "error_code": E.TOPIC_AUTHORIZATION_FAILED, "error_message": None,
                    "member_id": None, "member_epoch": 0, "heartbeat_interval_ms": 0, "assignment": None}
        not_ours = self.coordinator.coordinator_error(request.body["group_id"])
        if not_ours:
            return {"throttle_time_ms": 0, "error_code": not_ours, "error_message": NOT_COORDINATOR_MESSAGE,
                    "member_id": None, "member_epoch": 0, "heartbeat_interval_ms": 0, "assignment": None}
        return self.consumer.heartbeat(request.body, request.api_version, request.client_id or "",
                                       client_host(request), guard.topic_filter(request))

    async def consumer_group_describe(self, request) -> dict:
        include = request.body["include_authorized_operations"]
        return {"throttle_time_ms": 0,
                "groups": [self._describe_consumer_group(request, gid, include) for gid in request.body["group_ids"]]}

    def _describe_consumer_group(self, request, gid: str, include: bool) -> dict:
        """One group: authorization first, then the id's validity (Kafka's order)."""
        guard = self.broker.guard
        if not guard.allows(request, acls.DESCRIBE, acls.GROUP, gid):
            return {"error_code": E.GROUP_AUTHORIZATION_FAILED, "error_message": "Group authorization failed.",
                    "group_id": gid, "group_state": "", "group_epoch": 0, "assignment_epoch": 0,
                    "assignor_name": "", "members": [], "authorized_operations": INT32_MIN}
        if not validation.is_group_id(gid):
            return {**self.consumer.describe(gid, False, 0), "error_code": E.INVALID_GROUP_ID, "error_message": None}
        not_ours = self.coordinator.coordinator_error(gid)
        if not_ours:
            return {"error_code": not_ours, "error_message": NOT_COORDINATOR_MESSAGE, "group_id": gid,
                    "group_state": "", "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": [],
                    "authorized_operations": INT32_MIN}
        operations = guard.operations(request, acls.GROUP, gid) if guard.enabled else GROUP_AUTHORIZED_OPERATIONS
        return self.consumer.describe(gid, include, operations)

    # ================================================================== KIP-1071
    async def streams_group_heartbeat(self, request) -> dict:
        """KafkaApis.handleStreamsGroupHeartbeat: group READ; a topology's topics must be valid,
        not Kafka's internal ones, and DESCRIBE-able; internal topics the coordinator finds
        missing are created when the caller may CREATE them (else a status says so)."""
        body = request.body
        guard = self.broker.guard
        # (Kafka's error answers are an empty response with the code: no message, no member id,
        # an empty status list)
        refused = {"throttle_time_ms": 0, "member_id": "", "member_epoch": 0, "heartbeat_interval_ms": 0,
                   "acceptable_recovery_lag_legacy": 0, "task_offset_interval_ms": 0, "status": [],
                   "endpoint_information_epoch": 0, "error_message": None}
        if features.load_levels(self.broker.engine.data_dir)[1].get("streams.version", 0) < 1:
            # (Kafka 4.4 with streams.version downgraded to 0: the protocol is off, first of all)
            return {**refused, "error_code": E.UNSUPPORTED_VERSION}
        if not guard.allows(request, acls.READ, acls.GROUP, body["group_id"]):
            return {**refused, "error_code": E.GROUP_AUTHORIZATION_FAILED}
        if body["topology"] is not None:
            required = [name for s in body["topology"]["subtopologies"]
                        for name in (*s["source_topics"], *s["repartition_sink_topics"],
                                     *(t["name"] for t in s["repartition_source_topics"]),
                                     *(t["name"] for t in s["state_changelog_topics"]))]
            prohibited = [t for t in required if topic_names.is_internal(t)]
            if prohibited:
                return {**refused, "error_code": E.STREAMS_INVALID_TOPOLOGY,
                        "error_message": f"Use of Kafka internal topics {','.join(prohibited)} in a Kafka Streams "
                                         f"topology is prohibited."}
            invalid = [t for t in required if topic_names.invalid_reason(t) is not None]
            if invalid:
                return {**refused, "error_code": E.STREAMS_INVALID_TOPOLOGY,
                        "error_message": f"Topic names {','.join(invalid)} are not valid topic names."}
            if guard.enabled and len(guard.allowed_names(request, acls.DESCRIBE, acls.TOPIC, required)) < len(
                    set(required)):
                return {**refused, "error_code": E.TOPIC_AUTHORIZATION_FAILED}
        not_ours = self.coordinator.coordinator_error(body["group_id"])
        if not_ours:
            return {**refused, "error_code": not_ours, "error_message": NOT_COORDINATOR_MESSAGE}
        unauthorized: list[str] = []

        def create(topics) -> None:
            allowed = {name for name, *_ in topics}
            if guard.enabled and not guard.allows_cluster(request, acls.CREATE):
                allowed = guard.allowed_names(request, acls.CREATE, acls.TOPIC, allowed)
            unauthorized.extend(sorted(name for name, *_ in topics if name not in allowed))
            for name, partitions, replication, configs in topics:
                if name in allowed:
                    try:
                        self.broker.engine.create_topic(name, partitions, replication, configs=configs)
                        log.info("Created streams internal topic %s with %d partitions", name, partitions)
                    except KafkaError as exc:  # (created meanwhile, or refused: the next heartbeat tells)
                        log.warning("Cannot create streams internal topic %s: %s", name, exc)

        answer = self.streams.heartbeat(body, request.api_version, request.client_id or "", client_host(request),
                                        create)
        if unauthorized:
            message = f"Unauthorized to CREATE on topics {', '.join(unauthorized)}."
            statuses = answer["status"] if answer["status"] is not None else []
            for status in statuses:
                if status["status_code"] == 3:  # MISSING_INTERNAL_TOPICS
                    status["status_detail"] += "; " + message
                    break
            else:
                statuses.append({"status_code": 3, "status_detail": message})
            answer["status"] = statuses
        if answer["error_code"] == E.NONE:
            self.broker.notify_data()
        return answer

    async def streams_group_describe(self, request) -> dict:
        include = request.body["include_authorized_operations"]
        guard = self.broker.guard
        described = []
        for gid in request.body["group_ids"]:
            if not guard.allows(request, acls.DESCRIBE, acls.GROUP, gid):
                described.append({"error_code": E.GROUP_AUTHORIZATION_FAILED,
                                  "error_message": "Group authorization failed.", "group_id": gid, "group_state": "",
                                  "group_epoch": 0, "assignment_epoch": 0, "topology": None, "members": [],
                                  "authorized_operations": INT32_MIN})
                continue
            not_ours = self.coordinator.coordinator_error(gid)
            if not_ours:
                described.append({"error_code": not_ours, "error_message": NOT_COORDINATOR_MESSAGE, "group_id": gid,
                                  "group_state": "", "group_epoch": 0, "assignment_epoch": 0, "topology": None,
                                  "members": [], "authorized_operations": INT32_MIN})
                continue
            operations = guard.operations(request, acls.GROUP, gid) if guard.enabled else GROUP_AUTHORIZED_OPERATIONS
            answer = self.streams.describe(gid, include, operations)
            if answer["error_code"] == E.NONE and request.body.get("include_topology_description"):
                # pk keeps no topology descriptions (no StreamsGroupTopologyDescriptionUpdate): as a
                # Kafka 4.4 broker with none stored answers
                answer["topology_description_status"] = TOPOLOGY_DESCRIPTION_NOT_STORED
            if answer["error_code"] == E.GROUP_ID_NOT_FOUND and (
                    self.consumer.get(gid) is not None or self.coordinator.group(gid) is not None):
                answer["error_message"] = f"Group {gid} is not a streams group."
            described.append(answer)
        return {"throttle_time_ms": 0, "groups": described}

    # ================================================================== lifecycle
    def close(self) -> None:
        self.streams.close()
        self.consumer.close()
        self.coordinator.close()
