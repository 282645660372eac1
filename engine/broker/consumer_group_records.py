"""The records Kafka keeps in `__consumer_offsets` for a consumer-protocol (KIP-848) group, and
the group rebuilt from them.

Kafka's group coordinator writes, beside the offset commits (engine/consumer_offsets.py), one
record kind per piece of a consumer group, told apart by the key's version prefix (its record
type); the key is non-flexible version 0, the value a flexible version 0 after its int16
version, as Kafka's own schemas say (group-coordinator's ConsumerGroup*Key/Value.json):

    3  ConsumerGroupMetadata           group          -> group epoch
    5  ConsumerGroupMemberMetadata     group, member  -> subscription, client, timeouts
    6  ConsumerGroupTargetAssignmentMetadata  group   -> assignment epoch
    7  ConsumerGroupTargetAssignmentMember group, member -> target partitions
    8  ConsumerGroupCurrentMemberAssignment group, member -> epochs, state, partitions

A null value is a tombstone. Partitions are named by topic id, as in Kafka's records.
"""

from __future__ import annotations

import struct
import uuid

from ..protocol.errors import ProtocolError
from ..protocol.schema import Field as F
from ..protocol.schema import Message, Struct
from ..protocol.types import Array, INT8, INT32, INT64, STRING, UUID

GROUP_METADATA, MEMBER_METADATA, TARGET_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT = 3, 5, 6, 7, 8
RECORD_TYPES = (GROUP_METADATA, MEMBER_METADATA, TARGET_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT)
PER_MEMBER = (MEMBER_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT)
_VERSION = struct.Struct(">h")

# MemberState's byte values
MEMBER_STATES = {"stable": 0, "unrevoked_partitions": 1, "unreleased_partitions": 2}


def _partitions(name: str, with_epochs: bool = False) -> Array:
    fields = [F("topic_id", UUID, "0+"), F("partitions", Array(INT32), "0+")]
    if with_epochs:
        fields.append(F("assignment_epochs", Array(INT32), "0+", nullable="0+", default=None, tag=0))
    return Array(Struct(name, fields))


_GROUP_KEY = [F("group_id", STRING, "0")]
_MEMBER_KEY = [F("group_id", STRING, "0"), F("member_id", STRING, "0")]
KEYS = {t: Message(f"ConsumerGroupKey{t}", t, "0", _MEMBER_KEY if t in PER_MEMBER else _GROUP_KEY)
        for t in RECORD_TYPES}
VALUES = {
    GROUP_METADATA: Message("ConsumerGroupMetadataValue", GROUP_METADATA, "0", [
        F("epoch", INT32, "0+"),
        F("metadata_hash", INT64, "0+", default=0, tag=0),
    ], flexible="0+"),
    MEMBER_METADATA: Message("ConsumerGroupMemberMetadataValue", MEMBER_METADATA, "0", [
        F("instance_id", STRING, "0+", nullable="0+"),
        F("rack_id", STRING, "0+", nullable="0+"),
        F("client_id", STRING, "0+"),
        F("client_host", STRING, "0+"),
        F("subscribed_topic_names", Array(STRING), "0+"),
        F("subscribed_topic_regex", STRING, "0+", nullable="0+"),
        F("rebalance_timeout_ms", INT32, "0+", default=-1),
        F("server_assignor", STRING, "0+", nullable="0+"),
    ], flexible="0+"),
    TARGET_METADATA: Message("ConsumerGroupTargetAssignmentMetadataValue", TARGET_METADATA, "0", [
        F("assignment_epoch", INT32, "0+"),
        F("assignment_timestamp", INT64, "0+", default=0, tag=0),
    ], flexible="0+"),
    TARGET_MEMBER: Message("ConsumerGroupTargetAssignmentMemberValue", TARGET_MEMBER, "0", [
        F("topic_partitions", _partitions("TopicPartition"), "0+"),
    ], flexible="0+"),
    CURRENT_ASSIGNMENT: Message("ConsumerGroupCurrentMemberAssignmentValue", CURRENT_ASSIGNMENT, "0", [
        F("member_epoch", INT32, "0+"),
        F("previous_member_epoch", INT32, "0+"),
        F("state", INT8, "0+"),
        F("assigned_partitions", _partitions("TopicPartitions", True), "0+"),
        F("partitions_pending_revocation", _partitions("TopicPartitions", True), "0+"),
    ], flexible="0+"),
}


def encode_key(record_type: int, group_id: str, member_id: str | None = None) -> bytes:
    body = {"group_id": group_id}
    if record_type in PER_MEMBER:
        body["member_id"] = member_id
    return _VERSION.pack(record_type) + KEYS[record_type].encode(body, 0)


def encode_value(record_type: int, body: dict) -> bytes:
    return _VERSION.pack(0) + VALUES[record_type].encode(body, 0)


def decode(key: bytes, value: bytes | None) -> tuple[int, str, str | None, dict | None] | None:
    """(record type, group, member or None, value or None for a tombstone) of a consumer group
    record; None for any other record (offset commits, classic groups, share groups...)."""
    if key is None or len(key) < 2:
        return None
    record_type = int.from_bytes(bytes(key[:2]), "big", signed=True)
    if record_type not in RECORD_TYPES:
        return None
    try:
        k = KEYS[record_type].decode(memoryview(bytes(key))[2:], 0)
        v = None if value is None else VALUES[record_type].decode(memoryview(bytes(value))[2:], 0, exact=False)
    except (ProtocolError, ValueError):
        return None  # a version pk does not know: left alone
    return record_type, k["group_id"], k.get("member_id"), v


def partitions_body(assignment: dict, ids: dict[str, uuid.UUID]) -> list[dict]:
    """{topic: partitions} -> the records' [{topic_id, partitions}] (topics without an id are left out)."""
    return [{"topic_id": ids[t], "partitions": sorted(ps)} for t, ps in sorted(assignment.items()) if t in ids]


def partitions_of(body: list[dict], names: dict[uuid.UUID, str]) -> dict[str, frozenset[int]]:
    return {names[tp["topic_id"]]: frozenset(tp["partitions"]) for tp in body
            if tp["topic_id"] in names and tp["partitions"]}
