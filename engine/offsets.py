"""Committed consumer-group offsets, stored as Kafka stores them: OffsetCommit records in
the internal topic `__consumer_offsets`, in the partition Kafka's hashing of the group id
picks. The latest record for a (group, topic, partition) wins; a tombstone deletes it.

Readers keep, per `__consumer_offsets` partition, the offsets seen so far and the position
they read up to, so each lookup only reads what was appended since (`forget` drops that when
the partition's log may have changed under it: a broker losing or gaining its leadership).

Writes go through `write(partition, items)`, by default an append to the engine's log; a
broker's group coordinator replaces it with its own (leader epoch, replication).

Offsets sent with a transaction (TxnOffsetCommit) are appended as Kafka's group coordinator
appends them: a transactional batch of the producer (its id and epoch). Reading, they are held
per producer id (pending: OffsetFetch's require_stable waits) until the transaction's
COMMIT/ABORT marker in the same partition makes them the committed offsets or drops them.
"""

from __future__ import annotations

import time
from typing import NamedTuple

from . import consumer_offsets as codec
from . import records
from .errors import UnknownTopicOrPartitionError
from .topic_names import GROUP_METADATA_TOPIC

TopicPartition = tuple[str, int]


class CommittedOffset(NamedTuple):
    """One committed position, as an OffsetCommitValue holds it (KIP-320: the leader epoch of
    the record at `offset - 1`, -1 when unknown)."""
    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int = -1


