"""kafka-transactions (Kafka 4.4's TransactionsCommand): the transactional state of producers
in a cluster, and the recovery of hanging transactions (KIP-664), over pk's own wire client
(commands/backends/wire.py): list, describe, describe-producers, abort, find-hanging.

Each command prints Kafka's tab-separated table (ToolsUtils.prettyPrintTable: every column as
wide as its widest cell, each cell followed by a tab) and fails as Kafka does: one line,
`<what failed>: <the error's message>. Enable debug logging for additional detail.`
"""

from __future__ import annotations

import time
import uuid

from pk.engine import protocol as kp
from pk.engine.errors import KafkaError

from .backends.kafka_admin import AdminError, known_error

LIST_HEADERS = ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
DESCRIBE_HEADERS = ["CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
                    "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs",
                    "TopicPartitions"]
PRODUCER_HEADERS = ["ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "LastTimestamp",
                    "CurrentTransactionStartOffset"]
HANGING_HEADERS = ["Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset",
                   "LastTimestamp", "Duration(min)"]
TRANSACTION_COORDINATOR = 1  # FindCoordinator key_type
ZERO_UUID = uuid.UUID(int=0)
DEBUG_HINT = " Enable debug logging for additional detail."


# forceTerminateTransaction: the admin client's default request timeout is the transaction
# timeout it asks for (a terminated id then describes with 30000), and how long it retries
FENCE_TIMEOUT_MS = 30_000
# COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, CONCURRENT_TRANSACTIONS
FENCE_RETRIABLE = {14, 15, 16, 51}


class CommandFailed(Exception):
    """The tool's one-line error (Kafka's printErrorAndExit)."""


def failure(what: str, exc: Exception) -> CommandFailed:
    return CommandFailed(f"{what}: {exc}.{DEBUG_HINT}")


def table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    return ["".join(f"{cell:<{w}}\t" for cell, w in zip(row, widths)) for row in [headers, *rows]]


def _check(code: int, message: str | None = None) -> None:
    if code:
        raise known_error(code, message)


class Transactions:
    """The admin calls the commands need, on a WireClient."""

    def __init__(self, client):
        self.client = client

    def list(self, duration_ms: int | None = None, pattern: str | None = None,
             producer_ids: list[int] | None = None) -> list[tuple[int, dict]]:
        """(coordinator id, listing) from every broker, by broker id."""
        body = {"state_filters": [], "producer_id_filters": producer_ids or [],
                "duration_filter": -1 if duration_ms is None else duration_ms,
                "transactional_id_pattern": pattern}
        out = []
        for broker in sorted(self.client.brokers(), key=lambda b: b.node_id):
            answer = self.client.call(kp.ApiKey.LIST_TRANSACTIONS, 2, body, node=broker.node_id)
            _check(answer["error_code"])
            out += [(broker.node_id, t) for t in answer["transaction_states"]]
        return out

    def coordinator(self, transactional_id: str) -> int:
        answer = self.client.call(kp.ApiKey.FIND_COORDINATOR, 4, {"key_type": TRANSACTION_COORDINATOR,
                                                                  "coordinator_keys": [transactional_id]})
        [c] = answer["coordinators"]
        _check(c["error_code"], c["error_message"])
        return c["node_id"]

    def describe(self, transactional_id: str) -> tuple[int, dict]:
        node = self.coordinator(transactional_id)
        answer = self.client.call(kp.ApiKey.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [transactional_id]},
                                  node=node)
        [state] = answer["transaction_states"]
        code = state["error_code"]
        if code == 105:  # TRANSACTIONAL_ID_NOT_FOUND: the admin client's own words
            raise known_error(105, f"DescribeTransactions request for transactionalId `{transactional_id}` "
                                   "failed because the ID could not be found")
        if code == 53:  # TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            raise known_error(53, f"DescribeTransactions request for transactionalId `{transactional_id}` "
                                  "failed due to authorization failure")
        _check(code)
        return node, state

    def leader(self, topic: str, partition: int) -> int:
        md = self.client.call(kp.ApiKey.METADATA, 12, {"topics": [{"topic_id": ZERO_UUID, "name": topic}],
                                                       "allow_auto_topic_creation": False,
                                                       "include_topic_authorized_operations": False})
        [t] = md["topics"]
        _check(t["error_code"])
        for p in t["partitions"]:
            if p["partition_index"] == partition:
                _check(p["error_code"])
                return p["leader_id"]
        raise known_error(3)

    def topics(self) -> dict[str, dict[int, list[int]]]:
        """Every topic (internal ones too): partition -> replica ids."""
        md = self.client.call(kp.ApiKey.METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                                                       "include_topic_authorized_operations": False})
        return {t["name"]: {p["partition_index"]: p["replica_nodes"] for p in t["partitions"]}
                for t in md["topics"] if not t["error_code"]}

    def producers(self, topic: str, partition: int, broker: int | None = None) -> list[dict]:
        node = self.leader(topic, partition) if broker is None else broker
        answer = self.client.call(kp.ApiKey.DESCRIBE_PRODUCERS, 0, {"topics": [
            {"name": topic, "partition_indexes": [partition]}]}, node=node)
        [p] = answer["topics"][0]["partitions"]
        _check(p["error_code"], p["error_message"])
        return p["active_producers"]

    def force_terminate(self, transactional_id: str, timeout_ms: int = FENCE_TIMEOUT_MS) -> None:
        """Admin.forceTerminateTransaction (KIP-939), which is fenceProducers of one id: an
        InitProducerId without producer id and epoch to the id's coordinator, which bumps the
        epoch and aborts an ongoing transaction. Answers that say "later" are retried until
        the timeout, as the admin client retries them."""
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            node = self.coordinator(transactional_id)
            answer = self.client.call(kp.ApiKey.INIT_PRODUCER_ID, 5, {
                "transactional_id": transactional_id, "transaction_timeout_ms": timeout_ms,
                "producer_id": -1, "producer_epoch": -1}, node=node)
            code = answer["error_code"]
            if code not in FENCE_RETRIABLE or time.monotonic() >= deadline:
                _check(code)
                return
            time.sleep(0.1)

    def abort(self, topic: str, partition: int, producer_id: int, epoch: int, coordinator_epoch: int) -> None:
        """Write an abort marker to the partition's leader (Admin.abortTransaction)."""
        node = self.leader(topic, partition)
        answer = self.client.call(kp.ApiKey.WRITE_TXN_MARKERS, 1, {"markers": [{
            "producer_id": producer_id, "producer_epoch": epoch, "transaction_result": False,
            "topics": [{"name": topic, "partition_indexes": [partition]}],
            "coordinator_epoch": coordinator_epoch}]}, node=node)
        for m in answer["markers"]:
            for t in m["topics"]:
                for p in t["partitions"]:
                    _check(p["error_code"])


