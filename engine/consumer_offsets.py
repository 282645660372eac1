"""Record formats of `__consumer_offsets`, and the consumer protocol payloads they embed.

Byte-exact with Kafka 3.7's message schemas (docs/versions.md):

* keys and values are *version-prefixed*: an int16 version, then the struct;
* key version 0/1 = OffsetCommitKey (group, topic, partition; Kafka writes 1),
  key version 2 = GroupMetadataKey (group), 3+ = KIP-848 records (not decoded here);
* OffsetCommitValue versions 0-4 (Kafka writes 3, or 1 when an expire timestamp is set;
  4 is the first flexible version), GroupMetadataValue versions 0-4 (Kafka writes 3);
* a null value (tombstone) means "offset deleted" / "group removed": the decoders return None;
* ConsumerProtocolSubscription / ConsumerProtocolAssignment versions 0-3 (never flexible):
  the JoinGroup member metadata and SyncGroup assignment of protocol type "consumer", also
  stored as the members' `subscription` / `assignment` bytes of a GroupMetadataValue.

Sources: apache/kafka@3.7.1 group-coordinator/src/main/resources/common/message/
{OffsetCommitKey,OffsetCommitValue,GroupMetadataKey,GroupMetadataValue}.json,
clients/src/main/resources/common/message/ConsumerProtocol{Subscription,Assignment}.json,
clients/.../consumer/internals/ConsumerProtocol.java, core/.../group/GroupMetadataManager.scala.

Pure functions and immutable values: no I/O.
"""

from __future__ import annotations

import codecs
import struct
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Union

from .javacompat import signed32, string_hash
from .records import varint

GROUP_METADATA_TOPIC = "__consumer_offsets"
DEFAULT_NUM_PARTITIONS = 50
CONSUMER_PROTOCOL_TYPE = "consumer"

OFFSET_COMMIT_KEY_VERSIONS = (0, 1)
GROUP_METADATA_KEY_VERSION = 2
OFFSET_COMMIT_VALUE_VERSIONS = range(0, 5)
GROUP_METADATA_VALUE_VERSIONS = range(0, 5)
FLEXIBLE_VALUE_VERSION = 4  # first flexible version of both value schemas
CONSUMER_PROTOCOL_VERSIONS = range(0, 4)


class SchemaError(ValueError):
    """Bytes that do not follow the schema they claim (Kafka: SchemaException and friends)."""


# --------------------------------------------------------------------------- group -> partition
def java_string_hash(text: str) -> int:
    """Java's String.hashCode, as the signed 32-bit int Kafka's partitionFor takes abs() of."""
    return signed32(string_hash(text))


def kafka_abs(n: int) -> int:
    """Kafka's Utils.abs: Integer.MIN_VALUE maps to 0 (Math.abs would keep it negative)."""
    return 0 if n == -(1 << 31) else abs(n)


def partition_for(group_id: str, num_partitions: int = DEFAULT_NUM_PARTITIONS) -> int:
    """The `__consumer_offsets` partition holding a group's records."""
    return kafka_abs(java_string_hash(group_id)) % num_partitions


# --------------------------------------------------------------------------- primitives
def _java_replace(exc: UnicodeDecodeError):
    """Replacement as Java's UTF-8 decoder does it: like Python's, except that an encoded
    surrogate (ED A0-BF 80-BF) becomes one U+FFFD instead of three."""
    data, start = exc.object, exc.start
    if data[start] == 0xED and start + 1 < len(data) and 0xA0 <= data[start + 1] <= 0xBF:
        if start + 2 < len(data) and 0x80 <= data[start + 2] <= 0xBF:
            return "\ufffd", start + 3
        return "\ufffd", start + 2
    return "\ufffd", exc.end


codecs.register_error("pk-java-replace", _java_replace)


def java_utf8(data: bytes) -> str:
    """new String(bytes, UTF_8)."""
    return bytes(data).decode("utf-8", "pk-java-replace")


_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


