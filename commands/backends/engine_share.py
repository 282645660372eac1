"""Share groups on the bundled engine (engine/share_groups.py), for pk-console-share-consumer
and pk-share-groups without --bootstrap-server: a consumer with the interface of
wire_share.ShareConsumer, and a service with the interface of share_groups.ShareGroupService.

The consumer behaves as Kafka's KafkaShareConsumer where the tools can tell: it joins with a
member id it makes, each poll sends the previous poll's acknowledgements with the request
for new records (one locked change of the group file), records it acquired but did not hand
out are released at close, and close sends what is pending, then leaves the group.
"""

from __future__ import annotations

import time

from pk.engine import share_groups as sg
from pk.engine.engine import Engine
from pk.engine.errors import KafkaError, UnknownTopicOrPartitionError

from ..share_groups import Description, Member
from .kafka_admin import AdminError, known_error
from .wire_share import ShareError, ShareRecord, new_member_id

_IDLE_SLEEP = 0.02  # seconds between polls that found nothing


def _make(topic, partition, timestamp_type, offset, timestamp, key, value, headers) -> ShareRecord:
    return ShareRecord(topic, partition, timestamp_type, offset, timestamp, key, value, headers, 0)


def _host() -> str:
    """The member's host as a broker would see the client: the loopback address."""
    return "/127.0.0.1"


class EngineShareConsumer:
    def __init__(self, data_dir: str | None, group: str, topic: str, client_id: str = "console-share-consumer",
                 max_records: int = 500):
        self.engine = Engine(data_dir)
        self.store = sg.ShareGroupStore(self.engine)
        self.group, self.topic, self.client_id = group, topic, client_id
        self.max_records = max_records
        self.member_id = new_member_id()
        self._acks: dict[tuple[str, int], dict[int, int]] = {}
        self._joined = False

    def _join(self) -> None:
        self.store.join(self.group, self.member_id, self.client_id, _host(), [self.topic])
        self._joined = True

    def acknowledge(self, record: ShareRecord, ack_type: int) -> None:
        self._acks.setdefault((record.topic, record.partition), {})[record.offset] = ack_type

    def poll(self, timeout_s: float) -> list[ShareRecord]:
        deadline = time.monotonic() + max(timeout_s, 0)
        while True:
            if not self._joined:
                self._join()
            acks, self._acks = self._acks, {}
            try:
                got, _ = self.store.poll(self.group, self.member_id, acks, self.max_records, _make)
            except sg.UnknownMemberIdError:
                # the session timed out (a long stall): rejoin as Kafka's consumer does; what
                # this member held was released, so these acknowledgements are void
                self._joined = False
                continue
            except (KafkaError, OSError) as exc:
                raise ShareError(str(exc)) from None
            if got or time.monotonic() >= deadline:
                return got
            time.sleep(min(_IDLE_SLEEP, max(deadline - time.monotonic(), 0)))

    def close(self) -> None:
        if not self._joined:
            self.engine.close()
            return
        try:
            self.store.acknowledge(self.group, self.member_id, self._acks)
            self._acks = {}
        finally:
            self.store.leave(self.group, self.member_id)  # what it still holds is released
            self.engine.close()


class EngineShareGroupService:
    """ShareGroupService's calls answered from the data directory's share groups."""

    def __init__(self, data_dir: str | None):
        self.engine = Engine(data_dir)
        self.store = sg.ShareGroupStore(self.engine)

    def close(self) -> None:
        self.engine.close()

    def coordinator(self, group: str) -> tuple[str | None, int | None, int]:
        return None, None, self.engine.node_id  # no network address: printed as "-"

    def _state(self, group: str) -> sg.ShareGroupState:
        state = self.store.read(group)
        if state is None:
            raise known_error(69, f"Group {group} not found.")
        return state

    def listings(self, states: list[str] | None = None) -> list[tuple[str, str]]:
        from ..java_hash import hash_order, string_hash

        found = {}
        for group in self.store.group_ids():
            state = self.store.read(group)
            if state is not None and (not states or state.state in states):
                found[group] = state.state
        return [(g, found[g]) for g in hash_order(found, string_hash)]

    def describe(self, group: str) -> Description:
        state = self._state(group)
        members = []
        for m in state.members.values():
            by_topic: dict[str, list[int]] = {}
            for topic, p in m.assignment:
                by_topic.setdefault(topic, []).append(p)
            members.append(Member(m.member_id, m.client_id, m.client_host, m.epoch,
                                  sorted((t, sorted(ps)) for t, ps in by_topic.items())))
        return Description(group, state.state, state.group_epoch, state.assignment_epoch,
                           self.coordinator(group), members)

    def start_offsets(self, group: str, topics: list[str] | None = None) -> list[dict]:
        state = self._state(group)
        if topics is None:  # every partition the group has state of
            asked = sorted(state.partitions)
        else:
            asked = []
            for topic in topics:
                try:
                    asked += [(topic, p) for p in range(self.engine.topic(topic).partitions)]
                except UnknownTopicOrPartitionError:
                    raise known_error(3, "This server does not host this topic-partition.") from None
        rows = []
        for topic, p in asked:
            sp = state.partitions.get((topic, p))
            if sp is None or not sp.written:  # no state written yet: Kafka shows "-"
                rows.append({"topic": topic, "partition": p, "start_offset": -1, "leader_epoch": -1, "lag": -1})
            else:
                rows.append({"topic": topic, "partition": p, "start_offset": sp.stored_start, "leader_epoch": 0,
                             "lag": self.store.lag(topic, p, sp)})
        return sorted(rows, key=lambda r: (r["topic"], r["partition"]))

    def partitions(self, topics: list[str]) -> dict[str, list[int]]:
        out = {}
        for topic in topics:
            try:
                out[topic] = list(range(self.engine.topic(topic).partitions))
            except UnknownTopicOrPartitionError:
                raise known_error(3, "This server does not host this topic-partition.") from None
        return out

    def list_offsets(self, tps: list[tuple[str, int]], timestamp: int) -> dict[tuple[str, int], int]:
        out = {}
        for topic, partition in tps:
            try:
                plog = self.engine.partition(topic, partition)
            except KafkaError:
                raise known_error(3, "This server does not host this topic-partition.") from None
            if timestamp == -2:
                out[(topic, partition)] = plog.log_start_offset
            elif timestamp == -1:
                out[(topic, partition)] = plog.log_end_offset
            else:
                found = plog.offset_for_timestamp(timestamp)
                out[(topic, partition)] = found[0] if found is not None else -1
        return out

    def alter_offsets(self, group: str, offsets: dict[tuple[str, int], int]) -> None:
        try:
            self.store.alter_start_offsets(group, offsets)
        except KafkaError as exc:
            raise known_error(exc.code, str(exc)) from None

    def delete_offsets(self, group: str, topics: list[str]) -> tuple[AdminError | None, dict[str, AdminError | None]]:
        try:
            found = self.store.delete_start_offsets(group, topics)
        except KafkaError as exc:
            return known_error(exc.code, str(exc)), {}
        # Kafka 4.4's words for a topic the group has no state of, and for one that does not exist
        none = known_error(3, "There is no offset information to delete.")
        unknown = known_error(3, "This server does not host this topic-partition.")
        return None, {t: None if found.get(t) else none if self._exists(t) else unknown for t in topics}

    def _exists(self, topic: str) -> bool:
        try:
            self.engine.topic(topic)
            return True
        except UnknownTopicOrPartitionError:
            return False

    def delete_group(self, group: str) -> AdminError | None:
        try:
            self.store.delete(group)
        except KafkaError as exc:
            return known_error(exc.code, str(exc))
        return None