# --------------------------------------------------------------------------- the commands
# Each command's facts (`*_found`) are rendered as Kafka's table here and as JSON by
# transactions_json.py.
def list_found(txns: Transactions, duration_ms: int | None, pattern: str | None) -> list[tuple[int, dict]]:
    """(coordinator id, ListTransactions state) of each transaction."""
    try:
        return txns.list(duration_ms, pattern)
    except KafkaError as exc:
        raise failure("Failed to list transactions", exc) from None


def list_lines(txns: Transactions, duration_ms: int | None, pattern: str | None) -> list[str]:
    return table(LIST_HEADERS, [[t["transactional_id"], str(node), str(t["producer_id"]), t["transaction_state"]]
                                for node, t in list_found(txns, duration_ms, pattern)])


def describe_found(txns: Transactions, transactional_id: str) -> tuple[int, dict]:
    """(coordinator id, DescribeTransactions state)."""
    try:
        return txns.describe(transactional_id)
    except KafkaError as exc:
        raise failure(f"Failed to describe transaction state of transactional-id `{transactional_id}`", exc) from None


def describe_lines(txns: Transactions, transactional_id: str, now_ms: int | None = None) -> list[str]:
    node, state = describe_found(txns, transactional_id)
    start = state["transaction_start_time_ms"]
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    partitions = ",".join(f"{t['topic']}-{p}" for t in state["topics"] for p in t["partitions"])
    return table(DESCRIBE_HEADERS, [[
        str(node), transactional_id, str(state["producer_id"]), str(state["producer_epoch"]),
        state["transaction_state"], str(state["transaction_timeout_ms"]),
        "None" if start < 0 else str(start), "None" if start < 0 else str(now_ms - start), partitions]])


def producers_found(txns: Transactions, topic: str, partition: int, broker: int | None) -> list[dict]:
    """The DescribeProducers states of the partition's active producers."""
    try:
        return txns.producers(topic, partition, broker)
    except KafkaError as exc:
        where = "leader" if broker is None else f"broker {broker}"
        raise failure(f"Failed to describe producers for partition {topic}-{partition} on {where}", exc) from None


def producer_lines(txns: Transactions, topic: str, partition: int, broker: int | None) -> list[str]:
    return table(PRODUCER_HEADERS, [[
        str(p["producer_id"]), str(p["producer_epoch"]), str(p["coordinator_epoch"]), str(p["last_sequence"]),
        str(p["last_timestamp"]),
        "None" if p["current_txn_start_offset"] < 0 else str(p["current_txn_start_offset"])]
        for p in producers_found(txns, topic, partition, broker)])


def check_abort(start_offset, producer_id, producer_epoch, coordinator_epoch) -> None:
    """The arguments abort needs, checked before any connection (as Kafka's lazy admin client)."""
    if start_offset is None and producer_id is None:
        raise CommandFailed("The transaction to abort must be identified either with --start-offset (for brokers "
                            "on 3.0 or above) or with --producer-id, --producer-epoch, and --coordinator-epoch "
                            "(for older brokers)")
    if start_offset is None:
        if producer_epoch is None:
            raise CommandFailed("Missing required argument --producer-epoch")
        if coordinator_epoch is None:
            raise CommandFailed("Missing required argument --coordinator-epoch")


