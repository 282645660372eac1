"""The records of `__share_group_state`, as Kafka 4.4's share coordinator writes them
(share-coordinator's ShareSnapshotKey/Value and ShareUpdateKey/Value; the field layout read
from Kafka 4.4's own generated schemas).

Key: int16 record type (0 ShareSnapshot, 1 ShareUpdate), then group id (int16-length
string), topic id (16 bytes), partition (int32). Value: int16 version 0, flexible:

- ShareSnapshotValue: snapshot epoch, state epoch, leader epoch (int32 each), start offset,
  create and write timestamps (int64 each), state batches (compact array of first offset,
  last offset (int64), delivery state (int8: 0 Available, 2 Acknowledged, 4 Archived),
  delivery count (int16), tagged fields), tagged fields (tag 0: delivery complete count);
- ShareUpdateValue: snapshot epoch, leader epoch, start offset (-1: unchanged), state batches.

A null value is a tombstone (the share-partition's state deleted). The partition of a key
is Kafka's SharePartitionKey's: abs(Java hashCode of "group:topicId:partition") % count.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
import uuid
from dataclasses import dataclass, field

from .consumer_offsets import java_string_hash, kafka_abs
from .records.varint import decode_unsigned as decode_uvarint, encode_unsigned as encode_uvarint

SHARE_GROUP_STATE_TOPIC = "__share_group_state"
DEFAULT_NUM_PARTITIONS = 50  # share.coordinator.state.topic.num.partitions
SNAPSHOT, UPDATE = 0, 1
STATE_CODES = {"Available": 0, "Acquired": 1, "Acknowledged": 2, "Archived": 4}
STATE_NAMES = {v: k for k, v in STATE_CODES.items()}

_I16, _I32, _I64 = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")


class StateLogError(ValueError):
    """Bytes that are not a share-group state record."""


@dataclass
class ShareStateValue:
    start_offset: int
    batches: list[tuple[int, int, int, str]] = field(default_factory=list)  # first, last, count, state
    snapshot_epoch: int = 0
    state_epoch: int = 0
    leader_epoch: int = 0
    create_ms: int = -1
    write_ms: int = -1


def coordinator_key(group_id: str, topic_id: uuid.UUID, partition: int) -> str:
    return f"{group_id}:{topic_id_string(topic_id)}:{partition}"


def topic_id_string(topic_id: uuid.UUID) -> str:
    """Kafka's Uuid.toString: URL-safe base64 without padding."""
    import base64
    return base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")


def partition_for(group_id: str, topic_id: uuid.UUID, partition: int,
                  num_partitions: int = DEFAULT_NUM_PARTITIONS) -> int:
    return kafka_abs(java_string_hash(coordinator_key(group_id, topic_id, partition))) % num_partitions


def parse_coordinator_key(key: str) -> tuple[str, uuid.UUID, int] | None:
    """(group, topic id, partition) of a share coordinator key as FindCoordinator's SHARE key
    type carries it, "group:topic id:partition" (the topic id in Kafka's base64 form), or None
    when Kafka 4.4 refuses it. As Kafka 4.4 parses it: Java's split (trailing empty parts
    dropped), the last two parts the topic id and partition, the rest the group (not blank)."""
    parts = key.split(":")
    while parts and parts[-1] == "":
        parts.pop()
    if len(parts) < 3:
        return None
    group, topic, partition = ":".join(parts[:-2]).strip(_JAVA_BLANKS), parts[-2], parts[-1]
    if not group or not _JAVA_INT.fullmatch(partition) or len(topic) > 24:
        return None
    try:
        raw = base64.b64decode(topic + ("" if "=" in topic else "=" * (-len(topic) % 4)), altchars=b"-_",
                               validate=True)
    except (binascii.Error, ValueError):
        return None
    number = int(partition)
    if len(raw) != 16 or not -(1 << 31) <= number < (1 << 31):
        return None
    return group, uuid.UUID(bytes=raw), number


_JAVA_INT = re.compile(r"[+-]?[0-9]+")
_JAVA_BLANKS = "".join(chr(c) for c in range(33))  # what Java's String.trim strips


def encode_key(group_id: str, topic_id: uuid.UUID, partition: int, record_type: int = SNAPSHOT) -> bytes:
    group = group_id.encode()
    return _I16.pack(record_type) + _I16.pack(len(group)) + group + topic_id.bytes + _I32.pack(partition)


