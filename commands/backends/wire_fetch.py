"""Fetching records from a cluster over pk's own wire codec: the console consumer's data path.

librdkafka hands Python one Message object per record (~1 µs each, plus a Python call per
field), which held pk-console-consumer to a tenth of kcat's rate on a real cluster. Here a
Fetch answer's records field goes straight to the column decoder the bundled engine's
consumer uses (engine/consumer.records_of), and the formatter writes the columns without a
Python object per record. confluent-kafka keeps what it does well (group membership,
commits): see wire_consumer.py.

One connection per leader, with one Fetch always in flight on it: as soon as an answer is
read, the next Fetch (from the positions after that answer's batches) is sent, before the
answer is decoded and printed, so the broker prepares the next answer meanwhile.

Semantics kept from Kafka's consumer:
- records come in offset order per partition, from each partition's leader;
- read_committed drops the batches of aborted transactions (the answer's aborted
  transactions, as Kafka's CompletedFetch does) and every control batch;
- OFFSET_OUT_OF_RANGE resets by auto.offset.reset (earliest/latest) or fails (none);
- leader changes, a broker going away and the other retriable errors refresh the metadata and
  try again after retry.backoff.ms, as Kafka's consumer keeps trying;
- an authorization failure or any other error ends the fetch with Kafka's text.
"""

from __future__ import annotations

import select
import ssl
import struct
import time

from pk.engine import protocol as kp
from pk.engine import records
from pk.engine.consumer import NoOffsetForPartitionError, records_of
from pk.engine.errors import KafkaError, OffsetOutOfRangeError

from .wire import Security, _Connection

FETCH_VERSION = 12  # the last with topic names; every broker since Kafka 2.8 takes it
LIST_OFFSETS_VERSION = 7
METADATA_VERSION = 12
EARLIEST, LATEST = -2, -1

# Errors after which the partition's leader is looked up again and the fetch retried.
_RETRIABLE = {3, 5, 6, 9, 13, 56, 74, 75, 78, 100}  # UNKNOWN_TOPIC_OR_PARTITION, ... UNKNOWN_TOPIC_ID
_OFFSET_OUT_OF_RANGE = 1
_TOPIC_AUTHORIZATION_FAILED = 29
_CONTROL_ABORT = 0


class FetchError(KafkaError):
    """An error Kafka's consumer would raise from poll(), with its text."""


class FetchSettings:
    """The Java consumer properties that shape a Fetch."""

    def __init__(self, java: dict[str, str]):
        def integer(name: str, default: int) -> int:
            try:
                return int(str(java.get(name, default)).strip())
            except ValueError:
                return default

        self.client_id = java.get("client.id", "consumer")
        self.max_wait_ms = integer("fetch.max.wait.ms", 500)
        self.min_bytes = integer("fetch.min.bytes", 1)
        self.max_bytes = integer("fetch.max.bytes", 52428800)
        self.partition_max_bytes = integer("max.partition.fetch.bytes", 1048576)
        self.read_committed = java.get("isolation.level", "read_uncommitted").strip() == "read_committed"
        self.reset = java.get("auto.offset.reset", "latest").strip().lower()
        self.backoff_s = integer("retry.backoff.ms", 100) / 1000.0
        self.timeout_s = integer("request.timeout.ms", 30000) / 1000.0


class _Leader:
    """A connection to one broker and the Fetch in flight on it."""

    def __init__(self, node: int, conn: _Connection):
        self.node = node
        self.conn = conn
        self.sock = conn.sock
        self.version = min(FETCH_VERSION, conn.versions.get(int(kp.ApiKey.FETCH), (0, FETCH_VERSION))[1])
        self.in_flight: tuple[int, dict] | None = None  # (correlation id, {tp: fetch offset})
        self.head = bytearray()  # bytes of the answer read so far

    def send(self, body: dict, offsets: dict, client_id: str) -> None:
        self.conn.corr += 1
        self.sock.sendall(kp.encode_request(kp.ApiKey.FETCH, self.version, self.conn.corr, body,
                                            client_id=client_id))
        self.in_flight = (self.conn.corr, offsets)

    def ready(self) -> bool:
        """Bytes wait in the TLS layer, where select() cannot see them."""
        return isinstance(self.sock, ssl.SSLSocket) and self.sock.pending() > 0

    def read_answer(self) -> bytes:
        """The whole answer frame (the socket is readable): a few MB arrive at once."""
        size = struct.unpack(">i", self.conn._read(4))[0]
        return self.conn._read(size)

    def close(self) -> None:
        self.conn.close()


