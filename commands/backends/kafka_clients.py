"""The remote backend of the data tools: confluent-kafka (librdkafka) clients behind the same
small interfaces as the bundled engine's, so one set of commands serves both.

- `RemoteProducer`: what commands/producer.py needs (send/flush/close), built from the console
  producer's merged Java configuration. `producer_opener(bootstrap, extra)` is the remote
  twin of producer.engine_producer_opener.
- `RemoteConsumer`: EngineConsumer's interface (assign/seek/seek_to_beginning/seek_to_end/
  validate_position/subscribe/poll/commit/close), records shaped as engine.consumer's
  ConsumerRecord. `ConsumerBackend(bootstrap, extra)` is the remote twin of EngineBackend
  for the console consumer.

The perf tools' adapters over these clients are in kafka_perf.py.

Configuration is written as Kafka users write it (Java client keys, from .properties files
and --*-property options); commands/client_config.py translates it to librdkafka's keys, and
`-X key=value` passes librdkafka properties through untouched (they win). A producer's
configuration is the console producer's merged one (its options -- acks, compression, batch
size, linger, request timeout, the largest request -- already in it, validated as Kafka's
ProducerConfig does), and the partitioner is librdkafka's Java-compatible `murmur2_random`, so
keys land where Kafka's own tools put them. A consumer stores offsets only for the records it
hands out, so commits cover exactly what the tool printed.

Errors surface as the engine's KafkaError classes (or the few below), carrying Kafka's texts,
so the CLIs report both backends the same way. Nothing waits forever: metadata is awaited
for at most max.block.ms (producer) or default.api.timeout.ms (consumer), Kafka's own bounds.
"""

from __future__ import annotations

import re
import time
from collections import deque
from functools import partial
from itertools import repeat
from typing import TYPE_CHECKING, Callable, Sequence

from pk.engine.errors import (
    CorruptRecordError,
    InvalidRecordError,
    InvalidTopicError,
    KafkaError,
    OffsetOutOfRangeError,
    RecordTooLargeError,
    UnknownTopicOrPartitionError,
)
from pk.engine.producer import ProducerTimeoutError

if TYPE_CHECKING:  # pk.engine.consumer only when a consumer runs: the producer starts without it
    from pk.engine.consumer import ConsumerRecord

# librdkafka's error codes used here (confluent_kafka.KafkaError constants, kept as numbers so
# that importing this module does not load the C library).
_MSG_TIMED_OUT = -192
_PARTITION_EOF = -191
_UNKNOWN_TOPIC = -188
_ALL_BROKERS_DOWN = -187
_TIMED_OUT = -185
_TRANSPORT = -195
_AUTO_OFFSET_RESET_ERROR = -140
_AUTHENTICATION = -169
_SSL = -181
_MSG_SIZE_TOO_LARGE = 10
_UNKNOWN_TOPIC_OR_PART = 3
_LEADER_NOT_AVAILABLE = 5
_INVALID_TOPIC = 17
_TOPIC_AUTHORIZATION_FAILED = 29
_GROUP_AUTHORIZATION_FAILED = 30
_CLUSTER_AUTHORIZATION_FAILED = 31
_SASL_AUTHENTICATION_FAILED = 58

# Kafka's Errors.java default messages (what the Java clients print) for the broker errors a
# producer or consumer meets.
KAFKA_MESSAGES = {
    1: "The requested offset is not within the range of offsets maintained by the server.",
    2: "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted "
       "topic, or is otherwise corrupt.",
    3: "This server does not host this topic-partition.",
    5: "There is no leader for this topic-partition as we are in the middle of a leadership election.",
    6: "For requests intended only for the leader, this error indicates that the broker is not the current "
       "leader. For requests intended for any replica, this error indicates that the broker is not a replica "
       "of the topic partition.",
    7: "The request timed out.",
    10: "The request included a message larger than the max message size the server will accept.",
    18: "The request included message batch larger than the configured segment size on the server.",
    19: "Messages are rejected since there are fewer in-sync replicas than required.",
    20: "Messages are written to the log, but to fewer in-sync replicas than required.",
    21: "Produce request specified an invalid value for required acks.",
    31: "Cluster authorization failed.",
    32: "The timestamp of the message is out of acceptable range.",
    35: "The version of API is not supported.",
    58: "SASL Authentication failed.",
    76: "The requesting client does not support the compression type of given partition.",
    87: "This record has failed the validation on broker and hence will be rejected.",
}


# `java_class`: Kafka's exception class (the perf tools print `<class>: <message>`).
class TopicAuthorizationError(KafkaError):
    code = _TOPIC_AUTHORIZATION_FAILED
    java_class = "org.apache.kafka.common.errors.TopicAuthorizationException"


class GroupAuthorizationError(KafkaError):
    code = _GROUP_AUTHORIZATION_FAILED
    java_class = "org.apache.kafka.common.errors.GroupAuthorizationException"


class AuthenticationError(KafkaError):
    """SASL/SSL authentication failed (Kafka's console consumer: `Authentication failed:
    terminating consumer process`)."""

    code = _SASL_AUTHENTICATION_FAILED
    java_class = "org.apache.kafka.common.errors.AuthenticationException"


