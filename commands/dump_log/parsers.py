"""What --print-data-log prints for a record: the key and payload decoders
(org.apache.kafka.tools.api's String/Long/Integer/Default decoders), Kafka 4.x's parsers for
__consumer_offsets and __transaction_state records (__share_group_state's: share_state.py), and
the text of control records."""

from __future__ import annotations

import base64
import struct
import uuid
import zlib
from typing import TYPE_CHECKING, Callable

from pk.engine.broker import consumer_group_records as cgr
from pk.engine.consumer_offsets import java_utf8
from pk.engine.javacompat import jackson_json as _json

from ..errors import BUFFER_UNDERFLOW, JavaError, Unsupported
from .java import I16, I32, I64, value_of
from .segment import Rec, _invalid

if TYPE_CHECKING:
    from .tool import DumpOptions

STRING_DECODER = "org.apache.kafka.tools.api.StringDecoder"
CONTROL_TYPES = {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER"}


def make_decoder(class_name: str) -> Callable[[bytes], str]:
    """Utils.newInstance of an org.apache.kafka.tools.api.Decoder."""
    if class_name == "org.apache.kafka.tools.api.StringDecoder":
        return java_utf8
    if class_name == "org.apache.kafka.tools.api.LongDecoder":
        def long_decoder(b: bytes) -> str:
            if len(b) < 8:
                raise JavaError(BUFFER_UNDERFLOW)
            return str(I64.unpack_from(b)[0])
        return long_decoder
    if class_name == "org.apache.kafka.tools.api.IntegerDecoder":
        def int_decoder(b: bytes) -> str:
            if len(b) < 4:
                raise JavaError(BUFFER_UNDERFLOW)
            return str(I32.unpack_from(b)[0])
        return int_decoder
    if class_name == "org.apache.kafka.tools.api.DefaultDecoder":
        # Java prints the byte array's identity ("[B@<hash>"); pk derives the hash from the bytes.
        return lambda b: f"[B@{zlib.crc32(b):x}"
    raise JavaError("java.lang.RuntimeException", "Failed to load decoder class")


class DecoderMessageParser:
    def __init__(self, key_decoder, value_decoder):
        self.key_decoder = key_decoder
        self.value_decoder = value_decoder

    def parse(self, rec: Rec) -> tuple[str | None, str | None]:
        key = self.key_decoder(rec.key) if rec.key is not None else None
        if rec.value is None:
            return key, None
        return key, self.value_decoder(rec.value)



def _coordinator_key(rec: Rec) -> tuple[bytes, int | None]:
    """A coordinator record's key bytes and the record type in its first two bytes (None when
    shorter); a missing key is the decoder's RuntimeException, as Kafka's parsers throw it."""
    if rec.key is None:
        raise JavaError("java.lang.RuntimeException", f"Failed to decode message at offset {rec.offset} "
                                                      "using the specified decoder (message had a missing key)")
    key_bytes = bytes(rec.key)
    return key_bytes, I16.unpack_from(key_bytes)[0] if len(key_bytes) >= 2 else None


class OffsetsMessageParser:
    """Kafka 4.x's coordinator-record parser for __consumer_offsets: the key as
    {"type":"<record type>","data":{...}} and the value as {"version":"<v>","data":{...}}, the
    records written by their generated JSON converters (fields of the record's version, in schema
    order); a consumer group's member subscription and assignment decoded as well."""

    def parse(self, rec: Rec) -> tuple[str | None, str | None]:
        from pk.engine import consumer_offsets as co

        key_bytes, record_type = _coordinator_key(rec)
        if record_type in cgr.RECORD_TYPES:
            return _consumer_group_record(rec, key_bytes, record_type)
        if record_type not in (0, 1, 2):
            return f"Unknown record type {record_type} at offset {rec.offset}, skipping.", None
        try:
            key = co.decode_key(key_bytes)
            if isinstance(key, co.OffsetCommitKey):
                key_json = {"group": key.group, "topic": key.topic, "partition": key.partition}
                value = None if rec.value is None else offset_commit_json(bytes(rec.value))
            else:
                key_json = {"group": key.group}
                value = None if rec.value is None else group_metadata_json(bytes(rec.value))
        except co.SchemaError as exc:
            return f"Error at offset {rec.offset}, skipping. {exc}", None
        key_text = _json({"type": str(record_type), "data": key_json})
        if value is None:
            return key_text, "<DELETE>"
        version, data = value
        return key_text, _json({"version": str(version), "data": data})



def offset_commit_json(data: bytes) -> tuple[int, dict]:
    """An OffsetCommitValue as (version, fields as its generated JSON converter writes them)."""
    from pk.engine import consumer_offsets as co

    r = co._Reader(data, what="offset commit value")
    v = r.int16()
    if v not in co.OFFSET_COMMIT_VALUE_VERSIONS:
        raise co.SchemaError(f"Unknown offset message version: {v}")
    r.flexible = v >= co.FLEXIBLE_VALUE_VERSION
    out: dict = {"offset": r.int64()}
    if v >= 3:
        out["leaderEpoch"] = r.int32()
    out["metadata"] = r.string("metadata")
    out["commitTimestamp"] = r.int64()
    if v == 1:
        out["expireTimestamp"] = r.int64()
    if r.flexible:
        for _ in range(r.uvarint()):
            tag, size = r.uvarint(), r.uvarint()
            raw = r._take(size)
            if tag == 0 and size == 16 and raw != bytes(16):  # topicId, written when not zero
                import base64

                out["topicId"] = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    return v, out


def group_metadata_json(data: bytes, consumer_members: bool = True) -> tuple[int, dict]:
    """A GroupMetadataValue as (version, fields); consumer_members: a consumer group's member
    subscription and assignment decoded (DumpLogSegments), else their bytes (the console
    consumer's GroupMetadataMessageFormatter)."""
    from pk.engine import consumer_offsets as co

    value = co.decode_group_metadata_value(data)
    v = value.version
    out: dict = {"protocolType": value.protocol_type, "generation": value.generation,
                 "protocol": value.protocol, "leader": value.leader}
    if v >= 2:
        out["currentStateTimestamp"] = value.current_state_timestamp
    consumer = consumer_members and value.protocol_type == co.CONSUMER_PROTOCOL_TYPE
    members = []
    for m in value.members:
        member: dict = {"memberId": m.member_id}
        if v >= 3:
            member["groupInstanceId"] = m.group_instance_id
        member["clientId"] = m.client_id
        member["clientHost"] = m.client_host
        if v >= 1:
            member["rebalanceTimeout"] = m.rebalance_timeout
        member["sessionTimeout"] = m.session_timeout
        member["subscription"] = _subscription_json(m.subscription) if consumer else m.subscription
        member["assignment"] = _assignment_json(m.assignment) if consumer else m.assignment
        members.append(member)
    out["members"] = members
    return v, out


def _consumer_group_record(rec: Rec, key_bytes: bytes, record_type: int) -> tuple[str, str]:
    """A KIP-848 consumer group record (types 3, 5, 6, 7, 8) as Kafka's generated JSON
    converters write it: fields in schema order, camelCase names, topic ids in Kafka's base64
    form, a tagged field of a plain type only when it differs from its default (a tagged struct
    always, null included)."""
    try:
        key = cgr.KEYS[record_type].decode(memoryview(key_bytes)[2:], 0)
        key_text = _json({"type": str(record_type), "data": _camel_struct(cgr.KEYS[record_type], key)})
        if rec.value is None:
            return key_text, "<DELETE>"
        value = bytes(rec.value)
        version = I16.unpack_from(value)[0]
        body = cgr.VALUES[record_type].decode(memoryview(value)[2:], 0, exact=False)
    except (ValueError, struct.error) as exc:
        return f"Error at offset {rec.offset}, skipping. {exc}", None
    data = _camel_struct(cgr.VALUES[record_type], body)
    if record_type == cgr.MEMBER_METADATA:
        data["classicMemberMetadata"] = None  # (a classic member's; pk's consumer groups have none)
    return key_text, _json({"version": str(version), "data": data})


def _camel_struct(schema, body: dict) -> dict:
    out = {}
    for f in schema.fields:
        value = body.get(f.name)
        if f.tag is not None and value == f.default:
            continue
        head, *rest = f.name.split("_")
        out[head + "".join(w.title() for w in rest)] = _camel_value(f.type, value)
    return out


def _camel_value(kind, value):
    if value is None:
        return None
    if isinstance(value, uuid.UUID):
        return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode()
    if isinstance(value, list):
        element = getattr(kind, "element", None)
        return [_camel_value(element, v) for v in value]
    if isinstance(value, dict):
        return _camel_struct(kind, value)
    return value


TRANSACTION_STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort",
                      "Dead", "PrepareEpochFence")


