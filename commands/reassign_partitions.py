"""kafka-reassign-partitions (Kafka 4.4's ReassignPartitionsCommand): propose, start, verify,
cancel and list partition reassignments of a cluster, with throttles and log-directory moves.

Kafka's tool prints everything on stdout; its failures end with "Error: <message>" (an
exception's message: `Failed` here) or with a message of its own (`Terse`). Where Kafka lists
a java.util.HashSet or HashMap, the order is that set's (commands/java_hash.py).

The cluster side is `Cluster`, over pk's wire client (commands/backends/wire.py), because
librdkafka has no partition-reassignment calls."""

from __future__ import annotations

import random
import time
import uuid
from dataclasses import dataclass

from pk.engine import protocol as kp

from . import reassign_json as J
from .backends.kafka_admin import AdminError, known_error
from .java_hash import hash_order, string_hash, topic_partition_hash

ANY_LOG_DIR = "any"
ZERO_UUID = uuid.UUID(int=0)
BROKER_LEVEL_THROTTLES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                          "replica.alter.log.dirs.io.max.bytes.per.second")
TOPIC_LEVEL_THROTTLES = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")
CANNOT_EXECUTE = ("Cannot execute because there is an existing partition assignment.  Use --additional to "
                  "override this and create a new partition assignment in addition to the existing one. The "
                  "--additional flag can also be used to change the throttle by resubmitting the current "
                  "reassignment.")
RUN_VERIFY = ("Warning: You must run --verify periodically, until the reassignment completes, to ensure the "
              "throttle is removed.")
_BROKER, _TOPIC = 4, 2  # ConfigResource types
_SET, _DELETE = 0, 1  # AlterConfigOp types

Partition = tuple[str, int]
Replica = tuple[str, int, int]  # TopicPartitionReplica: topic, partition, broker


NOT_CONTROLLER = 41


class Failed(Exception):
    """What Kafka prints as "Error: <message>" (str() is the message)."""


class Terse(Exception):
    """A TerseException: Kafka prints the message alone."""


# --------------------------------------------------------------------------- Java's texts
def tp_str(tp: Partition) -> str:
    return f"{tp[0]}-{tp[1]}"


def replica_str(r: Replica) -> str:
    return f"{r[0]}-{r[1]}-{r[2]}"


def java_list(items) -> str:
    return "[" + ", ".join(str(i) for i in items) + "]"


def _int_hash(n: int) -> int:
    return n


def _tp_hash(tp: Partition) -> int:
    return topic_partition_hash(*tp)


def _duplicates(items, hash_of) -> list:
    """ToolsUtils.duplicates: the items seen twice, as the HashSet it returns iterates."""
    seen, dups = set(), []
    for item in items:
        if item in seen and item not in dups:
            dups.append(item)
        seen.add(item)
    return hash_order(dups, hash_of)


def _sorted_tps(tps) -> list[Partition]:
    return sorted(tps, key=lambda tp: (tp[0], tp[1]))


def _sorted_replicas(replicas) -> list[Replica]:
    return sorted(replicas, key=lambda r: (r[2], r[0], r[1]))


def _plural(n: int) -> str:
    return "" if n == 1 else "s"


