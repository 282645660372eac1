"""The share coordinator's store: each share-partition's state kept in `__share_group_state`
as Kafka 4.4 keeps it (engine/share_state_log.py's records), so that a restarted broker
carries on where its share groups were: acknowledged and archived records are not delivered
again, delivery counts are kept, records that were acquired come back AVAILABLE.

pk writes a ShareSnapshot record after every change a share coordinator would persist (an
acknowledgement, a release, a lock timing out, the start offset moved) and never a
ShareUpdate; it reads both. The topic is created on first write with Kafka's settings
(compacted, `share.coordinator.state.topic.num.partitions` partitions).
"""

from __future__ import annotations

import logging
import time
import uuid

from .. import share_state_log as slog
from ..errors import KafkaError, TopicExistsError, UnknownTopicOrPartitionError
from ..share_partition import InFlight, SharePartition

log = logging.getLogger("pk.broker")


class ShareStateStore:
    def __init__(self, broker):
        self.broker = broker
        self.engine = broker.engine
        try:
            self.num_partitions = int(broker.config.get("share.coordinator.state.topic.num.partitions")
                                      or slog.DEFAULT_NUM_PARTITIONS)
        except (TypeError, ValueError):
            self.num_partitions = slog.DEFAULT_NUM_PARTITIONS
        self._created_ms: dict[tuple[str, uuid.UUID, int], int] = {}
        self._epochs: dict[tuple[str, uuid.UUID, int], int] = {}

    def _partitions(self) -> int | None:
        try:
            return self.engine.topic(slog.SHARE_GROUP_STATE_TOPIC).partitions
        except UnknownTopicOrPartitionError:
            return None

    def _local_only(self) -> None:
        """In ZooKeeper mode the topic is replicated and written by its leaders' share
        coordinators (share_coordinator.py), never by this lone-broker store."""
        if self.broker.replication is not None:
            raise KafkaError(f"{slog.SHARE_GROUP_STATE_TOPIC} is written by its share coordinators")

    def ensure_topic(self) -> int:
        self._local_only()
        count = self._partitions()
        if count is None:
            try:
                self.engine.create_topic(slog.SHARE_GROUP_STATE_TOPIC, self.num_partitions, 1, configs={
                    "cleanup.policy": "compact", "compression.type": "uncompressed", "min.insync.replicas": "1",
                    "segment.bytes": "104857600", "unclean.leader.election.enable": "false"})
            except TopicExistsError:
                pass  # created meanwhile by another process on the data dir
            count = self._partitions() or self.num_partitions
        return count

    # ------------------------------------------------------------------ reading back
    def load(self) -> dict[tuple[str, uuid.UUID, int], slog.ShareStateValue]:
        """Every share-partition's last state, by (group, topic id, partition)."""
        states: dict[tuple[str, uuid.UUID, int], slog.ShareStateValue] = {}
        count = self._partitions()
        if count is None:
            return states
        for p in range(count):
            try:
                self.broker.data.log(slog.SHARE_GROUP_STATE_TOPIC, p).each_record(
                    0, lambda rec: slog.fold(states, rec.key, rec.value))
            except (KafkaError, OSError) as exc:
                log.warning("Cannot read %s-%d: %s", slog.SHARE_GROUP_STATE_TOPIC, p, exc)
        for key, value in states.items():
            self._created_ms[key] = value.create_ms
            self._epochs[key] = value.snapshot_epoch
        return states

    @staticmethod
    def restore(value: slog.ShareStateValue, sp: SharePartition) -> None:
        """Put a stored state into a fresh SharePartition."""
        sp.start_offset = sp.end_offset = value.start_offset
        for first, last, count, state in value.batches:
            for offset in range(max(first, value.start_offset), last + 1):
                sp.in_flight[offset] = InFlight(state if state != "Acquired" else "Available", count)
            sp.end_offset = max(sp.end_offset, last + 1)
        sp.written = True

    # ------------------------------------------------------------------ writing
    def write(self, group_id: str, topic_id: uuid.UUID, partition: int, sp: SharePartition) -> None:
        count = self.ensure_topic()
        key = (group_id, topic_id, partition)
        now = int(time.time() * 1000)
        created = self._created_ms.setdefault(key, now)
        epoch = self._epochs[key] = self._epochs.get(key, -1) + 1
        start, batches, _ = sp.stored_state()
        value = slog.ShareStateValue(start, batches, epoch, 0, 0, created, now)
        target = slog.partition_for(group_id, topic_id, partition, count)
        plog = self.broker.data.log(slog.SHARE_GROUP_STATE_TOPIC, target)
        plog.append_records([(slog.encode_key(group_id, topic_id, partition), slog.encode_snapshot(value), (), now)])
        sp.stored(start, sp.start_offset)

    def delete(self, group_id: str, topic_id: uuid.UUID, partition: int) -> None:
        """A tombstone for the share-partition's state (its group was deleted)."""
        self._local_only()
        count = self._partitions()
        key = (group_id, topic_id, partition)
        self._created_ms.pop(key, None)
        self._epochs.pop(key, None)
        if count is None:
            return
        plog = self.broker.data.log(slog.SHARE_GROUP_STATE_TOPIC, slog.partition_for(group_id, topic_id, partition,
                                                                                     count))
        plog.append_records([(slog.encode_key(group_id, topic_id, partition), None, (), int(time.time() * 1000))])

