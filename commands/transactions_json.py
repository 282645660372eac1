"""pk-transactions --output json: one JSON document per line for each row of Kafka's table,
built from the facts the table renders (transactions.*_found); numbers are numbers and Kafka's
"None" is null.

    list:               {"transactionalId":"t1","coordinator":0,"producerId":4000,"transactionState":"Ongoing"}
    describe:           {"coordinatorId":0,"transactionalId":"t1","producerId":4000,"producerEpoch":0,
                         "transactionState":"Ongoing","transactionTimeoutMs":60000,
                         "currentTransactionStartTimeMs":1767225600000,"transactionDurationMs":1520,
                         "topicPartitions":[{"topic":"orders","partition":1}]}
    describe-producers: {"producerId":4000,"producerEpoch":0,"latestCoordinatorEpoch":0,"lastSequence":0,
                         "lastTimestamp":1767225600000,"currentTransactionStartOffset":12}
    find-hanging:       {"topic":"orders","partition":1,"producerId":4000,"producerEpoch":0,"coordinatorEpoch":0,
                         "startOffset":12,"lastTimestamp":1767225600000,"durationMinutes":20}

abort and forceTerminateTransaction print nothing, as in Kafka.
"""

from __future__ import annotations

import time

from . import transactions as cmd
from .json_out import dumps


def _none_if_negative(n: int) -> int | None:
    return None if n < 0 else n


def list_documents(txns, duration_ms, pattern) -> list[str]:
    return [dumps({"transactionalId": t["transactional_id"], "coordinator": node, "producerId": t["producer_id"],
                   "transactionState": t["transaction_state"]})
            for node, t in cmd.list_found(txns, duration_ms, pattern)]


def describe_documents(txns, transactional_id: str, now_ms: int | None = None) -> list[str]:
    node, state = cmd.describe_found(txns, transactional_id)
    start = _none_if_negative(state["transaction_start_time_ms"])
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    return [dumps({
        "coordinatorId": node, "transactionalId": transactional_id, "producerId": state["producer_id"],
        "producerEpoch": state["producer_epoch"], "transactionState": state["transaction_state"],
        "transactionTimeoutMs": state["transaction_timeout_ms"], "currentTransactionStartTimeMs": start,
        "transactionDurationMs": None if start is None else now_ms - start,
        "topicPartitions": [{"topic": t["topic"], "partition": p} for t in state["topics"] for p in t["partitions"]],
    })]


def producer_documents(txns, topic: str, partition: int, broker: int | None) -> list[str]:
    return [dumps({"producerId": p["producer_id"], "producerEpoch": p["producer_epoch"],
                   "latestCoordinatorEpoch": p["coordinator_epoch"], "lastSequence": p["last_sequence"],
                   "lastTimestamp": p["last_timestamp"],
                   "currentTransactionStartOffset": _none_if_negative(p["current_txn_start_offset"])})
            for p in cmd.producers_found(txns, topic, partition, broker)]


def hanging_documents(txns, broker, topic, partition, max_timeout_min: int, now_ms: int | None = None) -> list[str]:
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    return [dumps({"topic": t, "partition": p, "producerId": s["producer_id"], "producerEpoch": s["producer_epoch"],
                   "coordinatorEpoch": s["coordinator_epoch"], "startOffset": s["current_txn_start_offset"],
                   "lastTimestamp": s["last_timestamp"], "durationMinutes": (now_ms - s["last_timestamp"]) // 60000})
            for (t, p), s in cmd.hanging_found(txns, broker, topic, partition, max_timeout_min, now_ms)]