def decode_key(data: bytes) -> tuple[int, str, uuid.UUID, int]:
    """(record type, group id, topic id, partition)."""
    try:
        record_type = _I16.unpack_from(data, 0)[0]
        length = _I16.unpack_from(data, 2)[0]
        group = bytes(data[4:4 + length]).decode()
        pos = 4 + length
        topic_id = uuid.UUID(bytes=bytes(data[pos:pos + 16]))
        partition = _I32.unpack_from(data, pos + 16)[0]
    except (struct.error, UnicodeDecodeError, ValueError) as exc:
        raise StateLogError(f"Not a share-group state key: {exc}") from None
    if record_type not in (SNAPSHOT, UPDATE) or length < 0:
        raise StateLogError(f"Unknown share-group state record type {record_type}")
    return record_type, group, topic_id, partition


def encode_snapshot(value: ShareStateValue) -> bytes:
    out = [_I16.pack(0), _I32.pack(value.snapshot_epoch), _I32.pack(value.state_epoch), _I32.pack(value.leader_epoch),
           _I64.pack(value.start_offset), _I64.pack(value.create_ms), _I64.pack(value.write_ms),
           encode_uvarint(len(value.batches) + 1)]
    for first, last, count, state in value.batches:
        out += [_I64.pack(first), _I64.pack(last), bytes([STATE_CODES[state]]), _I16.pack(count), b"\0"]
    out.append(b"\0")  # no tagged fields
    return b"".join(out)


def decode_value(record_type: int, data: bytes | None) -> ShareStateValue | None:
    """A snapshot's or an update's value (an update's start offset is -1 when unchanged)."""
    if data is None:
        return None
    try:
        data = bytes(data)
        if _I16.unpack_from(data, 0)[0] != 0:
            raise StateLogError("Unknown share-group state value version")
        pos = 2
        snapshot_epoch = _I32.unpack_from(data, pos)[0]
        pos += 4
        state_epoch = -1
        if record_type == SNAPSHOT:
            state_epoch = _I32.unpack_from(data, pos)[0]
            pos += 4
        leader_epoch = _I32.unpack_from(data, pos)[0]
        start = _I64.unpack_from(data, pos + 4)[0]
        pos += 12
        create_ms = write_ms = -1
        if record_type == SNAPSHOT:
            create_ms, write_ms = _I64.unpack_from(data, pos)[0], _I64.unpack_from(data, pos + 8)[0]
            pos += 16
        count, pos = decode_uvarint(data, pos)
        batches = []
        for _ in range(max(count - 1, 0)):
            first, last = _I64.unpack_from(data, pos)[0], _I64.unpack_from(data, pos + 8)[0]
            state, delivered = data[pos + 16], _I16.unpack_from(data, pos + 17)[0]
            pos = _skip_tags(data, pos + 19)
            batches.append((first, last, delivered, STATE_NAMES.get(state, "Available")))
    except (struct.error, IndexError) as exc:
        raise StateLogError(f"Truncated share-group state value: {exc}") from None
    return ShareStateValue(start, batches, snapshot_epoch, state_epoch, leader_epoch, create_ms, write_ms)


def _skip_tags(data: bytes, pos: int) -> int:
    count, pos = decode_uvarint(data, pos)
    for _ in range(count):
        _, pos = decode_uvarint(data, pos)
        size, pos = decode_uvarint(data, pos)
        pos += size
    return pos


def overlay(base: list[tuple[int, int, int, str]], update: list[tuple[int, int, int, str]]):
    """The update's batches over the base's, offset by offset, merged back into runs of
    (first, last, delivery count, state)."""
    states: dict[int, tuple[int, str]] = {}
    for batches in (base, update):
        for first, last, count, state in batches:
            for offset in range(first, last + 1):
                states[offset] = (count, state)
    runs: list[tuple[int, int, int, str]] = []
    for offset, (count, state) in sorted(states.items()):
        if runs and runs[-1][1] == offset - 1 and runs[-1][2:] == (count, state):
            runs[-1] = (runs[-1][0], offset, count, state)
        else:
            runs.append((offset, offset, count, state))
    return runs


def fold(states: dict, key: bytes | None, value: bytes | None) -> None:
    """Read one record of the topic into {(group, topic id, partition): ShareStateValue}, the
    state each share-partition's records end with: a snapshot replaces it, an update lays its
    batches (and a start offset, a leader epoch) over it, a tombstone removes it. A record
    that is not a state record is skipped."""
    try:
        record_type, group, topic_id, partition = decode_key(key)
        decoded = decode_value(record_type, value)
    except StateLogError:
        return
    where = (group, topic_id, partition)
    if decoded is None:
        states.pop(where, None)
    elif record_type == SNAPSHOT or where not in states:
        states[where] = decoded
    else:
        base = states[where]
        if decoded.start_offset >= 0:
            base.start_offset = decoded.start_offset
        base.leader_epoch = max(base.leader_epoch, decoded.leader_epoch)
        base.batches = overlay(base.batches, decoded.batches)
