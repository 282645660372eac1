"""The share coordinator's APIs (KIP-932's persister calls, broker to broker):
InitializeShareGroupState (83), ReadShareGroupState (84), WriteShareGroupState (85),
DeleteShareGroupState (86) and ReadShareGroupStateSummary (87), answered as Kafka 4.4's share
coordinator answers them.

pk's one broker does not need them for itself (its share-partitions call the store directly),
but a client may send them, and Kafka's answers are a contract: they are served over the same
state, the share-partitions of share_groups.py (`ShareGroupHandlers.partitions`, and the ones
stored in `__share_group_state` before a restart). What a share-partition has beyond pk's own
model, the coordinator's state epoch, the partition leader's epoch and the delivery complete
count, is kept here, in memory (a restart starts them again at 0, 0 and the count of done
records).

What Kafka 4.4 answers (checked with pk's codec against it, tests/test_oracle_share_groups.py):
- an empty group id: no results at all; a negative partition: INVALID_REQUEST, "The partition
  id cannot be a negative number.", then negative state and leader epochs alike;
- Initialize needs an existing topic partition (else UNKNOWN_TOPIC_OR_PARTITION), takes any
  state epoch not below the stored one (FENCED_STATE_EPOCH otherwise), and starts the state
  anew at its start offset (-1 allowed: "not known yet"), nothing in flight;
- Read and Write of a partition never initialized: INVALID_REQUEST ("... on uninitialized
  share partition not allowed."); a leader epoch below the stored one: FENCED_LEADER_EPOCH,
  a higher one is stored; a state epoch below the stored one: FENCED_STATE_EPOCH (a higher one
  is accepted and not stored);
- Write overlays its batches on the stored ones and moves the start offset forward only (-1 or
  a lower one leaves it, and then the delivery complete count too); batches below the start
  offset go;
- ReadSummary never fails on an unknown partition (start offset -1), never fences, and
  answers the delivery complete count from v1 (-1 in v0);
- Delete always succeeds (a tombstone when there was state).
ACLs: CLUSTER_ACTION on the cluster, else every partition CLUSTER_AUTHORIZATION_FAILED.

In ZooKeeper mode the state is the share coordinator's (share_coordinator.py), not the
share-partitions': only the leader of the key's `__share_group_state` partition answers
(NOT_COORDINATOR elsewhere, as Kafka's), and a change is answered once the high watermark
passed its append. `serve` is also how this broker's own share-partitions reach it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from .. import acls
from ..errors import KafkaError
from ..protocol import ApiKey
from ..protocol import errors as E
from ..share_partition import SharePartition
from ..share_state_log import STATE_NAMES, ShareStateValue, overlay
from .share_coordinator import CoordinatorError, NOT_COORDINATOR_MESSAGE, ShareCoordinator
from .share_state import ShareStateStore

NEGATIVE_PARTITION = "The partition id cannot be a negative number."
NEGATIVE_STATE_EPOCH = "The state epoch cannot be a negative number."
NEGATIVE_LEADER_EPOCH = "The leader epoch cannot be a negative number."
FENCED_STATE = "The coordinator rejected the request because the state epoch did not match."
FENCED_LEADER = "The leader epoch in the request is older than the epoch on the broker."
UNKNOWN_PARTITION = "This server does not host this topic-partition."
CLUSTER_DENIED = "Cluster authorization failed."
MESSAGES = {E.NOT_COORDINATOR: NOT_COORDINATOR_MESSAGE,
            E.COORDINATOR_NOT_AVAILABLE: "The coordinator is not available."}


def uninitialized(operation: str) -> str:
    return f"{operation} operation on uninitialized share partition not allowed."


@dataclass
class Epochs:
    """What Kafka's coordinator keeps of a share-partition beside its records."""
    state_epoch: int = 0
    leader_epoch: int = 0
    delivery_complete_count: int = -1


