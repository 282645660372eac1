"""Incremental fetch sessions (KIP-227), with Kafka's semantics.

A consumer that fetches the same partitions over and over opens a session with a full fetch
(session id 0, epoch 0); the broker remembers the partitions and their fetch positions and
answers with a session id. Each later request (that id, the next epoch) lists only the
partitions whose position or limits changed, and the ones to forget; the answer lists only
the partitions with news: records, a moved high watermark or log start offset, an error,
a diverging epoch. Epoch -1 closes the session (a sessionless full fetch).

The cache is bounded (max.incremental.fetch.session.cache.slots); a new session may evict
one unused for min.incremental.fetch.session.eviction.ms, else one older than that holding
fewer partitions than the newcomer, as Kafka's FetchSessionCache does.
"""

from __future__ import annotations

import random

from ..protocol import errors as E

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
_INT32_MAX = 2**31 - 1


def next_epoch(epoch: int) -> int:
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _INT32_MAX else epoch + 1


class FetchPartition:
    """One partition of a fetch: what the client asked, and (in a session) what it was last
    told. `key` is (topic id, partition) for v13+ requests, else (topic name, partition)."""

    __slots__ = ("key", "topic", "topic_id", "partition", "fetch_offset", "max_bytes",
                 "current_leader_epoch", "last_fetched_epoch", "high_watermark", "log_start_offset",
                 "fetcher_log_start")

    def __init__(self, key, topic, topic_id, partition: int, request: dict):
        self.key = key
        self.topic = topic  # None while a topic id names no known topic
        self.topic_id = topic_id
        self.partition = partition
        self.high_watermark = -1
        self.log_start_offset = -1
        self.update(request)

    def update(self, request: dict) -> None:
        self.fetch_offset = request["fetch_offset"]
        self.max_bytes = request["partition_max_bytes"]
        self.current_leader_epoch = request["current_leader_epoch"]
        self.last_fetched_epoch = request["last_fetched_epoch"]
        self.fetcher_log_start = request.get("log_start_offset", -1)  # a follower's, for the leader's low watermark

    def copy_request(self, other: "FetchPartition") -> None:
        """An incremental fetch names this partition again: take its new position and limits."""
        self.fetch_offset = other.fetch_offset
        self.max_bytes = other.max_bytes
        self.current_leader_epoch = other.current_leader_epoch
        self.last_fetched_epoch = other.last_fetched_epoch
        self.fetcher_log_start = other.fetcher_log_start

    def has_news(self, answer: dict) -> bool:
        """Kafka's CachedPartition.maybeUpdateResponseData: must `answer` be sent? Remembers
        what it says."""
        news = len(answer["records"]) > 0 or "diverging_epoch" in answer
        if answer["high_watermark"] != self.high_watermark:
            news = True
            self.high_watermark = answer["high_watermark"]
        if answer["log_start_offset"] != self.log_start_offset:
            news = True
            self.log_start_offset = answer["log_start_offset"]
        if answer["error_code"] != E.NONE:
            self.high_watermark = -1  # sent again once the error is gone
            news = True
        return news


class FetchSession:
    __slots__ = ("id", "partitions", "uses_topic_ids", "creation_ms", "last_used_ms", "epoch",
                 "evictable")

    def __init__(self, session_id: int, partitions: dict, uses_topic_ids: bool, now_ms: int):
        self.id = session_id
        self.partitions = partitions  # key -> FetchPartition, in the order answers are built
        self.uses_topic_ids = uses_topic_ids
        self.creation_ms = self.last_used_ms = now_ms
        self.epoch = next_epoch(INITIAL_EPOCH)
        self.evictable = False  # older than the eviction time when last used


class FetchContext:
    """What one Fetch request reads and how its answer is cut: `error` (a session error: the
    answer is that code and nothing else), else `partitions` to read, in order; `finish`
    turns their answers into (session id, the answers to send)."""

    def __init__(self, partitions: list[FetchPartition], error: int = E.NONE):
        self.partitions = partitions
        self.error = error

    def finish(self, answers: list[dict], now_ms: int) -> tuple[int, list[dict]]:
        return INVALID_SESSION_ID, answers