class ConsumerTimeoutError(KafkaError):
    """org.apache.kafka.common.errors.TimeoutException, from the consumer's metadata calls."""

    code = 7
    java_class = "org.apache.kafka.common.errors.TimeoutException"


class ConfigRefused(KafkaError):
    """A configuration librdkafka or the Java→librdkafka translation refuses."""


CONSUMER_METADATA_TIMEOUT = "Timeout expired while fetching topic metadata"
GROUP_ID_REQUIRED = ("To use the group management or offset commit APIs, you must provide a valid group.id in "
                     "the consumer configuration.")


# --------------------------------------------------------------------------- configuration
class BackendUsageError(KafkaError):
    """A usage error in choosing the backend (bad bootstrap address, -X without a cluster)."""


def remote_target(bootstrap: str | None, x_args: Sequence[str], data_dir: str | None) -> dict[str, str]:
    """client_config.check_target for the data tools: a valid host:port list (Kafka's text),
    -X only with a cluster, --data-dir only without one. Returns the -X properties."""
    from ..client_config import check_target
    from ..errors import ClientConfigError as _Refused

    try:
        return check_target(bootstrap, x_args, data_dir)
    except _Refused as exc:
        raise BackendUsageError(str(exc).split("\n")[0]) from None


def librdkafka_config(java: dict[str, str], own: dict[str, object], extra: dict[str, str], role: str) -> dict:
    """Java client properties translated to librdkafka's with the -X passthrough on top
    (client_config.to_librdkafka), then `own` (what the tool itself chooses, in librdkafka's
    keys) wherever neither named the same property."""
    from ..client_config import check_resolvable, to_librdkafka
    from ..errors import ClientConfigError as _Refused

    try:
        conf = to_librdkafka(java, extra, role=role)
        check_resolvable(conf.get("bootstrap.servers", ""))
    except _Refused as exc:
        raise ConfigRefused(str(exc)) from None
    for key, value in own.items():
        conf.setdefault(key, str(value))
    if "debug" not in conf:
        conf.setdefault("log_level", "0")  # librdkafka's log lines would break pk's one-line errors
    return conf


def _client(kind: str, conf: dict, java: dict[str, str] | None = None):
    """A confluent-kafka Producer or Consumer; a configuration librdkafka refuses is one line."""
    import confluent_kafka

    from ..client_config import librdkafka_error

    cls = confluent_kafka.Producer if kind == "producer" else confluent_kafka.Consumer
    try:
        return cls(conf)
    except confluent_kafka.KafkaException as exc:
        raise ConfigRefused(str(librdkafka_error(exc.args[0].str(), java))) from None
    except (TypeError, ValueError) as exc:
        raise ConfigRefused(str(exc)) from None


def _strip(text: str) -> str:
    for prefix in ("Broker: ", "Local: "):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def _java_int(props: dict[str, str], name: str, default: int) -> int:
    try:
        return int(str(props.get(name, default)).strip())
    except ValueError:
        raise ConfigRefused(f"Invalid value {props[name]} for configuration {name}: Not a number of type INT") \
            from None


# --------------------------------------------------------------------------- errors
def kafka_error(err, topic: str | None = None, partition: int | None = None) -> KafkaError:
    """A confluent_kafka.KafkaError as the engine's KafkaError with the Java client's text."""
    code = err.code()
    if code in (_MSG_SIZE_TOO_LARGE,):
        return RecordTooLargeError(KAFKA_MESSAGES[10])
    if code in (_UNKNOWN_TOPIC_OR_PART, _UNKNOWN_TOPIC):
        where = topic if partition is None or partition < 0 else f"{topic}-{partition}"
        text = f"This server does not host this topic-partition: {where}" if topic else KAFKA_MESSAGES[3]
        return UnknownTopicOrPartitionError(text)
    if code == _INVALID_TOPIC:
        return InvalidTopicError(f"Invalid topics: [{topic}]")
    if code == _TOPIC_AUTHORIZATION_FAILED:
        return TopicAuthorizationError(f"Not authorized to access topics: [{topic}]")
    if code == _GROUP_AUTHORIZATION_FAILED:
        return GroupAuthorizationError(_strip(err.str()))
    if code in (_AUTHENTICATION, _SASL_AUTHENTICATION_FAILED, _SSL):
        return AuthenticationError(_strip(err.str()))
    if code == 87:
        return InvalidRecordError(KAFKA_MESSAGES[87])
    if code == 2:
        return CorruptRecordError(KAFKA_MESSAGES[2])
    if code == 1:
        return OffsetOutOfRangeError(KAFKA_MESSAGES[1])
    error = KafkaError(KAFKA_MESSAGES.get(code) or _strip(err.str()))
    error.code = code
    return error


class _Errors:
    """error_cb: remembers what makes waiting pointless (authentication, fatal errors)."""

    def __init__(self):
        self.fatal: KafkaError | None = None

    def __call__(self, err) -> None:
        if self.fatal is None and (err.fatal() or err.code() in (_AUTHENTICATION, _SASL_AUTHENTICATION_FAILED, _SSL)):
            self.fatal = kafka_error(err)

    def check(self) -> None:
        if self.fatal is not None:
            raise self.fatal


