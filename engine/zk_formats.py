"""The ZooKeeper data of Kafka 2.8: znode paths and the JSON documents in them, encoded byte for
byte as Kafka writes them and decoded as Kafka reads them (no ZooKeeper I/O here). Used by
`pk-topics --zookeeper` (its kazoo backend) and by a ZooKeeper-mode broker
(engine/broker/zookeeper.py). Mirrored from core/src/main/scala/kafka/zk/ZkData.scala:

  /brokers/ids/<id>                       broker registrations (BrokerIdZNode, ephemeral)
  /brokers/topics/<t>                     {"partitions":{..},"adding_replicas":{..},"removing_replicas":{..},"version":3}
                                          (+ "topic_id" when one is known; kafka-topics never adds one)
  /brokers/topics/<t>/partitions/<p>/state  leader and ISR (TopicPartitionStateZNode)
  /config/topics/<t>                      {"version":1,"config":{..}}
  /config/brokers/<id>, /config/brokers/<default>  the same, a broker's dynamic configs
  /config/changes/config_change_<seq>     {"version":2,"entity_path":"topics/<t>"} (or "brokers/<id>") after a config change
  /admin/delete_topics/<t>                the deletion marker (no data)
  /admin/reassign_partitions              {"version":1,"partitions":[{"topic":..,"partition":..,"replicas":[..]}]}
  /controller, /controller_epoch, /cluster/id
  /isr_change_notification/isr_change_<seq>  {"version":1,"partitions":[{"topic":..,"partition":..}]}

Key order is Jackson's over the Scala/Java maps Kafka builds: Scala's mutable.HashMap order for
the assignment maps and the broker registration, java.util.Properties order for configs.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from .javacompat import ScalaHashMap, jackson_string

BROKER_IDS = "/brokers/ids"
TOPICS = "/brokers/topics"
CONFIG_TOPICS = "/config/topics"
CONFIG_BROKERS = "/config/brokers"
CONFIG_CHANGES = "/config/changes"
DELETE_TOPICS = "/admin/delete_topics"
CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
CLUSTER_ID = "/cluster/id"
ISR_CHANGE_NOTIFICATION = "/isr_change_notification"
REASSIGN_PARTITIONS = "/admin/reassign_partitions"
# KafkaZkClient.createTopLevelPaths (2.8)
PERSISTENT_PATHS = ("/consumers", BROKER_IDS, TOPICS, CONFIG_CHANGES, DELETE_TOPICS, "/brokers/seqid",
                    ISR_CHANGE_NOTIFICATION, "/latest_producer_id_block", "/log_dir_event_notification",
                    CONFIG_TOPICS, "/config/clients", "/config/users", CONFIG_BROKERS, "/config/ips")


def topic_path(topic: str) -> str:
    return f"{TOPICS}/{topic}"


def partition_state_path(topic: str, partition: int) -> str:
    return f"{TOPICS}/{topic}/partitions/{partition}/state"


# --------------------------------------------------------------------------- TopicZNode
@dataclass
class ReplicaAssignment:
    replicas: list[int]
    adding: list[int] = field(default_factory=list)
    removing: list[int] = field(default_factory=list)


@dataclass
class TopicAssignment:
    """TopicZNode.decode: the partitions in the znode's order."""
    topic_id: str | None
    partitions: dict[int, ReplicaAssignment]


def _json_map(m) -> str:
    return "{" + ",".join(f'"{k}":[{",".join(map(str, v))}]' for k, v in m.items()) + "}"


