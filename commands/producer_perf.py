"""ProducerPerformance (kafka-producer-perf-test.sh, org.apache.kafka.tools.ProducerPerformance):
send N records as fast as allowed, print a progress line every 5 s and a summary line with
latency percentiles.

Written against a small interface (`PerfProducer`, below) so that a remote backend can plug in
beside the bundled engine's adapter (commands/backends/engine_perf.py).

Errors (commands/errors.py): `ArgumentError` is what argparse4j would report
(`producer-performance: error: ...`), `JavaError` an exception Kafka's tool lets escape,
`ToolError` a pk refusal with its own one-line text.
"""

from __future__ import annotations

import os
import random
import re
import time
from dataclasses import dataclass
from typing import Callable, Protocol

from .errors import ILLEGAL_ARGUMENT, ArgumentError, JavaError, ToolError, java_class_of
from .perf_common import config_file, format_metrics, java_div, java_fixed, java_int_cast, java_long_div, now_ms as _now_ms

DEFAULT_TRANSACTIONAL_ID = "performance-producer-default-transactional-id"
PRODUCER_CLIENT_ID = "perf-producer-client"
BYTE_ARRAY_SERIALIZER = "org.apache.kafka.common.serialization.ByteArraySerializer"
REPORTING_INTERVAL_MS = 5000
MAX_LATENCY_SAMPLES = 500000


@dataclass
class ProducerPerfOptions:
    """ProducerPerformance's parsed arguments (argparse4j's Namespace)."""

    topic: str
    num_records: int
    throughput: float
    record_size: int | None = None
    payload_file: str | None = None
    payload_delimiter: str = "\\n"  # argparse4j's default, printed escaped in the help
    producer_props: list[str] | None = None
    producer_config: str | None = None
    print_metrics: bool = False
    transactional_id: str | None = None
    transaction_duration_ms: int | None = None
    # Kafka 4.x
    bootstrap_server: str | None = None
    command_property: list[str] | None = None
    command_config: str | None = None
    warmup_records: int = 0
    reporting_interval: int = REPORTING_INTERVAL_MS
    record_key_range: int | None = None
    key_distribution: str = "none"
    random_seed: int = 0
    payload_monotonic: bool = False


def check_producer_options(o: ProducerPerfOptions) -> None:
    """Kafka 4.4's checks after parsing, in its order; each is an argparse4j error."""
    if o.num_records <= 0:
        raise ArgumentError("--num-records should be greater than zero.")
    if o.warmup_records >= o.num_records:
        raise ArgumentError("The value for --warmup-records must be strictly fewer than the number of records in "
                            "the test, --num-records.")
    if o.record_size is not None and o.record_size <= 0:
        raise ArgumentError("--record-size should be greater than zero.")
    if (o.bootstrap_server is None and o.command_property is None and o.producer_props is None
            and o.producer_config is None and o.command_config is None):
        raise ArgumentError("At least one of --bootstrap-server, --command-property, --producer-props, "
                            "--producer.config or --command-config must be specified.")
    if o.transaction_duration_ms is not None and o.transaction_duration_ms <= 0:
        raise ArgumentError("--transaction-duration-ms should be greater than zero.")
    if o.reporting_interval <= 0:
        raise ArgumentError("--reporting-interval should be greater than zero.")
    if o.key_distribution != "none" and o.record_key_range is None:
        raise ArgumentError("--record-key-range is required when --key-distribution is 'range' or 'random'.")
    if o.record_key_range is not None and o.record_key_range <= 0:
        raise ArgumentError("--record-key-range should be greater than zero.")


