"""commands/streams_resetter.py's Cluster over confluent-kafka: an AdminClient for the group's
members, the topic list and deletions, a Consumer in the application's group (never joining
it: offsets are committed for assigned partitions) for watermarks, timestamps and commits; and
pk's own wire client for --force's removal of members (LeaveGroup, which librdkafka's admin
API does not offer)."""

from __future__ import annotations

from .kafka_clients import _client, kafka_error, librdkafka_config

TIMEOUT = 60.0
LEAVE_REASON = "member was removed by an admin"  # the admin client's default reason


def _member_text(m) -> str:
    """Kafka 4.4's MemberDescription.toString for a classic group's member (a consumer group's
    member epoch and rack are not in librdkafka's description). Kafka's partitions come in the
    order of an immutable Set.copyOf, which changes with each JVM (a random salt): pk sorts them."""
    tps = sorted((tp.topic, tp.partition) for tp in (m.assignment.topic_partitions if m.assignment else []))
    partitions = ",".join(f"{t}-{p}" for t, p in tps)
    instance = m.group_instance_id or "null"
    return (f"(memberId={m.member_id}, groupInstanceId={instance}, rackId=null, clientId={m.client_id}, "
            f"host={m.host}, assignment=(topicPartitions={partitions}), targetAssignment=Optional.empty, "
            "memberEpoch=null, upgraded=null)")


class KafkaStreamsCluster:
    def __init__(self, java: dict[str, str], group: str):
        from confluent_kafka.admin import AdminClient

        self.java = dict(java)
        self.members: list = []  # the group's members, as active_members last described them
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
        self.members = list(description.members)
        return [_member_text(m) for m in description.members]

    def remove_members(self, group: str) -> None:
        """Admin.removeMembersFromConsumerGroup with no members named (all of them): one
        LeaveGroup to the group's coordinator naming every member described."""
        from pk.engine import protocol as kp

        from .kafka_admin import known_error
        from .wire import WireClient, connection_security

        client = WireClient(self.java["bootstrap.servers"], TIMEOUT, "removeMembersFromConsumerGroup",
                            security=connection_security(self.java))
        try:
            found = client.call(kp.ApiKey.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group]})
            [coordinator] = found["coordinators"]
            if coordinator["error_code"]:
                raise known_error(coordinator["error_code"], coordinator["error_message"])
            answer = client.call(kp.ApiKey.LEAVE_GROUP, 5, {"group_id": group, "members": [
                {"member_id": m.member_id, "group_instance_id": m.group_instance_id or None,
                 "reason": LEAVE_REASON} for m in self.members]}, node=coordinator["node_id"])
            codes = [answer["error_code"]] + [m["error_code"] for m in answer["members"]]
            if any(codes):
                raise known_error(next(c for c in codes if c))
        finally:
            client.close()

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
