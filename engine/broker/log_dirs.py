"""What the broker holds on disk and who writes to it: DescribeLogDirs and DescribeProducers,
and a log dir going offline when a write to it fails.

The broker has the log dirs of `log.dirs` (Engine.log_dirs; Engine.log_dir_of says which holds
a partition). DescribeLogDirs answers one result per dir, in log.dirs order, with the
partitions it holds; none is a future replica being moved, and a leader's log has no lag
behind itself, so each partition is answered with its size, offset_lag 0 and is_future_key
false. DescribeProducers lists a partition's idempotent producers from the broker's producer
state (producer_state.py).

A write that fails in the file system takes its log dir offline until the broker restarts
(Kafka's LogDirFailureChannel and ReplicaManager.handleLogDirFailure): the dir's partitions
answer KAFKA_STORAGE_ERROR to every later request for them, DescribeLogDirs says so for the
dir, and the other dirs keep serving. When the last live dir fails the broker halts, as
Kafka's LogManager.handleLogDirFailure does.
"""

from __future__ import annotations

import logging
import os

from .. import acls, validation
from ..errors import KafkaError, KafkaStorageError, UnknownTopicOrPartitionError
from ..protocol import ApiKey
from ..protocol import errors as E

log = logging.getLogger("pk.broker")

NO_COORDINATOR_EPOCH = -1  # a producer that never wrote transaction markers
NO_TXN = -1  # current_txn_start_offset of a producer not inside a transaction


def _halt(code: int) -> None:
    """Kafka's Exit.halt: no shutdown hook, no clean close (the logs are recovered on restart)."""
    logging.shutdown()
    os._exit(code)


class LogDirHandlers:
    def __init__(self, broker):
        self.broker = broker
        self.engine = broker.engine
        broker.register(ApiKey.DESCRIBE_LOG_DIRS, self.describe_log_dirs)
        broker.register(ApiKey.DESCRIBE_PRODUCERS, self.describe_producers)
        self.halt = _halt

    # ------------------------------------------------------------------ failure
    @property
    def offline(self) -> set[str]:
        """The log dirs a failed write took offline."""
        return self.engine.offline_dirs

    def check_online(self, topic: str, partition: int) -> None:
        """KAFKA_STORAGE_ERROR for a partition of an offline log dir (ReplicaManager's
        HostedPartition.Offline)."""
        if self.engine.offline_dirs and self.engine.log_dir_of(topic, partition) in self.engine.offline_dirs:
            raise KafkaStorageError(f"Partition {topic}-{partition} is in an offline log directory")

    def write_failed(self, topic: str, partition: int, exc: KafkaStorageError) -> None:
        """A write to a partition's log failed: its log dir goes offline (once); the broker halts
        when no live dir is left."""
        path = self.engine.log_dir_of(topic, partition)
        if path in self.engine.offline_dirs:
            return
        self.engine.offline_dirs.add(path)
        log.error("Error while appending records to %s-%d in dir %s: %s", topic, partition, path, exc)
        log.warning("Stopping serving replicas in dir %s because the log directory has failed.", path)
        if set(self.engine.log_dirs) <= self.engine.offline_dirs:
            log.critical("Shutdown broker because all log dirs in %s have failed", ", ".join(self.engine.log_dirs))
            self.halt(1)
            return
        log.warning("Stopping serving logs in dir %s", path)
        log.info("Stopped serving replicas in dir %s", path)

    # ------------------------------------------------------------------ DescribeLogDirs
    async def describe_log_dirs(self, request) -> dict:
        """One result per log dir. Topics null: every partition; otherwise the listed partitions
        that exist (unknown ones are left out, as Kafka leaves them out)."""
        wanted = request.body["topics"]
        if not self.broker.guard.allows_cluster(request, acls.DESCRIBE):
            return {"throttle_time_ms": 0, "error_code": E.CLUSTER_AUTHORIZATION_FAILED, "results": []}
        asked = self._partitions_of(wanted)
        return {"throttle_time_ms": 0, "error_code": E.NONE,
                "results": [self._describe_dir(path, asked) for path in self.engine.log_dirs]}

    def _describe_dir(self, path: str, asked: dict[str, list[int]]) -> dict:
        offline = {"error_code": E.KAFKA_STORAGE_ERROR, "log_dir": path, "topics": []}
        if path in self.engine.offline_dirs:
            return offline
        result = {"error_code": E.NONE, "log_dir": path, "topics": [],
                  "total_bytes": -1, "usable_bytes": -1, "is_cordoned": False}
        try:
            stat = os.statvfs(path)
            result["total_bytes"] = stat.f_blocks * stat.f_frsize
            result["usable_bytes"] = stat.f_bavail * stat.f_frsize
            result["topics"] = self._topics(path, asked)
        except OSError:
            return offline
        return result

    def _partitions_of(self, wanted) -> dict[str, list[int]]:
        if wanted is None:
            hosted = {}
            for name in self.engine.list_topics():
                try:
                    hosted[name] = sorted(self.engine.topic(name).assignment)
                except UnknownTopicOrPartitionError:
                    continue  # deleted meanwhile
            return hosted
        asked: dict[str, list[int]] = {}
        for t in wanted:
            asked.setdefault(t["topic"], [])
            asked[t["topic"]] += [p for p in t["partitions"] if p not in asked[t["topic"]]]
        return asked

    def _topics(self, path: str, asked: dict[str, list[int]]) -> list[dict]:
        topics = []
        for name, partitions in asked.items():
            described = []
            for p in partitions:
                if self.engine.log_dir_of(name, p) != path:
                    continue
                try:
                    size = self.broker.data.log(name, p).size_in_bytes()
                except KafkaError:
                    continue  # not hosted here
                described.append({"partition_index": p, "partition_size": size,
                                  "offset_lag": 0, "is_future_key": False})
            if described:
                topics.append({"name": name, "partitions": described})
        return topics

    # ------------------------------------------------------------------ DescribeProducers
    async def describe_producers(self, request) -> dict:
        topics = []
        for t in request.body["topics"]:
            partitions = []
            for p in t["partition_indexes"]:
                result = {"partition_index": p, "error_code": E.NONE, "error_message": None,
                          "active_producers": []}
                try:
                    self.broker.guard.check(request, acls.READ, acls.TOPIC, t["name"])
                    validation.validate_topic_name(t["name"])  # INVALID_TOPIC_EXCEPTION
                    result["active_producers"] = self._active_producers(t["name"], p)
                except KafkaError as exc:
                    result["error_code"] = exc.code
                    result["error_message"] = str(exc) or None
                partitions.append(result)
            topics.append({"name": t["name"], "partitions": partitions})
        return {"throttle_time_ms": 0, "topics": topics}

    def _active_producers(self, topic: str, partition: int) -> list[dict]:
        try:
            plog = self.broker.data.log(topic, partition)
        except UnknownTopicOrPartitionError:
            raise UnknownTopicOrPartitionError() from None  # (Kafka answers no message)
        state = self.broker.data.producers.partition(plog)
        producers = []
        for pid, entry in sorted(state.entries.items()):
            last = entry.batches[-1] if entry.batches else None
            producers.append({"producer_id": pid, "producer_epoch": entry.epoch,
                              "last_sequence": last.last_seq if last else -1,
                              "last_timestamp": entry.last_ms if last else -1,
                              "coordinator_epoch": NO_COORDINATOR_EPOCH,
                              "current_txn_start_offset": state.ongoing.get(pid, NO_TXN)})
        return producers
