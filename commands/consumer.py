"""kafka-console-consumer (ConsoleConsumer, Kafka 3.7): argument checks, consumer
configuration, positioning, and the print loop. Written against a consumer with
assign/seek/subscribe/poll/close, so any backend's consumer plugs in.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import BinaryIO, Callable

from pk.engine.javacompat import pattern_syntax_error

from .consume_range import RangeSpec, Ranges
from .errors import ConsumerFailure, FormatterError, PropertiesError, UsageError
from .formatter import make_formatter


EARLIEST, LATEST = -2, -1
CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"


def log4j_line(level: str, message: str, logger: str, now: float | None = None) -> str:
    """A log line as Kafka's tools' log4j layout writes it: `[%d] %p %m (%c)`."""
    now = time.time() if now is None else now
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now)) + f",{int(now * 1000) % 1000:03d}"
    return f"[{stamp}] {level} {message} ({logger})"


@dataclass
class ConsumerOptions:
    topic: str | None = None
    include: str | None = None
    whitelist: str | None = None
    partition: int | None = None
    offset: str | None = None
    from_beginning: bool = False
    group: str | None = None
    max_messages: int | None = None
    timeout_ms: int | None = None
    skip_message_on_error: bool = False
    formatter: str | None = None
    properties: list[str] = field(default_factory=list)  # --property, deprecated in 4.x
    formatter_properties: list[str] = field(default_factory=list)  # --formatter-property
    formatter_config: str | None = None
    key_deserializer: str | None = None
    value_deserializer: str | None = None
    consumer_properties: list[str] = field(default_factory=list)  # deprecated for command_properties
    command_properties: list[str] = field(default_factory=list)
    consumer_config: str | None = None  # deprecated for command_config
    command_config: str | None = None
    isolation_level: str | None = None
    enable_systest_events: bool = False
    # pk-only ranges (consume_range.py)
    from_time: str | None = None
    to_time: str | None = None
    to_offset: str | None = None
    until_end: bool = False


@dataclass
class Plan:
    """What the checks decided: the consumer's config, where to start, how to print."""

    config: dict[str, str]
    formatter: object
    start_offset: int  # EARLIEST, LATEST or an offset (with --partition)
    group_passed: bool
    ranges: RangeSpec = field(default_factory=RangeSpec)
    tracker: Ranges | None = None  # the ranges' state, once position() has a consumer


KIP_848_NOTE = ("The consumer rebalance protocol (KIP-848) is production-ready! Set group.protocol=consumer to "
                "try it out. See https://kafka.apache.org/documentation/#consumer_rebalance_protocol")


def protocol_note(o: "ConsumerOptions", p: Plan) -> str | None:
    """The line Kafka 4.4's console consumer prints on stderr once its consumer exists:
    unless --partition is given, and only with the classic group protocol (the default)."""
    if o.partition is not None:
        return None
    protocol = p.config.get("group.protocol")
    if protocol is not None and protocol.lower() != "classic":
        return None
    return KIP_848_NOTE


def _key_values(items: list[str]) -> dict[str, str]:
    from .properties import parse_key_value_args as parse_key_values

    return parse_key_values(items)


def _file_props(path: str | None) -> dict[str, str]:
    if path is None:
        return {}
    from .properties import load_properties

    return load_properties(path)


def check_deprecated_options(o, config_option: str, warn: Callable[[str], None]) -> None:
    """Kafka 4.4's deprecated --consumer-property and consumer config file option (named
    `config_option`: --consumer.config for the console consumer, --consumer-config for the
    share consumer) beside their --command-* successors: refused together, warned alone."""
    if o.consumer_properties and o.command_properties:
        raise UsageError("Options --consumer-property and --command-property cannot be specified together.")
    if o.consumer_config is not None and o.command_config is not None:
        raise UsageError(f"Options {config_option} and --command-config cannot be specified together.")
    if o.consumer_properties:
        warn("Option --consumer-property is deprecated and will be removed in a future version. "
             "Use --command-property instead.")
    if o.consumer_config is not None:
        warn(f"Option {config_option} is deprecated and will be removed in a future version. "
             "Use --command-config instead.")


