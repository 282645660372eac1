"""The two performance tools of Kafka 3.7, on any backend:

- ProducerPerformance (kafka-producer-perf-test.sh, org.apache.kafka.tools.ProducerPerformance):
  send N records as fast as allowed, print a progress line every 5 s and a summary line with
  latency percentiles;
- ConsumerPerformance (kafka-consumer-perf-test.sh, org.apache.kafka.tools.ConsumerPerformance):
  subscribe, read N records, print the throughput line.

Both are written against small interfaces (`PerfProducer`, `PerfConsumer`, below) so that a
remote backend can plug in beside the bundled engine's adapters (`EnginePerfProducer`,
`EnginePerfConsumer`). The numbers are computed with the same double arithmetic, in the same
order, as the Java tools and printed with Java's `%f` rounding (`java_fixed`); dates follow
java.text.SimpleDateFormat (`JavaDateFormat`).

Errors: `ArgumentError` is what argparse4j would report (`producer-performance: error: ...`),
`UsageError` what jopt-simple tools report with printUsageAndExit, `JavaError` an exception
Kafka's tool lets escape (`java_class` + `message`; the CLI decides how Java would print it),
`ToolError` a pk refusal with its own one-line text.
"""

from __future__ import annotations

import os
import random
import re
import time
from dataclasses import dataclass
from functools import partial
from operator import attrgetter
from decimal import ROUND_HALF_UP, Decimal
from typing import Callable, Protocol, Sequence

# --------------------------------------------------------------------------- errors


class ArgumentError(Exception):
    """An argparse4j ArgumentParserException (ProducerPerformance): str() is its message."""


class UsageError(Exception):
    """A jopt tool's printUsageAndExit message (ConsumerPerformance)."""


class JavaError(Exception):
    """An exception the Java tool does not catch (or prints with getMessage())."""

    def __init__(self, java_class: str, message: str):
        super().__init__(message)
        self.java_class = java_class
        self.message = message

    def uncaught_line(self) -> str:
        """The JVM's first line for an exception escaping main()."""
        return f'Exception in thread "main" {self.java_class}: {self.message}'


class ToolError(Exception):
    """A failure pk reports in its own words (one line)."""


KAFKA_EXCEPTION = "org.apache.kafka.common.KafkaException"
CONFIG_EXCEPTION = "org.apache.kafka.common.config.ConfigException"
ILLEGAL_ARGUMENT = "java.lang.IllegalArgumentException"

# engine error class name -> the Java exception Kafka's client raises for it
_JAVA_CLASSES = {
    "RecordTooLargeError": "org.apache.kafka.common.errors.RecordTooLargeException",
    "ProducerTimeoutError": "org.apache.kafka.common.errors.TimeoutException",
    "InvalidTopicError": "org.apache.kafka.common.errors.InvalidTopicException",
    "UnknownTopicOrPartitionError": "org.apache.kafka.common.errors.UnknownTopicOrPartitionException",
    "ProducerClosedError": "java.lang.IllegalStateException",
    "OffsetOutOfRangeError": "org.apache.kafka.clients.consumer.OffsetOutOfRangeException",
    "NoOffsetForPartitionError": "org.apache.kafka.clients.consumer.NoOffsetForPartitionException",
    "CorruptRecordError": "org.apache.kafka.common.errors.CorruptRecordException",
    "InvalidRecordError": "org.apache.kafka.common.InvalidRecordException",
}


def java_class_of(exc: BaseException) -> str:
    return getattr(exc, "java_class", None) or _JAVA_CLASSES.get(type(exc).__name__, KAFKA_EXCEPTION)


# --------------------------------------------------------------------------- Java formatting
def java_fixed(value: float, decimals: int) -> str:
    """String.format("%.<decimals>f", value): Java rounds the shortest decimal form of the
    double half-up (Python's % rounds the binary value); NaN and infinities as Java spells them."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    quantum = Decimal(1).scaleb(-decimals)
    return f"{Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_HALF_UP):f}"


def java_div(a: float, b: float) -> float:
    """a / b with Java's double semantics (x/0.0 is ±Infinity or NaN, not an exception)."""
    if b == 0:
        if a == 0 or a != a:
            return float("nan")
        negative = (a < 0) != (str(float(b)).startswith("-"))
        return float("-inf") if negative else float("inf")
    return a / b


