"""kafka-console-share-consumer (Kafka 4.4's ConsoleShareConsumer): read a topic as a member
of a share group and write its records to standard output, acknowledging each as it is
written (accept by default, --reject or --release).

The options are checked in ConsoleShareConsumerOptions' order; the client is
backends/wire_share.py on a cluster (librdkafka has no share consumer), backends/engine_share.py
on the bundled engine (no --bootstrap-server). As in Kafka's tool, the records of
the last poll that --max-messages leaves unprinted are not acknowledged by the loop: the
consumer releases them at close, so the group delivers them again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import BinaryIO, Callable

from .consumer import _file_props, _key_values, check_deprecated_options, log4j_line
from .errors import PropertiesError, UsageError
from .formatter import make_formatter

CONSOLE_SHARE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleShareConsumer"
DEFAULT_GROUP = "console-share-consumer"
DEFAULT_CLIENT_ID = "console-share-consumer"


@dataclass
class ShareConsumerOptions:
    topic: str | None = None
    group: str | None = None
    max_messages: int | None = None
    timeout_ms: int | None = None
    reject: bool = False
    release: bool = False
    reject_message_on_error: bool = False
    formatter: str | None = None
    formatter_config: str | None = None
    key_deserializer: str | None = None
    value_deserializer: str | None = None
    enable_systest_events: bool = False
    properties: list[str] = field(default_factory=list)
    formatter_properties: list[str] = field(default_factory=list)
    consumer_properties: list[str] = field(default_factory=list)
    command_properties: list[str] = field(default_factory=list)
    consumer_config: str | None = None
    command_config: str | None = None


@dataclass
class SharePlan:
    config: dict[str, str]
    formatter: object
    ack: str  # "accept", "release" or "reject"

    @property
    def group(self) -> str:
        return self.config["group.id"]


def plan(o: ShareConsumerOptions, bootstrap: str | None, warn: Callable[[str], None] = lambda line: None,
         log: Callable[[str], None] = lambda line: None) -> SharePlan:
    """ConsoleShareConsumerOptions' checks in Kafka 4.4's order; `warn` gets the deprecation
    lines Kafka prints on stdout. No `bootstrap`: the bundled engine (where Kafka's tool
    says 'Missing required argument "[bootstrap-server]"')."""
    if o.topic is None:
        raise UsageError("--topic is a required argument")
    if o.reject and o.release:
        raise UsageError("At most one of --reject and --release may be specified.")
    check_deprecated_options(o, "--consumer-config", warn)
    try:
        from_file = _file_props(o.command_config if o.command_config is not None else o.consumer_config)
    except PropertiesError as exc:  # Kafka 4.4 lets this exception escape its main()
        raise UsageError(f'Exception in thread "main" {exc}') from None
    extra = _key_values(o.command_properties or o.consumer_properties)
    groups: list[str] = []
    for candidate in (o.group, from_file.get("group.id"), extra.get("group.id")):
        if candidate is not None and candidate not in groups:
            groups.append(candidate)
    if len(groups) > 1:
        raise UsageError("The group ids provided in different places (directly using '--group', via "
                         "'--consumer-property', or via '--consumer-config') do not match. Detected group ids: "
                         + ", ".join(f"'{g}'" for g in groups))
    config = {**from_file, **extra}
    if bootstrap is not None:  # else the bundled engine's data directory
        config["bootstrap.servers"] = bootstrap
    config.setdefault("client.id", DEFAULT_CLIENT_ID)
    config["group.id"] = groups[0] if groups else DEFAULT_GROUP
    if o.properties and o.formatter_properties:
        raise UsageError("Options --property and --formatter-property cannot be specified together.")
    if o.properties:
        warn("Option --property is deprecated and will be removed in a future version. "
             "Use --formatter-property instead.")
    try:
        formatter_file = _file_props(o.formatter_config)
    except PropertiesError as exc:
        raise UsageError(str(exc).split(": ", 1)[-1]) from None
    formatter_props = {**formatter_file}
    if o.key_deserializer:
        formatter_props["key.deserializer"] = o.key_deserializer
    if o.value_deserializer:
        formatter_props["value.deserializer"] = o.value_deserializer
    formatter_props.update(_key_values(o.formatter_properties or o.properties))
    try:
        formatter = make_formatter(o.formatter, formatter_props, log=lambda message, exc: (
            log(log4j_line("ERROR", message, "org.apache.kafka.tools.consumer.DefaultMessageFormatter")), log(exc)))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    ack = "reject" if o.reject else "release" if o.release else "accept"
    return SharePlan(config, formatter, ack)


class Tally:
    count = 0


def consume(consumer, o: ShareConsumerOptions, p: SharePlan, out: BinaryIO,
            log_error: Callable[[str], None], tally: Tally) -> None:
    """ConsoleShareConsumer.process: each record written, then acknowledged; ends at
    --max-messages, or when no record came for --timeout-ms (Kafka logs that as an error of
    the receive loop and exits 0)."""
    from .backends.wire_share import ACK_TYPES, REJECT

    ack = ACK_TYPES[p.ack]
    limit = o.max_messages if o.max_messages is not None and o.max_messages >= 0 else None
    timeout = o.timeout_ms if o.timeout_ms is not None and o.timeout_ms >= 0 else None
    last = time.monotonic()
    while limit is None or tally.count < limit:
        wait = 0.1 if timeout is None else max(0.0, min(0.1, timeout / 1000))
        polled = consumer.poll(wait)
        if not polled:
            if timeout is not None and (time.monotonic() - last) * 1000 > timeout:
                log_error(log4j_line("ERROR", "Error processing message, terminating consumer process: ",
                                     CONSOLE_SHARE_CONSUMER))
                log_error("org.apache.kafka.common.errors.TimeoutException")
                return
            continue
        last = time.monotonic()
        for i, record in enumerate(polled):
            if limit is not None and tally.count >= limit:
                break  # the rest stays unacknowledged: the session's close releases it, as Kafka's
            tally.count += 1
            try:
                out.write(p.formatter.format(record))
                consumer.acknowledge(record, ack)
            except Exception as exc:  # noqa: BLE001 - a formatter's failure, as Kafka's tool catches it
                if not o.reject_message_on_error or isinstance(exc, (BrokenPipeError, KeyboardInterrupt)):
                    raise
                log_error(log4j_line("ERROR", "Error processing message, rejecting this message: ",
                                     CONSOLE_SHARE_CONSUMER))
                log_error(str(exc))
                consumer.acknowledge(record, REJECT)
        out.flush()