def plan(o: ConsumerOptions, warn: Callable[[str], None] = lambda line: None,
         log: Callable[[str], None] = lambda line: None) -> Plan:
    """ConsoleConsumerOptions' checks, in Kafka 4.4's order; `warn` gets each deprecation
    warning when Kafka prints it (on stdout), before any later check fails; `log` each line
    Kafka logs on stderr (a deserializer class it cannot load)."""
    include = o.include if o.include is not None else o.whitelist
    if len([x for x in (o.topic, include) if x is not None]) != 1:
        if o.whitelist is not None:  # pk still takes 3.x's --whitelist (removed in 4.0)
            raise UsageError("Exactly one of --include/--topic is required. "
                             "--whitelist is DEPRECATED use --include instead; ignored if --include specified.")
        raise UsageError("Exactly one of the following arguments is required: [topic], [include]")
    if o.partition is not None:
        if o.topic is None:
            raise UsageError("The topic is required when partition is specified.")
        if o.from_beginning and o.offset is not None:
            raise UsageError("Options from-beginning and offset cannot be specified together.")
    elif o.offset is not None:
        raise UsageError("The partition is required when offset is specified.")
    check_deprecated_options(o, "--consumer.config", warn)
    start = EARLIEST if o.from_beginning else LATEST
    if o.offset is not None:
        text = o.offset.lower()
        if text == "earliest":
            start = EARLIEST
        elif text == "latest":
            start = LATEST
        else:
            try:
                start = int(text)
            except ValueError:
                start = -1
            if start < 0 or not text.lstrip("+").isdigit():
                raise UsageError(f"The provided offset value '{o.offset}' is incorrect. Valid values are "
                                 "'earliest', 'latest', or a non-negative long.")
    try:
        extra = _file_props(o.command_config if o.command_config is not None else o.consumer_config)
    except PropertiesError as exc:  # Kafka 4.4 lets this exception escape its main()
        raise UsageError(f'Exception in thread "main" {exc}') from None
    props = _key_values(o.command_properties or o.consumer_properties)
    groups = []
    for candidate in (o.group, props.get("group.id"), extra.get("group.id")):
        if candidate is not None and candidate not in groups:
            groups.append(candidate)
    if len(groups) > 1:
        raise UsageError("The group ids provided in different places (directly using '--group', via "
                         "'--consumer-property', or via '--consumer.config') do not match. Detected group ids: "
                         + ", ".join(f"'{g}'" for g in groups))
    config = {**extra, **props}
    group_passed = bool(groups)
    if groups:
        config["group.id"] = groups[0]
    else:
        config["group.id"] = f"console-consumer-{random.randrange(100000)}"
        config.setdefault("enable.auto.commit", "false")
    if group_passed and o.partition is not None:
        raise UsageError("Options group and partition cannot be specified together.")
    if "auto.offset.reset" in config:
        if o.from_beginning and config["auto.offset.reset"] != "earliest":
            raise ConsumerFailure(f"Can't simultaneously specify --from-beginning and "
                                  f"'auto.offset.reset={config['auto.offset.reset']}', please remove one option")
    else:
        config["auto.offset.reset"] = "earliest" if o.from_beginning else "latest"
    config.setdefault("client.id", "console-consumer")
    if o.isolation_level is not None:
        config["isolation.level"] = o.isolation_level
    config.setdefault("isolation.level", "read_uncommitted")
    if config["isolation.level"] not in ("read_committed", "read_uncommitted"):
        raise ConsumerFailure(f"Invalid value {config['isolation.level']} for configuration isolation.level: "
                              "String must be one of: read_committed, read_uncommitted")
    # buildFormatter, last: the --property/--formatter-property checks come after the rest.
    if o.properties and o.formatter_properties:
        raise UsageError("Options --property and --formatter-property cannot be specified together.")
    if o.properties:
        warn("Option --property is deprecated and will be removed in a future version. "
                        "Use --formatter-property instead.")
    try:
        formatter_file = _file_props(o.formatter_config)
    except PropertiesError as exc:  # a usage error in Kafka 4.4, with the exception's message
        raise UsageError(str(exc).split(": ", 1)[-1]) from None
    formatter_props = {**formatter_file, **_key_values(o.formatter_properties or o.properties)}
    if o.key_deserializer:
        formatter_props["key.deserializer"] = o.key_deserializer
    if o.value_deserializer:
        formatter_props["value.deserializer"] = o.value_deserializer
    try:
        formatter = make_formatter(o.formatter, formatter_props, log=lambda message, exc: (
            log(log4j_line("ERROR", message, "org.apache.kafka.tools.consumer.DefaultMessageFormatter")), log(exc)))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    # pk's own options last: whatever Kafka's checks say about a command line comes first.
    return Plan(config, formatter, start, group_passed, range_spec(o))


