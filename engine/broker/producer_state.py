"""Idempotent producers: producer id allocation and per-partition sequence checks.

Producer ids (InitProducerId) come from a counter persisted in `<data dir>/.pk/producer-ids`,
reserved a block at a time (one durable write per BLOCK ids, as Kafka's controller hands
out id blocks), so an id is never handed out twice, across restarts included. In ZooKeeper
mode the blocks come from the `/latest_producer_id_block` znode instead, as Kafka 2.8's
ProducerIdManager takes them (a conditional write of the next block), so the brokers of a
cluster never hand out the same id.

Per partition, each producer id has an epoch and the sequence ranges of its last five batches
(Kafka's ProducerStateManager keeps the same five). A produced batch is checked against them:

- a batch whose (epoch, first sequence, last sequence) is one of the five is a duplicate (a
  retry whose answer was lost): it is not appended again, the client gets the offsets the
  original got;
- an older epoch is fenced (INVALID_PRODUCER_EPOCH);
- a new epoch must start at sequence 0; the same epoch must continue at last sequence + 1
  (wrapping after 2**31-1), anything else is OUT_OF_ORDER_SEQUENCE_NUMBER;
- a producer id the partition has no state for is accepted at any sequence (Kafka's rule
  since 2.5: its state may have been removed with the records by retention or DeleteRecords,
  or expired after producer.id.expiration.ms without writes, 1 day).

Each partition also knows its open transactions (producer id -> offset of the transaction's
first record here: the earliest is the last stable offset), opened by a transactional batch
and closed by the COMMIT/ABORT marker the transaction coordinator (transactions.py) writes;
a marker with a bumped epoch fences the producer's older epoch.

A follower keeps the same state from the batches it copies (append_replicated), and writes the
.txnindex entry of each abort marker it copies, as the leader did: a follower that becomes
leader answers read_committed fetches from its own index.

The state lives in memory. After a restart it is rebuilt from the batch headers of the log the
first time the partition is touched by an idempotent produce (headers only: read in large
chunks, never decompressed).
"""

from __future__ import annotations

import json
import os
from collections import deque
from typing import NamedTuple

from .. import records, txn_index
from ..errors import KafkaError
from ..fileutil import atomic_write, locked
from ..protocol import errors as E

BLOCK = 1000
MAX_CACHED_BATCHES = 5  # Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN
EXPIRATION_MS = 86_400_000  # Kafka's producer.id.expiration.ms default
_INT32_MAX = (1 << 31) - 1


class ProducerIdAllocator:
    """Hands out producer ids; the next unreserved id is kept in `<data dir>/.pk/producer-ids`."""

    def __init__(self, data_dir: str):
        self.path = os.path.join(data_dir, ".pk", "producer-ids")
        self._next = 0
        self._limit = 0  # ids below it are reserved for this process
        self._blocks = None  # a ZooKeeperBlocks in ZooKeeper mode

    def use_zookeeper(self, blocks: "ZooKeeperBlocks") -> None:
        """Take the blocks from ZooKeeper from now on (the local block is given up)."""
        self._blocks = blocks
        self._next = self._limit = 0

    def allocate(self) -> int:
        if self._next >= self._limit:
            self._reserve_block()
        pid = self._next
        self._next += 1
        return pid

    def _reserve_block(self) -> None:
        if self._blocks is not None:
            start = self._blocks.reserve(BLOCK)
            self._next, self._limit = start, start + BLOCK
            return
        with locked(self.path + ".lock"):
            try:
                with open(self.path, encoding="ascii") as f:
                    start = int(f.read().strip() or 0)
            except (FileNotFoundError, ValueError):
                start = 0
            atomic_write(self.path, f"{start + BLOCK}\n".encode())
        self._next, self._limit = start, start + BLOCK


