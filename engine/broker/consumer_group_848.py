"""The consumer group protocol of KIP-848, coordinator side: ConsumerGroupHeartbeat and
ConsumerGroupDescribe, over groups whose assignment the coordinator computes.

The model follows Kafka's own (group-coordinator/.../modern/consumer/ConsumerGroup.java and
CurrentAssignmentBuilder.java):

- the *group epoch* is bumped whenever the group's membership, a member's subscription or the
  partition count of a subscribed topic changes;
- the *target assignment* is recomputed by the server-side assignor (`group.consumer.assignors`:
  uniform or range, engine/assignors.py's logic for the member-side assignors being the client's)
  whenever the group epoch is ahead of the assignment epoch;
- each member *reconciles* towards its target, heartbeat by heartbeat: partitions it must give
  up are revoked first (the member keeps its epoch until it acknowledges, by reporting its owned
  partitions without them); partitions another member still owns are held back ("unreleased")
  until that member lets them go; the member takes the target epoch when it has nothing left
  to revoke.

The group's state follows: Empty (no member), Assigning (target behind the group epoch),
Reconciling (some member not yet at its target), Stable.

Timers: per member, the session (the group's `consumer.session.timeout.ms` config, else the
broker's `group.consumer.session.timeout.ms`, after its last heartbeat),
and, while it has partitions to revoke, its rebalance timeout; either ending fences the member
(it is removed and the group epoch bumped).

Durable state is what Kafka keeps in `__consumer_offsets` (consumer_group_records.py): after
each change, the records that differ from the group's last write (group epoch, member
subscriptions, target assignment, current assignments; tombstones for members that left and for
a deleted group), in one batch. At first use the groups are rebuilt from those records; their
members carry on with their epochs and partitions if they heartbeat within a session timeout,
else they are fenced. Committed offsets are durable as for every group (offsets.py).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid

from .. import consumer_offsets as offsets_codec
from ..errors import KafkaError
from ..protocol import errors as E
from . import consumer_group_records as records
from .group_state import topic_ids_by_name
from ..topic_names import GROUP_METADATA_TOPIC
from .topic_ids import ZERO

log = logging.getLogger("kafka.coordinator.group.GroupMetadataManager")

CONSUMER_GROUP_TYPE = "consumer"
CONSUMER_PROTOCOL_TYPE = "consumer"
LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2

EMPTY, ASSIGNING, RECONCILING, STABLE, DEAD = "Empty", "Assigning", "Reconciling", "Stable", "Dead"
# member states (CurrentAssignmentBuilder)
MEMBER_STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS = "stable", "unrevoked_partitions", \
    "unreleased_partitions"
MEMBER_TYPE_CONSUMER = 1  # ConsumerGroupDescribe v1's member_type: uses the consumer protocol

Assignment = dict[str, frozenset[int]]  # topic -> partitions


def _union(a: Assignment, b: Assignment) -> Assignment:
    return {t: a.get(t, frozenset()) | b.get(t, frozenset()) for t in a.keys() | b.keys()
            if a.get(t, frozenset()) | b.get(t, frozenset())}


def _minus(a: Assignment, b: Assignment) -> Assignment:
    return {t: ps - b.get(t, frozenset()) for t, ps in a.items() if ps - b.get(t, frozenset())}


def _intersect(a: Assignment, b: Assignment) -> Assignment:
    return {t: ps & b.get(t, frozenset()) for t, ps in a.items() if ps & b.get(t, frozenset())}


def _is_subset(a: Assignment, b: Assignment) -> bool:
    return all(ps <= b.get(t, frozenset()) for t, ps in a.items())


# ---------------------------------------------------------------------------------- assignors
def uniform_assign(members: dict[str, set[str]], partitions: dict[str, int],
                   current: dict[str, Assignment]) -> dict[str, Assignment]:
    """Kafka's uniform assignor in spirit: every partition of a subscribed topic goes to one of
    its subscribers, counts as even as the subscriptions allow, and a member keeps what it had
    (up to its share) so that as few partitions as possible move."""
    result: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
    active = [m for m, topics in members.items() if any(t in partitions for t in topics)]
    if not active:
        return {m: {} for m in members}
    everything = sorted((t, p) for t in set().union(*members.values()) if t in partitions
                        for p in range(partitions[t]))
    quota, extra = divmod(len(everything), len(active))
    taken: set[tuple[str, int]] = set()
    for m in sorted(active):  # sticky pass: keep previous partitions up to the share
        kept = sorted((t, p) for t, ps in current.get(m, {}).items() if t in members[m] and t in partitions
                      for p in ps if p < partitions[t])
        limit = quota + (1 if extra > 0 and len(kept) > quota else 0)
        if limit > quota:
            extra -= 1
        for tp in kept[:limit]:
            result[m].append(tp)
            taken.add(tp)
    for tp in everything:  # the rest: to the least loaded subscriber
        if tp in taken:
            continue
        candidates = [m for m in members if tp[0] in members[m]]
        best = min(candidates, key=lambda m: (len(result[m]), m))
        result[best].append(tp)
    return {m: _as_assignment(tps) for m, tps in result.items()}


def range_assign(members: dict[str, set[str]], partitions: dict[str, int],
                 current: dict[str, Assignment]) -> dict[str, Assignment]:
    """Kafka's range assignor: per topic, its subscribers (by member id) take consecutive
    ranges of partitions, the first ones one more when the count does not divide."""
    result: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
    for topic in sorted(set().union(*members.values()) if members else ()):
        if topic not in partitions:
            continue
        subscribers = sorted(m for m in members if topic in members[m])
        share, extra = divmod(partitions[topic], len(subscribers))
        start = 0
        for i, m in enumerate(subscribers):
            n = share + (1 if i < extra else 0)
            result[m].extend((topic, p) for p in range(start, start + n))
            start += n
    return {m: _as_assignment(tps) for m, tps in result.items()}


def _as_assignment(tps) -> Assignment:
    out: dict[str, set[int]] = {}
    for t, p in tps:
        out.setdefault(t, set()).add(p)
    return {t: frozenset(ps) for t, ps in out.items()}


ASSIGNORS = {"uniform": uniform_assign, "range": range_assign}


def assignor_names(setting: str) -> list[str]:
    """`group.consumer.assignors`: names, or Kafka's class names of its two assignors."""
    names = []
    for item in (setting or "").split(","):
        item = item.strip()
        short = item.rsplit(".", 1)[-1].replace("Assignor", "").lower()
        if short in ASSIGNORS and short not in names:
            names.append(short)
    return names or ["uniform", "range"]


