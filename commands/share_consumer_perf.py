"""ShareConsumerPerformance (kafka-share-consumer-perf-test.sh,
org.apache.kafka.tools.ShareConsumerPerformance, Kafka 4.4): --threads share consumers of one
share group read a topic until --num-records arrived or none came for --timeout ms.

What Kafka 4.4's tool prints and when, which this module follows:
- the option checks (jopt-simple's usage errors), then the header, then every value that
  jopt-simple converts only when it is read, in the order the tool reads it: --threads, the
  config file, --socket-buffer-size, --fetch-size (building the consumers), --num-records,
  --timeout (in the main thread, printed as getMessage()), then --date-format and
  --reporting-interval inside each consumer's thread, where the failure reaches main() through
  Future.get() and is printed as the ExecutionException's message, `class: message`;
- each consumer's loop, its progress lines (--show-detailed-stats), the per-consumer lines
  (--show-consumer-stats), the timeout WARNING, then the group's line.
With one thread the consumer keeps the configured client.id; with more, each gets
`<client.id>-<n>`. The records are acknowledged implicitly as Kafka's default
(share.acknowledgement.mode=implicit): a poll's records are accepted by the next poll, the
last ones by the commit at the end. The consumer is commands/backends/wire_share.py.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable

from .consumer_perf import jopt_number, record_fetch_timeout
from .errors import ILLEGAL_ARGUMENT, JavaError, UsageError
from .perf_common import JavaDateFormat, config_file, format_metrics, java_div, java_fixed, now_ms as _now_ms

DEFAULT_GROUP = "perf-share-consumer"
CLIENT_ID = "perf-share-consumer-client"
DEFAULT_DATE_FORMAT = "yyyy-MM-dd HH:mm:ss:SSS"
HEADER = "start.time, end.time, data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg, fetch.time.ms"
BYTE_ARRAY_DESERIALIZER = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
_MB = 1024 * 1024


@dataclass
class SharePerfOptions:
    """ShareConsumerPerfOptions; numbers stay text until read, as jopt-simple converts them."""

    topic: str | None = None
    bootstrap_server: str | None = None
    group: str = DEFAULT_GROUP
    messages: str | None = None
    num_records: str | None = None
    fetch_size: str | int = 1024 * 1024
    socket_buffer_size: str | int = 2 * 1024 * 1024
    consumer_config: str | None = None
    command_config: str | None = None
    command_property: list[str] = field(default_factory=list)
    print_metrics: bool = False
    show_detailed_stats: bool = False
    show_consumer_stats: bool = False
    timeout: str | None = None
    reporting_interval: str = "5000"
    date_format: str = DEFAULT_DATE_FORMAT
    hide_header: bool = False
    threads: str | int = 1


def check_options(o: SharePerfOptions, out: Callable[[str], None]) -> None:
    """The constructor's checks after parsing, in Kafka's order, then its deprecation warnings
    (on stdout)."""
    if o.topic is None:
        raise UsageError('Missing required argument "[topic]"')
    if o.bootstrap_server is None:
        raise UsageError('Missing required argument "[bootstrap-server]"')
    if (o.messages is None) == (o.num_records is None):
        raise UsageError("Exactly one of the following arguments is required: [messages], [num-records]")
    if o.consumer_config is not None and o.command_config is not None:
        raise UsageError('Option "[consumer.config]" can\'t be used with option "[command-config]"')
    if o.messages is not None:
        out("Warning: --messages is deprecated. Use --num-records instead.")
    if o.consumer_config is not None:
        out("Warning: --consumer.config is deprecated. Use --command-config instead.")


def share_consumer_properties(o: SharePerfOptions) -> dict[str, str]:
    """ShareConsumerPerfOptions.props(): the config file, the --command-property pairs, then
    the options, which always win (client.id only if none was given)."""
    props = config_file(o.consumer_config if o.consumer_config is not None else o.command_config)
    for prop in o.command_property:
        key, eq, value = prop.partition("=")
        if eq:
            props[key] = value
    props["bootstrap.servers"] = o.bootstrap_server or ""
    props["group.id"] = o.group
    props["receive.buffer.bytes"] = str(jopt_number("socket-buffer-size", o.socket_buffer_size, 32))
    props["fetch.max.bytes"] = str(jopt_number("fetch-size", o.fetch_size, 32))
    props["key.deserializer"] = BYTE_ARRAY_DESERIALIZER
    props["value.deserializer"] = BYTE_ARRAY_DESERIALIZER
    props["check.crcs"] = "false"
    props.setdefault("client.id", CLIENT_ID)
    return props


class _Tally:
    """The AtomicLongs the consumers' threads share."""

    def __init__(self):
        self.records = 0
        self.bytes = 0
        self.lock = threading.Lock()

    def add(self, records: int, nbytes: int) -> None:
        with self.lock:
            self.records += records
            self.bytes += nbytes