def java_parse_int(text: str) -> int:
    """Integer.parseInt, with NumberFormatException's message."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit() or not -2**31 <= int(text) < 2**31:
        raise Failed(f'For input string: "{text}"')
    return int(text)


# --------------------------------------------------------------------------- the JSON files
@dataclass
class Reassignment:
    """A --reassignment-json-file: the partitions in file order and the replicas to move to a
    named log directory (those not "any")."""

    partitions: list[tuple[Partition, list[int]]]
    log_dirs: dict[Replica, str]


def parse_reassignment(text: str) -> Reassignment:
    try:
        js = J.parse(text)
    except J.JsonError as exc:
        raise Failed(str(exc)) from None
    try:
        obj = J.as_object(js)
        version = J.to_int(obj["version"]) if "version" in obj else 1
        if version != 1:
            raise Failed(f"Not supported version field value {version}")
        partitions, log_dirs = [], {}
        for entry in (J.as_array(obj["partitions"]) if "partitions" in obj else []):
            fields = J.as_object(entry)
            topic = J.to_str(J.field(fields, "topic"))
            partition = J.to_int(J.field(fields, "partition"))
            replicas = J.to_int_list(J.field(fields, "replicas"))
            dirs = J.to_str_list(fields["log_dirs"]) if "log_dirs" in fields else [ANY_LOG_DIR] * len(replicas)
            if len(replicas) != len(dirs):
                raise Failed(f"Size of replicas list {java_list(replicas)} is different from size of log dirs list "
                             f"{java_list(dirs)} for partition {topic}-{partition}")
            partitions.append(((topic, partition), replicas))
            for broker, log_dir in zip(replicas, dirs):
                if log_dir != ANY_LOG_DIR:
                    log_dirs[(topic, partition, broker)] = log_dir
    except J.JsonError as exc:
        raise Failed(str(exc)) from None
    return Reassignment(partitions, log_dirs)


def parse_topics(text: str) -> list[str]:
    """A --topics-to-move-json-file: the topic names in file order."""
    js = J.parse_or_none(text)
    if js is None:
        raise Failed("The input string is not a valid JSON")
    try:
        obj = J.as_object(js)
        version = J.to_int(obj["version"]) if "version" in obj else 1
        if version != 1:
            raise Failed(f"Not supported version field value {version}")
        return [J.to_str(J.field(J.as_object(t), "topic")) for t in (J.as_array(obj["topics"]) if "topics" in obj else [])]
    except J.JsonError as exc:
        raise Failed(str(exc)) from None


def format_reassignment_json(assignment: dict[Partition, list[int]], log_dirs: dict[Replica, str]) -> str:
    """formatAsReassignmentJson: Jackson's compact JSON, partitions sorted."""
    parts = []
    for tp in _sorted_tps(assignment):
        replicas = assignment[tp]
        dirs = [log_dirs.get((tp[0], tp[1], r), ANY_LOG_DIR) for r in replicas]
        parts.append("{" + f'"topic":{J.node_text(tp[0])},"partition":{tp[1]},"replicas":{J.node_text(replicas)},'
                     f'"log_dirs":{J.node_text(dirs)}' + "}")
    return '{"version":1,"partitions":[' + ",".join(parts) + "]}"


# --------------------------------------------------------------------------- the cluster
@dataclass
class OngoingReassignment:
    replicas: list[int]
    adding: list[int]
    removing: list[int]