class ShareStateApis:
    def __init__(self, broker, shares):
        self.broker = broker
        self.shares = shares  # share_groups.ShareGroupHandlers
        self.coordinator = ShareCoordinator(broker)  # ZooKeeper mode's state
        self.epochs: dict[tuple[str, uuid.UUID, int], Epochs] = self.coordinator.epochs
        self._written: list = []  # ZooKeeper mode: the appends of the partition being answered
        self._serving = {ApiKey.INITIALIZE_SHARE_GROUP_STATE: (self._initialize_one, {}),
                         ApiKey.READ_SHARE_GROUP_STATE: (self._read_one, READ_EMPTY),
                         ApiKey.WRITE_SHARE_GROUP_STATE: (self._write_one, {}),
                         ApiKey.DELETE_SHARE_GROUP_STATE: (self._delete_one, {}),
                         ApiKey.READ_SHARE_GROUP_STATE_SUMMARY: (self._read_summary_one, SUMMARY_DEFAULTS)}
        for key in self._serving:
            broker.register(key, self.handle)

    @property
    def zk(self) -> bool:
        return self.broker.replication is not None

    async def handle(self, request) -> dict:
        body = request.body
        return await self.serve(request.api_key, request.api_version, body["group_id"], body["topics"], request)

    # ------------------------------------------------------------------ the state of one partition
    def _name(self, topic_id: uuid.UUID) -> str | None:
        return self.broker.data.topic_ids.name_of(topic_id)

    def _partition(self, group: str, topic_id: uuid.UUID, partition: int) -> SharePartition | None:
        """The share-partition's state, if it was ever initialized (pk's own share-partitions are)."""
        if self.zk:
            return self.coordinator.states.get((group, topic_id, partition))
        name = self._name(topic_id)
        if name is None:
            return None
        self.shares._take_saved(group)
        return self.shares.partitions.get((group, name, partition))

    def _epochs(self, key: tuple[str, uuid.UUID, int], sp: SharePartition) -> Epochs:
        found = self.epochs.get(key)
        if found is None:  # one of pk's own share-partitions: as its leader would have written it
            found = self.epochs[key] = Epochs(delivery_complete_count=sp.done_in_flight())
        return found

    def _put(self, group: str, topic_id: uuid.UUID, partition: int, sp: SharePartition) -> None:
        """The share-partition's new state, written to __share_group_state at once."""
        if self.zk:
            self._written.append(self.coordinator.put((group, topic_id, partition), sp))
            return
        shares = self.shares
        key = (group, self._name(topic_id), partition)
        sp.written = True
        sp.changes = shares._persisted.get(key, 0) + 1
        shares._ids[key] = topic_id
        shares.partitions[key] = sp
        if group not in shares.groups:
            from .share_groups import ShareGroup
            shares.groups[group] = ShareGroup(group)
        shares.groups[group].initialized.add((key[1], partition))
        shares._persist()
        self.broker.notify_data()

    async def serve(self, api_key: int, version: int, group_id: str, topics: list, request=None) -> dict:
        """Every partition of the request answered by the API's `_..._one(version, group, topic
        id, partition data)`; CLUSTER_ACTION first (a request of this broker's own
        share-partitions, `request` None, is allowed), no results for an empty group id. A
        partition refused here gets the answer's defaults beside its error. In ZooKeeper mode
        a partition another broker coordinates is NOT_COORDINATOR, and the answer waits for
        the high watermark to pass the appends made."""
        answer_partition, defaults = self._serving[api_key]
        allowed = request is None or self.broker.guard.allows(request, acls.CLUSTER_ACTION, acls.CLUSTER,
                                                              acls.CLUSTER_NAME)
        if not group_id:
            return {"results": []}
        results = []
        waits: list[tuple[list, dict, tuple]] = []
        for topic in topics:
            parts = []
            for p in topic["partitions"]:
                if not allowed:
                    parts.append({"partition": p["partition"], "error_code": E.CLUSTER_AUTHORIZATION_FAILED,
                                  "error_message": CLUSTER_DENIED, **defaults})
                elif p["partition"] < 0:
                    parts.append({"partition": p["partition"], "error_code": E.INVALID_REQUEST,
                                  "error_message": NEGATIVE_PARTITION, **defaults})
                elif self.zk and self.coordinator.coordinator_error((group_id, topic["topic_id"], p["partition"])):
                    parts.append({"partition": p["partition"], "error_code": E.NOT_COORDINATOR,
                                  "error_message": NOT_COORDINATOR_MESSAGE, **defaults})
                else:
                    self._written = []
                    before = self.coordinator.saved_state((group_id, topic["topic_id"], p["partition"]))
                    try:
                        part = {"partition": p["partition"], "error_code": E.NONE, "error_message": None,
                                **answer_partition(version, group_id, topic["topic_id"], p)}
                    except CoordinatorError as exc:
                        part = {"partition": p["partition"], "error_code": exc.code, "error_message": str(exc),
                                **defaults}
                    if self._written:
                        waits.append((self._written, part, before))
                    parts.append(part)
            results.append({"topic_id": topic["topic_id"], "partitions": _java_map_order(parts, "partition")})
        for written, part, before in waits:
            code = await self.coordinator.replicated(written)
            if code != E.NONE:  # not written: the state is what it was (Kafka's runtime reverts it too)
                self.coordinator.restore_state(before)
                part.update(error_code=code, error_message=MESSAGES.get(code),
                            **defaults)
        # Kafka's coordinator answers from HashMaps (topic id -> partition -> result)
        return {"results": _java_map_order(results, "topic_id")}

    @staticmethod
    def _error(code: int, message: str) -> dict:
        return {"error_code": code, "error_message": message}

    # ------------------------------------------------------------------ InitializeShareGroupState
    def _initialize_one(self, version: int, group: str, topic_id: uuid.UUID, p: dict) -> dict:
        if p["state_epoch"] < 0:
            return self._error(E.INVALID_REQUEST, NEGATIVE_STATE_EPOCH)
        name = self._name(topic_id)
        try:
            known = name is not None and p["partition"] < self.broker.engine.topic(name).partitions
        except KafkaError:
            known = False
        if not known:
            return self._error(E.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_PARTITION)
        key = (group, topic_id, p["partition"])
        sp = self._partition(*key)
        if sp is not None and p["state_epoch"] < self._epochs(key, sp).state_epoch:
            return self._error(E.FENCED_STATE_EPOCH, FENCED_STATE)
        start = p["start_offset"]
        self.epochs[key] = Epochs(p["state_epoch"], 0, 0 if start >= 0 else -1)
        self._put(group, topic_id, p["partition"], SharePartition(start))
        return {}

    # ------------------------------------------------------------------ ReadShareGroupState
    def _read_one(self, version: int, group: str, topic_id: uuid.UUID, p: dict) -> dict:
        if p["leader_epoch"] < 0:
            return {**READ_EMPTY, **self._error(E.INVALID_REQUEST, NEGATIVE_LEADER_EPOCH)}
        key = (group, topic_id, p["partition"])
        sp = self._partition(*key)
        if sp is None:
            return {**READ_EMPTY, **self._error(E.INVALID_REQUEST, uninitialized("Read"))}
        epochs = self._epochs(key, sp)
        if p["leader_epoch"] < epochs.leader_epoch:
            return {**READ_EMPTY, **self._error(E.FENCED_LEADER_EPOCH, FENCED_LEADER)}
        if self.zk and p["leader_epoch"] > epochs.leader_epoch:
            # (Kafka writes a ShareUpdate when a read moves the leader epoch: kept here, so that
            # the new leader epoch fences the old leader's writes also after a move)
            epochs.leader_epoch = p["leader_epoch"]
            self._put(group, topic_id, p["partition"], sp)
        epochs.leader_epoch = p["leader_epoch"]
        snapshot = sp.snapshot()
        return {"state_epoch": epochs.state_epoch, "start_offset": snapshot["start_offset"],
                "state_batches": [_wire_batch(b) for b in snapshot["batches"]]}

    # ------------------------------------------------------------------ WriteShareGroupState
    def _write_one(self, version: int, group: str, topic_id: uuid.UUID, p: dict) -> dict:
        if p["state_epoch"] < 0:
            return self._error(E.INVALID_REQUEST, NEGATIVE_STATE_EPOCH)
        if p["leader_epoch"] < 0:
            return self._error(E.INVALID_REQUEST, NEGATIVE_LEADER_EPOCH)
        key = (group, topic_id, p["partition"])
        sp = self._partition(*key)
        if sp is None:
            return self._error(E.INVALID_REQUEST, uninitialized("Write"))
        epochs = self._epochs(key, sp)
        if p["leader_epoch"] < epochs.leader_epoch:
            return self._error(E.FENCED_LEADER_EPOCH, FENCED_LEADER)
        if p["state_epoch"] < epochs.state_epoch:
            return self._error(E.FENCED_STATE_EPOCH, FENCED_STATE)
        epochs.leader_epoch = p["leader_epoch"]
        snapshot = sp.snapshot()
        start = snapshot["start_offset"]
        if p["start_offset"] != -1 and p["start_offset"] >= start:
            start = p["start_offset"]
            epochs.delivery_complete_count = p["delivery_complete_count"] if version >= 1 else -1
        batches = [(b["first_offset"], b["last_offset"], b["delivery_count"],
                    STATE_NAMES.get(b["delivery_state"], "Available")) for b in p["state_batches"]]
        fresh = SharePartition(start)
        ShareStateStore.restore(ShareStateValue(start, overlay(snapshot["batches"], batches)), fresh)
        self._put(group, topic_id, p["partition"], fresh)
        return {}

    # ------------------------------------------------------------------ DeleteShareGroupState
    def _delete_one(self, version: int, group: str, topic_id: uuid.UUID, p: dict) -> dict:
        key = (group, topic_id, p["partition"])
        if self.zk:
            if key in self.coordinator.states:
                self._written.append(self.coordinator.tombstone(key))
            return {}
        if self._partition(*key) is not None:
            name_key = (group, self._name(topic_id), p["partition"])
            shares = self.shares
            try:
                if shares.partitions[name_key].written:
                    shares.store.delete(group, topic_id, p["partition"])
            except (KafkaError, OSError):
                return self._error(E.COORDINATOR_NOT_AVAILABLE, "The coordinator is not available.")
            del shares.partitions[name_key]
            shares._persisted.pop(name_key, None)
        self.epochs.pop(key, None)
        return {}

    # ------------------------------------------------------------------ ReadShareGroupStateSummary
    def _read_summary_one(self, version: int, group: str, topic_id: uuid.UUID, p: dict) -> dict:
        key = (group, topic_id, p["partition"])
        sp = self._partition(*key)
        if sp is None:
            return {"state_epoch": 0, "leader_epoch": 0, "start_offset": -1, "delivery_complete_count": -1}
        epochs = self._epochs(key, sp)
        return {"state_epoch": epochs.state_epoch, "leader_epoch": epochs.leader_epoch,
                "start_offset": sp.start_offset,
                "delivery_complete_count": epochs.delivery_complete_count if version >= 1 else -1}