@dataclass
class _Consumed:
    """ShareConsumerConsumption: one consumer's records and bytes."""

    records: int = 0
    bytes: int = 0
    error: BaseException | None = None


def run_share_consumer_perf(o: SharePerfOptions, open_consumer: Callable[[dict[str, str]], object],
                            out: Callable[[str], None], now_ms: Callable[[], int] = _now_ms) -> None:
    """ShareConsumerPerformance.run after the option checks. The consumers opened are closed
    on every path (Kafka's leave the JVM with it)."""
    if not o.hide_header:
        out(HEADER)
    threads = jopt_number("threads", o.threads, 32)
    consumers: list = []
    client_ids: list[str] = []
    try:
        for i in range(threads):
            props = share_consumer_properties(o)
            if threads == 1:
                client_ids.append(props["client.id"])
                consumers.append(open_consumer(props))
                break
            props["client.id"] = f"{props['client.id']}-{i + 1}"
            client_ids.append(props["client.id"])
            consumers.append(open_consumer(props))
        start_ms = now_ms()
        tally = _consume(consumers, client_ids, o, out, start_ms, now_ms)
        end_ms = now_ms()
        metrics = [consumer.metrics() for consumer in consumers] if o.print_metrics else []
        for consumer in consumers:
            consumer.commit()
        elapsed_sec = (end_ms - start_ms) / 1000.0
        out(_stats_line(tally.bytes, tally.records, elapsed_sec, end_ms - start_ms, start_ms, end_ms,
                        JavaDateFormat(o.date_format)))
        for table in metrics:
            for line in format_metrics(table):
                out(line)
    finally:
        for consumer in consumers:
            try:
                consumer.close()
            except Exception:  # noqa: BLE001 - the broker releases what a member held once it is gone
                pass


def _consume(consumers: list, client_ids: list[str], o: SharePerfOptions, out: Callable[[str], None],
             start_ms: int, now_ms) -> _Tally:
    """ShareConsumerPerformance.consume: one thread per consumer, joined, then the
    per-consumer lines and the timeout warning."""
    num_records = (jopt_number("messages", o.messages, 64) if o.messages is not None
                   else jopt_number("num-records", o.num_records, 64))
    timeout = record_fetch_timeout(o)
    if not consumers:  # Executors.newFixedThreadPool(0)
        raise JavaError(ILLEGAL_ARGUMENT)
    for consumer in consumers:
        consumer.subscribe(o.topic)
    tally = _Tally()
    consumed = [_Consumed() for _ in consumers]
    lock = threading.Lock()  # one line at a time on stdout

    def locked_out(line: str) -> None:
        with lock:
            out(line)

    interrupted = threading.Event()
    workers = [threading.Thread(target=_consume_one, args=(c, tally, o, num_records, timeout, consumed[i], i + 1,
                                                           locked_out, now_ms, interrupted), daemon=True)
               for i, c in enumerate(consumers)]
    for w in workers:
        w.start()
    # ExecutorService.awaitTermination(timeout + 100 ms), then shutdownNow(): a consumer still
    # reading then (its last record came late in the run) is interrupted in poll() and the run
    # fails with its InterruptException, as Kafka 4.4's tool does.
    deadline = now_ms() + timeout + 100
    for w in workers:
        w.join(max(deadline - now_ms(), 0) / 1000)
    if any(w.is_alive() for w in workers):
        interrupted.set()
    for w in workers:
        w.join()
    for done in consumed:  # Future.get() in submission order: the first failure ends the run
        if done.error is not None:
            if isinstance(done.error, JavaError):  # ExecutionException's message: the cause's toString()
                raise JavaError("java.util.concurrent.ExecutionException", str(done.error))
            raise done.error
    if o.show_consumer_stats:
        end_ms = now_ms()
        date_format = JavaDateFormat(o.date_format)
        for i, done in enumerate(consumed):
            elapsed_sec = (end_ms - start_ms) / 1000.0
            out(f"Share consumer {i + 1} having client id {client_ids[i]} consumption metrics- "
                + _stats_line(done.bytes, done.records, elapsed_sec, end_ms - start_ms, start_ms, end_ms,
                              date_format))
    if tally.records < num_records:
        out(f"WARNING: Exiting before consuming the expected number of records: timeout ({timeout} ms) exceeded. "
            "You can use the --timeout option to increase the timeout.")
    return tally


INTERRUPTED = JavaError("org.apache.kafka.common.errors.InterruptException",
                        "Timeout waiting for results from fetching records")


