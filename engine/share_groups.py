"""Share groups (KIP-932, Kafka's queues) on the bundled engine: several processes on one data
directory share a topic's records, each record handed to one member at a time, acknowledged
one by one, with no server.

Kafka keeps a share group in its group coordinator and each share-partition's state in its
share coordinator (`__share_group_state`). With no server, a group lives in one file,
`<data dir>/.pk/share-groups/<group>.json`, read and replaced (atomically, fsynced) only under an
flock on the `.lock` beside it, so that every change is one read-modify-write that no other
process interleaves with. The file holds

- the members (id, client id, host, subscription, assignment, member epoch, when last seen),
  the group epoch and the assignment epoch, as the broker's share groups keep them in memory
  (engine/broker/share_groups.py); any change of membership bumps the group epoch and
  reassigns with Kafka's simple assignor (`simple_assignment`); a member silent for the
  group's `share.session.timeout.ms` is removed by whichever process next takes the lock;
- each share-partition's state: an engine/share_partition.py `SharePartition` (start offset,
  end offset, the in-flight records with their state, delivery count, holder and lock
  deadline in wall-clock milliseconds, which every process on the machine reads alike).

A member acquires from its assigned partitions only, under the group lock: the acquisition
locks, delivery counts and the group configs (`share.record.lock.duration.ms`,
`share.delivery.count.limit`, `share.partition.max.record.locks`, `share.auto.offset.reset`,
`share.session.timeout.ms`, from `.pk/group-configs.json`, the store pk-server-start and
pk-configs keep) work as on the broker. A process that dies holding records cannot release
them: their locks time out (checked by whoever takes the group lock next) and another member
acquires them, with a delivery count one higher, as Kafka does after a lock times out.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field

from . import group_config, records
from .config_store import ConfigStore
from .errors import KafkaError
from .fileutil import atomic_write, inside, locked
from .groups import _file_stem
from .paths import share_groups_dir
from .share_partition import GAP, InFlight, InvalidRecordState, SharePartition

# Kafka 4.4's coordinator moves a share group's epoch twice more when an assignment takes
# partitions whose share-partition state the group does not have yet (records of the
# partitions initializing, then initialized), once whatever their number.
INITIALIZING_BUMPS = 2

EMPTY, STABLE = "Empty", "Stable"
ASSIGNOR_NAME = "simple"
READ_CHUNK = 1 << 20
CONTROL_BIT = 0x20


class GroupIdNotFoundError(KafkaError):
    code = 69


class NonEmptyGroupError(KafkaError):
    code = 68


class UnknownMemberIdError(KafkaError):
    code = 25


def now_ms() -> int:
    return int(time.time() * 1000)


def simple_assignment(members: list[str], partitions: list[tuple[str, int]]) -> dict[str, list[tuple[str, int]]]:
    """Kafka's SimpleAssignor for members subscribed alike: with at least as many partitions as
    members, the partitions dealt round-robin; with more members than partitions, the members
    dealt round-robin over the partitions (a partition shared by several members)."""
    members, partitions = sorted(members), sorted(partitions)
    out: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
    if not members or not partitions:
        return out
    if len(partitions) >= len(members):
        for i, tp in enumerate(partitions):
            out[members[i % len(members)]].append(tp)
    else:
        for i, m in enumerate(members):
            out[m].append(partitions[i % len(partitions)])
    return out


@dataclass
class ShareMember:
    member_id: str
    client_id: str
    client_host: str
    subscribed: list[str]
    epoch: int = 0
    assignment: list[list] = field(default_factory=list)  # [topic, partition] pairs
    last_seen_ms: int = 0


@dataclass
class ShareGroupState:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    partitions: dict[tuple[str, int], SharePartition] = field(default_factory=dict)
    topic_ids: dict[str, str] = field(default_factory=dict)  # the topics the partitions are of
    changes_read: dict[tuple[str, int], int] = field(default_factory=dict)  # each partition's, when read

    def stored(self) -> None:
        """The group is written back: each share-partition that changed stores its state as a
        write to Kafka's share coordinator would (the start offset describe shows lags one
        write behind, share_partition.py)."""
        for key, sp in self.partitions.items():
            if sp.changes != self.changes_read.get(key, 0):
                sp.stored(sp.carry, sp.start_offset)

    @property
    def state(self) -> str:
        return STABLE if self.members else EMPTY

    # ------------------------------------------------------------------ file form
    def to_json(self) -> bytes:
        parts = []
        for (topic, partition), sp in sorted(self.partitions.items()):
            parts.append({"topic": topic, "partition": partition, "start": sp.start_offset, "end": sp.end_offset,
                          "stored_start": sp.stored_start, "carry": sp.carry,
                          "written": sp.written, "changes": sp.changes,
                          "in_flight": [[o, r.state, r.delivery_count, r.member_id, r.deadline_ms]
                                        for o, r in sorted(sp.in_flight.items())]})
        doc = {"version": 1, "group_id": self.group_id, "group_epoch": self.group_epoch,
               "assignment_epoch": self.assignment_epoch,
               "members": {mid: vars(m) for mid, m in self.members.items()}, "partitions": parts,
               "topic_ids": self.topic_ids}
        return json.dumps(doc, sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes) -> "ShareGroupState":
        doc = json.loads(data)
        state = cls(doc["group_id"], doc["group_epoch"], doc["assignment_epoch"],
                    {mid: ShareMember(**m) for mid, m in doc["members"].items()}, topic_ids=doc["topic_ids"])
        for p in doc["partitions"]:
            sp = SharePartition(p["start"])
            sp.end_offset, sp.written, sp.changes = p["end"], p["written"], p["changes"]
            sp.in_flight = {o: InFlight(s, c, m, d) for o, s, c, m, d in p["in_flight"]}
            # (a file of an older pk has neither: its start is what it stored)
            sp.stored(p.get("stored_start", p["start"]), p.get("carry", p["start"]))
            state.changes_read[(p["topic"], p["partition"])] = sp.changes
            state.partitions[(p["topic"], p["partition"])] = sp
        return state


class ShareGroupStore:
    """The share groups of one data directory (each method one locked read-modify-write)."""

    def __init__(self, engine):
        self.engine = engine
        self.dir = share_groups_dir(engine.data_dir)
        self.configs = ConfigStore(engine.data_dir, group_config.FILE_NAME, "group config")

    # ------------------------------------------------------------------ files
    def _paths(self, group_id: str) -> tuple[str, str]:
        stem = _file_stem(group_id)
        return inside(self.dir, stem + ".json"), inside(self.dir, stem + ".lock")

    def _read(self, path: str, group_id: str) -> ShareGroupState | None:
        try:
            with open(path, "rb") as f:
                return ShareGroupState.from_json(f.read())
        except FileNotFoundError:
            return None

    def update(self, group_id: str, change, create: bool = False):
        """Run change(state) -> (result, changed) under the group's lock, after dropping
        members whose sessions ended and releasing timed-out record locks; write the group
        back when anything moved. Without `create`, a group with no file is None to change."""
        os.makedirs(self.dir, exist_ok=True)
        path, lock = self._paths(group_id)
        with locked(lock):
            state = self._read(path, group_id)
            if state is None and create:
                state = ShareGroupState(group_id)
            dirty = False
            if state is not None:
                dirty = self._prune(state)
                self._configure(state)
                dirty |= self._upkeep(state)
            result, changed = change(state)
            if state is not None and (dirty or changed):
                state.stored()
                atomic_write(path, state.to_json())  # durable: acknowledgements are kept
            return result

    def read(self, group_id: str) -> ShareGroupState | None:
        """The group as it stands now (upkeep applied and written), None when there is none."""
        return self.update(group_id, lambda state: (state, False))

    def group_ids(self) -> list[str]:
        ids = []
        try:
            names = os.listdir(self.dir)
        except FileNotFoundError:
            return ids
        for name in names:
            if name.endswith(".json"):
                try:
                    with open(os.path.join(self.dir, name), "rb") as f:
                        ids.append(json.loads(f.read())["group_id"])
                except (OSError, ValueError, KeyError):
                    continue  # removed meanwhile
        return sorted(ids)

    def delete(self, group_id: str) -> None:
        """DeleteGroups of a share group: refused while it has members; its state goes."""
        os.makedirs(self.dir, exist_ok=True)
        path, lock = self._paths(group_id)
        with locked(lock):
            state = self._read(path, group_id)
            if state is None:
                raise GroupIdNotFoundError(f"Group {group_id} not found.")
            self._upkeep(state)
            if state.members:
                raise NonEmptyGroupError(f"Share group '{group_id}' is not EMPTY.")
            os.unlink(path)

    # ------------------------------------------------------------------ configs
    def config(self, group_id: str, name: str) -> str:
        return group_config.effective(self.configs.get(group_id), name, self.engine.broker_config.get)

    def _int_config(self, group_id: str, name: str) -> int:
        return int(self.config(group_id, name))

    def _configure(self, state: ShareGroupState) -> None:
        """The group's current configs on each share-partition (they may have changed since the
        file was written): a release or a lock timing out archives by the current limit."""
        lock_ms = self._int_config(state.group_id, "share.record.lock.duration.ms")
        limit = self._int_config(state.group_id, "share.delivery.count.limit")
        locks = self._int_config(state.group_id, "share.partition.max.record.locks")
        for sp in state.partitions.values():
            sp.lock_duration_ms, sp.delivery_count_limit, sp.max_record_locks = lock_ms, limit, locks

    # ------------------------------------------------------------------ membership
    def _upkeep(self, state: ShareGroupState) -> bool:
        """Members past their session timeout leave (what they hold is released); record locks
        past their deadline are released. True when the state changed."""
        now = now_ms()
        timeout = self._int_config(state.group_id, "share.session.timeout.ms")
        dead = [mid for mid, m in state.members.items() if now - m.last_seen_ms > timeout]
        for mid in dead:
            self._remove(state, mid)
        expired = False
        for sp in state.partitions.values():
            expired |= sp.expire_locks(now)
        return bool(dead) or expired

    def _prune(self, state: ShareGroupState) -> bool:
        """Forget the share-partitions of topics deleted since (a topic made again under the
        same name has another id: its records are new to the group). True when any went."""
        gone = []
        for topic, topic_id in state.topic_ids.items():
            try:
                if self.engine.topic(topic).topic_id == topic_id:
                    continue
            except KafkaError:
                pass
            gone.append(topic)
        for topic in gone:
            del state.topic_ids[topic]
            for key in [k for k in state.partitions if k[0] == topic]:
                del state.partitions[key]
        return bool(gone)

    def _remove(self, state: ShareGroupState, member_id: str) -> None:
        state.members.pop(member_id, None)
        for sp in state.partitions.values():
            sp.release_member(member_id)
        self._reassign(state)

    def _subscribed_partitions(self, state: ShareGroupState) -> list[tuple[str, int]]:
        out = []
        for topic in sorted({t for m in state.members.values() for t in m.subscribed}):
            try:
                out.extend((topic, p) for p in range(self.engine.topic(topic).partitions))
            except KafkaError:
                continue  # not (yet) a topic: subscribed to, nothing to assign
        return out

    def _reassign(self, state: ShareGroupState) -> None:
        """A new group epoch and target assignment, taken by every member at once (a share
        group needs no revocation: members may share a partition)."""
        state.group_epoch += 1
        wanted = self._subscribed_partitions(state)
        if any(tuple(tp) not in state.partitions for tp in wanted):
            # Kafka initializes their share-partitions' state first: the epoch moves twice more
            state.group_epoch += INITIALIZING_BUMPS
        by_topics: dict[tuple, list[str]] = {}
        for m in state.members.values():
            by_topics.setdefault(tuple(m.subscribed), []).append(m.member_id)
        for topics, members in by_topics.items():
            plan = simple_assignment(members, [tp for tp in wanted if tp[0] in topics])
            for member_id, tps in plan.items():
                state.members[member_id].assignment = [list(tp) for tp in tps]
        for m in state.members.values():
            m.epoch = state.group_epoch
        state.assignment_epoch = state.group_epoch
        for tp in wanted:  # Kafka initializes a share-partition when it is first assigned
            self._share_partition(state, *tp)

    def join(self, group_id: str, member_id: str, client_id: str, client_host: str, topics: list[str]) -> None:
        def change(state: ShareGroupState):
            state.members[member_id] = ShareMember(member_id, client_id, client_host, sorted(set(topics)),
                                                   last_seen_ms=now_ms())
            self._reassign(state)
            return None, True

        self.update(group_id, change, create=True)

    def leave(self, group_id: str, member_id: str) -> None:
        def change(state: ShareGroupState | None):
            if state is None or member_id not in state.members:
                return None, False
            self._remove(state, member_id)
            return None, True

        self.update(group_id, change)

    # ------------------------------------------------------------------ share-partitions
    def _share_partition(self, state: ShareGroupState, topic: str, partition: int) -> SharePartition:
        sp = state.partitions.get((topic, partition))
        if sp is None:
            state.topic_ids[topic] = self.engine.topic(topic).topic_id
            plog = self.engine.partition(topic, partition)
            policy = self.config(state.group_id, "share.auto.offset.reset").strip().lower()
            start = plog.log_start_offset if policy == "earliest" else plog.log_end_offset
            if policy.startswith("by_duration:"):
                found = plog.offset_for_timestamp(now_ms() - duration_ms(policy.split(":", 1)[1]))
                start = found[0] if found is not None else plog.log_end_offset
            sp = state.partitions[(topic, partition)] = SharePartition(
                start, lock_duration_ms=self._int_config(state.group_id, "share.record.lock.duration.ms"),
                delivery_count_limit=self._int_config(state.group_id, "share.delivery.count.limit"),
                max_record_locks=self._int_config(state.group_id, "share.partition.max.record.locks"))
        return sp

    def poll(self, group_id: str, member_id: str, acks: dict[tuple[str, int], dict[int, int]],
             max_records: int, make) -> tuple[list, int]:
        """What a ShareFetch does, in one locked change: apply the member's acknowledgements
        (tp -> offset -> type), then acquire up to max_records records of its assigned
        partitions. Returns (records built by make(topic, partition, timestamp type, offset,
        timestamp, key, value, headers, delivery count), the member's epoch).
        Raises UnknownMemberIdError when the member is no longer in the group (its session
        timed out): it must join again."""

        def change(state: ShareGroupState | None):
            member = state.members.get(member_id) if state is not None else None
            if member is None:
                raise UnknownMemberIdError("The coordinator is not aware of this member.")
            changed = self._acknowledge(state, member_id, acks)
            now = now_ms()
            interval = self._int_config(group_id, "share.heartbeat.interval.ms")
            if now - member.last_seen_ms >= interval:  # a heartbeat: written when due, not each poll
                changed = True
            member.last_seen_ms = now
            # the topics may have grown partitions since the last assignment
            if {tuple(tp) for m in state.members.values() for tp in m.assignment} != \
                    set(self._subscribed_partitions(state)):
                self._reassign(state)
                changed = True
            out: list = []
            tps = [tuple(tp) for tp in member.assignment]
            if tps:  # a different first partition each poll, so that none starves
                first = (now // 7) % len(tps)
                tps = tps[first:] + tps[:first]
            for topic, partition in tps:
                if len(out) >= max_records:
                    break
                try:
                    got = self._acquire(state, member_id, topic, partition, max_records - len(out), now, make)
                except KafkaError:
                    continue  # the topic went away meanwhile
                if got:
                    out += got
                    changed = True
            return (out, member.epoch), changed

        return self.update(group_id, change)

    def acknowledge(self, group_id: str, member_id: str, acks: dict[tuple[str, int], dict[int, int]]) -> None:
        """The final acknowledgements of a member that closes (ShareAcknowledge, epoch -1)."""

        def change(state: ShareGroupState | None):
            if state is None or not acks:
                return None, False
            return None, self._acknowledge(state, member_id, acks)

        self.update(group_id, change)

    @staticmethod
    def _acknowledge(state: ShareGroupState, member_id: str, acks) -> bool:
        """Apply acknowledgements, one batch per run of offsets with one type; a batch naming a
        record this member no longer holds (its lock timed out) changes nothing, as Kafka
        answers INVALID_RECORD_STATE for it."""
        now = now_ms()
        changed = False
        for tp, by_offset in acks.items():
            sp = state.partitions.get(tp)
            if sp is None:
                continue
            for first, last, kind in _runs(by_offset):
                try:
                    sp.acknowledge(member_id, first, last, [kind], now)
                    changed = True
                except InvalidRecordState:
                    continue
        return changed

    def _acquire(self, state: ShareGroupState, member_id: str, topic: str, partition: int, max_records: int,
                 now: int, make) -> list:
        """Read the log from the share-partition's next fetch offset, acquire what is free and
        build its records; acquired offsets with no record (compacted away inside a batch)
        are acknowledged as gaps at once."""
        plog = self.engine.partition(topic, partition)
        sp = self._share_partition(state, topic, partition)
        sp.move_start(plog.log_start_offset)
        if sp.acquired_count() >= sp.max_record_locks:
            return []
        position, end = sp.next_fetch_offset(), plog.log_end_offset
        out: list = []
        while position < end and max_records > 0:
            try:
                data, _, end = plog.read_with_offsets(position, READ_CHUNK)
            except KafkaError:
                break
            if not data:
                break
            next_position = position
            for pos, header in records.iter_batches(data):
                next_position = header.next_offset
                if header.attributes & CONTROL_BIT or header.last_offset < position:
                    continue
                runs = sp.acquire(member_id, range(max(header.base_offset, position), header.last_offset + 1),
                                  max_records, now)
                if not runs:
                    continue
                counts = {o: c for f, l, c in runs for o in range(f, l + 1)}
                max_records -= len(counts)

                def build(offset, timestamp, key, value, headers, _type=header.timestamp_type):
                    return make(topic, partition, _type, offset, timestamp, key, value, headers)

                for rec in records.decode_records(data, pos, header, build):
                    count = counts.pop(rec.offset, None)
                    if count is not None:
                        out.append(rec._replace(delivery_count=count))
                for offset in counts:  # no record there: a gap
                    sp.acknowledge(member_id, offset, offset, [GAP], now)
                if max_records <= 0:
                    break
            if next_position <= position:
                break
            position = next_position
        return out

    # ------------------------------------------------------------------ kafka-share-groups
    def lag(self, topic: str, partition: int, sp: SharePartition) -> int:
        try:
            end = self.engine.partition(topic, partition).log_end_offset
        except KafkaError:
            return -1
        return max(end - sp.start_offset - sp.done_in_flight(), 0)

    def alter_start_offsets(self, group_id: str, offsets: dict[tuple[str, int], int]) -> None:
        """AlterShareGroupOffsets: each partition's share-partition starts over at the offset
        (an empty group only: the tool checks, the lock keeps members from joining meanwhile)."""

        def change(state: ShareGroupState):
            if state.members:
                raise NonEmptyGroupError(f"Share group '{group_id}' is not EMPTY.")
            for (topic, partition), offset in offsets.items():
                state.topic_ids[topic] = self.engine.topic(topic).topic_id
                sp = SharePartition(offset)
                sp.written, sp.changes = True, 1
                state.partitions[(topic, partition)] = sp
            return None, True

        self.update(group_id, change, create=True)

    def delete_start_offsets(self, group_id: str, topics: list[str]) -> dict[str, bool]:
        """DeleteShareGroupOffsets: the share-partitions of these topics are forgotten (the next
        member starts at share.auto.offset.reset). {topic: whether the group had state of it}."""

        def change(state: ShareGroupState | None):
            if state is None:
                raise GroupIdNotFoundError(f"Group {group_id} not found.")
            if state.members:
                raise NonEmptyGroupError(f"Share group '{group_id}' is not EMPTY.")
            found = {}
            for topic in topics:
                keys = [k for k in state.partitions if k[0] == topic]
                found[topic] = bool(keys)
                for key in keys:
                    del state.partitions[key]
                state.topic_ids.pop(topic, None)
            return found, any(found.values())

        return self.update(group_id, change)


def _runs(by_offset: dict[int, int]) -> list[tuple[int, int, int]]:
    """(first, last, type) runs of consecutive offsets with one acknowledgement type."""
    out: list[tuple[int, int, int]] = []
    for offset in sorted(by_offset):
        kind = by_offset[offset]
        if out and out[-1][1] == offset - 1 and out[-1][2] == kind:
            out[-1] = (out[-1][0], offset, kind)
        else:
            out.append((offset, offset, kind))
    return out


def duration_ms(text: str) -> int:
    """Milliseconds of an ISO-8601 duration as group_config.py accepts it (PnDTnHnMn.nS)."""
    import re

    date, _, clock = text.upper().lstrip("P").partition("T")
    total = 0.0
    for amount, unit in re.findall(r"(\d+(?:\.\d+)?)([DHMS])", date):
        total += float(amount) * (86400000 if unit == "D" else 0)
    for amount, unit in re.findall(r"(\d+(?:\.\d+)?)([DHMS])", clock):
        total += float(amount) * {"H": 3600000, "M": 60000, "S": 1000, "D": 0}[unit]
    return int(total)
