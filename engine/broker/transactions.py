"""The transaction coordinator: InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
TxnOffsetCommit, WriteTxnMarkers, DescribeTransactions, ListTransactions.

Each transactional id has one `Txn`: its producer id and epoch, timeout, state (Kafka's
TransactionState: Empty, Ongoing, PrepareCommit, ...) and the partitions its open transaction
wrote to. Every change of state is first appended to `__transaction_state` (records in
engine/transaction_log.py; compacted, with transaction.state.log.* settings).

A lone broker coordinates every transactional id (FindCoordinator names it), creates
`__transaction_state` on first use and reads the whole table back at start. In ZooKeeper mode
(docs/replication.md, "Transactions") an id belongs to the leader of its `__transaction_state`
partition: the partition is loaded when this broker becomes its leader and dropped when it
stops, other brokers answer NOT_COORDINATOR, and each state write is answered once the ISR has
it.

Ending a transaction (EndTxn, an abort on timeout or when a new producer fences the old
one) goes PrepareCommit/PrepareAbort -> markers -> CompleteCommit/CompleteAbort. A marker is the
control batch (records.control_batch) appended by the partition's leader, which records an
abort in the segment's .txnindex (engine/txn_index.py) and moves the partition's last stable
offset on (producer_state.PartitionProducers). A lone broker leads every partition and writes
them at once; on a cluster the marker channel writes each at its leader (locally, or
WriteTxnMarkers to the leading broker), retrying until all are written, and the producer gets
CONCURRENT_TRANSACTIONS meanwhile. A transaction found in a Prepare state when loaded is
finished the same way (markers are idempotent for consumers: a second one ends nothing).

Offsets sent with a transaction (TxnOffsetCommit, at the group's coordinator) are appended to
the group's `__consumer_offsets` partition as the producer's transactional batch; that partition
is part of the transaction (AddOffsetsToTxn), so its marker commits or drops them
(engine/offsets.py reads them so).

Zombie fencing: InitProducerId with the id of a live producer bumps the epoch (aborting an
open transaction with the bumped epoch first), so the older producer's next request is
refused with PRODUCER_FENCED (INVALID_PRODUCER_EPOCH for request versions that predate
KIP-588). A transaction open for longer than its timeout is aborted the same way from the
broker tick, every transaction.abort.timed.out.transaction.cleanup.interval.ms.
"""

from __future__ import annotations

import asyncio
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
from .interbroker import CONNECTION_ERRORS, BrokerClients
from .group_state import append_error
from .producer_state import ProducerError

log = logging.getLogger("pk.broker")

MAX_EPOCH = 32767
WRITE_TXN_MARKERS_VERSION = 1
MARKER_TIMEOUT_MS = 30000  # Kafka's request.timeout.ms: markers are acks=all appends
MARKER_RETRY_S = (0.05, 1.0)  # the marker channel's backoff, doubling from the first to the second
# Kafka's mapping of a failed transaction-log append to the coordinator's answer.
_APPEND_ERRORS = {E.UNKNOWN_TOPIC_OR_PARTITION: E.COORDINATOR_NOT_AVAILABLE,
                  E.NOT_ENOUGH_REPLICAS: E.COORDINATOR_NOT_AVAILABLE,
                  E.NOT_ENOUGH_REPLICAS_AFTER_APPEND: E.COORDINATOR_NOT_AVAILABLE,
                  E.REQUEST_TIMED_OUT: E.COORDINATOR_NOT_AVAILABLE,
                  E.NOT_LEADER_OR_FOLLOWER: E.NOT_COORDINATOR, E.KAFKA_STORAGE_ERROR: E.NOT_COORDINATOR,
                  E.MESSAGE_TOO_LARGE: E.UNKNOWN_SERVER_ERROR}
