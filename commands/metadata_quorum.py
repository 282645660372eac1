"""kafka-metadata-quorum's operations (Kafka 4.4's MetadataQuorumCommand) over pk's wire client:
describe --status / --replication (DescribeQuorum on the __cluster_metadata partition),
add-controller (AddRaftVoter, from a controller's own configuration file) and remove-controller
(RemoveRaftVoter, then with --unregister UnregisterController).

pk-server-start keeps no Raft quorum and does not offer these APIs: against it every call
fails as Kafka's admin client fails a request a node does not support."""

from __future__ import annotations

import base64
import os
import time
import uuid

from pk.engine import protocol as kp

from .backends.kafka_admin import known_error

METADATA_TOPIC = "__cluster_metadata"
ZERO_UUID = uuid.UUID(int=0)
DEFAULT_API_TIMEOUT_MS = 60000  # the admin client's default.api.timeout.ms


class QuorumCommandError(Exception):
    """One of the tool's own error lines (Kafka's TerseException)."""


def uuid_text(value: uuid.UUID) -> str:
    """Uuid.toString: URL-safe Base64 without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


# --------------------------------------------------------------------------- connection
def check_controller_endpoint(client) -> None:
    """With --bootstrap-controller the admin client first asks for the controllers
    (DescribeCluster, endpoint type CONTROLLER): a broker refuses that, and the tool fails."""
    from .cluster import CONTROLLERS, describe_cluster

    describe_cluster(client, CONTROLLERS, False)


def cluster_id(client, controllers: bool) -> str:
    """The cluster id, from the brokers or (--bootstrap-controller) the controllers."""
    from .cluster import BROKERS, CONTROLLERS

    answer = client.call(kp.ApiKey.DESCRIBE_CLUSTER, 2, {"include_cluster_authorized_operations": False,
                                                          "endpoint_type": CONTROLLERS if controllers else BROKERS,
                                                          "include_fenced_brokers": False})
    if answer["error_code"]:
        raise known_error(answer["error_code"], answer["error_message"])
    return answer["cluster_id"]


def describe_quorum(client) -> dict:
    """The partition of DescribeQuorum's answer for the metadata log, with `nodes` (v2)."""
    answer = client.call(kp.ApiKey.DESCRIBE_QUORUM, 2,
                         {"topics": [{"topic_name": METADATA_TOPIC, "partitions": [{"partition_index": 0}]}]})
    if answer["error_code"]:
        raise known_error(answer["error_code"], answer.get("error_message"))
    partition = next((p for t in answer["topics"] if t["topic_name"] == METADATA_TOPIC
                      for p in t["partitions"] if p["partition_index"] == 0), None)
    if partition is None:
        raise known_error(-1, "The response from the server did not contain the metadata partition")
    if partition["error_code"]:
        raise known_error(partition["error_code"], partition.get("error_message"))
    return {**partition, "nodes": {n["node_id"]: n["listeners"] for n in answer.get("nodes") or []}}


# --------------------------------------------------------------------------- describe
def _leader(quorum: dict) -> dict:
    leader = next((v for v in quorum["current_voters"] if v["replica_id"] == quorum["leader_id"]), None)
    if leader is None:  # Kafka's tool fails on Optional.get() here
        raise QuorumCommandError("No value present")
    return leader


def _endpoint_text(listener: dict) -> str:
    host = listener["host"]
    return f"{listener['name']}://{'[' + host + ']' if ':' in host else host}:{listener['port']}"


def _replica_text(replica: dict, nodes: dict) -> str:
    """{"id": 0, "directoryId": "...", "endpoints": ["CONTROLLER://host:port"]}: no directoryId
    when the replica has none (kraft.version 0), no endpoints when the node has none."""
    text = f'{{"id": {replica["replica_id"]}'
    directory = replica.get("replica_directory_id") or ZERO_UUID
    if directory != ZERO_UUID:
        text += f', "directoryId": "{uuid_text(directory)}"'
    listeners = nodes.get(replica["replica_id"]) or []
    if listeners:
        text += ', "endpoints": [' + ", ".join(f'"{_endpoint_text(e)}"' for e in listeners) + "]"
    return text + "}"