def encode_topic_assignment(topic_id: str | None, assignment: dict[int, ReplicaAssignment]) -> bytes:
    """TopicZNode.encode (2.8): version 3, adding/removing replicas only for the partitions
    that have some. The partition maps are Scala mutable.HashMaps; the outer map is built by
    mutable.Map(4 pairs), whose 8-slot table iterates as written below (checked on the JVM)."""
    replicas, adding, removing = ScalaHashMap(), ScalaHashMap(), ScalaHashMap()
    for partition, a in assignment.items():
        replicas.put(str(partition), a.replicas)
        if a.adding:
            adding.put(str(partition), a.adding)
        if a.removing:
            removing.put(str(partition), a.removing)
    fields = [f'"partitions":{_json_map(replicas)}']
    if topic_id is not None:
        fields.append(f'"topic_id":{jackson_string(topic_id)}')
    fields += [f'"adding_replicas":{_json_map(adding)}', f'"removing_replicas":{_json_map(removing)}',
               '"version":3']
    return ("{" + ",".join(fields) + "}").encode()


def decode_topic_assignment(data: bytes | None) -> TopicAssignment:
    """TopicZNode.decode: missing adding/removing replicas and topic_id read as empty; no data
    or unparsable JSON reads as no partitions (Json.parseBytes gives None). ValueError if the
    JSON does not have the shape of an assignment."""
    try:
        js = json.loads(data) if data else None
    except ValueError:
        js = None
    if not isinstance(js, dict):
        return TopicAssignment(None, {})
    try:
        adding = js.get("adding_replicas") or {}
        removing = js.get("removing_replicas") or {}
        partitions = {int(p): ReplicaAssignment([int(b) for b in r], [int(b) for b in adding.get(p, [])],
                                                [int(b) for b in removing.get(p, [])])
                      for p, r in (js.get("partitions") or {}).items()}
        topic_id = js.get("topic_id")
    except (AttributeError, TypeError, ValueError) as exc:
        raise ValueError(str(exc)) from None
    return TopicAssignment(None if topic_id is None else str(topic_id), partitions)


# --------------------------------------------------------------------------- ConfigEntityZNode
def encode_config(configs: dict[str, str], insertion_order: list[str] | None = None) -> bytes:
    """ConfigEntityZNode.encode: {"version":1,"config":<Properties>}. A Properties (Java 9+)
    iterates in its ConcurrentHashMap order, which depends on the order keys went in."""
    from .topic_config import _properties_order

    keys = [k for k in _properties_order(insertion_order or list(configs)) if k in configs]
    body = ",".join(f"{jackson_string(k)}:{jackson_string(configs[k])}" for k in keys)
    return ('{"version":1,"config":{' + body + "}}").encode()


def decode_config(data: bytes | None) -> dict[str, str]:
    try:
        js = json.loads(data) if data else None
    except ValueError:
        return {}
    config = js.get("config") if isinstance(js, dict) else None
    if not isinstance(config, dict):
        return {}
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


def encode_config_change(entity_path: str) -> bytes:
    """ConfigEntityChangeNotificationSequenceZNode.generateChangeNode (version 2)."""
    return ('{"version":2,"entity_path":' + jackson_string(entity_path) + "}").encode()


# --------------------------------------------------------------------------- broker znodes
def encode_broker(broker_id: int, host: str, port: int, rack: str | None = None,
                  timestamp_ms: int | None = None) -> bytes:
    """BrokerIdZNode.encode, version 5 (2.7/2.8), one PLAINTEXT endpoint. The keys go into a
    Scala mutable.HashMap; its iteration order is what Jackson writes."""
    stamp = str(int(time.time() * 1000) if timestamp_ms is None else timestamp_ms)
    endpoint = f"PLAINTEXT://{host}:{port}"
    values = ScalaHashMap()
    for key, value in (("version", "5"), ("host", jackson_string(host)), ("port", str(port)),
                       ("endpoints", f"[{jackson_string(endpoint)}]"), ("jmx_port", "-1"),
                       ("timestamp", jackson_string(stamp))):
        values.put(key, value)
    if rack is not None:
        values.put("rack", jackson_string(rack))
    values.put("listener_security_protocol_map", '{"PLAINTEXT":"PLAINTEXT"}')
    values.put("features", "{}")
    return ("{" + ",".join(f'"{k}":{v}' for k, v in values.items()) + "}").encode()


def encode_controller(broker_id: int, timestamp_ms: int | None = None) -> bytes:
    """ControllerZNode.encode: an immutable Map3, so insertion order."""
    stamp = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
    return f'{{"version":1,"brokerid":{broker_id},"timestamp":"{stamp}"}}'.encode()


