"""Replication between ZooKeeper-mode brokers: each broker's view of the partitions it
replicates, the leader's bookkeeping (followers' log end offsets, ISR, high watermark) and
the follower's fetchers. docs/replication.md tells the whole story; in short:

- The partition state znodes (/brokers/topics/<t>/partitions/<p>/state, written by the
  controller on creation and elections, and by the leader when it changes the ISR) are read
  by zookeeper.py and handed to `apply`; `states` is the ONE place the handlers read who
  leads, the leader epoch and the ISR. A partition with no state (internal topics, which stay
  local, or a broker without ZooKeeper) is led by this broker alone, as before.
- A leader learns each follower's log end offset from the follower's Fetch (its fetch
  offset); the high watermark is the smallest log end offset in the ISR and never goes back.
  Consumers read below it, acks=all waits for it (wait_for_hw). Every tick the leader drops
  from the ISR a follower not caught up for replica.lag.time.max.ms and adds back one that
  reached the high watermark, with a conditional write of the state znode (zookeeper.py).
- A follower runs one Fetcher per leader broker: an asyncio task over a socket with pk's
  codec, that first truncates each new partition with OffsetForLeaderEpoch (KIP-101/279),
  then fetches with its replica id and appends the leader's batches unchanged.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, field, replace

from .. import checkpoint, leader_epochs, topic_names
from . import elr
from ..errors import KafkaError, OffsetOutOfRangeError
from ..protocol import ApiKey
from ..protocol import errors as E
from .interbroker import CONNECTION_ERRORS, Connection

log = logging.getLogger("kafka.server.ReplicaManager")

FETCH_VERSION = 12  # topics by name: the follower needs no topic-id lookups
OFFSET_FOR_LEADER_EPOCH_VERSION = 4
RETRY_S = 0.2


@dataclass(frozen=True)
class PartitionState:
    """A partition's state znode as last read or written, with its assignment."""
    replicas: tuple[int, ...]
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    controller_epoch: int
    elr: tuple[int, ...] = ()  # KIP-966's eligible leader replicas (engine/broker/elr.py)
    last_known_elr: tuple[int, ...] = ()
    zk_isr: tuple[int, ...] = ()  # the znode's "isr" as Kafka 2.8 keeps it (never empty)


# A ZooKeeper-mode partition with no state znode read yet (or no live replica): no leader.
NO_LEADER = PartitionState((), -1, -1, (), -1, 0)


@dataclass
class FollowerProgress:
    """What a leader knows of one follower (Kafka's Replica): its log end offset, and when it
    was last caught up with the leader's log end."""
    leo: int = -1
    last_caught_up_ms: int = 0
    last_fetch_leader_leo: int = -1
    last_fetch_ms: int = 0
    log_start: int = -1  # from its Fetch's log_start_offset (-1: not known yet)


@dataclass
class Leadership:
    followers: dict[int, FollowerProgress] = field(default_factory=dict)


