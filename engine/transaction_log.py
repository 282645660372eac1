"""Record formats of `__transaction_state`, the transaction coordinator's log.

One record per state change of a transactional id, keyed by it (the topic is compacted:
the latest record per id is its state). Byte-exact with Kafka 4.4's schemas
(transaction-coordinator TransactionLogKey / TransactionLogValue):

* key: int16 version 0, then string transactional id;
* value version 0: int64 producer id, int16 producer epoch, int32 transaction timeout ms,
  int8 status, nullable array of (string topic, array of int32 partition), int64 last
  update ms, int64 start ms; version 1 is the same, flexible, with tagged fields 0
  PreviousProducerId, 1 NextProducerId, 2 ClientTransactionVersion. pk writes version 0 (as
  Kafka does for transaction version 1 clients) and reads both;
* a null value (tombstone) removes the id (expired by transactional.id.expiration.ms).

The partition of an id is Kafka's: abs(Java hashCode) % partition count
(transaction.state.log.num.partitions, 50). Pure functions: no I/O.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .consumer_offsets import SchemaError, _Reader, _Writer, kafka_abs, java_string_hash

TRANSACTION_STATE_TOPIC = "__transaction_state"
DEFAULT_NUM_PARTITIONS = 50
KEY_VERSION = 0
VALUE_VERSIONS = (0, 1)

# Kafka's TransactionState ids (the int8 `status`) and names (DescribeTransactions, ListTransactions).
EMPTY, ONGOING, PREPARE_COMMIT, PREPARE_ABORT, COMPLETE_COMMIT, COMPLETE_ABORT, DEAD, PREPARE_EPOCH_FENCE = range(8)
STATE_NAMES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort",
               "Dead", "PrepareEpochFence")

_I16 = struct.Struct(">h")


def partition_for(transactional_id: str, num_partitions: int = DEFAULT_NUM_PARTITIONS) -> int:
    return kafka_abs(java_string_hash(transactional_id)) % num_partitions


@dataclass
class TransactionLogValue:
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    status: int
    partitions: dict[str, list[int]] = field(default_factory=dict)
    last_update_ms: int = -1
    start_ms: int = -1
    previous_producer_id: int = -1
    next_producer_id: int = -1
    client_transaction_version: int = 0

    @property
    def state_name(self) -> str:
        return STATE_NAMES[self.status] if 0 <= self.status < len(STATE_NAMES) else f"Unknown({self.status})"


def encode_key(transactional_id: str) -> bytes:
    w = _Writer()
    w.int16(KEY_VERSION)
    w.string(transactional_id, "transactionalId")
    return w.getvalue()


def decode_key(data: bytes) -> str:
    r = _Reader(data, what="TransactionLogKey")
    version = r.int16()
    if version != KEY_VERSION:
        raise SchemaError(f"Unknown version {version} from the transaction log key")
    return r.string("transactionalId")


def encode_value(value: TransactionLogValue) -> bytes:
    w = _Writer()
    w.int16(0)
    w.int64(value.producer_id)
    w.int16(value.producer_epoch)
    w.int32(value.timeout_ms)
    w.parts.append(bytes([value.status & 0xFF]))
    if value.status == EMPTY:  # Kafka writes an Empty transaction's partitions as null
        w.int32(-1)
        value = TransactionLogValue(**{**value.__dict__, "partitions": {}})
    else:
        w.array_len(len(value.partitions))
    for topic, parts in sorted(value.partitions.items()):
        w.string(topic, "topic")
        w.array_len(len(parts))
        for p in sorted(parts):
            w.int32(p)
    w.int64(value.last_update_ms)
    w.int64(value.start_ms)
    return w.getvalue()


def decode_value(data: bytes | None) -> TransactionLogValue | None:
    if data is None:
        return None
    version = _I16.unpack_from(data)[0] if len(data) >= 2 else -1
    if version not in VALUE_VERSIONS:
        raise SchemaError(f"Unknown version {version} from the transaction log message value")
    flexible = version >= 1
    r = _Reader(data, 2, flexible=flexible, what="TransactionLogValue")
    producer_id = r.int64()
    epoch = r.int16()
    timeout = r.int32()
    status = r._take(1)[0]
    partitions: dict[str, list[int]] = {}
    length = r.uvarint() - 1 if flexible else r.int32()
    for _ in range(max(length, 0)):  # null (-1): no partitions
        topic = r.string("topic")
        partitions[topic] = [r.int32() for _ in range(r.array_len("partitionIds"))]
        r.skip_tagged_fields()
    value = TransactionLogValue(producer_id, epoch, timeout, status, partitions, r.int64(), r.int64())
    if flexible:
        for _ in range(r.uvarint()):
            tag, size = r.uvarint(), r.uvarint()
            raw = r._take(size)
            if tag == 0:
                value.previous_producer_id = struct.unpack(">q", raw)[0]
            elif tag == 1:
                value.next_producer_id = struct.unpack(">q", raw)[0]
            elif tag == 2:
                value.client_transaction_version = _I16.unpack(raw)[0]
    return value
