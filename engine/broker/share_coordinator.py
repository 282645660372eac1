"""ZooKeeper mode's share coordinator and the share-partitions' persister (KIP-932, as
Kafka 4.4's share-coordinator module and its DefaultStatePersister split them).

- `ShareCoordinator`: the state of each share-partition (start offset, in-flight batches,
  state and leader epochs) lives on the leader of the `__share_group_state` partition its key
  hashes to. That broker loads the partition's states from its (replicated) log when it
  becomes the leader and drops them when it stops; its writes are the leader's appends,
  stamped with its leader epoch and answered once the high watermark passes them (Kafka's
  CoordinatorRuntime appends with acks=-1). share_state_apis.py serves APIs 83-87 over it.
- `SharePersister`: what a share-partition's leader (share_groups.py) calls to read and write
  its state: the state APIs of this broker's coordinator directly when it leads the key's
  state partition, else the same request to the broker that does, over the inter-broker
  connections of interbroker.py.

Without ZooKeeper neither is used: the one broker's share-partitions are their own state
(share_state.py writes them to its local `__share_group_state`).
"""

from __future__ import annotations

import dataclasses
import logging
import time
import uuid

from .. import share_state_log as slog
from ..errors import KafkaError
from ..protocol import ApiKey
from ..protocol import errors as E
from ..share_partition import SharePartition
from .interbroker import CONNECTION_ERRORS, BrokerClients
from .share_state import ShareStateStore

log = logging.getLogger("pk.broker")

STATE_TOPIC = slog.SHARE_GROUP_STATE_TOPIC
NOT_COORDINATOR_MESSAGE = "This is not the correct coordinator."
UNAVAILABLE_MESSAGE = "The coordinator is not available."
# The versions the persister sends (Kafka 4.4's DefaultStatePersister: Write v1 carries the
# delivery complete count).
VERSIONS = {ApiKey.INITIALIZE_SHARE_GROUP_STATE: 0, ApiKey.READ_SHARE_GROUP_STATE: 0,
            ApiKey.WRITE_SHARE_GROUP_STATE: 1, ApiKey.DELETE_SHARE_GROUP_STATE: 0,
            ApiKey.READ_SHARE_GROUP_STATE_SUMMARY: 1}
# A write's errors as Kafka's CoordinatorRuntime maps its append's (see group_state.append_error)
_APPEND_ERRORS = {E.NOT_ENOUGH_REPLICAS: E.COORDINATOR_NOT_AVAILABLE,
                  E.NOT_ENOUGH_REPLICAS_AFTER_APPEND: E.COORDINATOR_NOT_AVAILABLE,
                  E.REQUEST_TIMED_OUT: E.COORDINATOR_NOT_AVAILABLE,
                  E.UNKNOWN_TOPIC_OR_PARTITION: E.COORDINATOR_NOT_AVAILABLE,
                  E.NOT_LEADER_OR_FOLLOWER: E.NOT_COORDINATOR, E.KAFKA_STORAGE_ERROR: E.NOT_COORDINATOR}

Key = tuple[str, uuid.UUID, int]  # (group, topic id, partition)


class CoordinatorError(KafkaError):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


