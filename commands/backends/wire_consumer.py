"""The console consumer over a cluster: confluent-kafka for the group, pk's wire fetcher for
the records (wire_fetch.py).

librdkafka keeps doing what it does well: joining the group (classic or KIP-848), heartbeats,
assignors, rebalance callbacks, the committed offsets and auto-commit. Each partition the group
assigns is paused in librdkafka at once, so librdkafka never fetches it, and handed to the
WireFetcher from the group's committed offset (or auto.offset.reset). What the caller took is
stored as librdkafka's offset to commit (store_offsets), so auto-commit, the commit on
revocation and the commit at close cover exactly the records handed out, as before.

With --partition (manual assignment, no group) librdkafka only answers metadata and watermark
questions.
"""

from __future__ import annotations

import time

from .kafka_clients import RemoteConsumer
from .wire_fetch import EARLIEST, LATEST, FetchSettings, WireFetcher

_INVALID_OFFSET = -1001  # librdkafka: no committed offset


class WireConsumer(RemoteConsumer):
    def __init__(self, bootstrap: str, java: dict[str, str], extra: dict[str, str] | None, security,
                 on_assign=None, on_revoke=None):
        super().__init__(bootstrap, java, extra, on_assign=self._group_assigned, on_revoke=self._group_revoked)
        self._listeners = (on_assign, on_revoke)  # the caller's own (the perf tool's rebalance listener)
        self.fetcher = WireFetcher(bootstrap, FetchSettings(dict(java)), security)
        self._reset = self.fetcher.settings.reset
        self._arrived: list[tuple[str, int]] = []  # assigned by the group, not paused yet
        self._fetching: set[tuple[str, int]] = set()

    # ------------------------------------------------------------------ group callbacks
    def _group_assigned(self, tps: list[tuple[str, int]]) -> None:
        # Called inside librdkafka's poll: the partitions are assigned here (so confluent-kafka
        # does not) and paused at once, before librdkafka starts fetching them; they are
        # positioned once that poll returns (_take_arrivals).
        import confluent_kafka

        parts = [confluent_kafka.TopicPartition(t, p) for t, p in tps]
        try:
            self.consumer.incremental_assign(parts)  # cooperative protocols (and KIP-848)
        except confluent_kafka.KafkaException:
            self.consumer.assign(parts)  # the eager protocol replaces the assignment
        self.consumer.pause(parts)
        self._arrived += tps
        if self._listeners[0] is not None:
            self._listeners[0](tps)

    def _group_revoked(self, tps: list[tuple[str, int]]) -> None:
        gone = set(tps)
        self._arrived = [tp for tp in self._arrived if tp not in gone]
        self.fetcher.remove(tps)
        self._fetching -= gone
        for tp in tps:
            self._positions.pop(tp, None)
        if self._listeners[1] is not None:
            self._listeners[1](tps)

    def _take_arrivals(self) -> None:
        import confluent_kafka

        arrived, self._arrived = self._arrived, []
        owned = {(tp.topic, tp.partition) for tp in self.consumer.assignment()}
        arrived = [tp for tp in arrived if tp in owned]
        if not arrived:
            return
        arrived = [tp for tp in arrived if tp not in self._paused]  # finished ranges stay put
        if not arrived:
            return
        parts = [confluent_kafka.TopicPartition(t, p) for t, p in arrived]
        committed = self.consumer.committed(parts, timeout=self.timeout_ms / 1000.0)
        for tp in committed:
            key = (tp.topic, tp.partition)
            if tp.offset >= 0:
                offset = tp.offset
            elif self._reset == "none":
                from pk.engine.consumer import NoOffsetForPartitionError

                raise NoOffsetForPartitionError(
                    f"Undefined offset with no reset policy for partitions: [{tp.topic}-{tp.partition}]")
            else:
                offset = EARLIEST if self._reset == "earliest" else LATEST
            self.fetcher.add(key, offset)
            self._positions[key] = self.fetcher.positions[key]
            self._fetching.add(key)

    # ------------------------------------------------------------------ positions
    def _move_member(self, tp: tuple[str, int], offset: int) -> None:
        """As RemoteConsumer's, with the fetcher moving instead of librdkafka (which fetches
        nothing here)."""
        import confluent_kafka

        if tp in self._fetching:
            self.fetcher.seek(tp, offset)
            try:  # what the next commit covers moves back with it
                self.consumer.store_offsets(offsets=[confluent_kafka.TopicPartition(tp[0], tp[1], offset)])
            except confluent_kafka.KafkaException:
                pass  # revoked meanwhile

    # ------------------------------------------------------------------ lookups (console ranges)
    def end_offsets(self, tps: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """ListOffsets LATEST at the leaders: the last stable offsets under read_committed."""
        return self.fetcher.list_offsets(list(tps), LATEST)

    def offsets_for_time(self, tps: list[tuple[str, int]], timestamp: int) -> dict[tuple[str, int], int | None]:
        found = self.fetcher.list_offsets(list(tps), timestamp)
        return {tp: (offset if offset >= 0 else None) for tp, offset in found.items()}

    def position(self, topic: str, partition: int) -> int | None:
        """The fetcher's position: past every batch of the answers handed out, gaps included."""
        tp = (topic, partition)
        if self._dirty or tp not in self.fetcher.positions:
            return self._positions.get(tp) if tp in self._assigned else None
        return self.fetcher.positions[tp]

    def start_at_assignment(self, starts) -> None:
        """Nothing to do: the fetcher's seeks take effect at once, without librdkafka's race."""

    def pause(self, tps: list[tuple[str, int]]) -> None:
        self._paused.update(tps)
        self.fetcher.remove(list(tps))

    # ------------------------------------------------------------------ poll
    def poll_sets(self, timeout_ms: int = 0) -> list:
        """Whole fetch answers, as record pieces the formatter writes column-wise."""
        deadline = time.monotonic() + timeout_ms / 1000.0
        self._errors.check()
        if self._dirty:  # manual assignment: the fetcher takes the positions as they are
            self._dirty = False
            self.fetcher.remove(list(self.fetcher.positions))
            for tp in self._assigned:
                if tp not in self._paused:
                    self.fetcher.add(tp, self._positions.get(tp, LATEST))
        if self._pattern is not None and time.monotonic() >= self._next_refresh:
            self._refresh_pattern()
        if self._subscribed:
            # librdkafka's poll runs the group: callbacks, heartbeats' outcomes, errors. Its
            # partitions are paused, so it returns no record. Until the group assigns some,
            # it is the wait itself, in short slices (an assignment ends no poll by itself).
            while True:
                idle = not self.fetcher.positions and not self._arrived
                left = deadline - time.monotonic()
                msg = self.consumer.poll(min(0.01, max(left, 0)) if idle else 0)
                if msg is not None and msg.error() is not None:
                    self._message_error(msg.error(), msg)
                if not idle or self._arrived or left <= 0:
                    break
            self._take_arrivals()
        elif not self._assigned:
            time.sleep(timeout_ms / 1000.0)
            return []
        pieces = self.fetcher.poll(max(deadline - time.monotonic(), 0))
        if pieces:
            self._handed_out(pieces)
        return pieces

    def poll(self, timeout_ms: int = 0) -> list:
        out = []
        for piece in self.poll_sets(timeout_ms):
            out += piece.records()
        return out

    def _handed_out(self, pieces: list) -> None:
        import confluent_kafka

        last = {}
        for piece in pieces:
            last[(piece.topic, piece.partition)] = piece.next_offset
        self._positions.update(last)
        if self.group_id is not None and self._subscribed:
            try:
                self.consumer.store_offsets(offsets=[confluent_kafka.TopicPartition(t, p, o)
                                                     for (t, p), o in last.items()])
            except confluent_kafka.KafkaException:
                pass  # revoked meanwhile

    def close(self) -> None:
        if not self._closed:
            self.fetcher.close()
        super().close()
