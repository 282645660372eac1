"""One share-partition's record lifecycle (KIP-932): which records of a topic partition a share
group has handed out, to whom, how often, and which are done.

Pure logic, no storage and no I/O: the broker (engine/broker/share_groups.py) and, later, the
bundled engine's share groups drive it, passing the time in milliseconds and the record
offsets they read from the log. Kafka's own model (core's SharePartition) is followed:

- the *start offset* (SPSO) is the first offset not yet done with; every record below it is
  acknowledged or archived. The *end offset* (`end_offset` here, one past Kafka's SPEO) is the
  first offset never acquired.
- each offset in [start, end) is *in flight*: AVAILABLE (may be acquired again), ACQUIRED (by
  one member, until its acquisition lock's deadline), ACKNOWLEDGED or ARCHIVED;
- acquiring a record increments its delivery count; a release, or a lock that times out,
  makes it AVAILABLE again unless its delivery count reached `delivery_count_limit`, when it
  is ARCHIVED (never delivered again); a reject archives it; an accept acknowledges it;
- the start offset moves past every leading record that is acknowledged or archived;
- at most `max_record_locks` records are ACQUIRED at once (group.share.partition.max.record.locks).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED = "Available", "Acquired", "Acknowledged", "Archived"

# Acknowledgement types on the wire (ShareFetch/ShareAcknowledge acknowledge_types).
GAP, ACCEPT, RELEASE, REJECT, RENEW = 0, 1, 2, 3, 4


class InvalidRecordState(Exception):
    """An acknowledgement of records this member does not hold (INVALID_RECORD_STATE)."""


@dataclass
class InFlight:
    state: str
    delivery_count: int
    member_id: str | None = None
    deadline_ms: int = 0


class SharePartition:
    def __init__(self, start_offset: int, *, lock_duration_ms: int = 30000, delivery_count_limit: int = 5,
                 max_record_locks: int = 2000):
        self.start_offset = start_offset
        self.end_offset = start_offset
        self.lock_duration_ms = lock_duration_ms
        self.delivery_count_limit = delivery_count_limit
        self.max_record_locks = max_record_locks
        self.in_flight: dict[int, InFlight] = {}
        # Whether a state change was ever made that a share coordinator would have written
        # (an acknowledgement, a release, a lock timing out, a start moved): before it, Kafka's
        # coordinator has no start offset for the partition to describe.
        self.written = False
        self.changes = 0  # counts those changes: a store writes the partition when it moved on
        # What a share coordinator stores of the partition lags one write behind its start, as
        # in Kafka: SharePartition writes a change with the start offset it had before the change,
        # then moves the start past what the change completed. `stored_start` is what the last
        # write carried (what a describe shows); `_carry`, the start when that write was made,
        # is what the next one carries; `_completed` keeps the done records the start passed
        # since, for that write to state.
        self.stored_start = start_offset
        self._carry = start_offset
        self._completed: dict[int, InFlight] = {}

    # ------------------------------------------------------------------ reading
    def next_fetch_offset(self) -> int:
        """Where the log should be read from to find something to acquire: the first AVAILABLE
        in-flight record, else the end offset."""
        for offset in sorted(self.in_flight):
            if self.in_flight[offset].state == AVAILABLE:
                return offset
        return self.end_offset

    def done_in_flight(self) -> int:
        """In-flight records already acknowledged or archived (not counted in a lag)."""
        return sum(1 for r in self.in_flight.values() if r.state in (ACKNOWLEDGED, ARCHIVED))

    def acquired_count(self) -> int:
        return sum(1 for r in self.in_flight.values() if r.state == ACQUIRED)

    # ------------------------------------------------------------------ acquire
    def acquire(self, member_id: str, offsets: Iterable[int], max_records: int,
                now_ms: int) -> list[tuple[int, int, int]]:
        """Acquire for `member_id`, in order, the records at `offsets` (offsets that exist in the
        log, ascending, as read from `next_fetch_offset()`) that are free: AVAILABLE in-flight
        records, and records at or past the end offset. At most `max_records`, and no more than
        the locks left. Returns Kafka's AcquiredRecords: (first, last, delivery count) runs of
        consecutive offsets with one delivery count."""
        room = min(max_records, self.max_record_locks - self.acquired_count())
        deadline = now_ms + self.lock_duration_ms
        taken: list[tuple[int, int]] = []  # (offset, delivery count)
        for offset in offsets:
            if room <= 0:
                break
            if offset < self.start_offset:
                continue
            if offset >= self.end_offset:
                # offsets the log skipped (compacted away) between the end and this record are gone
                self.end_offset = offset + 1
                record = self.in_flight[offset] = InFlight(ACQUIRED, 1, member_id, deadline)
            else:
                record = self.in_flight.get(offset)
                if record is None or record.state != AVAILABLE:
                    continue
                record.state, record.member_id, record.deadline_ms = ACQUIRED, member_id, deadline
                record.delivery_count += 1
            taken.append((offset, record.delivery_count))
            room -= 1
        return _runs(taken)

    # ------------------------------------------------------------------ acknowledge
    def acknowledge(self, member_id: str, first: int, last: int, types: list[int], now_ms: int = 0) -> None:
        """One acknowledgement batch: `types` is one type for the whole range or one per offset.
        Raises InvalidRecordState (changing nothing) when a record of the range, but a GAP,
        is not ACQUIRED by this member."""
        if last < first or not types or (len(types) != 1 and len(types) != last - first + 1):
            raise InvalidRecordState(f"Invalid acknowledgement batch {first}-{last}")
        if any(t not in (GAP, ACCEPT, RELEASE, REJECT, RENEW) for t in types):
            raise InvalidRecordState(f"Invalid acknowledge type in batch {first}-{last}")
        plan = []
        for i, offset in enumerate(range(first, last + 1)):
            kind = types[0] if len(types) == 1 else types[i]
            record = self.in_flight.get(offset)
            if kind == GAP:
                plan.append((offset, kind))
                continue
            if record is None or record.state != ACQUIRED or record.member_id != member_id:
                raise InvalidRecordState(f"The record at offset {offset} is not acquired by member {member_id}")
            plan.append((offset, kind))
        for offset, kind in plan:
            record = self.in_flight.get(offset)
            if kind == GAP:
                if record is not None and offset >= self.start_offset:
                    record.state, record.member_id = ARCHIVED, None
                elif record is None and self.start_offset <= offset < self.end_offset:
                    self.in_flight[offset] = InFlight(ARCHIVED, 0)
            elif kind == ACCEPT:
                record.state, record.member_id = ACKNOWLEDGED, None
            elif kind == REJECT:
                record.state, record.member_id = ARCHIVED, None
            elif kind == RELEASE:
                self._free(record)
            else:  # RENEW: the member keeps the record for another lock duration
                record.deadline_ms = now_ms + self.lock_duration_ms
        self.written = True
        self.changes += 1
        self._advance()

    # ------------------------------------------------------------------ time and members
    def expire_locks(self, now_ms: int) -> bool:
        """Release every record whose acquisition lock has timed out. True when any did."""
        expired = [r for r in self.in_flight.values() if r.state == ACQUIRED and r.deadline_ms <= now_ms]
        for record in expired:
            self._free(record)
        if expired:
            self._advance()
        return bool(expired)

    def next_deadline(self) -> int | None:
        deadlines = [r.deadline_ms for r in self.in_flight.values() if r.state == ACQUIRED]
        return min(deadlines) if deadlines else None

    def release_member(self, member_id: str) -> bool:
        """A member left (or its share session closed): what it holds is released."""
        held = [r for r in self.in_flight.values() if r.state == ACQUIRED and r.member_id == member_id]
        for record in held:
            self._free(record)
        if held:
            self._advance()
        return bool(held)

    def move_start(self, offset: int) -> None:
        """The log's start moved to `offset` (retention, DeleteRecords, an offset reset): what
        lies below is gone."""
        if offset <= self.start_offset:
            return
        for o in [o for o in self.in_flight if o < offset]:
            del self.in_flight[o]
        self.start_offset = offset
        self.end_offset = max(self.end_offset, offset)
        self._carry = max(self._carry, offset)  # (below the log's start, nothing is stored)
        self._completed = {o: r for o, r in self._completed.items() if o >= offset}
        self.written = True
        self.changes += 1

    def state_of(self, offset: int) -> tuple[str, int]:
        """(state, delivery count) of one offset, for tests and descriptions."""
        if offset < self.start_offset:
            return ARCHIVED if offset not in self.in_flight else self.in_flight[offset].state, 0
        record = self.in_flight.get(offset)
        if record is None:
            return AVAILABLE, 0
        return record.state, record.delivery_count

    def snapshot(self) -> dict:
        """What a share coordinator keeps of this partition (Kafka's ShareSnapshot/ShareUpdate
        value): the start offset and the in-flight records' states as batches
        (first, last, delivery count, state), ACQUIRED written as AVAILABLE, as Kafka does."""
        return {"start_offset": self.start_offset, "batches": _batches(self.in_flight)}

    def stored_state(self, with_acquired: bool = True) -> tuple[int, list, int]:
        """What the partition's next write stores: (the start offset it carries, the batches of
        the records at or past it, how many of those are done). ACQUIRED records are written
        as AVAILABLE, or left out (`with_acquired=False`: Kafka writes only the batches whose
        state changed, never an acquisition)."""
        records = {o: r for o, r in self._completed.items() if o >= self._carry}
        records.update(self.in_flight)
        if not with_acquired:
            records = {o: r for o, r in records.items() if r.state != ACQUIRED}
        done = self.done_in_flight() + self.start_offset - self._carry
        return self._carry, _batches(records), done

    @property
    def carry(self) -> int:
        """The start offset the next write carries."""
        return self._carry

    def stored(self, carried: int, start: int) -> None:
        """A write of `stored_state` went through: it carried `carried`, and was made when the
        start offset was `start` (the next write carries that)."""
        self.stored_start, self._carry = carried, start
        self._completed = {o: r for o, r in self._completed.items() if o >= start}

    def restored(self, stored_start: int) -> None:
        """The partition was just rebuilt from a stored state starting at `stored_start`: the
        start moves past what that state had done, as Kafka's SharePartition moves it at load,
        and the next write carries the moved start."""
        self._advance()
        self.stored_start, self._carry, self._completed = stored_start, self.start_offset, {}

    # ------------------------------------------------------------------ internals
    def _free(self, record: InFlight) -> None:
        self.written = True
        self.changes += 1
        record.member_id, record.deadline_ms = None, 0
        record.state = ARCHIVED if record.delivery_count >= self.delivery_count_limit else AVAILABLE

    def _advance(self) -> None:
        while self.start_offset < self.end_offset:
            record = self.in_flight.get(self.start_offset)
            if record is not None and record.state not in (ACKNOWLEDGED, ARCHIVED):
                break
            if record is not None:
                self._completed[self.start_offset] = record
            self.in_flight.pop(self.start_offset, None)
            self.start_offset += 1


def _batches(records: dict[int, InFlight]) -> list[tuple[int, int, int, str]]:
    """(first, last, delivery count, state) runs of the records, ACQUIRED as AVAILABLE."""
    batches: list[tuple[int, int, int, str]] = []
    for offset in sorted(records):
        record = records[offset]
        state = AVAILABLE if record.state == ACQUIRED else record.state
        if batches and batches[-1][1] == offset - 1 and batches[-1][2:] == (record.delivery_count, state):
            batches[-1] = (batches[-1][0], offset, record.delivery_count, state)
        else:
            batches.append((offset, offset, record.delivery_count, state))
    return batches


def _runs(taken: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    runs: list[tuple[int, int, int]] = []
    for offset, count in taken:
        if runs and runs[-1][1] == offset - 1 and runs[-1][2] == count:
            runs[-1] = (runs[-1][0], offset, count)
        else:
            runs.append((offset, offset, count))
    return runs