def _metadata(client, topic: str | None, timeout: float, errors: _Errors, on_timeout: KafkaError):
    """client.list_topics(topic) within `timeout` seconds, or `on_timeout` (an unreachable
    cluster), or the fatal/authentication error seen meanwhile."""
    import confluent_kafka

    try:
        return client.list_topics(topic, timeout=max(timeout, 0.001))
    except confluent_kafka.KafkaException as exc:
        errors.check()
        code = exc.args[0].code()
        if code in (_TRANSPORT, _ALL_BROKERS_DOWN, _TIMED_OUT):
            raise on_timeout from None
        raise kafka_error(exc.args[0], topic) from None


# --------------------------------------------------------------------------- producer
class RemoteProducer:
    """A confluent-kafka Producer for one topic, with the engine producer's behaviour:
    send() raises for a record that can never be sent (size limits, unknown topic, an earlier
    delivery failure), flush()/close() return once every record sent is acknowledged or
    raise the first delivery failure (with Kafka's text).

    send_values() hands a whole chunk of records to librdkafka from C (`map` over
    Producer.produce), with one size check for the chunk: no Python step per record.
    With only_errors (the console producer, which needs nothing from a successful delivery),
    librdkafka reports failed records only, so a success costs no Python call either, and
    `delivered` stays 0."""

    def __init__(self, conf: dict, topic: str, *, max_block_ms: int = 60000, max_request_size: int = 1048576,
                 buffer_memory: int = 33554432, delivery_timeout_ms: int = 120000, only_errors: bool = False):
        self.topic = topic
        self.max_block_ms = max_block_ms
        self.max_request_size = max_request_size
        self.buffer_memory = buffer_memory
        self.delivery_timeout_ms = delivery_timeout_ms
        self._errors = _Errors()
        conf = {**conf, "error_cb": self._errors}
        if only_errors:
            conf.setdefault("delivery.report.only.error", True)  # -X may say otherwise
            conf["on_delivery"] = self._delivered  # every record's report, when it comes
        self.producer = _client("producer", conf)
        self._ready = False
        self._failure: KafkaError | None = None
        self.failures: list[KafkaError] = []
        self.delivered = 0
        self.sent = 0
        self._closed = False

    @classmethod
    def from_settings(cls, conf: dict, topic: str, settings, only_errors: bool = False) -> "RemoteProducer":
        c = settings.config
        return cls(conf, topic, max_block_ms=c["max.block.ms"], max_request_size=c["max.request.size"],
                   buffer_memory=c["buffer.memory"], delivery_timeout_ms=c["delivery.timeout.ms"],
                   only_errors=only_errors)

    # ------------------------------------------------------------------ metadata
    def ensure_topic(self) -> int:
        """Wait (at most max.block.ms) until the cluster knows the topic; its partition count.
        Kafka's producer does this in its first send()."""
        reason = _topic_invalid(self.topic)
        if reason:
            raise InvalidTopicError(f"Invalid topics: [{self.topic}]")
        timeout = ProducerTimeoutError(f"Topic {self.topic} not present in metadata after {self.max_block_ms} ms.")
        start = time.monotonic()
        deadline = start + self.max_block_ms / 1000.0
        while True:
            md = _metadata(self.producer, self.topic, deadline - time.monotonic(), self._errors, timeout)
            meta = md.topics.get(self.topic)
            err = None if meta is None else meta.error
            if meta is not None and err is None and meta.partitions:
                self._ready = True
                return len(meta.partitions)
            code = None if err is None else err.code()
            if code in (_TOPIC_AUTHORIZATION_FAILED, _INVALID_TOPIC):
                raise kafka_error(err, self.topic)
            now = time.monotonic()
            if now >= deadline:  # as Kafka's producer: an unknown topic may yet be created
                raise timeout
            time.sleep(min(0.1, max(deadline - now, 0)))

    # ------------------------------------------------------------------ send
    def _delivered(self, err, msg) -> None:
        if err is None:
            self.delivered += 1
            return
        error = self._delivery_error(err, msg)
        self.failures.append(error)
        if self._failure is None:
            self._failure = error

    def _delivery_error(self, err, msg) -> KafkaError:
        if err.code() == _MSG_TIMED_OUT:
            return ProducerTimeoutError(
                f"Expiring 1 record(s) for {msg.topic()}-{msg.partition()}:{self.delivery_timeout_ms} ms has passed "
                "since batch creation")
        return kafka_error(err, msg.topic(), msg.partition())

    def raise_failure(self) -> None:
        self._errors.check()
        if self._failure is not None:
            raise self._failure

    def check_size(self, key, value, headers) -> None:
        """As the engine producer checks it (the same estimate and texts)."""
        from pk.engine.producer import check_record_size, headers_size, record_size_upper_bound

        check_record_size(record_size_upper_bound(key, value, headers_size(headers)), self.max_request_size,
                          self.buffer_memory)

    def _before_send(self) -> None:
        if self._closed:
            from pk.engine.producer import ProducerClosedError

            raise ProducerClosedError("Cannot perform operation after producer has been closed")
        self.raise_failure()
        if not self._ready:
            self.ensure_topic()

    def send(self, key: bytes | None, value: bytes | None, headers: Sequence = (), timestamp: int | None = None,
             partition: int | None = None) -> None:
        self._before_send()
        self.check_size(key, value, headers)
        self._produce(key, value, list(headers) if headers else None, timestamp, partition)
        self.sent += 1

    def send_values(self, values: list, keys: list | None = None) -> None:
        """send(key, value) for each pair, in order: the records before one that is too large
        are sent, then that one raises as send() would."""
        if not values:
            return
        self._before_send()
        try:
            # The size estimate grows with the key's and the value's lengths: if the longest
            # of each passes, every record does.
            longest_key = None if keys is None else max(keys, key=len)
            self.check_size(longest_key, max(values, key=len), ())
        except TypeError:  # a null key or value (null.marker): the record-by-record path
            return self._send_each(values, keys)
        except KafkaError:
            return self._send_each(values, keys)
        self.produce_many(values, keys)
        self.sent += len(values)

    def _send_each(self, values: list, keys: list | None) -> None:
        for key, value in zip(repeat(None) if keys is None else keys, values):
            self.send(key, value)

    def produce_many(self, values: list, keys: list | None = None, on_delivery=None) -> None:
        """Producer.produce for every record, called by `map` from C. A full local queue
        (BufferError) is waited on as _produce waits, then the records resume at the refused one."""
        import confluent_kafka

        produce = self.producer.produce if on_delivery is None else partial(self.producer.produce,
                                                                             on_delivery=on_delivery)
        topic = self.topic
        start, n = 0, len(values)
        deadline = None
        while start < n:
            rest = iter(values[start:] if start else values)
            try:
                if keys is None:
                    deque(map(produce, repeat(topic), rest), maxlen=0)
                else:
                    deque(map(produce, repeat(topic), rest, keys[start:] if start else keys), maxlen=0)
                break
            except BufferError:
                # map took the refused record from `rest` before produce refused it.
                taken = (n - start) - rest.__length_hint__()
                if taken > 1:
                    deadline = None  # progress: max.block.ms counts again from here
                start += taken - 1
                deadline = self._wait_for_room(deadline)
            except confluent_kafka.KafkaException as exc:
                raise kafka_error(exc.args[0], self.topic) from None
        self.producer.poll(0)  # serve delivery reports

    def _wait_for_room(self, deadline: float | None) -> float:
        """Serve delivery reports for a while, at most max.block.ms after `deadline` was first
        set (Kafka's bound on waiting for buffer memory); returns the deadline."""
        now = time.monotonic()
        if deadline is None:
            deadline = now + self.max_block_ms / 1000.0
        elif now >= deadline:
            raise ProducerTimeoutError(
                f"Failed to allocate memory within the configured max blocking time {self.max_block_ms} ms.")
        self.producer.poll(0.05)
        self.raise_failure()
        return deadline

    def _produce(self, key, value, headers, timestamp=None, partition=None) -> None:
        import confluent_kafka

        producer = self.producer
        # A record's own partition and CreateTime (--input json); librdkafka's defaults otherwise.
        extra = {}
        if timestamp is not None:
            extra["timestamp"] = timestamp
        if partition is not None:
            extra["partition"] = partition
        deadline = None
        while True:
            try:
                producer.produce(self.topic, value, key, headers=headers, on_delivery=self._delivered, **extra)
                break
            except BufferError:  # the local queue is full: wait for room, at most max.block.ms
                deadline = self._wait_for_room(deadline)
            except confluent_kafka.KafkaException as exc:
                raise kafka_error(exc.args[0], self.topic) from None
        producer.poll(0)  # serve delivery reports

    def poll(self) -> None:
        self.producer.poll(0)

    def flush(self) -> None:
        """Wait until every record sent is acknowledged (or failed), then raise a failure."""
        while self.producer.flush(0.2):
            self._errors.check()
        self.raise_failure()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.flush()


