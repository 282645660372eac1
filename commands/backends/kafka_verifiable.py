"""commands/verifiable_producer.py's Producer on a cluster: a confluent-kafka Producer set up
as Kafka's VerifiableProducer sets up its own (acks from --acks, no retries, the config files
on top), each record's outcome reported with the Java client's exception."""

from __future__ import annotations

from .kafka_clients import _MSG_TIMED_OUT, _Errors, _client, kafka_error, librdkafka_config
from pk.engine.producer import ProducerTimeoutError


def producer_properties(bootstrap: str, acks: int, files: list[dict[str, str]]) -> dict[str, str]:
    """Kafka's order: bootstrap.servers, acks and retries=0 first, each config file over them."""
    java = {"bootstrap.servers": bootstrap, "acks": str(acks), "retries": "0"}
    for props in files:
        java.update(props)
    return java


class ClusterProducer:
    def __init__(self, java: dict[str, str], topic: str):
        self.topic = topic
        self.errors = _Errors()
        self.delivery_timeout_ms = int(java.get("delivery.timeout.ms", "120000").strip() or 120000)
        java = {**java, "delivery.timeout.ms": str(self.delivery_timeout_ms)}
        conf = librdkafka_config(java, {"partitioner": "murmur2_random"}, {}, role="producer")
        self.producer = _client("producer", {**conf, "error_cb": self.errors}, java)

    def send(self, key, value, timestamp_ms, on_done) -> None:
        def delivered(err, msg):
            if err is None:
                on_done(msg.partition(), msg.offset(), None)
            elif err.code() == _MSG_TIMED_OUT:
                on_done(None, None, ProducerTimeoutError(
                    f"Expiring 1 record(s) for {msg.topic()}-{msg.partition()}:{self.delivery_timeout_ms} ms has "
                    "passed since batch creation"))
            else:
                on_done(None, None, kafka_error(err, msg.topic(), msg.partition()))

        kwargs = {"timestamp": timestamp_ms} if timestamp_ms is not None else {}
        while True:
            try:
                self.producer.produce(self.topic, value.encode(), None if key is None else key.encode(),
                                      on_delivery=delivered, **kwargs)
                return
            except BufferError:  # the local queue is full: wait for acknowledgements, as Java's send blocks
                self.producer.poll(0.1)

    def poll(self) -> None:
        self.producer.poll(0)

    def flush(self) -> None:
        while self.producer.flush(0.2):
            pass

    def close(self) -> None:
        self.flush()


class ClusterConsumer:
    """commands/verifiable_consumer.py's Consumer: a confluent-kafka Consumer in a group,
    rebalances reported through the callbacks, polls batched as the Java consumer's poll()
    returns them (what has arrived, up to max.poll.records)."""

    POLL_SECONDS = 0.2  # how often a waiting poll looks at the stop flag

    def __init__(self, java: dict[str, str], stopped):
        from ..client_config import _java_number

        self.max_records = _java_number("max.poll.records", java.get("max.poll.records", "500"))
        java = {k: v for k, v in java.items() if k != "max.poll.records"}
        conf = librdkafka_config(java, {}, {}, role="consumer")
        self.errors = _Errors()
        self.consumer = _client("consumer", {**conf, "error_cb": self.errors}, java)
        self.stopped = stopped

    def subscribe(self, topic: str, on_assigned, on_revoked) -> None:
        def assigned(consumer, partitions):
            on_assigned([(tp.topic, tp.partition) for tp in partitions])

        def revoked(consumer, partitions):
            on_revoked([(tp.topic, tp.partition) for tp in partitions])

        self.consumer.subscribe([topic], on_assign=assigned, on_revoke=revoked, on_lost=revoked)

    def poll(self) -> list[tuple]:
        while not self.stopped():
            self.errors.check()
            batch = self.consumer.consume(self.max_records, self.POLL_SECONDS)
            records = []
            for msg in batch:
                err = msg.error()
                if err is not None:
                    if err.fatal() or not err.retriable():
                        raise kafka_error(err, msg.topic(), msg.partition())
                    continue
                key, value = msg.key(), msg.value()
                records.append((msg.topic(), msg.partition(), msg.offset(),
                                None if key is None else key.decode("utf-8", "replace"),
                                None if value is None else value.decode("utf-8", "replace")))
            if records:
                return records
        return []

    def commit(self, offsets: dict[tuple[str, int], int]) -> None:
        from confluent_kafka import KafkaException, TopicPartition

        if not offsets:
            return
        try:
            self.consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()],
                                 asynchronous=False)
        except KafkaException as exc:
            raise kafka_error(exc.args[0]) from None

    def close(self) -> None:
        self.consumer.close()