class ReplicaManager:
    def __init__(self, broker, zookeeper):
        self.broker = broker
        self.zookeeper = zookeeper
        self.node_id = broker.node_id
        self.states: dict[tuple[str, int], PartitionState] = {}
        self.brokers: dict[int, tuple[str, int]] = {}  # live brokers' endpoints
        self.hw: dict[tuple[str, int], int] = {}
        self.leading: dict[tuple[str, int], Leadership] = {}
        self.fetchers: dict[int, Fetcher] = {}
        self.lag_ms = broker.config.get_int("replica.lag.time.max.ms")
        self.fetch_wait_ms = broker.config.get_int("replica.fetch.wait.max.ms")
        # What a follower asks for, per partition and per response (Kafka's ReplicaFetcherThread;
        # the leader caps both, a first batch above them still coming whole, KIP-74).
        self.fetch_max_bytes = broker.config.get_int_at_least("replica.fetch.max.bytes", 0)
        self.fetch_response_max_bytes = broker.config.get_int_at_least("replica.fetch.response.max.bytes", 0)
        self._hw_event = asyncio.Event()
        self._log_start_event = asyncio.Event()
        self._checkpointed: dict[tuple[str, int], int] = {}
        self._isr_busy = False
        self.hw.update(broker.engine.read_checkpoint(checkpoint.HIGH_WATERMARK))
        self._checkpointed.update(self.hw)

    # ------------------------------------------------------------------ reads (handlers)
    def state(self, topic: str, partition: int) -> PartitionState | None:
        return self.states.get((topic, partition))

    def high_watermark(self, key: tuple[str, int], log_end: int) -> int:
        return min(self.hw.get(key, 0), log_end)

    def live(self, broker_id: int) -> bool:
        return broker_id in self.brokers

    def leader_of(self, topic: str, partition: int) -> int:
        """The live broker leading the partition as its state znode says, -1 when none is
        known (no state read yet, offline, or its broker's registration is gone)."""
        state = self.states.get((topic, partition))
        if state is None or state.leader < 0 or (state.leader != self.node_id and state.leader not in self.brokers):
            return -1
        return state.leader

    # ------------------------------------------------------------------ from ZooKeeper
    def apply(self, states: dict[tuple[str, int], PartitionState], brokers: dict[int, tuple[str, int]]) -> None:
        """Take the states read from ZooKeeper: become leader or follower where they say so."""
        self.brokers = dict(brokers)
        led_before = self._internal_led()
        for key in [k for k in self.states if k not in states]:
            self._drop(key)
        for key, new in states.items():
            old = self.states.get(key)
            if old is not None and new.zk_version < old.zk_version and new.leader_epoch <= old.leader_epoch:
                continue  # our own newer write (an ISR change) is not in this read yet
            self.states[key] = new
            if self.node_id not in new.replicas:
                self._stop_following(key)
                self.leading.pop(key, None)
                if old is None or self.node_id in old.replicas:
                    self._remove_replica(key)
                continue
            changed = old is None or old.leader != new.leader or old.leader_epoch != new.leader_epoch
            if new.leader == self.node_id:
                if changed or key not in self.leading:
                    self._become_leader(key, new)
                else:
                    self._update_hw(key)  # the ISR may have shrunk
            elif new.leader >= 0:
                if changed or not self._following(key, new.leader):
                    self._become_follower(key, new)
            else:
                self.leading.pop(key, None)
                self._stop_following(key)
        for broker_id, fetcher in list(self.fetchers.items()):
            if not fetcher.partitions:
                fetcher.close()
                del self.fetchers[broker_id]
        led_now = self._internal_led()
        for key in sorted(led_before - led_now):  # unload first: a follower's log may be cut next
            self.broker.on_internal_leadership(key[0], key[1], False)
        for key in sorted(led_now - led_before):
            self.broker.on_internal_leadership(key[0], key[1], True)
        # A replica whose broker is gone no longer holds the low watermark back, and a moved
        # leadership ends the wait: DeleteRecords waiting on either answer now, not at their timeout.
        self._log_starts_changed()

    def _internal_led(self) -> set[tuple[str, int]]:
        """The partitions of internal topics this broker leads (the coordinators' partitions)."""
        return {k for k in self.leading if topic_names.is_internal(k[0])}

    def _drop(self, key) -> None:
        self.states.pop(key, None)
        self.leading.pop(key, None)
        self.hw.pop(key, None)
        self._stop_following(key)

    def _remove_replica(self, key) -> None:
        """Kafka 2.8's StopReplica(delete=true) for a replica that moved away (a completed
        reassignment, or a broker back after its partition moved): no more fetching, its HW
        forgotten, its log removed."""
        self.hw.pop(key, None)
        try:
            removed = self.broker.engine.remove_replica(*key)
        except (KafkaError, OSError) as exc:
            log.warning("[Broker id=%d] Removing the replica of %s-%d failed: %s", self.node_id, key[0], key[1], exc)
            return
        if removed:
            self.broker.data.producers.forget_partition(*key)
            log.info("[Broker id=%d] %s-%d: no longer a replica, local log deleted", self.node_id, key[0], key[1])

    def _become_leader(self, key, state: PartitionState) -> None:
        self._stop_following(key)
        now = _now_ms()
        lead = Leadership()
        for replica in state.replicas:
            if replica != self.node_id:
                lead.followers[replica] = FollowerProgress(last_caught_up_ms=now if replica in state.isr else 0)
        self.leading[key] = lead
        self.broker.data.producers.forget_partition(*key)  # rebuilt from the log as it now stands
        log.info("[Broker id=%d] %s-%d: leader with epoch %d, ISR %s", self.node_id, key[0], key[1],
                 state.leader_epoch, list(state.isr))
        self._update_hw(key)

    def _become_follower(self, key, state: PartitionState) -> None:
        self.leading.pop(key, None)
        self._stop_following(key)
        fetcher = self.fetchers.get(state.leader)
        if fetcher is None:
            fetcher = self.fetchers[state.leader] = Fetcher(self, state.leader)
        fetcher.partitions[key] = FetchTarget(state.leader_epoch)
        log.info("[Broker id=%d] %s-%d: follower of broker %d with epoch %d", self.node_id, key[0], key[1],
                 state.leader, state.leader_epoch)

    def _following(self, key, leader: int) -> bool:
        fetcher = self.fetchers.get(leader)
        return fetcher is not None and key in fetcher.partitions

    def _stop_following(self, key) -> None:
        for fetcher in self.fetchers.values():
            fetcher.partitions.pop(key, None)

    # ------------------------------------------------------------------ leader bookkeeping
    def leader_appended(self, key, log_end: int) -> None:
        """After an append on the leader: with no other ISR member the HW follows at once."""
        self._update_hw(key, log_end)

    def follower_fetched(self, key, replica_id: int, fetch_offset: int, log_end: int) -> int:
        """Kafka's Partition.updateFollowerFetchState: record the follower's log end offset
        and caught-up time; returns the high watermark to answer."""
        lead = self.leading.get(key)
        if lead is None:
            return self.high_watermark(key, log_end)
        progress = lead.followers.get(replica_id)
        if progress is None:
            progress = lead.followers[replica_id] = FollowerProgress()
        now = _now_ms()
        if fetch_offset >= log_end:
            progress.last_caught_up_ms = max(progress.last_caught_up_ms, now)
        elif fetch_offset >= progress.last_fetch_leader_leo:
            progress.last_caught_up_ms = max(progress.last_caught_up_ms, progress.last_fetch_ms)
        progress.leo = fetch_offset
        progress.last_fetch_leader_leo, progress.last_fetch_ms = log_end, now
        self._update_hw(key, log_end)
        return self.high_watermark(key, log_end)

    def _update_hw(self, key, log_end: int | None = None) -> None:
        state, lead = self.states.get(key), self.leading.get(key)
        if state is None or lead is None:
            return
        if log_end is None:
            try:
                log_end = self.broker.engine.partition(*key).log_end_offset
            except (KafkaError, OSError):
                return
        ends = [log_end] + [lead.followers[r].leo if r in lead.followers else -1
                            for r in state.isr if r != self.node_id]
        new = min(ends)
        if new > self.hw.get(key, -1):
            self.hw[key] = new
            self._hw_event.set()
            self._hw_event = asyncio.Event()
            self.broker.notify_data()  # consumers waiting for the HW

    async def wait_for_hw(self, waits: list, timeout_ms: int) -> None:
        """Kafka's delayed produce for acks=all: each (key, offset, result, min_isr) is
        answered once the high watermark reaches offset (NOT_ENOUGH_REPLICAS_AFTER_APPEND if
        the ISR is then below min.insync.replicas), NOT_LEADER_OR_FOLLOWER if the leadership
        moved, REQUEST_TIMED_OUT after timeout_ms."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(timeout_ms, 0) / 1000
        while True:
            pending = []
            for key, offset, result, min_isr in waits:
                state = self.states.get(key)
                if state is None or state.leader != self.node_id:
                    result["error_code"] = E.NOT_LEADER_OR_FOLLOWER
                elif self.hw.get(key, 0) >= offset:
                    if len(state.isr) < min_isr:
                        result["error_code"] = E.NOT_ENOUGH_REPLICAS_AFTER_APPEND
                else:
                    pending.append((key, offset, result, min_isr))
            waits = pending
            remaining = deadline - loop.time()
            if not waits:
                return
            if remaining <= 0:
                for _, _, result, _ in waits:
                    result["error_code"] = E.REQUEST_TIMED_OUT
                return
            try:
                await asyncio.wait_for(self._hw_event.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    # ------------------------------------------------------------------ DeleteRecords (leader)
    def follower_log_start(self, key, replica_id: int, log_start: int) -> None:
        """The log start offset a follower's Fetch carried (it follows the leader's, below)."""
        lead = self.leading.get(key)
        progress = lead.followers.get(replica_id) if lead is not None else None
        if progress is not None and progress.log_start != log_start:
            progress.log_start = log_start
            self._log_starts_changed()

    def _log_starts_changed(self) -> None:
        """Wake the DeleteRecords waiting in wait_for_log_start to look at the low watermark again."""
        self._log_start_event.set()
        self._log_start_event = asyncio.Event()

    def low_watermark(self, key, own_log_start: int) -> int:
        """Kafka's Partition.lowWatermarkIfLeader: the smallest log start offset over this
        broker and the replicas that are alive and whose log start is known."""
        state, lead = self.states.get(key), self.leading.get(key)
        starts = [own_log_start]
        if state is not None and lead is not None:
            starts += [lead.followers[r].log_start for r in state.replicas
                       if r != self.node_id and r in self.brokers and r in lead.followers
                       and lead.followers[r].log_start >= 0]
        return min(starts)

    async def wait_for_log_start(self, waits: list, timeout_ms: int) -> None:
        """Kafka's DelayedDeleteRecords: each (key, offset, plog, result) is answered with the
        low watermark once it reached offset (every live replica moved its log start there),
        NOT_LEADER_OR_FOLLOWER if the leadership moved, REQUEST_TIMED_OUT (low watermark -1)
        after timeout_ms."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(timeout_ms, 0) / 1000
        while True:
            pending = []
            for key, offset, plog, result in waits:
                state = self.states.get(key)
                if state is None or state.leader != self.node_id:
                    result["error_code"], result["low_watermark"] = E.NOT_LEADER_OR_FOLLOWER, -1
                    continue
                low = self.low_watermark(key, plog.log_start_offset)
                if low >= offset:
                    result["error_code"], result["low_watermark"] = E.NONE, low
                else:
                    pending.append((key, offset, plog, result))
            waits = pending
            remaining = deadline - loop.time()
            if not waits:
                return
            if remaining <= 0:
                for _, _, _, result in waits:
                    result["error_code"], result["low_watermark"] = E.REQUEST_TIMED_OUT, -1
                return
            try:
                await asyncio.wait_for(self._log_start_event.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    # ------------------------------------------------------------------ ISR upkeep (leader)
    async def tick(self) -> None:
        """Shrink and expand the ISR of the partitions this broker leads; checkpoint HWs."""
        if self._isr_busy:
            return
        self._isr_busy = True
        try:
            now = _now_ms()
            for key, lead in list(self.leading.items()):
                state = self.states.get(key)
                if state is None or state.leader != self.node_id:
                    continue
                hw = self.hw.get(key, 0)
                isr = [r for r in state.isr
                       if r == self.node_id or now - lead.followers.get(r, FollowerProgress()).last_caught_up_ms
                       <= self.lag_ms]
                for replica in state.replicas:
                    progress = lead.followers.get(replica)
                    if replica not in isr and progress is not None and replica in self.brokers \
                            and progress.leo >= hw and now - progress.last_caught_up_ms <= self.lag_ms:
                        isr.append(replica)
                if set(isr) != set(state.isr):
                    shrunk = [r for r in state.isr if r not in isr]
                    if shrunk:
                        log.info("[Partition %s-%d broker=%d] Shrinking ISR from %s to %s", key[0], key[1],
                                 self.node_id, list(state.isr), isr)
                    else:
                        log.info("[Partition %s-%d broker=%d] Expanding ISR from %s to %s", key[0], key[1],
                                 self.node_id, list(state.isr), isr)
                    wanted = self._isr_change(key, state, isr)
                    version = await self.zookeeper.write_isr(key, wanted)
                    if version is not None and self.states.get(key) == state:
                        self.states[key] = replace(wanted, zk_version=version)
                        self._update_hw(key)
            self._checkpoint_hw()
        finally:
            self._isr_busy = False

    def _isr_change(self, key, state: PartitionState, isr: list[int]) -> PartitionState:
        """The state after the leader's ISR change, with the ELR Kafka 4.4's controller would
        give it on the AlterPartition (elr.py): a member leaving an ISR below
        min.insync.replicas joins the ELR, one rejoining leaves it, and an ISR back at
        min.insync.replicas has no ELR."""
        try:
            min_isr = int(self.broker.data.log(*key).config["min.insync.replicas"])
        except (KafkaError, OSError, KeyError, ValueError):
            min_isr = 1
        before = elr.Partition(state.replicas, state.leader, state.isr, state.elr, state.last_known_elr)
        after = elr.change(before, isr, elr.effective_min_isr(min_isr, len(state.replicas)), lambda r: True,
                           enabled=self.zookeeper.elr_enabled())
        return replace(state, isr=tuple(isr), elr=after.elr, last_known_elr=after.last_known_elr)

    def _checkpoint_hw(self) -> None:
        """replication-offset-checkpoint (Kafka's format) with the HWs that changed."""
        changes = {k: v for k, v in self.hw.items() if self._checkpointed.get(k) != v}
        changes.update({k: None for k in self._checkpointed if k not in self.hw})
        if changes:
            try:
                self.broker.engine.update_checkpoint(checkpoint.HIGH_WATERMARK, changes)
            except OSError as exc:
                log.warning("Writing %s failed: %s", checkpoint.HIGH_WATERMARK, exc)
                return
            self._checkpointed = dict(self.hw)

    def close(self) -> None:
        for fetcher in self.fetchers.values():
            fetcher.close()
        self.fetchers.clear()


def _now_ms() -> int:
    return int(time.monotonic() * 1000)


# --------------------------------------------------------------------------- follower side
@dataclass
class FetchTarget:
    leader_epoch: int
    truncated: bool = False  # OffsetForLeaderEpoch done for this leadership


class Fetcher:
    """Kafka's ReplicaFetcherThread: one task fetching every partition this broker follows
    from one leader broker."""

    def __init__(self, manager: ReplicaManager, leader_id: int):
        self.manager = manager
        self.leader_id = leader_id
        self.partitions: dict[tuple[str, int], FetchTarget] = {}
        self._closed = False
        self._problems: dict = {}
        self._task = asyncio.get_running_loop().create_task(self._run())

    def close(self) -> None:
        self._closed = True
        self._task.cancel()

    async def _run(self) -> None:
        manager = self.manager
        client_id = f"broker-{manager.node_id}-fetcher-0"
        while not self._closed:
            endpoint = manager.brokers.get(self.leader_id)
            if endpoint is None or not self.partitions:
                await asyncio.sleep(RETRY_S)
                continue
            conn = None
            try:
                conn = await Connection.open(endpoint[0], endpoint[1], client_id)
                while not self._closed and self.partitions and manager.brokers.get(self.leader_id) == endpoint:
                    await self._truncate(conn)
                    if not await self._fetch(conn):
                        await asyncio.sleep(RETRY_S)
            except asyncio.CancelledError:
                raise
            except (*CONNECTION_ERRORS, KafkaError) as exc:
                self._note(None, f"{type(exc).__name__}: {exc}")
                await asyncio.sleep(RETRY_S)
            except Exception:  # a bug must not end replication silently
                log.exception("Fetcher from broker %d failed", self.leader_id)
                await asyncio.sleep(1)
            finally:
                if conn is not None:
                    conn.close()

    def _note(self, key, problem: str) -> None:
        """Log a fetch problem once (until it changes): they repeat every retry."""
        if self._problems.get(key) != problem:
            self._problems[key] = problem
            where = f"{key[0]}-{key[1]}" if key is not None else "connection"
            log.info("[ReplicaFetcher broker=%d leader=%d] %s: %s", self.manager.node_id, self.leader_id, where,
                     problem)

    def _log(self, key):
        return self.manager.broker.data.log(*key)

    async def _truncate(self, conn: Connection) -> None:
        """KIP-101/279: ask the leader where our last epoch ended and cut our log there."""
        pending = {k: t for k, t in self.partitions.items() if not t.truncated}
        if not pending:
            return
        asks, logs = {}, {}
        for key, target in pending.items():
            plog = self._log(key)
            entries = leader_epochs.read_entries(plog.dir)
            if not entries and plog.log_end_offset == 0:
                target.truncated = True  # nothing to cut
                continue
            logs[key] = plog
            asks.setdefault(key[0], []).append({"partition": key[1], "current_leader_epoch": target.leader_epoch,
                                                "leader_epoch": entries[-1][0] if entries else 0})
        if not asks:
            return
        body = {"replica_id": self.manager.node_id,
                "topics": [{"topic": t, "partitions": ps} for t, ps in asks.items()]}
        answer = await conn.call(ApiKey.OFFSET_FOR_LEADER_EPOCH, OFFSET_FOR_LEADER_EPOCH_VERSION, body, 10)
        for topic in answer["topics"]:
            for p in topic["partitions"]:
                key = (topic["topic"], p["partition"])
                target, plog = self.partitions.get(key), logs.get(key)
                if target is None or plog is None:
                    continue
                if p["error_code"] != E.NONE:
                    self._note(key, f"OffsetForLeaderEpoch: {E.error_name(p['error_code'])}")
                    continue
                end = plog.log_end_offset
                cut = p["end_offset"] if p["leader_epoch"] >= 0 else min(self.manager.hw.get(key, 0), end)
                if 0 <= cut < end:
                    log.info("[ReplicaFetcher broker=%d leader=%d] Truncating %s-%d from %d to %d", self.manager.node_id,
                             self.leader_id, key[0], key[1], end, cut)
                    plog.truncate_to(cut)
                    self.manager.broker.data.producers.forget_partition(*key)
                    self.manager.hw[key] = min(self.manager.hw.get(key, 0), cut)
                target.truncated = True

    def _follow_log_start(self, key, plog, leader_log_start: int) -> None:
        """Kafka's follower: log start = max(its own, the leader's), bounded by its HW (the
        leader's DeleteRecords or retention reaches the followers' logs)."""
        start = min(leader_log_start, self.manager.hw.get(key, 0))
        if start > plog.log_start_offset:
            try:
                plog.delete_records_before(start)
            except (KafkaError, OSError) as exc:
                self._note(key, f"Moving the log start to {start}: {exc}")

    async def _fetch(self, conn: Connection) -> bool:
        """One Fetch of every truncated partition; False when nothing could be asked or
        every partition failed (the caller backs off)."""
        manager = self.manager
        wanted: dict[str, list] = {}
        logs = {}
        for key, target in self.partitions.items():
            if not target.truncated:
                continue
            plog = self._log(key)
            logs[key] = plog
            wanted.setdefault(key[0], []).append({
                "partition": key[1], "current_leader_epoch": target.leader_epoch,
                "fetch_offset": plog.log_end_offset, "last_fetched_epoch": -1,
                "log_start_offset": plog.log_start_offset, "partition_max_bytes": manager.fetch_max_bytes})
        if not wanted:
            return False
        body = {"replica_id": manager.node_id, "max_wait_ms": manager.fetch_wait_ms, "min_bytes": 1,
                "max_bytes": manager.fetch_response_max_bytes, "isolation_level": 0, "session_id": 0, "session_epoch": -1,
                "topics": [{"topic": t, "partitions": ps} for t, ps in wanted.items()],
                "forgotten_topics_data": [], "rack_id": ""}
        answer = await conn.call(ApiKey.FETCH, FETCH_VERSION, body, manager.fetch_wait_ms / 1000 + 30)
        progressed = False
        appended = False
        for topic in answer["responses"]:
            for p in topic["partitions"]:
                key = (topic["topic"], p["partition_index"])
                target, plog = self.partitions.get(key), logs.get(key)
                if target is None or plog is None:
                    continue
                code = p["error_code"]
                if code == E.NONE:
                    progressed = True
                    data = p["records"]
                    try:
                        end = (manager.broker.data.producers.append_replicated(plog, data) if data
                               else plog.log_end_offset)
                    except OffsetOutOfRangeError:
                        target.truncated = False  # our end moved under us: ask again
                        continue
                    appended |= bool(data)
                    hw = min(p["high_watermark"], end)
                    if hw > manager.hw.get(key, -1):
                        manager.hw[key] = hw
                    self._follow_log_start(key, plog, p["log_start_offset"])
                elif code == E.OFFSET_OUT_OF_RANGE and p["log_start_offset"] > plog.log_end_offset:
                    # The leader no longer has what we would fetch next (retention): start
                    # over at its log start.
                    log.info("[ReplicaFetcher broker=%d leader=%d] %s-%d: starting over at the leader's log start %d",
                             manager.node_id, self.leader_id, key[0], key[1], p["log_start_offset"])
                    plog.truncate_fully_and_start_at(p["log_start_offset"])
                    manager.broker.data.producers.forget_partition(*key)
                elif code == E.OFFSET_OUT_OF_RANGE:
                    target.truncated = False
                else:
                    self._note(key, f"Fetch: {E.error_name(code)}")
        if appended:
            manager.broker.notify_data()
        return progressed
