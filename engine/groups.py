"""Consumer-group membership on the bundled engine, shared by processes through files.

Kafka's group coordinator lives in a broker; with no server, the members of a group
coordinate through `<data dir>/.pk/groups/<group>.json`, changed only under an flock on the
matching `.lock` file. Each change replaces the file atomically, so a member can poll for
changes with one stat() and read the file without the lock.

The protocol follows the classic one (docs/protocol.md, engine/broker/groups.py) with the broker and the leader
folded together: whoever changes the membership (a join, a leave, an expired session) bumps
the generation and computes the new assignment with the group's chosen assignor. Members
learn of it at their next poll. A partition is *owned* by at most one member at a time: a
member gives up a revoked partition (after committing it) before the new assignee may take
it, so a rebalance never lets two members consume the same partition. Members that stop
heartbeating for `session.timeout.ms` are removed and their partitions freed.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from dataclasses import asdict, dataclass, field

from . import assignors
from .errors import KafkaError
from .fileutil import atomic_write, inside, locked


class UnknownMemberIdError(KafkaError):
    code = 25


class InconsistentGroupProtocolError(KafkaError):
    code = 23


class GroupNotEmptyError(KafkaError):
    code = 68


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Member:
    member_id: str
    client_id: str
    client_host: str
    topics: list[str]
    strategies: list[str]
    session_timeout_ms: int
    rebalance_timeout_ms: int
    last_heartbeat: int
    generation: int = -1  # the generation this member has caught up with
    assignment: dict[str, list[int]] = field(default_factory=dict)


@dataclass
class GroupState:
    group_id: str
    generation: int = 0
    protocol_type: str = "consumer"
    protocol: str | None = None
    leader: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)  # "topic:partition" -> member id
    state_timestamp: int = 0

    @property
    def state(self) -> str:
        """Kafka's group state names, as ConsumerGroupCommand prints them."""
        if not self.members:
            return "Empty"
        if any(m.generation != self.generation for m in self.members.values()):
            return "PreparingRebalance"
        return "Stable"

    def to_json(self) -> bytes:
        doc = asdict(self)
        return json.dumps(doc, sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes) -> "GroupState":
        doc = json.loads(data)
        members = {mid: Member(**m) for mid, m in doc.pop("members").items()}
        return cls(members=members, **doc)


def _file_stem(group_id: str) -> str:
    # Group ids may hold any character; file names may not. Keep readable ids readable.
    safe = all(c.isalnum() or c in "._-" for c in group_id) and 0 < len(group_id) <= 200
    if safe and not group_id.startswith("."):
        return group_id
    return "~" + hashlib.sha256(group_id.encode()).hexdigest()