def range_spec(o: ConsumerOptions) -> RangeSpec:
    """The pk-only range options, checked (one line each, in the style of Kafka's own
    option errors)."""
    from .time_spec import parse_time

    for name, other in (("from-beginning", o.from_beginning), ("offset", o.offset is not None)):
        if o.from_time is not None and other:
            raise UsageError(f"Options from-time and {name} cannot be specified together.")
    times = {}
    for name, text in (("from-time", o.from_time), ("to-time", o.to_time)):
        if text is not None:
            try:
                times[name] = parse_time(text)
            except ValueError as exc:
                raise UsageError(f"Invalid value for --{name}: {exc}.") from None
    to_offset = None
    if o.to_offset is not None:
        text = o.to_offset.strip()
        if not text.lstrip("+").isdigit() or int(text) >= 2**63:
            raise UsageError(f"The provided to-offset value '{o.to_offset}' is incorrect. Valid values are "
                             "non-negative longs.")
        to_offset = int(text)
    return RangeSpec(times.get("from-time"), times.get("to-time"), to_offset, o.until_end)


def pattern_failure(o: ConsumerOptions) -> str | None:
    """What Kafka prints when the --include pattern does not compile (its ConsumerWrapper
    compiles it once the consumer exists, and the run ends there with exit 1): the log line,
    then the PatternSyntaxException's text. None for a good pattern or no pattern."""
    include = o.include if o.include is not None else o.whitelist
    error = None if include is None else pattern_syntax_error(include)
    if error is None:
        return None
    return (log4j_line("ERROR", "Unknown error when running consumer: ", CONSOLE_CONSUMER)
            + "\njava.util.regex.PatternSyntaxException: " + error[1])


def position(consumer, o: ConsumerOptions, p: Plan) -> None:
    """Assign-and-seek for --partition, else subscribe (ConsumerWrapper.consumerInit). The
    pk-only ranges are set up first: a librdkafka group member takes their starts with its
    assignments."""
    if p.ranges.active():
        p.tracker = Ranges(p.ranges, consumer)
    if o.partition is not None:
        consumer.assign([(o.topic, o.partition)])
        if p.start_offset == EARLIEST:
            consumer.seek_to_beginning(o.topic, o.partition)
        elif p.start_offset == LATEST:
            consumer.seek_to_end(o.topic, o.partition)
        else:
            consumer.seek(o.topic, o.partition, p.start_offset)
            consumer.validate_position(o.topic, o.partition)
    elif o.topic is not None:
        consumer.subscribe(topics=[o.topic])
    else:
        consumer.subscribe(pattern=o.include if o.include is not None else o.whitelist)


class Tally:
    """Records processed so far; survives an interrupted loop for the closing summary line."""

    count = 0


