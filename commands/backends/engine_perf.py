"""The performance tools' producer and consumer over the bundled engine: commands/producer_perf.py's
`PerfProducer` and commands/consumer_perf.py's `PerfConsumer`."""

from __future__ import annotations

import time
from functools import partial
from typing import Callable

from ..consumer_perf import PerfConsumer, validate_consumer_config
from ..errors import CONFIG_EXCEPTION, ILLEGAL_ARGUMENT, JavaError
from ..producer_perf import PerfProducer


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
        from ..errors import ProducerFailure
        from ..producer import producer_settings

        try:
            settings = producer_settings(props)
        except ProducerFailure as exc:  # ProducerConfig's ConfigException
            raise JavaError(CONFIG_EXCEPTION, str(exc)) from None
        return EnginePerfProducer(data_dir, topic, settings)

    return open_producer



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
        from pk.engine import validation
        from pk.engine.errors import InvalidTopicError, TopicExistsError, UnknownTopicOrPartitionError

        if not topic.strip():
            raise JavaError(ILLEGAL_ARGUMENT, "Topic collection to subscribe to cannot contain null or empty topic")
        if validation.topic_name_problem(topic) is not None:
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

    def poll_sets(self, timeout_ms: int) -> list:
        """poll()'s records as record sets (engine/consumer.py), counted and measured
        column-wise: as many records as poll() would return (max.poll.records)."""
        if not self._subscribed:
            time.sleep(timeout_ms / 1000.0)
            return []
        return self.consumer.poll_sets(timeout_ms, self.consumer.max_poll_records)

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
