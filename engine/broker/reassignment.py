"""Partition reassignment: AlterPartitionReassignments (45), ListPartitionReassignments (46) and
AlterReplicaLogDirs (34), the move of a replica to another log directory of its broker.

A reassignment moves a partition from its current replicas to target replicas: the targets
not yet in the replica set are *adding* (they must catch up), the current replicas not in the
target are *removing* (they leave once the adding ones are in sync). `plan_reassignment` works
that out; `Reassignments.start` applies a plan. Today the broker is the whole cluster, so every
valid target is exactly the live broker(s) it already lives on: the plan adds and removes
nothing and the reassignment is complete at once (nothing is ever listed as ongoing), as a
KRaft controller completes one whose targets are all in sync already. Replication extends
`start` to keep a plan with adding replicas as ongoing until they have caught up.

Checks and texts are the KRaft controller's (ReplicationControlManager): unknown topic, unknown
partition, then the target list (empty, unregistered broker, duplicate broker); a cancel
(replicas null) of a partition with nothing ongoing answers NO_REASSIGNMENT_IN_PROGRESS. Both
APIs need the cluster permission (ALTER, DESCRIBE), refused for the whole request otherwise.

AlterReplicaLogDirs moves a partition to another of the broker's log dirs (Engine.move_partition:
at once, where Kafka copies a future replica in the background); a move to the dir holding it
is done already; a path that is not one of its log.dirs is refused with LOG_DIR_NOT_FOUND
(compared as given: a trailing slash makes another path); an offline dir answers
KAFKA_STORAGE_ERROR, as does any move while a dir is offline (ReplicaManager.alterReplicaLogDirs).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from .. import acls, validation
from ..javacompat import hashmap_order

from ..errors import KafkaError, UnknownTopicOrPartitionError
from ..protocol import ApiKey
from ..protocol import errors as E

log = logging.getLogger("pk.broker")

CLUSTER_DENIED = "Cluster authorization failed."


@dataclass(frozen=True)
class ReassignmentPlan:
    """Where a partition goes: `replicas` while it moves (current then adding, as Kafka orders
    them), `adding` and `removing`; `target` is the replica set once it is done."""

    target: list[int]
    replicas: list[int]
    adding: list[int]
    removing: list[int]

    @property
    def done(self) -> bool:
        return not self.adding and not self.removing


def plan_reassignment(current: list[int], target: list[int]) -> ReassignmentPlan:
    """Kafka's PartitionReassignmentReplicas: the moving replica set is the current replicas
    followed by the targets not yet among them."""
    adding = [r for r in target if r not in current]
    removing = [r for r in current if r not in target]
    return ReassignmentPlan(target=list(target), replicas=list(current) + adding, adding=adding,
                            removing=removing)


class Reassignments:
    def __init__(self, broker):
        self.broker = broker
        self.engine = broker.engine
        # (topic, partition) -> its ongoing plan; empty while one broker is the whole cluster
        self.ongoing: dict[tuple[str, int], ReassignmentPlan] = {}
        broker.register(ApiKey.ALTER_PARTITION_REASSIGNMENTS, self.alter_partition_reassignments)
        broker.register(ApiKey.LIST_PARTITION_REASSIGNMENTS, self.list_partition_reassignments)
        broker.register(ApiKey.ALTER_REPLICA_LOG_DIRS, self.alter_replica_log_dirs)

    # ------------------------------------------------------------------ AlterPartitionReassignments
    async def alter_partition_reassignments(self, request) -> dict:
        body = request.body
        answer = {"throttle_time_ms": 0, "allow_replication_factor_change": body.get(
            "allow_replication_factor_change", True), "error_code": E.NONE, "error_message": None, "responses": []}
        denied = not self.broker.guard.allows_cluster(request, acls.ALTER)
        if denied:
            answer.update(error_code=E.CLUSTER_AUTHORIZATION_FAILED, error_message=CLUSTER_DENIED)
        for topic in body["topics"]:
            partitions = []
            for p in topic["partitions"]:
                code, message = E.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_DENIED
                if not denied and self.broker.zookeeper is not None:
                    code, message = await self._alter_on_cluster(topic["name"], p["partition_index"], p["replicas"])
                elif not denied:
                    code, message = self._alter_one(topic["name"], p["partition_index"], p["replicas"])
                partitions.append({"partition_index": p["partition_index"], "error_code": code,
                                   "error_message": message})
            answer["responses"].append({"name": topic["name"], "partitions": partitions})
        return answer

    def _alter_one(self, topic: str, partition: int, replicas: list[int] | None) -> tuple[int, str | None]:
        """(error code, message) of one partition's change or cancellation."""
        try:
            current = self._replicas(topic, partition)
            if replicas is None:
                self.cancel(topic, partition)
            else:
                self.engine._check_manual_assignment({partition: replicas})  # KRaft's checks and texts
                self.start(topic, partition, plan_reassignment(current, replicas))
        except KafkaError as exc:
            return exc.code, (str(exc) or None)
        return E.NONE, None

    async def _alter_on_cluster(self, topic: str, partition: int, replicas) -> tuple[int, str | None]:
        """ZooKeeper mode: the controller starts (or cancels) the move in ZooKeeper and its later
        passes finish it (controller.py), as Kafka 2.8's; another broker answers NOT_CONTROLLER."""
        zk = self.broker.zookeeper
        if not zk.is_controller:
            return E.NOT_CONTROLLER, None
        if replicas is not None:
            try:
                self._replicas(topic, partition)
                self.engine._check_manual_assignment({partition: replicas})
            except KafkaError as exc:
                return exc.code, (str(exc) or None)
        return await zk.reassign(topic, partition, replicas)

    def _replicas(self, topic: str, partition: int) -> list[int]:
        try:
            assignment = self.engine.topic(topic).assignment
        except UnknownTopicOrPartitionError:
            raise UnknownTopicOrPartitionError(f"Unable to find a topic named {topic}.") from None
        if partition not in assignment:
            raise UnknownTopicOrPartitionError(f"Unable to find partition {topic}:{partition}.")
        return list(assignment[partition])

    def start(self, topic: str, partition: int, plan: ReassignmentPlan) -> None:
        """Apply a plan. A plan that adds no replica completes now (the targets are in sync
        already); with one broker every valid plan is such a plan."""
        self.ongoing.pop((topic, partition), None)
        if not plan.done:
            self.ongoing[(topic, partition)] = plan

    def cancel(self, topic: str, partition: int) -> None:
        if (topic, partition) not in self.ongoing:
            raise _NoReassignmentInProgress()
        del self.ongoing[(topic, partition)]

    # ------------------------------------------------------------------ ListPartitionReassignments
    async def list_partition_reassignments(self, request) -> dict:
        asked = request.body["topics"]
        answer = {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None, "topics": []}
        if not self.broker.guard.allows_cluster(request, acls.DESCRIBE):
            answer.update(error_code=E.CLUSTER_AUTHORIZATION_FAILED, error_message=CLUSTER_DENIED,
                          topics=[{"name": t["name"], "partitions": [
                              {"partition_index": p, "replicas": [], "adding_replicas": [], "removing_replicas": []}
                              for p in t["partition_indexes"]]} for t in asked or []])
            return answer
        wanted = None if asked is None else {(t["name"], p) for t in asked for p in t["partition_indexes"]}
        ongoing = self.ongoing
        if self.broker.zookeeper is not None:
            if not self.broker.zookeeper.is_controller:
                answer.update(error_code=E.NOT_CONTROLLER)
                return answer
            names = sorted({t for t, _ in wanted}) if wanted is not None else self.engine.list_topics()
            moving = await self.broker.zookeeper.ongoing_reassignments(names)
            ongoing = {key: ReassignmentPlan(target=[r for r in a.replicas if r not in a.removing],
                                             replicas=a.replicas, adding=a.adding, removing=a.removing)
                       for key, a in moving.items()}
        by_topic: dict[str, list[dict]] = {}
        for (topic, partition), plan in sorted(ongoing.items()):
            if wanted is None or (topic, partition) in wanted:
                by_topic.setdefault(topic, []).append({
                    "partition_index": partition, "replicas": plan.replicas,
                    "adding_replicas": plan.adding, "removing_replicas": plan.removing})
        answer["topics"] = [{"name": t, "partitions": ps} for t, ps in by_topic.items()]
        return answer


    # ------------------------------------------------------------------ AlterReplicaLogDirs
    async def alter_replica_log_dirs(self, request) -> dict:
        allowed = self.broker.guard.allows_cluster(request, acls.ALTER)
        outcome: dict[tuple[str, int], int] = {}
        for d in request.body["dirs"]:
            for t in d["topics"]:
                for p in t["partitions"]:
                    if not allowed:
                        code = E.CLUSTER_AUTHORIZATION_FAILED
                    else:
                        code = self._move(t["name"], p, d["path"])
                    outcome[(t["name"], p)] = code
        # Kafka answers from a map of partitions grouped by topic: the topics come in the order
        # of the request, a topic's partitions in the map's iteration order
        by_topic: dict[str, list[dict]] = {name: [] for name, _ in outcome}
        for (name, p) in hashmap_order(outcome):
            by_topic[name].append({"partition_index": p, "error_code": outcome[(name, p)]})
        return {"throttle_time_ms": 0, "results": [{"topic_name": n, "partitions": ps} for n, ps in by_topic.items()]}

    def _move(self, topic: str, partition: int, path: str) -> int:
        """ReplicaManager.alterReplicaLogDirs' checks in its order, then the move (Engine.move_partition)."""
        if path not in self.engine.log_dirs:
            return E.LOG_DIR_NOT_FOUND
        if path in self.engine.offline_dirs:
            return E.KAFKA_STORAGE_ERROR
        if not self._hosted(topic, partition):
            return E.UNKNOWN_TOPIC_OR_PARTITION
        if self.engine.log_dir_of(topic, partition) in self.engine.offline_dirs:
            return E.KAFKA_STORAGE_ERROR  # ("Partition ... is offline")
        if self.engine.offline_dirs and self.engine.log_dir_of(topic, partition) != path:
            return E.KAFKA_STORAGE_ERROR  # (no future replica while a dir is offline)
        try:
            if self.engine.move_partition(topic, partition, path):
                log.info("The current replica of %s-%d is moved to %s", topic, partition, path)
        except OSError as exc:
            log.warning("Unable to alter log dirs for %s-%d: %s", topic, partition, exc)
            return E.KAFKA_STORAGE_ERROR
        return E.NONE

    def _hosted(self, topic: str, partition: int) -> bool:
        try:
            validation.validate_topic_name(topic)
            return partition in self.engine.topic(topic).assignment
        except KafkaError:
            return False


class _NoReassignmentInProgress(KafkaError):
    code = E.NO_REASSIGNMENT_IN_PROGRESS