def check_hanging(broker, topic, partition) -> None:
    if topic is None and broker is None:
        raise CommandFailed("The `find-hanging` command requires either --topic or --broker-id to limit the "
                            "scope of the search")
    if partition is not None and topic is None:
        raise CommandFailed("The --partition argument requires --topic to be provided")


def abort(txns: Transactions, topic: str, partition: int, start_offset: int | None, producer_id: int | None,
          producer_epoch: int | None, coordinator_epoch: int | None) -> None:
    check_abort(start_offset, producer_id, producer_epoch, coordinator_epoch)
    if start_offset is None:
        spec = (producer_id, producer_epoch, max(coordinator_epoch, 0))  # -1: never had a marker written
    else:
        try:
            producers = txns.producers(topic, partition)
        except KafkaError as exc:
            raise failure(f"Failed to validate producer state for partition {topic}-{partition}", exc) from None
        found = next((p for p in producers if p["current_txn_start_offset"] == start_offset), None)
        if found is None or start_offset < 0:
            raise CommandFailed(f"Could not find any open transactions starting at offset {start_offset} "
                                f"on partition {topic}-{partition}")
        spec = (found["producer_id"], found["producer_epoch"], max(found["coordinator_epoch"], 0))
    try:
        txns.abort(topic, partition, *spec)
    except KafkaError as exc:
        raise failure(f"Failed to abort transaction AbortTransactionSpec(topicPartition={topic}-{partition}, "
                      f"producerId={spec[0]}, producerEpoch={spec[1]}, coordinatorEpoch={spec[2]})", exc) from None


def hanging_found(txns: Transactions, broker: int | None, topic: str | None, partition: int | None,
                  max_timeout_min: int, now_ms: int) -> list[tuple[tuple[str, int], dict]]:
    """((topic, partition), DescribeProducers state) of the open transactions older than the
    longest transaction timeout whose coordinator no longer knows them (or no longer counts
    their partition in)."""
    check_hanging(broker, topic, partition)
    if topic is not None and partition is not None:
        partitions = [(topic, partition)]
    else:
        try:
            topics = txns.topics()
        except KafkaError as exc:
            raise failure("Failed to list topics", exc) from None
        names = [topic] if topic is not None else list(topics)
        if topic is not None and topic not in topics:
            raise failure("Failed to describe 1 topics", known_error(3)) from None
        partitions = [(t, p) for t in names for p, replicas in sorted(topics[t].items())
                      if broker is None or broker in replicas]
    candidates = []
    try:
        for t, p in partitions:
            for state in txns.producers(t, p, broker):
                if state["current_txn_start_offset"] >= 0 and now_ms - state["last_timestamp"] > max_timeout_min * 60000:
                    candidates.append(((t, p), state))
    except KafkaError as exc:
        where = "Optional.empty" if broker is None else f"Optional[{broker}]"
        raise failure(f"Failed to describe producers for {len(partitions)} partitions on broker {where}", exc) from None
    hanging = []
    if candidates:
        pids = sorted({s["producer_id"] for _, s in candidates})
        try:
            ids = {t["producer_id"]: t["transactional_id"] for _, t in txns.list(producer_ids=pids)}
        except KafkaError as exc:
            raise failure(f"Failed to list transactions for {len(pids)} producers", exc) from None
        for tp, state in candidates:
            tid = ids.get(state["producer_id"])
            described = None
            if tid is not None:
                try:
                    described = txns.describe(tid)[1]
                except AdminError as exc:
                    if exc.code != 105:
                        raise failure("Failed to describe 1 transactions", exc) from None
            if described is None or tp not in {(t["topic"], q) for t in described["topics"] for q in t["partitions"]}:
                hanging.append((tp, state))
    return hanging


def hanging_lines(txns: Transactions, broker: int | None, topic: str | None, partition: int | None,
                  max_timeout_min: int, now_ms: int | None = None) -> list[str]:
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    hanging = hanging_found(txns, broker, topic, partition, max_timeout_min, now_ms)
    return table(HANGING_HEADERS, [[
        t, str(p), str(s["producer_id"]), str(s["producer_epoch"]), str(s["coordinator_epoch"]),
        str(s["current_txn_start_offset"]), str(s["last_timestamp"]), str((now_ms - s["last_timestamp"]) // 60000)]
        for (t, p), s in hanging])


def force_terminate(txns: Transactions, transactional_id: str) -> None:
    try:
        txns.force_terminate(transactional_id)
    except KafkaError as exc:
        raise failure(f"Failed to force terminate transactionalId `{transactional_id}`", exc) from None
