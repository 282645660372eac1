"""ConsumerPerformance (kafka-consumer-perf-test.sh, org.apache.kafka.tools.ConsumerPerformance):
subscribe, read N records, print the throughput line.

Written against a small interface (`PerfConsumer`, below) so that a remote backend can plug in
beside the bundled engine's adapter (commands/backends/engine_perf.py).

Errors (commands/errors.py): `UsageError` is what jopt-simple reports with printUsageAndExit,
`JavaError` an exception Kafka's tool lets escape (the CLI prints its getMessage()).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

from pk.engine.javacompat import pattern_syntax_error

from .errors import ILLEGAL_ARGUMENT, JavaError, UsageError
from .perf_common import (JavaDateFormat, config_file, format_metrics, java_div, java_fixed, java_parse_number,
                          now_ms as _now_ms)

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


def java_regex(pattern: str) -> str:
    """The --include pattern, checked as Pattern.compile would (Java's PatternSyntaxException)."""
    error = pattern_syntax_error(pattern)
    if error is not None:
        raise JavaError("java.util.regex.PatternSyntaxException", error[0])
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
    props = config_file(o.command_config if o.command_config is not None else o.consumer_config)
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


def _poll_as_sets(consumer: PerfConsumer) -> Callable[[int], list]:
    """The consumer's poll, giving record sets (engine/consumer.py): the bundled engine's
    own, measured column-wise; a remote consumer's records wrapped as one RecordList."""
    poll_sets = getattr(consumer, "poll_sets", None)
    if poll_sets is not None:
        return poll_sets
    from pk.engine.consumer import RecordList

    def poll(timeout_ms: int) -> list:
        records = consumer.poll(timeout_ms)
        return [RecordList(None, None, list(records))] if records else []

    return poll


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
    poll = _poll_as_sets(consumer)
    while messages < num_messages and current - last_consumed <= timeout:
        records = poll(100)
        current = now_ms()
        if not records:
            continue
        last_consumed = current
        # Java checks the reporting interval after each record, but `current` is fixed for the
        # whole poll: only the first record can trigger a report.
        first, rest = records[0].split(1)
        messages += 1
        nbytes += first.payload_bytes()
        if current - last_report >= interval:
            if detailed:
                out(_progress_line(nbytes, last_bytes, messages, last_messages, last_report, current,
                                   date_format, single_round.value))
            single_round = _Counter()
            last_report = current
            last_messages = messages
            last_bytes = nbytes
        for piece in [rest, *records[1:]]:
            messages += len(piece)
            nbytes += piece.payload_bytes()
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


# --------------------------------------------------------------------------- ConsumerConfig
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
    from .errors import ConfigError
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