def _topic_invalid(topic: str) -> str | None:
    from pk.engine import validation

    return validation.topic_name_problem(topic)


def producer_config(bootstrap: str | None, settings, extra: dict[str, str]) -> dict:
    """librdkafka configuration of a producer from its merged Java configuration
    (settings: producer.ProducerSettings, typed and validated as ProducerConfig does): acks,
    compression.type, batch.size (0: batch.num.messages=1), linger.ms, request.timeout.ms and
    max.request.size (message.max.bytes) carry over through client_config, and the
    partitioner is murmur2_random, Java's for keyed records, unless the configuration or -X
    names another."""
    java = dict(settings.properties)
    if bootstrap is not None:
        java["bootstrap.servers"] = bootstrap  # the option always wins, as in Kafka's tools
    if settings["linger.ms"] > 900000:
        java["linger.ms"] = "900000"  # librdkafka's maximum (Java takes any long)
    # Java's delivery.timeout.ms default (120 s), not librdkafka's 300 s; -X message.timeout.ms still wins.
    java.setdefault("delivery.timeout.ms", str(settings["delivery.timeout.ms"]))
    java.pop("transactional.id", None)  # the perf tool refuses transactions before using it
    # librdkafka also caps the records queued (100000 by default), which Java's producer does
    # not: there buffer.memory alone bounds them (queue.buffering.max.kbytes here).
    own = {"partitioner": "murmur2_random", "queue.buffering.max.messages": QUEUE_MAX_MESSAGES}
    if idempotent_by_default(settings) and not any(key in extra for key in _IDEMPOTENCE_KEYS):
        own["enable.idempotence"] = "true"
    return librdkafka_config(java, own, extra, role="producer")


