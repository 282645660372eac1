"""Backend over a real ZooKeeper (kazoo), reading and writing the znodes of Kafka 2.8.

What `kafka-topics --zookeeper` did in Kafka 2.8.2, mirrored from
  core/src/main/scala/kafka/zk/KafkaZkClient.scala   the znode reads and writes
  core/src/main/scala/kafka/zk/AdminZkClient.scala   create / add partitions / change config
  core/src/main/scala/kafka/zk/ZkData.scala          the JSON documents
  core/src/main/scala/kafka/admin/AdminUtils.scala   replica assignment (pk.engine.replica_assignment)
(see docs/versions.md). The znode paths and JSON documents (byte for byte what
Kafka 2.8 writes) are in pk.engine.zk_formats; relative to the connect string's chroot, the
state znodes are written by the controller and only read here, and /config/topics/<t> is
written, even empty, before the assignment.

Errors carry Kafka's messages (KafkaError, printed after "Error while executing topic command : ");
ZkFatalError is what Kafka never caught, printed as the JVM's first line.
"""

from __future__ import annotations

import json

from kazoo.exceptions import KazooException, NodeExistsError, NoNodeError

from pk.engine.errors import KafkaError, TopicExistsError
from pk.engine.javacompat import JavaRandom
from pk.engine.replica_assignment import BrokerMetadata, assign_replicas_to_brokers
from pk.engine.zk_formats import (
    BROKER_IDS,
    CONFIG_CHANGES,
    CONFIG_TOPICS,
    DELETE_TOPICS,
    TOPICS,
    ReplicaAssignment,
    TopicAssignment,
    decode_config,
    decode_topic_assignment,
    encode_config,
    encode_config_change,
    encode_topic_assignment,
    partition_state_path,
    topic_path,
)

from ..backend import PartitionInfo, TopicInfo
from ..errors import TopicCommandError

# Kafka 2.8's TopicCommand waits 30 s for a connection; pk gives up sooner so that a wrong
# address fails fast.
CONNECT_TIMEOUT_S = 5.0
SESSION_TIMEOUT_S = 30.0


class ZkFatalError(KafkaError):
    """An exception Kafka 2.8 let escape main(): str() is the JVM's first line."""


# --------------------------------------------------------------------------- ZkData
def decode_broker(broker_id: int, data: bytes) -> BrokerMetadata:
    """BrokerIdZNode.decode, as far as kafka-topics needs it (the id and the rack)."""
    text = data.decode("utf-8", "replace")
    try:
        js = json.loads(text)
    except ValueError:
        js = None
    if not isinstance(js, dict):
        raise TopicCommandError(f"Failed to parse ZooKeeper registration for broker {broker_id}: {text}")
    required = ["version", "jmx_port"] + (["endpoints"] if js.get("version", 0) != 1 else ["host", "port"])
    for key in required:
        if key not in js:
            raise TopicCommandError(f"No such field exists: `{key}`")
    rack = js.get("rack")
    return BrokerMetadata(broker_id, None if rack is None else str(rack))


def _java_int(text: str) -> int:
    body = text[1:] if text[:1] in "+-" else text
    if body.isascii() and body.isdigit() and -2**31 <= int(text) < 2**31:
        return int(text)
    raise TopicCommandError(f'For input string: "{text}"')


# --------------------------------------------------------------------------- the backend
def _keeper_code(exc: Exception) -> str:
    name = type(exc).__name__
    for suffix in ("Error", "Exception"):
        if name.endswith(suffix) and name != suffix:
            name = name[: -len(suffix)]
    return {"SessionExpired": "Session expired", "NotEmpty": "Directory not empty"}.get(name, name)