def consume(consumer, o: ConsumerOptions, p: Plan, out: BinaryIO,
            log_error: Callable[[str], None], tally: Tally) -> None:
    """The print loop; counts processed records (printed or skipped) in `tally`.

    The bundled engine's consumer hands over whole fetches (poll_sets), which the formatter
    writes column-wise when its layout allows (format_set); otherwise, and for remote
    consumers, each record goes through format()."""
    from pk.engine.consumer import RecordList
    from pk.engine.errors import CorruptBatchError

    limit = o.max_messages if o.max_messages is not None and o.max_messages >= 0 else None
    timeout = o.timeout_ms if o.timeout_ms is not None and o.timeout_ms >= 0 else None
    poll_sets = getattr(consumer, "poll_sets", None)
    format_set = getattr(p.formatter, "format_set", None)
    ranges = p.tracker or (Ranges(p.ranges, consumer) if p.ranges.active() else None)
    last = time.monotonic()
    while limit is None or tally.count < limit:
        wait = 100 if timeout is None else max(0, min(100, timeout))
        try:
            if ranges is not None:
                ranges.admit()  # manual assignment: positioned before the first fetch
                if ranges.complete():
                    break
            if poll_sets is not None:
                pieces = poll_sets(wait)
            else:
                polled = consumer.poll(wait)
                pieces = [RecordList(None, None, polled)] if polled else []
            if ranges is not None:
                pieces = _in_range(consumer, ranges, pieces)
        except CorruptBatchError as exc:
            # Kafka's consumer raises at the corrupt batch, after handing over the records
            # before it; the console consumer logs it and ends (exit 0).
            log_error(log4j_line("ERROR", "Error processing message, terminating consumer process: ",
                                 CONSOLE_CONSUMER))
            log_error("org.apache.kafka.common.KafkaException: Received exception when fetching the next record "
                      f"from {exc.topic}-{exc.partition}. If needed, please seek past the record to continue "
                      "consumption.")
            log_error(f"Caused by: org.apache.kafka.common.KafkaException: {exc}")
            break
        if not pieces:
            if timeout is not None and (time.monotonic() - last) * 1000 > timeout:
                # Kafka 4.4 ends on the consumer's TimeoutException, which it logs (exit 0).
                log_error(log4j_line("ERROR", "Error processing message, terminating consumer process: ",
                                     CONSOLE_CONSUMER))
                log_error("org.apache.kafka.common.errors.TimeoutException")
                break
            continue
        last = time.monotonic()
        for i, piece in enumerate(pieces):
            last_piece = limit is not None and tally.count + len(piece) >= limit
            if last_piece:
                piece, rest = piece.split(limit - tally.count)
                _rewind(consumer, [rest, *pieces[i + 1:]])  # never commit what was not printed
            data = format_set(piece) if format_set is not None else None
            if data is None:
                _format_each(piece.records(), p.formatter.format, o, out, log_error, tally)
            else:
                tally.count += len(piece)
                out.write(data)
            if last_piece:
                break
        out.flush()


def _in_range(consumer, ranges: Ranges, pieces: list) -> list:
    """The polled records inside their partitions' ranges. A partition the group has just
    assigned is given its range here: with --from-time its records polled from the committed
    position are dropped (it was sought to its start)."""
    moved = ranges.admit()
    if moved:
        pieces = [_without(piece, moved) if piece.topic is None else piece for piece in pieces]
        pieces = [piece for piece in pieces if len(piece) and (piece.topic, piece.partition) not in moved]
    pieces, back = ranges.clip(pieces)
    for (topic, partition), offset in back.items():
        consumer.seek(topic, partition, offset)  # never commit past what was printed
    return pieces


def _without(piece, tps: set):
    """A mixed RecordList (librdkafka's poll) without the records of `tps`."""
    from pk.engine.consumer import RecordList

    return RecordList(None, None, [r for r in piece.records() if (r.topic, r.partition) not in tps])


def _format_each(batch: list, fmt, o: ConsumerOptions, out: BinaryIO, log_error: Callable[[str], None],
                 tally: Tally) -> None:
    """Format and write records one at a time: a record the formatter rejects ends the run
    (after what came before it is written) or, with --skip-message-on-error, is logged."""
    chunks = []
    for record in batch:
        tally.count += 1
        try:
            chunks.append(fmt(record))
        except FormatterError as exc:
            if not o.skip_message_on_error:
                out.write(b"".join(chunks))
                out.flush()
                raise ConsumerFailure(str(exc)) from None
            log_error(log4j_line("ERROR", "Error processing message, skipping this message: ",
                                 CONSOLE_CONSUMER))
            log_error(exc.java)
    out.write(b"".join(chunks))


def _rewind(consumer, unprinted: list) -> None:
    first: dict[tuple[str, int], int] = {}
    for piece in unprinted:
        for tp, offset in piece.first_offsets().items():
            first.setdefault(tp, offset)
    for (topic, partition), offset in first.items():
        consumer.seek(topic, partition, offset)