# Answers after which the marker is sent again (once the leadership is known again).
_MARKER_RETRIABLE = {E.NOT_LEADER_OR_FOLLOWER, E.UNKNOWN_TOPIC_OR_PARTITION, E.NOT_ENOUGH_REPLICAS,
                     E.NOT_ENOUGH_REPLICAS_AFTER_APPEND, E.REQUEST_TIMED_OUT, E.KAFKA_STORAGE_ERROR,
                     E.LEADER_NOT_AVAILABLE, E.COORDINATOR_LOAD_IN_PROGRESS}
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
    previous_producer_id: int = -1  # the id an EndTxn's bump used up (a retried EndTxn names it)
    # While the markers of a PrepareCommit/PrepareAbort are being written on a cluster: the
    # partitions still without theirs, and (commit, bump) for the completion.
    markers_left: set = field(default_factory=set)
    ending: tuple = (False, False)

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
        # ZooKeeper mode: partitions have leaders elsewhere; markers go to them (the marker channel)
        self.cluster = bool(config.get("zookeeper.connect"))
        self._ending: dict[str, Txn] = {}  # transactions whose markers are being written, by id
        self._channel: asyncio.Task | None = None
        self._owned: set[int] = set()  # the __transaction_state partitions loaded (on a cluster)
        # transactional id -> (partition, end offset, min ISR) of its last state write, until
        # the handler answering waited for the ISR to have it
        self._unreplicated: dict[str, tuple] = {}
        broker.leadership_listeners.append(self._on_leadership)
        self._clients = BrokerClients(f"broker-{broker.node_id}-txn-marker-sender")
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
        """Append the transaction's state to its __transaction_state partition. On a cluster
        the append is this broker's as leader of the partition (stamped with its leader epoch),
        and `replicated` waits until the ISR has it."""
        count = self.ensure_state_topic()
        txn.last_update_ms = now_ms()
        value = None if tombstone else tlog.encode_value(txn.record())
        partition = tlog.partition_for(txn.transactional_id, count)
        data = self.broker.data
        plog = data.log(tlog.TRANSACTION_STATE_TOPIC, partition)
        replicated = data.replica_state(tlog.TRANSACTION_STATE_TOPIC, partition)
        if replicated is not None and replicated.leader != self.broker.node_id:
            raise TxnError(E.NOT_COORDINATOR)  # the partition moved: another broker coordinates it
        _, last = plog.append_records([(tlog.encode_key(txn.transactional_id), value, (), txn.last_update_ms)])
        if replicated is not None:
            key = (tlog.TRANSACTION_STATE_TOPIC, partition)
            self.broker.replication.leader_appended(key, last + 1)
            if len(replicated.isr) > 1:
                self._unreplicated[txn.transactional_id] = (key, last + 1, plog.config["min.insync.replicas"])

    async def replicated(self, txn: Txn) -> int:
        """Wait until the ISR has the transaction's last state write (Kafka appends to the
        transaction log with acks=-1); the error code to answer, mapped as Kafka's
        TransactionStateManager maps the append's."""
        pending = self._unreplicated.pop(txn.transactional_id, None)
        if pending is None:
            return E.NONE
        key, end, min_isr = pending
        result = {"error_code": E.NONE}
        await self.broker.replication.wait_for_hw([(key, end, result, min_isr)], MARKER_TIMEOUT_MS)
        return _APPEND_ERRORS.get(result["error_code"], result["error_code"])

    def _owner_error(self, transactional_id: str) -> int:
        """NOT_COORDINATOR unless this broker leads the id's __transaction_state partition and
        has loaded it (always NONE on a lone broker)."""
        if not self.cluster:
            return E.NONE
        count = self._state_topic_partitions()
        if count is None:
            return E.NOT_COORDINATOR
        partition = tlog.partition_for(transactional_id, count)
        if self.broker.internal_leader(tlog.TRANSACTION_STATE_TOPIC, partition) != self.broker.node_id \
                or partition not in self._owned:
            return E.NOT_COORDINATOR
        return E.NONE

    def _read_partition(self, partition: int) -> dict[str, Txn]:
        """The transactions a __transaction_state partition's log ends with."""
        txns: dict[str, Txn] = {}

        def take(rec) -> None:
            try:
                tid = tlog.decode_key(rec.key)
                value = tlog.decode_value(rec.value)
            except (tlog.SchemaError, TypeError, ValueError):
                return
            if value is None:
                txns.pop(tid, None)
            else:
                txns[tid] = Txn.from_record(tid, value)

        self.broker.data.log(tlog.TRANSACTION_STATE_TOPIC, partition).each_record(0, take)
        return txns

    def _recover(self) -> None:
        """A lone broker reads its whole table back from __transaction_state at start (on a
        cluster each partition is loaded when this broker becomes its leader)."""
        count = self._state_topic_partitions()
        if count is None or self.cluster:
            return
        for p in range(count):
            try:
                self.txns.update(self._read_partition(p))
            except (KafkaError, OSError) as exc:
                log.warning("Cannot read %s-%d: %s", tlog.TRANSACTION_STATE_TOPIC, p, exc)
        self._resume(list(self.txns.values()))
        if self.txns:
            log.info("Loaded %d transactional id(s) from %s", len(self.txns), tlog.TRANSACTION_STATE_TOPIC)

    def _resume(self, txns: list[Txn]) -> None:
        """Finish what was being ended (markers are idempotent for consumers: a second one
        ends nothing); load the producer state of partitions with an open transaction (their
        last stable offset)."""
        for txn in txns:
            try:
                if txn.state in (tlog.PREPARE_COMMIT, tlog.PREPARE_ABORT):
                    self._send_markers(txn, txn.state == tlog.PREPARE_COMMIT, False)
                elif txn.state == tlog.PREPARE_EPOCH_FENCE:
                    self._finish(txn, False)
                elif txn.state == tlog.ONGOING and not self.cluster:
                    for topic, p in txn.partitions:
                        if topic != topic_names.GROUP_METADATA_TOPIC and self._partition_exists(topic, p):
                            self.producers.partition(self.broker.data.log(topic, p))
            except (KafkaError, OSError, TxnError) as exc:
                log.warning("Cannot recover transaction %s: %s", txn.transactional_id, exc)

    def _on_leadership(self, topic: str, partition: int, leader: bool) -> None:
        """Kafka's TransactionStateManager.loadTransactionsForTxnTopicPartition and
        removeTransactionsForTxnTopicPartition: leading a __transaction_state partition, this
        broker coordinates its transactional ids (those being ended are ended again); losing
        it, it forgets them."""
        if topic != tlog.TRANSACTION_STATE_TOPIC:
            return
        count = self._state_topic_partitions() or self.num_partitions
        mine = [tid for tid in self.txns if tlog.partition_for(tid, count) == partition]
        for tid in mine:
            del self.txns[tid]
            self._ending.pop(tid, None)
            self._unreplicated.pop(tid, None)
        self._owned.discard(partition)
        if not leader:
            if mine:
                log.info("Unloaded %d transactional id(s) of %s-%d", len(mine), topic, partition)
            return
        try:
            loaded = self._read_partition(partition)
        except (KafkaError, OSError) as exc:
            log.warning("Cannot load %s-%d: %s", topic, partition, exc)
            return
        self.txns.update(loaded)
        self._owned.add(partition)
        log.info("Loaded %d transactional id(s) from %s-%d", len(loaded), topic, partition)
        self._resume(list(loaded.values()))

    # ================================================================== ending transactions
    def _write_marker(self, topic: str, partition: int, producer_id: int, epoch: int, commit: bool,
                      coordinator_epoch: int = 0):
        """Append a COMMIT/ABORT marker to a partition this broker leads (stamped with its
        leader epoch, as any leader append) and end the producer's transaction there: an abort
        goes into the active segment's .txnindex. Returns the partition's replication state
        (None when not replicated) and the offset after the marker; NOT_LEADER_OR_FOLLOWER
        where another broker leads."""
        data = self.broker.data
        plog = data.log(topic, partition)  # UNKNOWN_TOPIC_OR_PARTITION first
        replicated = data.replica_state(topic, partition)
        if replicated is not None and replicated.leader != self.broker.node_id:
            raise data._not_leader(topic, partition, replicated)
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
        if replicated is not None:
            self.broker.replication.leader_appended((topic, partition), offset + 1)
        return replicated, offset + 1

    async def _write_markers_as_leader(self, markers: list[tuple], timeout_ms: int) -> dict:
        """Write markers (topic, partition, producer id, epoch, commit, coordinator epoch) on
        this broker as leader, each answered as Kafka's acks=all append is (once the ISR has
        it). Returns {(topic, partition, producer id): error code}."""
        codes, waits = {}, []
        for topic, p, pid, epoch, commit, coordinator_epoch in markers:
            code = E.NONE
            try:
                replicated, end = self._write_marker(topic, p, pid, epoch, commit, coordinator_epoch)
                if replicated is not None and len(replicated.isr) > 1:
                    result = {"error_code": E.NONE}
                    waits.append(((topic, p), end, result,
                                  self.broker.data.log(topic, p).config["min.insync.replicas"]))
                    codes[(topic, p, pid)] = result
                    continue
            except (KafkaError, ProducerError) as exc:
                code = exc.code
            except OSError as exc:
                log.error("Cannot write a marker to %s-%d: %s", topic, p, exc)
                code = E.KAFKA_STORAGE_ERROR
            codes[(topic, p, pid)] = code
        self.broker.notify_data()
        if waits:
            await self.broker.replication.wait_for_hw(waits, timeout_ms)
        return {k: v["error_code"] if isinstance(v, dict) else v for k, v in codes.items()}

    def _finish(self, txn: Txn, commit: bool, bump: bool = False) -> None:
        """PrepareCommit/PrepareAbort -> markers -> Complete*. With
        `bump` (transaction version 2: EndTxn v5+), the epoch is bumped first and the markers
        carry the new one; an exhausted epoch then moves on to a new producer id.

        A lone broker leads every partition: it writes the markers and completes at once. On
        a cluster the marker channel writes them (here or at each partition's leader) and
        completes the transaction when all are written; meanwhile the transaction stays in
        its Prepare state (its producer is told CONCURRENT_TRANSACTIONS), as in Kafka."""
        if bump:
            txn.last_producer_epoch = txn.producer_epoch
            txn.producer_epoch += 1
        txn.state = tlog.PREPARE_COMMIT if commit else tlog.PREPARE_ABORT
        self._persist(txn)
        self._send_markers(txn, commit, bump)

    def _send_markers(self, txn: Txn, commit: bool, bump: bool) -> None:
        if self.cluster:
            txn.markers_left, txn.ending = set(txn.partitions), (commit, bump)
            self._ending[txn.transactional_id] = txn
            self._start_channel()
            return
        for topic, p in txn.partitions:
            try:
                self._write_marker(topic, p, txn.producer_id, txn.producer_epoch, commit)
            except (KafkaError, ProducerError, OSError) as exc:
                # a deleted topic: nothing left to mark
                log.warning("Cannot write the %s marker of %s to %s-%d: %s", "COMMIT" if commit else "ABORT",
                            txn.transactional_id, topic, p, exc)
        self._complete(txn, commit, bump)

    def _complete(self, txn: Txn, commit: bool, bump: bool) -> None:
        """Every marker is written: CompleteCommit/CompleteAbort."""
        txn.state = tlog.COMPLETE_COMMIT if commit else tlog.COMPLETE_ABORT
        txn.partitions = {}
        if bump and txn.producer_epoch >= MAX_EPOCH - 1:
            txn.previous_producer_id = txn.producer_id
            txn.producer_id, txn.producer_epoch, txn.last_producer_epoch = self.producers.ids.allocate(), 0, -1
        self._persist(txn)
        self.broker.notify_data()

    # ------------------------------------------------------------------ the marker channel
    def _start_channel(self) -> None:
        """Run the marker channel unless it runs already (or no event loop runs yet: at start,
        the first tick starts it)."""
        if self._channel is not None and not self._channel.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._channel = loop.create_task(self._run_channel())

    async def _run_channel(self) -> None:
        """Kafka's TransactionMarkerChannelManager: until every ending transaction has all its
        markers, send each partition's to its current leader (this broker: a local append);
        a partition without a known or reachable leader, or whose leader refused, is tried
        again after a backoff (the leadership read from ZooKeeper meanwhile)."""
        delay = MARKER_RETRY_S[0]
        while self._ending:
            progressed = False
            try:
                progressed = await self._marker_round()
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug must not leave transactions in Prepare forever silently
                log.exception("Transaction marker channel failed")
            for tid, txn in list(self._ending.items()):
                if not txn.markers_left:
                    del self._ending[tid]
                    try:
                        self._complete(txn, *txn.ending)
                    except (KafkaError, OSError, TxnError) as exc:
                        log.warning("Cannot complete transaction %s: %s", tid, exc)
            if not self._ending:
                break
            delay = MARKER_RETRY_S[0] if progressed else min(delay * 2, MARKER_RETRY_S[1])
            await asyncio.sleep(delay)

    async def _marker_round(self) -> bool:
        """One pass of the channel; True when some marker was written."""
        node = self.broker.node_id
        replication = self.broker.replication
        live = set(replication.brokers) if replication is not None else set()
        targets: dict[tuple, tuple[Txn, set]] = {}  # (transactional id, tp) -> (txn, brokers to write it)
        for txn in self._ending.values():
            for tp in list(txn.markers_left):
                if not self._partition_exists(*tp):
                    log.warning("Dropping the marker of %s for %s-%d: the partition no longer exists",
                                txn.transactional_id, *tp)
                    txn.markers_left.discard(tp)
                    continue
                state = self.broker.data.replica_state(*tp)
                leader = node if state is None else state.leader
                if leader != node and leader not in live:
                    continue  # no leader known: next round
                brokers = {leader}
                targets[(txn.transactional_id, tp)] = (txn, brokers)
        if not targets:
            return False
        by_broker: dict[int, list] = {}
        for (tid, tp), (txn, brokers) in targets.items():
            for b in brokers:
                by_broker.setdefault(b, []).append((txn, tp))
        answers = dict(zip(by_broker, await asyncio.gather(*(self._markers_to(b, items)
                                                             for b, items in by_broker.items()))))
        done = False
        for (tid, tp), (txn, brokers) in targets.items():
            codes = {b: answers[b].get((tp[0], tp[1], txn.producer_id)) for b in brokers}
            if all(code == E.NONE for code in codes.values()):
                txn.markers_left.discard(tp)
                done = True
                continue
            refused = {b: c for b, c in codes.items() if c is not None and c != E.NONE and c not in _MARKER_RETRIABLE}
            if refused:
                # INVALID_PRODUCER_EPOCH: the partition has seen a newer epoch of the producer, whose
                # transaction ended there already; anything else would never succeed either
                log.warning("Marker of %s for %s-%d refused by broker(s) %s: %s; not retried", tid, tp[0], tp[1],
                            sorted(refused), ", ".join(sorted({E.error_name(c) for c in refused.values()})))
                txn.markers_left.discard(tp)
        return done

    async def _markers_to(self, broker_id: int, items: list) -> dict:
        """Write `items` [(txn, (topic, partition))] at `broker_id`; its answers by (topic,
        partition, producer id), empty when it could not be reached."""
        markers = [(tp[0], tp[1], txn.producer_id, txn.producer_epoch, txn.ending[0], 0) for txn, tp in items]
        if broker_id == self.broker.node_id:
            return await self._write_markers_as_leader(markers, MARKER_TIMEOUT_MS)
        return await self._send_write_txn_markers(broker_id, markers) or {}

    async def _send_write_txn_markers(self, leader: int, markers: list[tuple]) -> dict | None:
        """WriteTxnMarkers to another broker; its answers by (topic, partition, producer id),
        None when it could not be reached."""
        endpoint = self.broker.replication.brokers.get(leader)
        if endpoint is None:
            return None
        grouped: dict[tuple, dict] = {}
        for topic, p, pid, epoch, commit, coordinator_epoch in markers:
            entry = grouped.setdefault((pid, epoch, commit), {
                "producer_id": pid, "producer_epoch": epoch, "transaction_result": commit,
                "coordinator_epoch": coordinator_epoch, "topics": {}})
            entry["topics"].setdefault(topic, []).append(p)
        body = {"markers": [{**m, "topics": [{"name": t, "partition_indexes": ps} for t, ps in m["topics"].items()]}
                            for m in grouped.values()]}
        try:
            answer = await self._clients.call(leader, endpoint, ApiKey.WRITE_TXN_MARKERS, WRITE_TXN_MARKERS_VERSION,
                                              body, MARKER_TIMEOUT_MS / 1000 + 5)
        except CONNECTION_ERRORS as exc:
            log.info("Cannot send transaction markers to broker %d: %s", leader, exc)
            return None
        return {(t["name"], p["partition_index"], m["producer_id"]): p["error_code"]
                for m in answer["markers"] for t in m["topics"] for p in t["partitions"]}

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
        owner = self._owner_error(transactional_id)
        if owner != E.NONE:
            raise TxnError(owner)
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
        txn.partitions.update(dict.fromkeys(partitions))
        self._persist(txn)

    def partition_in_transaction(self, transactional_id: str, producer_id: int, epoch: int,
                                 topic: str, partition: int, add: bool = False) -> int:
        """Produce's check of a transactional batch (Kafka's transaction verification): the
        partition must be in the producer's open transaction. With `add` (Produce v12+, a
        transaction version 2 producer, which sends no AddPartitionsToTxn) it is added.
        Returns an error code."""
        txn = self.txns.get(transactional_id)
        if (txn is None or txn.producer_id != producer_id) and self.cluster and not add:
            # Another broker coordinates this transactional id: as in Kafka 2.8 (before KIP-890's
            # verification) the leader takes the batch; the coordinator's marker ends it here.
            return E.NONE
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
            try:
                answer["producer_id"], answer["producer_epoch"] = self.producers.ids.allocate(), 0
            except KafkaError as exc:
                log.warning("InitProducerId failed: %s", exc)
                answer["error_code"] = E.COORDINATOR_NOT_AVAILABLE
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
                owner = self._owner_error(tid)
                if owner != E.NONE:
                    raise TxnError(owner)
                txn = self._init_transactional(request, tid, timeout)
                code = await self.replicated(txn)
                if code != E.NONE:
                    raise TxnError(code)
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
            if txn.state == tlog.PREPARE_ABORT:  # markers under way (a cluster): the producer retries
                raise TxnError(E.CONCURRENT_TRANSACTIONS)
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
            results = await self._add_partitions(request, body["v3_and_below_transactional_id"],
                                           body["v3_and_below_producer_id"], body["v3_and_below_producer_epoch"],
                                           body["v3_and_below_topics"], verify_only=False)
            return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": results}
        return {"throttle_time_ms": 0, "error_code": E.NONE, "results_by_transaction": [
            {"transactional_id": t["transactional_id"],
             "topic_results": await self._add_partitions(request, t["transactional_id"], t["producer_id"],
                                                   t["producer_epoch"], t["topics"], t["verify_only"])}
            for t in body["transactions"]]}

    async def _add_partitions(self, request, tid: str, pid: int, epoch: int, topics: list, verify_only: bool) -> list:
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
                code = await self.replicated(txn)
                if code != E.NONE:
                    raise TxnError(code)
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
                code = await self.replicated(txn)
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
        readable = None  # None: no authorizer, or the id or the group refused (every partition is)
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
            local = self.txns.get(body["transactional_id"])
            if self.cluster and (local is None or local.producer_id != body["producer_id"]):
                # the transaction coordinator is another broker: as Kafka 2.8's group coordinator,
                # this one takes the offsets on the producer's word; the marker decides
                txn = None
                if not validation.is_transactional_id(body["transactional_id"]):
                    raise TxnError(E.INVALID_REQUEST)
            else:
                txn = self._current(request, body["transactional_id"], body["producer_id"], body["producer_epoch"])
            tp = (topic_names.GROUP_METADATA_TOPIC, self.broker.groups.coordinator.offsets.partition_for(group))
            if txn is not None and request.api_version >= 5 and (txn.state != tlog.ONGOING or tp not in txn.partitions):
                self._begin(txn, [tp])  # transaction version 2: no AddOffsetsToTxn
                replicated = await self.replicated(txn)
                if replicated != E.NONE:
                    raise TxnError(replicated)
            if txn is not None and (txn.state != tlog.ONGOING or tp not in txn.partitions):
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
        offsets: dict[tuple[str, int], CommittedOffset] = {}
        for t in body["topics"]:
            name = t["name"] if request.api_version < 6 else self.broker.data.topic_ids.name_of(t["topic_id"])
            parts = []
            for p in t["partitions"]:
                index = p["partition_index"]
                pcode = code
                if readable is not None and name is not None and name not in readable:
                    # KafkaApis.handleTxnOffsetCommitRequest answers a refused topic before the
                    # coordinator sees the request (its producer checks included)
                    pcode = E.TOPIC_AUTHORIZATION_FAILED
                elif pcode == E.NONE:
                    if name is None:
                        pcode = E.UNKNOWN_TOPIC_ID
                    elif not self._partition_exists(name, index):
                        pcode = E.UNKNOWN_TOPIC_OR_PARTITION
                    else:
                        offsets[(name, index)] = CommittedOffset(
                            p["committed_offset"], p["committed_leader_epoch"], p["committed_metadata"] or "")
                parts.append({"partition_index": index, "error_code": pcode})
            topics.append({"name": name or "", "topic_id": t.get("topic_id"), "partitions": parts})
        written = E.NONE
        if offsets:
            written = await self._append_transactional_offsets(group, offsets, body["producer_id"],
                                                               body["producer_epoch"])
        if written != E.NONE:
            for t in topics:
                for part in t["partitions"]:
                    if part["error_code"] == E.NONE:
                        part["error_code"] = written
        return {"throttle_time_ms": 0, "topics": topics}

    async def _append_transactional_offsets(self, group: str, offsets: dict, producer_id: int, epoch: int) -> int:
        """Kafka's GroupMetadataManager.storeOffsets for a transaction: the offsets go into the
        group's __consumer_offsets partition as the producer's transactional batch (its
        COMMIT/ABORT marker decides), answered once the ISR has it."""
        coordinator = self.broker.groups.coordinator
        try:
            written = coordinator.offsets.commit_transactional(group, offsets, producer_id, epoch)
        except KafkaError as exc:
            return append_error(exc.code)
        except OSError as exc:
            log.warning("Cannot store the transactional offsets of group %s: %s", group, exc)
            return E.COORDINATOR_NOT_AVAILABLE
        return await coordinator.replicated(written)

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
        try:
            _require(self.broker.guard, request, acls.WRITE, acls.TRANSACTIONAL_ID, body["transactional_id"],
                     E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            owner = self._owner_error(body["transactional_id"])
            if owner != E.NONE:
                raise TxnError(owner)
            if tv2:
                txn, end = self._ending_tv2(request, body["transactional_id"], body["producer_id"],
                                            body["producer_epoch"], commit)
            else:
                txn = self._current(request, body["transactional_id"], body["producer_id"], body["producer_epoch"])
                end = txn.state == tlog.ONGOING
                if not end and (txn.state, commit) not in ((tlog.COMPLETE_COMMIT, True), (tlog.COMPLETE_ABORT, False)):
                    raise TxnError(E.INVALID_TXN_STATE)  # else: a retry of the end that was done
            if end:
                self._finish(txn, commit, bump=tv2)
                code = await self.replicated(txn)
                if code != E.NONE:
                    raise TxnError(code)
            answer["producer_id"], answer["producer_epoch"] = txn.producer_id, txn.producer_epoch
        except TxnError as exc:
            answer["error_code"] = exc.code
        except (KafkaError, OSError) as exc:
            log.warning("EndTxn for %s failed: %s", body["transactional_id"], exc)
            answer["error_code"] = E.COORDINATOR_NOT_AVAILABLE
        return answer

    def _ending_tv2(self, request, transactional_id: str, producer_id: int, epoch: int,
                    commit: bool) -> tuple[Txn, bool]:
        """EndTxn with transaction version 2, as Kafka's TransactionCoordinator.endTransaction
        decides: (the transaction, True when this request ends it, False for a retry answered
        as done); else TxnError. Every end bumps the epoch, so a retry carries the epoch before
        the bump (or the last epoch of the producer id the bump used up), and a request with
        the current epoch on a completed transaction is a new end: an abort there (or on an
        Empty one) is accepted and bumps the epoch again, with no partition to mark."""
        if not validation.is_transactional_id(transactional_id):
            raise TxnError(E.INVALID_REQUEST)
        txn = self.txns.get(transactional_id)
        if txn is None or txn.state == tlog.DEAD:
            raise TxnError(E.INVALID_PRODUCER_ID_MAPPING)
        retry_on_overflow = (txn.previous_producer_id == producer_id and epoch == MAX_EPOCH - 1
                             and txn.producer_epoch == 0)
        retry_on_bump = txn.producer_epoch == epoch + 1
        if txn.producer_id != producer_id and not retry_on_overflow:
            raise TxnError(E.INVALID_PRODUCER_ID_MAPPING)
        state = txn.state
        if state in (tlog.PREPARE_COMMIT, tlog.PREPARE_ABORT):
            valid = retry_on_bump
        elif state in (tlog.COMPLETE_COMMIT, tlog.COMPLETE_ABORT):
            valid = retry_on_bump or retry_on_overflow or epoch == txn.producer_epoch
        else:
            valid = epoch == txn.producer_epoch
        if not valid:
            raise TxnError(self._fenced(request.api_key, request.api_version))
        retry = retry_on_bump or retry_on_overflow
        if state == tlog.ONGOING:
            return txn, True
        if state in (tlog.PREPARE_COMMIT, tlog.PREPARE_ABORT, tlog.PREPARE_EPOCH_FENCE):
            same = (state == tlog.PREPARE_COMMIT) == commit
            raise TxnError(E.CONCURRENT_TRANSACTIONS if same else E.INVALID_TXN_STATE)
        if state == tlog.COMPLETE_COMMIT and commit and retry:
            return txn, False
        if state == tlog.COMPLETE_ABORT and not commit:
            return txn, not retry
        if not commit and (state == tlog.EMPTY or (state == tlog.COMPLETE_COMMIT and not retry)):
            return txn, True
        raise TxnError(E.INVALID_TXN_STATE)

    # ================================================================== WriteTxnMarkers
    async def write_txn_markers(self, request) -> dict:
        if not self.broker.guard.allows_cluster(request, acls.CLUSTER_ACTION):  # brokers only
            return {"markers": [{"producer_id": m["producer_id"], "topics": [
                {"name": t["name"], "partitions": [{"partition_index": p, "error_code": E.CLUSTER_AUTHORIZATION_FAILED}
                                                   for p in t["partition_indexes"]]} for t in m["topics"]]}
                for m in request.body["markers"]]}
        # Kafka answers the partitions it does not know first
        wanted = [(m, t) for m in request.body["markers"]
                  for t in sorted(m["topics"], key=lambda t: all(self._partition_exists(t["name"], p)
                                                                  for p in t["partition_indexes"]))]
        codes = await self._write_markers_as_leader(
            [(t["name"], p, m["producer_id"], m["producer_epoch"], m["transaction_result"], m["coordinator_epoch"])
             for m, t in wanted for p in t["partition_indexes"]], MARKER_TIMEOUT_MS)
        results = []
        for marker in request.body["markers"]:
            topics = [{"name": t["name"], "partitions": [
                {"partition_index": p, "error_code": codes[(t["name"], p, marker["producer_id"])]}
                for p in t["partition_indexes"]]} for m, t in wanted if m is marker]
            results.append({"producer_id": marker["producer_id"], "topics": topics})
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
            elif self._owner_error(tid) != E.NONE:
                code = self._owner_error(tid)
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
        if self._ending:
            self._start_channel()  # transactions recovered in a Prepare state at start
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
            except (KafkaError, OSError, TxnError) as exc:
                log.warning("Transaction upkeep of %s failed: %s", txn.transactional_id, exc)

    def close(self) -> None:
        if self._channel is not None:
            self._channel.cancel()
        self._clients.close()