def status_lines(cluster: str, quorum: dict) -> list[str]:
    leader = _leader(quorum)
    voters = quorum["current_voters"]
    laggiest = min(voters, key=lambda v: v["log_end_offset"])  # the first of equals, as Stream.min
    if laggiest is leader:
        lag_time = 0
    elif leader["last_caught_up_timestamp"] >= 0 and laggiest["last_caught_up_timestamp"] >= 0:
        lag_time = leader["last_caught_up_timestamp"] - laggiest["last_caught_up_timestamp"]
    else:
        lag_time = -1
    nodes = quorum["nodes"]
    rows = [("ClusterId:", cluster), ("LeaderId:", quorum["leader_id"]), ("LeaderEpoch:", quorum["leader_epoch"]),
            ("HighWatermark:", quorum["high_watermark"]),
            ("MaxFollowerLag:", leader["log_end_offset"] - laggiest["log_end_offset"]),
            ("MaxFollowerLagTimeMs:", lag_time),
            ("CurrentVoters:", "[" + ", ".join(_replica_text(v, nodes) for v in voters) + "]"),
            ("CurrentObservers:", "[" + ", ".join(_replica_text(o, nodes) for o in quorum["observers"]) + "]")]
    return [f"{label:<24}{value}" for label, value in rows]


def _relative(timestamp: int, what: str, now_ms: int) -> str:
    if not 0 < timestamp <= now_ms:
        raise QuorumCommandError(f"Error while computing relative time, possible drift in system clock.\n"
                                 f"Current timestamp is {now_ms}, {what} timestamp is {timestamp}")
    return f"{now_ms - timestamp} ms ago"


def replication_lines(quorum: dict, human_readable: bool) -> list[str]:
    """The leader, the other voters, then the observers: one table row each, every cell padded
    to its column's width and followed by a tab."""
    leader = _leader(quorum)
    now_ms = int(time.time() * 1000)
    rows = []
    groups = [([leader], "Leader"),
              ([v for v in quorum["current_voters"] if v["replica_id"] != leader["replica_id"]], "Follower"),
              (quorum["observers"], "Observer")]
    for replicas, status in groups:
        for r in replicas:
            fetch, caught_up = r["last_fetch_timestamp"], r["last_caught_up_timestamp"]
            if human_readable:
                fetch = "-1" if fetch < 0 else _relative(fetch, "last fetch", now_ms)
                caught_up = "-1" if caught_up < 0 else _relative(caught_up, "last caught up", now_ms)
            rows.append([str(r["replica_id"]), uuid_text(r.get("replica_directory_id") or ZERO_UUID),
                         str(r["log_end_offset"]), str(leader["log_end_offset"] - r["log_end_offset"]),
                         str(fetch), str(caught_up), status])
    header = ["NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status"]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return ["".join(f"{cell:<{w}}\t" for cell, w in zip(row, widths)) for row in [header, *rows]]


# --------------------------------------------------------------------------- add-controller
def controller_id(props: dict[str, str]) -> int:
    if "node.id" not in props:
        raise QuorumCommandError("node.id not found in configuration file. Is this a valid controller "
                                 "configuration file?")
    text = props["node.id"]
    try:
        node = int(text)
        if not -2**31 <= node < 2**31 or text.strip() != text:
            raise ValueError
    except ValueError:
        raise QuorumCommandError(f'For input string: "{text}"') from None
    if node < 0:
        raise QuorumCommandError("node.id was negative in configuration file. Is this a valid controller "
                                 "configuration file?")
    if "controller" not in props.get("process.roles", ""):
        raise QuorumCommandError("process.roles did not contain 'controller' in configuration file. Is this a "
                                 "valid controller configuration file?")
    return node


def metadata_directory(props: dict[str, str]) -> str:
    if "metadata.log.dir" in props:
        return props["metadata.log.dir"]
    if "log.dirs" in props:
        return props["log.dirs"].strip().split(",")[0]
    raise QuorumCommandError("Neither metadata.log.dir nor log.dirs were found. Is this a valid controller "
                             "configuration file?")


def directory_id(directory: str) -> str:
    """The directory.id of the meta.properties in a controller's metadata directory."""
    from .properties import load_properties
    from .errors import PropertiesError

    try:
        meta = load_properties(os.path.join(directory, "meta.properties"))
    except PropertiesError:
        raise QuorumCommandError(f"Unable to read meta.properties from {directory}") from None
    if not meta.get("directory.id"):
        raise QuorumCommandError(f"No directory id found in {directory}")
    return meta["directory.id"]


def _listener_map(text: str) -> dict[str, tuple[str, int]]:
    endpoints = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, address = item.partition("://")
        host, _, port = address.rpartition(":")
        if not sep or not port.isdigit():
            raise QuorumCommandError(f"Unable to parse {item} to a broker endpoint")
        endpoints[name.upper()] = (host.strip("[]") or "localhost", int(port))
    return endpoints