class OffsetStore:
    def __init__(self, engine):
        self.engine = engine
        # __consumer_offsets partition -> (next offset to read, {(group, topic, p): CommittedOffset},
        # {producer id: {(group, topic, p): CommittedOffset or None}} of open transactions)
        self._seen: dict[int, tuple[int, dict, dict]] = {}
        self._topic_id: str | None = None  # of the __consumer_offsets `_seen` was read from
        self.write = self._append  # (partition, items) -> (partition, next offset after the batch)

    @property
    def num_partitions(self) -> int:
        """__consumer_offsets' partition count, the topic created again if it was deleted (a
        recreated topic holds no offsets: the cache of the old one is dropped)."""
        try:
            meta = self.engine.topic(GROUP_METADATA_TOPIC)
        except UnknownTopicOrPartitionError:
            self.engine.ensure_offsets_topic()
            meta = self.engine.topic(GROUP_METADATA_TOPIC)
        if meta.topic_id != self._topic_id:
            self._topic_id, self._seen = meta.topic_id, {}
        return meta.partitions

    def partition_for(self, group: str) -> int:
        return codec.partition_for(group, self.num_partitions)

    def forget(self, partition: int) -> None:
        """Read the partition again from its log start next time."""
        self._seen.pop(partition, None)

    def _append(self, partition: int, items: list, **batch_fields) -> tuple[int, int]:
        _, last = self.engine.partition(GROUP_METADATA_TOPIC, partition).append_records(items, **batch_fields)
        return partition, last + 1

    # ------------------------------------------------------------------ writes
    def commit(self, group: str, offsets: dict[TopicPartition, int], member_id: str | None = None,
               generation: int = -1, metadata: str = "") -> None:
        """Append one OffsetCommit record per partition, as one batch (all or nothing)."""
        self.commit_offsets(group, {tp: CommittedOffset(offset, -1, metadata) for tp, offset in offsets.items()})

    def commit_offsets(self, group: str, offsets: dict[TopicPartition, CommittedOffset]) -> tuple[int, int] | None:
        """Commit `offsets` for `group`: one OffsetCommit record per partition, leader epoch and
        metadata included, appended as one batch (all or nothing). The one write path of every
        committer (OffsetCommit, a transaction's offsets once it commits, the engine's consumers).
        Returns where the batch ended, (partition, next offset), None when nothing was written."""
        items = _commit_records(group, offsets)
        if items:
            return self.write(self.partition_for(group), items)
        return None

    def commit_transactional(self, group: str, offsets: dict[TopicPartition, CommittedOffset], producer_id: int,
                             producer_epoch: int) -> tuple[int, int] | None:
        """TxnOffsetCommit's append: the offsets as a transactional batch of the producer,
        committed by its transaction's marker. Returns where the batch ended."""
        items = _commit_records(group, offsets)
        if not items:
            return None
        return self.write(self.partition_for(group), items, producer_id=producer_id, producer_epoch=producer_epoch,
                          transactional=True)

    def delete(self, group: str, partitions: list[TopicPartition] | None = None) -> list[TopicPartition]:
        """Tombstone the group's offsets (all, or the given partitions); returns what was deleted."""
        current = self.committed(group)
        doomed = sorted(current if partitions is None else [tp for tp in partitions if tp in current])
        now = int(time.time() * 1000)
        items = [(codec.offset_commit_key(group, t, p), None, (), now) for t, p in doomed]
        if items:
            self.write(self.partition_for(group), items)
        return doomed

    # ------------------------------------------------------------------ reads
    def _scan(self, partition: int) -> dict:
        log = self.engine.partition(GROUP_METADATA_TOPIC, partition)
        position, table, pending = self._seen.get(partition, (log.log_start_offset, {}, {}))
        batch = [None]  # the producer id of the transactional batch being read, else None

        def on_batch(header, data, pos) -> None:
            batch[0] = header.producer_id if header.is_transactional and not header.is_control else None
            if header.is_control and header.producer_id in pending:
                held = pending.pop(header.producer_id)
                if records.control_type(data, pos, header) == records.CONTROL_COMMIT:
                    for ident, committed in held.items():
                        if committed is None:
                            table.pop(ident, None)
                        else:
                            table[ident] = committed

        def take(rec) -> None:
            if rec.key is None:
                return
            key = codec.decode_key(rec.key)
            if not isinstance(key, codec.OffsetCommitKey):
                return
            ident = (key.group, key.topic, key.partition)
            if batch[0] is not None:  # a transaction's: held until its marker
                pending.setdefault(batch[0], {})[ident] = None if rec.value is None else _committed(rec.value)
            elif rec.value is None:
                table.pop(ident, None)
            else:
                table[ident] = _committed(rec.value)

        self._seen[partition] = (log.each_record(position, take, on_batch), table, pending)
        return table

    def pending(self, group: str) -> set[TopicPartition]:
        """The partitions for which an open transaction holds an offset of the group."""
        partition = self.partition_for(group)
        self._scan(partition)
        return {(t, p) for held in self._seen[partition][2].values() for (g, t, p) in held if g == group}

    def fetch(self, group: str, topic: str, partition: int) -> int | None:
        entry = self._scan(self.partition_for(group)).get((group, topic, partition))
        return entry.offset if entry else None

    def entries(self, group: str) -> dict[TopicPartition, CommittedOffset]:
        """{(topic, partition): CommittedOffset} of the group's commits."""
        table = self._scan(self.partition_for(group))
        return {(t, p): v for (g, t, p), v in table.items() if g == group}

    def committed(self, group: str) -> dict[TopicPartition, int]:
        table = self._scan(self.partition_for(group))
        return {(t, p): v.offset for (g, t, p), v in table.items() if g == group}

    def committed_to(self, topic: str, partitions=None) -> dict[str, list[TopicPartition]]:
        """{group: [(topic, partition)]} of every group's commits to `topic` (in the given
        `__consumer_offsets` partitions, default all)."""
        found: dict[str, list[TopicPartition]] = {}
        for partition in (range(self.num_partitions) if partitions is None else partitions):
            for g, t, p in self._scan(partition):
                if t == topic:
                    found.setdefault(g, []).append((t, p))
        return found

    def groups(self, partitions=None) -> set[str]:
        """Every group id with at least one committed offset (in the given `__consumer_offsets`
        partitions, default all)."""
        found = set()
        for partition in (range(self.num_partitions) if partitions is None else partitions):
            found.update(g for g, _, _ in self._scan(partition))
        return found


def _committed(value: bytes) -> CommittedOffset:
    decoded = codec.decode_offset_commit_value(value)
    return CommittedOffset(decoded.offset, decoded.leader_epoch, decoded.metadata, decoded.commit_timestamp)


def _commit_records(group: str, offsets: dict[TopicPartition, CommittedOffset]) -> list[tuple]:
    """One OffsetCommit record per partition (key, value, headers, timestamp), in partition order."""
    now = int(time.time() * 1000)
    return [(codec.offset_commit_key(group, topic, p),
             codec.offset_commit_value(c.offset, metadata=c.metadata or "", commit_timestamp=now,
                                       leader_epoch=c.leader_epoch),
             (), now)
            for (topic, p), c in sorted(offsets.items())]
