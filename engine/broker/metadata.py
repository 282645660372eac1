"""Handlers of the cluster's description: Metadata and DescribeTopicPartitions (KIP-966).

A lone broker leads every partition, alone in its ISR, with leader epoch 0. In ZooKeeper mode
the brokers are the registered ones and a replicated partition's leader, leader epoch and
ISR are its state znode's (replication.py); replicas are the topic's assignment. Without an authorizer, asked for authorized operations, the broker
answers every operation Kafka grants a super user; not asked, INT32_MIN. With one, topics the
caller may not DESCRIBE are left out of "all topics" and refused when named, and auto-creation
needs CREATE on the cluster or the topic.
"""

from __future__ import annotations

import uuid

from .. import acls, topic_names
from ..errors import InvalidTopicError, KafkaError, KafkaStorageError, UnknownTopicOrPartitionError
from ..protocol import ApiKey
from ..protocol.messages import INT32_MIN
from ..protocol import errors as E
from .topic_ids import ZERO

# Kafka's AclOperation codes as a bitfield (bit n = code n), what Kafka 4.4 reports for a user
# allowed everything: a topic READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS,
# ALTER_CONFIGS (the cluster's: the authorizer's Guard.operations).
TOPIC_OPERATIONS = 3576
# Kafka's max.request.partition.size.limit: the most partitions one DescribeTopicPartitions
# answer holds.
MAX_PARTITIONS_PER_RESPONSE = 2000