QUEUE_MAX_MESSAGES = 10_000_000
# librdkafka properties that decide idempotence or conflict with it: given with -X, they are
# left to librdkafka as given.
_IDEMPOTENCE_KEYS = ("enable.idempotence", "acks", "request.required.acks", "max.in.flight",
                     "max.in.flight.requests.per.connection", "retries", "message.send.max.retries",
                     "transactional.id")


def idempotent_by_default(settings) -> bool:
    """ProducerConfig.postProcessAndValidateIdempotenceConfigs: Kafka's producer is idempotent
    unless enable.idempotence is given, or, when it is not given, a setting conflicts (acks
    other than all, retries=0, more than 5 requests in flight), which turns it off silently.
    librdkafka's default is the other way round, so pk asks for it."""
    return ("enable.idempotence" not in settings.properties and settings["acks"] == "-1"
            and settings["retries"] > 0 and settings["max.in.flight.requests.per.connection"] <= 5)


def idempotent_for(settings) -> bool:
    """Whether Kafka's producer is idempotent with these settings: enable.idempotence as
    given, else ProducerConfig's default rule (idempotent_by_default)."""
    if "enable.idempotence" in settings.properties:
        return bool(settings["enable.idempotence"])
    return idempotent_by_default(settings)


def producer_opener(bootstrap: str, extra: dict[str, str]):
    """open_producer(topic, settings) for commands/producer.run: a WireProducer (batches
    through pk's own Produce requests, wire_produce.py) whenever the configuration is one it
    serves (wire_produce.usable), else a RemoteProducer reporting failed deliveries only (the
    console producer prints nothing for the others)."""

    def open_producer(topic: str, settings):
        from .wire_produce import WireProducer, usable

        security = usable(settings, extra)
        if security is not False:
            return WireProducer(bootstrap, topic, settings, security, idempotent_for(settings))
        return RemoteProducer.from_settings(producer_config(bootstrap, settings, extra), topic, settings,
                                            only_errors=True)

    return open_producer


# --------------------------------------------------------------------------- consumer
# librdkafka's timestamp types -> the engine's (records.NO_TIMESTAMP, CREATE_TIME, LOG_APPEND_TIME)
_TIMESTAMP_TYPES = {0: -1, 1: 0, 2: 1}
PATTERN_REFRESH_SECONDS = 1.0  # how often a pattern subscription looks for new matching topics


def _record(msg, record: type[ConsumerRecord]) -> ConsumerRecord:
    ts_type, ts = msg.timestamp()
    headers = msg.headers()
    return record(msg.topic(), msg.partition(), _TIMESTAMP_TYPES.get(ts_type, -1), msg.offset(), ts,
                  msg.key(), msg.value(), tuple(headers) if headers else (), msg.leader_epoch())