# ---------------------------------------------------------------------------------- model
class ConsumerMember:
    def __init__(self, member_id: str, instance_id: str | None, client_id: str, client_host: str):
        self.member_id = member_id
        self.instance_id = instance_id
        self.rack_id: str | None = None
        self.client_id = client_id
        self.client_host = client_host
        self.subscribed_topic_names: list[str] = []
        self.subscribed_topic_regex = ""  # "" = none
        self.topics: set[str] = set()  # what it subscribes to: the names, and the regex's matches
        # the topic names its principal may DESCRIBE (None: no authorizer, or not heartbeated since a
        # restart): a regex only matches those
        self.describable = None
        self.server_assignor: str | None = None
        self.rebalance_timeout_ms = -1
        self.member_epoch = 0
        self.previous_member_epoch = -1
        self.state = MEMBER_STABLE
        self.assigned: Assignment = {}
        self.revoking: Assignment = {}
        self.session_timer: asyncio.TimerHandle | None = None
        self.revocation_timer: asyncio.TimerHandle | None = None
        self.left = False  # a static member that left temporarily (epoch -2): its place is kept

    def cancel_timers(self) -> None:
        for timer in (self.session_timer, self.revocation_timer):
            if timer is not None:
                timer.cancel()
        self.session_timer = self.revocation_timer = None


class ConsumerGroup:
    def __init__(self, group_id: str):
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.members: dict[str, ConsumerMember] = {}
        self.static_members: dict[str, str] = {}  # instance id -> member id
        self.target: dict[str, Assignment] = {}  # member id -> target assignment
        self.partition_counts: dict[str, int] = {}  # of the subscribed topics, when last assigned
        self.assignor = ""
        self.written: dict[tuple[int, str | None], bytes] = {}  # its records in __consumer_offsets

    @property
    def state(self) -> str:
        if not self.members:
            return EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ASSIGNING
        if any(m.member_epoch != self.assignment_epoch or m.state != MEMBER_STABLE for m in self.members.values()):
            return RECONCILING
        return STABLE

    def subscribed_topics(self) -> set[str]:
        return set().union(*(m.topics for m in self.members.values())) \
            if self.members else set()

    def owner_elsewhere(self, member_id: str) -> set[tuple[str, int]]:
        """Partitions still held by other members (assigned, or being revoked)."""
        held = set()
        for mid, m in self.members.items():
            if mid != member_id:
                for t, ps in _union(m.assigned, m.revoking).items():
                    held.update((t, p) for p in ps)
        return held

    # ------------------------------------------------------------------ offsets (OffsetCommit/Fetch)
    def validate_offset_commit(self, member_id: str, member_epoch: int, version: int) -> int:
        """ConsumerGroup.validateOffsetCommit: commits with no epoch only while the group is
        empty; a member's commit carries its current epoch, over OffsetCommit v9+."""
        if member_epoch < 0 and not self.members:
            return E.NONE
        member = self.members.get(member_id)
        if member is None:
            return E.UNKNOWN_MEMBER_ID
        if version < 9:
            return E.UNSUPPORTED_VERSION
        if member_epoch != member.member_epoch:
            return E.STALE_MEMBER_EPOCH
        return E.NONE

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> int:
        if member_id is None and member_epoch < 0:
            return E.NONE  # the admin client, or a client not in the group
        member = self.members.get(member_id or "")
        if member is None:
            return E.UNKNOWN_MEMBER_ID
        if member_epoch != member.member_epoch:
            return E.STALE_MEMBER_EPOCH
        return E.NONE