class ShareCoordinator:
    """The share-partition states of the `__share_group_state` partitions this broker leads."""

    def __init__(self, broker):
        self.broker = broker
        self.states: dict[Key, SharePartition] = {}
        self.epochs: dict = {}  # Key -> share_state_apis.Epochs, shared with ShareStateApis
        self.loaded: set[int] = set()
        self._created_ms: dict[Key, int] = {}
        self._snapshot_epochs: dict[Key, int] = {}
        self.timeout_ms = int(broker.config.get("share.coordinator.write.timeout.ms") or 5000)
        broker.leadership_listeners.append(self.on_leadership)

    @property
    def active(self) -> bool:
        return self.broker.replication is not None

    def partition_count(self) -> int | None:
        try:
            return self.broker.engine.topic(STATE_TOPIC).partitions
        except KafkaError:
            return None

    def partition_of(self, key: Key) -> int | None:
        count = self.partition_count()
        return None if count is None else slog.partition_for(*key, count)

    def coordinator_error(self, key: Key) -> int:
        """NONE when this broker leads (and has loaded) the key's state partition."""
        partition = self.partition_of(key)
        if partition is None or partition not in self.loaded \
                or self.broker.internal_leader(STATE_TOPIC, partition) != self.broker.node_id:
            return E.NOT_COORDINATOR
        return E.NONE

    def saved_state(self, key: Key) -> tuple:
        """What `restore_state` puts back if a change of the key is not replicated."""
        epochs = self.epochs.get(key)
        return key, self.states.get(key), None if epochs is None else dataclasses.replace(epochs)

    def restore_state(self, saved: tuple) -> None:
        key, sp, epochs = saved
        for table, value in ((self.states, sp), (self.epochs, epochs)):
            if value is None:
                table.pop(key, None)
            else:
                table[key] = value

    # ------------------------------------------------------------------ loading
    def on_leadership(self, topic: str, partition: int, leader: bool) -> None:
        if topic != STATE_TOPIC:
            return
        for key in [k for k in self.states if self.partition_of(k) == partition]:
            self._forget(key)
        self.loaded.discard(partition)
        if not leader:
            log.info("[ShareCoordinator id=%d] Resigned as the share coordinator of %s-%d", self.broker.node_id,
                     STATE_TOPIC, partition)
            return
        from .share_state_apis import Epochs

        count = 0
        for key, value in self._read(partition).items():
            sp = SharePartition(value.start_offset)
            ShareStateStore.restore(value, sp)
            self.states[key] = sp
            self.epochs[key] = Epochs(value.state_epoch, value.leader_epoch, sp.done_in_flight())
            self._created_ms[key] = value.create_ms
            self._snapshot_epochs[key] = value.snapshot_epoch
            count += 1
        self.loaded.add(partition)
        log.info("[ShareCoordinator id=%d] Elected as the share coordinator of %s-%d: %d share-partition states "
                 "loaded", self.broker.node_id, STATE_TOPIC, partition, count)

    def _forget(self, key: Key) -> None:
        for table in (self.states, self.epochs, self._created_ms, self._snapshot_epochs):
            table.pop(key, None)

    def _read(self, partition: int) -> dict[Key, slog.ShareStateValue]:
        """The states a partition's log ends with (a ShareUpdate over its snapshot, as
        ShareStateStore.load reads the lone broker's topic)."""
        states: dict[Key, slog.ShareStateValue] = {}
        try:
            self.broker.data.log(STATE_TOPIC, partition).each_record(0, lambda rec: slog.fold(states, rec.key,
                                                                                              rec.value))
        except (KafkaError, OSError) as exc:
            log.warning("Cannot read %s-%d: %s", STATE_TOPIC, partition, exc)
        return states

    # ------------------------------------------------------------------ writing
    def put(self, key: Key, sp: SharePartition) -> tuple[tuple[str, int], int, int]:
        """Append the key's new state (a ShareSnapshot with its epochs) as the partition's
        leader and keep it; (partition key, end offset, min ISR) for `replicated`. Raises
        CoordinatorError when this broker cannot append."""
        now = int(time.time() * 1000)
        epochs = self.epochs.get(key)
        created = self._created_ms.setdefault(key, now)
        snapshot_epoch = self._snapshot_epochs[key] = self._snapshot_epochs.get(key, -1) + 1
        snap = sp.snapshot()
        value = slog.ShareStateValue(snap["start_offset"], snap["batches"], snapshot_epoch,
                                     epochs.state_epoch if epochs else 0, epochs.leader_epoch if epochs else 0,
                                     created, now)
        written = self._append(key, slog.encode_snapshot(value), now)
        self.states[key] = sp
        return written

    def tombstone(self, key: Key) -> tuple[tuple[str, int], int, int]:
        written = self._append(key, None, int(time.time() * 1000))
        self._forget(key)
        return written

    def _append(self, key: Key, value: bytes | None, now: int) -> tuple[tuple[str, int], int, int]:
        partition = self.partition_of(key)
        if partition is None:
            raise CoordinatorError(E.COORDINATOR_NOT_AVAILABLE, UNAVAILABLE_MESSAGE)
        data = self.broker.data
        where = (STATE_TOPIC, partition)
        state = data.replica_state(*where)
        if state is None or state.leader != self.broker.node_id:
            raise CoordinatorError(E.NOT_COORDINATOR, NOT_COORDINATOR_MESSAGE)
        plog = data.log(*where)
        min_isr = plog.config["min.insync.replicas"]
        if min_isr > len(state.isr):
            raise CoordinatorError(E.COORDINATOR_NOT_AVAILABLE, UNAVAILABLE_MESSAGE)
        _, last = plog.append_records([(slog.encode_key(*key), value, (), now)])
        self.broker.replication.leader_appended(where, last + 1)
        self.broker.notify_data()
        return where, last + 1, min_isr

    async def replicated(self, written: list) -> int:
        """NONE once the high watermark passed every write, else the error to answer."""
        if not written:
            return E.NONE
        results = [{"error_code": E.NONE} for _ in written]
        await self.broker.replication.wait_for_hw([(where, end, result, min_isr) for (where, end, min_isr), result
                                                   in zip(written, results)], self.timeout_ms)
        for result in results:
            if result["error_code"] != E.NONE:
                return _APPEND_ERRORS.get(result["error_code"], result["error_code"])
        return E.NONE