class WireFetcher:
    """Fetches the partitions it is given from their leaders; poll() returns record pieces
    (RecordColumnsSet / RecordList) and advances the positions past them."""

    def __init__(self, bootstrap: str, settings: FetchSettings, security: Security | None = None):
        from ..client_config import bootstrap_hosts

        self.settings = settings
        self.security = security
        self.bootstrap = list(bootstrap_hosts(bootstrap))
        self.positions: dict[tuple[str, int], int] = {}
        self._leaders: dict[tuple[str, int], int] = {}  # tp -> node id
        self._brokers: dict[int, tuple[str, int]] = {}  # node id -> (host, port)
        self._conns: dict[int, _Leader] = {}
        self._meta: _Connection | None = None
        self._stale = True  # the leaders must be looked up before the next fetch
        self._retry_at = 0.0

    # ------------------------------------------------------------------ partitions
    def add(self, tp: tuple[str, int], offset: int) -> None:
        """Fetch `tp` from `offset` (EARLIEST / LATEST: from its log start / end)."""
        if offset < 0:
            offset = self.list_offsets([tp], offset)[tp]
        self.positions[tp] = offset
        if tp not in self._leaders:
            self._stale = True

    def remove(self, tps) -> None:
        for tp in tps:
            self.positions.pop(tp, None)
            self._leaders.pop(tp, None)

    def seek(self, tp: tuple[str, int], offset: int) -> None:
        """A new position; an answer already in flight for the old one is dropped on arrival."""
        self.positions[tp] = offset

    # ------------------------------------------------------------------ poll
    def poll(self, timeout_s: float) -> list:
        """Record pieces from the first answer that arrives within timeout_s ([] if none)."""
        deadline = time.monotonic() + timeout_s
        while True:
            if self.positions and time.monotonic() >= self._retry_at:
                try:
                    if self._stale:
                        self._refresh()
                    self._send_idle()
                except (OSError, ConnectionError, kp.ProtocolError):
                    self._lost()
            waiting = [leader for leader in self._conns.values() if leader.in_flight is not None]
            left = deadline - time.monotonic()
            if not waiting:
                if left <= 0:
                    return []
                time.sleep(min(left, max(self._retry_at - time.monotonic(), 0.01)))
                continue
            ready = [leader for leader in waiting if leader.ready()]
            if not ready:
                readable, _, _ = select.select([leader.sock for leader in waiting], [], [], max(left, 0))
                ready = [leader for leader in waiting if leader.sock in readable]
            if ready:
                pieces = self._take(ready[0])
                if pieces:
                    return pieces
            elif left <= 0:
                return []

    def _take(self, leader: _Leader) -> list:
        corr, offsets = leader.in_flight
        leader.in_flight = None
        try:
            frame = leader.read_answer()
            got_corr, answer = kp.parse_response(frame, kp.ApiKey.FETCH, leader.version)
        except (OSError, ConnectionError, kp.ProtocolError):
            self._lost()
            return []
        if got_corr != corr:
            self._lost()
            return []
        if answer.get("error_code"):
            self._stale = True
            self._retry_at = time.monotonic() + self.settings.backoff_s
            return []
        found = []
        for topic in answer["responses"]:
            name = topic["topic"]
            for part in topic["partitions"]:
                tp = (name, part["partition_index"])
                asked = offsets.get(tp)
                if asked is None or self.positions.get(tp) != asked:
                    continue  # sought elsewhere or given up meanwhile
                found.append((tp, asked, part, self._advance(tp, asked, part)))
        try:
            self._send(leader)  # the next fetch is on its way while this one is decoded
        except OSError:
            self._lost()
        out = []
        for tp, asked, part, batches in found:
            if batches:
                piece = records_of(tp[0], tp[1], part["records"], batches, asked)
                if piece is not None:
                    out.append(piece)
        return out

    def _advance(self, tp: tuple[str, int], asked: int, part: dict) -> list:
        """The data batches of one partition's answer, moving its position past every batch
        (control batches and aborted ones included); errors handled as Kafka's consumer does."""
        code = part["error_code"]
        if code:
            self._partition_error(tp, asked, code)
            return []
        data = part["records"]
        if not data:
            return []
        aborted = None
        if self.settings.read_committed and part.get("aborted_transactions"):
            aborted = sorted((a["first_offset"], a["producer_id"]) for a in part["aborted_transactions"])
        kept, position, open_aborts = [], asked, set()
        for pos, header in records.iter_batches(data):
            if header.magic != 2:
                raise FetchError(f"pk reads record batches of format v2 only; {tp[0]}-{tp[1]} holds format "
                                 f"v{header.magic} at offset {header.base_offset}")
            if header.next_offset <= asked:
                continue  # a batch the fetch offset falls inside of begins before it
            position = header.next_offset
            if aborted is not None and header.producer_id >= 0:
                while aborted and aborted[0][0] <= header.last_offset:
                    open_aborts.add(aborted.pop(0)[1])
                if header.is_control:
                    if records.control_type(data, pos, header) == _CONTROL_ABORT:
                        open_aborts.discard(header.producer_id)
                    continue
                if header.is_transactional and header.producer_id in open_aborts:
                    continue
            if not header.is_control:
                kept.append((pos, header))
        self.positions[tp] = position
        return kept

    def _partition_error(self, tp: tuple[str, int], asked: int, code: int) -> None:
        if code == _OFFSET_OUT_OF_RANGE:
            if self.settings.reset == "none":
                raise OffsetOutOfRangeError(f"Fetch position FetchPosition{{offset={asked}}} is out of range for "
                                            f"partition {tp[0]}-{tp[1]}")
            self.positions[tp] = self.list_offsets([tp], EARLIEST if self.settings.reset == "earliest"
                                                   else LATEST)[tp]
            return
        if code in _RETRIABLE:
            self._stale = True
            self._retry_at = time.monotonic() + self.settings.backoff_s
            return
        if code == _TOPIC_AUTHORIZATION_FAILED:
            from .kafka_clients import TopicAuthorizationError

            raise TopicAuthorizationError(f"Not authorized to access topics: [{tp[0]}]")
        from .kafka_clients import KAFKA_MESSAGES

        raise FetchError(KAFKA_MESSAGES.get(code) or f"{kp.errors.error_name(code)} fetching {tp[0]}-{tp[1]}")

    # ------------------------------------------------------------------ requests
    def _send_idle(self) -> None:
        for node in {self._leaders[tp] for tp in self.positions if tp in self._leaders}:
            leader = self._leader(node)
            if leader.in_flight is None:
                self._send(leader)

    def _send(self, leader: _Leader) -> None:
        node = leader.node
        mine: dict[str, list] = {}
        offsets = {}
        for tp, offset in self.positions.items():
            if self._leaders.get(tp) == node:
                mine.setdefault(tp[0], []).append({"partition": tp[1], "fetch_offset": offset,
                                                   "partition_max_bytes": self.settings.partition_max_bytes})
                offsets[tp] = offset
        if not offsets:
            return
        s = self.settings
        body = {"replica_id": -1, "max_wait_ms": s.max_wait_ms, "min_bytes": s.min_bytes, "max_bytes": s.max_bytes,
                "isolation_level": 1 if s.read_committed else 0, "session_id": 0, "session_epoch": -1,
                "topics": [{"topic": t, "partitions": ps} for t, ps in mine.items()],
                # no rack: a broker with a replica selector would point a rack-aware client at a
                # follower (preferred_read_replica) with no records; leaders serve everyone
                "forgotten_topics_data": [], "rack_id": ""}
        leader.send(body, offsets, s.client_id)

    def _leader(self, node: int) -> _Leader:
        leader = self._conns.get(node)
        if leader is None:
            host, port = self._brokers[node]
            leader = self._conns[node] = _Leader(node, _Connection(host, port, self.settings.timeout_s, self.security))
        return leader

    def _metadata_conn(self) -> _Connection:
        if self._meta is None:
            error = None
            for host, port in self.bootstrap + sorted(set(self._brokers.values())):
                try:
                    self._meta = _Connection(host, port, self.settings.timeout_s, self.security)
                    break
                except OSError as exc:
                    error = exc
            else:
                raise ConnectionError(f"no broker answers: {error}")
        return self._meta

    def _refresh(self, also: list | None = None) -> None:
        """Look up the brokers and the leaders of the fetched partitions (and of `also`)."""
        topics = sorted({t for t, _ in [*self.positions, *(also or [])]})
        conn = self._metadata_conn()
        version = min(METADATA_VERSION, conn.versions.get(int(kp.ApiKey.METADATA), (0, METADATA_VERSION))[1])
        answer = conn.call(int(kp.ApiKey.METADATA), version, {
            "topics": [{"name": t} for t in topics], "allow_auto_topic_creation": False,
            "include_topic_authorized_operations": False})
        self._brokers = {b["node_id"]: (b["host"], b["port"]) for b in answer["brokers"]}
        for node in [n for n in self._conns if n not in self._brokers]:
            self._conns.pop(node).close()
        leaders = {}
        for topic in answer["topics"]:
            if topic["error_code"] == _TOPIC_AUTHORIZATION_FAILED:
                from .kafka_clients import TopicAuthorizationError

                raise TopicAuthorizationError(f"Not authorized to access topics: [{topic['name']}]")
            for part in topic["partitions"]:
                if part["error_code"] == 0 and part["leader_id"] in self._brokers:
                    leaders[(topic["name"], part["partition_index"])] = part["leader_id"]
        # A partition that moved may still have a fetch in flight at its old leader: that
        # answer is an error, or is dropped on arrival once the new leader's moved the position.
        self._leaders = leaders
        self._stale = any(tp not in leaders for tp in self.positions)
        if self._stale:
            self._retry_at = time.monotonic() + self.settings.backoff_s

    def list_offsets(self, tps: list, which: int) -> dict:
        """Log start (EARLIEST) or end (LATEST; the last stable offset with read_committed)."""
        deadline = time.monotonic() + self.settings.timeout_s
        found: dict = {}
        while True:
            try:
                if self._stale or any(tp not in self._leaders for tp in tps):
                    self._refresh(also=tps)
                for node in {self._leaders[tp] for tp in tps if tp in self._leaders}:
                    mine: dict[str, list] = {}
                    for tp in tps:
                        if self._leaders.get(tp) == node:
                            mine.setdefault(tp[0], []).append({"partition_index": tp[1], "timestamp": which})
                    answer = self._list_on(node, mine)
                    for topic in answer["topics"]:
                        for part in topic["partitions"]:
                            if part["error_code"] == 0:
                                found[(topic["name"], part["partition_index"])] = part["offset"]
                            elif part["error_code"] == _TOPIC_AUTHORIZATION_FAILED:
                                from .kafka_clients import TopicAuthorizationError

                                raise TopicAuthorizationError(f"Not authorized to access topics: [{topic['name']}]")
                if all(tp in found for tp in tps):
                    return found
                self._stale = True
            except (OSError, ConnectionError, kp.ProtocolError):
                self._lost()
            if time.monotonic() > deadline:
                missing = next(tp for tp in tps if tp not in found)
                raise NoOffsetForPartitionError(f"Timeout of {int(self.settings.timeout_s * 1000)} ms expired "
                                                f"before the position for partition {missing[0]}-{missing[1]} "
                                                "could be determined")
            time.sleep(self.settings.backoff_s)

    def _list_on(self, node: int, topics: dict) -> dict:
        """ListOffsets to the leader on a connection of its own (the fetch one may be busy)."""
        host, port = self._brokers[node]
        conn = _Connection(host, port, self.settings.timeout_s, self.security)
        try:
            top = conn.versions.get(int(kp.ApiKey.LIST_OFFSETS), (0, LIST_OFFSETS_VERSION))[1]
            return conn.call(int(kp.ApiKey.LIST_OFFSETS), min(LIST_OFFSETS_VERSION, top), {
                "replica_id": -1, "isolation_level": 1 if self.settings.read_committed else 0,
                "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()], "timeout_ms": 30000})
        finally:
            conn.close()

    # ------------------------------------------------------------------ failures
    def _lost(self) -> None:
        """A connection failed: drop every connection and its fetch, look the leaders up
        again after the backoff (Kafka's consumer reconnects the same way, for ever)."""
        for leader in self._conns.values():
            leader.close()
        self._conns.clear()
        if self._meta is not None:
            self._meta.close()
            self._meta = None
        self._stale = True
        self._retry_at = time.monotonic() + self.settings.backoff_s

    def close(self) -> None:
        self._lost()


def usable(java: dict[str, str], extra: dict[str, str]) -> Security | None | bool:
    """The connection security for the wire path, or False when the configuration asks for
    something only librdkafka serves (-X passthrough, a SASL mechanism or store type pk's wire
    client does not speak): then the consumer stays on confluent-kafka."""
    from .wire import usable_security

    return usable_security(java, extra)