class _Writer:
    def __init__(self, flexible: bool = False):
        self.parts: list[bytes] = []
        self.flexible = flexible

    def int16(self, n: int) -> None:
        self.parts.append(_I16.pack(n))

    def int32(self, n: int) -> None:
        self.parts.append(_I32.pack(n))

    def int64(self, n: int) -> None:
        self.parts.append(_I64.pack(n))

    def string(self, s: str | None, name: str, nullable: bool = False) -> None:
        if s is None:
            if not nullable:
                raise SchemaError(f"non-nullable field {name} was serialized as null")
            self.parts.append(b"\x00" if self.flexible else _I16.pack(-1))
            return
        data = s.encode("utf-8")
        if len(data) > 0x7FFF:
            raise SchemaError(f"'{name}' field is too long to be serialized")
        self.parts.append(varint.encode_unsigned(len(data) + 1) if self.flexible else _I16.pack(len(data)))
        self.parts.append(data)

    def bytes_(self, b: bytes | None, name: str, nullable: bool = False) -> None:
        if b is None:
            if not nullable:
                raise SchemaError(f"non-nullable field {name} was serialized as null")
            self.parts.append(b"\x00" if self.flexible else _I32.pack(-1))
            return
        b = bytes(b)
        self.parts.append(varint.encode_unsigned(len(b) + 1) if self.flexible else _I32.pack(len(b)))
        self.parts.append(b)

    def array_len(self, n: int) -> None:
        self.parts.append(varint.encode_unsigned(n + 1) if self.flexible else _I32.pack(n))

    def tagged_fields(self) -> None:
        if self.flexible:
            self.parts.append(b"\x00")

    def getvalue(self) -> bytes:
        return b"".join(self.parts)


class _Reader:
    def __init__(self, data: bytes, pos: int = 0, flexible: bool = False, what: str = "message"):
        self.data = bytes(data)
        self.pos = pos
        self.flexible = flexible
        self.what = what

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise SchemaError(f"Buffer underflow while parsing {self.what}")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def int16(self) -> int:
        return _I16.unpack(self._take(2))[0]

    def int32(self) -> int:
        return _I32.unpack(self._take(4))[0]

    def int64(self) -> int:
        return _I64.unpack(self._take(8))[0]

    def uvarint(self) -> int:
        try:
            value, self.pos = varint.decode_unsigned(self.data, self.pos, 5)
        except IndexError:
            raise SchemaError(f"Buffer underflow while parsing {self.what}") from None
        except varint.VarintTooLong:
            raise SchemaError("Varint is too long, the most significant bit in the 5th byte is set") from None
        return value

    def string(self, name: str, nullable: bool = False) -> str | None:
        length = self.uvarint() - 1 if self.flexible else self.int16()
        if length < 0:
            if nullable:
                return None
            raise SchemaError(f"non-nullable field {name} was serialized as null")
        if length > 0x7FFF:
            raise SchemaError(f"string field {name} had invalid length {length}")
        return java_utf8(self._take(length))

    def bytes_(self, name: str, nullable: bool = False) -> bytes | None:
        length = self.uvarint() - 1 if self.flexible else self.int32()
        if length < 0:
            if nullable:
                return None
            raise SchemaError(f"non-nullable field {name} was serialized as null")
        return self._take(length)

    def array_len(self, name: str) -> int:
        length = self.uvarint() - 1 if self.flexible else self.int32()
        if length < 0:
            raise SchemaError(f"non-nullable field {name} was serialized as null")
        if length > len(self.data) - self.pos:
            raise SchemaError(f"Tried to allocate a collection of size {length}, but there are only "
                              f"{len(self.data) - self.pos} bytes remaining.")
        return length

    def skip_tagged_fields(self) -> None:
        if not self.flexible:
            return
        for _ in range(self.uvarint()):
            self.uvarint()  # tag
            self._take(self.uvarint())


# --------------------------------------------------------------------------- keys
@dataclass(frozen=True)
class OffsetCommitKey:
    """Key of an offset commit record (key version 0 or 1; Kafka writes 1)."""

    group: str
    topic: str
    partition: int
    version: int = 1

    def encode(self) -> bytes:
        if self.version not in OFFSET_COMMIT_KEY_VERSIONS:
            raise SchemaError(f"Can't write version {self.version} of OffsetCommitKey")
        w = _Writer()
        w.int16(self.version)
        w.string(self.group, "group")
        w.string(self.topic, "topic")
        w.int32(self.partition)
        return w.getvalue()


@dataclass(frozen=True)
class GroupMetadataKey:
    """Key of a group metadata record (key version 2)."""

    group: str
    version: int = GROUP_METADATA_KEY_VERSION

    def encode(self) -> bytes:
        if self.version != GROUP_METADATA_KEY_VERSION:
            raise SchemaError(f"Can't write version {self.version} of GroupMetadataKey")
        w = _Writer()
        w.int16(self.version)
        w.string(self.group, "group")
        return w.getvalue()


