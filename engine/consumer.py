"""A consumer over the bundled engine: manual assignment or group subscription.

It behaves like Kafka's consumer where the console consumer can tell: positions start at the
group's committed offset or `auto.offset.reset`, records come in offset order per
partition, auto-commit runs every `auto.commit.interval.ms`, and group members share
partitions through engine/groups.py.

With isolation.level=read_committed it reads only up to each partition's last stable offset
(the first record of a transaction still open) and drops the records of aborted
transactions, which the segments' .txnindex names, and the markers (txn_index.py).
"""

from __future__ import annotations

import re
import time
from functools import partial
from itertools import repeat
from operator import attrgetter
from typing import NamedTuple

from . import records, topic_names, txn_index
from .errors import KafkaError, OffsetOutOfRangeError
from .groups import GroupCoordinator, UnknownMemberIdError

_IDLE_SLEEP = 0.01  # seconds between empty polls: new records show up within ~10 ms


class NoOffsetForPartitionError(KafkaError):
    pass


class ConsumerRecord(NamedTuple):
    topic: str
    partition: int
    timestamp_type: int  # records.CREATE_TIME or LOG_APPEND_TIME
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple
    # The partition leader epoch of the record's batch; None where the consumer does not know
    # it. Only pk's --output json shows it (Kafka's console consumer drops it, see formatter.py).
    leader_epoch: int | None = None


_KEY, _VALUE = attrgetter("key"), attrgetter("value")

# A fetch that holds at least this many records is decoded column-wise (NumPy); smaller ones
# record by record, which spares a short-lived tool NumPy's ~65 ms import.
COLUMNS_FROM = 2048


class RecordList:
    """Records of one partition from one fetch, as ConsumerRecords (small fetches, remote
    consumers). Shares RecordColumnsSet's interface: len, records(), split(n)."""

    columns = None

    def __init__(self, topic: str, partition: int, items: list):
        self.topic, self.partition, self.items = topic, partition, items

    def __len__(self) -> int:
        return len(self.items)

    def records(self) -> list:
        return self.items

    @property
    def first_offset(self) -> int:
        return self.items[0].offset

    @property
    def next_offset(self) -> int:
        return self.items[-1].offset + 1

    def split(self, n: int) -> tuple["RecordList", "RecordList"]:
        return (RecordList(self.topic, self.partition, self.items[:n]),
                RecordList(self.topic, self.partition, self.items[n:]))

    def payload_bytes(self) -> int:
        """Key and value bytes of the records (a null counts 0)."""
        return (sum(map(len, filter(None, map(_KEY, self.items))))
                + sum(map(len, filter(None, map(_VALUE, self.items)))))

    def first_offsets(self) -> dict[tuple[str, int], int]:
        """The first offset of each partition among these records (a remote consumer's poll
        can mix partitions in one list)."""
        first: dict[tuple[str, int], int] = {}
        for r in self.items:
            first.setdefault((r.topic, r.partition), r.offset)
        return first


