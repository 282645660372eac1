"""VerifiableProducer (kafka-verifiable-producer, org.apache.kafka.tools.VerifiableProducer,
Kafka 4.4): produces the increasing integers 0, 1, 2 ... (optionally `<prefix>.<n>`, keyed
0..repeating-keys-1) to one topic and prints one JSON event a line on stdout: startup_complete,
producer_send_success / producer_send_error for every record, and when it stops (all sent, or
SIGTERM/SIGINT) shutdown_complete then tool_data. The system tests read these lines to know
which records were acknowledged, so the fields and their order are Kafka's (Jackson's: the
event's timestamp and name first)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, Protocol

from .java_json import event, java_double


@dataclass(frozen=True)
class Options:
    topic: str
    bootstrap_server: str
    max_messages: int = -1
    throughput: int = -1
    acks: int = -1
    producer_config: str | None = None
    create_time: int = -1
    value_prefix: int | None = None
    repeating_keys: int | None = None
    command_config: str | None = None


class Producer(Protocol):
    """What the tool needs of a client: send(key, value, timestamp_ms, on_done) where
    on_done(partition, offset, error) runs from poll()/flush() once the record is acknowledged
    (error None) or has failed (a KafkaError: java_class_of and str give Kafka's exception);
    send raises for a record refused at once."""

    def send(self, key: str | None, value: str, timestamp_ms: int | None, on_done) -> None: ...

    def poll(self) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


class Throttler:
    """ThroughputThrottler's rule: once the records sent so far run ahead of `throughput` a
    second, sleep until they no longer do (0: sleep until stopped; negative: never)."""

    def __init__(self, throughput: int, start: float, stopped: Callable[[], bool]):
        self.throughput = throughput
        self.start = start
        self.stopped = stopped

    def pace(self, sent: int, now: float, wait: Callable[[float], None]) -> None:
        if self.throughput < 0:
            return
        elapsed = now - self.start
        if elapsed <= 0 or sent / elapsed <= self.throughput:
            return
        if self.throughput == 0:
            while not self.stopped():
                wait(0.1)
            return
        wait(max(0.0, sent / self.throughput - elapsed))


class VerifiableProducer:
    def __init__(self, options: Options, producer: Producer, out: Callable[[str], None],
                 java_class_of: Callable[[BaseException], str]):
        self.o = options
        self.producer = producer
        self.out = out
        self.java_class_of = java_class_of
        self.stop = False  # set by the signal handler: Kafka's shutdown hook
        self.sent = 0
        self.acked = 0
        self.key_counter = 0
        self.create_time = options.create_time if options.create_time != -1 else None
        self.start_ms = int(time.time() * 1000)

    def key(self) -> str | None:
        if self.o.repeating_keys is None:
            return None
        key = str(self.key_counter)
        self.key_counter += 1
        if self.key_counter == self.o.repeating_keys:
            self.key_counter = 0
        return key

    def value(self, n: int) -> str:
        return f"{self.o.value_prefix}.{n}" if self.o.value_prefix is not None else str(n)

    def _failed(self, key, value, exc: BaseException) -> None:
        self.out(event("producer_send_error", key=key, value=value, topic=self.o.topic,
                       exception=f"class {self.java_class_of(exc)}", message=str(exc)))

    def send(self, key: str | None, value: str) -> None:
        timestamp = self.create_time
        if self.create_time is not None:
            # Kafka adds the time elapsed since start on every send (so the gaps grow): kept as is.
            self.create_time += int(time.time() * 1000) - self.start_ms
        self.sent += 1

        def done(partition, offset, error):
            if error is None:
                self.acked += 1
                self.out(event("producer_send_success", key=key, value=value, offset=offset, topic=self.o.topic,
                               partition=partition))
            else:
                self._failed(key, value, error)

        try:
            self.producer.send(key, value, timestamp, done)
        except Exception as exc:  # refused at once (Kafka: send() throws)
            self._failed(key, value, exc)

    def run(self) -> None:
        """Send until max-messages (never, if negative) or stopped."""
        self.out(event("startup_complete"))
        limit = self.o.max_messages if self.o.max_messages >= 0 else math.inf
        throttler = Throttler(self.o.throughput, time.monotonic(), lambda: self.stop)
        i = 0
        while i < limit and not self.stop:
            self.send(self.key(), self.value(i))
            self.producer.poll()
            throttler.pace(i, time.monotonic(), self._wait)
            i += 1

    def _wait(self, seconds: float) -> None:
        """Sleep, still serving acknowledgements, until `seconds` pass or the tool is stopped."""
        deadline = time.monotonic() + seconds
        while not self.stop and time.monotonic() < deadline:
            self.producer.poll()
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))

    def shutdown(self, started: float) -> None:
        """The shutdown hook: flush and close, then shutdown_complete and the tool_data summary."""
        try:
            self.producer.flush()
        finally:
            self.producer.close()
        self.out(event("shutdown_complete"))
        elapsed_ms = int(time.time() * 1000) - int(started * 1000)
        avg = 1000 * (self.acked / elapsed_ms) if elapsed_ms else (math.nan if not self.acked else math.inf)
        self.out(event("tool_data", sent=self.sent, acked=self.acked, target_throughput=self.o.throughput,
                       avg_throughput=java_double(avg)))