def _consume_one(consumer, tally: _Tally, o: SharePerfOptions, num_records: int, timeout: int,
                 consumed: _Consumed, index: int, out: Callable[[str], None], now_ms,
                 interrupted: threading.Event) -> None:
    """consumeRecordsForSingleShareConsumer, with the failure kept for the main thread."""
    try:
        date_format = JavaDateFormat(o.date_format)
        current = now_ms()
        last_consumed = last_report = current
        last_bytes = last_records = 0
        while tally.records < num_records and current - last_consumed <= timeout:
            records = consumer.poll(100)
            if interrupted.is_set():
                raise INTERRUPTED
            current = now_ms()
            if not records:
                continue
            last_consumed = current
            # Java checks the interval after each record, with `current` fixed for the whole
            # poll: only the first record of a poll can trigger a report.
            for n, record in enumerate(records):
                size = (len(record.key) if record.key is not None else 0) + \
                       (len(record.value) if record.value is not None else 0)
                consumed.records += 1
                consumed.bytes += size
                tally.add(1, size)
                if n == 0 and current - last_report >= _reporting_interval(o):
                    if o.show_detailed_stats:
                        out(_progress_line(consumed.bytes, last_bytes, consumed.records, last_records, last_report,
                                           current, date_format, index))
                    last_report = current
                    last_records = consumed.records
                    last_bytes = consumed.bytes
    except BaseException as exc:  # noqa: BLE001 - reported by the main thread, as Future.get() does
        consumed.error = exc


def _reporting_interval(o: SharePerfOptions) -> int:
    value = jopt_number("reporting-interval", o.reporting_interval, 64)
    if value <= 0:
        raise JavaError(ILLEGAL_ARGUMENT, "Reporting interval must be greater than 0.")
    return value


def _stats_line(nbytes: int, records: int, elapsed_sec: float, fetch_ms: int, start_ms: int, end_ms: int,
                date_format: JavaDateFormat) -> str:
    """printStatsForShareGroup's (and printStatsForShareConsumer's) figures."""
    total_mb = (nbytes * 1.0) / _MB
    return ", ".join((date_format.format(start_ms), date_format.format(end_ms), java_fixed(total_mb, 4),
                      java_fixed(java_div(total_mb, elapsed_sec), 4),
                      java_fixed(java_div(float(records), elapsed_sec), 4), str(records), str(fetch_ms)))


def _progress_line(nbytes: int, last_bytes: int, records: int, last_records: int, start_ms: int, end_ms: int,
                   date_format: JavaDateFormat, index: int) -> str:
    """printShareConsumerProgress, same arithmetic."""
    elapsed_ms = float(end_ms - start_ms)
    total_mb = (nbytes * 1.0) / _MB
    interval_mb = ((nbytes - last_bytes) * 1.0) / _MB
    interval_mb_per_sec = java_div(1000.0 * interval_mb, elapsed_ms)
    interval_records_per_sec = java_div(float(records - last_records), elapsed_ms) * 1000.0
    return (f"{date_format.format(start_ms)}, {date_format.format(end_ms)}, {java_fixed(total_mb, 4)}, "
            f"{java_fixed(interval_mb_per_sec, 4)}, {java_fixed(interval_records_per_sec, 4)}, {records}, "
            f"{end_ms - start_ms} for share consumer {index}")


class PerfShareConsumer:
    """The wire share consumer as the tool uses it: implicit acknowledgement (a poll's records
    accepted by the next poll or the final commit) and the few metrics pk can state."""

    def __init__(self, props: dict[str, str]):
        from .backends.wire import connection_security

        self.props = props
        self.security = connection_security(props)
        self.consumer = None
        self.acknowledged = 0
        self._pending: list = []

    def subscribe(self, topic: str) -> None:
        from .backends.wire_share import ShareConsumer

        self.consumer = ShareConsumer(self.props["bootstrap.servers"], self.props["group.id"], topic,
                                      security=self.security, client_id=self.props["client.id"])

    def _accept_pending(self) -> None:
        from .backends.wire_share import ACCEPT

        for record in self._pending:
            self.consumer.acknowledge(record, ACCEPT)
        self.acknowledged += len(self._pending)
        self._pending = []

    def poll(self, timeout_ms: int) -> list:
        self._accept_pending()
        self._pending = self.consumer.poll(timeout_ms / 1000)
        return self._pending

    def commit(self) -> None:
        if self.consumer is not None:
            self._accept_pending()

    def metrics(self) -> dict:
        tags = (("client-id", self.props["client.id"]),)
        return {("consumer-share-fetch-manager-metrics", "acknowledgements-send-total", tags):
                float(self.acknowledged)}

    def close(self) -> None:
        if self.consumer is not None:
            self.consumer.close()
