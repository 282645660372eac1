"""The group coordinator's request handlers: Kafka's classic consumer-group protocol, one
coroutine per API — FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
OffsetCommit, OffsetFetch, ListGroups, DescribeGroups, DeleteGroups and OffsetDelete
(docs/protocol.md).

The groups, their state machine, timers and durable records are group_state.py's
`ClassicGroups`; a handler reads the request, asks it, and shapes the answer. A JoinGroup or
SyncGroup answer may be parked there until the group moves on: since the server answers one
connection's requests strictly in order, a parked request blocks only its own connection, as
in Kafka.
"""

from __future__ import annotations

import asyncio
import logging

from .. import consumer_offsets as codec
from ..errors import KafkaError
from ..protocol import ApiKey
from ..protocol import errors as E
from .group_state import (COMPLETING_REBALANCE, CONSUMER_PROTOCOL_TYPE, DEAD, EMPTY, PREPARING_REBALANCE,
                          STABLE, ClassicGroups, join_error, now_ms, resolve, sync_answer)

log = logging.getLogger("kafka.coordinator.group.GroupCoordinator")

OFFSET_METADATA_MAX_BYTES = 4096            # offset.metadata.max.bytes
# DescribeGroups authorized operations with no authorizer: READ(3), DELETE(6), DESCRIBE(8).
GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8)
INT32_MIN = -2147483648