class TransactionLogMessageParser:
    """Kafka 4.x's parser for __transaction_state: TransactionLogKey / TransactionLogValue as
    JSON (tagged fields only when they differ from their default), the status by name."""

    def parse(self, rec: Rec) -> tuple[str | None, str | None]:
        from pk.engine import consumer_offsets as co

        key_bytes, record_type = _coordinator_key(rec)
        if record_type != 0:
            return f"Unknown record type {record_type} at offset {rec.offset}, skipping.", None
        try:
            r = co._Reader(key_bytes, 2, what="transaction log key")
            key_text = _json({"type": "0", "data": {"transactionalId": r.string("transactionalId")}})
            if rec.value is None:
                return key_text, "<DELETE>"
            version, data = transaction_log_value_json(bytes(rec.value))
        except co.SchemaError as exc:
            return f"Error at offset {rec.offset}, skipping. {exc}", None
        return key_text, _json({"version": str(version), "data": data})



def transaction_log_value_json(data: bytes) -> tuple[int, dict]:
    """A TransactionLogValue as (version, fields: tagged ones only when not their default)."""
    from pk.engine import consumer_offsets as co

    r = co._Reader(data, what="transaction log value")
    v = r.int16()
    r.flexible = v >= 1
    producer_id = r.int64()
    epoch = r.int16()
    timeout = r.int32()
    status = r._take(1)[0]
    count = r.uvarint() - 1 if r.flexible else r.int32()
    partitions = None
    if count >= 0:
        partitions = []
        for _ in range(count):
            topic = r.string("topic")
            ids = [r.int32() for _ in range(r.uvarint() - 1 if r.flexible else r.int32())]
            r.skip_tagged_fields()
            partitions.append({"topic": topic, "partitionIds": ids})
    last_update = r.int64()
    start = r.int64()
    tagged = {}
    if r.flexible:
        for _ in range(r.uvarint()):
            tag, size = r.uvarint(), r.uvarint()
            raw = r._take(size)
            if tag in (0, 1) and size == 8:
                tagged[tag] = I64.unpack(raw)[0]
            elif tag in (2, 3) and size == 2:
                tagged[tag] = I16.unpack(raw)[0]
    out: dict = {"producerId": producer_id}
    if tagged.get(0, -1) != -1:
        out["previousProducerId"] = tagged[0]
    if tagged.get(1, -1) != -1:
        out["nextProducerId"] = tagged[1]
    out["producerEpoch"] = epoch
    if tagged.get(3, -1) != -1:
        out["nextProducerEpoch"] = tagged[3]
    out["transactionTimeoutMs"] = timeout
    out["transactionStatus"] = TRANSACTION_STATES[status] if status < len(TRANSACTION_STATES) else status
    out["transactionPartitions"] = partitions
    out["transactionLastUpdateTimestampMs"] = last_update
    out["transactionStartTimestampMs"] = start
    if tagged.get(2, 0) != 0:
        out["clientTransactionVersion"] = tagged[2]
    return v, out