@dataclass(frozen=True)
class UnknownKey:
    """A key version this module does not decode (3+: KIP-848 consumer/share group records)."""

    version: int


Key = Union[OffsetCommitKey, GroupMetadataKey, UnknownKey]


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    return OffsetCommitKey(group, topic, partition).encode()


def group_metadata_key(group: str) -> bytes:
    return GroupMetadataKey(group).encode()


def decode_key(data: bytes) -> Key:
    """Tell the key kinds apart by their version (GroupMetadataManager.readMessageKey)."""
    r = _Reader(data, what="record key")
    version = r.int16()
    if version in OFFSET_COMMIT_KEY_VERSIONS:
        return OffsetCommitKey(r.string("group"), r.string("topic"), r.int32(), version)
    if version == GROUP_METADATA_KEY_VERSION:
        return GroupMetadataKey(r.string("group"), version)
    return UnknownKey(version)


# --------------------------------------------------------------------------- offset commit value
@dataclass(frozen=True)
class OffsetCommitValue:
    """offset, leaderEpoch (v3+, -1 = none), metadata, commitTimestamp, expireTimestamp (v1 only)."""

    offset: int
    metadata: str = ""
    commit_timestamp: int = -1
    leader_epoch: int = -1
    expire_timestamp: int = -1
    version: int = 3

    def encode(self) -> bytes:
        v = self.version
        if v not in OFFSET_COMMIT_VALUE_VERSIONS:
            raise SchemaError(f"Can't write version {v} of OffsetCommitValue")
        w = _Writer(flexible=v >= FLEXIBLE_VALUE_VERSION)
        w.int16(v)
        w.int64(self.offset)
        if v >= 3:
            w.int32(self.leader_epoch)
        w.string(self.metadata, "metadata")
        w.int64(self.commit_timestamp)
        if v == 1:
            w.int64(self.expire_timestamp)
        w.tagged_fields()
        return w.getvalue()


def offset_commit_value(offset: int, metadata: str = "", commit_timestamp: int = -1,
                        leader_epoch: int = -1, expire_timestamp: int | None = None) -> bytes:
    """The value Kafka 3.7 writes: version 3, or version 1 when an expire timestamp is given."""
    if expire_timestamp is not None and expire_timestamp != -1:
        return OffsetCommitValue(offset, metadata, commit_timestamp, -1, expire_timestamp, version=1).encode()
    return OffsetCommitValue(offset, metadata, commit_timestamp, leader_epoch, version=3).encode()


def decode_offset_commit_value(data: bytes | None) -> OffsetCommitValue | None:
    """None for a tombstone (the committed offset was deleted)."""
    if data is None:
        return None
    r = _Reader(data, what="offset commit value")
    v = r.int16()
    if v not in OFFSET_COMMIT_VALUE_VERSIONS:
        raise SchemaError(f"Unknown offset message version: {v}")
    r.flexible = v >= FLEXIBLE_VALUE_VERSION
    offset = r.int64()
    leader_epoch = r.int32() if v >= 3 else -1
    metadata = r.string("metadata")
    commit_timestamp = r.int64()
    expire_timestamp = r.int64() if v == 1 else -1
    r.skip_tagged_fields()
    return OffsetCommitValue(offset, metadata, commit_timestamp, leader_epoch, expire_timestamp, v)


# --------------------------------------------------------------------------- group metadata value
@dataclass(frozen=True)
class MemberMetadata:
    member_id: str
    client_id: str
    client_host: str
    session_timeout: int
    subscription: bytes
    assignment: bytes
    rebalance_timeout: int = -1  # v1+ (v0 readers use the session timeout)
    group_instance_id: str | None = None  # v3+


