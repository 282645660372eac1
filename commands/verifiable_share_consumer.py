"""VerifiableShareConsumer (kafka-verifiable-share-consumer,
org.apache.kafka.tools.VerifiableShareConsumer, Kafka 4.4): a member of a share group reads one
topic and prints one JSON event a line on stdout:

- startup_complete; offset_reset_strategy_set after --offset-reset-strategy set the group's
  share.auto.offset.reset (an IncrementalAlterConfigs of the GROUP resource);
- records_consumed after each poll (each partition's count and offsets, ascending), with
  --verbose a record_data line per record before it;
- offsets_acknowledged each time a broker answers a partition's acknowledgements (Kafka's
  AcknowledgementCommitCallback: one partition an event, its offsets lowest first (Kafka 4.4
  lists them in no fixed order: lowest first, highest first, or descending runs); success, and
  error when it failed; with --ack-pattern and success, ackTypeCounts: how many of them went as
  each type, in Java's HashMap order of the type names);
- shutdown_complete once --max-messages records were acknowledged (forever with -1), then
  shutdown_requested (the JVM's shutdown hook).

Acknowledgement modes: auto (implicit: a poll's records are accepted by the next poll),
sync (commitSync after each poll: a ShareAcknowledge answered before the next poll) and async
(commitAsync: Kafka sends it in the background; pk sends it as sync does, which only changes
when the event is printed). Fields and their order are Kafka's (Jackson's). The consumer is
backends/wire_share.py.

--ack-pattern (sync or async only) makes the consumer explicit (Kafka's
share.acknowledgement.mode=explicit): each record is acknowledged, as it is received, with the
pattern's type at its position, the offset modulo the pattern's length; a record renewed
(RENEW) comes back on a later poll and takes the pattern's next type then, while a record
released and delivered again starts over at its offset's own position.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from .errors import ILLEGAL_ARGUMENT, JavaError
from .java_hash import hash_order, string_hash
from .java_json import event

LOGGER = "org.apache.kafka.tools.VerifiableShareConsumer"
MODES = ("AUTO", "ASYNC", "SYNC")
ACK_TYPES = ("ACCEPT", "RELEASE", "REJECT", "RENEW")
GROUP_RESOURCE = 32  # ConfigResource.Type.GROUP


class ArgumentError(Exception):
    """An ArgumentParserException createFromArgs throws (argparse4j prints its message)."""


@dataclass(frozen=True)
class Options:
    topic: str
    group_id: str
    bootstrap_server: str
    max_messages: int = -1
    verbose: bool = False
    acknowledgement_mode: str = "auto"
    ack_pattern: str = ""
    offset_reset_strategy: str = ""
    command_config: str | None = None


def check(o: Options) -> tuple[str, list[str]]:
    """createFromArgs' checks, in its order: the mode (an enum's valueOf escaping main), the
    ack pattern (each type's valueOf, then the two ArgumentParserExceptions). Returns (mode,
    pattern)."""
    mode = o.acknowledgement_mode.upper()
    if mode not in MODES:
        raise JavaError(ILLEGAL_ARGUMENT, "No enum constant org.apache.kafka.tools.VerifiableShareConsumer."
                                          f"AcknowledgementMode.{mode}")
    pattern = []
    if o.ack_pattern:
        for word in o.ack_pattern.split(","):
            kind = word.strip().upper()
            if kind not in ACK_TYPES:
                raise JavaError(ILLEGAL_ARGUMENT, f"No enum constant org.apache.kafka.clients.consumer.AcknowledgeType."
                                                  f"{kind}")
            pattern.append(kind)
    if pattern and mode == "AUTO":
        raise ArgumentError("--ack-pattern requires --acknowledgement-mode to be 'sync' or 'async', not 'auto'")
    if pattern and all(kind == "RENEW" for kind in pattern):
        raise ArgumentError("--ack-pattern must contain at least one non-RENEW type; a pattern of only 'renew' "
                            "would re-deliver every record indefinitely without ever resolving it")
    return mode, pattern


def reset_strategy_type(text: str) -> str:
    """ShareGroupAutoOffsetResetStrategy.fromString(...).type(): earliest, latest or
    by_duration (the text is lower-cased first)."""
    if text in ("earliest", "latest"):
        return text
    if text.startswith("by_duration:"):
        return "by_duration"
    raise JavaError(ILLEGAL_ARGUMENT, f"Unknown auto offset reset strategy: {text}")


class VerifiableShareConsumer:
    def __init__(self, o: Options, mode: str, consumer, set_group_config: Callable[[str, str], None],
                 out: Callable[[str], None], log_error: Callable[[str, BaseException], None],
                 pattern: list[str] | None = None):
        self.o = o
        self.mode = mode
        self.pattern = pattern or []
        # per partition: offset -> the type it was last acknowledged with, until the broker answers
        self._pending_types: dict[tuple[str, int], dict[int, str]] = {}
        # per partition: offset -> its position in the pattern, kept while it is being renewed
        self._pattern_index: dict[tuple[str, int], dict[int, int]] = {}
        self.consumer = consumer
        self.set_group_config = set_group_config
        self.out = out
        self.log_error = log_error
        self.acknowledged = 0
        self.stop = False  # set by the signal handler: Kafka's shutdown hook (wakeup)
        self._pending: list = []  # records of the last poll, accepted implicitly by the next

    def on_acknowledged(self, topic: str, partition: int, offsets: list[int], error: str | None) -> None:
        """VerifiableShareConsumer.onComplete for one partition."""
        fields = {"count": len(offsets), "partitions": [{"topic": topic, "partition": partition,
                                                         "count": len(offsets),
                                                         "offsets": sorted(offsets)}],
                  "success": error is None}
        if error is not None:
            fields["error"] = error
        if self.pattern and error is None:
            fields["ackTypeCounts"] = self._count_types((topic, partition), offsets)
        self.out(event("offsets_acknowledged", **fields))
        if error is None:
            self.acknowledged += len(offsets)

    def _count_types(self, tp: tuple[str, int], offsets: list[int]) -> dict[str, int]:
        """How many of a successful answer's offsets went as each type (a HashMap<String, Long>
        in Kafka: its order is the names' hash order). An offset settled by anything but RENEW
        starts over at its own pattern position if it is delivered again."""
        counts: dict[str, int] = {}
        pending = self._pending_types.get(tp)
        if pending is None:
            return counts
        for offset in offsets:
            kind = pending.pop(offset, None)
            if kind is None:
                continue
            counts[kind] = counts.get(kind, 0) + 1
            if kind != "RENEW" and tp in self._pattern_index:
                self._pattern_index[tp].pop(offset, None)
                if not self._pattern_index[tp]:
                    del self._pattern_index[tp]
        if not pending:
            del self._pending_types[tp]
        return {name: counts[name] for name in hash_order(counts, string_hash)}

    def _acknowledge_by_pattern(self, record) -> None:
        """Kafka's explicit acknowledgement of one record received: the pattern's type at the
        record's position (the offset modulo the pattern's length, or one past the type that
        renewed it)."""
        from .backends.wire_share import ACK_TYPES

        tp = (record.topic, record.partition)
        positions = self._pattern_index.setdefault(tp, {})
        index = positions.setdefault(record.offset, record.offset % len(self.pattern))
        kind = self.pattern[index]
        self.consumer.acknowledge(record, ACK_TYPES[kind.lower()])
        self._pending_types.setdefault(tp, {})[record.offset] = kind
        if kind == "RENEW":
            positions[record.offset] = (index + 1) % len(self.pattern)

    def on_records(self, records: list) -> None:
        by_partition: dict[tuple[str, int], list] = {}
        for record in records:
            by_partition.setdefault((record.topic, record.partition), []).append(record)
        summaries = []
        for (topic, partition), batch in by_partition.items():
            offsets = sorted({r.offset for r in batch})
            if self.pattern:
                for r in batch:
                    self._acknowledge_by_pattern(r)
            summaries.append({"topic": topic, "partition": partition, "count": len(offsets), "offsets": offsets})
            if self.o.verbose:
                for r in batch:
                    self.out(event("record_data", key=_text(r.key), value=_text(r.value), topic=r.topic,
                                   partition=r.partition, offset=r.offset))
        self.out(event("records_consumed", count=len(records), partitions=summaries))

    def _accept(self, records: list) -> None:
        from .backends.wire_share import ACCEPT

        for record in records:
            self.consumer.acknowledge(record, ACCEPT)

    def finished(self) -> bool:
        return self.o.max_messages >= 0 and self.acknowledged >= self.o.max_messages

    def run(self) -> None:
        self.out(event("startup_complete"))
        try:
            if self.o.offset_reset_strategy != "":
                kind = reset_strategy_type(self.o.offset_reset_strategy.lower())  # createFromArgs lower-cases it
                self.set_group_config("share.auto.offset.reset", kind)
                self.out(event("offset_reset_strategy_set", offsetResetStrategy=kind))
            self.consumer.on_acknowledged = self.on_acknowledged
            while not self.finished() and not self.stop:
                self._accept(self._pending)  # implicit acknowledgement: sent with this poll
                self._pending = []
                records = self._poll(5.0)
                if not records:
                    continue
                self.on_records(records)
                if self.mode == "AUTO":
                    self._pending = records
                else:
                    if not self.pattern:  # implicit: commitSync/commitAsync accept the poll's records
                        self._accept(records)
                    self.consumer.commit()
        except Exception as exc:  # noqa: BLE001 - Kafka logs any failure and shuts down as usual
            self.log_error("Error during processing, terminating share consumer process: ", exc)
        finally:
            self._accept(self._pending)  # close() accepts the last poll's records in implicit mode
            self._pending = []
            self.consumer.close()
            self.out(event("shutdown_complete"))

    def _poll(self, seconds: float) -> list:
        """poll(5000), cut short by a shutdown request (Kafka's wakeup) or once the
        acknowledgements it sent reached --max-messages (nothing more is wanted then)."""
        deadline = time.monotonic() + seconds
        while not self.stop and not self.finished():
            records = self.consumer.poll(min(0.5, max(deadline - time.monotonic(), 0)))
            if records or time.monotonic() >= deadline:
                return records
        return []


def _text(data: bytes | None) -> str | None:
    """StringDeserializer: UTF-8, malformed bytes replaced."""
    return None if data is None else bytes(data).decode("utf-8", errors="replace")
