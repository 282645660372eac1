"""The client test tools' clients on a cluster, over confluent-kafka: ClusterProducer and
ClusterConsumer for commands/verifiable_producer.py and verifiable_consumer.py, LatencyClient
for commands/e2e_latency.py, each set up as Kafka's tool sets up its own Java client."""

from __future__ import annotations

import time

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


class LatencyClient:
    """commands/e2e_latency.py's Client: a producer that waits for each acknowledgement and a
    consumer assigned to every partition of the topic from its end offsets, set up as Kafka's
    EndToEndLatency sets up its own (linger.ms=0, no auto commit, fetch.max.wait.ms=0, a
    fresh test-group-<ms> group). Creates the topic (one partition) when it is missing."""

    def __init__(self, bootstrap: str, topic: str, acks: str, props: dict[str, str], out):
        import confluent_kafka
        from confluent_kafka import TopicPartition

        self.topic = topic
        base = {**props, "bootstrap.servers": bootstrap}
        consumer_java = {**base, "group.id": f"test-group-{int(time.time() * 1000)}", "enable.auto.commit": "false",
                         "auto.offset.reset": "latest", "fetch.max.wait.ms": "0"}
        producer_java = {**base, "linger.ms": "0", "acks": acks}
        self.consumer = _client("consumer", librdkafka_config(consumer_java, {}, {}, role="consumer"), consumer_java)
        self.producer = _client("producer", librdkafka_config(producer_java, {}, {}, role="producer"), producer_java)
        self._failure = None
        metadata = self.consumer.list_topics(timeout=60)
        if topic not in metadata.topics or metadata.topics[topic].error is not None:
            out(f'Topic "{topic}" does not exist. Will create topic with 1 partition(s) and replication factor = 1')
            self._create_topic(librdkafka_config(base, {}, {}, role="admin"))
            metadata = self.consumer.list_topics(topic, timeout=60)
        partitions = sorted(metadata.topics[topic].partitions)
        ends = []
        for p in partitions:  # the ends now: records produced from here on are the test's
            _, high = self.consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=60)
            ends.append(TopicPartition(topic, p, high))
        self.consumer.assign(ends)
        self._confluent = confluent_kafka

    def _create_topic(self, conf: dict) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient(conf)
        future = admin.create_topics([NewTopic(self.topic, 1, 1)])[self.topic]
        future.result(60)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until the consumer's metadata has its leader
            md = self.consumer.list_topics(self.topic, timeout=10).topics.get(self.topic)
            if md is not None and md.error is None and md.partitions and all(
                    p.leader >= 0 for p in md.partitions.values()):
                return
            time.sleep(0.05)

    def send(self, key, value, headers) -> None:
        result = {}

        def delivered(err, msg):
            result["err"] = err

        self.producer.produce(self.topic, value, key, headers=headers or None, on_delivery=delivered)
        while "err" not in result:
            self.producer.poll(0.1)
        if result["err"] is not None:
            raise kafka_error(result["err"], self.topic)

    def poll(self, timeout: float) -> list[tuple]:
        first = self.consumer.poll(timeout)
        if first is None:
            return []
        msgs = [first, *self.consumer.consume(500, 0)]  # what else has arrived: Kafka's poll returns it too
        records = []
        for msg in msgs:
            if msg.error() is not None:
                raise kafka_error(msg.error(), self.topic)
            records.append((msg.key(), msg.value() or b"", [(k, v) for k, v in (msg.headers() or [])]))
        return records

    def commit(self) -> None:
        try:
            self.consumer.commit(asynchronous=False)
        except self._confluent.KafkaException as exc:
            if exc.args[0].code() != self._confluent.KafkaError._NO_OFFSET:
                raise kafka_error(exc.args[0]) from None

    def close(self) -> None:
        self.producer.flush(10)
        self.consumer.close()