class SharePersister:
    """A share-partition leader's calls to the share coordinator of its state: one
    partition's Initialize/Read/Write/Delete/ReadSummary, answered as the partition's result of
    the API's response (error_code, error_message and the API's fields)."""

    def __init__(self, broker, apis):
        self.broker = broker
        self.apis = apis  # share_state_apis.ShareStateApis, this broker's coordinator
        self.clients = BrokerClients(f"broker-{broker.node_id}-share-persister")

    async def call(self, api_key: int, group_id: str, topic_id: uuid.UUID, partition: dict) -> dict:
        """One partition's request to its share coordinator. A coordinator not known or not
        reachable, or a state topic not created yet, is COORDINATOR_NOT_AVAILABLE (the caller
        tries again later; the topic is created here, as Kafka's persister's FindCoordinator
        creates it)."""
        coordinator = self.apis.coordinator
        count = coordinator.partition_count()
        if count is None:
            zookeeper = self.broker.zookeeper
            if zookeeper is not None:
                await zookeeper.ensure_internal_topic(STATE_TOPIC)
            return _failed(partition, E.COORDINATOR_NOT_AVAILABLE, UNAVAILABLE_MESSAGE)
        leader = self.broker.internal_leader(STATE_TOPIC, slog.partition_for(group_id, topic_id,
                                                                             partition["partition"], count))
        version = VERSIONS[api_key]
        topics = [{"topic_id": topic_id, "partitions": [partition]}]
        if leader == self.broker.node_id:
            answer = await self.apis.serve(api_key, version, group_id, topics)
        else:
            endpoint = self.broker.replication.brokers.get(leader) if leader >= 0 else None
            if endpoint is None:
                return _failed(partition, E.COORDINATOR_NOT_AVAILABLE, UNAVAILABLE_MESSAGE)
            try:
                answer = await self.clients.call(leader, endpoint, api_key, version,
                                                 {"group_id": group_id, "topics": topics},
                                                 coordinator.timeout_ms / 1000 + 5)
            except CONNECTION_ERRORS as exc:
                log.debug("Share coordinator %d not reachable: %s", leader, exc)
                return _failed(partition, E.COORDINATOR_NOT_AVAILABLE, UNAVAILABLE_MESSAGE)
        for result in answer.get("results", []):
            for part in result["partitions"]:
                if part["partition"] == partition["partition"]:
                    return part
        return _failed(partition, E.COORDINATOR_NOT_AVAILABLE, UNAVAILABLE_MESSAGE)

    def close(self) -> None:
        self.clients.close()


def _failed(partition: dict, code: int, message: str) -> dict:
    return {"partition": partition["partition"], "error_code": code, "error_message": message}
