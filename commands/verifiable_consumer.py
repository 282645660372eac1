"""VerifiableConsumer (kafka-verifiable-consumer, org.apache.kafka.tools.VerifiableConsumer,
Kafka 4.4): joins a group on one topic and prints one JSON event a line on stdout:
startup_complete, partitions_assigned / partitions_revoked at each rebalance, records_consumed
after each poll (with --verbose a record_data line per record before it), offsets_committed
after each synchronous commit (unless --enable-autocommit), then shutdown_complete and
shutdown_requested. Fields and their order are Kafka's (Jackson's)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Protocol

from .errors import CONFIG_EXCEPTION, ILLEGAL_ARGUMENT, JavaError
from .java_json import event


@dataclass(frozen=True)
class Options:
    topic: str
    group_id: str
    bootstrap_server: str
    group_protocol: str = "classic"
    group_remote_assignor: str | None = None
    group_instance_id: str | None = None
    max_messages: int = -1
    session_timeout: int | None = None
    verbose: bool = False
    use_auto_commit: bool = False
    close_timeout: int = 30000
    reset_policy: str = "earliest"
    assignment_strategy: str = "org.apache.kafka.clients.consumer.RangeAssignor"
    consumer_config: str | None = None
    command_config: str | None = None


_RESET = re.compile(r"earliest|latest|none|by_duration:.*")


def check(o: Options) -> None:
    """What Kafka's tool fails on before it consumes, as the JVM's first line (JavaError)."""
    if o.group_protocol.upper() not in ("CLASSIC", "CONSUMER"):
        raise JavaError(ILLEGAL_ARGUMENT, f"No enum constant org.apache.kafka.clients.consumer.GroupProtocol."
                        f"{o.group_protocol.upper()}")
    if not _RESET.fullmatch(o.reset_policy.lower()):
        raise JavaError(CONFIG_EXCEPTION, f"Invalid value {o.reset_policy} for configuration auto.offset.reset: "
                        f"Invalid value `{o.reset_policy}` for configuration auto.offset.reset. The value must be "
                        "either 'earliest', 'latest', 'none' or of the format 'by_duration:<PnDTnHnMn.nS.>'.")


def consumer_properties(o: Options, files: list[dict[str, str]]) -> dict[str, str]:
    """Kafka's order: the config files first, the options over them."""
    java: dict[str, str] = {}
    for props in files:
        java.update(props)
    if o.group_protocol.lower() == "consumer":
        java["group.protocol"] = o.group_protocol
        if o.group_remote_assignor is not None:
            java["group.remote.assignor"] = o.group_remote_assignor
    else:
        java["partition.assignment.strategy"] = o.assignment_strategy
    java["group.id"] = o.group_id
    if o.group_instance_id is not None:
        java["group.instance.id"] = o.group_instance_id
    java["bootstrap.servers"] = o.bootstrap_server
    java["enable.auto.commit"] = "true" if o.use_auto_commit else "false"
    java["auto.offset.reset"] = o.reset_policy
    if o.session_timeout is not None:
        java["session.timeout.ms"] = str(o.session_timeout)
    return java


Record = tuple  # (topic, partition, offset, key: str | None, value: str | None)


class Consumer(Protocol):
    """subscribe(topic, on_assigned, on_revoked) with lists of (topic, partition); poll() the
    next non-empty batch of records in fetch order (or [] when stopped); commit({(topic,
    partition): offset}) raising an exception whose str() is Kafka's message; close()."""

    def subscribe(self, topic: str, on_assigned, on_revoked) -> None: ...

    def poll(self) -> list[Record]: ...

    def commit(self, offsets: dict[tuple[str, int], int]) -> None: ...

    def close(self) -> None: ...


def _partitions(tps) -> list[dict]:
    return [{"topic": t, "partition": p} for t, p in tps]


class VerifiableConsumer:
    def __init__(self, options: Options, consumer: Consumer, out: Callable[[str], None]):
        self.o = options
        self.consumer = consumer
        self.out = out
        self.consumed = 0
        self.stop = False  # set by the signal handler: Kafka's shutdown hook

    def finished(self) -> bool:
        return self.o.max_messages >= 0 and self.consumed >= self.o.max_messages

    def on_records(self, records: list[Record]) -> dict[tuple[str, int], int]:
        """One records_consumed event for a poll: each partition's records (cut at
        max-messages), the offsets to commit after them. Its count is the whole batch's."""
        by_partition: dict[tuple[str, int], list[Record]] = {}
        for record in records:
            by_partition.setdefault((record[0], record[1]), []).append(record)
        offsets, summaries = {}, []
        for tp, batch in by_partition.items():
            if self.o.max_messages >= 0 and self.consumed + len(batch) > self.o.max_messages:
                batch = batch[:self.o.max_messages - self.consumed]
            if not batch:
                continue
            offsets[tp] = batch[-1][2] + 1
            summaries.append({"topic": tp[0], "partition": tp[1], "count": len(batch), "minOffset": batch[0][2],
                              "maxOffset": batch[-1][2]})
            if self.o.verbose:
                for topic, partition, offset, key, value in batch:
                    self.out(event("record_data", key=key, value=value, topic=topic, partition=partition,
                                   offset=offset))
            self.consumed += len(batch)
            if self.finished():
                break
        self.out(event("records_consumed", count=len(records), partitions=summaries))
        return offsets

    def commit(self, offsets: dict[tuple[str, int], int]) -> None:
        committed = [{"topic": t, "partition": p, "offset": o} for (t, p), o in offsets.items()]
        try:
            self.consumer.commit(offsets)
        except Exception as exc:  # Kafka reports a failed commit as an event, and goes on
            self.out(event("offsets_committed", offsets=committed, error=str(exc), success=False))
            return
        self.out(event("offsets_committed", offsets=committed, success=True))

    def run(self) -> None:
        self.out(event("startup_complete"))
        try:
            self.consumer.subscribe(self.o.topic,
                                    lambda tps: self.out(event("partitions_assigned", partitions=_partitions(tps))),
                                    lambda tps: self.out(event("partitions_revoked", partitions=_partitions(tps))))
            while not self.finished() and not self.stop:
                records = self.consumer.poll()
                if not records:
                    continue  # stopped while waiting
                offsets = self.on_records(records)
                if not self.o.use_auto_commit:
                    self.commit(offsets)
        finally:
            self.consumer.close()
            self.out(event("shutdown_complete"))