READ_EMPTY = {"state_epoch": 0, "start_offset": 0, "state_batches": []}
SUMMARY_DEFAULTS = {"state_epoch": 0, "leader_epoch": 0, "start_offset": 0, "delivery_complete_count": -1}


def _java_hash(value) -> int:
    """Java's hashCode of an Integer or of Kafka's Uuid (its two halves' longs XORed, folded)."""
    if isinstance(value, uuid.UUID):
        folded = (value.int >> 64) ^ (value.int & (1 << 64) - 1)
        return ((folded >> 32) ^ folded) & 0xFFFFFFFF
    return value & 0xFFFFFFFF


def _java_map_order(entries: list[dict], field: str) -> list[dict]:
    """The entries in the iteration order of a java.util.HashMap keyed by `field`, filled in
    the entries' order: by bucket of the table's final size, then insertion order (a key put
    twice keeps its first place and its last value)."""
    by_key: dict = {}
    for entry in entries:
        by_key[entry[field]] = entry
    entries = list(by_key.values())
    capacity = 16
    while len(entries) > capacity * 0.75:
        capacity <<= 1

    def bucket(entry: dict) -> int:
        h = _java_hash(entry[field])
        return (h ^ (h >> 16)) & (capacity - 1)
    return [e for _, e in sorted(enumerate(entries), key=lambda pair: (bucket(pair[1]), pair[0]))]


def _wire_batch(batch: tuple[int, int, int, str]) -> dict:
    from ..share_state_log import STATE_CODES
    first, last, count, state = batch
    return {"first_offset": first, "last_offset": last, "delivery_state": STATE_CODES[state],
            "delivery_count": count}