class _FullContext(FetchContext):
    def __init__(self, cache: "FetchSessionCache", partitions, uses_topic_ids: bool):
        super().__init__(partitions)
        self.cache = cache
        self.uses_topic_ids = uses_topic_ids

    def finish(self, answers, now_ms):
        for part, answer in zip(self.partitions, answers):
            part.has_news(answer)  # remembers what this answer tells
        session_id = self.cache.maybe_create(
            {p.key: p for p in self.partitions}, self.uses_topic_ids, now_ms)
        return session_id, answers


class _IncrementalContext(FetchContext):
    def __init__(self, session: FetchSession):
        super().__init__(list(session.partitions.values()))
        self.session = session

    def finish(self, answers, now_ms):
        sent = []
        moved = []
        for part, answer in zip(self.partitions, answers):
            if part.has_news(answer):
                sent.append(answer)
                moved.append(part)
        # Answered partitions go to the back, so that a response cut by max_bytes does not
        # starve the ones after it next time.
        for part in moved:
            if self.session.partitions.pop(part.key, None) is not None:
                self.session.partitions[part.key] = part
        return self.session.id, sent


class FetchSessionCache:
    def __init__(self, max_entries: int = 1000, eviction_ms: int = 120000):
        self.max_entries = max_entries
        self.eviction_ms = eviction_ms
        self.sessions: dict[int, FetchSession] = {}

    def new_context(self, session_id: int, epoch: int, wanted: list[FetchPartition],
                    forgotten: list, uses_topic_ids: bool, now_ms: int) -> FetchContext:
        """Kafka's FetchManager.newContext. `wanted`: the request's partitions; `forgotten`:
        the keys of the partitions to drop from the session."""
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):  # a full fetch; closes the named session
            if session_id != INVALID_SESSION_ID:
                self.sessions.pop(session_id, None)
            if epoch == FINAL_EPOCH:
                return FetchContext(wanted)
            return _FullContext(self, wanted, uses_topic_ids)
        session = self.sessions.get(session_id)
        if session is None:
            return FetchContext([], E.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return FetchContext([], E.INVALID_FETCH_SESSION_EPOCH)
        if session.uses_topic_ids != uses_topic_ids:
            return FetchContext([], E.FETCH_SESSION_TOPIC_ID_ERROR)
        for part in wanted:
            cached = session.partitions.get(part.key)
            if cached is None:
                session.partitions[part.key] = part
            else:
                cached.copy_request(part)
        for key in forgotten:
            session.partitions.pop(key, None)
        if not session.partitions:
            self.sessions.pop(session.id, None)
            return FetchContext([])
        self._touch(session, now_ms)
        session.epoch = next_epoch(session.epoch)
        return _IncrementalContext(session)

    def maybe_create(self, partitions: dict, uses_topic_ids: bool, now_ms: int) -> int:
        """A new session for a full fetch's partitions, if there is room or one can be
        evicted; its id, else 0 (the client goes on with full fetches)."""
        if self.max_entries <= 0:
            return INVALID_SESSION_ID
        if len(self.sessions) >= self.max_entries and not self._evict_one(len(partitions), now_ms):
            return INVALID_SESSION_ID
        session_id = INVALID_SESSION_ID
        while session_id == INVALID_SESSION_ID or session_id in self.sessions:
            session_id = random.randint(1, _INT32_MAX)
        session = FetchSession(session_id, partitions, uses_topic_ids, now_ms)
        self.sessions[session_id] = session
        self._touch(session, now_ms)
        return session_id

    def _touch(self, session: FetchSession, now_ms: int) -> None:
        session.last_used_ms = now_ms
        session.evictable = now_ms - session.creation_ms > self.eviction_ms

    def _evict_one(self, size: int, now_ms: int) -> bool:
        """Kafka's tryEvict for a consumer's session of `size` partitions."""
        if not self.sessions:
            return False
        stale = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - stale.last_used_ms > self.eviction_ms:
            del self.sessions[stale.id]
            return True
        candidates = [s for s in self.sessions.values() if s.evictable]
        if not candidates:
            return False
        smallest = min(candidates, key=lambda s: (len(s.partitions), s.id))
        if (size, 0) < (len(smallest.partitions), smallest.id):
            return False
        del self.sessions[smallest.id]
        return True
