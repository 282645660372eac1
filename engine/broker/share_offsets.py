"""AlterShareGroupOffsets (91) and DeleteShareGroupOffsets (92): what `kafka-share-groups
--reset-offsets --execute` and `--delete-offsets` send, answered as Kafka 4.4 answers them.

Both work on the share-partitions of share_groups.py (`ShareGroupHandlers.partitions`, the
stored ones in `saved`) and need the group empty, as Kafka's coordinator does:

- Alter sets each named partition's start offset, dropping what was in flight (Kafka's
  coordinator initializes the share-partition's state anew at that offset). It takes any
  offset as given (negative, past the log end: the lag Kafka then shows is negative too), and
  makes the group when there is none (with group epoch 1, as Kafka's) if at least one named
  partition exists.
- Delete drops the state of every share-partition the group has of each named topic
  (tombstones in `__share_group_state`); a topic the group has no state of is answered
  "There is no offset information to delete."

In ZooKeeper mode only the group's coordinator answers (NOT_COORDINATOR elsewhere), and the
states are changed at their share coordinators (share_coordinator.py): alter initializes each
partition's state anew with the next state epoch, delete deletes it; a partition leader reads
the state again when a share session next opens there.

ACLs as KafkaApis checks them: alter needs READ on the group and on each topic, delete DELETE
on the group and READ on each topic; a topic refused or unknown is answered per partition
(alter) or per topic (delete) before the group is looked at.
"""

from __future__ import annotations

import logging
import uuid

from .. import acls
from ..errors import KafkaError
from ..protocol import ApiKey
from ..protocol import errors as E
from ..share_partition import SharePartition

log = logging.getLogger("kafka.coordinator.group.GroupMetadataManager")

ZERO_UUID = uuid.UUID(int=0)
# Kafka's Errors' default messages, for the codes these answers carry
MESSAGES = {
    E.UNKNOWN_TOPIC_OR_PARTITION: "This server does not host this topic-partition.",
    E.TOPIC_AUTHORIZATION_FAILED: "Topic authorization failed.",
    E.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
    E.INVALID_GROUP_ID: "The group id is invalid.",
    E.NON_EMPTY_GROUP: "The group is not empty.",
    E.COORDINATOR_NOT_AVAILABLE: "The coordinator is not available.",
    E.NOT_COORDINATOR: "This is not the correct coordinator.",
}
NO_OFFSETS = "There is no offset information to delete."


def shares_zk(shares) -> bool:
    return shares.broker.replication is not None


def _refusal(code: int, message: str | None = None) -> dict:
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message or MESSAGES[code], "responses": []}