def _error(code: int, message: str | None = None) -> dict:
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "member_id": None,
            "member_epoch": 0, "heartbeat_interval_ms": 0, "assignment": None}


class _Invalid(Exception):
    def __init__(self, code: int, message: str | None):
        super().__init__(message)
        self.code = code
        self.message = message


# ---------------------------------------------------------------------------------- coordinator
class ConsumerGroups:
    """The consumer-protocol groups of one broker, by id."""

    def __init__(self, broker, classic, topic_ids):
        self.broker = broker
        self.engine = broker.engine
        self.classic = classic  # group_state.ClassicGroups: the group id space is shared
        config = broker.config
        self.assignors = assignor_names(config.get("group.consumer.assignors"))
        self._groups: dict[str, ConsumerGroup] | None = None  # read from __consumer_offsets at first use
        self.topic_ids = topic_ids  # a topic_ids.TopicIds: assignments name topics by id
        classic.modern_groups = self.get

    @property
    def groups(self) -> dict[str, ConsumerGroup]:
        if self._groups is None:
            self._groups = {}
            self._load(self.classic.led_partitions())
        return self._groups

    def load_partition(self, partition: int) -> None:
        """This broker now coordinates the partition's groups: read them from its log (only
        once the groups were needed at all; the first use reads every partition it leads)."""
        if self._groups is not None:
            self._load([partition])

    def unload(self, partition: int) -> int:
        """This broker no longer coordinates the partition's groups: they leave memory, their
        timers stop. Returns how many went."""
        if self._groups is None:
            return 0
        gone = [gid for gid in self._groups if self.classic.offsets.partition_for(gid) == partition]
        for gid in gone:
            for m in self._groups.pop(gid).members.values():
                m.cancel_timers()
        return len(gone)

    def get(self, group_id: str) -> ConsumerGroup | None:
        return self.groups.get(group_id)

    # ================================================================== heartbeat
    def heartbeat(self, body: dict, version: int, client_id: str, client_host: str, describable=None) -> dict:
        """`describable`: the caller's topic DESCRIBE filter (authorizer.Guard.topic_filter)."""
        try:
            self._validate(body, version)
            return self._heartbeat(body, version, client_id, client_host, describable)
        except _Invalid as exc:
            return _error(exc.code, exc.message)
        finally:
            group = self.groups.get(body["group_id"])
            if group is not None:
                self._persist(group)

    def _validate(self, body: dict, version: int) -> None:
        """ConsumerGroupHeartbeat's request checks (Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid)."""
        def invalid(message):
            raise _Invalid(E.INVALID_REQUEST, message)
        if not body["group_id"]:
            invalid("GroupId can't be empty.")
        if body["instance_id"] == "":
            invalid("InstanceId can't be empty.")
        if body["rack_id"] == "":
            invalid("RackId can't be empty.")
        regex = body["subscribed_topic_regex"]
        if regex:
            try:
                re.compile(regex)
            except re.error as exc:
                raise _Invalid(E.INVALID_REGULAR_EXPRESSION, f"SubscribedTopicRegex `{regex}` is not a valid "
                                                             f"regular expression: {exc}.") from None
        epoch = body["member_epoch"]
        if version >= 1 and not body["member_id"]:
            invalid("MemberId can't be empty.")
        if epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH:
            if not body["member_id"]:
                invalid("MemberId can't be empty.")
        elif epoch == 0:
            if body["rebalance_timeout_ms"] == -1:
                invalid("RebalanceTimeoutMs must be provided in first request.")
            if body["topic_partitions"] is None or body["topic_partitions"]:
                invalid("TopicPartitions must be empty when (re-)joining.")
            if body["subscribed_topic_names"] is None and not regex:  # (an empty list is valid)
                invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
        elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if not body["member_id"]:
                invalid("MemberId can't be empty.")
            if body["instance_id"] is None:
                invalid("InstanceId can't be null.")
        else:
            invalid("MemberEpoch is invalid.")
        assignor = body["server_assignor"]
        if assignor is not None and assignor not in self.assignors:
            raise _Invalid(E.UNSUPPORTED_ASSIGNOR, f"ServerAssignor {assignor} is not supported. "
                                                   f"Supported assignors: {', '.join(self.assignors)}.")

    def _group_for(self, group_id: str, create: bool) -> ConsumerGroup:
        group = self.groups.get(group_id)
        if group is not None:
            return group
        classic = self.classic.groups.get(group_id)
        handlers = getattr(self.broker, "groups", None)  # (a streams group holds the id: not ours)
        if (classic is not None and classic.members) or \
                (handlers is not None and handlers.streams.get(group_id) is not None):
            raise _Invalid(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        if not create:
            raise _Invalid(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        if classic is not None:  # an empty classic group (or offsets only) becomes a consumer group
            if classic.protocol_type is not None:  # it had a GroupMetadata record: tombstoned
                self.classic.append(group_id, [(offsets_codec.group_metadata_key(group_id), None, (),
                                                records_time())])
            self.classic.drop(classic)
        group = self.groups[group_id] = ConsumerGroup(group_id)
        return group

    def _heartbeat(self, body, version, client_id, client_host, describable=None) -> dict:
        group_id, member_id, epoch = body["group_id"], body["member_id"], body["member_epoch"]
        instance_id = body["instance_id"]
        if epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return self._leave(group_id, member_id, instance_id, epoch)
        group = self._group_for(group_id, create=epoch == 0)
        owned = None
        if body["topic_partitions"] is not None:
            named = [(self.topic_ids.name_of(t["topic_id"]), t["partitions"]) for t in body["topic_partitions"]]
            owned = {name: frozenset(ps) for name, ps in named if name is not None and ps}

        known = len(group.members)
        member = self._member_for(group, member_id, instance_id, epoch, owned, client_id, client_host)
        before = (dict(member.assigned),)
        member.describable = describable
        changed = len(group.members) > known  # a new member (a returning static member is not one)
        if body["subscribed_topic_names"] is not None and \
                sorted(body["subscribed_topic_names"]) != sorted(member.subscribed_topic_names):
            member.subscribed_topic_names = sorted(set(body["subscribed_topic_names"]))
            changed = True
        regex = body["subscribed_topic_regex"]
        if regex is not None and regex != member.subscribed_topic_regex:
            member.subscribed_topic_regex = regex
            changed = True
        for m in group.members.values():  # a regex's topics change as topics come and go
            m.topics = self._resolve(m)
        if body["server_assignor"] is not None and body["server_assignor"] != member.server_assignor:
            member.server_assignor = body["server_assignor"]
            changed = True
        if body["rebalance_timeout_ms"] != -1:
            member.rebalance_timeout_ms = body["rebalance_timeout_ms"]
        if body["rack_id"] is not None:
            member.rack_id = body["rack_id"]
        counts = self._partition_counts(group.subscribed_topics())
        if changed or counts != group.partition_counts:
            group.group_epoch += 1
            log.info("[GroupId %s] Bumped group epoch to %d.", group_id, group.group_epoch)
        if group.group_epoch > group.assignment_epoch:
            self._assign(group, counts)
        self._reconcile(group, member, owned)
        self._schedule_session(group, member)

        full = epoch == 0 or (body["rebalance_timeout_ms"] != -1 and body["subscribed_topic_names"] is not None
                              and body["topic_partitions"] is not None)
        answer = {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None,
                  "member_id": member.member_id, "member_epoch": member.member_epoch,
                  "heartbeat_interval_ms": self._config(group, "consumer.heartbeat.interval.ms"), "assignment": None}
        if full or member.assigned != before[0]:
            ids = topic_ids_by_name(self.topic_ids)
            answer["assignment"] = {"topic_partitions": [
                {"topic_id": ids.get(t, ZERO), "partitions": sorted(ps)}
                for t, ps in sorted(member.assigned.items()) if t in ids]}
        return answer

    def _member_for(self, group, member_id, instance_id, epoch, owned, client_id, client_host) -> ConsumerMember:
        if epoch == 0:
            if instance_id is not None and instance_id in group.static_members:
                previous = group.members.get(group.static_members[instance_id])
                if previous is not None and not previous.left and previous.member_id != member_id:
                    raise _Invalid(E.UNRELEASED_INSTANCE_ID,
                                   f"Static member {previous.member_id} with instance id {instance_id} "
                                   "is not released yet.")
                if previous is not None:
                    # The static member comes back: the new member id takes its place and assignment.
                    new_id = member_id or str(uuid.uuid4())
                    previous.cancel_timers()
                    del group.members[previous.member_id]
                    group.target[new_id] = group.target.pop(previous.member_id, {})
                    previous.member_id = new_id
                    previous.left = False
                    previous.client_id, previous.client_host = client_id, client_host
                    group.members[new_id] = previous
                    group.static_members[instance_id] = new_id
                    return previous
            member = group.members.get(member_id) if member_id else None
            if member is None:
                member = ConsumerMember(member_id or self._new_member_id(), instance_id, client_id, client_host)
                group.members[member.member_id] = member
                if instance_id is not None:
                    group.static_members[instance_id] = member.member_id
                log.info("[GroupId %s] Member %s joins the consumer group.", group.group_id, member.member_id)
            else:
                # A member rejoining with epoch 0 (after an error) gives up what it had.
                member.assigned, member.revoking, member.state = {}, {}, MEMBER_STABLE
                member.member_epoch = 0
            return member
        member = group.members.get(member_id)
        if member is None:
            raise _Invalid(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}.")
        if epoch > member.member_epoch:
            raise _Invalid(E.FENCED_MEMBER_EPOCH, f"The consumer group member has a greater member epoch "
                                                  f"({epoch}) than the one known by the group coordinator "
                                                  f"({member.member_epoch}). The member must abandon all "
                                                  "its partitions and rejoin.")
        if epoch < member.member_epoch and (epoch != member.previous_member_epoch or owned is None
                                            or not _is_subset(owned, member.assigned)):
            raise _Invalid(E.FENCED_MEMBER_EPOCH, f"The consumer group member has a smaller member epoch "
                                                  f"({epoch}) than the one known by the group coordinator "
                                                  f"({member.member_epoch}). The member must abandon all "
                                                  "its partitions and rejoin.")
        member.client_id, member.client_host = client_id, client_host
        return member

    @staticmethod
    def _new_member_id() -> str:
        return str(uuid.uuid4())

    def _resolve(self, member: ConsumerMember) -> set[str]:
        """The topics a member subscribes to: its names, and the (non-internal) topics its regex
        matches whole."""
        topics = set(member.subscribed_topic_names)
        if member.subscribed_topic_regex:
            pattern = re.compile(member.subscribed_topic_regex)
            matched = {t for t in self.engine.list_topics() if not t.startswith("__") and pattern.fullmatch(t)}
            # Kafka's GroupMetadataManager keeps only the matches the member may DESCRIBE
            topics.update(matched if member.describable is None else member.describable(matched))
        return topics

    def _partition_counts(self, topics: set[str]) -> dict[str, int]:
        counts = {}
        for t in topics:
            try:
                counts[t] = self.engine.topic(t).partitions
            except KafkaError:
                continue  # not (yet) a topic: nothing to assign
        return counts

    # ================================================================== assignment
    def _assign(self, group: ConsumerGroup, counts: dict[str, int]) -> None:
        """A new target assignment, for the group epoch (the server-side assignor's)."""
        preferred = [m.server_assignor for m in group.members.values() if m.server_assignor]
        name = max(set(preferred), key=preferred.count) if preferred else self.assignors[0]
        subscriptions = {mid: set(m.topics) for mid, m in group.members.items()}
        group.target = ASSIGNORS[name](subscriptions, counts, group.target)
        group.assignor = name
        group.partition_counts = counts
        group.assignment_epoch = group.group_epoch
        log.info("[GroupId %s] Computed a new target assignment for epoch %d with '%s' assignor.",
                 group.group_id, group.assignment_epoch, name)

    def _reconcile(self, group: ConsumerGroup, member: ConsumerMember, owned: Assignment | None) -> None:
        """One step of CurrentAssignmentBuilder: move the member towards its target."""
        if member.state == UNREVOKED_PARTITIONS:
            if owned is None or any(owned.get(t, frozenset()) & ps for t, ps in member.revoking.items()):
                return  # still owns a partition it must give up
            member.revoking = {}
            self._cancel_revocation(member)
            self._next_assignment(group, member)
        elif member.state == UNRELEASED_PARTITIONS or member.member_epoch != group.assignment_epoch:
            self._next_assignment(group, member)

    def _next_assignment(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        target = group.target.get(member.member_id, {})
        kept = _intersect(member.assigned, target)
        revoking = _minus(member.assigned, target)
        if revoking:
            member.assigned, member.revoking, member.state = kept, revoking, UNREVOKED_PARTITIONS
            self._schedule_revocation(group, member)
            return
        held = group.owner_elsewhere(member.member_id)
        free = {t: frozenset(p for p in ps if (t, p) not in held) for t, ps in _minus(target, kept).items()}
        assigned = _union(kept, {t: ps for t, ps in free.items() if ps})
        if member.member_epoch != group.assignment_epoch:
            member.previous_member_epoch = member.member_epoch
            member.member_epoch = group.assignment_epoch
        member.assigned = assigned
        member.state = UNRELEASED_PARTITIONS if _minus(target, assigned) else MEMBER_STABLE

    # ================================================================== leaving, timers
    def _leave(self, group_id: str, member_id: str, instance_id: str | None, epoch: int) -> dict:
        group = self.groups.get(group_id)
        if group is None:
            raise _Invalid(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        member = group.members.get(member_id)
        if member is None:
            raise _Invalid(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
        if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # A static member leaving temporarily keeps its place (and partitions) for its session.
            member.left = True
            self._schedule_session(group, member)
        else:
            log.info("[GroupId %s] Member %s left the consumer group.", group_id, member_id)
            self._remove(group, member)
        return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None, "member_id": member_id,
                "member_epoch": epoch, "heartbeat_interval_ms": 0, "assignment": None}

    def _remove(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        member.cancel_timers()
        group.members.pop(member.member_id, None)
        group.target.pop(member.member_id, None)
        if member.instance_id is not None and group.static_members.get(member.instance_id) == member.member_id:
            del group.static_members[member.instance_id]
        group.group_epoch += 1

    def _call_later(self, delay_ms: int, callback, *args) -> asyncio.TimerHandle:
        return asyncio.get_running_loop().call_later(max(delay_ms, 0) / 1000.0, self._guarded, callback, args)

    @staticmethod
    def _guarded(callback, args) -> None:
        try:
            callback(*args)
        except Exception:  # a timer must never take the server down
            log.exception("Error in consumer group timer")

    def _schedule_session(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        if member.session_timer is not None:
            member.session_timer.cancel()
        member.session_timer = self._call_later(self._config(group, "consumer.session.timeout.ms"),
                                                self._fence, group, member, "session")

    def _config(self, group: ConsumerGroup, name: str) -> int:
        """The group's own config (IncrementalAlterConfigs on its GROUP resource, read at each
        heartbeat as Kafka's GroupConfigManager is), else the broker's group.consumer.* setting."""
        return self.broker.group_configs.value(group.group_id, name)

    def _schedule_revocation(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        self._cancel_revocation(member)
        member.revocation_timer = self._call_later(member.rebalance_timeout_ms, self._fence, group, member,
                                                   "revocation")

    @staticmethod
    def _cancel_revocation(member: ConsumerMember) -> None:
        if member.revocation_timer is not None:
            member.revocation_timer.cancel()
            member.revocation_timer = None

    def _fence(self, group: ConsumerGroup, member: ConsumerMember, why: str) -> None:
        if self.groups.get(group.group_id) is not group or group.members.get(member.member_id) is not member:
            return
        log.info("[GroupId %s] Member %s fenced from the group because its %s timeout expired.",
                 group.group_id, member.member_id, why)
        self._remove(group, member)
        self._persist(group)

    # ================================================================== describing, listing, deleting
    def describe(self, group_id: str, include_operations: bool, operations: int) -> dict:
        group = self.groups.get(group_id)
        if group is None:
            kind = "is not a consumer group" if self.classic.group(group_id) is not None else "not found"
            return {"error_code": E.GROUP_ID_NOT_FOUND, "error_message": f"Group {group_id} {kind}.",
                    "group_id": group_id, "group_state": "", "group_epoch": 0, "assignment_epoch": 0,
                    "assignor_name": "", "members": [], "authorized_operations": -2147483648}
        ids = topic_ids_by_name(self.topic_ids)

        def shown(a: Assignment) -> dict:
            return {"topic_partitions": [{"topic_id": ids.get(t, ZERO), "topic_name": t,
                                          "partitions": sorted(ps)} for t, ps in sorted(a.items())]}
        members = [{"member_id": m.member_id, "instance_id": m.instance_id, "rack_id": m.rack_id,
                    "member_epoch": m.member_epoch, "client_id": m.client_id, "client_host": m.client_host,
                    "subscribed_topic_names": list(m.subscribed_topic_names),
                    "subscribed_topic_regex": m.subscribed_topic_regex,
                    "assignment": shown(m.assigned), "target_assignment": shown(group.target.get(m.member_id, {})),
                    "member_type": MEMBER_TYPE_CONSUMER}
                   for m in group.members.values()]
        return {"error_code": E.NONE, "error_message": None, "group_id": group_id, "group_state": group.state,
                "group_epoch": group.group_epoch, "assignment_epoch": group.assignment_epoch,
                "assignor_name": group.assignor or self.assignors[0], "members": members,
                "authorized_operations": operations if include_operations else -2147483648}

    def listed_groups(self) -> dict[str, tuple[str, str, str]]:
        """{group id: (protocol type, state, type)}."""
        return {gid: (CONSUMER_PROTOCOL_TYPE, g.state, CONSUMER_GROUP_TYPE) for gid, g in self.groups.items()}

    def delete(self, group_id: str) -> int:
        """DeleteGroups of a consumer group: only an empty one (its offsets go with it)."""
        group = self.groups[group_id]
        if group.members:
            return E.NON_EMPTY_GROUP
        self.classic.offsets.delete(group_id)
        self.drop(group_id)
        log.info("[GroupId %s] Consumer group deleted.", group_id)
        return E.NONE

    def drop(self, group_id: str) -> None:
        """Forget an empty group: its records are tombstoned (as when Kafka deletes it, or
        converts it to a classic group)."""
        group = self.groups.pop(group_id)
        group.members.clear()
        group.target.clear()
        self._persist(group, deleted=True)

    # ================================================================== durable state
    def _records(self, group: ConsumerGroup) -> dict[tuple[int, str | None], bytes]:
        """The group's records as Kafka writes them: {(record type, member or None): value}."""
        ids = topic_ids_by_name(self.topic_ids)
        out = {(records.GROUP_METADATA, None): records.encode_value(records.GROUP_METADATA,
                                                                    {"epoch": group.group_epoch}),
               (records.TARGET_METADATA, None): records.encode_value(records.TARGET_METADATA,
                                                                     {"assignment_epoch": group.assignment_epoch})}
        for mid, m in group.members.items():
            out[(records.MEMBER_METADATA, mid)] = records.encode_value(records.MEMBER_METADATA, {
                "instance_id": m.instance_id, "rack_id": m.rack_id, "client_id": m.client_id,
                "client_host": m.client_host, "subscribed_topic_names": list(m.subscribed_topic_names),
                "subscribed_topic_regex": m.subscribed_topic_regex or None,
                "rebalance_timeout_ms": m.rebalance_timeout_ms, "server_assignor": m.server_assignor})
            out[(records.TARGET_MEMBER, mid)] = records.encode_value(records.TARGET_MEMBER, {
                "topic_partitions": records.partitions_body(group.target.get(mid, {}), ids)})
            out[(records.CURRENT_ASSIGNMENT, mid)] = records.encode_value(records.CURRENT_ASSIGNMENT, {
                # (a static member away is recorded with epoch -2, its own epoch as the previous one)
                "member_epoch": LEAVE_GROUP_STATIC_MEMBER_EPOCH if m.left else m.member_epoch,
                "previous_member_epoch": m.member_epoch if m.left else m.previous_member_epoch,
                "state": records.MEMBER_STATES[m.state],
                "assigned_partitions": records.partitions_body(m.assigned, ids),
                "partitions_pending_revocation": records.partitions_body(m.revoking, ids)})
        return out

    # the order Kafka appends a change in: members' subscriptions, the group epoch, the target
    # assignment, then the members' current assignments; tombstones members first
    _WRITE_ORDER = {records.MEMBER_METADATA: 0, records.GROUP_METADATA: 1, records.TARGET_MEMBER: 2,
                    records.TARGET_METADATA: 3, records.CURRENT_ASSIGNMENT: 4}
    _DELETE_ORDER = {records.CURRENT_ASSIGNMENT: 0, records.TARGET_MEMBER: 1, records.MEMBER_METADATA: 2,
                     records.TARGET_METADATA: 3, records.GROUP_METADATA: 4}

    def _persist(self, group: ConsumerGroup, deleted: bool = False) -> None:
        """Append the records that changed since the group's last write (one batch)."""
        now = records_time()
        current = {} if deleted else self._records(group)
        changed = sorted((k for k, v in current.items() if group.written.get(k) != v),
                         key=lambda k: (self._WRITE_ORDER[k[0]], k[1] or ""))
        gone = sorted((k for k in group.written if k not in current),
                      key=lambda k: (self._DELETE_ORDER[k[0]], k[1] or ""))
        items = [(records.encode_key(t, group.group_id, mid), current[(t, mid)], (), now) for t, mid in changed]
        items += [(records.encode_key(t, group.group_id, mid), None, (), now) for t, mid in gone]
        if not items:
            return
        try:
            self.classic.append(group.group_id, items)
        except KafkaError as exc:  # the group goes on in memory; Kafka would fail the request
            log.warning("Failed to store consumer group %s: %s", group.group_id, exc)
            return
        group.written = current

    def _load(self, partitions) -> None:
        """Rebuild the groups of these `__consumer_offsets` partitions from their records. Their
        members must heartbeat again within a session timeout, or are fenced."""
        names = {tid: name for name, tid in topic_ids_by_name(self.topic_ids).items()}
        found: dict[str, ConsumerGroup] = {}
        for partition in partitions:
            log_ = self.engine.partition(GROUP_METADATA_TOPIC, partition)
            log_.each_record(log_.log_start_offset, lambda rec: self._replay(found, rec, names))
        loop = asyncio.get_running_loop() if _loop_running() else None
        for gid, group in found.items():
            if not (group.group_epoch or group.members):
                continue  # (what is left of a deleted group)
            for m in group.members.values():
                m.topics = self._resolve(m)
                if loop is not None:
                    self._schedule_session(group, m)
            group.partition_counts = self._partition_counts(group.subscribed_topics())
            group.written = self._records(group)  # (what the log holds, as pk writes it)
            self._groups[gid] = group

    def _replay(self, found: dict, rec, names: dict) -> None:
        decoded = records.decode(rec.key, rec.value)
        if decoded is None:
            return
        kind, gid, mid, value = decoded
        if kind == records.GROUP_METADATA:
            if value is None:
                found.pop(gid, None)
            else:
                found.setdefault(gid, ConsumerGroup(gid)).group_epoch = value["epoch"]
            return
        group = found.setdefault(gid, ConsumerGroup(gid))
        if kind == records.TARGET_METADATA:
            group.assignment_epoch = value["assignment_epoch"] if value is not None else 0
            return
        if value is None:
            if kind == records.MEMBER_METADATA:
                member = group.members.pop(mid, None)
                if member is not None and member.instance_id is not None:
                    group.static_members.pop(member.instance_id, None)
            elif kind == records.TARGET_MEMBER:
                group.target.pop(mid, None)
            return
        member = group.members.get(mid)
        if member is None and kind == records.MEMBER_METADATA:
            member = group.members[mid] = ConsumerMember(mid, value["instance_id"], value["client_id"],
                                                         value["client_host"])
        if kind == records.MEMBER_METADATA:
            member.instance_id, member.rack_id = value["instance_id"], value["rack_id"]
            member.client_id, member.client_host = value["client_id"], value["client_host"]
            member.subscribed_topic_names = sorted(value["subscribed_topic_names"])
            member.subscribed_topic_regex = value["subscribed_topic_regex"] or ""
            member.rebalance_timeout_ms = value["rebalance_timeout_ms"]
            member.server_assignor = value["server_assignor"]
            if member.instance_id is not None:
                group.static_members[member.instance_id] = mid
        elif kind == records.TARGET_MEMBER:
            group.target[mid] = records.partitions_of(value["topic_partitions"], names)
        elif kind == records.CURRENT_ASSIGNMENT and member is not None:
            member.left = value["member_epoch"] == LEAVE_GROUP_STATIC_MEMBER_EPOCH
            member.member_epoch = value["previous_member_epoch" if member.left else "member_epoch"]
            member.previous_member_epoch = value["previous_member_epoch"]
            member.state = {v: k for k, v in records.MEMBER_STATES.items()}.get(value["state"], MEMBER_STABLE)
            member.assigned = records.partitions_of(value["assigned_partitions"], names)
            member.revoking = records.partitions_of(value["partitions_pending_revocation"], names)

    def close(self) -> None:
        for group in self.groups.values():
            for m in group.members.values():
                m.cancel_timers()


def records_time() -> int:
    return int(time.time() * 1000)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        return False


__all__ = ["ConsumerGroups", "ConsumerGroup", "ConsumerMember", "uniform_assign", "range_assign"]