class PerfProducer(Protocol):
    """What ProducerPerformance needs from a producer.

    Records are acknowledged in the order they were sent: `acked()` is how many of the
    records handed to send() have been stored so far. send() raises for a record refused at
    once (`record_error()` says whether that failure concerns only this record).
    """

    def send(self, value: bytes) -> None: ...

    # Optional: send_many(values) sends several records as send() would, one after the other.
    # It is only used once send() has accepted a record of the largest payload size.

    def poll(self) -> None:
        """Deliver what is due without blocking (the Java client's sender thread)."""

    def acked(self) -> int: ...

    def record_error(self, exc: Exception) -> bool:
        """True: only this record failed (Kafka's callback gets the exception); False: fatal."""

    # Optional: take_errors() returns the records' failures reported since the last call by a
    # producer that learns of them after send() (a remote cluster's delivery reports); each
    # counts as one failed record and is never acknowledged.

    def flush(self) -> None: ...

    def close(self) -> None: ...


class ThroughputThrottler:
    """org.apache.kafka.server.util.ThroughputThrottler (3.7)."""

    NS_PER_SEC = 1_000_000_000
    MIN_SLEEP_NS = 2_000_000

    def __init__(self, target: int, start_ms: int, sleep=time.sleep, clock_ns=time.perf_counter_ns):
        self.target = target
        self.start_ms = start_ms
        self.sleep_time_ns = int(self.NS_PER_SEC / target) if target > 0 else 2**63 - 1
        self.sleep_deficit_ns = 0
        self._sleep = sleep
        self._clock_ns = clock_ns

    def should_throttle(self, amount_so_far: int, send_start_ms: int) -> bool:
        if self.target < 0:
            return False
        elapsed_sec = (send_start_ms - self.start_ms) / 1000.0
        return elapsed_sec > 0 and (amount_so_far / elapsed_sec) > self.target

    def throttle(self) -> None:
        if self.target == 0:
            while True:  # Java waits for a wakeup() that never comes: the tool hangs
                self._sleep(3600)
        self.sleep_deficit_ns += self.sleep_time_ns
        if self.sleep_deficit_ns >= self.MIN_SLEEP_NS:
            start = self._clock_ns()
            remaining = self.sleep_deficit_ns
            while remaining > 0:
                self._sleep(remaining / 1e9)
                remaining = self.sleep_deficit_ns - (self._clock_ns() - start)
            self.sleep_deficit_ns = 0