class ZkBackend:
    """The Backend protocol plus the ZooKeeper-only operations of Kafka 2.8's kafka-topics.

    connect: "host:port[,host:port...][/chroot]". rng: the Random that picks the start index
    and shift of replica assignments (JavaRandom(seed) to pin them)."""

    def __init__(self, connect: str, *, timeout: float = CONNECT_TIMEOUT_S, rng: JavaRandom | None = None):
        import logging
        import warnings

        from kazoo.client import KazooClient
        from kazoo.handlers.threading import KazooTimeoutError

        self.connect = connect
        self.rng = rng or JavaRandom()
        quiet = logging.getLogger("pk.zookeeper")  # kazoo logs every failed attempt: not for users
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
        try:
            self.zk = KazooClient(hosts=connect, timeout=SESSION_TIMEOUT_S, logger=quiet)
        except (ValueError, KazooException) as exc:
            raise ZkFatalError(f'Exception in thread "main" java.lang.IllegalArgumentException: {exc}') from None
        try:
            with warnings.catch_warnings():  # kazoo warns about a missing chroot: reported below
                warnings.simplefilter("ignore")
                self.zk.start(timeout=timeout)
        except KazooTimeoutError:
            self._shutdown()
            raise ZkFatalError('Exception in thread "main" kafka.zookeeper.ZooKeeperClientTimeoutException: '
                               "Timed out waiting for connection while in state: CONNECTING") from None
        chroot = self.zk.chroot
        if chroot and chroot != "/" and not self._exists("/"):
            self._shutdown()
            raise TopicCommandError(f"The chroot {chroot} of --zookeeper {connect} does not exist")

    def _shutdown(self) -> None:
        try:
            self.zk.stop()
            self.zk.close()
        except KazooException:
            pass

    def close(self) -> None:
        self._shutdown()

    # ----------------------------------------------------------------- KafkaZkClient primitives
    def _call(self, path: str, fn, *args, **kwargs):
        """Run a kazoo call; NoNode/NodeExists pass through, other failures become Kafka's
        KeeperException text."""
        try:
            return fn(*args, **kwargs)
        except (NoNodeError, NodeExistsError):
            raise
        except KazooException as exc:
            raise TopicCommandError(f"KeeperErrorCode = {_keeper_code(exc)} for {path}") from None

    def _get(self, path: str) -> bytes | None:
        try:
            data, _ = self._call(path, self.zk.get, path)
        except NoNodeError:
            return None
        return data or b""

    def _children(self, path: str) -> list[str]:
        try:
            return self._call(path, self.zk.get_children, path)
        except NoNodeError:
            return []

    def _exists(self, path: str) -> bool:
        return self._call(path, self.zk.exists, path) is not None

    def _create_parents(self, path: str) -> None:
        """createRecursive0: create path and its missing parents, all without data."""
        try:
            self._call(path, self.zk.create, path, None)
        except NodeExistsError:
            pass
        except NoNodeError:
            self._create_parents(path.rsplit("/", 1)[0])
            try:
                self._call(path, self.zk.create, path, None)
            except NodeExistsError:
                pass

    def create_recursive(self, path: str, data: bytes | None = None, throw_if_exists: bool = True) -> None:
        """KafkaZkClient.createRecursive: NodeExistsError if the node exists (and throw_if_exists)."""
        try:
            self._call(path, self.zk.create, path, data)
            return
        except NodeExistsError:
            if throw_if_exists:
                raise
            return
        except NoNodeError:
            pass
        self._create_parents(path.rsplit("/", 1)[0])
        try:
            self._call(path, self.zk.create, path, data)
        except NodeExistsError:
            if throw_if_exists:
                raise

    def set_or_create_entity_config(self, entity_type: str, name: str, data: bytes) -> None:
        path = f"/config/{entity_type}/{name}"
        try:
            self._call(path, self.zk.set, path, data)
        except NoNodeError:
            try:
                self.create_recursive(path, data)
            except NodeExistsError:
                self._call(path, self.zk.set, path, data)

    def create_config_change_notification(self, entity_path: str) -> str:
        self.create_recursive(CONFIG_CHANGES, None, throw_if_exists=False)
        path = f"{CONFIG_CHANGES}/config_change_"
        return self._call(path, self.zk.create, path, encode_config_change(entity_path), sequence=True)

    # ----------------------------------------------------------------- reads
    def brokers(self) -> list[BrokerMetadata]:
        """getAllBrokersInCluster: the registered brokers, sorted by id."""
        out = []
        for broker_id in sorted(_java_int(c) for c in self._children(BROKER_IDS)):
            data = self._get(f"{BROKER_IDS}/{broker_id}")
            if data is not None:
                out.append(decode_broker(broker_id, data))
        return out

    def broker_metadatas(self, rack_aware: bool = True) -> list[BrokerMetadata]:
        """AdminZkClient.getBrokerMetadatas (RackAwareMode Enforced, or Disabled)."""
        brokers = self.brokers()
        with_rack = [b for b in brokers if b.rack is not None]
        if rack_aware and with_rack and len(with_rack) < len(brokers):
            raise TopicCommandError("Not all brokers have rack information. Add --disable-rack-aware in command line"
                               " to make replica assignment without rack information.")
        if not rack_aware:
            brokers = [BrokerMetadata(b.id) for b in brokers]
        return sorted(brokers, key=lambda b: b.id)

    def live_brokers(self) -> set[int]:
        return {b.id for b in self.brokers()}

    def list_topics(self, include_internal: bool = True) -> list[str]:
        from pk.engine.topic_names import is_internal

        names = sorted(self._children(TOPICS))
        return names if include_internal else [n for n in names if not is_internal(n)]

    def topic_exists(self, name: str) -> bool:
        return self._exists(topic_path(name))

    def topic_assignment(self, name: str) -> TopicAssignment | None:
        data = self._get(topic_path(name))
        if data is None:
            return None
        try:
            return decode_topic_assignment(data)
        except ValueError:
            raise TopicCommandError(f"Invalid replica assignment in {topic_path(name)}: "
                               f"{data.decode('utf-8', 'replace')}") from None

    def topic_configs(self, name: str) -> dict[str, str]:
        """fetchEntityConfig: the overrides in /config/topics/<t>, in the znode's order."""
        return decode_config(self._get(f"{CONFIG_TOPICS}/{name}"))

    def partition_state(self, name: str, partition: int) -> tuple[int | None, list[int]] | None:
        """(leader or None for -1, isr) from the state znode; None when there is none yet."""
        data = self._get(partition_state_path(name, partition))
        if data is None:
            return None
        try:
            js = json.loads(data)
            leader = int(js["leader"])
            return (None if leader == -1 else leader), [int(b) for b in js["isr"]]
        except (ValueError, KeyError, TypeError):
            raise TopicCommandError(f"Invalid partition state in {partition_state_path(name, partition)}: "
                               f"{data.decode('utf-8', 'replace')}") from None

    def is_marked_for_deletion(self, name: str) -> bool:
        return self._exists(f"{DELETE_TOPICS}/{name}")

    def describe_topics(self, names: list[str]) -> list[TopicInfo]:
        out = []
        for name in names:
            assignment = self.topic_assignment(name)
            if assignment is None or not assignment.partitions:
                continue
            partitions = []
            for p, a in sorted(assignment.partitions.items()):
                leader, isr = self.partition_state(name, p) or (None, [])
                partitions.append(PartitionInfo(p, leader, list(a.replicas), isr))
            configs = self.topic_configs(name)
            min_isr = configs.get("min.insync.replicas", "1")
            out.append(TopicInfo(name, assignment.topic_id, partitions, configs,
                                 int(min_isr) if min_isr.isdigit() else 1))
        return out

    # ----------------------------------------------------------------- AdminZkClient writes
    def validate_topic_create(self, name: str, assignment: dict[int, list[int]], configs: dict[str, str]) -> None:
        from pk.engine.topic_names import has_collision_chars, unify_collision_chars

        from ..topics_zk import validate_log_config, validate_topic_name

        validate_topic_name(name)
        if self.topic_exists(name):
            raise TopicExistsError(f"Topic '{name}' already exists.")
        if has_collision_chars(name):
            topics = self._children(TOPICS)
            if name in topics:
                raise TopicExistsError(f"Topic '{name}' already exists.")
            colliding = sorted(t for t in topics if unify_collision_chars(t) == unify_collision_chars(name))
            if colliding:
                raise TopicCommandError(f"Topic '{name}' collides with existing topics: {', '.join(colliding)}")
        if len({len(r) for r in assignment.values()}) != 1:
            raise TopicCommandError("All partitions should have the same number of replicas")
        for replicas in assignment.values():
            if len(replicas) != len(set(replicas)):
                raise TopicCommandError("Duplicate replica assignment found: " + _scala_map(assignment))
        n = len(assignment)
        if sum(p for p in assignment if p >= 0) != n * (n - 1) // 2:
            raise TopicCommandError("partitions should be a consecutive 0-based integer sequence")
        validate_log_config(configs)

    def create_topic(self, name: str, partitions: int, replication_factor: int,
                     assignment: dict[int, list[int]] | None, configs: dict[str, str], *,
                     rack_aware: bool = True) -> None:
        """AdminZkClient.createTopic, or createTopicWithAssignment when `assignment` is given."""
        if assignment is None:
            brokers = self.broker_metadatas(rack_aware)
            assignment = assign_replicas_to_brokers(brokers, partitions, replication_factor, rng=self.rng)
        self.create_topic_with_assignment(name, configs, assignment)

    def create_topic_with_assignment(self, name: str, configs: dict[str, str],
                                     assignment: dict[int, list[int]]) -> None:
        self.validate_topic_create(name, assignment, configs)
        # The config first (not transactional with the assignment), then the topic znode.
        self.set_or_create_entity_config("topics", name, encode_config(configs))
        data = encode_topic_assignment(None, {p: ReplicaAssignment(list(r)) for p, r in assignment.items()})
        try:
            self.create_recursive(topic_path(name), data)
        except NodeExistsError:
            raise TopicExistsError(f"Topic '{name}' already exists.") from None

    def add_partitions(self, name: str, existing: dict[int, ReplicaAssignment], brokers: list[BrokerMetadata],
                       num_partitions: int, replica_assignment: dict[int, list[int]] | None = None) -> None:
        """AdminZkClient.addPartitions: new partitions continue the numbering; the existing ones
        keep their replicas (and reassignment state) and the topic keeps its topic_id."""
        if 0 not in existing:
            raise TopicCommandError(f"Unexpected existing replica assignment for topic '{name}', partition id 0 is "
                               f"missing. Assignment: {_scala_map({p: a.replicas for p, a in existing.items()})}")
        partition0 = existing[0].replicas
        if num_partitions - len(existing) <= 0:
            raise TopicCommandError("The number of partitions for a topic can only be increased. "
                               f"Topic {name} currently has {len(existing)} partitions, "
                               f"{num_partitions} would not be an increase.")
        if replica_assignment is not None:
            _validate_replica_assignment(replica_assignment, len(partition0), {b.id for b in brokers})
            new = replica_assignment
        else:
            start = next((i for i, b in enumerate(brokers) if b.id >= partition0[0]), -1) if partition0 else -1
            new = assign_replicas_to_brokers(brokers, num_partitions - len(existing), len(partition0),
                                             max(0, start), len(existing), rng=self.rng)
        combined = dict(existing)
        combined.update({p: ReplicaAssignment(list(r)) for p, r in new.items()})
        current = self.topic_assignment(name)
        data = encode_topic_assignment(current.topic_id if current else None, combined)
        try:
            self._call(topic_path(name), self.zk.set, topic_path(name), data)
        except NoNodeError:
            raise TopicCommandError(f"org.apache.zookeeper.KeeperException$NoNodeException: "
                               f"KeeperErrorCode = NoNode for {topic_path(name)}") from None

    def create_partitions(self, name: str, total: int, assignment: list[list[int]] | None) -> None:
        existing = self.topic_assignment(name)
        parts = existing.partitions if existing else {}
        new = None if assignment is None else {len(parts) + i: r for i, r in enumerate(assignment)}
        self.add_partitions(name, parts, self.broker_metadatas(), total, new)

    def alter_topic_configs(self, name: str, set_configs: dict[str, str], delete_configs: list[str]) -> None:
        """TopicCommand's `configs ++= toAdd; toDelete.foreach(remove)`, then changeTopicConfig:
        validate, write /config/topics/<t>, and create a change notification."""
        from pk.engine.topic_config import _properties_order

        from ..topics_zk import validate_log_config, validate_topic_name

        current = self.topic_configs(name)
        order = list(current) + [k for k in _properties_order(list(set_configs)) if k not in current]
        merged = {**current, **set_configs}
        for key in delete_configs:
            merged.pop(key, None)
        validate_topic_name(name)
        if not self.topic_exists(name):
            raise TopicCommandError(f"Topic '{name}' does not exist.")
        validate_log_config(merged)
        self.set_or_create_entity_config("topics", name, encode_config(merged, order))
        self.create_config_change_notification(f"topics/{name}")

    def mark_for_deletion(self, name: str) -> bool:
        """createDeleteTopicPath; False when the marker was already there."""
        try:
            self.create_recursive(f"{DELETE_TOPICS}/{name}")
        except NodeExistsError:
            return False
        return True

    def delete_topics(self, names: list[str]) -> None:
        for name in names:
            self.mark_for_deletion(name)