@dataclass(frozen=True)
class GroupMetadataValue:
    """A classic group's state after a rebalance (or emptied: no members, protocol None)."""

    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    members: tuple[MemberMetadata, ...] = ()
    current_state_timestamp: int = -1  # v2+
    version: int = 3

    def encode(self) -> bytes:
        v = self.version
        if v not in GROUP_METADATA_VALUE_VERSIONS:
            raise SchemaError(f"Can't write version {v} of GroupMetadataValue")
        w = _Writer(flexible=v >= FLEXIBLE_VALUE_VERSION)
        w.int16(v)
        w.string(self.protocol_type, "protocolType")
        w.int32(self.generation)
        w.string(self.protocol, "protocol", nullable=True)
        w.string(self.leader, "leader", nullable=True)
        if v >= 2:
            w.int64(self.current_state_timestamp)
        w.array_len(len(self.members))
        for m in self.members:
            w.string(m.member_id, "memberId")
            if v >= 3:
                w.string(m.group_instance_id, "groupInstanceId", nullable=True)
            w.string(m.client_id, "clientId")
            w.string(m.client_host, "clientHost")
            if v >= 1:
                w.int32(m.rebalance_timeout)
            w.int32(m.session_timeout)
            w.bytes_(m.subscription, "subscription")
            w.bytes_(m.assignment, "assignment")
            w.tagged_fields()
        w.tagged_fields()
        return w.getvalue()


def group_metadata_value(protocol_type: str, generation: int, protocol: str | None, leader: str | None,
                         members: Iterable[MemberMetadata] = (), current_state_timestamp: int = -1) -> bytes:
    """The value Kafka 3.7 writes (version 3)."""
    return GroupMetadataValue(protocol_type, generation, protocol, leader, tuple(members),
                              current_state_timestamp, version=3).encode()


def decode_group_metadata_value(data: bytes | None) -> GroupMetadataValue | None:
    """None for a tombstone (the group was removed)."""
    if data is None:
        return None
    r = _Reader(data, what="group metadata value")
    v = r.int16()
    if v not in GROUP_METADATA_VALUE_VERSIONS:
        raise SchemaError(f"Unknown group metadata message version: {v}")
    r.flexible = v >= FLEXIBLE_VALUE_VERSION
    protocol_type = r.string("protocolType")
    generation = r.int32()
    protocol = r.string("protocol", nullable=True)
    leader = r.string("leader", nullable=True)
    current_state_timestamp = r.int64() if v >= 2 else -1
    members = []
    for _ in range(r.array_len("members")):
        member_id = r.string("memberId")
        instance_id = r.string("groupInstanceId", nullable=True) if v >= 3 else None
        client_id = r.string("clientId")
        client_host = r.string("clientHost")
        rebalance_timeout = r.int32() if v >= 1 else -1
        session_timeout = r.int32()
        subscription = r.bytes_("subscription")
        assignment = r.bytes_("assignment")
        r.skip_tagged_fields()
        members.append(MemberMetadata(member_id, client_id, client_host, session_timeout, subscription,
                                      assignment, rebalance_timeout, instance_id))
    r.skip_tagged_fields()
    return GroupMetadataValue(protocol_type, generation, protocol, leader, tuple(members),
                              current_state_timestamp, v)


Value = Union[OffsetCommitValue, GroupMetadataValue, None]


def decode_value(key: Key, data: bytes | None) -> Value:
    """Decode a value according to the kind of its key (None: tombstone or unknown key)."""
    if isinstance(key, OffsetCommitKey):
        return decode_offset_commit_value(data)
    if isinstance(key, GroupMetadataKey):
        return decode_group_metadata_value(data)
    return None


def decode_record(key: bytes, value: bytes | None) -> tuple[Key, Value]:
    k = decode_key(key)
    return k, decode_value(k, value)


# --------------------------------------------------------------------------- consumer protocol
TopicPartitions = list[tuple[str, list[int]]]


@dataclass(frozen=True)
class Subscription:
    """ConsumerProtocolSubscription: what a member sends in JoinGroup for protocol type consumer."""

    topics: list[str]
    user_data: bytes | None = None
    owned_partitions: TopicPartitions = field(default_factory=list)  # v1+
    generation_id: int = -1  # v2+
    rack_id: str | None = None  # v3+
    version: int = 3


@dataclass(frozen=True)
class Assignment:
    """ConsumerProtocolAssignment: what a member gets in SyncGroup."""

    assigned_partitions: TopicPartitions
    user_data: bytes | None = None
    version: int = 3

    def partitions(self) -> list[tuple[str, int]]:
        """Flattened (topic, partition) pairs in the serialized order (Java's Assignment.partitions())."""
        return [(t, p) for t, ps in self.assigned_partitions for p in ps]


def _pairs(partitions) -> list[tuple[str, int]]:
    if partitions is None:
        return []
    if isinstance(partitions, Mapping):
        return [(t, int(p)) for t, ps in partitions.items() for p in ps]
    return [(t, int(p)) for t, p in partitions]