class ProducerStats:
    """ProducerPerformance.Stats: totals, the 5 s window, sampled latencies (int ms)."""

    def __init__(self, num_records: int, reporting_interval: int, out: Callable[[str], None],
                 now_ms: Callable[[], int]):
        self._now_ms = now_ms
        self.start = now_ms()
        self.window_start = self.start
        self.iteration = 0
        # Java: numRecords / Math.min(numRecords, 500000), then an int[] of numRecords/sampling + 1
        self.sampling = java_long_div(num_records, min(num_records, MAX_LATENCY_SAMPLES))
        size = java_int_cast(java_long_div(num_records, self.sampling)) + 1
        if size < 0:
            raise JavaError("java.lang.NegativeArraySizeException", str(size))
        self.capacity = size
        self.latencies: list[int] = []
        self.count = 0
        self.bytes = 0
        self.max_latency = 0
        self.total_latency = 0
        self.window_count = 0
        self.window_max_latency = 0
        self.window_total_latency = 0
        self.window_bytes = 0
        self.reporting_interval = reporting_interval
        self.out = out
        # --warmup-records: the records from number `warmup` on are also counted by `steady`,
        # a second Stats started when the first of them is sent (its window never printed)
        self.warmup = 0
        self.steady: ProducerStats | None = None

    def start_steady_state(self, num_records: int) -> None:
        self.steady = ProducerStats(num_records, 2**62, self.out, self._now_ms)

    def record_many(self, now: int, latencies: list[int], sizes: list[int]) -> None:
        """Stats.record(latency, bytes, now) for records acknowledged together at `now`.
        Java checks the window after each record; the first of them may close it."""
        if not latencies:
            return
        if now - self.window_start >= self.reporting_interval:
            self._add(latencies[:1], sizes[:1])
            self.print_window()
            self.new_window()
            latencies, sizes = latencies[1:], sizes[1:]
            if not latencies:
                return
        self._add(latencies, sizes)

    def _add(self, latencies: list[int], sizes: list[int]) -> None:
        k = len(latencies)
        nbytes = sum(sizes)
        total = sum(latencies)
        biggest = max(latencies)
        self.count += k
        self.bytes += nbytes
        self.total_latency += total
        if biggest > self.max_latency:
            self.max_latency = biggest
        self.window_count += k
        self.window_bytes += nbytes
        self.window_total_latency += total
        if biggest > self.window_max_latency:
            self.window_max_latency = biggest
        sampling = self.sampling
        first = (-self.iteration) % sampling
        if first < k:
            room = self.capacity - len(self.latencies)
            self.latencies.extend(latencies[first::sampling][:room])
        self.iteration += k

    def print_window(self) -> None:
        elapsed = self._now_ms() - self.window_start
        recs_per_sec = java_div(1000.0 * self.window_count, float(elapsed))
        mb_per_sec = java_div(java_div(1000.0 * self.window_bytes, float(elapsed)), 1024.0 * 1024.0)
        self.out(f"{self.window_count} records sent, {java_fixed(recs_per_sec, 1)} records/sec "
                 f"({java_fixed(mb_per_sec, 2)} MB/sec), "
                 f"{java_fixed(java_div(self.window_total_latency, float(self.window_count)), 1)} ms avg latency, "
                 f"{java_fixed(float(self.window_max_latency), 1)} ms max latency.")

    def new_window(self) -> None:
        self.window_start = self._now_ms()
        self.window_count = 0
        self.window_max_latency = 0
        self.window_total_latency = 0
        self.window_bytes = 0

    def total_line(self, what: str = "") -> str:
        elapsed = self._now_ms() - self.start
        recs_per_sec = java_div(1000.0 * self.count, float(elapsed))
        mb_per_sec = java_div(java_div(1000.0 * self.bytes, float(elapsed)), 1024.0 * 1024.0)
        p50, p95, p99, p999 = self.percentiles(0.5, 0.95, 0.99, 0.999)
        return (f"{self.count}{what} records sent, {java_fixed(recs_per_sec, 6)} records/sec "
                f"({java_fixed(mb_per_sec, 2)} MB/sec), "
                f"{java_fixed(java_div(self.total_latency, float(self.count)), 2)} ms avg latency, "
                f"{java_fixed(float(self.max_latency), 2)} ms max latency, "
                f"{p50} ms 50th, {p95} ms 95th, {p99} ms 99th, {p999} ms 99.9th.")

    def percentiles(self, *ps: float) -> list[int]:
        size = len(self.latencies)
        ordered = sorted(self.latencies)
        values = []
        for p in ps:
            index = int(p * size)
            if index < size:
                values.append(ordered[index])
            elif index < self.capacity:
                values.append(0)  # the rest of Java's int[] is zeros
            else:
                raise JavaError("java.lang.ArrayIndexOutOfBoundsException",
                                f"Index {index} out of bounds for length {self.capacity}")
        return values


def java_absolute_path(path: str) -> str:
    """Paths.get(path).toAbsolutePath(): redundant slashes and a trailing slash dropped, the
    working directory prefixed to a relative path; `..` kept."""
    clean = re.sub("/+", "/", path)
    if len(clean) > 1 and clean.endswith("/"):
        clean = clean[:-1]
    if clean.startswith("/"):
        return clean
    cwd = os.getcwd()
    return cwd if not clean else (cwd.rstrip("/") + "/" + clean)


