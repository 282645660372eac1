"""ConsumerGroupCommand's GroupBackend over the bundled engine.

Group membership lives in the engine's group files (engine/groups.py), committed offsets in
`__consumer_offsets` (engine/offsets.py). A group *exists* when it has a membership file or
committed offsets, as a Kafka group exists while it has members or offsets; otherwise it is
described as "Dead", which the tool reports as "does not exist". Offsets of partitions that no
longer exist are left out, as a broker drops them when their topic is deleted.

The answers follow what a Kafka 3.7 broker answers: deleting a group with members fails with
GroupNotEmptyException, deleting an unknown one with GroupIdNotFoundException; OffsetDelete
refuses the partitions of topics a live member subscribes to (GroupSubscribedToTopicException)
and unknown partitions (UnknownTopicOrPartitionException).
"""

from __future__ import annotations

import os

from pk.engine.engine import Engine
from pk.engine.errors import UnknownTopicOrPartitionError
from pk.engine.groups import GroupCoordinator, GroupNotEmptyError, GroupState, list_group_ids
from pk.engine.offsets import OffsetStore

from ..consumer_groups import (
    Coordinator,
    GroupDescription,
    MemberDescription,
    TopicPartition,
    group_id_not_found,
    group_not_empty,
    group_subscribed_to_topic,
    unknown_member_id,
    unknown_topic_or_partition,
)

# ListOffsets' special timestamps (ListOffsetsRequest.LATEST_TIMESTAMP / EARLIEST_TIMESTAMP)
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2