def controller_endpoints(props: dict[str, str]) -> list[tuple[str, str, int]]:
    """The controller listeners (controller.listener.names), advertised.listeners over listeners."""
    listeners = _listener_map(props.get("listeners", ""))
    listeners.update(_listener_map(props.get("advertised.listeners", "")))
    if "controller.listener.names" not in props:
        raise QuorumCommandError("controller.listener.names was not found. Is this a valid controller "
                                 "configuration file?")
    result: list[tuple[str, str, int]] = []
    for name in props["controller.listener.names"].split(","):
        name = name.upper()
        if name not in listeners:
            raise QuorumCommandError(f"Cannot find information about controller listener name: {name}")
        endpoint = (name, *listeners[name])
        if endpoint not in result:
            result.append(endpoint)
    return result


def add_controller(client, props: dict[str, str], dry_run: bool) -> str:
    node = controller_id(props)
    directory = directory_id(metadata_directory(props))
    endpoints = controller_endpoints(props)
    if not dry_run:
        from .topics import TopicCommandError, parse_uuid

        try:
            raw = uuid.UUID(bytes=base64.urlsafe_b64decode(parse_uuid(directory) + "=="))
        except TopicCommandError as exc:
            raise QuorumCommandError(str(exc)) from None
        answer = client.call(kp.ApiKey.ADD_RAFT_VOTER, 1, {
            "cluster_id": None, "timeout_ms": DEFAULT_API_TIMEOUT_MS, "voter_id": node, "voter_directory_id": raw,
            "listeners": [{"name": n, "host": h, "port": p} for n, h, p in endpoints], "ack_when_committed": True})
        if answer["error_code"]:
            raise known_error(answer["error_code"], answer["error_message"])
    shown = ", ".join(f"{n}://{'[' + h + ']' if ':' in h else h}:{p}" for n, h, p in endpoints)
    return (f"{'DRY RUN of adding' if dry_run else 'Added'} controller {node} with directory id {directory} "
            f"and endpoints: {shown}")


# --------------------------------------------------------------------------- remove-controller
def parse_directory_id(text: str) -> uuid.UUID:
    """Uuid.fromString's checks, with its (and Java's Base64 decoder's) messages."""
    from .topics import TopicCommandError, parse_uuid

    if len(text) > 24:
        raise QuorumCommandError(f"Failed to parse --controller-directory-id: Input string with prefix "
                                 f"`{text[:24]}` is too long to be decoded as a base64 UUID")
    if len(text) == 1:
        raise QuorumCommandError("Failed to parse --controller-directory-id: Input byte[] should at least have "
                                 "2 bytes for base64 bytes")
    try:
        return uuid.UUID(bytes=base64.urlsafe_b64decode(parse_uuid(text) + "=="))
    except TopicCommandError as exc:
        raise QuorumCommandError(f"Failed to parse --controller-directory-id: {exc}") from None


def remove_controller(client, node: int, directory_text: str, dry_run: bool, unregister: bool) -> list[str]:
    if node < 0:
        raise QuorumCommandError(f"Invalid negative --controller-id: {node}")
    directory = parse_directory_id(directory_text)
    shown = uuid_text(directory)
    if dry_run:
        lines = [f"DRY RUN of removing KRaft controller {node} with directory id {shown}"]
        return lines + ([f"DRY RUN of unregistering KRaft controller {node}"] if unregister else [])
    from .backends.kafka_admin import AdminError

    try:
        answer = client.call(kp.ApiKey.REMOVE_RAFT_VOTER, 0,
                             {"cluster_id": None, "voter_id": node, "voter_directory_id": directory})
        if answer["error_code"]:
            raise known_error(answer["error_code"], answer["error_message"])
    except AdminError as exc:
        # a cluster without the API, or a node that is no voter: only the unregistration is left
        if unregister and exc.code in (35, 127):  # UNSUPPORTED_VERSION, VOTER_NOT_FOUND
            raise QuorumCommandError(f"Failed to remove KRaft voter {node}: {exc.message}. To unregister the "
                                     f"controller from the cluster, run `kafka-cluster.sh unregister-controller "
                                     f"--id {node}`.") from None
        raise
    lines = [f"Removed KRaft controller {node} with directory id {shown}"]
    if unregister:
        answer = client.call(kp.ApiKey.UNREGISTER_CONTROLLER, 0, {"controller_id": node})
        if answer["error_code"]:
            raise known_error(answer["error_code"], answer.get("error_message"))
        lines.append(f"Unregistered KRaft controller {node}")
    return lines