def read_payload_file(path: str | None, delimiter: str, out: Callable[[str], None]) -> list[bytes]:
    """ProducerPerformance.readPayloadFile."""
    if path is None:
        return []
    absolute = java_absolute_path(path)
    out(f"Reading payloads from: {absolute}")
    try:
        size = os.path.getsize(absolute) if os.path.exists(absolute) else 0
    except OSError:
        size = 0
    if not os.path.exists(absolute) or size == 0:
        raise JavaError(ILLEGAL_ARGUMENT, "File does not exist or empty file provided.")
    try:
        with open(absolute, "rb") as f:
            data = f.read()
    except IsADirectoryError:
        raise JavaError("java.io.IOException", "Is a directory") from None
    except PermissionError:
        raise JavaError("java.nio.file.AccessDeniedException", absolute) from None
    except OSError as exc:
        raise JavaError("java.io.IOException", exc.strerror or str(exc)) from None
    from pk.engine.javacompat import java_split

    try:
        payloads = java_split(data.decode("utf-8", "replace"), delimiter)
    except re.error as exc:
        raise JavaError("java.util.regex.PatternSyntaxException", f"{exc.msg} near index {exc.pos}") from None
    out(f"Number of records read: {len(payloads)}")
    return [p.encode("utf-8") for p in payloads]


def producer_properties(o: ProducerPerfOptions, transactions: bool) -> dict[str, str]:
    """ProducerPerformance.readProps: the config file (--command-config, else --producer.config),
    then --command-property / --producer-props (each must split on `=` into exactly two parts,
    Java's String.split), --bootstrap-server, serializers, client.id."""
    props = config_file(o.command_config if o.command_config is not None else o.producer_config)
    for prop in (o.command_property if o.command_property is not None else o.producer_props) or ():
        pieces = prop.split("=")
        while pieces and pieces[-1] == "":
            pieces.pop()  # Java's split drops trailing empty strings
        if len(pieces) != 2:
            raise JavaError(ILLEGAL_ARGUMENT, f"Invalid property: {prop}")
        props[pieces[0]] = pieces[1]
    if o.bootstrap_server is not None:
        props["bootstrap.servers"] = o.bootstrap_server
    props["key.serializer"] = BYTE_ARRAY_SERIALIZER
    props["value.serializer"] = BYTE_ARRAY_SERIALIZER
    if transactions and o.transactional_id is not None:
        props["transactional.id"] = o.transactional_id
    props.setdefault("client.id", PRODUCER_CLIENT_ID)
    return props


class PayloadSource:
    """The record payloads: --payload-file's payloads picked at random, or --record-size
    random upper-case letters. Kafka refills one buffer from SplittableRandom(0) for every
    record; pk takes successive windows of a large block of seeded random letters (the same
    alphabet and entropy, so compression behaves alike, at a fraction of the cost)."""

    POOL_MIN = 1 << 20
    POOL_MAX = 32 << 20

    def __init__(self, record_size: int | None, payloads: list[bytes], seed: int = 0, monotonic: bool = False,
                 num_records: int = 0):
        self.payloads = payloads
        self.record_size = record_size
        self._rng = random.Random(seed)
        self.max_len = max(map(len, payloads)) if payloads else (record_size or 0)
        if monotonic:  # --payload-monotonic: the record's number as decimal text
            self._counter = 0
            self.max_len = len(str(max(num_records - 1, 0)))
            self.next = self._next_monotonic
        elif payloads:
            self._choices: list[bytes] = []
            self.next = self._next_from_file
        elif record_size is not None:
            span = max(self.POOL_MIN, min(16 * record_size, self.POOL_MAX))
            letters = bytes(65 + i % 26 for i in range(256))
            self._pool = self._rng.randbytes(span + record_size).translate(letters)
            self._span = span
            self._step = record_size + 7
            self._offset = 0
            self.next = self._next_random
        else:
            self.next = self._no_payload

    def _next_random(self) -> bytes:
        off = self._offset
        payload = self._pool[off:off + self.record_size]
        off += self._step
        self._offset = off - self._span if off >= self._span else off
        return payload

    def _next_monotonic(self) -> bytes:
        n = self._counter
        self._counter = n + 1
        return str(n).encode()

    def _next_from_file(self) -> bytes:
        if not self._choices:
            self._choices = self._rng.choices(self.payloads, k=4096)
        return self._choices.pop()

    @staticmethod
    def _no_payload() -> bytes:
        raise JavaError(ILLEGAL_ARGUMENT, "no payload File Path or record Size provided")