def _protocol_version(r: _Reader) -> int:
    if len(r.data) - r.pos < 2:
        raise SchemaError("Buffer underflow while parsing consumer protocol's header")
    return r.int16()


def _check_protocol_version(version: int, what: str) -> int:
    if version < 0:
        raise SchemaError(f"Unsupported {what} version: {version}")
    return min(version, CONSUMER_PROTOCOL_VERSIONS[-1])


def encode_subscription(topics: Iterable[str], user_data: bytes | None = None,
                        owned_partitions=None, version: int = 3, generation_id: int = -1,
                        rack_id: str | None = None) -> bytes:
    """As ConsumerProtocol.serializeSubscription: topics sorted, owned partitions sorted by
    (topic, partition) and grouped per topic. owned_partitions: {topic: [p]} or [(topic, p)]."""
    version = _check_protocol_version(version, "subscription")
    w = _Writer()
    w.int16(version)
    topic_list = sorted(topics)
    w.array_len(len(topic_list))
    for t in topic_list:
        w.string(t, "topics")
    w.bytes_(user_data, "userData", nullable=True)
    if version >= 1:
        grouped: TopicPartitions = []
        for t, p in sorted(_pairs(owned_partitions)):
            if not grouped or grouped[-1][0] != t:
                grouped.append((t, []))
            grouped[-1][1].append(p)
        w.array_len(len(grouped))
        for t, ps in grouped:
            w.string(t, "topic")
            w.array_len(len(ps))
            for p in ps:
                w.int32(p)
    if version >= 2:
        w.int32(generation_id)
    if version >= 3:
        w.string(rack_id, "rackId", nullable=True)
    return w.getvalue()


def decode_subscription(data: bytes) -> Subscription:
    """A version newer than 3 is read as version 3 (Kafka: newer versions only append fields)."""
    r = _Reader(data, what="consumer protocol's subscription")
    raw_version = _protocol_version(r)
    version = _check_protocol_version(raw_version, "subscription")
    topics = [r.string("topics") for _ in range(r.array_len("topics"))]
    user_data = r.bytes_("userData", nullable=True)
    owned: TopicPartitions = []
    if version >= 1:
        for _ in range(r.array_len("ownedPartitions")):
            topic = r.string("topic")
            owned.append((topic, [r.int32() for _ in range(r.array_len("partitions"))]))
    generation_id = r.int32() if version >= 2 else -1
    rack_id = r.string("rackId", nullable=True) if version >= 3 else None
    return Subscription(topics, user_data, owned, generation_id, rack_id, raw_version)


def encode_assignment(partitions, user_data: bytes | None = None, version: int = 3) -> bytes:
    """As ConsumerProtocol.serializeAssignment: partitions grouped per topic in first-seen order.
    partitions: {topic: [p, ...]} or [(topic, p), ...]. Java writes version 3 (librdkafka and
    kafka-python write 0: the layout is the same in every version)."""
    version = _check_protocol_version(version, "assignment")
    grouped: dict[str, list[int]] = {}
    for t, p in _pairs(partitions):
        grouped.setdefault(t, []).append(p)
    w = _Writer()
    w.int16(version)
    w.array_len(len(grouped))
    for t, ps in grouped.items():
        w.string(t, "topic")
        w.array_len(len(ps))
        for p in ps:
            w.int32(p)
    w.bytes_(user_data, "userData", nullable=True)
    return w.getvalue()


def decode_assignment(data: bytes) -> Assignment:
    r = _Reader(data, what="consumer protocol's assignment")
    raw_version = _protocol_version(r)
    _check_protocol_version(raw_version, "assignment")
    assigned: TopicPartitions = []
    for _ in range(r.array_len("assignedPartitions")):
        topic = r.string("topic")
        assigned.append((topic, [r.int32() for _ in range(r.array_len("partitions"))]))
    user_data = r.bytes_("userData", nullable=True)
    return Assignment(assigned, user_data, raw_version)


__all__ = [
    "Assignment", "GroupMetadataKey", "GroupMetadataValue", "MemberMetadata", "OffsetCommitKey",
    "OffsetCommitValue", "SchemaError", "Subscription", "UnknownKey", "decode_assignment",
    "decode_group_metadata_value", "decode_key", "decode_offset_commit_value", "decode_record",
    "decode_subscription", "decode_value", "encode_assignment", "encode_subscription",
    "group_metadata_key", "group_metadata_value", "java_string_hash", "kafka_abs",
    "offset_commit_key", "offset_commit_value", "partition_for",
]
