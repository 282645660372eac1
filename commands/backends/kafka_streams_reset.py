"""commands/streams_resetter.py's Cluster over confluent-kafka: an AdminClient for the group's
members, the topic list and deletions, a Consumer in the application's group (never joining
it: offsets are committed for assigned partitions) for watermarks, timestamps and commits."""

from __future__ import annotations

from .kafka_clients import _client, kafka_error, librdkafka_config

TIMEOUT = 60.0


class KafkaStreamsCluster:
    def __init__(self, java: dict[str, str], group: str):
        from confluent_kafka.admin import AdminClient

        self.admin = AdminClient(librdkafka_config(dict(java), {}, {}, role="admin"))
        consumer_java = {**java, "group.id": group, "enable.auto.commit": "false"}
        self.consumer = _client("consumer", librdkafka_config(consumer_java, {}, {}, role="consumer"), consumer_java)

    def _wait(self, future):
        from confluent_kafka import KafkaException

        try:
            return future.result(TIMEOUT)
        except KafkaException as exc:
            raise kafka_error(exc.args[0]) from None

    def active_members(self, group: str) -> list[str]:
        from confluent_kafka import KafkaError, KafkaException

        try:
            description = self.admin.describe_consumer_groups([group], request_timeout=10)[group].result(TIMEOUT)
        except KafkaException as exc:
            if exc.args[0].code() == KafkaError.GROUP_ID_NOT_FOUND:
                return []
            raise kafka_error(exc.args[0]) from None
        return [f"(memberId={m.member_id}, groupInstanceId={m.group_instance_id or ''}, clientId={m.client_id}, "
                f"host={m.host})" for m in description.members]

    def topics(self) -> list[str]:
        return list(self.admin.list_topics(timeout=TIMEOUT).topics)

    def partitions(self, topic: str) -> list[int]:
        return sorted(self.consumer.list_topics(topic, timeout=TIMEOUT).topics[topic].partitions)

    def watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        from confluent_kafka import TopicPartition

        return self.consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=TIMEOUT)

    def committed(self, group, tps):
        from confluent_kafka import TopicPartition

        result = self.consumer.committed([TopicPartition(t, p) for t, p in tps], timeout=TIMEOUT)
        return {(tp.topic, tp.partition): (tp.offset if tp.offset >= 0 else None) for tp in result}

    def offsets_for_time(self, tps, timestamp: int):
        from confluent_kafka import TopicPartition

        result = self.consumer.offsets_for_times([TopicPartition(t, p, timestamp) for t, p in tps], timeout=TIMEOUT)
        return {(tp.topic, tp.partition): (tp.offset if tp.offset >= 0 else None) for tp in result}

    def commit(self, group, offsets) -> None:
        from confluent_kafka import KafkaException, TopicPartition

        try:
            self.consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()],
                                 asynchronous=False)
        except KafkaException as exc:
            raise kafka_error(exc.args[0]) from None

    def delete_topics(self, topics: list[str]) -> None:
        for future in self.admin.delete_topics(topics, operation_timeout=30).values():
            self._wait(future)

    def close(self) -> None:
        self.consumer.close()