def run_producer_perf(o: ProducerPerfOptions, open_producer: Callable[[str, dict[str, str]], PerfProducer],
                      out: Callable[[str], None], err: Callable[[str], None],
                      now_ms: Callable[[], int] = _now_ms) -> int:
    """ProducerPerformance.start after argument parsing. Prints through `out` (stdout lines)
    and `err` (one line per failed record, where Java prints a stack trace). Returns the exit
    status pk uses: 0, or 1 when some record failed (Kafka exits 0 then)."""
    check_producer_options(o)
    if o.producer_props is not None:
        out("Option --producer-props has been deprecated and will be removed in a future version. "
            "Use --command-property instead.")
    if o.producer_config is not None:
        out("Option --producer.config has been deprecated and will be removed in a future version. "
            "Use --command-config instead.")
    transactions = o.transactional_id is not None or o.transaction_duration_ms is not None
    delimiter = "\n" if o.payload_delimiter == "\\n" else o.payload_delimiter
    payloads = read_payload_file(o.payload_file, delimiter, out)
    props = producer_properties(o, transactions)
    producer = open_producer(o.topic, props)
    closed = False
    try:
        if transactions or "transactional.id" in props:
            raise ToolError("Transactions are not supported: pk's ProducerPerformance runs no transactions "
                            "(give no --transactional-id, --transaction-duration-ms or transactional.id)")
        if o.key_distribution != "none":
            raise ToolError(f"--key-distribution {o.key_distribution} is not supported by pk: its records have no key")
        source = PayloadSource(o.record_size, payloads, o.random_seed, o.payload_monotonic, o.num_records)
        if o.warmup_records > 0:
            out(f"Warmup first {o.warmup_records} records. Steady state results will print after the complete "
                "test summary.")
        stats = ProducerStats(o.num_records, o.reporting_interval, out, now_ms)
        if o.warmup_records > 0:
            stats.warmup = o.warmup_records
        start_ms = now_ms()
        throttler = ThroughputThrottler(o.throughput, start_ms)
        failed = _produce(producer, source, o.num_records, stats, throttler, err, now_ms, o.topic)
        if not o.print_metrics:
            producer.close()
            closed = True
            out(stats.total_line())
            if stats.steady is not None:
                out(stats.steady.total_line(" steady state"))
        else:
            producer.flush()  # _produce has flushed already: nothing is left to acknowledge
            out(stats.total_line())
            if stats.steady is not None:
                out(stats.steady.total_line(" steady state"))
            metrics = producer_metrics(props.get("client.id", PRODUCER_CLIENT_ID), o.topic, stats.count, failed)
            for line in format_metrics(metrics):
                out(line)
            err("pk: the producer keeps no other client metrics than these")
            producer.close()
            closed = True
        return 1 if failed else 0
    finally:
        if not closed:
            try:
                producer.close()
            except Exception:
                pass


class _Pending:
    """Send times and sizes of the records not yet acknowledged, oldest first."""

    __slots__ = ("times", "sizes", "head", "acked")

    def __init__(self):
        self.times: list[int] = []
        self.sizes: list[int] = []
        self.head = 0
        self.acked = 0


def _take_acks(pending: _Pending, acked: int, stats: ProducerStats, now: int) -> None:
    k = acked - pending.acked
    head = pending.head
    times = pending.times[head:head + k]
    sizes = pending.sizes[head:head + k]
    if stats.steady is not None and acked > stats.warmup:
        skip = max(0, stats.warmup - pending.acked)
        stats.steady.record_many(now, [now - t for t in times[skip:]], sizes[skip:])
    pending.head = head + k
    pending.acked = acked
    if pending.head >= 65536:
        del pending.times[:pending.head]
        del pending.sizes[:pending.head]
        pending.head = 0
    stats.record_many(now, list(map(now.__sub__, times)), sizes)