class Cluster:
    """The admin calls the tool makes, over a WireClient made by `connect` at the first call
    (as the Java admin client connects: the files are read and checked before)."""

    def __init__(self, connect, via_brokers: bool = False):
        self._connect = connect
        self._client = None
        # Through --bootstrap-server, a broker that answers NOT_CONTROLLER (a ZooKeeper-mode
        # cluster's brokers other than the controller) is asked again at the controller that
        # Metadata names, where Kafka's admin client sends these calls in the first place.
        self._via_brokers = via_brokers
        self._controller: int | None = None

    @property
    def client(self):
        if self._client is None:
            self._client = self._connect()
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def _controller_node(self) -> int | None:
        if not self._via_brokers:
            return None
        if self._controller is None:
            md = self.client.call(kp.ApiKey.METADATA, 12, {
                "topics": [], "allow_auto_topic_creation": False, "include_topic_authorized_operations": False})
            known = {b.node_id for b in self.client.brokers()}
            self._controller = md.get("controller_id", -1) if md.get("controller_id", -1) in known else -1
        return None if self._controller < 0 else self._controller

    def nodes(self) -> list[tuple[int, str | None]]:
        return [(b.node_id, b.rack) for b in self.client.brokers()]

    def describe_topics(self, names) -> dict[str, dict[int, list[int]] | AdminError]:
        """Each topic's partition -> replicas, or the error describing it failed with."""
        names = list(dict.fromkeys(names))
        if not names:
            return {}
        md = self.client.call(kp.ApiKey.METADATA, 12, {
            "topics": [{"topic_id": ZERO_UUID, "name": n} for n in names], "allow_auto_topic_creation": False,
            "include_topic_authorized_operations": False})
        found = {t["name"]: t for t in md["topics"]}
        out = {}
        for name in names:
            t = found.get(name)
            if t is None or t["error_code"]:
                out[name] = known_error(t["error_code"] if t else 3)
            else:
                out[name] = {p["partition_index"]: list(p["replica_nodes"]) for p in t["partitions"]}
        return out

    def list_reassignments(self, partitions=None) -> dict[Partition, OngoingReassignment]:
        topics = None
        if partitions is not None:
            by_topic: dict[str, list[int]] = {}
            for t, p in partitions:
                by_topic.setdefault(t, []).append(p)
            topics = [{"name": t, "partition_indexes": ps} for t, ps in by_topic.items()]
        body = {"timeout_ms": 30000, "topics": topics}
        answer = self.client.call(kp.ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, body)
        if answer["error_code"] == NOT_CONTROLLER and self._controller_node() is not None:
            answer = self.client.call(kp.ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, body, node=self._controller_node())
        if answer["error_code"]:
            raise _execution(known_error(answer["error_code"], answer["error_message"]))
        return {(t["name"], p["partition_index"]): OngoingReassignment(list(p["replicas"]), list(p["adding_replicas"]),
                                                                        list(p["removing_replicas"]))
                for t in answer["topics"] for p in t["partitions"]}

    def alter_reassignments(self, targets: dict[Partition, list[int] | None],
                            allow_replication_factor_change: bool = True) -> dict[Partition, AdminError]:
        """Start (replicas) or cancel (None) reassignments; the failed partitions' errors."""
        by_topic: dict[str, list[dict]] = {}
        for (t, p), replicas in targets.items():
            by_topic.setdefault(t, []).append({"partition_index": p, "replicas": replicas})
        body = {"timeout_ms": 30000, "allow_replication_factor_change": allow_replication_factor_change,
                "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()]}
        answer = self.client.call(kp.ApiKey.ALTER_PARTITION_REASSIGNMENTS, 1, body)
        codes = {p["error_code"] for t in answer["responses"] for p in t["partitions"]}
        if codes == {NOT_CONTROLLER} and self._controller_node() is not None:
            answer = self.client.call(kp.ApiKey.ALTER_PARTITION_REASSIGNMENTS, 1, body, node=self._controller_node())
        if answer["error_code"]:
            error = known_error(answer["error_code"], answer["error_message"])
            return {tp: error for tp in targets}
        errors = {}
        for t in answer["responses"]:
            for p in t["partitions"]:
                if p["error_code"]:
                    errors[(t["name"], p["partition_index"])] = known_error(p["error_code"], p["error_message"])
        return errors

    def incremental_alter_configs(self, changes: list[tuple[int, str, list[tuple[str, str | None, int]]]]) -> None:
        """(resource type, name, [(config, value, op)]) each; a broker's go to that broker. The
        first failure is raised as the admin client's all().get() raises it."""
        for resource_type, name, ops in changes:
            node = int(name) if resource_type == _BROKER else None
            answer = self.client.call(kp.ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [{
                "resource_type": resource_type, "resource_name": name,
                "configs": [{"name": c, "config_operation": op, "value": v} for c, v, op in ops]}]}, node)
            [result] = answer["responses"]
            if result["error_code"]:
                raise _execution(known_error(result["error_code"], result["error_message"]))

    def replica_log_dirs(self, replicas) -> dict[Replica, tuple[str | None, str | None]]:
        """describeReplicaLogDirs: (current dir, future dir) of each replica its broker hosts."""
        by_broker: dict[int, dict[str, set[int]]] = {}
        for t, p, b in replicas:
            by_broker.setdefault(b, {}).setdefault(t, set()).add(p)
        out: dict[Replica, tuple[str | None, str | None]] = {}
        live = {n for n, _ in self.nodes()}
        for broker, topics in by_broker.items():
            if broker not in live:
                continue
            answer = self.client.call(kp.ApiKey.DESCRIBE_LOG_DIRS, 4, {"topics": [
                {"topic": t, "partitions": sorted(ps)} for t, ps in topics.items()]}, broker)
            for result in answer["results"]:
                if result["error_code"]:
                    continue
                for t in result["topics"]:
                    for p in t["partitions"]:
                        key = (t["name"], p["partition_index"], broker)
                        if key[1] not in topics.get(key[0], ()):
                            continue
                        current, future = out.get(key, (None, None))
                        if p["is_future_key"]:
                            future = result["log_dir"]
                        else:
                            current = result["log_dir"]
                        out[key] = (current, future)
        return out

    def alter_replica_log_dirs(self, moves: dict[Replica, str]) -> dict[Replica, AdminError | None]:
        """Each move's outcome (None: started)."""
        by_broker: dict[int, dict[str, dict[str, list[int]]]] = {}
        for (t, p, b), path in moves.items():
            by_broker.setdefault(b, {}).setdefault(path, {}).setdefault(t, []).append(p)
        out: dict[Replica, AdminError | None] = {}
        for broker, dirs in by_broker.items():
            try:
                answer = self.client.call(kp.ApiKey.ALTER_REPLICA_LOG_DIRS, 2, {"dirs": [
                    {"path": path, "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]}
                    for path, topics in dirs.items()]}, broker)
            except (AdminError, ConnectionError, OSError) as exc:
                error = exc if isinstance(exc, AdminError) else known_error(-1, str(exc))
                for path, topics in dirs.items():
                    for t, ps in topics.items():
                        out.update({(t, p, broker): error for p in ps})
                continue
            for r in answer["results"]:
                for p in r["partitions"]:
                    code = p["error_code"]
                    out[(r["topic_name"], p["partition_index"], broker)] = known_error(code) if code else None
        return out


def _execution(error: AdminError) -> Failed:
    """A failed future's ExecutionException, as "Error: " prints it."""
    return Failed(error.execution_message())


# --------------------------------------------------------------------------- --generate
def generate(cluster: Cluster, topics_text: str, broker_list: str, rack_aware: bool, out) -> None:
    brokers = [java_parse_int(b) for b in _java_split(broker_list)]
    dups = _duplicates(brokers, _int_hash)
    if dups:
        raise Failed(f"Broker list contains duplicate entries: {java_list(dups)}")
    topics = parse_topics(topics_text)
    dups = _duplicates(topics, string_hash)
    if dups:
        raise Failed(f"List of topics to reassign contains duplicate entries: {java_list(dups)}")
    current = _replicas_for_topics(cluster, topics)
    usable = _usable_brokers(cluster, brokers, rack_aware)
    proposed = _place(current, usable)
    log_dirs = _replica_log_dirs(cluster, current)
    out(f"Current partition replica assignment\n{format_reassignment_json(current, log_dirs)}\n\n")
    out(f"Proposed partition reassignment configuration\n{format_reassignment_json(proposed, {})}\n")


def _java_split(text: str) -> list[str]:
    """String.split(","): trailing empty strings dropped (but "" stays [""])."""
    parts = text.split(",")
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts if any(parts) or len(parts) == 1 else [""]


def _describe(cluster: Cluster, topics) -> dict[str, dict[int, list[int]]]:
    """The tool's describeTopics: a missing topic fails with "Topic <name> not found."."""
    described = cluster.describe_topics(topics)
    for name in hash_order(described, string_hash):  # the HashMap of futures, as it is iterated
        result = described[name]
        if isinstance(result, AdminError):
            if result.name == "UNKNOWN_TOPIC_OR_PARTITION":
                raise _execution(known_error(3, f"Topic {name} not found."))
            raise _execution(result)
    return described


def _replicas_for_topics(cluster: Cluster, topics) -> dict[Partition, list[int]]:
    return {(t, p): replicas for t, parts in _describe(cluster, topics).items() for p, replicas in parts.items()}


def _replicas_for_partitions(cluster: Cluster, partitions) -> dict[Partition, list[int]]:
    partitions = list(partitions)
    found = {}
    for t, parts in _describe(cluster, [t for t, _ in partitions]).items():
        for p, replicas in parts.items():
            if (t, p) in partitions:
                found[(t, p)] = replicas
    missing = [tp for tp in hash_order(partitions, _tp_hash) if tp not in found]
    if missing:
        raise _execution(known_error(3, "Unable to find partition: " + ", ".join(tp_str(tp) for tp in missing)))
    return found


def _replica_log_dirs(cluster: Cluster, assignment: dict[Partition, list[int]]) -> dict[Replica, str]:
    """getReplicaToLogDir: the current log directory of each replica whose broker reports one."""
    replicas = [(t, p, b) for (t, p), brokers in assignment.items() for b in brokers]
    return {r: current for r, (current, _future) in cluster.replica_log_dirs(replicas).items() if current}


def _usable_brokers(cluster: Cluster, brokers: list[int], rack_aware: bool) -> list[tuple[int, str | None]]:
    wanted = set(brokers)
    usable = [(n, rack if rack_aware else None) for n, rack in cluster.nodes() if n in wanted]
    rackless = sum(1 for _, rack in usable if rack is None)
    if rack_aware and rackless not in (0, len(usable)):
        raise Failed("Not all brokers have rack information. Add --disable-rack-aware in command line to make "
                     "replica assignment without rack information.")
    return usable


def _place(current: dict[Partition, list[int]], usable) -> dict[Partition, list[int]]:
    """calculateAssignment: each topic placed anew by KRaft's StripedReplicaPlacer, with the
    replication factor of its (first listed) partition."""
    by_topic: dict[str, list[Partition]] = {}
    for tp in hash_order(current, _tp_hash):
        by_topic.setdefault(tp[0], []).append(tp)
    proposed = {}
    for topic in hash_order(by_topic, string_hash):
        parts = by_topic[topic]
        factor = len(current[parts[0]])
        placements = StripedPlacer(usable).place(len(parts), factor)
        proposed.update({(topic, p): replicas for p, replicas in enumerate(placements)})
    return proposed


class StripedPlacer:
    """KRaft's StripedReplicaPlacer over unfenced brokers: racks visited round-robin from a
    random offset, the brokers of each rack from a random offset too, reshuffled once every
    broker has led a partition; a partition's replicas are spread over distinct racks first."""

    def __init__(self, brokers: list[tuple[int, str | None]], rng: random.Random | None = None):
        self.rng = rng or random.Random()
        self.racks: dict[str | None, _BrokerList] = {}
        for broker, rack in brokers:
            self.racks.setdefault(rack, _BrokerList()).brokers.append(broker)
        for rack in self.racks.values():
            rack.initialize(self.rng)
        self.names = sorted(self.racks, key=lambda r: (r is not None, r or ""))  # the rackless first
        self.total = len(brokers)
        self.epoch = 0
        self.offset = self.rng.randrange(len(self.names)) if self.names else 0

    def place(self, partitions: int, factor: int) -> list[list[int]]:
        self._check(factor)
        return [self._place_one(factor) for _ in range(partitions)]

    def _check(self, factor: int) -> None:
        if factor <= 0:
            raise Failed(f"Invalid replication factor {factor}: the replication factor must be positive.")
        if self.total == 0:
            raise Failed("All brokers are currently fenced, or have all their log directories cordoned.")
        if factor > self.total:
            raise Failed(f"The target replication factor of {factor} cannot be reached because only {self.total} "
                         f"broker(s) are registered or some brokers have all their log directories cordoned.")

    def _place_one(self, factor: int) -> list[int]:
        if self.epoch == self.total and self.total > 1:
            self.rng.shuffle(self.names)
            for rack in self.racks.values():
                self.rng.shuffle(rack.brokers)
            self.epoch = 0
        if self.offset == len(self.names):
            self.offset = 0
        first = self.offset
        while True:
            broker = self.racks[self.names[first]].next(self.epoch)
            if broker >= 0:
                break
            first = (first + 1) % len(self.names)
        chosen = [broker]
        index = self.offset
        for _ in range(1, factor):
            result = -1
            while result < 0:
                if index == first:
                    first = -1
                else:
                    result = self.racks[self.names[index]].next(self.epoch)
                index = (index + 1) % len(self.names)
            chosen.append(result)
        self.epoch += 1
        self.offset += 1
        return chosen


class _BrokerList:
    def __init__(self):
        self.brokers: list[int] = []
        self.index = self.offset = self.epoch = 0

    def initialize(self, rng: random.Random) -> None:
        if self.brokers:
            self.brokers.sort()
            self.offset = rng.randrange(len(self.brokers))

    def next(self, epoch: int) -> int:
        if not self.brokers:
            return -1
        if self.epoch != epoch:
            self.epoch, self.index = epoch, 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return -1
        broker = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return broker


# --------------------------------------------------------------------------- --execute
def check_execute_file(reassignment: Reassignment) -> dict[Partition, list[int]]:
    """parseExecuteAssignmentArgs' checks; the partitions as the HashMap Kafka makes of them."""
    parts = reassignment.partitions
    if not parts:
        raise Failed("Partition reassignment list cannot be empty")
    if any(not replicas for _, replicas in parts):
        raise Failed("Partition replica list cannot be empty")
    dups = _duplicates([tp for tp, _ in parts], _tp_hash)
    if dups:
        raise Failed("Partition reassignment contains duplicate topic partitions: " + ",".join(map(tp_str, dups)))
    repeated = [(tp, _duplicates(replicas, _int_hash)) for tp, replicas in parts]
    repeated = [(tp, d) for tp, d in repeated if d]
    if repeated:
        raise Failed("Partition replica lists may not contain duplicate entries: " + ". ".join(
            f"{tp_str(tp)} contains multiple entries for {','.join(map(str, d))}" for tp, d in repeated))
    proposed = dict(parts)
    return {tp: proposed[tp] for tp in hash_order(proposed, _tp_hash)}


def execute(cluster: Cluster, text: str, additional: bool, inter_broker_throttle: int, log_dir_throttle: int,
            timeout_ms: int, allow_replication_factor_change: bool, out) -> None:
    reassignment = parse_reassignment(text)
    proposed = check_execute_file(reassignment)
    ongoing = cluster.list_reassignments()
    if not additional and ongoing:
        raise Terse(CANNOT_EXECUTE)
    brokers = hash_order([b for replicas in proposed.values() for b in replicas], _int_hash)
    live = {n for n, _ in cluster.nodes()}
    unknown = [b for b in brokers if b not in live]
    if unknown:
        raise Failed(f"Unknown broker id {unknown[0]}")
    current = _replicas_for_partitions(cluster, proposed)
    rollback = {tp: replicas for tp, replicas in current.items() if tp in proposed}
    out("Current partition replica assignment\n\n"
        f"{format_reassignment_json(rollback, _replica_log_dirs(cluster, rollback))}\n\n"
        "Save this to use as the --reassignment-json-file option during rollback\n")
    if inter_broker_throttle >= 0 or log_dir_throttle >= 0:
        out(RUN_VERIFY + "\n")
        if inter_broker_throttle >= 0:
            moves = proposed_moves(ongoing, proposed, current)
            _set_reassignment_throttle(cluster, moves, inter_broker_throttle, out)
        if log_dir_throttle >= 0:
            movers = sorted({b for _, _, b in reassignment.log_dirs})
            cluster.incremental_alter_configs([(_BROKER, str(b), [(BROKER_LEVEL_THROTTLES[2], str(log_dir_throttle), _SET)])
                                               for b in movers])
            out(f"The replica-alter-dir throttle limit was set to {log_dir_throttle} B/s\n")
    errors = cluster.alter_reassignments(dict(proposed), allow_replication_factor_change)
    if errors:
        raise Terse("Error reassigning partition(s):\n" + "\n".join(
            f"{tp_str(tp)}: {errors[tp].message}" for tp in _sorted_tps(errors)))
    out(f"Successfully started partition reassignment{_plural(len(proposed))} for "
        + ",".join(tp_str(tp) for tp in _sorted_tps(proposed)) + "\n")
    if reassignment.log_dirs:
        _execute_moves(cluster, reassignment.log_dirs, timeout_ms, out)


@dataclass
class PartitionMove:
    sources: set[int]
    destinations: set[int]


def proposed_moves(ongoing: dict[Partition, OngoingReassignment], proposed: dict[Partition, list[int]],
                   current: dict[Partition, list[int]]) -> dict[str, dict[int, PartitionMove]]:
    """calculateProposedMoveMap: per topic and partition, the brokers data moves from and to
    (an ongoing reassignment keeps its sources)."""
    moves: dict[str, dict[int, PartitionMove]] = {}
    for (t, p), r in ongoing.items():
        moves.setdefault(t, {})[p] = PartitionMove(set(r.replicas) - set(r.adding), set(r.adding))
    for (t, p), replicas in proposed.items():
        parts = moves.setdefault(t, {})
        if p in parts:
            sources = set(parts[p].sources)
        elif (t, p) in current:
            sources = set(current[(t, p)])
        else:
            raise Failed(f"Trying to reassign a topic partition {t}-{p} with 0 replicas")
        parts[p] = PartitionMove(sources, set(replicas) - sources)
    return moves


def _throttle_value(components: set[tuple[int, int]]) -> str:
    # a TreeSet of "%d:%d" strings: ordered as strings
    return ",".join(sorted(f"{p}:{b}" for p, b in components))


def _set_reassignment_throttle(cluster: Cluster, moves: dict[str, dict[int, PartitionMove]], rate: int, out) -> None:
    changes = []
    for topic in hash_order(moves, string_hash):
        leader = {(p, s) for p, m in moves[topic].items() for s in m.sources}
        follower = {(p, d) for p, m in moves[topic].items() for d in m.destinations if d not in m.sources}
        changes.append((_TOPIC, topic, [(TOPIC_LEVEL_THROTTLES[0], _throttle_value(leader), _SET),
                                        (TOPIC_LEVEL_THROTTLES[1], _throttle_value(follower), _SET)]))
    cluster.incremental_alter_configs(changes)
    brokers = sorted({b for parts in moves.values() for m in parts.values() for b in m.sources | m.destinations})
    cluster.incremental_alter_configs([(_BROKER, str(b), [(BROKER_LEVEL_THROTTLES[0], str(rate), _SET),
                                                          (BROKER_LEVEL_THROTTLES[1], str(rate), _SET)])
                                       for b in brokers])
    out(f"The inter-broker throttle limit was set to {rate} B/s\n")


def _execute_moves(cluster: Cluster, moves: dict[Replica, str], timeout_ms: int, out) -> None:
    """Start each log-directory move, retrying those whose replica is not there yet."""
    deadline = time.monotonic() + timeout_ms / 1000
    pending = dict(moves)
    while True:
        started = []
        for replica, error in cluster.alter_replica_log_dirs(pending).items():
            if error is None:
                started.append(replica)
            elif error.name != "REPLICA_NOT_AVAILABLE":
                raise Failed(f"Failed to alter dir for {replica_str(replica)}")
        for replica in _sorted_replicas(started):
            out(f"Successfully started moving log directory to {pending[replica]} for replica "
                f"{replica[0]}-{replica[1]} with broker {replica[2]} \n")
            del pending[replica]
        if not pending:
            return
        if time.monotonic() >= deadline:
            raise Terse(f"Timed out before log directory move{_plural(len(pending))} could be started for: "
                        + ",".join(replica_str(r) for r in _sorted_replicas(pending)))
        time.sleep(0.1)


# --------------------------------------------------------------------------- --verify
def verify(cluster: Cluster, text: str, preserve_throttles: bool, out) -> None:
    reassignment = parse_reassignment(text)
    states, parts_ongoing = _partition_states(cluster, reassignment.partitions)
    lines = ["Status of partition reassignment:"]
    for tp in _sorted_tps(states):
        current, target, done = states[tp]
        if not done:
            lines.append(f"Reassignment of partition {tp_str(tp)} is still in progress.")
        elif current == target:
            lines.append(f"Reassignment of partition {tp_str(tp)} is completed.")
        else:
            lines.append(f"There is no active reassignment of partition {tp_str(tp)}, but replica set is "
                         f"{','.join(map(str, current))} rather than {','.join(map(str, target))}.")
    out("\n".join(lines) + "\n")
    move_states = _log_dir_move_states(cluster, reassignment.log_dirs)
    out("\n".join(_move_state_line(r, move_states[r]) for r in _sorted_replicas(move_states)) + "\n")
    moves_ongoing = any(state[0] not in ("completed", "cancelled") for state in move_states.values())
    if not parts_ongoing and not moves_ongoing and not preserve_throttles:
        clear_throttles(cluster, reassignment.partitions, out)


def _partition_states(cluster: Cluster, targets) -> tuple[dict[Partition, tuple[list[int], list[int], bool]], bool]:
    """findPartitionReassignmentStates: (current, target, done) of each partition, and whether
    any reassignment at all is ongoing in the cluster."""
    ongoing = cluster.list_reassignments()
    states = {}
    not_found = [(tp, target) for tp, target in targets if tp not in ongoing]
    for tp, target in targets:
        if tp in ongoing:
            states[tp] = (ongoing[tp].replicas, target, False)
    described = cluster.describe_topics([tp[0] for tp, _ in not_found])
    for tp, target in not_found:
        result = described[tp[0]]
        if isinstance(result, AdminError):
            if result.name != "UNKNOWN_TOPIC_OR_PARTITION":
                raise _execution(result)
            states[tp] = ([], target, True)
            continue
        count = len(result)
        if count < tp[1]:
            states[tp] = ([], target, True)  # "Too few partitions found"
        elif tp[1] >= count or tp[1] < 0:
            raise Failed(f"Index {tp[1]} out of bounds for length {count}")
        else:
            states[tp] = (result[sorted(result)[tp[1]]], target, True)
    return states, bool(ongoing)


def _log_dir_move_states(cluster: Cluster, targets: dict[Replica, str]) -> dict[Replica, tuple]:
    """findLogDirMoveStates: (kind, ...) per replica: missing-replica, missing-dir, completed,
    cancelled (current dir), active (current dir, future dir)."""
    infos = cluster.replica_log_dirs(targets) if targets else {}
    states = {}
    for replica, target in targets.items():
        if replica not in infos:
            states[replica] = ("missing-replica", target)
            continue
        current, future = infos[replica]
        if current is None:
            states[replica] = ("missing-dir", target)
        elif future is None:
            states[replica] = ("completed", target) if current == target else ("cancelled", target, current)
        else:
            states[replica] = ("active", target, current, future)
    return states


def _move_state_line(r: Replica, state: tuple) -> str:
    kind, target = state[0], state[1]
    where = f"Partition {r[0]}-{r[1]}"
    if kind == "missing-dir":
        return (f"{where} is not found in any live log dir on broker {r[2]}. There is likely an offline log "
                f"directory on the broker.")
    if kind == "missing-replica":
        return f"{where} cannot be found in any live log directory on broker {r[2]}."
    if kind == "active":
        future = state[3]
        if future == target:
            return f"Reassignment of replica {replica_str(r)} is still in progress."
        return f"{where} on broker {r[2]} is being moved to log dir {future} instead of {target}."
    if kind == "cancelled":
        return f"{where} on broker {r[2]} is not being moved from log dir {state[2]} to {target}."
    return f"Reassignment of replica {replica_str(r)} completed successfully."


def clear_throttles(cluster: Cluster, targets, out) -> None:
    """clearAllThrottles: every broker's and every listed topic's throttles deleted."""
    brokers = hash_order([n for n, _ in cluster.nodes()] + [b for _, replicas in targets for b in replicas],
                         _int_hash)
    out(f"Clearing broker-level throttles on broker{_plural(len(brokers))} {','.join(map(str, brokers))}\n")
    cluster.incremental_alter_configs([(_BROKER, str(b), [(c, None, _DELETE) for c in BROKER_LEVEL_THROTTLES])
                                       for b in brokers])
    topics = hash_order([tp[0] for tp, _ in targets], string_hash)
    out(f"Clearing topic-level throttles on topic{_plural(len(topics))} {','.join(topics)}\n")
    cluster.incremental_alter_configs([(_TOPIC, t, [(c, None, _DELETE) for c in TOPIC_LEVEL_THROTTLES])
                                       for t in topics])


# --------------------------------------------------------------------------- --cancel, --list
def cancel(cluster: Cluster, text: str, preserve_throttles: bool, timeout_ms: int, out) -> None:
    reassignment = parse_reassignment(text)
    asked = [tp for tp, _ in reassignment.partitions]
    ongoing = cluster.list_reassignments(hash_order(asked, _tp_hash))
    cancelling = [tp for tp, r in ongoing.items() if not r.adding or r.removing]
    if cancelling:
        errors = cluster.alter_reassignments({tp: None for tp in cancelling})
        if errors:
            raise Terse(f"Error cancelling partition reassignment{_plural(len(errors))} for:\n" + "\n".join(
                f"{tp_str(tp)}: {errors[tp].message}" for tp in _sorted_tps(errors)))
        out(f"Successfully cancelled partition reassignment{_plural(len(cancelling))} for: "
            + ",".join(tp_str(tp) for tp in _sorted_tps(cancelling)) + "\n")
    else:
        out("None of the specified partition reassignments are active.\n")
    states = _log_dir_move_states(cluster, reassignment.log_dirs)
    back = {r: state[2] for r, state in states.items() if state[0] == "active"}
    if back:
        _execute_moves(cluster, back, timeout_ms, out)
    else:
        out("None of the specified partition moves are active.")  # (Kafka ends it with no newline)
    if not preserve_throttles:
        clear_throttles(cluster, reassignment.partitions, out)


def list_reassignments(cluster: Cluster, out) -> None:
    ongoing = cluster.list_reassignments()
    if not ongoing:
        out("No partition reassignments found.\n")
        return
    lines = []
    for tp in _sorted_tps(ongoing):
        r = ongoing[tp]
        line = f"{tp_str(tp)}: replicas: {','.join(map(str, r.replicas))}."
        if r.adding:
            line += f" adding: {','.join(map(str, r.adding))}."
        if r.removing:
            line += f" removing: {','.join(map(str, r.removing))}."
        lines.append(line)
    out("Current partition reassignments:\n" + "\n".join(lines) + "\n")