class ShareOffsetAdmin:
    def __init__(self, broker, shares):
        self.broker = broker
        self.shares = shares  # share_groups.ShareGroupHandlers
        broker.register(ApiKey.ALTER_SHARE_GROUP_OFFSETS, self.alter)
        broker.register(ApiKey.DELETE_SHARE_GROUP_OFFSETS, self.delete)

    # ------------------------------------------------------------------ topics
    def _topic(self, name: str) -> tuple[uuid.UUID, int] | None:
        """(topic id, partition count) of an existing topic."""
        try:
            topic = self.broker.engine.topic(name)
            return self.broker.data.topic_ids.uuid_of(topic.topic_id), topic.partitions
        except (KafkaError, ValueError):
            return None

    def _group_refusal(self, group_id: str, create: bool) -> dict | None:
        """The top-level error of a request naming this group, or None: an empty id, another
        kind of group, a group that is not there (for delete), a group with members."""
        if not group_id:
            return _refusal(E.INVALID_GROUP_ID)
        shares = self.shares
        if shares.coordinator_error(group_id):
            return _refusal(E.NOT_COORDINATOR)
        if shares._in_use_by_other_type(group_id):
            return _refusal(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        group = shares.groups.get(group_id) if shares.has(group_id) else None
        if group is None:
            return None if create else _refusal(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        if group.members:
            return _refusal(E.NON_EMPTY_GROUP)
        return None

    # ------------------------------------------------------------------ AlterShareGroupOffsets
    async def alter(self, request) -> dict:
        body = request.body
        group_id = body["group_id"]
        guard = self.broker.guard
        if not guard.allows(request, acls.READ, acls.GROUP, group_id):
            return _refusal(E.GROUP_AUTHORIZATION_FAILED)
        answer: dict[str, dict] = {}  # by topic name, in the order Kafka's response builder adds them

        def topic_entry(name: str, topic_id: uuid.UUID) -> dict:
            return answer.setdefault(name, {"topic_name": name, "topic_id": topic_id, "partitions": []})

        def partition_row(index: int, code: int) -> dict:
            return {"partition_index": index, "error_code": code,
                    "error_message": MESSAGES[code] if code != E.NONE else None}

        wanted = []
        for topic in body["topics"]:
            found = self._topic(topic["topic_name"])
            if guard.enabled and not guard.allows(request, acls.READ, acls.TOPIC, topic["topic_name"]):
                code = E.TOPIC_AUTHORIZATION_FAILED
            elif found is None:
                code = E.UNKNOWN_TOPIC_OR_PARTITION
            else:
                wanted.append((topic, found))
                continue
            entry = topic_entry(topic["topic_name"], found[0] if found else ZERO_UUID)
            entry["partitions"].extend(partition_row(p["partition_index"], code) for p in topic["partitions"])
        refused = self._group_refusal(group_id, create=True)
        if refused is not None:
            return refused
        resets: list[tuple[str, uuid.UUID, int, int]] = []
        for topic, (topic_id, count) in wanted:
            entry = topic_entry(topic["topic_name"], topic_id)
            for p in topic["partitions"]:
                index = p["partition_index"]
                ok = 0 <= index < count
                entry["partitions"].append(partition_row(index, E.NONE if ok else E.UNKNOWN_TOPIC_OR_PARTITION))
                if ok:
                    resets.append((topic["topic_name"], topic_id, index, p["start_offset"]))
        if resets and shares_zk(self.shares):
            failed = await self._reset_zk(group_id, resets)
            for name, index in failed:
                for row in answer[name]["partitions"]:
                    if row["partition_index"] == index:
                        row.update(partition_row(index, E.COORDINATOR_NOT_AVAILABLE))
        elif resets:
            self._reset(group_id, resets)
        return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None,
                "responses": list(answer.values())}

    def _reset(self, group_id: str, resets: list[tuple[str, uuid.UUID, int, int]]) -> None:
        """Each share-partition's state anew at its start offset, written at once."""
        from .share_groups import ShareGroup

        shares = self.shares
        if group_id not in shares.groups:
            group = shares.groups[group_id] = ShareGroup(group_id)
            group.group_epoch = group.assignment_epoch = 1  # Kafka's coordinator makes it at epoch 1
        for topic, topic_id, partition, start in resets:
            key = (group_id, topic, partition)
            shares.groups[group_id].initialized.add((topic, partition))
            shares.saved.pop((group_id, topic_id, partition), None)
            sp = SharePartition(start)
            sp.written = True  # Kafka's coordinator has the state now: describe shows it
            sp.changes = shares._persisted.get(key, 0) + 1
            shares._ids[key] = topic_id
            shares.partitions[key] = sp
        shares._persist()
        shares.broker.notify_data()

    async def _reset_zk(self, group_id: str, resets: list[tuple[str, uuid.UUID, int, int]]) -> list[tuple[str, int]]:
        """ZooKeeper mode: each partition's state initialized anew at its share coordinator,
        with a state epoch above the stored one; the (topic, partition)s that failed."""
        from .share_groups import ShareGroup

        shares = self.shares
        if group_id not in shares.groups:
            group = shares.groups[group_id] = ShareGroup(group_id)
            group.group_epoch = group.assignment_epoch = 1
        failed = []
        for topic, topic_id, partition, start in resets:
            shares.groups[group_id].initialized.add((topic, partition))
            summary = await shares.persister.call(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, group_id, topic_id,
                                                  {"partition": partition, "leader_epoch": 0})
            epoch = summary.get("state_epoch", 0) + 1 if summary["error_code"] == E.NONE else 0
            done = await shares.persister.call(ApiKey.INITIALIZE_SHARE_GROUP_STATE, group_id, topic_id,
                                               {"partition": partition, "state_epoch": epoch, "start_offset": start})
            if done["error_code"] != E.NONE:
                failed.append((topic, partition))
        return failed

    # ------------------------------------------------------------------ DeleteShareGroupOffsets
    async def delete(self, request) -> dict:
        body = request.body
        group_id = body["group_id"]
        guard = self.broker.guard
        if not guard.allows(request, acls.DELETE, acls.GROUP, group_id):
            return _refusal(E.GROUP_AUTHORIZATION_FAILED)
        refused_topics, names = [], []
        for topic in body["topics"]:
            name = topic["topic_name"]
            if guard.enabled and not guard.allows(request, acls.READ, acls.TOPIC, name):
                refused_topics.append(self._topic_error(name, E.TOPIC_AUTHORIZATION_FAILED))
            else:
                names.append(name)
        refused = self._group_refusal(group_id, create=False)
        if refused is not None:
            return refused
        shares = self.shares
        shares._take_saved(group_id)
        deleted, failed = [], []
        for name in names:
            found = self._topic(name)
            if found is not None and shares_zk(shares):
                code = await self._delete_zk(group_id, name, *found)
                if code == E.NONE:
                    deleted.append({"topic_name": name, "topic_id": found[0], "error_code": E.NONE,
                                    "error_message": None})
                else:
                    failed.append(self._topic_error(name, code, NO_OFFSETS if code == E.UNKNOWN_TOPIC_OR_PARTITION
                                                    else None))
                continue
            keys = [k for k in shares.partitions if k[0] == group_id and k[1] == name]
            if found is None:
                failed.append(self._topic_error(name, E.UNKNOWN_TOPIC_OR_PARTITION))
            elif not keys:
                failed.append(self._topic_error(name, E.UNKNOWN_TOPIC_OR_PARTITION, NO_OFFSETS))
            else:
                try:
                    self._drop(keys)
                except (KafkaError, OSError) as exc:
                    log.warning("Failed to delete the offsets of share group %s on %s: %s", group_id, name, exc)
                    failed.append(self._topic_error(name, E.COORDINATOR_NOT_AVAILABLE))
                    continue
                deleted.append({"topic_name": name, "topic_id": found[0], "error_code": E.NONE,
                                "error_message": None})
        return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None,
                "responses": refused_topics + deleted + failed}

    async def _delete_zk(self, group_id: str, name: str, topic_id: uuid.UUID, count: int) -> int:
        """ZooKeeper mode: the states of the topic's partitions deleted at their share
        coordinators; UNKNOWN_TOPIC_OR_PARTITION when the group had none."""
        persister = self.shares.persister
        had = False
        for partition in range(count):
            summary = await persister.call(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, group_id, topic_id,
                                           {"partition": partition, "leader_epoch": 0})
            if summary["error_code"] != E.NONE:
                return E.COORDINATOR_NOT_AVAILABLE
            if summary.get("start_offset", -1) < 0:
                continue
            had = True
            done = await persister.call(ApiKey.DELETE_SHARE_GROUP_STATE, group_id, topic_id, {"partition": partition})
            if done["error_code"] != E.NONE:
                return E.COORDINATOR_NOT_AVAILABLE
        return E.NONE if had else E.UNKNOWN_TOPIC_OR_PARTITION

    @staticmethod
    def _topic_error(name: str, code: int, message: str | None = None) -> dict:
        return {"topic_name": name, "topic_id": ZERO_UUID, "error_code": code,
                "error_message": message or MESSAGES.get(code)}

    def _drop(self, keys: list[tuple[str, str, int]]) -> None:
        shares = self.shares
        for key in keys:
            if shares.partitions[key].written:
                shares.store.delete(key[0], shares._ids[key], key[2])
            del shares.partitions[key]
            shares._persisted.pop(key, None)
