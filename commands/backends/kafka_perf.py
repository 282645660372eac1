"""The performance tools' producer and consumer on a cluster: commands/producer_perf.py's
`PerfProducer` and commands/consumer_perf.py's `PerfConsumer` over kafka_clients.py's
RemoteProducer and RemoteConsumer (`perf_producer_opener`, `perf_consumer_opener`)."""

from __future__ import annotations

from pk.engine.errors import InvalidTopicError, KafkaError, RecordTooLargeError

from .kafka_clients import (ConfigRefused, RemoteProducer, _client, _metadata, _topic_invalid, producer_config,
                            remote_consumer)

class PerfProducer:
    """commands/producer_perf.PerfProducer over RemoteProducer: records without keys (librdkafka's
    sticky partitioning), acknowledged as librdkafka reports them."""

    def __init__(self, producer: RemoteProducer):
        self.producer = producer
        self._taken = 0  # failures already handed out by take_errors()
        producer.ensure_topic()  # metadata now: a missing topic fails once, not per record

    def send(self, value: bytes) -> None:
        p = self.producer
        p.check_size(None, value, ())
        p._produce(None, value, None)
        p.sent += 1

    def send_many(self, values: list[bytes]) -> None:
        """Each record with its own delivery report (ProducerPerformance times every record),
        handed to librdkafka from C."""
        self.producer.produce_many(values, None, on_delivery=self.producer._delivered)
        self.producer.sent += len(values)

    def poll(self) -> None:
        self.producer.producer.poll(0)
        self.producer._errors.check()

    def acked(self) -> int:
        return self.producer.delivered

    def take_errors(self) -> list[KafkaError]:
        """Delivery failures reported since the last call (each counts as one failed record)."""
        new = self.producer.failures[self._taken:]
        self._taken += len(new)
        return new

    def record_error(self, exc: Exception) -> bool:
        return isinstance(exc, RecordTooLargeError)

    def flush(self) -> None:
        p = self.producer
        while p.producer.flush(0.2):
            p._errors.check()

    def close(self) -> None:
        self.flush()


def perf_producer_opener(bootstrap: str | None, extra: dict[str, str]):
    """open_producer(topic, props) for producer_perf.run_producer_perf: props are ProducerPerformance's
    (Java keys, bootstrap.servers among them unless `bootstrap` is given)."""

    def open_producer(topic: str, props: dict[str, str]):
        from ..errors import CONFIG_EXCEPTION, JavaError
        from ..errors import ProducerFailure
        from ..producer import producer_settings

        java = dict(props)
        if bootstrap is not None:
            java["bootstrap.servers"] = bootstrap
        try:  # KafkaProducer's constructor: a ConfigException escapes main()
            settings = producer_settings(java)
            producer = RemoteProducer.from_settings(producer_config(bootstrap, settings, extra), topic, settings)
        except (ProducerFailure, ConfigRefused) as exc:
            raise JavaError(CONFIG_EXCEPTION, str(exc)) from None
        return PerfProducer(producer)

    return open_producer


class PerfConsumer:
    """commands/consumer_perf.PerfConsumer over RemoteConsumer: a group member; a missing topic is
    created by the cluster (allow.auto.create.topics, Java's default) or waited for."""

    def __init__(self, bootstrap: str, props: dict[str, str], extra: dict[str, str]):
        from ..consumer_perf import validate_consumer_config

        validate_consumer_config(props)  # ConsumerConfig's checks and texts, as on the engine
        java = dict(props)
        self.auto_create = java.pop("allow.auto.create.topics", "true").strip().lower() == "true"
        self._listener = None
        self.consumer = remote_consumer(bootstrap, java, extra, on_assign=self._assigned, on_revoke=self._revoked)
        if hasattr(self.consumer, "poll_sets"):  # whole fetch answers, counted column-wise
            self.poll_sets = self.consumer.poll_sets
        try:
            self.consumer.connect()
        except BaseException:
            self.consumer.close()
            raise

    def _assigned(self, partitions) -> None:
        if self._listener is not None:
            self._listener.on_partitions_assigned(partitions)

    def _revoked(self, partitions) -> None:
        if self._listener is not None:
            self._listener.on_partitions_revoked(partitions)

    def subscribe(self, topic: str, listener) -> None:
        from ..errors import ILLEGAL_ARGUMENT, JavaError

        if not topic.strip():
            raise JavaError(ILLEGAL_ARGUMENT, "Topic collection to subscribe to cannot contain null or empty topic")
        if _topic_invalid(topic) is not None:
            raise InvalidTopicError(f"Invalid topics: [{topic}]")
        self._listener = listener
        if self.auto_create:
            self._create_if_missing(topic)
        self.consumer._subscribe([topic])

    def subscribe_pattern(self, pattern: str, listener) -> None:
        """ConsumerPerformance --include: librdkafka subscribes to a "^" regex (POSIX, anchored here
        at both ends as Java's matches() is)."""
        self._listener = listener
        self.consumer._subscribe(["^(" + pattern + ")$"])

    def _create_if_missing(self, topic: str) -> None:
        """Java's consumer asks for metadata with allowAutoTopicCreation (its
        allow.auto.create.topics defaults to true), so a broker that auto-creates topics
        creates a missing one; librdkafka's consumer never asks. A producer's metadata
        request does, on the consumer's connection settings."""
        consumer = self.consumer
        meta = _metadata(consumer.consumer, topic, consumer.timeout_ms / 1000.0, consumer._errors,
                         consumer._timeout_error()).topics.get(topic)
        if meta is not None and meta.error is None:
            return
        probe = _client("producer", {k: v for k, v in consumer.conf.items() if k != "error_cb"})
        try:
            probe.list_topics(topic, timeout=consumer.timeout_ms / 1000.0)
        except Exception:  # noqa: BLE001 - not created: Kafka's consumer keeps waiting too
            pass

    def poll(self, timeout_ms: int):
        return self.consumer.poll(timeout_ms)

    def metrics(self) -> dict:
        return {}

    def close(self) -> None:
        self.consumer.close()


def perf_consumer_opener(bootstrap: str, extra: dict[str, str]):
    def open_consumer(props: dict[str, str]):
        return PerfConsumer(bootstrap, props, extra)

    return open_consumer