def _topic_partitions(r) -> list[dict]:
    out = []
    for _ in range(r.array_len("topicPartitions")):
        topic = r.string("topic")
        out.append({"topic": topic, "partitions": [r.int32() for _ in range(r.array_len("partitions"))]})
    return out


def _subscription_json(data: bytes) -> dict:
    """ConsumerProtocolSubscription at the version its first two bytes give."""
    from pk.engine import consumer_offsets as co

    r = co._Reader(data, what="subscription")
    v = r.int16()
    out: dict = {"topics": [r.string("topics") for _ in range(r.array_len("topics"))],
                 "userData": r.bytes_("userData", nullable=True)}
    if v >= 1:
        out["ownedPartitions"] = _topic_partitions(r)
    if v >= 2:
        out["generationId"] = r.int32()
    if v >= 3:
        out["rackId"] = r.string("rackId", nullable=True)
    return out


def _assignment_json(data: bytes) -> dict:
    from pk.engine import consumer_offsets as co

    r = co._Reader(data, what="assignment")
    r.int16()
    return {"assignedPartitions": _topic_partitions(r), "userData": r.bytes_("userData", nullable=True)}


def message_parser(o: DumpOptions):
    """DumpLogSegmentsOptions.messageParser (built anew for each .log file, as in Kafka)."""
    if o.offsets_decoder:
        return OffsetsMessageParser()
    if o.transaction_log_decoder:
        return TransactionLogMessageParser()
    if o.cluster_metadata_decoder:
        raise Unsupported("--cluster-metadata-decoder is not supported by pk")
    if o.remote_log_metadata_decoder:
        raise Unsupported("--remote-log-metadata-decoder is not supported by pk")
    if o.share_group_state_decoder:
        from .share_state import ShareGroupStateMessageParser

        return ShareGroupStateMessageParser()
    value_decoder = make_decoder(value_of("value-decoder-class", o.value_decoder_class, STRING_DECODER))
    key_decoder = make_decoder(value_of("key-decoder-class", o.key_decoder_class, STRING_DECODER))
    return DecoderMessageParser(key_decoder, value_decoder)