class ZooKeeperBlocks:
    """Kafka 2.8's producer id blocks in ZooKeeper: `/latest_producer_id_block` holds the last
    block handed out ({"version":1,"broker":id,"block_start":"..","block_end":".."}, the bounds
    as strings, inclusive); a broker takes the next one with a write conditional on the
    version it read, and reads again when another broker won."""

    PATH = "/latest_producer_id_block"

    def __init__(self, zk_client, broker_id: int):
        self._zk = zk_client  # () -> KazooClient
        self.broker_id = broker_id

    def reserve(self, size: int) -> int:
        from kazoo.exceptions import BadVersionError, KazooException, NodeExistsError, NoNodeError

        zk = self._zk()
        try:
            for _ in range(100):
                try:
                    data, stat = zk.get(self.PATH)
                except NoNodeError:
                    data, stat = None, None
                start = 0
                if data:
                    start = int(json.loads(data)["block_end"]) + 1
                block = json.dumps({"version": 1, "broker": self.broker_id, "block_start": str(start),
                                    "block_end": str(start + size - 1)}, separators=(",", ":")).encode()
                try:
                    if stat is None:
                        zk.create(self.PATH, block, makepath=True)
                    else:
                        zk.set(self.PATH, block, version=stat.version)
                    return start
                except (BadVersionError, NodeExistsError):
                    continue  # another broker took a block meanwhile
        except (KazooException, ValueError, KeyError, TypeError) as exc:
            raise ProducerIdsUnavailable(f"Cannot take a producer id block from ZooKeeper: {exc}") from exc
        raise ProducerIdsUnavailable("Cannot take a producer id block from ZooKeeper: too much contention")


class ProducerIdsUnavailable(KafkaError):
    code = E.COORDINATOR_NOT_AVAILABLE


class BatchRange(NamedTuple):
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int


class ProducerError(Exception):
    """A batch the sequence rules refuse; `code` is the Kafka error code to answer."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


class _Entry:
    __slots__ = ("epoch", "batches", "last_ms")

    def __init__(self, epoch: int):
        self.epoch = epoch
        self.batches: deque[BatchRange] = deque(maxlen=MAX_CACHED_BATCHES)
        self.last_ms = 0  # when it last wrote (a batch timestamp when replayed from the log)


def _last_seq(header: records.BatchHeader) -> int:
    last = header.base_sequence + header.last_offset_delta
    return last - _INT32_MAX - 1 if last > _INT32_MAX else last


class PartitionProducers:
    """The producers of one partition (one log, identified by its topic id), and its open
    transactions: producer id -> offset of the transaction's first record here."""

    def __init__(self) -> None:
        self.entries: dict[int, _Entry] = {}
        self.ongoing: dict[int, int] = {}

    def check(self, header: records.BatchHeader) -> BatchRange | None:
        """Check an idempotent batch before it is appended: returns the original offsets of a
        duplicate, None when it is to be appended, or raises ProducerError."""
        entry = self.entries.get(header.producer_id)
        if entry is None:
            return None
        first, last, epoch = header.base_sequence, _last_seq(header), header.producer_epoch
        if epoch < entry.epoch:
            raise ProducerError(E.INVALID_PRODUCER_EPOCH,
                                f"Epoch of producer {header.producer_id} is {epoch}, which is smaller "
                                f"than the last seen epoch {entry.epoch}")
        if epoch == entry.epoch:
            for batch in entry.batches:
                if batch.first_seq == first and batch.last_seq == last:
                    return batch
            if entry.batches:
                expected = entry.batches[-1].last_seq + 1
                if expected > _INT32_MAX:
                    expected = 0
                if first != expected:
                    raise ProducerError(E.OUT_OF_ORDER_SEQUENCE_NUMBER,
                                        f"Out of order sequence number for producer {header.producer_id}: "
                                        f"{first} (incoming seq. number), {expected - 1} (current end "
                                        f"sequence number)")
        elif first != 0:
            raise ProducerError(E.OUT_OF_ORDER_SEQUENCE_NUMBER,
                                f"Invalid sequence number for new epoch of producer {header.producer_id}: "
                                f"{epoch} (request epoch), {first} (seq. number), {entry.epoch} (current "
                                f"producer epoch)")
        return None

    def update(self, header: records.BatchHeader, first_offset: int, last_offset: int,
               now_ms: int) -> None:
        """Record an appended batch (its offsets as assigned)."""
        entry = self.entries.get(header.producer_id)
        if entry is None or header.producer_epoch != entry.epoch:
            entry = self.entries[header.producer_id] = _Entry(header.producer_epoch)
        entry.batches.append(BatchRange(header.base_sequence, _last_seq(header), first_offset, last_offset))
        entry.last_ms = now_ms
        if header.is_transactional:
            self.ongoing.setdefault(header.producer_id, first_offset)

    def check_marker(self, producer_id: int, epoch: int) -> None:
        """A transaction marker is written with the producer's current epoch or a bumped one
        (an abort that fences it): never an older one."""
        entry = self.entries.get(producer_id)
        if entry is not None and epoch < entry.epoch:
            raise ProducerError(E.INVALID_PRODUCER_EPOCH,
                                f"Epoch of producer {producer_id} is {epoch}, which is smaller than the "
                                f"last seen epoch {entry.epoch}")

    def end_transaction(self, producer_id: int, epoch: int, marker_offset: int, now_ms: int) -> int | None:
        """A marker was appended at `marker_offset`: the producer's transaction here is over.
        Returns the offset of its first record (None when it wrote nothing here). A bumped
        epoch fences the producer's older one (its sequences start again at 0)."""
        entry = self.entries.get(producer_id)
        if entry is None or entry.epoch != epoch:
            entry = self.entries[producer_id] = _Entry(epoch)
        entry.last_ms = now_ms
        return self.ongoing.pop(producer_id, None)

    def first_unstable_offset(self) -> int | None:
        """The first offset of the earliest open transaction (the last stable offset), if any."""
        return min(self.ongoing.values()) if self.ongoing else None

    def expire(self, before_ms: int) -> None:
        """Forget producers that have not written since `before_ms` (Kafka's
        producer.id.expiration.ms): their next batch is accepted at any sequence."""
        for pid in [pid for pid, e in self.entries.items() if e.last_ms < before_ms and pid not in self.ongoing]:
            del self.entries[pid]

    @classmethod
    def from_log(cls, log) -> "PartitionProducers":
        """Replay the headers of every batch of `log` written by an idempotent producer (and
        the markers that ended transactions)."""
        state = cls()
        for seg in log.segments:
            for _, header in records.iter_file_batches(seg.fd):
                if header.producer_id < 0:
                    continue
                if header.is_control:
                    state.end_transaction(header.producer_id, header.producer_epoch, header.base_offset,
                                          header.max_timestamp)
                elif header.base_sequence >= 0:
                    state.update(header, header.base_offset, header.last_offset, header.max_timestamp)
        return state


