"""kafka-streams-groups (Kafka 4.4's StreamsGroupCommand): list, describe and delete streams
groups (KIP-1071), delete and reset their committed offsets, and delete their internal topics,
on a cluster.

Over pk's own codec (backends/wire.py): confluent-kafka's admin has no streams-group calls. The
requests are those Kafka's admin client sends: ListGroups with the "streams" type filter,
StreamsGroupDescribe (89) and OffsetFetch to the group's coordinator, ListOffsets (earliest and
latest) for the partitions the members' active tasks read; for a reset, OffsetCommit with no
member (alterStreamsGroupOffsets) and DeleteTopics. The reset plan is GroupOffsetsResetter's
(group_offsets_resetter.py), over `StreamsResetBackend`.

What the tool prints, as Kafka 4.4 prints it: tables whose variable columns are padded to their
longest cell (15 at least), fixed ones to Kafka's widths; the partitions of --describe in the
iteration order of Java's HashMap by TopicPartition; an empty group shows nothing for
--offsets and --members, and "Streams group 'g' has no active members." above its --state.
Each printer returns the stdout text, so the CLI only writes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pk.engine import protocol as kp
from pk.engine.javacompat import hashmap_order

from .backends.kafka_admin import AdminError, known_error
from .errors import UsageError
from .group_coordinator import METADATA_VERSION, GroupCoordinatorClient
from .java_hash import hash_order, string_hash, topic_partition_hash

# GroupState.groupStatesForType(STREAMS), in the order Kafka's error message lists them
STATES = ("Dead", "NotReady", "Reconciling", "Assigning", "Stable", "Empty")
DESCRIBE_VERSION = 1  # (v1 adds the assignor's name)
OFFSET_FETCH_VERSION = 9
DELETE_GROUPS_VERSION = 2
EARLIEST, LATEST = -2, -1


def parse_states(text: str) -> list[str]:
    """StreamsGroupCommand's --state list (GroupState.parse: case-insensitive, comma-separated)."""
    states = []
    for word in text.split(","):
        match = next((s for s in STATES if s.lower() == word.strip().lower()), None)
        if match is None:
            raise UsageError(f"Invalid state list '{text}'. Valid states are: {', '.join(STATES)}")
        states.append(match)
    return states


def _pad(text, width: int) -> str:
    text = str(text)
    return text + " " * max(width - len(text), 0)


def _width(values, least: int = 15) -> int:
    return max([least] + [len(v) for v in values])


@dataclass
class Member:
    member_id: str
    member_epoch: int
    process_id: str
    client_id: str
    is_classic: bool
    active: list[tuple[str, list[int]]]
    standby: list[tuple[str, list[int]]]
    warmup: list[tuple[str, list[int]]]
    target_active: list[tuple[str, list[int]]]
    target_standby: list[tuple[str, list[int]]]
    target_warmup: list[tuple[str, list[int]]]


@dataclass
class Description:
    group: str
    state: str
    group_epoch: int
    assignment_epoch: int
    topology_epoch: int
    coordinator: tuple[str, int, int]  # host, port, id
    members: list[Member]
    sources: dict[str, list[str]] = field(default_factory=dict)  # subtopology -> topics it reads
    assignor: str = ""
    inputs: list[str] = field(default_factory=list)  # the subtopologies' source topics, in order
    # their repartition source and changelog topics, but the source topics (retrieveInternalTopics)
    internal: list[str] = field(default_factory=list)
    topology_status: int = 0  # TopologyDescriptionStatus: 0 not requested, 1 not stored, 2 error


def _tasks(wire: list) -> list[tuple[str, list[int]]]:
    return [(t["subtopology_id"], list(t["partitions"])) for t in wire]