def control_record_text(rec: Rec) -> str:
    """The control-record part of a record line (endTxnMarker, snapshot header/footer, type)."""
    if rec.key is None:
        raise JavaError("java.lang.NullPointerException")
    if len(rec.key) < 4:
        raise _invalid("Invalid value size found for end control record key. Must have at least 4 bytes, "
                       f"but found only {len(rec.key)}")
    version, type_id = struct.unpack_from(">hh", rec.key)
    if version < 0:
        raise _invalid(f"Invalid version found for control record: {version}. May indicate data corruption")
    name = CONTROL_TYPES.get(type_id, "UNKNOWN")
    if name in ("ABORT", "COMMIT"):
        value = rec.value
        if value is None:
            raise JavaError("java.lang.NullPointerException")
        if len(value) < 6:
            raise _invalid("Invalid value size found for end transaction marker. Must have at least 6 bytes, "
                           f"but found only {len(value)}")
        marker_version, epoch = struct.unpack_from(">hi", value)
        if marker_version < 0:
            raise _invalid(f"Invalid version found for end transaction marker: {marker_version}. "
                           "May indicate data corruption")
        return f" endTxnMarker: {name} coordinatorEpoch: {epoch}"
    if name == "LEADER_CHANGE":
        return f" LeaderChange: {_leader_change_json(rec.value or b'')}"
    if name == "SNAPSHOT_HEADER":
        value = rec.value or b""
        if len(value) < 10:
            raise JavaError(BUFFER_UNDERFLOW)
        v, ts = struct.unpack_from(">hq", value)
        return f' SnapshotHeader {{"version":{v},"lastContainedLogTimestamp":{ts}}}'
    if name == "SNAPSHOT_FOOTER":
        value = rec.value or b""
        if len(value) < 2:
            raise JavaError(BUFFER_UNDERFLOW)
        return f' SnapshotFooter {{"version":{I16.unpack_from(value)[0]}}}'
    return f" controlType: {name}({type_id})"


def _leader_change_json(value: bytes) -> str:
    """LeaderChangeMessage (flexible: compact arrays of {voterId}, tagged fields) as JSON."""
    from pk.engine import consumer_offsets as co

    r = co._Reader(value, flexible=True, what="LeaderChangeMessage")
    try:
        version = r.int16()
        leader = r.int32()
        lists = []
        for _ in range(2):
            voters = []
            for _ in range(r.uvarint() - 1):
                voters.append({"voterId": r.int32()})
                r.skip_tagged_fields()
            lists.append(voters)
    except co.SchemaError:
        raise JavaError(BUFFER_UNDERFLOW) from None
    return _json({"version": version, "leaderId": leader, "voters": lists[0], "grantingVoters": lists[1]})