class RemoteConsumer:
    """EngineConsumer's interface over a confluent-kafka Consumer.

    `java` is the consumer's Java configuration (group.id, auto.offset.reset, enable.auto.commit,
    ...). Offsets are stored for the records poll() has returned only (and moved back by
    seek()), so a commit, automatic or at close, covers exactly what the caller took.
    A pattern subscription matches whole topic names with Python's `re.fullmatch`, as the
    engine does (Java's Pattern.matches), leaves internal topics out unless
    exclude.internal.topics=false, and picks up new matching topics within a second.
    """

    def __init__(self, bootstrap: str, java: dict[str, str], extra: dict[str, str] | None = None,
                 on_assign: Callable | None = None, on_revoke: Callable | None = None, track_ends: bool = False):
        from ..client_config import api_timeout_ms
        from ..errors import ClientConfigError as _Refused

        java = dict(java)
        java["bootstrap.servers"] = bootstrap
        self.group_id = java.get("group.id") or None
        reset = java.get("auto.offset.reset", "latest").strip().lower()
        if reset not in ("earliest", "latest", "none"):
            raise ConfigRefused(f"Invalid value {java['auto.offset.reset']} for configuration auto.offset.reset: "
                                    "String must be one of: latest, earliest, none")
        try:
            self.timeout_ms = api_timeout_ms(java)
        except _Refused as exc:
            raise ConfigRefused(str(exc)) from None
        self.max_poll_records = max(_java_int(java, "max.poll.records", 500), 1)
        self.exclude_internal = java.get("exclude.internal.topics", "true").strip().lower() == "true"
        # Offsets are stored by poll() for what it returns, never by librdkafka on its own.
        own = {"enable.auto.offset.store": "false"}
        if track_ends:
            # The console consumer's ranges need the position past offset gaps (aborted
            # transactions, markers, compaction): librdkafka tells it with partition EOF.
            own["enable.partition.eof"] = "true"
        conf = librdkafka_config(java, own, extra or {}, role="consumer")
        self.conf = conf
        self._errors = _Errors()
        conf["error_cb"] = self._errors
        self.consumer = _client("consumer", conf, java)
        self._on_assign = on_assign
        self._on_revoke = on_revoke
        self._assigned: list[tuple[str, int]] = []  # manual assignment
        self._positions: dict[tuple[str, int], int] = {}
        self._paused: set[tuple[str, int]] = set()
        self._starts: Callable | None = None  # start_at_assignment's
        self._dirty = False  # manual positions not handed to librdkafka yet
        self._subscribed = False
        self._pattern: re.Pattern | None = None
        self._topics: list[str] = []
        self._next_refresh = 0.0
        self._closed = False

    # ------------------------------------------------------------------ metadata
    def _timeout_error(self) -> ConsumerTimeoutError:
        return ConsumerTimeoutError(CONSUMER_METADATA_TIMEOUT)

    def connect(self) -> None:
        """Fetch the cluster's metadata once: an unreachable cluster fails here, within
        default.api.timeout.ms, with Kafka's consumer text."""
        _metadata(self.consumer, None, self.timeout_ms / 1000.0, self._errors, self._timeout_error())

    def _topic(self, topic: str):
        md = _metadata(self.consumer, topic, self.timeout_ms / 1000.0, self._errors, self._timeout_error())
        meta = md.topics.get(topic)
        if meta is None or meta.error is not None:
            if meta is not None and meta.error.code() not in (_UNKNOWN_TOPIC_OR_PART, _LEADER_NOT_AVAILABLE):
                raise kafka_error(meta.error, topic)
            raise UnknownTopicOrPartitionError(f"This server does not host this topic-partition: {topic}")
        return meta

    def _watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        import confluent_kafka

        try:
            return self.consumer.get_watermark_offsets(confluent_kafka.TopicPartition(topic, partition),
                                                       timeout=self.timeout_ms / 1000.0, cached=False)
        except confluent_kafka.KafkaException as exc:
            self._errors.check()
            if exc.args[0].code() in (_TRANSPORT, _ALL_BROKERS_DOWN, _TIMED_OUT):
                raise ConsumerTimeoutError("Timeout of %d ms expired before the position for partition %s-%d could "
                                           "be determined" % (self.timeout_ms, topic, partition)) from None
            raise kafka_error(exc.args[0], topic, partition) from None

    # ------------------------------------------------------------------ assignment
    def assign(self, partitions: list[tuple[str, int]]) -> None:
        """Manual assignment (no group membership): unknown topics or partitions fail at once."""
        for topic, p in partitions:
            meta = self._topic(topic)
            if p not in meta.partitions:
                raise UnknownTopicOrPartitionError(f"This server does not host this topic-partition: {topic}-{p}")
        self._assigned = list(partitions)
        self._dirty = True

    def assignment(self) -> list[tuple[str, int]]:
        if self._assigned:
            return list(self._assigned)
        return sorted((tp.topic, tp.partition) for tp in self.consumer.assignment())

    def seek(self, topic: str, partition: int, offset: int) -> None:
        tp = (topic, partition)
        self._positions[tp] = offset
        if self._assigned:
            self._dirty = True
            return
        self._move_member(tp, offset)

    def _move_member(self, tp: tuple[str, int], offset: int) -> None:
        """A group member moving back (records taken but not used): the stored offset
        follows, so that the next commit does not cover them, and fetching resumes there."""
        import confluent_kafka

        target = confluent_kafka.TopicPartition(tp[0], tp[1], offset)
        try:
            self.consumer.store_offsets(offsets=[target])
            self.consumer.seek(target)
        except confluent_kafka.KafkaException:
            pass  # no longer ours (revoked meanwhile): nothing to move

    def validate_position(self, topic: str, partition: int) -> None:
        low, high = self._watermarks(topic, partition)
        position = self._positions[(topic, partition)]
        if not low <= position <= high:
            raise OffsetOutOfRangeError(
                f"Fetch position {position} is out of range for partition {topic}-{partition} "
                f"(log start offset {low}, log end offset {high})")

    def seek_to_beginning(self, topic: str, partition: int) -> None:
        self.seek(topic, partition, self._watermarks(topic, partition)[0])

    def seek_to_end(self, topic: str, partition: int) -> None:
        self.seek(topic, partition, self._watermarks(topic, partition)[1])

    # ------------------------------------------------------------------ lookups (console ranges)
    def end_offsets(self, tps: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """The high watermarks (librdkafka's ListOffsets carries the isolation level: the
        last stable offsets under read_committed)."""
        return {tp: self._watermarks(*tp)[1] for tp in tps}

    def offsets_for_time(self, tps: list[tuple[str, int]], timestamp: int) -> dict[tuple[str, int], int | None]:
        """offsetsForTimes: the first offset whose timestamp is >= `timestamp`, None if none."""
        import confluent_kafka

        asked = [confluent_kafka.TopicPartition(t, p, timestamp) for t, p in tps]
        try:
            found = self.consumer.offsets_for_times(asked, timeout=self.timeout_ms / 1000.0)
        except confluent_kafka.KafkaException as exc:
            self._errors.check()
            raise kafka_error(exc.args[0]) from None
        out = {}
        for tp in found:
            if tp.error is not None:
                raise kafka_error(tp.error, tp.topic, tp.partition)
            out[(tp.topic, tp.partition)] = tp.offset if tp.offset >= 0 else None
        return out

    def position(self, topic: str, partition: int) -> int | None:
        """The next offset poll() hands out: after the last record returned, a seek, or
        (with track_ends) the end librdkafka reached over a gap."""
        return self._positions.get((topic, partition))

    def start_at_assignment(self, starts: Callable) -> None:
        """Have the group's assignments start where `starts(tps)` -> {tp: offset} says. A
        seek right after an assignment races librdkafka's own offset reset (its ListOffsets
        answer can arrive after the seek and undo it, and a stale partition EOF follows), so
        the offsets go into the assignment itself."""
        self._starts = starts

    def pause(self, tps: list[tuple[str, int]]) -> None:
        import confluent_kafka

        self._paused.update(tps)
        try:
            self.consumer.pause([confluent_kafka.TopicPartition(t, p) for t, p in tps])
        except confluent_kafka.KafkaException:
            pass  # not assigned to librdkafka yet (manual: applied at the next poll)

    def subscribe(self, topics: list[str] | None = None, pattern: str | None = None) -> None:
        if self.group_id is None:
            raise KafkaError(GROUP_ID_REQUIRED)
        if pattern is not None:
            self._pattern = re.compile(pattern)
            self._refresh_pattern()
            return
        for topic in topics or []:
            self._topic(topic)  # an unknown topic is an error here, not an endless wait
        self._subscribe(list(topics or []))

    def _subscribe(self, topics: list[str]) -> None:
        import confluent_kafka

        self._topics = topics
        if not topics:
            if self._subscribed:
                self.consumer.unsubscribe()
                self._subscribed = False
            return
        kwargs = {}
        if self._starts is not None:
            kwargs["on_assign"] = self._assigned_at_starts
        elif self._on_assign is not None:
            kwargs["on_assign"] = lambda _c, parts: self._on_assign([(p.topic, p.partition) for p in parts])
        if self._on_revoke is not None:
            kwargs["on_revoke"] = lambda _c, parts: self._on_revoke([(p.topic, p.partition) for p in parts])
        try:
            self.consumer.subscribe(topics, **kwargs)
        except confluent_kafka.KafkaException as exc:
            raise kafka_error(exc.args[0]) from None
        self._subscribed = True

    def _assigned_at_starts(self, consumer, parts) -> None:
        import confluent_kafka

        tps = [(p.topic, p.partition) for p in parts]
        if self._on_assign is not None:
            self._on_assign(tps)
        starts = self._starts(tps)
        for part in parts:
            offset = starts.get((part.topic, part.partition))
            if offset is not None:
                part.offset = offset
                self._positions[(part.topic, part.partition)] = offset
        try:
            consumer.incremental_assign(parts)  # cooperative protocols
        except confluent_kafka.KafkaException:
            consumer.assign(parts)  # the eager protocol replaces the assignment

    def _refresh_pattern(self) -> None:
        from pk.engine import topic_names

        self._next_refresh = time.monotonic() + PATTERN_REFRESH_SECONDS
        md = _metadata(self.consumer, None, self.timeout_ms / 1000.0, self._errors, self._timeout_error())
        matched = sorted(t for t in md.topics if self._pattern.fullmatch(t)
                         and not (self.exclude_internal and topic_names.is_internal(t)))
        if matched != self._topics:
            self._subscribe(matched)

    # ------------------------------------------------------------------ poll
    def poll(self, timeout_ms: int = 0) -> list[ConsumerRecord]:
        """Records from the assigned partitions, waiting up to timeout_ms for the first."""
        import confluent_kafka

        self._errors.check()
        if self._dirty:
            self._dirty = False
            self.consumer.assign([confluent_kafka.TopicPartition(t, p, self._positions.get((t, p), -1))
                                  for t, p in self._assigned])
            if self._paused:
                self.consumer.pause([confluent_kafka.TopicPartition(t, p) for t, p in self._paused])
        if self._pattern is not None and time.monotonic() >= self._next_refresh:
            self._refresh_pattern()
        if not self._subscribed and not self._assigned:
            time.sleep(timeout_ms / 1000.0)
            return []
        consumer = self.consumer
        first = consumer.poll(timeout_ms / 1000.0)
        if first is None:
            self._errors.check()
            return []
        messages = [first]
        if self.max_poll_records > 1:
            messages += consumer.consume(self.max_poll_records - 1, 0)
        from pk.engine.consumer import ConsumerRecord

        out = []
        last: dict[tuple[str, int], int] = {}
        for msg in messages:
            err = msg.error()
            if err is not None:
                self._message_error(err, msg)
                continue
            out.append(_record(msg, ConsumerRecord))
            last[(msg.topic(), msg.partition())] = msg.offset()
        if last:
            for tp, offset in last.items():
                self._positions[tp] = offset + 1
            if self.group_id is not None:
                try:
                    consumer.store_offsets(offsets=[confluent_kafka.TopicPartition(t, p, o + 1)
                                                    for (t, p), o in last.items()])
                except confluent_kafka.KafkaException:
                    pass  # revoked meanwhile
        return out

    def _message_error(self, err, msg) -> None:
        code = err.code()
        if code == _PARTITION_EOF:
            tp = (msg.topic(), msg.partition())
            if msg.offset() > self._positions.get(tp, -1):
                self._positions[tp] = msg.offset()  # the fetch reached the end past any gap
            return
        if not err.fatal() and err.retriable():
            return
        if code in (_UNKNOWN_TOPIC_OR_PART, _UNKNOWN_TOPIC) and not self._assigned:
            return  # a subscribed topic missing (not created yet, or deleted): Kafka's consumer waits
        if code == _AUTO_OFFSET_RESET_ERROR:
            from pk.engine.consumer import NoOffsetForPartitionError

            raise NoOffsetForPartitionError(
                f"Undefined offset with no reset policy for partitions: [{msg.topic()}-{msg.partition()}]")
        if code in (_TRANSPORT, _ALL_BROKERS_DOWN):
            return  # Kafka's consumer keeps trying to reconnect
        raise kafka_error(err, msg.topic(), msg.partition() if msg.partition() is not None else None)

    # ------------------------------------------------------------------ commits
    def commit(self, offsets: dict[tuple[str, int], int] | None = None) -> None:
        import confluent_kafka

        if self.group_id is None:
            raise KafkaError(GROUP_ID_REQUIRED)
        try:
            if offsets is None:
                targets = [confluent_kafka.TopicPartition(t, p, o) for (t, p), o in self._positions.items()
                           if (t, p) in self.assignment()]
            else:
                targets = [confluent_kafka.TopicPartition(t, p, o) for (t, p), o in offsets.items()]
            if targets:
                self.consumer.commit(offsets=targets, asynchronous=False)
        except confluent_kafka.KafkaException as exc:
            if exc.args[0].code() != -168:  # _NO_OFFSET: nothing to commit
                raise kafka_error(exc.args[0]) from None

    def close(self) -> None:
        """Leave the group; with enable.auto.commit, commit what poll() returned first."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._subscribed:
                self._leave_group()
            self.consumer.close()
        except RuntimeError:
            pass  # closed already

    def _leave_group(self) -> None:
        """Unsubscribe and serve the revocation here, before close(). librdkafka's close() serves
        the rebalance events still queued; one the group has already moved past (a member left
        at the same moment) makes the assign() answering it wait for ever on a group that has
        terminated meanwhile (confluentinc/librdkafka#4884): Ctrl-C never ended the process.
        Served in poll(), the group still answers. The auto-commit of the revoked partitions
        and the LeaveGroup happen here, as close() would have done them."""
        import confluent_kafka

        self._subscribed = False
        try:
            self.consumer.unsubscribe()
            deadline = time.monotonic() + self.timeout_ms / 1000.0
            while True:
                self.consumer.poll(0.01)  # runs the rebalance callbacks; records are dropped uncommitted
                if not self.consumer.assignment() or time.monotonic() >= deadline:
                    return
        except confluent_kafka.KafkaException:
            pass  # close() reports what is wrong with the group


def remote_consumer(bootstrap: str, java: dict[str, str], extra: dict[str, str], on_assign=None,
                    on_revoke=None, track_ends: bool = False) -> RemoteConsumer:
    """A WireConsumer (records through pk's own Fetch path, wire_consumer.py) whenever the
    configuration is one pk's wire client serves, else a RemoteConsumer on librdkafka alone."""
    from .wire_fetch import usable

    security = usable(java, extra)
    if security is False:
        return RemoteConsumer(bootstrap, java, extra, on_assign=on_assign, on_revoke=on_revoke,
                              track_ends=track_ends)
    from .wire_consumer import WireConsumer

    return WireConsumer(bootstrap, java, extra, security, on_assign=on_assign, on_revoke=on_revoke)


class ConsumerBackend:
    """The console consumer's backend over a cluster: consumer(config) like EngineBackend's."""

    def __init__(self, bootstrap: str, extra: dict[str, str]):
        self.bootstrap = bootstrap
        self.extra = extra

    def consumer(self, config: dict[str, str], track_ends: bool = False) -> RemoteConsumer:
        """track_ends: the console consumer's ranges need the position past offset gaps."""
        consumer = remote_consumer(self.bootstrap, config, self.extra, track_ends=track_ends)
        try:
            consumer.connect()
        except BaseException:
            consumer.close()
            raise
        return consumer

    def close(self) -> None:
        pass