def java_int_cast(n: int) -> int:
    """(int) of a Java long: keep the low 32 bits, signed."""
    return ((n + 2**31) % 2**32) - 2**31


def java_long_div(a: int, b: int) -> int:
    """Java's long division (truncates toward zero; / by zero is an ArithmeticException)."""
    if b == 0:
        raise JavaError("java.lang.ArithmeticException", "/ by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_JAVA_INT_RE = re.compile(r"[+-]?\d+\Z")


def java_parse_number(text: str, bits: int) -> int | None:
    """Integer.valueOf / Long.valueOf: an optional sign and decimal digits; None if invalid."""
    if not _JAVA_INT_RE.match(text):
        return None
    value = int(text)
    if not -2**(bits - 1) <= value < 2**(bits - 1):
        return None
    return value


# --------------------------------------------------------------------------- SimpleDateFormat
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_PATTERN_LETTERS = "GyMdkHmsSEDFwWahKzZYuXL"  # SimpleDateFormat.patternChars (Java 8+)


class JavaDateFormat:
    """java.text.SimpleDateFormat(pattern).format(millis) in the local time zone, US locale.

    The constructor raises JavaError(IllegalArgumentException) for the patterns Java refuses:
    an unknown pattern letter, an unterminated quote, an X run longer than 3."""

    def __init__(self, pattern: str):
        self.pattern = pattern
        self.parts: list[tuple[str, int] | str] = []  # (letter, count) or literal text
        i, n = 0, len(pattern)
        literal: list[str] = []
        in_quote = False
        while i < n:
            c = pattern[i]
            if c == "'":
                if i + 1 < n and pattern[i + 1] == "'":
                    literal.append("'")
                    i += 2
                    continue
                in_quote = not in_quote
                i += 1
                continue
            if in_quote or not ("a" <= c <= "z" or "A" <= c <= "Z"):
                literal.append(c)
                i += 1
                continue
            if c not in _PATTERN_LETTERS:
                raise JavaError(ILLEGAL_ARGUMENT, f"Illegal pattern character '{c}'")
            j = i
            while j < n and pattern[j] == c:
                j += 1
            count = j - i
            if c == "X" and count > 3:
                raise JavaError(ILLEGAL_ARGUMENT, f"invalid ISO 8601 format: length={count}")
            if literal:
                self.parts.append("".join(literal))
                literal = []
            self.parts.append((c, count))
            i = j
        if in_quote:
            raise JavaError(ILLEGAL_ARGUMENT, "Unterminated quote")
        if literal:
            self.parts.append("".join(literal))

    def format(self, millis: int) -> str:
        t = time.localtime(millis // 1000)
        ms = millis % 1000
        out = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
            else:
                out.append(self._field(part[0], part[1], t, ms))
        return "".join(out)

    @staticmethod
    def _num(value: int, count: int) -> str:
        return str(value).zfill(count) if value >= 0 else "-" + str(-value).zfill(count)

    def _field(self, c: str, count: int, t: time.struct_time, ms: int) -> str:
        num = self._num
        if c == "G":
            return "AD" if count < 4 else "Anno Domini"
        if c in "yY":
            year = t.tm_year if c == "y" else _us_week_year(t)
            return num(year % 100, 2) if count == 2 else num(year, count)
        if c in "ML":
            if count >= 4:
                return _MONTHS[t.tm_mon - 1]
            if count == 3:
                return _MONTHS[t.tm_mon - 1][:3]
            return num(t.tm_mon, count)
        if c == "d":
            return num(t.tm_mday, count)
        if c == "D":
            return num(t.tm_yday, count)
        if c == "E":
            return _DAYS[t.tm_wday] if count >= 4 else _DAYS[t.tm_wday][:3]
        if c == "u":
            return num(t.tm_wday + 1, count)
        if c == "F":
            return num((t.tm_mday - 1) // 7 + 1, count)
        if c == "w":
            return num(_us_week_of_year(t), count)
        if c == "W":
            first_dow = (_sunday_based(t.tm_wday) - (t.tm_mday - 1)) % 7
            return num((t.tm_mday - 1 + first_dow) // 7 + 1, count)
        if c == "a":
            return "AM" if t.tm_hour < 12 else "PM"
        if c == "H":
            return num(t.tm_hour, count)
        if c == "k":
            return num(t.tm_hour or 24, count)
        if c == "K":
            return num(t.tm_hour % 12, count)
        if c == "h":
            return num(t.tm_hour % 12 or 12, count)
        if c == "m":
            return num(t.tm_min, count)
        if c == "s":
            return num(t.tm_sec, count)
        if c == "S":
            return num(ms, count)
        if c == "z":
            return t.tm_zone or "GMT"
        offset = (t.tm_gmtoff or 0) // 60
        sign = "-" if offset < 0 else "+"
        hours, minutes = divmod(abs(offset), 60)
        if c == "Z":
            return f"{sign}{hours:02d}{minutes:02d}"
        # X: ISO 8601
        if offset == 0:
            return "Z"
        if count == 1:
            return f"{sign}{hours:02d}"
        if count == 2:
            return f"{sign}{hours:02d}{minutes:02d}"
        return f"{sign}{hours:02d}:{minutes:02d}"


def _sunday_based(tm_wday: int) -> int:
    """Python's Monday=0 weekday to Sunday=0."""
    return (tm_wday + 1) % 7


def _us_week_of_year(t: time.struct_time) -> int:
    """GregorianCalendar.WEEK_OF_YEAR with the US rules (weeks start on Sunday, week 1 is the
    week holding January 1st, so the last days of December can be week 1)."""
    dow = _sunday_based(t.tm_wday)
    jan1 = (dow - (t.tm_yday - 1)) % 7
    days_in_year = 366 if (t.tm_year % 4 == 0 and (t.tm_year % 100 != 0 or t.tm_year % 400 == 0)) else 365
    next_jan1 = (jan1 + days_in_year) % 7
    if next_jan1 != 0 and days_in_year - t.tm_yday < next_jan1:
        return 1  # this week holds next year's January 1st
    return (t.tm_yday - 1 + jan1) // 7 + 1


def _us_week_year(t: time.struct_time) -> int:
    if t.tm_mon == 12 and _us_week_of_year(t) == 1:
        return t.tm_year + 1
    return t.tm_year


# --------------------------------------------------------------------------- metrics
def format_metrics(metrics: dict[tuple[str, str, tuple[tuple[str, str], ...]], object]) -> list[str]:
    """ToolsUtils.printMetrics: a blank line, a header, then `group:name:{tags} : value` sorted
    by that name; doubles as %.3f. Nothing at all for no metrics."""
    if not metrics:
        return []
    rows = {}
    for (group, name, tags), value in metrics.items():
        merged = f"{group}:{name}:{{" + ", ".join(f"{k}={v}" for k, v in tags) + "}"
        rows[merged] = value
    width = max(len(name) for name in rows)
    lines = ["", f"{'Metric Name':<{width}}   Value"]
    for name in sorted(rows):
        value = rows[name]
        text = java_fixed(value, 3) if isinstance(value, float) else str(value)
        lines.append(f"{name:<{width}} : {text}")
    return lines


# =========================================================================== ProducerPerformance
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
    from .properties import PropertiesError, load_properties

    props: dict[str, str] = {}
    config = o.command_config if o.command_config is not None else o.producer_config
    if config is not None:
        try:
            props.update(load_properties(config))
        except PropertiesError as exc:
            java_class, _, message = str(exc).partition(": ")
            raise JavaError(java_class, message) from None
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


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


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


class EnginePerfProducer:
    """PerfProducer over the bundled engine: an EngineProducer that owns its Engine.

    Without keys every record goes to the sticky partition's one open batch, so batches are
    appended in send order and EngineProducer.records_sent counts acknowledged records in
    send order. poll() appends complete batches and those whose linger.ms is over."""

    def __init__(self, data_dir: str | None, topic: str, settings):
        from pk.engine.engine import Engine
        from pk.engine.producer import EngineProducer

        engine = Engine(data_dir)
        try:
            self.producer = EngineProducer(engine, topic, own_engine=True, **settings.engine_kwargs())
            self.producer.num_partitions  # metadata now: a missing topic fails once, not per record
        except BaseException:
            engine.close()
            raise
        p = self.producer
        self.send = partial(p.send, None)  # send(value): no key, so the sticky partitioner
        self.send_many = p.send_values  # send_many(values): the same batches, list-at-a-time
        self.poll = p.poll
        self.flush = p.flush

    def acked(self) -> int:
        return self.producer.records_sent

    def record_error(self, exc: Exception) -> bool:
        from pk.engine.errors import RecordTooLargeError

        # Refused before batching: too large for max.request.size/buffer.memory, or (without
        # compression) for the topic's max.message.bytes. A compressed batch refused when
        # appended is a failure of several records: treated as fatal.
        return isinstance(exc, RecordTooLargeError) and (
            not self.producer.codec or str(exc).startswith("The message is"))

    def close(self) -> None:
        self.producer.close()


def engine_producer_opener(data_dir: str | None) -> Callable[[str, dict[str, str]], PerfProducer]:
    def open_producer(topic: str, props: dict[str, str]) -> PerfProducer:
        from .producer import CommandError, producer_settings

        try:
            settings = producer_settings(props)
        except CommandError as exc:  # ProducerConfig's ConfigException
            raise JavaError(CONFIG_EXCEPTION, str(exc)) from None
        return EnginePerfProducer(data_dir, topic, settings)

    return open_producer


# =========================================================================== ConsumerPerformance
CONSUMER_CLIENT_ID = "perf-consumer-client"
DEFAULT_DATE_FORMAT = "yyyy-MM-dd HH:mm:ss:SSS"
HEADER_EXTRA = ", rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
BYTE_ARRAY_DESERIALIZER = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
_MB = 1024 * 1024


@dataclass
class ConsumerPerfOptions:
    """ConsumerPerformance's options; None means not given."""

    topic: str | None = None
    messages: str | int | None = None  # text until read (jopt converts it then), as num_records
    group: str | None = None
    fetch_size: str | int = 1024 * 1024
    socket_buffer_size: str | int = 2 * 1024 * 1024
    from_latest: bool = False
    consumer_config: str | None = None
    # Kafka 4.x
    num_records: str | int | None = None
    include: str | None = None
    command_config: str | None = None
    command_property: list[str] | None = None
    print_metrics: bool = False
    show_detailed_stats: bool = False
    timeout: str | None = None  # jopt converts this optional-argument Long only when it is read
    reporting_interval: int = 5000
    date_format: str = DEFAULT_DATE_FORMAT
    hide_header: bool = False
    threads: int | None = None
    num_fetch_threads: int | None = None


class RebalanceListener(Protocol):
    def on_partitions_revoked(self, partitions: list[tuple[str, int]]) -> None: ...

    def on_partitions_assigned(self, partitions: list[tuple[str, int]]) -> None: ...


class PerfConsumer(Protocol):
    """What ConsumerPerformance needs from a consumer: records have .key and .value (bytes or
    None); the listener is called from inside poll() as partitions move."""

    def subscribe(self, topic: str, listener: RebalanceListener) -> None: ...

    def poll(self, timeout_ms: int) -> Sequence: ...

    def metrics(self) -> dict: ...

    def close(self) -> None: ...


def check_consumer_options(o: ConsumerPerfOptions, out: Callable[[str], None]) -> None:
    """ConsumerPerfOptions' constructor after parsing: the required arguments
    (--bootstrap-server is not needed by the bundled engine), then the deprecation warnings."""
    if (o.topic is None) == (o.include is None):
        raise UsageError("Exactly one of the following arguments is required: [topic], [include]")
    if (o.messages is None) == (o.num_records is None):
        raise UsageError("Exactly one of the following arguments is required: [messages], [num-records]")
    if o.messages is not None:
        out("Warning: --messages is deprecated. Use --num-records instead.")
    if o.consumer_config is not None:
        out("Warning: --consumer.config is deprecated. Use --command-config instead.")


_REGEX_MESSAGES = {"unterminated character set": "Unclosed character class",
                   "missing ), unterminated subpattern": "Unclosed group",
                   "unbalanced parenthesis": "Unmatched closing ')'",
                   "nothing to repeat": "Dangling meta character"}


def java_regex(pattern: str) -> str:
    """The --include pattern, checked as Pattern.compile would (the message of Java's
    PatternSyntaxException for the common mistakes)."""
    try:
        re.compile(pattern)
    except re.error as exc:
        message = _REGEX_MESSAGES.get(exc.msg, exc.msg)
        index = len(pattern) - 1 if message in ("Unclosed character class", "Unclosed group") else exc.pos
        raise JavaError("java.util.regex.PatternSyntaxException", f"{message} near index {index}") from None
    return pattern


def jopt_number(name: str, value, bits: int) -> int:
    """An Integer/Long option's value, converted when the tool reads it."""
    if isinstance(value, int):
        return value
    number = java_parse_number(value, bits)
    if number is None:
        raise JavaError("joptsimple.OptionArgumentConversionException", f"Cannot parse argument '{value}' of option {name}")
    return number


def header_line(show_detailed_stats: bool) -> str:
    if not show_detailed_stats:
        return "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec" + HEADER_EXTRA
    return "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec" + HEADER_EXTRA


def default_group() -> str:
    return f"perf-consumer-{random.randrange(100_000)}"


def consumer_properties(o: ConsumerPerfOptions) -> dict[str, str]:
    """ConsumerPerfOptions.props(): the config file, then the options (which always win)."""
    from .properties import PropertiesError, load_properties

    props: dict[str, str] = {}
    config = o.command_config if o.command_config is not None else o.consumer_config
    if config is not None:
        try:
            props.update(load_properties(config))
        except PropertiesError as exc:
            java_class, _, message = str(exc).partition(": ")
            raise JavaError(java_class, message) from None
    for prop in o.command_property or ():
        key, eq, value = prop.partition("=")
        if eq:  # Kafka 4.4 passes a word without "=" over silently
            props[key] = value
    props["group.id"] = o.group if o.group is not None else default_group()
    props["receive.buffer.bytes"] = str(jopt_number("socket-buffer-size", o.socket_buffer_size, 32))
    props["max.partition.fetch.bytes"] = str(jopt_number("fetch-size", o.fetch_size, 32))
    props["auto.offset.reset"] = "latest" if o.from_latest else "earliest"
    props["key.deserializer"] = BYTE_ARRAY_DESERIALIZER
    props["value.deserializer"] = BYTE_ARRAY_DESERIALIZER
    props["check.crcs"] = "false"
    props.setdefault("client.id", CONSUMER_CLIENT_ID)
    return props


def record_fetch_timeout(o: ConsumerPerfOptions) -> int:
    if o.timeout is None:
        return 10_000
    value = java_parse_number(o.timeout, 64)
    if value is None:
        raise JavaError("joptsimple.OptionArgumentConversionException",
                        f"Cannot parse argument '{o.timeout}' of option timeout")
    return value


class _Counter:
    """An AtomicLong."""

    __slots__ = ("value",)

    def __init__(self, value: int = 0):
        self.value = value


class _PerfRebalanceListener:
    """ConsumerPerformance.ConsumerPerfRebListener."""

    def __init__(self, join_time: _Counter, join_start_ms: int, single_round: _Counter, now_ms):
        self.join_time = join_time
        self.join_start_ms = join_start_ms
        self.single_round = single_round
        self.rebalances = 0
        self._now_ms = now_ms

    def on_partitions_revoked(self, partitions) -> None:
        self.join_start_ms = self._now_ms()

    def on_partitions_assigned(self, partitions) -> None:
        elapsed = self._now_ms() - self.join_start_ms
        self.join_time.value += elapsed
        self.single_round.value += elapsed
        self.rebalances += 1


@dataclass
class ConsumerPerfResult:
    messages: int
    bytes: int
    join_time_ms: int
    start_ms: int
    end_ms: int
    rebalances: int


def run_consumer_perf(o: ConsumerPerfOptions, open_consumer: Callable[[dict[str, str]], PerfConsumer],
                      out: Callable[[str], None], now_ms: Callable[[], int] = _now_ms) -> ConsumerPerfResult:
    """ConsumerPerformance.main after the option checks."""
    if not o.hide_header:
        out(header_line(o.show_detailed_stats))
    props = consumer_properties(o)
    consumer = open_consumer(props)
    try:
        start_ms = now_ms()
        join_time = _Counter()
        single_round = _Counter()
        listener = _PerfRebalanceListener(join_time, start_ms, single_round, now_ms)
        messages, nbytes = _consume(consumer, o, listener, out, now_ms)
        end_ms = now_ms()
        metrics = consumer.metrics() if o.print_metrics else None
    except BaseException:
        try:
            consumer.close()
        except Exception:
            pass
        raise
    consumer.close()
    if not o.show_detailed_stats:
        elapsed_sec = (end_ms - start_ms) / 1000.0
        fetch_ms = (end_ms - start_ms) - join_time.value
        total_mb = (nbytes * 1.0) / _MB
        date_format = JavaDateFormat(o.date_format)
        out(", ".join((
            date_format.format(start_ms),
            date_format.format(end_ms),
            java_fixed(total_mb, 4),
            java_fixed(java_div(total_mb, elapsed_sec), 4),
            str(messages),
            java_fixed(java_div(float(messages), elapsed_sec), 4),
            str(join_time.value),
            str(fetch_ms),
            java_fixed(java_div(total_mb, fetch_ms / 1000.0), 4),
            java_fixed(java_div(float(messages), fetch_ms / 1000.0), 4),
        )))
    if metrics is not None:
        client_id = props["client.id"]
        full = {
            ("consumer-fetch-manager-metrics", "records-consumed-total", (("client-id", client_id),)):
                float(messages),
            ("consumer-coordinator-metrics", "rebalance-total", (("client-id", client_id),)):
                float(listener.rebalances),
            ("consumer-coordinator-metrics", "rebalance-latency-total", (("client-id", client_id),)):
                float(join_time.value),
        }
        full.update(metrics or {})
        for line in format_metrics(full):
            out(line)
    return ConsumerPerfResult(messages, nbytes, join_time.value, start_ms, end_ms, listener.rebalances)


_KEY = attrgetter("key")
_VALUE = attrgetter("value")


def _record_bytes(record) -> int:
    key, value = record.key, record.value
    return (len(key) if key is not None else 0) + (len(value) if value is not None else 0)


def _records_bytes(records) -> int:
    """Key and value bytes of the records (a null counts 0)."""
    return sum(map(len, filter(None, map(_KEY, records)))) + sum(map(len, filter(None, map(_VALUE, records))))


def _consume(consumer: PerfConsumer, o: ConsumerPerfOptions, listener: _PerfRebalanceListener,
             out: Callable[[str], None], now_ms) -> tuple[int, int]:
    """ConsumerPerformance.consume: returns (messages, bytes) read."""
    num_messages = (jopt_number("messages", o.messages, 64) if o.messages is not None
                    else jopt_number("num-records", o.num_records, 64))
    timeout = record_fetch_timeout(o)
    interval = o.reporting_interval
    if interval <= 0:
        raise JavaError(ILLEGAL_ARGUMENT, "Reporting interval must be greater than 0.")
    detailed = o.show_detailed_stats
    date_format = JavaDateFormat(o.date_format)
    if o.include is not None:
        pattern = java_regex(o.include)
        consumer.subscribe_pattern(pattern, listener)
    else:
        consumer.subscribe(o.topic, listener)
    single_round = listener.single_round  # Java replaces its local AtomicLong after a report
    messages = nbytes = last_messages = last_bytes = 0
    current = now_ms()
    last_report = last_consumed = current
    while messages < num_messages and current - last_consumed <= timeout:
        records = consumer.poll(100)
        current = now_ms()
        if not records:
            continue
        last_consumed = current
        # Java checks the reporting interval after each record, but `current` is fixed for the
        # whole poll: only the first record can trigger a report.
        messages += 1
        nbytes += _record_bytes(records[0])
        if current - last_report >= interval:
            if detailed:
                out(_progress_line(nbytes, last_bytes, messages, last_messages, last_report, current,
                                   date_format, single_round.value))
            single_round = _Counter()
            last_report = current
            last_messages = messages
            last_bytes = nbytes
        if len(records) > 1:
            rest = records[1:]
            messages += len(rest)
            nbytes += _records_bytes(rest)
    if messages < num_messages:
        out(f"WARNING: Exiting before consuming the expected number of records: timeout ({timeout} ms) exceeded. "
            "You can use the --timeout option to increase the timeout.")
    return messages, nbytes


def _progress_line(nbytes: int, last_bytes: int, messages: int, last_messages: int, start_ms: int,
                   end_ms: int, date_format: JavaDateFormat, join_single_round: int) -> str:
    """printConsumerProgress: printBasicProgress + printExtendedProgress, same arithmetic."""
    elapsed_ms = float(end_ms - start_ms)
    total_mb = (nbytes * 1.0) / _MB
    interval_mb = ((nbytes - last_bytes) * 1.0) / _MB
    interval_mb_per_sec = java_div(1000.0 * interval_mb, elapsed_ms)
    interval_msgs_per_sec = java_div(float(messages - last_messages), elapsed_ms) * 1000.0
    fetch_ms = end_ms - start_ms - join_single_round
    fetch_mb_per_sec = 0.0 if fetch_ms <= 0 else 1000.0 * interval_mb / fetch_ms
    fetch_msgs_per_sec = 0.0 if fetch_ms <= 0 else 1000.0 * (messages - last_messages) / fetch_ms
    return (f"{date_format.format(end_ms)}, 0, {java_fixed(total_mb, 4)}, {java_fixed(interval_mb_per_sec, 4)}, "
            f"{messages}, {java_fixed(interval_msgs_per_sec, 4)}, {join_single_round}, {fetch_ms}, "
            f"{java_fixed(fetch_mb_per_sec, 4)}, {java_fixed(fetch_msgs_per_sec, 4)}")


# --------------------------------------------------------------------------- engine consumer
# ConsumerConfig definitions the engine's consumer reads: (name, type, validator minimum)
_CONSUMER_CONFIGS = (
    ("max.poll.records", "INT", 1),
    ("enable.auto.commit", "BOOLEAN", None),
    ("auto.commit.interval.ms", "INT", 0),
    ("max.partition.fetch.bytes", "INT", 0),
    ("receive.buffer.bytes", "INT", -1),
    ("check.crcs", "BOOLEAN", None),
    ("session.timeout.ms", "INT", None),
    ("heartbeat.interval.ms", "INT", None),
    ("max.poll.interval.ms", "INT", 1),
    ("exclude.internal.topics", "BOOLEAN", None),
    ("allow.auto.create.topics", "BOOLEAN", None),
)


def validate_consumer_config(props: dict[str, str]) -> None:
    """ConsumerConfig's parsing of the settings the engine uses, with ConfigException's text."""
    from .producer import ConfigError
    from .properties import java_trim

    for name, kind, minimum in _CONSUMER_CONFIGS:
        if name not in props:
            continue
        raw = props[name]
        text = java_trim(raw)
        if kind == "BOOLEAN":
            if text.lower() not in ("true", "false"):
                raise ConfigError(name, raw, "Expected value to be either true or false")
            continue
        value = java_parse_number(text, 32)
        if value is None:
            raise ConfigError(name, raw, "Not a number of type INT")
        if minimum is not None and value < minimum:
            raise ConfigError(name, value, f"Value must be at least {minimum}")
    reset = java_trim(props.get("auto.offset.reset", "latest")).lower()
    if reset not in ("latest", "earliest", "none"):
        raise ConfigError("auto.offset.reset", props["auto.offset.reset"], "String must be one of: latest, earliest, none")


def _listening_consumer_class():
    from pk.engine.consumer import EngineConsumer

    class ListeningEngineConsumer(EngineConsumer):
        """EngineConsumer that reports ownership changes to a rebalance listener: revoked
        before the group round that moves partitions, assigned once they are taken."""

        listener = None

        def _group_tick(self) -> None:
            listener = self.listener
            if listener is None:
                return super()._group_tick()
            before = list(self._owned)
            generation = self._generation
            super()._group_tick()
            after = self._owned
            if after != before or self._generation != generation:
                revoked = [tp for tp in before if tp not in after]
                if revoked:
                    listener.on_partitions_revoked(revoked)
                listener.on_partitions_assigned(list(after))

    return ListeningEngineConsumer


class EnginePerfConsumer:
    """PerfConsumer over the bundled engine: a group member of the engine's file-based groups.

    A topic that does not exist is created as the broker would on the consumer's metadata
    request (allow.auto.create.topics and auto.create.topics.enable, both true by default);
    otherwise polls return nothing, as Kafka's consumer keeps waiting for the topic."""

    def __init__(self, data_dir: str | None, config: dict[str, str]):
        from pk.engine.engine import Engine

        validate_consumer_config(config)
        self.engine = Engine(data_dir)
        try:
            self.consumer = _listening_consumer_class()(self.engine, config)
        except BaseException:
            self.engine.close()
            raise
        self.config = config
        self._subscribed = False

    def subscribe(self, topic: str, listener) -> None:
        from pk.engine import topic_names
        from pk.engine.errors import InvalidTopicError, TopicExistsError, UnknownTopicOrPartitionError

        if not topic.strip():
            raise JavaError(ILLEGAL_ARGUMENT, "Topic collection to subscribe to cannot contain null or empty topic")
        if topic_names.invalid_reason(topic) is not None:
            raise InvalidTopicError(f"Invalid topics: [{topic}]")
        self.consumer.listener = listener
        try:
            self.engine.topic(topic)
        except UnknownTopicOrPartitionError:
            allowed = self.config.get("allow.auto.create.topics", "true").strip().lower() == "true"
            broker = str(self.engine.broker_config.get("auto.create.topics.enable", "true")).strip().lower()
            if not (allowed and broker == "true"):
                return  # Kafka's consumer waits (and logs UNKNOWN_TOPIC_OR_PARTITION warnings)
            try:
                self.engine.create_topic(topic)
            except TopicExistsError:
                pass
        self.consumer.subscribe(topics=[topic])
        self._subscribed = True

    def subscribe_pattern(self, pattern: str, listener) -> None:
        """--include: the topics whose whole name matches the pattern, as they come and go."""
        self.consumer.listener = listener
        self.consumer.subscribe(pattern=pattern)
        self._subscribed = True

    def poll(self, timeout_ms: int):
        if not self._subscribed:
            time.sleep(timeout_ms / 1000.0)
            return []
        return self.consumer.poll(timeout_ms)

    def metrics(self) -> dict:
        return {}

    def close(self) -> None:
        try:
            self.consumer.close()
        finally:
            self.engine.close()


def engine_consumer_opener(data_dir: str | None) -> Callable[[dict[str, str]], PerfConsumer]:
    def open_consumer(props: dict[str, str]) -> PerfConsumer:
        return EnginePerfConsumer(data_dir, props)

    return open_consumer
