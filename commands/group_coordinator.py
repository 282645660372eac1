"""The part of the share and streams groups' tools (commands/share_groups.py,
commands/streams_groups.py) that talks to a group's coordinator over pk's own wire client, as
Kafka's admin client does: the coordinator looked up with FindCoordinator, a request asked
again (after a new look-up) while the coordinator moves or loads, a type's groups listed
from every broker, and partitions' offsets asked of their leaders."""

from __future__ import annotations

import time

from pk.engine import protocol as kp

from .backends.kafka_admin import known_error
from .java_hash import hash_order, string_hash

LIST_GROUPS_VERSION = 5
LIST_OFFSETS_VERSION = 7
METADATA_VERSION = 12
COORDINATOR_ERRORS = {14, 15, 16}  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR


def first_error(answer: dict) -> int:
    """The error code of an answer about one group (top level, or its group's entry)."""
    if answer.get("error_code"):
        return answer["error_code"]
    for key in ("groups", "results"):
        if answer.get(key):
            return answer[key][0].get("error_code", 0)
    return 0


class GroupCoordinatorClient:
    """Requests about groups of one type (`group_type`: ListGroups' types filter)."""

    group_type = ""

    def __init__(self, client, timeout_ms: int = 30000):
        self.client = client
        self.timeout_ms = timeout_ms
        self._coordinators: dict[str, tuple[str, int, int]] = {}

    def coordinator(self, group: str) -> tuple[str, int, int]:
        """(host, port, node id) of the group's coordinator; retriable errors wait and retry."""
        if group not in self._coordinators:
            deadline = time.monotonic() + self.timeout_ms / 1000
            while True:
                answer = self.client.call(kp.ApiKey.FIND_COORDINATOR, 3, {"key": group, "key_type": 0})
                if not answer["error_code"]:
                    break
                if answer["error_code"] not in (14, 15) or time.monotonic() > deadline:
                    raise known_error(answer["error_code"], answer.get("error_message"))
                time.sleep(0.1)
            self._coordinators[group] = (answer["host"], answer["port"], answer["node_id"])
        return self._coordinators[group]

    def _call(self, group: str, api: int, version: int, body: dict, error_of=first_error) -> dict:
        """A request to the group's coordinator; while the coordinator moves or loads (the
        answer's error, as `error_of` reads it, says so) it is looked up again and asked
        again, until the timeout, as Kafka's admin client retries."""
        deadline = time.monotonic() + self.timeout_ms / 1000
        while True:
            answer = self.client.call(api, version, body, node=self.coordinator(group)[2])
            if error_of(answer) not in COORDINATOR_ERRORS or time.monotonic() > deadline:
                return answer
            self._coordinators.pop(group, None)
            time.sleep(0.2)

    def listings(self, states: list[str] | None = None) -> list[tuple[str, str]]:
        """(group id, state) of every group of the type, in the order of the HashMap by group
        id that Kafka's tools collect them in (the brokers' answers inserted in turn)."""
        found: dict[str, str] = {}
        for broker in self.client.brokers():
            answer = self.client.call(kp.ApiKey.LIST_GROUPS, LIST_GROUPS_VERSION,
                                      {"states_filter": states or [], "types_filter": [self.group_type]},
                                      node=broker.node_id)
            if answer["error_code"]:
                raise known_error(answer["error_code"])
            for g in answer["groups"]:
                found.setdefault(g["group_id"], g.get("group_state") or "")
        return [(g, found[g]) for g in hash_order(found, string_hash)]

    def list_offsets(self, tps: list[tuple[str, int]], timestamp: int) -> dict[tuple[str, int], int]:
        """Each partition's offset for a timestamp (EARLIEST, LATEST or ms), -1 for none, from its leader."""
        md = self.client.call(kp.ApiKey.METADATA, METADATA_VERSION,
                              {"topics": [{"name": t} for t in sorted({t for t, _ in tps})],
                               "allow_auto_topic_creation": False, "include_topic_authorized_operations": False})
        leaders = {(t["name"], p["partition_index"]): p["leader_id"] for t in md["topics"] for p in t["partitions"]}
        by_leader: dict[int, dict[str, list]] = {}
        for topic, partition in tps:
            by_leader.setdefault(leaders.get((topic, partition), -1), {}).setdefault(topic, []).append(
                {"partition_index": partition, "current_leader_epoch": -1, "timestamp": timestamp})
        out = {}
        for node, topics in by_leader.items():
            if node < 0:
                raise known_error(3)  # UNKNOWN_TOPIC_OR_PARTITION
            answer = self.client.call(kp.ApiKey.LIST_OFFSETS, LIST_OFFSETS_VERSION,
                                      {"replica_id": -1, "isolation_level": 0,
                                       "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]},
                                      node=node)
            for t in answer["topics"]:
                for p in t["partitions"]:
                    if p["error_code"]:
                        raise known_error(p["error_code"])
                    out[(t["name"], p["partition_index"])] = p["offset"]
        return out
