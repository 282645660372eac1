"""The transaction coordinator: InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
TxnOffsetCommit, WriteTxnMarkers, DescribeTransactions, ListTransactions.

This broker is the coordinator of every transactional id (FindCoordinator key_type 1 names
it). Each transactional id has one `Txn`: its producer id and epoch, timeout, state (Kafka's
TransactionState: Empty, Ongoing, PrepareCommit, ...) and the partitions its open transaction
wrote to. Every change of state is first appended to `__transaction_state` (records in
engine/transaction_log.py; the topic is created on first use, compacted, with
transaction.state.log.* settings) and the whole table is read back from it at start.

Ending a transaction (EndTxn, an abort on timeout or when a new producer fences the old
one) goes PrepareCommit/PrepareAbort -> markers -> CompleteCommit/CompleteAbort without
waiting for anything: the broker is the leader of every partition, so it writes the control
batch (records.control_batch) into each partition itself, records an abort in the segment's
.txnindex (engine/txn_index.py) and moves the partition's last stable offset on
(producer_state.PartitionProducers). A transaction found in a Prepare state at start is
finished the same way (markers are idempotent for consumers: a second one ends nothing).

Offsets sent with a transaction (TxnOffsetCommit) are held by the coordinator and committed
to the group's offsets (engine/offsets.py, one ordinary OffsetCommit batch) when the
transaction commits; an abort drops them. The `__consumer_offsets` partition is part of the
transaction (AddOffsetsToTxn) as in Kafka, but gets no marker: its records are never
transactional.

Zombie fencing: InitProducerId with the id of a live producer bumps the epoch (aborting an
open transaction with the bumped epoch first), so the older producer's next request is
refused with PRODUCER_FENCED (INVALID_PRODUCER_EPOCH for request versions that predate
KIP-588). A transaction open for longer than its timeout is aborted the same way from the
broker tick, every transaction.abort.timed.out.transaction.cleanup.interval.ms.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field

from .. import acls, records, topic_names, txn_index, validation
from .. import transaction_log as tlog
from ..errors import KafkaError, TopicExistsError, UnknownTopicOrPartitionError
from ..offsets import CommittedOffset
from ..protocol import ApiKey
from ..protocol import errors as E
from .producer_state import ProducerError

log = logging.getLogger("pk.broker")

MAX_EPOCH = 32767
# Below these request versions a client does not know PRODUCER_FENCED (KIP-588): it is told
# INVALID_PRODUCER_EPOCH instead (TxnOffsetCommit, checked by the group coordinator in Kafka,
# always is).
# TxnOffsetCommit checks the member as OffsetCommit v9+ does (a consumer-protocol member's epoch
# included; an unknown group with a generation is GROUP_ID_NOT_FOUND).
_COMMIT_CHECKS_VERSION = 9
_FENCED_SINCE = {ApiKey.INIT_PRODUCER_ID: 4, ApiKey.ADD_PARTITIONS_TO_TXN: 2, ApiKey.ADD_OFFSETS_TO_TXN: 2,
                 ApiKey.END_TXN: 2, ApiKey.TXN_OFFSET_COMMIT: 1 << 15}


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Txn:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: int = tlog.EMPTY
    partitions: dict = field(default_factory=dict)  # {(topic, partition): None}, in the order added
    start_ms: int = -1
    last_update_ms: int = -1
    last_producer_epoch: int = -1  # the epoch before the last bump (a retried InitProducerId)
    # group -> {(topic, partition): (offset, metadata)}: TxnOffsetCommit's, until the end
    pending_offsets: dict = field(default_factory=dict)

    def record(self) -> tlog.TransactionLogValue:
        by_topic: dict[str, list[int]] = {}
        for topic, p in self.partitions:
            by_topic.setdefault(topic, []).append(p)
        return tlog.TransactionLogValue(self.producer_id, self.producer_epoch, self.timeout_ms, self.state,
                                        by_topic, self.last_update_ms, self.start_ms)

    @classmethod
    def from_record(cls, transactional_id: str, value: tlog.TransactionLogValue) -> "Txn":
        return cls(transactional_id, value.producer_id, value.producer_epoch, value.timeout_ms, value.status,
                   dict.fromkeys((t, p) for t, ps in value.partitions.items() for p in ps), value.start_ms,
                   value.last_update_ms)


class _Answered(Exception):
    """Every partition's code is set already."""