def encode_cluster_id(cluster_id: str) -> bytes:
    """ClusterIdZNode.toJson (note the string version)."""
    return f'{{"version":"1","id":"{cluster_id}"}}'.encode()


def encode_partition_state(leader: int, leader_epoch: int, isr: list[int], controller_epoch: int,
                           elr=(), last_known_elr=(), kept_isr=None) -> bytes:
    """TopicPartitionStateZNode.encode (the order Kafka 2.8 writes). A partition with an ELR,
    a LastKnownELR or an empty ISR (Kafka 4.4's KIP-966 state, engine/broker/elr.py) gets a
    trailing "elr_state" object with Kafka 4.4's ISR, ELR and LastKnownELR, while "isr" keeps
    what Kafka 2.8 keeps, never empty (`kept_isr`): 2.8's decoder reads only its own fields, so
    Kafka 2.8's tools and brokers read the znode as before."""
    zk_isr = list(isr) if isr or not kept_isr else list(kept_isr)
    text = (f'{{"controller_epoch":{controller_epoch},"leader":{leader},"version":1,'
            f'"leader_epoch":{leader_epoch},"isr":[{",".join(map(str, zk_isr))}]')
    if elr or last_known_elr or list(isr) != zk_isr:
        text += (f',"elr_state":{{"isr":[{",".join(map(str, isr))}],'
                 f'"eligible_leader_replicas":[{",".join(map(str, elr))}],'
                 f'"last_known_elr":[{",".join(map(str, last_known_elr))}]}}')
    return (text + "}").encode()


@dataclass(frozen=True)
class PartitionStateZNode:
    """A decoded state znode: `isr` is Kafka 4.4's (from "elr_state" when present), `zk_isr`
    the "isr" field as Kafka 2.8 reads it."""
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()
    zk_isr: tuple[int, ...] = ()


def decode_partition_state(data: bytes | None) -> PartitionStateZNode | None:
    """TopicPartitionStateZNode.decode plus pk's "elr_state"; None when unreadable."""
    try:
        js = json.loads(data)
        zk_isr = tuple(int(r) for r in js["isr"])
        extra = js.get("elr_state") or {}
        return PartitionStateZNode(
            int(js["leader"]), int(js["leader_epoch"]),
            tuple(int(r) for r in extra["isr"]) if "isr" in extra else zk_isr,
            int(js.get("controller_epoch", 0)),
            tuple(int(r) for r in extra.get("eligible_leader_replicas", ())),
            tuple(int(r) for r in extra.get("last_known_elr", ())), zk_isr)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def encode_isr_change(partitions: list[tuple[str, int]]) -> bytes:
    """IsrChangeNotificationSequenceZNode.encode: the partitions whose ISR the leader changed."""
    body = ",".join(f'{{"topic":{jackson_string(t)},"partition":{p}}}' for t, p in partitions)
    return ('{"version":1,"partitions":[' + body + "]}").encode()


# --------------------------------------------------------------------------- ReassignPartitionsZNode
def encode_reassignment(plan: dict[tuple[str, int], list[int]]) -> bytes:
    """ReassignPartitionsZNode.encode: the partitions in the given order."""
    parts = ",".join(f'{{"topic":{jackson_string(t)},"partition":{p},"replicas":[{",".join(map(str, r))}]}}'
                     for (t, p), r in plan.items())
    return f'{{"version":1,"partitions":[{parts}]}}'.encode()


def decode_reassignment(data: bytes | None) -> dict[tuple[str, int], list[int]]:
    """ReassignPartitionsZNode.decode: {(topic, partition): target replicas}; ValueError when
    the document is not one (log_dirs, which the tools may add, are not read)."""
    try:
        js = json.loads(data or b"")
        return {(str(e["topic"]), int(e["partition"])): [int(r) for r in e["replicas"]] for e in js["partitions"]}
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"invalid reassignment {data!r}") from exc