def _produce(producer: PerfProducer, source: PayloadSource, n: int, stats: ProducerStats,
             throttler: ThroughputThrottler, err: Callable[[str], None], now_ms, topic: str) -> int:
    """The send loop; returns how many records failed.

    The latency of a record runs from the millisecond it is sent (Java: just before send())
    to the moment its acknowledgement is seen (on the engine: its batch appended to the log).
    Once a record of the largest payload size has been accepted, so that no later record can
    be refused for its size, records are handed over in bulk (`send_many`, when the producer
    has it) at every tick of the millisecond clock: the records of one millisecond go in
    together, each still timed from the millisecond it was sent in.
    """
    from pk.engine.errors import KafkaError

    pending = _Pending()
    times_append = pending.times.append
    sizes_append = pending.sizes.append
    send = producer.send
    send_many = getattr(producer, "send_many", None)
    poll = producer.poll
    acked = producer.acked
    next_payload = source.next
    max_len = source.max_len
    throttled = throttler.target >= 0
    should_throttle = throttler.should_throttle
    failed = 0
    tick = -1
    time_ns = time.time_ns
    clock_is_default = now_ms is _now_ms
    bulk = False
    chunk: list[bytes] = []
    chunk_append = chunk.append

    take_errors = getattr(producer, "take_errors", None)
    failures = [0]

    def report_errors() -> None:
        for exc in take_errors():
            failures[0] += 1
            err(f"{java_class_of(exc)}: {exc}")

    def hand_over() -> None:
        """Give the producer the records held for bulk sending, let it deliver what is due,
        and take the acknowledgements."""
        if chunk:
            send_many(chunk)
            chunk.clear()
        poll()
        if take_errors is not None:
            report_errors()
        a = acked()
        if a != pending.acked:
            _take_acks(pending, a, stats, now_ms())

    warmup = stats.warmup
    for i in range(n):
        payload = next_payload()
        t = time_ns() // 1_000_000 if clock_is_default else now_ms()
        if warmup and i == warmup:
            stats.start_steady_state(n - warmup)
        if t != tick:
            tick = t
            hand_over()
        if bulk:
            chunk_append(payload)
            times_append(t)
            sizes_append(len(payload))
        else:
            try:
                send(payload)
            except KafkaError as exc:
                if not producer.record_error(exc):
                    raise
                failed += 1
                err(f"{java_class_of(exc)}: {exc}")  # Java: the callback prints the stack trace
            else:
                times_append(t)
                sizes_append(len(payload))
                if send_many is not None and len(payload) >= max_len:
                    bulk = True
            a = acked()
            if a != pending.acked:
                _take_acks(pending, a, stats, now_ms())
        if throttled:
            if i == 0:
                # Kafka's first send() blocks on the metadata fetch, so the throttler's clock has
                # moved on by the second record; the engine answers at once. Without this wait,
                # every record sent within the first millisecond (elapsed 0: never throttled)
                # would go out unthrottled.
                while now_ms() <= throttler.start_ms:
                    time.sleep(0.0002)
            if should_throttle(i, t):
                hand_over()  # what is ready goes out before the sleep, as the sender thread would send it
                throttler.throttle()
    if chunk:
        send_many(chunk)
        chunk.clear()
    producer.flush()
    if take_errors is not None:
        report_errors()
    a = acked()
    if a != pending.acked:
        _take_acks(pending, a, stats, now_ms())
    return failed + failures[0]


def producer_metrics(client_id: str, topic: str, sent: int, failed: int) -> dict:
    """The client metrics pk can state exactly, under Kafka's names (values are doubles)."""
    client = (("client-id", client_id),)
    per_topic = (("client-id", client_id), ("topic", topic))
    return {
        ("producer-metrics", "record-send-total", client): float(sent),
        ("producer-metrics", "record-error-total", client): float(failed),
        ("producer-topic-metrics", "record-send-total", per_topic): float(sent),
        ("producer-topic-metrics", "record-error-total", per_topic): float(failed),
    }