class StreamsGroupService(GroupCoordinatorClient):
    group_type = "streams"

    def describe(self, group: str, with_topology: bool = False) -> Description:
        answer = self._call(group, kp.ApiKey.STREAMS_GROUP_DESCRIBE, DESCRIBE_VERSION,
                            {"group_ids": [group], "include_authorized_operations": False,
                             "include_topology_description": with_topology},
                            lambda a: a["groups"][0]["error_code"] if a["groups"] else 0)
        g = answer["groups"][0]
        if g["error_code"]:
            raise known_error(g["error_code"], g.get("error_message"))
        members = [Member(m["member_id"], m["member_epoch"], m["process_id"], m["client_id"], m["is_classic"],
                          _tasks(m["assignment"]["active_tasks"]), _tasks(m["assignment"]["standby_tasks"]),
                          _tasks(m["assignment"]["warmup_tasks"]), _tasks(m["target_assignment"]["active_tasks"]),
                          _tasks(m["target_assignment"]["standby_tasks"]),
                          _tasks(m["target_assignment"]["warmup_tasks"]))
                   for m in g["members"]]
        topology = g["topology"]
        sources, inputs, internal = {}, [], []
        if topology is not None:
            for s in topology["subtopologies"] or []:
                sources[s["subtopology_id"]] = list(s["source_topics"]) + [
                    t["name"] for t in s["repartition_source_topics"] if t["name"] not in s["source_topics"]]
                inputs += s["source_topics"]
                internal += [t["name"] for t in s["repartition_source_topics"]]
                internal += [t["name"] for t in s["state_changelog_topics"]]
        return Description(group, g["group_state"], g["group_epoch"], g["assignment_epoch"],
                           topology["epoch"] if topology is not None else -1, self.coordinator(group), members,
                           sources, g.get("assignor_name") or "", inputs,
                           [t for t in internal if t not in inputs], g.get("topology_description_status", 0))

    def delete_groups(self, groups: list[str], internal_topics=None
                      ) -> tuple[list[str], dict[str, str], dict[str, list[str]]]:
        """StreamsGroupService.deleteGroups: only streams groups, only empty ones (checked from
        ListGroups' states first, as Kafka's tool does), then DeleteGroups for those. Returns
        (deleted, {group: the exception Kafka's tool prints}, {group: its internal topics}),
        each in HashMap order; `internal_topics` (--delete-all-internal-topics) finds the
        groups' internal topics before they are deleted."""
        listed = dict(self.listings())
        deleted, failed = [], {}
        passed = [g for g in dict.fromkeys(groups) if listed.get(g) == "Empty"]
        topics = internal_topics(passed) if internal_topics is not None and passed else {}
        for group in dict.fromkeys(groups):
            state = listed.get(group)
            if state is None:
                failed[group] = (f"java.lang.IllegalArgumentException: Group '{group}' does not exist or is not a "
                                 f"streams group.")
            elif state == "Dead":
                failed[group] = (f"org.apache.kafka.common.errors.GroupIdNotFoundException: Streams group '{group}' "
                                 f"group state is DEAD.")
            elif state != "Empty":
                failed[group] = (f"org.apache.kafka.common.errors.GroupNotEmptyException: Streams group '{group}' "
                                 f"is not EMPTY.")
            else:
                answer = self._call(group, kp.ApiKey.DELETE_GROUPS, DELETE_GROUPS_VERSION, {"groups_names": [group]},
                                    lambda a: a["results"][0]["error_code"] if a["results"] else 0)
                code = answer["results"][0]["error_code"]
                if code:
                    failed[group] = known_error(code).execution_message()
                else:
                    deleted.append(group)
        return (hash_order(deleted, string_hash), {g: failed[g] for g in hash_order(failed, string_hash)},
                topics)

    def partitions(self, topics: list[str]) -> tuple[list[tuple[str, int]], dict[str, int]]:
        """Every partition of the topics (Metadata), in the order given, and {topic: error code}
        of those that cannot be described (an unknown topic: a row of its own, partition "-")."""
        md = self.client.call(kp.ApiKey.METADATA, METADATA_VERSION,
                              {"topics": [{"name": t} for t in topics], "allow_auto_topic_creation": False,
                               "include_topic_authorized_operations": False})
        found, failed = {}, {}
        for t in md["topics"]:
            if t["error_code"]:
                failed[t["name"]] = t["error_code"]
            else:
                found[t["name"]] = sorted(p["partition_index"] for p in t["partitions"])
        return [(t, p) for t in topics for p in found.get(t, [])], failed

    def delete_offsets(self, group: str, partitions: list[tuple[str, int]]) -> tuple[int, dict]:
        """OffsetDelete: (the group-level error code, {(topic, partition): error code})."""
        topics: dict[str, list[dict]] = {}
        for t, p in partitions:
            topics.setdefault(t, []).append({"partition_index": p})
        if not partitions:
            return 0, {}
        answer = self._call(group, kp.ApiKey.OFFSET_DELETE, 0,
                            {"group_id": group, "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]},
                            lambda a: a["error_code"])
        codes = {(t["name"], p["partition_index"]): p["error_code"] for t in answer["topics"] for p in t["partitions"]}
        return answer["error_code"], {tp: codes.get(tp, 0) for tp in partitions}

    def committed(self, group: str) -> dict[tuple[str, int], tuple[int, int]]:
        """{(topic, partition): (offset, leader epoch)} of every committed offset of the group."""
        answer = self._call(group, kp.ApiKey.OFFSET_FETCH, OFFSET_FETCH_VERSION,
                            {"groups": [{"group_id": group, "member_id": None, "member_epoch": -1, "topics": None}],
                             "require_stable": False},
                            lambda a: a["groups"][0]["error_code"] if a["groups"] else 0)
        g = answer["groups"][0]
        if g["error_code"]:
            raise known_error(g["error_code"])
        return {(t["name"], p["partition_index"]): (p["committed_offset"], p["committed_leader_epoch"])
                for t in g["topics"] for p in t["partitions"] if p["committed_offset"] >= 0}


# ---------------------------------------------------------------------------------- printers
def list_text(listings: list[tuple[str, str]], with_state: bool) -> str:
    if not with_state:
        return "".join(f"{g}\n" for g, _ in listings)
    width = _width(g for g, _ in listings)
    return "".join(f"{_pad(g, width)} {s}\n" for g, s in [("GROUP", "STATE"), *listings])


def _assignment(kinds: list[tuple[str, list[tuple[str, list[int]]]]]) -> str:
    """"ACTIVE: 0:[0,1]; 1:[0]; " for each kind of tasks a member has."""
    out = ""
    for name, tasks in kinds:
        if tasks:
            out += f"{name}: " + "".join(f"{s}:[{','.join(map(str, ps))}]; " for s, ps in tasks)
    return out


def members_text(d: Description, verbose: bool) -> str:
    if d.state in ("Empty", "Dead") or not d.members:
        return ""
    g = _width([d.group])
    mw = _width(m.member_id for m in d.members)
    pw = _width(m.process_id for m in d.members)
    cw = _width(m.client_id for m in d.members)
    rows = []
    if not verbose:
        rows.append(f"{_pad('GROUP', g)} {_pad('MEMBER', mw)} {_pad('PROCESS', pw)} {_pad('CLIENT-ID', cw)} "
                    f"ASSIGNMENTS")
        for m in d.members:
            tasks = _assignment([("ACTIVE", m.active), ("STANDBY", m.standby), ("WARMUP", m.warmup)])
            rows.append(f"{_pad(d.group, g)} {_pad(m.member_id, mw)} {_pad(m.process_id, pw)} "
                        f"{_pad(m.client_id, cw)} {tasks}")
    else:
        rows.append(f"{_pad('GROUP', g)} {_pad('TARGET-ASSIGNMENT-EPOCH', 25)} {_pad('TOPOLOGY-EPOCH', 15)}"
                    f"{_pad('MEMBER', mw)} {_pad('MEMBER-PROTOCOL', 15)} {_pad('MEMBER-EPOCH', 15)} "
                    f"{_pad('PROCESS', pw)} {_pad('CLIENT-ID', cw)} ASSIGNMENTS")
        for m in d.members:
            tasks = _assignment([("ACTIVE", m.active), ("STANDBY", m.standby), ("WARMUP", m.warmup),
                                 ("TARGET-ACTIVE", m.target_active), ("TARGET-STANDBY", m.target_standby),
                                 ("TARGET-WARMUP", m.target_warmup)])
            rows.append(f"{_pad(d.group, g)} {_pad(d.assignment_epoch, 25)} {_pad(d.topology_epoch, 15)}"
                        f"{_pad(m.member_id, mw)} {_pad('classic' if m.is_classic else 'streams', 15)} "
                        f"{_pad(m.member_epoch, 15)} {_pad(m.process_id, pw)} {_pad(m.client_id, cw)} {tasks}")
    return "".join(row + "\n" for row in rows)


def state_text(d: Description, verbose: bool) -> str:
    out = ""
    if d.state == "Empty":
        out += f"\nError: Streams group '{d.group}' has no active members.\n"
    g = _width([d.group])
    coordinator = f"{d.coordinator[0]}:{d.coordinator[1]} ({d.coordinator[2]})"
    cw = _width([coordinator], 25)
    assignor = d.assignor
    aw = _width([assignor])
    if not verbose:
        rows = [("GROUP", "COORDINATOR (ID)", "ASSIGNOR", "STATE", "#MEMBERS"),
                (d.group, coordinator, assignor, d.state, len(d.members))]
        return out + "".join(f"{_pad(a, g)} {_pad(b, cw)} {_pad(c, aw)} {_pad(s, 25)} {n}\n" for a, b, c, s, n in rows)
    rows = [("GROUP", "COORDINATOR (ID)", "ASSIGNOR", "STATE", "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"),
            (d.group, coordinator, assignor, d.state, d.group_epoch, d.assignment_epoch, len(d.members))]
    return out + "".join(f"{_pad(a, g)} {_pad(b, cw)} {_pad(c, aw)} {_pad(s, 25)} {_pad(e, 15)} {_pad(t, 25)} {n}\n"
                         for a, b, c, s, e, t, n in rows)


def delete_text(deleted: list[str], failed: dict[str, str]) -> str:
    def quoted(groups) -> str:
        return ", ".join(f"'{g}'" for g in groups)
    if not failed:
        return f"Deletion of requested streams groups ({quoted(deleted)}) was successful.\n"
    out = "\nError: Deletion of some streams groups failed:\n"
    out += "".join(f"* Group '{g}' could not be deleted due to: {why}\n" for g, why in failed.items())
    if deleted:
        out += f"\nThese streams groups were deleted successfully: {quoted(deleted)}.\n"
    return out


_PARTITION_ERRORS = {"GROUP_SUBSCRIBED_TO_TOPIC", "TOPIC_AUTHORIZATION_FAILED", "UNKNOWN_TOPIC_OR_PARTITION"}
_GROUP_MESSAGES = {"INVALID_GROUP_ID": "The configured groupId is invalid.",
                   "GROUP_ID_NOT_FOUND": "The group id does not exist.",
                   "GROUP_AUTHORIZATION_FAILED": "Group authorization failed.",
                   "NON_EMPTY_GROUP": "The group is not empty."}


def delete_offsets_text(group: str, top: int, codes: dict[tuple[str, int], int],
                        topics: list[str], failed: dict[str, int]) -> str:
    """What --delete-offsets prints: a summary line (success, or Kafka's words for the
    OffsetDelete answer's group-level error, else its first partition-level one), then each
    asked partition's status, a topic that could not be described on one row ("-")."""
    first = top or next((c for c in codes.values() if c), 0)
    if not first:
        out = f"Request succeeded for deleting offsets from group {group}.\n"
    else:
        name = known_error(first).name
        if top and name in _GROUP_MESSAGES:
            line = _GROUP_MESSAGES[name]
        elif name in _PARTITION_ERRORS:
            line = "Encountered some partition-level error, see the follow-up details."
        else:
            line = f"Encountered some unknown error: {name}"
        out = f"\nError: {line}\n"
    # (rows by topic name, then partition; a topic that could not be described is partition -1)
    found = {(t, -1): code for t, code in failed.items() if t in topics}
    found.update({tp: top or code for tp, code in codes.items()})
    rows = [(t, "-" if p < 0 else p, found[(t, p)]) for t, p in sorted(found)]
    width = _width(t for t, _, _ in rows)
    out += f"\n{_pad('TOPIC', width)} {_pad('PARTITION', 10)} {_pad('STATUS', 15)}\n"
    for topic, partition, code in rows:
        status = f"Error: {known_error(code).execution_message()}" if code else "Successful"
        out += f"{_pad(topic, width)} {_pad(partition, 10)} {_pad(status, 15)}\n"
    return out


@dataclass
class OffsetRow:
    topic: str
    partition: int
    current: int | None
    leader_epoch: int | None
    end: int
    lag: int


def offset_rows(service: StreamsGroupService, d: Description) -> list[OffsetRow]:
    """The partitions the members' active tasks read (their subtopology's source and
    repartition topics), in HashMap<TopicPartition> order: committed offset, log end, lag
    (from the committed offset, else from the log start). Two partitions in one bucket of
    that map come in an order Kafka's own tool does not keep from one run to the next (it
    gathers them through an immutable set, whose iteration order is salted per JVM): pk keeps
    the members' order, then the tasks'."""
    partitions = []
    for m in d.members:
        for s, ps in m.active:
            partitions += [(t, p) for t in d.sources.get(s, []) for p in ps]
    partitions = hash_order(partitions, lambda tp: topic_partition_hash(*tp))
    if not partitions:
        return []
    earliest = service.list_offsets(partitions, EARLIEST)
    latest = service.list_offsets(partitions, LATEST)
    committed = service.committed(d.group)
    rows = []
    for tp in partitions:
        current = committed.get(tp)
        end = latest[tp]
        lag = end - current[0] if current is not None else end - earliest[tp]
        rows.append(OffsetRow(tp[0], tp[1], current[0] if current else None,
                              current[1] if current and current[1] >= 0 else None, end, lag))
    return rows


def offsets_text(d: Description, rows: list[OffsetRow], verbose: bool) -> str:
    if d.state in ("Empty", "Dead") or not rows:
        return ""
    g = _width([d.group])
    tw = _width(r.topic for r in rows)
    if not verbose:
        lines = [f"{_pad('GROUP', g)} {_pad('TOPIC', tw)} {_pad('PARTITION', 10)} OFFSET-LAG"]
        lines += [f"{_pad(d.group, g)} {_pad(r.topic, tw)} {_pad(r.partition, 10)} {r.lag}" for r in rows]
    else:
        def dash(v):
            return "-" if v is None else v
        lines = [f"{_pad('GROUP', g)} {_pad('TOPIC', tw)} {_pad('PARTITION', 10)} {_pad('CURRENT-OFFSET', 15)} "
                 f"{_pad('LEADER-EPOCH', 15)} {_pad('LOG-END-OFFSET', 15)} {_pad('OFFSET-LAG', 15)}"]
        lines += [f"{_pad(d.group, g)} {_pad(r.topic, tw)} {_pad(r.partition, 10)} {_pad(dash(r.current), 15)} "
                  f"{_pad(dash(r.leader_epoch), 15)} {_pad(r.end, 15)} {_pad(r.lag, 15)}" for r in rows]
    return "".join(line + "\n" for line in lines)


# ------------------------------------------------------------------------------ reset offsets
OFFSET_COMMIT_VERSION = 9
DELETE_TOPICS_VERSION = 5
_UNKNOWN_TOPIC_OR_PARTITION, _UNSUPPORTED_VERSION, _GROUP_ID_NOT_FOUND = 3, 35, 69
# StreamsGroupTopologyDescriptionStatus by its wire value
_STATUS = {0: "NOT_REQUESTED", 1: "NOT_STORED", 2: "ERROR", 3: "AVAILABLE"}


class StreamsResetBackend:
    """The consumer_groups.GroupBackend calls GroupOffsetsResetter makes, for a streams group:
    a group's committed offsets are those of its subtopologies' source and repartition source
    topics (StreamsGroupService.getCommittedOffsets), offsets come from ListOffsets."""

    def __init__(self, service: StreamsGroupService):
        self.service = service

    def committed_offsets(self, group: str) -> dict[tuple[str, int], int]:
        d = self.service.describe(group)
        read = {t for topics in d.sources.values() for t in topics}
        return {tp: offset for tp, (offset, _) in self.service.committed(group).items() if tp[0] in read}

    def input_offsets(self, group: str) -> dict[tuple[str, int], int]:
        """getInputTopicOffsets: the committed offsets of the source topics alone."""
        inputs = set(self.service.describe(group).inputs)
        return {tp: offset for tp, (offset, _) in self.service.committed(group).items() if tp[0] in inputs}

    def topic_partitions(self, topic: str) -> list[int]:
        partitions, failed = self.service.partitions([topic])
        if topic in failed:
            raise known_error(failed[topic])
        return [p for _, p in partitions]

    def log_start_offsets(self, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        return self.service.list_offsets(partitions, EARLIEST) if partitions else {}

    def log_end_offsets(self, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        return self.service.list_offsets(partitions, LATEST) if partitions else {}

    def offsets_for_timestamp(self, partitions: list[tuple[str, int]], timestamp: int) -> dict:
        found = self.service.list_offsets(partitions, timestamp) if partitions else {}
        return {tp: (offset if offset >= 0 else None) for tp, offset in found.items()}


def alter_offsets(service: StreamsGroupService, group: str, offsets: dict[tuple[str, int], int]) -> None:
    """alterStreamsGroupOffsets: an OffsetCommit with no member and no epoch, which the
    coordinator takes while the group is empty; the first failed partition fails it all."""
    if not offsets:
        return
    topics: dict[str, list[dict]] = {}
    for (t, p), offset in offsets.items():
        topics.setdefault(t, []).append({"partition_index": p, "committed_offset": offset,
                                         "committed_leader_epoch": -1, "committed_metadata": ""})
    answer = service._call(group, kp.ApiKey.OFFSET_COMMIT, OFFSET_COMMIT_VERSION,
                           {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
                            "group_instance_id": None,
                            "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]},
                           lambda a: next((p["error_code"] for t in a["topics"] for p in t["partitions"]
                                           if p["error_code"]), 0))
    code = next((p["error_code"] for t in answer["topics"] for p in t["partitions"] if p["error_code"]), 0)
    if code:
        raise known_error(code)


def delete_topics(service: StreamsGroupService, topics: list[str]) -> dict[str, int]:
    """DeleteTopics by name: {topic: error code} of those that failed."""
    answer = service.client.call(kp.ApiKey.DELETE_TOPICS, DELETE_TOPICS_VERSION,
                                 {"topic_names": topics, "timeout_ms": service.timeout_ms})
    return {r["name"]: r["error_code"] for r in answer["responses"] if r["error_code"]}


_INTERNAL_SUFFIXES = ("-changelog", "-repartition", "-subscription-registration-topic",
                      "-subscription-response-topic")
_FK_JOIN = re.compile(r".+-KTABLE-FK-JOIN-SUBSCRIPTION-(REGISTRATION|RESPONSE)-\d+-topic")


def inferred_internal(topic: str, group: str) -> bool:
    """isInferredInternalTopic: named `<application id>-...` as Kafka Streams names its own."""
    return topic.startswith(group + "-") and (topic.endswith(_INTERNAL_SUFFIXES) or bool(_FK_JOIN.fullmatch(topic)))


class StreamsReset:
    """StreamsGroupService.resetOffsets and the internal topics' deletion of --reset-offsets
    --execute and --delete. Kafka's printError lines go to stdout (`out`), as its tool prints them."""

    def __init__(self, service: StreamsGroupService, out, o=None, console=None):
        from .group_offsets_resetter import GroupOffsetsResetter

        self.service = service
        self.backend = StreamsResetBackend(service)
        self.out = out
        self.o = o  # consumer_groups.GroupOptions of --reset-offsets: the scenario, --group, --execute ...
        self.resetter = GroupOffsetsResetter(lambda: self.backend, o, console) if o is not None else None

    def error(self, message: str) -> None:
        self.out(f"\nError: {message}\n")

    def reset(self, groups: list[str], input_topics: list[str], all_input: bool,
              internal_topics: list[str] | None) -> dict[str, dict[tuple[str, int], int]]:
        """{group: {partition: new offset}}; `internal_topics` (None: none to delete) is
        --delete-internal-topic's list, or [] for --delete-all-internal-topics."""
        dry_run = not self.o.execute
        result: dict[str, dict] = {}
        for group in hash_order(dict.fromkeys(groups), string_hash):
            try:
                state = self.service.describe(group).state
            except AdminError as exc:
                if exc.code != _GROUP_ID_NOT_FOUND:
                    raise ResetFailure(f"java.util.concurrent.ExecutionException: {exc.execution_message()}")
                state = None
            if state not in (None, "Empty", "Dead"):
                self.error(f"Assignments can only be reset if the group '{group}' is inactive, but the current "
                           f"state is {state}.")
                result[group] = {}
                continue
            result[group] = self._reset_inactive(group, input_topics, all_input, dry_run)
            if state is not None and not dry_run and internal_topics is not None:
                topics = internal_topics or self.internal_topics([group]).get(group, [])
                if topics:
                    self._delete_internal(group, topics)
        return result

    def _reset_inactive(self, group: str, input_topics: list[str], all_input: bool, dry_run: bool) -> dict:
        try:
            if all_input:
                partitions = sorted(self.backend.input_offsets(group))
            elif input_topics:
                partitions = self.resetter.parse_topic_partitions_to_reset(input_topics)
                known = self.service.committed(group)
                if not all(tp in known for tp in partitions):
                    self.error(f"One or more topics are not part of the group '{group}'.")
                    partitions = []
            elif not self.o.from_file:
                raise UsageError("One of the reset scopes should be defined: --all-input-topics, --input-topic.")
            else:
                partitions = []
            prepared = self.resetter.prepare_offsets_to_reset(group, partitions)
            if not dry_run:
                alter_offsets(self.service, group, prepared)
            return prepared
        except AdminError as exc:  # (a KafkaException: rethrown as it is)
            raise ResetFailure(f"java.util.concurrent.ExecutionException: {exc.execution_message()}"
                               if exc.code == _GROUP_ID_NOT_FOUND else exc.message)

    def internal_topics(self, groups: list[str]) -> dict[str, list[str]]:
        """retrieveInternalTopics: each group's repartition and changelog topics that Kafka
        Streams would have named (the others are named in an error and kept)."""
        found: dict[str, list[str]] = {}
        try:
            described = [self.service.describe(g) for g in groups]
        except AdminError as exc:
            self.error(f"Retrieving internal topics failed due to java.util.concurrent.ExecutionException: "
                       f"{exc.execution_message()}")
            return found
        for d in described:
            topics = []
            for topic in d.internal:
                if inferred_internal(topic, d.group):
                    topics.append(topic)
                else:
                    self.error(f"The internal topic '{topic}' is not inferred as internal and thus will not be "
                               f"deleted with the group '{d.group}'.")
            if topics:
                found[d.group] = topics
        return found

    def _delete_internal(self, group: str, topics: list[str]) -> None:
        failed = delete_topics(self.service, topics)
        if not failed:
            return
        code = next(iter(failed.values()))  # (the first failed topic's future fails all())
        if code == _UNKNOWN_TOPIC_OR_PARTITION:
            self.error(f"Deleting internal topics for group '{group}' failed because the topics do not exist.")
        elif code == _UNSUPPORTED_VERSION:
            self.error(f"Deleting internal topics is not supported by the broker version.\nInternal topics: "
                       f"({','.join(topics)}).\nUse 'kafka-topics.sh' to delete the group's internal topics.")
        else:
            self.error(f"Deleting internal topics for group '{group}' failed due to "
                       f"java.util.concurrent.ExecutionException: {known_error(code).execution_message()}")

    def delete_internal_after_groups(self, deleted: list[str], topics: dict[str, list[str]]) -> tuple[str, str]:
        """maybeDeleteInternalTopics and printInternalTopicErrors of --delete
        --delete-all-internal-topics: the deleted groups' internal topics go; returns what
        Kafka prints before the groups' outcome (each topic that could not be deleted) and
        after it (the topics' outcome)."""
        if not topics or not deleted:
            return "", ""
        before, failures = "", {}
        for group in deleted:
            if topics.get(group):
                failed = delete_topics(self.service, topics[group])
                # (DeleteTopicsResult's futures, a HashMap sized for the topics)
                for topic in hashmap_order(topics[group], sized_for=len(topics[group])):
                    if topic in failed:
                        before += f"Failed to delete internal topic: {topic}\n"
                if failed:
                    failures[group] = known_error(next(iter(failed.values()))).execution_message()
        if not failures:
            with_topics = [g for g in deleted if g in topics]
            return before, ("Deletion of associated internal topics of the streams groups ('"
                            + "', '".join(with_topics) + "') was successful.\n")
        after = "Deletion of some associated internal topics failed:\n"
        for group in hash_order(failures, string_hash):
            after += f"* Internal topics of the streams group '{group}' could not be deleted due to: {failures[group]}\n"
        return before, after


class ResetFailure(Exception):
    """An exception Kafka's tool lets through: "Error: Executing streams group command failed
    due to <message>"."""


def reset_text(result: dict[str, dict[tuple[str, int], int]]) -> str:
    """StreamsGroupCommand.printOffsetsToReset: fixed widths, partitions in HashMap order."""
    line = "\n{:<30} {:<30} {:<10} {:<15}"
    text = line.format("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET") if result else ""
    for group in hashmap_order(result):
        offsets = result[group]
        for topic, p in hashmap_order(sorted(offsets)):
            text += line.format(group, topic, p, offsets[(topic, p)])
    return text + "\n"


def topology_text(d: Description) -> tuple[str, str]:
    """printTopology: (stdout, pk's stderr line). A broker keeps topology descriptions only
    with a topology description plugin (pk-server-start keeps none: NOT_STORED); printing a
    stored one (AVAILABLE) is not done yet."""
    if d.topology_status == 1:
        return f"\nError: No topology description is stored for streams group '{d.group}'.\n", ""
    if d.topology_status == 2:
        return (f"\nError: The broker failed to fetch the topology description for streams group '{d.group}'. "
                f"See the broker logs for details.\n", "")
    if d.topology_status == 3:
        return "", "pk-streams-groups: printing a stored topology description is not supported yet"
    return (f"\nError: No topology description is available for streams group '{d.group}' "
            f"(status: {_STATUS.get(d.topology_status, d.topology_status)}).\n", "")