class ProducerStateManager:
    """Per-partition producer state for the whole broker, built lazily."""

    def __init__(self, data_dir: str):
        self.ids = ProducerIdAllocator(data_dir)
        self._partitions: dict[tuple[str, int], tuple[str, PartitionProducers]] = {}

    def partition(self, log) -> PartitionProducers:
        key = (log.topic, log.partition)
        known = self._partitions.get(key)
        if known is not None and known[0] == log.topic_id:
            return known[1]
        state = PartitionProducers.from_log(log)
        self._partitions[key] = (log.topic_id, state)
        return state

    def loaded(self, log) -> PartitionProducers | None:
        """The partition's state if it was built already (a partition no transactional
        producer wrote to since the start has no open transaction: the coordinator loads
        those that had one when it recovers)."""
        known = self._partitions.get((log.topic, log.partition))
        return known[1] if known is not None and known[0] == log.topic_id else None

    def expire(self, before_ms: int) -> None:
        for _, state in self._partitions.values():
            state.expire(before_ms)

    def forget_topic(self, topic: str) -> None:
        for key in [k for k in self._partitions if k[0] == topic]:
            del self._partitions[key]

    def append_replicated(self, log, data) -> int:
        """A follower's append of the leader's batches (log.append_as_follower), the producer
        state kept and each copied abort marker's transaction put in the .txnindex. Returns
        the new log end offset. Batches of no idempotent producer cost one header read."""
        batches = [(pos, h) for pos, h in records.iter_batches(data) if h.producer_id >= 0]
        if not batches:
            return log.append_as_follower(data)
        state = self.partition(log)  # as the log stands before these batches
        end = log.append_as_follower(data)
        for pos, header in batches:
            if not header.is_control:
                if header.base_sequence >= 0:
                    state.update(header, header.base_offset, header.last_offset, header.max_timestamp)
                continue
            first = state.end_transaction(header.producer_id, header.producer_epoch, header.base_offset,
                                          header.max_timestamp)
            if first is not None and records.control_type(data, pos, header) == records.CONTROL_ABORT:
                lso = state.first_unstable_offset()
                entry = txn_index.AbortedTxn(header.producer_id, first, header.base_offset,
                                             header.base_offset + 1 if lso is None else lso)
                segment = max(seg.base_offset for seg in log.segments if seg.base_offset <= header.base_offset)
                txn_index.append(txn_index.path_for(log.dir, segment), entry)
        return end

    def forget_partition(self, topic: str, partition: int) -> None:
        """The partition's log changed under the state (a follower's truncation, a new
        leadership): rebuild it from the log when next needed."""
        self._partitions.pop((topic, partition), None)