class TxnError(Exception):
    def __init__(self, code: int):
        super().__init__(E.error_name(code))
        self.code = code


def _require(guard, request, operation: int, resource_type: int, name: str, code: int) -> None:
    """TxnError(code) unless the caller may `operation` the resource."""
    if not guard.allows(request, operation, resource_type, name):
        raise TxnError(code)


class TransactionHandlers:
    def __init__(self, broker):
        self.broker = broker
        self.engine = broker.engine
        config = broker.config
        self.max_timeout_ms = config.get_int("transaction.max.timeout.ms")
        self.cleanup_interval = config.get_int("transaction.abort.timed.out.transaction.cleanup.interval.ms") / 1000
        self.id_expiration_ms = config.get_int("transactional.id.expiration.ms")
        self.num_partitions = config.get_int("transaction.state.log.num.partitions")
        self.segment_bytes = config.get("transaction.state.log.segment.bytes")
        self.txns: dict[str, Txn] = {}
        self._next_cleanup = time.monotonic() + self.cleanup_interval
        self._recover()
        broker.register(ApiKey.INIT_PRODUCER_ID, self.init_producer_id)
        broker.register(ApiKey.ADD_PARTITIONS_TO_TXN, self.add_partitions_to_txn)
        broker.register(ApiKey.ADD_OFFSETS_TO_TXN, self.add_offsets_to_txn)
        broker.register(ApiKey.END_TXN, self.end_txn)
        broker.register(ApiKey.WRITE_TXN_MARKERS, self.write_txn_markers)
        broker.register(ApiKey.TXN_OFFSET_COMMIT, self.txn_offset_commit)
        broker.register(ApiKey.DESCRIBE_TRANSACTIONS, self.describe_transactions)
        broker.register(ApiKey.LIST_TRANSACTIONS, self.list_transactions)

    @property
    def producers(self):
        return self.broker.data.producers

    # ================================================================== __transaction_state
    def _state_topic_partitions(self) -> int | None:
        try:
            return self.engine.topic(tlog.TRANSACTION_STATE_TOPIC).partitions
        except UnknownTopicOrPartitionError:
            return None

    def ensure_state_topic(self) -> int:
        """__transaction_state's partition count, the topic created with Kafka's settings when
        missing (on first use, on FindCoordinator as Kafka does, and after a client deleted it)."""
        count = self._state_topic_partitions()
        if count is None and self.engine.internal_topics_replicated:
            return self.num_partitions  # ZooKeeper mode: only FindCoordinator creates it (zookeeper.py)
        if count is None:
            try:
                self.engine.create_topic(tlog.TRANSACTION_STATE_TOPIC, self.num_partitions, 1, configs={
                    "cleanup.policy": "compact", "compression.type": "uncompressed",
                    "segment.bytes": self.segment_bytes, "min.insync.replicas": "1",
                    "unclean.leader.election.enable": "false"})
            except TopicExistsError:
                pass  # created meanwhile by another process on the data dir
            count = self._state_topic_partitions() or self.num_partitions
        return count

    def _persist(self, txn: Txn, tombstone: bool = False) -> None:
        """Append the transaction's state to its __transaction_state partition."""
        count = self.ensure_state_topic()
        txn.last_update_ms = now_ms()
        value = None if tombstone else tlog.encode_value(txn.record())
        plog = self.engine.partition(tlog.TRANSACTION_STATE_TOPIC, tlog.partition_for(txn.transactional_id, count))
        plog.append_records([(tlog.encode_key(txn.transactional_id), value, (), txn.last_update_ms)])

    def _recover(self) -> None:
        """Read the coordinator's table back from __transaction_state; finish what was being
        ended; load the producer state of partitions with an open transaction (their last
        stable offset)."""
        count = self._state_topic_partitions()
        if count is None:
            return

        def take(rec) -> None:
            try:
                tid = tlog.decode_key(rec.key)
                value = tlog.decode_value(rec.value)
            except (tlog.SchemaError, TypeError, ValueError):
                return
            if value is None:
                self.txns.pop(tid, None)
            else:
                self.txns[tid] = Txn.from_record(tid, value)

        for p in range(count):
            try:
                self.engine.partition(tlog.TRANSACTION_STATE_TOPIC, p).each_record(0, take)
            except (KafkaError, OSError) as exc:
                log.warning("Cannot read %s-%d: %s", tlog.TRANSACTION_STATE_TOPIC, p, exc)
        for txn in self.txns.values():
            try:
                if txn.state in (tlog.PREPARE_COMMIT, tlog.PREPARE_ABORT):
                    self._finish(txn, txn.state == tlog.PREPARE_COMMIT)
                elif txn.state == tlog.PREPARE_EPOCH_FENCE:
                    self._finish(txn, False)
                elif txn.state == tlog.ONGOING:
                    for topic, p in txn.partitions:
                        if topic != topic_names.GROUP_METADATA_TOPIC and self._partition_exists(topic, p):
                            self.producers.partition(self.broker.data.log(topic, p))
            except (KafkaError, OSError) as exc:
                log.warning("Cannot recover transaction %s: %s", txn.transactional_id, exc)
        if self.txns:
            log.info("Loaded %d transactional id(s) from %s", len(self.txns), tlog.TRANSACTION_STATE_TOPIC)

    # ================================================================== ending transactions
    def _write_marker(self, topic: str, partition: int, producer_id: int, epoch: int, commit: bool,
                      coordinator_epoch: int = 0) -> None:
        """Append a COMMIT/ABORT marker to one partition and end the producer's transaction
        there: an abort goes into the active segment's .txnindex."""
        plog = self.broker.data.log(topic, partition)
        state = self.producers.partition(plog)
        state.check_marker(producer_id, epoch)
        ts = now_ms()
        (offset, _), = plog.append_batches([records.control_batch(producer_id, epoch, commit, ts,
                                                                  coordinator_epoch)], ts, markers=True)
        first = state.end_transaction(producer_id, epoch, offset, ts)
        if not commit and first is not None:
            lso = state.first_unstable_offset()
            entry = txn_index.AbortedTxn(producer_id, first, offset, offset + 1 if lso is None else lso)
            txn_index.append(txn_index.path_for(plog.dir, plog.active_segment.base_offset), entry)

    def _finish(self, txn: Txn, commit: bool, bump: bool = False) -> None:
        """PrepareCommit/PrepareAbort -> markers (and the held offsets) -> Complete*. With
        `bump` (transaction version 2: EndTxn v5+), the epoch is bumped first and the markers
        carry the new one; an exhausted epoch then moves on to a new producer id."""
        if bump:
            txn.last_producer_epoch = txn.producer_epoch
            txn.producer_epoch += 1
        txn.state = tlog.PREPARE_COMMIT if commit else tlog.PREPARE_ABORT
        self._persist(txn)
        for topic, p in txn.partitions:
            if topic == topic_names.GROUP_METADATA_TOPIC:
                continue
            try:
                self._write_marker(topic, p, txn.producer_id, txn.producer_epoch, commit)
            except (KafkaError, ProducerError, OSError) as exc:
                # a deleted topic: nothing left to mark
                log.warning("Cannot write the %s marker of %s to %s-%d: %s", "COMMIT" if commit else "ABORT",
                            txn.transactional_id, topic, p, exc)
        if commit:
            self._commit_offsets(txn)
        self._release_pending_offsets(txn)
        txn.pending_offsets = {}
        txn.state = tlog.COMPLETE_COMMIT if commit else tlog.COMPLETE_ABORT
        txn.partitions = {}
        if bump and txn.producer_epoch >= MAX_EPOCH - 1:
            txn.producer_id, txn.producer_epoch, txn.last_producer_epoch = self.producers.ids.allocate(), 0, -1
        self._persist(txn)
        self.broker.notify_data()

    def _commit_offsets(self, txn: Txn) -> None:
        """The offsets sent with the transaction become the groups' committed offsets, through
        the group coordinator's one write path."""
        coordinator = self.broker.groups.coordinator
        for group, offsets in txn.pending_offsets.items():
            try:
                coordinator.commit_offsets(group, dict(offsets))
            except (KafkaError, OSError) as exc:
                log.warning("Cannot commit the offsets of group %s sent with transaction %s: %s",
                            group, txn.transactional_id, exc)

    def _release_pending_offsets(self, txn: Txn) -> None:
        pending = self.broker.groups.coordinator.pending_transactional_offsets
        for group, offsets in txn.pending_offsets.items():
            held = pending.get(group)
            if held is not None:
                held.difference_update(offsets)
                if not held:
                    del pending[group]

    def _fence_and_abort(self, txn: Txn) -> None:
        """Abort an open transaction with the epoch bumped: its producer is fenced."""
        txn.last_producer_epoch = txn.producer_epoch
        txn.producer_epoch += 1
        txn.state = tlog.PREPARE_EPOCH_FENCE
        self._finish(txn, False)

    # ================================================================== checks
    @staticmethod
    def _fenced(api_key: int, version: int) -> int:
        return E.PRODUCER_FENCED if version >= _FENCED_SINCE.get(api_key, 0) else E.INVALID_PRODUCER_EPOCH

    def _current(self, request, transactional_id: str, producer_id: int, epoch: int) -> Txn:
        """The transaction a request names, when its producer id and epoch are current;
        else TxnError with Kafka's answer."""
        if not validation.is_transactional_id(transactional_id):
            raise TxnError(E.INVALID_REQUEST)
        txn = self.txns.get(transactional_id)
        if txn is None or txn.state == tlog.DEAD or txn.producer_id != producer_id:
            raise TxnError(E.INVALID_PRODUCER_ID_MAPPING)
        if txn.producer_epoch != epoch:
            raise TxnError(self._fenced(request.api_key, request.api_version))
        if txn.state in (tlog.PREPARE_COMMIT, tlog.PREPARE_ABORT, tlog.PREPARE_EPOCH_FENCE):
            raise TxnError(E.CONCURRENT_TRANSACTIONS)
        return txn

    def _partition_exists(self, topic: str, partition: int) -> bool:
        try:
            return partition in self.engine.topic(topic).assignment
        except (KafkaError, OSError):
            return False

    def _begin(self, txn: Txn, partitions) -> None:
        if txn.state != tlog.ONGOING:
            txn.state = tlog.ONGOING
            txn.start_ms = now_ms()
            txn.partitions = {}
            txn.pending_offsets = {}
        txn.partitions.update(dict.fromkeys(partitions))
        self._persist(txn)

    def partition_in_transaction(self, transactional_id: str, producer_id: int, epoch: int,
                                 topic: str, partition: int, add: bool = False) -> int:
        """Produce's check of a transactional batch (Kafka's transaction verification): the
        partition must be in the producer's open transaction. With `add` (Produce v12+, a
        transaction version 2 producer, which sends no AddPartitionsToTxn) it is added.
        Returns an error code."""
        txn = self.txns.get(transactional_id)
        if txn is None or txn.producer_id != producer_id:
            return E.INVALID_PRODUCER_ID_MAPPING
        if epoch != txn.producer_epoch:
            return E.INVALID_PRODUCER_EPOCH  # Kafka's answer to producers for a fenced epoch here
        if txn.state in (tlog.PREPARE_COMMIT, tlog.PREPARE_ABORT, tlog.PREPARE_EPOCH_FENCE):
            return E.NOT_ENOUGH_REPLICAS  # retriable for every client (Kafka's translation)
        if add and (txn.state != tlog.ONGOING or (topic, partition) not in txn.partitions):
            try:
                self._begin(txn, [(topic, partition)])
            except (KafkaError, OSError):
                return E.NOT_ENOUGH_REPLICAS
        if txn.state != tlog.ONGOING or (topic, partition) not in txn.partitions:
            return E.INVALID_TXN_STATE  # "Partition was not added to the transaction"
        return E.NONE

    # ================================================================== InitProducerId
    async def init_producer_id(self, request) -> dict:
        body = request.body
        tid = body["transactional_id"]
        answer = {"throttle_time_ms": 0, "error_code": E.NONE, "producer_id": -1, "producer_epoch": -1}
        guard = self.broker.guard
        if tid is None:  # an idempotent producer: a new id each time (KIP-360 included)
            # cluster IDEMPOTENT_WRITE, or WRITE on some topic, as Kafka asks
            if not (guard.allows_cluster(request, acls.IDEMPOTENT_WRITE)
                    or guard.allows_any(request, acls.WRITE, acls.TOPIC)):
                answer["error_code"] = E.CLUSTER_AUTHORIZATION_FAILED
                return answer
            answer["producer_id"], answer["producer_epoch"] = self.producers.ids.allocate(), 0
            return answer
        timeout = body["transaction_timeout_ms"]
        if not guard.allows(request, acls.WRITE, acls.TRANSACTIONAL_ID, tid):
            answer["error_code"] = E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        elif not validation.is_transactional_id(tid):
            answer["error_code"] = E.INVALID_REQUEST
        elif timeout <= 0 or timeout > self.max_timeout_ms:
            answer["error_code"] = E.INVALID_TRANSACTION_TIMEOUT
        else:
            try:
                txn = self._init_transactional(request, tid, timeout)
                answer["producer_id"], answer["producer_epoch"] = txn.producer_id, txn.producer_epoch
            except TxnError as exc:
                answer["error_code"] = exc.code
            except (KafkaError, OSError) as exc:
                log.warning("InitProducerId for %s failed: %s", tid, exc)
                answer["error_code"] = E.COORDINATOR_NOT_AVAILABLE
        return answer

    def _init_transactional(self, request, tid: str, timeout: int) -> Txn:
        body = request.body
        expected_pid, expected_epoch = body["producer_id"], body["producer_epoch"]
        txn = self.txns.get(tid)
        if txn is None or txn.state == tlog.DEAD:
            txn = self.txns[tid] = Txn(tid, self.producers.ids.allocate(), 0, timeout)
            self._persist(txn)
            return txn
        if txn.state in (tlog.PREPARE_COMMIT, tlog.PREPARE_ABORT, tlog.PREPARE_EPOCH_FENCE):
            raise TxnError(E.CONCURRENT_TRANSACTIONS)
        if expected_pid != -1:
            # KIP-360: a producer re-initialising after an error says which id and epoch it had;
            # only the current one (or a retry of the last bump) may continue.
            retry = expected_pid == txn.producer_id and expected_epoch == txn.last_producer_epoch
            if not retry and (expected_pid != txn.producer_id or expected_epoch != txn.producer_epoch):
                raise TxnError(self._fenced(request.api_key, request.api_version))
            if retry:
                return txn
        if txn.state == tlog.ONGOING:
            self._fence_and_abort(txn)  # the zombie's transaction dies with its epoch
        if txn.producer_epoch >= MAX_EPOCH - 1:
            txn.producer_id, txn.producer_epoch, txn.last_producer_epoch = self.producers.ids.allocate(), 0, -1
        else:
            txn.last_producer_epoch = txn.producer_epoch
            txn.producer_epoch += 1
        txn.timeout_ms = timeout
        txn.state = tlog.EMPTY
        txn.partitions = {}
        txn.start_ms = -1
        self._persist(txn)
        return txn

    # ================================================================== AddPartitionsToTxn
    async def add_partitions_to_txn(self, request) -> dict:
        body = request.body
        if request.api_version <= 3:
            results = self._add_partitions(request, body["v3_and_below_transactional_id"],
                                           body["v3_and_below_producer_id"], body["v3_and_below_producer_epoch"],
                                           body["v3_and_below_topics"], verify_only=False)
            return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": results}
        return {"throttle_time_ms": 0, "error_code": E.NONE, "results_by_transaction": [
            {"transactional_id": t["transactional_id"],
             "topic_results": self._add_partitions(request, t["transactional_id"], t["producer_id"],
                                                   t["producer_epoch"], t["topics"], t["verify_only"])}
            for t in body["transactions"]]}

    def _add_partitions(self, request, tid: str, pid: int, epoch: int, topics: list, verify_only: bool) -> list:
        wanted = [(t["name"], p) for t in topics for p in t["partitions"]]
        codes = {tp: E.NONE for tp in wanted}
        unknown = [tp for tp in wanted if not self._partition_exists(*tp)]
        guard = self.broker.guard
        try:
            _require(guard, request, acls.WRITE, acls.TRANSACTIONAL_ID, tid, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            if guard.enabled:  # a topic the caller may not WRITE fails the whole call
                writable = guard.allowed_names(request, acls.WRITE, acls.TOPIC, {t for t, _ in wanted})
                if any(t not in writable for t, _ in wanted):
                    unknown = []
                    for tp in wanted:
                        codes[tp] = E.TOPIC_AUTHORIZATION_FAILED if tp[0] not in writable else E.OPERATION_NOT_ATTEMPTED
                    raise _Answered()
            txn = self._current(request, tid, pid, epoch)
            if unknown:
                for tp in wanted:
                    codes[tp] = E.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown else E.OPERATION_NOT_ATTEMPTED
            elif verify_only:  # a broker checking a produce (v4+): nothing is added
                for tp in wanted:
                    if tp not in txn.partitions:
                        codes[tp] = E.TRANSACTION_ABORTABLE
            elif not all(tp in txn.partitions for tp in wanted) or txn.state != tlog.ONGOING:
                self._begin(txn, wanted)
        except _Answered:
            pass
        except TxnError as exc:
            codes = {tp: exc.code for tp in wanted}
        except (KafkaError, OSError) as exc:
            log.warning("AddPartitionsToTxn for %s failed: %s", tid, exc)
            codes = {tp: E.COORDINATOR_NOT_AVAILABLE for tp in wanted}
        by_topic: dict[str, list] = {}
        for (topic, p), code in codes.items():
            by_topic.setdefault(topic, []).append({"partition_index": p, "partition_error_code": code})
        return [{"name": topic, "results_by_partition": parts} for topic, parts in by_topic.items()]

    # ================================================================== AddOffsetsToTxn
    async def add_offsets_to_txn(self, request) -> dict:
        body = request.body
        code = E.NONE
        guard = self.broker.guard
        try:
            _require(guard, request, acls.WRITE, acls.TRANSACTIONAL_ID, body["transactional_id"],
                     E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            _require(guard, request, acls.READ, acls.GROUP, body["group_id"], E.GROUP_AUTHORIZATION_FAILED)
            txn = self._current(request, body["transactional_id"], body["producer_id"], body["producer_epoch"])
            offsets = self.broker.groups.coordinator.offsets
            tp = (topic_names.GROUP_METADATA_TOPIC, offsets.partition_for(body["group_id"]))
            if txn.state != tlog.ONGOING or tp not in txn.partitions:
                self._begin(txn, [tp])
        except TxnError as exc:
            code = exc.code
        except (KafkaError, OSError) as exc:
            log.warning("AddOffsetsToTxn for %s failed: %s", body["transactional_id"], exc)
            code = E.COORDINATOR_NOT_AVAILABLE
        return {"throttle_time_ms": 0, "error_code": code}

    # ================================================================== TxnOffsetCommit
    async def txn_offset_commit(self, request) -> dict:
        body = request.body
        group = body["group_id"]
        code = E.NONE
        guard = self.broker.guard
        readable = None  # None: no authorizer
        try:
            _require(guard, request, acls.WRITE, acls.TRANSACTIONAL_ID, body["transactional_id"],
                     E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            _require(guard, request, acls.READ, acls.GROUP, group, E.GROUP_AUTHORIZATION_FAILED)
            if guard.enabled:
                readable = guard.allowed_names(request, acls.READ, acls.TOPIC, self._txn_offset_topics(request))
            if not validation.is_group_id(group):
                raise TxnError(E.INVALID_GROUP_ID)  # the group coordinator's check comes first
            not_ours = self.broker.groups.coordinator.coordinator_error(group)
            if not_ours:  # (TxnOffsetCommit goes to the group's coordinator)
                raise TxnError(not_ours)
            txn = self._current(request, body["transactional_id"], body["producer_id"], body["producer_epoch"])
            tp = (topic_names.GROUP_METADATA_TOPIC, self.broker.groups.coordinator.offsets.partition_for(group))
            if request.api_version >= 5 and (txn.state != tlog.ONGOING or tp not in txn.partitions):
                self._begin(txn, [tp])  # transaction version 2: no AddOffsetsToTxn
            if txn.state != tlog.ONGOING or tp not in txn.partitions:
                code = E.INVALID_TXN_STATE  # AddOffsetsToTxn first
            elif body["member_id"] or body["generation_id_or_member_epoch"] >= 0:
                # v3+ (KIP-447): a member of the group commits with its generation (or, in a
                # consumer-protocol group, its member epoch; a stale one is ILLEGAL_GENERATION here)
                code = self.broker.groups.coordinator.validate_commit(
                    group, body["generation_id_or_member_epoch"], body["member_id"], body["group_instance_id"],
                    _COMMIT_CHECKS_VERSION)
                if code == E.STALE_MEMBER_EPOCH:
                    code = E.ILLEGAL_GENERATION
        except TxnError as exc:
            code = exc.code
        except (KafkaError, OSError) as exc:
            log.warning("TxnOffsetCommit for %s failed: %s", body["transactional_id"], exc)
            code = E.COORDINATOR_NOT_AVAILABLE
        topics = []
        for t in body["topics"]:
            name = t["name"] if request.api_version < 6 else self.broker.data.topic_ids.name_of(t["topic_id"])
            parts = []
            for p in t["partitions"]:
                index = p["partition_index"]
                pcode = code
                if pcode == E.NONE:
                    if readable is not None and name is not None and name not in readable:
                        pcode = E.TOPIC_AUTHORIZATION_FAILED
                    elif name is None:
                        pcode = E.UNKNOWN_TOPIC_ID
                    elif not self._partition_exists(name, index):
                        pcode = E.UNKNOWN_TOPIC_OR_PARTITION
                    else:
                        txn.pending_offsets.setdefault(group, {})[(name, index)] = CommittedOffset(
                            p["committed_offset"], p["committed_leader_epoch"], p["committed_metadata"] or "")
                        # OffsetFetch with require_stable waits for the transaction's end
                        self.broker.groups.coordinator.pending_transactional_offsets.setdefault(
                            group, set()).add((name, index))
                parts.append({"partition_index": index, "error_code": pcode})
            topics.append({"name": name or "", "topic_id": t.get("topic_id"), "partitions": parts})
        return {"throttle_time_ms": 0, "topics": topics}

    def _txn_offset_topics(self, request) -> set:
        names = (t["name"] if request.api_version < 6 else self.broker.data.topic_ids.name_of(t["topic_id"])
                 for t in request.body["topics"])
        return {n for n in names if n is not None}

    # ================================================================== EndTxn
    async def end_txn(self, request) -> dict:
        body = request.body
        commit = body["committed"]
        answer = {"throttle_time_ms": 0, "error_code": E.NONE, "producer_id": -1, "producer_epoch": -1}
        tv2 = request.api_version >= 5  # transaction version 2 (KIP-890): every end bumps the epoch
        done = tlog.COMPLETE_COMMIT if commit else tlog.COMPLETE_ABORT
        try:
            _require(self.broker.guard, request, acls.WRITE, acls.TRANSACTIONAL_ID, body["transactional_id"],
                     E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            txn = self.txns.get(body["transactional_id"])
            if (tv2 and txn is not None and txn.state == done and txn.producer_id == body["producer_id"]
                    and body["producer_epoch"] == txn.last_producer_epoch):
                pass  # a retry of the end that bumped the epoch: answered with the new one
            else:
                txn = self._current(request, body["transactional_id"], body["producer_id"], body["producer_epoch"])
            if txn.state == tlog.ONGOING:
                self._finish(txn, commit, bump=tv2)
            elif (txn.state, commit) not in ((tlog.COMPLETE_COMMIT, True), (tlog.COMPLETE_ABORT, False)):
                raise TxnError(E.INVALID_TXN_STATE)  # else: a retry of the end that was done
            answer["producer_id"], answer["producer_epoch"] = txn.producer_id, txn.producer_epoch
        except TxnError as exc:
            answer["error_code"] = exc.code
        except (KafkaError, OSError) as exc:
            log.warning("EndTxn for %s failed: %s", body["transactional_id"], exc)
            answer["error_code"] = E.COORDINATOR_NOT_AVAILABLE
        return answer

    # ================================================================== WriteTxnMarkers
    async def write_txn_markers(self, request) -> dict:
        if not self.broker.guard.allows_cluster(request, acls.CLUSTER_ACTION):  # brokers only
            return {"markers": [{"producer_id": m["producer_id"], "topics": [
                {"name": t["name"], "partitions": [{"partition_index": p, "error_code": E.CLUSTER_AUTHORIZATION_FAILED}
                                                   for p in t["partition_indexes"]]} for t in m["topics"]]}
                for m in request.body["markers"]]}
        results = []
        for marker in request.body["markers"]:
            topics = []
            ordered = sorted(marker["topics"], key=lambda t: all(self._partition_exists(t["name"], p)
                                                                 for p in t["partition_indexes"]))
            for t in ordered:  # Kafka answers the partitions it does not know first
                parts = []
                for p in t["partition_indexes"]:
                    code = E.NONE
                    try:
                        self._write_marker(t["name"], p, marker["producer_id"], marker["producer_epoch"],
                                           marker["transaction_result"], marker["coordinator_epoch"])
                    except (KafkaError, ProducerError) as exc:
                        code = exc.code
                    except OSError as exc:
                        log.error("Cannot write a marker to %s-%d: %s", t["name"], p, exc)
                        code = E.KAFKA_STORAGE_ERROR
                    parts.append({"partition_index": p, "error_code": code})
                topics.append({"name": t["name"], "partitions": parts})
            results.append({"producer_id": marker["producer_id"], "topics": topics})
        self.broker.notify_data()
        return {"markers": results}

    # ================================================================== Describe / List
    async def describe_transactions(self, request) -> dict:
        states = []
        guard = self.broker.guard
        for tid in request.body["transactional_ids"]:
            txn = self.txns.get(tid)
            if not guard.allows(request, acls.DESCRIBE, acls.TRANSACTIONAL_ID, tid):
                code = E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            elif not validation.is_transactional_id(tid):
                code = E.INVALID_REQUEST
            elif txn is None or txn.state == tlog.DEAD:
                code = E.TRANSACTIONAL_ID_NOT_FOUND
            else:
                code = E.NONE
            if code != E.NONE:
                states.append({"error_code": code, "transactional_id": tid,
                               "transaction_state": "", "transaction_timeout_ms": 0,
                               "transaction_start_time_ms": 0, "producer_id": 0, "producer_epoch": 0,
                               "topics": []})
                continue
            by_topic: dict[str, list[int]] = {}
            for topic, p in txn.partitions:
                by_topic.setdefault(topic, []).append(p)
            states.append({"error_code": E.NONE, "transactional_id": tid,
                           "transaction_state": tlog.STATE_NAMES[txn.state],
                           "transaction_timeout_ms": txn.timeout_ms, "transaction_start_time_ms": txn.start_ms,
                           "producer_id": txn.producer_id, "producer_epoch": txn.producer_epoch,
                           "topics": [{"topic": t, "partitions": ps} for t, ps in by_topic.items()]})
        return {"throttle_time_ms": 0, "transaction_states": states}

    async def list_transactions(self, request) -> dict:
        body = request.body
        states = set(body["state_filters"] or [])
        unknown = sorted(s for s in states if s not in tlog.STATE_NAMES)
        pids = set(body["producer_id_filters"] or [])
        duration = body["duration_filter"]
        pattern = body["transactional_id_pattern"]
        if pattern:
            try:
                regex = re.compile(pattern)
            except re.error:
                return {"throttle_time_ms": 0, "error_code": E.INVALID_REGULAR_EXPRESSION,
                        "unknown_state_filters": unknown, "transaction_states": []}
        now = now_ms()
        listed = []
        visible = self.broker.guard.allowed_names(request, acls.DESCRIBE, acls.TRANSACTIONAL_ID, self.txns)
        for tid, txn in sorted(self.txns.items()):
            if tid not in visible:
                continue
            name = tlog.STATE_NAMES[txn.state]
            if txn.state == tlog.DEAD or (states and name not in states) or (pids and txn.producer_id not in pids):
                continue
            if duration >= 0 and now - txn.start_ms <= duration:  # v1: running longer than it
                continue
            if pattern and not regex.fullmatch(tid):
                continue
            listed.append({"transactional_id": tid, "producer_id": txn.producer_id, "transaction_state": name})
        return {"throttle_time_ms": 0, "error_code": E.NONE, "unknown_state_filters": unknown,
                "transaction_states": listed}

    # ================================================================== upkeep
    async def tick(self) -> None:
        """Abort transactions open past their timeout (fencing their producer), every
        transaction.abort.timed.out.transaction.cleanup.interval.ms; forget ids idle for
        transactional.id.expiration.ms (a tombstone)."""
        if time.monotonic() < self._next_cleanup:
            return
        self._next_cleanup = time.monotonic() + self.cleanup_interval
        now = now_ms()
        for txn in list(self.txns.values()):
            try:
                if txn.state == tlog.ONGOING and now - txn.start_ms > txn.timeout_ms:
                    log.info("Aborting transaction %s (producer id %d): open longer than its timeout of %d ms",
                             txn.transactional_id, txn.producer_id, txn.timeout_ms)
                    self._fence_and_abort(txn)
                elif (txn.state in (tlog.EMPTY, tlog.COMPLETE_COMMIT, tlog.COMPLETE_ABORT)
                      and now - txn.last_update_ms > self.id_expiration_ms):
                    self._persist(txn, tombstone=True)
                    del self.txns[txn.transactional_id]
            except (KafkaError, OSError) as exc:
                log.warning("Transaction upkeep of %s failed: %s", txn.transactional_id, exc)