class RecordColumnsSet:
    """Records `lo`..`hi` of a fetch's RecordColumns (engine/records/columns.py): one
    partition's records as NumPy columns, so a formatter can write them without a Python
    object per record. records() builds ConsumerRecords when a caller needs them."""

    def __init__(self, topic: str, partition: int, columns, lo: int, hi: int):
        self.topic, self.partition, self.columns, self.lo, self.hi = topic, partition, columns, lo, hi

    def __len__(self) -> int:
        return self.hi - self.lo

    @property
    def first_offset(self) -> int:
        return int(self.columns.offset[self.lo])

    @property
    def next_offset(self) -> int:
        return int(self.columns.offset[self.hi - 1]) + 1

    def split(self, n: int) -> tuple["RecordColumnsSet", "RecordColumnsSet"]:
        cut = self.lo + max(0, min(n, len(self)))
        return (RecordColumnsSet(self.topic, self.partition, self.columns, self.lo, cut),
                RecordColumnsSet(self.topic, self.partition, self.columns, cut, self.hi))

    def first_offsets(self) -> dict[tuple[str, int], int]:
        return {(self.topic, self.partition): self.first_offset} if len(self) else {}

    def payload_bytes(self) -> int:
        """Key and value bytes of the records (a null counts 0)."""
        keys, values = self.columns.key_len[self.lo:self.hi], self.columns.value_len[self.lo:self.hi]
        # A null is length -1: adding one back per null counts it 0.
        return int(keys.sum() + (keys < 0).sum() + values.sum() + (values < 0).sum())

    def records(self) -> list:
        import numpy as np

        cols, lo, hi = self.columns, self.lo, self.hi
        epochs = np.repeat(np.asarray([h.partition_leader_epoch for _, h in cols.batches], dtype=np.int64),
                           np.diff(cols.first))[lo:hi].tolist()
        return list(map(ConsumerRecord, repeat(self.topic, hi - lo), repeat(self.partition, hi - lo),
                        cols.timestamp_types()[lo:hi].tolist(), cols.offset[lo:hi].tolist(),
                        cols.timestamps()[lo:hi].tolist(), cols.slices(cols.key_start, cols.key_len, lo, hi),
                        cols.slices(cols.value_start, cols.value_len, lo, hi), cols.headers(lo, hi), epochs))


def records_of(topic: str, partition: int, data, batches: list, start: int):
    """The records at or after offset `start` of `batches` ([(position, header)] of data
    batches in `data`, control batches left out): a RecordColumnsSet for a large fetch, a
    RecordList for a small one, None when none is left. Shared by every consumer that has a
    fetch's raw batches, from a segment (EngineConsumer) or from a Fetch answer."""
    if sum(h.records_count for _, h in batches) >= COLUMNS_FROM:
        from .records import columns

        cols = columns.scan(data, batches)
        lo = int(cols.offset.searchsorted(start))  # the first batch may begin before `start`
        return RecordColumnsSet(topic, partition, cols, lo, len(cols)) if lo < len(cols) else None
    got: list[ConsumerRecord] = []
    for pos, header in batches:
        # Records are built straight into ConsumerRecords: topic, partition and timestamp
        # type are bound once per batch.
        make = partial(ConsumerRecord, topic, partition, header.timestamp_type,
                       leader_epoch=header.partition_leader_epoch)
        got += records.decode_records(data, pos, header, make)
    if got and got[0].offset < start:
        got = [r for r in got if r.offset >= start]
    return RecordList(topic, partition, got) if got else None


def _bool(value) -> bool:
    return str(value).strip().lower() == "true"


def _int(config: dict, key: str, default: int) -> int:
    """An INT consumer config as Java's ConfigDef parses it (trimmed), with its error text."""
    if key not in config:
        return default
    text = str(config[key]).strip()
    if re.fullmatch(r"[+-]?[0-9]+", text) and -2**31 <= int(text) < 2**31:
        return int(text)
    raise KafkaError(f"Invalid value {config[key]} for configuration {key}: Not a number of type INT")


