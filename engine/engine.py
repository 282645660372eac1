"""The bundled engine: one data directory laid out as a Kafka log dir, usable by several
processes at once.

    <data dir>/meta.properties               node.id 0 and the cluster id
    <data dir>/<topic>-<partition>/          segments in Kafka's format (see log.py)
    <data dir>/*-checkpoint                  Kafka's offset checkpoint files
    <data dir>/.pk/topics/<topic>.json       topic metadata (see metadata.py)
    <data dir>/.pk/admin.lock                serialises topic create/delete/alter

The broker may have further log dirs (`log.dirs`, Kafka's JBOD): each holds partition
directories, its own checkpoint files and a meta.properties (same cluster id, its own
directory.id); pk's shared state (.pk/topics, groups, ACLs, ...) stays in the first.
`Engine.log_dir_of` is the one place that says which dir holds a partition.

This is the API the tools' operations call; it never prints and never exits.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid

from . import checkpoint, topic_config, topic_names, validation
from .errors import (
    DataDirError,
    InvalidConfigurationError,
    InvalidReplicaAssignmentError,
    InvalidRequestError,
    InvalidTopicError,
    KafkaError,
    KafkaStorageError,
    PolicyViolationError,
    TopicDeletionDisabledError,
    TopicExistsError,
    UnknownTopicOrPartitionError,
)
from .fileutil import atomic_write, inside, locked
from .log import FAILED_MARK, PartitionLog, create_partition_dir, first_segment_base, partition_dir_name, read_partition_topic_id
from .metadata import TopicMetadata, TopicStore, discover_partition_dirs, new_kafka_uuid
from .replica_assignment import AdminOperationError, BrokerMetadata, assign_replicas_to_brokers
from .paths import default_data_dir, groups_dir, topics_dir

NODE_ID = 0
META_PROPERTIES = "meta.properties"

# Broker settings the engine honours, with Kafka's defaults.
BROKER_DEFAULTS = {
    "num.partitions": "1",
    "default.replication.factor": "1",
    "auto.create.topics.enable": "true",
    "delete.topic.enable": "true",
    "offsets.topic.num.partitions": "50",
    "offsets.topic.segment.bytes": "104857600",
    "log.retention.check.interval.ms": "300000",
}


# Kafka's controller writes at most this many metadata records for one admin request, and
# refuses a request for more partitions at once (before it builds anything for them).
MAX_RECORDS_PER_USER_OP = 10000


def _check_request_size(count: int, what: str) -> None:
    if count > MAX_RECORDS_PER_USER_OP:
        raise PolicyViolationError(f"Excessively large number of {what} per request.")


class Engine:
    def __init__(self, data_dir: str | None = None, broker_config: dict[str, str] | None = None,
                 more_log_dirs: list[str] | None = None):
        self.data_dir = os.path.abspath(data_dir or default_data_dir())
        # log.dirs: the data dir first, then the broker's further dirs (each named once)
        self.log_dirs = list(dict.fromkeys([self.data_dir, *(os.path.abspath(d) for d in more_log_dirs or ())]))
        self.offline_dirs: set[str] = set()  # log dirs a failed write took offline (the broker's)
        self._homes: dict[tuple[str, int], str] = {}  # several log dirs: which one holds a partition
        self.broker_config = {**BROKER_DEFAULTS, **(broker_config or {})}
        self.static_broker_config = dict(self.broker_config)  # broker_config less the dynamic configs
        self.node_id = NODE_ID
        self.cluster_brokers: list[int] | None = None  # ZooKeeper mode: the registered brokers
        self.cluster_racks: dict[int, str | None] = {}  # ... and their racks (broker.rack)
        # ZooKeeper mode: the internal topics are replicated topics created in ZooKeeper when a
        # coordinator first needs them (engine/broker/zookeeper.py), never locally on their own.
        self.internal_topics_replicated = bool(self.broker_config.get("zookeeper.connect"))
        self._pk_dir = os.path.join(self.data_dir, ".pk")
        self.store = TopicStore(topics_dir(self.data_dir))
        self._logs: dict[tuple[str, int], PartitionLog] = {}
        self._retention_on_append = True
        self.writeback_bytes = 0  # PartitionLog.writeback_bytes of the logs opened from now on
        self._prepare_data_dir()

    @property
    def retention_on_append(self) -> bool:
        """Whether appends run the retention checks that are due
        (PartitionLog._maybe_enforce_retention); off when a scheduler runs them (the broker)."""
        return self._retention_on_append

    @retention_on_append.setter
    def retention_on_append(self, on: bool) -> None:
        self._retention_on_append = on
        for log in self._logs.values():
            log.retention_on_append = on

    # ------------------------------------------------------------------ data dir
    def _prepare_data_dir(self) -> None:
        if os.path.exists(self.data_dir) and not os.path.isdir(self.data_dir):
            raise DataDirError(f"Data directory {self.data_dir} is not a directory")
        if os.path.isfile(os.path.join(self.data_dir, META_PROPERTIES)) and os.path.isdir(self.store.directory):
            self.cluster_id = self._read_meta()["cluster.id"]
            self._prepare_more_log_dirs()
            return  # the common case: an initialised directory, nothing to write
        try:
            os.makedirs(self.store.directory, exist_ok=True)
            with locked(self.admin_lock_path):
                fresh = not os.path.isfile(os.path.join(self.data_dir, META_PROPERTIES))
                if fresh:
                    self._write_meta()
                self.cluster_id = self._read_meta()["cluster.id"]
                self._prepare_more_log_dirs()  # before any partition is placed
                if fresh:
                    self.checkpoint_log_start_offsets()  # Kafka's log dirs hold it from the start
                if not self.store.names():
                    self._adopt_kafka_topics()
                if not self.store.exists(topic_names.GROUP_METADATA_TOPIC) and not self.internal_topics_replicated:
                    self._create_offsets_topic()
        except PermissionError:
            raise DataDirError(f"Data directory {self.data_dir} is not writable") from None
        except OSError as exc:
            raise DataDirError(f"Cannot use data directory {self.data_dir}: {exc.strerror}") from None

    def _prepare_more_log_dirs(self) -> None:
        """The broker's further log dirs: each gets a meta.properties as Kafka writes them (the
        first dir's, with a directory.id of its own when it has one) and its checkpoint files;
        then every dir's partition directories are found (LogManager.loadLogs)."""
        if len(self.log_dirs) == 1:
            return
        first = self._read_meta()
        for directory in self.log_dirs[1:]:
            path = os.path.join(directory, META_PROPERTIES)
            try:
                if os.path.exists(directory) and not os.path.isdir(directory):
                    raise DataDirError(f"Data directory {directory} is not a directory")
                os.makedirs(os.path.join(directory, ".pk"), exist_ok=True)
                if not os.path.isfile(path):
                    props = dict(first)
                    if "directory.id" in props:
                        props["directory.id"] = new_kafka_uuid()
                    stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime())
                    text = f"#\n#{stamp}\n" + "".join(f"{k}={v}\n" for k, v in props.items())
                    atomic_write(path, text.encode())
                    checkpoint.rewrite(directory, checkpoint.LOG_START_OFFSET, lambda entries: entries)
            except PermissionError:
                raise DataDirError(f"Data directory {directory} is not writable") from None
            except OSError as exc:
                raise DataDirError(f"Cannot use data directory {directory}: {exc.strerror}") from None
            cluster = self._read_meta(directory)["cluster.id"]
            if cluster != self.cluster_id:  # (Kafka's MetaPropertiesEnsemble.verify)
                raise DataDirError(f"Invalid cluster.id in: {directory}. Expected {self.cluster_id}, but read {cluster}")
        for directory in self.log_dirs:
            for entry in sorted(os.listdir(directory)):
                name, dash, number = entry.rpartition("-")
                if dash and name and number.isdigit() and name != "__cluster_metadata" \
                        and os.path.isdir(os.path.join(directory, entry)):
                    self._homes.setdefault((name, int(number)), directory)

    @property
    def admin_lock_path(self) -> str:
        return os.path.join(self._pk_dir, "admin.lock")

    @property
    def groups_dir(self) -> str:
        """Consumer-group membership files (see groups.py)."""
        return groups_dir(self.data_dir)

    def _write_meta(self) -> None:
        stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime())
        text = (f"#\n#{stamp}\nnode.id={self.node_id}\ndirectory.id={new_kafka_uuid()}\n"
                f"version=1\ncluster.id={new_kafka_uuid()}\n")
        atomic_write(os.path.join(self.data_dir, META_PROPERTIES), text.encode())

    def _read_meta(self, directory: str | None = None) -> dict[str, str]:
        path = os.path.join(directory or self.data_dir, META_PROPERTIES)
        props = {}
        try:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    line = line.strip()
                    if line and not line.startswith(("#", "!")) and "=" in line:
                        key, value = line.split("=", 1)
                        props[key.strip()] = value.strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise DataDirError(f"Cannot read {path}: {exc}") from None
        if "cluster.id" not in props:
            raise DataDirError(f"{path} is corrupt: it has no cluster.id")
        return props

    def _adopt_kafka_topics(self) -> None:
        """A Kafka log dir (a copy of a broker's) used for the first time: its partition
        directories become pk topics (metadata.discover_partition_dirs)."""
        for meta in discover_partition_dirs(self.data_dir):
            if meta.name == topic_names.GROUP_METADATA_TOPIC:
                count = max(meta.partitions, int(self.broker_config["offsets.topic.num.partitions"]))
                meta.assignment = {p: [self.node_id] for p in range(count)}
                meta.configs = {"cleanup.policy": "compact", "compression.type": "producer",
                                "segment.bytes": self.broker_config["offsets.topic.segment.bytes"]}
            for p in meta.assignment:
                if not os.path.isdir(os.path.join(self.data_dir, partition_dir_name(meta.name, p))):
                    create_partition_dir(self.data_dir, meta.name, p, meta.topic_id)
            self.store.put(meta)

    def ensure_offsets_topic(self) -> None:
        """Create `__consumer_offsets` if it is missing: a client may delete it (Kafka 4.4 allows
        that), and Kafka's group coordinator creates it again when a group needs it. In ZooKeeper
        mode only FindCoordinator creates it (in ZooKeeper, replicated): nothing happens here."""
        if self.store.exists(topic_names.GROUP_METADATA_TOPIC) or self.internal_topics_replicated:
            return
        with locked(self.admin_lock_path):
            if not self.store.exists(topic_names.GROUP_METADATA_TOPIC):
                self._create_offsets_topic()

    def _create_offsets_topic(self) -> None:
        count = int(self.broker_config["offsets.topic.num.partitions"])
        self._create_locked(TopicMetadata(
            name=topic_names.GROUP_METADATA_TOPIC,
            topic_id=new_kafka_uuid(),
            assignment={p: [self.node_id] for p in range(count)},
            configs={
                "cleanup.policy": "compact",
                "compression.type": "producer",
                "segment.bytes": self.broker_config["offsets.topic.segment.bytes"],
            },
        ))

    # ------------------------------------------------------------------ log dirs
    def log_dir_of(self, topic: str, partition: int) -> str:
        """The log dir holding a partition's directory (the data dir when there is one dir, or
        when no dir holds it yet)."""
        if len(self.log_dirs) == 1:
            return self.data_dir
        home = self._homes.get((topic, partition))
        if home is None:
            return self.data_dir
        return home

    def _new_home(self, topic: str, partition: int) -> str:
        """The live log dir a new partition goes to: the one holding the fewest partitions, the
        first listed on a tie (Kafka's LogManager.nextLogDirs, whose ties fall as a hash map
        iterates)."""
        if len(self.log_dirs) == 1:
            return self.data_dir
        counts = {d: 0 for d in self.log_dirs if d not in self.offline_dirs}
        if not counts:
            raise KafkaStorageError(f"No log directories available. Tried {', '.join(self.log_dirs)}")
        for home in self._homes.values():
            if home in counts:
                counts[home] += 1
        home = min(counts, key=counts.get)  # (min keeps the first of equals)
        self._homes[(topic, partition)] = home
        return home

    def update_checkpoint(self, name: str, changes: dict[tuple[str, int], int | None]) -> None:
        """Set (None: remove) entries of a checkpoint file: each in its partition's log dir."""
        if len(self.log_dirs) == 1:
            checkpoint.update(self.data_dir, name, changes)
            return
        by_dir: dict[str, dict] = {}
        for key, offset in changes.items():
            by_dir.setdefault(self.log_dir_of(*key), {})[key] = offset
        for directory, entries in by_dir.items():
            if directory not in self.offline_dirs:
                checkpoint.update(directory, name, entries)

    def read_checkpoint(self, name: str) -> dict[tuple[str, int], int]:
        """A checkpoint file's entries over every log dir (each dir's for its own partitions)."""
        entries = {}
        for directory in self.log_dirs:
            for key, offset in checkpoint.read(os.path.join(directory, name)).items():
                if self.log_dir_of(*key) == directory:
                    entries[key] = offset
        return entries

    # ------------------------------------------------------------------ queries
    @property
    def live_brokers(self) -> list[int]:
        """This broker; in ZooKeeper mode every registered broker (set by the broker's sync)."""
        return list(self.cluster_brokers) if self.cluster_brokers else [self.node_id]

    def list_topics(self) -> list[str]:
        return self.store.names()

    def topic(self, name: str) -> TopicMetadata:
        return self.store.get(name)

    def topic_config(self, name: str) -> dict:
        """Effective typed configs of a topic (overrides, else broker settings, else defaults)."""
        return topic_config.effective(self.topic(name).configs, self.broker_config)

    # ------------------------------------------------------------------ admin
    def create_topic(self, name: str, num_partitions: int = -1, replication_factor: int = -1,
                     assignment: dict[int, list[int]] | None = None,
                     configs: dict[str, str] | None = None, *, validate_only: bool = False) -> TopicMetadata:
        """Create a topic, checking what Kafka's controller checks, in its order
        (validate_only: check everything, create nothing)."""
        configs = dict(configs or {})
        with locked(self.admin_lock_path):
            validation.validate_topic_name(name)
            existing = self.store.names()
            if name in existing:
                raise TopicExistsError(f"Topic '{name}' already exists.")
            if name == topic_names.CLUSTER_METADATA_TOPIC:
                raise InvalidRequestError(f"Creation of internal topic {name} is prohibited.")
            if topic_names.has_collision_chars(name):
                unified = topic_names.unify_collision_chars(name)
                for other in existing:
                    if topic_names.unify_collision_chars(other) == unified:
                        raise InvalidTopicError(f"Topic '{name}' collides with existing topic: {other}")
            validation.validate_topic_configs(configs)
            if assignment:
                _check_request_size(len(assignment), "partitions")
                assignment = self._check_manual_assignment(assignment)
            else:
                assignment = self._place(name, num_partitions, replication_factor)
            if 1 + len(assignment) + len(configs) > MAX_RECORDS_PER_USER_OP:  # the topic's records, all in one batch
                raise PolicyViolationError("Unable to perform excessively large batch operation.")
            meta = TopicMetadata(name=name, topic_id=new_kafka_uuid(), assignment=assignment,
                                 configs={k: str(v) for k, v in configs.items()})
            if not validate_only:
                self._create_locked(meta)
            return meta

    def _place(self, name: str, num_partitions: int, replication_factor: int) -> dict[int, list[int]]:
        validation.validate_replication_factor(replication_factor)
        validation.validate_partition_count(num_partitions)
        if num_partitions == -1:
            num_partitions = int(self.broker_config["num.partitions"])
        _check_request_size(num_partitions, "partitions")
        if replication_factor == -1:
            replication_factor = int(self.broker_config["default.replication.factor"])
        brokers = self.live_brokers
        validation.validate_replicas_available(replication_factor, len(brokers))
        if len(brokers) == 1:
            return {p: brokers[:replication_factor] for p in range(num_partitions)}
        # Several brokers (ZooKeeper mode): Kafka's assignment, random start, rack-aware when
        # the brokers have racks (all of them, else refused as Kafka's AdminUtils does).
        try:
            return assign_replicas_to_brokers([BrokerMetadata(b, self.cluster_racks.get(b)) for b in sorted(brokers)],
                                              num_partitions, replication_factor)
        except AdminOperationError:
            raise KafkaError() from None  # Kafka 2.8's broker: UNKNOWN_SERVER_ERROR, no message

    def _check_manual_assignment(self, assignment: dict[int, list[int]],
                                 replication_factor: int | None = None) -> dict[int, list[int]]:
        """KRaft's validateManualPartitionAssignment, for each partition in order."""
        for replicas in assignment.values():
            if not replicas:
                raise InvalidReplicaAssignmentError(
                    "The manual partition assignment includes an empty replica list.")
            previous = None
            for broker in sorted(replicas):
                if broker not in self.live_brokers:
                    raise InvalidReplicaAssignmentError(
                        f"The manual partition assignment includes broker {broker}, but no such "
                        f"broker is registered.")
                if broker == previous:
                    raise InvalidReplicaAssignmentError(
                        f"The manual partition assignment includes the broker {previous} more than once.")
                previous = broker
            if replication_factor is not None and len(replicas) != replication_factor:
                raise InvalidReplicaAssignmentError(
                    f"The manual partition assignment includes a partition with {len(replicas)} "
                    f"replica(s), but this is not consistent with previous partitions, which have "
                    f"{replication_factor} replica(s).")
            replication_factor = len(replicas)
        return {int(p): list(r) for p, r in assignment.items()}

    def _create_locked(self, meta: TopicMetadata) -> None:
        # Partition directories first, metadata last: the topic exists only once it is
        # complete. A crash in between leaves orphan directories that the next create of
        # the same name overwrites (they carry the old topic id, so nothing reads them).
        self._add_partition_dirs(meta, range(meta.partitions))
        self.store.put_or_undo(meta, lambda: self._remove_partition_dirs(meta.name, range(meta.partitions)))

    def _add_partition_dirs(self, meta: TopicMetadata, partitions) -> None:
        """Lay out new, empty partition directories; when the file system refuses one (a full
        disk, a read-only mount), remove those made so far and raise KafkaStorageError, so a
        topic is never left half created."""
        made = []
        try:
            for p in partitions:
                self._reset_partition_dir(meta.name, p)
                made.append(p)
                create_partition_dir(self._new_home(meta.name, p), meta.name, p, meta.topic_id)
        except OSError as exc:
            failed = os.path.join(self.log_dir_of(meta.name, made[-1]), partition_dir_name(meta.name, made[-1]))
            self._remove_partition_dirs(meta.name, made)
            if not exc.filename:  # (a refused write names no file: name the directory)
                exc = OSError(exc.errno, exc.strerror, failed)
            raise KafkaStorageError.from_os_error(exc) from None

    def _remove_partition_dirs(self, topic: str, partitions) -> None:
        for p in partitions:
            self._logs.pop((topic, p), None)
            try:
                self._reset_partition_dir(topic, p)
            except OSError:
                pass  # best effort: an orphan directory is overwritten by the next create

    def _reset_partition_dir(self, topic: str, partition: int) -> None:
        path = inside(self.log_dir_of(topic, partition), partition_dir_name(topic, partition))
        if os.path.exists(path):
            self._discard_dir(topic, partition)
        self._homes.pop((topic, partition), None)

    def _discard_dir(self, topic: str, partition: int) -> None:
        """Rename a partition directory to Kafka's `<topic>-<p>.<uuid>-delete`, then remove it,
        so a half-finished removal never looks like a live partition."""
        suffix = f"-{partition}.{uuid.uuid4().hex}-delete"
        home = self.log_dir_of(topic, partition)
        doomed = inside(home, topic[:255 - len(suffix)] + suffix)
        os.rename(inside(home, partition_dir_name(topic, partition)), doomed)
        shutil.rmtree(doomed, ignore_errors=True)

    def remove_replica(self, topic: str, partition: int) -> bool:
        """This broker no longer holds a replica of the partition (a reassignment moved it
        away): its log goes as Kafka's StopReplica(delete=true) removes it (the directory
        renamed to `<topic>-<p>.<uuid>-delete`, then removed) and an empty directory takes its
        place, as every broker keeps one for each partition of a topic. Its checkpoint entries
        go too. False when there was nothing to remove (an empty log)."""
        with locked(self.admin_lock_path):
            meta = self.store.get(topic)
            if partition not in meta.assignment:
                return False
            plog = self.partition(topic, partition)
            if plog.log_end_offset == 0:
                return False
            self._logs.pop((topic, partition), None)
            plog.close()
            home = self.log_dir_of(topic, partition)
            self._discard_dir(topic, partition)
            create_partition_dir(home, topic, partition, meta.topic_id)
            checkpoint.drop_partition(home, topic, partition)
            return True

    def move_partition(self, topic: str, partition: int, destination: str) -> bool:
        """Move a partition's directory to another log dir (AlterReplicaLogDirs): copied as
        Kafka's future replica (`<topic>-<p>.<uuid>-future`), renamed into place, then the old
        directory removed and its checkpoint entries carried over. Kafka copies in the
        background while the log keeps taking records; pk copies at once, the broker taking no
        request meanwhile. False when the partition is there already."""
        with locked(self.admin_lock_path):
            source = self.log_dir_of(topic, partition)
            if source == destination:
                return False
            log = self._logs.pop((topic, partition), None)
            if log is not None:
                log.close()
            name = partition_dir_name(topic, partition)
            suffix = f"-{partition}.{uuid.uuid4().hex}-future"
            future = inside(destination, topic[:255 - len(suffix)] + suffix)
            shutil.copytree(inside(source, name), future)
            os.rename(future, inside(destination, name))
            key = (topic, partition)
            for file in (checkpoint.RECOVERY_POINT, checkpoint.LOG_START_OFFSET, checkpoint.HIGH_WATERMARK,
                         checkpoint.CLEANER_OFFSET, checkpoint.RETENTION_CHECK):
                offset = checkpoint.read(os.path.join(source, file)).get(key)
                if offset is not None:
                    checkpoint.update(destination, file, {key: offset})
            self._discard_dir(topic, partition)
            checkpoint.drop_partition(source, topic, partition)
            self._homes[key] = destination
            return True

    def delete_topic(self, name: str) -> None:
        if self.broker_config.get("delete.topic.enable", "true").lower() != "true":
            raise TopicDeletionDisabledError("Topic deletion is disabled.")
        with locked(self.admin_lock_path):
            meta = self.store.get(name)
            for p in range(meta.partitions):  # refuse before anything is removed
                inside(self.data_dir, partition_dir_name(name, p))
            self.store.remove(name)  # from here on the topic does not exist for anyone
            for p in range(meta.partitions):
                self._logs.pop((name, p), None)
                self._reset_partition_dir(name, p)
            for directory in self.log_dirs:
                if directory not in self.offline_dirs:
                    checkpoint.drop_topic(directory, name)
            # (an internal topic has no committed offsets; without __consumer_offsets no topic has)
            # (replicated offsets: the group coordinator leading each partition tombstones them)
            if not topic_names.is_internal(name) and self.store.exists(topic_names.GROUP_METADATA_TOPIC) \
                    and not self.internal_topics_replicated:
                self._forget_committed_offsets(name)

    def _forget_committed_offsets(self, topic: str) -> None:
        """Tombstone every group's committed offsets of a deleted topic, as a broker's group
        coordinator does (a group left with neither offsets nor members then ceases to exist)."""
        from .offsets import OffsetStore

        store = OffsetStore(self)
        for group, partitions in sorted(store.committed_to(topic).items()):
            store.delete(group, partitions)

    def create_partitions(self, name: str, total: int, assignment: list[list[int]] | None = None,
                          *, validate_only: bool = False) -> TopicMetadata:
        with locked(self.admin_lock_path):
            meta = self.store.get(name)
            current = meta.partitions
            validation.validate_partition_increase(name, current, total)
            additional = total - current
            _check_request_size(additional, "additional partitions")
            if assignment is not None:
                if len(assignment) != additional:
                    raise InvalidReplicaAssignmentError(
                        f"Attempted to add {additional} additional partition(s), but only "
                        f"{len(assignment)} assignment(s) were specified.")
                new = self._check_manual_assignment(
                    {current + i: r for i, r in enumerate(assignment)}, meta.replication_factor)
            else:
                new = {p: list(meta.assignment[0]) for p in range(current, total)}
            if validate_only:
                return meta
            self._add_partition_dirs(meta, list(new))
            meta.assignment.update(new)
            self.store.put_or_undo(meta, lambda: self._remove_partition_dirs(name, list(new)))
            return meta

    def alter_topic_configs(self, name: str, set_configs: dict[str, str] | None = None,
                            delete_configs: list[str] | None = None) -> TopicMetadata:
        with locked(self.admin_lock_path):
            meta = self.store.get(name)
            configs = dict(meta.configs)
            configs.update(set_configs or {})
            for key in delete_configs or ():
                if key not in topic_config.CONFIGS:
                    raise InvalidConfigurationError(f"Unknown topic config name: {key}")
                configs.pop(key, None)
            topic_config.validate(configs)
            meta.configs = {k: str(v) for k, v in configs.items()}
            self.store.put(meta)
            for (topic, _), log in self._logs.items():
                if topic == name:
                    log.config = self._log_config(meta)
            return meta

    def reload_topic_configs(self, name: str) -> None:
        """Re-read a topic's configs into its open logs: a long-running process (the broker)
        calls this when another process may have altered them (the metadata file changed)."""
        meta = self.store.get(name)
        for (topic, _), log in self._logs.items():
            if topic == name:
                log.config = self._log_config(meta)

    def apply_dynamic_broker_config(self, dynamic: dict[str, str]) -> None:
        """The broker's dynamic configs (engine/broker/dynamic_config.py) over its static ones:
        topic defaults follow them at once in every open log. A dynamic member of a synonym
        chain (log.retention.ms/minutes/hours, ...) outranks every static member of it, as
        Kafka's synonyms go by source first."""
        base = dict(self.static_broker_config)
        for chain in topic_config.broker_synonym_chains():
            if any(name in dynamic for name in chain):
                for name in chain:
                    base.pop(name, None)
        self.broker_config = {**base, **dynamic}
        for (topic, _), log in list(self._logs.items()):
            try:
                log.config = self._log_config(self.store.get(topic))
            except KafkaError:
                continue  # deleted meanwhile: its log is forgotten at next use

    # ------------------------------------------------------------------ partitions
    def _log_config(self, meta: TopicMetadata) -> dict:
        config = topic_config.effective(meta.configs, self.broker_config)
        config["log.retention.check.interval.ms"] = int(self.broker_config["log.retention.check.interval.ms"])
        return config

    def partition(self, topic: str, partition: int) -> PartitionLog:
        """The log of one partition (cached per engine; safe across processes)."""
        log = self._logs.get((topic, partition))
        if log is not None:
            if read_partition_topic_id(log.dir) == log.topic_id:
                return log
            # Deleted (and maybe re-created under the same name) by another process: the
            # cached log would fail forever, so forget it and look the topic up again.
            self._logs.pop((topic, partition)).close()
        meta = self.store.get(topic)
        if partition not in meta.assignment:
            raise UnknownTopicOrPartitionError(
                f"This server does not host this topic-partition: {topic}-{partition}")
        log = PartitionLog(self.log_dir_of(topic, partition), topic, partition, meta.topic_id, self._log_config(meta))
        log.retention_on_append = self.retention_on_append
        log.writeback_bytes = self.writeback_bytes
        self._logs[(topic, partition)] = log
        return log

    def recover_failed_logs(self) -> None:
        """Recover every partition a failed write left marked (PartitionLog.recover_if_failed)."""
        for name in self.list_topics():
            try:
                for p in self.store.get(name).assignment:
                    home = os.path.join(self.log_dir_of(name, p), partition_dir_name(name, p))
                    if os.access(os.path.join(home, FAILED_MARK), os.F_OK):
                        self.partition(name, p).recover_if_failed()
            except UnknownTopicOrPartitionError:
                continue  # deleted meanwhile

    def enforce_retention(self, now_ms: int | None = None) -> int:
        """Apply retention to every partition now; returns the number of segments deleted.
        The checks are recorded in the retention-check checkpoint in one write."""
        if now_ms is None:
            now_ms = int(time.time() * 1000)
        deleted = 0
        checked = {}
        for name in self.list_topics():
            try:
                meta = self.store.get(name)
                for p in meta.assignment:
                    if self.offline_dirs and self.log_dir_of(name, p) in self.offline_dirs:
                        continue  # (Kafka stops its log manager's work on an offline dir)
                    deleted += self.partition(name, p).enforce_retention(now_ms, record=False)
                    checked[(name, p)] = now_ms
            except UnknownTopicOrPartitionError:
                continue  # deleted meanwhile
        self.update_checkpoint(checkpoint.RETENTION_CHECK, checked)
        return deleted

    def checkpoint_log_start_offsets(self) -> None:
        """Write `log-start-offset-checkpoint` as Kafka's LogManager does every
        log.flush.start.offset.checkpoint.interval.ms and at a clean shutdown: an entry for each
        partition whose log start offset is past its first segment's base (DeleteRecords inside
        a segment), none for the others, the file itself even with no entry. Every process on the
        data dir updates its entries as the log start moves (PartitionLog), so this pass merges
        the logs this process holds into the file (a log start only moves forward: the larger
        wins, whoever wrote it) and drops entries that no longer say anything: a partition gone
        from this directory, or whose segments up to the entry were deleted since."""
        held: dict[str, dict] = {d: {} for d in self.log_dirs if d not in self.offline_dirs}
        for key, log in list(self._logs.items()):  # read outside the checkpoint lock (lock order)
            try:
                if log.data_dir in held:
                    held[log.data_dir][key] = log.log_start_offset
            except (KafkaError, OSError):
                pass  # deleted meanwhile

        def current(directory: str, entries: dict) -> dict:
            for key, start in held[directory].items():
                entries[key] = max(start, entries.get(key, -1))
            kept = {}
            for (topic, partition), start in entries.items():
                base = first_segment_base(os.path.join(directory, partition_dir_name(topic, partition)))
                if base is not None and start > base:
                    kept[(topic, partition)] = start
            return kept
        for directory in held:  # (each log dir has its own file, as Kafka's LogManager keeps them)
            checkpoint.rewrite(directory, checkpoint.LOG_START_OFFSET, lambda e, d=directory: current(d, e))

    def clean(self, now_ms: int | None = None, force: bool = False) -> int:
        """One log-cleaner pass over every compacted topic; returns segments rewritten."""
        rewritten = 0
        for name in self.list_topics():
            try:
                meta = self.store.get(name)
                for p in meta.assignment:
                    if self.offline_dirs and self.log_dir_of(name, p) in self.offline_dirs:
                        continue  # (Kafka stops its log manager's work on an offline dir)
                    rewritten += self.partition(name, p).clean(now_ms, force) or 0
            except UnknownTopicOrPartitionError:
                continue  # deleted meanwhile
        return rewritten

    def close(self) -> None:
        """Close every log, even after one fails (its KafkaStorageError is raised at the end)."""
        failure = None
        for log in self._logs.values():
            if log.data_dir in self.offline_dirs:
                continue  # (Kafka writes nothing more to an offline dir)
            try:
                log.close()
            except KafkaStorageError as exc:
                failure = failure or exc
        self._logs.clear()
        if failure is not None:
            raise failure

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