class GroupCoordinator:
    """One group's shared state. Cheap to create; every method takes the group lock."""

    def __init__(self, groups_dir: str, group_id: str, partition_counts=None):
        """partition_counts(topics) -> {topic: partitions} for the topics that exist.

        By default the counts come from the data directory's topic metadata. Every rebalance
        needs true counts, whoever triggers it (a describe that drops an expired member
        rebalances too), so pass a function only to override them.
        """
        self.group_id = group_id
        self.dir = groups_dir
        if partition_counts is None:
            partition_counts = self._stored_partition_counts
        stem = _file_stem(group_id)
        self.path = inside(groups_dir, stem + ".json")
        self.lock_path = inside(groups_dir, stem + ".lock")
        self._partition_counts = partition_counts
        self._seen: tuple | None = None

    def _stored_partition_counts(self, topics: list[str]) -> dict[str, int]:
        from .metadata import TopicStore
        from .paths import topics_dir

        store = TopicStore(topics_dir(os.path.dirname(os.path.dirname(self.dir))))
        counts = {}
        for topic in topics:
            try:
                counts[topic] = store.get(topic).partitions
            except KafkaError:
                continue
        return counts

    # ------------------------------------------------------------------ state I/O
    def read(self) -> GroupState:
        try:
            with open(self.path, "rb") as f:
                return GroupState.from_json(f.read())
        except FileNotFoundError:
            return GroupState(self.group_id)

    def _write(self, state: GroupState) -> None:
        # Group membership is soft state (members rejoin after a crash), so no fsync.
        atomic_write(self.path, state.to_json(), durable=False)
        self._seen = self._stamp()  # our own write is not news to us

    def _stamp(self) -> tuple | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def changed(self) -> bool:
        """True when the group file changed since the last call (one stat, no lock)."""
        stamp = self._stamp()
        if stamp != self._seen:
            self._seen = stamp
            return True
        return False

    def _locked_update(self, change):
        os.makedirs(self.dir, exist_ok=True)
        with locked(self.lock_path):
            state = self.read()
            dirty = self._expire(state)
            result, changed = change(state)
            if dirty or changed:
                self._write(state)
            return result

    # ------------------------------------------------------------------ membership
    def join(self, client_id: str, client_host: str, topics: list[str], strategies: list[str],
             session_timeout_ms: int, rebalance_timeout_ms: int, member_id: str | None = None) -> str:
        """Add (or update) a member; returns its member id (client id + "-" + UUID, as Kafka)."""

        def change(state: GroupState):
            mid = member_id or f"{client_id}-{uuid.uuid4()}"
            if state.members and not set(strategies).intersection(
                    *[m.strategies for m in state.members.values() if m.member_id != mid]):
                raise InconsistentGroupProtocolError(
                    "The group member's supported protocols are incompatible with those of existing members "
                    "or first group member tried to join with empty protocol type or empty protocol list.")
            old = state.members.get(mid)
            member = Member(mid, client_id, client_host, sorted(set(topics)), list(strategies),
                            session_timeout_ms, rebalance_timeout_ms, now_ms(),
                            generation=old.generation if old else -1,
                            assignment=old.assignment if old else {})
            state.members[mid] = member
            if old is None or old.topics != member.topics or old.strategies != member.strategies:
                self._rebalance(state)
            return mid, True

        return self._locked_update(change)

    def heartbeat(self, member_id: str) -> tuple[int, dict[str, list[int]]]:
        """Record that the member is alive; returns (generation, its assignment)."""

        def change(state: GroupState):
            member = state.members.get(member_id)
            if member is None:
                raise UnknownMemberIdError("The coordinator is not aware of this member.")
            member.last_heartbeat = now_ms()
            return (state.generation, dict(member.assignment)), True

        return self._locked_update(change)

    def sync(self, member_id: str, generation: int, release: list[tuple[str, int]],
             want: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """Give up `release`, mark `generation` as seen, and take whichever of `want` are free.

        Returns the partitions of `want` the member now owns. A partition still held by a
        live member stays with it until that member releases it.
        """

        def change(state: GroupState):
            member = state.members.get(member_id)
            if member is None:
                raise UnknownMemberIdError("The coordinator is not aware of this member.")
            member.last_heartbeat = now_ms()
            for topic, p in release:
                if state.owners.get(f"{topic}:{p}") == member_id:
                    del state.owners[f"{topic}:{p}"]
            if generation == state.generation:
                member.generation = generation
            got = []
            if generation == state.generation:
                for topic, p in want:
                    key = f"{topic}:{p}"
                    owner = state.owners.get(key)
                    if owner is None or owner == member_id or owner not in state.members:
                        state.owners[key] = member_id
                        got.append((topic, p))
            return got, True

        return self._locked_update(change)

    def leave(self, member_id: str) -> None:
        def change(state: GroupState):
            if state.members.pop(member_id, None) is None:
                return None, False
            state.owners = {k: v for k, v in state.owners.items() if v != member_id}
            self._rebalance(state)
            return None, True

        self._locked_update(change)

    def refresh_subscription(self, member_id: str, topics: list[str]) -> None:
        """A pattern subscription matched a different set of topics: rejoin with it."""

        def change(state: GroupState):
            member = state.members.get(member_id)
            if member is None:
                raise UnknownMemberIdError("The coordinator is not aware of this member.")
            if member.topics == sorted(set(topics)):
                return None, False
            member.topics = sorted(set(topics))
            self._rebalance(state)
            return None, True

        self._locked_update(change)

    def describe(self) -> GroupState:
        """The group as it stands, after dropping members whose sessions expired."""
        if not os.path.exists(self.path):
            return GroupState(self.group_id)
        return self._locked_update(lambda state: (state, False))

    def delete(self) -> None:
        """Remove the group's membership file; only an empty group may be deleted."""

        def change(state: GroupState):
            if state.members:
                raise GroupNotEmptyError("The group is not empty.")
            return None, False

        os.makedirs(self.dir, exist_ok=True)
        with locked(self.lock_path):
            state = self.read()
            self._expire(state)
            change(state)
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass

    # ------------------------------------------------------------------ internals
    def _expire(self, state: GroupState) -> bool:
        now = now_ms()
        dead = [mid for mid, m in state.members.items() if now - m.last_heartbeat > m.session_timeout_ms]
        for mid in dead:
            del state.members[mid]
        if dead:
            state.owners = {k: v for k, v in state.owners.items() if v in state.members}
            self._rebalance(state)
        return bool(dead)

    def _rebalance(self, state: GroupState) -> None:
        state.generation += 1
        state.state_timestamp = now_ms()
        if not state.members:
            state.protocol = None
            state.leader = None
            return
        state.protocol = assignors.select_protocol([m.strategies for m in state.members.values()])
        if state.leader not in state.members:
            state.leader = min(state.members.values(), key=lambda m: (m.last_heartbeat, m.member_id)).member_id
        topics = sorted({t for m in state.members.values() for t in m.topics})
        counts = self._partition_counts(topics)
        subscriptions = {mid: [t for t in m.topics if t in counts] for mid, m in state.members.items()}
        previous = {mid: m.assignment for mid, m in state.members.items()}
        assign = assignors.ASSIGNORS[state.protocol or "range"]
        result = assign(subscriptions, counts, previous)
        for mid, member in state.members.items():
            member.assignment = result.get(mid, {})


def list_group_ids(groups_dir: str) -> list[str]:
    """Ids of groups that have a membership file (members now, or had some)."""
    ids = []
    try:
        names = os.listdir(groups_dir)
    except FileNotFoundError:
        return ids
    for name in names:
        if name.endswith(".json"):
            try:
                with open(os.path.join(groups_dir, name), "rb") as f:
                    ids.append(json.loads(f.read())["group_id"])
            except (OSError, ValueError, KeyError):
                continue
    return sorted(ids)
