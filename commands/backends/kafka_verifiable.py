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
