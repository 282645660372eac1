"""kafka-delete-records (Kafka 4.4's DeleteRecordsCommand): delete each listed partition's
records below an offset (-1: all of them), from an offset JSON file

    {"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], "version": 1}

on the bundled engine or, with --bootstrap-server, on a cluster (confluent-kafka's
delete_records). Output and errors are Kafka's. Kafka 4.4 lists the partitions in the order
of an immutable map, which changes from one JVM to the next; pk keeps the file's order."""

from __future__ import annotations

import json

from .errors import UsageError


def parse_offsets(text: str) -> dict[tuple[str, int], int]:
    """(topic, partition) -> offset, in the file's order; UsageError with Kafka's message."""
    try:
        js = json.loads(text)
    except ValueError:
        raise UsageError("The input string is not a valid JSON") from None
    if not isinstance(js, dict):
        raise UsageError("The input string is not a valid JSON")
    version = js.get("version", 1)
    if version != 1:
        raise UsageError(f"Not supported version field value {version}")
    if "partitions" not in js:
        raise UsageError("Missing partitions field")
    seen: dict[tuple[str, int], list[int]] = {}
    for p in js["partitions"] or []:
        for name in ("topic", "partition", "offset"):
            if not isinstance(p, dict) or name not in p:
                raise UsageError(f"No such field exists: `{name}`")
        seen.setdefault((str(p["topic"]), int(p["partition"])), []).append(int(p["offset"]))
    duplicates = [tp for tp in seen if len(seen[tp]) > 1]
    if duplicates:
        raise UsageError("Offset json file contains duplicate topic partitions: "
                         + ",".join(f"{t}-{p}" for t, p in duplicates))
    return {tp: offsets[0] for tp, offsets in seen.items()}


def run(deleter, offsets: dict[tuple[str, int], int], out) -> None:
    """`deleter(offsets)` -> {(topic, partition): low watermark or an error's Java text}."""
    out("Executing records delete operation")
    results = deleter(offsets)
    out("Records delete operation completed:")
    for (topic, partition) in offsets:
        result = results[(topic, partition)]
        if isinstance(result, int):
            out(f"partition: {topic}-{partition}\tlow_watermark: {result}")
        else:
            out(f"partition: {topic}-{partition}\terror: {result}")


def engine_deleter(engine):
    """Delete on the bundled engine, as pk-server-start's DeleteRecords handler does."""
    from pk.engine.errors import KafkaError

    from .backends.kafka_admin import known_error

    def delete(offsets):
        out = {}
        for (topic, partition), offset in offsets.items():
            try:
                out[(topic, partition)] = engine.partition(topic, partition).delete_records_before(offset)
            except KafkaError as exc:
                out[(topic, partition)] = known_error(exc.code).execution_message()
        return out

    return delete


def remote_deleter(admin):
    """Delete through confluent-kafka's AdminClient (commands/backends/kafka_admin.KafkaAdmin)."""

    def delete(offsets):
        import confluent_kafka
        from confluent_kafka import TopicPartition

        from .backends.kafka_admin import admin_error

        futures = admin.client.delete_records([TopicPartition(t, p, o) for (t, p), o in offsets.items()],
                                              request_timeout=admin.timeout_s)
        admin.wait(futures.values(), "deleteRecords")
        out = {}
        for tp, future in futures.items():
            try:
                out[(tp.topic, tp.partition)] = future.result().low_watermark
            except confluent_kafka.KafkaException as exc:
                out[(tp.topic, tp.partition)] = admin_error(exc.args[0], "deleteRecords").execution_message()
        return out

    return delete