class EngineGroupsBackend:
    def __init__(self, data_dir: str | None = None, engine: Engine | None = None):
        self.engine = engine or Engine(data_dir)
        self.offsets = OffsetStore(self.engine)

    # ------------------------------------------------------------------ helpers
    def _partition_counts(self, topics: list[str]) -> dict[str, int]:
        counts = {}
        for topic in topics:
            try:
                counts[topic] = self.engine.topic(topic).partitions
            except UnknownTopicOrPartitionError:
                continue
        return counts

    def _coordinator(self, group_id: str) -> GroupCoordinator:
        return GroupCoordinator(self.engine.groups_dir, group_id, self._partition_counts)

    def _state(self, group_id: str) -> tuple[bool, GroupState]:
        """(exists, membership state), after expiring members whose sessions ended."""
        coordinator = self._coordinator(group_id)
        has_file = os.path.exists(coordinator.path)
        state = coordinator.describe()
        return has_file or bool(state.members) or bool(self.committed_offsets(group_id)), state

    def _log(self, tp: TopicPartition):
        topic, partition = tp
        try:
            self.engine.topic(topic)
        except UnknownTopicOrPartitionError:
            # What Kafka 3.7's admin client reports for a topic the metadata does not know.
            raise unknown_topic_or_partition(
                f"Failed to fetch metadata for partition {topic}-{partition} because metadata for topic "
                f"`{topic}` could not be found") from None
        try:
            return self.engine.partition(topic, partition)
        except UnknownTopicOrPartitionError:
            # (Kafka's admin client retries an unknown partition until --timeout expires.)
            raise unknown_topic_or_partition() from None

    def _partition_exists(self, tp: TopicPartition) -> bool:
        try:
            return tp[1] in self.engine.topic(tp[0]).assignment
        except UnknownTopicOrPartitionError:
            return False

    # ------------------------------------------------------------------ GroupBackend
    def list_groups(self) -> list[tuple[str, str]]:
        with_files = set(list_group_ids(self.engine.groups_dir))
        ids = with_files | {g for g in self.offsets.groups() if self.committed_offsets(g)}
        return [(g, self._coordinator(g).describe().state) for g in sorted(ids)]

    def describe_groups(self, group_ids: list[str]) -> dict[str, GroupDescription]:
        out = {}
        coordinator = Coordinator(None, None, self.engine.node_id)
        for group_id in group_ids:
            exists, state = self._state(group_id)
            if not exists:
                out[group_id] = GroupDescription(group_id, "Dead", "", [], coordinator)
                continue
            # A 3.7 broker describes a group that is not Stable without its protocol and without
            # the members' assignments (GroupMetadata.summary).
            stable = state.state == "Stable"
            members = [MemberDescription(m.member_id, m.client_id, m.client_host,
                                         sorted((t, p) for t, ps in m.assignment.items() for p in ps)
                                         if stable else [])
                       for m in state.members.values()]
            assignor = (state.protocol or "") if stable else ""
            out[group_id] = GroupDescription(group_id, state.state, assignor, members, coordinator)
        return out

    def committed_offsets(self, group_id: str) -> dict[TopicPartition, int]:
        # A Kafka broker drops the committed offsets of partitions whose topic is deleted; the
        # engine keeps them in __consumer_offsets, so leave them out here.
        offsets = self.offsets.committed(group_id)
        partitions = {}
        for topic in {t for t, _ in offsets}:
            try:
                partitions[topic] = set(self.engine.topic(topic).assignment)
            except UnknownTopicOrPartitionError:
                partitions[topic] = set()
        return {tp: o for tp, o in offsets.items() if tp[1] in partitions[tp[0]]}

    def topic_partitions(self, topic: str) -> list[int]:
        try:
            return sorted(self.engine.topic(topic).assignment)
        except UnknownTopicOrPartitionError:
            raise unknown_topic_or_partition() from None

    def log_start_offsets(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: self._log(tp).log_start_offset for tp in partitions}

    def log_end_offsets(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: self._log(tp).log_end_offset for tp in partitions}

    def offsets_for_timestamp(self, partitions: list[TopicPartition],
                              timestamp: int) -> dict[TopicPartition, int | None]:
        out = {}
        for tp in partitions:
            found = self._log(tp).list_offset(timestamp)  # the partition's one ListOffsets lookup
            out[tp] = found[0] if found is not None else None
        return out

    def alter_offsets(self, group_id: str, offsets: dict[TopicPartition, int]) -> None:
        for tp in offsets:
            if not self._partition_exists(tp):
                raise unknown_topic_or_partition()
        # The broker refuses a commit from outside the group once it has members again.
        if self._coordinator(group_id).describe().members:
            raise unknown_member_id()
        self.offsets.commit(group_id, offsets)

    def delete_groups(self, group_ids: list[str]) -> dict:
        results = {}
        for group_id in group_ids:
            exists, _ = self._state(group_id)
            if not exists:
                results[group_id] = group_id_not_found()
                continue
            try:
                self._coordinator(group_id).delete()
            except GroupNotEmptyError:
                results[group_id] = group_not_empty()
                continue
            self.offsets.delete(group_id)
            results[group_id] = None
        return results

    def delete_offsets(self, group_id: str, partitions: list[TopicPartition]):
        errors: dict = {}
        known = []
        for tp in partitions:
            if self._partition_exists(tp):
                known.append(tp)
            else:
                errors[tp] = unknown_topic_or_partition()
        exists, state = self._state(group_id)
        if not exists:
            return group_id_not_found(), {}
        subscribed = {t for m in state.members.values() for t in m.topics}
        eligible = []
        for tp in known:
            if tp[0] in subscribed:
                errors[tp] = group_subscribed_to_topic()
            else:
                eligible.append(tp)
                errors[tp] = None
        if eligible:
            self.offsets.delete(group_id, eligible)
            if not state.members and not self.committed_offsets(group_id):
                # Kafka removes an empty group whose last offsets are gone (cleanupGroupMetadata).
                try:
                    self._coordinator(group_id).delete()
                except GroupNotEmptyError:
                    pass  # a member joined meanwhile: the group lives on
        return None, errors

    def close(self) -> None:
        self.engine.close()