class EngineConsumer:
    def __init__(self, engine, config: dict[str, str] | None = None):
        from .offsets import OffsetStore  # imported here: keeps `import consumer` light

        config = dict(config or {})
        self.engine = engine
        self.group_id = config.get("group.id") or None
        self.client_id = config.get("client.id") or "consumer"
        self.auto_offset_reset = config.get("auto.offset.reset", "latest").strip().lower()
        if self.auto_offset_reset not in ("earliest", "latest", "none"):
            raise KafkaError(f"Invalid value {self.auto_offset_reset} for configuration auto.offset.reset: "
                             "String must be one of: latest, earliest, none")
        self.enable_auto_commit = _bool(config.get("enable.auto.commit", "true")) and self.group_id is not None
        self.auto_commit_interval = _int(config, "auto.commit.interval.ms", 5000) / 1000.0
        self.session_timeout_ms = _int(config, "session.timeout.ms", 45000)
        self.heartbeat_interval = _int(config, "heartbeat.interval.ms", 3000) / 1000.0
        self.rebalance_timeout_ms = _int(config, "max.poll.interval.ms", 300000)
        self.max_poll_records = _int(config, "max.poll.records", 500)
        self.max_partition_fetch_bytes = _int(config, "max.partition.fetch.bytes", 1 << 20)
        self.exclude_internal = _bool(config.get("exclude.internal.topics", "true"))
        from .assignors import strategy_names

        self.strategies = strategy_names(config.get(
            "partition.assignment.strategy",
            "org.apache.kafka.clients.consumer.RangeAssignor,"
            "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"))
        self.offsets = OffsetStore(engine)
        self.read_committed = config.get("isolation.level", "read_uncommitted").strip() == "read_committed"
        self._open_txns: dict[tuple[str, int], txn_index.OpenTransactions] = {}
        self._positions: dict[tuple[str, int], int] = {}
        self._consumed: dict[tuple[str, int], int] = {}  # next offset after what poll() returned
        self._owned: list[tuple[str, int]] = []
        self._paused: set[tuple[str, int]] = set()
        self._buffer: list = []  # RecordList / RecordColumnsSet, one partition's fetch each
        self._next_partition = 0
        # group state
        self._coordinator: GroupCoordinator | None = None
        self._member_id: str | None = None
        self._generation = -1
        self._assignment: list[tuple[str, int]] = []
        self._topics: list[str] = []
        self._pattern: re.Pattern | None = None
        self._last_heartbeat = 0.0
        self._dirty = False  # membership changed by us: learn the new assignment at once
        self._last_commit = time.monotonic()
        self._last_pattern_check = 0.0
        self._closed = False
        # A group nobody else can know of (the console consumer's generated one) may live in
        # memory when the data dir cannot be written (a read-only mount, a full disk).
        self.private_group_if_unwritable = False

    # ------------------------------------------------------------------ assignment
    def assign(self, partitions: list[tuple[str, int]]) -> None:
        """Manual assignment: no group membership (the console consumer's --partition)."""
        for topic, p in partitions:
            self.engine.partition(topic, p)  # raises for an unknown topic or partition
        self._owned = list(partitions)

    def seek(self, topic: str, partition: int, offset: int) -> None:
        self._positions[(topic, partition)] = offset
        self._consumed[(topic, partition)] = offset

    def validate_position(self, topic: str, partition: int) -> None:
        """Raise OffsetOutOfRangeError when the seek position lies outside the log.

        (A seek past the end is otherwise silently reset by auto.offset.reset; the console
        consumer's explicit --offset wants the error.)"""
        log = self.engine.partition(topic, partition)
        position = self._positions[(topic, partition)]
        start, end = log.log_start_offset, log.log_end_offset
        if not start <= position <= end:
            raise OffsetOutOfRangeError(
                f"Fetch position {position} is out of range for partition {topic}-{partition} "
                f"(log start offset {start}, log end offset {end})")

    def seek_to_beginning(self, topic: str, partition: int) -> None:
        self.seek(topic, partition, self.engine.partition(topic, partition).log_start_offset)

    def seek_to_end(self, topic: str, partition: int) -> None:
        log = self.engine.partition(topic, partition)
        self.seek(topic, partition, self._stable_offset((topic, partition), log) if self.read_committed
                  else log.log_end_offset)

    def _stable_offset(self, tp: tuple[str, int], log) -> int:
        return self._open_txns.setdefault(tp, txn_index.OpenTransactions()).last_stable_offset(log)

    # ------------------------------------------------------------------ lookups (console ranges)
    def end_offsets(self, tps: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Where each partition ends for this consumer: the log end, or the last stable
        offset under read_committed."""
        out = {}
        for tp in tps:
            log = self.engine.partition(*tp)
            out[tp] = self._stable_offset(tp, log) if self.read_committed else log.log_end_offset
        return out

    def offsets_for_time(self, tps: list[tuple[str, int]], timestamp: int) -> dict[tuple[str, int], int | None]:
        """offsetsForTimes: the first offset whose timestamp is >= `timestamp` (the time
        index), None when there is none below what this consumer may read."""
        ends = self.end_offsets(tps)
        out = {}
        for tp in tps:
            found = self.engine.partition(*tp).list_offset(timestamp)
            out[tp] = found[0] if found is not None and found[0] < ends[tp] else None
        return out

    def position(self, topic: str, partition: int) -> int | None:
        """The offset of the next record poll() would hand out (past any gap already
        fetched over), None before the partition has a position."""
        for piece in self._buffer:
            if (piece.topic, piece.partition) == (topic, partition):
                return piece.first_offset
        return self._positions.get((topic, partition))

    def pause(self, tps: list[tuple[str, int]]) -> None:
        """Fetch no more from `tps` (a finished range); they stay assigned."""
        self._paused.update(tps)
        self._buffer = [b for b in self._buffer if (b.topic, b.partition) not in self._paused]

    def subscribe(self, topics: list[str] | None = None, pattern: str | None = None) -> None:
        if self.group_id is None:
            raise KafkaError("To use the group management or offset commit APIs, you must provide a "
                             "valid group.id in the consumer configuration.")
        self._pattern = re.compile(pattern) if pattern is not None else None
        self._topics = list(topics or [])
        for topic in self._topics:
            self.engine.topic(topic)  # an unknown topic is an error here, not an endless wait
        try:
            self._coordinator = GroupCoordinator(self.engine.groups_dir, self.group_id)
            self._member_id = self._coordinator.join(
                self.client_id, "/" + _local_address(), self._subscribed_topics(), self.strategies,
                self.session_timeout_ms, self.rebalance_timeout_ms)
        except OSError:
            if not self.private_group_if_unwritable:
                raise
            self._coordinator = PrivateGroup(self.engine)
            self._member_id = self._coordinator.join(self.client_id, "", self._subscribed_topics(), [], 0, 0)
            self.enable_auto_commit = False  # there is nowhere to keep them
        self._last_heartbeat = time.monotonic()
        self._dirty = True

    def _subscribed_topics(self) -> list[str]:
        if self._pattern is None:
            return self._topics
        return [t for t in self.engine.list_topics()
                if self._pattern.fullmatch(t) and not (self.exclude_internal and topic_names.is_internal(t))]

    def assignment(self) -> list[tuple[str, int]]:
        return list(self._owned)

    @property
    def member_id(self) -> str | None:
        return self._member_id

    # ------------------------------------------------------------------ group upkeep
    def _group_tick(self) -> None:
        coordinator = self._coordinator
        now = time.monotonic()
        if self._pattern is not None and now - self._last_pattern_check > 1.0:
            self._last_pattern_check = now
            coordinator.refresh_subscription(self._member_id, self._subscribed_topics())
            self._dirty = True
        beat = now - self._last_heartbeat >= self.heartbeat_interval
        # Partitions still held by another member are retried when the group file changes
        # (that member released them) or at the next heartbeat, not at every poll.
        if not self._dirty and not coordinator.changed() and not beat:
            return
        self._dirty = False
        try:
            generation, assignment = coordinator.heartbeat(self._member_id)
        except UnknownMemberIdError:
            # Our session expired (e.g. we were stopped): rejoin as a new member.
            self._drop_partitions(list(self._owned), commit=False)
            self._member_id = coordinator.join(
                self.client_id, "/" + _local_address(), self._subscribed_topics(), self.strategies,
                self.session_timeout_ms, self.rebalance_timeout_ms)
            generation, assignment = coordinator.heartbeat(self._member_id)
        self._last_heartbeat = now
        wanted = sorted((t, p) for t, parts in assignment.items() for p in parts)
        revoked = [tp for tp in self._owned if tp not in wanted]
        if revoked:
            self._drop_partitions(revoked, commit=True)
        self._generation = generation
        self._assignment = wanted
        got = coordinator.sync(self._member_id, generation, revoked,
                               [tp for tp in wanted if tp not in self._owned])
        for tp in got:
            self._owned.append(tp)
            self._init_position(tp)
        self._owned.sort()

    def _drop_partitions(self, tps: list[tuple[str, int]], commit: bool) -> None:
        if commit and self.enable_auto_commit:
            self._commit_consumed([tp for tp in tps if tp in self._consumed])
        self._buffer = [b for b in self._buffer if (b.topic, b.partition) not in tps]
        for tp in tps:
            if tp in self._owned:
                self._owned.remove(tp)
            self._positions.pop(tp, None)
            self._consumed.pop(tp, None)

    def _init_position(self, tp: tuple[str, int]) -> None:
        committed = self.offsets.fetch(self.group_id, *tp) if self.group_id else None
        if committed is not None:
            self.seek(*tp, committed)
        else:
            self._reset_position(tp)

    def _reset_position(self, tp: tuple[str, int]) -> None:
        if self.auto_offset_reset == "earliest":
            self.seek_to_beginning(*tp)
        elif self.auto_offset_reset == "latest":
            self.seek_to_end(*tp)
        else:
            raise NoOffsetForPartitionError(
                f"Undefined offset with no reset policy for partitions: [{tp[0]}-{tp[1]}]")

    # ------------------------------------------------------------------ poll
    def poll(self, timeout_ms: int = 0) -> list[ConsumerRecord]:
        """Records from the owned partitions, waiting up to timeout_ms for some to arrive
        (at most max.poll.records)."""
        out: list[ConsumerRecord] = []
        for piece in self._poll(timeout_ms, self.max_poll_records):
            out += piece.records()
        return out

    def poll_sets(self, timeout_ms: int = 0, limit: int | None = None) -> list:
        """As poll(), but each partition's records as a RecordList or RecordColumnsSet: what
        a formatter writes column-wise. At most `limit` records (max.poll.records, for a
        caller that counts as Kafka's consumer hands records out); whole fetches by default
        (a fetch is 1 MB at most)."""
        return self._poll(timeout_ms, limit)

    def _poll(self, timeout_ms: int, limit: int | None) -> list:
        deadline = time.monotonic() + timeout_ms / 1000.0
        while True:
            if self._coordinator is not None:
                self._group_tick()
            self._maybe_auto_commit()
            if not self._buffer:
                self._fetch()
            if self._buffer:
                out = self._take(limit)
                for piece in out:
                    self._consumed[(piece.topic, piece.partition)] = piece.next_offset
                return out
            if time.monotonic() >= deadline:
                return []
            time.sleep(_IDLE_SLEEP)

    def _take(self, limit: int | None) -> list:
        """Buffered fetches, cut so that at most `limit` records are taken."""
        if limit is None:
            out, self._buffer = self._buffer, []
            return out
        out = []
        while self._buffer and limit > 0:
            piece = self._buffer[0]
            if len(piece) > limit:
                piece, self._buffer[0] = piece.split(limit)
            else:
                del self._buffer[0]
            out.append(piece)
            limit -= len(piece)
        return out

    def _fetch(self) -> None:
        owned = self._owned
        if not owned:
            return
        n = len(owned)
        for i in range(n):
            tp = owned[(self._next_partition + i) % n]
            if tp in self._paused:
                continue
            if tp not in self._positions:
                self._init_position(tp)
            got = self._fetch_partition(tp)
            if got:
                self._next_partition = (self._next_partition + i + 1) % n
                return

    def _fetch_partition(self, tp: tuple[str, int]) -> bool:
        topic, partition = tp
        start = position = self._positions[tp]
        log = self.engine.partition(topic, partition)
        try:
            data = log.read(position, self.max_partition_fetch_bytes)
        except OffsetOutOfRangeError:
            if self.auto_offset_reset == "none":
                raise
            self._reset_position(tp)
            return False
        if not data:
            return False
        if self.read_committed:
            batches, position = self._committed(tp, log, data, position)
        else:
            batches = []
            for pos, header in records.iter_batches(data):
                if header.next_offset <= position:
                    continue
                if not header.is_control:  # transaction markers (Kafka's logs have them) are stepped over
                    batches.append((pos, header))
                position = header.next_offset
        self._positions[tp] = position
        piece = records_of(topic, partition, data, batches, start)
        if piece is not None:
            self._buffer.append(piece)
        return bool(self._buffer)

    def _committed(self, tp: tuple[str, int], log, data, position: int) -> tuple[list, int]:
        """read_committed: the batches below the last stable offset, without those of aborted
        transactions (the .txnindex entries they overlap) and without markers; and the
        position after them."""
        lso = self._stable_offset(tp, log)
        start = position
        seen = []
        for pos, header in records.iter_batches(data):
            if header.base_offset >= lso:
                break
            if header.next_offset > start:
                seen.append((pos, header))
                position = header.next_offset
        if not seen:
            return [], position
        aborted = txn_index.collect(txn_index.segment_paths(log, start), start, position)
        return txn_index.committed_batches(data, seen, aborted), position

    # ------------------------------------------------------------------ commits
    def _maybe_auto_commit(self) -> None:
        if self.enable_auto_commit and time.monotonic() - self._last_commit >= self.auto_commit_interval:
            self._commit_consumed(list(self._owned))

    def _commit_consumed(self, tps) -> None:
        self._last_commit = time.monotonic()
        offsets = {tp: self._consumed[tp] for tp in tps if tp in self._consumed}
        if offsets:
            self.offsets.commit(self.group_id, offsets, self._member_id, self._generation)

    def commit(self, offsets: dict[tuple[str, int], int] | None = None) -> None:
        """Commit the given offsets, or the position after every record poll() returned."""
        if self.group_id is None:
            raise KafkaError("To use the group management or offset commit APIs, you must provide a "
                             "valid group.id in the consumer configuration.")
        if offsets is None:
            offsets = {tp: self._consumed[tp] for tp in self._owned if tp in self._consumed}
        if offsets:
            self.offsets.commit(self.group_id, offsets, self._member_id, self._generation)
        self._last_commit = time.monotonic()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self.enable_auto_commit:
                self._commit_consumed(list(self._owned))
        finally:
            if self._coordinator is not None and self._member_id is not None:
                try:
                    self._coordinator.leave(self._member_id)
                except UnknownMemberIdError:
                    pass


class PrivateGroup:
    """A group of one member kept in memory, with GroupCoordinator's interface: it owns
    every partition of the topics it subscribes to."""

    def __init__(self, engine):
        self.engine = engine
        self.topics: list[str] = []

    def join(self, client_id: str, client_host: str, topics: list[str], *_ignored) -> str:
        self.topics = list(topics)
        return f"{client_id}-private"

    def refresh_subscription(self, member_id: str, topics: list[str]) -> None:
        self.topics = list(topics)

    def changed(self) -> bool:
        return False

    def heartbeat(self, member_id: str) -> tuple[int, dict[str, list[int]]]:
        assignment = {}
        for topic in self.topics:
            try:
                assignment[topic] = sorted(self.engine.topic(topic).assignment)
            except KafkaError:
                continue  # deleted meanwhile
        return 1, assignment

    def sync(self, member_id: str, generation: int, release, want) -> list[tuple[str, int]]:
        return list(want)

    def leave(self, member_id: str) -> None:
        pass


def _local_address() -> str:
    return "127.0.0.1"