def _scala_map(m: dict[int, list[int]]) -> str:
    """How a Scala Map[Int, Seq[Int]] prints (entries sorted here)."""
    return "Map(" + ", ".join(f"{p} -> List({', '.join(map(str, r))})" for p, r in sorted(m.items())) + ")"


def _validate_replica_assignment(assignment: dict[int, list[int]], expected_rf: int, available: set[int]) -> None:
    """AdminZkClient.validateReplicaAssignment (for --alter --partitions --replica-assignment)."""
    for partition, replicas in assignment.items():
        if not replicas:
            raise TopicCommandError(f"Cannot have replication factor of 0 for partition id {partition}.")
        if len(replicas) != len(set(replicas)):
            raise TopicCommandError("Duplicate brokers not allowed in replica assignment: "
                               f"{', '.join(map(str, replicas))} for partition id {partition}.")
        if not set(replicas) <= available:
            raise TopicCommandError(f"Some brokers specified for partition id {partition} are not available. "
                               f"Specified brokers: {', '.join(map(str, replicas))}, "
                               f"available brokers: {', '.join(map(str, sorted(available)))}.")
    bad = sorted((p, len(r)) for p, r in assignment.items() if len(r) != expected_rf)
    if bad:
        raise TopicCommandError("Inconsistent replication factor between partitions, partition 0 has "
                           f"{expected_rf} while partitions [{', '.join(str(p) for p, _ in bad)}] have "
                           f"replication factors [{', '.join(str(n) for _, n in bad)}], respectively.")