class MetadataHandlers:
    def __init__(self, broker, data):
        self.broker = broker
        self.engine = broker.engine
        self.data = data  # logs, topic ids and leader epochs
        broker.register(ApiKey.METADATA, self.metadata)
        broker.register(ApiKey.DESCRIBE_TOPIC_PARTITIONS, self.describe_topic_partitions)

    def _broker_entry(self, request) -> dict:
        host, port = self.broker.endpoint(request)  # of the listener the request came in on
        return {"node_id": self.broker.node_id, "host": host, "port": port, "rack": self.broker.rack_of(self.broker.node_id)}

    def _partition(self, topic: str, partition: int, assignment: dict | None = None) -> dict:
        node = self.broker.node_id
        state = self.data.replica_state(topic, partition)
        if state is None:
            try:
                self.broker.log_dirs.check_online(topic, partition)
            except KafkaStorageError:
                # Kafka 4.4's controller moves the leadership off a replica in an offline dir (a
                # new leader epoch, no leader, the lone ISR member moved to the eligible leader
                # replicas: tests/test_oracle_jbod.py) and reports it offline.
                return {"error_code": E.LEADER_NOT_AVAILABLE, "partition_index": partition, "leader_id": -1,
                        "leader_epoch": self.data.leader_epoch(topic, partition) + 1,
                        "replica_nodes": [node], "isr_nodes": [], "offline_replicas": [node]}
            return {"error_code": E.NONE, "partition_index": partition, "leader_id": node,
                    "leader_epoch": self.data.leader_epoch(topic, partition),
                    "replica_nodes": [node], "isr_nodes": [node], "offline_replicas": []}
        replication = self.broker.replication
        # ZooKeeper's assignment (the local one follows it); the local one before a state is known
        replicas = list(state.replicas or (assignment or {}).get(partition, ()))
        # Metadata, which Kafka 2.8's tools read, gets the ISR as Kafka 2.8 keeps it (never
        # empty); DescribeTopicPartitions, Kafka 4.4's, gets 4.4's with the ELR (_described_partition).
        return {"error_code": E.NONE if state.leader >= 0 else E.LEADER_NOT_AVAILABLE,
                "partition_index": partition, "leader_id": state.leader, "leader_epoch": state.leader_epoch,
                "replica_nodes": replicas, "isr_nodes": list(state.isr or state.zk_isr),
                "offline_replicas": [r for r in replicas if not replication.live(r)]}

    def _described_partition(self, topic: str, partition: int, assignment: dict) -> dict:
        """A partition as DescribeTopicPartitions shows it, with KIP-966's eligible leader
        replicas. In ZooKeeper mode they are the controller's, from the state znode, with Kafka
        4.4's ISR (empty while the ELR holds the partition's last members). On a broker of its
        own only a replica in an offline dir is one (Kafka 4.4's controller moves the lone ISR
        member there, and this API reports no error for a leaderless partition)."""
        described = {**self._partition(topic, partition, assignment), "eligible_leader_replicas": [],
                     "last_known_elr": []}
        state = self.data.replica_state(topic, partition)
        if state is not None:
            described.update(isr_nodes=list(state.isr), eligible_leader_replicas=list(state.elr),
                             last_known_elr=list(state.last_known_elr))
        elif described["leader_id"] == -1:
            described.update(error_code=E.NONE, eligible_leader_replicas=list(described["offline_replicas"]),
                             last_known_elr=list(described["offline_replicas"]))
        return described

    def brokers(self, request) -> list[dict]:
        """This broker (at the listener the request came in on), and in ZooKeeper mode every
        other registered broker."""
        entries = [self._broker_entry(request)]
        replication = self.broker.replication
        if replication is not None:
            entries += [{"node_id": b, "host": host, "port": port, "rack": self.broker.rack_of(b)}
                        for b, (host, port) in sorted(replication.brokers.items()) if b != self.broker.node_id]
        return sorted(entries, key=lambda e: e["node_id"])

    def _unknown(self, name: str | None, code: int = E.UNKNOWN_TOPIC_OR_PARTITION,
                 topic_id: uuid.UUID = ZERO) -> dict:
        return {"error_code": code, "name": name, "topic_id": topic_id,
                "is_internal": name is not None and topic_names.is_internal(name), "partitions": [],
                "topic_authorized_operations": INT32_MIN}

    def topic_metadata(self, name: str, operations: int = INT32_MIN) -> dict:
        try:
            meta = self.engine.topic(name)
        except UnknownTopicOrPartitionError:
            return self._unknown(name, _unknown_code(name))
        return {
            "error_code": E.NONE, "name": name, "topic_id": self.data.topic_ids.uuid_of(meta.topic_id),
            "is_internal": topic_names.is_internal(name),
            "partitions": [self._partition(name, p, meta.assignment) for p in sorted(meta.assignment)],
            "topic_authorized_operations": operations,
        }

    # ------------------------------------------------------------------ Metadata
    async def metadata(self, request) -> dict:
        body = request.body
        version = request.api_version
        requested = body["topics"]
        operations = TOPIC_OPERATIONS if body["include_topic_authorized_operations"] else INT32_MIN
        topics = []
        by_id: dict[str, uuid.UUID] = {}  # the names asked for by topic id
        if requested is None or (version == 0 and not requested):
            names = self.engine.list_topics()  # all topics (v0: an empty list means all)
        else:
            names = []
            for wanted in requested:
                if wanted["name"] is not None:
                    names.append(wanted["name"])
                    continue
                # v10+: a topic named by its id (Kafka lists the unknown ids first)
                name = self.data.topic_ids.name_of(wanted["topic_id"])
                if name is None:  # (a name may be null in the answer only from v12)
                    topics.append(self._unknown(None if version >= 12 else "", E.UNKNOWN_TOPIC_ID,
                                                wanted["topic_id"]))
                else:
                    names.append(name)
                    by_id[name] = wanted["topic_id"]
        guard = self.broker.guard
        denied: list[str] = []
        if guard.enabled:  # topics the caller may not DESCRIBE: hidden from "all", refused when named
            visible = guard.allowed_names(request, acls.DESCRIBE, acls.TOPIC, names)
            denied = [] if requested is None or (version == 0 and not requested) else \
                [n for n in names if n not in visible]
            names = [n for n in names if n in visible]
        created: set[str] = set()
        if requested and body["allow_auto_topic_creation"] and self.broker.config.get_bool("auto.create.topics.enable"):
            creatable = self._creatable(request, names)
            denied += [n for n in names if n not in creatable]
            names = [n for n in names if n in creatable]
            created = {name for name in names if await self._auto_create(name)}
        # Kafka (KRaft) answers the request that auto-creates a topic with
        # UNKNOWN_TOPIC_OR_PARTITION (the controller creates it meanwhile); clients retry.
        topics += [self._unknown(n) if n in created else self.topic_metadata(n, self._operations(request, n, operations))
                   for n in names]
        # a topic asked for by id and refused keeps its id (ids are not secret) but not its name
        # (KafkaApis.handleTopicMetadataRequest)
        topics += [self._unknown(n, E.TOPIC_AUTHORIZATION_FAILED) if n not in by_id else
                   self._unknown(None if version >= 12 else "", E.TOPIC_AUTHORIZATION_FAILED, by_id[n])
                   for n in denied]
        cluster_operations = INT32_MIN
        if body["include_cluster_authorized_operations"]:
            # KafkaApis: asked but without cluster DESCRIBE is 0 operations (not "not asked")
            cluster_operations = guard.operations(request, acls.CLUSTER, acls.CLUSTER_NAME) if guard.allows(
                request, acls.DESCRIBE, acls.CLUSTER, acls.CLUSTER_NAME) else 0
        return {
            "throttle_time_ms": 0,
            "brokers": self.brokers(request),
            "cluster_id": self.engine.cluster_id,
            "controller_id": self.controller_id(),
            "topics": topics,
            "cluster_authorized_operations": cluster_operations,
            "error_code": E.NONE,
        }

    def controller_id(self) -> int:
        """In ZooKeeper mode the broker /controller names (controller.py answers ElectLeaders and
        reassignments there; the others say NOT_CONTROLLER, as Kafka 2.8's brokers do)."""
        zk = self.broker.zookeeper
        if zk is None:
            return self.broker.node_id
        return zk.controller_id if zk.controller_id >= 0 else self.broker.node_id

    def _operations(self, request, name: str, asked: int) -> int:
        """topic_authorized_operations: `asked` (everything, or INT32_MIN when not asked) without
        an authorizer; what the caller may do on the topic with one."""
        if asked == INT32_MIN or not self.broker.guard.enabled:
            return asked
        return self.broker.guard.operations(request, acls.TOPIC, name)

    def _creatable(self, request, names: list[str]) -> set[str]:
        """The names that exist or that the caller may auto-create (cluster or topic CREATE)."""
        guard = self.broker.guard
        missing = [n for n in names if not self.engine.store.exists(n)] if guard.enabled else []
        if not missing or guard.allows(request, acls.CREATE, acls.CLUSTER, acls.CLUSTER_NAME):
            return set(names)
        allowed = guard.allowed_names(request, acls.CREATE, acls.TOPIC, missing)
        return {n for n in names if n not in missing or n in allowed}

    async def _auto_create(self, name: str) -> bool:
        """Create a topic a Metadata request names; True when this call created it. An internal
        topic is created as its coordinator creates it (Kafka's AutoTopicCreationManager:
        offsets.topic.num.partitions or transaction.state.log.num.partitions and the coordinator's
        topic configs), never with num.partitions: a client may delete it (Kafka 4.4 allows that)."""
        try:
            self.engine.topic(name)
            return False
        except UnknownTopicOrPartitionError:
            pass
        try:
            if topic_names.is_internal(name):
                return await self._create_internal(name)
            self.engine.create_topic(name)
            return True
        except KafkaError:
            return False  # invalid name, or created meanwhile: the metadata answer tells

    async def _create_internal(self, name: str) -> bool:
        if self.broker.zookeeper is not None:  # replicated, in ZooKeeper (Kafka 2.8's createInternalTopic)
            return await self.broker.zookeeper.ensure_internal_topic(name)
        if name == topic_names.GROUP_METADATA_TOPIC:
            self.engine.ensure_offsets_topic()
        elif name == topic_names.SHARE_GROUP_STATE_TOPIC:
            self.broker.share_groups.store.ensure_topic()
        else:
            self.broker.transactions.ensure_state_topic()
        return True

    # ------------------------------------------------------------------ DescribeTopicPartitions
    async def describe_topic_partitions(self, request) -> dict:
        """Kafka's DescribeTopicPartitionsRequestHandler: topics sorted by name, from the
        cursor on, at most response_partition_limit partitions (and at most 2000); the next
        cursor says where the answer stopped."""
        body = request.body
        cursor = body["cursor"]
        start_topic = cursor["topic_name"] if cursor is not None else ""
        fetch_all = not body["topics"]
        if fetch_all:
            names = [n for n in self.engine.list_topics() if n >= start_topic]
        else:
            names = sorted({t["name"] for t in body["topics"] if t["name"] >= start_topic})
        if cursor is not None and ((not fetch_all and start_topic not in names) or cursor["partition_index"] < 0):
            return {"throttle_time_ms": 0, "next_cursor": None,
                    "topics": [{**self._unknown(t["name"], E.INVALID_REQUEST), "topic_authorized_operations": INT32_MIN}
                               for t in body["topics"]]}
        guard = self.broker.guard
        remaining = max(min(MAX_PARTITIONS_PER_RESPONSE, body["response_partition_limit"]), 1)
        topics = []
        next_cursor = None
        for name in names:
            if remaining == 0:
                next_cursor = {"topic_name": name, "partition_index": 0}
                break
            if guard.enabled and not guard.allows(request, acls.DESCRIBE, acls.TOPIC, name):
                if not fetch_all:  # hidden from a listing, refused when named
                    topics.append(self._unknown(name, E.TOPIC_AUTHORIZATION_FAILED))
                continue
            try:
                meta = self.engine.topic(name)
            except UnknownTopicOrPartitionError:
                if not fetch_all:
                    topics.append({**self._unknown(name, _unknown_code(name)),
                                   "topic_authorized_operations": TOPIC_OPERATIONS})
                continue
            first = cursor["partition_index"] if cursor is not None and name == start_topic else 0
            indexes = sorted(meta.assignment)
            shown = [p for p in indexes if p >= first][:remaining]
            topics.append({"error_code": E.NONE, "name": name,
                           "topic_id": self.data.topic_ids.uuid_of(meta.topic_id),
                           "is_internal": topic_names.is_internal(name),
                           "partitions": [self._described_partition(name, p, meta.assignment) for p in shown],
                           "topic_authorized_operations": self._operations(request, name, TOPIC_OPERATIONS)})
            if shown and shown[-1] != indexes[-1]:
                next_cursor = {"topic_name": name, "partition_index": shown[-1] + 1}
                break
            remaining -= len(shown)
        return {"throttle_time_ms": 0, "topics": topics, "next_cursor": next_cursor}


def _unknown_code(name: str) -> int:
    try:
        topic_names.validate(name)
    except InvalidTopicError:
        return E.INVALID_TOPIC_EXCEPTION
    return E.UNKNOWN_TOPIC_OR_PARTITION
