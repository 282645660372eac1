"""--share-group-state-decoder: Kafka 4.4's ShareGroupStateMessageParser for the records of
`__share_group_state` (a CoordinatorRecordMessageParser over ShareCoordinatorRecordSerde).

The key prints as {"type":"<record type>","data":{...}} and the value as
{"version":"<v>","data":{...}}, each record as its generated JSON converter writes it
(ShareSnapshotKey/Value for type 0, ShareUpdateKey/Value for type 1; fields in schema order,
the tagged deliveryCompleteCount only when it is not its default -1); a tombstone's value is
<DELETE>. The layout is the one engine/share_state_log.py documents; this module reads every
field as it is stored (the engine's reader keeps only what the broker needs).
"""

from __future__ import annotations

import base64
import struct

from pk.engine.javacompat import jackson_json as _json
from pk.engine.records.varint import decode_unsigned

from .segment import Rec

SNAPSHOT, UPDATE = 0, 1
_I8, _I16, _I32, _I64 = struct.Struct(">b"), struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")


class _Truncated(struct.error):
    """The bytes ran out (Java: a BufferUnderflowException)."""


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, fmt: struct.Struct):
        if self.pos + fmt.size > len(self.data):
            raise _Truncated()
        value = fmt.unpack_from(self.data, self.pos)[0]
        self.pos += fmt.size
        return value

    def uvarint(self) -> int:
        try:
            value, self.pos = decode_unsigned(self.data, self.pos)
        except (IndexError, ValueError):
            raise _Truncated() from None
        return value

    def raw(self, size: int) -> bytes:
        if self.pos + size > len(self.data):
            raise _Truncated()
        out = self.data[self.pos:self.pos + size]
        self.pos += size
        return out

    def tags(self) -> dict[int, bytes]:
        out = {}
        for _ in range(self.uvarint()):
            tag = self.uvarint()
            out[tag] = self.raw(self.uvarint())
        return out


def key_json(data: bytes) -> dict:
    """ShareSnapshotKey / ShareUpdateKey (key version 0 of both): groupId, topicId, partition."""
    r = _Reader(data)
    r.take(_I16)  # the record type
    length = r.take(_I16)
    group = r.raw(max(length, 0)).decode("utf-8", errors="replace")
    topic_id = base64.urlsafe_b64encode(r.raw(16)).decode().rstrip("=")
    return {"groupId": group, "topicId": topic_id, "partition": r.take(_I32)}


def value_json(record_type: int, data: bytes) -> tuple[int, dict]:
    """(version, fields) of a ShareSnapshotValue or a ShareUpdateValue (flexible version 0)."""
    r = _Reader(data)
    version = r.take(_I16)
    if version != 0:
        name = "ShareSnapshotValue" if record_type == SNAPSHOT else "ShareUpdateValue"
        raise ValueError(f"Unknown version {version} of {name}")
    out: dict = {"snapshotEpoch": r.take(_I32)}
    if record_type == SNAPSHOT:
        out["stateEpoch"] = r.take(_I32)
    out["leaderEpoch"] = r.take(_I32)
    out["startOffset"] = r.take(_I64)
    fixed: dict = {}
    if record_type == SNAPSHOT:
        fixed["createTimestamp"] = r.take(_I64)
        fixed["writeTimestamp"] = r.take(_I64)
    batches = []
    for _ in range(max(r.uvarint() - 1, 0)):
        batch = {"firstOffset": r.take(_I64), "lastOffset": r.take(_I64), "deliveryState": r.take(_I8),
                 "deliveryCount": r.take(_I16)}
        r.tags()
        batches.append(batch)
    tags = r.tags()
    complete = tags.get(0)
    if complete is not None and len(complete) == 4 and _I32.unpack(complete)[0] != -1:
        out["deliveryCompleteCount"] = _I32.unpack(complete)[0]  # written after startOffset, as its schema says
    out.update(fixed)
    out["stateBatches"] = batches
    return version, out


class ShareGroupStateMessageParser:
    """DumpLogSegments.ShareGroupStateMessageParser: (key text, value text) of one record."""

    def parse(self, rec: Rec) -> tuple[str | None, str | None]:
        from .parsers import _coordinator_key

        key_bytes, record_type = _coordinator_key(rec)
        if record_type not in (SNAPSHOT, UPDATE):
            return f"Unknown record type {record_type} at offset {rec.offset}, skipping.", None
        try:
            key = key_json(key_bytes)
            value = None if rec.value is None else value_json(record_type, bytes(rec.value))
        except _Truncated:
            return f"Error at offset {rec.offset}, skipping. Truncated share-group state record", None
        except ValueError as exc:
            return f"Error at offset {rec.offset}, skipping. {exc}", None
        key_text = _json({"type": str(record_type), "data": key})
        if value is None:
            return key_text, "<DELETE>"
        version, data = value
        return key_text, _json({"version": str(version), "data": data})
