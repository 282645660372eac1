"""Streams groups (KIP-1071): the broker-side rebalance protocol of Kafka Streams, served by
pk-server-start as StreamsGroupHeartbeat (88) and StreamsGroupDescribe (89).

A Kafka Streams client joins with its *topology* (subtopologies: source topics, repartition
topics it writes and reads, changelog topics of its state stores). The coordinator:

- keeps the group's topology (the first member's, or a newer topology epoch);
- *configures* it against the cluster: a subtopology has as many tasks as its largest source
  topic has partitions; a repartition topic with no partition count takes the task count of the
  subtopologies writing to it; a changelog topic has its subtopology's task count. Missing
  source topics leave the group NotReady (status MISSING_SOURCE_TOPICS); missing internal topics
  are created here, as KafkaApis does after the coordinator reports them (status
  MISSING_INTERNAL_TOPICS until they exist);
- assigns active tasks with Kafka's sticky task assignor (engine-side: `sticky_assign`), per
  process, a task staying with its previous owner while that owner is under its quota;
- reconciles each member towards its target as KIP-848 does for partitions: a task another
  member still owns is held back until that member reports it revoked; a member takes the
  target epoch once it owns nothing outside its target.

State: Empty (no member), NotReady (topology not configured), Assigning, Reconciling, Stable.
Timers: each member's session (group config `streams.session.timeout.ms`) fences it.
The groups live in memory only (Kafka also writes them to `__consumer_offsets`: not done
here, see docs/streams-groups.md); committed offsets are the coordinator's, durable as always.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time

from .. import consumer_offsets as offsets_codec
from ..errors import KafkaError
from ..protocol import errors as E
from .consumer_group_848 import ConsumerGroup

log = logging.getLogger("kafka.coordinator.group.GroupMetadataManager")

STREAMS_GROUP_TYPE = "streams"
STREAMS_PROTOCOL_TYPE = "streams"
LEAVE_EPOCH, LEAVE_STATIC_EPOCH = -1, -2
EMPTY, NOT_READY, ASSIGNING, RECONCILING, STABLE = "Empty", "NotReady", "Assigning", "Reconciling", "Stable"
# StreamsGroupHeartbeatResponse's status codes
STALE_TOPOLOGY, MISSING_SOURCE_TOPICS, INCORRECTLY_PARTITIONED_TOPICS, MISSING_INTERNAL_TOPICS, \
    SHUTDOWN_APPLICATION, ASSIGNMENT_DELAYED = range(6)

STICKY = "sticky"  # group.streams.assignors: Kafka 4.4 has this one
Tasks = dict[str, frozenset[int]]  # subtopology id -> partitions (task ids)


def _minus(a: Tasks, b: Tasks) -> Tasks:
    return {s: ps - b.get(s, frozenset()) for s, ps in a.items() if ps - b.get(s, frozenset())}


def _intersect(a: Tasks, b: Tasks) -> Tasks:
    return {s: ps & b.get(s, frozenset()) for s, ps in a.items() if ps & b.get(s, frozenset())}


def _tasks_of(wire: list | None) -> Tasks | None:
    if wire is None:
        return None
    return {t["subtopology_id"]: frozenset(t["partitions"]) for t in wire if t["partitions"]}


def _wire(tasks: Tasks) -> list[dict]:
    return [{"subtopology_id": s, "partitions": sorted(ps)} for s, ps in sorted(tasks.items())]


# ---------------------------------------------------------------------------------- assignor
def sticky_assign(tasks: list[tuple[str, int]], stateful: set[str], members: dict[str, str],
                  previous: dict[str, Tasks], num_standby: int = 0,
                  previous_standby: dict[str, Tasks] | None = None) -> tuple[dict[str, Tasks], dict[str, Tasks]]:
    """Kafka's sticky task assignor: (active, standby) tasks by member. `members` maps member
    id -> process id, `previous` / `previous_standby` each member's current tasks.

    Active: stateful tasks are balanced first, then the stateless ones; a task stays with its
    previous owner while that owner is below the quota (the even share, recomputed as members
    fill up); the rest go, in subtopology order, to the least loaded process (tasks per member
    of it) and within it to its least loaded member.
    Standby (`num_standby` per stateful task, never on a process that has the task already):
    first back to members that had it as a standby while they are under the share of all
    tasks, then to the least loaded processes; too few processes leave some unplaced."""
    counts = {m: 0 for m in members}
    result: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
    if not members:
        return {}, {}
    process_members: dict[str, list[str]] = {}
    for m, p in sorted(members.items()):
        process_members.setdefault(p, []).append(m)
    owner = {(s, p): m for m, ts in previous.items() if m in members for s, ps in ts.items() for p in ps}

    def load(process: str) -> float:
        ms = process_members[process]
        return sum(counts[m] for m in ms) / len(ms)

    # quotas: a member reaching the share leaves the pool, the rest share what is left
    total_active = len(tasks)
    quota = {"active": [total_active, len(members), _per_member(total_active, len(members))]}

    def filled(q, count):
        if count == q[2]:
            q[1] -= 1
            q[0] -= count
            q[2] = _per_member(q[0], q[1])

    for flavour in (True, False):
        todo = [t for t in tasks if (t[0] in stateful) == flavour]
        n = len(todo)
        fq = [n, len(members), _per_member(n, len(members))]
        rest = []
        for task in sorted(todo, key=lambda t: (t[1], t[0])):  # sticky pass: by partition first
            m = owner.get(task)
            limit = fq[2] if flavour else quota["active"][2]
            if m is not None and counts[m] < limit:
                result[m].append(task)
                counts[m] += 1
                if flavour:
                    filled(fq, counts[m])
                filled(quota["active"], counts[m])
            else:
                rest.append(task)
        for task in sorted(rest):  # range-like: by subtopology, then partition
            process = min(process_members, key=lambda p: (load(p), p))
            m = min(process_members[process], key=lambda x: (counts[x], x))
            result[m].append(task)
            counts[m] += 1
            filled(quota["active"], counts[m])

    standby: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
    stateful_tasks = [t for t in tasks if t[0] in stateful]
    if num_standby > 0 and stateful_tasks:
        total = len(tasks) + num_standby * len(stateful_tasks)
        share = _per_member(total, len(members))
        had = {}
        for m, ts in (previous_standby or {}).items():
            if m in members:
                for s, ps in ts.items():
                    for p in ps:
                        had.setdefault((s, p), []).append(m)

        def holds(process: str, task) -> bool:
            return any(task in result[m] or task in standby[m] for m in process_members[process])

        leftovers = []
        for task in sorted(stateful_tasks, key=lambda t: (t[1], t[0]), reverse=True):
            need = num_standby
            for m in had.get(task, []):  # sticky pass
                if need and not holds(members[m], task) and counts[m] < share:
                    standby[m].append(task)
                    counts[m] += 1
                    need -= 1
            if need:
                leftovers.append((task, need))
        for task, need in sorted(leftovers, reverse=True):
            for _ in range(need):
                candidates = [p for p in process_members if not holds(p, task)]
                if not candidates:
                    log.warning("Not enough capacity for %d standby replica(s) of task %s_%d.", need, *task)
                    break
                process = min(candidates, key=lambda p: (load(p), p))
                m = min(process_members[process], key=lambda x: (counts[x], x))
                standby[m].append(task)
                counts[m] += 1
    return ({m: _as_tasks(ts) for m, ts in result.items()}, {m: _as_tasks(ts) for m, ts in standby.items()})


def _per_member(total: int, members: int) -> int:
    return math.ceil(total / members) if members > 0 else 0


def _as_tasks(pairs) -> Tasks:
    out: dict[str, set[int]] = {}
    for s, p in pairs:
        out.setdefault(s, set()).add(p)
    return {s: frozenset(ps) for s, ps in out.items()}


# ---------------------------------------------------------------------------------- model
class StreamsMember:
    def __init__(self, member_id: str):
        self.member_id = member_id
        self.member_epoch = 0
        self.previous_epoch = -1
        self.instance_id: str | None = None
        self.rack_id: str | None = None
        self.client_id = ""
        self.client_host = ""
        self.process_id = ""
        self.user_endpoint: dict | None = None
        self.client_tags: list[dict] = []
        self.topology_epoch = 0
        self.rebalance_timeout_ms = 300000
        self.assigned: Tasks = {}      # active tasks the member has been given
        self.revoking: Tasks = {}      # active tasks it must give up
        self.standby: Tasks = {}       # standby tasks it has been given
        self.task_offsets: list[dict] = []
        self.task_end_offsets: list[dict] = []
        self.session_timer: asyncio.TimerHandle | None = None

    def cancel_timers(self) -> None:
        if self.session_timer is not None:
            self.session_timer.cancel()
            self.session_timer = None


class StreamsGroup:
    def __init__(self, group_id: str):
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.topology: dict | None = None   # the heartbeat's Topology struct
        self.members: dict[str, StreamsMember] = {}
        self.target: dict[str, Tasks] = {}
        self.target_standby: dict[str, Tasks] = {}
        self.configured: dict | None = None  # {subtopology: task count} once every topic exists
        self.delay_until = 0.0               # monotonic end of the initial rebalance delay
        self.shutdown_by = ""                # a member that asked the whole application to stop

    @property
    def state(self) -> str:
        if not self.members:
            return EMPTY
        if self.configured is None:
            return NOT_READY
        if self.group_epoch > self.assignment_epoch:
            return ASSIGNING
        if any(m.member_epoch != self.assignment_epoch or m.revoking for m in self.members.values()):
            return RECONCILING
        return STABLE

    def source_topics(self) -> set[str]:
        if self.topology is None:
            return set()
        return {t for s in self.topology["subtopologies"] for t in s["source_topics"]}

    def owned_elsewhere(self, member_id: str) -> set[tuple[str, int]]:
        held = set()
        for mid, m in self.members.items():
            if mid != member_id:
                for s, ps in {**m.assigned, **{k: m.assigned.get(k, frozenset()) | v
                                               for k, v in m.revoking.items()}}.items():
                    held.update((s, p) for p in ps)
        return held

    # ------------------------------------------------------------------ offsets (OffsetCommit/Fetch)
    # StreamsGroup.validateOffsetCommit/validateOffsetFetch are a consumer group's (member epochs,
    # from OffsetCommit v9): the same checks on the same member fields.
    validate_offset_commit = ConsumerGroup.validate_offset_commit
    validate_offset_fetch = ConsumerGroup.validate_offset_fetch

    def subscribed_topics(self) -> set[str]:
        """The topics whose offsets the group uses (OffsetDelete refuses them while it has members)."""
        if self.topology is None or not self.members:
            return set()
        names = set(self.source_topics())
        for s in self.topology["subtopologies"]:
            names.update(t["name"] for t in s["repartition_source_topics"])
        return names


def _answer(code: int, message: str | None = None, member_id: str = "", epoch: int = 0) -> dict:
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "member_id": member_id,
            "member_epoch": epoch, "heartbeat_interval_ms": 0, "acceptable_recovery_lag_legacy": 0,
            "acceptable_recovery_lag": 0, "task_offset_interval_ms": 0, "status": None, "active_tasks": None,
            "standby_tasks": None, "warmup_tasks": None, "endpoint_information_epoch": 0,
            "partitions_by_user_endpoint": None}


class _Invalid(Exception):
    def __init__(self, code: int, message: str | None):
        super().__init__(message)
        self.code = code
        self.message = message


# ---------------------------------------------------------------------------------- coordinator
class StreamsGroups:
    """The streams groups of one broker, by id (in memory)."""

    def __init__(self, broker, classic):
        self.broker = broker
        self.engine = broker.engine
        self.classic = classic
        self.groups: dict[str, StreamsGroup] = {}

    def get(self, group_id: str) -> StreamsGroup | None:
        return self.groups.get(group_id)

    def _config(self, group_id: str, name: str) -> int:
        return self.broker.group_configs.value(group_id, name)

    # ================================================================== heartbeat
    def heartbeat(self, body: dict, version: int, client_id: str, client_host: str,
                  create_topics) -> dict:
        """One StreamsGroupHeartbeat; `create_topics(list of (name, partitions, rf, configs))`
        creates missing internal topics (the caller's, as KafkaApis does it)."""
        try:
            self._validate(body)
            return self._heartbeat(body, version, client_id, client_host, create_topics)
        except _Invalid as bad:
            return _answer(bad.code, bad.message, body["member_id"], 0)

    @staticmethod
    def _validate(body: dict) -> None:
        """Kafka's throwIfStreamsGroupHeartbeatRequestIsInvalid, the checks a client can hit."""
        def invalid(message):
            raise _Invalid(E.INVALID_REQUEST, message)
        if not body["member_id"]:
            invalid("MemberId can't be empty.")
        if not body["group_id"]:
            invalid("GroupId can't be empty.")
        if body["instance_id"] is not None and not body["instance_id"]:
            invalid("InstanceId can't be empty.")
        if body["rack_id"] is not None and not body["rack_id"]:
            invalid("RackId can't be empty.")
        epoch = body["member_epoch"]
        if epoch == 0:
            if body["rebalance_timeout_ms"] == -1:
                invalid("RebalanceTimeoutMs must be provided in first request.")
            if body["topology"] is None:
                invalid("Topology must be non-empty when (re-)joining.")
            if body["process_id"] is None:
                invalid("ProcessId must be provided in first request.")
            for field, name in (("active_tasks", "ActiveTasks"), ("standby_tasks", "StandbyTasks"),
                                ("warmup_tasks", "WarmupTasks")):
                if body[field] is None or body[field]:
                    invalid(f"{name} must be empty when (re-)joining.")
        elif epoch == LEAVE_STATIC_EPOCH and body["instance_id"] is None:
            invalid("InstanceId can't be null.")
        elif epoch < LEAVE_STATIC_EPOCH:
            invalid(f"MemberEpoch is {epoch}, but must be greater than or equal to -2.")

    def _heartbeat(self, body, version, client_id, client_host, create_topics) -> dict:
        group_id, member_id, epoch = body["group_id"], body["member_id"], body["member_epoch"]
        if epoch in (LEAVE_EPOCH, LEAVE_STATIC_EPOCH):
            return self._leave(group_id, member_id, epoch)
        group = self.groups.get(group_id)
        if group is None:
            if epoch != 0:
                # Kafka answers GROUP_ID_NOT_FOUND, which no member of a live group can meet there
                # (its groups outlive a restart in __consumer_offsets). pk's do not: the member
                # is told it is unknown, so that it joins again as after Kafka's restart.
                raise _Invalid(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
            classic = self.classic.groups.get(group_id)
            if (classic is not None and classic.members) or self.broker.groups.consumer.get(group_id) is not None:
                raise _Invalid(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a streams group.")
            if classic is not None:  # an empty classic group (or offsets only) becomes a streams group
                if classic.protocol_type is not None:  # it had a GroupMetadata record: tombstoned
                    self.classic.append(group_id, [(offsets_codec.group_metadata_key(group_id), None, (),
                                                    int(time.time() * 1000))])
                self.classic.drop(classic)
            group = self.groups[group_id] = StreamsGroup(group_id)
        member = group.members.get(member_id)
        changed = False
        new_member = member is None
        if member is None:
            if epoch != 0:
                raise _Invalid(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
            member = group.members[member_id] = StreamsMember(member_id)
            changed = True
        elif epoch > member.member_epoch:
            raise _Invalid(E.FENCED_MEMBER_EPOCH,
                           f"The streams group member has a greater member epoch ({epoch}) than the one known by "
                           f"the group coordinator ({member.member_epoch}). The member must abandon all its "
                           f"partitions and rejoin.")
        elif epoch != 0 and epoch != member.member_epoch:
            owned = _tasks_of(body["active_tasks"])
            # a member one epoch behind may carry on if it owns only tasks it was given
            if not (epoch == member.previous_epoch and owned is not None
                    and not _minus(owned, member.assigned)):
                raise _Invalid(E.FENCED_MEMBER_EPOCH,
                               f"The streams group member has a smaller member epoch ({epoch}) than the one "
                               f"known by the group coordinator ({member.member_epoch}). The member must abandon "
                               f"all its partitions and rejoin.")
        joining = epoch == 0
        member.client_id, member.client_host = client_id, client_host
        for field in ("instance_id", "rack_id", "process_id", "user_endpoint"):
            if body[field] is not None or joining:
                if getattr(member, field) != body[field] and body[field] is not None:
                    setattr(member, field, body[field])
                    changed = True
        if body["client_tags"] is not None:
            member.client_tags = body["client_tags"]
        if body["rebalance_timeout_ms"] != -1:
            member.rebalance_timeout_ms = body["rebalance_timeout_ms"]
        if body["task_offsets"] is not None:
            member.task_offsets = body["task_offsets"]
        if body["task_end_offsets"] is not None:
            member.task_end_offsets = body["task_end_offsets"]
        topology = body["topology"]
        if topology is not None:
            if group.topology is not None and topology["epoch"] > group.topology["epoch"] and \
                    set(group.members) != {member_id}:
                # (Kafka 4.4 keeps a group's topology while it has other members)
                if new_member:
                    del group.members[member_id]
                raise _Invalid(E.STREAMS_INVALID_TOPOLOGY_EPOCH, "Topology updates are not supported yet.")
            member.topology_epoch = topology["epoch"]
            if group.topology is None or topology["epoch"] > group.topology["epoch"]:
                group.topology = topology
                group.configured = None
                changed = True
        if body["shutdown_application"] and not group.shutdown_by:
            group.shutdown_by = member_id
            log.info("[GroupId %s] Member %s requested a shutdown of the streams application.", group_id, member_id)
        if changed:
            if group.group_epoch == 0:
                group.delay_until = _now() + self._config(group_id, "streams.initial.rebalance.delay.ms") / 1000
            group.group_epoch += 1

        statuses = []
        if group.shutdown_by:
            statuses.append((SHUTDOWN_APPLICATION, f"Streams group member {group.shutdown_by} encountered a fatal "
                                                   f"error and requested a shutdown for the entire application."))
        if group.topology is not None and member.topology_epoch != group.topology["epoch"]:
            statuses.append((STALE_TOPOLOGY, f"The member's topology epoch {member.topology_epoch} is behind the "
                                             f"group's topology epoch {group.topology['epoch']}."))
        was_configured = group.configured
        statuses += self._configure(group, create_topics)
        if group.configured != was_configured and group.group_epoch == group.assignment_epoch:
            group.group_epoch += 1  # topic metadata changed: assign again
        if group.group_epoch > group.assignment_epoch:
            if _now() < group.delay_until:  # (Kafka lists this status first)
                statuses.insert(0, (ASSIGNMENT_DELAYED, "Assignment delayed due to the configured initial "
                                                        "rebalance delay."))
            else:
                self._assign(group)
        before = (member.member_epoch, dict(member.assigned), dict(member.standby))
        self._reconcile(group, member, _tasks_of(body["active_tasks"]))
        self._schedule_session(group, member)

        answer = _answer(E.NONE, None, member_id, member.member_epoch)
        answer["heartbeat_interval_ms"] = self._config(group_id, "streams.heartbeat.interval.ms")
        answer["acceptable_recovery_lag_legacy"] = answer["acceptable_recovery_lag"] = \
            self._config(group_id, "streams.acceptable.recovery.lag")
        answer["task_offset_interval_ms"] = self._config(group_id, "streams.task.offset.interval.ms")
        answer["status"] = [{"status_code": c, "status_detail": d} for c, d in statuses]
        if joining or body["active_tasks"] is not None or \
                (member.member_epoch, member.assigned, member.standby) != before:
            answer["active_tasks"] = _wire(member.assigned)
            answer["standby_tasks"] = _wire(member.standby)
            answer["warmup_tasks"] = []
        answer["endpoint_information_epoch"] = body["endpoint_information_epoch"]
        return answer

    # ------------------------------------------------------------------ topology
    def _partitions(self, topic: str) -> int | None:
        """The topic's partition count, None when it does not exist."""
        try:
            return len(self.engine.topic(topic).assignment)
        except KafkaError:
            return None

    def _configure(self, group: StreamsGroup, create_topics) -> list[tuple[int, str]]:
        """Task counts from the cluster's topics; the statuses of what is missing. Internal
        topics that can be sized are created (asynchronously, by `create_topics`)."""
        group.configured = None
        if group.topology is None:
            return []
        subs = group.topology["subtopologies"]
        missing_sources = sorted({t for s in subs for t in s["source_topics"] if self._partitions(t) is None})
        if missing_sources:
            return [(MISSING_SOURCE_TOPICS, f"Source topics {', '.join(missing_sources)} are missing.")]
        # repartition topics: their own count, else the largest task count of the writers
        repartition: dict[str, int] = {}
        for s in subs:
            for t in s["repartition_source_topics"]:
                if t["partitions"] > 0:
                    repartition[t["name"]] = t["partitions"]
        tasks: dict[str, int] = {}
        for _ in range(len(subs) + 1):  # writers before readers, however the list is ordered
            for s in subs:
                counts = [self._partitions(t) or 0 for t in s["source_topics"]]
                counts += [repartition.get(t["name"], 0) for t in s["repartition_source_topics"]]
                tasks[s["subtopology_id"]] = max(counts, default=0)
                for sink in s["repartition_sink_topics"]:
                    if sink not in repartition or not any(t["name"] == sink and t["partitions"] > 0
                                                          for x in subs for t in x["repartition_source_topics"]):
                        repartition[sink] = max(repartition.get(sink, 0), tasks[s["subtopology_id"]])
        wanted = []
        for s in subs:
            for t in s["repartition_source_topics"]:
                wanted.append((t["name"], repartition.get(t["name"], 0), t))
            for t in s["state_changelog_topics"]:
                wanted.append((t["name"], t["partitions"] if t["partitions"] > 0 else tasks[s["subtopology_id"]], t))
        missing = [(name, count, t) for name, count, t in wanted if self._partitions(name) is None]
        if missing:
            create_topics([(name, count, t["replication_factor"], {kv["key"]: kv["value"] for kv in t["topic_configs"]})
                           for name, count, t in missing])
            names = ", ".join(sorted(name for name, _, _ in missing))
            return [(MISSING_INTERNAL_TOPICS, f"Internal topics are missing: {names}")]
        for name, count, t in wanted:
            found = self._partitions(name)
            if found != count:
                return [(INCORRECTLY_PARTITIONED_TOPICS,
                         f"Existing topic {name} has different number of partitions: expected {count}, "
                         f"found {found}")]
        group.configured = tasks
        return []

    # ------------------------------------------------------------------ assignment
    def _assign(self, group: StreamsGroup) -> None:
        tasks = [(s, p) for s, n in sorted((group.configured or {}).items()) for p in range(n)]
        stateful = {s["subtopology_id"] for s in (group.topology or {"subtopologies": []})["subtopologies"]
                    if s["state_changelog_topics"]}
        previous = {mid: group.target.get(mid, m.assigned) for mid, m in group.members.items()}
        previous_standby = {mid: group.target_standby.get(mid, m.standby) for mid, m in group.members.items()}
        group.target, group.target_standby = sticky_assign(
            tasks, stateful, {mid: m.process_id or mid for mid, m in group.members.items()}, previous,
            self._config(group.group_id, "streams.num.standby.replicas"), previous_standby)
        group.assignment_epoch = group.group_epoch

    def _reconcile(self, group: StreamsGroup, member: StreamsMember, owned: Tasks | None) -> None:
        """CurrentAssignmentBuilder for active tasks: revoke first, then take the target epoch
        with the tasks no other member still holds."""
        target = group.target.get(member.member_id, {})
        if member.revoking:
            if owned is None or _intersect(owned, member.revoking):
                return  # still revoking
            member.revoking = {}
        if member.member_epoch == group.assignment_epoch and not _minus(target, member.assigned) and \
                member.standby == group.target_standby.get(member.member_id, {}):
            return
        to_revoke = _minus(member.assigned, target)
        if to_revoke:
            member.revoking = to_revoke
            member.assigned = _intersect(member.assigned, target)
            return
        held = group.owned_elsewhere(member.member_id)
        free = {s: frozenset(p for p in ps if (s, p) not in held) for s, ps in target.items()}
        member.assigned = {s: ps for s, ps in free.items() if ps}
        member.standby = group.target_standby.get(member.member_id, {})
        if member.member_epoch != group.assignment_epoch:
            member.previous_epoch = member.member_epoch
            member.member_epoch = group.assignment_epoch

    # ------------------------------------------------------------------ leaving, fencing
    def _leave(self, group_id: str, member_id: str, epoch: int) -> dict:
        group = self.groups.get(group_id)
        member = group.members.get(member_id) if group is not None else None
        if member is None:
            raise _Invalid(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
        log.info("[GroupId %s] Member %s left the streams group.", group_id, member_id)
        self._remove(group, member)
        return _answer(E.NONE, None, member_id, epoch)

    def _remove(self, group: StreamsGroup, member: StreamsMember) -> None:
        member.cancel_timers()
        group.members.pop(member.member_id, None)
        if not group.members and group.shutdown_by:
            log.info("[GroupId %s] Clearing shutdown requested for the streams application.", group.group_id)
            group.shutdown_by = ""
        group.target.pop(member.member_id, None)
        group.target_standby.pop(member.member_id, None)
        group.group_epoch += 1

    def _schedule_session(self, group: StreamsGroup, member: StreamsMember) -> None:
        member.cancel_timers()
        delay = self._config(group.group_id, "streams.session.timeout.ms") / 1000
        member.session_timer = asyncio.get_running_loop().call_later(delay, self._fence, group, member)

    def _fence(self, group: StreamsGroup, member: StreamsMember) -> None:
        try:
            if self.groups.get(group.group_id) is group and group.members.get(member.member_id) is member:
                log.info("[GroupId %s] Member %s fenced from the group because its session expired.",
                         group.group_id, member.member_id)
                self._remove(group, member)
        except Exception:  # a timer must never take the server down
            log.exception("Error in streams group timer")

    # ================================================================== describing, listing, deleting
    def describe(self, group_id: str, include_operations: bool, operations: int) -> dict:
        group = self.groups.get(group_id)
        if group is None:
            return {"error_code": E.GROUP_ID_NOT_FOUND, "error_message": f"Group {group_id} not found.",
                    "group_id": group_id, "group_state": "", "group_epoch": 0, "assignment_epoch": 0,
                    "topology": None, "members": [], "authorized_operations": -2147483648}
        topology = None
        if group.topology is not None:
            topology = {"epoch": group.topology["epoch"], "subtopologies": [
                {"subtopology_id": s["subtopology_id"], "source_topics": s["source_topics"],
                 "repartition_sink_topics": s["repartition_sink_topics"],
                 "state_changelog_topics": s["state_changelog_topics"],
                 "repartition_source_topics": s["repartition_source_topics"]}
                for s in group.topology["subtopologies"]]}
        members = []
        for m in group.members.values():
            members.append({
                "member_id": m.member_id, "member_epoch": m.member_epoch, "instance_id": m.instance_id,
                "rack_id": m.rack_id, "client_id": m.client_id, "client_host": m.client_host,
                "topology_epoch": m.topology_epoch, "process_id": m.process_id, "user_endpoint": m.user_endpoint,
                "client_tags": m.client_tags, "task_offsets": m.task_offsets, "task_end_offsets": m.task_end_offsets,
                "assignment": {"active_tasks": _wire(m.assigned), "standby_tasks": _wire(m.standby),
                               "warmup_tasks": []},
                "target_assignment": {"active_tasks": _wire(group.target.get(m.member_id, {})),
                                      "standby_tasks": _wire(group.target_standby.get(m.member_id, {})),
                                      "warmup_tasks": []},
                "is_classic": False})
        return {"error_code": E.NONE, "error_message": None, "group_id": group_id, "group_state": group.state,
                "group_epoch": group.group_epoch, "assignment_epoch": group.assignment_epoch,
                "topology": topology, "members": members,
                "authorized_operations": operations if include_operations else -2147483648,
                "assignor_name": STICKY}

    def listed_groups(self) -> dict[str, tuple[str, str, str]]:
        return {gid: (STREAMS_PROTOCOL_TYPE, g.state, STREAMS_GROUP_TYPE) for gid, g in self.groups.items()}

    def delete(self, group_id: str) -> int:
        group = self.groups[group_id]
        if group.members:
            return E.NON_EMPTY_GROUP
        self.classic.offsets.delete(group_id)
        del self.groups[group_id]
        log.info("[GroupId %s] Streams group deleted.", group_id)
        return E.NONE

    def drop(self, group_id: str) -> None:
        """An empty streams group becomes a classic one (a classic member joins its id)."""
        del self.groups[group_id]
        log.info("[GroupId %s] Converted the empty streams group to a classic group.", group_id)

    def close(self) -> None:
        for group in self.groups.values():
            for m in group.members.values():
                m.cancel_timers()


def _now() -> float:
    return asyncio.get_running_loop().time()