class GroupHandlers:
    def __init__(self, broker):
        self.broker = broker
        self.coordinator = ClassicGroups(broker)
        self.groups = self.coordinator.groups  # the same dict: groups in memory, by id
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
        ):
            broker.register(key, handler)

    # ================================================================== JoinGroup
    async def join_group(self, request) -> dict:
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

        if not group_id:
            return join_error(E.INVALID_GROUP_ID, member_id)
        if not self.coordinator.min_session_timeout_ms <= session_timeout <= self.coordinator.max_session_timeout_ms:
            return join_error(E.INVALID_SESSION_TIMEOUT, member_id)
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

    # ================================================================== SyncGroup
    async def sync_group(self, request) -> dict:
        body = request.body
        group_id = body["group_id"]
        member_id = body["member_id"]
        instance_id = body["group_instance_id"] if request.api_version >= 3 else None
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
        member = group.members[member_id]
        if group.state == PREPARING_REBALANCE:
            return sync_answer(E.REBALANCE_IN_PROGRESS)
        if group.state == STABLE:
            self.coordinator.remove_pending_sync(group, member_id)
            return sync_answer(E.NONE, member.assignment)

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
            try:
                self.coordinator.store_group(group, assignment)
            except KafkaError as exc:
                log.warning("Failed to store the assignment of group %s: %s", group_id, exc)
                for m in group.members.values():
                    m.assignment = b""
                self.coordinator.propagate_assignment(group, E.COORDINATOR_NOT_AVAILABLE)
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
        group = self.groups.get(body["group_id"])
        if group is None:
            return {"throttle_time_ms": 0, "error_code": E.UNKNOWN_MEMBER_ID}
        error = self.coordinator.heartbeat_error(group, body["member_id"], instance_id, body["generation_id"])
        return {"throttle_time_ms": 0, "error_code": error}

    async def leave_group(self, request) -> dict:
        body = request.body
        member_id = body["member_id"]
        group = self.groups.get(body["group_id"])
        if group is None:
            return {"throttle_time_ms": 0, "error_code": E.UNKNOWN_MEMBER_ID}
        if group.state == DEAD:
            return {"throttle_time_ms": 0, "error_code": E.COORDINATOR_NOT_AVAILABLE}
        if member_id in group.pending_members:
            group.remove(member_id)
        else:
            error = group.validate_member(member_id, None)
            if error:
                return {"throttle_time_ms": 0, "error_code": error}
            log.info("[GroupCoordinator %d]: Member %s has left group %s through explicit `LeaveGroup` request",
                     self.broker.node_id, member_id, group.group_id)
            self.coordinator.remove(group, member_id, E.UNKNOWN_MEMBER_ID)
        reason = f"explicit `LeaveGroup` request for ({member_id}) members"
        if group.state in (STABLE, COMPLETING_REBALANCE):
            self.coordinator.maybe_prepare_rebalance_or_complete_join(group, reason)
        elif group.state == PREPARING_REBALANCE:
            self.coordinator.maybe_complete_join_phase(group)
        return {"throttle_time_ms": 0, "error_code": E.NONE}

    # ================================================================== FindCoordinator
    async def find_coordinator(self, request) -> dict:
        if request.body["key_type"] not in (0, 1):
            # 0: a group's coordinator, 1: a transactional id's: this broker is both.
            return {"throttle_time_ms": 0, "error_code": E.COORDINATOR_NOT_AVAILABLE,
                    "error_message": "The coordinator is not available.", "node_id": -1, "host": "", "port": -1}
        return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None,
                "node_id": self.broker.node_id, "host": self.broker.host, "port": self.broker.port}

    # ================================================================== offsets
    async def offset_commit(self, request) -> dict:
        body = request.body
        group_id = body["group_id"]
        member_id = body["member_id"]
        topics = body["topics"]
        error, group = self.coordinator.validate_commit(group_id, body["generation_id_or_member_epoch"], member_id)
        if error:
            # (unknown partitions are told so whatever the group's answer: Kafka filters them first)
            return {"throttle_time_ms": 0, "topics": [
                {"name": t["name"], "partitions": [
                    {"partition_index": p["partition_index"],
                     "error_code": error if self.coordinator.partition_exists(t["name"], p["partition_index"])
                     else E.UNKNOWN_TOPIC_OR_PARTITION} for p in t["partitions"]]} for t in topics]}
        if group.state in (STABLE, PREPARING_REBALANCE) and member_id in group.members:
            self.coordinator.reschedule_heartbeat(group, group.members[member_id])  # commits keep the session alive

        answers = []
        by_metadata: dict[str, dict[tuple[str, int], int]] = {}
        for t in topics:
            parts = []
            for p in t["partitions"]:
                index = p["partition_index"]
                metadata = p["committed_metadata"]
                if not self.coordinator.partition_exists(t["name"], index):
                    code = E.UNKNOWN_TOPIC_OR_PARTITION
                elif metadata is not None and len(metadata) > OFFSET_METADATA_MAX_BYTES:
                    code = E.OFFSET_METADATA_TOO_LARGE
                else:
                    code = E.NONE
                    by_metadata.setdefault(metadata or "", {})[(t["name"], index)] = p["committed_offset"]
                parts.append({"partition_index": index, "error_code": code})
            answers.append({"name": t["name"], "partitions": parts})
        try:
            for metadata, offsets in by_metadata.items():  # one batch, unless metadata differ
                self.coordinator.offsets.commit(group_id, offsets, member_id=member_id or None,
                                    generation=body["generation_id_or_member_epoch"], metadata=metadata)
        except KafkaError as exc:
            log.warning("Failed to store offsets of group %s: %s", group_id, exc)
            for t in answers:
                for p in t["partitions"]:
                    if p["error_code"] == E.NONE:
                        p["error_code"] = E.COORDINATOR_NOT_AVAILABLE
        if by_metadata:
            self.broker.notify_data()
        return {"throttle_time_ms": 0, "topics": answers}

    async def offset_fetch(self, request) -> dict:
        body = request.body
        group_id = body["group_id"]
        table = self.coordinator.offset_table(group_id)
        requested = body["topics"]
        answers = []
        if requested is None:  # v2+: every partition with a committed offset
            by_topic: dict[str, list] = {}
            for (topic, partition), (offset, metadata) in sorted(table.items()):
                by_topic.setdefault(topic, []).append(
                    {"partition_index": partition, "committed_offset": offset, "committed_leader_epoch": -1,
                     "metadata": metadata, "error_code": E.NONE})
            answers = [{"name": t, "partitions": ps} for t, ps in by_topic.items()]
        else:
            for t in requested:
                parts = []
                for index in t["partition_indexes"]:
                    offset, metadata = table.get((t["name"], index), (-1, ""))
                    parts.append({"partition_index": index, "committed_offset": offset,
                                  "committed_leader_epoch": -1, "metadata": metadata, "error_code": E.NONE})
                answers.append({"name": t["name"], "partitions": parts})
        return {"throttle_time_ms": 0, "topics": answers, "error_code": E.NONE}

    # ================================================================== admin
    async def list_groups(self, request) -> dict:
        listed = sorted(self.coordinator.listed_groups().items())
        groups = [{"group_id": gid, "protocol_type": ptype} for gid, ptype in listed]
        return {"throttle_time_ms": 0, "error_code": E.NONE, "groups": groups}

    async def describe_groups(self, request) -> dict:
        body = request.body
        operations = GROUP_AUTHORIZED_OPERATIONS if body["include_authorized_operations"] else INT32_MIN
        described = []
        for group_id in body["groups"]:
            group = self.coordinator.group(group_id)
            if group is not None and group.state == EMPTY and not self.coordinator.known_empty(group):
                group = None
            if group is None:
                described.append({"error_code": E.NONE, "group_id": group_id, "group_state": DEAD,
                                  "protocol_type": "", "protocol_data": "", "members": [],
                                  "authorized_operations": operations})
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
                    self.coordinator.append(group_id, [(codec.group_metadata_key(group_id), None, (), now_ms())])
                    self.coordinator.drop(group)
                    log.info("[GroupCoordinator %d]: Group %s deleted", self.broker.node_id, group_id)
                    code = E.NONE
                except KafkaError as exc:
                    log.warning("Failed to delete group %s: %s", group_id, exc)
                    code = E.COORDINATOR_NOT_AVAILABLE
            results.append({"group_id": group_id, "error_code": code})
        return {"throttle_time_ms": 0, "results": results}

    async def offset_delete(self, request) -> dict:
        body = request.body
        group_id = body["group_id"]
        group = self.coordinator.group(group_id)
        if group is not None and group.state == EMPTY and not self.coordinator.known_empty(group):
            group = None
        if group is None or group.state == DEAD:
            return {"error_code": E.GROUP_ID_NOT_FOUND, "throttle_time_ms": 0, "topics": []}
        if group.is_active() and group.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return {"error_code": E.NON_EMPTY_GROUP, "throttle_time_ms": 0, "topics": []}
        doomed = []
        answers = []
        for t in body["topics"]:
            parts = []
            for p in t["partitions"]:
                index = p["partition_index"]
                if not self.coordinator.partition_exists(t["name"], index):
                    code = E.UNKNOWN_TOPIC_OR_PARTITION
                elif group.is_active() and group.is_subscribed_to(t["name"]):
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

    # ================================================================== lifecycle
    def close(self) -> None:
        self.coordinator.close()
